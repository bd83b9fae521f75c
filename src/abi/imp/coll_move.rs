//! Data-movement collectives: Gather, Scatter, Allgather, Alltoall and their v/w forms, each
//! blocking, nonblocking (`MPI_I*`) and big-count (`_c`). Each C function reads its
//! arguments into spans over the user buffers and builds the schedule of the algorithm
//! `coll::algos` picks; blocking and nonblocking forms share the builder.

use super::coll::coll_inter::{self, Side};
use super::coll::{predefined_bytes, user_span};
use super::util::count;
use crate::abi::consts::*;
use crate::abi::types::*;
use crate::coll::algos::blocks::{self, packed, Blocks};
use crate::coll::algos::{allgather, alltoall, gather, hier, multi_object, scatter};
use crate::coll::cma;
use crate::coll::sched::{check_root, Schedule, Span};
use crate::coll::shm::{self, CAP};
use crate::coll::tuning::{self, Coll, Query};
use crate::coll::Ctx;
use crate::core::datatype::Layout;
use crate::core::error::{fail, MpiResult};
use crate::core::runtime::Runtime;
use core::ffi::{c_int, c_void};

/// Whether `buf` is `MPI_IN_PLACE`.
pub(crate) fn in_place(buf: *const c_void) -> bool {
    buf as usize == MPI_IN_PLACE
}

/// Rejects `MPI_IN_PLACE` where the standard does not allow it.
pub(crate) fn no_in_place(buf: *const c_void, what: &str, function: &str) -> MpiResult<()> {
    if in_place(buf) {
        return fail(
            MPI_ERR_BUFFER,
            format!("{function} does not accept MPI_IN_PLACE as {what} here"),
        );
    }
    Ok(())
}

/// The extent of datatype `dt` in bytes.
fn extent(rt: &Runtime, dt: MPI_Datatype) -> MpiResult<isize> {
    if let Some(t) = crate::core::datatype::predefined(dt as usize) {
        return Ok(t.extent as isize);
    }
    Ok(rt.type_entry(dt as usize)?.dt.extent)
}

/// `count` elements of `dt` starting `displ` bytes after `buf`. The displacement is applied
/// before the buffer is checked, so `MPI_BOTTOM` with absolute displacements (addresses from
/// `MPI_Get_address`) is a valid buffer.
pub(crate) fn span_at_bytes(
    rt: &Runtime,
    buf: *const c_void,
    displ: i64,
    count: i64,
    dt: MPI_Datatype,
) -> MpiResult<Span> {
    user_span(rt, buf.wrapping_byte_offset(displ as isize), count, dt)
}

/// `count` elements of `dt` starting `displ` elements (extents of `dt`) after `buf`.
pub(crate) fn span_at(
    rt: &Runtime,
    buf: *const c_void,
    displ: i64,
    count: i64,
    dt: MPI_Datatype,
) -> MpiResult<Span> {
    let e = extent(rt, dt)? as i64;
    span_at_bytes(rt, buf, displ.wrapping_mul(e), count, dt)
}

/// `p` blocks of `count` elements of `dt` one after another at `buf`. The type is resolved
/// for all `p` blocks, so that a type whose single block is one contiguous run but whose
/// consecutive blocks are not (a resized vector) gets its layout program for runs of blocks.
pub(crate) fn user_blocks(
    rt: &Runtime,
    buf: *const c_void,
    count: i64,
    dt: MPI_Datatype,
    p: usize,
) -> MpiResult<Blocks> {
    if let Some(unit) = crate::core::datatype::predefined(dt as usize) {
        // The whole buffer must be valid; then so is the first block.
        if predefined_bytes(buf, count, p, unit).is_some() {
            let first = Span {
                addr: buf as usize,
                bytes: count as usize * unit.extent,
                unit,
                layout: None,
            };
            return Ok(Blocks::user(first, (unit.extent * count as usize) as isize));
        }
    }
    let first = user_span(rt, buf, count, dt)?;
    let stride = (extent(rt, dt)? as i64).wrapping_mul(count) as isize;
    let all = user_span(rt, buf, count.saturating_mul(p as i64), dt)?;
    let first = match all.layout {
        Some(l) if first.layout.is_none() => Span {
            addr: all.addr,
            bytes: first.bytes,
            unit: all.unit,
            layout: Some(Layout {
                dt: l.dt,
                count: count as usize,
            }),
        },
        _ => first,
    };
    Ok(Blocks::user(first, stride))
}

