//! Internal collectives used to build communicators: a *team* (some ranks of a communicator)
//! gathers fixed-size contributions at its leader, the leader combines them (optionally
//! swapping the result with the leader of another team, for intercommunicators), and sends
//! the result back to every member.
//!
//! Rounds are state machines polled by the caller ([`Round::poll`]) so they serve both the
//! blocking calls (polled by `runtime::wait_for`) and the nonblocking `MPI_Comm_idup`
//! (polled by the progress engine). Traffic uses internal tags (`p2p::INTERNAL_TAG_MAX` and
//! below), which travel on the communicator's collective context.

use crate::core::datatype;
use crate::core::error::{fail, MpiResult};
use crate::core::objects::context::and_into;
use crate::core::p2p::request::{ReqKind, SendMode};
use crate::core::p2p::{RecvArgs, SendArgs, INTERNAL_TAG_MAX};
use crate::core::runtime::{self, Runtime};
use crate::mpi_abi::consts::*;

/// Internal tags, one per kind of round (all `<= INTERNAL_TAG_MAX`).
pub mod tag {
    /// Context-id agreement.
    pub const AGREE: i32 = super::INTERNAL_TAG_MAX;
    /// Allgather of split arguments.
    pub const SPLIT: i32 = super::INTERNAL_TAG_MAX - 1;
    /// Broadcasts and exchanges of group data.
    pub const GROUP: i32 = super::INTERNAL_TAG_MAX - 2;
    /// Barrier.
    pub const BARRIER: i32 = super::INTERNAL_TAG_MAX - 3;
    /// Allgather of endpoint counts (`MPIX_Comm_create_endpoints`).
    pub const ENDPOINTS: i32 = super::INTERNAL_TAG_MAX - 4;
    /// Allgather of stream counts (`MPIX_Stream_comm_create_multiplex`).
    pub const STREAMS: i32 = super::INTERNAL_TAG_MAX - 5;
    /// Agreement on the context ids of a multiplex communicator's stream pairs.
    pub const STREAM_PAIRS: i32 = super::INTERNAL_TAG_MAX - 6;
    /// Window construction (`core::rma`): descriptors, the mapping's key, agreement.
    pub const WIN: i32 = super::INTERNAL_TAG_MAX - 7;
    /// Open files (`core::io`): open, close, views, ordered and collective access.
    pub const FILE: i32 = super::INTERNAL_TAG_MAX - 8;
    /// One-sided requests to a window's server (`core::rma::net`), on the window's
    /// communicator.
    pub const RMA: i32 = super::INTERNAL_TAG_MAX - 9;
    /// Base of tags derived from user tags (`MPI_Comm_create_group`) and string tags:
    /// `USER_BASE - (t mod 2^24)`.
    pub const USER_BASE: i32 = super::INTERNAL_TAG_MAX - 16;

    /// The internal tag for user tag or hash `t`.
    pub fn derived(t: u64) -> i32 {
        USER_BASE - (t % (1 << 24)) as i32
    }

    /// The tag of a window server's answer numbered `seq`: in the derived tags' range, free
    /// on a window's communicator, which is private and never builds communicators.
    pub fn rma_reply(seq: u64) -> i32 {
        derived(seq)
    }

    /// Base of the tags of communicator constructions numbered by their parent
    /// (`SEQ_BASE - (sequence mod 2^23)`): below the derived tags, above the collectives'.
    pub const SEQ_BASE: i32 = USER_BASE - (1 << 24);

    /// The internal tag of the construction numbered `seq` on its parent.
    pub fn sequenced(seq: u32) -> i32 {
        SEQ_BASE - (seq % (1 << 23)) as i32
    }

    /// The tag of the data of a large put numbered `seq` by its origin, sent to a window
    /// server apart from the request: in the sequenced tags' range, free on a window's
    /// communicator (no construction runs there), and apart from the answers' range, so
    /// a put's data never matches a receive of an answer numbered by another process.
    pub fn rma_data(seq: u64) -> i32 {
        SEQ_BASE - (seq % (1 << 23)) as i32
    }
}

