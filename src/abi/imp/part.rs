//! Partitioned point-to-point communication (MPI-4): the C functions. The semantics live in
//! `core::p2p::part`; `MPI_Start`, the completion calls and `MPI_Request_free` treat partitioned
//! requests as persistent ones (hooks in `p2p.rs`).

use super::p2p::buffer_bytes;
use super::util::out;
use crate::abi::consts::*;
use crate::abi::entry::ErrObj;
use crate::abi::types::*;
use crate::core::error::{fail, MpiError, MpiResult};
use crate::core::p2p::part::{self, PartArgs};
use crate::core::p2p::{check_dest, check_send_tag, check_source};
use crate::core::runtime::{self, Runtime};
use core::ffi::{c_int, c_void};

/// Validates the arguments of a partitioned init call.
#[allow(clippy::too_many_arguments)]
fn part_args(
    rt: &Runtime,
    send: bool,
    buf: *const c_void,
    partitions: c_int,
    count: i64,
    dt: MPI_Datatype,
    peer: c_int,
    tag: c_int,
    comm: MPI_Comm,
    info: MPI_Info,
) -> MpiResult<PartArgs> {
    let (idx, c) = rt.comm(comm as usize)?;
    if partitions < 0 {
        return fail(
            MPI_ERR_ARG,
            format!("invalid number of partitions {partitions} (must be non-negative)"),
        );
    }
    let count = super::util::count(count)?;
    let total = (partitions as usize).checked_mul(count).ok_or_else(|| {
        MpiError::new(MPI_ERR_COUNT, "partitions * count is too large".to_string())
    })?;
    let b = buffer_bytes(rt, buf, total as i64, dt)?;
    if send {
        check_dest(c, peer)?;
        check_send_tag(tag)?;
    } else {
        if peer == MPI_ANY_SOURCE {
            return fail(
                MPI_ERR_RANK,
                "MPI_ANY_SOURCE is not allowed in MPI_Precv_init",
            );
        }
        check_source(c, peer)?;
        if tag == MPI_ANY_TAG {
            return fail(MPI_ERR_TAG, "MPI_ANY_TAG is not allowed in MPI_Precv_init");
        }
        check_send_tag(tag)?;
    }
    crate::core::objects::info::lookup_opt(info as usize)?;
    let packed = match &b.layout {
        Some(l) => l.bytes(),
        None => total * b.unit.size,
    };
    Ok(PartArgs {
        send,
        comm: idx,
        peer,
        tag,
        buf: b.ptr as *mut u8,
        parts: partitions as usize,
        count,
        packed,
        unit: b.unit,
        layout: b.layout,
    })
}

#[allow(clippy::too_many_arguments)]
unsafe fn pinit(
    send: bool,
    buf: *const c_void,
    partitions: c_int,
    count: i64,
    dt: MPI_Datatype,
    peer: c_int,
    tag: c_int,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    let slot = out(request, "request")?;
    let h = runtime::with(|rt| {
        let a = part_args(rt, send, buf, partitions, count, dt, peer, tag, comm, info)?;
        let rid = part::init(rt, a)?;
        Ok(rt.reqs.handle(rid))
    })?;
    *slot = h as MPI_Request;
    Ok(())
}

pub(crate) unsafe fn MPI_Psend_init(
    buf: *const c_void,
    partitions: c_int,
    count: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    pinit(
        true,
        buf,
        partitions,
        count as i64,
        datatype,
        dest,
        tag,
        comm,
        info,
        request,
    )
}

pub(crate) unsafe fn MPI_Psend_init_c(
    buf: *const c_void,
    partitions: c_int,
    count: MPI_Count,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    pinit(
        true, buf, partitions, count, datatype, dest, tag, comm, info, request,
    )
}

pub(crate) unsafe fn MPI_Precv_init(
    buf: *mut c_void,
    partitions: c_int,
    count: c_int,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    pinit(
        false,
        buf,
        partitions,
        count as i64,
        datatype,
        source,
        tag,
        comm,
        info,
        request,
    )
}

pub(crate) unsafe fn MPI_Precv_init_c(
    buf: *mut c_void,
    partitions: c_int,
    count: MPI_Count,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    pinit(
        false, buf, partitions, count, datatype, source, tag, comm, info, request,
    )
}

/// Resolves a request handle; errors go to the handler of the request's communicator.
fn with_part<R>(
    request: MPI_Request,
    f: impl FnOnce(&mut Runtime, u32) -> MpiResult<R>,
) -> MpiResult<R> {
    runtime::with(|rt| {
        let Some(rid) = rt.reqs.decode(request as usize) else {
            return fail(
                MPI_ERR_REQUEST,
                format!("invalid request handle {:#x}", request as usize),
            );
        };
        let comm = rt.reqs.get(rid).unwrap().comm;
        f(rt, rid).map_err(|e| e.on(ErrObj::Comm(rt.comm_handle(comm))))
    })
}

pub(crate) unsafe fn MPI_Pready(partition: c_int, request: MPI_Request) -> MpiResult<()> {
    with_part(request, |rt, rid| {
        part::pready(rt, rid, &[partition as i64])
    })
}

pub(crate) unsafe fn MPI_Pready_range(
    partition_low: c_int,
    partition_high: c_int,
    request: MPI_Request,
) -> MpiResult<()> {
    with_part(request, |rt, rid| {
        if partition_low > partition_high {
            return fail(
                MPI_ERR_ARG,
                format!("empty partition range {partition_low}..={partition_high}"),
            );
        }
        let list: Vec<i64> = (partition_low as i64..=partition_high as i64).collect();
        part::pready(rt, rid, &list)
    })
}

pub(crate) unsafe fn MPI_Pready_list(
    length: c_int,
    array_of_partitions: *const c_int,
    request: MPI_Request,
) -> MpiResult<()> {
    let n = super::util::count(length as i64)?;
    let list: Vec<i64> = if n == 0 {
        Vec::new()
    } else if array_of_partitions.is_null() {
        return fail(MPI_ERR_ARG, "array_of_partitions must not be NULL");
    } else {
        // SAFETY: the caller passes `length` partition numbers.
        unsafe { std::slice::from_raw_parts(array_of_partitions, n) }
            .iter()
            .map(|&i| i as i64)
            .collect()
    };
    with_part(request, |rt, rid| part::pready(rt, rid, &list))
}

pub(crate) unsafe fn MPI_Parrived(
    request: MPI_Request,
    partition: c_int,
    flag: *mut c_int,
) -> MpiResult<()> {
    let flag = out(flag, "flag")?;
    if request as usize == MPI_REQUEST_NULL {
        *flag = 1;
        return Ok(());
    }
    let got = with_part(request, |rt, rid| {
        if part::parrived(rt, rid, partition as i64)? {
            return Ok(true);
        }
        rt.progress()?;
        part::parrived(rt, rid, partition as i64)
    })?;
    *flag = got as c_int;
    if !got {
        crate::platform::wait::poll_found_nothing();
    }
    Ok(())
}
