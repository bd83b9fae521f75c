//! One-sided communication: the operations and synchronization calls (`core::rma` does the
//! work; windows themselves are in `rma_win.rs`).

use super::util::{count, out};
use crate::abi::consts::*;
use crate::abi::types::*;
use crate::core::error::MpiResult;
use crate::core::p2p::request::ReqKind;
use crate::core::rma::{self, Buf, TargetArg};
use crate::core::runtime::{self, Runtime};
use core::ffi::{c_int, c_void};

fn buf(addr: *const c_void, n: i64, dt: MPI_Datatype) -> MpiResult<Buf> {
    Ok(Buf {
        addr: addr as usize,
        count: count(n)?,
        dt: dt as usize,
    })
}

fn target(rank: c_int, disp: MPI_Aint, n: i64, dt: MPI_Datatype) -> MpiResult<TargetArg> {
    Ok(TargetArg {
        rank,
        disp,
        count: count(n)?,
        dt: dt as usize,
    })
}

/// Whether the direct way `$way` (an expression over the runtime `$rt`) did the operation:
/// run inline on the runtime from [`runtime::unlocked`] when no lock is needed, else under
/// [`runtime::with`]. A macro, not a closure: the way must inline into the C entry.
macro_rules! direct_way {
    ($rt:ident => $way:expr) => {
        // SAFETY: at the C boundary: no other reference to the runtime is live.
        match unsafe { runtime::unlocked() } {
            Some($rt) => $way,
            None => runtime::with(|$rt| Ok($way))?,
        }
    };
}

/// A request-based operation's request: complete at once (operations complete when issued),
/// allowed only in a passive-target epoch.
fn done_request(rt: &mut Runtime, win: MPI_Win, target: c_int) -> MpiResult<usize> {
    let (_, w) = rt.win(win as usize)?;
    if target != MPI_PROC_NULL {
        w.epochs.check_passive(target)?;
    }
    let comm = w.comm;
    let (ci, _) = rt.comm(comm)?;
    let rid = rt.new_request(ReqKind::Done, ci)?;
    rt.complete(rid);
    Ok(rt.reqs.handle(rid))
}

