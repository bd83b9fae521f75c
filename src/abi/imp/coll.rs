//! Collective operations: the C functions. Each builds the schedule of the chosen algorithm
//! (`coll::algos`) and runs it to completion (blocking form) or hands it to the progress
//! engine (nonblocking `MPI_I*` form); both forms come from the same builder.

use super::p2p::buffer_bytes;
use super::util::out;
use crate::abi::types::*;
use crate::coll::sched::{self, check_root, Schedule, Span};
use crate::coll::tuning::{Coll, Query};
use crate::coll::{algos, begin, shm, Ctx};
use crate::core::error::MpiResult;
use crate::core::runtime::{self, Runtime};
use core::ffi::{c_int, c_void};

#[path = "coll_inter.rs"]
pub(crate) mod coll_inter;

/// A user buffer of `count` elements of `dt` as a schedule span.
pub(crate) fn user_span(
    rt: &Runtime,
    buf: *const c_void,
    count: i64,
    dt: MPI_Datatype,
) -> MpiResult<Span> {
    // Predefined types without a table walk (the small collectives' common case); anything
    // doubtful (negative count, overflow, NULL buffer) goes the general way for its error.
    if let Some(unit) = crate::core::datatype::predefined(dt as usize) {
        if let Some(bytes) = predefined_bytes(buf, count, 1, unit) {
            return Ok(Span {
                addr: buf as usize,
                bytes,
                unit,
                layout: None,
            });
        }
    }
    let b = buffer_bytes(rt, buf, count, dt)?;
    Ok(Span {
        addr: b.ptr as usize,
        bytes: b.bytes,
        unit: b.unit,
        layout: b.layout,
    })
}

/// Bytes of `blocks` blocks of `count` elements of predefined type `unit` at `buf`, when
/// that is a valid buffer (count not negative, no overflow, not NULL unless empty).
#[inline]
pub(crate) fn predefined_bytes(
    buf: *const c_void,
    count: i64,
    blocks: usize,
    unit: crate::core::datatype::TypeInfo,
) -> Option<usize> {
    usize::try_from(count)
        .ok()
        .and_then(|n| n.checked_mul(blocks))
        .and_then(|n| unit.span(n))
        .filter(|&b| b <= isize::MAX as usize && (b == 0 || !buf.is_null()))
}

/// Builds a schedule under the runtime with `build`, then runs it (blocking) or starts it and
/// stores the request handle in `request` (nonblocking). A blocking call's builder may hand
/// it to the shared-memory path instead (`coll::shm::offer`); when the communicator turns out
/// to have no slot there, `build` runs again to make the schedule.
pub(crate) unsafe fn collective(
    comm: MPI_Comm,
    function: &str,
    request: Option<*mut MPI_Request>,
    build: impl Fn(&Runtime, &Ctx, &mut Schedule) -> MpiResult<()>,
) -> MpiResult<()> {
    if let Some(r) = request {
        out(r, "request")?;
    }
    // Built in place on this frame (never moved: a shared-memory plan makes it large).
    let mut s = Schedule::new(0, 0);
    let started = runtime::with(|rt| {
        let (ctx, tag) = begin(rt, comm as usize, function, request.is_none())?;
        s.retarget(ctx.comm, tag);
        build(rt, &ctx, &mut s)?;
        match request {
            Some(_) => Ok(Err(sched::start(rt, std::mem::take(&mut s))?)),
            None => Ok(Ok(ctx)),
        }
    })?;
    match started {
        Ok(ctx) => {
            let Some(plan) = s.shm.as_ref() else {
                return s.run();
            };
            if crate::coll::shm::execute(plan)? {
                return Ok(());
            }
            runtime::with(|rt| {
                let mut s = ctx.schedule(s.tag);
                build(rt, &ctx, &mut s)?;
                Ok(s)
            })?
            .run()
        }
        Err(h) => {
            *request.unwrap() = h as MPI_Request;
            Ok(())
        }
    }
}

