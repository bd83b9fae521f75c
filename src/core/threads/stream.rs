//! MPICH-compatible streams (`MPIX_Stream_*`): a stream is a serial execution context the
//! application promises to drive from one thread at a time; hympi gives each stream a VCI of
//! its own where the pool has enough (streams take VCIs from the top of the pool down, away
//! from `MPI_COMM_WORLD` and `MPI_COMM_SELF`).
//!
//! - `MPIX_Stream_comm_create(comm, stream)`: a duplicate of `comm` whose context id is
//!   pinned to the stream's VCI (`vci::pin`), so its matching queues and fast-path lock are
//!   the stream's.
//! - `MPIX_Stream_comm_create_multiplex(comm, n, streams)`: a duplicate of `comm` plus, for
//!   every pair (source stream index `i`, destination stream index `j`) with `i, j < M`
//!   (`M` the largest `n` of any process), a hidden communicator on context id
//!   `base + i * M + j`, pinned on each process to the VCI of its stream `j`. A message from
//!   stream `i` of one process to stream `j` of another travels on pair `(i, j)`'s
//!   communicator, so `MPIX_Stream_recv` matches on both stream indices with ordinary
//!   matching, and statuses carry ordinary process ranks.
//!
//! Pinning happens after the members agreed on the ids, when a fast peer may already have
//! sent on them: `Matchers::move_unexpected` carries such messages over to the pinned VCI.

use crate::core::error::{fail, MpiResult};
use crate::core::objects::comm::CONTEXTS_PER_ID;
use crate::core::objects::comm_build::{self, Agreement, Blueprint};
use crate::core::objects::slab::{kind, Slab};
use crate::core::objects::team::{self, Team};
use crate::core::runtime::{self, Runtime};
use crate::core::threads::vci;
use crate::mpi_abi::consts::*;
use std::sync::Arc;

/// Largest number of streams a process may attach to one multiplex communicator.
pub const MAX_MULTIPLEX: u32 = 16;

/// A stream: its VCI and how many communicators use it.
#[derive(Debug)]
pub struct Stream {
    /// The VCI its communicators' traffic is matched on.
    pub vci: usize,
    /// Communicators attached to it.
    pub refs: u32,
}

/// The streams of a process.
pub struct Streams {
    /// Stream table (handles of kind `STREAM`).
    pub table: Slab<Stream>,
    created: usize,
}

impl Default for Streams {
    fn default() -> Self {
        Streams {
            table: Slab::new(kind::STREAM),
            created: 0,
        }
    }
}

/// What a stream communicator carries: its streams and, for a multiplex communicator, the
/// pair communicators.
#[derive(Debug)]
pub struct Attached {
    /// Table indices of this process's streams, by local stream index (`None`:
    /// `MPIX_STREAM_NULL`).
    pub streams: Vec<Option<u32>>,
    /// Multiplex: table index of the communicator of pair `(i, j)` at `i * most + j`.
    pub pairs: Vec<u32>,
    /// Multiplex: the largest stream count of any process (0 for a plain stream comm).
    pub most: u32,
    /// Multiplex: every process's stream count, by rank.
    pub counts: Vec<u32>,
}

impl Attached {
    /// Whether this is a multiplex communicator.
    pub fn is_multiplex(&self) -> bool {
        self.most > 0
    }

    /// The table index of the pair communicator from stream `src_idx` of rank `from` to
    /// stream `dst_idx` of rank `to`; `MPI_ERR_ARG` for an index out of range. `from` or
    /// `to` may be a wildcard or `MPI_PROC_NULL` (no range known: up to the largest count).
    pub fn pair(&self, from: i32, src_idx: i32, to: i32, dst_idx: i32) -> MpiResult<u32> {
        let limit = |r: i32| -> u32 {
            usize::try_from(r)
                .ok()
                .and_then(|r| self.counts.get(r).copied())
                .unwrap_or(self.most)
        };
        for (what, idx, rank) in [("source", src_idx, from), ("destination", dst_idx, to)] {
            let n = limit(rank);
            if idx < 0 || idx as u32 >= n {
                return fail(
                    MPI_ERR_ARG,
                    format!("{what} stream index {idx} is out of range (rank {rank} attached {n} streams)"),
                );
            }
        }
        Ok(self.pairs[(src_idx as u32 * self.most + dst_idx as u32) as usize])
    }
}

