//! MPICH-compatible streams (`MPIX_Stream_*`): the C functions. The work is in
//! `core::threads::stream`; stream sends and receives run the ordinary point-to-point functions on
//! the communicator `core::threads::stream::route` picks.

use super::util::out;
use crate::abi::consts::*;
use crate::abi::types::*;
use crate::core::error::{fail, MpiResult};
use crate::core::p2p::request::SendMode;
use crate::core::threads::stream;
use core::ffi::{c_int, c_void};

pub(crate) unsafe fn MPIX_Stream_create(info: MPI_Info, s: *mut MPIX_Stream) -> MpiResult<()> {
    let slot = out(s, "stream")?;
    crate::core::objects::info::lookup_opt(info as usize)?;
    *slot = stream::create()? as MPIX_Stream;
    Ok(())
}

pub(crate) unsafe fn MPIX_Stream_free(s: *mut MPIX_Stream) -> MpiResult<()> {
    let slot = out(s, "stream")?;
    stream::free(*slot as usize)?;
    *slot = MPIX_STREAM_NULL as MPIX_Stream;
    Ok(())
}

pub(crate) unsafe fn MPIX_Stream_comm_create(
    comm: MPI_Comm,
    s: MPIX_Stream,
    newcomm: *mut MPI_Comm,
) -> MpiResult<()> {
    let slot = out(newcomm, "newcomm")?;
    *slot = stream::comm_create(comm as usize, s as usize)? as MPI_Comm;
    Ok(())
}

pub(crate) unsafe fn MPIX_Stream_comm_create_multiplex(
    comm: MPI_Comm,
    count: c_int,
    array_of_streams: *mut MPIX_Stream,
    newcomm: *mut MPI_Comm,
) -> MpiResult<()> {
    let slot = out(newcomm, "newcomm")?;
    if count < 0 {
        return fail(MPI_ERR_COUNT, format!("count {count} is negative"));
    }
    if count > 0 && array_of_streams.is_null() {
        return fail(MPI_ERR_ARG, "array_of_streams must not be NULL");
    }
    let streams: Vec<usize> = (0..count as usize)
        // SAFETY: the caller's array holds `count` stream handles (MPIX contract).
        .map(|i| unsafe { *array_of_streams.add(i) } as usize)
        .collect();
    *slot = stream::comm_create_multiplex(comm as usize, &streams)? as MPI_Comm;
    Ok(())
}

pub(crate) unsafe fn MPIX_Comm_get_stream(
    comm: MPI_Comm,
    idx: c_int,
    s: *mut MPIX_Stream,
) -> MpiResult<()> {
    let slot = out(s, "stream")?;
    *slot = stream::comm_get_stream(comm as usize, idx)? as MPIX_Stream;
    Ok(())
}

pub(crate) unsafe fn MPIX_Stream_send(
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    source_stream_index: c_int,
    dest_stream_index: c_int,
) -> MpiResult<()> {
    let c = stream::route(
        comm as usize,
        true,
        dest,
        source_stream_index,
        dest_stream_index,
    )?;
    // SAFETY: the caller's arguments, as for MPI_Send.
    unsafe { super::MPI_Send(buf, count, datatype, dest, tag, c as MPI_Comm) }
}

pub(crate) unsafe fn MPIX_Stream_isend(
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    source_stream_index: c_int,
    dest_stream_index: c_int,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    let c = stream::route(
        comm as usize,
        true,
        dest,
        source_stream_index,
        dest_stream_index,
    )?;
    // SAFETY: the caller's arguments, as for MPI_Isend.
    unsafe {
        super::p2p::isend_entry(
            buf,
            count as i64,
            datatype,
            dest,
            tag,
            c as MPI_Comm,
            SendMode::Standard,
            request,
        )
    }
}

pub(crate) unsafe fn MPIX_Stream_recv(
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    source_stream_index: c_int,
    dest_stream_index: c_int,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    let c = stream::route(
        comm as usize,
        false,
        source,
        source_stream_index,
        dest_stream_index,
    )?;
    // SAFETY: the caller's arguments, as for MPI_Recv.
    unsafe { super::MPI_Recv(buf, count, datatype, source, tag, c as MPI_Comm, status) }
}

pub(crate) unsafe fn MPIX_Stream_irecv(
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    source_stream_index: c_int,
    dest_stream_index: c_int,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    let c = stream::route(
        comm as usize,
        false,
        source,
        source_stream_index,
        dest_stream_index,
    )?;
    // SAFETY: the caller's arguments, as for MPI_Irecv.
    unsafe { super::p2p::irecv_entry(buf, count, datatype, source, tag, c as MPI_Comm, request) }
}
