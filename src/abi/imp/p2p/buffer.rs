//! Buffers of buffered-mode sends: attach, detach, flush (process, communicator, session).

use super::*;

// buffered-send buffer

/// Attaches `buffer` of `size` bytes (or `MPI_BUFFER_AUTOMATIC`, size ignored) to `scope`.
pub(super) fn buffer_attach(scope: Scope, buffer: *mut c_void, size: MPI_Count) -> MpiResult<()> {
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
pub(super) fn comm_scope(comm: MPI_Comm) -> MpiResult<Scope> {
    runtime::with(|rt| Ok(Scope::Comm(rt.comm(comm as usize)?.0)))
}

/// Waits until the messages in flight from the buffer of `scope` when called have been
/// transmitted (their internal requests are freed then).
pub(super) fn buffer_flush(scope: Scope) -> MpiResult<()> {
    let mut tokens = runtime::with(|rt| Ok(flush_tokens(rt, scope)))?;
    runtime::wait_for(|rt| {
        tokens.retain(|&t| rt.reqs.decode(t as usize).is_some());
        Ok(tokens.is_empty().then_some(()))
    })
}

/// The generation-checked tokens of the requests sending the messages of `scope`'s buffer.
pub(super) fn flush_tokens(rt: &runtime::Runtime, scope: Scope) -> Vec<u64> {
    rt.bsend
        .pending(scope)
        .into_iter()
        .map(|rid| rt.reqs.token(rid))
        .collect()
}

/// A nonblocking flush (`MPI_Buffer_iflush`, `MPI_Comm_iflush_buffer`): completes its request
/// once the messages it waits for have been transmitted.
pub(super) struct FlushOp {
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
pub(super) unsafe fn buffer_iflush(
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
pub(super) fn buffer_detach(scope: Scope) -> MpiResult<(usize, usize)> {
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
pub(super) unsafe fn put_detached<T: TryFrom<usize> + Copy>(
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

/// The scope of session `session`'s buffer.
fn session_scope(session: MPI_Session) -> MpiResult<Scope> {
    Ok(Scope::Session(
        crate::core::objects::session::get(session as usize)?.id,
    ))
}

pub(crate) unsafe fn MPI_Session_attach_buffer(
    session: MPI_Session,
    buffer: *mut c_void,
    size: c_int,
) -> MpiResult<()> {
    buffer_attach(session_scope(session)?, buffer, size as MPI_Count)
}

pub(crate) unsafe fn MPI_Session_attach_buffer_c(
    session: MPI_Session,
    buffer: *mut c_void,
    size: MPI_Count,
) -> MpiResult<()> {
    buffer_attach(session_scope(session)?, buffer, size)
}

pub(crate) unsafe fn MPI_Session_detach_buffer(
    session: MPI_Session,
    buffer_addr: *mut c_void,
    size: *mut c_int,
) -> MpiResult<()> {
    put_detached(buffer_addr, size, c_int::MAX, session_scope(session)?)
}

pub(crate) unsafe fn MPI_Session_detach_buffer_c(
    session: MPI_Session,
    buffer_addr: *mut c_void,
    size: *mut MPI_Count,
) -> MpiResult<()> {
    put_detached(buffer_addr, size, MPI_Count::MAX, session_scope(session)?)
}

pub(crate) unsafe fn MPI_Session_flush_buffer(session: MPI_Session) -> MpiResult<()> {
    buffer_flush(session_scope(session)?)
}

pub(crate) unsafe fn MPI_Session_iflush_buffer(
    session: MPI_Session,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    buffer_iflush(session_scope(session)?, None, request)
}
