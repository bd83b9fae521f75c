//! Node-aware two-level algorithms (algorithm name `smp`, as in MPICH): an intra-node phase
//! over the ranks of each node, an inter-node phase over one *head* per node, and for the
//! collectives that end everywhere an intra-node phase back. Each phase is an ordinary flat
//! algorithm run over a sub-group of the communicator ([`Schedule::group`]; the groups come
//! from the communicator's [`NodeLayout`]), so the network carries one message stream per
//! node instead of one per rank.
//!
//! A node's head is its first rank, except on the root's node of a rooted collective, where
//! the root is the head (the data starts or ends there, so no extra hop).
//!
//! - Bcast: heads broadcast (flat algorithm of the table for the head count), then each head
//!   broadcasts on its node.
//! - Reduce (commutative ops): each node reduces to its head, the heads reduce to the root.
//! - Allreduce (commutative ops): each node reduces to its head, the heads allreduce, each
//!   head broadcasts on its node.
//! - Barrier: dissemination on each node, dissemination among heads, release on each node.
//! - Allgather: each node gathers its blocks at its head (node order), the heads allgather the
//!   node runs (ring, runs of any size), each head broadcasts the whole on its node, and every
//!   rank puts the blocks in rank order.
//! - Gather: each node gathers at its head (binomial), the heads send their node's run of
//!   blocks to the root. Scatter: the reverse. Blocks travel in node order, which is rank
//!   order when every node's ranks are consecutive; otherwise the root reorders them
//!   through a temporary.

use super::blocks::{copy, Blocks};
use super::reduce::Elems;
use super::{allgather, allreduce, barrier, bcast, gather, reduce, scatter};
use crate::coll::sched::{Schedule, Span};
use crate::coll::tuning::{self, Coll, Query, Shape};
use crate::coll::Ctx;
use crate::core::objects::nodes::{self, NodeLayout};
use crate::core::runtime::Runtime;
use std::sync::Arc;

/// The communicator's node layout and the algorithm when the table picks a node-aware one
/// ([`tuning::NODE_AWARE`]) for `coll` and `q` (with the layout's node count and ranks per
/// node filled in) and the layout has something to gain from it (several nodes, one of them
/// with several ranks).
pub fn offer(
    rt: &Runtime,
    c: &Ctx,
    coll: Coll,
    q: &Query,
) -> Option<(Arc<NodeLayout>, &'static str)> {
    // A job on one node (the common case) never looks further.
    if c.inter.is_some() || c.size < 3 || rt.node_names.len() < 2 {
        return None;
    }
    let l = nodes::layout(rt, c.comm);
    if !l.is_hierarchical() {
        return None;
    }
    let mut q = *q;
    q.node_count = l.nodes();
    q.comm_avg_ppn = l.avg_per_node();
    q.node_aware = true;
    let mut ch = tuning::select_unrecorded(coll, &q);
    if !tuning::NODE_AWARE.contains(&ch.name) {
        return None;
    }
    // The multi-object algorithms need nodes of one size; elsewhere the two levels run.
    if tuning::MULTI_OBJECT.contains(&ch.name) && !l.is_uniform() {
        ch = ch.renamed(tuning::SMP);
    }
    tuning::record(coll, ch);
    Some((l, ch.name))
}

/// Runs `f` over the sub-group `ranks` (this rank must be a member): `f` sees a context whose
/// ranks are positions in `ranks`, and its sends and receives address the matching ranks of
/// the communicator. The phase ends its last round.
pub(super) fn on(
    c: &Ctx,
    s: &mut Schedule,
    ranks: &Arc<[i32]>,
    f: impl FnOnce(&Ctx, &mut Schedule),
) {
    in_group(c, s, ranks, Shape::default(), f)
}

/// As [`on`], for a group with one rank on each of its nodes (the heads, the leaders, an
/// object group), which the tables see as `ranks.len()` nodes of one rank.
fn across(c: &Ctx, s: &mut Schedule, ranks: &Arc<[i32]>, f: impl FnOnce(&Ctx, &mut Schedule)) {
    in_group(c, s, ranks, heads_shape(ranks), f)
}

/// As [`across`], over object group `k` (the `k`-th local rank of every node, in node
/// order: position `i` is node `i`'s rank on layouts whose nodes all have a `k`-th rank).
pub(super) fn across_objects(
    c: &Ctx,
    s: &mut Schedule,
    l: &NodeLayout,
    k: usize,
    f: impl FnOnce(&Ctx, &mut Schedule),
) {
    across(c, s, &l.object_group(k), f)
}

