//! Leaf fast paths: the narrowest and most frequent cases of `MPI_Irecv`, `MPI_Isend` and
//! `MPI_Waitall`, written so that they compile to straight code without a stack frame.
//!
//! The C entry point of each call tries its leaf first; when the leaf declines (returns
//! false, having changed nothing), the entry jumps to the call's full fast path
//! (`crate::core::fastpath`), which jumps to the slow path in turn. A leaf covers:
//! - `MPI_Irecv`: posting a receive on a communicator first in its VCI's cache, when no
//!   unexpected message waits and both the request table and the posted queue have room;
//! - `MPI_Isend` (standard mode) to oneself, matched to the oldest posted receive;
//! - `MPI_Waitall` with `MPI_STATUSES_IGNORE` over requests of one VCI that are complete.
//!
//! What keeps them short: below `MPI_THREAD_MULTIPLE` the way in is one load
//! ([`vci::direct_state`]); every check comes before the first change, so that a decline
//! needs no undo; no call whose result is used (the one call, a `memcpy` of more than 16
//! bytes, comes last, after every store); no guard object whose drop an unwinding call would
//! need; no VCI that only a call finds (communicators spread over the VCIs decline); and
//! every argument is passed on untouched to the full path. The `*_locked` variants serve
//! `MPI_THREAD_MULTIPLE` under the lock-based models: they take the VCI's lock with one
//! compare-and-swap and decline when that fails; the entry points keep them in functions of
//! their own, so that their lock calls do not cost the direct variants registers.

use crate::abi::consts::*;
use crate::abi::types::{MPI_Request, MPI_Status};
use crate::core::comm::CONTEXTS_PER_ID;
use crate::core::datatype;
use crate::core::fastpath::{finish_each, plain_posted, DONE_SEND_HANDLE};
use crate::core::matching::{Pattern, Posted};
use crate::core::request::{ReqKind, Request, Status};
use crate::core::slab::Slab;
use crate::core::vci::{self, Pool, VciState, RID_VCI_SHIFT};

