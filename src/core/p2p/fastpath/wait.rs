//! The fast waits: progress on the caller's VCI (`progress_vci`, `poll_lane`), then
//! `MPI_Wait`/`MPI_Waitall` over plain requests (`wait_all`) and blocking receives (`recv`),
//! with the bounded spin before a wait sleeps.

use super::*;

/// What one fast progress step on a VCI did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Polled {
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
pub(super) fn progress_vci(
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
pub(super) fn poll_lane<T: Transport>(
    s: &mut VciState,
    pool: &Pool,
    v: usize,
    e: &mut T,
) -> Polled {
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
pub(super) const SLOW_ROUND_EVERY: u32 = 64;

/// Messages a fast wait handles under one hold of its VCI's guard at most.
pub(super) const BURST: u32 = 32;

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
pub(super) enum Taken {
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
pub(super) unsafe fn take_accepted(
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
pub(super) unsafe fn take_from<T: Transport>(
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
pub(super) unsafe fn write_status(statuses: *mut MPI_Status, i: usize, st: &Status) {
    if statuses.is_null() {
        return; // MPI_STATUSES_IGNORE
    }
    // SAFETY: a non-null status array has an entry per request (caller's contract).
    st.write(unsafe { &mut *statuses.add(i) }, false);
}
