//! The timeline (`HYMPI_TRACE=dir`): every thread records its events into a ring of its
//! own (`HYMPI_TRACE_EVENTS` events; when full the oldest are overwritten and counted), and
//! at `MPI_Finalize` or when the job aborts the rank writes them all to `dir/rank-N.json` in
//! the Chrome trace event format (Perfetto and `chrome://tracing` open it; `hympi-trace-merge`
//! joins the ranks into one file).
//!
//! Events (complete events, `"ph": "X"`; timestamps from the real-time clock, so the ranks
//! of a node share a time base; one track per thread):
//! - every MPI call (`cat` `mpi`), with its communicator (`MPI_COMM_WORLD`, `MPI_COMM_SELF`
//!   or its context id, which all its members share), peer, tag, bytes (count times the
//!   datatype's size), VCI and return code, as far as the call has them;
//! - waits inside MPI that had to wait (`wait`), with their VCI (none: the slow path);
//! - rounds of collective schedules (`coll`): steps, bytes sent, tag;
//! - single-copy rendezvous reads (`copy`): peer and bytes.

use super::now_ns;
use crate::mpi_abi::consts::{MPI_COMM_SELF, MPI_COMM_WORLD, MPI_SUCCESS};
use parking_lot::Mutex;
use std::cell::{Cell, RefCell};
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Arc;

/// Marks an integer field an event does not have.
pub const NONE: i32 = i32::MIN;

/// What kind of event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cat {
    /// An MPI call.
    Call,
    /// A wait inside MPI.
    Wait,
    /// A round of a collective schedule.
    Round,
    /// A rendezvous copy.
    Copy,
}

impl Cat {
    fn name(self) -> &'static str {
        match self {
            Cat::Call => "mpi",
            Cat::Wait => "wait",
            Cat::Round => "coll",
            Cat::Copy => "copy",
        }
    }
}

/// A communicator as a trace names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommLabel {
    /// None (the call has no communicator).
    None,
    /// `MPI_COMM_WORLD`.
    World,
    /// `MPI_COMM_SELF`.
    SelfComm,
    /// Another communicator, by its context id.
    Ctx(u32),
    /// A handle that names no live communicator.
    Unknown,
}

/// The fields of one event.
#[derive(Clone, Copy, Debug)]
pub struct Event {
    /// Name (`MPI_Isend`, `wait`, `round`, `cma read`).
    pub name: &'static str,
    /// Kind.
    pub cat: Cat,
    /// Start (ns, real-time clock).
    pub start: u64,
    /// Duration (ns).
    pub dur: u64,
    /// Communicator.
    pub comm: CommLabel,
    /// Peer rank (in the communicator) or [`NONE`].
    pub peer: i32,
    /// Tag or [`NONE`].
    pub tag: i32,
    /// Bytes, or -1.
    pub bytes: i64,
    /// VCI or [`NONE`].
    pub vci: i32,
    /// Return code of a call, round number of a round, else [`NONE`].
    pub code: i32,
    /// Steps of a round, else [`NONE`].
    pub steps: i32,
}

impl Event {
    /// An event with only a name, kind and times.
    pub fn new(name: &'static str, cat: Cat, start: u64, end: u64) -> Event {
        Event {
            name,
            cat,
            start,
            dur: end.saturating_sub(start),
            comm: CommLabel::None,
            peer: NONE,
            tag: NONE,
            bytes: -1,
            vci: NONE,
            code: NONE,
            steps: NONE,
        }
    }
}

/// One thread's events.
struct Ring {
    events: Vec<Event>,
    /// Where the next event goes once `events` is full.
    next: usize,
    cap: usize,
    dropped: u64,
    tid: u32,
    name: String,
}

impl Ring {
    fn push(&mut self, e: Event) {
        if self.events.len() < self.cap {
            self.events.push(e);
        } else {
            self.events[self.next] = e;
            self.next = (self.next + 1) % self.cap;
            self.dropped += 1;
        }
    }

    /// The events, oldest first.
    fn in_order(&self) -> impl Iterator<Item = &Event> {
        self.events[self.next..]
            .iter()
            .chain(self.events[..self.next].iter())
    }
}

/// The process's tracer.
struct Tracer {
    dir: PathBuf,
    rank: i32,
    cap: usize,
    rings: Vec<Arc<Mutex<Ring>>>,
}

static TRACER: Mutex<Option<Tracer>> = Mutex::new(None);

