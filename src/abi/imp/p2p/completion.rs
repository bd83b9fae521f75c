//! Completion: `MPI_Wait`, `MPI_Test` and the `any`/`all`/`some` families, with their leaf entries.

use super::*;

// completion

/// [`grequest::settle`] for every request completed by a multi-completion call.
pub(super) fn settle_all(fins: Vec<Fin>) -> Vec<(usize, Status, u32)> {
    fins.into_iter()
        .map(|(i, st, comm, taken)| (i, grequest::settle(st, taken), comm))
        .collect()
}

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
/// [`entry::call_recorded`].
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
        |_| entry::CallArgs::default(),
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

/// Resolves an array of request handles: `None` for null handles.
pub(super) fn resolve_all(rt: &Runtime, reqs: &[MPI_Request]) -> MpiResult<Vec<Option<u32>>> {
    reqs.iter()
        .map(|&h| {
            if h as usize == MPI_REQUEST_NULL {
                Ok(None)
            } else {
                request_index(rt, h).map(Some)
            }
        })
        .collect()
}

#[inline]
pub(super) unsafe fn req_slice<'a>(
    count: c_int,
    reqs: *mut MPI_Request,
) -> MpiResult<&'a mut [MPI_Request]> {
    let n = super::super::util::count(count as i64)?;
    if n == 0 {
        return Ok(&mut []);
    }
    if reqs.is_null() {
        return fail(MPI_ERR_ARG, "the request array must not be NULL");
    }
    // SAFETY: the caller passes an array of `count` requests.
    Ok(unsafe { std::slice::from_raw_parts_mut(reqs, n) })
}

#[inline(always)]
pub(super) unsafe fn status_at<'a>(
    statuses: *mut MPI_Status,
    i: usize,
) -> Option<&'a mut MPI_Status> {
    // SAFETY: MPI_STATUSES_IGNORE is NULL; otherwise the array has one entry per request.
    unsafe { statuses.as_mut().map(|_| &mut *statuses.add(i)) }
}

