//! On-node collectives through shared memory (algorithm name [`tuning::SHM`]).
//!
//! On an intracommunicator whose ranks are all on this node, blocking `MPI_Barrier`,
//! `MPI_Bcast`, `MPI_Reduce`, `MPI_Allreduce`, `MPI_Allgather`, `MPI_Alltoall` and
//! `MPI_Reduce_scatter(_block)` (equal blocks) can run over a slot of the node segment's
//! collective region (`transport::shm::collslot`, which describes the sequence protocol)
//! instead of message schedules: each rank writes its contribution into its own area of the
//! slot and publishes the call's sequence number; the ranks that need it read it there once
//! published (all-to-all flag reads; one cache-line transfer per flag on two ranks).
//! Reductions combine in rank order (`x0 op (x1 op (... op x(p-1)))`), so user and
//! non-commutative ops get the standard's order, and they run outside the runtime lock.
//!
//! A broadcast larger than a rank's area ([`CAP`]) skips the slot copy when CMA works: the
//! ranks publish their buffer addresses in their areas and copy straight between the
//! processes (`platform::cma`). On two ranks the root writes the second half into the
//! receiver while the receiver reads the first half, so both cores move data; on more ranks
//! every non-root reads the whole message from the root. Such a call takes two sequence
//! numbers: one to publish addresses, one to say "done with your buffer".
//!
//! A communicator gets its slot at its first call that selects `shm`: rank 0 claims one and
//! broadcasts its index (or "none": the communicator then keeps the schedules for good) with a
//! message broadcast under the call's tag. Members give the slot back in `MPI_Comm_free`.
//! Nonblocking and persistent forms keep the schedules. Waiting spins briefly, then goes
//! through `runtime::wait_for_unrung`, which drives progress (peers may need our point-to-point
//! traffic) and yields the CPU when the node is oversubscribed.

use crate::coll::algos::blocks::Blocks;
use crate::coll::cma as cma_coll;
use crate::coll::sched::{Schedule, Span};
use crate::coll::tuning::{self, Coll, Query};
use crate::coll::Ctx;
use crate::core::error::{fail, MpiResult};
use crate::core::objects::comm::{CollState, Comm, COLL_KINDS};
use crate::core::op::Reducer;
use crate::core::p2p::copy_bytes;
use crate::core::runtime::{self, Runtime};
use crate::mpi_abi::consts::MPI_ERR_OTHER;
use crate::platform::cma;
use crate::transport::shm::collslot::Slot;
/// Bytes of data one rank's area of a slot holds.
pub use crate::transport::shm::collslot::CAP;
use std::sync::atomic::Ordering::Relaxed;

const UNKNOWN: u32 = CollState::UNKNOWN;
const OFF: u32 = CollState::OFF;
const SLOT0: u32 = CollState::SLOT0;

// The communicator keeps a selection for each collective of the tables.
const _: () = assert!(COLL_KINDS == tuning::COLLS.len());

/// Whether the tables pick `shm` for `coll` and `q` on the communicator whose collective
/// state is `a`, from its last decision when it was for the same query
/// ([`CollState::choice`]). The tables are fixed once loaded and the communicator's size
/// never changes, so the same query always gets the same answer; a loop of calls skips the
/// table walk, even when it mixes collectives (a barrier before each broadcast, say).
fn selects(a: &CollState, coll: Coll, q: &Query) -> bool {
    let shm = selects_cached(a, coll, q);
    if shm && crate::core::diag::stats_on() {
        crate::core::diag::stats::coll_choice(coll.name(), tuning::SHM, 0);
    }
    shm
}

/// [`selects`] without the statistics.
fn selects_cached(a: &CollState, coll: Coll, q: &Query) -> bool {
    let Some(key) = choice_key(coll, q) else {
        return tuning::select_shm(coll, q);
    };
    let Some(cached) = a.choice.get(coll as usize) else {
        return tuning::select_shm(coll, q);
    };
    let last = cached.load(Relaxed);
    if last & CHOICE_VALID != 0 && last & CHOICE_KEY == key {
        return last & CHOICE_SHM != 0;
    }
    let shm = tuning::select_shm(coll, q);
    let flag = if shm { CHOICE_SHM } else { 0 };
    cached.store(CHOICE_VALID | flag | key, Relaxed);
    shm
}

/// [`CollState::choice`] holds a decision.
const CHOICE_VALID: u64 = 1 << 63;
/// [`CollState::choice`]: the decision was `shm`.
const CHOICE_SHM: u64 = 1 << 62;
/// [`CollState::choice`]: the bits of the query's key.
const CHOICE_KEY: u64 = (1 << 62) - 1;

