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

mod server;
pub use server::*;

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

#[cfg(test)]
mod tests;
