//! `MPI_Wait`, `MPI_Waitall` and `MPI_Test`: the leaf ways into them (inline in the C entry
//! points, one function per way), and the full paths they fall back to.

use super::*;

/// The full path of a wait over `count` requests after its leaf declined: `MPI_Waitall`'s
/// ([`waitall_fast_entry`]) or, for one request, `MPI_Wait`'s ([`wait_full_entry`]).
pub(super) type FullPath = unsafe extern "C" fn(c_int, *mut MPI_Request, *mut MPI_Status) -> c_int;

/// The `MPI_STATUSES_IGNORE` leaves of a wait over `count` requests
/// ([`leaf::waitall_done_direct`], [`leaf::waitall_done_locked`]), inline in the C entry
/// point (no frame), then `full` by a jump. Requests a leaf finished before it declined read
/// `MPI_REQUEST_NULL`, which the full path takes as complete.
///
/// # Safety
/// A C entry point's arguments: `reqs` is null or has `count` requests; `statuses` is
/// `MPI_STATUSES_IGNORE` (null) here.
#[inline(always)]
pub(super) unsafe fn wait_ignore_leaf(
    count: c_int,
    reqs: *mut MPI_Request,
    statuses: *mut MPI_Status,
    full: FullPath,
    traced: FullPath,
) -> c_int {
    let ways = vci::leaf_ways();
    // SAFETY: a C entry point, which drops the state before it returns; the caller passes
    // an array of `count` requests; the state came from the ways in.
    let done = unsafe {
        let way = ways.way();
        if let Some(s) = way.direct() {
            leaf::waitall_done_direct(s, count, reqs, statuses)
        } else if !way.locked() {
            if crate::core::diag::trace_on() {
                // Tracing keeps the ways closed: the call is recorded here, so that open
                // ways pay nothing for it.
                return traced(count, reqs, statuses);
            }
            false
        } else {
            match leaf::waitall_done_locked(ways, count, reqs, statuses) {
                (Locked::Done, _) => true,
                (Locked::Wake, Some(slot)) => return leaf_wake_entry(slot),
                (Locked::Held, Some(slot)) => {
                    return wait_release_entry(count, reqs, statuses, slot, 0, full);
                }
                _ => false,
            }
        }
    };
    if done {
        return 0;
    }
    // SAFETY: the caller's arguments, forwarded.
    unsafe { full(count, reqs, statuses) }
}

/// A wait's status leaf on the direct way: the call's arguments and VCI 0's state.
pub(super) type DirectPath =
    unsafe extern "C" fn(c_int, *mut MPI_Request, *mut MPI_Status, *mut vci::VciState) -> c_int;

/// The way into a wait's status leaves, inline in the C entry point: by a jump to `direct`
/// (with VCI 0's state) or to `locked`, whichever way is open, else to `full`. The leaves
/// live in functions of their own, so that the status-ignoring leaf keeps no frame and each
/// way pays only for the registers it uses.
///
/// # Safety
/// A C entry point's arguments, with `statuses` not null and holding `count` statuses.
#[inline(always)]
pub(super) unsafe fn wait_statuses_way(
    count: c_int,
    reqs: *mut MPI_Request,
    statuses: *mut MPI_Status,
    direct: DirectPath,
    locked: FullPath,
    full: FullPath,
    traced: FullPath,
) -> c_int {
    let way = vci::leaf_ways().way();
    // SAFETY: a C entry point, which drops the state before it returns (the leaf in
    // `direct` uses it and returns); the caller's arguments, forwarded.
    unsafe {
        if let Some(s) = way.direct() {
            direct(count, reqs, statuses, s)
        } else if way.locked() {
            locked(count, reqs, statuses)
        } else if crate::core::diag::trace_on() {
            traced(count, reqs, statuses)
        } else {
            full(count, reqs, statuses)
        }
    }
}

