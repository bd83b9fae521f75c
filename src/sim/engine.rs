//! The discrete-event engine: runs the compacted schedules of every rank against a
//! [`Model`], in time order, and reports when each rank finishes, the critical path and
//! (when asked) every round's span for a trace.
//!
//! A rank's round starts when its previous round ended; its receives are posted and its
//! sends issued at once (the library posts a round the same way), messages between a pair
//! of ranks match in order (MPI's non-overtaking rule: every modelled collective uses one
//! tag), and the round ends when every receive has landed and every send has completed,
//! plus its local steps. A schedule whose ranks wait for messages nobody sends is reported
//! as a deadlock, naming who waits for whom.

use super::build::{Machine, OpKind, Program};
use super::model::{reverse_share, Model};
use std::cmp::{Ordering, Reverse};
use std::collections::hash_map::Entry;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};

/// What the engine records besides finishing times.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// Keep every round's span and cause: needed for the critical path and the trace
    /// (24 bytes per round of every rank).
    pub record: bool,
}

/// One round of one rank, as recorded.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RoundSpan {
    /// When it started (seconds).
    pub start: f64,
    /// When it ended, local steps included.
    pub end: f64,
    /// The round that decided its end: the rank's previous round, or the round of the rank
    /// whose message (or read of whose memory) came last.
    pub cause: (u32, u32),
}

/// The result of a simulation.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// When each rank finished (seconds from the collective's start on every rank).
    pub finish: Vec<f64>,
    /// Messages sent, and those between nodes.
    pub messages: u64,
    /// See `messages`.
    pub inter_messages: u64,
    /// Bytes sent.
    pub bytes: u64,
    /// Each rank's rounds (with [`Options::record`]).
    pub rounds: Vec<Vec<RoundSpan>>,
}

impl Outcome {
    /// The collective's time: when the last rank finished.
    pub fn time(&self) -> f64 {
        self.finish.iter().copied().fold(0.0, f64::max)
    }

    /// The rank that finished last.
    pub fn last_rank(&self) -> usize {
        let t = self.time();
        self.finish.iter().position(|&f| f == t).unwrap_or(0)
    }

    /// The critical path, first round first: (rank, round) pairs from a round that started
    /// at time 0 to the last round of the rank that finished last (with [`Options::record`];
    /// empty otherwise).
    pub fn critical_path(&self) -> Vec<(u32, u32)> {
        let mut path = Vec::new();
        let r = self.last_rank();
        let Some(last) = self.rounds.get(r).and_then(|v| v.len().checked_sub(1)) else {
            return path;
        };
        let mut at = (r as u32, last as u32);
        // Causes point to rounds that ended no later, so the walk ends; the bound only
        // guards against a bookkeeping error.
        for _ in 0..self.rounds.iter().map(Vec::len).sum::<usize>() + 1 {
            path.push(at);
            let span = self.rounds[at.0 as usize][at.1 as usize];
            if span.cause == at {
                break;
            }
            at = span.cause;
        }
        path.reverse();
        path
    }
}

/// Why a simulation could not finish.
#[derive(Clone, Debug, PartialEq)]
pub enum SimError {
    /// Ranks wait for messages that never come: (rank, round, the ranks it waits for), at
    /// most the first 16.
    Deadlock(Vec<(u32, u32, Vec<u32>)>),
    /// A message was sent that no receive ever took (from, to).
    Unreceived(u32, u32),
    /// The programs do not fit the machine.
    Mismatch(String),
}

impl std::fmt::Display for SimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SimError::Deadlock(w) => {
                write!(f, "the schedule deadlocks:")?;
                for (r, round, peers) in w {
                    write!(f, " rank {r} in round {round} waits for {peers:?};")?;
                }
                Ok(())
            }
            SimError::Unreceived(a, b) => {
                write!(f, "a message from rank {a} to rank {b} is never received")
            }
            SimError::Mismatch(m) => f.write_str(m),
        }
    }
}

