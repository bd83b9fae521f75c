//! Intercommunicator forms of the collectives: the schedule builders that the C functions'
//! builders (`coll`, `coll_move`, `coll_reduce`) hand over to when the communicator is an
//! intercommunicator ([`Ctx::inter`]), so the blocking, nonblocking, persistent and big-count
//! forms all get them. They read the arguments by the intercommunicator rules (MPI-4.1
//! §6.2.2: per-rank arrays and blocks describe the *remote* group; `root` is `MPI_ROOT`,
//! `MPI_PROC_NULL` or a remote rank; `MPI_IN_PLACE` is not allowed) and build the algorithms
//! of `coll::inter`.

use super::super::coll_move::{in_place, span_at, span_at_bytes, types, user_blocks, Arr};
use super::super::coll_reduce::{check_alias, elems};
use super::super::util::count;
use super::user_span;
use crate::abi::consts::*;
use crate::abi::types::*;
use crate::coll::algos::blocks::packed;
use crate::coll::inter::{self, role, Role};
use crate::coll::sched::{Schedule, Span};
use crate::coll::{Ctx, Inter};
use crate::core::error::{fail, MpiResult};
use crate::core::runtime::Runtime;
use core::ffi::{c_int, c_void};

/// `MPI_ERR_BUFFER` for `MPI_IN_PLACE` as `what` on an intercommunicator.
fn not_in_place(buf: *const c_void, what: &str, function: &str) -> MpiResult<()> {
    if in_place(buf) {
        return fail(
            MPI_ERR_BUFFER,
            format!("{function} does not accept MPI_IN_PLACE as {what} on an intercommunicator"),
        );
    }
    Ok(())
}

/// Per-remote-rank spans `displ[r]` elements (or bytes, `bytes_displ`) into `buf`.
fn spans(
    rt: &Runtime,
    buf: *const c_void,
    counts: &[i64],
    displs: &[i64],
    dts: &[MPI_Datatype],
    bytes_displ: bool,
) -> MpiResult<Vec<Span>> {
    let mut v = Vec::with_capacity(counts.len());
    for r in 0..counts.len() {
        let dt = dts[r.min(dts.len() - 1)];
        v.push(match bytes_displ {
            true => span_at_bytes(rt, buf, displs[r], counts[r], dt)?,
            false => span_at(rt, buf, displs[r], counts[r], dt)?,
        });
    }
    Ok(v)
}

/// `n` equal blocks of `count` elements of `dt` at `buf`, as spans.
fn block_spans(
    rt: &Runtime,
    buf: *const c_void,
    count: i64,
    dt: MPI_Datatype,
    n: i32,
) -> MpiResult<Vec<Span>> {
    let b = user_blocks(rt, buf, count, dt, n as usize)?;
    Ok((0..n as usize).map(|i| b.block(i)).collect())
}

/// Intercommunicator `MPI_Barrier`.
pub(crate) fn barrier(c: &Ctx, i: &Inter, s: &mut Schedule) -> MpiResult<()> {
    inter::barrier(c, i, s);
    Ok(())
}

/// Intercommunicator `MPI_Bcast`.
pub(crate) fn bcast(
    rt: &Runtime,
    c: &Ctx,
    i: &Inter,
    s: &mut Schedule,
    buffer: *mut c_void,
    count: i64,
    datatype: MPI_Datatype,
    root: c_int,
) -> MpiResult<()> {
    let role = role(root, i.remote_size)?;
    if role != Role::Idle {
        let data = user_span(rt, buffer, count, datatype)?;
        inter::bcast(c, i, s, &data, role);
    }
    Ok(())
}

/// Intercommunicator `MPI_Gather` (`recvcounts`/`displs` given: `MPI_Gatherv`).
pub(crate) fn gather(
    rt: &Runtime,
    i: &Inter,
    s: &mut Schedule,
    function: &str,
    send: (*const c_void, i64, MPI_Datatype),
    recvbuf: *mut c_void,
    recv: Result<i64, (Arr, Arr)>,
    recvtype: MPI_Datatype,
    root: c_int,
) -> MpiResult<()> {
    let p = i.remote_size;
    match role(root, p)? {
        Role::Idle => Ok(()),
        Role::Root => {
            not_in_place(recvbuf, "recvbuf", function)?;
            let spans = match recv {
                Ok(k) => block_spans(rt, recvbuf, k, recvtype, p)?,
                Err((rc, d)) => {
                    // SAFETY: per-remote-rank arrays at the root (MPI's contract).
                    let (rc, d) = unsafe {
                        (
                            rc.counts(p as usize, "recvcounts")?,
                            d.read(p as usize, "displs")?,
                        )
                    };
                    spans(rt, recvbuf, &rc, &d, &[recvtype], false)?
                }
            };
            inter::gather(s, None, &spans, Role::Root);
            Ok(())
        }
        r => {
            not_in_place(send.0, "sendbuf", function)?;
            let span = user_span(rt, send.0, send.1, send.2)?;
            inter::gather(s, Some(&span), &[], r);
            Ok(())
        }
    }
}

