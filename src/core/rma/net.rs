//! Windows across nodes: a one-sided operation whose target is on another node travels as a
//! request message to that rank's *window server*, which does the work in its own memory and
//! answers. Ranks on one node keep the shared control block and reach each other's memory
//! directly; every node maps a control block of its own, and the servers apply the remote
//! requests under the same lock words and accumulate locks the node's ranks use, so locks,
//! accumulates and generalized active-target counters stay one mechanism.
//!
//! Puts, gets, accumulates and unlocks are *deferred*: the call sends the request and the
//! window keeps it ([`Started`]); the next synchronization that completes operations
//! (flushes, unlock, fence, complete, free) waits for the answers, lands fetched data and
//! reports errors. Locks, posts, completes, compare-and-swap and the request forms (`MPI_R*`)
//! wait for their answer before they return. A server handles an origin's requests in the
//! order they arrive, so accumulates keep MPI's ordering.
//! Requests go on the window's private communicator under [`tag::RMA`]; each answer comes
//! back under a tag of its own ([`tag::rma_reply`]), so threads may issue operations at once.
//! The server is a background operation of the progress engine: a target serves requests
//! whenever it is inside MPI (or its asynchronous progress thread runs).
//!
//! A request: six words (kind and flags, answer sequence, op handle, element type handle,
//! segment count, data bytes), the target segments as (offset, length) pairs relative to
//! the target's window base (addresses for dynamic windows), then the origin data packed.
//! An answer: a word with the MPI error class (0: success), then the data or the message.
//! Large gets and puts ([`SPLIT`]) move their data as a message of its own, between the
//! origin buffer and the window memory, without a copy into or out of a request.

use crate::core::datatype::{self, Layout, TypeInfo};
use crate::core::error::{fail, MpiResult};
use crate::core::objects::team::{self, tag};
use crate::core::op::Builtin;
use crate::core::p2p::matching::Pattern;
use crate::core::p2p::request::{ReqKind, SendMode};
use crate::core::p2p::{wire_ctx, RecvArgs, SendArgs};
use crate::core::rma::access::{Element, Shape};
use crate::core::rma::atomic;
use crate::core::rma::ctrl::Ctrl;
use crate::core::rma::epoch::LockKind;
use crate::core::runtime::{self, Background, Runtime};
use crate::mpi_abi::consts::*;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

/// What a request asks of the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// Write the data to the segments.
    Put = 1,
    /// Answer the segments' data.
    Get = 2,
    /// Combine the data into the segments (answering the old data when `FETCH` is set).
    Acc = 3,
    /// Compare one element with the second half of the data; write the first half if equal.
    Cas = 4,
    /// Take the passive-target lock (the answer waits until it is taken).
    Lock = 5,
    /// Release the passive-target lock.
    Unlock = 6,
    /// The sender (a target) posted an exposure epoch to us (`MPI_Win_post`).
    Post = 7,
    /// The sender (an origin) completed its access epoch on us (`MPI_Win_complete`).
    Complete = 8,
    /// Answer once the sender's earlier requests are done, with the first error one of its
    /// unanswered requests met since its last flush.
    Flush = 9,
}

impl Kind {
    fn of(b: u8) -> Option<Kind> {
        Some(match b {
            1 => Kind::Put,
            2 => Kind::Get,
            3 => Kind::Acc,
            4 => Kind::Cas,
            5 => Kind::Lock,
            6 => Kind::Unlock,
            7 => Kind::Post,
            8 => Kind::Complete,
            9 => Kind::Flush,
            _ => return None,
        })
    }
}

/// Flag of the first word: an accumulate answers the target's old data.
const FETCH: u64 = 1 << 16;
/// Flag of the first word: the lock is exclusive.
const EXCLUSIVE: u64 = 1 << 17;
/// Flag of the first word: the sender awaits an answer (else an error waits for its flush).
const ANSWER: u64 = 1 << 18;
/// Flag of the first word of a `Get` or `Put`: its data travels as a message of its own.
/// A get's comes back under the answer's sequence plus one, which the origin receives
/// straight into its buffer (the answer then carries only the error class); without the
/// flag, the data follows the class in the answer and the origin copies it out. A put's
/// goes from the origin buffer itself under [`tag::rma_data`] of the request's sequence,
/// which the server receives straight into the window memory (one target segment) and
/// answers, if asked, once it landed; without the flag, it is packed into the request. An
/// accumulate's goes the same way, and the server applies the request once it arrived.
const SPLIT: u64 = 1 << 19;
/// Flag of the first word of a fetching accumulate: the old data comes back as a message of
/// its own under the answer's sequence plus one, received straight into the result buffer
/// (the answer carries only the error class), as a [`SPLIT`] get's.
const FETCH_APART: u64 = 1 << 20;
/// Gets, puts and accumulates of at least this many bytes are [`SPLIT`] (fetching
/// accumulates [`FETCH_APART`]): below, the copy
/// costs less than a second message.
const SPLIT_MIN: usize = 16 * 1024;
/// Words before the segments.
const WORDS: usize = 6;
/// Longest error message an answer carries.
const MESSAGE: usize = 256;

/// Sequence numbers of answers (their tags), unique per process.
static NEXT_SEQ: AtomicU64 = AtomicU64::new(1);

/// Where an answer's data goes at the origin.
#[derive(Debug)]
pub enum Landing {
    /// Nowhere (the answer only acknowledges).
    Nothing,
    /// Unpacked into a local buffer.
    Shape(Shape),
    /// Copied to `len` bytes at an address.
    Raw(usize),
    /// Received straight into a local buffer by a receive of its own ([`SPLIT`]).
    Placed(Shape),
}

/// A request to a rank on another node, made inside the runtime and run outside it.
#[derive(Debug)]
pub struct Call {
    /// The window's communicator (handle).
    comm: usize,
    /// Target's window rank.
    target: i32,
    /// The request (its sequence word filled in when sent).
    msg: Vec<u8>,
    /// Data bytes of a successful answer.
    answer: usize,
    /// The server answers this request.
    answered: bool,
    /// Where they go.
    land: Landing,
    /// The origin data of a [`SPLIT`] put, sent from the origin buffer after the request.
    data_from: Option<Shape>,
}

/// The parts of a request besides its kind.
#[derive(Debug, Default)]
pub struct Parts {
    /// `FETCH`/`EXCLUSIVE` flags.
    flags: u64,
    /// Op handle (accumulates).
    op: usize,
    /// Element type handle (accumulates, compare-and-swap).
    basic: usize,
    /// Target segments (offset, length).
    segs: Vec<(usize, usize)>,
    /// Origin data.
    data: Vec<u8>,
}

