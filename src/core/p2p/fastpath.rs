//! Fast paths of point-to-point calls that need one VCI only.
//!
//! Each function here either completes the whole call on the VCI of the call's communicator
//! (holding that VCI's lock under `MPI_THREAD_MULTIPLE`, no lock below) and returns `Some` /
//! `true`, or changes nothing and returns `None` / `false`, after which the caller runs the
//! general slow path (which also produces every error). They cover:
//! - `MPI_Isend` to oneself (matched to a posted receive or buffered as an eager message), to
//!   `MPI_PROC_NULL`, or eager (standard mode) to a node peer, straight into the pair's
//!   mailbox or a free cell of the node transport, or to another node's rank through a send
//!   buffer of the network lane;
//! - `MPI_Irecv` from any source: matched to an eager unexpected message, or posted;
//! - `MPI_Wait`/`MPI_Test`/`MPI_Waitall` over requests of one VCI that are complete;
//! - `MPI_Wait`/`MPI_Waitall` over requests of one VCI completed by standard eager messages
//!   from node peers or other nodes, and `MPI_Recv` of such a message straight from the lane.
//!
//! Only predefined contiguous datatypes, valid arguments, intracommunicators the slow path
//! has seen (their facts cached in the VCI) and plain requests (no parent, no out-of-line
//! state, not freed, not persistent) qualify. Threads working on communicators mapped to
//! different VCIs therefore never contend.

use crate::core::datatype;
use crate::core::diag::stats::{self, Proto};
use crate::core::objects::comm::CONTEXTS_PER_ID;
use crate::core::objects::slab::{kind, Slab};
use crate::core::p2p::matching::{Envelope, Pattern, Payload, Posted, Unexpected};
use crate::core::p2p::request::{flag, ReqKind, Request, Status, NO_PARENT};
use crate::core::runtime::{self, READY, READY_DELEGATED, READY_LOCKED};
use crate::core::threads::lockq;
use crate::core::threads::vci::{self, Pool, Queued, VciGuard, VciState, RID_VCI_SHIFT};
use crate::mpi_abi::consts::*;
use crate::mpi_abi::types::{MPI_Request, MPI_Status};
use crate::platform::wait::Backoff;
use crate::transport::ofi::{NET_LANES, NET_PEER};
use crate::transport::shm::engine_ref;
use crate::transport::wire::MsgKind;
use crate::transport::Transport;

/// The handle of the shared complete send request (`request::DONE_SEND`: VCI 0, index 0,
/// generation 0): small enough for the compares and stores of the fast paths to take it as
/// an immediate operand, instead of a register of their own.
pub const DONE_SEND_HANDLE: usize = (1 << 12) | kind::REQUEST;

/// Access modes of the fast paths (picked from [`runtime::fast_state`] and passed as a const
/// generic parameter, so that each mode gets its own copy of a path and none tests the mode
/// as it goes): directly...
const DIRECT: u8 = 0;
/// ...under the VCI's lock (`global`, `vci`, `lockq`: taken with one compare-and-swap that
/// also finds no `lockq` work pending; when that fails, `crate::core::threads::lockq`'s out-of-line
/// `*_contended` entries wait for the lock or, under `lockq`, queue the operation)...
const LOCKED: u8 = 1;
/// ...or on the caller's behalf (`csync`, `offload`).
const DELEGATED: u8 = 2;

/// The VCI of a message to or from rank `peer` with tag `tag` on communicator handle
/// `comm`, if known without the slow path.
#[inline(always)]
pub(crate) fn comm_vci(pool: &Pool, comm: usize, peer: i32, tag: i32) -> Option<usize> {
    if pool.len() == 1 {
        Some(0) // every communicator; the VCI's cache still validates `comm`
    } else if comm == MPI_COMM_WORLD {
        Some(pool.vci_of_ctx(0))
    } else if comm == MPI_COMM_SELF {
        Some(pool.vci_of_ctx(CONTEXTS_PER_ID))
    } else {
        match vci::comm_hint(comm) {
            Some(v) if v < pool.len() => Some(v),
            // Spread over the VCIs by its assertions (`crate::core::threads::spread`).
            Some(_) => vci::comm_spread_vci(comm, peer, tag, pool.len()),
            None => None,
        }
    }
}

/// Bytes of `count` elements of predefined contiguous type `dt` at `buf`, if the arguments
/// qualify for a fast path.
#[inline(always)]
fn contiguous_bytes(buf: *const u8, count: i64, dt: usize) -> Option<usize> {
    let size = datatype::contiguous_size(dt)?;
    if !(0..=i32::MAX as i64).contains(&count) {
        return None;
    }
    let bytes = count as usize * size;
    if buf.is_null() && bytes > 0 {
        return None;
    }
    Some(bytes)
}

/// A receive request the fast paths may complete on their own.
#[inline(always)]
pub(crate) fn plain_recv(r: &Request) -> bool {
    // Active, and not done, persistent, freed, internal or noncontiguous.
    // A part of a compound operation (with a parent) is always internal.
    debug_assert!(r.internal() || r.parent == NO_PARENT);
    // Kind and flags compared as one 16-bit value (adjacent bytes: one load, one compare).
    let kind_flags = (r.kind as u16) << 8 | r.flags as u16;
    // No out-of-line state: `flag::EXTRA` is clear.
    let plain = kind_flags == (ReqKind::Recv as u16) << 8 | flag::ACTIVE as u16;
    debug_assert!(!plain || r.extra_ref().is_none());
    plain
}

/// Copies a message into a plain receive request and completes it.
#[inline(always)]
pub(crate) fn deliver(r: &mut Request, env: &Envelope, data: *const u8, bytes: usize) {
    let n = bytes.min(r.cap);
    // SAFETY: the receive buffer holds `cap` >= n bytes and the message `bytes` >= n; MPI
    // forbids overlapping send and receive buffers.
    unsafe { crate::core::p2p::copy_bytes(data, r.buf, n) };
    complete_recv(r, env.src, env.tag, bytes);
}

/// Completes plain receive request `r` with a message of `bytes` bytes from `source` with tag
/// `tag`: its status (`MPI_ERR_TRUNCATE` when the message is longer than the buffer) and its
/// done flag. Returns how many bytes the buffer takes, which the caller copies (before, or
/// while it still excludes every other thread from the request).
#[inline(always)]
pub(crate) fn complete_recv(r: &mut Request, source: i32, tag: i32, bytes: usize) -> usize {
    let n = bytes.min(r.cap);
    r.status = Status {
        source,
        tag,
        error: if bytes > r.cap {
            MPI_ERR_TRUNCATE
        } else {
            MPI_SUCCESS
        },
        bytes: n as u64,
        cancelled: false,
    };
    r.set_done(true);
    n
}

/// Whether `rank` is a rank of a communicator of `size` (>= 0) ranks: one unsigned compare.
#[inline(always)]
pub(crate) fn rank_in(rank: i32, size: i32) -> bool {
    debug_assert!(size >= 0);
    (rank as u32) < (size as u32)
}

#[inline(always)]
fn rid_of(v: usize, index: u32) -> u32 {
    ((v as u32) << RID_VCI_SHIFT) | index
}

/// `MPI_Isend` (standard mode) fast path: the request handle when the send completed here.
///
/// # Safety
/// `buf` holds `count` elements of `dt` (the caller's MPI contract).
#[inline(always)]
pub unsafe fn isend(
    buf: *const u8,
    count: i64,
    dt: usize,
    dest: i32,
    tag: i32,
    comm: usize,
) -> Option<usize> {
    // One copy of the path per access mode, so that none tests the mode as it goes.
    match runtime::fast_state() {
        READY => isend_in::<DIRECT>(vci::pool()?, buf, count, dt, dest, tag, comm),
        READY_LOCKED => isend_in::<LOCKED>(vci::pool()?, buf, count, dt, dest, tag, comm),
        state => isend_delegated_entry(state, buf, count, dt, dest, tag, comm),
    }
}

/// [`isend`] under the `csync` or `offload` model (out of line: the other modes above
/// compile to a chain of compares).
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn isend_delegated_entry(
    state: u8,
    buf: *const u8,
    count: i64,
    dt: usize,
    dest: i32,
    tag: i32,
    comm: usize,
) -> Option<usize> {
    match state {
        READY_DELEGATED => isend_in::<DELEGATED>(vci::pool()?, buf, count, dt, dest, tag, comm),
        _ => None,
    }
}