/// The direct leaf of a wait with statuses to write ([`leaf::waitall_statuses_direct`]): it
/// finishes requests from the front in one pass; what it leaves goes to `full` (by a jump
/// when it finished none, through [`wait_rest_entry`] otherwise). The leaf walks the arrays
/// by pointers and only the array's start and end stay live across it, so that the call
/// saves fewer registers.
///
/// # Safety
/// As for [`wait_statuses_way`]; `s` is VCI 0's state from the direct way, used only here.
#[inline(always)]
pub(super) unsafe fn wait_statuses_direct(
    count: c_int,
    reqs: *mut MPI_Request,
    statuses: *mut MPI_Status,
    s: *mut vci::VciState,
    full: FullPath,
) -> c_int {
    if count <= 0 || reqs.is_null() {
        std::hint::cold_path();
        // SAFETY: the caller's arguments, forwarded.
        return unsafe { full(count, reqs, statuses) };
    }
    // SAFETY: the caller passes `count` requests and as many statuses; the direct way's
    // state (caller's contract).
    let (stop, st, end) = unsafe {
        let end = reqs.add(count as usize);
        let (stop, st) = leaf::waitall_statuses_direct(&mut *s, reqs, statuses, end);
        (stop, st, end)
    };
    if stop == end {
        return 0;
    }
    // SAFETY: `stop` and `end` point into (or one past) the array starting at `reqs`,
    // and `st` is `stop`'s status.
    unsafe {
        let done = stop.offset_from(reqs) as usize;
        let count = end.offset_from(reqs) as c_int;
        if done == 0 {
            return full(count, reqs, st);
        }
        wait_rest_entry(count, reqs, st.sub(done), done, full)
    }
}

/// [`wait_statuses_direct`] under the lock-based thread models
/// ([`leaf::waitall_statuses_locked`]). Inlined into an out-of-line function per call
/// ([`wait_status_locked_entry`], [`waitall_statuses_locked_entry`]), so that the direct
/// leaf needs fewer registers and each call keeps its constants (one request for `MPI_Wait`).
///
/// # Safety
/// As for [`wait_statuses_way`].
#[inline(always)]
pub(super) unsafe fn wait_statuses_locked(
    count: c_int,
    reqs: *mut MPI_Request,
    statuses: *mut MPI_Status,
    full: FullPath,
) -> c_int {
    let ways = vci::leaf_ways();
    // SAFETY: as in `wait_ignore_leaf`, with `count` statuses.
    let done = unsafe {
        match leaf::waitall_statuses_locked(ways, count, reqs, statuses) {
            (Locked::Done, _, _) => return 0,
            (Locked::Wake, Some(slot), _) => return leaf_wake_entry(slot),
            (Locked::Held, Some(slot), done) => {
                return wait_release_entry(count, reqs, statuses, slot, done, full);
            }
            (_, _, done) => done,
        }
    };
    // SAFETY: the caller's arguments, forwarded; `done` entries are finished.
    unsafe { wait_after_status_leaf(count, reqs, statuses, done, full) }
}

/// `MPI_Wait` with a status under the lock-based thread models: [`wait_statuses_locked`].
#[inline(never)]
pub(super) unsafe extern "C" fn wait_status_locked_entry(
    request: *mut MPI_Request,
    status: *mut MPI_Status,
) -> c_int {
    // SAFETY: the caller's arguments: one request, one status.
    unsafe { wait_statuses_locked(1, request, status, wait_full_entry) }
}

/// [`wait_status_locked_entry`] as a [`FullPath`] over its one request.
#[inline(always)]
pub(super) unsafe extern "C" fn wait_status_locked_full(
    _count: c_int,
    request: *mut MPI_Request,
    status: *mut MPI_Status,
) -> c_int {
    // SAFETY: the caller's arguments, forwarded.
    unsafe { wait_status_locked_entry(request, status) }
}

