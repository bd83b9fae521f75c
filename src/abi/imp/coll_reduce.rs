//! Reduction collectives: the C functions (`MPI_Reduce`, `MPI_Allreduce`,
//! `MPI_Reduce_scatter(_block)`, `MPI_Scan`, `MPI_Exscan`, their `MPI_I*` and `_c` forms).
//! Each checks its arguments, describes the reduction's elements (`algos::reduce::Elems`) and
//! builds the algorithm's schedule through `collective`, which runs it (blocking) or starts
//! it (nonblocking).
//!
//! Known limit: the reduction steps run inside the runtime, so a user op that calls MPI from
//! its function deadlocks (see `coll::algos::reduce`).

use super::coll::coll_inter;
use super::coll::{collective, user_span};
use super::util::count;
use crate::abi::consts::*;
use crate::abi::types::*;
use crate::coll::algos::reduce::Elems;
use crate::coll::algos::{allreduce, hier, multi_object, reduce, reduce_scatter};
use crate::coll::sched::{check_root, Schedule};
use crate::coll::shm::{self, Kind};
use crate::coll::tuning::{self, Coll, Query};
use crate::coll::Ctx;
use crate::core::datatype;
use crate::core::error::{fail, MpiResult};
use crate::core::op::Reducer;
use crate::core::runtime::Runtime;
use core::ffi::{c_int, c_void};

/// `MPI_IN_PLACE` as an address.
const IN_PLACE: usize = 1;

/// Describes `n` elements of `dt` reduced with `op`, addressed from buffer `buf` (any of the
/// call's buffers holding `n` elements: the others are addressed by base).
pub(crate) fn elems(
    rt: &Runtime,
    buf: usize,
    n: usize,
    dt: MPI_Datatype,
    op: MPI_Op,
) -> MpiResult<Elems> {
    let reducer = rt.reducer(op as usize, dt as usize)?;
    let span = user_span(rt, buf as *const c_void, n as i64, dt)?;
    let (lo, hi) = match datatype::predefined(dt as usize) {
        Some(t) => (0, (n * t.extent) as isize),
        None if n == 0 => (0, 0),
        None => {
            let d = rt.dtype(dt as usize)?;
            let reach = (n as isize - 1) * d.extent;
            (
                d.true_lb + reach.min(0),
                d.true_lb + d.true_extent + reach.max(0),
            )
        }
    };
    Ok(Elems::new(reducer, n, buf, &span, lo, hi))
}

/// MPI_ERR_BUFFER when the send and receive buffers are the same address (MPI_IN_PLACE is
/// the way to reduce in place), as MPICH reports it.
pub(crate) fn check_alias(send: *const c_void, recv: *const c_void, n: usize) -> MpiResult<()> {
    if n > 0 && std::ptr::eq(send, recv) && send as usize != IN_PLACE {
        return fail(
            MPI_ERR_BUFFER,
            "the send and receive buffers are the same (use MPI_IN_PLACE to reduce in place)",
        );
    }
    Ok(())
}

