//! Shared mappings for one-sided windows and MPI-IO shared file pointers: an anonymous
//! `memfd` created by one local rank and mapped by the others through `/proc/<pid>/fd/<fd>`
//! (as the node segment is), so nothing is ever left in `/dev/shm`, even by a crash.

use std::io;

/// A shared, zero-filled mapping of `len` bytes.
#[derive(Debug)]
pub struct SharedMap {
    base: *mut u8,
    len: usize,
    /// The creator's descriptor, kept open until every local rank has mapped it.
    fd: Option<i32>,
}

// SAFETY: the mapping is plain shared memory; the owner decides who reads or writes where
// (windows synchronise through MPI's epochs and the atomics of their control block).
unsafe impl Send for SharedMap {}
// SAFETY: as above; `&SharedMap` only hands out the base address.
unsafe impl Sync for SharedMap {}

impl SharedMap {
    /// Creates a mapping of `len` bytes (at least one page); returns it and the key the other
    /// local ranks attach with.
    pub fn create(len: usize) -> io::Result<(SharedMap, (u64, u64))> {
        let len = page_round(len);
        // SAFETY: memfd_create takes a NUL-terminated name; the flags are valid.
        let fd = unsafe { libc::memfd_create(c"hympi-win".as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: fd is the memfd just created.
        if unsafe { libc::ftruncate(fd, len as libc::off_t) } != 0 {
            let e = io::Error::last_os_error();
            // SAFETY: closing our own descriptor.
            unsafe { libc::close(fd) };
            return Err(e);
        }
        let base = match map(fd, len) {
            Ok(b) => b,
            Err(e) => {
                // SAFETY: closing our own descriptor.
                unsafe { libc::close(fd) };
                return Err(e);
            }
        };
        let key = (std::process::id() as u64, fd as u64);
        Ok((
            SharedMap {
                base,
                len,
                fd: Some(fd),
            },
            key,
        ))
    }

    /// Maps the mapping another local rank created (`key` from [`SharedMap::create`]).
    pub fn attach(key: (u64, u64), len: usize) -> io::Result<SharedMap> {
        let len = page_round(len);
        let path = std::ffi::CString::new(format!("/proc/{}/fd/{}", key.0, key.1))
            .expect("no NUL in a path of numbers");
        // SAFETY: path is NUL-terminated.
        let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let mapped = map(fd, len);
        // SAFETY: our own descriptor; the mapping keeps the memory alive.
        unsafe { libc::close(fd) };
        Ok(SharedMap {
            base: mapped?,
            len,
            fd: None,
        })
    }

    /// Closes the creator's descriptor (once every local rank has mapped it).
    pub fn close_creator_fd(&mut self) {
        if let Some(fd) = self.fd.take() {
            // SAFETY: closing our own descriptor; the mapping stays valid.
            unsafe { libc::close(fd) };
        }
    }

    /// Address of the first byte.
    pub fn base(&self) -> *mut u8 {
        self.base
    }

    /// Mapped bytes (a whole number of pages).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the mapping is empty (never: at least one page is mapped).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The 64-bit atomic word at byte `offset` (a multiple of 8 inside the mapping), shared
    /// by every process that maps it.
    pub fn atomic_u64(&self, offset: usize) -> &std::sync::atomic::AtomicU64 {
        assert!(
            offset.is_multiple_of(8) && offset + 8 <= self.len,
            "word inside the mapping"
        );
        // SAFETY: the address is inside the mapping (checked), 8-aligned (the mapping is
        // page-aligned), and lives as long as `self`; the word is only ever accessed
        // atomically by the processes that share it.
        unsafe { &*(self.base.add(offset) as *const std::sync::atomic::AtomicU64) }
    }
}

impl Drop for SharedMap {
    fn drop(&mut self) {
        self.close_creator_fd();
        // SAFETY: unmapping exactly the range this object mapped; nobody uses it any more
        // (windows drop their map only after the closing barrier of MPI_Win_free).
        unsafe { libc::munmap(self.base.cast(), self.len) };
    }
}

fn page_round(len: usize) -> usize {
    len.max(1).div_ceil(4096) * 4096
}

/// Maps `len` bytes of descriptor `fd` shared, readable and writable (also the node
/// segment's mapping).
pub fn map(fd: i32, len: usize) -> io::Result<*mut u8> {
    // SAFETY: mapping a descriptor we own with a valid length; the result is checked.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            fd,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    Ok(p as *mut u8)
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn create_attach_share_bytes() {
        let (mut a, key) = SharedMap::create(100).unwrap();
        assert_eq!(a.len(), 4096);
        let b = SharedMap::attach(key, 100).unwrap();
        a.close_creator_fd();
        // SAFETY: both map at least 4096 bytes of the same memfd.
        unsafe {
            assert_eq!(*b.base().add(4095), 0);
            *a.base().add(7) = 42;
            assert_eq!(*b.base().add(7), 42);
        }
    }
}
