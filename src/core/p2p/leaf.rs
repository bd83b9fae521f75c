//! Leaf fast paths: the narrowest and most frequent cases of `MPI_Irecv`, `MPI_Isend` and
//! `MPI_Waitall`, written so that they compile to straight code without a stack frame.
//!
//! The C entry point of each call tries its leaf first; when the leaf declines (returns
//! false, having changed nothing), the entry jumps to the call's full fast path
//! (`crate::core::p2p::fastpath`), which jumps to the slow path in turn. A leaf covers:
//! - `MPI_Irecv`: posting a receive on a communicator first in its VCI's cache, when no
//!   unexpected message waits and both the request table and the posted queue have room;
//! - `MPI_Isend` (standard mode) to oneself, matched to the oldest posted receive;
//! - `MPI_Waitall` (and `MPI_Wait`) over requests of one VCI that are complete: with
//!   `MPI_STATUSES_IGNORE`, and with statuses, which the status leaves write while they
//!   finish the requests from the front in one pass (the C entry point hands what they leave
//!   to the full path).
//!
//! What keeps them short: the way in is one load ([`crate::core::threads::vci::LeafWays`]): below
//! `MPI_THREAD_MULTIPLE` VCI 0's state itself, under the lock-based models the VCI slot of a
//! predefined communicator or of a request's VCI, whose lock the `*_locked` variants take with
//! one compare-and-swap (declining when that fails); every check comes before the first
//! change, so that a decline needs no undo (past the lock's release); no call whose result is
//! used (the one call, a `memcpy` of more than 16 bytes, comes last, after every store); no
//! guard object whose drop an unwinding call would need; no VCI that only a call finds
//! (communicators spread over the VCIs decline); and every argument is passed on untouched
//! to the full path. The C entry points hold both variants inline, so that one function
//! frame serves both ways in.

use crate::core::datatype;
use crate::core::objects::comm::CONTEXTS_PER_ID;
use crate::core::objects::slab::Slab;
use crate::core::p2p::fastpath::{
    complete_recv, finish_each, finish_plain, finish_status_one, finish_status_prefix,
    finish_status_run, plain_posted_at, plain_posted_index, rank_in, write_empty_status,
    DONE_SEND_HANDLE,
};
use crate::core::p2p::matching::{Pattern, Posted};
use crate::core::p2p::request::{ReqKind, Request};
use crate::core::threads::vci::{FastComm, LeafSlot, LeafWays, VciState};
use crate::mpi_abi::consts::*;
use crate::mpi_abi::types::{MPI_Request, MPI_Status};

/// Marks the path that declines as cold (keeps the hot path straight, its checks as
/// branches) and declines.
#[inline(always)]
fn decline<T>() -> Option<T> {
    std::hint::cold_path();
    None
}

/// [`decline`] for a leaf that answers whether it did the call.
#[inline(always)]
fn declined() -> bool {
    std::hint::cold_path();
    false
}

/// What a `*_locked` leaf did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Locked {
    /// The call is done and the VCI's lock released.
    Done,
    /// The call is done and the VCI's lock released, but a thread may be parked on it: the
    /// caller wakes it ([`LeafSlot::wake`]) out of line.
    Wake,
    /// Declined, holding nothing: the caller goes on to the full path.
    Declined,
    /// Declined with the VCI's lock still held (nothing else changed): the caller releases
    /// it out of line, then goes on to the full path. Releasing it here could call the
    /// lock's slow path, across which every argument would have to be kept in saved
    /// registers, which every other path would pay for.
    Held,
}

/// What a `*_locked` leaf that did the call returns after [`LeafSlot::release`] answered
/// `all`.
#[inline(always)]
fn released(all: bool) -> Locked {
    if all {
        Locked::Done
    } else {
        std::hint::cold_path();
        Locked::Wake
    }
}

/// [`declined`] for a `*_locked` leaf.
#[inline(always)]
fn declined_locked(held: bool) -> Locked {
    std::hint::cold_path();
    if held {
        Locked::Held
    } else {
        Locked::Declined
    }
}

/// Bytes of a standard-mode send the `MPI_Isend` leaf may take: predefined contiguous type,
/// valid count and tag, a buffer and a request pointer.
#[inline(always)]
fn send_bytes(
    buf: *const u8,
    count: i32,
    dt: usize,
    tag: i32,
    request: *mut MPI_Request,
) -> Option<usize> {
    let Some(size) = datatype::contiguous_size(dt) else {
        return decline();
    };
    if (count | tag) < 0 || buf.is_null() || request.is_null() {
        return decline();
    }
    Some(count as usize * size)
}

