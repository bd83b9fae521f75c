//! Status queries and accessors: `MPI_Request_get_status*`, `MPI_Get_elements`, `MPI_Status_set_*` and friends.

use super::*;

// status queries

pub(super) unsafe fn get_count(
    status: *const MPI_Status,
    dt: MPI_Datatype,
    elements: bool,
) -> MpiResult<i64> {
    // SAFETY: a non-null status pointer points to a status.
    let st = match unsafe { status.as_ref() } {
        Some(s) => s,
        None => return fail(MPI_ERR_ARG, "status must not be NULL"),
    };
    let bytes = request::get_bytes(st);
    let Some(t) = datatype::predefined(dt as usize) else {
        // A derived type: whole elements, or basic elements of a partial message.
        let d = runtime::with(|rt| rt.dtype(dt as usize))?;
        return Ok(if elements {
            d.elements_in(bytes)
                .map_or(MPI_UNDEFINED as i64, |n| n as i64)
        } else if d.size == 0 {
            0
        } else if bytes.is_multiple_of(d.size as u64) {
            (bytes / d.size as u64) as i64
        } else {
            MPI_UNDEFINED as i64
        });
    };
    Ok(match t.count_of(bytes) {
        Some(n) if elements => n as i64 * t.basic as i64,
        Some(n) => n as i64,
        // A pair type cut after its first component still counts that basic element.
        None if elements
            && t.basic == 2
            && t.size > 0
            && bytes % t.size as u64 == datatype::first_component(dt as usize, &t) as u64 =>
        {
            (bytes / t.size as u64) as i64 * 2 + 1
        }
        None => MPI_UNDEFINED as i64,
    })
}

pub(crate) unsafe fn MPI_Get_count(
    status: *const MPI_Status,
    datatype: MPI_Datatype,
    count: *mut c_int,
) -> MpiResult<()> {
    let n = get_count(status, datatype, false)?;
    *out(count, "count")? = if n > i32::MAX as i64 {
        MPI_UNDEFINED
    } else {
        n as c_int
    };
    Ok(())
}

pub(crate) unsafe fn MPI_Get_count_c(
    status: *const MPI_Status,
    datatype: MPI_Datatype,
    count: *mut MPI_Count,
) -> MpiResult<()> {
    let n = get_count(status, datatype, false)?;
    *out(count, "count")? = n;
    Ok(())
}

pub(crate) unsafe fn MPI_Get_elements(
    status: *const MPI_Status,
    datatype: MPI_Datatype,
    count: *mut c_int,
) -> MpiResult<()> {
    let n = get_count(status, datatype, true)?;
    *out(count, "count")? = if n > i32::MAX as i64 {
        MPI_UNDEFINED
    } else {
        n as c_int
    };
    Ok(())
}

pub(crate) unsafe fn MPI_Get_elements_c(
    status: *const MPI_Status,
    datatype: MPI_Datatype,
    count: *mut MPI_Count,
) -> MpiResult<()> {
    let n = get_count(status, datatype, true)?;
    *out(count, "count")? = n;
    Ok(())
}

pub(crate) unsafe fn MPI_Status_set_elements(
    status: *mut MPI_Status,
    datatype: MPI_Datatype,
    count: c_int,
) -> MpiResult<()> {
    MPI_Status_set_elements_c(status, datatype, count as MPI_Count)
}

pub(crate) unsafe fn MPI_Status_set_elements_c(
    status: *mut MPI_Status,
    datatype: MPI_Datatype,
    count: MPI_Count,
) -> MpiResult<()> {
    let st = out(status, "status")?;
    let n = super::super::util::count(count)? as u64;
    let d = runtime::with(|rt| rt.dtype(datatype as usize))?;
    let bytes = match d.basic_type().and_then(datatype::predefined) {
        // Copies of one basic type: any number of them.
        Some(b) if d.elements == d.size as u64 / b.size.max(1) as u64 => n * b.size as u64,
        _ if d.elements == 0 => 0,
        _ if n.is_multiple_of(d.elements) => n / d.elements * d.size as u64,
        _ => {
            return fail(
                MPI_ERR_ARG,
                format!(
                "{n} basic elements are not a whole number of elements of this datatype ({} each)",
                d.elements
            ),
            )
        }
    };
    request::set_bytes(st, bytes);
    Ok(())
}