thread_local! {
    /// This thread's ring, once it recorded an event.
    static MINE: RefCell<Option<Arc<Mutex<Ring>>>> = const { RefCell::new(None) };
    /// Depth of MPI calls on this thread (calls made from callbacks inside MPI are deeper).
    static DEPTH: Cell<u32> = const { Cell::new(0) };
}

/// Starts tracing into directory `dir` as rank `rank`, `cap` events per thread.
pub fn start(dir: PathBuf, rank: i32, cap: usize) {
    *TRACER.lock() = Some(Tracer {
        dir,
        rank,
        cap: cap.max(16),
        rings: Vec::new(),
    });
}

/// Records event `e` on this thread's track.
#[cold]
#[inline(never)]
pub fn record(e: Event) {
    let ring = MINE.with(|m| {
        let mut m = m.borrow_mut();
        if m.is_none() {
            let mut t = TRACER.lock();
            let t = t.as_mut()?;
            let tid = t.rings.len() as u32 + 1;
            let cur = std::thread::current();
            // SAFETY: gettid has no preconditions.
            let os_tid = unsafe { libc::gettid() };
            let name = match cur.name() {
                Some(n) => format!("{n} (tid {os_tid})"),
                None => format!("thread {tid} (tid {os_tid})"),
            };
            let r = Arc::new(Mutex::new(Ring {
                events: Vec::with_capacity(t.cap.min(4096)),
                next: 0,
                cap: t.cap,
                dropped: 0,
                tid,
                name,
            }));
            t.rings.push(r.clone());
            *m = Some(r);
        }
        m.clone()
    });
    if let Some(r) = ring {
        r.lock().push(e);
    }
}

/// Starts timing an MPI call: its start, and whether it is the thread's outermost MPI call
/// (only those may consult the runtime to name communicators and derived datatypes).
#[cold]
#[inline(never)]
pub fn call_begin() -> (u64, bool) {
    let depth = DEPTH.with(|d| {
        let v = d.get();
        d.set(v + 1);
        v
    });
    (now_ns(), depth == 0)
}

/// What a call's arguments say about it (filled by the generated entry points from the
/// parameters a call has).
#[derive(Clone, Copy, Debug, Default)]
pub struct CallArgs {
    /// Communicator handle.
    pub comm: Option<usize>,
    /// Peer rank (destination, source or root).
    pub peer: Option<i32>,
    /// Tag.
    pub tag: Option<i32>,
    /// Element count.
    pub count: Option<i64>,
    /// Datatype handle.
    pub datatype: Option<usize>,
    /// Request the call returned (read after a successful call).
    pub request: Option<usize>,
}

/// Ends an MPI call begun at `begin` ([`call_begin`]) that returned `code`: records it.
#[cold]
#[inline(never)]
pub fn call_end(name: &'static str, begin: (u64, bool), code: i32, args: CallArgs) {
    DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
    let (start, outer) = begin;
    let mut e = Event::new(name, Cat::Call, start, now_ns());
    e.code = code;
    e.peer = args.peer.unwrap_or(NONE);
    e.tag = args.tag.unwrap_or(NONE);
    if let Some(c) = args.comm {
        e.comm = comm_label(c, outer);
        if let Some(pool) = crate::core::threads::vci::pool() {
            let v = crate::core::p2p::fastpath::comm_vci(
                pool,
                c,
                args.peer.unwrap_or(0),
                args.tag.unwrap_or(0),
            );
            e.vci = v.map_or(NONE, |v| v as i32);
        }
    }
    if let (Some(n), Some(dt)) = (args.count, args.datatype) {
        if let Some(size) = type_size(dt, outer) {
            e.bytes = n.saturating_mul(size as i64);
        }
    }
    if code == MPI_SUCCESS {
        if let Some(h) = args.request.filter(|&h| {
            h != crate::mpi_abi::consts::MPI_REQUEST_NULL
                && h != crate::core::p2p::fastpath::DONE_SEND_HANDLE
        }) {
            e.vci =
                crate::core::objects::slab::Slab::<crate::core::p2p::request::Request>::tag_of(h)
                    as i32;
        }
    }
    record(e);
}

fn comm_label(h: usize, outer: bool) -> CommLabel {
    if h == MPI_COMM_WORLD {
        return CommLabel::World;
    }
    if h == MPI_COMM_SELF {
        return CommLabel::SelfComm;
    }
    if h == crate::mpi_abi::consts::MPI_COMM_NULL {
        return CommLabel::None;
    }
    if !outer {
        return CommLabel::Unknown;
    }
    crate::core::runtime::with(|rt| Ok(rt.comm(h).map(|(_, c)| c.ctx).ok()))
        .ok()
        .flatten()
        .map_or(CommLabel::Unknown, |ctx| {
            CommLabel::Ctx(ctx / crate::core::objects::comm::CONTEXTS_PER_ID)
        })
}