/// [`isend`] under access mode `M` ([`DIRECT`], [`LOCKED`] or [`DELEGATED`]).
#[inline(always)]
fn isend_in<const M: u8>(
    pool: &Pool,
    buf: *const u8,
    count: i64,
    dt: usize,
    dest: i32,
    tag: i32,
    comm: usize,
) -> Option<usize> {
    let bytes = contiguous_bytes(buf, count, dt)?;
    if tag < 0 {
        return None;
    }
    let v = comm_vci(pool, comm, dest, tag)?;
    match M {
        DIRECT => {
            let mut g = VciGuard::enter(pool, v, false);
            isend_on::<false>(g.state(), pool, v, buf, bytes, dest, tag, comm)
        }
        LOCKED => {
            let mut g = match VciGuard::try_enter_clean(pool, v) {
                Some(g) => g,
                None => match lockq::isend_contended(pool, v, comm, dest, tag, buf, bytes) {
                    // SAFETY: `Locked`: this thread holds the lock of VCI `v` (a VCI of
                    // `pool`, whose lock it took) and no guard of it.
                    lockq::Entry::Locked => unsafe { VciGuard::adopt(pool, v) },
                    lockq::Entry::Done(h) => return Some(h),
                    lockq::Entry::Slow => return None,
                },
            };
            isend_on::<true>(g.state(), pool, v, buf, bytes, dest, tag, comm)
        }
        _ => isend_delegated(pool, v, buf, bytes, dest, tag, comm),
    }
}

/// [`isend_on`] on behalf of this thread (the `csync` and `offload` models).
#[inline(always)] // reached only from the out-of-line `*_delegated_entry`
#[allow(clippy::too_many_arguments)]
fn isend_delegated(
    pool: &Pool,
    v: usize,
    buf: *const u8,
    bytes: usize,
    dest: i32,
    tag: i32,
    comm: usize,
) -> Option<usize> {
    let mut out = None;
    // SAFETY: the send reads its arguments and VCI `v` only, from whichever thread runs it;
    // this thread waits until it ran and is not inside the slow path.
    unsafe {
        vci::run_delegated(pool, v, &mut |s: &mut VciState| {
            out = isend_on::<true>(s, pool, v, buf, bytes, dest, tag, comm)
        })
    };
    out
}

/// The body of [`isend`] on VCI `v`'s state `s` (entered under lock mode `LOCKED`).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn isend_on<const LOCKED: bool>(
    s: &mut VciState,
    pool: &Pool,
    v: usize,
    buf: *const u8,
    bytes: usize,
    dest: i32,
    tag: i32,
    comm: usize,
) -> Option<usize> {
    let c = s.comm_mru(comm)?;
    if dest == MPI_PROC_NULL {
        return Some(DONE_SEND_HANDLE);
    }
    let env = Envelope {
        ctx: c.ctx,
        src: c.rank,
        tag,
    };
    if dest != c.rank {
        return send_to_peer(s, v, &c, dest, env, buf, bytes, pool, LOCKED);
    }
    let sent = send_to_self(s, v, pool.eager_max, env, buf, bytes);
    if crate::core::diag::stats_on() && sent.is_some() {
        stats::sent(v, Proto::SelfCopy, bytes);
        stats::received(v, Proto::SelfCopy, bytes);
    }
    sent
}

/// A standard-mode eager send to a node peer (out through the pair's fastbox or a free
/// cell) or to another node's rank (through a send buffer of the context's network lane),
/// when nothing is queued before it (then the send is complete).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn send_to_peer(
    s: &VciState,
    v: usize,
    c: &vci::FastComm,
    dest: i32,
    env: Envelope,
    buf: *const u8,
    bytes: usize,
    pool: &Pool,
    locked: bool,
) -> Option<usize> {
    if !rank_in(dest, c.size) {
        return None;
    }
    let local = *s
        .peer_tables
        .get(c.peers as usize)?
        .as_ref()?
        .get(dest as usize)?;
    if local & NET_PEER != 0 {
        return send_to_net_peer(v, local, env, buf, bytes, pool, locked);
    }
    if bytes > pool.eager_max {
        return None;
    }
    // SAFETY: the caller holds the VCI's lock (MULTIPLE) or is the only thread in MPI, and is
    // not inside the slow path.
    let sent = unsafe {
        engine_ref::with_engine(
            engine_ref::lane_of(env.ctx),
            locked && pool.len() > 1,
            |e| e.send_eager_now(local, env, buf, bytes),
        )
    }?;
    if crate::core::diag::stats_on() && sent {
        stats::sent(v, Proto::ShmEager, bytes);
    }
    sent.then_some(DONE_SEND_HANDLE)
}

/// [`send_to_peer`] to another node's rank: `peer` is its peer table entry (`NET_PEER |
/// world rank`, or `vci::NOT_LOCAL` for oneself and other jobs' processes, which decline).
#[cold]
fn send_to_net_peer(
    v: usize,
    peer: u32,
    env: Envelope,
    buf: *const u8,
    bytes: usize,
    pool: &Pool,
    locked: bool,
) -> Option<usize> {
    if peer == vci::NOT_LOCAL || bytes > pool.net_eager_max {
        return None;
    }
    // SAFETY: as in `send_to_peer`; `buf` holds `bytes` bytes (the caller's MPI contract).
    let sent = unsafe {
        NET_LANES.with(NET_LANES.lane_of(env.ctx), locked && pool.len() > 1, |e| {
            e.send_eager_now(peer & !NET_PEER, env, buf, bytes)
        })
    }?;
    if crate::core::diag::stats_on() && sent {
        stats::sent(v, Proto::NetEager, bytes);
    }
    sent.then_some(DONE_SEND_HANDLE)
}

#[inline(always)]
fn send_to_self(
    s: &mut VciState,
    v: usize,
    eager_max: usize,
    env: Envelope,
    buf: *const u8,
    bytes: usize,
) -> Option<usize> {
    match s.matcher.posted.front() {
        Some(p) if p.pattern.accepts(&env) => {
            let r = plain_posted(&mut s.reqs, v, p.req)?;
            s.matcher.posted.pop_front();
            deliver(r, &env, buf, bytes);
            Some(DONE_SEND_HANDLE)
        }
        None => buffer_self(s, eager_max, env, buf, bytes),
        Some(_) => match s
            .matcher
            .posted
            .iter()
            .position(|p| p.pattern.accepts(&env))
        {
            Some(i) => deliver_posted(s, v, i, env, buf, bytes),
            None => buffer_self(s, eager_max, env, buf, bytes),
        },
    }
}

/// [`send_to_self`] with no matching receive posted: buffers the message as an unexpected
/// eager one if it is small enough.
#[inline(never)]
fn buffer_self(
    s: &mut VciState,
    eager_max: usize,
    env: Envelope,
    buf: *const u8,
    bytes: usize,
) -> Option<usize> {
    if bytes > eager_max {
        return None;
    }
    // SAFETY: the send buffer holds `bytes` bytes (caller's contract).
    let data = unsafe { crate::core::p2p::raw_slice(buf, bytes) }.to_vec();
    s.matcher.unexpected.push_back(Unexpected {
        env,
        payload: Payload::Eager { data, ack: None },
    });
    Some(DONE_SEND_HANDLE)
}

/// The posted receive request `rid`, if it is on VCI `v` and the fast path may complete it.
#[inline(always)]
pub(crate) fn plain_posted(reqs: &mut Slab<Request>, v: usize, rid: u32) -> Option<&mut Request> {
    plain_posted_at(reqs, (v as u32) << vci::RID_VCI_SHIFT, rid)
}

/// [`plain_posted`] for the VCI whose request indices carry `rid_base` (`v << RID_VCI_SHIFT`):
/// one exclusive or both checks the VCI and yields the index.
#[inline(always)]
pub(crate) fn plain_posted_at(
    reqs: &mut Slab<Request>,
    rid_base: u32,
    rid: u32,
) -> Option<&mut Request> {
    let index = rid ^ rid_base;
    if index >= 1 << vci::RID_VCI_SHIFT {
        return None;
    }
    plain_posted_index(reqs, index)
}

/// The request at `index` of `reqs`, if it is a receive the fast path may complete.
#[inline(always)]
pub(crate) fn plain_posted_index(reqs: &mut Slab<Request>, index: u32) -> Option<&mut Request> {
    match reqs.get_mut(index) {
        Some(r) if plain_recv(r) => Some(r),
        _ => None,
    }
}