impl Call {
    fn new(comm: usize, target: i32, kind: Kind, p: Parts, answer: usize, land: Landing) -> Call {
        // Operations without data to return are answered only when an error must be
        // reported by the call itself (`Parts::flags` has `ANSWER`); releases and epoch
        // notices are never answered.
        let answered = match kind {
            Kind::Put | Kind::Acc | Kind::Unlock => answer > 0 || p.flags & ANSWER != 0,
            Kind::Post | Kind::Complete => false,
            Kind::Get | Kind::Cas | Kind::Lock | Kind::Flush => true,
        };
        let flags = if answered { p.flags | ANSWER } else { p.flags };
        let mut msg = Vec::with_capacity(8 * (WORDS + 2 * p.segs.len()) + p.data.len());
        let head = [
            kind as u64 | flags,
            0,
            p.op as u64,
            p.basic as u64,
            p.segs.len() as u64,
            p.data.len() as u64,
        ];
        for w in head {
            msg.extend_from_slice(&w.to_ne_bytes());
        }
        for &(o, l) in &p.segs {
            msg.extend_from_slice(&(o as u64).to_ne_bytes());
            msg.extend_from_slice(&(l as u64).to_ne_bytes());
        }
        msg.extend_from_slice(&p.data);
        Call {
            comm,
            target,
            msg,
            answer,
            answered,
            land,
            data_from: None,
        }
    }

    /// The target a flush must reach for this request to be complete there: an unanswered
    /// operation's.
    pub fn unflushed_target(&self) -> Option<i32> {
        let op = matches!(Kind::of(self.msg[0]), Some(Kind::Put | Kind::Acc));
        (op && !self.answered).then_some(self.target)
    }

    /// The target of a lock release (unanswered: a flush before the window is freed makes
    /// sure its server handled it, since a later window may reuse the communicator's
    /// context and must not see it).
    pub fn released_target(&self) -> Option<i32> {
        let release = Kind::of(self.msg[0]) == Some(Kind::Unlock);
        (release && !self.answered).then_some(self.target)
    }

    /// A lock release of `target`; `answered`: the server answers once it handled the
    /// earlier requests, with their first error (it then stands for a flush).
    pub fn unlock(comm: usize, target: i32, kind: LockKind, answered: bool) -> Call {
        let mut flags = if answered { ANSWER } else { 0 };
        if kind == LockKind::Exclusive {
            flags |= EXCLUSIVE;
        }
        let p = Parts {
            flags,
            ..Parts::default()
        };
        Call::new(comm, target, Kind::Unlock, p, 0, Landing::Nothing)
    }

    /// A flush of `target`: answered after the earlier requests, with their first error.
    pub fn flush(comm: usize, target: i32) -> Call {
        Call::new(
            comm,
            target,
            Kind::Flush,
            Parts::default(),
            0,
            Landing::Nothing,
        )
    }

    /// A synchronization message (`Lock`, `Unlock`, `Post`, `Complete`) to `target`.
    pub fn sync(comm: usize, target: i32, kind: Kind, lock: Option<LockKind>) -> Call {
        let flags = match lock {
            Some(LockKind::Exclusive) => EXCLUSIVE,
            _ => 0,
        };
        Call::new(
            comm,
            target,
            kind,
            Parts {
                flags,
                ..Parts::default()
            },
            0,
            Landing::Nothing,
        )
    }

    /// `MPI_Put` of local data `o` to target segments `t` (offsets); `answered`: the target
    /// answers (else errors wait for the next flush).
    ///
    /// # Safety
    /// `o` must be readable.
    /// `o` must be readable; from [`SPLIT_MIN`] bytes on, it is read until the operation
    /// completes (MPI forbids changing it before).
    pub unsafe fn put(comm: usize, target: i32, o: &Shape, t: &Shape, answered: bool) -> Call {
        let split = o.bytes() >= SPLIT_MIN;
        let mut data = Vec::new();
        if !split {
            data.resize(o.bytes(), 0);
            // SAFETY: caller guarantee.
            unsafe { o.pack(&mut data) };
        }
        let p = Parts {
            flags: if answered { ANSWER } else { 0 } | if split { SPLIT } else { 0 },
            segs: t.segments(),
            data,
            ..Parts::default()
        };
        let mut call = Call::new(comm, target, Kind::Put, p, 0, Landing::Nothing);
        call.data_from = split.then(|| o.clone());
        call
    }

    /// `MPI_Get` of target segments `t` into local buffer `o` (writable until the call ran).
    pub fn get(comm: usize, target: i32, o: Shape, t: &Shape) -> Call {
        let n = t.bytes();
        let split = n >= SPLIT_MIN;
        let p = Parts {
            flags: if split { SPLIT } else { 0 },
            segs: t.segments(),
            ..Parts::default()
        };
        if split {
            return Call::new(comm, target, Kind::Get, p, 0, Landing::Placed(o));
        }
        Call::new(comm, target, Kind::Get, p, n, Landing::Shape(o))
    }

    /// The accumulate family: `origin op target` into segments `t` (op `MPI_NO_OP`: none),
    /// the old data into `result` when given; `answered` as for [`Call::put`].
    ///
    /// # Safety
    /// `o` must be readable; from [`SPLIT_MIN`] bytes on, it is read until the operation
    /// completes (MPI forbids changing it before).
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn accumulate(
        comm: usize,
        target: i32,
        o: &Shape,
        t: &Shape,
        result: Option<Shape>,
        op: usize,
        basic: usize,
        answered: bool,
    ) -> Call {
        let split = op != MPI_NO_OP && o.bytes() >= SPLIT_MIN;
        let mut data = Vec::new();
        if op != MPI_NO_OP && !split {
            data.resize(o.bytes(), 0);
            // SAFETY: caller guarantee; `data` holds the shape's bytes.
            unsafe { o.pack(&mut data) };
        }
        let mut flags =
            if result.is_some() { FETCH } else { 0 } | if answered { ANSWER } else { 0 };
        if split {
            flags |= SPLIT;
        }
        let apart = result.is_some() && t.bytes() >= SPLIT_MIN;
        if apart {
            flags |= FETCH_APART | ANSWER;
        }
        let p = Parts {
            flags,
            op,
            basic,
            segs: t.segments(),
            data,
        };
        let (n, land) = match result {
            Some(r) if apart => (0, Landing::Placed(r)),
            Some(r) => (t.bytes(), Landing::Shape(r)),
            None => (0, Landing::Nothing),
        };
        let mut call = Call::new(comm, target, Kind::Acc, p, n, land);
        call.data_from = split.then(|| o.clone());
        call
    }

