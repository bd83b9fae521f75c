//! Probe and matched probe: `MPI_Probe`, `MPI_Iprobe`, `MPI_Mprobe`, `MPI_Improbe`, `MPI_Mrecv`, `MPI_Imrecv`.

use super::*;

// probe and matched probe

pub(super) fn probe_pattern(
    rt: &Runtime,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> MpiResult<(u32, Pattern)> {
    let (idx, c) = rt.comm(comm as usize)?;
    check_source(c, source)?;
    check_recv_tag(tag)?;
    check_spread(c, source, tag)?;
    Ok((
        idx,
        Pattern {
            ctx: c.ctx,
            src: source,
            tag,
        },
    ))
}

pub(super) fn probe_status(
    env: &crate::core::p2p::matching::Envelope,
    payload: &Payload,
) -> Status {
    Status {
        source: env.src,
        tag: env.tag,
        error: MPI_SUCCESS,
        bytes: payload.len(),
        cancelled: false,
    }
}

/// One probe attempt: `Some(status)` when a message matches.
pub(super) fn probe_once(
    rt: &mut Runtime,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> MpiResult<Option<Status>> {
    let (_, p) = probe_pattern(rt, source, tag, comm)?;
    if source == MPI_PROC_NULL {
        return Ok(Some(Status::PROC_NULL));
    }
    Ok(rt
        .matchers
        .of_msg_ref(p.ctx, p.src, p.tag)
        .find_unexpected(&p)
        .map(|i| {
            let u = &rt.matchers.of_msg_ref(p.ctx, p.src, p.tag).unexpected[i];
            probe_status(&u.env, &u.payload)
        }))
}

pub(crate) unsafe fn MPI_Probe(
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    let st = runtime::wait_for(|rt| probe_once(rt, source, tag, comm))?;
    write_status(status, &st);
    Ok(())
}

pub(crate) unsafe fn MPI_Iprobe(
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    flag: *mut c_int,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    let flag = out(flag, "flag")?;
    let st = runtime::with(|rt| {
        if let Some(s) = probe_once(rt, source, tag, comm)? {
            return Ok(Some(s));
        }
        rt.progress()?;
        probe_once(rt, source, tag, comm)
    })?;
    match st {
        Some(s) => {
            *flag = 1;
            write_status(status, &s);
        }
        None => {
            *flag = 0;
            crate::platform::wait::poll_found_nothing();
        }
    }
    Ok(())
}

/// One matched-probe attempt: takes the message out of the queue into a message object.
pub(super) fn mprobe_once(
    rt: &mut Runtime,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> MpiResult<Option<(usize, Status)>> {
    let (idx, p) = probe_pattern(rt, source, tag, comm)?;
    if source == MPI_PROC_NULL {
        return Ok(Some((MPI_MESSAGE_NO_PROC, Status::PROC_NULL)));
    }
    let Some(u) = rt.matchers.of_msg(p.ctx, p.src, p.tag).take_unexpected(&p) else {
        return Ok(None);
    };
    let st = probe_status(&u.env, &u.payload);
    match rt.messages.insert((u, idx)) {
        Some(m) => Ok(Some((rt.messages.handle(m), st))),
        None => fail(MPI_ERR_INTERN, "too many matched messages"),
    }
}

pub(crate) unsafe fn MPI_Mprobe(
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    message: *mut MPI_Message,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    let slot = out(message, "message")?;
    let (m, st) = runtime::wait_for(|rt| mprobe_once(rt, source, tag, comm))?;
    *slot = m as MPI_Message;
    write_status(status, &st);
    Ok(())
}

pub(crate) unsafe fn MPI_Improbe(
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    flag: *mut c_int,
    message: *mut MPI_Message,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    let flag = out(flag, "flag")?;
    let slot = out(message, "message")?;
    let got = runtime::with(|rt| {
        if let Some(x) = mprobe_once(rt, source, tag, comm)? {
            return Ok(Some(x));
        }
        rt.progress()?;
        mprobe_once(rt, source, tag, comm)
    })?;
    match got {
        Some((m, st)) => {
            *flag = 1;
            *slot = m as MPI_Message;
            write_status(status, &st);
        }
        None => {
            *flag = 0;
            crate::platform::wait::poll_found_nothing();
        }
    }
    Ok(())
}

/// Starts receiving a matched message into a new request.
pub(super) unsafe fn imrecv(
    buf: *mut c_void,
    n: i64,
    dt: MPI_Datatype,
    message: *mut MPI_Message,
) -> MpiResult<u32> {
    let slot = out(message, "message")?;
    let h = *slot as usize;
    let rid = runtime::with(|rt| {
        let b = buffer_bytes(rt, buf, n, dt)?;
        if h == MPI_MESSAGE_NO_PROC {
            let rid = rt.new_request(ReqKind::Recv, crate::core::objects::comm::SELF)?;
            let r = rt.reqs.get_mut(rid).unwrap();
            r.status = Status::PROC_NULL;
            rt.complete(rid);
            return Ok(rid);
        }
        let Some(m) = rt.messages.decode(h) else {
            return fail(MPI_ERR_REQUEST, format!("invalid message handle {h:#x}"));
        };
        let (u, comm) = rt.messages.remove(m).unwrap();
        let rid = rt.new_request(ReqKind::Recv, comm)?;
        rt.prepare_recv(rid, b.ptr as *mut u8, b.bytes, b.unit, b.layout);
        rt.consume(rid, u)?;
        Ok(rid)
    })?;
    *slot = MPI_MESSAGE_NULL as MPI_Message;
    Ok(rid)
}

pub(super) unsafe fn mrecv(
    buf: *mut c_void,
    n: i64,
    dt: MPI_Datatype,
    message: *mut MPI_Message,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    let rid = imrecv(buf, n, dt, message)?;
    wait_free_into(rid, status).map(|_| ())
}

pub(crate) unsafe fn MPI_Mrecv(
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    message: *mut MPI_Message,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    mrecv(buf, count as i64, datatype, message, status)
}

pub(crate) unsafe fn MPI_Mrecv_c(
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    message: *mut MPI_Message,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    mrecv(buf, count, datatype, message, status)
}

pub(crate) unsafe fn MPI_Imrecv(
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    message: *mut MPI_Message,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    set_request_index(request, imrecv(buf, count as i64, datatype, message))
}

pub(crate) unsafe fn MPI_Imrecv_c(
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    message: *mut MPI_Message,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    set_request_index(request, imrecv(buf, count, datatype, message))
}