/// [`send_to_self`] when the receive that matches is not the first posted one.
#[inline(never)]
fn deliver_posted(
    s: &mut VciState,
    v: usize,
    i: usize,
    env: Envelope,
    buf: *const u8,
    bytes: usize,
) -> Option<usize> {
    let rid = s.matcher.posted.get(i)?.req;
    let r = plain_posted(&mut s.reqs, v, rid)?;
    s.matcher.posted.remove(i);
    deliver(r, &env, buf, bytes);
    Some(DONE_SEND_HANDLE)
}

/// `MPI_Irecv` fast path: the new request's index and handle when the receive was matched to
/// an eager message or posted here.
///
/// # Safety
/// `buf` holds `count` elements of `dt` (the caller's MPI contract).
#[inline(always)]
pub unsafe fn irecv(
    buf: *mut u8,
    count: i64,
    dt: usize,
    src: i32,
    tag: i32,
    comm: usize,
) -> Option<(u32, usize)> {
    // SAFETY: a null `out` is not written.
    unsafe { irecv_to(buf, count, dt, src, tag, comm, std::ptr::null_mut()) }
}

/// [`irecv`] that also stores the new request's handle in `*out` unless `out` is null, still
/// on the VCI (so that the result need not be kept across the unlock).
///
/// # Safety
/// As for [`irecv`]; `out` is null or points to a request handle.
#[inline(always)]
pub unsafe fn irecv_to(
    buf: *mut u8,
    count: i64,
    dt: usize,
    src: i32,
    tag: i32,
    comm: usize,
    out: *mut MPI_Request,
) -> Option<(u32, usize)> {
    // One copy of the path per access mode, so that none tests the mode as it goes.
    // SAFETY: (every arm) forwarded from the caller.
    unsafe {
        match runtime::fast_state() {
            READY => irecv_in::<DIRECT>(vci::pool()?, buf, count, dt, src, tag, comm, out),
            READY_LOCKED => irecv_in::<LOCKED>(vci::pool()?, buf, count, dt, src, tag, comm, out),
            state => irecv_delegated_entry(state, buf, count, dt, src, tag, comm, out),
        }
    }
}

/// [`irecv_to`] under the `csync` or `offload` model (out of line, see
/// [`isend_delegated_entry`]).
///
/// # Safety
/// As for [`irecv_to`].
#[inline(never)]
#[allow(clippy::too_many_arguments)]
unsafe fn irecv_delegated_entry(
    state: u8,
    buf: *mut u8,
    count: i64,
    dt: usize,
    src: i32,
    tag: i32,
    comm: usize,
    out: *mut MPI_Request,
) -> Option<(u32, usize)> {
    match state {
        // SAFETY: forwarded from the caller.
        READY_DELEGATED => unsafe {
            irecv_in::<DELEGATED>(vci::pool()?, buf, count, dt, src, tag, comm, out)
        },
        _ => None,
    }
}

/// [`irecv_to`] under access mode `M` (see [`isend_in`]).
///
/// # Safety
/// As for [`irecv_to`].
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn irecv_in<const M: u8>(
    pool: &Pool,
    buf: *mut u8,
    count: i64,
    dt: usize,
    src: i32,
    tag: i32,
    comm: usize,
    out: *mut MPI_Request,
) -> Option<(u32, usize)> {
    let bytes = contiguous_bytes(buf, count, dt)?;
    if tag < 0 && tag != MPI_ANY_TAG {
        return None;
    }
    let v = comm_vci(pool, comm, src, tag)?;
    let mut g = match M {
        DIRECT => VciGuard::enter(pool, v, false),
        LOCKED => match VciGuard::try_enter_clean(pool, v) {
            Some(g) => g,
            None => match lockq::irecv_contended(pool, v, comm, src, tag, buf, bytes, dt) {
                // SAFETY: `Locked`: this thread holds the lock of VCI `v` (a VCI of `pool`,
                // whose lock it took) and no guard of it.
                lockq::Entry::Locked => unsafe { VciGuard::adopt(pool, v) },
                // SAFETY: `out` is null or points to a request handle (caller's contract).
                lockq::Entry::Done(started) => return unsafe { put(Some(started), out) },
                lockq::Entry::Slow => return None,
            },
        },
        // SAFETY: forwarded from the caller.
        _ => return unsafe { irecv_delegated(pool, v, buf, bytes, src, tag, comm, out) },
    };
    // SAFETY: forwarded from the caller.
    unsafe { irecv_on(g.state(), v, buf, bytes, src, tag, comm, out) }
}

/// [`irecv_on`] on behalf of this thread (the `csync` and `offload` models).
///
/// # Safety
/// As for [`irecv_to`].
#[inline(always)] // reached only from the out-of-line `*_delegated_entry`
#[allow(clippy::too_many_arguments)]
unsafe fn irecv_delegated(
    pool: &Pool,
    v: usize,
    buf: *mut u8,
    bytes: usize,
    src: i32,
    tag: i32,
    comm: usize,
    out: *mut MPI_Request,
) -> Option<(u32, usize)> {
    let mut started = None;
    // SAFETY: the receive reads its arguments and VCI `v` only (and writes `*out`, which MPI
    // lets any thread write during the call), from whichever thread runs it; this thread
    // waits until it ran and is not inside the slow path.
    unsafe {
        vci::run_delegated(pool, v, &mut |s: &mut VciState| {
            started = irecv_on(s, v, buf, bytes, src, tag, comm, out)
        })
    };
    started
}

/// The body of [`irecv_to`] on VCI `v`'s state `s`.
///
/// # Safety
/// As for [`irecv_to`].
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn irecv_on(
    s: &mut VciState,
    v: usize,
    buf: *mut u8,
    bytes: usize,
    src: i32,
    tag: i32,
    comm: usize,
    out: *mut MPI_Request,
) -> Option<(u32, usize)> {
    let c = s.comm_mru(comm)?;
    if !(rank_in(src, c.size) || src == MPI_ANY_SOURCE) {
        return None;
    }
    // Wildcards on a communicator spread by its assertions: the slow path (which reports
    // those asserted away).
    if (src | tag) < 0 && crate::core::threads::spread::mode(c.ctx / CONTEXTS_PER_ID) != 0 {
        return None;
    }
    let pattern = Pattern {
        ctx: c.ctx,
        src,
        tag,
    };
    let mut r = Request::new(ReqKind::Recv, c.idx);
    r.buf = buf;
    r.cap = bytes;
    if s.matcher.unexpected.is_empty() {
        // SAFETY: forwarded from the caller.
        unsafe { put(post(s, v, pattern, r), out) }
    } else {
        // SAFETY: forwarded from the caller.
        unsafe { put(recv_or_post(s, v, pattern, r), out) }
    }
}

/// Stores the handle of a started request in `*out` unless `out` is null; passes `started`
/// on.
///
/// # Safety
/// `out` is null or points to a request handle.
#[inline(always)]
unsafe fn put(started: Option<(u32, usize)>, out: *mut MPI_Request) -> Option<(u32, usize)> {
    if let Some((_, h)) = started {
        if !out.is_null() {
            // SAFETY: a non-null `out` points to a request handle (caller's contract).
            unsafe { *out = h as MPI_Request };
        }
    }
    started
}

/// Stores receive request `r` in VCI `v` and posts it: its index and handle.
#[inline(always)]
fn post(s: &mut VciState, v: usize, pattern: Pattern, r: Request) -> Option<(u32, usize)> {
    let (index, handle) = s.reqs.insert_handle(r)?;
    s.matcher.posted.push_back(Posted {
        pattern,
        req: rid_of(v, index),
    });
    Some((rid_of(v, index), handle))
}

/// [`irecv`] when messages wait unmatched: takes the oldest one `pattern` accepts (an eager
/// one, else leaves it all to the slow path), or posts the receive.
#[inline(never)]
fn recv_or_post(
    s: &mut VciState,
    v: usize,
    pattern: Pattern,
    mut r: Request,
) -> Option<(u32, usize)> {
    let Some(i) = s.matcher.find_unexpected(&pattern) else {
        return post(s, v, pattern, r);
    };
    let u = &s.matcher.unexpected[i];
    let Payload::Eager { data, ack: None } = &u.payload else {
        return None;
    };
    deliver(&mut r, &u.env, data.as_ptr(), data.len());
    let (index, handle) = s.reqs.insert_handle(r)?;
    if i == 0 {
        s.matcher.unexpected.pop_front();
    } else {
        s.matcher.unexpected.remove(i);
    }
    Some((rid_of(v, index), handle))
}