    /// `MPI_Compare_and_swap` of one `size`-byte element at target segment `t`.
    ///
    /// # Safety
    /// `origin` and `compare` readable, `result` writable (until the call ran), `size` bytes.
    pub unsafe fn compare_and_swap(
        comm: usize,
        target: i32,
        (origin, compare, result): (usize, usize, usize),
        t: &Shape,
        size: usize,
    ) -> Call {
        let mut data = vec![0u8; 2 * size];
        // SAFETY: caller guarantee; `data` is ours.
        unsafe {
            std::ptr::copy_nonoverlapping(origin as *const u8, data.as_mut_ptr(), size);
            std::ptr::copy_nonoverlapping(compare as *const u8, data[size..].as_mut_ptr(), size);
        }
        let p = Parts {
            segs: t.segments(),
            data,
            ..Parts::default()
        };
        Call::new(comm, target, Kind::Cas, p, size, Landing::Raw(result))
    }
}

/// A request sent, its answer (if any) awaited.
#[derive(Debug)]
pub struct Started {
    call: Call,
    answer: Vec<u8>,
    rids: Vec<u32>,
}

/// Sends `call` on the window's communicator (table index `comm`), its answer's receive
/// posted first.
pub fn start(rt: &mut Runtime, comm: u32, mut call: Call) -> MpiResult<Started> {
    let mut rids = Vec::with_capacity(3);
    let mut answer = Vec::new();
    let mut seq = 0;
    if call.answered || call.data_from.is_some() {
        let placed = matches!(call.land, Landing::Placed(_));
        seq = NEXT_SEQ.fetch_add(1 + placed as u64, Ordering::Relaxed);
        call.msg[8..16].copy_from_slice(&seq.to_ne_bytes());
    }
    if call.answered {
        answer = vec![0u8; 8 + call.answer.max(MESSAGE)];
        rids.push(team::post_recv(
            rt,
            comm,
            call.target,
            tag::rma_reply(seq),
            &mut answer,
        )?);
        if let Landing::Placed(o) = &call.land {
            rids.push(post_placed_recv(
                rt,
                comm,
                call.target,
                tag::rma_reply(seq + 1),
                o,
            )?);
        }
    }
    rids.push(team::post_send(rt, comm, call.target, tag::RMA, &call.msg)?);
    if let Some(o) = &call.data_from {
        let data_tag = tag::rma_data(seq);
        rids.push(post_placed_send(rt, comm, call.target, data_tag, o)?);
    }
    // The buffers move with `Started`, their heap storage does not.
    Ok(Started { call, answer, rids })
}

/// Shape `o` as a message buffer: its address, its bytes (packed), its element type and,
/// for a derived layout, the layout.
fn message_parts(o: &Shape) -> (usize, usize, TypeInfo, Option<Layout>) {
    match o {
        Shape::Contig { addr, len } => (
            *addr,
            *len,
            datatype::lookup(MPI_BYTE).expect("MPI_BYTE is predefined"),
            None,
        ),
        Shape::Spread { addr, layout } => (
            *addr,
            layout.bytes(),
            layout.dt.info(),
            Some(layout.clone()),
        ),
    }
}

/// Posts the send of a [`SPLIT`] put's or accumulate's data straight from the origin buffer
/// `o`, which the caller of the operation keeps unchanged until the operation completes.
fn post_placed_send(rt: &mut Runtime, comm: u32, dest: i32, tag: i32, o: &Shape) -> MpiResult<u32> {
    let rid = rt.new_request(ReqKind::Send, comm)?;
    let (addr, bytes, unit, layout) = message_parts(o);
    let args = SendArgs {
        comm,
        dest,
        tag,
        buf: addr as *const u8,
        bytes,
        mode: SendMode::Standard,
        unit,
        layout,
    };
    rt.start_send(rid, args)?;
    Ok(rid)
}

/// Posts the receive of a [`SPLIT`] get's data straight into the origin buffer `o`, which the
/// caller of the operation keeps writable until the operation completes.
fn post_placed_recv(rt: &mut Runtime, comm: u32, src: i32, tag: i32, o: &Shape) -> MpiResult<u32> {
    let rid = rt.new_request(ReqKind::Recv, comm)?;
    let (addr, cap, unit, layout) = message_parts(o);
    let args = RecvArgs {
        comm,
        src,
        tag,
        buf: addr as *mut u8,
        cap,
        unit,
        layout,
    };
    rt.start_recv(rid, args)?;
    Ok(rid)
}

/// Sends `calls` (to any targets of one window), waits for every answer and lands the data.
/// Call outside `runtime::with`.
pub fn run(calls: Vec<Call>) -> MpiResult<()> {
    let Some(comm) = calls.first().map(|c| c.comm) else {
        return Ok(());
    };
    let started = runtime::with(|rt| {
        let (ci, _) = rt.comm(comm)?;
        calls.into_iter().map(|c| start(rt, ci, c)).collect()
    })?;
    finish(started)
}

/// Waits for the answers of `started` and lands their data; the first error answered is
/// returned (after every answer came). Call outside `runtime::with`.
pub fn finish(started: Vec<Started>) -> MpiResult<()> {
    if started.is_empty() {
        return Ok(());
    }
    let rids: Vec<u32> = started
        .iter()
        .flat_map(|s| s.rids.iter().copied())
        .collect();
    runtime::wait_for(|rt| Ok(team::all_done(rt, &rids)?.then_some(())))?;
    let mut first_err = None;
    for s in started.iter().filter(|s| s.call.answered) {
        let (c, a) = (&s.call, &s.answer);
        let code = u64::from_ne_bytes(a[..8].try_into().expect("8 bytes")) as i32;
        if code != MPI_SUCCESS {
            let text = &a[8..8 + MESSAGE];
            let end = text.iter().position(|&b| b == 0).unwrap_or(MESSAGE);
            let msg = format!(
                "target rank {}: {}",
                c.target,
                String::from_utf8_lossy(&text[..end])
            );
            first_err.get_or_insert((code, msg));
            continue;
        }
        let data = &a[8..8 + c.answer];
        match &c.land {
            // The data came by its own receive.
            Landing::Nothing | Landing::Placed(_) => {}
            // SAFETY: the caller of the operation gave a writable buffer of this shape, whose
            // packed size is the answer's (both were checked equal at the origin), to stay
            // valid until the operation completes (this synchronization).
            Landing::Shape(s) => unsafe { s.unpack(data) },
            // SAFETY: as above: `c.answer` writable bytes at `to`.
            Landing::Raw(to) => unsafe {
                std::ptr::copy_nonoverlapping(data.as_ptr(), *to as *mut u8, c.answer)
            },
        }
    }
    match first_err {
        Some((code, msg)) => fail(code, msg),
        None => Ok(()),
    }
}