/// Deprecated MPI-3 form of [`MPI_Status_set_elements_c`].
pub(crate) unsafe fn MPI_Status_set_elements_x(
    status: *mut MPI_Status,
    datatype: MPI_Datatype,
    count: MPI_Count,
) -> MpiResult<()> {
    MPI_Status_set_elements_c(status, datatype, count)
}

pub(crate) unsafe fn MPI_Status_set_source(
    status: *mut MPI_Status,
    source: c_int,
) -> MpiResult<()> {
    out(status, "status")?.MPI_SOURCE = source;
    Ok(())
}

pub(crate) unsafe fn MPI_Status_set_tag(status: *mut MPI_Status, tag: c_int) -> MpiResult<()> {
    out(status, "status")?.MPI_TAG = tag;
    Ok(())
}

pub(crate) unsafe fn MPI_Status_set_error(status: *mut MPI_Status, err: c_int) -> MpiResult<()> {
    out(status, "status")?.MPI_ERROR = err;
    Ok(())
}

pub(crate) unsafe fn MPI_Status_set_cancelled(
    status: *mut MPI_Status,
    flag: c_int,
) -> MpiResult<()> {
    out(status, "status")?.MPI_internal[2] = (flag != 0) as i32;
    Ok(())
}

// status accessors (MPI-4.1) and status queries over arrays

pub(super) unsafe fn status_ref<'a>(status: *const MPI_Status) -> MpiResult<&'a MPI_Status> {
    // SAFETY: a non-null status pointer points to a status.
    match unsafe { status.as_ref() } {
        Some(s) => Ok(s),
        None => fail(MPI_ERR_ARG, "status must not be NULL"),
    }
}

pub(crate) unsafe fn MPI_Status_get_source(
    status: *const MPI_Status,
    source: *mut c_int,
) -> MpiResult<()> {
    *out(source, "source")? = status_ref(status)?.MPI_SOURCE;
    Ok(())
}

pub(crate) unsafe fn MPI_Status_get_tag(
    status: *const MPI_Status,
    tag: *mut c_int,
) -> MpiResult<()> {
    *out(tag, "tag")? = status_ref(status)?.MPI_TAG;
    Ok(())
}

pub(crate) unsafe fn MPI_Status_get_error(
    status: *const MPI_Status,
    err: *mut c_int,
) -> MpiResult<()> {
    *out(err, "error")? = status_ref(status)?.MPI_ERROR;
    Ok(())
}

/// Status of a complete request seen without completing it; for a generalized request its
/// callbacks instead, whose `query_fn` gives the status ([`peeked`], outside the lock).
pub(super) type Peek = (Status, Option<request::Grequest>);

/// Status of request `h` without completing it: `None` while it is pending.
pub(super) fn peek_status(rt: &Runtime, h: MPI_Request) -> MpiResult<Option<Peek>> {
    if h as usize == MPI_REQUEST_NULL {
        return Ok(Some((Status::EMPTY, None)));
    }
    let rid = request_index(rt, h)?;
    let r = rt.reqs.get(rid).unwrap();
    Ok(if !r.active() {
        Some((Status::EMPTY, None))
    } else {
        r.done().then(|| (r.status, r.grequest()))
    })
}

/// The status of a [`Peek`] and the return code of the callback that made it: a generalized
/// request's `query_fn` runs (outside the runtime lock; its code is also the status's error)
/// and the request stays as it is; other requests give their status and `MPI_SUCCESS`.
pub(super) fn peeked((st, g): Peek) -> (Status, c_int) {
    match g {
        Some(g) => {
            let st = grequest::query(&g);
            (st, st.error)
        }
        None => (st, MPI_SUCCESS),
    }
}