/// A request the fast completion paths may finish: complete, plain and successful.
#[inline(always)]
fn finishable(r: &Request) -> bool {
    // `flag::EXTRA` clear: no out-of-line state.
    const MASK: u8 = flag::DONE | flag::ACTIVE | flag::PERSISTENT | flag::USER_FREED | flag::EXTRA;
    r.flags & MASK == flag::DONE | flag::ACTIVE && r.status.error == MPI_SUCCESS
}

/// `MPI_Waitall` / `MPI_Testall` fast path over requests that are all complete: frees them,
/// writes `MPI_REQUEST_NULL` and the statuses (unless `statuses` is null). Whether it did.
///
/// # Safety
/// `statuses` is null or has `reqs.len()` entries.
#[inline(always)]
pub unsafe fn complete_all(reqs: &mut [MPI_Request], statuses: *mut MPI_Status) -> bool {
    let Some(pool) = vci::pool() else {
        return false;
    };
    // One copy of the path per access mode, so that none tests the mode as it goes.
    // SAFETY: (every arm) forwarded from the caller.
    unsafe {
        match runtime::fast_state() {
            READY => complete_all_in::<DIRECT>(pool, reqs, statuses),
            READY_LOCKED => complete_all_in::<LOCKED>(pool, reqs, statuses),
            state => complete_all_delegated_entry(state, pool, reqs, statuses),
        }
    }
}

/// [`complete_all`] under the `csync` or `offload` model (out of line, see
/// [`isend_delegated_entry`]).
///
/// # Safety
/// As for [`complete_all`].
#[inline(never)]
unsafe fn complete_all_delegated_entry(
    state: u8,
    pool: &Pool,
    reqs: &mut [MPI_Request],
    statuses: *mut MPI_Status,
) -> bool {
    match state {
        // SAFETY: forwarded from the caller.
        READY_DELEGATED => unsafe { complete_all_in::<DELEGATED>(pool, reqs, statuses) },
        _ => false,
    }
}

/// [`complete_all`] under access mode `M` (see [`isend_in`]).
///
/// # Safety
/// As for [`complete_all`].
#[inline(always)]
unsafe fn complete_all_in<const M: u8>(
    pool: &Pool,
    reqs: &mut [MPI_Request],
    statuses: *mut MPI_Status,
) -> bool {
    let special = |h: MPI_Request| h as usize == MPI_REQUEST_NULL || h as usize == DONE_SEND_HANDLE;
    let Some(first) = reqs.iter().find(|&&h| !special(h)) else {
        // Null and shared complete requests only.
        for (i, h) in reqs.iter_mut().enumerate() {
            *h = MPI_REQUEST_NULL as MPI_Request;
            // SAFETY: forwarded from the caller.
            unsafe { write_status(statuses, i, &Status::EMPTY) };
        }
        return true;
    };
    let v = Slab::<Request>::tag_of(*first as usize);
    if v >= pool.len() {
        return false;
    }
    let mut g = match M {
        DIRECT => VciGuard::enter(pool, v, false),
        // Under lockq, taking the lock runs the queued operations first.
        LOCKED => match VciGuard::try_enter_clean(pool, v) {
            Some(g) => g,
            // SAFETY: this thread holds the lock of VCI `v` (a VCI of `pool`) and no guard.
            None if lockq::enter_contended(pool, v) => unsafe { VciGuard::adopt(pool, v) },
            None => return false,
        },
        // SAFETY: forwarded from the caller.
        _ => return unsafe { complete_all_delegated(pool, v, vci::queued(), reqs, statuses) },
    };
    // SAFETY: forwarded from the caller.
    unsafe { finish_all(g.state(), reqs, statuses) }
}

/// [`complete_all`] on VCI `v` under queueing model `q` other than `lockq`.
///
/// # Safety
/// As for [`complete_all`].
#[inline(always)] // reached only from the out-of-line `*_delegated_entry`
unsafe fn complete_all_delegated(
    pool: &Pool,
    v: usize,
    q: Queued,
    reqs: &mut [MPI_Request],
    statuses: *mut MPI_Status,
) -> bool {
    let Some(mut g) = vci::enter_queued(pool, v, q) else {
        return false;
    };
    // SAFETY: forwarded from the caller.
    unsafe { finish_all(g.state(), reqs, statuses) }
}

/// The body of [`complete_all`] on the state `s` of the requests' VCI: frees them all if
/// each is finishable (with statuses to write; without, [`finish_each`]).
///
/// # Safety
/// As for [`complete_all`].
#[inline(always)]
unsafe fn finish_all(
    s: &mut VciState,
    reqs: &mut [MPI_Request],
    statuses: *mut MPI_Status,
) -> bool {
    let special = |h: MPI_Request| h as usize == MPI_REQUEST_NULL || h as usize == DONE_SEND_HANDLE;
    if statuses.is_null() {
        return finish_each(s, reqs);
    }
    // Indices decoded by the first pass (arrays up to KEEP requests; longer ones decode
    // again).
    const KEEP: usize = 8;
    let mut kept = [0u32; KEEP];
    for (i, &h) in reqs.iter().enumerate() {
        if special(h) {
            continue;
        }
        match s.reqs.decode(h as usize) {
            Some(index) if s.reqs.get(index).is_some_and(finishable) => {
                if let Some(k) = kept.get_mut(i) {
                    *k = index;
                }
            }
            _ => return false,
        }
    }
    for (i, h) in reqs.iter_mut().enumerate() {
        if !special(*h) {
            let index = match kept.get(i) {
                Some(&k) => Some(k),
                None => s.reqs.decode(*h as usize),
            };
            // `None`: the same request listed twice (freed just before). The slow path
            // reports it; those before it are complete already, as the standard allows for
            // an erroneous call.
            let Some(index) = index else {
                return false;
            };
            if !statuses.is_null() {
                let Some(r) = s.reqs.get(index) else {
                    return false;
                };
                // SAFETY: forwarded from the caller.
                unsafe { write_status(statuses, i, &r.status) };
            }
            // `finishable` checked that it owns no out-of-line state (`extra`, the only
            // field with drop glue, is `None`), and nothing changed it since.
            if !s.reqs.free_plain(index, |_| true) {
                return false;
            }
        } else {
            // SAFETY: forwarded from the caller.
            unsafe { write_status(statuses, i, &Status::EMPTY) };
        }
        *h = MPI_REQUEST_NULL as MPI_Request;
    }
    true
}

/// [`finish_all`] without statuses, in one pass: frees each request in turn while it is
/// finishable. Every caller waits (`MPI_Wait`, `MPI_Waitall`), and a wait may complete some
/// requests of an erroneous or unfinished call before it gives up (the slow path then takes
/// the requests already set to `MPI_REQUEST_NULL` as complete, and no status is kept), so
/// stopping half-way is correct. Whether it freed them all.
#[inline(always)]
pub(crate) fn finish_each(s: &mut VciState, reqs: &mut [MPI_Request]) -> bool {
    for h in reqs.iter_mut() {
        let handle = *h as usize;
        if handle != MPI_REQUEST_NULL && handle != DONE_SEND_HANDLE && !finish_plain(s, handle) {
            return false;
        }
        *h = MPI_REQUEST_NULL as MPI_Request;
    }
    true
}

/// [`finish_each`] with statuses to write (`statuses` has an entry per request), in one
/// pass: while the next request is null, the shared complete send, or complete, plain and
/// successful, writes its status (`MPI_ERROR` untouched, as on success), frees it and writes
/// `MPI_REQUEST_NULL`, from entry `from` on (those before it are finished already). Returns
/// how many it finished from the front, counting the first `from` (all of them: done). The
/// caller hands the rest of the array to the full path, which must not touch the finished
/// prefix: their statuses are written, and to the full path a null entry would mean an
/// empty status. A request listed twice stops the pass at its second entry (freed just
/// before), which the full path reports.
///
/// # Safety
/// `statuses` has `reqs.len()` entries.
#[inline(always)]
pub(crate) unsafe fn finish_status_prefix(
    s: &mut VciState,
    reqs: &mut [MPI_Request],
    statuses: *mut MPI_Status,
    from: usize,
) -> usize {
    let mut i = from;
    while let Some(h) = reqs.get_mut(i) {
        let handle = *h as usize;
        // SAFETY: entry `i` exists (caller's contract).
        let out = unsafe { &mut *statuses.add(i) };
        if handle == MPI_REQUEST_NULL || handle == DONE_SEND_HANDLE {
            write_empty_status(out);
        } else {
            // `finishable` checks that it owns no out-of-line state (`extra`, the only
            // field with drop glue, is `None`).
            if !finish_status_one(s, handle, out) {
                return i;
            }
        }
        *h = MPI_REQUEST_NULL as MPI_Request;
        i += 1;
    }
    i
}