/// What a window shares with its server.
#[derive(Debug, Default)]
pub struct Shared {
    /// The window is freed: the server ends once its answers are sent.
    closed: AtomicBool,
    /// Requests being received and answers being sent.
    busy: AtomicUsize,
}

impl Shared {
    /// Waits until the server has nothing in flight, then ends it (`MPI_Win_free`, after the
    /// closing barrier: no request can come any more). Call outside `runtime::with`.
    pub fn close(&self) -> MpiResult<()> {
        runtime::wait_for_unrung(|_| Ok((self.busy.load(Ordering::Acquire) == 0).then_some(())))?;
        self.closed.store(true, Ordering::Release);
        Ok(())
    }
}

/// This rank's memory, as its server sees it.
#[derive(Debug)]
pub struct Memory {
    /// Window base here (0 for dynamic windows: offsets are addresses).
    pub base: usize,
    /// Bytes (static windows).
    pub size: usize,
    /// A dynamic window: requests must lie in attached regions.
    pub dynamic: bool,
    /// Accumulates to it use hardware atomics per element (`rma::atomic`).
    pub atomics: bool,
}

/// A request being received.
struct Incoming {
    rid: u32,
    buf: Vec<u8>,
    src: i32,
    /// The receive of a [`SPLIT`] accumulate's data, and where it lands.
    data: Option<(u32, Vec<u8>)>,
}

impl Incoming {
    /// Posts the receive of the data of a [`SPLIT`] accumulate once its request arrived
    /// (nothing for other requests, or when posted already). Whether the request is ready
    /// to handle: it arrived, with its data if any.
    fn arrive(&mut self, rt: &mut Runtime, comm: u32, spare: &mut Spare) -> MpiResult<bool> {
        if !rt.reqs.get(self.rid).is_none_or(|q| q.done()) {
            return Ok(false);
        }
        if self.data.is_none() && self.buf.len() >= 8 * WORDS {
            let head = word(&self.buf, 0);
            let split_acc = Kind::of(head as u8) == Some(Kind::Acc) && head & SPLIT != 0;
            // (A malformed request is refused when handled.)
            if let (true, Ok(Request { seq, segs, .. })) = (split_acc, Request::parse(&self.buf)) {
                let mut into = spare.take(segs.iter().map(|s| s.1).sum());
                let rid = team::post_recv(rt, comm, self.src, tag::rma_data(seq), &mut into)?;
                self.data = Some((rid, into));
            }
        }
        match &self.data {
            Some((rid, _)) => Ok(rt.reqs.get(*rid).is_none_or(|q| q.done())),
            None => Ok(true),
        }
    }
}

/// Buffers of accumulate data kept for the next ones: a fresh large buffer costs a page
/// fault per page on every request (4 MiB accumulates between two hosts: 0.94 -> 1.10
/// GB/s).
#[derive(Default)]
struct Spare(Vec<Vec<u8>>);

impl Spare {
    /// Buffers kept at most.
    const KEEP: usize = 4;

    /// A buffer of `len` bytes (their values are whatever a previous use left).
    fn take(&mut self, len: usize) -> Vec<u8> {
        let mut b = self.0.pop().unwrap_or_default();
        b.resize(len, 0);
        b
    }

    /// Keeps `b` for a later [`Spare::take`] (up to [`Spare::KEEP`] buffers).
    fn give(&mut self, b: Vec<u8>) {
        if self.0.len() < Self::KEEP && b.capacity() > 0 {
            self.0.push(b);
        }
    }
}

/// An answer being sent.
struct Answer {
    /// Its send request.
    rid: u32,
    /// The bytes it sends, kept until sent (empty when it sends window memory).
    _buf: Vec<u8>,
    /// It sends the window memory itself to this origin ([`SPLIT`] gets of one segment):
    /// that origin's lock release waits until it is sent, so that no later epoch changes
    /// the memory under it.
    reads_for: Option<i32>,
}

/// The data of a [`SPLIT`] put being received.
struct Arrival {
    /// Its receive request.
    rid: u32,
    /// The origin: its lock release, flushes and completes wait until the data landed.
    from: i32,
    /// Where it is received when not straight into the window memory (several target
    /// segments, or a refused request whose data is drained).
    buf: Vec<u8>,
    /// The target segments to scatter `buf` to once received (empty: nothing to scatter).
    scatter: Vec<(usize, usize)>,
    /// The answer's sequence, when the origin asked for an answer: sent once the data landed.
    answer: Option<u64>,
}

/// The window server of one rank (a background operation while the window lives).
pub struct Server {
    comm: u32,
    me: usize,
    ctrl: Arc<Ctrl>,
    mem: Memory,
    shared: Arc<Shared>,
    incoming: Vec<Incoming>,
    answers: Vec<Answer>,
    arrivals: Vec<Arrival>,
    spare: Spare,
    /// Lock requests waiting for the lock: (origin, answer sequence, kind).
    locks: VecDeque<(i32, u64, LockKind)>,
    /// Per origin: the first error of its unanswered requests since its last flush.
    errors: HashMap<i32, Refusal>,
}

/// Starts the server of window rank `me` on the window's communicator (table index `comm`).
pub fn serve(rt: &mut Runtime, comm: u32, me: usize, ctrl: Arc<Ctrl>, mem: Memory) -> Arc<Shared> {
    let shared = Arc::new(Shared::default());
    rt.background.push(Box::new(Server {
        comm,
        me,
        ctrl,
        mem,
        shared: shared.clone(),
        incoming: Vec::new(),
        answers: Vec::new(),
        arrivals: Vec::new(),
        spare: Spare::default(),
        locks: VecDeque::new(),
        errors: HashMap::new(),
    }));
    shared
}

/// A failed request: the class and message for the answer.
type Refusal = (i32, String);

fn word(b: &[u8], k: usize) -> u64 {
    u64::from_ne_bytes(b[8 * k..8 * k + 8].try_into().expect("8 bytes"))
}

impl Background for Server {
    fn poll(&mut self, rt: &mut Runtime) -> bool {
        if let Err(e) = self.step(rt) {
            eprintln!("hympi[{}]: window server: {}", rt.world_rank, e.message());
        }
        let busy = self.incoming.len() + self.answers.len() + self.arrivals.len();
        self.shared.busy.store(busy, Ordering::Release);
        busy == 0 && self.shared.closed.load(Ordering::Acquire)
    }
}

