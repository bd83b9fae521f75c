//! Gather algorithms: a binomial tree for small blocks (inner nodes collect their subtree in
//! a temporary and forward it in one message) and a linear one for large blocks (every rank
//! sends straight into the root's buffer); Gatherv is linear.

use super::blocks::{copy, Blocks};
use crate::coll::sched::{Schedule, Span};
use crate::coll::tuning::{self, Coll, Query, Shape};
use crate::coll::Ctx;

/// Gather algorithms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algo {
    /// Binomial tree.
    Binomial,
    /// Everyone sends to the root.
    Linear,
}

/// Picks the algorithm for blocks of `packed` bytes on `p` ranks from the tuning table
/// ([`crate::coll::tuning`]) for the collective whose override variable is `var`
/// (`HYMPI_GATHER_ALGORITHM` or `HYMPI_SCATTER_ALGORITHM`, `=binomial|linear`).
pub fn choose(var: &str, p: i32, packed: usize, shape: Shape) -> Algo {
    let coll = if var == Coll::Scatter.env_var() {
        Coll::Scatter
    } else {
        Coll::Gather
    };
    let q = Query::new(p, packed, packed.saturating_mul(p.max(0) as usize)).on(shape);
    match tuning::select(coll, &q).name {
        "binomial" => Algo::Binomial,
        _ => Algo::Linear,
    }
}

/// The subtree of relative rank `rel` in a binomial tree over `p` ranks: its size and, for a
/// non-root, the parent (relative).
pub fn subtree(rel: i32, p: i32) -> (i32, Option<i32>) {
    let mut mask = 1;
    while mask < p {
        if rel & mask != 0 {
            return (mask.min(p - rel), Some(rel - mask));
        }
        mask <<= 1;
    }
    (p - rel, None)
}

/// Children of relative rank `rel` with subtree size `size`: (relative child, its subtree
/// size), smallest first.
pub fn children(rel: i32, size: i32, p: i32) -> Vec<(i32, i32)> {
    let mut v = Vec::new();
    let mut mask = 1;
    while mask < size {
        let child = rel + mask;
        if child < p {
            v.push((child, mask.min(p - child)));
        }
        mask <<= 1;
    }
    v
}

/// Binomial-tree gather of blocks of `packed` bytes to `root`. `send` is this rank's block
/// (`None` at a root gathering in place); `recv` the root's receive blocks.
pub fn binomial(
    c: &Ctx,
    s: &mut Schedule,
    send: Option<&Span>,
    recv: Option<&Blocks>,
    packed: usize,
    root: i32,
) {
    let p = c.size;
    let rel = (c.rank - root).rem_euclid(p);
    let (size, parent) = subtree(rel, p);
    let kids = children(rel, size, p);
    match parent {
        None => {
            let recv = recv.expect("the root has receive blocks");
            for (child, csz) in kids {
                let abs = ((child + root) % p) as usize;
                let n = csz as usize;
                if abs + n <= p as usize {
                    s.recv(child_abs(child, root, p), recv.run(abs, n));
                } else {
                    // The subtree wraps past the last rank: land it in a temporary.
                    let t = Blocks::tmp(s, n, packed);
                    s.recv(child_abs(child, root, p), t.run(0, n));
                    let first = p as usize - abs;
                    copy(s, t.run(0, first), recv.run(abs, first));
                    copy(s, t.run(first, n - first), recv.run(0, n - first));
                }
            }
            if let Some(send) = send {
                copy(s, send.clone(), recv.block(root as usize));
            }
            s.next_round();
        }
        Some(parent) => {
            let send = send.expect("a non-root has a send block");
            let to = child_abs(parent, root, p);
            if kids.is_empty() {
                s.send(to, send.clone());
            } else {
                let t = Blocks::tmp(s, size as usize, packed);
                for (child, csz) in kids {
                    s.recv(
                        child_abs(child, root, p),
                        t.run((child - rel) as usize, csz as usize),
                    );
                }
                copy(s, send.clone(), t.block(0));
                s.next_round();
                s.send(to, t.run(0, size as usize));
            }
            s.next_round();
        }
    }
}

fn child_abs(rel: i32, root: i32, p: i32) -> i32 {
    (rel + root) % p
}

/// Linear gather: every rank sends its block to the root, which receives each into place.
/// `recv[r]` is the root's receive span for rank `r` (the same-size blocks of Gather or the
/// per-rank blocks of Gatherv); `send` is `None` at a root gathering in place.
pub fn linear(c: &Ctx, s: &mut Schedule, send: Option<&Span>, recv: &[Span], root: i32) {
    if c.rank == root {
        for (r, span) in recv.iter().enumerate() {
            if r as i32 != root && span.bytes > 0 {
                s.recv(r as i32, span.clone());
            }
        }
        if let Some(send) = send {
            copy(s, send.clone(), recv[root as usize].clone());
        }
    } else if let Some(send) = send {
        if send.bytes > 0 {
            s.send(root, send.clone());
        }
    }
    s.next_round();
}
