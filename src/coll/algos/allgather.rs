//! Allgather algorithms. Every one starts with this rank's block already in its place in the
//! receive blocks (the caller copies it there, or it is there in place).
//!
//! - ring: p-1 rounds, each passes one block to the right neighbour; bandwidth-optimal, for
//!   large blocks and the only Allgatherv algorithm (blocks of any sizes).
//! - recursive doubling (power-of-two sizes): log2 p rounds, the exchanged run of blocks
//!   doubles each round, moved straight between the receive buffers.
//! - Bruck (any size): log2 p rounds over a rotated temporary, then one rotation back.
//! - k-nomial (radix k): k-nomial gather to rank 0, then k-nomial broadcast of the result.
//! - recursive multiplying (radix k, any size): [`super::radix::recursive_multiplying`];
//!   k = 2 is recursive doubling, with the fold of the classic algorithm for other sizes.
//! - k-ring (group size k): [`super::radix::kring`]; k = 1 is the ring.

use super::blocks::{copy, copy_run, Blocks};
use crate::coll::sched::{Schedule, Span};
use crate::coll::tuning::{self, Coll, Query, Shape};
use crate::coll::Ctx;

/// Allgather algorithms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algo {
    /// Ring.
    Ring,
    /// Recursive doubling (power-of-two sizes; others fall back to Bruck).
    RecursiveDoubling,
    /// Bruck.
    Bruck,
    /// K-nomial gather + k-nomial broadcast with this radix.
    Knomial(i32),
    /// Recursive multiplying with this radix.
    RecursiveMultiplying(i32),
    /// K-ring with this group size.
    Kring(i32),
}

/// Picks the algorithm for blocks of `packed` bytes on `p` ranks from the tuning table
/// ([`crate::coll::tuning`]; `HYMPI_ALLGATHER_ALGORITHM=ring|recursive_doubling|bruck|
/// knomial[:k=N]|recursive_multiplying[:k=N]|kring[:k=N]` overrides).
pub fn choose(p: i32, packed: usize, shape: Shape) -> Algo {
    let q = Query::new(p, packed, packed.saturating_mul(p.max(0) as usize)).on(shape);
    let ch = tuning::select(Coll::Allgather, &q);
    let k = ch.k as i32;
    match ch.name {
        "recursive_doubling" => Algo::RecursiveDoubling,
        "bruck" => Algo::Bruck,
        "knomial" => Algo::Knomial(k),
        "recursive_multiplying" => Algo::RecursiveMultiplying(k),
        "kring" => Algo::Kring(k),
        _ => Algo::Ring,
    }
}

/// Runs `algo` on the receive blocks `recv`. `own` is this rank's send block when it is
/// not yet in place: it is copied into its receive block during the first round (the first
/// round's messages go out of `own` itself, so no round is spent on the copy).
pub fn run(c: &Ctx, s: &mut Schedule, algo: Algo, recv: &Blocks, own: Option<&Span>) {
    let me = c.rank as usize;
    let place = |s: &mut Schedule| {
        if let Some(o) = own {
            copy(s, o.clone(), recv.block(me));
        }
    };
    if c.size < 2 || recv.packed == 0 {
        place(s);
        s.next_round();
        return;
    }
    match algo {
        Algo::Ring => {
            let spans: Vec<Span> = (0..c.size as usize).map(|i| recv.block(i)).collect();
            ring(c, s, &spans, own);
            // Round 0 sent `own`; its copy into place runs after round 0's traffic, before
            // round 1 forwards anything (round 1 never sends this rank's own block).
        }
        Algo::RecursiveDoubling if c.size & (c.size - 1) == 0 => {
            recursive_doubling(c, s, recv, own)
        }
        Algo::RecursiveMultiplying(k) => {
            let abs = |i: usize| i as i32;
            let run = |lo: usize, n: usize| recv.run(lo, n);
            let p = c.size as usize;
            super::radix::recursive_multiplying(s, p, me, k as usize, &abs, &run, own)
        }
        Algo::Kring(k) => {
            let abs = |i: usize| i as i32;
            let run = |lo: usize, n: usize| recv.run(lo, n);
            let (p, k) = (c.size as usize, k.max(1) as usize);
            super::radix::kring(s, p, me, k, &abs, &run, own)
        }
        Algo::RecursiveDoubling | Algo::Bruck | Algo::Knomial(_) => {
            if let Some(o) = own {
                copy(s, o.clone(), recv.block(me));
                s.next_round();
            }
            match algo {
                Algo::Knomial(k) => knomial(c, s, recv, k),
                _ => bruck(c, s, recv),
            }
        }
    }
}