/// `MPI_Isend` (standard mode, predefined contiguous type) to oneself below MULTIPLE, on VCI
/// 0's state `s`, when the oldest receive posted there matches: delivers the message,
/// completes that receive and stores the shared complete send's handle in `*request`.
/// Whether it did; false changes nothing.
///
/// # Safety
/// `buf` holds `count` elements of `dt` (the caller's MPI contract); `request` is null or
/// points to a request handle; `s` came from [`crate::core::threads::vci::LeafWays::direct`].
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn isend_self_direct(
    s: &mut VciState,
    buf: *const u8,
    count: i32,
    dt: usize,
    dest: i32,
    tag: i32,
    comm: usize,
    request: *mut MPI_Request,
) -> bool {
    let Some(bytes) = send_bytes(buf, count, dt, tag, request) else {
        return false;
    };
    let Some((dst, n)) = complete_self_send::<true>(s, 0, bytes, dest, tag, comm) else {
        return false;
    };
    // SAFETY: a non-null request pointer points to the caller's request handle.
    unsafe { *request = DONE_SEND_HANDLE as MPI_Request };
    // The copy comes last, so that nothing stays live across a `memcpy` call. Nobody sees
    // the receive complete before it: this is the only thread in MPI.
    // SAFETY: the receive buffer holds n bytes, the send buffer `bytes` >= n; MPI forbids
    // overlapping send and receive buffers.
    unsafe { crate::core::p2p::copy_bytes(buf, dst, n) };
    true
}

/// [`isend_self_direct`] under the lock of the communicator's VCI, whose slot the locked way
/// in found (declines when the lock is taken).
///
/// # Safety
/// As for [`isend_self_direct`], but the caller is a C entry point (not inside the slow
/// path) and `slot` came from [`crate::core::threads::vci::LeafWays::locked_for_comm`].
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn isend_self_locked(
    slot: &LeafSlot,
    buf: *const u8,
    count: i32,
    dt: usize,
    dest: i32,
    tag: i32,
    comm: usize,
    request: *mut MPI_Request,
) -> Locked {
    let Some(bytes) = send_bytes(buf, count, dt, tag, request) else {
        return Locked::Declined;
    };
    // SAFETY: not inside the slow path (caller's contract); the state is used until the
    // `leave` below, or until the caller releases the lock after `Held`.
    let Some(s) = (unsafe { slot.enter() }) else {
        return declined_locked(false);
    };
    let Some((dst, n)) = complete_self_send::<false>(s, slot.rid_base(), bytes, dest, tag, comm)
    else {
        return declined_locked(true);
    };
    // SAFETY: a non-null request pointer points to the caller's request handle.
    unsafe { *request = DONE_SEND_HANDLE as MPI_Request };
    // Nobody sees the receive complete before the copy: the VCI's lock is held until after.
    // SAFETY: as in `isend_self_direct`.
    unsafe { crate::core::p2p::copy_bytes(buf, dst, n) };
    // SAFETY: entered above on this thread; `s` is not used again.
    released(unsafe { slot.release() })
}

/// Completes the oldest receive posted on the VCI whose request indices carry `rid_base`
/// (`v << RID_VCI_SHIFT`; 0 for VCI 0) with a message of `bytes` bytes from this
/// rank to itself (`dest`), tag `tag`, on communicator `comm` (the first of the VCI's cache),
/// if it matches and the fast paths may complete it: where the caller copies the message to
/// and how many bytes (the status says so already). `ONE_VCI`: the pool has one VCI, so
/// every request index is of VCI 0 (elsewhere a receive posted on one VCI may have moved to
/// another's queue, when its communicator's spreading was turned on, and declines).
#[inline(always)]
fn complete_self_send<const ONE_VCI: bool>(
    s: &mut VciState,
    rid_base: u32,
    bytes: usize,
    dest: i32,
    tag: i32,
    comm: usize,
) -> Option<(*mut u8, usize)> {
    let Some(c) = s.comms.first() else {
        return decline();
    };
    if c.handle != comm || c.rank != dest {
        return decline();
    }
    let Some(p) = s.matcher.posted.front() else {
        return decline();
    };
    if p.pattern.ctx != c.ctx
        || !(p.pattern.src == dest || p.pattern.src == MPI_ANY_SOURCE)
        || !(p.pattern.tag == tag || p.pattern.tag == MPI_ANY_TAG)
    {
        return decline();
    }
    let rid = p.req;
    let r = if ONE_VCI {
        plain_posted_index(&mut s.reqs, rid)
    } else {
        plain_posted_at(&mut s.reqs, rid_base, rid)
    };
    let Some(r) = r else {
        return decline();
    };
    // Before the stores to the request, so that the queue's fields need no reload.
    s.matcher.posted.pop_front();
    let n = complete_recv(r, dest, tag, bytes);
    Some((r.buf, n))
}