/// A C array argument of per-rank values.
#[derive(Clone, Copy)]
pub(crate) enum Arr {
    /// `const int[]`.
    Int(*const c_int),
    /// `const MPI_Count[]`.
    Count(*const MPI_Count),
    /// `const MPI_Aint[]`.
    Aint(*const MPI_Aint),
}

impl Arr {
    /// Reads `n` values; `MPI_ERR_ARG` when the array is NULL.
    pub(crate) unsafe fn read(self, n: usize, what: &str) -> MpiResult<Vec<i64>> {
        let null = match self {
            Arr::Int(p) => p.is_null(),
            Arr::Count(p) => p.is_null(),
            Arr::Aint(p) => p.is_null(),
        };
        if null {
            return fail(MPI_ERR_ARG, format!("{what} must not be NULL"));
        }
        // SAFETY: the caller passes arrays of one entry per rank of the communicator (MPI's
        // contract for these arguments); NULL was rejected above.
        Ok(unsafe {
            match self {
                Arr::Int(p) => std::slice::from_raw_parts(p, n)
                    .iter()
                    .map(|&v| v as i64)
                    .collect(),
                Arr::Count(p) => std::slice::from_raw_parts(p, n).to_vec(),
                Arr::Aint(p) => std::slice::from_raw_parts(p, n)
                    .iter()
                    .map(|&v| v as i64)
                    .collect(),
            }
        })
    }

    /// Reads `n` counts, checking each is non-negative.
    pub(crate) unsafe fn counts(self, n: usize, what: &str) -> MpiResult<Vec<i64>> {
        // SAFETY: forwarded caller contract (see `read`).
        let v = unsafe { self.read(n, what)? };
        for &c in &v {
            count(c)?;
        }
        Ok(v)
    }
}

/// Reads `n` datatype handles.
pub(crate) unsafe fn types(
    p: *const MPI_Datatype,
    n: usize,
    what: &str,
) -> MpiResult<Vec<MPI_Datatype>> {
    if p.is_null() {
        return fail(MPI_ERR_ARG, format!("{what} must not be NULL"));
    }
    // SAFETY: an array of one datatype per rank (MPI's contract); NULL rejected above.
    Ok(unsafe { std::slice::from_raw_parts(p, n) }.to_vec())
}

// ---------------------------------------------------------------------------------------
// Gather / Scatter

pub(crate) fn gather(
    rt: &Runtime,
    c: &Ctx,
    s: &mut Schedule,
    function: &str,
    sendbuf: *const c_void,
    sendcount: i64,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: i64,
    recvtype: MPI_Datatype,
    root: c_int,
) -> MpiResult<()> {
    if let Some(i) = &c.inter {
        return coll_inter::gather(
            rt,
            i,
            s,
            function,
            (sendbuf, sendcount, sendtype),
            recvbuf,
            Ok(recvcount),
            recvtype,
            root,
        );
    }
    check_root(root, c.size)?;
    let is_root = c.rank == root;
    if in_place(sendbuf) && !is_root {
        return no_in_place(sendbuf, "sendbuf on a non-root rank", function);
    }
    let send = match in_place(sendbuf) {
        true => None,
        false => Some(user_span(rt, sendbuf, sendcount, sendtype)?),
    };
    let recv = match is_root {
        true => {
            no_in_place(recvbuf, "recvbuf", function)?;
            Some(user_blocks(
                rt,
                recvbuf,
                recvcount,
                recvtype,
                c.size as usize,
            )?)
        }
        false => None,
    };
    let b = match (&recv, &send) {
        (Some(r), _) => r.packed,
        (None, Some(s)) => packed(s),
        (None, None) => 0,
    };
    if b == 0 {
        return Ok(());
    }
    let q = Query::new(c.size, b, b.saturating_mul(c.size as usize));
    if shm::offer_cma(rt, c, s, Coll::Gather, &q, |pid| cma::Call::Gather {
        send: send.clone(),
        recv: recv.clone(),
        root: root as usize,
        block: b,
        root_pid: pid(root),
        throttle: cma::throttle(),
    }) {
        return Ok(());
    }
    if let Some((l, _)) = hier::offer(rt, c, Coll::Gather, &q) {
        hier::gather(c, s, &l, send.as_ref(), recv.as_ref(), b, root);
        return Ok(());
    }
    match gather::choose("HYMPI_GATHER_ALGORITHM", c.size, b, c.shape) {
        gather::Algo::Binomial => gather::binomial(c, s, send.as_ref(), recv.as_ref(), b, root),
        gather::Algo::Linear => {
            let spans: Vec<Span> = match &recv {
                Some(r) => (0..c.size as usize).map(|i| r.block(i)).collect(),
                None => Vec::new(),
            };
            gather::linear(c, s, send.as_ref(), &spans, root)
        }
    }
    Ok(())
}