/// The query as one number (the communicator's size is implied): the collective (5 bits),
/// whether the op commutes, the bytes per message and the element count (14 bits each, up
/// to 16 KiB) and the total bytes (27 bits); `None` when a field does not fit.
fn choice_key(coll: Coll, q: &Query) -> Option<u64> {
    let (c, avg, count, total) = (
        coll as u64,
        q.avg_msg_size as u64,
        q.count as u64,
        q.total_msg_size as u64,
    );
    (c < 1 << 5 && avg < 1 << 14 && count < 1 << 14 && total < 1 << 27)
        .then_some(c | (q.commutative as u64) << 5 | avg << 6 | count << 20 | total << 34)
}

/// The data a call moves, as the shared-memory path needs it.
#[derive(Debug)]
pub enum Kind {
    /// `MPI_Barrier`.
    Barrier,
    /// `MPI_Bcast` of `data` from `root`.
    Bcast {
        /// The buffer.
        data: Span,
        /// Root rank.
        root: i32,
    },
    /// `MPI_Bcast` of `data` (more than an area holds) from `root` with single-copy CMA
    /// transfers, the slot carrying only buffer addresses (see [`bcast_cma`]).
    BcastCma {
        /// The buffer.
        data: Span,
        /// Root rank.
        root: i32,
        /// The process this rank copies with: the root's for a non-root, on two ranks the
        /// other rank's for the root (unused by the root on more ranks).
        peer_pid: i32,
    },
    /// `MPI_Reduce` (`all`: `MPI_Allreduce`) of `count` contiguous elements from address
    /// `send` (the receive buffer for `MPI_IN_PLACE`) into `recv`.
    Reduce {
        /// The checked (op, datatype) pair.
        red: Reducer,
        /// Elements.
        count: usize,
        /// Contribution.
        send: usize,
        /// Result.
        recv: usize,
        /// Root rank (ignored when `all`).
        root: i32,
        /// Every rank gets the result.
        all: bool,
    },
    /// `MPI_Reduce_scatter_block`: `count` elements per rank, `size * count` sent.
    ReduceScatter {
        /// The checked (op, datatype) pair.
        red: Reducer,
        /// Elements per block.
        count: usize,
        /// Contribution (all blocks).
        send: usize,
        /// This rank's block of the result.
        recv: usize,
    },
    /// `MPI_Allgather`: `own` is this rank's block (`None`: `MPI_IN_PLACE`, block `rank`
    /// of `recv`).
    Allgather {
        /// Contribution.
        own: Option<Span>,
        /// Receive blocks.
        recv: Blocks,
    },
    /// `MPI_Alltoall` (equal blocks; for `MPI_IN_PLACE` `send` is `recv`).
    Alltoall {
        /// Send blocks.
        send: Blocks,
        /// Receive blocks.
        recv: Blocks,
    },
    /// A large Scatter, Gather, Alltoall or Allgather with single-copy transfers, the slot
    /// carrying only addresses (`coll::cma`).
    Cma(cma_coll::Call),
}

impl Kind {
    /// Sequence numbers of the slot one call uses: two for [`Kind::BcastCma`] (addresses,
    /// then "done"), one for the others.
    fn calls(&self) -> u64 {
        match self {
            Kind::BcastCma { .. } | Kind::Cma(_) => 2,
            _ => 1,
        }
    }
}

/// A call on the shared-memory path.
#[derive(Debug)]
pub struct Plan {
    kind: Kind,
    comm: u32,
    rank: i32,
    size: i32,
    tag: i32,
    /// The slot and this call's sequence number; `None`: the slot is not set up yet.
    at: Option<(Slot, u64)>,
}

/// Whether communicator `c` can have a slot: all its ranks are on this node (which has a
/// segment) and it has one rank per process.
fn eligible(rt: &Runtime, c: &Comm) -> bool {
    rt.shm.is_some()
        && c.remote.is_none()
        && c.endpoints.is_none()
        && c.threads.is_none()
        && c.size >= 2
        && (0..c.size).all(|r| {
            rt.local_of_world
                .get(c.map.world(r) as usize)
                .is_some_and(|&l| l != u32::MAX)
        })
}

