//! Operating-system errors as MPI I/O error classes.

use crate::core::error::MpiError;
use crate::mpi_abi::consts::*;
use std::io;
use std::path::Path;

/// The MPI error class of an operating-system error.
pub fn class_of(e: &io::Error) -> i32 {
    match e.raw_os_error() {
        Some(libc::ENOENT) | Some(libc::ENOTDIR) => MPI_ERR_NO_SUCH_FILE,
        Some(libc::EEXIST) => MPI_ERR_FILE_EXISTS,
        Some(libc::EACCES) | Some(libc::EPERM) => MPI_ERR_ACCESS,
        Some(libc::EROFS) => MPI_ERR_READ_ONLY,
        Some(libc::ENOSPC) => MPI_ERR_NO_SPACE,
        Some(libc::EDQUOT) => MPI_ERR_QUOTA,
        Some(libc::EISDIR) | Some(libc::ENAMETOOLONG) | Some(libc::ELOOP) => MPI_ERR_BAD_FILE,
        Some(libc::EBADF) => MPI_ERR_ACCESS,
        Some(libc::ETXTBSY) | Some(libc::EBUSY) => MPI_ERR_FILE_IN_USE,
        _ => MPI_ERR_IO,
    }
}

/// An MPI error for operating-system error `e` while doing `what` on `path`.
pub fn io_error(e: &io::Error, what: &str, path: &Path) -> MpiError {
    MpiError::new(class_of(e), format!("{what}: {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes() {
        let e = |n| io::Error::from_raw_os_error(n);
        assert_eq!(class_of(&e(libc::ENOENT)), MPI_ERR_NO_SUCH_FILE);
        assert_eq!(class_of(&e(libc::EEXIST)), MPI_ERR_FILE_EXISTS);
        assert_eq!(class_of(&e(libc::ENOSPC)), MPI_ERR_NO_SPACE);
        assert_eq!(class_of(&e(libc::EIO)), MPI_ERR_IO);
    }
}