fn type_size(dt: usize, outer: bool) -> Option<usize> {
    if let Some(t) = crate::core::datatype::derived::Dtype::predefined(dt) {
        return Some(t.size);
    }
    if !outer {
        return None;
    }
    crate::core::runtime::with(|rt| Ok(rt.type_entry(dt).ok().map(|t| t.dt.size)))
        .ok()
        .flatten()
}

/// Starts timing a span (a wait, a round, a copy) when tracing: its start.
#[inline(always)]
pub fn begin() -> Option<u64> {
    if super::trace_on() {
        Some(now_ns())
    } else {
        None
    }
}

/// Records a single-copy rendezvous read of `bytes` bytes from rank `peer` begun at `start`.
#[cold]
#[inline(never)]
pub fn copy(start: u64, peer: i32, bytes: usize) {
    let mut e = Event::new("cma read", Cat::Copy, start, now_ns());
    e.peer = peer;
    e.bytes = bytes as i64;
    record(e);
}

/// Records round `round` of a collective schedule (`steps` sends and receives, `bytes`
/// bytes sent, collective tag `tag`) begun at `start`.
#[cold]
#[inline(never)]
pub fn round(start: u64, round: usize, steps: usize, bytes: usize, tag: i32) {
    let mut e = Event::new("schedule round", Cat::Round, start, now_ns());
    e.code = round as i32;
    e.steps = steps as i32;
    e.bytes = bytes as i64;
    e.tag = tag;
    record(e);
}

/// Writes one event as a Chrome-trace JSON object (by hand: a trace holds up to millions of
/// events, and every string in one is a fixed name, so a value tree would only cost time).
fn write_event(w: &mut impl std::io::Write, e: &Event, pid: i32, tid: u32) -> std::io::Result<()> {
    write!(
        w,
        "{{\"name\":\"{}\",\"cat\":\"{}\",\"ph\":\"X\",\"ts\":{}.{:03},\"dur\":{}.{:03},\"pid\":{pid},\"tid\":{tid},\"args\":{{",
        e.name,
        e.cat.name(),
        e.start / 1000,
        e.start % 1000,
        e.dur / 1000,
        e.dur % 1000
    )?;
    let mut sep = "";
    let mut field = |w: &mut dyn std::io::Write, k: &str, v: &dyn std::fmt::Display| {
        let r = write!(w, "{sep}\"{k}\":{v}");
        sep = ",";
        r
    };
    match e.comm {
        CommLabel::None => {}
        CommLabel::World => field(w, "comm", &"\"MPI_COMM_WORLD\"")?,
        CommLabel::SelfComm => field(w, "comm", &"\"MPI_COMM_SELF\"")?,
        CommLabel::Ctx(c) => field(w, "comm", &format_args!("\"context {c}\""))?,
        CommLabel::Unknown => field(w, "comm", &"\"?\"")?,
    }
    let code_key = if e.cat == Cat::Round { "round" } else { "code" };
    for (k, v) in [
        ("peer", e.peer),
        ("tag", e.tag),
        ("vci", e.vci),
        ("steps", e.steps),
        (code_key, e.code),
    ] {
        if v != NONE {
            field(w, k, &v)?;
        }
    }
    if e.bytes >= 0 {
        field(w, "bytes", &e.bytes)?;
    }
    write!(w, "}}}}")
}

/// Writes the trace of every thread and stops tracing (the caller cleared the flag).
pub fn flush() {
    let Some(t) = TRACER.lock().take() else {
        return;
    };
    let path = t.dir.join(format!("rank-{}.json", t.rank));
    let written = std::fs::create_dir_all(&t.dir)
        .and_then(|_| std::fs::File::create(&path))
        .and_then(|f| {
            let mut w = std::io::BufWriter::new(f);
            let dropped = write_trace(&mut w, &t)?;
            w.flush()?;
            Ok(dropped)
        });
    match written {
        Err(e) => eprintln!(
            "hympi: rank {}: cannot write the trace {}: {e}",
            t.rank,
            path.display()
        ),
        Ok(dropped) if dropped > 0 => eprintln!(
            "hympi: rank {}: trace {} lacks the {dropped} oldest events (raise HYMPI_TRACE_EVENTS)",
            t.rank,
            path.display()
        ),
        Ok(_) => {}
    }
}

