//! The schedule engine: a collective algorithm emits a [`Schedule`] — rounds of sends,
//! receives, reductions and copies over user buffers and temporaries — and the engine runs it.
//! Blocking collectives run it to completion ([`Schedule::run`]); nonblocking ones hand it to
//! the progress engine ([`ScheduleOp`]), so both come from the same algorithm code.
//!
//! Semantics of a round: all its sends and receives are posted at once; when every one has
//! completed, its local steps (reductions, copies) run in order; then the next round starts.
//! An algorithm that needs a local step before communicating puts it in a round of its own.
//! Traffic uses the communicator's collective context with a tag derived from the
//! collective's sequence number on that communicator (every member calls collectives in the
//! same order), so concurrent nonblocking collectives on one communicator never mix.
//!
//! Schedules are plain data and can be printed ([`Schedule::dump`]) for inspection or replay.

use crate::core::datatype::{Layout, TypeInfo};
use crate::core::error::{fail, MpiResult};
use crate::core::op::Reducer;
use crate::core::p2p::request::{ReqKind, SendMode};
use crate::core::p2p::{RecvArgs, SendArgs, INTERNAL_TAG_MAX};
use crate::core::runtime::{self, Background, Runtime};
use crate::mpi_abi::consts::*;
use std::fmt::Write as _;

/// Tags of collective traffic: `COLL_TAG_BASE - (sequence mod 2^23)` for blocking calls, the
/// next 2^23 tags below for nonblocking and persistent ones; below the tags of the
/// communicator-construction rounds.
pub const COLL_TAG_BASE: i32 = INTERNAL_TAG_MAX - (1 << 25);

/// The tag of collective number `seq` on a communicator.
pub fn coll_tag(seq: u32) -> i32 {
    COLL_TAG_BASE - (seq % (1 << 23)) as i32
}

/// The internal tag of nonblocking or persistent collective call number `seq` on a
/// communicator: the other half of the collective tag space (see `coll::begin`).
pub fn nb_coll_tag(seq: u32) -> i32 {
    COLL_TAG_BASE - (1 << 23) - (seq % (1 << 23)) as i32
}

/// Where the temporaries of a modelled schedule ([`Schedule::modelled`]) start.
pub const MODELLED_TMP_BASE: usize = 1 << 56;

/// A buffer as a transfer sees it: address, bytes of data, element layout and, for a derived
/// datatype with holes, its layout program.
#[derive(Clone, Debug)]
pub struct Span {
    /// Start address.
    pub addr: usize,
    /// Bytes: the packed size for a derived layout, the memory span for a predefined type.
    pub bytes: usize,
    /// Element layout.
    pub unit: TypeInfo,
    /// Derived layout, when the data is not one contiguous block.
    pub layout: Option<Layout>,
}

impl Span {
    /// `bytes` contiguous bytes at `addr`.
    pub fn bytes(addr: usize, bytes: usize) -> Span {
        Span {
            addr,
            bytes,
            unit: crate::core::datatype::predefined(MPI_BYTE).expect("MPI_BYTE"),
            layout: None,
        }
    }

    /// Bytes of data the span holds (for a predefined type with holes `bytes` is the memory
    /// the elements span, which is more).
    #[inline]
    pub fn packed(&self) -> usize {
        match self.layout {
            Some(_) => self.bytes,
            // No division for the common types without holes (a 64-bit division costs tens of
            // cycles, a noticeable share of a small collective).
            None if self.unit.size == self.unit.extent => self.bytes,
            None => self.bytes / self.unit.extent.max(1) * self.unit.size,
        }
    }

    /// Whether the data is one contiguous block at `addr`.
    pub fn is_contiguous(&self) -> bool {
        self.layout.is_none() && self.unit.size == self.unit.extent
    }
}