/// The step of [`finish_status_prefix`] for one request `handle` that is neither null nor
/// the shared complete send: frees it and writes its status to `out` if it is complete,
/// plain and successful. Whether it did.
#[inline(always)]
pub(crate) fn finish_status_one(s: &mut VciState, handle: usize, out: &mut MPI_Status) -> bool {
    s.reqs
        .free_plain_handle(handle, finishable, |r| r.status.write(out, false))
}

/// Writes [`Status::EMPTY`] to `out` (`MPI_ERROR` untouched) with immediate operands only:
/// source and tag are stored one by one, so that the compiler does not merge them into one
/// 64-bit constant that a loop would keep in a register of its own.
#[inline(always)]
pub(crate) fn write_empty_status(out: &mut MPI_Status) {
    // SAFETY: both fields are plain integers of a live, exclusive status.
    unsafe {
        std::ptr::write_volatile(&mut out.MPI_SOURCE, Status::EMPTY.source);
        std::ptr::write_volatile(&mut out.MPI_TAG, Status::EMPTY.tag);
    }
    crate::core::p2p::request::set_bytes(out, 0);
    out.MPI_internal[2] = 0;
}

/// [`finish_status_prefix`] by pointers, for the direct leaf of `MPI_Waitall` with statuses:
/// finishes the requests from `req` up to `end`, writing their statuses from `st` on, while
/// each is null, the shared complete send, or complete, plain and successful. Returns where
/// it stopped in both arrays (`end`: all finished). Walking by pointers keeps the loop in
/// fewer registers: the caller derives how many it finished from the returned pointers,
/// after the loop. The locked leaf keeps the index form: expressed through this function,
/// its `MPI_Waitall` with statuses measured 381 instructions per self iteration against 368.
///
/// # Safety
/// `req..end` are requests of one array, and `st` has as many statuses.
#[inline(always)]
pub(crate) unsafe fn finish_status_run(
    s: &mut VciState,
    mut req: *mut MPI_Request,
    mut st: *mut MPI_Status,
    end: *mut MPI_Request,
) -> (*mut MPI_Request, *mut MPI_Status) {
    while req != end {
        // SAFETY: `req` is before `end` and `st` pairs with it (caller's contract).
        let (h, out) = unsafe { (&mut *req, &mut *st) };
        let handle = *h as usize;
        if handle == MPI_REQUEST_NULL || handle == DONE_SEND_HANDLE {
            write_empty_status(out);
        } else if !s
            .reqs
            .free_plain_handle(handle, finishable, |r| r.status.write(out, false))
        {
            // As in `finish_status_prefix`: not finishable, or listed twice.
            break;
        }
        *h = MPI_REQUEST_NULL as MPI_Request;
        // SAFETY: at most one past the last entry of each array.
        unsafe {
            req = req.add(1);
            st = st.add(1);
        }
    }
    (req, st)
}

/// The step of [`finish_each`] for one request `handle` that is neither null nor the shared
/// complete send: frees it if it is complete, plain and successful. Whether it did.
#[inline(always)]
pub(crate) fn finish_plain(s: &mut VciState, handle: usize) -> bool {
    // False: not plain, not complete, or the same request listed twice (freed just before):
    // the slow path finishes or reports it. `finishable` checks that it owns no out-of-line
    // state (`extra`, the only field with drop glue, is `None`).
    s.reqs.free_plain_handle(handle, finishable, |_| {})
}

/// What one fast progress step on a VCI did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Polled {
    /// Nothing arrived.
    Nothing,
    /// An eager message was matched or queued as unexpected.
    Handled,
    /// Something the general progress engine must handle is waiting.
    Bail,
}

/// One fast progress step on VCI `v` for the communicators of wire context `ctx`: polls
/// that context's lane of the node transport and, when nothing arrived there and `net`, its
/// lane of the network transport ([`poll_lane`]). `Bail` when neither transport has a lane
/// (the general progress engine waits).
#[inline]
fn progress_vci(
    s: &mut VciState,
    pool: &Pool,
    v: usize,
    ctx: u32,
    locked: bool,
    net: bool,
) -> Polled {
    let serialize = locked && pool.len() > 1;
    // SAFETY: the caller holds VCI `v`'s guard (lock under MULTIPLE, or is the only thread in
    // MPI) and is not inside the slow path.
    let on_node = unsafe {
        engine_ref::with_engine(engine_ref::lane_of(ctx), serialize, |e| {
            poll_lane(s, pool, v, e)
        })
    };
    match on_node {
        Some(Polled::Nothing) if net => {}
        None if net => {}
        Some(p) => return p,
        None => return Polled::Bail,
    }
    // SAFETY: as for the node lane: this thread alone uses the network lane; `buf` and
    // `status` are forwarded from the caller.
    let remote = unsafe {
        NET_LANES.with(NET_LANES.lane_of(ctx), serialize, |e| {
            poll_lane(s, pool, v, e)
        })
    };
    remote.or(on_node).unwrap_or(Polled::Bail)
}

/// One fast progress step of lane `e` of a transport on VCI `v`: takes the lane's
/// next incoming message and, when it is a standard eager message for a communicator of this
/// VCI, matches it to a
/// plain posted receive (copying it into place) or queues it as unexpected. Anything else
/// (other kinds, other VCIs, receives needing the slow path, queued outgoing items) is left
/// in place for the general progress engine.
#[inline]
fn poll_lane<T: Transport>(s: &mut VciState, pool: &Pool, v: usize, e: &mut T) -> Polled {
    if e.has_outgoing() {
        return Polled::Bail;
    }
    let Some(m) = e.poll() else {
        return Polled::Nothing;
    };
    if m.kind != MsgKind::Eager || pool.vci_of_msg(m.env.ctx, m.env.src, m.env.tag) != v {
        e.unpoll(m);
        return Polled::Bail;
    }
    let at = match s.matcher.posted.front() {
        None => None,
        Some(p) if p.pattern.accepts(&m.env) => Some(0),
        Some(_) => s
            .matcher
            .posted
            .iter()
            .position(|p| p.pattern.accepts(&m.env)),
    };
    match at {
        Some(i) => {
            let Some(rid) = s.matcher.posted.get(i).map(|p| p.req) else {
                e.unpoll(m);
                return Polled::Bail;
            };
            let Some(r) = plain_posted(&mut s.reqs, v, rid) else {
                e.unpoll(m);
                return Polled::Bail;
            };
            let data = e.payload(&m);
            deliver(r, &m.env, data.as_ptr(), data.len());
            if crate::core::diag::stats_on() {
                stats::received(v, Proto::of(T::NETWORK, true), data.len());
            }
            e.release(m.cell);
            if i == 0 {
                s.matcher.posted.pop_front();
            } else {
                s.matcher.posted.remove(i);
            }
        }
        None => {
            let data = e.payload(&m).to_vec();
            if crate::core::diag::stats_on() {
                stats::received(v, Proto::of(T::NETWORK, true), data.len());
            }
            e.release(m.cell);
            s.matcher.unexpected.push_back(Unexpected {
                env: m.env,
                payload: Payload::Eager { data, ack: None },
            });
        }
    }
    Polled::Handled
}

/// Idle fast polls between two rounds of the general progress engine while a fast wait
/// spins (nonblocking collectives, rendezvous and queued sends keep moving).
const SLOW_ROUND_EVERY: u32 = 64;

/// Messages a fast wait handles under one hold of its VCI's guard at most.
const BURST: u32 = 32;