impl Server {
    fn step(&mut self, rt: &mut Runtime) -> MpiResult<()> {
        if self.shared.closed.load(Ordering::Acquire) {
            return self.reap(rt);
        }
        let Some(c) = rt.comms.get(self.comm) else {
            return Ok(());
        };
        let ctx = wire_ctx(c, tag::RMA);
        let pattern = Pattern {
            ctx,
            src: MPI_ANY_SOURCE,
            tag: tag::RMA,
        };
        let unit = datatype::lookup(MPI_BYTE).expect("MPI_BYTE is predefined");
        while let Some(u) = rt
            .matchers
            .of_msg(ctx, MPI_ANY_SOURCE, tag::RMA)
            .take_unexpected(&pattern)
        {
            let len = u.payload.len() as usize;
            let src = u.env.src;
            let mut buf = vec![0u8; len];
            let rid = rt.new_request(ReqKind::Recv, self.comm)?;
            rt.prepare_recv(rid, buf.as_mut_ptr(), len, unit, None);
            rt.consume(rid, u)?;
            let mut inc = Incoming {
                rid,
                buf,
                src,
                data: None,
            };
            // An accumulate's data is asked for as soon as its request is here, so that
            // it travels while the requests ahead are handled.
            inc.arrive(rt, self.comm, &mut self.spare)?;
            self.incoming.push(inc);
        }
        // In arrival order (a large request still arriving holds back later ones): an
        // origin's operations, accumulates above all, apply in the order it issued them.
        while let Some(rid) = self.incoming.first().map(|i| i.rid) {
            if !self.incoming[0].arrive(rt, self.comm, &mut self.spare)? {
                break;
            }
            let (head, src) = (self.incoming[0].buf.first().copied(), self.incoming[0].src);
            if self.holds(head, src) {
                // Held back, and everything after it: another epoch may change the memory
                // that an answer to this origin still reads, or read the memory its data
                // has not reached yet.
                self.reap(rt)?;
                if self.holds(head, src) {
                    break;
                }
            }
            let inc = self.incoming.remove(0);
            team::all_done(rt, &[rid])?;
            let data = match &inc.data {
                Some((data_rid, data)) => {
                    team::all_done(rt, &[*data_rid])?;
                    Some(&data[..])
                }
                None => None,
            };
            self.handle(rt, inc.src, &inc.buf, data)?;
            if let Some((_, data)) = inc.data {
                self.spare.give(data);
            }
        }
        self.grant_locks(rt)?;
        self.reap(rt)
    }

    /// Whether a request of kind byte `head` from `origin` must wait: its lock release while
    /// an answer to it still reads the window memory, or its release, flush or complete
    /// while the data of its puts is still arriving.
    fn holds(&self, head: Option<u8>, origin: i32) -> bool {
        let reading = || self.answers.iter().any(|a| a.reads_for == Some(origin));
        let arriving = || self.arrivals.iter().any(|a| a.from == origin);
        match head.and_then(Kind::of) {
            Some(Kind::Unlock) => reading() || arriving(),
            Some(Kind::Flush | Kind::Complete) => arriving(),
            _ => false,
        }
    }

    /// Frees the answers sent and lands the put data received.
    fn reap(&mut self, rt: &mut Runtime) -> MpiResult<()> {
        let mut k = 0;
        while k < self.arrivals.len() {
            if !team::all_done(rt, &[self.arrivals[k].rid])? {
                k += 1;
                continue;
            }
            let a = self.arrivals.remove(k);
            // SAFETY: the segments lie in this rank's window memory (checked by `place`
            // when the request was handled; the window lives while its server is busy)
            // and `buf` holds their total.
            unsafe { scatter(&a.scatter, &a.buf) };
            if let Some(seq) = a.answer {
                self.answer(rt, a.from, seq, Ok(Vec::new()))?;
            }
        }
        let mut k = 0;
        while k < self.answers.len() {
            if team::all_done(rt, &[self.answers[k].rid])? {
                self.answers.remove(k);
            } else {
                k += 1;
            }
        }
        Ok(())
    }

    fn answer(
        &mut self,
        rt: &mut Runtime,
        to: i32,
        seq: u64,
        r: Result<Vec<u8>, Refusal>,
    ) -> MpiResult<()> {
        let msg = match r {
            Ok(mut data) => {
                let mut m = 0u64.to_ne_bytes().to_vec();
                m.append(&mut data);
                m
            }
            Err((code, text)) => {
                let mut m = (code as u64).to_ne_bytes().to_vec();
                let t = text.as_bytes();
                m.extend_from_slice(&t[..t.len().min(MESSAGE - 1)]);
                m
            }
        };
        let rid = team::post_send(rt, self.comm, to, tag::rma_reply(seq), &msg)?;
        self.answers.push(Answer {
            rid,
            _buf: msg,
            reads_for: None,
        });
        Ok(())
    }

    fn grant_locks(&mut self, rt: &mut Runtime) -> MpiResult<()> {
        while let Some(&(src, seq, kind)) = self.locks.front() {
            if !self.ctrl.try_lock(self.me, kind) {
                break;
            }
            self.locks.pop_front();
            self.answer(rt, src, seq, Ok(Vec::new()))?;
        }
        Ok(())
    }

    /// The segments of a request as addresses here, checked against this rank's memory.
    fn place(&self, segs: &[(usize, usize)]) -> Result<Vec<(usize, usize)>, Refusal> {
        let regions = self.mem.dynamic.then(|| {
            let _g = self.ctrl.acc_lock(self.me);
            self.ctrl.regions(self.me)
        });
        place(&self.mem, regions.as_deref(), segs)
    }