/// Writes the statuses of completed operations (with `MPI_ERROR` set when some failed) and
/// returns `MPI_ERR_IN_STATUS` when any failed.
pub(super) unsafe fn report_all(
    done: &[(usize, Status, u32)],
    statuses: *mut MPI_Status,
    pending: &[usize],
) -> MpiResult<()> {
    let failed = done
        .iter()
        .find(|(_, st, _)| st.error != MPI_SUCCESS)
        .map(|(_, _, c)| *c);
    for (i, st, _) in done {
        if let Some(s) = status_at(statuses, *i) {
            st.write(s, failed.is_some());
        }
    }
    match failed {
        None => Ok(()),
        Some(comm) => {
            for &i in pending {
                if let Some(s) = status_at(statuses, i) {
                    s.MPI_ERROR = MPI_ERR_PENDING;
                }
            }
            // The failed operation's communicator's handler, or its file's.
            let obj = runtime::with(|rt| {
                let handle = rt.comm_handle(comm);
                Ok(rt
                    .file_of_comm(handle)
                    .map_or(ErrObj::Comm(handle), ErrObj::File))
            })?;
            Err(MpiError::new(
                MPI_ERR_IN_STATUS,
                "one or more operations failed: see the MPI_ERROR field of their statuses",
            )
            .on(obj))
        }
    }
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

/// Completes every request of `reqs` if all are complete (null and inactive ones count as
/// complete) and returns them all, null ones with the empty status; `None` (keep waiting)
/// otherwise.
#[inline(always)]
pub(super) fn complete_all(
    rt: &mut Runtime,
    reqs: &mut [MPI_Request],
) -> MpiResult<Option<Vec<Fin>>> {
    for &h in reqs.iter() {
        if h as usize == MPI_REQUEST_NULL {
            continue;
        }
        let rid = request_index(rt, h)?;
        let r = rt.reqs.get(rid).unwrap();
        if !r.active() {
            continue;
        }
        if !r.done() {
            return Ok(None);
        }
    }
    let mut fins = Vec::with_capacity(reqs.len());
    for (i, h) in reqs.iter_mut().enumerate() {
        if *h as usize == MPI_REQUEST_NULL {
            fins.push((i, Status::EMPTY, 0, None));
        } else {
            let rid = request_index(rt, *h)?;
            let (st, comm, taken) = finish(rt, rid, h);
            fins.push((i, st, comm, taken));
        }
    }
    Ok(Some(fins))
}

pub(crate) unsafe fn MPI_Testall(
    count: c_int,
    array_of_requests: *mut MPI_Request,
    flag: *mut c_int,
    array_of_statuses: *mut MPI_Status,
) -> MpiResult<()> {
    let reqs = req_slice(count, array_of_requests)?;
    let flag = out(flag, "flag")?;
    let mut done = Vec::new();
    let all = runtime::with(|rt| {
        let ids = resolve_all(rt, reqs)?;
        let check = |rt: &Runtime| ids.iter().all(|i| i.is_none_or(|r| ready(rt, r)));
        if !check(rt) {
            rt.progress()?;
            if !check(rt) {
                return Ok(false);
            }
        }
        for (i, id) in ids.iter().enumerate() {
            let (st, comm, taken) = match id {
                Some(r) => finish(rt, *r, &mut reqs[i]),
                None => (Status::EMPTY, 0, None),
            };
            done.push((i, st, comm, taken));
        }
        Ok(true)
    })?;
    *flag = all as c_int;
    if !all {
        crate::platform::wait::poll_found_nothing();
    }
    report_all(&settle_all(done), array_of_statuses, &[])
}

/// One pass of Waitany/Testany: the index of a completed active request, completing it.
pub(super) fn any_pass(
    rt: &mut Runtime,
    reqs: &mut [MPI_Request],
) -> MpiResult<Option<Option<Fin>>> {
    let ids = resolve_all(rt, reqs)?;
    let mut active = false;
    for (i, id) in ids.iter().enumerate() {
        let Some(r) = *id else { continue };
        let req = rt.reqs.get(r).unwrap();
        if !req.active() {
            continue;
        }
        active = true;
        if req.done() {
            let (st, comm, taken) = finish(rt, r, &mut reqs[i]);
            return Ok(Some(Some((i, st, comm, taken))));
        }
    }
    Ok(if active { None } else { Some(None) })
}

/// [`grequest::settle`] for the request completed by Waitany/Testany.
pub(super) fn settle_one((i, st, comm, taken): Fin) -> (usize, Status, u32) {
    (i, grequest::settle(st, taken), comm)
}

pub(super) unsafe fn report_one(
    index: *mut c_int,
    status: *mut MPI_Status,
    got: Option<(usize, Status, u32)>,
) -> MpiResult<()> {
    let index = out(index, "index")?;
    match got {
        None => {
            *index = MPI_UNDEFINED;
            write_status(status, &Status::EMPTY);
            Ok(())
        }
        Some((i, st, comm)) => {
            *index = i as c_int;
            write_status(status, &st);
            if st.error != MPI_SUCCESS {
                return Err(runtime::with(|rt| Ok(status_error(rt, comm, &st)))?);
            }
            Ok(())
        }
    }
}

pub(crate) unsafe fn MPI_Waitany(
    count: c_int,
    array_of_requests: *mut MPI_Request,
    index: *mut c_int,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    let reqs = req_slice(count, array_of_requests)?;
    let got = runtime::wait_for(|rt| any_pass(rt, reqs))?;
    report_one(index, status, got.map(settle_one))
}

pub(crate) unsafe fn MPI_Testany(
    count: c_int,
    array_of_requests: *mut MPI_Request,
    index: *mut c_int,
    flag: *mut c_int,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    let reqs = req_slice(count, array_of_requests)?;
    let flag = out(flag, "flag")?;
    let res = runtime::with(|rt| {
        if let Some(x) = any_pass(rt, reqs)? {
            return Ok(Some(x));
        }
        rt.progress()?;
        any_pass(rt, reqs)
    })?;
    match res {
        None => {
            *flag = 0;
            crate::platform::wait::poll_found_nothing();
            *out(index, "index")? = MPI_UNDEFINED;
            Ok(())
        }
        Some(got) => {
            *flag = 1;
            report_one(index, status, got.map(settle_one))
        }
    }
}

/// One pass of Waitsome/Testsome: completes every finished active request.
pub(super) fn some_pass(rt: &mut Runtime, reqs: &mut [MPI_Request]) -> MpiResult<Option<Vec<Fin>>> {
    let ids = resolve_all(rt, reqs)?;
    let mut active = false;
    let mut got = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        let Some(r) = *id else { continue };
        let req = rt.reqs.get(r).unwrap();
        if !req.active() {
            continue;
        }
        active = true;
        if req.done() {
            let (st, comm, taken) = finish(rt, r, &mut reqs[i]);
            got.push((i, st, comm, taken));
        }
    }
    Ok(if !active || !got.is_empty() {
        Some(got)
    } else {
        None
    })
}

