//! Point-to-point communication: the C functions.

use super::grequest;
use super::util::out;
use crate::abi::consts::*;
use crate::abi::entry::{self, Code, ErrObj, Leaf};
use crate::abi::types::*;
use crate::core::datatype;
use crate::core::error::{fail, MpiError, MpiResult};
pub(crate) use crate::core::p2p::args::buffer_bytes;
use crate::core::p2p::args::{recv_args, send_args};
use crate::core::p2p::bsend::{self, Scope, Space};
use crate::core::p2p::completion::{finish, ready, Fin};
use crate::core::p2p::fastpath;
use crate::core::p2p::leaf::{self, Locked};
use crate::core::p2p::matching::{Pattern, Payload};
use crate::core::p2p::request::{self, PersistentOp, ReqKind, SendMode, Status, DONE_SEND};
use crate::core::p2p::{check_recv_tag, check_source, check_spread, RecvArgs, SendArgs};
use crate::core::runtime::{self, Runtime};
use crate::core::threads::vci;
use core::ffi::{c_int, c_void};

#[inline(always)]
fn request_index(rt: &Runtime, h: MPI_Request) -> MpiResult<u32> {
    match rt.reqs.decode(h as usize) {
        Some(i) => Ok(i),
        None => fail(
            MPI_ERR_REQUEST,
            format!("invalid request handle {:#x}", h as usize),
        ),
    }
}

/// The error of a completed operation, directed at its communicator's handler.
#[cold]
fn status_error(rt: &Runtime, comm: u32, st: &Status) -> MpiError {
    let msg = match st.error {
        MPI_ERR_TRUNCATE => format!("message truncated: the receive buffer holds {} bytes but a longer message from rank {} (tag {}) arrived", st.bytes, st.source, st.tag),
        e => format!("operation failed with error class {e}"),
    };
    MpiError::new(st.error, msg).on(ErrObj::Comm(rt.comm_handle(comm)))
}

#[inline]
unsafe fn write_status(status: *mut MPI_Status, st: &Status) {
    // SAFETY: MPI_STATUS_IGNORE is NULL; any other pointer is the caller's status.
    if let Some(s) = unsafe { status.as_mut() } {
        st.write(s, false);
    }
}

// ---------------------------------------------------------------------------------------------
// blocking and nonblocking send/recv

/// Starts a send and returns its request index and handle.
#[inline(always)]
unsafe fn isend(
    buf: *const c_void,
    n: i64,
    dt: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    mode: SendMode,
) -> MpiResult<(u32, usize)> {
    // SAFETY: forwarded from the caller.
    if let Some(h) = unsafe { isend_fast(buf, n, dt, dest, tag, comm, mode) } {
        return Ok((DONE_SEND, h));
    }
    isend_general(buf, n, dt, dest, tag, comm, mode, false)
}

/// The fast path of [`isend`]: the handle of the complete send when it took it.
///
/// # Safety
/// The caller's buffer holds `n` elements of `dt` (MPI contract).
#[inline(always)]
unsafe fn isend_fast(
    buf: *const c_void,
    n: i64,
    dt: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    mode: SendMode,
) -> Option<usize> {
    if mode != SendMode::Standard {
        return None;
    }
    // SAFETY: forwarded from the caller.
    unsafe { fastpath::isend(buf as *const u8, n, dt as usize, dest, tag, comm as usize) }
}

/// [`isend`] without the fast path. `waits`: the caller waits for the send right after and
/// publishes so before the request to send leaves (see `send_blocking`); its wait withdraws
/// the mark ([`runtime::wait_for_published`]).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn isend_general(
    buf: *const c_void,
    n: i64,
    dt: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    mode: SendMode,
    waits: bool,
) -> MpiResult<(u32, usize)> {
    runtime::with(|rt| {
        let a = send_args(rt, buf, n, dt, dest, tag, comm, mode)?;
        rt.remember_fast_comm(comm as usize, a.comm);
        let rid = rt.new_request(ReqKind::Send, a.comm)?;
        start_send_waiting(rt, rid, a, waits)?;
        Ok((rid, rt.reqs.handle(rid)))
    })
}

/// Starts send `rid`, having published "waiting" first when `waits` (withdrawn again if the
/// start fails, since no wait follows then).
#[inline(always)]
fn start_send_waiting(rt: &mut Runtime, rid: u32, a: SendArgs, waits: bool) -> MpiResult<()> {
    if waits {
        rt.set_waiting(true);
    }
    let started = rt.start_send(rid, a);
    if waits && started.is_err() {
        rt.set_waiting(false);
    }
    started
}

