//! Error handlers: which handler an error goes to and what it does.
use crate::abi::entry::ErrObj;
use crate::core::error::MpiError;

/// Gives `err`, raised by function `name` on `obj`, to the right error handler and returns the
/// error code the C function returns (when the handler returns at all).
#[cold]
#[inline(never)]
pub fn raise(name: &'static str, obj: ErrObj, err: MpiError) -> i32 {
    let _ = obj;
    eprintln!("hympi: {name}: {}", err.message());
    err.class()
}
