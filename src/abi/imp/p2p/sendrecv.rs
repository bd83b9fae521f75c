//! `MPI_Sendrecv`, `MPI_Sendrecv_replace` and their nonblocking forms.

use super::*;

// sendrecv

pub(super) unsafe fn sendrecv(
    sendbuf: *const c_void,
    sendcount: i64,
    sendtype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    recvbuf: *mut c_void,
    recvcount: i64,
    recvtype: MPI_Datatype,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    let (rr, sr) = runtime::with(|rt| {
        let ra = recv_args(rt, recvbuf, recvcount, recvtype, source, recvtag, comm)?;
        let sa = send_args(
            rt,
            sendbuf,
            sendcount,
            sendtype,
            dest,
            sendtag,
            comm,
            SendMode::Standard,
        )?;
        let rr = rt.new_request(ReqKind::Recv, ra.comm)?;
        rt.start_recv(rr, ra)?;
        let sr = rt.new_request(ReqKind::Send, sa.comm)?;
        // This call waits for its send: it says so before the request to send leaves (see
        // `send_blocking`).
        start_send_waiting(rt, sr, sa, true)?;
        Ok((rr, sr))
    })?;
    wait_free_published(sr)?;
    wait_free_into(rr, status).map(|_| ())
}

pub(crate) unsafe fn MPI_Sendrecv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    // SAFETY: the pointer arguments come from the C caller and are valid as the MPI
    // standard requires (see the module documentation); the callee checks NULLs.
    unsafe {
        sendrecv(
            sendbuf,
            sendcount as i64,
            sendtype,
            dest,
            sendtag,
            recvbuf,
            recvcount as i64,
            recvtype,
            source,
            recvtag,
            comm,
            status,
        )
    }
}

pub(crate) unsafe fn MPI_Sendrecv_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    recvtype: MPI_Datatype,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    // SAFETY: the pointer arguments come from the C caller and are valid as the MPI
    // standard requires (see the module documentation); the callee checks NULLs.
    unsafe {
        sendrecv(
            sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
            recvtag, comm, status,
        )
    }
}

pub(super) unsafe fn sendrecv_replace(
    buf: *mut c_void,
    n: i64,
    dt: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    // The send goes from a private copy (packed for derived types, sent as bytes).
    let (copy, sn, st) = runtime::with(|rt| {
        let b = buffer_bytes(rt, buf, n, dt)?;
        let derived = b.layout.is_some() || datatype::predefined(dt as usize).is_none();
        let mut a = SendArgs {
            comm: 0,
            dest: 0,
            tag: 0,
            buf: b.ptr,
            bytes: b.bytes,
            mode: SendMode::Standard,
            unit: b.unit,
            layout: b.layout,
        };
        let copy = a.take_copy();
        Ok(if derived {
            let len = copy.len() as i64;
            (copy, len, MPI_BYTE as MPI_Datatype)
        } else {
            (copy, n, dt)
        })
    })?;
    // SAFETY: `copy` is a private copy of the outgoing data that lives until the call returns;
    // the receive side is the caller's buffer, valid as the C contract requires.
    unsafe {
        sendrecv(
            copy.as_ptr().cast(),
            sn,
            st,
            dest,
            sendtag,
            buf,
            n,
            dt,
            source,
            recvtag,
            comm,
            status,
        )
    }
}

pub(crate) unsafe fn MPI_Sendrecv_replace(
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    // SAFETY: the pointer arguments come from the C caller and are valid as the MPI
    // standard requires (see the module documentation); the callee checks NULLs.
    unsafe {
        sendrecv_replace(
            buf,
            count as i64,
            datatype,
            dest,
            sendtag,
            source,
            recvtag,
            comm,
            status,
        )
    }
}

pub(crate) unsafe fn MPI_Sendrecv_replace_c(
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    // SAFETY: the pointer arguments come from the C caller and are valid as the MPI
    // standard requires (see the module documentation); the callee checks NULLs.
    unsafe {
        sendrecv_replace(
            buf, count, datatype, dest, sendtag, source, recvtag, comm, status,
        )
    }
}

// nonblocking sendrecv

#[inline(always)]
pub(super) unsafe fn isendrecv(
    sendbuf: *const c_void,
    sendcount: i64,
    sendtype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    recvbuf: *mut c_void,
    recvcount: i64,
    recvtype: MPI_Datatype,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    replace: bool,
) -> MpiResult<u32> {
    runtime::with(|rt| {
        let ra = recv_args(rt, recvbuf, recvcount, recvtype, source, recvtag, comm)?;
        let mut sa = send_args(
            rt,
            sendbuf,
            sendcount,
            sendtype,
            dest,
            sendtag,
            comm,
            SendMode::Standard,
        )?;
        let parent = rt.new_request(ReqKind::Recv, ra.comm)?;
        if replace {
            // The send goes from a private copy, so the receive may overwrite the buffer.
            let copy = sa.take_copy();
            let p = rt.reqs.get_mut(parent).unwrap();
            let e = p.extra();
            e.scratch = copy;
            sa.buf = e.scratch.as_ptr();
            sa.bytes = e.scratch.len();
        }
        rt.start_sendrecv(parent, sa, ra)?;
        Ok(parent)
    })
}

pub(crate) unsafe fn MPI_Isendrecv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    // SAFETY: the pointer arguments come from the C caller and are valid as the MPI
    // standard requires (see the module documentation); the callee checks NULLs.
    let r = unsafe {
        isendrecv(
            sendbuf,
            sendcount as i64,
            sendtype,
            dest,
            sendtag,
            recvbuf,
            recvcount as i64,
            recvtype,
            source,
            recvtag,
            comm,
            false,
        )
    };
    set_request_index(request, r)
}

pub(crate) unsafe fn MPI_Isendrecv_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    recvtype: MPI_Datatype,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    // SAFETY: the pointer arguments come from the C caller and are valid as the MPI
    // standard requires (see the module documentation); the callee checks NULLs.
    let r = unsafe {
        isendrecv(
            sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
            recvtag, comm, false,
        )
    };
    set_request_index(request, r)
}

pub(crate) unsafe fn MPI_Isendrecv_replace(
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    // SAFETY: the pointer arguments come from the C caller and are valid as the MPI
    // standard requires (see the module documentation); the callee checks NULLs.
    let r = unsafe {
        isendrecv(
            buf,
            count as i64,
            datatype,
            dest,
            sendtag,
            buf,
            count as i64,
            datatype,
            source,
            recvtag,
            comm,
            true,
        )
    };
    set_request_index(request, r)
}

pub(crate) unsafe fn MPI_Isendrecv_replace_c(
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    // SAFETY: the pointer arguments come from the C caller and are valid as the MPI
    // standard requires (see the module documentation); the callee checks NULLs.
    let r = unsafe {
        isendrecv(
            buf, count, datatype, dest, sendtag, buf, count, datatype, source, recvtag, comm, true,
        )
    };
    set_request_index(request, r)
}