    /// Handles request `b` from `src`; `split`: the data of a [`SPLIT`] accumulate, which
    /// came apart from it.
    fn handle(
        &mut self,
        rt: &mut Runtime,
        src: i32,
        b: &[u8],
        split: Option<&[u8]>,
    ) -> MpiResult<()> {
        let Request {
            kind,
            head,
            seq,
            op,
            basic,
            segs,
            data,
        } = Request::parse(b)?;
        let data = split.unwrap_or(data);
        let lock = if head & EXCLUSIVE != 0 {
            LockKind::Exclusive
        } else {
            LockKind::Shared
        };
        let me = self.me;
        let r = match kind {
            Kind::Lock => {
                self.locks.push_back((src, seq, lock));
                return self.grant_locks(rt);
            }
            Kind::Unlock if head & ANSWER == 0 => {
                self.ctrl.unlock(me, lock);
                Ok(Vec::new())
            }
            Kind::Unlock | Kind::Flush => {
                if kind == Kind::Unlock {
                    self.ctrl.unlock(me, lock);
                }
                // Answered after the sender's earlier requests: their first error, if any.
                match self.errors.remove(&src) {
                    Some(e) => Err(e),
                    None => Ok(Vec::new()),
                }
            }
            Kind::Post => {
                self.ctrl
                    .post_count(src as usize, me)
                    .fetch_add(1, Ordering::Release);
                Ok(Vec::new())
            }
            Kind::Complete => {
                self.ctrl
                    .complete_count(me, src as usize)
                    .fetch_add(1, Ordering::Release);
                Ok(Vec::new())
            }
            Kind::Put if head & SPLIT != 0 => {
                return self.receive_put(rt, src, head, seq, &segs);
            }
            Kind::Put => self.place(&segs).map(|at| {
                // SAFETY: the segments lie in this rank's window memory (checked by
                // `place`), which lives while the window does; `data` holds their total.
                unsafe { scatter(&at, data) };
                Vec::new()
            }),
            Kind::Get if head & SPLIT != 0 => {
                // The data under the next sequence (none after an error), then the class.
                let data_tag = tag::rma_reply(seq + 1);
                let r = match self.place(&segs) {
                    Ok(at) if at.len() == 1 => {
                        // SAFETY: one segment of this rank's window memory (`place`), which
                        // lives until the window is freed, and the window is not freed
                        // while an answer is being sent (`Shared::busy`). What the send reads
                        // changes only in a conflicting access or a later epoch, and the
                        // origin's lock release waits until it is sent (`reads_for`).
                        let window =
                            unsafe { std::slice::from_raw_parts(at[0].0 as *const u8, at[0].1) };
                        let rid = team::post_send(rt, self.comm, src, data_tag, window)?;
                        self.answers.push(Answer {
                            rid,
                            _buf: Vec::new(),
                            reads_for: Some(src),
                        });
                        return self.answer(rt, src, seq, Ok(Vec::new()));
                    }
                    // SAFETY: as for `Put`, reading.
                    Ok(at) => Ok(unsafe { gather(&at) }),
                    Err(e) => Err(e),
                };
                return self.answer_apart(rt, src, seq, r);
            }
            Kind::Get => self.place(&segs).map(|at| {
                // SAFETY: as for `Put`, reading.
                unsafe { gather(&at) }
            }),
            Kind::Acc => match (self.place(&segs), element(rt, op, basic)) {
                (Ok(at), Ok(el)) if self.mem.atomics && atomic::width(basic).is_some() => {
                    let size = atomic::width(basic).expect("checked");
                    let fetch = head & FETCH != 0;
                    let total: usize = at.iter().map(|s| s.1).sum();
                    if el.is_some() && data.len() != total {
                        Err((
                            MPI_ERR_INTERN,
                            "an accumulate request's data does not match its target".into(),
                        ))
                    } else {
                        // SAFETY: the segments lie in this rank's window memory (`place`),
                        // whole elements of `basic`; `data` holds their total (checked; a
                        // `MPI_NO_OP` reads none).
                        Ok(unsafe {
                            atomic::accumulate_packed(
                                &self.ctrl,
                                me,
                                size,
                                &at,
                                data,
                                fetch,
                                el.as_ref(),
                            )
                        })
                    }
                }
                (Ok(at), Ok(el)) => {
                    let _g = self.ctrl.acc_lock(me);
                    // SAFETY: as for `Put`; the accumulate lock makes the update atomic with
                    // every other accumulate to this rank, on the node or from afar.
                    let old = (head & FETCH != 0).then(|| unsafe { gather(&at) });
                    if let Some(el) = el {
                        // SAFETY: as above.
                        if !unsafe { reduce_in_place(&at, data, &el) } {
                            // SAFETY: as above.
                            let mut cur = unsafe { gather(&at) };
                            el.apply(data, &mut cur);
                            // SAFETY: as above.
                            unsafe { scatter(&at, &cur) };
                        }
                    }
                    Ok(old.unwrap_or_default())
                }
                (Err(e), _) | (_, Err(e)) => Err(e),
            },
            Kind::Cas => match self.place(&segs) {
                Ok(at)
                    if self.mem.atomics
                        && at.len() == 1
                        && atomic::capable(at[0].1, true, at[0].0)
                        && data.len() == 2 * at[0].1 =>
                {
                    let size = at[0].1;
                    let mut old = vec![0u8; size];
                    // SAFETY: one aligned element of this rank's window memory (`place`,
                    // `capable`); `data` holds the new value and the one to compare.
                    unsafe {
                        atomic::compare_and_swap(
                            size,
                            data.as_ptr(),
                            data[size..].as_ptr(),
                            old.as_mut_ptr(),
                            at[0].0 as *mut u8,
                        )
                    };
                    Ok(old)
                }
                Ok(at) => {
                    let size = data.len() / 2;
                    let _g = self.ctrl.acc_lock(me);
                    // SAFETY: as for `Acc`.
                    let cur = unsafe { gather(&at) };
                    if cur.len() == size && cur == data[size..] {
                        // SAFETY: as for `Acc`.
                        unsafe { scatter(&at, &data[..size]) };
                    }
                    Ok(cur)
                }
                Err(e) => Err(e),
            },
        };
        if kind == Kind::Acc && head & FETCH_APART != 0 {
            return self.answer_apart(rt, src, seq, r);
        }
        if head & ANSWER != 0 {
            return self.answer(rt, src, seq, r);
        }
        if let Err(e) = r {
            self.errors.entry(src).or_insert(e);
        }
        Ok(())
    }

    /// Answers the request numbered `seq` with its data as a message of its own under the
    /// next sequence (empty after an error), then the class ([`SPLIT`] gets,
    /// [`FETCH_APART`] accumulates).
    fn answer_apart(
        &mut self,
        rt: &mut Runtime,
        src: i32,
        seq: u64,
        r: Result<Vec<u8>, Refusal>,
    ) -> MpiResult<()> {
        let (data, r) = match r {
            Ok(data) => (data, Ok(Vec::new())),
            Err(e) => (Vec::new(), Err(e)),
        };
        let rid = team::post_send(rt, self.comm, src, tag::rma_reply(seq + 1), &data)?;
        self.answers.push(Answer {
            rid,
            _buf: data,
            reads_for: None,
        });
        self.answer(rt, src, seq, r)
    }
}