impl Runtime {
    /// Resolves a stream handle (`None` for `MPIX_STREAM_NULL`).
    pub fn stream(&self, h: usize) -> MpiResult<Option<u32>> {
        if h == MPIX_STREAM_NULL {
            return Ok(None);
        }
        match self.streams.table.decode(h) {
            Some(i) if self.streams.table.get(i).is_some() => Ok(Some(i)),
            _ => fail(MPI_ERR_ARG, format!("invalid stream handle {h:#x}")),
        }
    }

    /// Pins context id `id` to VCI `v` (or back to the default with `None`), moving the
    /// messages that already arrived on it.
    pub fn pin_context(&mut self, id: u32, v: Option<usize>) {
        let ctx = id * CONTEXTS_PER_ID;
        let from = self.vcis.vci_of_ctx(ctx);
        vci::pin(id, v);
        let to = self.vcis.vci_of_ctx(ctx);
        if from != to {
            self.matchers.move_unexpected(id, from, to);
        }
    }

    /// Undoes what `attach` did, when communicator `idx`'s entry is dropped.
    pub fn detach_streams(&mut self, a: &Attached) {
        for &e in &a.pairs {
            self.release_comm(e);
        }
        for s in a.streams.iter().flatten() {
            if let Some(st) = self.streams.table.get_mut(*s) {
                st.refs = st.refs.saturating_sub(1);
            }
        }
    }
}

/// The VCI a communicator's hints name: MPICH's `vci` or `receiver_vci` (an index, taken
/// modulo the number of VCIs), or, with `inherit_vci` = `true`, the VCI of `parent_ctx`.
/// `sender_vci` is accepted and kept but has no effect: a communicator has one VCI per
/// process here, the one its receives are matched on.
pub fn hinted_vci(
    info: &crate::core::objects::info::Info,
    n: usize,
    parent: Option<usize>,
) -> Option<usize> {
    for key in ["vci", "receiver_vci"] {
        if let Some(v) = info.get(key).and_then(|v| v.trim().parse::<usize>().ok()) {
            return Some(v % n.max(1));
        }
    }
    if info.get("inherit_vci").map(str::trim) == Some("true") {
        return parent;
    }
    None
}

impl Runtime {
    /// Applies the VCI hints of intracommunicator `idx` (see [`hinted_vci`]): pins its
    /// context id to the named VCI, moving what already waits on it, and drops the fast
    /// paths' cached facts so they relearn the VCI. `parent_ctx`: the wire context of the
    /// communicator it was duplicated from, for `inherit_vci`.
    pub fn apply_vci_hints(&mut self, idx: u32, parent_ctx: Option<u32>) {
        let Some(c) = self.comms.get(idx) else {
            return;
        };
        if c.is_inter() || c.endpoints.is_some() || c.stream.is_some() {
            return;
        }
        let parent = parent_ctx.map(|p| self.vcis.vci_of_ctx(p));
        let Some(v) = hinted_vci(&c.info, self.vcis.len(), parent) else {
            return;
        };
        let id = c.context_id();
        let handle = self.comm_handle(idx);
        self.matchers.forget_comm(idx, handle);
        self.pin_context(id, Some(v));
    }
}

/// `MPIX_Stream_create`: a new stream on the next VCI from the top of the pool.
pub fn create() -> MpiResult<usize> {
    runtime::with(|rt| {
        let n = rt.vcis.len();
        let v = n - 1 - rt.streams.created % n;
        rt.streams.created += 1;
        match rt.streams.table.insert(Stream { vci: v, refs: 0 }) {
            Some(i) => Ok(rt.streams.table.handle(i)),
            None => fail(MPI_ERR_INTERN, "too many streams"),
        }
    })
}

