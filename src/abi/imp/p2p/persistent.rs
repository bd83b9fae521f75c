//! Persistent requests: `MPI_Send_init` and its modes, `MPI_Recv_init`, `MPI_Start`, `MPI_Startall`, `MPI_Request_free`, `MPI_Cancel`.

use super::*;

// persistent requests

pub(super) unsafe fn persistent_init(
    op: MpiResult<(PersistentOp, ReqKind)>,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    let slot = out(request, "request")?;
    let (op, kind) = op?;
    let h = runtime::with(|rt| {
        let rid = rt.new_request(kind, op.comm)?;
        let r = rt.reqs.get_mut(rid).unwrap();
        r.set_persistent(true);
        r.extra().persistent = Some(op);
        r.set_active(false);
        r.set_done(true);
        Ok(rt.reqs.handle(rid))
    })?;
    *slot = h as MPI_Request;
    Ok(())
}

pub(super) fn send_init_op(
    buf: *const c_void,
    n: i64,
    dt: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    mode: SendMode,
) -> MpiResult<(PersistentOp, ReqKind)> {
    runtime::with(|rt| {
        let a = send_args(rt, buf, n, dt, dest, tag, comm, mode)?;
        Ok((
            PersistentOp {
                send: Some(mode),
                buf: a.buf as *mut u8,
                bytes: a.bytes,
                peer: dest,
                tag,
                comm: a.comm,
                unit: a.unit,
                layout: a.layout,
            },
            ReqKind::Send,
        ))
    })
}

macro_rules! send_init_fns {
    ($($name:ident, $name_c:ident => $mode:expr;)*) => {$(
        pub(crate) unsafe fn $name(buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> MpiResult<()> {
            persistent_init(send_init_op(buf, count as i64, datatype, dest, tag, comm, $mode), request)
        }
        pub(crate) unsafe fn $name_c(buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> MpiResult<()> {
            persistent_init(send_init_op(buf, count, datatype, dest, tag, comm, $mode), request)
        }
    )*};
}

send_init_fns! {
    MPI_Send_init, MPI_Send_init_c => SendMode::Standard;
    MPI_Ssend_init, MPI_Ssend_init_c => SendMode::Sync;
    MPI_Bsend_init, MPI_Bsend_init_c => SendMode::Buffered;
    MPI_Rsend_init, MPI_Rsend_init_c => SendMode::Ready;
}

pub(super) fn recv_init_op(
    buf: *mut c_void,
    n: i64,
    dt: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> MpiResult<(PersistentOp, ReqKind)> {
    runtime::with(|rt| {
        let a = recv_args(rt, buf, n, dt, source, tag, comm)?;
        Ok((
            PersistentOp {
                send: None,
                buf: a.buf,
                bytes: a.cap,
                peer: source,
                tag,
                comm: a.comm,
                unit: a.unit,
                layout: a.layout,
            },
            ReqKind::Recv,
        ))
    })
}

pub(crate) unsafe fn MPI_Recv_init(
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    // SAFETY: the pointer arguments come from the C caller and are valid as the MPI
    // standard requires (see the module documentation); the callee checks NULLs.
    unsafe {
        persistent_init(
            recv_init_op(buf, count as i64, datatype, source, tag, comm),
            request,
        )
    }
}

pub(crate) unsafe fn MPI_Recv_init_c(
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    // SAFETY: the pointer arguments come from the C caller and are valid as the MPI
    // standard requires (see the module documentation); the callee checks NULLs.
    unsafe {
        persistent_init(
            recv_init_op(buf, count, datatype, source, tag, comm),
            request,
        )
    }
}

pub(super) fn start_one(rt: &mut Runtime, h: MPI_Request) -> MpiResult<()> {
    let rid = request_index(rt, h)?;
    if crate::coll::sched::start_persistent(rt, rid)? {
        return Ok(());
    }
    if crate::core::p2p::part::start(rt, rid)? {
        return Ok(());
    }
    let r = rt.reqs.get_mut(rid).unwrap();
    let Some(op) = r.extra_ref().and_then(|e| e.persistent.clone()) else {
        return fail(MPI_ERR_REQUEST, "MPI_Start needs a persistent request");
    };
    if r.active() {
        return fail(MPI_ERR_REQUEST, "the persistent request is already active");
    }
    r.set_active(true);
    r.set_done(false);
    r.status = Status::EMPTY;
    match op.send {
        Some(mode) => rt.start_send(
            rid,
            SendArgs {
                comm: op.comm,
                dest: op.peer,
                tag: op.tag,
                buf: op.buf,
                bytes: op.bytes,
                mode,
                unit: op.unit,
                layout: op.layout,
            },
        ),
        None => rt.start_recv(
            rid,
            RecvArgs {
                comm: op.comm,
                src: op.peer,
                tag: op.tag,
                buf: op.buf,
                cap: op.bytes,
                unit: op.unit,
                layout: op.layout,
            },
        ),
    }
}

pub(crate) unsafe fn MPI_Start(request: *mut MPI_Request) -> MpiResult<()> {
    let h = *out(request, "request")?;
    runtime::with(|rt| start_one(rt, h))
}

pub(crate) unsafe fn MPI_Startall(
    count: c_int,
    array_of_requests: *mut MPI_Request,
) -> MpiResult<()> {
    let reqs = req_slice(count, array_of_requests)?;
    runtime::with(|rt| reqs.iter().try_for_each(|&h| start_one(rt, h)))
}