/// Offers call `c` of collective `coll` to the shared-memory path: when it is blocking, each
/// rank's data fits an area (`bytes`, the same on every rank), the tables pick `shm` for `q`
/// and the communicator has (or may get) a slot, sets `s.shm` to the plan `kind` builds and
/// returns true; the builder then adds no steps. Every input is the same on all ranks, so
/// they all take the same path.
pub fn offer(
    rt: &Runtime,
    c: &Ctx,
    s: &mut Schedule,
    coll: Coll,
    q: &Query,
    bytes: usize,
    kind: impl FnOnce() -> Kind,
) -> bool {
    if !c.blocking || c.inter.is_some() || c.size < 2 || bytes > CAP {
        return false;
    }
    let Some(comm) = rt.comms.get(c.comm) else {
        return false;
    };
    let a = &comm.coll_shm;
    let state = a.state.load(Relaxed);
    if state == OFF || !selects(a, coll, q) {
        return false;
    }
    if state == UNKNOWN && !eligible(rt, comm) {
        a.state.store(OFF, Relaxed);
        return false;
    }
    let kind = kind();
    let at = (state != UNKNOWN).then(|| {
        let region = rt
            .shm
            .as_ref()
            .expect("a slot implies a segment")
            .coll_region();
        let seq = a.seq.load(Relaxed) + 1;
        a.seq.store(seq + kind.calls() - 1, Relaxed);
        (region.slot(state - SLOT0), seq)
    });
    s.shm = Some(Plan {
        kind,
        comm: c.comm,
        rank: c.rank,
        size: c.size,
        tag: s.tag,
        at,
    });
    true
}

/// Offers blocking `MPI_Bcast` call `c` of `data` from `root` to the shared-memory path (see
/// [`offer`]): through the slot's areas when the data fits one, else with single-copy
/// transfers ([`Kind::BcastCma`]) when the node uses CMA. The choice depends only on the
/// packed size and the node, the same on every rank.
pub fn offer_bcast(
    rt: &Runtime,
    c: &Ctx,
    s: &mut Schedule,
    q: &Query,
    data: &Span,
    root: i32,
) -> bool {
    let bytes = data.packed();
    if bytes <= CAP {
        return offer(rt, c, s, Coll::Bcast, q, bytes, || Kind::Bcast {
            data: data.clone(),
            root,
        });
    }
    let Some(engine) = rt.shm.as_ref().filter(|e| e.cma_enabled()) else {
        return false;
    };
    offer(rt, c, s, Coll::Bcast, q, 8, || {
        let pid_of = |r: i32| {
            let world = rt
                .comms
                .get(c.comm)
                .expect("live communicator")
                .map
                .world(r);
            engine.pid_of(rt.local_of_world[world as usize])
        };
        let peer = if c.rank != root {
            root
        } else {
            (root + 1) % c.size
        };
        Kind::BcastCma {
            data: data.clone(),
            root,
            peer_pid: pid_of(peer),
        }
    })
}

/// Offers blocking call `c` of collective `coll` (Scatter, Gather, Alltoall or Allgather
/// beyond an area) to the single-copy path (`coll::cma`): when the node uses CMA and
/// [`offer`]'s conditions hold, `call` builds the call given the process id of a rank.
pub fn offer_cma(
    rt: &Runtime,
    c: &Ctx,
    s: &mut Schedule,
    coll: Coll,
    q: &Query,
    call: impl FnOnce(&dyn Fn(i32) -> i32) -> cma_coll::Call,
) -> bool {
    let Some(engine) = rt.shm.as_ref().filter(|e| e.cma_enabled()) else {
        return false;
    };
    offer(rt, c, s, coll, q, 8, || {
        let map = &rt.comms.get(c.comm).expect("live communicator").map;
        let pid_of = |r: i32| engine.pid_of(rt.local_of_world[map.world(r) as usize]);
        Kind::Cma(call(&pid_of))
    })
}

/// A call the fast entries ([`allreduce_now`], [`allgather_now`]) claimed for the slot.
struct Claimed {
    slot: Slot,
    seq: u64,
    me: usize,
    p: usize,
}

/// Claims the next call of collective `coll` on communicator `idx` for its slot, as `offer`
/// would for a blocking call with query `q` once the communicator has a slot: the tables
/// pick `shm` (from the cached decision), and the communicator's collective sequence number
/// (the tag of its next schedule, see `coll::begin`) and the slot's call number advance. When
/// any of that does not hold it changes nothing and the call takes the general way, which
/// decides the same on every rank (all inputs are the same on all ranks).
fn claim(rt: &mut Runtime, idx: u32, coll: Coll, q: &Query) -> Option<Claimed> {
    let region = rt.shm.as_ref()?.coll_region();
    let c = rt.comms.get_mut(idx)?;
    if c.remote.is_some() || c.size < 2 {
        return None;
    }
    let i = c.coll_shm.slot()?;
    if !selects(&c.coll_shm, coll, q) {
        return None;
    }
    let seq = c.coll_shm.seq.load(Relaxed) + 1;
    c.coll_shm.seq.store(seq, Relaxed);
    c.coll_seq = c.coll_seq.wrapping_add(1);
    Some(Claimed {
        slot: region.slot(i),
        seq,
        me: c.rank as usize,
        p: c.size as usize,
    })
}