/// The tables' view of a group with one rank per node.
fn heads_shape(h: &[i32]) -> Shape {
    Shape::of(h.len(), h.len())
}

fn in_group(
    c: &Ctx,
    s: &mut Schedule,
    ranks: &Arc<[i32]>,
    shape: Shape,
    f: impl FnOnce(&Ctx, &mut Schedule),
) {
    let me = ranks
        .iter()
        .position(|&r| r == c.rank)
        .expect("a member of the group") as i32;
    let sub = Ctx {
        comm: c.comm,
        rank: me,
        size: ranks.len() as i32,
        inter: None,
        blocking: false,
        shape,
    };
    let before = s.group(Some(ranks.clone()));
    f(&sub, s);
    s.next_round();
    s.group(before);
}

/// The heads of the nodes: the first rank of each node, or `root` on its own node.
fn heads(l: &NodeLayout, root: i32) -> Arc<[i32]> {
    if root < 0 || l.local_of[root as usize] == 0 {
        return l.leaders.clone();
    }
    let mut h = l.leaders.to_vec();
    h[l.node_of[root as usize] as usize] = root;
    h.into()
}

/// Position of the head of `rank`'s node in that node's group.
fn head_pos(l: &NodeLayout, heads: &[i32], rank: i32) -> i32 {
    l.local_of[heads[l.node_of[rank as usize] as usize] as usize] as i32
}

/// Two-level broadcast of `data` from `root`.
pub fn bcast(c: &Ctx, s: &mut Schedule, l: &NodeLayout, data: &Span, root: i32) {
    if data.bytes == 0 {
        return;
    }
    let h = heads(l, root);
    let node = l.node_members(c.rank).clone();
    if h.contains(&c.rank) {
        let rn = l.node_of[root as usize] as i32;
        across(c, s, &h, |sc, s| bcast::run(sc, s, data, rn));
    }
    if node.len() > 1 {
        let hp = head_pos(l, &h, c.rank);
        on(c, s, &node, |sc, s| bcast::run(sc, s, data, hp));
    }
}

/// Two-level reduce of `e` (a commutative op) from base `send` into base `recv` at `root`.
pub fn reduce(
    c: &Ctx,
    s: &mut Schedule,
    l: &NodeLayout,
    e: &Elems,
    send: usize,
    recv: usize,
    root: i32,
) {
    let h = heads(l, root);
    let node = l.node_members(c.rank).clone();
    let is_head = h.contains(&c.rank);
    // The node's partial result: at the root straight in its receive buffer, at another head
    // in a temporary; a head alone on its node contributes its send buffer as it is.
    let mut partial = send;
    if node.len() > 1 {
        let hp = head_pos(l, &h, c.rank);
        if is_head {
            partial = if c.rank == root { recv } else { e.tmp(s) };
        }
        on(c, s, &node, |sc, s| {
            reduce::knomial(sc, s, e, send, partial, hp, 2)
        });
    }
    if is_head {
        let rn = l.node_of[root as usize] as i32;
        across(c, s, &h, |sc, s| {
            reduce::reduce(sc, s, e, partial, recv, rn)
        });
    }
}

/// Two-level allreduce of `e` (a commutative op) from base `send` (equal to `recv` for
/// `MPI_IN_PLACE`) into base `recv`.
pub fn allreduce(c: &Ctx, s: &mut Schedule, l: &NodeLayout, e: &Elems, send: usize, recv: usize) {
    let node = l.node_members(c.rank).clone();
    let is_head = l.local_of[c.rank as usize] == 0;
    let mut partial = send;
    if node.len() > 1 {
        if is_head {
            partial = recv;
        }
        on(c, s, &node, |sc, s| {
            reduce::knomial(sc, s, e, send, partial, 0, 2)
        });
    }
    if is_head {
        across(c, s, &l.leaders, |sc, s| {
            allreduce::allreduce(sc, s, e, partial, recv)
        });
    }
    if node.len() > 1 {
        on(c, s, &node, |sc, s| bcast::run(sc, s, &e.span(recv), 0));
    }
}