impl Server {
    /// Posts the receive of a [`SPLIT`] put's data: straight into the window memory when
    /// it has one target segment, else into a buffer scattered once it arrived; a refused
    /// request's data is drained. Answered (if asked) once it landed, or at once when
    /// refused.
    fn receive_put(
        &mut self,
        rt: &mut Runtime,
        src: i32,
        head: u64,
        seq: u64,
        segs: &[(usize, usize)],
    ) -> MpiResult<()> {
        let total = segs.iter().map(|s| s.1).sum();
        let placed = self.place(segs);
        let (mut buf, scatter) = match &placed {
            Ok(at) if at.len() == 1 => (Vec::new(), Vec::new()),
            Ok(at) => (vec![0u8; total], at.clone()),
            Err(_) => (vec![0u8; total], Vec::new()),
        };
        let into: &mut [u8] = match &placed {
            // SAFETY: one segment of this rank's window memory (`place`), which lives until
            // the window is freed, and the window is not freed while data is arriving
            // (`Shared::busy`). Only this origin's conflicting accesses could touch it
            // before it lands, and its release, flushes and completes wait (`holds`).
            Ok(at) if at.len() == 1 => unsafe {
                std::slice::from_raw_parts_mut(at[0].0 as *mut u8, at[0].1)
            },
            _ => &mut buf,
        };
        let rid = team::post_recv(rt, self.comm, src, tag::rma_data(seq), into)?;
        let asked = head & ANSWER != 0;
        self.arrivals.push(Arrival {
            rid,
            from: src,
            buf,
            scatter,
            answer: (asked && placed.is_ok()).then_some(seq),
        });
        match placed {
            Err(e) if asked => self.answer(rt, src, seq, Err(e)),
            Err(e) => {
                self.errors.entry(src).or_insert(e);
                Ok(())
            }
            Ok(_) => Ok(()),
        }
    }
}

/// A request as a server reads it.
#[derive(Debug, PartialEq, Eq)]
struct Request<'a> {
    kind: Kind,
    /// The first word (kind and flags).
    head: u64,
    /// Answer sequence.
    seq: u64,
    op: usize,
    basic: usize,
    segs: Vec<(usize, usize)>,
    data: &'a [u8],
}