/// `MPI_Allreduce` of `count` elements of a predefined contiguous datatype on a
/// communicator whose calls already run on its slot: the checks, the decision and the
/// exchange without a schedule, a plan or a buffer description (what `collective` and
/// `allreduce_build` would do for it, in fewer steps). `None`, nothing done, when the call
/// is anything else (an error included): the general path then runs it and reports.
///
/// # Safety
/// `send` (unless `MPI_IN_PLACE`) and `recv` hold `count` elements of `dt` (MPI's contract).
pub unsafe fn allreduce_now(
    comm: usize,
    send: usize,
    recv: usize,
    count: i64,
    dt: usize,
    op: usize,
) -> Option<MpiResult<()>> {
    // SAFETY: forwarded from the caller.
    unsafe { reduction_now(Reduction::All, comm, send, recv, count, dt, op) }
}

/// `MPI_Reduce_scatter_block` of `count` elements per rank of a predefined contiguous
/// datatype on a communicator whose calls already run on its slot, like [`allreduce_now`].
/// `None`, nothing done, for anything else.
///
/// # Safety
/// `send` (unless `MPI_IN_PLACE`; then `recv`) holds the communicator's size times `count`
/// elements of `dt`, `recv` at least `count` (MPI's contract).
pub unsafe fn reduce_scatter_block_now(
    comm: usize,
    send: usize,
    recv: usize,
    count: i64,
    dt: usize,
    op: usize,
) -> Option<MpiResult<()>> {
    // SAFETY: forwarded from the caller.
    unsafe { reduction_now(Reduction::ScatterBlock, comm, send, recv, count, dt, op) }
}

/// The reductions with a fast entry.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Reduction {
    /// `MPI_Allreduce`: every rank contributes and receives `count` elements.
    All,
    /// `MPI_Reduce_scatter_block`: every rank contributes the communicator's size times
    /// `count` elements and receives block `rank` of the result.
    ScatterBlock,
}

/// The fast entry of reduction `kind` (see [`allreduce_now`]): screens the arguments without
/// reporting anything, claims the call under the runtime with the reducer of `op` on `dt`,
/// then contributes, waits and combines on the slot, as `run` does for `Kind::Reduce` with
/// `all` / `Kind::ReduceScatter`, without building one.
///
/// # Safety
/// The buffers hold what `kind`'s MPI function requires of them (the caller's contract).
unsafe fn reduction_now(
    kind: Reduction,
    comm: usize,
    send: usize,
    recv: usize,
    count: i64,
    dt: usize,
    op: usize,
) -> Option<MpiResult<()>> {
    use crate::mpi_abi::consts::MPI_IN_PLACE;
    let size = crate::core::datatype::contiguous_size(dt)?;
    if count <= 0 || recv == 0 || recv == MPI_IN_PLACE || send == 0 || send == recv {
        return None;
    }
    let n = count as usize;
    // Bytes of one block: the result (all) or each rank's share of it (scatter).
    let b = n.checked_mul(size).filter(|&b| b <= CAP)?;
    let send = if send == MPI_IN_PLACE { recv } else { send };
    let (cl, red) = runtime::with(|rt| {
        let Ok((idx, c)) = rt.comm(comm) else {
            return Ok(None);
        };
        let comm_size = c.size;
        let (total, coll) = match kind {
            Reduction::All => (b, Coll::Allreduce),
            Reduction::ScatterBlock => (b * comm_size as usize, Coll::ReduceScatter),
        };
        if total > CAP {
            return Ok(None);
        }
        let Ok(red) = rt.reducer(op, dt) else {
            return Ok(None);
        };
        if red.extent != size {
            return Ok(None);
        }
        let q = Query {
            comm_size,
            avg_msg_size: b,
            total_msg_size: total,
            count: n,
            commutative: red.commutative,
            ..Default::default()
        };
        Ok(claim(rt, idx, coll, &q).map(|cl| (cl, red)))
    })
    .ok()??;
    let (slot, s, me, p) = (cl.slot, cl.seq, cl.me, cl.p);
    // What each rank contributes, and where this rank's block lies in each contribution.
    let (contributed, at) = match kind {
        Reduction::All => (b, 0),
        Reduction::ScatterBlock => (p * b, me * b),
    };
    // SAFETY: (both blocks) the buffers hold the call's data (caller's contract); an area
    // holds `contributed` <= CAP bytes of its rank's call `s` from its `publish` until every
    // rank entered the next call; areas never overlap user buffers.
    let done = contribute(slot, p, me, s, |d| unsafe {
        copy_bytes(send as *const u8, d, contributed)
    })
    .and_then(|()| wait_all(slot, p, s));
    if done.is_ok() {
        // SAFETY: see above; `at + b <= contributed`.
        unsafe { combine(&red, n, p, |r| slot.data(r, s).add(at) as *const u8, recv) };
    }
    Some(done)
}