/// Two-level barrier.
pub fn barrier(c: &Ctx, s: &mut Schedule, l: &NodeLayout) {
    let node = l.node_members(c.rank).clone();
    if node.len() > 1 {
        on(c, s, &node, barrier::dissemination);
    }
    if l.local_of[c.rank as usize] == 0 {
        across(c, s, &l.leaders, barrier::dissemination);
    }
    if node.len() > 1 {
        let token = Span::bytes(0, 0);
        on(c, s, &node, |sc, s| bcast::knomial(sc, s, &token, 0, 2));
    }
}

/// Two-level allgather into the receive blocks `recv` (one per rank); `own` is this rank's
/// block when it is not in place already.
pub fn allgather(c: &Ctx, s: &mut Schedule, l: &NodeLayout, recv: &Blocks, own: Option<&Span>) {
    let p = c.size as usize;
    let b = recv.packed;
    if b == 0 {
        return;
    }
    let mine = own.cloned().unwrap_or_else(|| recv.block(c.rank as usize));
    // Staging in node order ([`NodeOrder`]): when every node's ranks are consecutive, node
    // order is rank order and the receive blocks themselves are the staging area.
    let ord = NodeOrder::new(l);
    let (first, direct) = (&ord.first, ord.direct);
    let at = |r: usize| ord.at(l, r);
    let stage = if direct {
        recv.clone()
    } else {
        Blocks::tmp(s, p, b)
    };
    let node = l.node_members(c.rank).clone();
    let n = l.node_of[c.rank as usize] as usize;
    let is_head = l.local_of[c.rank as usize] == 0;
    // 1. The node's blocks gather at its head.
    if own.is_some() || !direct {
        copy(s, mine.clone(), stage.block(at(c.rank as usize)));
    }
    if node.len() > 1 {
        on(c, s, &node, |sc, s| {
            if sc.rank == 0 {
                for i in 1..sc.size as usize {
                    s.recv(i as i32, stage.block(first[n] + i));
                }
            } else {
                s.send(0, mine.clone());
            }
        });
    }
    s.next_round();
    // 2. The heads exchange their node runs: nodes of one size have runs of one size, which
    //    any allgather algorithm moves (the table picks for the heads and the run's size:
    //    a ring over 256 heads would take 255 rounds where recursive doubling takes 8);
    //    uneven nodes go around the ring, which takes runs of any sizes.
    if is_head {
        let ppn = node.len();
        across(c, s, &l.leaders, |sc, s| {
            if l.is_uniform() {
                let runs = node_runs(&stage, ppn);
                let algo = allgather::choose(sc.size, runs.packed, sc.shape);
                allgather::run(sc, s, algo, &runs, None);
            } else {
                let runs: Vec<Span> = (0..l.nodes()).map(|k| ord.run(&stage, k)).collect();
                allgather::ring(sc, s, &runs, None)
            }
        });
    }
    // 3. Each head passes the whole on its node.
    if node.len() > 1 {
        on(c, s, &node, |sc, s| bcast::run(sc, s, &stage.run(0, p), 0));
    }
    // 4. Every rank puts the blocks in rank order.
    if !direct {
        for r in 0..p {
            copy(s, stage.block(at(r)), recv.block(r));
        }
        s.next_round();
    }
}

/// Where each rank's block goes when blocks are ordered by node: node `n`'s blocks are the
/// run starting at block `first[n]`, in local order.
pub(super) struct NodeOrder {
    pub(super) first: Vec<usize>,
    /// Node order is rank order (every node's ranks are consecutive).
    pub(super) direct: bool,
}

impl NodeOrder {
    pub(super) fn new(l: &NodeLayout) -> NodeOrder {
        let mut first = Vec::with_capacity(l.nodes() + 1);
        first.push(0usize);
        for m in &l.members {
            first.push(first.last().unwrap() + m.len());
        }
        let mut o = NodeOrder {
            first,
            direct: false,
        };
        o.direct = (0..l.node_of.len()).all(|r| o.at(l, r) == r);
        o
    }

    /// Position of rank `r`'s block.
    pub(super) fn at(&self, l: &NodeLayout, r: usize) -> usize {
        self.first[l.node_of[r] as usize] + l.local_of[r] as usize
    }

    /// Node `n`'s run of blocks in `b`.
    pub(super) fn run(&self, b: &Blocks, n: usize) -> Span {
        b.run(self.first[n], self.first[n + 1] - self.first[n])
    }
}