/// `MPI_Waitall` with statuses under the lock-based thread models: [`wait_statuses_locked`].
#[inline(never)]
pub(super) unsafe extern "C" fn waitall_statuses_locked_entry(
    count: c_int,
    reqs: *mut MPI_Request,
    statuses: *mut MPI_Status,
) -> c_int {
    // SAFETY: the caller's arguments, forwarded.
    unsafe { wait_statuses_locked(count, reqs, statuses, waitall_fast_entry) }
}

/// What follows a status leaf that finished the first `done` of `count` requests: nothing
/// when it finished them all, else `full` (by a jump when it finished none).
///
/// # Safety
/// As for [`wait_statuses_way`].
#[inline(always)]
pub(super) unsafe fn wait_after_status_leaf(
    count: c_int,
    reqs: *mut MPI_Request,
    statuses: *mut MPI_Status,
    done: usize,
    full: FullPath,
) -> c_int {
    if done == count as usize {
        return 0;
    }
    if done == 0 {
        // SAFETY: the caller's arguments, forwarded.
        return unsafe { full(count, reqs, statuses) };
    }
    // SAFETY: the caller's arguments, forwarded; `done` entries are finished.
    unsafe { wait_rest_entry(count, reqs, statuses, done, full) }
}

/// A wait whose status leaf finished the first `done` of its `count` requests (writing their
/// statuses) and declined the rest: `full` over the rest. When that reports
/// `MPI_ERR_IN_STATUS`, the finished ones get `MPI_SUCCESS` in their `MPI_ERROR` field, as
/// the standard asks of every status the call completed.
#[cold]
#[inline(never)]
pub(super) unsafe extern "C" fn wait_rest_entry(
    count: c_int,
    reqs: *mut MPI_Request,
    statuses: *mut MPI_Status,
    done: usize,
    full: FullPath,
) -> c_int {
    // SAFETY: `done` < `count` entries of both arrays are behind the pointers.
    let code = unsafe { full(count - done as c_int, reqs.add(done), statuses.add(done)) };
    if code == MPI_ERR_IN_STATUS {
        for i in 0..done {
            // SAFETY: entry `i` of the caller's status array.
            unsafe { (*statuses.add(i)).MPI_ERROR = MPI_SUCCESS };
        }
    }
    code
}

/// A wait whose locked leaf declined holding the lock of `slot` ([`leaf::Locked::Held`]),
/// having finished the first `done` requests: releases the lock, then goes on as
/// a status leaf does after a decline ([`wait_after_status_leaf`]).
#[cold]
#[inline(never)]
pub(super) unsafe extern "C" fn wait_release_entry(
    count: c_int,
    reqs: *mut MPI_Request,
    statuses: *mut MPI_Status,
    slot: &vci::LeafSlot,
    done: usize,
    full: FullPath,
) -> c_int {
    // SAFETY: the leaf took this slot's lock on this thread and kept it.
    unsafe { slot.leave() };
    // SAFETY: the caller's arguments, forwarded; `done` entries are finished.
    unsafe { wait_after_status_leaf(count, reqs, statuses, done, full) }
}

/// `MPI_Wait`: the `MPI_Waitall` leaves for one request (the same semantics for one request
/// that is complete and successful: its status, `MPI_REQUEST_NULL`); everything else, and
/// every error, in [`wait_general_entry`].
#[inline(always)]
pub(crate) unsafe fn MPI_Wait(request: *mut MPI_Request, status: *mut MPI_Status) -> Leaf {
    if !status.is_null() {
        // SAFETY: the caller's arguments: one request, one status.
        return Leaf(unsafe {
            wait_statuses_way(
                1,
                request,
                status,
                wait_status_direct_path,
                wait_status_locked_full,
                wait_full_entry,
                wait_traced_entry,
            )
        });
    }
    // SAFETY: the caller's arguments: one request, no status.
    Leaf(unsafe { wait_ignore_leaf(1, request, status, wait_full_entry, wait_traced_entry) })
}