pub(super) unsafe fn report_some(
    active_any: bool,
    got: Vec<(usize, Status, u32)>,
    outcount: *mut c_int,
    indices: *mut c_int,
    statuses: *mut MPI_Status,
) -> MpiResult<()> {
    let outcount = out(outcount, "outcount")?;
    if !active_any {
        *outcount = MPI_UNDEFINED;
        return Ok(());
    }
    *outcount = got.len() as c_int;
    let mut packed = Vec::with_capacity(got.len());
    for (k, (i, st, comm)) in got.into_iter().enumerate() {
        if !indices.is_null() {
            // SAFETY: the index array has room for `count` entries, and k < count.
            unsafe { *indices.add(k) = i as c_int };
        }
        packed.push((k, st, comm));
    }
    report_all(&packed, statuses, &[])
}

pub(crate) unsafe fn MPI_Waitsome(
    incount: c_int,
    array_of_requests: *mut MPI_Request,
    outcount: *mut c_int,
    array_of_indices: *mut c_int,
    array_of_statuses: *mut MPI_Status,
) -> MpiResult<()> {
    let reqs = req_slice(incount, array_of_requests)?;
    let got = settle_all(runtime::wait_for(|rt| some_pass(rt, reqs))?);
    let active_any = !got.is_empty();
    // SAFETY: the pointer arguments come from the C caller and are valid as the MPI
    // standard requires (see the module documentation); the callee checks NULLs.
    unsafe {
        report_some(
            active_any,
            got,
            outcount,
            array_of_indices,
            array_of_statuses,
        )
    }
}

pub(crate) unsafe fn MPI_Testsome(
    incount: c_int,
    array_of_requests: *mut MPI_Request,
    outcount: *mut c_int,
    array_of_indices: *mut c_int,
    array_of_statuses: *mut MPI_Status,
) -> MpiResult<()> {
    let reqs = req_slice(incount, array_of_requests)?;
    let res = runtime::with(|rt| {
        if let Some(x) = some_pass(rt, reqs)? {
            return Ok(Some(x));
        }
        rt.progress()?;
        some_pass(rt, reqs)
    })?;
    match res {
        // Active requests exist but none completed.
        None => {
            *out(outcount, "outcount")? = 0;
            Ok(())
        }
        Some(got) => {
            let got = settle_all(got);
            let active_any = !got.is_empty();
            // SAFETY: the pointer arguments come from the C caller and are valid as the MPI
            // standard requires (see the module documentation); the callee checks NULLs.
            unsafe {
                report_some(
                    active_any,
                    got,
                    outcount,
                    array_of_indices,
                    array_of_statuses,
                )
            }
        }
    }
}