impl<'a> Request<'a> {
    /// Reads request `b` (`MPI_ERR_INTERN` when malformed).
    fn parse(b: &'a [u8]) -> MpiResult<Request<'a>> {
        if b.len() < 8 * WORDS {
            return fail(MPI_ERR_INTERN, "a one-sided request is too short");
        }
        let head = word(b, 0);
        let (nsegs, dbytes) = (word(b, 4) as usize, word(b, 5) as usize);
        let data_at = nsegs
            .checked_mul(2)
            .and_then(|w| w.checked_add(WORDS))
            .and_then(|w| w.checked_mul(8));
        if data_at.and_then(|d| d.checked_add(dbytes)) != Some(b.len()) {
            return fail(MPI_ERR_INTERN, "a one-sided request has a wrong length");
        }
        let Some(kind) = Kind::of(head as u8) else {
            return fail(MPI_ERR_INTERN, "an unknown one-sided request");
        };
        let segs = (0..nsegs)
            .map(|s| {
                (
                    word(b, WORDS + 2 * s) as usize,
                    word(b, WORDS + 2 * s + 1) as usize,
                )
            })
            .collect();
        Ok(Request {
            kind,
            head,
            seq: word(b, 1),
            op: word(b, 2) as usize,
            basic: word(b, 3) as usize,
            segs,
            data: &b[8 * (WORDS + 2 * nsegs)..],
        })
    }
}

/// Segments `segs` of a request as addresses in memory `mem`: inside the window (static), or
/// each inside one of the attached `regions` (dynamic).
fn place(
    mem: &Memory,
    regions: Option<&[(u64, u64)]>,
    segs: &[(usize, usize)],
) -> Result<Vec<(usize, usize)>, Refusal> {
    let inside = |&(a, l): &(usize, usize)| match regions {
        _ if l == 0 => true,
        Some(regions) => {
            let (lo, hi) = (a as u64, (a as u64).saturating_add(l as u64));
            regions.iter().any(|&(b, n)| lo >= b && hi <= b + n)
        }
        None => a.checked_add(l).is_some_and(|e| e <= mem.size),
    };
    if !segs.iter().all(inside) {
        let what = if mem.dynamic {
            "the memory attached to the window"
        } else {
            "the window"
        };
        return Err((MPI_ERR_RMA_RANGE, format!("the access is outside {what}")));
    }
    Ok(segs
        .iter()
        .map(|&(o, l)| (mem.base.wrapping_add(o), l))
        .collect())
}

/// The element and reduction of an accumulate request (`None` for `MPI_NO_OP`).
fn element(rt: &Runtime, op: usize, basic: usize) -> Result<Option<Element>, Refusal> {
    if Builtin::from_handle(op) == Some(Builtin::NoOp) {
        return Ok(None);
    }
    super::basic_element(rt, op, basic)
        .map(Some)
        .map_err(|e| (e.class(), e.message().to_string()))
}

/// Writes `data` to the segments `at` in order.
///
/// # Safety
/// The segments must be writable here; `data` holds their total.
unsafe fn scatter(at: &[(usize, usize)], data: &[u8]) {
    let mut from = 0;
    for &(a, l) in at {
        // SAFETY: caller guarantee; `data` is a separate buffer of ours.
        unsafe { std::ptr::copy_nonoverlapping(data[from..].as_ptr(), a as *mut u8, l) };
        from += l;
    }
}

/// Applies `data op target` straight in the segments `at` (in order), when the element has
/// no holes, every segment holds whole elements and `data` their total; else returns false
/// having changed nothing (the caller then reduces a gathered copy).
///
/// # Safety
/// The segments must be readable and writable here.
unsafe fn reduce_in_place(at: &[(usize, usize)], data: &[u8], el: &Element) -> bool {
    let size = el.size;
    let total: usize = at.iter().map(|s| s.1).sum();
    if !el.dense() || size == 0 || total != data.len() || at.iter().any(|s| s.1 % size != 0) {
        return false;
    }
    let mut from = 0;
    for &(a, l) in at {
        // SAFETY: caller guarantee for the segment; `data[from..from + l]` holds its
        // elements (total checked); the kernel copes with unaligned and overlapping
        // buffers (`apply_raw`).
        unsafe {
            el.reducer
                .apply_raw(l / size, data[from..].as_ptr(), a as *mut u8)
        };
        from += l;
    }
    true
}

/// Reads the segments `at` in order.
///
/// # Safety
/// The segments must be readable here.
unsafe fn gather(at: &[(usize, usize)]) -> Vec<u8> {
    let mut out = Vec::with_capacity(at.iter().map(|s| s.1).sum());
    for &(a, l) in at {
        // SAFETY: caller guarantee.
        out.extend_from_slice(unsafe { std::slice::from_raw_parts(a as *const u8, l) });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(c: &Call) -> Request<'_> {
        Request::parse(&c.msg).expect("a well-formed request")
    }

    #[test]
    fn requests_read_back_as_built() {
        let t = Shape::Contig { addr: 24, len: 16 };
        let data = [7u8; 16];
        let o = Shape::Contig {
            addr: data.as_ptr() as usize,
            len: 16,
        };
        // SAFETY: `o` describes `data`.
        let put = unsafe { Call::put(1, 3, &o, &t, false) };
        let r = round_trip(&put);
        assert_eq!(r.kind, Kind::Put);
        assert_eq!(r.segs, vec![(24, 16)]);
        assert_eq!(r.data, &data[..]);
        let get = Call::get(1, 3, o.clone(), &t);
        let r = round_trip(&get);
        assert_eq!((r.kind, r.data.len(), get.answer), (Kind::Get, 0, 16));
        assert!(r.head & SPLIT == 0 && matches!(get.land, Landing::Shape(_)));
        // A large get's data comes by a receive of its own, straight into the buffer.
        let big = Shape::Contig {
            addr: 0,
            len: SPLIT_MIN,
        };
        let split = Call::get(1, 3, big.clone(), &big);
        assert!(round_trip(&split).head & SPLIT != 0);
        assert!(split.answer == 0 && matches!(split.land, Landing::Placed(_)));
        // A large put's data goes from the origin buffer by a send of its own.
        // SAFETY: the buffer is not read until the call is started (never here).
        let split = unsafe { Call::put(1, 3, &big, &big, false) };
        let r = round_trip(&split);
        assert!(r.head & SPLIT != 0 && r.data.is_empty() && r.segs == vec![(0, SPLIT_MIN)]);
        assert!(matches!(
            split.data_from,
            Some(Shape::Contig { len: SPLIT_MIN, .. })
        ));
        assert!(put.data_from.is_none() && round_trip(&put).head & SPLIT == 0);
        // So does a large accumulate's (not a `MPI_NO_OP`'s, which has none).
        // SAFETY: as above.
        let split = unsafe { Call::accumulate(1, 3, &big, &big, None, MPI_SUM, MPI_INT, false) };
        let r = round_trip(&split);
        assert!(r.head & SPLIT != 0 && r.data.is_empty() && split.data_from.is_some());
        // SAFETY: as above.
        let read = unsafe {
            Call::accumulate(
                1,
                3,
                &big,
                &big,
                Some(big.clone()),
                MPI_NO_OP,
                MPI_INT,
                false,
            )
        };
        assert!(round_trip(&read).head & SPLIT == 0 && read.data_from.is_none());
        // A large fetch's old data lands straight in the result buffer.
        let r = round_trip(&read);
        assert!(r.head & FETCH_APART != 0 && r.head & ANSWER != 0 && read.answered);
        assert!(read.answer == 0 && matches!(read.land, Landing::Placed(_)));
        // SAFETY: as above.
        let acc =
            unsafe { Call::accumulate(1, 2, &o, &t, Some(o.clone()), MPI_SUM, MPI_INT, false) };
        let r = round_trip(&acc);
        assert_eq!((r.kind, r.op, r.basic), (Kind::Acc, MPI_SUM, MPI_INT));
        assert!(r.head & FETCH != 0 && r.head & FETCH_APART == 0);
        // SAFETY: as above; `MPI_NO_OP` carries no data.
        let read =
            unsafe { Call::accumulate(1, 2, &o, &t, Some(o.clone()), MPI_NO_OP, MPI_INT, false) };
        assert!(round_trip(&read).data.is_empty());
        let lock = Call::sync(1, 0, Kind::Lock, Some(LockKind::Exclusive));
        let r = round_trip(&lock);
        assert_eq!(r.kind, Kind::Lock);
        assert!(r.head & EXCLUSIVE != 0);
        let unlock = Call::sync(1, 0, Kind::Unlock, Some(LockKind::Shared));
        assert_eq!(round_trip(&unlock).head & EXCLUSIVE, 0);
        // Who answers: fetching requests and locks always, puts and releases when asked,
        // epoch notices never; unanswered puts need a flush, unanswered releases one at free.
        assert!(put.unflushed_target() == Some(3) && round_trip(&put).head & ANSWER == 0);
        // SAFETY: as above.
        let asked = unsafe { Call::put(1, 3, &o, &t, true) };
        assert!(asked.answered && asked.unflushed_target().is_none());
        assert!(get.answered && acc.answered && lock.answered);
        assert!(!unlock.answered && unlock.released_target() == Some(0));
        let answered_release = Call::unlock(1, 0, LockKind::Exclusive, true);
        assert!(answered_release.answered && answered_release.released_target().is_none());
        assert!(round_trip(&answered_release).head & EXCLUSIVE != 0);
        assert!(!Call::sync(1, 0, Kind::Post, None).answered);
        assert!(Call::flush(1, 0).answered);
    }

    #[test]
    fn malformed_requests_are_refused() {
        let c = Call::sync(1, 0, Kind::Post, None);
        assert!(Request::parse(&c.msg[..8 * WORDS - 1]).is_err());
        let mut long = c.msg.clone();
        long.push(0);
        assert!(Request::parse(&long).is_err());
        let mut unknown = c.msg.clone();
        unknown[0] = 99;
        assert!(Request::parse(&unknown).is_err());
        let mut huge = c.msg.clone();
        huge[32..40].copy_from_slice(&u64::MAX.to_ne_bytes());
        assert!(Request::parse(&huge).is_err());
    }

    #[test]
    fn segments_are_checked_against_the_memory() {
        let fixed = Memory {
            base: 0x1000,
            size: 64,
            dynamic: false,
            atomics: false,
        };
        assert_eq!(
            place(&fixed, None, &[(0, 8), (56, 8)]),
            Ok(vec![(0x1000, 8), (0x1038, 8)])
        );
        assert_eq!(
            place(&fixed, None, &[(60, 8)]).unwrap_err().0,
            MPI_ERR_RMA_RANGE
        );
        assert_eq!(
            place(&fixed, None, &[(usize::MAX, 2)]).unwrap_err().0,
            MPI_ERR_RMA_RANGE
        );
        assert!(place(&fixed, None, &[(1000, 0)]).is_ok());
        let dynamic = Memory {
            base: 0,
            size: 0,
            dynamic: true,
            atomics: false,
        };
        let regions = [(0x5000u64, 0x100u64), (0x9000, 0x10)];
        assert_eq!(
            place(&dynamic, Some(&regions), &[(0x5080, 0x80), (0x9000, 0x10)]),
            Ok(vec![(0x5080, 0x80), (0x9000, 0x10)])
        );
        assert!(place(&dynamic, Some(&regions), &[(0x50f0, 0x20)]).is_err());
        assert!(place(&dynamic, Some(&regions), &[(0x7000, 4)]).is_err());
    }

    #[test]
    fn answers_have_tags_of_their_own() {
        let a = tag::rma_reply(1);
        let b = tag::rma_reply(2);
        assert_ne!(a, b);
        assert!(a < tag::RMA);
        // Put data never matches an answer, whoever numbered them.
        assert!((1..1000).all(|s| tag::rma_data(s) < tag::rma_reply(u64::MAX % (1 << 24))));
        assert_ne!(tag::rma_data(1), tag::rma_data(2));
    }
}