/// The screening the block fast entries ([`allgather_now`], [`alltoall_now`]) share: blocks
/// of predefined contiguous types, at least one element, the same bytes sent as received,
/// at most [`CAP`] bytes each, a receive buffer. The block's bytes and the send buffer
/// (`None` for `MPI_IN_PLACE`), or `None` when the call does not qualify.
fn equal_blocks(
    send: usize,
    scount: i64,
    stype: usize,
    recv: usize,
    rcount: i64,
    rtype: usize,
) -> Option<(usize, Option<usize>)> {
    use crate::mpi_abi::consts::MPI_IN_PLACE;
    let rsize = crate::core::datatype::contiguous_size(rtype)?;
    if rcount <= 0 || recv == 0 || recv == MPI_IN_PLACE {
        return None;
    }
    let b = (rcount as usize).checked_mul(rsize).filter(|&b| b <= CAP)?;
    if send == MPI_IN_PLACE {
        return Some((b, None));
    }
    let ssize = crate::core::datatype::contiguous_size(stype)?;
    if scount <= 0 || send == 0 || (scount as usize).checked_mul(ssize) != Some(b) {
        return None;
    }
    Some((b, Some(send)))
}

/// `MPI_Allgather` of blocks of predefined contiguous datatypes (the same bytes sent as each
/// block received) on a communicator whose calls already run on its slot, like
/// [`allreduce_now`]. `None`, nothing done, for anything else.
///
/// # Safety
/// `send` (unless `MPI_IN_PLACE`) holds `scount` elements of `stype`, `recv` the
/// communicator's size times `rcount` elements of `rtype` (MPI's contract).
pub unsafe fn allgather_now(
    comm: usize,
    send: usize,
    scount: i64,
    stype: usize,
    recv: usize,
    rcount: i64,
    rtype: usize,
) -> Option<MpiResult<()>> {
    let (b, own) = equal_blocks(send, scount, stype, recv, rcount, rtype)?;
    let cl = runtime::with(|rt| {
        let Ok((idx, c)) = rt.comm(comm) else {
            return Ok(None);
        };
        let q = Query::new(c.size, b, b * c.size as usize);
        Ok(claim(rt, idx, Coll::Allgather, &q))
    })
    .ok()??;
    let (slot, s, me, p) = (cl.slot, cl.seq, cl.me, cl.p);
    let mine = own.unwrap_or(recv + me * b);
    // SAFETY: (both blocks) the buffers hold the call's data (caller's contract); an area
    // holds `b` <= CAP bytes of its rank's call `s` from its `publish` until every rank
    // entered the next call; areas never overlap user buffers.
    let done = contribute(slot, p, me, s, |d| unsafe {
        copy_bytes(mine as *const u8, d, b)
    })
    .and_then(|()| wait_all(slot, p, s));
    if done.is_ok() {
        for r in (0..p).filter(|&r| r != me || own.is_some()) {
            // SAFETY: see above.
            unsafe { copy_bytes(slot.data(r, s), (recv + r * b) as *mut u8, b) };
        }
    }
    Some(done)
}

/// `MPI_Alltoall` of blocks of predefined contiguous datatypes (the same bytes sent in each
/// block as each block received) on a communicator whose calls already run on its slot,
/// like [`allreduce_now`]. `None`, nothing done, for anything else.
///
/// # Safety
/// `send` (unless `MPI_IN_PLACE`) holds the communicator's size times `scount` elements of
/// `stype`, `recv` its size times `rcount` elements of `rtype` (MPI's contract).
pub unsafe fn alltoall_now(
    comm: usize,
    send: usize,
    scount: i64,
    stype: usize,
    recv: usize,
    rcount: i64,
    rtype: usize,
) -> Option<MpiResult<()>> {
    let (b, own) = equal_blocks(send, scount, stype, recv, rcount, rtype)?;
    // For MPI_IN_PLACE the blocks go out of the receive buffer, copied to the area first.
    let src = own.unwrap_or(recv);
    let cl = runtime::with(|rt| {
        let Ok((idx, c)) = rt.comm(comm) else {
            return Ok(None);
        };
        let p = c.size as usize;
        if b * p > CAP {
            return Ok(None);
        }
        let q = Query::new(c.size, b, b * p);
        Ok(claim(rt, idx, Coll::Alltoall, &q))
    })
    .ok()??;
    let (slot, s, me, p) = (cl.slot, cl.seq, cl.me, cl.p);
    // SAFETY: (both blocks) the buffers hold the call's `p` blocks of `b` bytes (caller's
    // contract); an area holds `p * b` <= CAP bytes of its rank's call `s` from its `publish`
    // until every rank entered the next call; areas never overlap user buffers.
    let done = contribute(slot, p, me, s, |d| unsafe {
        copy_bytes(src as *const u8, d, p * b)
    })
    .and_then(|()| wait_all(slot, p, s));
    if done.is_ok() {
        for j in 0..p {
            // SAFETY: see above.
            unsafe { copy_bytes(slot.data(j, s).add(me * b), (recv + j * b) as *mut u8, b) };
        }
    }
    Some(done)
}

