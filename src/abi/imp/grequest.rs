//! Generalized requests (MPI-4.1 section 13.2): `MPI_Grequest_start`,
//! `MPI_Grequest_complete`, and the running of their user callbacks for the completion calls
//! of `p2p`.
//!
//! A generalized request is an ordinary request of kind [`ReqKind::Generalized`] whose
//! callbacks live in its out-of-line state (`Extra::grequest`), so the fast paths, which refuse
//! requests with out-of-line state, never complete one. It becomes done when the user calls
//! `MPI_Grequest_complete`. The callbacks are user C functions that may call MPI: they are run
//! here, always outside the runtime lock; the lock is taken only to read or release the
//! request.

use super::util::out;
use crate::abi::consts::*;
use crate::abi::entry::ErrObj;
use crate::abi::types::*;
use crate::core::error::{fail, MpiError, MpiResult};
use crate::core::objects::comm::SELF;
use crate::core::p2p::request::{Grequest, ReqKind, Status};
use crate::core::runtime;
use core::ffi::{c_int, c_void};

/// `MPI_Grequest_query_function`.
type QueryFn = unsafe extern "C" fn(*mut c_void, *mut MPI_Status) -> c_int;
/// `MPI_Grequest_free_function`.
type FreeFn = unsafe extern "C" fn(*mut c_void) -> c_int;
/// `MPI_Grequest_cancel_function`.
type CancelFn = unsafe extern "C" fn(*mut c_void, c_int) -> c_int;

use crate::core::p2p::completion::Taken;

/// Runs `query_fn` of `g` on a fresh status (the empty status, as a default for what the
/// callback leaves unset) and returns that status with the callback's return code as its
/// error.
pub(super) fn query(g: &Grequest) -> Status {
    let mut c = MPI_Status::default();
    Status::EMPTY.write(&mut c, true);
    if g.query == 0 {
        return Status::from_c(&c, MPI_SUCCESS);
    }
    // SAFETY: `g.query` was passed to MPI_Grequest_start as an
    // `MPI_Grequest_query_function *`, which has this C signature.
    let f: QueryFn = unsafe { std::mem::transmute::<usize, QueryFn>(g.query) };
    // SAFETY: the user's callback gets its own extra_state and a valid status to fill. No
    // runtime lock is held here.
    let rc = unsafe { f(g.extra_state as *mut c_void, &mut c) };
    Status::from_c(&c, rc)
}

/// Runs `free_fn` of `g`; its return code.
pub(super) fn free(g: &Grequest) -> c_int {
    if g.free == 0 {
        return MPI_SUCCESS;
    }
    // SAFETY: `g.free` was passed to MPI_Grequest_start as an `MPI_Grequest_free_function *`.
    let f: FreeFn = unsafe { std::mem::transmute::<usize, FreeFn>(g.free) };
    // SAFETY: the user's callback gets its own extra_state; no runtime lock is held here.
    unsafe { f(g.extra_state as *mut c_void) }
}

/// Runs `cancel_fn` of `g` with `complete` (whether `MPI_Grequest_complete` was called); its
/// return code.
pub(super) fn cancel(g: &Grequest, complete: bool) -> c_int {
    if g.cancel == 0 {
        return MPI_SUCCESS;
    }
    // SAFETY: `g.cancel` was passed to MPI_Grequest_start as an
    // `MPI_Grequest_cancel_function *`.
    let f: CancelFn = unsafe { std::mem::transmute::<usize, CancelFn>(g.cancel) };
    // SAFETY: the user's callback gets its own extra_state and a flag; no runtime lock is held.
    unsafe { f(g.extra_state as *mut c_void, complete as c_int) }
}

/// Runs `free_fn` of generalized request `rid` (callbacks `g`, already taken out of it), then
/// releases the request: the standard keeps the object until `free_fn` returned. Returns the
/// callback's code.
pub(super) fn free_and_release(rid: u32, g: &Grequest) -> c_int {
    let rc = free(g);
    // Runs only while MPI is initialised (the request was live under the lock just before).
    let _ = runtime::with(|rt| Ok(rt.reqs.free(rid)));
    rc
}

/// Finishes a request completed by a wait or test, outside the runtime lock: for a generalized
/// request (`taken`), `query_fn` gives the status and `free_fn` runs after it, and the
/// request is released; the first failing callback's code becomes the status's error. Other
/// requests keep `st`.
pub(super) fn settle(st: Status, taken: Option<Taken>) -> Status {
    let Some((rid, g)) = taken else {
        return st;
    };
    let mut st = query(&g);
    let rc = free_and_release(rid, &g);
    if st.error == MPI_SUCCESS {
        st.error = rc;
    }
    st
}