/// `MPI_Waitall` / `MPI_Wait` fast path for requests of one VCI that complete through
/// standard eager messages from node peers (or are complete already): progresses the node
/// transport on that VCI until every request is complete, then finishes them like
/// [`complete_all`]. Returns false, leaving the requests to the slow path, as soon as a
/// request or an incoming message needs more than that.
///
/// # Safety
/// `statuses` is null or has `reqs.len()` entries.
#[inline(never)]
pub unsafe fn wait_all(reqs: &mut [MPI_Request], statuses: *mut MPI_Status) -> bool {
    let state = runtime::fast_state();
    let locked = match state {
        READY => false,
        READY_LOCKED | READY_DELEGATED => true,
        _ => return false,
    };
    let Some(pool) = vci::pool() else {
        return false;
    };
    let special = |h: MPI_Request| h as usize == MPI_REQUEST_NULL || h as usize == DONE_SEND_HANDLE;
    let Some(first) = reqs.iter().find(|&&h| !special(h)) else {
        // SAFETY: forwarded from the caller.
        return unsafe { complete_all(reqs, statuses) };
    };
    let v = Slab::<Request>::tag_of(*first as usize);
    if v >= pool.len() {
        return false;
    }
    // Requests before `next` are known complete.
    let mut next = 0;
    // The wire context of the communicator `lane_comm` (its messages' lanes).
    let mut lane_ctx = 0;
    let mut lane_comm: Option<u32> = None;
    // The table index of request `next` once found plain and incomplete: later rounds
    // re-test it without decoding its handle again or looking for its lane.
    let mut awaited: Option<u32> = None;
    let mut idle = 0u32;
    let mut backoff = Backoff::for_peers();
    // Statistics and tracing time the wait once it has to wait.
    let mut waiting: Option<crate::core::diag::Waiting> = None;
    loop {
        let step = {
            // Under lockq, taking the lock runs the queued operations first.
            let mut g = match state {
                READY_DELEGATED => match vci::enter_queued(pool, v, vci::queued()) {
                    Some(g) => g,
                    None => return false,
                },
                READY_LOCKED => match lockq::enter(pool, v) {
                    Some(g) => g,
                    None => return false,
                },
                _ => VciGuard::enter(pool, v, false),
            };
            let s = g.state();
            // Messages handled under this hold of the guard.
            let mut handled = 0u32;
            loop {
                if let Some(index) = awaited {
                    match s.reqs.get(index) {
                        Some(r) if r.done() => {
                            next += 1;
                            awaited = None;
                        }
                        Some(r) if plain_recv(r) => {}
                        _ => return false,
                    }
                }
                while awaited.is_none() {
                    let Some(&h) = reqs.get(next) else {
                        break;
                    };
                    if special(h) {
                        next += 1;
                        continue;
                    }
                    if Slab::<Request>::tag_of(h as usize) != v {
                        return false;
                    }
                    let Some(index) = s.reqs.decode(h as usize) else {
                        return false;
                    };
                    let Some(r) = s.reqs.get(index) else {
                        return false;
                    };
                    if r.done() {
                        next += 1;
                    } else if plain_recv(r) {
                        // Its message arrives on the lane of its communicator (looked up once
                        // per communicator: requests of one usually share it).
                        let comm = r.comm;
                        if lane_comm != Some(comm) {
                            let Some(c) = s.comms.iter().find(|c| c.idx == comm) else {
                                return false;
                            };
                            lane_ctx = c.ctx;
                            lane_comm = Some(comm);
                        }
                        awaited = Some(index);
                    } else {
                        return false;
                    }
                }
                if next >= reqs.len() {
                    break None;
                }
                match progress_vci(s, pool, v, lane_ctx, locked, true) {
                    // A burst of messages is handled under one hold of the guard (the lock's
                    // two read-modify-writes, each waiting for this core's pending stores to
                    // shared memory, are paid once per burst), up to a bound that keeps
                    // other threads of the VCI from waiting long.
                    Polled::Handled => {
                        handled += 1;
                        if handled == BURST {
                            break Some(Polled::Handled);
                        }
                    }
                    Polled::Nothing if handled > 0 => break Some(Polled::Handled),
                    polled => break Some(polled),
                }
            }
        };
        match step {
            // SAFETY: forwarded from the caller.
            None => return unsafe { complete_all(reqs, statuses) },
            Some(Polled::Bail) => return false,
            Some(Polled::Handled) => {
                idle = 0;
                backoff.reset();
            }
            Some(Polled::Nothing) => {
                if waiting.is_none() {
                    waiting = crate::core::diag::Waiting::start_if_on(v);
                }
                idle += 1;
                if idle.is_multiple_of(SLOW_ROUND_EVERY)
                    && runtime::with(|rt| rt.progress()).is_err()
                {
                    return false;
                }
                backoff.idle();
            }
        }
    }
}

/// What one spin step of [`recv`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Taken {
    /// The receive's message was copied into place: the call is complete.
    Done,
    /// Another message was matched or queued, or nothing arrived.
    Polled(Polled),
}

/// `MPI_Recv` fast path for one thread in MPI at a time (state [`READY`]): when the
/// receive's VCI has no receive posted and no message waiting unmatched, it spins on the
/// lanes of the communicator (node transport, then network transport) and copies the first
/// standard eager message it accepts straight from its cell (fastbox or cell) or network
/// receive buffer into `buf`, with no request at all. Messages it does not
/// accept are matched or queued as unexpected on the way ([`poll_lane`]). Returns false
/// before it changed anything the general path would see differently (nothing taken; a
/// message it accepts but cannot take here, such as a longer one or a rendezvous, is left
/// in place), and the caller then posts a request and waits the general way.
///
/// # Safety
/// `buf` holds `count` elements of `dt` (the caller's MPI contract); `status` is null
/// (`MPI_STATUS_IGNORE`) or points to a status.
#[inline(never)]
pub unsafe fn recv(
    buf: *mut u8,
    count: i64,
    dt: usize,
    src: i32,
    tag: i32,
    comm: usize,
    status: *mut MPI_Status,
) -> bool {
    if runtime::fast_state() != READY {
        return false;
    }
    let Some(pool) = vci::pool() else {
        return false;
    };
    let Some(bytes) = contiguous_bytes(buf, count, dt) else {
        return false;
    };
    if tag < 0 && tag != MPI_ANY_TAG {
        return false;
    }
    let Some(v) = comm_vci(pool, comm, src, tag) else {
        return false;
    };
    let (pattern, lanes) = {
        let mut g = VciGuard::enter(pool, v, false);
        let s = g.state();
        let Some(c) = s.comm_mru(comm) else {
            return false;
        };
        if !(rank_in(src, c.size) || src == MPI_ANY_SOURCE)
            || ((src | tag) < 0 && crate::core::threads::spread::mode(c.ctx / CONTEXTS_PER_ID) != 0)
            || !s.matcher.posted.is_empty()
            || !s.matcher.unexpected.is_empty()
        {
            return false;
        }
        let pattern = Pattern {
            ctx: c.ctx,
            src,
            tag,
        };
        (
            pattern,
            (engine_ref::lane_of(c.ctx), NET_LANES.lane_of(c.ctx)),
        )
    };
    let mut idle = 0u32;
    let mut backoff = Backoff::for_peers();
    // Statistics and tracing time the wait once it has to wait.
    let mut waiting: Option<crate::core::diag::Waiting> = None;
    loop {
        let step = {
            let mut g = VciGuard::enter(pool, v, false);
            let s = g.state();
            // SAFETY: forwarded from the caller.
            unsafe { take_accepted(s, pool, v, lanes, &pattern, buf, bytes, status) }
        };
        match step {
            Taken::Done => return true,
            Taken::Polled(Polled::Bail) => return false,
            Taken::Polled(Polled::Handled) => {
                idle = 0;
                backoff.reset();
            }
            Taken::Polled(Polled::Nothing) => {
                if waiting.is_none() {
                    waiting = crate::core::diag::Waiting::start_if_on(v);
                }
                idle += 1;
                if idle.is_multiple_of(SLOW_ROUND_EVERY) {
                    if runtime::with(|rt| rt.progress()).is_err() {
                        return false;
                    }
                    // The general engine may have queued a message this receive accepts.
                    let mut g = VciGuard::enter(pool, v, false);
                    if !g.state().matcher.unexpected.is_empty() {
                        return false;
                    }
                }
                backoff.idle();
            }
        }
    }
}