#[inline(always)]
unsafe fn irecv(
    buf: *mut c_void,
    n: i64,
    dt: MPI_Datatype,
    src: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> MpiResult<(u32, usize)> {
    // SAFETY: the caller's buffer holds `n` elements of `dt` (MPI contract).
    let fast = unsafe { fastpath::irecv(buf as *mut u8, n, dt as usize, src, tag, comm as usize) };
    if let Some(started) = fast {
        return Ok(started);
    }
    irecv_general(buf, n, dt, src, tag, comm)
}

/// [`irecv`] without the fast path.
#[inline(always)]
fn irecv_general(
    buf: *mut c_void,
    n: i64,
    dt: MPI_Datatype,
    src: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> MpiResult<(u32, usize)> {
    runtime::with(|rt| {
        let a = recv_args(rt, buf, n, dt, src, tag, comm)?;
        rt.remember_fast_comm(comm as usize, a.comm);
        let rid = rt.new_request(ReqKind::Recv, a.comm)?;
        rt.start_recv(rid, a)?;
        Ok((rid, rt.reqs.handle(rid)))
    })
}

/// Waits for internal request `rid`, frees it, writes its status to `status` (unless
/// `MPI_STATUS_IGNORE`) and turns an error in it into the call's error.
unsafe fn wait_free_into(rid: u32, status: *mut MPI_Status) -> MpiResult<Status> {
    // SAFETY: forwarded from the caller.
    unsafe { wait_free_as(rid, status, false) }
}

/// Waits for send `rid`, started with "waiting" published (`isend_general(.., true)`), frees
/// it and returns its status (an error in the status becomes the call's error).
fn wait_free_published(rid: u32) -> MpiResult<Status> {
    // SAFETY: a null status pointer means MPI_STATUS_IGNORE.
    unsafe { wait_free_as(rid, std::ptr::null_mut(), true) }
}

/// [`wait_free_into`], through [`runtime::wait_for_published`] when `published`.
///
/// # Safety
/// As for [`wait_free_into`].
unsafe fn wait_free_as(rid: u32, status: *mut MPI_Status, published: bool) -> MpiResult<Status> {
    if rid == DONE_SEND {
        // Never published: only the fast path returns it.
        write_status(status, &Status::EMPTY);
        return Ok(Status::EMPTY);
    }
    let step = |rt: &mut Runtime| {
        let r = rt.reqs.get(rid).expect("live request");
        if !r.done() {
            return Ok(None);
        }
        let out = (r.status, r.comm);
        rt.reqs.free(rid);
        Ok(Some(out))
    };
    let (st, comm) = if published {
        runtime::wait_for_published(step)
    } else {
        runtime::wait_for(step)
    }?;
    write_status(status, &st);
    if st.error != MPI_SUCCESS {
        return Err(runtime::with(|rt| Ok(status_error(rt, comm, &st)))?);
    }
    Ok(st)
}

#[inline]
unsafe fn send_blocking(
    buf: *const c_void,
    n: i64,
    dt: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    mode: SendMode,
) -> MpiResult<()> {
    // SAFETY: forwarded from the caller.
    if unsafe { isend_fast(buf, n, dt, dest, tag, comm, mode) }.is_some() {
        return Ok(()); // complete: the fast path finishes only eager sends
    }
    // A blocking send waits for its message: it says so before its request to send leaves,
    // so that a receiver matching it at once streams the message through the cells with us
    // instead of copying it alone.
    let (rid, _) = isend_general(buf, n, dt, dest, tag, comm, mode, true)?;
    wait_free_published(rid).map(|_| ())
}

#[inline]
unsafe fn recv_blocking(
    buf: *mut c_void,
    n: i64,
    dt: MPI_Datatype,
    src: c_int,
    tag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    // SAFETY: the caller's buffer holds `n` elements of `dt`; `status` is null or one status.
    if unsafe {
        fastpath::recv(
            buf as *mut u8,
            n,
            dt as usize,
            src,
            tag,
            comm as usize,
            status,
        )
    } {
        return Ok(());
    }
    let (rid, handle) = irecv(buf, n, dt, src, tag, comm)?;
    let mut h = handle as MPI_Request;
    // SAFETY: `h` is one request; `status` is null or one status.
    if unsafe { fastpath::wait_all(std::slice::from_mut(&mut h), status) } {
        return Ok(());
    }
    wait_free_into(rid, status).map(|_| ())
}

#[inline(always)]
unsafe fn set_request(
    request: *mut MPI_Request,
    started: MpiResult<(u32, usize)>,
) -> MpiResult<()> {
    let slot = out(request, "request")?;
    *slot = started?.1 as MPI_Request;
    Ok(())
}

/// Like [`set_request`] for operations that return only a request index.
#[inline]
unsafe fn set_request_index(request: *mut MPI_Request, rid: MpiResult<u32>) -> MpiResult<()> {
    let slot = out(request, "request")?;
    let rid = rid?;
    *slot = runtime::with(|rt| Ok(rt.reqs.handle(rid)))? as MPI_Request;
    Ok(())
}

/// `MPI_I{,s,r,b}send`: the fast path inline, the rest out of line.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) unsafe fn isend_entry(
    buf: *const c_void,
    n: i64,
    dt: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    mode: SendMode,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    if mode == SendMode::Standard && !request.is_null() {
        // SAFETY: the caller's buffer holds `n` elements of `dt` (MPI contract).
        let fast =
            unsafe { fastpath::isend(buf as *const u8, n, dt as usize, dest, tag, comm as usize) };
        if let Some(h) = fast {
            // SAFETY: a non-null request pointer points to the caller's request.
            unsafe { *request = h as MPI_Request };
            return Ok(());
        }
    }
    isend_slow(buf, n, dt, dest, tag, comm, mode, request)
}

/// Nonblocking sends beyond the fast path (and every error).
#[allow(clippy::too_many_arguments)]
#[cold]
#[inline(never)]
unsafe fn isend_slow(
    buf: *const c_void,
    n: i64,
    dt: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    mode: SendMode,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    let slot = out(request, "request")?;
    *slot = isend_general(buf, n, dt, dest, tag, comm, mode, false)?.1 as MPI_Request;
    Ok(())
}

macro_rules! send_fns {
    ($($blocking:ident, $blocking_c:ident, $nonblocking_c:ident => $mode:expr;)*) => {$(
        pub(crate) unsafe fn $blocking(buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm) -> MpiResult<()> {
            send_blocking(buf, count as i64, datatype, dest, tag, comm, $mode)
        }
        pub(crate) unsafe fn $blocking_c(buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm) -> MpiResult<()> {
            send_blocking(buf, count, datatype, dest, tag, comm, $mode)
        }
        pub(crate) unsafe fn $nonblocking_c(buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> MpiResult<()> {
            set_request(request, isend(buf, count, datatype, dest, tag, comm, $mode))
        }
    )*};
}

send_fns! {
    MPI_Send, MPI_Send_c, MPI_Isend_c => SendMode::Standard;
    MPI_Ssend, MPI_Ssend_c, MPI_Issend_c => SendMode::Sync;
    MPI_Rsend, MPI_Rsend_c, MPI_Irsend_c => SendMode::Ready;
    MPI_Bsend, MPI_Bsend_c, MPI_Ibsend_c => SendMode::Buffered;
}

macro_rules! isend_fns {
    ($($nonblocking:ident => $mode:expr;)*) => {$(
        pub(crate) unsafe fn $nonblocking(buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> MpiResult<()> {
            isend_slow(buf, count as i64, datatype, dest, tag, comm, $mode, request)
        }
    )*};
}

isend_fns! {
    MPI_Issend => SendMode::Sync;
    MPI_Irsend => SendMode::Ready;
    MPI_Ibsend => SendMode::Buffered;
}

/// The C entry point of a call on a communicator with a leaf (`MPI_Isend`, `MPI_Irecv`): the
/// direct or the locked leaf inline, then everything else in its `*_fast_entry`, which the
/// compiled entry point reaches by a jump; with the `*_release_entry` its locked leaf jumps
/// to when it declines holding the VCI's lock ([`leaf::Locked::Held`]), which releases it
/// and goes on to the same `*_fast_entry`.
macro_rules! comm_leaf_entry {
    (
        $(#[$doc:meta])*
        fn $name:ident($buf:ident: $buf_ty:ty => $leaf_buf:ty, $peer:ident);
        leaves: $direct:path, $locked:path;
        release: $release:ident;
        fast: $fast:ident;
    ) => {
        $(#[$doc])*
        #[inline(always)]
        pub(crate) unsafe fn $name(
            $buf: $buf_ty,
            count: c_int,
            datatype: MPI_Datatype,
            $peer: c_int,
            tag: c_int,
            comm: MPI_Comm,
            request: *mut MPI_Request,
        ) -> Leaf {
            let ways = vci::leaf_ways();
            let (b, dt, c) = ($buf as $leaf_buf, datatype as usize, comm as usize);
            // SAFETY: a C entry point, which drops the state before it returns; the caller's
            // buffer holds `count` elements of `datatype` (MPI contract); the request pointer
            // is null or points to the caller's request; the state or slot came from the ways
            // in.
            let done = unsafe {
                let way = ways.way();
                if let Some(s) = way.direct() {
                    $direct(s, b, count, dt, $peer, tag, c, request)
                } else if way.locked() {
                    match ways.locked_for_comm(c) {
                        Some(slot) => match $locked(slot, b, count, dt, $peer, tag, c, request) {
                            Locked::Done => true,
                            Locked::Wake => return Leaf(leaf_wake_entry(slot)),
                            Locked::Declined => false,
                            // SAFETY: the caller's arguments, forwarded.
                            Locked::Held => {
                                return Leaf($release($buf, count, datatype, $peer, tag, comm, request))
                            }
                        },
                        None => false,
                    }
                } else {
                    false
                }
            };
            if done {
                return Leaf(0);
            }
            // SAFETY: the caller's arguments, forwarded.
            Leaf(unsafe { $fast($buf, count, datatype, $peer, tag, comm, request) })
        }

        #[doc = concat!("`", stringify!($name), "` after its locked leaf declined holding the lock of the")]
        #[doc = concat!("communicator's VCI ([`leaf::Locked::Held`]): releases it, then [`", stringify!($fast), "`].")]
        #[cold]
        #[inline(never)]
        unsafe extern "C" fn $release(
            $buf: $buf_ty,
            count: c_int,
            datatype: MPI_Datatype,
            $peer: c_int,
            tag: c_int,
            comm: MPI_Comm,
            request: *mut MPI_Request,
        ) -> c_int {
            if let Some(slot) = vci::leaf_ways().locked_for_comm(comm as usize) {
                // SAFETY: the leaf took this slot's lock on this thread and kept it. The
                // lookup finds the same slot again: the locked way is fixed while open, and
                // communicator hints change only on the slow path, which holds every VCI
                // lock.
                unsafe { slot.leave() };
            }
            // SAFETY: the caller's arguments, forwarded.
            unsafe { $fast($buf, count, datatype, $peer, tag, comm, request) }
        }
    };
}

comm_leaf_entry! {
    /// `MPI_Isend`: the leaf ([`leaf::isend_self_direct`], or [`leaf::isend_self_locked`])
    /// inline; everything else in [`isend_fast_entry`].
    fn MPI_Isend(buf: *const c_void => *const u8, dest);
    leaves: leaf::isend_self_direct, leaf::isend_self_locked;
    release: isend_release_entry;
    fast: isend_fast_entry;
}

/// The end of a C entry point whose locked leaf did the call but whose lock release found
/// a thread that may be parked ([`leaf::Locked::Wake`]): wakes it and returns
/// `MPI_SUCCESS`. Out of line, so that the leaves make no call.
#[cold]
#[inline(never)]
extern "C" fn leaf_wake_entry(slot: &vci::LeafSlot) -> c_int {
    slot.wake();
    // Opaque, so that the entry points jump here rather than call and return a constant
    // themselves (a call would cost every other path the stack alignment it needs).
    std::hint::black_box(0)
}

/// `MPI_Isend` beyond the leaf: the full fast path, then [`isend_slow_entry`].
#[inline(never)]
unsafe extern "C" fn isend_fast_entry(
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    entry::call("MPI_Isend", ErrObj::Comm(comm as usize), || {
        if !request.is_null() {
            // SAFETY: the caller's buffer holds `count` elements of `datatype` (MPI
            // contract).
            if let Some(h) = unsafe {
                fastpath::isend(
                    buf as *const u8,
                    count as i64,
                    datatype as usize,
                    dest,
                    tag,
                    comm as usize,
                )
            } {
                // SAFETY: a non-null request pointer points to the caller's request.
                unsafe { *request = h as MPI_Request };
                return Code(0);
            }
        }
        // SAFETY: the caller's arguments, forwarded.
        Code(unsafe { isend_slow_entry(buf, count, datatype, dest, tag, comm, request) })
    })
}

/// `MPI_Isend` beyond the fast path, with its own error handling.
#[cold]
#[inline(never)]
unsafe extern "C" fn isend_slow_entry(
    buf: *const c_void,
    count: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    entry::call("MPI_Isend", ErrObj::Comm(comm as usize), || {
        // SAFETY: the caller's arguments, forwarded.
        unsafe {
            isend_slow(
                buf,
                count as i64,
                datatype,
                dest,
                tag,
                comm,
                SendMode::Standard,
                request,
            )
        }
    })
}

pub(crate) unsafe fn MPI_Recv(
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    recv_blocking(buf, count as i64, datatype, source, tag, comm, status)
}

pub(crate) unsafe fn MPI_Recv_c(
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    recv_blocking(buf, count, datatype, source, tag, comm, status)
}

comm_leaf_entry! {
    /// `MPI_Irecv`: the leaf ([`leaf::irecv_post_direct`], or [`leaf::irecv_post_locked`])
    /// inline; everything else in [`irecv_fast_entry`].
    fn MPI_Irecv(buf: *mut c_void => *mut u8, source);
    leaves: leaf::irecv_post_direct, leaf::irecv_post_locked;
    release: irecv_release_entry;
    fast: irecv_fast_entry;
}

/// `MPI_Irecv` beyond the leaf: the full fast path, then [`irecv_slow_entry`].
#[inline(never)]
unsafe extern "C" fn irecv_fast_entry(
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    entry::call("MPI_Irecv", ErrObj::Comm(comm as usize), || {
        if !request.is_null()
            // SAFETY: the caller's buffer holds `count` elements of `datatype` (MPI
            // contract); the fast path stores the handle through the non-null request pointer.
            && unsafe {
                fastpath::irecv_to(
                    buf as *mut u8,
                    count as i64,
                    datatype as usize,
                    source,
                    tag,
                    comm as usize,
                    request,
                )
            }
            .is_some()
        {
            return Code(0);
        }
        // SAFETY: the caller's arguments, forwarded.
        Code(unsafe { irecv_slow_entry(buf, count, datatype, source, tag, comm, request) })
    })
}

/// `MPI_Irecv` beyond the fast path, with its own error handling.
#[cold]
#[inline(never)]
unsafe extern "C" fn irecv_slow_entry(
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> c_int {
    entry::call("MPI_Irecv", ErrObj::Comm(comm as usize), || {
        // SAFETY: the caller's arguments, forwarded.
        unsafe { irecv_slow(buf, count as i64, datatype, source, tag, comm, request) }
    })
}

/// `MPI_Irecv` as a part of another call (streams): fast path, then the general path.
#[inline(always)]
pub(crate) unsafe fn irecv_entry(
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    if !request.is_null() {
        // SAFETY: the caller's buffer holds `count` elements of `datatype` (MPI contract).
        if let Some((_, h)) = unsafe {
            fastpath::irecv(
                buf as *mut u8,
                count as i64,
                datatype as usize,
                source,
                tag,
                comm as usize,
            )
        } {
            // SAFETY: a non-null request pointer points to the caller's request.
            unsafe { *request = h as MPI_Request };
            return Ok(());
        }
    }
    irecv_slow(buf, count as i64, datatype, source, tag, comm, request)
}

/// `MPI_Irecv` beyond the fast path (and every error).
#[cold]
#[inline(never)]
unsafe fn irecv_slow(
    buf: *mut c_void,
    n: i64,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    let slot = out(request, "request")?;
    *slot = irecv_general(buf, n, datatype, source, tag, comm)?.1 as MPI_Request;
    Ok(())
}

pub(crate) unsafe fn MPI_Irecv_c(
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    set_request(request, irecv(buf, count, datatype, source, tag, comm))
}

// ---------------------------------------------------------------------------------------------
// sendrecv

unsafe fn sendrecv(
    sendbuf: *const c_void,
    sendcount: i64,
    sendtype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    recvbuf: *mut c_void,
    recvcount: i64,
    recvtype: MPI_Datatype,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    let (rr, sr) = runtime::with(|rt| {
        let ra = recv_args(rt, recvbuf, recvcount, recvtype, source, recvtag, comm)?;
        let sa = send_args(
            rt,
            sendbuf,
            sendcount,
            sendtype,
            dest,
            sendtag,
            comm,
            SendMode::Standard,
        )?;
        let rr = rt.new_request(ReqKind::Recv, ra.comm)?;
        rt.start_recv(rr, ra)?;
        let sr = rt.new_request(ReqKind::Send, sa.comm)?;
        // This call waits for its send: it says so before the request to send leaves (see
        // `send_blocking`).
        start_send_waiting(rt, sr, sa, true)?;
        Ok((rr, sr))
    })?;
    wait_free_published(sr)?;
    wait_free_into(rr, status).map(|_| ())
}

pub(crate) unsafe fn MPI_Sendrecv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    // SAFETY: the pointer arguments come from the C caller and are valid as the MPI
    // standard requires (see the module documentation); the callee checks NULLs.
    unsafe {
        sendrecv(
            sendbuf,
            sendcount as i64,
            sendtype,
            dest,
            sendtag,
            recvbuf,
            recvcount as i64,
            recvtype,
            source,
            recvtag,
            comm,
            status,
        )
    }
}

pub(crate) unsafe fn MPI_Sendrecv_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    recvtype: MPI_Datatype,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    // SAFETY: the pointer arguments come from the C caller and are valid as the MPI
    // standard requires (see the module documentation); the callee checks NULLs.
    unsafe {
        sendrecv(
            sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
            recvtag, comm, status,
        )
    }
}

unsafe fn sendrecv_replace(
    buf: *mut c_void,
    n: i64,
    dt: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    // The send goes from a private copy (packed for derived types, sent as bytes).
    let (copy, sn, st) = runtime::with(|rt| {
        let b = buffer_bytes(rt, buf, n, dt)?;
        let derived = b.layout.is_some() || datatype::predefined(dt as usize).is_none();
        let mut a = SendArgs {
            comm: 0,
            dest: 0,
            tag: 0,
            buf: b.ptr,
            bytes: b.bytes,
            mode: SendMode::Standard,
            unit: b.unit,
            layout: b.layout,
        };
        let copy = a.take_copy();
        Ok(if derived {
            let len = copy.len() as i64;
            (copy, len, MPI_BYTE as MPI_Datatype)
        } else {
            (copy, n, dt)
        })
    })?;
    // SAFETY: `copy` is a private copy of the outgoing data that lives until the call returns;
    // the receive side is the caller's buffer, valid as the C contract requires.
    unsafe {
        sendrecv(
            copy.as_ptr().cast(),
            sn,
            st,
            dest,
            sendtag,
            buf,
            n,
            dt,
            source,
            recvtag,
            comm,
            status,
        )
    }
}

pub(crate) unsafe fn MPI_Sendrecv_replace(
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    // SAFETY: the pointer arguments come from the C caller and are valid as the MPI
    // standard requires (see the module documentation); the callee checks NULLs.
    unsafe {
        sendrecv_replace(
            buf,
            count as i64,
            datatype,
            dest,
            sendtag,
            source,
            recvtag,
            comm,
            status,
        )
    }
}

pub(crate) unsafe fn MPI_Sendrecv_replace_c(
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    // SAFETY: the pointer arguments come from the C caller and are valid as the MPI
    // standard requires (see the module documentation); the callee checks NULLs.
    unsafe {
        sendrecv_replace(
            buf, count, datatype, dest, sendtag, source, recvtag, comm, status,
        )
    }
}

// ---------------------------------------------------------------------------------------------
// buffered-send buffer

/// Attaches `buffer` of `size` bytes (or `MPI_BUFFER_AUTOMATIC`, size ignored) to `scope`.
fn buffer_attach(scope: Scope, buffer: *mut c_void, size: MPI_Count) -> MpiResult<()> {
    let space = if buffer as usize == bsend::AUTOMATIC {
        Space::Automatic
    } else {
        if size < 0 {
            return fail(MPI_ERR_ARG, format!("invalid buffer size {size}"));
        }
        if buffer.is_null() && size > 0 {
            return fail(MPI_ERR_BUFFER, "the buffer is NULL");
        }
        if buffer.is_null() {
            // A zero-sized buffer at NULL: as if none were attached, but attached.
            Space::User { base: 0, size: 0 }
        } else {
            Space::User {
                base: buffer as usize,
                size: size as usize,
            }
        }
    };
    runtime::with(|rt| rt.bsend.attach(scope, space))
}

/// The scope of communicator `comm`'s buffer.
fn comm_scope(comm: MPI_Comm) -> MpiResult<Scope> {
    runtime::with(|rt| Ok(Scope::Comm(rt.comm(comm as usize)?.0)))
}

/// Waits until the messages in flight from the buffer of `scope` when called have been
/// transmitted (their internal requests are freed then).
fn buffer_flush(scope: Scope) -> MpiResult<()> {
    let mut tokens = runtime::with(|rt| Ok(flush_tokens(rt, scope)))?;
    runtime::wait_for(|rt| {
        tokens.retain(|&t| rt.reqs.decode(t as usize).is_some());
        Ok(tokens.is_empty().then_some(()))
    })
}

/// The generation-checked tokens of the requests sending the messages of `scope`'s buffer.
fn flush_tokens(rt: &runtime::Runtime, scope: Scope) -> Vec<u64> {
    rt.bsend
        .pending(scope)
        .into_iter()
        .map(|rid| rt.reqs.token(rid))
        .collect()
}

/// A nonblocking flush (`MPI_Buffer_iflush`, `MPI_Comm_iflush_buffer`): completes its request
/// once the messages it waits for have been transmitted.
struct FlushOp {
    /// The flush request (generation checked: a request freed early still completes).
    request: usize,
    /// Tokens of the internal requests still in flight.
    tokens: Vec<u64>,
}

impl runtime::Background for FlushOp {
    fn poll(&mut self, rt: &mut runtime::Runtime) -> bool {
        self.tokens
            .retain(|&t| rt.reqs.decode(t as usize).is_some());
        if !self.tokens.is_empty() {
            return false;
        }
        if let Some(rid) = rt.reqs.decode(self.request) {
            rt.complete(rid);
        }
        true
    }
}

/// Starts a nonblocking flush of `scope`'s buffer; its request is reported to the error
/// handler of communicator `comm_idx`.
unsafe fn buffer_iflush(
    scope: Scope,
    comm_idx: Option<u32>,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    let slot = out(request, "request")?;
    let h = runtime::with(|rt| {
        let comm = match comm_idx {
            Some(c) => c,
            None => rt.comm(MPI_COMM_SELF)?.0,
        };
        let rid = rt.new_request(ReqKind::Done, comm)?;
        let tokens = flush_tokens(rt, scope);
        let request = rt.reqs.handle(rid);
        if tokens.is_empty() {
            rt.complete(rid);
        } else {
            rt.background.push(Box::new(FlushOp { request, tokens }));
        }
        Ok(request)
    })?;
    *slot = h as MPI_Request;
    Ok(())
}

/// Detaches the buffer of `scope` once its messages have been transmitted: (address, size)
/// as attached (`MPI_BUFFER_AUTOMATIC` and 0 for an automatic buffer; NULL and 0 when none
/// was attached).
fn buffer_detach(scope: Scope) -> MpiResult<(usize, usize)> {
    // Buffered messages must be delivered before the buffer goes back to the user.
    runtime::wait_for(|rt| {
        Ok(rt
            .bsend
            .get(scope)
            .is_none_or(|b| b.used.is_empty())
            .then_some(()))
    })?;
    Ok(match runtime::with(|rt| Ok(rt.bsend.detach(scope)))? {
        Space::None => (0, 0),
        Space::User { base, size } => (base, size),
        Space::Automatic => (bsend::AUTOMATIC, 0),
    })
}

/// Stores a detached buffer's address and size.
unsafe fn put_detached<T: TryFrom<usize> + Copy>(
    buffer_addr: *mut c_void,
    size: *mut T,
    max: T,
    scope: Scope,
) -> MpiResult<()> {
    let addr = out(buffer_addr as *mut *mut c_void, "buffer_addr")?;
    let size = out(size, "size")?;
    let (base, sz) = buffer_detach(scope)?;
    *addr = base as *mut c_void;
    *size = T::try_from(sz).unwrap_or(max);
    Ok(())
}

pub(crate) unsafe fn MPI_Buffer_attach(buffer: *mut c_void, size: c_int) -> MpiResult<()> {
    buffer_attach(Scope::Process, buffer, size as MPI_Count)
}

pub(crate) unsafe fn MPI_Buffer_attach_c(buffer: *mut c_void, size: MPI_Count) -> MpiResult<()> {
    buffer_attach(Scope::Process, buffer, size)
}

pub(crate) unsafe fn MPI_Buffer_detach(
    buffer_addr: *mut c_void,
    size: *mut c_int,
) -> MpiResult<()> {
    put_detached(buffer_addr, size, c_int::MAX, Scope::Process)
}

pub(crate) unsafe fn MPI_Buffer_detach_c(
    buffer_addr: *mut c_void,
    size: *mut MPI_Count,
) -> MpiResult<()> {
    put_detached(buffer_addr, size, MPI_Count::MAX, Scope::Process)
}

pub(crate) unsafe fn MPI_Buffer_flush() -> MpiResult<()> {
    buffer_flush(Scope::Process)
}

pub(crate) unsafe fn MPI_Buffer_iflush(request: *mut MPI_Request) -> MpiResult<()> {
    buffer_iflush(Scope::Process, None, request)
}

pub(crate) unsafe fn MPI_Comm_attach_buffer(
    comm: MPI_Comm,
    buffer: *mut c_void,
    size: c_int,
) -> MpiResult<()> {
    buffer_attach(comm_scope(comm)?, buffer, size as MPI_Count)
}

pub(crate) unsafe fn MPI_Comm_attach_buffer_c(
    comm: MPI_Comm,
    buffer: *mut c_void,
    size: MPI_Count,
) -> MpiResult<()> {
    buffer_attach(comm_scope(comm)?, buffer, size)
}

pub(crate) unsafe fn MPI_Comm_detach_buffer(
    comm: MPI_Comm,
    buffer_addr: *mut c_void,
    size: *mut c_int,
) -> MpiResult<()> {
    put_detached(buffer_addr, size, c_int::MAX, comm_scope(comm)?)
}

pub(crate) unsafe fn MPI_Comm_detach_buffer_c(
    comm: MPI_Comm,
    buffer_addr: *mut c_void,
    size: *mut MPI_Count,
) -> MpiResult<()> {
    put_detached(buffer_addr, size, MPI_Count::MAX, comm_scope(comm)?)
}

pub(crate) unsafe fn MPI_Comm_flush_buffer(comm: MPI_Comm) -> MpiResult<()> {
    buffer_flush(comm_scope(comm)?)
}

pub(crate) unsafe fn MPI_Comm_iflush_buffer(
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    let scope = comm_scope(comm)?;
    let Scope::Comm(idx) = scope else {
        unreachable!("a communicator's scope")
    };
    buffer_iflush(scope, Some(idx), request)
}

// ---------------------------------------------------------------------------------------------
// completion

/// [`grequest::settle`] for every request completed by a multi-completion call.
fn settle_all(fins: Vec<Fin>) -> Vec<(usize, Status, u32)> {
    fins.into_iter()
        .map(|(i, st, comm, taken)| (i, grequest::settle(st, taken), comm))
        .collect()
}

/// The full path of a wait over `count` requests after its leaf declined: `MPI_Waitall`'s
/// ([`waitall_fast_entry`]) or, for one request, `MPI_Wait`'s ([`wait_full_entry`]).
type FullPath = unsafe extern "C" fn(c_int, *mut MPI_Request, *mut MPI_Status) -> c_int;

/// The `MPI_STATUSES_IGNORE` leaves of a wait over `count` requests
/// ([`leaf::waitall_done_direct`], [`leaf::waitall_done_locked`]), inline in the C entry
/// point (no frame), then `full` by a jump. Requests a leaf finished before it declined read
/// `MPI_REQUEST_NULL`, which the full path takes as complete.
///
/// # Safety
/// A C entry point's arguments: `reqs` is null or has `count` requests; `statuses` is
/// `MPI_STATUSES_IGNORE` (null) here.
#[inline(always)]
unsafe fn wait_ignore_leaf(
    count: c_int,
    reqs: *mut MPI_Request,
    statuses: *mut MPI_Status,
    full: FullPath,
) -> c_int {
    let ways = vci::leaf_ways();
    // SAFETY: a C entry point, which drops the state before it returns; the caller passes
    // an array of `count` requests; the state came from the ways in.
    let done = unsafe {
        let way = ways.way();
        if let Some(s) = way.direct() {
            leaf::waitall_done_direct(s, count, reqs, statuses)
        } else if !way.locked() {
            false
        } else {
            match leaf::waitall_done_locked(ways, count, reqs, statuses) {
                (Locked::Done, _) => true,
                (Locked::Wake, Some(slot)) => return leaf_wake_entry(slot),
                (Locked::Held, Some(slot)) => {
                    return wait_release_entry(count, reqs, statuses, slot, 0, full);
                }
                _ => false,
            }
        }
    };
    if done {
        return 0;
    }
    // SAFETY: the caller's arguments, forwarded.
    unsafe { full(count, reqs, statuses) }
}

/// A wait's status leaf on the direct way: the call's arguments and VCI 0's state.
type DirectPath =
    unsafe extern "C" fn(c_int, *mut MPI_Request, *mut MPI_Status, *mut vci::VciState) -> c_int;

/// The way into a wait's status leaves, inline in the C entry point: by a jump to `direct`
/// (with VCI 0's state) or to `locked`, whichever way is open, else to `full`. The leaves
/// live in functions of their own, so that the status-ignoring leaf keeps no frame and each
/// way pays only for the registers it uses.
///
/// # Safety
/// A C entry point's arguments, with `statuses` not null and holding `count` statuses.
#[inline(always)]
unsafe fn wait_statuses_way(
    count: c_int,
    reqs: *mut MPI_Request,
    statuses: *mut MPI_Status,
    direct: DirectPath,
    locked: FullPath,
    full: FullPath,
) -> c_int {
    let way = vci::leaf_ways().way();
    // SAFETY: a C entry point, which drops the state before it returns (the leaf in
    // `direct` uses it and returns); the caller's arguments, forwarded.
    unsafe {
        if let Some(s) = way.direct() {
            direct(count, reqs, statuses, s)
        } else if way.locked() {
            locked(count, reqs, statuses)
        } else {
            full(count, reqs, statuses)
        }
    }
}

/// The direct leaf of a wait with statuses to write ([`leaf::waitall_statuses_direct`]): it
/// finishes requests from the front in one pass; what it leaves goes to `full` (by a jump
/// when it finished none, through [`wait_rest_entry`] otherwise).
///
/// # Safety
/// As for [`wait_statuses_way`]; `s` is VCI 0's state from the direct way, used only here.
#[inline(always)]
unsafe fn wait_statuses_direct(
    count: c_int,
    reqs: *mut MPI_Request,
    statuses: *mut MPI_Status,
    s: *mut vci::VciState,
    full: FullPath,
) -> c_int {
    // SAFETY: the direct way's state (caller's contract); `count` requests and statuses.
    let done = unsafe { leaf::waitall_statuses_direct(&mut *s, count, reqs, statuses) };
    // SAFETY: the caller's arguments, forwarded; `done` entries are finished.
    unsafe { wait_after_status_leaf(count, reqs, statuses, done, full) }
}

/// [`wait_statuses_direct`] under the lock-based thread models
/// ([`leaf::waitall_statuses_locked`]). Inlined into an out-of-line function per call
/// ([`wait_status_locked_entry`], [`waitall_statuses_locked_entry`]), so that the direct
/// leaf needs fewer registers and each call keeps its constants (one request for `MPI_Wait`).
///
/// # Safety
/// As for [`wait_statuses_way`].
#[inline(always)]
unsafe fn wait_statuses_locked(
    count: c_int,
    reqs: *mut MPI_Request,
    statuses: *mut MPI_Status,
    full: FullPath,
) -> c_int {
    let ways = vci::leaf_ways();
    // SAFETY: as in `wait_ignore_leaf`, with `count` statuses.
    let done = unsafe {
        match leaf::waitall_statuses_locked(ways, count, reqs, statuses) {
            (Locked::Done, _, _) => return 0,
            (Locked::Wake, Some(slot), _) => return leaf_wake_entry(slot),
            (Locked::Held, Some(slot), done) => {
                return wait_release_entry(count, reqs, statuses, slot, done, full);
            }
            (_, _, done) => done,
        }
    };
    // SAFETY: the caller's arguments, forwarded; `done` entries are finished.
    unsafe { wait_after_status_leaf(count, reqs, statuses, done, full) }
}

/// `MPI_Wait` with a status under the lock-based thread models: [`wait_statuses_locked`].
#[inline(never)]
unsafe extern "C" fn wait_status_locked_entry(
    request: *mut MPI_Request,
    status: *mut MPI_Status,
) -> c_int {
    // SAFETY: the caller's arguments: one request, one status.
    unsafe { wait_statuses_locked(1, request, status, wait_full_entry) }
}

/// [`wait_status_locked_entry`] as a [`FullPath`] over its one request.
#[inline(always)]
unsafe extern "C" fn wait_status_locked_full(
    _count: c_int,
    request: *mut MPI_Request,
    status: *mut MPI_Status,
) -> c_int {
    // SAFETY: the caller's arguments, forwarded.
    unsafe { wait_status_locked_entry(request, status) }
}

/// `MPI_Waitall` with statuses under the lock-based thread models: [`wait_statuses_locked`].
#[inline(never)]
unsafe extern "C" fn waitall_statuses_locked_entry(
    count: c_int,
    reqs: *mut MPI_Request,
    statuses: *mut MPI_Status,
) -> c_int {
    // SAFETY: the caller's arguments, forwarded.
    unsafe { wait_statuses_locked(count, reqs, statuses, waitall_fast_entry) }
}

/// What follows a status leaf that finished the first `done` of `count` requests: nothing
/// when it finished them all, else `full` (by a jump when it finished none).
///
/// # Safety
/// As for [`wait_statuses_way`].
#[inline(always)]
unsafe fn wait_after_status_leaf(
    count: c_int,
    reqs: *mut MPI_Request,
    statuses: *mut MPI_Status,
    done: usize,
    full: FullPath,
) -> c_int {
    if done == count as usize {
        return 0;
    }
    if done == 0 {
        // SAFETY: the caller's arguments, forwarded.
        return unsafe { full(count, reqs, statuses) };
    }
    // SAFETY: the caller's arguments, forwarded; `done` entries are finished.
    unsafe { wait_rest_entry(count, reqs, statuses, done, full) }
}

/// A wait whose status leaf finished the first `done` of its `count` requests (writing their
/// statuses) and declined the rest: `full` over the rest. When that reports
/// `MPI_ERR_IN_STATUS`, the finished ones get `MPI_SUCCESS` in their `MPI_ERROR` field, as
/// the standard asks of every status the call completed.
#[cold]
#[inline(never)]
unsafe extern "C" fn wait_rest_entry(
    count: c_int,
    reqs: *mut MPI_Request,
    statuses: *mut MPI_Status,
    done: usize,
    full: FullPath,
) -> c_int {
    // SAFETY: `done` < `count` entries of both arrays are behind the pointers.
    let code = unsafe { full(count - done as c_int, reqs.add(done), statuses.add(done)) };
    if code == MPI_ERR_IN_STATUS {
        for i in 0..done {
            // SAFETY: entry `i` of the caller's status array.
            unsafe { (*statuses.add(i)).MPI_ERROR = MPI_SUCCESS };
        }
    }
    code
}

/// A wait whose locked leaf declined holding the lock of `slot` ([`leaf::Locked::Held`]),
/// having finished the first `done` requests: releases the lock, then goes on as
/// [`wait_statuses_direct`] does after a decline.
#[cold]
#[inline(never)]
unsafe extern "C" fn wait_release_entry(
    count: c_int,
    reqs: *mut MPI_Request,
    statuses: *mut MPI_Status,
    slot: &vci::LeafSlot,
    done: usize,
    full: FullPath,
) -> c_int {
    // SAFETY: the leaf took this slot's lock on this thread and kept it.
    unsafe { slot.leave() };
    if done == 0 {
        // SAFETY: the caller's arguments, forwarded.
        return unsafe { full(count, reqs, statuses) };
    }
    // SAFETY: as above; `done` entries are finished.
    unsafe { wait_rest_entry(count, reqs, statuses, done, full) }
}

/// `MPI_Wait`: the `MPI_Waitall` leaves for one request (the same semantics for one request
/// that is complete and successful: its status, `MPI_REQUEST_NULL`); everything else, and
/// every error, in [`wait_general_entry`].
#[inline(always)]
pub(crate) unsafe fn MPI_Wait(request: *mut MPI_Request, status: *mut MPI_Status) -> Leaf {
    if !status.is_null() {
        // SAFETY: the caller's arguments: one request, one status.
        return Leaf(unsafe {
            wait_statuses_way(
                1,
                request,
                status,
                wait_status_direct_path,
                wait_status_locked_full,
                wait_full_entry,
            )
        });
    }
    // SAFETY: the caller's arguments: one request, no status.
    Leaf(unsafe { wait_ignore_leaf(1, request, status, wait_full_entry) })
}

/// [`wait_status_direct_entry`] as a [`DirectPath`] (inlined away: the entry takes the
/// request and status in the registers the C entry point received them in).
#[inline(always)]
unsafe extern "C" fn wait_status_direct_path(
    _count: c_int,
    request: *mut MPI_Request,
    status: *mut MPI_Status,
    s: *mut vci::VciState,
) -> c_int {
    // SAFETY: the caller's arguments, forwarded.
    unsafe { wait_status_direct_entry(request, status, s) }
}

/// `MPI_Wait` with a status on the direct way: [`wait_statuses_direct`] for one request.
#[inline(never)]
unsafe extern "C" fn wait_status_direct_entry(
    request: *mut MPI_Request,
    status: *mut MPI_Status,
    s: *mut vci::VciState,
) -> c_int {
    // SAFETY: the caller's arguments: one request, one status, the direct way's state.
    unsafe { wait_statuses_direct(1, request, status, s, wait_full_entry) }
}

/// `MPI_Wait` as a [`FullPath`] over its one request: [`wait_general_entry`] (inlined away
/// into a jump there).
#[inline(always)]
unsafe extern "C" fn wait_full_entry(
    _count: c_int,
    request: *mut MPI_Request,
    status: *mut MPI_Status,
) -> c_int {
    // SAFETY: the caller's arguments, forwarded.
    unsafe { wait_general_entry(request, status) }
}

/// `MPI_Wait` beyond the leaves, with its own error handling.
#[inline(never)]
unsafe extern "C" fn wait_general_entry(
    request: *mut MPI_Request,
    status: *mut MPI_Status,
) -> c_int {
    // SAFETY: the caller's arguments, forwarded.
    entry::call("MPI_Wait", ErrObj::None, || unsafe {
        wait_general(request, status)
    })
}

/// `MPI_Wait`: the fast paths over one request, then the general wait.
unsafe fn wait_general(request: *mut MPI_Request, status: *mut MPI_Status) -> MpiResult<()> {
    let slot = out(request, "request")?;
    if *slot as usize == MPI_REQUEST_NULL {
        write_status(status, &Status::EMPTY);
        return Ok(());
    }
    // SAFETY: `slot` is one request; `status` is null or one status.
    if unsafe { fastpath::complete_all(std::slice::from_mut(slot), status) } {
        return Ok(());
    }
    // SAFETY: as above.
    if unsafe { fastpath::wait_all(std::slice::from_mut(slot), status) } {
        return Ok(());
    }
    let rid = runtime::with(|rt| request_index(rt, *slot))?;
    let (st, comm, taken) =
        runtime::wait_for(|rt| Ok(ready(rt, rid).then(|| finish(rt, rid, slot))))?;
    let st = grequest::settle(st, taken);
    write_status(status, &st);
    if st.error != MPI_SUCCESS {
        return Err(runtime::with(|rt| Ok(status_error(rt, comm, &st)))?);
    }
    Ok(())
}

pub(crate) unsafe fn MPI_Test(
    request: *mut MPI_Request,
    flag: *mut c_int,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    let slot = out(request, "request")?;
    let flag = out(flag, "flag")?;
    if *slot as usize == MPI_REQUEST_NULL {
        *flag = 1;
        write_status(status, &Status::EMPTY);
        return Ok(());
    }
    let res = runtime::with(|rt| {
        let rid = request_index(rt, *slot)?;
        if !ready(rt, rid) {
            rt.progress()?;
        }
        Ok(ready(rt, rid).then(|| finish(rt, rid, slot)))
    })?;
    match res {
        None => {
            *flag = 0;
            crate::platform::wait::poll_found_nothing();
        }
        Some((st, comm, taken)) => {
            let st = grequest::settle(st, taken);
            *flag = 1;
            write_status(status, &st);
            if st.error != MPI_SUCCESS {
                return Err(runtime::with(|rt| Ok(status_error(rt, comm, &st)))?);
            }
        }
    }
    Ok(())
}

/// Resolves an array of request handles: `None` for null handles.
fn resolve_all(rt: &Runtime, reqs: &[MPI_Request]) -> MpiResult<Vec<Option<u32>>> {
    reqs.iter()
        .map(|&h| {
            if h as usize == MPI_REQUEST_NULL {
                Ok(None)
            } else {
                request_index(rt, h).map(Some)
            }
        })
        .collect()
}

#[inline]
unsafe fn req_slice<'a>(count: c_int, reqs: *mut MPI_Request) -> MpiResult<&'a mut [MPI_Request]> {
    let n = super::util::count(count as i64)?;
    if n == 0 {
        return Ok(&mut []);
    }
    if reqs.is_null() {
        return fail(MPI_ERR_ARG, "the request array must not be NULL");
    }
    // SAFETY: the caller passes an array of `count` requests.
    Ok(unsafe { std::slice::from_raw_parts_mut(reqs, n) })
}

#[inline(always)]
unsafe fn status_at<'a>(statuses: *mut MPI_Status, i: usize) -> Option<&'a mut MPI_Status> {
    // SAFETY: MPI_STATUSES_IGNORE is NULL; otherwise the array has one entry per request.
    unsafe { statuses.as_mut().map(|_| &mut *statuses.add(i)) }
}

/// Writes the statuses of completed operations (with `MPI_ERROR` set when some failed) and
/// returns `MPI_ERR_IN_STATUS` when any failed.
unsafe fn report_all(
    done: &[(usize, Status, u32)],
    statuses: *mut MPI_Status,
    pending: &[usize],
) -> MpiResult<()> {
    let failed = done
        .iter()
        .find(|(_, st, _)| st.error != MPI_SUCCESS)
        .map(|(_, _, c)| *c);
    for (i, st, _) in done {
        if let Some(s) = status_at(statuses, *i) {
            st.write(s, failed.is_some());
        }
    }
    match failed {
        None => Ok(()),
        Some(comm) => {
            for &i in pending {
                if let Some(s) = status_at(statuses, i) {
                    s.MPI_ERROR = MPI_ERR_PENDING;
                }
            }
            let handle = runtime::with(|rt| Ok(rt.comm_handle(comm)))?;
            Err(MpiError::new(
                MPI_ERR_IN_STATUS,
                "one or more operations failed: see the MPI_ERROR field of their statuses",
            )
            .on(ErrObj::Comm(handle)))
        }
    }
}

/// `MPI_Waitall`: [`wait_ignore_leaf`] inline; with statuses, [`wait_statuses_way`];
/// everything else, and every error, in [`waitall_fast_entry`], which the compiled entry
/// point reaches by a jump.
#[inline(always)]
pub(crate) unsafe fn MPI_Waitall(
    count: c_int,
    array_of_requests: *mut MPI_Request,
    array_of_statuses: *mut MPI_Status,
) -> Leaf {
    let (reqs, statuses) = (array_of_requests, array_of_statuses);
    if !statuses.is_null() {
        // SAFETY: the caller's arguments, forwarded.
        return Leaf(unsafe {
            wait_statuses_way(
                count,
                reqs,
                statuses,
                waitall_statuses_direct_entry,
                waitall_statuses_locked_entry,
                waitall_fast_entry,
            )
        });
    }
    // SAFETY: the caller's arguments, forwarded.
    Leaf(unsafe { wait_ignore_leaf(count, reqs, statuses, waitall_fast_entry) })
}

/// `MPI_Waitall` with an array of statuses on the direct way: [`wait_statuses_direct`].
#[inline(never)]
unsafe extern "C" fn waitall_statuses_direct_entry(
    count: c_int,
    reqs: *mut MPI_Request,
    statuses: *mut MPI_Status,
    s: *mut vci::VciState,
) -> c_int {
    // SAFETY: the caller's arguments, forwarded.
    unsafe { wait_statuses_direct(count, reqs, statuses, s, waitall_fast_entry) }
}

/// `MPI_Waitall` beyond the leaf: the full fast path over complete requests, then
/// [`waitall_slow_entry`].
#[inline(never)]
unsafe extern "C" fn waitall_fast_entry(
    count: c_int,
    array_of_requests: *mut MPI_Request,
    array_of_statuses: *mut MPI_Status,
) -> c_int {
    entry::call("MPI_Waitall", ErrObj::None, || {
        if count > 0 && !array_of_requests.is_null() {
            // SAFETY: the caller passes an array of `count` requests.
            let reqs = unsafe { std::slice::from_raw_parts_mut(array_of_requests, count as usize) };
            // SAFETY: the status array is null or has an entry per request.
            if unsafe { fastpath::complete_all(reqs, array_of_statuses) } {
                return Code(0);
            }
        }
        // SAFETY: the caller's arguments, forwarded.
        Code(unsafe { waitall_slow_entry(count, array_of_requests, array_of_statuses) })
    })
}

/// `MPI_Waitall` beyond the fast path, with its own error handling: first the fast wait on
/// one VCI ([`fastpath::wait_all`]; out of the inline entry, so that the entry stays lean for
/// requests that are complete already), then the general path.
#[cold]
#[inline(never)]
unsafe extern "C" fn waitall_slow_entry(
    count: c_int,
    array_of_requests: *mut MPI_Request,
    array_of_statuses: *mut MPI_Status,
) -> c_int {
    entry::call("MPI_Waitall", ErrObj::None, || {
        if count > 0 && !array_of_requests.is_null() {
            // SAFETY: the caller passes an array of `count` requests.
            let reqs = unsafe { std::slice::from_raw_parts_mut(array_of_requests, count as usize) };
            // SAFETY: the status array is null or has an entry per request.
            if unsafe { fastpath::wait_all(reqs, array_of_statuses) } {
                return Ok(());
            }
        }
        // SAFETY: the caller's arguments, forwarded.
        unsafe { waitall_slow(count, array_of_requests, array_of_statuses) }
    })
}

/// `MPI_Waitall` beyond the fast path (and every error).
#[cold]
#[inline(never)]
unsafe fn waitall_slow(
    count: c_int,
    array_of_requests: *mut MPI_Request,
    array_of_statuses: *mut MPI_Status,
) -> MpiResult<()> {
    let reqs = req_slice(count, array_of_requests)?;
    let fins = runtime::wait_for(|rt| complete_all(rt, reqs))?;
    // SAFETY: the status array is null or has an entry per request.
    unsafe { report_all(&settle_all(fins), array_of_statuses, &[]) }
}

/// Completes every request of `reqs` if all are complete (null and inactive ones count as
/// complete) and returns them all, null ones with the empty status; `None` (keep waiting)
/// otherwise.
#[inline(always)]
fn complete_all(rt: &mut Runtime, reqs: &mut [MPI_Request]) -> MpiResult<Option<Vec<Fin>>> {
    for &h in reqs.iter() {
        if h as usize == MPI_REQUEST_NULL {
            continue;
        }
        let rid = request_index(rt, h)?;
        let r = rt.reqs.get(rid).unwrap();
        if !r.active() {
            continue;
        }
        if !r.done() {
            return Ok(None);
        }
    }
    let mut fins = Vec::with_capacity(reqs.len());
    for (i, h) in reqs.iter_mut().enumerate() {
        if *h as usize == MPI_REQUEST_NULL {
            fins.push((i, Status::EMPTY, 0, None));
        } else {
            let rid = request_index(rt, *h)?;
            let (st, comm, taken) = finish(rt, rid, h);
            fins.push((i, st, comm, taken));
        }
    }
    Ok(Some(fins))
}

pub(crate) unsafe fn MPI_Testall(
    count: c_int,
    array_of_requests: *mut MPI_Request,
    flag: *mut c_int,
    array_of_statuses: *mut MPI_Status,
) -> MpiResult<()> {
    let reqs = req_slice(count, array_of_requests)?;
    let flag = out(flag, "flag")?;
    let mut done = Vec::new();
    let all = runtime::with(|rt| {
        let ids = resolve_all(rt, reqs)?;
        let check = |rt: &Runtime| ids.iter().all(|i| i.is_none_or(|r| ready(rt, r)));
        if !check(rt) {
            rt.progress()?;
            if !check(rt) {
                return Ok(false);
            }
        }
        for (i, id) in ids.iter().enumerate() {
            let (st, comm, taken) = match id {
                Some(r) => finish(rt, *r, &mut reqs[i]),
                None => (Status::EMPTY, 0, None),
            };
            done.push((i, st, comm, taken));
        }
        Ok(true)
    })?;
    *flag = all as c_int;
    if !all {
        crate::platform::wait::poll_found_nothing();
    }
    report_all(&settle_all(done), array_of_statuses, &[])
}

/// One pass of Waitany/Testany: the index of a completed active request, completing it.
fn any_pass(rt: &mut Runtime, reqs: &mut [MPI_Request]) -> MpiResult<Option<Option<Fin>>> {
    let ids = resolve_all(rt, reqs)?;
    let mut active = false;
    for (i, id) in ids.iter().enumerate() {
        let Some(r) = *id else { continue };
        let req = rt.reqs.get(r).unwrap();
        if !req.active() {
            continue;
        }
        active = true;
        if req.done() {
            let (st, comm, taken) = finish(rt, r, &mut reqs[i]);
            return Ok(Some(Some((i, st, comm, taken))));
        }
    }
    Ok(if active { None } else { Some(None) })
}

/// [`grequest::settle`] for the request completed by Waitany/Testany.
fn settle_one((i, st, comm, taken): Fin) -> (usize, Status, u32) {
    (i, grequest::settle(st, taken), comm)
}

unsafe fn report_one(
    index: *mut c_int,
    status: *mut MPI_Status,
    got: Option<(usize, Status, u32)>,
) -> MpiResult<()> {
    let index = out(index, "index")?;
    match got {
        None => {
            *index = MPI_UNDEFINED;
            write_status(status, &Status::EMPTY);
            Ok(())
        }
        Some((i, st, comm)) => {
            *index = i as c_int;
            write_status(status, &st);
            if st.error != MPI_SUCCESS {
                return Err(runtime::with(|rt| Ok(status_error(rt, comm, &st)))?);
            }
            Ok(())
        }
    }
}

pub(crate) unsafe fn MPI_Waitany(
    count: c_int,
    array_of_requests: *mut MPI_Request,
    index: *mut c_int,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    let reqs = req_slice(count, array_of_requests)?;
    let got = runtime::wait_for(|rt| any_pass(rt, reqs))?;
    report_one(index, status, got.map(settle_one))
}

pub(crate) unsafe fn MPI_Testany(
    count: c_int,
    array_of_requests: *mut MPI_Request,
    index: *mut c_int,
    flag: *mut c_int,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    let reqs = req_slice(count, array_of_requests)?;
    let flag = out(flag, "flag")?;
    let res = runtime::with(|rt| {
        if let Some(x) = any_pass(rt, reqs)? {
            return Ok(Some(x));
        }
        rt.progress()?;
        any_pass(rt, reqs)
    })?;
    match res {
        None => {
            *flag = 0;
            crate::platform::wait::poll_found_nothing();
            *out(index, "index")? = MPI_UNDEFINED;
            Ok(())
        }
        Some(got) => {
            *flag = 1;
            report_one(index, status, got.map(settle_one))
        }
    }
}

/// One pass of Waitsome/Testsome: completes every finished active request.
fn some_pass(rt: &mut Runtime, reqs: &mut [MPI_Request]) -> MpiResult<Option<Vec<Fin>>> {
    let ids = resolve_all(rt, reqs)?;
    let mut active = false;
    let mut got = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        let Some(r) = *id else { continue };
        let req = rt.reqs.get(r).unwrap();
        if !req.active() {
            continue;
        }
        active = true;
        if req.done() {
            let (st, comm, taken) = finish(rt, r, &mut reqs[i]);
            got.push((i, st, comm, taken));
        }
    }
    Ok(if !active || !got.is_empty() {
        Some(got)
    } else {
        None
    })
}

unsafe fn report_some(
    active_any: bool,
    got: Vec<(usize, Status, u32)>,
    outcount: *mut c_int,
    indices: *mut c_int,
    statuses: *mut MPI_Status,
) -> MpiResult<()> {
    let outcount = out(outcount, "outcount")?;
    if !active_any {
        *outcount = MPI_UNDEFINED;
        return Ok(());
    }
    *outcount = got.len() as c_int;
    let mut packed = Vec::with_capacity(got.len());
    for (k, (i, st, comm)) in got.into_iter().enumerate() {
        if !indices.is_null() {
            // SAFETY: the index array has room for `count` entries, and k < count.
            unsafe { *indices.add(k) = i as c_int };
        }
        packed.push((k, st, comm));
    }
    report_all(&packed, statuses, &[])
}

pub(crate) unsafe fn MPI_Waitsome(
    incount: c_int,
    array_of_requests: *mut MPI_Request,
    outcount: *mut c_int,
    array_of_indices: *mut c_int,
    array_of_statuses: *mut MPI_Status,
) -> MpiResult<()> {
    let reqs = req_slice(incount, array_of_requests)?;
    let got = settle_all(runtime::wait_for(|rt| some_pass(rt, reqs))?);
    let active_any = !got.is_empty();
    // SAFETY: the pointer arguments come from the C caller and are valid as the MPI
    // standard requires (see the module documentation); the callee checks NULLs.
    unsafe {
        report_some(
            active_any,
            got,
            outcount,
            array_of_indices,
            array_of_statuses,
        )
    }
}

pub(crate) unsafe fn MPI_Testsome(
    incount: c_int,
    array_of_requests: *mut MPI_Request,
    outcount: *mut c_int,
    array_of_indices: *mut c_int,
    array_of_statuses: *mut MPI_Status,
) -> MpiResult<()> {
    let reqs = req_slice(incount, array_of_requests)?;
    let res = runtime::with(|rt| {
        if let Some(x) = some_pass(rt, reqs)? {
            return Ok(Some(x));
        }
        rt.progress()?;
        some_pass(rt, reqs)
    })?;
    match res {
        // Active requests exist but none completed.
        None => {
            *out(outcount, "outcount")? = 0;
            Ok(())
        }
        Some(got) => {
            let got = settle_all(got);
            let active_any = !got.is_empty();
            // SAFETY: the pointer arguments come from the C caller and are valid as the MPI
            // standard requires (see the module documentation); the callee checks NULLs.
            unsafe {
                report_some(
                    active_any,
                    got,
                    outcount,
                    array_of_indices,
                    array_of_statuses,
                )
            }
        }
    }
}

pub(crate) unsafe fn MPI_Request_get_status(
    request: MPI_Request,
    flag: *mut c_int,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    let flag = out(flag, "flag")?;
    if request as usize == MPI_REQUEST_NULL {
        *flag = 1;
        write_status(status, &Status::EMPTY);
        return Ok(());
    }
    let st = runtime::with(|rt| {
        let rid = request_index(rt, request)?;
        if !ready(rt, rid) {
            rt.progress()?;
        }
        peek_status(rt, request)
    })?;
    match st {
        None => {
            *flag = 0;
            crate::platform::wait::poll_found_nothing();
        }
        Some(peek) => {
            let (st, rc) = peeked(peek);
            *flag = 1;
            write_status(status, &st);
            if rc != MPI_SUCCESS {
                return Err(grequest::callback_error("query", rc));
            }
        }
    }
    Ok(())
}

pub(crate) unsafe fn MPI_Request_free(request: *mut MPI_Request) -> MpiResult<()> {
    let slot = out(request, "request")?;
    let taken = runtime::with(|rt| {
        let rid = request_index(rt, *slot)?;
        if crate::core::p2p::part::busy(rt, rid) {
            return fail(
                MPI_ERR_REQUEST,
                "freeing an active partitioned request before it completed is erroneous",
            );
        }
        let r = rt.reqs.get_mut(rid).unwrap();
        if rid == DONE_SEND {
            // The shared complete send request stays.
        } else if r.kind == ReqKind::Generalized && r.done() {
            // Its free_fn runs in this call, outside the lock; the request goes after it.
            return Ok(r
                .extra
                .as_mut()
                .and_then(|e| e.grequest.take())
                .map(|g| (rid, g)));
        } else if r.done() || !r.active() {
            rt.reqs.remove(rid);
        } else {
            // A generalized request: MPI_Grequest_complete runs its free_fn.
            r.set_user_freed(true);
        }
        Ok(None)
    })?;
    *slot = MPI_REQUEST_NULL as MPI_Request;
    if let Some((rid, g)) = taken {
        let rc = grequest::free_and_release(rid, &g);
        if rc != MPI_SUCCESS {
            return Err(grequest::callback_error("free", rc));
        }
    }
    Ok(())
}

pub(crate) unsafe fn MPI_Cancel(request: *mut MPI_Request) -> MpiResult<()> {
    let slot = out(request, "request")?;
    let greq = runtime::with(|rt| {
        let rid = request_index(rt, *slot)?;
        if crate::core::p2p::part::busy(rt, rid) {
            return fail(
                MPI_ERR_REQUEST,
                "cancelling an active partitioned request is erroneous",
            );
        }
        let r = rt.reqs.get(rid).unwrap();
        if let Some(g) = r.grequest() {
            // Its cancel_fn runs outside the lock, told whether MPI_Grequest_complete came.
            return Ok(Some((g, r.done())));
        }
        // A receive is posted on the VCI of its messages, which for a communicator spread
        // over the VCIs need not be its request's.
        if r.kind == ReqKind::Recv
            && !r.done()
            && (0..rt.matchers.vcis()).any(|v| rt.matchers.of_vci(v).cancel_posted(rid))
        {
            let r = rt.reqs.get_mut(rid).unwrap();
            r.status = Status {
                cancelled: true,
                ..Status::EMPTY
            };
            rt.complete(rid);
        }
        // Sends that were handed to the transport cannot be recalled: they complete normally
        // and MPI_Test_cancelled reports false, which the standard allows.
        Ok(None)
    })?;
    if let Some((g, complete)) = greq {
        let rc = grequest::cancel(&g, complete);
        if rc != MPI_SUCCESS {
            return Err(grequest::callback_error("cancel", rc));
        }
    }
    Ok(())
}

pub(crate) unsafe fn MPI_Test_cancelled(
    status: *const MPI_Status,
    flag: *mut c_int,
) -> MpiResult<()> {
    // SAFETY: a non-null status pointer points to a status.
    let st = match unsafe { status.as_ref() } {
        Some(s) => s,
        None => return fail(MPI_ERR_ARG, "status must not be NULL"),
    };
    *out(flag, "flag")? = (st.MPI_internal[2] != 0) as c_int;
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// status queries

unsafe fn get_count(status: *const MPI_Status, dt: MPI_Datatype, elements: bool) -> MpiResult<i64> {
    // SAFETY: a non-null status pointer points to a status.
    let st = match unsafe { status.as_ref() } {
        Some(s) => s,
        None => return fail(MPI_ERR_ARG, "status must not be NULL"),
    };
    let bytes = request::get_bytes(st);
    let Some(t) = datatype::predefined(dt as usize) else {
        // A derived type: whole elements, or basic elements of a partial message.
        let d = runtime::with(|rt| rt.dtype(dt as usize))?;
        return Ok(if elements {
            d.elements_in(bytes)
                .map_or(MPI_UNDEFINED as i64, |n| n as i64)
        } else if d.size == 0 {
            0
        } else if bytes.is_multiple_of(d.size as u64) {
            (bytes / d.size as u64) as i64
        } else {
            MPI_UNDEFINED as i64
        });
    };
    Ok(match t.count_of(bytes) {
        Some(n) if elements => n as i64 * t.basic as i64,
        Some(n) => n as i64,
        // A pair type cut after its first component still counts that basic element.
        None if elements
            && t.basic == 2
            && t.size > 0
            && bytes % t.size as u64 == datatype::first_component(dt as usize, &t) as u64 =>
        {
            (bytes / t.size as u64) as i64 * 2 + 1
        }
        None => MPI_UNDEFINED as i64,
    })
}

pub(crate) unsafe fn MPI_Get_count(
    status: *const MPI_Status,
    datatype: MPI_Datatype,
    count: *mut c_int,
) -> MpiResult<()> {
    let n = get_count(status, datatype, false)?;
    *out(count, "count")? = if n > i32::MAX as i64 {
        MPI_UNDEFINED
    } else {
        n as c_int
    };
    Ok(())
}

pub(crate) unsafe fn MPI_Get_count_c(
    status: *const MPI_Status,
    datatype: MPI_Datatype,
    count: *mut MPI_Count,
) -> MpiResult<()> {
    let n = get_count(status, datatype, false)?;
    *out(count, "count")? = n;
    Ok(())
}

pub(crate) unsafe fn MPI_Get_elements(
    status: *const MPI_Status,
    datatype: MPI_Datatype,
    count: *mut c_int,
) -> MpiResult<()> {
    let n = get_count(status, datatype, true)?;
    *out(count, "count")? = if n > i32::MAX as i64 {
        MPI_UNDEFINED
    } else {
        n as c_int
    };
    Ok(())
}

pub(crate) unsafe fn MPI_Get_elements_c(
    status: *const MPI_Status,
    datatype: MPI_Datatype,
    count: *mut MPI_Count,
) -> MpiResult<()> {
    let n = get_count(status, datatype, true)?;
    *out(count, "count")? = n;
    Ok(())
}

pub(crate) unsafe fn MPI_Status_set_elements(
    status: *mut MPI_Status,
    datatype: MPI_Datatype,
    count: c_int,
) -> MpiResult<()> {
    MPI_Status_set_elements_c(status, datatype, count as MPI_Count)
}

pub(crate) unsafe fn MPI_Status_set_elements_c(
    status: *mut MPI_Status,
    datatype: MPI_Datatype,
    count: MPI_Count,
) -> MpiResult<()> {
    let st = out(status, "status")?;
    let n = super::util::count(count)? as u64;
    let d = runtime::with(|rt| rt.dtype(datatype as usize))?;
    let bytes = match d.basic_type().and_then(datatype::predefined) {
        // Copies of one basic type: any number of them.
        Some(b) if d.elements == d.size as u64 / b.size.max(1) as u64 => n * b.size as u64,
        _ if d.elements == 0 => 0,
        _ if n.is_multiple_of(d.elements) => n / d.elements * d.size as u64,
        _ => {
            return fail(
                MPI_ERR_ARG,
                format!(
                "{n} basic elements are not a whole number of elements of this datatype ({} each)",
                d.elements
            ),
            )
        }
    };
    request::set_bytes(st, bytes);
    Ok(())
}

/// Deprecated MPI-3 form of [`MPI_Status_set_elements_c`].
pub(crate) unsafe fn MPI_Status_set_elements_x(
    status: *mut MPI_Status,
    datatype: MPI_Datatype,
    count: MPI_Count,
) -> MpiResult<()> {
    MPI_Status_set_elements_c(status, datatype, count)
}

pub(crate) unsafe fn MPI_Status_set_source(
    status: *mut MPI_Status,
    source: c_int,
) -> MpiResult<()> {
    out(status, "status")?.MPI_SOURCE = source;
    Ok(())
}

pub(crate) unsafe fn MPI_Status_set_tag(status: *mut MPI_Status, tag: c_int) -> MpiResult<()> {
    out(status, "status")?.MPI_TAG = tag;
    Ok(())
}

pub(crate) unsafe fn MPI_Status_set_error(status: *mut MPI_Status, err: c_int) -> MpiResult<()> {
    out(status, "status")?.MPI_ERROR = err;
    Ok(())
}

pub(crate) unsafe fn MPI_Status_set_cancelled(
    status: *mut MPI_Status,
    flag: c_int,
) -> MpiResult<()> {
    out(status, "status")?.MPI_internal[2] = (flag != 0) as i32;
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// probe and matched probe

fn probe_pattern(
    rt: &Runtime,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> MpiResult<(u32, Pattern)> {
    let (idx, c) = rt.comm(comm as usize)?;
    check_source(c, source)?;
    check_recv_tag(tag)?;
    check_spread(c, source, tag)?;
    Ok((
        idx,
        Pattern {
            ctx: c.ctx,
            src: source,
            tag,
        },
    ))
}

fn probe_status(env: &crate::core::p2p::matching::Envelope, payload: &Payload) -> Status {
    Status {
        source: env.src,
        tag: env.tag,
        error: MPI_SUCCESS,
        bytes: payload.len(),
        cancelled: false,
    }
}

/// One probe attempt: `Some(status)` when a message matches.
fn probe_once(
    rt: &mut Runtime,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> MpiResult<Option<Status>> {
    let (_, p) = probe_pattern(rt, source, tag, comm)?;
    if source == MPI_PROC_NULL {
        return Ok(Some(Status::PROC_NULL));
    }
    Ok(rt
        .matchers
        .of_msg_ref(p.ctx, p.src, p.tag)
        .find_unexpected(&p)
        .map(|i| {
            let u = &rt.matchers.of_msg_ref(p.ctx, p.src, p.tag).unexpected[i];
            probe_status(&u.env, &u.payload)
        }))
}

pub(crate) unsafe fn MPI_Probe(
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    let st = runtime::wait_for(|rt| probe_once(rt, source, tag, comm))?;
    write_status(status, &st);
    Ok(())
}

pub(crate) unsafe fn MPI_Iprobe(
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    flag: *mut c_int,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    let flag = out(flag, "flag")?;
    let st = runtime::with(|rt| {
        if let Some(s) = probe_once(rt, source, tag, comm)? {
            return Ok(Some(s));
        }
        rt.progress()?;
        probe_once(rt, source, tag, comm)
    })?;
    match st {
        Some(s) => {
            *flag = 1;
            write_status(status, &s);
        }
        None => {
            *flag = 0;
            crate::platform::wait::poll_found_nothing();
        }
    }
    Ok(())
}

/// One matched-probe attempt: takes the message out of the queue into a message object.
fn mprobe_once(
    rt: &mut Runtime,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> MpiResult<Option<(usize, Status)>> {
    let (idx, p) = probe_pattern(rt, source, tag, comm)?;
    if source == MPI_PROC_NULL {
        return Ok(Some((MPI_MESSAGE_NO_PROC, Status::PROC_NULL)));
    }
    let Some(u) = rt.matchers.of_msg(p.ctx, p.src, p.tag).take_unexpected(&p) else {
        return Ok(None);
    };
    let st = probe_status(&u.env, &u.payload);
    match rt.messages.insert((u, idx)) {
        Some(m) => Ok(Some((rt.messages.handle(m), st))),
        None => fail(MPI_ERR_INTERN, "too many matched messages"),
    }
}

pub(crate) unsafe fn MPI_Mprobe(
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    message: *mut MPI_Message,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    let slot = out(message, "message")?;
    let (m, st) = runtime::wait_for(|rt| mprobe_once(rt, source, tag, comm))?;
    *slot = m as MPI_Message;
    write_status(status, &st);
    Ok(())
}

pub(crate) unsafe fn MPI_Improbe(
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    flag: *mut c_int,
    message: *mut MPI_Message,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    let flag = out(flag, "flag")?;
    let slot = out(message, "message")?;
    let got = runtime::with(|rt| {
        if let Some(x) = mprobe_once(rt, source, tag, comm)? {
            return Ok(Some(x));
        }
        rt.progress()?;
        mprobe_once(rt, source, tag, comm)
    })?;
    match got {
        Some((m, st)) => {
            *flag = 1;
            *slot = m as MPI_Message;
            write_status(status, &st);
        }
        None => {
            *flag = 0;
            crate::platform::wait::poll_found_nothing();
        }
    }
    Ok(())
}

/// Starts receiving a matched message into a new request.
unsafe fn imrecv(
    buf: *mut c_void,
    n: i64,
    dt: MPI_Datatype,
    message: *mut MPI_Message,
) -> MpiResult<u32> {
    let slot = out(message, "message")?;
    let h = *slot as usize;
    let rid = runtime::with(|rt| {
        let b = buffer_bytes(rt, buf, n, dt)?;
        if h == MPI_MESSAGE_NO_PROC {
            let rid = rt.new_request(ReqKind::Recv, crate::core::objects::comm::SELF)?;
            let r = rt.reqs.get_mut(rid).unwrap();
            r.status = Status::PROC_NULL;
            rt.complete(rid);
            return Ok(rid);
        }
        let Some(m) = rt.messages.decode(h) else {
            return fail(MPI_ERR_REQUEST, format!("invalid message handle {h:#x}"));
        };
        let (u, comm) = rt.messages.remove(m).unwrap();
        let rid = rt.new_request(ReqKind::Recv, comm)?;
        rt.prepare_recv(rid, b.ptr as *mut u8, b.bytes, b.unit, b.layout);
        rt.consume(rid, u)?;
        Ok(rid)
    })?;
    *slot = MPI_MESSAGE_NULL as MPI_Message;
    Ok(rid)
}

unsafe fn mrecv(
    buf: *mut c_void,
    n: i64,
    dt: MPI_Datatype,
    message: *mut MPI_Message,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    let rid = imrecv(buf, n, dt, message)?;
    wait_free_into(rid, status).map(|_| ())
}

pub(crate) unsafe fn MPI_Mrecv(
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    message: *mut MPI_Message,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    mrecv(buf, count as i64, datatype, message, status)
}

pub(crate) unsafe fn MPI_Mrecv_c(
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    message: *mut MPI_Message,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    mrecv(buf, count, datatype, message, status)
}

pub(crate) unsafe fn MPI_Imrecv(
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    message: *mut MPI_Message,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    set_request_index(request, imrecv(buf, count as i64, datatype, message))
}

pub(crate) unsafe fn MPI_Imrecv_c(
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    message: *mut MPI_Message,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    set_request_index(request, imrecv(buf, count, datatype, message))
}

// ---------------------------------------------------------------------------------------------
// persistent requests

unsafe fn persistent_init(
    op: MpiResult<(PersistentOp, ReqKind)>,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    let slot = out(request, "request")?;
    let (op, kind) = op?;
    let h = runtime::with(|rt| {
        let rid = rt.new_request(kind, op.comm)?;
        let r = rt.reqs.get_mut(rid).unwrap();
        r.set_persistent(true);
        r.extra().persistent = Some(op);
        r.set_active(false);
        r.set_done(true);
        Ok(rt.reqs.handle(rid))
    })?;
    *slot = h as MPI_Request;
    Ok(())
}

fn send_init_op(
    buf: *const c_void,
    n: i64,
    dt: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    mode: SendMode,
) -> MpiResult<(PersistentOp, ReqKind)> {
    runtime::with(|rt| {
        let a = send_args(rt, buf, n, dt, dest, tag, comm, mode)?;
        Ok((
            PersistentOp {
                send: Some(mode),
                buf: a.buf as *mut u8,
                bytes: a.bytes,
                peer: dest,
                tag,
                comm: a.comm,
                unit: a.unit,
                layout: a.layout,
            },
            ReqKind::Send,
        ))
    })
}

macro_rules! send_init_fns {
    ($($name:ident, $name_c:ident => $mode:expr;)*) => {$(
        pub(crate) unsafe fn $name(buf: *const c_void, count: c_int, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> MpiResult<()> {
            persistent_init(send_init_op(buf, count as i64, datatype, dest, tag, comm, $mode), request)
        }
        pub(crate) unsafe fn $name_c(buf: *const c_void, count: MPI_Count, datatype: MPI_Datatype, dest: c_int, tag: c_int, comm: MPI_Comm, request: *mut MPI_Request) -> MpiResult<()> {
            persistent_init(send_init_op(buf, count, datatype, dest, tag, comm, $mode), request)
        }
    )*};
}

send_init_fns! {
    MPI_Send_init, MPI_Send_init_c => SendMode::Standard;
    MPI_Ssend_init, MPI_Ssend_init_c => SendMode::Sync;
    MPI_Bsend_init, MPI_Bsend_init_c => SendMode::Buffered;
    MPI_Rsend_init, MPI_Rsend_init_c => SendMode::Ready;
}

fn recv_init_op(
    buf: *mut c_void,
    n: i64,
    dt: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
) -> MpiResult<(PersistentOp, ReqKind)> {
    runtime::with(|rt| {
        let a = recv_args(rt, buf, n, dt, source, tag, comm)?;
        Ok((
            PersistentOp {
                send: None,
                buf: a.buf,
                bytes: a.cap,
                peer: source,
                tag,
                comm: a.comm,
                unit: a.unit,
                layout: a.layout,
            },
            ReqKind::Recv,
        ))
    })
}

pub(crate) unsafe fn MPI_Recv_init(
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    // SAFETY: the pointer arguments come from the C caller and are valid as the MPI
    // standard requires (see the module documentation); the callee checks NULLs.
    unsafe {
        persistent_init(
            recv_init_op(buf, count as i64, datatype, source, tag, comm),
            request,
        )
    }
}

pub(crate) unsafe fn MPI_Recv_init_c(
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    // SAFETY: the pointer arguments come from the C caller and are valid as the MPI
    // standard requires (see the module documentation); the callee checks NULLs.
    unsafe {
        persistent_init(
            recv_init_op(buf, count, datatype, source, tag, comm),
            request,
        )
    }
}

fn start_one(rt: &mut Runtime, h: MPI_Request) -> MpiResult<()> {
    let rid = request_index(rt, h)?;
    if crate::coll::sched::start_persistent(rt, rid)? {
        return Ok(());
    }
    if crate::core::p2p::part::start(rt, rid)? {
        return Ok(());
    }
    let r = rt.reqs.get_mut(rid).unwrap();
    let Some(op) = r.extra.as_ref().and_then(|e| e.persistent.clone()) else {
        return fail(MPI_ERR_REQUEST, "MPI_Start needs a persistent request");
    };
    if r.active() {
        return fail(MPI_ERR_REQUEST, "the persistent request is already active");
    }
    r.set_active(true);
    r.set_done(false);
    r.status = Status::EMPTY;
    match op.send {
        Some(mode) => rt.start_send(
            rid,
            SendArgs {
                comm: op.comm,
                dest: op.peer,
                tag: op.tag,
                buf: op.buf,
                bytes: op.bytes,
                mode,
                unit: op.unit,
                layout: op.layout,
            },
        ),
        None => rt.start_recv(
            rid,
            RecvArgs {
                comm: op.comm,
                src: op.peer,
                tag: op.tag,
                buf: op.buf,
                cap: op.bytes,
                unit: op.unit,
                layout: op.layout,
            },
        ),
    }
}

pub(crate) unsafe fn MPI_Start(request: *mut MPI_Request) -> MpiResult<()> {
    let h = *out(request, "request")?;
    runtime::with(|rt| start_one(rt, h))
}

pub(crate) unsafe fn MPI_Startall(
    count: c_int,
    array_of_requests: *mut MPI_Request,
) -> MpiResult<()> {
    let reqs = req_slice(count, array_of_requests)?;
    runtime::with(|rt| reqs.iter().try_for_each(|&h| start_one(rt, h)))
}

// ---------------------------------------------------------------------------------------------
// nonblocking sendrecv

#[inline(always)]
unsafe fn isendrecv(
    sendbuf: *const c_void,
    sendcount: i64,
    sendtype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    recvbuf: *mut c_void,
    recvcount: i64,
    recvtype: MPI_Datatype,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    replace: bool,
) -> MpiResult<u32> {
    runtime::with(|rt| {
        let ra = recv_args(rt, recvbuf, recvcount, recvtype, source, recvtag, comm)?;
        let mut sa = send_args(
            rt,
            sendbuf,
            sendcount,
            sendtype,
            dest,
            sendtag,
            comm,
            SendMode::Standard,
        )?;
        let parent = rt.new_request(ReqKind::Recv, ra.comm)?;
        if replace {
            // The send goes from a private copy, so the receive may overwrite the buffer.
            let copy = sa.take_copy();
            let p = rt.reqs.get_mut(parent).unwrap();
            let e = p.extra();
            e.scratch = copy;
            sa.buf = e.scratch.as_ptr();
            sa.bytes = e.scratch.len();
        }
        rt.start_sendrecv(parent, sa, ra)?;
        Ok(parent)
    })
}

pub(crate) unsafe fn MPI_Isendrecv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    // SAFETY: the pointer arguments come from the C caller and are valid as the MPI
    // standard requires (see the module documentation); the callee checks NULLs.
    let r = unsafe {
        isendrecv(
            sendbuf,
            sendcount as i64,
            sendtype,
            dest,
            sendtag,
            recvbuf,
            recvcount as i64,
            recvtype,
            source,
            recvtag,
            comm,
            false,
        )
    };
    set_request_index(request, r)
}

pub(crate) unsafe fn MPI_Isendrecv_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    recvtype: MPI_Datatype,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    // SAFETY: the pointer arguments come from the C caller and are valid as the MPI
    // standard requires (see the module documentation); the callee checks NULLs.
    let r = unsafe {
        isendrecv(
            sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
            recvtag, comm, false,
        )
    };
    set_request_index(request, r)
}

pub(crate) unsafe fn MPI_Isendrecv_replace(
    buf: *mut c_void,
    count: c_int,
    datatype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    // SAFETY: the pointer arguments come from the C caller and are valid as the MPI
    // standard requires (see the module documentation); the callee checks NULLs.
    let r = unsafe {
        isendrecv(
            buf,
            count as i64,
            datatype,
            dest,
            sendtag,
            buf,
            count as i64,
            datatype,
            source,
            recvtag,
            comm,
            true,
        )
    };
    set_request_index(request, r)
}

pub(crate) unsafe fn MPI_Isendrecv_replace_c(
    buf: *mut c_void,
    count: MPI_Count,
    datatype: MPI_Datatype,
    dest: c_int,
    sendtag: c_int,
    source: c_int,
    recvtag: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    // SAFETY: the pointer arguments come from the C caller and are valid as the MPI
    // standard requires (see the module documentation); the callee checks NULLs.
    let r = unsafe {
        isendrecv(
            buf, count, datatype, dest, sendtag, buf, count, datatype, source, recvtag, comm, true,
        )
    };
    set_request_index(request, r)
}

// ---------------------------------------------------------------------------------------------
// status accessors (MPI-4.1) and status queries over arrays

unsafe fn status_ref<'a>(status: *const MPI_Status) -> MpiResult<&'a MPI_Status> {
    // SAFETY: a non-null status pointer points to a status.
    match unsafe { status.as_ref() } {
        Some(s) => Ok(s),
        None => fail(MPI_ERR_ARG, "status must not be NULL"),
    }
}

pub(crate) unsafe fn MPI_Status_get_source(
    status: *const MPI_Status,
    source: *mut c_int,
) -> MpiResult<()> {
    *out(source, "source")? = status_ref(status)?.MPI_SOURCE;
    Ok(())
}

pub(crate) unsafe fn MPI_Status_get_tag(
    status: *const MPI_Status,
    tag: *mut c_int,
) -> MpiResult<()> {
    *out(tag, "tag")? = status_ref(status)?.MPI_TAG;
    Ok(())
}

pub(crate) unsafe fn MPI_Status_get_error(
    status: *const MPI_Status,
    err: *mut c_int,
) -> MpiResult<()> {
    *out(err, "error")? = status_ref(status)?.MPI_ERROR;
    Ok(())
}

/// Status of a complete request seen without completing it; for a generalized request its
/// callbacks instead, whose `query_fn` gives the status ([`peeked`], outside the lock).
type Peek = (Status, Option<request::Grequest>);

/// Status of request `h` without completing it: `None` while it is pending.
fn peek_status(rt: &Runtime, h: MPI_Request) -> MpiResult<Option<Peek>> {
    if h as usize == MPI_REQUEST_NULL {
        return Ok(Some((Status::EMPTY, None)));
    }
    let rid = request_index(rt, h)?;
    let r = rt.reqs.get(rid).unwrap();
    Ok(if !r.active() {
        Some((Status::EMPTY, None))
    } else {
        r.done().then(|| (r.status, r.grequest()))
    })
}

/// The status of a [`Peek`] and the return code of the callback that made it: a generalized
/// request's `query_fn` runs (outside the runtime lock; its code is also the status's error)
/// and the request stays as it is; other requests give their status and `MPI_SUCCESS`.
fn peeked((st, g): Peek) -> (Status, c_int) {
    match g {
        Some(g) => {
            let st = grequest::query(&g);
            (st, st.error)
        }
        None => (st, MPI_SUCCESS),
    }
}

pub(crate) unsafe fn MPI_Request_get_status_any(
    count: c_int,
    array_of_requests: *const MPI_Request,
    index: *mut c_int,
    flag: *mut c_int,
    status: *mut MPI_Status,
) -> MpiResult<()> {
    let reqs = req_slice(count, array_of_requests as *mut MPI_Request)?;
    let index = out(index, "index")?;
    let flag = out(flag, "flag")?;
    let found = runtime::with(|rt| {
        rt.progress()?;
        let mut any_active = false;
        for (i, &h) in reqs.iter().enumerate() {
            if h as usize == MPI_REQUEST_NULL
                || !rt
                    .reqs
                    .decode(h as usize)
                    .and_then(|r| rt.reqs.get(r))
                    .is_some_and(|r| r.active())
            {
                continue;
            }
            any_active = true;
            if let Some(peek) = peek_status(rt, h)? {
                return Ok(Some(Some((i, peek))));
            }
        }
        Ok(if any_active { None } else { Some(None) })
    })?;
    match found {
        None => {
            *flag = 0;
            *index = MPI_UNDEFINED;
        }
        Some(None) => {
            *flag = 1;
            *index = MPI_UNDEFINED;
            // The empty status, with MPI_ERROR set as for any other outcome of the call.
            // SAFETY: MPI_STATUS_IGNORE is NULL; any other pointer is the caller's status.
            if let Some(out) = unsafe { status.as_mut() } {
                Status::EMPTY.write(out, true);
            }
        }
        Some(Some((i, peek))) => {
            let (st, rc) = peeked(peek);
            *flag = 1;
            *index = i as c_int;
            // SAFETY: MPI_STATUS_IGNORE is NULL; any other pointer is the caller's status.
            if let Some(s) = unsafe { status.as_mut() } {
                // The error field too, as MPICH does: the operation's own error (MPI_SUCCESS
                // for a successful one), never left as the caller's stale value.
                st.write(s, true);
            }
            if rc != MPI_SUCCESS {
                return Err(grequest::callback_error("query", rc));
            }
        }
    }
    Ok(())
}

pub(crate) unsafe fn MPI_Request_get_status_all(
    count: c_int,
    array_of_requests: *const MPI_Request,
    flag: *mut c_int,
    array_of_statuses: *mut MPI_Status,
) -> MpiResult<()> {
    let reqs = req_slice(count, array_of_requests as *mut MPI_Request)?;
    let flag = out(flag, "flag")?;
    let all = runtime::with(|rt| {
        rt.progress()?;
        reqs.iter()
            .map(|&h| peek_status(rt, h))
            .collect::<MpiResult<Option<Vec<Peek>>>>()
    })?;
    match all {
        None => {
            *flag = 0;
            crate::platform::wait::poll_found_nothing();
        }
        Some(peeks) => {
            *flag = 1;
            let mut failed = MPI_SUCCESS;
            for (i, peek) in peeks.into_iter().enumerate() {
                let (st, rc) = peeked(peek);
                if failed == MPI_SUCCESS {
                    failed = rc;
                }
                if let Some(s) = status_at(array_of_statuses, i) {
                    st.write(s, true);
                }
            }
            if failed != MPI_SUCCESS {
                return Err(grequest::callback_error("query", failed));
            }
        }
    }
    Ok(())
}

pub(crate) unsafe fn MPI_Request_get_status_some(
    incount: c_int,
    array_of_requests: *const MPI_Request,
    outcount: *mut c_int,
    array_of_indices: *mut c_int,
    array_of_statuses: *mut MPI_Status,
) -> MpiResult<()> {
    let reqs = req_slice(incount, array_of_requests as *mut MPI_Request)?;
    let outcount = out(outcount, "outcount")?;
    let (any_active, got) = runtime::with(|rt| {
        rt.progress()?;
        let mut any_active = false;
        let mut got = Vec::new();
        for (i, &h) in reqs.iter().enumerate() {
            if h as usize == MPI_REQUEST_NULL
                || !rt
                    .reqs
                    .decode(h as usize)
                    .and_then(|r| rt.reqs.get(r))
                    .is_some_and(|r| r.active())
            {
                continue;
            }
            any_active = true;
            if let Some(peek) = peek_status(rt, h)? {
                got.push((i, peek));
            }
        }
        Ok((any_active, got))
    })?;
    if !any_active {
        *outcount = MPI_UNDEFINED;
        return Ok(());
    }
    *outcount = got.len() as c_int;
    let mut failed = MPI_SUCCESS;
    for (k, (i, peek)) in got.into_iter().enumerate() {
        let (st, rc) = peeked(peek);
        if failed == MPI_SUCCESS {
            failed = rc;
        }
        if !array_of_indices.is_null() {
            // SAFETY: the index array holds `incount` entries and k < incount.
            unsafe { *array_of_indices.add(k) = i as c_int };
        }
        if let Some(s) = status_at(array_of_statuses, k) {
            st.write(s, true);
        }
    }
    if failed != MPI_SUCCESS {
        return Err(grequest::callback_error("query", failed));
    }
    Ok(())
}