/// Bytes of a receive the `MPI_Irecv` leaf may take: predefined contiguous type, valid count,
/// a buffer and a request pointer (source and tag: [`post`]).
#[inline(always)]
fn recv_bytes(buf: *mut u8, count: i32, dt: usize, request: *mut MPI_Request) -> Option<usize> {
    let Some(size) = datatype::contiguous_size(dt) else {
        return decline();
    };
    if count < 0 || buf.is_null() || request.is_null() {
        return decline();
    }
    Some(count as usize * size)
}

/// Whether a receive from `src` with tag `tag`, one of them negative, may be posted by the
/// leaf on communicator `c`: wildcards (`MPI_ANY_SOURCE`, `MPI_ANY_TAG`) are, unless the
/// communicator's assertions spread it over the VCIs (the full path reports those asserted
/// away); other negative values (`MPI_PROC_NULL`, invalid ones) go to the full path.
#[inline(always)]
fn wildcards_postable(c: &FastComm, src: i32, tag: i32) -> bool {
    (rank_in(src, c.size) || src == MPI_ANY_SOURCE)
        && (tag >= 0 || tag == MPI_ANY_TAG)
        && crate::core::threads::spread::mode(c.ctx / CONTEXTS_PER_ID) == 0
}

/// `MPI_Irecv` (predefined contiguous type) below MULTIPLE, on VCI 0's state `s`, for a
/// communicator first in its cache, when no unexpected message waits: posts the receive and
/// stores its handle in `*request`. Whether it did; false changes nothing.
///
/// # Safety
/// `buf` holds `count` elements of `dt` (the caller's MPI contract); `request` is null or
/// points to a request handle; `s` came from [`crate::core::threads::vci::LeafWays::direct`].
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn irecv_post_direct(
    s: &mut VciState,
    buf: *mut u8,
    count: i32,
    dt: usize,
    src: i32,
    tag: i32,
    comm: usize,
    request: *mut MPI_Request,
) -> bool {
    let Some(bytes) = recv_bytes(buf, count, dt, request) else {
        return false;
    };
    let Some(h) = post(s, 0, buf, bytes, src, tag, comm) else {
        return false;
    };
    // SAFETY: a non-null request pointer points to the caller's request handle.
    unsafe { *request = h as MPI_Request };
    true
}

/// [`irecv_post_direct`] under the lock of the communicator's VCI, whose slot the locked
/// way in found (declines when the lock is taken).
///
/// # Safety
/// As for [`irecv_post_direct`], but the caller is a C entry point (not inside the slow
/// path) and `slot` came from [`crate::core::threads::vci::LeafWays::locked_for_comm`].
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub unsafe fn irecv_post_locked(
    slot: &LeafSlot,
    buf: *mut u8,
    count: i32,
    dt: usize,
    src: i32,
    tag: i32,
    comm: usize,
    request: *mut MPI_Request,
) -> Locked {
    let Some(bytes) = recv_bytes(buf, count, dt, request) else {
        return Locked::Declined;
    };
    // SAFETY: not inside the slow path (caller's contract); the state is used until the
    // `leave` below, or until the caller releases the lock after `Held`.
    let Some(s) = (unsafe { slot.enter() }) else {
        return declined_locked(false);
    };
    let Some(h) = post(s, slot.rid_base(), buf, bytes, src, tag, comm) else {
        return declined_locked(true);
    };
    // SAFETY: a non-null request pointer points to the caller's request handle.
    unsafe { *request = h as MPI_Request };
    // SAFETY: entered above on this thread; `s` is not used again.
    released(unsafe { slot.release() })
}