/// One step of a schedule.
#[derive(Clone, Debug)]
pub enum Step {
    /// Send `data` to rank `peer` of communicator `comm`.
    Send {
        /// Communicator (table index): the schedule's own, or for an intercommunicator's
        /// collective possibly the hidden communicator of its local group.
        comm: u32,
        /// Destination rank.
        peer: i32,
        /// What to send.
        data: Span,
    },
    /// Receive from rank `peer` of communicator `comm` into `data`.
    Recv {
        /// Communicator (table index), as for `Send`.
        comm: u32,
        /// Source rank.
        peer: i32,
        /// Where to receive.
        data: Span,
    },
    /// `dst = src op dst` over `count` elements laid out by the reducer's datatype.
    Reduce {
        /// The checked (op, datatype) pair.
        reducer: Reducer,
        /// Elements.
        count: usize,
        /// First operand address.
        src: usize,
        /// Second operand and result address.
        dst: usize,
    },
    /// Copies `src` into `dst` (same packed size; layouts may differ).
    Copy {
        /// Source.
        src: Span,
        /// Destination.
        dst: Span,
    },
}

/// A collective operation's plan and its execution state.
#[derive(Debug)]
pub struct Schedule {
    /// Communicator (table index).
    pub comm: u32,
    /// Tag of its traffic.
    pub tag: i32,
    /// Communicator the next sends and receives address (see [`Schedule::target`]).
    target: u32,
    /// Sub-group the next sends and receives address: peer `i` is rank `peers[i]` of the
    /// target communicator (see [`Schedule::group`]).
    peers: Option<std::sync::Arc<[i32]>>,
    rounds: Vec<Vec<Step>>,
    tmps: Vec<Vec<u8>>,
    current: usize,
    pending: Vec<u32>,
    started: bool,
    /// When the current round was posted (ns), while tracing.
    round_start: Option<u64>,
    /// Set instead of steps when the call takes the shared-memory path (`coll::shm`).
    pub shm: Option<crate::coll::shm::Plan>,
    /// A schedule built only to be read (the simulator, `crate::sim`): temporaries get
    /// distinct addresses without memory behind them; it must never run.
    modelled: bool,
}

// SAFETY-free by construction: addresses are plain integers; the engine dereferences them only
// in `run_local`, whose safety argument is documented there.

impl Default for Schedule {
    /// An empty schedule on communicator 0 (to be [`Schedule::retarget`]ed).
    fn default() -> Self {
        Schedule::new(0, 0)
    }
}

impl Schedule {
    /// An empty schedule on communicator `comm` with tag `tag`.
    pub fn new(comm: u32, tag: i32) -> Schedule {
        Schedule {
            comm,
            tag,
            target: comm,
            peers: None,
            rounds: Vec::new(), // the first step opens the first round (no allocation before)
            tmps: Vec::new(),
            current: 0,
            pending: Vec::new(),
            started: false,
            round_start: None,
            shm: None,
            modelled: false,
        }
    }

    /// An empty schedule that is only built and read, never run (the simulator,
    /// `crate::sim`): [`Schedule::tmp`] hands out distinct addresses without allocating, so
    /// thousands of ranks' schedules of large collectives can be built in one process.
    pub fn modelled() -> Schedule {
        Schedule {
            modelled: true,
            ..Schedule::new(0, 0)
        }
    }

    /// Makes this (empty) schedule one on communicator `comm` with tag `tag`, in place.
    pub fn retarget(&mut self, comm: u32, tag: i32) {
        debug_assert!(self.rounds.is_empty() && self.shm.is_none());
        self.comm = comm;
        self.tag = tag;
        self.target = comm;
    }

    /// A zeroed temporary buffer of `bytes` bytes owned by the schedule; returns its address
    /// (stable for the schedule's life).
    pub fn tmp(&mut self, bytes: usize) -> usize {
        if self.modelled {
            // Addresses in a range no user buffer of a modelled schedule uses, one per
            // temporary (8-byte aligned); nothing is ever read or written through them.
            let a = MODELLED_TMP_BASE + self.tmps.len() * (1 << 40);
            self.tmps.push(Vec::new());
            return a;
        }
        let v = vec![0u8; bytes.max(1)];
        let a = v.as_ptr() as usize;
        self.tmps.push(v);
        a
    }

    /// Adds a step to the current round.
    pub fn push(&mut self, s: Step) {
        match self.rounds.last_mut() {
            Some(r) => r.push(s),
            None => self.rounds.push(vec![s]),
        }
    }