/// K-nomial allgather, radix `k` (this rank's block in place): a k-nomial gather to rank 0
/// in which every subtree is a run of consecutive ranks received straight into the receive
/// blocks, then a k-nomial broadcast of all blocks from rank 0.
pub fn knomial(c: &Ctx, s: &mut Schedule, recv: &Blocks, k: i32) {
    let k = k.max(2);
    let p = c.size;
    let r = c.rank;
    let mut mask = 1;
    while mask < p {
        if r % (mask * k) != 0 {
            break;
        }
        for j in 1..k {
            let child = r + j * mask;
            if child < p {
                let n = mask.min(p - child);
                s.recv(child, recv.run(child as usize, n as usize));
            }
        }
        s.next_round();
        mask *= k;
    }
    if r != 0 {
        let n = mask.min(p - r);
        s.send(r - r % (mask * k), recv.run(r as usize, n as usize));
        s.next_round();
    }
    super::bcast::knomial(c, s, &recv.run(0, p as usize), 0, k);
}

/// Ring allgather over per-rank spans (also Allgatherv): in round k, send block `rank - k`
/// to the right neighbour and receive block `rank - k - 1` from the left one. Empty blocks
/// are skipped on both sides alike.
pub fn ring(c: &Ctx, s: &mut Schedule, blocks: &[Span], own: Option<&Span>) {
    let p = c.size;
    let right = (c.rank + 1) % p;
    let left = (c.rank - 1).rem_euclid(p);
    for k in 0..p - 1 {
        let out = (c.rank - k).rem_euclid(p) as usize;
        let inn = (c.rank - k - 1).rem_euclid(p) as usize;
        let from = match own {
            Some(o) if k == 0 => o.clone(),
            _ => blocks[out].clone(),
        };
        if from.bytes > 0 {
            s.send(right, from);
        }
        if blocks[inn].bytes > 0 {
            s.recv(left, blocks[inn].clone());
        }
        if k == 0 {
            if let Some(o) = own {
                copy(s, o.clone(), blocks[out].clone());
            }
        }
        s.next_round();
    }
    if p == 1 {
        if let Some(o) = own {
            copy(s, o.clone(), blocks[0].clone());
        }
    }
}

/// Recursive doubling (p a power of two): in round k, exchange the aligned run of 2^k
/// blocks this rank holds with partner `rank ^ 2^k`.
pub fn recursive_doubling(c: &Ctx, s: &mut Schedule, recv: &Blocks, own: Option<&Span>) {
    let p = c.size;
    let mut mask = 1;
    while mask < p {
        let partner = c.rank ^ mask;
        let mine = (c.rank & !(mask - 1)) as usize;
        let theirs = (partner & !(mask - 1)) as usize;
        match own {
            Some(o) if mask == 1 => {
                s.send(partner, o.clone());
                copy(s, o.clone(), recv.block(c.rank as usize));
            }
            _ => s.send(partner, recv.run(mine, mask as usize)),
        }
        s.recv(partner, recv.run(theirs, mask as usize));
        s.next_round();
        mask <<= 1;
    }
}

/// Bruck: a temporary holds blocks rotated so that position j is rank `rank + j`'s block; in
/// round k (distance 2^k) send the first min(2^k, p - 2^k) positions to `rank - 2^k` and
/// receive as many at position 2^k from `rank + 2^k`; finally rotate back into `recv`.
pub fn bruck(c: &Ctx, s: &mut Schedule, recv: &Blocks) {
    let p = c.size as usize;
    let rank = c.rank as usize;
    let t = Blocks::tmp(s, p, recv.packed);
    copy_run(s, recv, rank, &t, 0, 1);
    s.next_round();
    let mut dist = 1;
    while dist < p {
        let n = dist.min(p - dist);
        s.send(((rank + p - dist) % p) as i32, t.run(0, n));
        s.recv(((rank + dist) % p) as i32, t.run(dist, n));
        s.next_round();
        dist <<= 1;
    }
    // t[j] is block (rank + j) mod p: two runs back into place.
    copy_run(s, &t, 0, recv, rank, p - rank);
    copy_run(s, &t, p - rank, recv, 0, rank);
    s.next_round();
}