/// The runs of `len` blocks of `b` (staged in node order, nodes of `len` ranks each) as
/// blocks of their own, one per node.
pub(super) fn node_runs(b: &Blocks, len: usize) -> Blocks {
    Blocks {
        first: b.run(0, len),
        stride: b.stride * len as isize,
        packed: b.packed * len,
    }
}

/// The blocks of `b` from block `i` on, as blocks of their own.
fn from_block(b: &Blocks, i: usize) -> Blocks {
    Blocks {
        first: b.block(i),
        stride: b.stride,
        packed: b.packed,
    }
}

/// This rank's place in a rooted two-level gather or scatter.
struct Rooted {
    /// The node heads (the root on its node).
    heads: Arc<[i32]>,
    /// The ranks of this rank's node.
    node: Arc<[i32]>,
    is_head: bool,
    /// The root's node.
    rn: usize,
    ord: NodeOrder,
}

impl Rooted {
    fn new(c: &Ctx, l: &NodeLayout, root: i32) -> Rooted {
        let heads = heads(l, root);
        Rooted {
            is_head: heads.contains(&c.rank),
            heads,
            node: l.node_members(c.rank).clone(),
            rn: l.node_of[root as usize] as usize,
            ord: NodeOrder::new(l),
        }
    }

    /// The node's run of blocks at its head: at the root its node's part of the root's
    /// staging blocks `stage`, at another head of a node with several ranks a temporary;
    /// `None` elsewhere.
    fn nodebuf(&self, s: &mut Schedule, stage: Option<&Blocks>, b: usize) -> Option<Blocks> {
        match stage {
            Some(st) => Some(from_block(st, self.ord.first[self.rn])),
            None if self.is_head && self.node.len() > 1 => Some(Blocks::tmp(s, self.node.len(), b)),
            None => None,
        }
    }
}

/// Two-level gather of blocks of `b` bytes to `root`: each node gathers at its head
/// (binomial), the heads send their node's run to the root. `send` is this rank's block
/// (`None` at a root gathering in place), `recv` the root's receive blocks.
pub fn gather(
    c: &Ctx,
    s: &mut Schedule,
    l: &NodeLayout,
    send: Option<&Span>,
    recv: Option<&Blocks>,
    b: usize,
    root: i32,
) {
    let me = c.rank as usize;
    let place = Rooted::new(c, l, root);
    let (h, node, is_head, rn, ord) = (
        &place.heads,
        &place.node,
        place.is_head,
        place.rn,
        &place.ord,
    );
    let len = node.len();
    let is_root = c.rank == root;
    let mut own = send.cloned();
    // The root's blocks in node order: its receive blocks themselves, or a temporary.
    let stage = is_root.then(|| {
        let recv = recv.expect("the root has receive blocks");
        if ord.direct {
            recv.clone()
        } else {
            let t = Blocks::tmp(s, c.size as usize, b);
            let src = own.take().unwrap_or_else(|| recv.block(me));
            copy(s, src, t.block(ord.at(l, me)));
            s.next_round();
            t
        }
    });
    // 1. The node's blocks at its head (at the root: in place in the staging area).
    let nodebuf = place.nodebuf(s, stage.as_ref(), b);
    if len > 1 {
        let hp = head_pos(l, h, c.rank);
        on(c, s, node, |sc, s| {
            gather::binomial(sc, s, own.as_ref(), nodebuf.as_ref(), b, hp)
        });
    } else if let (Some(o), Some(nb)) = (&own, &nodebuf) {
        copy(s, o.clone(), nb.block(0));
        s.next_round();
    }
    // 2. The heads send their runs to the root: on nodes of one size, by the algorithm the
    //    table picks for the heads (a binomial tree for small runs: a root taking one
    //    message from each of 256 heads spends 256 receive overheads), else one by one.
    if is_head && l.is_uniform() {
        let algo = gather::choose(
            Coll::Gather.env_var(),
            h.len() as i32,
            b * len,
            heads_shape(h),
        );
        let runs = stage.as_ref().map(|st| node_runs(st, len));
        let mine = match &nodebuf {
            Some(nb) => Some(nb.run(0, len)),
            None => own.clone(),
        };
        let mine = if is_root { None } else { mine };
        across(c, s, h, |sc, s| match algo {
            gather::Algo::Binomial => {
                gather::binomial(sc, s, mine.as_ref(), runs.as_ref(), b * len, rn as i32)
            }
            gather::Algo::Linear => {
                let spans: Vec<Span> = match &runs {
                    Some(r) => (0..sc.size as usize).map(|k| r.block(k)).collect(),
                    None => Vec::new(),
                };
                gather::linear(sc, s, mine.as_ref(), &spans, rn as i32)
            }
        });
    } else if is_head {
        across(c, s, h, |_, s| match &stage {
            Some(st) => {
                for k in (0..l.nodes()).filter(|&k| k != rn) {
                    s.recv(k as i32, ord.run(st, k));
                }
            }
            None => {
                let run = match &nodebuf {
                    Some(nb) => nb.run(0, len),
                    None => own.clone().expect("a non-root has a send block"),
                };
                s.send(rn as i32, run);
            }
        });
    }
    // 3. The root puts the blocks in rank order.
    if let (Some(st), false) = (&stage, ord.direct) {
        let recv = recv.expect("the root has receive blocks");
        for r in 0..c.size as usize {
            copy(s, st.block(ord.at(l, r)), recv.block(r));
        }
        s.next_round();
    }
}