/// `MPI_Wait` recorded in the trace (`HYMPI_TRACE`): [`wait_full_entry`] under
/// [`entry::call_recorded`].
#[cold]
#[inline(never)]
unsafe extern "C" fn wait_traced_entry(
    count: c_int,
    reqs: *mut MPI_Request,
    statuses: *mut MPI_Status,
) -> c_int {
    entry::call_recorded(
        "MPI_Wait",
        ErrObj::None,
        |_| entry::CallArgs::default(),
        || {
            // SAFETY: the caller's arguments, forwarded.
            Code(unsafe { wait_full_entry(count, reqs, statuses) })
        },
    )
}

/// `MPI_Waitall` recorded in the trace (`HYMPI_TRACE`): [`waitall_fast_entry`] under
/// [`entry::call_recorded`].
#[cold]
#[inline(never)]
unsafe extern "C" fn waitall_traced_entry(
    count: c_int,
    reqs: *mut MPI_Request,
    statuses: *mut MPI_Status,
) -> c_int {
    entry::call_recorded(
        "MPI_Waitall",
        ErrObj::None,
        |_| entry::CallArgs::default(),
        || {
            // SAFETY: the caller's arguments, forwarded.
            Code(unsafe { waitall_fast_entry(count, reqs, statuses) })
        },
    )
}

/// [`wait_status_direct_entry`] as a [`DirectPath`] (inlined away: the entry takes the
/// request and status in the registers the C entry point received them in).
#[inline(always)]
pub(super) unsafe extern "C" fn wait_status_direct_path(
    _count: c_int,
    request: *mut MPI_Request,
    status: *mut MPI_Status,
    s: *mut vci::VciState,
) -> c_int {
    // SAFETY: the caller's arguments, forwarded.
    unsafe { wait_status_direct_entry(request, status, s) }
}

/// `MPI_Wait` with a status on the direct way: [`wait_statuses_direct`] for one request.
#[inline(never)]
pub(super) unsafe extern "C" fn wait_status_direct_entry(
    request: *mut MPI_Request,
    status: *mut MPI_Status,
    s: *mut vci::VciState,
) -> c_int {
    // SAFETY: the caller's arguments: one request, one status, the direct way's state.
    unsafe { wait_statuses_direct(1, request, status, s, wait_full_entry) }
}

/// `MPI_Wait` as a [`FullPath`] over its one request: [`wait_general_entry`] (inlined away
/// into a jump there).
#[inline(always)]
pub(super) unsafe extern "C" fn wait_full_entry(
    _count: c_int,
    request: *mut MPI_Request,
    status: *mut MPI_Status,
) -> c_int {
    // SAFETY: the caller's arguments, forwarded.
    unsafe { wait_general_entry(request, status) }
}

/// `MPI_Wait` beyond the leaves, with its own error handling.
#[inline(never)]
pub(super) unsafe extern "C" fn wait_general_entry(
    request: *mut MPI_Request,
    status: *mut MPI_Status,
) -> c_int {
    // SAFETY: the caller's arguments, forwarded.
    entry::call("MPI_Wait", ErrObj::None, || unsafe {
        wait_general(request, status)
    })
}

/// `MPI_Wait`: the fast paths over one request, then the general wait.
pub(super) unsafe fn wait_general(
    request: *mut MPI_Request,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    let slot = out(request, "request")?;
    if *slot as usize == MPI_REQUEST_NULL {
        write_status(status, &Status::EMPTY);
        return Ok(());
    }
    // SAFETY: `slot` is one request; `status` is null or one status.
    if unsafe { fastpath::complete_all(std::slice::from_mut(slot), status) } {
        return Ok(());
    }
    // SAFETY: as above.
    if unsafe { fastpath::wait_all(std::slice::from_mut(slot), status) } {
        return Ok(());
    }
    let rid = runtime::with(|rt| request_index(rt, *slot))?;
    let (st, comm, taken) =
        runtime::wait_for(|rt| Ok(ready(rt, rid).then(|| finish(rt, rid, slot))))?;
    let st = grequest::settle(st, taken);
    write_status(status, &st);
    if st.error != MPI_SUCCESS {
        return Err(runtime::with(|rt| Ok(status_error(rt, comm, &st)))?);
    }
    Ok(())
}