/// The send buffer's address, or the receive buffer's for MPI_IN_PLACE.
fn source(send: *const c_void, recv: *mut c_void) -> usize {
    if send as usize == IN_PLACE {
        recv as usize
    } else {
        send as usize
    }
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn reduce_build(
    rt: &Runtime,
    c: &Ctx,
    s: &mut Schedule,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    n: i64,
    dt: MPI_Datatype,
    op: MPI_Op,
    root: c_int,
) -> MpiResult<()> {
    if let Some(i) = &c.inter {
        return coll_inter::reduce(rt, c, i, s, sendbuf, recvbuf, n, dt, op, root);
    }
    check_root(root, c.size)?;
    let n = count(n)?;
    let is_root = c.rank == root;
    if is_root {
        check_alias(sendbuf, recvbuf, n)?;
    } else if sendbuf as usize == IN_PLACE && n > 0 {
        return fail(
            MPI_ERR_BUFFER,
            "MPI_IN_PLACE is valid only at the root of MPI_Reduce",
        );
    }
    let send = if is_root {
        source(sendbuf, recvbuf)
    } else {
        sendbuf as usize
    };
    let e = elems(rt, send, n, dt, op)?;
    if is_root {
        user_span(rt, recvbuf, n as i64, dt)?;
    }
    if n > 0 {
        if offer_reduce(rt, c, s, Coll::Reduce, &e, |red| Kind::Reduce {
            red,
            count: n,
            send,
            recv: recvbuf as usize,
            root,
            all: false,
        }) {
            return Ok(());
        }
        if let Some((l, _)) = offer_hier(rt, c, Coll::Reduce, &e) {
            hier::reduce(c, s, &l, &e, send, recvbuf as usize, root);
            return Ok(());
        }
        reduce::reduce(c, s, &e, send, recvbuf as usize, root);
    }
    Ok(())
}

/// Whether the elements of `e` are one gapless block starting at the buffer's base, which the
/// shared-memory path copies and combines as is (other layouts keep the schedules; the
/// datatype is the same on every rank, so all ranks decide alike).
fn dense(e: &Elems) -> bool {
    e.proto.is_contiguous() && e.proto.addr == 0 && e.proto.bytes == e.count * e.reducer.extent
}

/// Offers a reduction of `e` (dense layouts only, see [`dense`]) to the shared-memory path
/// with the query the schedule algorithms use.
fn offer_reduce(
    rt: &Runtime,
    c: &Ctx,
    s: &mut Schedule,
    coll: Coll,
    e: &Elems,
    kind: impl FnOnce(Reducer) -> Kind,
) -> bool {
    if !dense(e) {
        return false;
    }
    let bytes = e.count * e.reducer.extent;
    shm::offer(rt, c, s, coll, &e.query(c.size), bytes, || kind(e.reducer))
}

/// The communicator's node layout when a reduction of `e` takes the node-aware algorithm
/// ([`hier::offer`]); only for commutative ops, whose operands the two levels may combine
/// out of rank order.
fn offer_hier(
    rt: &Runtime,
    c: &Ctx,
    coll: Coll,
    e: &Elems,
) -> Option<(
    std::sync::Arc<crate::core::objects::nodes::NodeLayout>,
    &'static str,
)> {
    if !e.reducer.commutative {
        return None;
    }
    hier::offer(rt, c, coll, &e.query(c.size))
}

/// Checks and describes a vector reduced from `sendbuf` (or MPI_IN_PLACE) into `recvbuf`,
/// both holding `n` elements: `(elems, send base, recv base)`.
fn vector(
    rt: &Runtime,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    n: i64,
    dt: MPI_Datatype,
    op: MPI_Op,
) -> MpiResult<(Elems, usize, usize)> {
    let n = count(n)?;
    check_alias(sendbuf, recvbuf, n)?;
    let send = source(sendbuf, recvbuf);
    let e = elems(rt, send, n, dt, op)?;
    user_span(rt, recvbuf, n as i64, dt)?;
    Ok((e, send, recvbuf as usize))
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn allreduce_build(
    rt: &Runtime,
    c: &Ctx,
    s: &mut Schedule,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    n: i64,
    dt: MPI_Datatype,
    op: MPI_Op,
) -> MpiResult<()> {
    if let Some(i) = &c.inter {
        return coll_inter::allreduce(rt, c, i, s, sendbuf, recvbuf, n, dt, op);
    }
    let (e, send, recv) = vector(rt, sendbuf, recvbuf, n, dt, op)?;
    if e.count > 0 {
        let count = e.count;
        if offer_reduce(rt, c, s, Coll::Allreduce, &e, |red| Kind::Reduce {
            red,
            count,
            send,
            recv,
            root: 0,
            all: true,
        }) {
            return Ok(());
        }
        if let Some((l, name)) = offer_hier(rt, c, Coll::Allreduce, &e) {
            if name == tuning::MULTI_OBJECT_BRUCK {
                multi_object::allreduce_bruck(c, s, &l, &e, send, recv);
            } else {
                hier::allreduce(c, s, &l, &e, send, recv);
            }
            return Ok(());
        }
        allreduce::allreduce(c, s, &e, send, recv);
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn scan_build(
    rt: &Runtime,
    c: &Ctx,
    s: &mut Schedule,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    n: i64,
    dt: MPI_Datatype,
    op: MPI_Op,
    exclusive: bool,
) -> MpiResult<()> {
    let (e, send, recv) = vector(rt, sendbuf, recvbuf, n, dt, op)?;
    if e.count > 0 {
        reduce_scatter::scan(c, s, &e, send, recv, exclusive);
    }
    Ok(())
}

/// Reduce-scatter with per-rank counts `counts` (already read from the caller's array).
#[allow(clippy::too_many_arguments)]
pub(crate) fn reduce_scatter_build(
    rt: &Runtime,
    c: &Ctx,
    s: &mut Schedule,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    counts: &[i64],
    dt: MPI_Datatype,
    op: MPI_Op,
) -> MpiResult<()> {
    let mut cs = Vec::with_capacity(counts.len());
    for &k in counts {
        cs.push(count(k)?);
    }
    let total = cs
        .iter()
        .try_fold(0usize, |a, &k| a.checked_add(k))
        .filter(|&t| t <= isize::MAX as usize);
    let Some(total) = total else {
        return fail(MPI_ERR_COUNT, "the sum of the receive counts is too large");
    };
    if let Some(i) = &c.inter {
        return coll_inter::reduce_scatter(rt, c, i, s, sendbuf, recvbuf, &cs, total, dt, op);
    }
    check_alias(sendbuf, recvbuf, total)?;
    let send = source(sendbuf, recvbuf);
    let e = elems(rt, send, total, dt, op)?;
    user_span(rt, recvbuf, cs[c.rank as usize] as i64, dt)?;
    if total > 0 {
        let blk = cs[0];
        if cs.iter().all(|&k| k == blk) {
            let q = Query {
                comm_size: c.size,
                avg_msg_size: blk * e.reducer.extent,
                total_msg_size: total * e.reducer.extent,
                count: blk,
                commutative: e.reducer.commutative,
                ..Default::default()
            };
            let bytes = total * e.reducer.extent;
            if dense(&e)
                && shm::offer(rt, c, s, Coll::ReduceScatter, &q, bytes, || {
                    Kind::ReduceScatter {
                        red: e.reducer,
                        count: blk,
                        send,
                        recv: recvbuf as usize,
                    }
                })
            {
                return Ok(());
            }
        }
        reduce_scatter::reduce_scatter(c, s, &e, &cs, send, recvbuf as usize);
    }
    Ok(())
}

/// Reads the `recvcounts` array of `size` entries.
///
/// # Safety
/// `p` is NULL or points to `size` readable counts.
pub(crate) unsafe fn read_counts<T: Copy + Into<i64>>(
    p: *const T,
    size: i32,
) -> MpiResult<Vec<i64>> {
    if p.is_null() {
        return fail(MPI_ERR_ARG, "recvcounts must not be NULL");
    }
    // SAFETY: the caller's guarantee: `size` readable entries.
    let s = unsafe { std::slice::from_raw_parts(p, size as usize) };
    Ok(s.iter().map(|&x| x.into()).collect())
}

// ---------------------------------------------------------------------------------------------
// MPI_Reduce

pub(crate) unsafe fn MPI_Reduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    root: c_int,
    comm: MPI_Comm,
) -> MpiResult<()> {
    collective(comm, "MPI_Reduce", None, |rt, c, s| {
        reduce_build(rt, c, s, sendbuf, recvbuf, count as i64, datatype, op, root)
    })
}

pub(crate) unsafe fn MPI_Reduce_c(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    op: MPI_Op,
    root: c_int,
    comm: MPI_Comm,
) -> MpiResult<()> {
    collective(comm, "MPI_Reduce_c", None, |rt, c, s| {
        reduce_build(rt, c, s, sendbuf, recvbuf, count, datatype, op, root)
    })
}

#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn MPI_Ireduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    root: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    collective(comm, "MPI_Ireduce", Some(request), |rt, c, s| {
        reduce_build(rt, c, s, sendbuf, recvbuf, count as i64, datatype, op, root)
    })
}