/// Intercommunicator `MPI_Scatter` (`sendcounts`/`displs` given: `MPI_Scatterv`).
pub(crate) fn scatter(
    rt: &Runtime,
    i: &Inter,
    s: &mut Schedule,
    function: &str,
    sendbuf: *const c_void,
    send: Result<i64, (Arr, Arr)>,
    sendtype: MPI_Datatype,
    recv: (*mut c_void, i64, MPI_Datatype),
    root: c_int,
) -> MpiResult<()> {
    let p = i.remote_size;
    match role(root, p)? {
        Role::Idle => Ok(()),
        Role::Root => {
            not_in_place(sendbuf, "sendbuf", function)?;
            let spans = match send {
                Ok(k) => block_spans(rt, sendbuf, k, sendtype, p)?,
                Err((sc, d)) => {
                    // SAFETY: per-remote-rank arrays at the root (MPI's contract).
                    let (sc, d) = unsafe {
                        (
                            sc.counts(p as usize, "sendcounts")?,
                            d.read(p as usize, "displs")?,
                        )
                    };
                    spans(rt, sendbuf, &sc, &d, &[sendtype], false)?
                }
            };
            inter::scatter(s, &spans, None, Role::Root);
            Ok(())
        }
        r => {
            not_in_place(recv.0, "recvbuf", function)?;
            let span = user_span(rt, recv.0, recv.1, recv.2)?;
            inter::scatter(s, &[], Some(&span), r);
            Ok(())
        }
    }
}

/// Intercommunicator `MPI_Allgather` (`recvcounts`/`displs` given: `MPI_Allgatherv`).
pub(crate) fn allgather(
    rt: &Runtime,
    i: &Inter,
    s: &mut Schedule,
    function: &str,
    send: (*const c_void, i64, MPI_Datatype),
    recvbuf: *mut c_void,
    recv: Result<i64, (Arr, Arr)>,
    recvtype: MPI_Datatype,
) -> MpiResult<()> {
    let p = i.remote_size;
    not_in_place(send.0, "sendbuf", function)?;
    not_in_place(recvbuf, "recvbuf", function)?;
    let own = user_span(rt, send.0, send.1, send.2)?;
    let rs = match recv {
        Ok(k) => block_spans(rt, recvbuf, k, recvtype, p)?,
        Err((rc, d)) => {
            // SAFETY: per-remote-rank arrays (MPI's contract).
            let (rc, d) = unsafe {
                (
                    rc.counts(p as usize, "recvcounts")?,
                    d.read(p as usize, "displs")?,
                )
            };
            spans(rt, recvbuf, &rc, &d, &[recvtype], false)?
        }
    };
    inter::exchange(s, &vec![own; p as usize], &rs);
    Ok(())
}

/// The arguments of one side (send or receive) of an intercommunicator all-to-all.
pub(crate) enum Side {
    /// `MPI_Alltoall`: equal blocks of `count` elements of one datatype.
    Equal(i64, MPI_Datatype),
    /// `MPI_Alltoallv`: counts and element displacements, one datatype.
    V(Arr, Arr, MPI_Datatype),
    /// `MPI_Alltoallw`: counts, byte displacements and a datatype per remote rank.
    W(Arr, Arr, *const MPI_Datatype),
}