/// Runs `plan` (blocking; call outside `runtime::with`). False when the communicator could
/// not get a slot: the caller then builds the call's schedule (under the same tag).
pub fn execute(plan: &Plan) -> MpiResult<bool> {
    let (slot, seq) = match plan.at {
        Some(at) => at,
        None => match setup(plan)? {
            Some(at) => at,
            None => return Ok(false),
        },
    };
    run(
        &plan.kind,
        slot,
        seq,
        plan.rank as usize,
        plan.size as usize,
    )?;
    Ok(true)
}

/// Sets the communicator's slot up: rank 0 claims one and broadcasts its index.
fn setup(plan: &Plan) -> MpiResult<Option<(Slot, u64)>> {
    let mut word = u32::MAX;
    let addr = &mut word as *mut u32 as usize;
    let sched = runtime::with(|rt| {
        let c = rt.comms.get(plan.comm).expect("live communicator");
        if plan.rank == 0 {
            let region = rt.shm.as_ref().expect("eligible").coll_region();
            let key = ((c.map.world(0) as u64 + 1) << 32) | c.context_id() as u64;
            let got = region.claim(key, plan.size as u32, c.context_id() as usize);
            // SAFETY: `addr` is `word`, alive on this stack frame for the whole setup.
            unsafe { *(addr as *mut u32) = got.unwrap_or(u32::MAX) };
        }
        let ctx = Ctx {
            comm: plan.comm,
            rank: plan.rank,
            size: plan.size,
            inter: None,
            blocking: true,
            shape: Default::default(),
        };
        let mut s = ctx.schedule(plan.tag);
        crate::coll::algos::bcast::knomial(&ctx, &mut s, &Span::bytes(addr, 4), 0, 2);
        Ok(s)
    })?;
    sched.run()?;
    let got = word;
    runtime::with(|rt| {
        let c = rt.comms.get(plan.comm).expect("live communicator");
        if got == u32::MAX {
            c.coll_shm.state.store(OFF, Relaxed);
            return Ok(None);
        }
        c.coll_shm.state.store(SLOT0 + got, Relaxed);
        c.coll_shm.seq.store(plan.kind.calls(), Relaxed);
        let region = rt.shm.as_ref().expect("eligible").coll_region();
        Ok(Some((region.slot(got), 1)))
    })
}

/// Waits until `ready()`: spins briefly (not on an oversubscribed node), then polls through
/// `runtime::wait_for_unrung`, which keeps the progress engine going and yields the CPU.
pub(super) fn wait(mut ready: impl FnMut() -> bool) -> MpiResult<()> {
    if ready() {
        return Ok(());
    }
    if crate::platform::wait::spin_limit() > 1 {
        for _ in 0..2048 {
            std::hint::spin_loop();
            if ready() {
                return Ok(());
            }
        }
    }
    runtime::wait_for_unrung(|_| Ok(ready().then_some(())))
}

/// Waits until ranks `0..p` have all published call `s`.
pub(super) fn wait_all(slot: Slot, p: usize, s: u64) -> MpiResult<()> {
    let mut next = 0;
    wait(|| {
        while next < p && slot.ready(next, s) {
            next += 1;
        }
        next == p
    })
}

/// Writes this rank's contribution for call `s` with `fill` (given its area) once the
/// area's previous readers are done, and publishes `s`.
pub(super) fn contribute(
    slot: Slot,
    p: usize,
    me: usize,
    s: u64,
    fill: impl FnOnce(*mut u8),
) -> MpiResult<()> {
    wait(|| slot.drained(p, s))?;
    fill(slot.data(me, s));
    slot.publish(me, s);
    Ok(())
}

/// Copies the data of `src` (packed) to `dst`.
///
/// # Safety
/// `src` describes valid memory; `dst` has room for `src.packed()` bytes.
pub(super) unsafe fn pack(src: &Span, dst: *mut u8) {
    let n = src.packed();
    if n == 0 {
        return;
    }
    if src.is_contiguous() {
        // SAFETY: caller's guarantee; a slot area never overlaps a user buffer.
        unsafe { copy_bytes(src.addr as *const u8, dst, n) };
        return;
    }
    // SAFETY: caller's guarantee.
    let out = unsafe { std::slice::from_raw_parts_mut(dst, n) };
    match &src.layout {
        // SAFETY: the layout describes the valid memory of the buffer at `addr`.
        Some(l) => unsafe { l.pack(src.addr, 0, out) },
        // SAFETY: the span describes valid elements at `addr` holding `n` bytes of data.
        None => unsafe { crate::core::p2p::pack_into(src.addr as *const u8, src.unit, out) },
    }
}

