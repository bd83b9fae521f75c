//! Byte-range locks on files (open-file-description locks, `F_OFD_SETLKW`) and space
//! preallocation: the two POSIX file services MPI-IO needs that `std` does not offer.
//! Locks belong to the open file, not the process, so two handles of one process exclude
//! each other and closing another descriptor of the same file keeps them.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

/// A held lock on `[start, start + len)` of a file; released when dropped.
#[derive(Debug)]
pub struct RangeLock<'a> {
    file: &'a File,
    start: u64,
    len: u64,
}

fn set(file: &File, kind: i32, start: u64, len: u64, wait: bool) -> io::Result<()> {
    // SAFETY: `flock` is a plain C struct for which all-zero bytes are valid.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = kind as libc::c_short;
    fl.l_whence = libc::SEEK_SET as libc::c_short;
    fl.l_start = start as libc::off_t;
    fl.l_len = len as libc::off_t;
    let cmd = if wait {
        libc::F_OFD_SETLKW
    } else {
        libc::F_OFD_SETLK
    };
    loop {
        // SAFETY: a valid descriptor (borrowed from `file`) and a pointer to an initialised
        // `flock` that outlives the call.
        let r = unsafe { libc::fcntl(file.as_raw_fd(), cmd, &mut fl as *mut libc::flock) };
        if r == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

impl<'a> RangeLock<'a> {
    /// Waits for and takes a lock on `len` bytes from `start` (`len` 0: to the end of the
    /// file and beyond): exclusive for `write`, shared otherwise.
    pub fn take(file: &'a File, start: u64, len: u64, write: bool) -> io::Result<RangeLock<'a>> {
        let kind = if write { libc::F_WRLCK } else { libc::F_RDLCK };
        set(file, kind, start, len, true)?;
        Ok(RangeLock { file, start, len })
    }
}

impl Drop for RangeLock<'_> {
    fn drop(&mut self) {
        let _ = set(self.file, libc::F_UNLCK, self.start, self.len, false);
    }
}

/// Makes sure the file has storage for its first `len` bytes, growing it if shorter
/// (`MPI_File_preallocate`: never shrinks).
pub fn preallocate(file: &File, len: u64) -> io::Result<()> {
    if len == 0 {
        return Ok(());
    }
    // SAFETY: a valid descriptor borrowed from `file`; plain integer arguments.
    let r = unsafe { libc::posix_fallocate(file.as_raw_fd(), 0, len as libc::off_t) };
    match r {
        0 => Ok(()),
        // File systems without fallocate: extend by size (the bytes read as zeros).
        libc::EOPNOTSUPP | libc::EINVAL => {
            if file.metadata()?.len() < len {
                file.set_len(len)?;
            }
            Ok(())
        }
        e => Err(io::Error::from_raw_os_error(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileExt;

    #[test]
    fn locks_exclude_between_open_files() {
        let path = std::env::temp_dir().join(format!("hympi-lock-{}", std::process::id()));
        let a = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        let b = File::options().read(true).write(true).open(&path).unwrap();
        let held = RangeLock::take(&a, 0, 8, true).unwrap();
        // Another open file cannot take a conflicting lock without waiting...
        assert!(set(&b, libc::F_WRLCK, 4, 8, false).is_err());
        // ...but can lock a disjoint range.
        assert!(set(&b, libc::F_WRLCK, 8, 8, false).is_ok());
        drop(held);
        assert!(set(&b, libc::F_WRLCK, 0, 4, false).is_ok());
        preallocate(&a, 100).unwrap();
        assert_eq!(a.metadata().unwrap().len(), 100);
        a.write_all_at(b"x", 0).unwrap();
        preallocate(&a, 10).unwrap();
        assert_eq!(a.metadata().unwrap().len(), 100, "never shrinks");
        std::fs::remove_file(&path).unwrap();
    }
}