/// The body of [`irecv_post_direct`] on the state of the VCI whose request indices carry
/// `rid_base`: the new request's handle. Every check
/// comes before the first change.
#[inline(always)]
fn post(
    s: &mut VciState,
    rid_base: u32,
    buf: *mut u8,
    bytes: usize,
    src: i32,
    tag: i32,
    comm: usize,
) -> Option<usize> {
    if !s.matcher.unexpected.is_empty() {
        return decline();
    }
    let Some(c) = s.comms.first() else {
        return decline();
    };
    if c.handle != comm {
        return decline();
    }
    // A source and a tag that are both >= 0 need one compare; wildcards and invalid values
    // take the branch.
    if (src | tag) < 0 {
        if !wildcards_postable(c, src, tag) {
            return decline();
        }
    } else if !rank_in(src, c.size) {
        return decline();
    }
    if s.reqs.next_reused().is_none() {
        return decline();
    }
    let Some(spot) = s.matcher.posted.vacant_back() else {
        return decline();
    };
    // Nothing below declines (the checks above leave room in both tables).
    let mut r = Request::new(ReqKind::Recv, c.idx);
    r.buf = buf;
    r.cap = bytes;
    let (index, handle) = s.reqs.insert_reused(r)?;
    *spot = Posted {
        pattern: Pattern {
            ctx: c.ctx,
            src,
            tag,
        },
        req: rid_base | index,
    };
    s.matcher.posted.count_back();
    Some(handle)
}

/// `MPI_Waitall` with `MPI_STATUSES_IGNORE` below MULTIPLE, on VCI 0's state `s`, over
/// requests (and null or shared complete ones) that are all complete, plain and successful:
/// frees them and writes `MPI_REQUEST_NULL`. Whether it finished them all; when false, those
/// it freed (from the front) read `MPI_REQUEST_NULL`, which the full path takes as complete.
///
/// # Safety
/// `reqs` is null or has `count` entries; `s` came from [`crate::core::threads::vci::LeafWays::direct`].
#[inline(always)]
pub unsafe fn waitall_done_direct(
    s: &mut VciState,
    count: i32,
    reqs: *mut MPI_Request,
    statuses: *mut MPI_Status,
) -> bool {
    if count <= 0 || reqs.is_null() || !statuses.is_null() {
        return declined();
    }
    // SAFETY: the caller passes `count` requests.
    let reqs = unsafe { std::slice::from_raw_parts_mut(reqs, count as usize) };
    finish_each(s, reqs)
}

/// [`waitall_done_direct`] with an array of statuses, which it writes
/// ([`finish_status_run`]): finishes requests from the front of `reqs..end` while each is
/// null, the shared complete send, or complete, plain and successful. Returns where it
/// stopped in both arrays; `end` when it finished them all. The C entry point hands the rest
/// to the full path.
///
/// # Safety
/// `reqs..end` is the caller's request array (at least one entry), `statuses` has as many
/// statuses; `s` came from [`crate::core::threads::vci::LeafWays::direct`].
#[inline(always)]
pub unsafe fn waitall_statuses_direct(
    s: &mut VciState,
    reqs: *mut MPI_Request,
    statuses: *mut MPI_Status,
    end: *mut MPI_Request,
) -> (*mut MPI_Request, *mut MPI_Status) {
    // SAFETY: forwarded from the caller.
    unsafe { finish_status_run(s, reqs, statuses, end) }
}

