//! MPI errors inside the library: an error class, a message, and optionally the object whose
//! error handler must see it.

use crate::mpi_abi::consts::*;

/// The object whose error handler an error raised by a call is given to (the call's first
/// communicator, window, file or session argument; `None` means `MPI_COMM_SELF`'s handler).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrObj {
    /// No object argument: errors go to `MPI_COMM_SELF`'s handler (MPI-4 rule).
    None,
    /// A communicator handle (raw value).
    Comm(usize),
    /// A window handle (raw value).
    Win(usize),
    /// A file handle (raw value).
    File(usize),
    /// A session handle (raw value).
    Session(usize),
    /// An error handler handle (raw value), called with `MPI_SESSION_NULL`: where the errors of
    /// `MPI_Session_init` go.
    Handler(usize),
}

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
        MPI_ERR_REQUEST => "MPI_ERR_REQUEST: invalid request (handle)",
        MPI_ERR_ROOT => "MPI_ERR_ROOT: invalid root",
        MPI_ERR_GROUP => "MPI_ERR_GROUP: invalid group",
        MPI_ERR_OP => "MPI_ERR_OP: invalid operation",
        MPI_ERR_TOPOLOGY => "MPI_ERR_TOPOLOGY: invalid topology",
        MPI_ERR_DIMS => "MPI_ERR_DIMS: invalid dimension argument",
        MPI_ERR_ARG => "MPI_ERR_ARG: invalid argument of some other kind",
        MPI_ERR_UNKNOWN => "MPI_ERR_UNKNOWN: unknown error",
        MPI_ERR_TRUNCATE => "MPI_ERR_TRUNCATE: message truncated on receive",
        MPI_ERR_OTHER => "MPI_ERR_OTHER: known error not in this list",
        MPI_ERR_INTERN => "MPI_ERR_INTERN: internal MPI (implementation) error",
        MPI_ERR_PENDING => "MPI_ERR_PENDING: pending request",
        MPI_ERR_IN_STATUS => "MPI_ERR_IN_STATUS: error code is in status",
        MPI_ERR_ACCESS => "MPI_ERR_ACCESS: permission denied",
        MPI_ERR_AMODE => "MPI_ERR_AMODE: error related to the amode passed to MPI_FILE_OPEN",
        MPI_ERR_ASSERT => "MPI_ERR_ASSERT: invalid assertion argument",
        MPI_ERR_BAD_FILE => "MPI_ERR_BAD_FILE: invalid file name",
        MPI_ERR_BASE => "MPI_ERR_BASE: invalid base argument",
        MPI_ERR_CONVERSION => "MPI_ERR_CONVERSION: an error occurred in a user-supplied data conversion function",
        MPI_ERR_DISP => "MPI_ERR_DISP: invalid displacement argument",
        MPI_ERR_DUP_DATAREP => "MPI_ERR_DUP_DATAREP: conversion functions could not be registered because the data representation identifier was already defined",
        MPI_ERR_FILE_EXISTS => "MPI_ERR_FILE_EXISTS: file exists",
        MPI_ERR_FILE_IN_USE => "MPI_ERR_FILE_IN_USE: file operation could not be completed, as the file is currently open by some process",
        MPI_ERR_FILE => "MPI_ERR_FILE: invalid file handle",
        MPI_ERR_INFO_KEY => "MPI_ERR_INFO_KEY: key longer than MPI_MAX_INFO_KEY",
        MPI_ERR_INFO_NOKEY => "MPI_ERR_INFO_NOKEY: invalid key passed to MPI_INFO_DELETE",
        MPI_ERR_INFO_VALUE => "MPI_ERR_INFO_VALUE: value longer than MPI_MAX_INFO_VAL",
        MPI_ERR_INFO => "MPI_ERR_INFO: invalid info argument",
        MPI_ERR_IO => "MPI_ERR_IO: other I/O error",
        MPI_ERR_KEYVAL => "MPI_ERR_KEYVAL: invalid keyval has been passed",
        MPI_ERR_LOCKTYPE => "MPI_ERR_LOCKTYPE: invalid locktype argument",
        MPI_ERR_NAME => "MPI_ERR_NAME: invalid service name passed to MPI_LOOKUP_NAME",
        MPI_ERR_NO_MEM => "MPI_ERR_NO_MEM: MPI_ALLOC_MEM failed because memory is exhausted",
        MPI_ERR_NOT_SAME => "MPI_ERR_NOT_SAME: collective argument not identical on all processes, or collective routines called in a different order by different processes",
        MPI_ERR_NO_SPACE => "MPI_ERR_NO_SPACE: not enough space",
        MPI_ERR_NO_SUCH_FILE => "MPI_ERR_NO_SUCH_FILE: file does not exist",
        MPI_ERR_PORT => "MPI_ERR_PORT: invalid port name passed to MPI_COMM_CONNECT",
        MPI_ERR_QUOTA => "MPI_ERR_QUOTA: quota exceeded",
        MPI_ERR_READ_ONLY => "MPI_ERR_READ_ONLY: read-only file or file system",
        MPI_ERR_RMA_ATTACH => "MPI_ERR_RMA_ATTACH: memory cannot be attached",
        MPI_ERR_RMA_CONFLICT => "MPI_ERR_RMA_CONFLICT: conflicting accesses to window",
        MPI_ERR_RMA_RANGE => "MPI_ERR_RMA_RANGE: target memory is not part of the window",
        MPI_ERR_RMA_SHARED => "MPI_ERR_RMA_SHARED: memory cannot be shared",
        MPI_ERR_RMA_SYNC => "MPI_ERR_RMA_SYNC: wrong synchronization of RMA calls",
        MPI_ERR_SERVICE => "MPI_ERR_SERVICE: invalid service name passed to MPI_UNPUBLISH_NAME",
        MPI_ERR_SIZE => "MPI_ERR_SIZE: invalid size argument",
        MPI_ERR_SPAWN => "MPI_ERR_SPAWN: error in spawning processes",
        MPI_ERR_UNSUPPORTED_DATAREP => "MPI_ERR_UNSUPPORTED_DATAREP: unsupported datarep passed to MPI_FILE_SET_VIEW",
        MPI_ERR_UNSUPPORTED_OPERATION => "MPI_ERR_UNSUPPORTED_OPERATION: unsupported operation",
        MPI_ERR_WIN => "MPI_ERR_WIN: invalid window argument",
        MPI_ERR_RMA_FLAVOR => "MPI_ERR_RMA_FLAVOR: passed window has the wrong flavor for the called function",
        MPI_ERR_PROC_ABORTED => "MPI_ERR_PROC_ABORTED: operation failed because a peer process has aborted",
        MPI_ERR_VALUE_TOO_LARGE => "MPI_ERR_VALUE_TOO_LARGE: value is too large to store",
        MPI_ERR_SESSION => "MPI_ERR_SESSION: invalid session argument",
        MPI_ERR_ERRHANDLER => "MPI_ERR_ERRHANDLER: invalid error handler",
        MPI_ERR_ABI => "MPI_ERR_ABI: ABI-related error",
        _ => "unknown error class",
    }
}