/// Two-level scatter of blocks of `b` bytes from `root`: the root sends each head its node's
/// run, each head scatters it on its node (binomial). `send` is the root's send blocks,
/// `recv` this rank's receive block (`None` at a root scattering in place).
pub fn scatter(
    c: &Ctx,
    s: &mut Schedule,
    l: &NodeLayout,
    send: Option<&Blocks>,
    recv: Option<&Span>,
    b: usize,
    root: i32,
) {
    let place = Rooted::new(c, l, root);
    let (h, node, is_head, rn, ord) = (
        &place.heads,
        &place.node,
        place.is_head,
        place.rn,
        &place.ord,
    );
    let len = node.len();
    let is_root = c.rank == root;
    // The root's blocks in node order: its send blocks themselves, or a packed copy.
    let stage = is_root.then(|| {
        let send = send.expect("the root has send blocks");
        if ord.direct {
            send.clone()
        } else {
            let t = Blocks::tmp(s, c.size as usize, b);
            for r in 0..c.size as usize {
                copy(s, send.block(r), t.block(ord.at(l, r)));
            }
            s.next_round();
            t
        }
    });
    let nodebuf = place.nodebuf(s, stage.as_ref(), b);
    // 1. The root sends each head its node's run: on nodes of one size by the algorithm the
    //    table picks for the heads (as in `gather`), else one by one.
    if is_head && l.is_uniform() {
        let algo = gather::choose(
            Coll::Scatter.env_var(),
            h.len() as i32,
            b * len,
            heads_shape(h),
        );
        let runs = stage.as_ref().map(|st| node_runs(st, len));
        let into = match &nodebuf {
            Some(nb) => Some(nb.run(0, len)),
            None => recv.cloned(),
        };
        let into = if is_root { None } else { into };
        across(c, s, h, |sc, s| match algo {
            gather::Algo::Binomial => {
                scatter::binomial(sc, s, runs.as_ref(), into.as_ref(), b * len, rn as i32)
            }
            gather::Algo::Linear => {
                let spans: Vec<Span> = match &runs {
                    Some(r) => (0..sc.size as usize).map(|k| r.block(k)).collect(),
                    None => Vec::new(),
                };
                scatter::linear(sc, s, &spans, into.as_ref(), rn as i32)
            }
        });
    } else if is_head {
        across(c, s, h, |_, s| match &stage {
            Some(st) => {
                for k in (0..l.nodes()).filter(|&k| k != rn) {
                    s.send(k as i32, ord.run(st, k));
                }
            }
            None => {
                let into = match &nodebuf {
                    Some(nb) => nb.run(0, len),
                    None => recv.cloned().expect("a non-root has a receive block"),
                };
                s.recv(rn as i32, into);
            }
        });
    }
    // 2. Each head scatters on its node.
    if len > 1 {
        let hp = head_pos(l, h, c.rank);
        on(c, s, node, |sc, s| {
            scatter::binomial(sc, s, nodebuf.as_ref(), recv, b, hp)
        });
    } else if let (Some(nb), Some(r)) = (&nodebuf, recv) {
        copy(s, nb.block(0), r.clone());
        s.next_round();
    }
}
