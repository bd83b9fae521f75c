//! Cross-memory attach: single-copy transfers between the address spaces of two processes
//! (`process_vm_readv` / `process_vm_writev`), the node transport's large-message path.

use std::io;

/// Which way a transfer goes.
#[derive(Clone, Copy)]
enum Direction {
    /// From the peer into our memory.
    Read,
    /// From our memory into the peer's.
    Write,
}

/// Moves `len` bytes between `local` and address `remote` in process `pid`, looping over
/// partial transfers. Fails with the OS error (EPERM when ptrace rules forbid it, ESRCH when
/// the process is gone, EFAULT on a bad range).
///
/// # Safety
/// `local` must be valid for `len` bytes (writable for a read, readable for a write).
unsafe fn transfer(
    dir: Direction,
    pid: i32,
    local: *mut u8,
    remote: u64,
    len: usize,
) -> io::Result<()> {
    let mut done = 0usize;
    while done < len {
        let liov = libc::iovec {
            // SAFETY: `local + done` stays inside the caller's buffer of `len` bytes.
            iov_base: unsafe { local.add(done) }.cast(),
            iov_len: len - done,
        };
        let riov = libc::iovec {
            iov_base: (remote as usize + done) as *mut libc::c_void,
            iov_len: len - done,
        };
        // SAFETY: the local iovec covers memory the caller guarantees valid for this direction;
        // the remote one is only interpreted by the kernel, which checks it against the peer's
        // mappings.
        let n = unsafe {
            match dir {
                Direction::Read => libc::process_vm_readv(pid, &liov, 1, &riov, 1, 0),
                Direction::Write => libc::process_vm_writev(pid, &liov, 1, &riov, 1, 0),
            }
        };
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
                "cross-memory transfer copied nothing",
            ));
        }
        done += n as usize;
    }
    Ok(())
}

/// Copies `len` bytes from address `remote` in process `pid` to `local`.
///
/// # Safety
/// `local` must be valid for writes of `len` bytes.
pub unsafe fn read_from(pid: i32, remote: u64, local: *mut u8, len: usize) -> io::Result<()> {
    // SAFETY: forwarded caller guarantee.
    unsafe { transfer(Direction::Read, pid, local, remote, len) }
}

/// Copies `len` bytes from `local` to address `remote` in process `pid`.
///
/// # Safety
/// `local` must be valid for reads of `len` bytes.
pub unsafe fn write_to(pid: i32, local: *const u8, remote: u64, len: usize) -> io::Result<()> {
    // SAFETY: forwarded caller guarantee; a write only reads from `local`.
    unsafe { transfer(Direction::Write, pid, local as *mut u8, remote, len) }
}

/// Most segments one vectored call takes (the kernel's `UIO_MAXIOV`).
pub const IOV_MAX: usize = 1024;

/// Copies from the segments `remote` of process `pid` into the local segments `local` (both as
/// (address, length), at most [`IOV_MAX`] each) with one `process_vm_readv`; returns the bytes
/// copied, which the kernel may cut short (the caller continues from there).
///
/// # Safety
/// Every local segment must be valid for writes.
pub unsafe fn readv(
    pid: i32,
    local: &[(usize, usize)],
    remote: &[(usize, usize)],
) -> io::Result<usize> {
    let iov = |v: &[(usize, usize)]| -> Vec<libc::iovec> {
        v.iter()
            .map(|&(a, l)| libc::iovec {
                iov_base: a as *mut libc::c_void,
                iov_len: l,
            })
            .collect()
    };
    let (l, r) = (
        iov(&local[..local.len().min(IOV_MAX)]),
        iov(&remote[..remote.len().min(IOV_MAX)]),
    );
    loop {
        // SAFETY: the local iovecs cover memory the caller guarantees writable; the remote ones
        // are only interpreted by the kernel, which checks them against the peer's mappings.
        let n = unsafe {
            libc::process_vm_readv(pid, l.as_ptr(), l.len() as _, r.as_ptr(), r.len() as _, 0)
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if n == 0 && l.iter().chain(r.iter()).any(|v| v.iov_len > 0) {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "cross-memory transfer copied nothing",
            ));
        }
        return Ok(n as usize);
    }
}

/// Copies one contiguous local buffer to or from the segments `remote` (address, length) of
/// process `pid` (a scatter when `write`, else a gather), in batches of [`IOV_MAX`]
/// segments, continuing after partial transfers.
///
/// # Safety
/// `local` must be valid for the segments' total length (readable when `write`, else
/// writable).
pub unsafe fn transfer_segments(
    write: bool,
    pid: i32,
    local: *mut u8,
    remote: &[(usize, usize)],
) -> io::Result<()> {
    let mut seg = 0usize; // first segment not fully copied
    let mut into = 0usize; // bytes of `remote[seg]` already copied
    let mut done = 0usize; // bytes of `local` already copied
    while seg < remote.len() {
        let batch: Vec<libc::iovec> = remote[seg..]
            .iter()
            .take(IOV_MAX)
            .enumerate()
            .map(|(k, &(a, l))| {
                let skip = if k == 0 { into } else { 0 };
                libc::iovec {
                    iov_base: (a + skip) as *mut libc::c_void,
                    iov_len: l - skip,
                }
            })
            .collect();
        let total: usize = batch.iter().map(|v| v.iov_len).sum();
        let liov = libc::iovec {
            // SAFETY: `done + total` stays within the caller's buffer (the segments' total).
            iov_base: unsafe { local.add(done) }.cast(),
            iov_len: total,
        };
        // SAFETY: the local iovec covers memory the caller guarantees valid for this
        // direction; the remote ones are checked by the kernel against the peer's mappings.
        let n = unsafe {
            if write {
                libc::process_vm_writev(pid, &liov, 1, batch.as_ptr(), batch.len() as _, 0)
            } else {
                libc::process_vm_readv(pid, &liov, 1, batch.as_ptr(), batch.len() as _, 0)
            }
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if n == 0 && total > 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "cross-memory transfer copied nothing",
            ));
        }
        // Advance over what was copied.
        let mut left = n as usize;
        done += left;
        while left > 0 {
            let rest = remote[seg].1 - into;
            if left >= rest {
                left -= rest;
                seg += 1;
                into = 0;
            } else {
                into += left;
                left = 0;
            }
        }
        // Skip empty segments.
        while seg < remote.len() && remote[seg].1 == into {
            seg += 1;
            into = 0;
        }
    }
    Ok(())
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn segments_scatter_and_gather_in_order() {
        let pid = std::process::id() as i32;
        let mut dst = vec![0u8; 64];
        let base = dst.as_mut_ptr() as usize;
        let segs = [
            (base + 2, 3),
            (base + 10, 0),
            (base + 20, 5),
            (base + 40, 1),
        ];
        let mut src: Vec<u8> = (1..=9).collect();
        // SAFETY: `src` holds the segments' 9 bytes; the segments lie in `dst`, which lives.
        unsafe { transfer_segments(true, pid, src.as_mut_ptr(), &segs).unwrap() };
        assert_eq!(&dst[2..5], &[1, 2, 3]);
        assert_eq!(&dst[20..25], &[4, 5, 6, 7, 8]);
        assert_eq!(dst[40], 9);
        assert_eq!(dst.iter().filter(|&&b| b != 0).count(), 9);
        let mut back = vec![0u8; 9];
        // SAFETY: as above, the other way.
        unsafe { transfer_segments(false, pid, back.as_mut_ptr(), &segs).unwrap() };
        assert_eq!(back, src);
    }
}