/// One spin step of [`recv`] on VCI `v`'s state `s`: takes the next message of the
/// communicator's node lane, then (when nothing arrived there) of its network lane, into
/// `buf` when `pattern` accepts it; a message it does not accept is matched or queued from
/// its own lane ([`poll_lane`]).
///
/// # Safety
/// As for [`recv`]; only one thread is inside MPI.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn take_accepted(
    s: &mut VciState,
    pool: &Pool,
    v: usize,
    lanes: (usize, usize),
    pattern: &Pattern,
    buf: *mut u8,
    bytes: usize,
    status: *mut MPI_Status,
) -> Taken {
    // SAFETY: one thread is inside MPI (state `READY`) and it is not inside the slow path,
    // so nothing else uses the lane; `buf` and `status` are forwarded from the caller.
    let on_node = unsafe {
        engine_ref::with_engine(lanes.0, false, |e| {
            take_from(e, s, pool, v, pattern, buf, bytes, status)
        })
    };
    match on_node {
        Some(Some(Taken::Polled(Polled::Nothing))) | None => {}
        Some(Some(t)) => return t,
        // Not this receive's: `progress_vci` takes it again.
        Some(None) => return Taken::Polled(progress_vci(s, pool, v, pattern.ctx, false, false)),
    }
    // SAFETY: as for the node lane: this thread alone uses the network lane; `buf` and
    // `status` are forwarded from the caller.
    let remote = unsafe {
        NET_LANES.with(lanes.1, false, |e| {
            take_from(e, s, pool, v, pattern, buf, bytes, status)
        })
    };
    match (on_node, remote) {
        (_, Some(Some(t))) => t,
        // Not this receive's: matched or queued from the network lane only. The node lane
        // may hold a message this receive accepts by now, and that must not become
        // unexpected behind the receive (a later one would be taken before it).
        (_, Some(None)) => {
            // SAFETY: this thread alone uses the network lane (state `READY`, outside the
            // slow path).
            let polled = unsafe { NET_LANES.with(lanes.1, false, |e| poll_lane(s, pool, v, e)) };
            Taken::Polled(polled.unwrap_or(Polled::Bail))
        }
        (Some(_), None) => Taken::Polled(Polled::Nothing),
        // Neither transport has a lane (alone, no network): the general path waits.
        (None, None) => Taken::Polled(Polled::Bail),
    }
}

/// [`take_accepted`] on lane `e` of one transport: `None` when the lane's next message is
/// not this receive's (it stays in place, for the caller to match or queue).
///
/// # Safety
/// As for [`recv`].
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn take_from<T: Transport>(
    e: &mut T,
    s: &mut VciState,
    pool: &Pool,
    v: usize,
    pattern: &Pattern,
    buf: *mut u8,
    bytes: usize,
    status: *mut MPI_Status,
) -> Option<Taken> {
    if e.has_outgoing() {
        return Some(Taken::Polled(Polled::Bail));
    }
    let Some(m) = e.poll() else {
        return Some(Taken::Polled(Polled::Nothing));
    };
    if m.kind == MsgKind::Eager
        && pattern.accepts(&m.env)
        && s.matcher.posted.is_empty()
        && pool.vci_of_msg(m.env.ctx, m.env.src, m.env.tag) == v
    {
        let data = e.payload(&m);
        if data.len() <= bytes {
            // SAFETY: `buf` holds `bytes` >= `data.len()` bytes (caller's contract) and the
            // lane's buffer is not the caller's buffer.
            unsafe { crate::core::p2p::copy_bytes(data.as_ptr(), buf, data.len()) };
            let st = Status {
                source: m.env.src,
                tag: m.env.tag,
                error: MPI_SUCCESS,
                bytes: data.len() as u64,
                cancelled: false,
            };
            e.release(m.cell);
            if crate::core::diag::stats_on() {
                stats::received(v, Proto::of(T::NETWORK, true), st.bytes as usize);
            }
            // SAFETY: `status` is null or one status (caller's contract).
            unsafe { write_status(status, 0, &st) };
            return Some(Taken::Done);
        }
    }
    // Either way it stays in place. This receive's, but not takeable here (too long, not
    // eager): it must stay first in line for the general path, never become unexpected
    // behind us.
    let ours = pattern.accepts(&m.env);
    e.unpoll(m);
    ours.then_some(Taken::Polled(Polled::Bail))
}

#[inline(always)]
unsafe fn write_status(statuses: *mut MPI_Status, i: usize, st: &Status) {
    if statuses.is_null() {
        return; // MPI_STATUSES_IGNORE
    }
    // SAFETY: a non-null status array has an entry per request (caller's contract).
    st.write(unsafe { &mut *statuses.add(i) }, false);
}

impl runtime::Runtime {
    /// Makes intracommunicator `idx` (handle `handle`) known to the fast paths of its VCI
    /// (called by the slow path after it validated the communicator).
    #[inline]
    pub fn remember_fast_comm(&mut self, handle: usize, idx: u32) {
        if self.comm_index(handle) != Some(idx) {
            return; // a thread communicator's handle stands for different endpoints
        }
        let Some(c) = self.comms.get(idx) else {
            return;
        };
        if c.remote.is_some() || self.matchers.knows_comm(handle, c.ctx) {
            return;
        }
        let fc = vci::FastComm {
            handle,
            idx,
            ctx: c.ctx,
            rank: c.rank,
            size: c.size,
            peers: vci::NO_PEERS,
        };
        // Sends to other ranks need their node-local ranks (`NET_PEER | world rank` for this
        // job's ranks on other nodes) and one wire context for all.
        let transports = self.shm.is_some() || self.net_spans_job;
        let peers = (transports && c.endpoints.is_none() && c.size <= MAX_PEER_TABLE).then(|| {
            (0..c.size)
                .map(|r| match c.world_rank(r) {
                    w if w as i32 == self.world_rank => vci::NOT_LOCAL,
                    w => match self.local_of_world[w as usize] {
                        u32::MAX if (w as i32) < self.world_size => NET_PEER | w,
                        local => local,
                    },
                })
                .collect()
        });
        self.matchers.remember_comm(fc, peers);
    }
}