/// Writes the whole document of tracer `t`; returns how many events were dropped.
fn write_trace(w: &mut impl std::io::Write, t: &Tracer) -> std::io::Result<u64> {
    let rank = t.rank;
    write!(
        w,
        "{{\"traceEvents\":[{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{rank},\"args\":{{\"name\":\"rank {rank}\"}}}},\
         {{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":{rank},\"args\":{{\"sort_index\":{rank}}}}}"
    )?;
    let mut dropped = 0;
    for ring in &t.rings {
        // A thread may be recording right now: wait a moment, never forever (the job may be
        // aborting with that thread stuck).
        let Some(r) = ring.try_lock_for(std::time::Duration::from_millis(100)) else {
            continue;
        };
        dropped += r.dropped;
        let name = serde_json::to_string(&r.name).map_err(std::io::Error::other)?;
        write!(
            w,
            ",{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":{rank},\"tid\":{},\"args\":{{\"name\":{name}}}}}",
            r.tid
        )?;
        for e in r.in_order() {
            w.write_all(b",\n")?;
            write_event(w, e, rank, r.tid)?;
        }
    }
    write!(
        w,
        "],\"displayTimeUnit\":\"ns\",\"otherData\":{{\"rank\":{rank},\"dropped_events\":{dropped},\"library\":\"hympi\"}}}}"
    )?;
    Ok(dropped)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ring_keeps_the_newest_events_in_order() {
        let mut r = Ring {
            events: Vec::new(),
            next: 0,
            cap: 3,
            dropped: 0,
            tid: 1,
            name: "t".into(),
        };
        for i in 0..5u64 {
            r.push(Event::new("e", Cat::Call, i, i + 1));
        }
        let starts: Vec<u64> = r.in_order().map(|e| e.start).collect();
        assert_eq!(starts, vec![2, 3, 4]);
        assert_eq!(r.dropped, 2);
    }

    #[test]
    fn events_become_complete_chrome_events_with_their_fields() {
        let json_of = |e: &Event, pid, tid| {
            let mut out = Vec::new();
            write_event(&mut out, e, pid, tid).unwrap();
            serde_json::from_slice::<serde_json::Value>(&out).unwrap()
        };
        let mut e = Event::new("MPI_Isend", Cat::Call, 2_000, 5_500);
        e.comm = CommLabel::World;
        e.peer = 3;
        e.tag = 7;
        e.bytes = 800;
        e.vci = 1;
        e.code = 0;
        let j = json_of(&e, 2, 4);
        assert_eq!(j["ph"], "X");
        assert_eq!(j["ts"], 2.0);
        assert_eq!(j["dur"], 3.5);
        assert_eq!(j["pid"], 2);
        assert_eq!(j["tid"], 4);
        assert_eq!(j["args"]["comm"], "MPI_COMM_WORLD");
        assert_eq!(j["args"]["peer"], 3);
        assert_eq!(j["args"]["bytes"], 800);
        assert_eq!(j["args"]["vci"], 1);
        assert_eq!(j["args"]["code"], 0);
        let w = json_of(&Event::new("wait", Cat::Wait, 0, 1), 0, 1);
        assert!(w["args"].as_object().unwrap().is_empty(), "{w}");
        let mut r = Event::new("schedule round", Cat::Round, 1_000_001, 1_000_002);
        r.comm = CommLabel::Ctx(5);
        r.code = 2;
        let j = json_of(&r, 0, 1);
        assert_eq!(j["args"]["round"], 2);
        assert_eq!(j["args"]["comm"], "context 5");
        assert_eq!(j["ts"], 1000.001);
    }

    #[test]
    fn a_whole_trace_is_one_json_document() {
        let ring = Ring {
            events: vec![Event::new("MPI_Barrier", Cat::Call, 10, 20)],
            next: 0,
            cap: 4,
            dropped: 3,
            tid: 1,
            name: "main \"quoted\" (tid 7)".into(),
        };
        let t = Tracer {
            dir: PathBuf::new(),
            rank: 5,
            cap: 4,
            rings: vec![Arc::new(Mutex::new(ring))],
        };
        let mut out = Vec::new();
        assert_eq!(write_trace(&mut out, &t).unwrap(), 3);
        let doc: serde_json::Value = serde_json::from_slice(&out).unwrap();
        let ev = doc["traceEvents"].as_array().unwrap();
        assert_eq!(ev.len(), 4);
        assert_eq!(ev[2]["args"]["name"], "main \"quoted\" (tid 7)");
        assert_eq!(ev[3]["name"], "MPI_Barrier");
        assert_eq!(doc["otherData"]["dropped_events"], 3);
        assert_eq!(doc["otherData"]["rank"], 5);
    }
}