/// The VCI of communicator handle `comm` when known without a call (communicators spread
/// over the VCIs by their assertions are not).
#[inline(always)]
fn leaf_vci(pool: &Pool, comm: usize) -> Option<usize> {
    if pool.len() == 1 {
        Some(0) // every communicator; the VCI's cache still validates `comm`
    } else if comm == MPI_COMM_WORLD {
        Some(pool.vci_of_ctx(0))
    } else if comm == MPI_COMM_SELF {
        Some(pool.vci_of_ctx(CONTEXTS_PER_ID))
    } else {
        vci::comm_hint(comm).filter(|&v| v < pool.len())
    }
}

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
/// points to a request handle; `s` came from [`vci::direct_state`].
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
    let Some((dst, n)) = complete_self_send(s, 0, bytes, dest, tag, comm) else {
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

/// [`isend_self_direct`] under `MPI_THREAD_MULTIPLE`, under the lock of the communicator's
/// VCI (declines when it is taken).
///
/// # Safety
/// As for [`isend_self_direct`], but the caller is a C entry point (not inside the slow
/// path) that found the runtime `READY_LOCKED`.
#[inline(always)]
pub unsafe fn isend_self_locked(
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
    let Some(pool) = vci::pool() else {
        return false;
    };
    let Some(v) = leaf_vci(pool, comm) else {
        return false;
    };
    // SAFETY: not inside the slow path (caller's contract); the state is used until the
    // `leaf_leave` below.
    let Some(s) = (unsafe { pool.leaf_enter::<true>(v) }) else {
        return false;
    };
    let Some((dst, n)) = complete_self_send(s, v, bytes, dest, tag, comm) else {
        // SAFETY: entered above on this thread; `s` is not used again.
        unsafe { pool.leaf_leave::<true>(v) };
        return false;
    };
    // SAFETY: a non-null request pointer points to the caller's request handle.
    unsafe { *request = DONE_SEND_HANDLE as MPI_Request };
    // Nobody sees the receive complete before the copy: the VCI's lock is held until after.
    // SAFETY: as in `isend_self_direct`.
    unsafe { crate::core::p2p::copy_bytes(buf, dst, n) };
    // SAFETY: entered above on this thread; `s` is not used again.
    unsafe { pool.leaf_leave::<true>(v) };
    true
}

/// Completes the oldest receive posted on VCI `v` with a message of `bytes` bytes from this
/// rank to itself (`dest`), tag `tag`, on communicator `comm` (the first of the VCI's cache),
/// if it matches and the fast paths may complete it: where the caller copies the message to
/// and how many bytes (the status says so already).
#[inline(always)]
fn complete_self_send(
    s: &mut VciState,
    v: usize,
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
    let Some(r) = plain_posted(&mut s.reqs, v, rid) else {
        return decline();
    };
    // Before the stores to the request, so that the queue's fields need no reload.
    s.matcher.posted.pop_front();
    let n = bytes.min(r.cap);
    r.status = Status {
        source: dest,
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
    Some((r.buf, n))
}

/// Bytes of a receive the `MPI_Irecv` leaf may take: predefined contiguous type, valid count
/// and tag, a buffer and a request pointer.
#[inline(always)]
fn recv_bytes(
    buf: *mut u8,
    count: i32,
    dt: usize,
    tag: i32,
    request: *mut MPI_Request,
) -> Option<usize> {
    let Some(size) = datatype::contiguous_size(dt) else {
        return decline();
    };
    if count < 0 || (tag < 0 && tag != MPI_ANY_TAG) || buf.is_null() || request.is_null() {
        return decline();
    }
    Some(count as usize * size)
}

/// `MPI_Irecv` (predefined contiguous type) below MULTIPLE, on VCI 0's state `s`, for a
/// communicator first in its cache, when no unexpected message waits: posts the receive and
/// stores its handle in `*request`. Whether it did; false changes nothing.
///
/// # Safety
/// `buf` holds `count` elements of `dt` (the caller's MPI contract); `request` is null or
/// points to a request handle; `s` came from [`vci::direct_state`].
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
    let Some(bytes) = recv_bytes(buf, count, dt, tag, request) else {
        return false;
    };
    let Some(h) = post(s, 0, buf, bytes, src, tag, comm) else {
        return false;
    };
    // SAFETY: a non-null request pointer points to the caller's request handle.
    unsafe { *request = h as MPI_Request };
    true
}

/// [`irecv_post_direct`] under `MPI_THREAD_MULTIPLE`, under the lock of the communicator's
/// VCI (declines when it is taken).
///
/// # Safety
/// As for [`irecv_post_direct`], but the caller is a C entry point (not inside the slow
/// path) that found the runtime `READY_LOCKED`.
#[inline(always)]
pub unsafe fn irecv_post_locked(
    buf: *mut u8,
    count: i32,
    dt: usize,
    src: i32,
    tag: i32,
    comm: usize,
    request: *mut MPI_Request,
) -> bool {
    let Some(bytes) = recv_bytes(buf, count, dt, tag, request) else {
        return false;
    };
    let Some(pool) = vci::pool() else {
        return false;
    };
    let Some(v) = leaf_vci(pool, comm) else {
        return false;
    };
    // SAFETY: not inside the slow path (caller's contract); the state is used until the
    // `leaf_leave` below.
    let Some(s) = (unsafe { pool.leaf_enter::<true>(v) }) else {
        return false;
    };
    let posted = post(s, v, buf, bytes, src, tag, comm);
    if let Some(h) = posted {
        // SAFETY: a non-null request pointer points to the caller's request handle.
        unsafe { *request = h as MPI_Request };
    }
    // SAFETY: entered above on this thread; `s` is not used again.
    unsafe { pool.leaf_leave::<true>(v) };
    posted.is_some()
}

/// The body of [`irecv_post_direct`] on VCI `v`'s state: the new request's handle. Every check
/// comes before the first change.
#[inline(always)]
fn post(
    s: &mut VciState,
    v: usize,
    buf: *mut u8,
    bytes: usize,
    src: i32,
    tag: i32,
    comm: usize,
) -> Option<usize> {
    let Some(c) = s.comms.first() else {
        return decline();
    };
    if c.handle != comm || !s.matcher.unexpected.is_empty() {
        return decline();
    }
    if !((src as u32) < (c.size as u32) || src == MPI_ANY_SOURCE) {
        return decline();
    }
    // Wildcards on a communicator spread by its assertions: the full path (which reports
    // those asserted away).
    if (src | tag) < 0 && crate::core::spread::mode(c.ctx / CONTEXTS_PER_ID) != 0 {
        return decline();
    }
    if s.reqs.next_reused().is_none() || s.matcher.posted.len() >= s.matcher.posted.capacity() {
        return decline();
    }
    // Nothing below declines (the checks above leave room for both inserts).
    let pattern = Pattern {
        ctx: c.ctx,
        src,
        tag,
    };
    let mut r = Request::new(ReqKind::Recv, c.idx);
    r.buf = buf;
    r.cap = bytes;
    let (index, handle) = s.reqs.insert_reused(r)?;
    s.matcher.posted.push_back_within(Posted {
        pattern,
        req: ((v as u32) << RID_VCI_SHIFT) | index,
    });
    Some(handle)
}

/// `MPI_Waitall` with `MPI_STATUSES_IGNORE` below MULTIPLE, on VCI 0's state `s`, over
/// requests (and null or shared complete ones) that are all complete, plain and successful:
/// frees them and writes `MPI_REQUEST_NULL`. Whether it finished them all; when false, those
/// it freed (from the front) read `MPI_REQUEST_NULL`, which the full path takes as complete.
///
/// # Safety
/// `reqs` is null or has `count` entries; `s` came from [`vci::direct_state`].
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

/// [`waitall_done_direct`] under `MPI_THREAD_MULTIPLE`, under the lock of the VCI of the
/// first request (declines when it is taken).
///
/// # Safety
/// `reqs` is null or has `count` entries; the caller is a C entry point (not inside the
/// slow path) that found the runtime `READY_LOCKED`.
#[inline(always)]
pub unsafe fn waitall_done_locked(
    count: i32,
    reqs: *mut MPI_Request,
    statuses: *mut MPI_Status,
) -> bool {
    if count <= 0 || reqs.is_null() || !statuses.is_null() {
        return declined();
    }
    // SAFETY: the caller passes `count` requests.
    let reqs = unsafe { std::slice::from_raw_parts_mut(reqs, count as usize) };
    let special = |h: MPI_Request| h as usize == MPI_REQUEST_NULL || h as usize == DONE_SEND_HANDLE;
    let Some(first) = reqs.iter().find(|&&h| !special(h)) else {
        return declined(); // null and shared complete requests only: the full path
    };
    let Some(pool) = vci::pool() else {
        return false;
    };
    let v = Slab::<Request>::tag_of(*first as usize);
    // SAFETY: not inside the slow path (caller's contract); the state is used until the
    // `leaf_leave` below.
    let Some(s) = (unsafe { pool.leaf_enter::<true>(v) }) else {
        return false;
    };
    let all = finish_each(s, reqs);
    // SAFETY: entered above on this thread; `s` is not used again.
    unsafe { pool.leaf_leave::<true>(v) };
    all
}