/// Largest communicator given a peer table (4 bytes per rank per communicator).
const MAX_PEER_TABLE: i32 = 1 << 16;

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn contiguous_bytes_accepts_only_plain_predefined_types() {
        let b = [0u8; 16];
        assert_eq!(contiguous_bytes(b.as_ptr(), 2, MPI_INT), Some(8));
        assert_eq!(contiguous_bytes(b.as_ptr(), -1, MPI_INT), None);
        assert_eq!(contiguous_bytes(std::ptr::null(), 1, MPI_INT), None);
        assert_eq!(contiguous_bytes(std::ptr::null(), 0, MPI_INT), Some(0));
        assert_eq!(
            contiguous_bytes(b.as_ptr(), 1, MPI_DOUBLE_INT),
            None,
            "has holes"
        );
        assert_eq!(
            contiguous_bytes(b.as_ptr(), 1, 0x1234_5000),
            None,
            "user type"
        );
    }

    #[test]
    fn contiguous_size_table_agrees_with_the_type_table() {
        for h in 0..0x400usize {
            let want = datatype::predefined(h)
                .filter(|t| t.size == t.extent)
                .map(|t| t.size);
            assert_eq!(datatype::contiguous_size(h), want, "handle {h:#x}");
        }
    }

    #[test]
    fn plain_receives_only() {
        let mut r = Request::new(ReqKind::Recv, 0);
        assert!(plain_recv(&r));
        // A part of a compound operation is internal.
        r.parent = 3;
        r.set_internal(true);
        assert!(!plain_recv(&r));
        for f in [
            flag::DONE,
            flag::USER_FREED,
            flag::PERSISTENT,
            flag::NONCONTIG,
        ] {
            let mut q = Request::new(ReqKind::Recv, 0);
            q.flags |= f;
            assert!(!plain_recv(&q), "flag {f:#x}");
        }
        let mut q = Request::new(ReqKind::Recv, 0);
        q.set_active(false);
        assert!(!plain_recv(&q), "inactive");
        assert!(!plain_recv(&Request::new(ReqKind::Send, 0)), "a send");
        let mut s = Request::new(ReqKind::Recv, 0);
        s.extra();
        assert!(!plain_recv(&s));
    }

    #[test]
    fn finish_status_prefix_stops_at_the_first_unfinished_request() {
        status_pass_stops_at_the_first_unfinished_request(|s, reqs, st| {
            // SAFETY: the pass gets as many statuses as requests.
            unsafe { finish_status_prefix(s, reqs, st, 0) }
        });
    }

    #[test]
    fn finish_status_run_stops_at_the_first_unfinished_request() {
        status_pass_stops_at_the_first_unfinished_request(|s, reqs, st| {
            let n = reqs.len();
            let p = reqs.as_mut_ptr();
            // SAFETY: `p..end` is the array and `st` has as many statuses.
            unsafe {
                let (stop, at) = finish_status_run(s, p, st, p.add(n));
                let done = stop.offset_from(p) as usize;
                assert_eq!(at, st.add(done), "the status pointer pairs with the stop");
                done
            }
        });
    }

    /// A status pass (`pass` over requests and as many statuses, returning how many it
    /// finished from the front) finishes null, shared and complete requests in order, writes
    /// their statuses and stops at the first it cannot finish.
    fn status_pass_stops_at_the_first_unfinished_request(
        pass: impl Fn(&mut VciState, &mut [MPI_Request], *mut MPI_Status) -> usize,
    ) {
        let mut s = VciState {
            reqs: Slab::tagged(kind::REQUEST, 0),
            matcher: Default::default(),
            comms: Vec::new(),
            peer_tables: Vec::new(),
        };
        let done = |kind, src| {
            let mut r = Request::new(kind, 0);
            r.set_done(true);
            r.status.source = src;
            r.status.tag = 7;
            r.status.bytes = 12;
            r
        };
        let (_, shared) = s.reqs.insert_handle(done(ReqKind::Send, 0)).unwrap();
        assert_eq!(shared, DONE_SEND_HANDLE);
        let (_, a) = s.reqs.insert_handle(done(ReqKind::Recv, 3)).unwrap();
        let (_, b) = s
            .reqs
            .insert_handle(Request::new(ReqKind::Recv, 0))
            .unwrap();
        let (ci, c) = s.reqs.insert_handle(done(ReqKind::Recv, 5)).unwrap();
        let null = MPI_REQUEST_NULL as MPI_Request;
        // SAFETY: an all-zero MPI_Status is a valid value of the plain C struct.
        let mut st: [MPI_Status; 4] = unsafe { std::mem::zeroed() };
        st[0].MPI_ERROR = 99;
        for x in st.iter_mut().skip(1) {
            x.MPI_internal = [-1; 5];
        }
        // `b` is not complete: `a` before it is finished, `b` and `c` are left alone.
        let mut reqs = [a as MPI_Request, b as MPI_Request, c as MPI_Request, null];
        assert_eq!(pass(&mut s, &mut reqs, st.as_mut_ptr()), 1);
        assert_eq!(reqs, [null, b as MPI_Request, c as MPI_Request, null]);
        assert_eq!(s.reqs.decode(a), None, "freed");
        assert_eq!((st[0].MPI_SOURCE, st[0].MPI_TAG), (3, 7));
        assert_eq!(st[0].MPI_ERROR, 99, "MPI_ERROR untouched on success");
        assert_eq!(s.reqs.decode(c), Some(ci), "after the stop: untouched");
        assert_eq!(st[2].MPI_SOURCE, 0, "after the stop: no status written");
        let bi = s.reqs.decode(b).unwrap();
        s.reqs.get_mut(bi).unwrap().set_done(true);
        let mut rest = [
            b as MPI_Request,
            DONE_SEND_HANDLE as MPI_Request,
            c as MPI_Request,
            null,
        ];
        assert_eq!(pass(&mut s, &mut rest, st.as_mut_ptr()), 4);
        assert_eq!(rest, [null, null, null, null]);
        assert_eq!(
            (st[1].MPI_SOURCE, st[1].MPI_TAG),
            (MPI_ANY_SOURCE, MPI_ANY_TAG)
        );
        assert_eq!((st[2].MPI_SOURCE, st[2].MPI_TAG), (5, 7));
        assert_eq!(
            (st[3].MPI_SOURCE, st[3].MPI_TAG),
            (MPI_ANY_SOURCE, MPI_ANY_TAG)
        );
        for x in [&st[1], &st[3]] {
            assert_eq!(
                crate::core::p2p::request::get_bytes(x),
                0,
                "empty: no bytes"
            );
            assert_eq!(x.MPI_internal[2], 0, "empty: not cancelled");
        }
        // The same request twice: the second entry stops the pass.
        let (_, d) = s.reqs.insert_handle(done(ReqKind::Recv, 1)).unwrap();
        let mut twice = [d as MPI_Request, d as MPI_Request];
        assert_eq!(pass(&mut s, &mut twice, st.as_mut_ptr()), 1);
        assert_eq!(twice, [null, d as MPI_Request]);
    }

    #[test]
    fn finishable_needs_done_active_plain_and_successful() {
        let mut r = Request::new(ReqKind::Recv, 0);
        assert!(!finishable(&r), "not done");
        r.set_done(true);
        assert!(finishable(&r));
        r.status.error = MPI_ERR_TRUNCATE;
        assert!(!finishable(&r), "failed");
        r.status.error = MPI_SUCCESS;
        r.set_user_freed(true);
        assert!(!finishable(&r), "freed");
        r.set_user_freed(false);
        r.set_persistent(true);
        assert!(!finishable(&r), "persistent");
        r.set_persistent(false);
        r.extra();
        assert!(!finishable(&r), "out-of-line state");
    }

    #[test]
    fn generalized_requests_stay_off_the_fast_paths() {
        // MPI_Grequest_start makes such a request; only the general path runs its callbacks.
        let mut g = Request::new(ReqKind::Generalized, 0);
        g.extra().grequest = Some(crate::core::p2p::request::Grequest {
            query: 0,
            free: 0,
            cancel: 0,
            extra_state: 0,
        });
        assert!(!plain_recv(&g));
        assert!(!finishable(&g), "incomplete");
        g.set_done(true);
        assert!(!finishable(&g), "complete");
    }

    #[test]
    fn finish_each_frees_complete_requests_and_stops_at_the_first_other() {
        let mut s = VciState {
            reqs: Slab::tagged(kind::REQUEST, 0),
            matcher: Default::default(),
            comms: Vec::new(),
            peer_tables: Vec::new(),
        };
        let done = |kind| {
            let mut r = Request::new(kind, 0);
            r.set_done(true);
            r
        };
        // Index 0 holds the shared complete send request (`DONE_SEND_HANDLE`).
        let (_, shared) = s.reqs.insert_handle(done(ReqKind::Send)).unwrap();
        assert_eq!(shared, DONE_SEND_HANDLE);
        let (_, a) = s.reqs.insert_handle(done(ReqKind::Recv)).unwrap();
        let (_, b) = s
            .reqs
            .insert_handle(Request::new(ReqKind::Recv, 0))
            .unwrap();
        let (ci, c) = s.reqs.insert_handle(done(ReqKind::Recv)).unwrap();
        let null = MPI_REQUEST_NULL as MPI_Request;
        let mut reqs = [
            a as MPI_Request,
            DONE_SEND_HANDLE as MPI_Request,
            b as MPI_Request,
            c as MPI_Request,
            null,
        ];
        // `b` is not complete: those before it are finished, it and those after it stay.
        assert!(!finish_each(&mut s, &mut reqs));
        assert_eq!(reqs[..2], [null, null]);
        assert_eq!(reqs[2..4], [b as MPI_Request, c as MPI_Request]);
        assert_eq!(s.reqs.decode(a), None, "freed");
        assert_eq!(s.reqs.decode(c), Some(ci), "untouched");
        // The same request listed twice: the second entry is left to the slow path.
        s.reqs
            .get_mut(s.reqs.decode(b).unwrap())
            .unwrap()
            .set_done(true);
        let mut twice = [b as MPI_Request, b as MPI_Request];
        assert!(!finish_each(&mut s, &mut twice));
        assert_eq!(twice, [null, b as MPI_Request]);
        let mut rest = [c as MPI_Request, null, DONE_SEND_HANDLE as MPI_Request];
        assert!(finish_each(&mut s, &mut rest));
        assert_eq!(rest, [null; 3]);
        assert_eq!(s.reqs.len(), 1, "the shared request stays");
    }

    #[test]
    fn deliver_truncates_and_reports() {
        let mut out = [0u8; 4];
        let mut r = Request::new(ReqKind::Recv, 0);
        r.buf = out.as_mut_ptr();
        r.cap = 4;
        let env = Envelope {
            ctx: 0,
            src: 2,
            tag: 9,
        };
        let data = [1u8, 2, 3, 4, 5, 6];
        deliver(&mut r, &env, data.as_ptr(), data.len());
        assert!(r.done());
        assert_eq!(out, [1, 2, 3, 4]);
        assert_eq!(r.status.error, MPI_ERR_TRUNCATE);
        assert_eq!((r.status.source, r.status.tag, r.status.bytes), (2, 9, 4));
    }
}