#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn MPI_Ireduce_c(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    op: MPI_Op,
    root: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    collective(comm, "MPI_Ireduce_c", Some(request), |rt, c, s| {
        reduce_build(rt, c, s, sendbuf, recvbuf, count, datatype, op, root)
    })
}

// ---------------------------------------------------------------------------------------------
// MPI_Allreduce

pub(crate) unsafe fn MPI_Allreduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> MpiResult<()> {
    // SAFETY: the buffers hold `count` elements of `datatype` (the caller's MPI contract).
    if let Some(done) = unsafe {
        crate::coll::shm::allreduce_now(
            comm as usize,
            sendbuf as usize,
            recvbuf as usize,
            count as i64,
            datatype as usize,
            op as usize,
        )
    } {
        return done;
    }
    collective(comm, "MPI_Allreduce", None, |rt, c, s| {
        allreduce_build(rt, c, s, sendbuf, recvbuf, count as i64, datatype, op)
    })
}

pub(crate) unsafe fn MPI_Allreduce_c(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> MpiResult<()> {
    collective(comm, "MPI_Allreduce_c", None, |rt, c, s| {
        allreduce_build(rt, c, s, sendbuf, recvbuf, count, datatype, op)
    })
}

pub(crate) unsafe fn MPI_Iallreduce(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    collective(comm, "MPI_Iallreduce", Some(request), |rt, c, s| {
        allreduce_build(rt, c, s, sendbuf, recvbuf, count as i64, datatype, op)
    })
}

pub(crate) unsafe fn MPI_Iallreduce_c(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    collective(comm, "MPI_Iallreduce_c", Some(request), |rt, c, s| {
        allreduce_build(rt, c, s, sendbuf, recvbuf, count, datatype, op)
    })
}

// ---------------------------------------------------------------------------------------------
// MPI_Scan / MPI_Exscan

pub(crate) unsafe fn MPI_Scan(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> MpiResult<()> {
    collective(comm, "MPI_Scan", None, |rt, c, s| {
        scan_build(
            rt,
            c,
            s,
            sendbuf,
            recvbuf,
            count as i64,
            datatype,
            op,
            false,
        )
    })
}

pub(crate) unsafe fn MPI_Scan_c(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> MpiResult<()> {
    collective(comm, "MPI_Scan_c", None, |rt, c, s| {
        scan_build(rt, c, s, sendbuf, recvbuf, count, datatype, op, false)
    })
}

pub(crate) unsafe fn MPI_Iscan(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    collective(comm, "MPI_Iscan", Some(request), |rt, c, s| {
        scan_build(
            rt,
            c,
            s,
            sendbuf,
            recvbuf,
            count as i64,
            datatype,
            op,
            false,
        )
    })
}

pub(crate) unsafe fn MPI_Iscan_c(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    collective(comm, "MPI_Iscan_c", Some(request), |rt, c, s| {
        scan_build(rt, c, s, sendbuf, recvbuf, count, datatype, op, false)
    })
}

pub(crate) unsafe fn MPI_Exscan(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> MpiResult<()> {
    collective(comm, "MPI_Exscan", None, |rt, c, s| {
        scan_build(rt, c, s, sendbuf, recvbuf, count as i64, datatype, op, true)
    })
}

pub(crate) unsafe fn MPI_Exscan_c(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> MpiResult<()> {
    collective(comm, "MPI_Exscan_c", None, |rt, c, s| {
        scan_build(rt, c, s, sendbuf, recvbuf, count, datatype, op, true)
    })
}

pub(crate) unsafe fn MPI_Iexscan(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    collective(comm, "MPI_Iexscan", Some(request), |rt, c, s| {
        scan_build(rt, c, s, sendbuf, recvbuf, count as i64, datatype, op, true)
    })
}

pub(crate) unsafe fn MPI_Iexscan_c(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    collective(comm, "MPI_Iexscan_c", Some(request), |rt, c, s| {
        scan_build(rt, c, s, sendbuf, recvbuf, count, datatype, op, true)
    })
}

// ---------------------------------------------------------------------------------------------
// MPI_Reduce_scatter_block / MPI_Reduce_scatter

pub(crate) unsafe fn MPI_Reduce_scatter_block(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcount: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> MpiResult<()> {
    // SAFETY: the buffers hold the call's data (the caller's MPI contract).
    if let Some(done) = unsafe {
        crate::coll::shm::reduce_scatter_block_now(
            comm as usize,
            sendbuf as usize,
            recvbuf as usize,
            recvcount as i64,
            datatype as usize,
            op as usize,
        )
    } {
        return done;
    }
    collective(comm, "MPI_Reduce_scatter_block", None, |rt, c, s| {
        let counts = vec![recvcount as i64; c.size as usize];
        reduce_scatter_build(rt, c, s, sendbuf, recvbuf, &counts, datatype, op)
    })
}

pub(crate) unsafe fn MPI_Reduce_scatter_block_c(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> MpiResult<()> {
    collective(comm, "MPI_Reduce_scatter_block_c", None, |rt, c, s| {
        let counts = vec![recvcount; c.size as usize];
        reduce_scatter_build(rt, c, s, sendbuf, recvbuf, &counts, datatype, op)
    })
}

pub(crate) unsafe fn MPI_Ireduce_scatter_block(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcount: c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    collective(
        comm,
        "MPI_Ireduce_scatter_block",
        Some(request),
        |rt, c, s| {
            let counts = vec![recvcount as i64; c.size as usize];
            reduce_scatter_build(rt, c, s, sendbuf, recvbuf, &counts, datatype, op)
        },
    )
}

pub(crate) unsafe fn MPI_Ireduce_scatter_block_c(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    collective(
        comm,
        "MPI_Ireduce_scatter_block_c",
        Some(request),
        |rt, c, s| {
            let counts = vec![recvcount; c.size as usize];
            reduce_scatter_build(rt, c, s, sendbuf, recvbuf, &counts, datatype, op)
        },
    )
}

pub(crate) unsafe fn MPI_Reduce_scatter(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> MpiResult<()> {
    collective(comm, "MPI_Reduce_scatter", None, |rt, c, s| {
        // SAFETY: C caller contract: `recvcounts` has one entry per rank.
        let counts = unsafe { read_counts(recvcounts, c.size) }?;
        reduce_scatter_build(rt, c, s, sendbuf, recvbuf, &counts, datatype, op)
    })
}

pub(crate) unsafe fn MPI_Reduce_scatter_c(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcounts: *const MPI_Count,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
) -> MpiResult<()> {
    collective(comm, "MPI_Reduce_scatter_c", None, |rt, c, s| {
        // SAFETY: C caller contract: `recvcounts` has one entry per rank.
        let counts = unsafe { read_counts(recvcounts, c.size) }?;
        reduce_scatter_build(rt, c, s, sendbuf, recvbuf, &counts, datatype, op)
    })
}

pub(crate) unsafe fn MPI_Ireduce_scatter(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    collective(comm, "MPI_Ireduce_scatter", Some(request), |rt, c, s| {
        // SAFETY: C caller contract: `recvcounts` has one entry per rank.
        let counts = unsafe { read_counts(recvcounts, c.size) }?;
        reduce_scatter_build(rt, c, s, sendbuf, recvbuf, &counts, datatype, op)
    })
}

pub(crate) unsafe fn MPI_Ireduce_scatter_c(
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    recvcounts: *const MPI_Count,
    datatype: MPI_Datatype,
    op: MPI_Op,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    collective(comm, "MPI_Ireduce_scatter_c", Some(request), |rt, c, s| {
        // SAFETY: C caller contract: `recvcounts` has one entry per rank.
        let counts = unsafe { read_counts(recvcounts, c.size) }?;
        reduce_scatter_build(rt, c, s, sendbuf, recvbuf, &counts, datatype, op)
    })
}