/// [`waitall_done_direct`] under the lock of the VCI of the first request that is neither
/// null nor the shared complete send, whose slot the locked way in `ways` holds (declines
/// when the lock is taken, or when that way is closed). Returns the slot with [`Locked::Wake`] and [`Locked::Held`].
/// Requests finished before a decline read `MPI_REQUEST_NULL`, as for
/// [`waitall_done_direct`].
///
/// # Safety
/// `reqs` is null or has `count` entries; the caller is a C entry point (not inside the slow
/// path).
#[inline(always)]
pub unsafe fn waitall_done_locked(
    ways: &LeafWays,
    count: i32,
    reqs: *mut MPI_Request,
    statuses: *mut MPI_Status,
) -> (Locked, Option<&'static LeafSlot>) {
    // The checks of `waitall_done_direct` in another order: the compiler would otherwise
    // hoist the two copies into one ahead of the way test, as a branch-free sequence that
    // costs the direct leaf three instructions.
    if !statuses.is_null() || count <= 0 || reqs.is_null() {
        return (declined_locked(false), None);
    }
    // SAFETY: the caller passes `count` requests.
    let reqs = unsafe { std::slice::from_raw_parts_mut(reqs, count as usize) };
    // Null and shared complete requests before the first other one are complete: done
    // without a lock.
    let mut rest = reqs.iter_mut();
    let first = loop {
        let Some(h) = rest.next() else {
            return (Locked::Done, None);
        };
        let handle = *h as usize;
        if handle != MPI_REQUEST_NULL && handle != DONE_SEND_HANDLE {
            break h;
        }
        *h = MPI_REQUEST_NULL as MPI_Request;
    };
    let handle = *first as usize;
    let Some(slot) = ways.locked_for_vci(Slab::<Request>::tag_of(handle)) else {
        return (declined_locked(false), None);
    };
    // SAFETY: not inside the slow path (caller's contract); the state is used until the
    // `release` below, or until the caller releases the lock after `Held`.
    let Some(s) = (unsafe { slot.enter() }) else {
        return (declined_locked(false), None);
    };
    if !finish_plain(s, handle) {
        return (declined_locked(true), Some(slot));
    }
    *first = MPI_REQUEST_NULL as MPI_Request;
    if !finish_each(s, rest.into_slice()) {
        return (declined_locked(true), Some(slot));
    }
    // SAFETY: entered above on this thread; `s` is not used again.
    (released(unsafe { slot.release() }), Some(slot))
}

/// [`waitall_done_locked`] with a status array: null and shared complete requests before
/// the first other one without a lock, then under the lock of that one's VCI
/// [`finish_status_prefix`] over the rest. Returns what it did and how many requests it
/// finished from the front (`count`: all); with [`Locked::Held`] the caller releases the
/// slot's lock, then hands the rest to the full path.
///
/// # Safety
/// As for [`waitall_done_locked`]; `statuses` has `count` entries (so it is not null).
#[inline(always)]
pub unsafe fn waitall_statuses_locked(
    ways: &LeafWays,
    count: i32,
    reqs: *mut MPI_Request,
    statuses: *mut MPI_Status,
) -> (Locked, Option<&'static LeafSlot>, usize) {
    // `statuses` is not null: its callers take `MPI_STATUSES_IGNORE` elsewhere.
    debug_assert!(!statuses.is_null());
    if count <= 0 || reqs.is_null() {
        return (declined_locked(false), None, 0);
    }
    // SAFETY: the caller passes `count` requests.
    let reqs = unsafe { std::slice::from_raw_parts_mut(reqs, count as usize) };
    let mut front = 0;
    let handle = loop {
        let Some(h) = reqs.get_mut(front) else {
            return (Locked::Done, None, front);
        };
        let handle = *h as usize;
        if handle != MPI_REQUEST_NULL && handle != DONE_SEND_HANDLE {
            break handle;
        }
        // SAFETY: entry `front` exists (caller's contract).
        write_empty_status(unsafe { &mut *statuses.add(front) });
        *h = MPI_REQUEST_NULL as MPI_Request;
        front += 1;
    };
    let Some(slot) = ways.locked_for_vci(Slab::<Request>::tag_of(handle)) else {
        return (declined_locked(false), None, front);
    };
    // SAFETY: not inside the slow path (caller's contract); the state is used until the
    // `release` below, or until the caller releases the lock after `Held`.
    let Some(s) = (unsafe { slot.enter() }) else {
        return (declined_locked(false), None, front);
    };
    // The request found above first (without loading and testing its handle again), then
    // the rest.
    // SAFETY: entry `front` exists (caller's contract).
    if !finish_status_one(s, handle, unsafe { &mut *statuses.add(front) }) {
        return (declined_locked(true), Some(slot), front);
    }
    reqs[front] = MPI_REQUEST_NULL as MPI_Request;
    // SAFETY: forwarded from the caller; the first `front + 1` entries are finished.
    let done = unsafe { finish_status_prefix(s, reqs, statuses, front + 1) };
    if done != reqs.len() {
        return (declined_locked(true), Some(slot), done);
    }
    // SAFETY: entered above on this thread; `s` is not used again.
    (released(unsafe { slot.release() }), Some(slot), done)
}