/// Copies `n` packed bytes at `src` into the buffer `dst` describes.
///
/// # Safety
/// `src` is valid for `n` bytes; `dst` describes valid memory for them.
pub(super) unsafe fn unpack(dst: &Span, src: *const u8, n: usize) {
    let n = n.min(dst.packed());
    if n == 0 {
        return;
    }
    if dst.is_contiguous() {
        // SAFETY: caller's guarantee.
        unsafe { copy_bytes(src, dst.addr as *mut u8, n) };
        return;
    }
    // SAFETY: caller's guarantee.
    let data = unsafe { std::slice::from_raw_parts(src, n) };
    match &dst.layout {
        // SAFETY: the layout describes the valid memory of the buffer at `addr`.
        Some(l) => unsafe { l.unpack(dst.addr, 0, data) },
        // SAFETY: the span describes valid elements at `addr` with room for `data`.
        None => unsafe { crate::core::p2p::unpack_from(dst.addr as *mut u8, dst.unit, data) },
    }
}

/// `recv = x0 op (x1 op (... op x(p-1)))` over `count` elements, `x(r)` at `src(r)`.
///
/// # Safety
/// Every `src(r)` and `recv` are valid for `count` elements of `red`'s datatype.
unsafe fn combine(
    red: &Reducer,
    count: usize,
    p: usize,
    src: impl Fn(usize) -> *const u8,
    recv: usize,
) {
    let n = count * red.extent;
    // SAFETY: caller's guarantee; slot areas never overlap user buffers.
    unsafe {
        copy_bytes(src(p - 1), recv as *mut u8, n);
        for r in (0..p - 1).rev() {
            red.apply_raw(count, src(r), recv as *mut u8);
        }
    }
}

fn run(kind: &Kind, slot: Slot, s: u64, me: usize, p: usize) -> MpiResult<()> {
    // SAFETY: (for the blocks below) user buffers are valid for the call's data (MPI's
    // contract for a blocking collective); an area holds this call's data of its rank from
    // its `publish` until every rank entered the next call, and `offer` checked that the
    // data fits an area.
    match kind {
        Kind::Barrier => {
            slot.publish(me, s);
            wait_all(slot, p, s)
        }
        Kind::Bcast { data, root } => {
            let root = *root as usize;
            if me == root {
                // SAFETY: see above.
                contribute(slot, p, me, s, |d| unsafe { pack(data, d) })
            } else {
                slot.publish(me, s);
                wait(|| slot.ready(root, s))?;
                // SAFETY: see above.
                unsafe { unpack(data, slot.data(root, s), data.packed()) };
                Ok(())
            }
        }
        Kind::BcastCma {
            data,
            root,
            peer_pid,
        } => bcast_cma(slot, s, me, p, data, *root as usize, *peer_pid),
        Kind::Cma(call) => cma_coll::run(call, slot, s, me, p),
        Kind::Reduce {
            red,
            count,
            send,
            recv,
            root,
            all,
        } => {
            let n = count * red.extent;
            // SAFETY: see above.
            contribute(slot, p, me, s, |d| unsafe {
                copy_bytes(*send as *const u8, d, n)
            })?;
            if *all || me == *root as usize {
                wait_all(slot, p, s)?;
                // SAFETY: see above.
                unsafe { combine(red, *count, p, |r| slot.data(r, s), *recv) };
            }
            Ok(())
        }
        Kind::ReduceScatter {
            red,
            count,
            send,
            recv,
        } => {
            let n = count * red.extent;
            // SAFETY: see above.
            contribute(slot, p, me, s, |d| unsafe {
                copy_bytes(*send as *const u8, d, n * p)
            })?;
            wait_all(slot, p, s)?;
            // SAFETY: see above; block `me` of every contribution.
            unsafe {
                combine(
                    red,
                    *count,
                    p,
                    |r| slot.data(r, s).add(me * n) as *const u8,
                    *recv,
                )
            };
            Ok(())
        }
        Kind::Allgather { own, recv } => {
            let b = recv.packed;
            let mine = own.clone().unwrap_or_else(|| recv.block(me));
            // SAFETY: see above.
            contribute(slot, p, me, s, |d| unsafe { pack(&mine, d) })?;
            wait_all(slot, p, s)?;
            for r in (0..p).filter(|&r| r != me || own.is_some()) {
                // SAFETY: see above.
                unsafe { unpack(&recv.block(r), slot.data(r, s), b) };
            }
            Ok(())
        }
        Kind::Alltoall { send, recv } => {
            let b = recv.packed;
            // SAFETY: see above; `p` blocks of `b` bytes fit the area (checked by `offer`).
            contribute(slot, p, me, s, |d| unsafe {
                if send.is_packed() {
                    copy_bytes(send.first.addr as *const u8, d, p * b);
                } else {
                    for j in 0..p {
                        pack(&send.block(j), d.add(j * b));
                    }
                }
            })?;
            wait_all(slot, p, s)?;
            for j in 0..p {
                // SAFETY: see above.
                unsafe { unpack(&recv.block(j), slot.data(j, s).add(me * b), b) };
            }
            Ok(())
        }
    }
}