/// Spans of one all-to-all side over the `p` remote ranks.
fn side(rt: &Runtime, buf: *const c_void, x: Side, p: i32, what: &str) -> MpiResult<Vec<Span>> {
    let n = p as usize;
    match x {
        Side::Equal(k, dt) => block_spans(rt, buf, k, dt, p),
        // SAFETY: per-remote-rank arrays (MPI's contract).
        Side::V(c, d, dt) => unsafe {
            let counts = c.counts(n, &format!("{what}counts"))?;
            let displs = d.read(n, &format!("{what}displs"))?;
            spans(rt, buf, &counts, &displs, &[dt], false)
        },
        // SAFETY: per-remote-rank arrays (MPI's contract).
        Side::W(c, d, t) => unsafe {
            let counts = c.counts(n, &format!("{what}counts"))?;
            let displs = d.read(n, &format!("{what}displs"))?;
            let dts = types(t, n, &format!("{what}types"))?;
            if n == 0 {
                return Ok(Vec::new());
            }
            spans(rt, buf, &counts, &displs, &dts, true)
        },
    }
}

/// Intercommunicator `MPI_Alltoall`, `MPI_Alltoallv`, `MPI_Alltoallw`.
pub(crate) fn alltoall(
    rt: &Runtime,
    i: &Inter,
    s: &mut Schedule,
    function: &str,
    sendbuf: *const c_void,
    send: Side,
    recvbuf: *mut c_void,
    recv: Side,
) -> MpiResult<()> {
    not_in_place(sendbuf, "sendbuf", function)?;
    not_in_place(recvbuf, "recvbuf", function)?;
    let ss = side(rt, sendbuf, send, i.remote_size, "send")?;
    let rs = side(rt, recvbuf, recv, i.remote_size, "recv")?;
    inter::exchange(s, &ss, &rs);
    Ok(())
}

/// Intercommunicator `MPI_Reduce`.
pub(crate) fn reduce(
    rt: &Runtime,
    c: &Ctx,
    i: &Inter,
    s: &mut Schedule,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    n: i64,
    dt: MPI_Datatype,
    op: MPI_Op,
    root: c_int,
) -> MpiResult<()> {
    let role = role(root, i.remote_size)?;
    let n = count(n)?;
    match role {
        Role::Idle => {}
        Role::Root => {
            not_in_place(recvbuf, "recvbuf", "MPI_Reduce")?;
            let e = elems(rt, recvbuf as usize, n, dt, op)?;
            if n > 0 {
                inter::reduce(c, i, s, &e, 0, recvbuf as usize, role);
            }
        }
        Role::Remote(_) => {
            not_in_place(sendbuf, "sendbuf", "MPI_Reduce")?;
            let e = elems(rt, sendbuf as usize, n, dt, op)?;
            if n > 0 {
                inter::reduce(c, i, s, &e, sendbuf as usize, 0, role);
            }
        }
    }
    Ok(())
}

/// Intercommunicator `MPI_Allreduce`.
pub(crate) fn allreduce(
    rt: &Runtime,
    c: &Ctx,
    i: &Inter,
    s: &mut Schedule,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    n: i64,
    dt: MPI_Datatype,
    op: MPI_Op,
) -> MpiResult<()> {
    not_in_place(sendbuf, "sendbuf", "MPI_Allreduce")?;
    let n = count(n)?;
    check_alias(sendbuf, recvbuf, n)?;
    let e = elems(rt, sendbuf as usize, n, dt, op)?;
    user_span(rt, recvbuf, n as i64, dt)?;
    if n > 0 {
        inter::allreduce(c, i, s, &e, sendbuf as usize, recvbuf as usize);
    }
    Ok(())
}

/// Intercommunicator `MPI_Reduce_scatter` / `MPI_Reduce_scatter_block` with the local group's
/// receive counts `counts`.
pub(crate) fn reduce_scatter(
    rt: &Runtime,
    c: &Ctx,
    i: &Inter,
    s: &mut Schedule,
    sendbuf: *const c_void,
    recvbuf: *mut c_void,
    counts: &[usize],
    total: usize,
    dt: MPI_Datatype,
    op: MPI_Op,
) -> MpiResult<()> {
    not_in_place(sendbuf, "sendbuf", "MPI_Reduce_scatter")?;
    check_alias(sendbuf, recvbuf, total)?;
    let e = elems(rt, sendbuf as usize, total, dt, op)?;
    let mine = user_span(rt, recvbuf, counts[c.rank as usize] as i64, dt)?;
    if let Some(elem) = packed(&e.proto).checked_div(total) {
        inter::reduce_scatter(c, i, s, &e, counts, elem, sendbuf as usize, &mine);
    }
    Ok(())
}