/// A time in the event queue (ordered by `f64::total_cmp`).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Time(f64);

impl Eq for Time {}

impl PartialOrd for Time {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl Ord for Time {
    fn cmp(&self, o: &Self) -> Ordering {
        self.0.total_cmp(&o.0)
    }
}

/// A multiplicative hasher for the pair keys (two ranks in one `u64`): much cheaper than
/// SipHash, and the keys are not attacker-chosen.
#[derive(Default)]
struct PairHasher(u64);

impl Hasher for PairHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x100_0000_01b3);
        }
    }
    fn write_u64(&mut self, k: u64) {
        self.0 = (k ^ (k >> 29)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// How a message's data gets to its receiver.
#[derive(Clone, Copy, Debug)]
enum Delivery {
    /// It arrives at this time (eager, shared memory or network).
    At(f64),
    /// The receiver reads it with CMA once it has posted; the sender's notification is
    /// there at this time.
    Read(f64),
}

/// A message waiting for its receive.
#[derive(Clone, Copy, Debug)]
struct Message {
    delivery: Delivery,
    bytes: u64,
    /// Receiver's CPU overhead.
    overhead: f64,
    /// Sender and its round.
    from: (u32, u32),
}

/// What waits on a pair of ranks: messages nobody has posted a receive for yet, or
/// receives no message has come for yet (never both). The first message is held inline, so
/// the common case (one message at a time) allocates nothing.
#[derive(Debug, Default)]
struct Pair {
    first: Option<Message>,
    more: VecDeque<Message>,
    receives: u32,
}

impl Pair {
    fn push(&mut self, m: Message) {
        if self.first.is_none() {
            self.first = Some(m);
        } else {
            self.more.push_back(m);
        }
    }

    fn pop(&mut self) -> Option<Message> {
        let m = self.first.take()?;
        self.first = self.more.pop_front();
        Some(m)
    }

    fn is_empty(&self) -> bool {
        self.first.is_none() && self.receives == 0
    }
}

/// One rank's progress.
#[derive(Clone, Debug, Default)]
struct Rank {
    /// The current round, counted as the rank runs them.
    round: u32,
    /// The current round's stored round in the program, and how often it ran already.
    stored: u32,
    /// See `stored`.
    repeat: u32,
    start: f64,
    /// When its CPU is free.
    cpu: f64,
    /// When its on-node copy port is free.
    port: f64,
    /// When its on-node receive side is free (only for a link whose directions slow each
    /// other down, `Model::intra_bidirectional` < 2).
    port_in: f64,
    /// Receives not yet landed and CMA sends not yet read, in the current round.
    waiting: u32,
    /// When its sends of the round completed (at the latest).
    sends_done: f64,
    sends_cause: (u32, u32),
    /// Landed messages of the round: (arrival, receive overhead, sender's round).
    landed: Vec<(f64, f64, (u32, u32))>,
    /// Ends of the CMA reads of its memory under way (for the contention factor).
    reads: Vec<f64>,
    done: bool,
}

/// When a node's NIC takes messages in: sorted, disjoint busy intervals (touching ones
/// merged). A message takes the first free stretch from the moment it reaches the NIC, so
/// a message injected early is not queued behind one the engine issued earlier but that
/// reaches the node later (the sends of one time are issued rank by rank).
#[derive(Clone, Debug, Default)]
struct Busy(Vec<(f64, f64)>);

impl Busy {
    /// Books `len` seconds from the first free moment at or after `from`; returns its end.
    /// Intervals that end by `now` (no message reaches the NIC before it) are dropped.
    fn book(&mut self, from: f64, len: f64, now: f64) -> f64 {
        let v = &mut self.0;
        let past = v.partition_point(|&(_, end)| end <= now);
        if past > 32 {
            v.drain(..past);
        }
        let mut i = v.partition_point(|&(_, end)| end <= from);
        let mut start = from;
        while i < v.len() && v[i].0 < start + len {
            start = start.max(v[i].1);
            i += 1;
        }
        let end = start + len;
        let joins_prev = i > 0 && v[i - 1].1 >= start;
        let joins_next = i < v.len() && v[i].0 <= end;
        match (joins_prev, joins_next) {
            (true, true) => {
                v[i - 1].1 = v[i].1;
                v.remove(i);
            }
            (true, false) => v[i - 1].1 = end,
            (false, true) => v[i].0 = start,
            (false, false) => v.insert(i, (start, end)),
        }
        end
    }
}

/// The simulation state.
struct Engine<'a> {
    model: &'a Model,
    programs: &'a [Program],
    node_of: &'a [u32],
    ranks: Vec<Rank>,
    pairs: HashMap<u64, Pair, BuildHasherDefault<PairHasher>>,
    nic_out: Vec<f64>,
    nic_in: Vec<Busy>,
    /// The share of an on-node transfer that also occupies the other side's port
    /// (`model::reverse_share` of the model's bidirectional factor).
    share_intra: f64,
    /// The same for a NIC's two directions.
    share_inter: f64,
    /// Time of the event being processed (no later message starts before it).
    now: f64,
    queue: BinaryHeap<Reverse<(Time, u32)>>,
    out: Outcome,
    record: bool,
}

/// Runs `programs` (one per rank of `machine`) on `model`.
pub fn simulate(
    model: &Model,
    machine: &Machine,
    programs: &[Program],
    opts: Options,
) -> Result<Outcome, SimError> {
    let p = machine.ranks();
    if programs.len() != p {
        return Err(SimError::Mismatch(format!(
            "{} programs for {p} ranks",
            programs.len()
        )));
    }
    let nodes = machine.nodes();
    let mut e = Engine {
        model,
        programs,
        node_of: &machine.node_of,
        ranks: vec![Rank::default(); p],
        pairs: HashMap::default(),
        nic_out: vec![0.0; nodes],
        nic_in: vec![Busy::default(); nodes],
        share_intra: reverse_share(model.intra_bidirectional),
        share_inter: reverse_share(model.inter_bidirectional),
        now: 0.0,
        queue: BinaryHeap::with_capacity(p),
        out: Outcome {
            finish: vec![0.0; p],
            rounds: if opts.record {
                programs
                    .iter()
                    .map(|pr| Vec::with_capacity(pr.rounds()))
                    .collect()
            } else {
                Vec::new()
            },
            ..Outcome::default()
        },
        record: opts.record,
    };
    for (r, pr) in programs.iter().enumerate() {
        if let Some(bad) = pr
            .ops
            .iter()
            .find(|o| matches!(o.kind, OpKind::Send | OpKind::Recv) && o.peer as usize >= p)
        {
            return Err(SimError::Mismatch(format!(
                "rank {r} addresses rank {} of {p}",
                bad.peer
            )));
        }
        if pr.round_ends.is_empty() {
            e.ranks[r].done = true;
        } else {
            e.queue.push(Reverse((Time(0.0), r as u32)));
        }
    }
    while let Some(Reverse((Time(t), r))) = e.queue.pop() {
        e.now = t;
        e.start_round(r, t);
    }
    e.finish()
}

impl Engine<'_> {
    fn key(from: u32, to: u32) -> u64 {
        (from as u64) << 32 | to as u64
    }

    /// Starts rank `r`'s current round at `t`: posts its receives, issues its sends.
    fn start_round(&mut self, r: u32, t: f64) {
        let prog = &self.programs[r as usize];
        let round = self.ranks[r as usize].round;
        let ops = prog.stored(self.ranks[r as usize].stored as usize);
        {
            let st = &mut self.ranks[r as usize];
            st.start = t;
            let software = self.model.round_overhead
                + if round == 0 {
                    self.model.call_overhead
                } else {
                    0.0
                };
            st.cpu = st.cpu.max(t) + software;
            st.sends_done = t;
            st.sends_cause = (r, round.saturating_sub(1));
            st.landed.clear();
            // One guard count, released after all of the round's steps were issued.
            st.waiting = 1;
        }
        for op in ops.iter().filter(|o| o.kind == OpKind::Recv) {
            self.ranks[r as usize].waiting += 1;
            // Pairs are dropped once nothing waits on them (an alltoall meets p^2 of them).
            match self.pairs.entry(Self::key(op.peer, r)) {
                Entry::Occupied(mut e) => match e.get_mut().pop() {
                    Some(m) => {
                        if e.get().is_empty() {
                            e.remove();
                        }
                        self.land(r, m)
                    }
                    None => e.get_mut().receives += 1,
                },
                Entry::Vacant(v) => {
                    v.insert(Pair {
                        receives: 1,
                        ..Pair::default()
                    });
                }
            }
        }
        for op in ops.iter().filter(|o| o.kind == OpKind::Send) {
            self.send(r, round, op.peer, op.bytes);
        }
        self.release(r);
    }

    /// Issues a send of `bytes` from `r` (in round `round`) to `to`.
    fn send(&mut self, r: u32, round: u32, to: u32, bytes: u64) {
        let (a, b) = (
            self.node_of[r as usize] as usize,
            self.node_of[to as usize] as usize,
        );
        let m = self.model;
        let link = if a == b { m.intra } else { m.inter };
        self.out.messages += 1;
        self.out.bytes += bytes;
        let wire = bytes as f64 * link.per_byte;
        let st = &mut self.ranks[r as usize];
        let start = st.cpu;
        st.cpu = start + link.overhead;
        let delivery = if a != b {
            self.out.inter_messages += 1;
            let i = (start + link.overhead).max(self.nic_out[a]);
            self.nic_out[a] = i + link.gap.max(wire);
            if self.share_inter > 0.0 {
                // The injection also takes its share of the node's receive side.
                self.nic_in[a].book(i, self.share_inter * wire, self.now);
            }
            let arrival = self.nic_in[b].book(i + link.latency, wire, self.now);
            st.sends_done = st.sends_done.max(i + wire);
            Delivery::At(arrival)
        } else if bytes as usize >= m.cma.threshold && r != to {
            st.waiting += 1;
            Delivery::Read(start + link.overhead + link.latency)
        } else {
            let i = (start + link.overhead).max(st.port);
            st.port = i + link.gap.max(wire);
            st.sends_done = st.sends_done.max(i + wire);
            let mut arrival = i + wire + link.latency;
            if self.share_intra > 0.0 && r != to {
                // The copy in takes its share of the sender's receive side, and the copy out
                // of the receiver's, from when the first of the message is there.
                let share = self.share_intra * wire;
                st.port_in = st.port_in.max(i) + share;
                let rb = &mut self.ranks[to as usize];
                let out = (i + link.latency).max(rb.port_in);
                arrival = arrival.max(out + wire);
                rb.port_in = arrival;
            }
            Delivery::At(arrival)
        };
        let msg = Message {
            delivery,
            bytes,
            overhead: link.overhead,
            from: (r, round),
        };
        match self.pairs.entry(Self::key(r, to)) {
            Entry::Occupied(mut e) if e.get().receives > 0 => {
                e.get_mut().receives -= 1;
                if e.get().receives == 0 {
                    e.remove();
                }
                self.land(to, msg);
            }
            Entry::Occupied(mut e) => e.get_mut().push(msg),
            Entry::Vacant(v) => {
                v.insert(Pair {
                    first: Some(msg),
                    ..Pair::default()
                });
            }
        }
    }

    /// Message `m` meets its posted receive at rank `r`.
    fn land(&mut self, r: u32, m: Message) {
        let posted = self.ranks[r as usize].start;
        let arrival = match m.delivery {
            Delivery::At(t) => t,
            Delivery::Read(ready) => {
                // The receiver reads the sender's pages: contention from the reads of that
                // memory still under way when this one starts.
                let mut begin = ready.max(posted);
                let share = self.share_intra;
                if share > 0.0 {
                    // Directions that slow each other down: the reader's port must be free,
                    // and the sender's is busy for its share of the transfer.
                    begin = begin.max(self.ranks[r as usize].port);
                }
                let reader_round = self.ranks[r as usize].round;
                let src = &mut self.ranks[m.from.0 as usize];
                src.reads.retain(|&end| end > begin);
                let c = src.reads.len() + 1;
                let end = begin + self.model.cma.read_time(m.bytes as usize, c);
                src.reads.push(end);
                if share > 0.0 {
                    src.port = src.port.max(begin + share * (end - begin));
                }
                // The sender's send completes once its memory was read.
                if end >= src.sends_done {
                    src.sends_done = end;
                    src.sends_cause = (r, reader_round);
                }
                self.release(m.from.0);
                end
            }
        };
        let st = &mut self.ranks[r as usize];
        if self.share_intra > 0.0 && matches!(m.delivery, Delivery::Read(_)) {
            st.port = st.port.max(arrival);
        }
        st.landed.push((arrival, m.overhead, m.from));
        self.release(r);
    }

    /// One thing rank `r`'s round waited for is done; ends the round when it was the last.
    fn release(&mut self, r: u32) {
        let st = &mut self.ranks[r as usize];
        st.waiting -= 1;
        if st.waiting == 0 {
            self.end_round(r);
        }
    }

    /// Ends rank `r`'s current round (everything it waited for is done).
    fn end_round(&mut self, r: u32) {
        let prog = &self.programs[r as usize];
        let st = &mut self.ranks[r as usize];
        let round = st.round;
        let mut cause = (r, round.saturating_sub(1));
        let mut latest = st.start;
        // Receives complete in arrival order, each costing the CPU its overhead.
        st.landed.sort_unstable_by(|x, y| x.0.total_cmp(&y.0));
        let mut cpu = st.cpu;
        for &(arrival, overhead, from) in &st.landed {
            if arrival >= latest {
                latest = arrival;
                cause = from;
            }
            cpu = cpu.max(arrival) + overhead;
        }
        if st.sends_done > latest {
            cause = st.sends_cause;
        }
        let mut end = cpu.max(st.sends_done);
        for op in prog.stored(st.stored as usize) {
            match op.kind {
                OpKind::Reduce => end += op.bytes as f64 * self.model.reduce_per_byte,
                OpKind::Copy => end += op.bytes as f64 * self.model.copy_per_byte,
                _ => {}
            }
        }
        st.cpu = end;
        if self.record {
            if cause == (r, round.wrapping_sub(1)) && round == 0 {
                cause = (r, 0);
            }
            self.out.rounds[r as usize].push(RoundSpan {
                start: st.start,
                end,
                cause,
            });
        }
        st.round += 1;
        st.repeat += 1;
        if st.repeat == prog.repeats[st.stored as usize] {
            st.stored += 1;
            st.repeat = 0;
        }
        if st.stored as usize == prog.repeats.len() {
            st.done = true;
            self.out.finish[r as usize] = end;
        } else {
            self.queue.push(Reverse((Time(end), r)));
        }
    }

    /// Checks that every rank finished and every message was received.
    fn finish(self) -> Result<Outcome, SimError> {
        let stuck: Vec<(u32, u32, Vec<u32>)> = self
            .ranks
            .iter()
            .enumerate()
            .filter(|(_, s)| !s.done)
            .take(16)
            .map(|(r, s)| {
                let peers = self.programs[r]
                    .stored(s.stored as usize)
                    .iter()
                    .filter(|o| o.kind == OpKind::Recv)
                    .map(|o| o.peer)
                    .collect();
                (r as u32, s.round, peers)
            })
            .collect();
        if !stuck.is_empty() {
            return Err(SimError::Deadlock(stuck));
        }
        if let Some((k, _)) = self.pairs.iter().find(|(_, p)| p.first.is_some()) {
            return Err(SimError::Unreceived((k >> 32) as u32, *k as u32));
        }
        Ok(self.out)
    }
}