pub(crate) fn gatherv(
    rt: &Runtime,
    c: &Ctx,
    s: &mut Schedule,
    function: &str,
    sendbuf: *const c_void,
    sendcount: i64,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: Arr,
    displs: Arr,
    recvtype: MPI_Datatype,
    root: c_int,
) -> MpiResult<()> {
    if let Some(i) = &c.inter {
        return coll_inter::gather(
            rt,
            i,
            s,
            function,
            (sendbuf, sendcount, sendtype),
            recvbuf,
            Err((recvcounts, displs)),
            recvtype,
            root,
        );
    }
    check_root(root, c.size)?;
    let is_root = c.rank == root;
    if in_place(sendbuf) && !is_root {
        return no_in_place(sendbuf, "sendbuf on a non-root rank", function);
    }
    let send = match in_place(sendbuf) {
        true => None,
        false => Some(user_span(rt, sendbuf, sendcount, sendtype)?),
    };
    let mut spans = Vec::new();
    if is_root {
        no_in_place(recvbuf, "recvbuf", function)?;
        let p = c.size as usize;
        // SAFETY: per-rank arrays at the root (MPI's contract).
        let (counts, displs) = unsafe {
            (
                recvcounts.counts(p, "recvcounts")?,
                displs.read(p, "displs")?,
            )
        };
        for r in 0..p {
            spans.push(span_at(rt, recvbuf, displs[r], counts[r], recvtype)?);
        }
    }
    gather::linear(c, s, send.as_ref(), &spans, root);
    Ok(())
}

pub(crate) fn scatter(
    rt: &Runtime,
    c: &Ctx,
    s: &mut Schedule,
    function: &str,
    sendbuf: *const c_void,
    sendcount: i64,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: i64,
    recvtype: MPI_Datatype,
    root: c_int,
) -> MpiResult<()> {
    if let Some(i) = &c.inter {
        return coll_inter::scatter(
            rt,
            i,
            s,
            function,
            sendbuf,
            Ok(sendcount),
            sendtype,
            (recvbuf, recvcount, recvtype),
            root,
        );
    }
    check_root(root, c.size)?;
    let is_root = c.rank == root;
    if in_place(recvbuf) && !is_root {
        return no_in_place(recvbuf, "recvbuf on a non-root rank", function);
    }
    let recv = match in_place(recvbuf) {
        true => None,
        false => Some(user_span(rt, recvbuf, recvcount, recvtype)?),
    };
    let send = match is_root {
        true => {
            no_in_place(sendbuf, "sendbuf", function)?;
            Some(user_blocks(
                rt,
                sendbuf,
                sendcount,
                sendtype,
                c.size as usize,
            )?)
        }
        false => None,
    };
    let b = match (&send, &recv) {
        (Some(x), _) => x.packed,
        (None, Some(r)) => packed(r),
        (None, None) => 0,
    };
    if b == 0 {
        return Ok(());
    }
    let q = Query::new(c.size, b, b.saturating_mul(c.size as usize));
    if shm::offer_cma(rt, c, s, Coll::Scatter, &q, |pid| cma::Call::Scatter {
        send: send.clone(),
        recv: recv.clone(),
        root: root as usize,
        block: b,
        root_pid: pid(root),
        throttle: cma::throttle(),
    }) {
        return Ok(());
    }
    if let Some((l, name)) = hier::offer(rt, c, Coll::Scatter, &q) {
        if name == tuning::MULTI_OBJECT_TREE {
            multi_object::scatter_tree(c, s, &l, send.as_ref(), recv.as_ref(), b, root);
        } else {
            hier::scatter(c, s, &l, send.as_ref(), recv.as_ref(), b, root);
        }
        return Ok(());
    }
    match gather::choose("HYMPI_SCATTER_ALGORITHM", c.size, b, c.shape) {
        gather::Algo::Binomial => scatter::binomial(c, s, send.as_ref(), recv.as_ref(), b, root),
        gather::Algo::Linear => {
            let spans: Vec<Span> = match &send {
                Some(x) => (0..c.size as usize).map(|i| x.block(i)).collect(),
                None => Vec::new(),
            };
            scatter::linear(c, s, &spans, recv.as_ref(), root)
        }
    }
    Ok(())
}