/// `MPIX_Stream_free`: frees a stream no communicator uses any more.
pub fn free(h: usize) -> MpiResult<()> {
    runtime::with(|rt| {
        let Some(i) = rt.stream(h)? else {
            return fail(
                MPI_ERR_ARG,
                "MPIX_Stream_free: the stream is MPIX_STREAM_NULL",
            );
        };
        let refs = rt.streams.table.get(i).map_or(0, |s| s.refs);
        if refs > 0 {
            return fail(
                MPI_ERR_OTHER,
                format!("MPIX_Stream_free: {refs} communicator(s) still use the stream (free them first)"),
            );
        }
        rt.streams.table.remove(i);
        Ok(())
    })
}

/// `MPIX_Stream_comm_create`: a duplicate of `comm` on `stream`'s VCI.
pub fn comm_create(comm: usize, stream: usize) -> MpiResult<usize> {
    let (plan, s) = runtime::with(|rt| Ok((comm_build::plan_dup(rt, comm)?, rt.stream(stream)?)))?;
    if plan.is_inter() {
        return fail(
            MPI_ERR_COMM,
            "MPIX_Stream_comm_create needs an intracommunicator",
        );
    }
    let id = plan.agreement().run()?;
    runtime::with(|rt| {
        let bp = plan.blueprint(Vec::new(), crate::core::objects::info::Info::default());
        let h = rt.install_comm(id, bp)?;
        let idx = rt.comm_index(h).expect("new communicator");
        if let Some(s) = s {
            let v = rt.streams.table.get(s).expect("stream").vci;
            rt.streams.table.get_mut(s).expect("stream").refs += 1;
            rt.pin_context(id, Some(v));
        }
        rt.comms.get_mut(idx).expect("new communicator").stream = Some(Arc::new(Attached {
            streams: vec![s],
            pairs: Vec::new(),
            most: 0,
            counts: Vec::new(),
        }));
        Ok(h)
    })
}

/// `MPIX_Stream_comm_create_multiplex`: a duplicate of `comm` with this process's `streams`
/// attached and a pair communicator for every (source, destination) stream index pair.
pub fn comm_create_multiplex(comm: usize, streams: &[usize]) -> MpiResult<usize> {
    let (plan, local, team_counts, team_pairs, key) = runtime::with(|rt| {
        let plan = comm_build::plan_dup(rt, comm)?;
        let mut local = Vec::with_capacity(streams.len());
        for &h in streams {
            local.push(rt.stream(h)?);
        }
        let (idx, c) = rt.comm_plain(comm)?;
        Ok((
            plan,
            local,
            Team::whole(idx, c.size, c.rank, team::tag::STREAMS),
            Team::whole(idx, c.size, c.rank, team::tag::STREAM_PAIRS),
            ((c.ctx as u64) << 32) | (team::tag::STREAMS as u32 as u64),
        ))
    })?;
    if plan.is_inter() {
        return fail(
            MPI_ERR_COMM,
            "MPIX_Stream_comm_create_multiplex needs an intracommunicator",
        );
    }
    let counts = team::allgather_u32(team_counts, streams.len() as u32)?;
    let most = counts.iter().copied().max().unwrap_or(0).max(1);
    if most > MAX_MULTIPLEX {
        return fail(
            MPI_ERR_ARG,
            format!("a process attached {most} streams; hympi supports at most {MAX_MULTIPLEX} per multiplex communicator"),
        );
    }
    let id = plan.agreement().run()?;
    let base = Agreement::for_run(team_pairs, key, most * most).run()?;
    runtime::with(|rt| {
        let h = rt.install_comm(
            id,
            plan.blueprint(Vec::new(), crate::core::objects::info::Info::default()),
        )?;
        let idx = rt.comm_index(h).expect("new communicator");
        let members = rt.comms.get(idx).expect("new communicator").members();
        let mut pairs = Vec::with_capacity((most * most) as usize);
        for i in 0..most {
            for j in 0..most {
                let pid = base + i * most + j;
                let ph = rt.install_comm(
                    pid,
                    Blueprint {
                        members: members.clone(),
                        remote: None,
                        errh: crate::core::objects::errhandler::Errh::Return,
                        info: crate::core::objects::info::Info::default(),
                        attrs: Vec::new(),
                        topo: None,
                        session: None,
                    },
                )?;
                let pidx = rt.comm_index(ph).expect("pair communicator");
                rt.comms.get_mut(pidx).expect("pair communicator").hidden = true;
                let v = local
                    .get(j as usize)
                    .copied()
                    .flatten()
                    .and_then(|s| rt.streams.table.get(s))
                    .map(|s| s.vci);
                if v.is_some() {
                    rt.pin_context(pid, v);
                }
                pairs.push(pidx);
            }
        }
        for s in local.iter().flatten() {
            rt.streams.table.get_mut(*s).expect("stream").refs += 1;
        }
        rt.comms.get_mut(idx).expect("new communicator").stream = Some(Arc::new(Attached {
            streams: local,
            pairs,
            most,
            counts,
        }));
        Ok(h)
    })
}