    /// Makes the following sends and receives address communicator `comm` (table index)
    /// until the next call; returns the previous target. An intercommunicator's collective
    /// uses it to run intracommunicator algorithms over the hidden communicator of its local
    /// group, under the same tag (that communicator carries no other collective traffic).
    pub fn target(&mut self, comm: u32) -> u32 {
        std::mem::replace(&mut self.target, comm)
    }

    /// Makes the following sends and receives address the sub-group `ranks` of the target
    /// communicator (peer `i` is its rank `ranks[i]`; `None`: the whole communicator) until
    /// the next call; returns the previous sub-group. The node-aware algorithms run their
    /// phases over node, leader and object groups this way (`coll::algos::hier`), under the
    /// collective's one tag: each pair of processes meets in the phases in the same order on
    /// both sides, so their messages match in order.
    pub fn group(&mut self, ranks: Option<std::sync::Arc<[i32]>>) -> Option<std::sync::Arc<[i32]>> {
        std::mem::replace(&mut self.peers, ranks)
    }

    /// The target communicator's rank of `peer` under the current sub-group.
    #[inline]
    fn peer(&self, peer: i32) -> i32 {
        match &self.peers {
            Some(m) if peer >= 0 => m[peer as usize],
            _ => peer,
        }
    }

    /// Sends `data` to `peer` in the current round.
    pub fn send(&mut self, peer: i32, data: Span) {
        let comm = self.target;
        let peer = self.peer(peer);
        self.push(Step::Send { comm, peer, data });
    }

    /// Receives from `peer` into `data` in the current round.
    pub fn recv(&mut self, peer: i32, data: Span) {
        let comm = self.target;
        let peer = self.peer(peer);
        self.push(Step::Recv { comm, peer, data });
    }

    /// `dst = src op dst` after the current round's communication.
    pub fn reduce(&mut self, reducer: Reducer, count: usize, src: usize, dst: usize) {
        self.push(Step::Reduce {
            reducer,
            count,
            src,
            dst,
        });
    }

    /// Copies `src` to `dst` after the current round's communication.
    pub fn copy(&mut self, src: Span, dst: Span) {
        self.push(Step::Copy { src, dst });
    }

    /// Ends the current round (no-op when it is empty).
    pub fn next_round(&mut self) {
        if self.rounds.last().is_some_and(|r| !r.is_empty()) {
            self.rounds.push(Vec::new());
        }
    }

    /// The non-empty rounds, in order: each round's steps as [`Schedule::dump`] lists them.
    pub fn round_steps(&self) -> impl Iterator<Item = &[Step]> {
        self.rounds
            .iter()
            .filter(|r| !r.is_empty())
            .map(|r| r.as_slice())
    }

    /// Number of rounds.
    pub fn rounds(&self) -> usize {
        self.rounds.iter().filter(|r| !r.is_empty()).count()
    }

    /// A readable listing of the schedule (one line per step, rounds numbered).
    pub fn dump(&self) -> String {
        let mut s = format!("schedule comm={} tag={}\n", self.comm, self.tag);
        for (i, r) in self
            .rounds
            .iter()
            .enumerate()
            .filter(|(_, r)| !r.is_empty())
        {
            for step in r {
                let _ = match step {
                    Step::Send { comm, peer, data } => {
                        writeln!(s, "  round {i}: send {} B to {peer}@{comm}", data.bytes)
                    }
                    Step::Recv { comm, peer, data } => {
                        writeln!(s, "  round {i}: recv {} B from {peer}@{comm}", data.bytes)
                    }
                    Step::Reduce { count, .. } => {
                        writeln!(s, "  round {i}: reduce {count} elements")
                    }
                    Step::Copy { src, .. } => writeln!(s, "  round {i}: copy {} B", src.bytes),
                };
            }
        }
        s
    }

