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

mod wait;
pub use wait::*;

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
        } else if !finish_status_one(s, handle, out) {
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
mod tests;