/// `MPI_Test`: for a request that is null, the shared complete send, or complete, plain and
/// successful, the `MPI_Wait` leaves (which finish it and write its status) and a flag of 1;
/// everything else, and every error, in [`test_general_entry`]. Each way is a function of its
/// own, which the C entry point reaches by a jump.
#[inline(always)]
pub(crate) unsafe fn MPI_Test(
    request: *mut MPI_Request,
    flag: *mut c_int,
    status: *mut MPI_Status,
) -> Leaf {
    let way = vci::leaf_ways().way();
    // SAFETY: a C entry point, which drops the state before it returns (the leaf in
    // `test_direct_entry` uses it and returns); the caller's arguments, forwarded.
    Leaf(unsafe {
        if let Some(s) = way.direct() {
            test_direct_entry(request, flag, status, s)
        } else if way.locked() {
            test_locked_entry(request, flag, status)
        } else if crate::core::diag::trace_on() {
            test_traced_entry(request, flag, status)
        } else {
            test_general_entry(request, flag, status)
        }
    })
}

/// `MPI_Test` on the direct way (VCI 0's state `s`): [`leaf::waitall_statuses_direct`] or,
/// with `MPI_STATUS_IGNORE`, [`leaf::waitall_done_direct`], for one request.
#[inline(never)]
unsafe extern "C" fn test_direct_entry(
    request: *mut MPI_Request,
    flag: *mut c_int,
    status: *mut MPI_Status,
    s: *mut vci::VciState,
) -> c_int {
    if !flag.is_null() && !request.is_null() {
        // SAFETY: the direct way's state, used only here; one request and (unless null) one
        // status, the caller's.
        let done = unsafe {
            let s = &mut *s;
            if status.is_null() {
                leaf::waitall_done_direct(s, 1, request, status)
            } else {
                let end = request.add(1);
                leaf::waitall_statuses_direct(s, request, status, end).0 == end
            }
        };
        if done {
            // SAFETY: checked not null; the caller's flag.
            unsafe { *flag = 1 };
            return 0;
        }
    }
    // SAFETY: the caller's arguments, forwarded.
    unsafe { test_general_entry(request, flag, status) }
}

/// `MPI_Test` under the lock-based thread models: [`leaf::waitall_statuses_locked`] or,
/// with `MPI_STATUS_IGNORE`, [`leaf::waitall_done_locked`], for one request.
#[inline(never)]
unsafe extern "C" fn test_locked_entry(
    request: *mut MPI_Request,
    flag: *mut c_int,
    status: *mut MPI_Status,
) -> c_int {
    if !flag.is_null() {
        let ways = vci::leaf_ways();
        // SAFETY: a C entry point, not inside the slow path; one request and (unless null)
        // one status, the caller's.
        let (outcome, slot) = unsafe {
            if status.is_null() {
                leaf::waitall_done_locked(ways, 1, request, status)
            } else {
                let (outcome, slot, _) = leaf::waitall_statuses_locked(ways, 1, request, status);
                (outcome, slot)
            }
        };
        match (outcome, slot) {
            (Locked::Done, _) => {
                // SAFETY: checked not null; the caller's flag.
                unsafe { *flag = 1 };
                return 0;
            }
            (Locked::Wake, Some(slot)) => {
                // SAFETY: as above.
                unsafe { *flag = 1 };
                return leaf_wake_entry(slot);
            }
            (Locked::Held, Some(slot)) => {
                // SAFETY: the caller's arguments, forwarded; the leaf kept the slot's lock.
                return unsafe { test_release_entry(request, flag, status, slot) };
            }
            _ => {}
        }
    }
    // SAFETY: the caller's arguments, forwarded.
    unsafe { test_general_entry(request, flag, status) }
}