    fn post_round(&mut self, rt: &mut Runtime) -> MpiResult<()> {
        let Some(round) = self.rounds.get(self.current) else {
            return Ok(());
        };
        let mut ids = Vec::new();
        // Receives first, so a message to self finds its receive posted.
        for step in round {
            if let Step::Recv { comm, peer, data } = step {
                let rid = rt.new_request(ReqKind::Recv, *comm)?;
                rt.start_recv(
                    rid,
                    RecvArgs {
                        comm: *comm,
                        src: *peer,
                        tag: self.tag,
                        buf: data.addr as *mut u8,
                        cap: data.bytes,
                        unit: data.unit,
                        layout: data.layout.clone(),
                    },
                )?;
                ids.push(rid);
            }
        }
        for step in round {
            if let Step::Send { comm, peer, data } = step {
                let rid = rt.new_request(ReqKind::Send, *comm)?;
                rt.start_send(
                    rid,
                    SendArgs {
                        comm: *comm,
                        dest: *peer,
                        tag: self.tag,
                        buf: data.addr as *const u8,
                        bytes: data.bytes,
                        mode: SendMode::Standard,
                        unit: data.unit,
                        layout: data.layout.clone(),
                    },
                )?;
                ids.push(rid);
            }
        }
        self.pending = ids;
        self.round_start = crate::core::diag::trace::begin();
        Ok(())
    }

    /// Records the current round in the trace (begun at `start`).
    #[cold]
    #[inline(never)]
    fn trace_round(&self, start: u64) {
        let round = &self.rounds[self.current];
        let sent: usize = round
            .iter()
            .map(|s| match s {
                Step::Send { data, .. } => data.bytes,
                _ => 0,
            })
            .sum();
        crate::core::diag::trace::round(start, self.current, round.len(), sent, self.tag);
    }

    fn run_local(&self) {
        for step in &self.rounds[self.current] {
            match step {
                Step::Reduce {
                    reducer,
                    count,
                    src,
                    dst,
                } => {
                    // SAFETY: `src` and `dst` are user buffers the caller of the collective
                    // keeps valid for `count` elements until it completes (MPI's contract), or
                    // temporaries of this schedule sized by the algorithm for them.
                    unsafe { reducer.apply_raw(*count, *src as *const u8, *dst as *mut u8) }
                }
                Step::Copy { src, dst } => copy_span(src, dst),
                _ => {}
            }
        }
    }

    /// Advances; true once the whole schedule has run.
    pub fn poll(&mut self, rt: &mut Runtime) -> MpiResult<bool> {
        debug_assert!(!self.modelled, "a modelled schedule never runs");
        if !self.started {
            self.started = true;
            self.post_round(rt)?;
        }
        while self.current < self.rounds.len() {
            if !crate::core::objects::team::all_done(rt, &self.pending)? {
                return Ok(false);
            }
            self.pending.clear();
            self.run_local();
            if let Some(start) = self.round_start.take() {
                self.trace_round(start);
            }
            self.current += 1;
            self.post_round(rt)?;
        }
        Ok(true)
    }

    /// Makes a completed schedule ready to run again (persistent collectives).
    pub fn reset(&mut self) {
        self.current = 0;
        self.started = false;
        self.pending.clear();
    }

    /// Runs to completion (blocking; call outside `runtime::with`).
    pub fn run(mut self) -> MpiResult<()> {
        // A blocking collective waits for its messages: it says so before the first of them
        // leaves (as a blocking send does), so that a node peer matching a large one at once
        // streams it through the cells with us instead of copying it alone; the wait
        // withdraws the mark when it ends.
        let mut first = true;
        runtime::wait_for_published(|rt| {
            if first {
                rt.set_waiting(true);
                first = false;
            }
            Ok(self.poll(rt)?.then_some(()))
        })
    }
}

/// Copies the data of `src` into `dst` (packing and unpacking derived layouts).
fn copy_span(src: &Span, dst: &Span) {
    let n = src.packed().min(dst.packed());
    if n == 0 {
        return;
    }
    if src.is_contiguous() && dst.is_contiguous() {
        // SAFETY: both spans describe `n` valid bytes (user buffers kept valid by the caller
        // for the collective's duration, or schedule temporaries); MPI forbids overlapping
        // send and receive buffers, and algorithms never copy a temporary onto itself.
        unsafe { std::ptr::copy(src.addr as *const u8, dst.addr as *mut u8, n) };
        return;
    }
    let packed = pack_span(src, n);
    unpack_span(dst, &packed);
}

fn pack_span(s: &Span, n: usize) -> Vec<u8> {
    let mut out = vec![0u8; n];
    match &s.layout {
        // SAFETY: the layout describes the valid memory of the user's buffer at `addr`.
        Some(l) => unsafe { l.pack(s.addr, 0, &mut out) },
        // SAFETY: the span describes valid elements at `addr` holding `n` bytes of data.
        None => unsafe { crate::core::p2p::pack_into(s.addr as *const u8, s.unit, &mut out) },
    }
    out
}