/// Runs one operation (`op`, on target rank `target` of `win`) under the runtime, and its
/// request to another node's rank outside it; with a `request` (the `MPI_R*` forms), also
/// stores its request, complete at once. Out of line: the operations' direct ways stay small.
#[inline(never)]
unsafe fn issue(
    win: MPI_Win,
    target: c_int,
    request: Option<*mut MPI_Request>,
    op: impl FnOnce(&Runtime) -> rma::Issued,
) -> MpiResult<()> {
    let slot = match request {
        Some(r) => Some(out(r, "request")?),
        None => None,
    };
    let wants_request = slot.is_some();
    let (now, deferred, mut h) = runtime::with(|rt| {
        let (now, deferred) = match op(rt)? {
            // A request to another node's rank: kept for the next synchronization, or run
            // at once (dynamic windows).
            Some(call) => {
                let now = rma::defer_op(rt, win as usize, call)?;
                let deferred = now.is_none();
                (now, deferred)
            }
            None => (None, false),
        };
        let h = if wants_request && now.is_none() && !deferred {
            Some(done_request(rt, win, target)?)
        } else {
            None
        };
        Ok((now, deferred, h))
    })?;
    if let Some(call) = now {
        rma::net::run(vec![call])?;
    } else if deferred && wants_request {
        // The request forms complete their operation before the request is handed out.
        rma::settle(win as usize)?;
    }
    if wants_request && h.is_none() {
        h = Some(runtime::with(|rt| done_request(rt, win, target))?);
    }
    if let (Some(s), Some(h)) = (slot, h) {
        *s = h as MPI_Request;
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn put(
    oa: *const c_void,
    oc: i64,
    odt: MPI_Datatype,
    tr: c_int,
    td: MPI_Aint,
    tc: i64,
    tdt: MPI_Datatype,
    win: MPI_Win,
    request: Option<*mut MPI_Request>,
) -> MpiResult<()> {
    let (o, t) = (buf(oa, oc, odt)?, target(tr, td, tc, tdt)?);
    // The direct way first (no request, on-node mapped target, one predefined type).
    if request.is_none() && direct_way!(rt => rma::put_direct(rt, win as usize, &o, &t)) {
        return Ok(());
    }
    // SAFETY: forwarded C arguments.
    unsafe { issue(win, tr, request, |rt| rma::put(rt, win as usize, &o, &t)) }
}

#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn get(
    oa: *mut c_void,
    oc: i64,
    odt: MPI_Datatype,
    tr: c_int,
    td: MPI_Aint,
    tc: i64,
    tdt: MPI_Datatype,
    win: MPI_Win,
    request: Option<*mut MPI_Request>,
) -> MpiResult<()> {
    let (o, t) = (buf(oa, oc, odt)?, target(tr, td, tc, tdt)?);
    // The direct way first (no request, on-node mapped target, one predefined type).
    if request.is_none() && direct_way!(rt => rma::get_direct(rt, win as usize, &o, &t)) {
        return Ok(());
    }
    // SAFETY: forwarded C arguments.
    unsafe { issue(win, tr, request, |rt| rma::get(rt, win as usize, &o, &t)) }
}

#[inline(always)]
unsafe fn accumulate(
    o: Buf,
    result: Option<Buf>,
    t: TargetArg,
    op: MPI_Op,
    win: MPI_Win,
    request: Option<*mut MPI_Request>,
) -> MpiResult<()> {
    let (w, r, op_h) = (win as usize, result.as_ref(), op as usize);
    if request.is_none() && direct_way!(rt => rma::accumulate_direct_way(rt, w, &o, r, &t, op_h)) {
        return Ok(());
    }
    // SAFETY: forwarded C arguments.
    unsafe { accumulate_issued(o, result, t, op, win, request) }
}

/// [`accumulate`] off the direct way: the general path, which also reports every error.
#[inline(never)]
unsafe fn accumulate_issued(
    o: Buf,
    result: Option<Buf>,
    t: TargetArg,
    op: MPI_Op,
    win: MPI_Win,
    request: Option<*mut MPI_Request>,
) -> MpiResult<()> {
    // SAFETY: forwarded C arguments.
    unsafe {
        issue(win, t.rank, request, |rt| {
            rma::accumulate(rt, win as usize, &o, result.as_ref(), &t, op as usize)
        })
    }
}

pub(crate) unsafe fn MPI_Put(
    origin_addr: *const c_void,
    origin_count: c_int,
    origin_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: c_int,
    target_datatype: MPI_Datatype,
    win: MPI_Win,
) -> MpiResult<()> {
    // SAFETY: forwarded C arguments.
    unsafe {
        put(
            origin_addr,
            origin_count as i64,
            origin_datatype,
            target_rank,
            target_disp,
            target_count as i64,
            target_datatype,
            win,
            None,
        )
    }
}

pub(crate) unsafe fn MPI_Put_c(
    origin_addr: *const c_void,
    origin_count: MPI_Count,
    origin_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: MPI_Count,
    target_datatype: MPI_Datatype,
    win: MPI_Win,
) -> MpiResult<()> {
    // SAFETY: forwarded C arguments.
    unsafe {
        put(
            origin_addr,
            origin_count,
            origin_datatype,
            target_rank,
            target_disp,
            target_count,
            target_datatype,
            win,
            None,
        )
    }
}

pub(crate) unsafe fn MPI_Rput(
    origin_addr: *const c_void,
    origin_count: c_int,
    origin_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: c_int,
    target_datatype: MPI_Datatype,
    win: MPI_Win,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    // SAFETY: forwarded C arguments.
    unsafe {
        put(
            origin_addr,
            origin_count as i64,
            origin_datatype,
            target_rank,
            target_disp,
            target_count as i64,
            target_datatype,
            win,
            Some(request),
        )
    }
}

pub(crate) unsafe fn MPI_Rput_c(
    origin_addr: *const c_void,
    origin_count: MPI_Count,
    origin_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: MPI_Count,
    target_datatype: MPI_Datatype,
    win: MPI_Win,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    // SAFETY: forwarded C arguments.
    unsafe {
        put(
            origin_addr,
            origin_count,
            origin_datatype,
            target_rank,
            target_disp,
            target_count,
            target_datatype,
            win,
            Some(request),
        )
    }
}

pub(crate) unsafe fn MPI_Get(
    origin_addr: *mut c_void,
    origin_count: c_int,
    origin_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: c_int,
    target_datatype: MPI_Datatype,
    win: MPI_Win,
) -> MpiResult<()> {
    // SAFETY: forwarded C arguments.
    unsafe {
        get(
            origin_addr,
            origin_count as i64,
            origin_datatype,
            target_rank,
            target_disp,
            target_count as i64,
            target_datatype,
            win,
            None,
        )
    }
}

pub(crate) unsafe fn MPI_Get_c(
    origin_addr: *mut c_void,
    origin_count: MPI_Count,
    origin_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: MPI_Count,
    target_datatype: MPI_Datatype,
    win: MPI_Win,
) -> MpiResult<()> {
    // SAFETY: forwarded C arguments.
    unsafe {
        get(
            origin_addr,
            origin_count,
            origin_datatype,
            target_rank,
            target_disp,
            target_count,
            target_datatype,
            win,
            None,
        )
    }
}

pub(crate) unsafe fn MPI_Rget(
    origin_addr: *mut c_void,
    origin_count: c_int,
    origin_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: c_int,
    target_datatype: MPI_Datatype,
    win: MPI_Win,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    // SAFETY: forwarded C arguments.
    unsafe {
        get(
            origin_addr,
            origin_count as i64,
            origin_datatype,
            target_rank,
            target_disp,
            target_count as i64,
            target_datatype,
            win,
            Some(request),
        )
    }
}

pub(crate) unsafe fn MPI_Rget_c(
    origin_addr: *mut c_void,
    origin_count: MPI_Count,
    origin_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: MPI_Count,
    target_datatype: MPI_Datatype,
    win: MPI_Win,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    // SAFETY: forwarded C arguments.
    unsafe {
        get(
            origin_addr,
            origin_count,
            origin_datatype,
            target_rank,
            target_disp,
            target_count,
            target_datatype,
            win,
            Some(request),
        )
    }
}

pub(crate) unsafe fn MPI_Accumulate(
    origin_addr: *const c_void,
    origin_count: c_int,
    origin_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: c_int,
    target_datatype: MPI_Datatype,
    op: MPI_Op,
    win: MPI_Win,
) -> MpiResult<()> {
    let o = buf(origin_addr, origin_count as i64, origin_datatype)?;
    let t = target(
        target_rank,
        target_disp,
        target_count as i64,
        target_datatype,
    )?;
    // SAFETY: forwarded C arguments.
    unsafe { accumulate(o, None, t, op, win, None) }
}

pub(crate) unsafe fn MPI_Accumulate_c(
    origin_addr: *const c_void,
    origin_count: MPI_Count,
    origin_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: MPI_Count,
    target_datatype: MPI_Datatype,
    op: MPI_Op,
    win: MPI_Win,
) -> MpiResult<()> {
    let o = buf(origin_addr, origin_count, origin_datatype)?;
    let t = target(target_rank, target_disp, target_count, target_datatype)?;
    // SAFETY: forwarded C arguments.
    unsafe { accumulate(o, None, t, op, win, None) }
}

pub(crate) unsafe fn MPI_Raccumulate(
    origin_addr: *const c_void,
    origin_count: c_int,
    origin_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: c_int,
    target_datatype: MPI_Datatype,
    op: MPI_Op,
    win: MPI_Win,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    let o = buf(origin_addr, origin_count as i64, origin_datatype)?;
    let t = target(
        target_rank,
        target_disp,
        target_count as i64,
        target_datatype,
    )?;
    // SAFETY: forwarded C arguments.
    unsafe { accumulate(o, None, t, op, win, Some(request)) }
}

pub(crate) unsafe fn MPI_Raccumulate_c(
    origin_addr: *const c_void,
    origin_count: MPI_Count,
    origin_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: MPI_Count,
    target_datatype: MPI_Datatype,
    op: MPI_Op,
    win: MPI_Win,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    let o = buf(origin_addr, origin_count, origin_datatype)?;
    let t = target(target_rank, target_disp, target_count, target_datatype)?;
    // SAFETY: forwarded C arguments.
    unsafe { accumulate(o, None, t, op, win, Some(request)) }
}

pub(crate) unsafe fn MPI_Get_accumulate(
    origin_addr: *const c_void,
    origin_count: c_int,
    origin_datatype: MPI_Datatype,
    result_addr: *mut c_void,
    result_count: c_int,
    result_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: c_int,
    target_datatype: MPI_Datatype,
    op: MPI_Op,
    win: MPI_Win,
) -> MpiResult<()> {
    let o = buf(origin_addr, origin_count as i64, origin_datatype)?;
    let r = buf(result_addr, result_count as i64, result_datatype)?;
    let t = target(
        target_rank,
        target_disp,
        target_count as i64,
        target_datatype,
    )?;
    // SAFETY: forwarded C arguments.
    unsafe { accumulate(o, Some(r), t, op, win, None) }
}

pub(crate) unsafe fn MPI_Get_accumulate_c(
    origin_addr: *const c_void,
    origin_count: MPI_Count,
    origin_datatype: MPI_Datatype,
    result_addr: *mut c_void,
    result_count: MPI_Count,
    result_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: MPI_Count,
    target_datatype: MPI_Datatype,
    op: MPI_Op,
    win: MPI_Win,
) -> MpiResult<()> {
    let o = buf(origin_addr, origin_count, origin_datatype)?;
    let r = buf(result_addr, result_count, result_datatype)?;
    let t = target(target_rank, target_disp, target_count, target_datatype)?;
    // SAFETY: forwarded C arguments.
    unsafe { accumulate(o, Some(r), t, op, win, None) }
}

pub(crate) unsafe fn MPI_Rget_accumulate(
    origin_addr: *const c_void,
    origin_count: c_int,
    origin_datatype: MPI_Datatype,
    result_addr: *mut c_void,
    result_count: c_int,
    result_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: c_int,
    target_datatype: MPI_Datatype,
    op: MPI_Op,
    win: MPI_Win,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    let o = buf(origin_addr, origin_count as i64, origin_datatype)?;
    let r = buf(result_addr, result_count as i64, result_datatype)?;
    let t = target(
        target_rank,
        target_disp,
        target_count as i64,
        target_datatype,
    )?;
    // SAFETY: forwarded C arguments.
    unsafe { accumulate(o, Some(r), t, op, win, Some(request)) }
}

pub(crate) unsafe fn MPI_Rget_accumulate_c(
    origin_addr: *const c_void,
    origin_count: MPI_Count,
    origin_datatype: MPI_Datatype,
    result_addr: *mut c_void,
    result_count: MPI_Count,
    result_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: MPI_Count,
    target_datatype: MPI_Datatype,
    op: MPI_Op,
    win: MPI_Win,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    let o = buf(origin_addr, origin_count, origin_datatype)?;
    let r = buf(result_addr, result_count, result_datatype)?;
    let t = target(target_rank, target_disp, target_count, target_datatype)?;
    // SAFETY: forwarded C arguments.
    unsafe { accumulate(o, Some(r), t, op, win, Some(request)) }
}

pub(crate) unsafe fn MPI_Fetch_and_op(
    origin_addr: *const c_void,
    result_addr: *mut c_void,
    datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    op: MPI_Op,
    win: MPI_Win,
) -> MpiResult<()> {
    let o = buf(origin_addr, 1, datatype)?;
    let r = buf(result_addr, 1, datatype)?;
    let t = target(target_rank, target_disp, 1, datatype)?;
    // SAFETY: forwarded C arguments.
    unsafe { accumulate(o, Some(r), t, op, win, None) }
}

pub(crate) unsafe fn MPI_Compare_and_swap(
    origin_addr: *const c_void,
    compare_addr: *const c_void,
    result_addr: *mut c_void,
    datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    win: MPI_Win,
) -> MpiResult<()> {
    let swap = rma::Swap {
        origin: origin_addr as usize,
        compare: compare_addr as usize,
        result: result_addr as usize,
    };
    let t = target(target_rank, target_disp, 1, datatype)?;
    if direct_way!(rt => rma::compare_and_swap_direct(rt, win as usize, swap, &t)) {
        return Ok(());
    }
    if let Some(call) = runtime::with(|rt| rma::compare_and_swap(rt, win as usize, swap, &t))? {
        rma::net::run(vec![call])?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// synchronization

pub(crate) unsafe fn MPI_Win_fence(assert: c_int, win: MPI_Win) -> MpiResult<()> {
    let (comm, pending) = runtime::with(|rt| {
        let comm = rma::fence(rt, win as usize, assert)?;
        Ok((comm, rma::has_pending(rt, win as usize)))
    })?;
    // The fence synchronizes even when an operation failed (reported after).
    let settled = if pending {
        rma::settle(win as usize)
    } else {
        Ok(())
    };
    // SAFETY: the window's own communicator, valid while the window lives.
    unsafe { super::coll::MPI_Barrier(comm as MPI_Comm)? };
    rma::fence_memory();
    settled
}

/// The window ranks of group handle `group`.
fn group_ranks(win: MPI_Win, group: MPI_Group) -> MpiResult<Vec<i32>> {
    runtime::with(|rt| {
        let members = rt.group(group as usize)?.members.clone();
        rma::window_ranks(rt, win as usize, &members)
    })
}

pub(crate) unsafe fn MPI_Win_post(group: MPI_Group, assert: c_int, win: MPI_Win) -> MpiResult<()> {
    let ranks = group_ranks(win, group)?;
    rma::post(win as usize, ranks, assert)
}

pub(crate) unsafe fn MPI_Win_start(group: MPI_Group, assert: c_int, win: MPI_Win) -> MpiResult<()> {
    let ranks = group_ranks(win, group)?;
    rma::start(win as usize, ranks, assert)
}

pub(crate) unsafe fn MPI_Win_complete(win: MPI_Win) -> MpiResult<()> {
    rma::complete(win as usize)
}

pub(crate) unsafe fn MPI_Win_wait(win: MPI_Win) -> MpiResult<()> {
    rma::wait(win as usize)
}

pub(crate) unsafe fn MPI_Win_test(win: MPI_Win, flag: *mut c_int) -> MpiResult<()> {
    let flag = out(flag, "flag")?;
    let done = runtime::with(|rt| {
        if rma::test(rt, win as usize)? {
            return Ok(true);
        }
        // A completion that already arrived (another node's, still queued for this rank's
        // window server) counts: progress, then look again.
        rt.progress()?;
        rma::test(rt, win as usize)
    })?;
    *flag = done as c_int;
    Ok(())
}

pub(crate) unsafe fn MPI_Win_lock(
    lock_type: c_int,
    rank: c_int,
    assert: c_int,
    win: MPI_Win,
) -> MpiResult<()> {
    rma::lock(win as usize, lock_type, rank, assert)
}

pub(crate) unsafe fn MPI_Win_unlock(rank: c_int, win: MPI_Win) -> MpiResult<()> {
    rma::unlock(win as usize, rank)
}

pub(crate) unsafe fn MPI_Win_lock_all(assert: c_int, win: MPI_Win) -> MpiResult<()> {
    rma::lock_all(win as usize, assert)
}

pub(crate) unsafe fn MPI_Win_unlock_all(win: MPI_Win) -> MpiResult<()> {
    rma::unlock_all(win as usize)
}

pub(crate) unsafe fn MPI_Win_flush(rank: c_int, win: MPI_Win) -> MpiResult<()> {
    flush(win, Some(rank))
}

pub(crate) unsafe fn MPI_Win_flush_all(win: MPI_Win) -> MpiResult<()> {
    flush(win, None)
}

pub(crate) unsafe fn MPI_Win_flush_local(rank: c_int, win: MPI_Win) -> MpiResult<()> {
    flush(win, Some(rank))
}

pub(crate) unsafe fn MPI_Win_flush_local_all(win: MPI_Win) -> MpiResult<()> {
    flush(win, None)
}

/// The flushes: the epoch checked, memory ordered, requests to other nodes completed.
fn flush(win: MPI_Win, target: Option<c_int>) -> MpiResult<()> {
    // SAFETY: at the C boundary: no other reference to the runtime is live (`rt` is not used
    // once `runtime::with` runs).
    let pending = match unsafe { runtime::unlocked() } {
        Some(rt) => match rma::flush(rt, win as usize, target)? {
            found if !found.spans => found.pending,
            _ => runtime::with(|rt| {
                rt.progress()?;
                Ok(rma::has_pending(rt, win as usize))
            })?,
        },
        None => runtime::with(|rt| {
            let found = rma::flush(rt, win as usize, target)?;
            if !found.spans {
                return Ok(found.pending);
            }
            rt.progress()?;
            Ok(rma::has_pending(rt, win as usize))
        })?,
    };
    if pending {
        rma::settle(win as usize)?;
    }
    Ok(())
}

pub(crate) unsafe fn MPI_Win_sync(win: MPI_Win) -> MpiResult<()> {
    runtime::with(|rt| {
        rt.win(win as usize)?;
        if rma::spans(rt, win as usize) {
            rt.progress()?;
        }
        Ok(())
    })?;
    rma::fence_memory();
    Ok(())
}