/// `MPI_Test` whose locked leaf declined holding the lock of `slot`: releases it, then
/// [`test_general_entry`]. Out of line, so that the leaf keeps no argument across a call.
///
/// # Safety
/// The caller's arguments; the leaf took `slot`'s lock on this thread and kept it.
#[cold]
#[inline(never)]
unsafe extern "C" fn test_release_entry(
    request: *mut MPI_Request,
    flag: *mut c_int,
    status: *mut MPI_Status,
    slot: &vci::LeafSlot,
) -> c_int {
    // SAFETY: the leaf took this slot's lock on this thread and kept it (caller's contract).
    unsafe { slot.leave() };
    // SAFETY: the caller's arguments, forwarded.
    unsafe { test_general_entry(request, flag, status) }
}

/// `MPI_Test` recorded in the trace (`HYMPI_TRACE`): [`test_general`] under
/// [`entry::call_recorded`], with the request it leaves (as the generated entry recorded it).
#[cold]
#[inline(never)]
unsafe extern "C" fn test_traced_entry(
    request: *mut MPI_Request,
    flag: *mut c_int,
    status: *mut MPI_Status,
) -> c_int {
    entry::call_recorded(
        "MPI_Test",
        ErrObj::None,
        // The request as the call left it (its VCI goes into the event, as for the other
        // calls the generator records).
        |code| entry::CallArgs {
            request: if code == 0 {
                // SAFETY: a successful call read and wrote the request through this pointer.
                unsafe { request.as_ref() }.map(|r| *r as usize)
            } else {
                None
            },
            ..Default::default()
        },
        // SAFETY: the caller's arguments, forwarded.
        || unsafe { test_general(request, flag, status) },
    )
}

/// `MPI_Test` beyond the leaves, with its own error handling: [`test_general`].
#[inline(never)]
unsafe extern "C" fn test_general_entry(
    request: *mut MPI_Request,
    flag: *mut c_int,
    status: *mut MPI_Status,
) -> c_int {
    // SAFETY: the caller's arguments, forwarded.
    entry::call("MPI_Test", ErrObj::None, || unsafe {
        test_general(request, flag, status)
    })
}

/// `MPI_Test`: progress once if the request is not complete, then finish it if it is.
unsafe fn test_general(
    request: *mut MPI_Request,
    flag: *mut c_int,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    let slot = out(request, "request")?;
    let flag = out(flag, "flag")?;
    if *slot as usize == MPI_REQUEST_NULL {
        *flag = 1;
        write_status(status, &Status::EMPTY);
        return Ok(());
    }
    let res = runtime::with(|rt| {
        let rid = request_index(rt, *slot)?;
        if !ready(rt, rid) {
            rt.progress()?;
        }
        Ok(ready(rt, rid).then(|| finish(rt, rid, slot)))
    })?;
    match res {
        None => {
            *flag = 0;
            crate::platform::wait::poll_found_nothing();
        }
        Some((st, comm, taken)) => {
            let st = grequest::settle(st, taken);
            *flag = 1;
            write_status(status, &st);
            if st.error != MPI_SUCCESS {
                return Err(runtime::with(|rt| Ok(status_error(rt, comm, &st)))?);
            }
        }
    }
    Ok(())
}

