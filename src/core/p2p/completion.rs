//! Completing requests for the user, as `MPI_Wait`, `MPI_Test` and their families do: whether
//! a request can complete now, and finishing it (its status, freeing it or making a
//! persistent one inactive). A generalized request's callbacks are handed back to the C
//! layer, which runs them outside the runtime lock.

use crate::core::p2p::request::{Grequest, ReqKind, Status, DONE_SEND};
use crate::core::runtime::Runtime;
use crate::mpi_abi::consts::MPI_REQUEST_NULL;
use crate::mpi_abi::types::MPI_Request;

/// A generalized request taken over by a completion call: its table index and callbacks. The
/// request stays in the table (done, without callbacks) until the C layer released it.
pub type Taken = (u32, Grequest);

/// Whether request `rid` can be completed by a wait/test now (done, or an inactive
/// persistent request).
#[inline]
pub fn ready(rt: &Runtime, rid: u32) -> bool {
    let r = rt.reqs.get(rid).expect("live request");
    r.done() || !r.active()
}

/// A request completed by a wait or test: its position in the call's array, status,
/// communicator, and for a generalized request its callbacks, which the C layer's
/// `grequest::settle` runs once the runtime lock is released.
pub type Fin = (usize, Status, u32, Option<Taken>);

/// Completes request `rid` for the user: returns its status, frees it (writing
/// `MPI_REQUEST_NULL` into `slot`) or, for a persistent request, makes it inactive. A
/// generalized request is handed back instead (its callbacks taken out of it), for the C
/// layer's `grequest::settle` to query, free and release outside the lock.
#[inline(always)]
pub fn finish(rt: &mut Runtime, rid: u32, slot: &mut MPI_Request) -> (Status, u32, Option<Taken>) {
    if rid == DONE_SEND {
        *slot = MPI_REQUEST_NULL as MPI_Request;
        return (Status::EMPTY, 0, None);
    }
    let r = rt.reqs.get_mut(rid).expect("live request");
    let st = if r.active() { r.status } else { Status::EMPTY };
    let comm = r.comm;
    let mut taken = None;
    if r.persistent() {
        r.set_active(false);
        r.set_done(true);
    } else if r.kind == ReqKind::Generalized {
        taken = r
            .extra_mut()
            .and_then(|e| e.grequest.take())
            .map(|g| (rid, g));
        *slot = MPI_REQUEST_NULL as MPI_Request;
    } else {
        rt.reqs.free(rid);
        *slot = MPI_REQUEST_NULL as MPI_Request;
    }
    (st, comm, taken)
}
