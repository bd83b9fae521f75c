//! The one wrapper every C entry point goes through: panic boundary, conversion of
//! `Result` to an MPI error code, and dispatch to the right error handler.

use crate::core::error::MpiError;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The object whose error handler sees an error (defined with the errors, in the core).
pub use crate::core::error::ErrObj;

/// What the body of an `int`-returning MPI function gives back to its C entry point.
pub trait Outcome {
    /// Whether the body that produces it may panic, so that [`call`] must catch the unwind
    /// (all but [`Leaf`]).
    const MAY_PANIC: bool = true;

    /// The MPI return code, after handing an error to the error handler of `obj`.
    fn into_code(self, name: &'static str, obj: ErrObj) -> i32;
}

impl Outcome for Result<(), MpiError> {
    #[inline(always)]
    fn into_code(self, name: &'static str, obj: ErrObj) -> i32 {
        match self {
            Ok(()) => 0,
            Err(e) => crate::core::objects::errhandler::raise(name, obj, e),
        }
    }
}

/// A return code that is final: any error it stands for went through the error handler
/// already. A fast path returns it after handing every other case to an out-of-line entry
/// that does its own error handling, so that the hand-over compiles to a jump.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Code(pub i32);

impl Outcome for Code {
    #[inline(always)]
    fn into_code(self, _name: &'static str, _obj: ErrObj) -> i32 {
        self.0
    }
}

/// A final return code (as [`Code`]) from a body that cannot panic: a leaf fast path
/// (`crate::core::p2p::leaf`: no indexing that can fail, no allocation, no call that can unwind)
/// whose other cases jump to out-of-line entries that catch their own panics. [`call`] runs
/// it without a catch, so that the compiled entry needs no landing pad and its jumps stay
/// jumps. Were it to panic after all, the unwind would stop at the C boundary, which aborts
/// the process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Leaf(pub i32);

impl Outcome for Leaf {
    const MAY_PANIC: bool = false;

    #[inline(always)]
    fn into_code(self, _name: &'static str, _obj: ErrObj) -> i32 {
        self.0
    }
}

/// Runs the body of an `int`-returning MPI function.
#[inline(always)]
pub fn call<R: Outcome>(name: &'static str, obj: ErrObj, body: impl FnOnce() -> R) -> i32 {
    if !R::MAY_PANIC {
        return body().into_code(name, obj);
    }
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(r) => r.into_code(name, obj),
        Err(panic) => {
            crate::core::objects::errhandler::raise(name, obj, MpiError::from_panic(panic))
        }
    }
}

/// [`call`], recorded in the trace (`HYMPI_TRACE`) with what `args` (given the return code)
/// says about the call. The generated entry points run it from a cold copy of themselves
/// while tracing is on.
#[inline(always)]
pub fn call_recorded<R: Outcome>(
    name: &'static str,
    obj: ErrObj,
    args: impl FnOnce(i32) -> CallArgs,
    body: impl FnOnce() -> R,
) -> i32 {
    let begin = crate::core::diag::trace::call_begin();
    let code = call(name, obj, body);
    crate::core::diag::trace::call_end(name, begin, code, args(code));
    code
}

pub use crate::core::diag::trace::CallArgs;

/// Runs the body of a function that returns a value instead of an error code
/// (`MPI_Wtime`, `MPI_Aint_add`, `MPI_Comm_fromint`, ...). Errors are reported through
/// `MPI_COMM_SELF`'s handler and the value's default is returned.
#[inline(always)]
pub fn call_value<T: Fallback>(
    name: &'static str,
    body: impl FnOnce() -> Result<T, MpiError>,
) -> T {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => {
            crate::core::objects::errhandler::raise(name, ErrObj::None, e);
            T::fallback()
        }
        Err(panic) => {
            crate::core::objects::errhandler::raise(
                name,
                ErrObj::None,
                MpiError::from_panic(panic),
            );
            T::fallback()
        }
    }
}

/// The value a value-returning function gives back when it fails.
pub trait Fallback {
    /// Zero, or the null handle.
    fn fallback() -> Self;
}
impl Fallback for f64 {
    fn fallback() -> Self {
        0.0
    }
}
impl Fallback for isize {
    fn fallback() -> Self {
        0
    }
}
impl Fallback for i32 {
    fn fallback() -> Self {
        0
    }
}
impl<T> Fallback for *mut T {
    fn fallback() -> Self {
        std::ptr::null_mut()
    }
}