fn unpack_span(d: &Span, data: &[u8]) {
    match &d.layout {
        // SAFETY: as in `pack_span`, for the destination buffer.
        Some(l) => unsafe { l.unpack(d.addr, 0, data) },
        // SAFETY: the span describes valid elements at `addr` with room for `data`.
        None => unsafe { crate::core::p2p::unpack_from(d.addr as *mut u8, d.unit, data) },
    }
}

/// A nonblocking collective: its schedule, advanced by the progress engine until it
/// completes request `rid`.
pub struct ScheduleOp {
    sched: Option<Box<Schedule>>,
    rid: u32,
    persistent: bool,
}

impl ScheduleOp {
    /// Runs `sched` in the background and completes request `rid` when done; a persistent
    /// request gets its schedule back for the next `MPI_Start`.
    pub fn new(sched: Box<Schedule>, rid: u32, persistent: bool) -> ScheduleOp {
        ScheduleOp {
            sched: Some(sched),
            rid,
            persistent,
        }
    }
}

impl Background for ScheduleOp {
    fn poll(&mut self, rt: &mut Runtime) -> bool {
        let result = match self.sched.as_mut().expect("running schedule").poll(rt) {
            Ok(false) => return false,
            Ok(true) => Ok(()),
            Err(e) => Err(e),
        };
        if let Some(r) = rt.reqs.get_mut(self.rid) {
            if let Err(e) = result {
                r.status.error = e.class();
            }
            if self.persistent {
                let mut s = self.sched.take().unwrap();
                s.reset();
                r.extra().schedule = Some(s as Box<dyn std::any::Any>);
            }
        }
        rt.complete(self.rid);
        true
    }
}

/// Starts `sched` as a nonblocking operation: returns the request handle.
pub fn start(rt: &mut Runtime, sched: Schedule) -> MpiResult<usize> {
    let rid = rt.new_request(ReqKind::Done, sched.comm)?;
    rt.background
        .push(Box::new(ScheduleOp::new(Box::new(sched), rid, false)));
    // Post the first round now so the operation is under way before the call returns.
    let _ = rt.poll_background();
    Ok(rt.reqs.handle(rid))
}

/// Makes `sched` a persistent collective request (inactive until `MPI_Start`); returns the
/// request handle.
pub fn persistent(rt: &mut Runtime, sched: Schedule) -> MpiResult<usize> {
    let rid = rt.new_request(ReqKind::Done, sched.comm)?;
    let r = rt.reqs.get_mut(rid).unwrap();
    r.set_persistent(true);
    r.set_active(false);
    r.set_done(true);
    r.extra().schedule = Some(Box::new(sched) as Box<dyn std::any::Any>);
    Ok(rt.reqs.handle(rid))
}

/// `MPI_Start` of persistent collective `rid`: runs its schedule in the background. Returns
/// false when `rid` is not a persistent collective.
pub fn start_persistent(rt: &mut Runtime, rid: u32) -> MpiResult<bool> {
    let r = rt.reqs.get_mut(rid).expect("live request");
    let Some(parked) = r.extra_mut().and_then(|e| e.schedule.take()) else {
        return Ok(false);
    };
    let s = match parked.downcast::<Schedule>() {
        Ok(s) => s,
        Err(other) => {
            r.extra().schedule = Some(other);
            return Ok(false);
        }
    };
    if r.active() {
        r.extra().schedule = Some(s as Box<dyn std::any::Any>);
        return fail(MPI_ERR_REQUEST, "the persistent request is already active");
    }
    r.set_active(true);
    r.set_done(false);
    r.status = crate::core::p2p::request::Status::EMPTY;
    rt.background.push(Box::new(ScheduleOp::new(s, rid, true)));
    let _ = rt.poll_background();
    Ok(true)
}

/// Checks a root argument.
pub fn check_root(root: i32, size: i32) -> MpiResult<()> {
    if root < 0 || root >= size {
        return fail(
            MPI_ERR_ROOT,
            format!("invalid root {root} (the communicator has {size} ranks)"),
        );
    }
    Ok(())
}
