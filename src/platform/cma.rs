//! Cross-memory attach: single-copy reads from another process's address space
//! (`process_vm_readv`), the node transport's large-message path.

use std::io;

/// Copies `len` bytes from address `remote` in process `pid` to `local`.
/// Loops over partial transfers; fails with the OS error (EPERM when ptrace rules forbid it,
/// ESRCH when the process is gone, EFAULT on a bad range).
///
/// # Safety
/// `local` must be valid for writes of `len` bytes.
pub unsafe fn read_from(pid: i32, remote: u64, local: *mut u8, len: usize) -> io::Result<()> {
    let mut done = 0usize;
    while done < len {
        let liov = libc::iovec {
            iov_base: local.add(done).cast(),
            iov_len: len - done,
        };
        let riov = libc::iovec {
            iov_base: (remote as usize + done) as *mut libc::c_void,
            iov_len: len - done,
        };
        // SAFETY: the local iovec covers memory the caller guarantees writable; the remote one
        // is only interpreted by the kernel, which checks it against the peer's mappings.
        let n = unsafe { libc::process_vm_readv(pid, &liov, 1, &riov, 1, 0) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "process_vm_readv copied nothing",
            ));
        }
        done += n as usize;
    }
    Ok(())
}

/// Copies `len` bytes from `local` to address `remote` in process `pid` (`process_vm_writev`).
///
/// # Safety
/// `local` must be valid for reads of `len` bytes.
pub unsafe fn write_to(pid: i32, local: *const u8, remote: u64, len: usize) -> io::Result<()> {
    let mut done = 0usize;
    while done < len {
        let liov = libc::iovec {
            iov_base: local.add(done) as *mut libc::c_void,
            iov_len: len - done,
        };
        let riov = libc::iovec {
            iov_base: (remote as usize + done) as *mut libc::c_void,
            iov_len: len - done,
        };
        // SAFETY: the local iovec covers memory the caller guarantees readable; the remote one
        // is checked by the kernel against the peer's mappings.
        let n = unsafe { libc::process_vm_writev(pid, &liov, 1, &riov, 1, 0) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "process_vm_writev copied nothing",
            ));
        }
        done += n as usize;
    }
    Ok(())
}
