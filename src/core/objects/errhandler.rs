//! Error handlers: which handler an error goes to and what it does.
//!
//! Routing: an error goes to the handler of the object it concerns (the call's communicator,
//! or the one named by the error itself, e.g. a request's communicator). An invalid
//! communicator handle routes to `MPI_COMM_WORLD`'s handler (as MPICH does, so codes that set
//! `MPI_ERRORS_RETURN` on the world see it); errors tied to no object go to `MPI_COMM_SELF`'s
//! handler as MPI-4 says, falling back to `MPI_COMM_WORLD`'s while `MPI_COMM_SELF` still has
//! its default. Errors on a session go to the session's handler, and errors of
//! `MPI_Session_init` to the handler it was given; these need no runtime. Other errors before
//! `MPI_Init` and after `MPI_Finalize` are fatal.
//!
//! User error handlers live in a process-wide table with its own mutex ([`with_table`]), not
//! in the runtime: `MPI_Session_create_errhandler` may run before any initialisation, and a
//! handler outlives the runtime a session started. Code inside `runtime::with` may take this
//! table's lock (runtime lock, then table lock); this module never takes the runtime lock while
//! holding it.

use crate::core::error::ErrObj;
use crate::core::error::{class_string, MpiError};
use crate::core::objects::slab::{kind, Slab};
use crate::core::runtime;
use crate::mpi_abi::consts::*;
use crate::mpi_abi::types::MPI_Comm;
use parking_lot::Mutex;

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

/// The user function of an error handler and the handle it is called with.
pub type Target = (unsafe extern "C" fn(*mut MPI_Comm, *mut i32), usize);

static TABLE: Mutex<Option<Slab<UserErrh>>> = Mutex::new(None);

/// Runs `f` on the table of user error handlers (created on first use).
pub fn with_table<R>(f: impl FnOnce(&mut Slab<UserErrh>) -> R) -> R {
    let mut guard = TABLE.lock();
    f(guard.get_or_insert_with(|| Slab::new(kind::ERRHANDLER)))
}

/// Registers a user handler function; its handle (one reference, the user's).
pub fn create(func: unsafe extern "C" fn(*mut MPI_Comm, *mut i32)) -> Option<usize> {
    with_table(|t| t.insert(UserErrh { func, refs: 1 }).map(|i| t.handle(i)))
}

/// The user handler behind handle `h`, if valid.
pub fn decode(h: usize) -> Option<u32> {
    with_table(|t| t.decode(h))
}

/// The handle of user handler `i`.
pub fn handle_at(i: u32) -> Option<usize> {
    with_table(|t| t.get(i).map(|_| t.handle(i)))
}

/// Takes one more reference to `e` (an object starts using it, or a handle is returned).
pub fn take_ref(e: Errh) {
    if let Errh::User(i) = e {
        with_table(|t| {
            if let Some(u) = t.get_mut(i) {
                u.refs += 1;
            }
        })
    }
}

/// Drops one reference to `e`; the handler goes when the last one does.
pub fn drop_ref(e: Errh) {
    if let Errh::User(i) = e {
        with_table(|t| {
            if let Some(u) = t.get_mut(i) {
                u.refs -= 1;
                if u.refs == 0 {
                    t.remove(i);
                }
            }
        })
    }
}

/// The handle that stands for `e`, taking a reference for a user handler (what
/// `MPI_*_get_errhandler` returns).
pub fn handle_of(e: Errh) -> usize {
    match e {
        Errh::Fatal => MPI_ERRORS_ARE_FATAL,
        Errh::Abort => MPI_ERRORS_ABORT,
        Errh::Return => MPI_ERRORS_RETURN,
        Errh::User(i) => {
            take_ref(e);
            with_table(|t| t.handle(i))
        }
    }
}

/// The handler `h` names (predefined or user); `MPI_ERR_ARG` when it names none.
pub fn resolve(h: usize) -> crate::core::error::MpiResult<Errh> {
    use crate::core::error::fail;
    if let Some(e) = predefined(h) {
        return Ok(e);
    }
    match decode(h) {
        Some(i) => Ok(Errh::User(i)),
        None if h == MPI_ERRHANDLER_NULL => {
            fail(MPI_ERR_ARG, "the error handler is MPI_ERRHANDLER_NULL")
        }
        None => fail(MPI_ERR_ARG, format!("invalid error handler {h:#x}")),
    }
}

/// What handler `e` does, with the function and handle to call for a user handler that is
/// called on `handle`.
pub fn target(e: Errh, handle: usize) -> (Errh, Option<Target>) {
    match e {
        Errh::User(u) => (e, with_table(|t| t.get(u).map(|x| (x.func, handle)))),
        other => (other, None),
    }
}

/// The handler of an object that needs no runtime to find it: a session, or the handler
/// given to `MPI_Session_init`. `None` for other objects (and invalid sessions).
fn runtime_free_target(obj: ErrObj) -> Option<(Errh, Option<Target>)> {
    match obj {
        ErrObj::Session(h) => crate::core::objects::session::errh_of(h).map(|e| target(e, h)),
        ErrObj::Handler(h) => resolve(h).ok().map(|e| target(e, MPI_SESSION_NULL)),
        _ => None,
    }
}

/// Gives `err`, raised by function `name` on `obj`, to the right error handler and returns the
/// error code the C function returns (when the handler returns at all).
#[cold]
#[inline(never)]
pub fn raise(name: &'static str, obj: ErrObj, err: MpiError) -> i32 {
    let obj = err.object().unwrap_or(obj);
    let class = err.class();
    let target =
        runtime_free_target(obj).or_else(|| runtime::with_quiet(|rt| Ok(rt.handler_for(obj))).ok());
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