/// The error of a failed callback, on `MPI_COMM_SELF` (a generalized request belongs to no
/// communicator).
pub(super) fn callback_error(what: &str, rc: c_int) -> MpiError {
    MpiError::new(
        rc,
        format!("the {what} callback of a generalized request returned error {rc}"),
    )
    .on(ErrObj::Comm(MPI_COMM_SELF))
}

pub(crate) unsafe fn MPI_Grequest_start(
    query_fn: *mut c_void,
    free_fn: *mut c_void,
    cancel_fn: *mut c_void,
    extra_state: *mut c_void,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    let slot = out(request, "request")?;
    let g = Grequest {
        query: query_fn as usize,
        free: free_fn as usize,
        cancel: cancel_fn as usize,
        extra_state: extra_state as usize,
    };
    let h = runtime::with(|rt| {
        let rid = rt.new_request(ReqKind::Generalized, SELF)?;
        let r = rt.reqs.get_mut(rid).expect("new request");
        r.extra().grequest = Some(g);
        Ok(rt.reqs.handle(rid))
    })?;
    *slot = h as MPI_Request;
    Ok(())
}

pub(crate) unsafe fn MPI_Grequest_complete(request: MPI_Request) -> MpiResult<()> {
    if request as usize == MPI_REQUEST_NULL {
        return fail(
            MPI_ERR_REQUEST,
            "MPI_Grequest_complete needs a generalized request, not MPI_REQUEST_NULL",
        );
    }
    // The callbacks to free with, when the user freed the request before this call.
    let freed = runtime::with(|rt| {
        let rid = match rt.reqs.decode(request as usize) {
            Some(i) => i,
            None => {
                return fail(
                    MPI_ERR_REQUEST,
                    format!("invalid request handle {:#x}", request as usize),
                )
            }
        };
        let r = rt.reqs.get_mut(rid).expect("live request");
        if r.kind != ReqKind::Generalized {
            return fail(
                MPI_ERR_REQUEST,
                "MPI_Grequest_complete needs a request made by MPI_Grequest_start",
            );
        }
        if r.done() {
            return fail(
                MPI_ERR_REQUEST,
                "MPI_Grequest_complete called twice on the same generalized request",
            );
        }
        r.set_done(true);
        Ok(if r.user_freed() {
            r.extra_mut()
                .and_then(|e| e.grequest.take())
                .map(|g| (rid, g))
        } else {
            None
        })
    })?;
    // MPI_Request_free came first: free_fn runs now, in this call.
    if let Some((rid, g)) = freed {
        let rc = free_and_release(rid, &g);
        if rc != MPI_SUCCESS {
            return Err(callback_error("free", rc));
        }
    }
    Ok(())
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    unsafe extern "C" fn q(extra: *mut c_void, st: *mut MPI_Status) -> c_int {
        // SAFETY: the test passes a pointer to an i32 counter and a valid status.
        unsafe {
            *(extra as *mut i32) += 1;
            (*st).MPI_SOURCE = 5;
            (*st).MPI_TAG = 7;
        }
        MPI_ERR_OTHER
    }

    unsafe extern "C" fn f(extra: *mut c_void) -> c_int {
        // SAFETY: the test passes a pointer to an i32 counter.
        unsafe { *(extra as *mut i32) += 10 };
        MPI_SUCCESS
    }

    #[test]
    fn query_fills_status_and_null_callbacks_are_skipped() {
        let mut calls = 0i32;
        let g = Grequest {
            query: q as QueryFn as usize,
            free: f as FreeFn as usize,
            cancel: 0,
            extra_state: &mut calls as *mut i32 as usize,
        };
        let st = query(&g);
        assert_eq!((st.source, st.tag, st.error), (5, 7, MPI_ERR_OTHER));
        assert_eq!(free(&g), MPI_SUCCESS);
        assert_eq!(cancel(&g, true), MPI_SUCCESS);
        assert_eq!(calls, 11);
        let none = Grequest {
            query: 0,
            free: 0,
            cancel: 0,
            extra_state: 0,
        };
        assert_eq!(query(&none), Status::EMPTY);
        assert_eq!(free(&none), MPI_SUCCESS);
    }
}