/// Builds a persistent collective (`MPI_*_init`): the schedule is made once, under the call's
/// sequence number, and run by every `MPI_Start`.
pub(crate) unsafe fn collective_init(
    comm: MPI_Comm,
    function: &str,
    info: MPI_Info,
    request: *mut MPI_Request,
    build: impl FnOnce(&Runtime, &Ctx, &mut Schedule) -> MpiResult<()>,
) -> MpiResult<()> {
    let slot = out(request, "request")?;
    crate::core::objects::info::lookup_opt(info as usize)?;
    let h = runtime::with(|rt| {
        let (ctx, tag) = begin(rt, comm as usize, function, false)?;
        let mut s = ctx.schedule(tag);
        build(rt, &ctx, &mut s)?;
        sched::persistent(rt, s)
    })?;
    *slot = h as MPI_Request;
    Ok(())
}

fn barrier(rt: &Runtime, c: &Ctx, s: &mut Schedule) -> MpiResult<()> {
    if let Some(i) = &c.inter {
        return coll_inter::barrier(c, i, s);
    }
    let q = Query::new(c.size, 0, 0);
    if shm::offer(rt, c, s, Coll::Barrier, &q, 0, || shm::Kind::Barrier) {
        return Ok(());
    }
    if let Some((l, _)) = algos::hier::offer(rt, c, Coll::Barrier, &q) {
        algos::hier::barrier(c, s, &l);
        return Ok(());
    }
    algos::barrier::dissemination(c, s);
    Ok(())
}

pub(crate) unsafe fn MPI_Barrier(comm: MPI_Comm) -> MpiResult<()> {
    collective(comm, "MPI_Barrier", None, barrier)
}

pub(crate) unsafe fn MPI_Ibarrier(comm: MPI_Comm, request: *mut MPI_Request) -> MpiResult<()> {
    collective(comm, "MPI_Ibarrier", Some(request), barrier)
}

pub(crate) unsafe fn MPI_Barrier_init(
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    collective_init(comm, "MPI_Barrier_init", info, request, barrier)
}

pub(crate) unsafe fn MPI_Bcast_init(
    buffer: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    collective_init(comm, "MPI_Bcast_init", info, request, |rt, c, s| {
        bcast(rt, c, s, buffer, count as i64, datatype, root)
    })
}

pub(crate) unsafe fn MPI_Bcast_init_c(
    buffer: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    collective_init(comm, "MPI_Bcast_init_c", info, request, |rt, c, s| {
        bcast(rt, c, s, buffer, count, datatype, root)
    })
}

fn bcast(
    rt: &Runtime,
    c: &Ctx,
    s: &mut Schedule,
    buffer: *mut c_void,
    count: i64,
    datatype: MPI_Datatype,
    root: c_int,
) -> MpiResult<()> {
    if let Some(i) = &c.inter {
        return coll_inter::bcast(rt, c, i, s, buffer, count, datatype, root);
    }
    check_root(root, c.size)?;
    let data = user_span(rt, buffer, count, datatype)?;
    let bytes = data.packed();
    let q = Query::new(c.size, bytes, bytes);
    if shm::offer_bcast(rt, c, s, &q, &data, root) {
        return Ok(());
    }
    if let Some((l, _)) = algos::hier::offer(rt, c, Coll::Bcast, &q) {
        algos::hier::bcast(c, s, &l, &data, root);
        return Ok(());
    }
    algos::bcast::run(c, s, &data, root);
    Ok(())
}

pub(crate) unsafe fn MPI_Bcast(
    buffer: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> MpiResult<()> {
    collective(comm, "MPI_Bcast", None, |rt, c, s| {
        bcast(rt, c, s, buffer, count as i64, datatype, root)
    })
}

pub(crate) unsafe fn MPI_Bcast_c(
    buffer: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> MpiResult<()> {
    collective(comm, "MPI_Bcast_c", None, |rt, c, s| {
        bcast(rt, c, s, buffer, count, datatype, root)
    })
}

pub(crate) unsafe fn MPI_Ibcast(
    buffer: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    collective(comm, "MPI_Ibcast", Some(request), |rt, c, s| {
        bcast(rt, c, s, buffer, count as i64, datatype, root)
    })
}

pub(crate) unsafe fn MPI_Ibcast_c(
    buffer: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    collective(comm, "MPI_Ibcast_c", Some(request), |rt, c, s| {
        bcast(rt, c, s, buffer, count, datatype, root)
    })
}
