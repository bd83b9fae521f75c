//! Checks and conversions shared by the implementations.

use crate::abi::consts::*;
use crate::core::error::{fail, MpiResult};

/// A required output argument; `MPI_ERR_ARG` when NULL.
#[inline]
pub unsafe fn out<'a, T>(p: *mut T, what: &str) -> MpiResult<&'a mut T> {
    // SAFETY: non-null pointers from the caller point to valid, writable T (C contract).
    match unsafe { p.as_mut() } {
        Some(r) => Ok(r),
        None => fail(MPI_ERR_ARG, format!("{what} must not be NULL")),
    }
}

/// A count argument; `MPI_ERR_COUNT` when negative.
pub use crate::core::p2p::args::count;

/// Copies `text` into a C string buffer of `max` bytes (NUL included) and stores its length.
#[inline]
pub unsafe fn put_string(
    text: &str,
    dst: *mut core::ffi::c_char,
    max: usize,
    len: *mut i32,
) -> MpiResult<()> {
    if dst.is_null() {
        return fail(MPI_ERR_ARG, "the string buffer must not be NULL");
    }
    let bytes = text.as_bytes();
    let n = bytes.len().min(max.saturating_sub(1));
    // SAFETY: the caller's buffer holds at least `max` bytes (MPI's documented size).
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), dst.cast(), n);
        *dst.add(n) = 0;
        if let Some(l) = len.as_mut() {
            *l = n as i32;
        }
    }
    Ok(())
}
