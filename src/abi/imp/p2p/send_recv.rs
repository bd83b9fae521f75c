//! Blocking and nonblocking sends and receives: `MPI_Send`/`MPI_Isend` and their modes, `MPI_Recv`/`MPI_Irecv`, with the leaf and fast-path entries.

use super::*;

// blocking and nonblocking send/recv

/// Starts a send and returns its request index and handle.
#[inline(always)]
pub(super) unsafe fn isend(
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
pub(super) unsafe fn isend_fast(
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
pub(super) fn isend_general(
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
pub(super) fn start_send_waiting(
    rt: &mut Runtime,
    rid: u32,
    a: SendArgs,
    waits: bool,
) -> MpiResult<()> {
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
pub(super) unsafe fn irecv(
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
pub(super) fn irecv_general(
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
pub(super) unsafe fn wait_free_into(rid: u32, status: *mut MPI_Status) -> MpiResult<Status> {
    // SAFETY: forwarded from the caller.
    unsafe { wait_free_as(rid, status, false) }
}

/// Waits for send `rid`, started with "waiting" published (`isend_general(.., true)`), frees
/// it and returns its status (an error in the status becomes the call's error).
pub(super) fn wait_free_published(rid: u32) -> MpiResult<Status> {
    // SAFETY: a null status pointer means MPI_STATUS_IGNORE.
    unsafe { wait_free_as(rid, std::ptr::null_mut(), true) }
}

/// [`wait_free_into`], through [`runtime::wait_for_published`] when `published`.
///
/// # Safety
/// As for [`wait_free_into`].
pub(super) unsafe fn wait_free_as(
    rid: u32,
    status: *mut MPI_Status,
    published: bool,
) -> MpiResult<Status> {
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
pub(super) unsafe fn send_blocking(
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
pub(super) unsafe fn recv_blocking(
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
pub(super) unsafe fn set_request(
    request: *mut MPI_Request,
    started: MpiResult<(u32, usize)>,
) -> MpiResult<()> {
    let slot = out(request, "request")?;
    *slot = started?.1 as MPI_Request;
    Ok(())
}

/// Like [`set_request`] for operations that return only a request index.
#[inline]
pub(super) unsafe fn set_request_index(
    request: *mut MPI_Request,
    rid: MpiResult<u32>,
) -> MpiResult<()> {
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
pub(super) unsafe fn isend_slow(
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
        traced: $traced:ident;
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
                } else if crate::core::diag::trace_on() {
                    // Tracing keeps the ways closed: the call is recorded here, so that
                    // open ways pay nothing for it.
                    return Leaf($traced($buf, count, datatype, $peer, tag, comm, request));
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

        #[doc = concat!("`", stringify!($name), "` recorded in the trace (`HYMPI_TRACE`): [`", stringify!($fast), "`] under")]
        #[doc = "[`entry::call_recorded`]."]
        #[cold]
        #[inline(never)]
        unsafe extern "C" fn $traced(
            $buf: $buf_ty,
            count: c_int,
            datatype: MPI_Datatype,
            $peer: c_int,
            tag: c_int,
            comm: MPI_Comm,
            request: *mut MPI_Request,
        ) -> c_int {
            let args = |code: i32| entry::CallArgs {
                comm: Some(comm as usize),
                peer: Some($peer),
                tag: Some(tag),
                count: Some(i64::from(count)),
                datatype: Some(datatype as usize),
                // SAFETY: a successful call wrote the request through this pointer.
                request: (code == 0).then(|| unsafe { request.as_ref() }.map(|r| *r as usize)).flatten(),
            };
            entry::call_recorded(stringify!($name), ErrObj::Comm(comm as usize), args, || {
                // SAFETY: the caller's arguments, forwarded.
                Code(unsafe { $fast($buf, count, datatype, $peer, tag, comm, request) })
            })
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
    traced: isend_traced_entry;
}

/// The end of a C entry point whose locked leaf did the call but whose lock release found
/// a thread that may be parked ([`leaf::Locked::Wake`]): wakes it and returns
/// `MPI_SUCCESS`. Out of line, so that the leaves make no call.
#[cold]
#[inline(never)]
pub(super) extern "C" fn leaf_wake_entry(slot: &vci::LeafSlot) -> c_int {
    slot.wake();
    // Opaque, so that the entry points jump here rather than call and return a constant
    // themselves (a call would cost every other path the stack alignment it needs).
    std::hint::black_box(0)
}

/// `MPI_Isend` beyond the leaf: the full fast path, then [`isend_slow_entry`].
#[inline(never)]
pub(super) unsafe extern "C" fn isend_fast_entry(
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
pub(super) unsafe extern "C" fn isend_slow_entry(
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
    traced: irecv_traced_entry;
}

/// `MPI_Irecv` beyond the leaf: the full fast path, then [`irecv_slow_entry`].
#[inline(never)]
pub(super) unsafe extern "C" fn irecv_fast_entry(
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
pub(super) unsafe extern "C" fn irecv_slow_entry(
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
pub(super) unsafe fn irecv_slow(
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