/// `MPIX_Comm_get_stream`: the handle of local stream `i` of communicator `comm`
/// (`MPIX_STREAM_NULL` when none is attached there).
pub fn comm_get_stream(comm: usize, i: i32) -> MpiResult<usize> {
    runtime::with(|rt| {
        let (_, c) = rt.comm(comm)?;
        let Some(a) = c.stream.clone() else {
            return Ok(MPIX_STREAM_NULL);
        };
        match usize::try_from(i).ok().and_then(|i| a.streams.get(i)) {
            Some(Some(s)) => Ok(rt.streams.table.handle(*s)),
            Some(None) => Ok(MPIX_STREAM_NULL),
            None => fail(
                MPI_ERR_ARG,
                format!(
                    "stream index {i} is out of range (the communicator has {} local streams)",
                    a.streams.len()
                ),
            ),
        }
    })
}

/// The communicator handle a stream send (`send`: to `peer`) or receive (from `peer`) on
/// `comm` uses: the pair communicator of a multiplex communicator, else `comm` itself (the
/// indices are then ignored).
pub fn route(comm: usize, send: bool, peer: i32, src_idx: i32, dst_idx: i32) -> MpiResult<usize> {
    runtime::with(|rt| {
        let (_, c) = rt.comm(comm)?;
        match &c.stream {
            Some(a) if a.is_multiplex() => {
                let (from, to) = if send { (c.rank, peer) } else { (peer, c.rank) };
                let p = a.pair(from, src_idx, to, dst_idx)?;
                Ok(rt.comm_handle(p))
            }
            _ => Ok(comm),
        }
    })
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn pairs_are_indexed_by_source_then_destination_stream() {
        let a = Attached {
            streams: vec![Some(0), Some(1)],
            pairs: (100..109).collect(),
            most: 3,
            counts: vec![2, 3, 1],
        };
        assert!(a.is_multiplex());
        // Rank 0 (2 streams) stream 1 to rank 1 (3 streams) stream 2: pair (1, 2).
        assert_eq!(a.pair(0, 1, 1, 2).unwrap(), 100 + 3 + 2);
        // Rank 2 has one stream: index 1 is out of range on either side.
        assert!(a.pair(2, 1, 0, 0).is_err());
        assert!(a.pair(0, 0, 2, 1).is_err());
        assert!(a.pair(0, -1, 1, 0).is_err());
        // A wildcard source allows any index below the largest count.
        assert_eq!(a.pair(MPI_ANY_SOURCE, 2, 0, 1).unwrap(), 100 + 6 + 1);
    }

    #[test]
    fn vci_hints_name_a_vci_modulo_the_pool() {
        use crate::core::objects::info::Info;
        let mut i = Info::default();
        assert_eq!(hinted_vci(&i, 4, Some(2)), None);
        i.set("inherit_vci", "true");
        assert_eq!(hinted_vci(&i, 4, Some(2)), Some(2));
        i.set("receiver_vci", "6");
        assert_eq!(hinted_vci(&i, 4, Some(2)), Some(2), "6 mod 4");
        i.set("vci", "3");
        assert_eq!(hinted_vci(&i, 4, None), Some(3), "vci first");
        i.set("vci", "x");
        i.set("receiver_vci", "x");
        i.set("sender_vci", "1");
        assert_eq!(
            hinted_vci(&i, 4, None),
            None,
            "sender_vci alone pins nothing"
        );
    }
}