/// `MPI_Waitall`: [`wait_ignore_leaf`] inline; with statuses, [`wait_statuses_way`];
/// everything else, and every error, in [`waitall_fast_entry`], which the compiled entry
/// point reaches by a jump.
#[inline(always)]
pub(crate) unsafe fn MPI_Waitall(
    count: c_int,
    array_of_requests: *mut MPI_Request,
    array_of_statuses: *mut MPI_Status,
) -> Leaf {
    let (reqs, statuses) = (array_of_requests, array_of_statuses);
    if !statuses.is_null() {
        // SAFETY: the caller's arguments, forwarded.
        return Leaf(unsafe {
            wait_statuses_way(
                count,
                reqs,
                statuses,
                waitall_statuses_direct_entry,
                waitall_statuses_locked_entry,
                waitall_fast_entry,
                waitall_traced_entry,
            )
        });
    }
    // SAFETY: the caller's arguments, forwarded.
    Leaf(unsafe {
        wait_ignore_leaf(
            count,
            reqs,
            statuses,
            waitall_fast_entry,
            waitall_traced_entry,
        )
    })
}

/// `MPI_Waitall` with an array of statuses on the direct way: [`wait_statuses_direct`].
#[inline(never)]
pub(super) unsafe extern "C" fn waitall_statuses_direct_entry(
    count: c_int,
    reqs: *mut MPI_Request,
    statuses: *mut MPI_Status,
    s: *mut vci::VciState,
) -> c_int {
    // SAFETY: the caller's arguments, forwarded.
    unsafe { wait_statuses_direct(count, reqs, statuses, s, waitall_fast_entry) }
}

/// `MPI_Waitall` beyond the leaf: the full fast path over complete requests, then
/// [`waitall_slow_entry`].
#[inline(never)]
pub(super) unsafe extern "C" fn waitall_fast_entry(
    count: c_int,
    array_of_requests: *mut MPI_Request,
    array_of_statuses: *mut MPI_Status,
) -> c_int {
    entry::call("MPI_Waitall", ErrObj::None, || {
        if count > 0 && !array_of_requests.is_null() {
            // SAFETY: the caller passes an array of `count` requests.
            let reqs = unsafe { std::slice::from_raw_parts_mut(array_of_requests, count as usize) };
            // SAFETY: the status array is null or has an entry per request.
            if unsafe { fastpath::complete_all(reqs, array_of_statuses) } {
                return Code(0);
            }
        }
        // SAFETY: the caller's arguments, forwarded.
        Code(unsafe { waitall_slow_entry(count, array_of_requests, array_of_statuses) })
    })
}

/// `MPI_Waitall` beyond the fast path, with its own error handling: first the fast wait on
/// one VCI ([`fastpath::wait_all`]; out of the inline entry, so that the entry stays lean for
/// requests that are complete already), then the general path.
#[cold]
#[inline(never)]
pub(super) unsafe extern "C" fn waitall_slow_entry(
    count: c_int,
    array_of_requests: *mut MPI_Request,
    array_of_statuses: *mut MPI_Status,
) -> c_int {
    entry::call("MPI_Waitall", ErrObj::None, || {
        if count > 0 && !array_of_requests.is_null() {
            // SAFETY: the caller passes an array of `count` requests.
            let reqs = unsafe { std::slice::from_raw_parts_mut(array_of_requests, count as usize) };
            // SAFETY: the status array is null or has an entry per request.
            if unsafe { fastpath::wait_all(reqs, array_of_statuses) } {
                return Ok(());
            }
        }
        // SAFETY: the caller's arguments, forwarded.
        unsafe { waitall_slow(count, array_of_requests, array_of_statuses) }
    })
}

/// `MPI_Waitall` beyond the fast path (and every error).
#[cold]
#[inline(never)]
pub(super) unsafe fn waitall_slow(
    count: c_int,
    array_of_requests: *mut MPI_Request,
    array_of_statuses: *mut MPI_Status,
) -> MpiResult<()> {
    let reqs = req_slice(count, array_of_requests)?;
    let fins = runtime::wait_for(|rt| complete_all(rt, reqs))?;
    // SAFETY: the status array is null or has an entry per request.
    unsafe { report_all(&settle_all(fins), array_of_statuses, &[]) }
}
