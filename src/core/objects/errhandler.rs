//! Error handlers: which handler an error goes to and what it does.
//!
//! Routing: an error goes to the handler of the object it concerns (the call's communicator,
//! or the one named by the error itself, e.g. a request's communicator). An invalid
//! communicator handle routes to `MPI_COMM_WORLD`'s handler (as MPICH does, so codes that set
//! `MPI_ERRORS_RETURN` on the world see it); errors tied to no object go to `MPI_COMM_SELF`'s
//! handler as MPI-4 says, falling back to `MPI_COMM_WORLD`'s while `MPI_COMM_SELF` still has
//! its default. Before `MPI_Init` and after `MPI_Finalize` errors are fatal.

use crate::core::error::ErrObj;
use crate::core::error::{class_string, MpiError};
use crate::core::runtime;
use crate::mpi_abi::consts::*;
use crate::mpi_abi::types::MPI_Comm;

/// A communicator's error handler.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Errh {
    /// `MPI_ERRORS_ARE_FATAL`: report and end the job.
    Fatal,
    /// `MPI_ERRORS_ABORT`: report and abort (the processes of the communicator; here the job).
    Abort,
    /// `MPI_ERRORS_RETURN`: return the error code.
    Return,
    /// A user function (index in the error-handler table).
    User(u32),
}

/// A user error handler object.
#[derive(Clone, Copy, Debug)]
pub struct UserErrh {
    /// `void f(MPI_Comm *, int *, ...)`.
    pub func: unsafe extern "C" fn(*mut MPI_Comm, *mut i32),
    /// References: handles held by the user plus communicators using it.
    pub refs: u32,
}

/// Gives `err`, raised by function `name` on `obj`, to the right error handler and returns the
/// error code the C function returns (when the handler returns at all).
#[cold]
#[inline(never)]
pub fn raise(name: &'static str, obj: ErrObj, err: MpiError) -> i32 {
    let obj = err.object().unwrap_or(obj);
    let class = err.class();
    let target = runtime::with_quiet(|rt| Ok(rt.handler_for(obj))).ok();
    match target {
        None => fatal(name, &err, "MPI is not initialized (or already finalized)"),
        Some((Errh::Return, _)) => class,
        Some((Errh::Fatal, _)) => fatal(name, &err, "MPI_ERRORS_ARE_FATAL"),
        Some((Errh::Abort, _)) => fatal(name, &err, "MPI_ERRORS_ABORT"),
        Some((Errh::User(_), None)) => class,
        Some((Errh::User(_), Some((func, comm)))) => {
            let mut handle = comm as MPI_Comm;
            let mut code = class;
            // SAFETY: `func` was registered by the user through MPI_Comm_create_errhandler with
            // the errhandler signature; it is called outside the runtime lock, so it may call MPI.
            unsafe { func(&mut handle, &mut code) };
            class
        }
    }
}

fn fatal(name: &str, err: &MpiError, why: &str) -> ! {
    let rank = runtime::world_rank_hint();
    let who = match rank {
        Some(r) => format!("rank {r}"),
        None => "process".to_string(),
    };
    let msg = format!(
        "{}: {} ({}; the error handler is {why})",
        name,
        err.message(),
        class_string(err.class())
    );
    eprintln!("hympi: {who}: {msg}");
    runtime::abort_job(err.class().max(1), &msg)
}

/// Converts an error-handler handle to an [`Errh`] (predefined values only; user handlers are
/// resolved by the runtime's table).
pub fn predefined(handle: usize) -> Option<Errh> {
    match handle {
        h if h == MPI_ERRORS_ARE_FATAL => Some(Errh::Fatal),
        h if h == MPI_ERRORS_ABORT => Some(Errh::Abort),
        h if h == MPI_ERRORS_RETURN => Some(Errh::Return),
        _ => None,
    }
}