/// A broadcast too large for an area, with single copies between the address spaces
/// (the contention-aware CMA broadcast, `papers/contention-aware-cma-collectives.md` §4, §6.2):
/// call `s` carries buffer addresses, call `s + 1` says "done", and no data goes through the
/// slot.
///
/// - On two ranks both ranks copy, half each (the paper's read and write designs at once):
///   each publishes its buffer's address for `s`; the root writes the second half into the
///   other rank's buffer (`process_vm_writev`) while that rank reads the first half from the
///   root's (`process_vm_readv`); each publishes `s + 1` when its half is done and returns
///   once the other has, so neither buffer is touched after its owner returns. One 64 KiB
///   broadcast costs about one syscall and half a copy instead of a rendezvous handshake and
///   a whole copy.
/// - On more ranks every non-root reads the whole buffer from the root (direct read) and
///   publishes `s + 1`; the root returns once all have (the tables select this only where it
///   was measured to pay; the paper's k-nomial read throttling is the next step for many
///   ranks).
///
/// A rank whose data is not one contiguous block copies through a packed buffer of its own
/// (the root packs before publishing, a non-root unpacks after `s + 1`), so the path is the
/// same on every rank whatever the layouts. A failed transfer still publishes `s + 1`, so the
/// peers do not wait forever, and is reported as `MPI_ERR_OTHER`.
fn bcast_cma(
    slot: Slot,
    s: u64,
    me: usize,
    p: usize,
    data: &Span,
    root: usize,
    peer_pid: i32,
) -> MpiResult<()> {
    let n = data.packed();
    let mut staging = Vec::new();
    let base = if data.is_contiguous() {
        data.addr
    } else {
        staging = vec![0u8; n];
        if me == root {
            // SAFETY: `data` describes the caller's valid buffer; `staging` has `n` bytes.
            unsafe { pack(data, staging.as_mut_ptr()) };
        }
        staging.as_mut_ptr() as usize
    };
    let publish_addr = p == 2 || me == root;
    if publish_addr {
        // SAFETY: an area holds at least 8 bytes; it is 16-byte aligned.
        contribute(slot, p, me, s, |d| unsafe {
            (d as *mut u64).write(base as u64)
        })?;
    } else {
        slot.publish(me, s);
    }
    let half = n / 2;
    let moved = if me == root && p > 2 {
        Ok(())
    } else {
        let other = if me == root { 1 - root } else { root };
        wait(|| slot.ready(other, s))?;
        // SAFETY: the other rank published its buffer's address for call `s` and keeps the
        // buffer until it sees our `s + 1`.
        let remote = unsafe { (slot.data(other, s) as *const u64).read() };
        if me == root {
            // SAFETY: our buffer holds `n` bytes; the kernel checks the remote range.
            unsafe {
                cma::write_to(
                    peer_pid,
                    (base + half) as *const u8,
                    remote + half as u64,
                    n - half,
                )
            }
        } else {
            let len = if p == 2 { half } else { n };
            // SAFETY: our buffer has room for `n` bytes; the kernel checks the remote range.
            unsafe { cma::read_from(peer_pid, remote, base as *mut u8, len) }
        }
    };
    slot.publish(me, s + 1);
    if me == root && p > 2 {
        wait_all(slot, p, s + 1)?;
    } else if p == 2 {
        wait(|| slot.ready(1 - me, s + 1))?;
    }
    if let Err(e) = moved {
        return fail(
            MPI_ERR_OTHER,
            format!("MPI_Bcast: single-copy transfer with process {peer_pid} failed: {e}"),
        );
    }
    if me != root && !staging.is_empty() {
        // SAFETY: `staging` holds the `n` bytes of the broadcast; `data` is the caller's buffer.
        unsafe { unpack(data, staging.as_ptr(), n) };
    }
    Ok(())
}

#[cfg(test)]
mod tests;
