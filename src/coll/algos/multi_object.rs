//! PiP-MColl's multi-object algorithms (Ouyang's thesis, chapter 4; digest in the project's
//! papers) on layouts whose nodes all hold the same number P of ranks: every rank of a node
//! is a network *object*, so a node drives P transfers between nodes at once where a
//! two-level algorithm (`hier`) drives one through its head. Without a shared address space,
//! what PiP reads from the leader's buffer travels here as on-node messages (shared memory
//! or CMA), in rounds of their own between the network rounds.
//!
//! - [`scatter_tree`] (`multi_object_tree`): the (P+1)-ary tree. The node holding a group of
//!   nodes' blocks splits it into P+1 subgroups, hands P of them to its local ranks, and those
//!   send them at once to the first node of each subgroup: `ceil(log_{P+1} N)` network rounds
//!   (Eq. 4.2's latency term) where a binomial tree over the heads takes `ceil(log2 N)`.
//! - [`allgather_bruck`] (`multi_object_bruck`): Bruck with base P+1. After the node's own
//!   blocks are shared, local rank k exchanges with the nodes `(k+1)·S` away, S the node runs
//!   held so far, and the node's ranks then share what they got: S grows P+1-fold per
//!   network round; any N (the last round sends only the runs still missing).
//! - [`allreduce_bruck`] (`multi_object_bruck`, commutative ops): the node's partial result
//!   (an allreduce on the node) is a one-block run, gathered from every node by the same
//!   Bruck exchange; each rank then combines the N partials in node order. The thesis
//!   combines along the way and repairs a non-power N with remainder partials; gathering the
//!   partials costs `(N-1)` vectors of traffic instead of `log` but needs no remainder, and
//!   every rank combines the same operands in the same order (identical results everywhere).
//! - [`allgather_ring`] (`multi_object_ring`): one ring per local rank (large messages).

use super::blocks::{copy, Blocks};
use super::hier::{across_objects, node_runs, on, NodeOrder};
use super::reduce::Elems;
use super::{allreduce, scatter};
use crate::coll::sched::{Schedule, Span};
use crate::coll::Ctx;
use crate::core::objects::nodes::NodeLayout;
use std::sync::Arc;

/// Where this rank sits: the node count, its node `n`, its local rank `k`, its node's ranks.
struct Here {
    nn: usize,
    n: usize,
    k: usize,
    node: Arc<[i32]>,
}

impl Here {
    fn new(c: &Ctx, l: &NodeLayout) -> Here {
        let me = c.rank as usize;
        Here {
            nn: l.nodes(),
            n: l.node_of[me] as usize,
            k: l.local_of[me] as usize,
            node: l.node_members(c.rank).clone(),
        }
    }
}