pub(crate) unsafe fn MPI_Request_get_status_any(
    count: c_int,
    array_of_requests: *const MPI_Request,
    index: *mut c_int,
    flag: *mut c_int,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    let reqs = req_slice(count, array_of_requests as *mut MPI_Request)?;
    let index = out(index, "index")?;
    let flag = out(flag, "flag")?;
    let found = runtime::with(|rt| {
        rt.progress()?;
        let mut any_active = false;
        for (i, &h) in reqs.iter().enumerate() {
            if h as usize == MPI_REQUEST_NULL
                || !rt
                    .reqs
                    .decode(h as usize)
                    .and_then(|r| rt.reqs.get(r))
                    .is_some_and(|r| r.active())
            {
                continue;
            }
            any_active = true;
            if let Some(peek) = peek_status(rt, h)? {
                return Ok(Some(Some((i, peek))));
            }
        }
        Ok(if any_active { None } else { Some(None) })
    })?;
    match found {
        None => {
            *flag = 0;
            *index = MPI_UNDEFINED;
        }
        Some(None) => {
            *flag = 1;
            *index = MPI_UNDEFINED;
            // The empty status, with MPI_ERROR set as for any other outcome of the call.
            // SAFETY: MPI_STATUS_IGNORE is NULL; any other pointer is the caller's status.
            if let Some(out) = unsafe { status.as_mut() } {
                Status::EMPTY.write(out, true);
            }
        }
        Some(Some((i, peek))) => {
            let (st, rc) = peeked(peek);
            *flag = 1;
            *index = i as c_int;
            // SAFETY: MPI_STATUS_IGNORE is NULL; any other pointer is the caller's status.
            if let Some(s) = unsafe { status.as_mut() } {
                // The error field too, as MPICH does: the operation's own error (MPI_SUCCESS
                // for a successful one), never left as the caller's stale value.
                st.write(s, true);
            }
            if rc != MPI_SUCCESS {
                return Err(grequest::callback_error("query", rc));
            }
        }
    }
    Ok(())
}

pub(crate) unsafe fn MPI_Request_get_status_all(
    count: c_int,
    array_of_requests: *const MPI_Request,
    flag: *mut c_int,
    array_of_statuses: *mut MPI_Status,
) -> MpiResult<()> {
    let reqs = req_slice(count, array_of_requests as *mut MPI_Request)?;
    let flag = out(flag, "flag")?;
    let all = runtime::with(|rt| {
        rt.progress()?;
        reqs.iter()
            .map(|&h| peek_status(rt, h))
            .collect::<MpiResult<Option<Vec<Peek>>>>()
    })?;
    match all {
        None => {
            *flag = 0;
            crate::platform::wait::poll_found_nothing();
        }
        Some(peeks) => {
            *flag = 1;
            let mut failed = MPI_SUCCESS;
            for (i, peek) in peeks.into_iter().enumerate() {
                let (st, rc) = peeked(peek);
                if failed == MPI_SUCCESS {
                    failed = rc;
                }
                if let Some(s) = status_at(array_of_statuses, i) {
                    st.write(s, true);
                }
            }
            if failed != MPI_SUCCESS {
                return Err(grequest::callback_error("query", failed));
            }
        }
    }
    Ok(())
}

pub(crate) unsafe fn MPI_Request_get_status_some(
    incount: c_int,
    array_of_requests: *const MPI_Request,
    outcount: *mut c_int,
    array_of_indices: *mut c_int,
    array_of_statuses: *mut MPI_Status,
) -> MpiResult<()> {
    let reqs = req_slice(incount, array_of_requests as *mut MPI_Request)?;
    let outcount = out(outcount, "outcount")?;
    let (any_active, got) = runtime::with(|rt| {
        rt.progress()?;
        let mut any_active = false;
        let mut got = Vec::new();
        for (i, &h) in reqs.iter().enumerate() {
            if h as usize == MPI_REQUEST_NULL
                || !rt
                    .reqs
                    .decode(h as usize)
                    .and_then(|r| rt.reqs.get(r))
                    .is_some_and(|r| r.active())
            {
                continue;
            }
            any_active = true;
            if let Some(peek) = peek_status(rt, h)? {
                got.push((i, peek));
            }
        }
        Ok((any_active, got))
    })?;
    if !any_active {
        *outcount = MPI_UNDEFINED;
        return Ok(());
    }
    *outcount = got.len() as c_int;
    let mut failed = MPI_SUCCESS;
    for (k, (i, peek)) in got.into_iter().enumerate() {
        let (st, rc) = peeked(peek);
        if failed == MPI_SUCCESS {
            failed = rc;
        }
        if !array_of_indices.is_null() {
            // SAFETY: the index array holds `incount` entries and k < incount.
            unsafe { *array_of_indices.add(k) = i as c_int };
        }
        if let Some(s) = status_at(array_of_statuses, k) {
            st.write(s, true);
        }
    }
    if failed != MPI_SUCCESS {
        return Err(grequest::callback_error("query", failed));
    }
    Ok(())
}