pub(crate) fn scatterv(
    rt: &Runtime,
    c: &Ctx,
    s: &mut Schedule,
    function: &str,
    sendbuf: *const c_void,
    sendcounts: Arr,
    displs: Arr,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: i64,
    recvtype: MPI_Datatype,
    root: c_int,
) -> MpiResult<()> {
    if let Some(i) = &c.inter {
        return coll_inter::scatter(
            rt,
            i,
            s,
            function,
            sendbuf,
            Err((sendcounts, displs)),
            sendtype,
            (recvbuf, recvcount, recvtype),
            root,
        );
    }
    check_root(root, c.size)?;
    let is_root = c.rank == root;
    if in_place(recvbuf) && !is_root {
        return no_in_place(recvbuf, "recvbuf on a non-root rank", function);
    }
    let recv = match in_place(recvbuf) {
        true => None,
        false => Some(user_span(rt, recvbuf, recvcount, recvtype)?),
    };
    let mut spans = Vec::new();
    if is_root {
        no_in_place(sendbuf, "sendbuf", function)?;
        let p = c.size as usize;
        // SAFETY: per-rank arrays at the root (MPI's contract).
        let (counts, displs) = unsafe {
            (
                sendcounts.counts(p, "sendcounts")?,
                displs.read(p, "displs")?,
            )
        };
        for r in 0..p {
            spans.push(span_at(rt, sendbuf, displs[r], counts[r], sendtype)?);
        }
    }
    scatter::linear(c, s, &spans, recv.as_ref(), root);
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Allgather

pub(crate) fn allgather(
    rt: &Runtime,
    c: &Ctx,
    s: &mut Schedule,
    function: &str,
    sendbuf: *const c_void,
    sendcount: i64,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: i64,
    recvtype: MPI_Datatype,
) -> MpiResult<()> {
    if let Some(i) = &c.inter {
        return coll_inter::allgather(
            rt,
            i,
            s,
            function,
            (sendbuf, sendcount, sendtype),
            recvbuf,
            Ok(recvcount),
            recvtype,
        );
    }
    no_in_place(recvbuf, "recvbuf", function)?;
    let recv = user_blocks(rt, recvbuf, recvcount, recvtype, c.size as usize)?;
    let own = match in_place(sendbuf) {
        true => None,
        false => Some(user_span(rt, sendbuf, sendcount, sendtype)?),
    };
    let b = recv.packed;
    let q = Query::new(c.size, b, b.saturating_mul(c.size as usize));
    if shm::offer(rt, c, s, Coll::Allgather, &q, b, || shm::Kind::Allgather {
        own: own.clone(),
        recv: recv.clone(),
    }) {
        return Ok(());
    }
    if b > CAP
        && shm::offer_cma(rt, c, s, Coll::Allgather, &q, |pid| cma::Call::Allgather {
            own: own.clone(),
            recv: recv.clone(),
            pids: (0..c.size).map(pid).collect(),
        })
    {
        return Ok(());
    }
    if let Some((l, name)) = hier::offer(rt, c, Coll::Allgather, &q) {
        match name {
            tuning::MULTI_OBJECT_RING => {
                multi_object::allgather_ring(c, s, &l, &recv, own.as_ref())
            }
            tuning::MULTI_OBJECT_BRUCK => {
                multi_object::allgather_bruck(c, s, &l, &recv, own.as_ref())
            }
            _ => hier::allgather(c, s, &l, &recv, own.as_ref()),
        }
        return Ok(());
    }
    let algo = allgather::choose(c.size, recv.packed, c.shape);
    allgather::run(c, s, algo, &recv, own.as_ref());
    Ok(())
}

pub(crate) fn allgatherv(
    rt: &Runtime,
    c: &Ctx,
    s: &mut Schedule,
    function: &str,
    sendbuf: *const c_void,
    sendcount: i64,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: Arr,
    displs: Arr,
    recvtype: MPI_Datatype,
) -> MpiResult<()> {
    if let Some(i) = &c.inter {
        return coll_inter::allgather(
            rt,
            i,
            s,
            function,
            (sendbuf, sendcount, sendtype),
            recvbuf,
            Err((recvcounts, displs)),
            recvtype,
        );
    }
    no_in_place(recvbuf, "recvbuf", function)?;
    let p = c.size as usize;
    // SAFETY: per-rank arrays (MPI's contract).
    let (counts, displs) = unsafe {
        (
            recvcounts.counts(p, "recvcounts")?,
            displs.read(p, "displs")?,
        )
    };
    let mut spans = Vec::with_capacity(p);
    for r in 0..p {
        spans.push(span_at(rt, recvbuf, displs[r], counts[r], recvtype)?);
    }
    let own = match in_place(sendbuf) {
        true => None,
        false => Some(user_span(rt, sendbuf, sendcount, sendtype)?),
    };
    allgather::ring(c, s, &spans, own.as_ref());
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Alltoall

/// Runs the chosen alltoall algorithm on per-rank spans (`equal`: blocks of one size, so
/// `sb`/`rb` are given and Bruck may apply).
fn alltoall_run(
    c: &Ctx,
    s: &mut Schedule,
    send: &[Span],
    recv: &[Span],
    bruck: Option<(&Blocks, &Blocks)>,
) {
    let total: usize = recv.iter().map(packed).sum();
    let avg = total / recv.len().max(1);
    match alltoall::choose(c.size, avg, bruck.is_some(), c.shape) {
        alltoall::Algo::Bruck => {
            let (sb, rb) = bruck.expect("equal blocks");
            alltoall::bruck(c, s, sb, rb)
        }
        alltoall::Algo::Scattered => alltoall::scattered(c, s, send, recv),
        alltoall::Algo::Pairwise => alltoall::pairwise(c, s, send, recv),
    }
}

/// For an in-place alltoall: copies of the receive spans in a temporary, used as the send
/// side (the data must be read before any of it is overwritten).
fn in_place_copies(s: &mut Schedule, recv: &[Span]) -> Vec<Span> {
    let out: Vec<Span> = recv
        .iter()
        .map(|r| {
            let n = packed(r);
            Span::bytes(s.tmp(n), n)
        })
        .collect();
    for (r, t) in recv.iter().zip(&out) {
        blocks::copy(s, r.clone(), t.clone());
    }
    s.next_round();
    out
}

pub(crate) fn alltoall(
    rt: &Runtime,
    c: &Ctx,
    s: &mut Schedule,
    function: &str,
    sendbuf: *const c_void,
    sendcount: i64,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: i64,
    recvtype: MPI_Datatype,
) -> MpiResult<()> {
    if let Some(i) = &c.inter {
        return coll_inter::alltoall(
            rt,
            i,
            s,
            function,
            sendbuf,
            Side::Equal(sendcount, sendtype),
            recvbuf,
            Side::Equal(recvcount, recvtype),
        );
    }
    no_in_place(recvbuf, "recvbuf", function)?;
    let p = c.size as usize;
    let rb = user_blocks(rt, recvbuf, recvcount, recvtype, c.size as usize)?;
    if rb.packed == 0 {
        return Ok(());
    }
    let user_sb = match in_place(sendbuf) {
        true => None,
        false => Some(user_blocks(rt, sendbuf, sendcount, sendtype, p)?),
    };
    let q = Query::new(c.size, rb.packed, rb.packed.saturating_mul(p));
    let bytes = rb.packed.saturating_mul(p);
    if shm::offer(rt, c, s, Coll::Alltoall, &q, bytes, || {
        shm::Kind::Alltoall {
            send: user_sb.clone().unwrap_or_else(|| rb.clone()),
            recv: rb.clone(),
        }
    }) {
        return Ok(());
    }
    if bytes > CAP
        && shm::offer_cma(rt, c, s, Coll::Alltoall, &q, |pid| cma::Call::Alltoall {
            send: user_sb.clone(),
            recv: rb.clone(),
            pids: (0..c.size).map(pid).collect(),
        })
    {
        return Ok(());
    }
    let recv: Vec<Span> = (0..p).map(|i| rb.block(i)).collect();
    let sb = match user_sb {
        Some(sb) => sb,
        None => {
            let t = Blocks::tmp(s, p, rb.packed);
            blocks::copy_run(s, &rb, 0, &t, 0, p);
            s.next_round();
            t
        }
    };
    let send: Vec<Span> = (0..p).map(|i| sb.block(i)).collect();
    alltoall_run(c, s, &send, &recv, Some((&sb, &rb)));
    Ok(())
}

pub(crate) fn alltoallv(
    rt: &Runtime,
    c: &Ctx,
    s: &mut Schedule,
    function: &str,
    sendbuf: *const c_void,
    sendcounts: Arr,
    sdispls: Arr,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: Arr,
    rdispls: Arr,
    recvtype: MPI_Datatype,
) -> MpiResult<()> {
    if let Some(i) = &c.inter {
        return coll_inter::alltoall(
            rt,
            i,
            s,
            function,
            sendbuf,
            Side::V(sendcounts, sdispls, sendtype),
            recvbuf,
            Side::V(recvcounts, rdispls, recvtype),
        );
    }
    no_in_place(recvbuf, "recvbuf", function)?;
    let p = c.size as usize;
    // SAFETY: per-rank arrays (MPI's contract).
    let (rc, rd) = unsafe {
        (
            recvcounts.counts(p, "recvcounts")?,
            rdispls.read(p, "rdispls")?,
        )
    };
    let mut recv = Vec::with_capacity(p);
    for r in 0..p {
        recv.push(span_at(rt, recvbuf, rd[r], rc[r], recvtype)?);
    }
    let send = if in_place(sendbuf) {
        in_place_copies(s, &recv)
    } else {
        // SAFETY: per-rank arrays (MPI's contract).
        let (sc, sd) = unsafe {
            (
                sendcounts.counts(p, "sendcounts")?,
                sdispls.read(p, "sdispls")?,
            )
        };
        let mut v = Vec::with_capacity(p);
        for r in 0..p {
            v.push(span_at(rt, sendbuf, sd[r], sc[r], sendtype)?);
        }
        v
    };
    alltoall_run(c, s, &send, &recv, None);
    Ok(())
}

pub(crate) fn alltoallw(
    rt: &Runtime,
    c: &Ctx,
    s: &mut Schedule,
    function: &str,
    sendbuf: *const c_void,
    sendcounts: Arr,
    sdispls: Arr,
    sendtypes: *const MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: Arr,
    rdispls: Arr,
    recvtypes: *const MPI_Datatype,
) -> MpiResult<()> {
    if let Some(i) = &c.inter {
        return coll_inter::alltoall(
            rt,
            i,
            s,
            function,
            sendbuf,
            Side::W(sendcounts, sdispls, sendtypes),
            recvbuf,
            Side::W(recvcounts, rdispls, recvtypes),
        );
    }
    no_in_place(recvbuf, "recvbuf", function)?;
    let p = c.size as usize;
    // SAFETY: per-rank arrays (MPI's contract).
    let (rc, rd, rt_) = unsafe {
        (
            recvcounts.counts(p, "recvcounts")?,
            rdispls.read(p, "rdispls")?,
            types(recvtypes, p, "recvtypes")?,
        )
    };
    let mut recv = Vec::with_capacity(p);
    for r in 0..p {
        recv.push(span_at_bytes(rt, recvbuf, rd[r], rc[r], rt_[r])?);
    }
    let send = if in_place(sendbuf) {
        in_place_copies(s, &recv)
    } else {
        // SAFETY: per-rank arrays (MPI's contract).
        let (sc, sd, st) = unsafe {
            (
                sendcounts.counts(p, "sendcounts")?,
                sdispls.read(p, "sdispls")?,
                types(sendtypes, p, "sendtypes")?,
            )
        };
        let mut v = Vec::with_capacity(p);
        for r in 0..p {
            v.push(span_at_bytes(rt, sendbuf, sd[r], sc[r], st[r])?);
        }
        v
    };
    alltoall_run(c, s, &send, &recv, None);
    Ok(())
}
