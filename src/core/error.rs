//! MPI errors inside the library: an error class, a message, and optionally the object whose
//! error handler must see it.

use crate::abi::consts::*;
use crate::abi::entry::ErrObj;

/// An MPI error. Boxed so that `Result<(), MpiError>` is one word on the hot path.
#[derive(Debug)]
pub struct MpiError(Box<ErrorInner>);

/// What an [`MpiError`] carries.
#[derive(Debug)]
pub struct ErrorInner {
    /// The error class (`MPI_ERR_*`), also used as the error code.
    pub class: i32,
    /// A human-readable explanation.
    pub message: String,
    /// The object whose handler is invoked, when it is not the call's own argument
    /// (e.g. a request's communicator for `MPI_Wait`).
    pub object: Option<ErrObj>,
}

/// Result type of the core.
pub type MpiResult<T> = Result<T, MpiError>;

impl MpiError {
    /// A new error of `class` with a message.
    #[cold]
    pub fn new(class: i32, message: impl Into<String>) -> Self {
        MpiError(Box::new(ErrorInner {
            class,
            message: message.into(),
            object: None,
        }))
    }
    /// `MPI_ERR_UNSUPPORTED_OPERATION` for a function hympi does not implement yet.
    #[cold]
    pub fn unsupported(function: &str) -> Self {
        Self::new(
            MPI_ERR_UNSUPPORTED_OPERATION,
            format!("{function} is not implemented by hympi yet (see docs/coverage.md)"),
        )
    }
    /// An internal error made from a caught panic.
    #[cold]
    pub fn from_panic(payload: Box<dyn std::any::Any + Send>) -> Self {
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        Self::new(
            MPI_ERR_INTERN,
            format!("internal error (panic caught at the C boundary): {what}"),
        )
    }
    /// Directs the error to `object`'s handler.
    pub fn on(mut self, object: ErrObj) -> Self {
        self.0.object = Some(object);
        self
    }
    /// The error class.
    pub fn class(&self) -> i32 {
        self.0.class
    }
    /// The message.
    pub fn message(&self) -> &str {
        &self.0.message
    }
    /// The object override, if any.
    pub fn object(&self) -> Option<ErrObj> {
        self.0.object
    }
}

/// Shorthand: `Err(MpiError::new(class, msg))`.
#[cold]
pub fn fail<T>(class: i32, message: impl Into<String>) -> MpiResult<T> {
    Err(MpiError::new(class, message))
}

/// The standard text of each predefined error class.
pub fn class_string(class: i32) -> &'static str {
    match class {
        MPI_SUCCESS => "MPI_SUCCESS: no error",
        MPI_ERR_BUFFER => "MPI_ERR_BUFFER: invalid buffer pointer",
        MPI_ERR_COUNT => "MPI_ERR_COUNT: invalid count argument",
        MPI_ERR_TYPE => "MPI_ERR_TYPE: invalid datatype",
        MPI_ERR_TAG => "MPI_ERR_TAG: invalid tag argument",
        MPI_ERR_COMM => "MPI_ERR_COMM: invalid communicator",
        MPI_ERR_RANK => "MPI_ERR_RANK: invalid rank",
        MPI_ERR_REQUEST => "MPI_ERR_REQUEST: invalid request",
        MPI_ERR_ROOT => "MPI_ERR_ROOT: invalid root",
        MPI_ERR_GROUP => "MPI_ERR_GROUP: invalid group",
        MPI_ERR_OP => "MPI_ERR_OP: invalid operation",
        MPI_ERR_TOPOLOGY => "MPI_ERR_TOPOLOGY: invalid topology",
        MPI_ERR_DIMS => "MPI_ERR_DIMS: invalid dimension argument",
        MPI_ERR_ARG => "MPI_ERR_ARG: invalid argument of some other kind",
        MPI_ERR_UNKNOWN => "MPI_ERR_UNKNOWN: unknown error",
        MPI_ERR_TRUNCATE => "MPI_ERR_TRUNCATE: message truncated on receive",
        MPI_ERR_OTHER => "MPI_ERR_OTHER: known error not in this list",
        MPI_ERR_INTERN => "MPI_ERR_INTERN: internal error",
        MPI_ERR_PENDING => "MPI_ERR_PENDING: pending request",
        MPI_ERR_IN_STATUS => "MPI_ERR_IN_STATUS: error code is in status",
        MPI_ERR_UNSUPPORTED_OPERATION => "MPI_ERR_UNSUPPORTED_OPERATION: unsupported operation",
        _ => "unknown error class",
    }
}