/// The (P+1)-ary multi-object scatter of blocks of `b` bytes from `root` (nodes of one
/// size). `send` is the root's send blocks, `recv` this rank's block (`None` at a root
/// scattering in place).
///
/// Nodes are numbered from the root's (virtual node `v` is node `(root's node + v) mod N`).
/// The node holding the blocks of virtual nodes `base..base+g` (its *holder* rank has them)
/// cuts them into P+1 subgroups of `ceil(g/(P+1))` nodes; subgroup 0 stays, subgroup j goes
/// from local rank `(holder + j - 1) mod P` to the same local rank of the subgroup's first node,
/// which becomes that node's holder. The holder hands the other senders their subgroups in
/// an on-node round first (it sends its own subgroup meanwhile). At the end each holder
/// scatters its node's blocks on its node.
#[allow(clippy::too_many_arguments)]
pub fn scatter_tree(
    c: &Ctx,
    s: &mut Schedule,
    l: &NodeLayout,
    send: Option<&Blocks>,
    recv: Option<&Span>,
    b: usize,
    root: i32,
) {
    let Here { nn, n, k, node } = Here::new(c, l);
    let ppn = node.len();
    let rn = l.node_of[root as usize] as usize;
    let v = (n + nn - rn) % nn;
    let real = |v: usize| (rn + v) % nn;
    // Subgroup j (1..=P) leaves through local rank `holder + j - 1`: the holder sends the
    // first itself, so a group of fewer than P+1 subgroups needs fewer hand-offs.
    let sender = |holder: usize, j: usize| (holder + j - 1) % ppn;
    // The blocks this rank holds for the group of its node, in virtual node order.
    let mut held: Option<Blocks> = None;
    if c.rank == root {
        let send = send.expect("the root has send blocks");
        let ord = NodeOrder::new(l);
        held = Some(if ord.direct && rn == 0 {
            send.clone()
        } else {
            let t = Blocks::tmp(s, nn * ppn, b);
            for w in 0..nn {
                let members = &l.members[real(w)];
                if ord.direct {
                    copy(s, ord.run(send, real(w)), t.run(w * ppn, ppn));
                } else {
                    for (j, &r) in members.iter().enumerate() {
                        copy(s, send.block(r as usize), t.block(w * ppn + j));
                    }
                }
            }
            s.next_round();
            t
        });
    }
    let mut holder = l.local_of[root as usize] as usize;
    let (mut base, mut g) = (0usize, nn);
    while g > 1 {
        let sz = g.div_ceil(ppn + 1);
        if v == base {
            // This node holds `base..base+g`: subgroups 1.. leave, each through one rank.
            let subs: Vec<(usize, usize, usize)> = (1..=ppn)
                .map(|j| (j, base + j * sz))
                .filter(|&(_, f)| f < base + g)
                .map(|(j, f)| (sender(holder, j), f - base, sz.min(base + g - f)))
                .collect();
            let mine = subs.iter().find(|x| x.0 == k).copied();
            let dest = |f: usize| l.members[real(base + f)][k];
            if k == holder {
                let h = held.as_ref().expect("the holder has the group's blocks");
                for &(sender, f, len) in &subs {
                    if sender != holder {
                        s.send(node[sender], h.run(f * ppn, len * ppn));
                    }
                }
                if let Some((_, f, len)) = mine {
                    s.send(dest(f), h.run(f * ppn, len * ppn));
                }
                s.next_round();
            } else if let Some((_, f, len)) = mine {
                let t = Blocks::tmp(s, len * ppn, b);
                s.recv(node[holder], t.run(0, len * ppn));
                s.next_round();
                s.send(dest(f), t.run(0, len * ppn));
                s.next_round();
            }
            g = sz;
        } else {
            let j = (v - base) / sz;
            let f = base + j * sz;
            let len = sz.min(base + g - f);
            if j > 0 {
                let sender = sender(holder, j);
                if v == f && k == sender {
                    let t = Blocks::tmp(s, len * ppn, b);
                    s.recv(l.members[real(base)][sender], t.run(0, len * ppn));
                    s.next_round();
                    held = Some(t);
                }
                holder = sender;
            }
            base = f;
            g = len;
        }
    }
    // This node's blocks are the first P of its holder's: scatter them on the node.
    let hp = holder as i32;
    on(c, s, &node, |sc, s| {
        scatter::binomial(sc, s, held.as_ref(), recv, b, hp)
    });
}

/// The Bruck exchange of node runs with base P+1 (nodes of one size P): `runs` holds one run
/// per node, rotated so that run `i` is node `(this node + i) mod N`'s, and run 0 is filled
/// on every rank of the node. Afterwards every rank has all N runs. Each network round, local
/// rank k sends runs `0..cnt` to node `n - (k+1)·S` and receives runs `(k+1)·S..` from node
/// `n + (k+1)·S` (`S` runs held so far, `cnt` those still missing there), then the node's
/// ranks give each other what they received.
fn bruck_runs(c: &Ctx, s: &mut Schedule, l: &NodeLayout, runs: &Blocks) {
    let Here { nn, n, k, node } = Here::new(c, l);
    let ppn = node.len();
    // What local rank `j` receives in the round where `held` runs are held.
    let part = |j: usize, held: usize| {
        let off = (j + 1) * held;
        (off < nn).then(|| (off, held.min(nn - off)))
    };
    let mut held = 1;
    while held < nn {
        let mine = part(k, held);
        across_objects(c, s, l, k, |_, s| {
            if let Some((off, cnt)) = mine {
                s.send(((n + nn - off) % nn) as i32, runs.run(0, cnt));
                s.recv(((n + off) % nn) as i32, runs.run(off, cnt));
            }
        });
        if ppn > 1 {
            on(c, s, &node, |_, s| {
                for j in (0..ppn).filter(|&j| j != k) {
                    if let Some((off, cnt)) = mine {
                        s.send(j as i32, runs.run(off, cnt));
                    }
                    if let Some((off, cnt)) = part(j, held) {
                        s.recv(j as i32, runs.run(off, cnt));
                    }
                }
            });
        }
        held = (held * (ppn + 1)).min(nn);
    }
}