/// Some ranks of a communicator acting together; the leader is `ranks[0]`.
#[derive(Clone, Debug)]
pub struct Team {
    /// Communicator (table index) whose contexts carry the traffic.
    pub comm: u32,
    /// Member ranks in `comm`, leader first.
    pub ranks: Vec<i32>,
    /// This process's position in `ranks`.
    pub me: usize,
    /// Tag of the traffic (internal, or a user tag for a bridge on a peer communicator).
    pub tag: i32,
}

impl Team {
    /// All ranks of communicator `comm` (of size `size`, this process rank `rank`), led by rank 0.
    pub fn whole(comm: u32, size: i32, rank: i32, tag: i32) -> Team {
        Team {
            comm,
            ranks: (0..size).collect(),
            me: rank as usize,
            tag,
        }
    }

    /// Whether this process leads the team.
    pub fn is_leader(&self) -> bool {
        self.me == 0
    }
}

/// The leaders' exchange of an intercommunicator round: the leader swaps its combined value
/// with rank `peer` of communicator `comm` on `tag`.
#[derive(Clone, Copy, Debug)]
pub struct Bridge {
    /// Communicator table index.
    pub comm: u32,
    /// The other leader's rank in it.
    pub peer: i32,
    /// Tag.
    pub tag: i32,
}

/// How the leader combines contributions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Combine {
    /// Bitwise AND of 64-bit words (context masks).
    And,
    /// Concatenation in team order (allgather).
    Concat,
}

#[derive(Debug)]
enum Phase {
    Start,
    Gather(Vec<(u32, usize)>),
    Bridge([u32; 2]),
    Bcast(Vec<u32>),
    Member([u32; 2]),
    Done,
}

/// One gather-combine-broadcast round.
#[derive(Debug)]
pub struct Round {
    team: Team,
    bridge: Option<Bridge>,
    combine: Combine,
    mine: Vec<u8>,
    parts: Vec<Vec<u8>>,
    acc: Vec<u8>,
    remote: Vec<u8>,
    phase: Phase,
}

fn byte_unit() -> datatype::TypeInfo {
    datatype::lookup(MPI_BYTE).expect("MPI_BYTE is predefined")
}

/// Starts an internal send of `data` (which must stay in place until it completes).
pub fn post_send(rt: &mut Runtime, comm: u32, dest: i32, tag: i32, data: &[u8]) -> MpiResult<u32> {
    let rid = rt.new_request(ReqKind::Send, comm)?;
    rt.start_send(
        rid,
        SendArgs {
            comm,
            dest,
            tag,
            buf: data.as_ptr(),
            bytes: data.len(),
            mode: SendMode::Standard,
            unit: byte_unit(),
            layout: None,
        },
    )?;
    Ok(rid)
}

/// Starts an internal receive into `buf` (which must stay in place until it completes).
pub fn post_recv(
    rt: &mut Runtime,
    comm: u32,
    src: i32,
    tag: i32,
    buf: &mut [u8],
) -> MpiResult<u32> {
    let rid = rt.new_request(ReqKind::Recv, comm)?;
    rt.start_recv(
        rid,
        RecvArgs {
            comm,
            src,
            tag,
            buf: buf.as_mut_ptr(),
            cap: buf.len(),
            unit: byte_unit(),
            layout: None,
        },
    )?;
    Ok(rid)
}

/// Whether internal requests `rids` are all complete; frees them when they are. Fails when
/// one of them failed (e.g. a truncated internal message: members disagree on arguments).
pub fn all_done(rt: &mut Runtime, rids: &[u32]) -> MpiResult<bool> {
    if !rids
        .iter()
        .all(|&r| rt.reqs.get(r).map(|q| q.done()).unwrap_or(true))
    {
        return Ok(false);
    }
    let mut err = None;
    for &r in rids {
        if let Some(q) = rt.reqs.get(r) {
            if q.status.error != MPI_SUCCESS {
                err = Some(q.status.error);
            }
            rt.reqs.free(r);
        }
    }
    match err {
        None => Ok(true),
        Some(e) => fail(
            e,
            "an internal message of a communicator construction failed (do all processes pass matching arguments?)",
        ),
    }
}

