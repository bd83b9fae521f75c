//! Completion: the `any`/`some`/`all` families beyond `MPI_Waitall`, `MPI_Testall`,
//! `MPI_Request_get_status`, `MPI_Request_free` and `MPI_Cancel` (the leaf-served waits and
//! `MPI_Test`: `wait.rs`).

use super::*;

// completion

/// [`grequest::settle`] for every request completed by a multi-completion call.
pub(super) fn settle_all(fins: Vec<Fin>) -> Vec<(usize, Status, u32)> {
    fins.into_iter()
        .map(|(i, st, comm, taken)| (i, grequest::settle(st, taken), comm))
        .collect()
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