/// The multi-object Bruck allgather into the receive blocks `recv` (nodes of one size);
/// `own` is this rank's block when it is not in place already.
pub fn allgather_bruck(
    c: &Ctx,
    s: &mut Schedule,
    l: &NodeLayout,
    recv: &Blocks,
    own: Option<&Span>,
) {
    let b = recv.packed;
    if b == 0 {
        return;
    }
    let Here { nn, n, k, node } = Here::new(c, l);
    let ppn = node.len();
    let stage = Blocks::tmp(s, nn * ppn, b);
    let runs = node_runs(&stage, ppn);
    // 1. The node's blocks, in local order, in run 0 of every rank.
    let mine = own.cloned().unwrap_or_else(|| recv.block(c.rank as usize));
    copy(s, mine.clone(), stage.block(k));
    on(c, s, &node, |_, s| {
        for j in (0..ppn).filter(|&j| j != k) {
            s.send(j as i32, mine.clone());
            s.recv(j as i32, stage.block(j));
        }
    });
    // 2. The runs of the other nodes.
    bruck_runs(c, s, l, &runs);
    // 3. Run i is node (n + i)'s: into rank order.
    let ord = NodeOrder::new(l);
    for i in 0..nn {
        let at = (n + i) % nn;
        if ord.direct {
            copy(s, runs.block(i), ord.run(recv, at));
        } else {
            for (j, &r) in l.members[at].iter().enumerate() {
                copy(s, stage.block(i * ppn + j), recv.block(r as usize));
            }
        }
    }
    s.next_round();
}

/// The multi-object Bruck allreduce of `e` (a commutative op) from base `send` (equal to
/// `recv` for `MPI_IN_PLACE`) into base `recv` (nodes of one size).
pub fn allreduce_bruck(
    c: &Ctx,
    s: &mut Schedule,
    l: &NodeLayout,
    e: &Elems,
    send: usize,
    recv: usize,
) {
    let Here { nn, n, node, .. } = Here::new(c, l);
    // One run per node: a temporary of the elements' footprint each (moved as raw bytes
    // between temporaries of the same layout).
    let tb = e.tmp_bytes.max(1);
    let stage = s.tmp(nn * tb);
    let base_of = |i: usize| (stage + i * tb).wrapping_add_signed(e.tmp_base);
    let runs = Blocks::packed_at(stage, tb);
    // 1. The node's partial result in run 0 of every rank.
    on(c, s, &node, |sc, s| {
        allreduce::allreduce(sc, s, e, send, base_of(0))
    });
    // 2. Every node's partial.
    bruck_runs(c, s, l, &runs);
    // 3. Combined in node order (node 0's first), the same on every rank.
    let at = |node: usize| base_of((node + nn - n) % nn);
    e.copy(s, at(0), recv);
    for m in 1..nn {
        e.reduce(s, at(m), recv);
    }
    s.next_round();
}

/// Multi-object ring allgather (PiP-MColl's large-message allgather, without a shared
/// address space) on a layout whose nodes all hold the same number P of ranks: the k-th
/// ranks of the nodes form ring k, so P rings carry the blocks between nodes at once, and
/// each block a rank gets from its ring it passes to the other ranks of its node in the next
/// round, overlapped with the next ring step. Every block lands straight in its place in
/// the receive blocks. N rounds for N nodes; `own` is this rank's block when not in place.
pub fn allgather_ring(
    c: &Ctx,
    s: &mut Schedule,
    l: &NodeLayout,
    recv: &Blocks,
    own: Option<&Span>,
) {
    let Here {
        nn: n_nodes,
        n,
        k,
        node,
    } = Here::new(c, l);
    let me = c.rank as usize;
    let at = |node: usize, local: usize| l.members[node % n_nodes][local] as usize;
    // Ring k: the k-th ranks of the nodes, in node order (nodes of one size).
    let ring = l.object_group(k);
    let next = ring[(n + 1) % n_nodes];
    let prev = ring[(n + n_nodes - 1) % n_nodes];
    for step in 0..n_nodes {
        // The block this rank got last round (its own in round 0): from node n - step.
        let src = (n + n_nodes - step) % n_nodes;
        let out = match own {
            Some(o) if step == 0 => o.clone(),
            _ => recv.block(at(src, k)),
        };
        if step + 1 < n_nodes {
            s.send(next, out.clone());
            s.recv(prev, recv.block(at(src + n_nodes - 1, k)));
        }
        for (j, &peer) in node.iter().enumerate() {
            if j != k {
                s.send(peer, out.clone());
                s.recv(peer, recv.block(at(src, j)));
            }
        }
        if step == 0 {
            if let Some(o) = own {
                copy(s, o.clone(), recv.block(me));
            }
        }
        s.next_round();
    }
}