impl Round {
    /// A round over `team` contributing `mine` (the same length on every member).
    pub fn new(team: Team, bridge: Option<Bridge>, combine: Combine, mine: Vec<u8>) -> Round {
        Round {
            team,
            bridge,
            combine,
            mine,
            parts: Vec::new(),
            acc: Vec::new(),
            remote: Vec::new(),
            phase: Phase::Start,
        }
    }

    fn result_len(&self) -> usize {
        match self.combine {
            Combine::And => self.mine.len(),
            Combine::Concat => self.mine.len() * self.team.ranks.len(),
        }
    }

    fn fold(&mut self) {
        match self.combine {
            Combine::And => {
                let mut acc = words(&self.mine);
                for p in &self.parts {
                    and_into(&mut acc, &words(p));
                }
                self.acc = bytes(&acc);
            }
            Combine::Concat => {
                let mut acc = Vec::with_capacity(self.result_len());
                let mut others = self.parts.iter();
                for i in 0..self.team.ranks.len() {
                    if i == self.team.me {
                        acc.extend_from_slice(&self.mine);
                    } else {
                        acc.extend_from_slice(others.next().expect("one part per member"));
                    }
                }
                self.acc = acc;
            }
        }
        self.parts = Vec::new();
    }

    /// Advances the round; returns the combined value once this process has it.
    pub fn poll(&mut self, rt: &mut Runtime) -> MpiResult<Option<Vec<u8>>> {
        loop {
            match std::mem::replace(&mut self.phase, Phase::Done) {
                Phase::Start => {
                    let (comm, tag) = (self.team.comm, self.team.tag);
                    if self.team.is_leader() {
                        let n = self.team.ranks.len();
                        self.parts = vec![vec![0u8; self.mine.len()]; n - 1];
                        let mut reqs = Vec::with_capacity(n - 1);
                        for (i, &r) in self.team.ranks[1..].iter().enumerate() {
                            reqs.push((post_recv(rt, comm, r, tag, &mut self.parts[i])?, i));
                        }
                        self.phase = Phase::Gather(reqs);
                    } else {
                        let leader = self.team.ranks[0];
                        self.acc = vec![0u8; self.result_len()];
                        let s = post_send(rt, comm, leader, tag, &self.mine)?;
                        let r = post_recv(rt, comm, leader, tag, &mut self.acc)?;
                        self.phase = Phase::Member([s, r]);
                    }
                }
                Phase::Gather(reqs) => {
                    let ids: Vec<u32> = reqs.iter().map(|x| x.0).collect();
                    if !all_done(rt, &ids)? {
                        self.phase = Phase::Gather(reqs);
                        return Ok(None);
                    }
                    self.fold();
                    match self.bridge {
                        Some(b) => {
                            self.remote = vec![0u8; self.acc.len()];
                            let s = post_send(rt, b.comm, b.peer, b.tag, &self.acc)?;
                            let r = post_recv(rt, b.comm, b.peer, b.tag, &mut self.remote)?;
                            self.phase = Phase::Bridge([s, r]);
                        }
                        None => self.phase = self.broadcast(rt)?,
                    }
                }
                Phase::Bridge(ids) => {
                    if !all_done(rt, &ids)? {
                        self.phase = Phase::Bridge(ids);
                        return Ok(None);
                    }
                    let mut acc = words(&self.acc);
                    and_into(&mut acc, &words(&self.remote));
                    self.acc = bytes(&acc);
                    self.phase = self.broadcast(rt)?;
                }
                Phase::Bcast(ids) => {
                    if !all_done(rt, &ids)? {
                        self.phase = Phase::Bcast(ids);
                        return Ok(None);
                    }
                    return Ok(Some(std::mem::take(&mut self.acc)));
                }
                Phase::Member(ids) => {
                    if !all_done(rt, &ids)? {
                        self.phase = Phase::Member(ids);
                        return Ok(None);
                    }
                    return Ok(Some(std::mem::take(&mut self.acc)));
                }
                Phase::Done => {
                    return fail(MPI_ERR_INTERN, "internal round polled after completion")
                }
            }
        }
    }