pub(crate) unsafe fn MPI_Request_get_status(
    request: MPI_Request,
    flag: *mut c_int,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    let flag = out(flag, "flag")?;
    if request as usize == MPI_REQUEST_NULL {
        *flag = 1;
        write_status(status, &Status::EMPTY);
        return Ok(());
    }
    let st = runtime::with(|rt| {
        let rid = request_index(rt, request)?;
        if !ready(rt, rid) {
            rt.progress()?;
        }
        peek_status(rt, request)
    })?;
    match st {
        None => {
            *flag = 0;
            crate::platform::wait::poll_found_nothing();
        }
        Some(peek) => {
            let (st, rc) = peeked(peek);
            *flag = 1;
            write_status(status, &st);
            if rc != MPI_SUCCESS {
                return Err(grequest::callback_error("query", rc));
            }
        }
    }
    Ok(())
}

pub(crate) unsafe fn MPI_Request_free(request: *mut MPI_Request) -> MpiResult<()> {
    let slot = out(request, "request")?;
    let taken = runtime::with(|rt| {
        let rid = request_index(rt, *slot)?;
        if crate::core::p2p::part::busy(rt, rid) {
            return fail(
                MPI_ERR_REQUEST,
                "freeing an active partitioned request before it completed is erroneous",
            );
        }
        let r = rt.reqs.get_mut(rid).unwrap();
        if rid == DONE_SEND {
            // The shared complete send request stays.
        } else if r.kind == ReqKind::Generalized && r.done() {
            // Its free_fn runs in this call, outside the lock; the request goes after it.
            return Ok(r
                .extra_mut()
                .and_then(|e| e.grequest.take())
                .map(|g| (rid, g)));
        } else if r.done() || !r.active() {
            rt.reqs.remove(rid);
        } else {
            // A generalized request: MPI_Grequest_complete runs its free_fn.
            r.set_user_freed(true);
        }
        Ok(None)
    })?;
    *slot = MPI_REQUEST_NULL as MPI_Request;
    if let Some((rid, g)) = taken {
        let rc = grequest::free_and_release(rid, &g);
        if rc != MPI_SUCCESS {
            return Err(grequest::callback_error("free", rc));
        }
    }
    Ok(())
}

pub(crate) unsafe fn MPI_Cancel(request: *mut MPI_Request) -> MpiResult<()> {
    let slot = out(request, "request")?;
    let greq = runtime::with(|rt| {
        let rid = request_index(rt, *slot)?;
        if crate::core::p2p::part::busy(rt, rid) {
            return fail(
                MPI_ERR_REQUEST,
                "cancelling an active partitioned request is erroneous",
            );
        }
        let r = rt.reqs.get(rid).unwrap();
        if let Some(g) = r.grequest() {
            // Its cancel_fn runs outside the lock, told whether MPI_Grequest_complete came.
            return Ok(Some((g, r.done())));
        }
        // A receive is posted on the VCI of its messages, which for a communicator spread
        // over the VCIs need not be its request's.
        if r.kind == ReqKind::Recv
            && !r.done()
            && (0..rt.matchers.vcis()).any(|v| rt.matchers.of_vci(v).cancel_posted(rid))
        {
            let r = rt.reqs.get_mut(rid).unwrap();
            r.status = Status {
                cancelled: true,
                ..Status::EMPTY
            };
            rt.complete(rid);
        }
        // Sends that were handed to the transport cannot be recalled: they complete normally
        // and MPI_Test_cancelled reports false, which the standard allows.
        Ok(None)
    })?;
    if let Some((g, complete)) = greq {
        let rc = grequest::cancel(&g, complete);
        if rc != MPI_SUCCESS {
            return Err(grequest::callback_error("cancel", rc));
        }
    }
    Ok(())
}

pub(crate) unsafe fn MPI_Test_cancelled(
    status: *const MPI_Status,
    flag: *mut c_int,
) -> MpiResult<()> {
    // SAFETY: a non-null status pointer points to a status.
    let st = match unsafe { status.as_ref() } {
        Some(s) => s,
        None => return fail(MPI_ERR_ARG, "status must not be NULL"),
    };
    *out(flag, "flag")? = (st.MPI_internal[2] != 0) as c_int;
    Ok(())
}