    fn broadcast(&mut self, rt: &mut Runtime) -> MpiResult<Phase> {
        let (comm, tag) = (self.team.comm, self.team.tag);
        let mut ids = Vec::with_capacity(self.team.ranks.len());
        for &r in &self.team.ranks[1..] {
            ids.push(post_send(rt, comm, r, tag, &self.acc)?);
        }
        Ok(Phase::Bcast(ids))
    }

    /// Runs the round to completion (blocking; call outside `runtime::with`).
    pub fn run(mut self) -> MpiResult<Vec<u8>> {
        runtime::wait_for(|rt| self.poll(rt))
    }
}

/// 64-bit words of a byte string (native endian; length a multiple of 8).
pub fn words(b: &[u8]) -> Vec<u64> {
    b.chunks_exact(8)
        .map(|c| u64::from_ne_bytes(c.try_into().unwrap()))
        .collect()
}

/// Bytes of 64-bit words.
pub fn bytes(w: &[u64]) -> Vec<u8> {
    w.iter().flat_map(|x| x.to_ne_bytes()).collect()
}

/// Blocking exchange of `data` with rank `peer` of `comm` (both sides send and receive
/// `len` bytes). Call outside `runtime::with`.
pub fn exchange(comm: u32, peer: i32, tag: i32, data: &[u8], len: usize) -> MpiResult<Vec<u8>> {
    let mut got = vec![0u8; len];
    let ids = runtime::with(|rt| {
        let s = post_send(rt, comm, peer, tag, data)?;
        let r = post_recv(rt, comm, peer, tag, &mut got)?;
        Ok([s, r])
    })?;
    runtime::wait_for(|rt| Ok(all_done(rt, &ids)?.then_some(())))?;
    Ok(got)
}

/// Blocking broadcast of a byte string of any length from the team's leader (`data` is
/// ignored elsewhere). Call outside `runtime::with`.
pub fn bcast(team: &Team, data: Vec<u8>) -> MpiResult<Vec<u8>> {
    let (comm, tag) = (team.comm, team.tag);
    if team.is_leader() {
        let len = (data.len() as u64).to_ne_bytes();
        let ids = runtime::with(|rt| {
            let mut ids = Vec::new();
            for &r in &team.ranks[1..] {
                ids.push(post_send(rt, comm, r, tag, &len)?);
                ids.push(post_send(rt, comm, r, tag, &data)?);
            }
            Ok(ids)
        })?;
        runtime::wait_for(|rt| Ok(all_done(rt, &ids)?.then_some(())))?;
        Ok(data)
    } else {
        let leader = team.ranks[0];
        let mut len = [0u8; 8];
        let id = runtime::with(|rt| post_recv(rt, comm, leader, tag, &mut len))?;
        runtime::wait_for(|rt| Ok(all_done(rt, &[id])?.then_some(())))?;
        let mut got = vec![0u8; u64::from_ne_bytes(len) as usize];
        let id = runtime::with(|rt| post_recv(rt, comm, leader, tag, &mut got))?;
        runtime::wait_for(|rt| Ok(all_done(rt, &[id])?.then_some(())))?;
        Ok(got)
    }
}

/// Allgathers one `u32` per member of `team` (blocking); the values in team order.
pub fn allgather_u32(team: Team, v: u32) -> MpiResult<Vec<u32>> {
    let all = Round::new(team, None, Combine::Concat, v.to_le_bytes().to_vec()).run()?;
    Ok(all
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect())
}
