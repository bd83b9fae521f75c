//! Alltoall algorithms.
//!
//! - pairwise exchange: p-1 rounds, one partner each (`rank ^ k` for power-of-two sizes,
//!   else send to `rank + k` and receive from `rank - k`); for large blocks, and the default
//!   for Alltoallv/Alltoallw.
//! - scattered: all sends and receives posted at once (in batches), for medium blocks.
//! - Bruck: log2 p rounds over a rotated packed temporary, each moving the blocks whose index
//!   has bit k set; for small blocks on many ranks.

use super::blocks::{copy, copy_run, Blocks};
use crate::coll::sched::{Schedule, Span};
use crate::coll::tuning::{self, Coll, Query, Shape};
use crate::coll::Ctx;

/// Peers per batch of the scattered algorithm.
pub const SCATTERED_BATCH: i32 = 32;

/// Alltoall algorithms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algo {
    /// Pairwise exchange.
    Pairwise,
    /// Post everything at once.
    Scattered,
    /// Bruck (equal blocks only).
    Bruck,
}

/// Picks the algorithm for blocks of `packed` bytes on `p` ranks (`equal` when all blocks
/// have one size, as in Alltoall) from the tuning table ([`crate::coll::tuning`];
/// `HYMPI_ALLTOALL_ALGORITHM=pairwise|scattered|bruck` overrides). Bruck only applies to
/// equal blocks; Alltoallv/w then use the scattered algorithm.
pub fn choose(p: i32, packed: usize, equal: bool, shape: Shape) -> Algo {
    let q = Query::new(p, packed, packed.saturating_mul(p.max(0) as usize)).on(shape);
    match tuning::select(Coll::Alltoall, &q).name {
        "pairwise" => Algo::Pairwise,
        "bruck" if equal => Algo::Bruck,
        _ => Algo::Scattered,
    }
}

/// Pairwise exchange over per-rank spans: `send[r]` goes to rank r, `recv[r]` comes from it.
/// Empty spans are skipped (both sides agree on them by the type-signature rule).
pub fn pairwise(c: &Ctx, s: &mut Schedule, send: &[Span], recv: &[Span]) {
    let p = c.size;
    let me = c.rank as usize;
    copy(s, send[me].clone(), recv[me].clone());
    let pow2 = p & (p - 1) == 0;
    for k in 1..p {
        let (to, from) = if pow2 {
            (c.rank ^ k, c.rank ^ k)
        } else {
            ((c.rank + k) % p, (c.rank - k).rem_euclid(p))
        };
        if send[to as usize].bytes > 0 {
            s.send(to, send[to as usize].clone());
        }
        if recv[from as usize].bytes > 0 {
            s.recv(from, recv[from as usize].clone());
        }
        s.next_round();
    }
    s.next_round();
}

/// Scattered: batches of sends and receives to and from `SCATTERED_BATCH` peers at a time,
/// ordered by distance so that not every rank targets the same peer first.
pub fn scattered(c: &Ctx, s: &mut Schedule, send: &[Span], recv: &[Span]) {
    let p = c.size;
    let me = c.rank as usize;
    copy(s, send[me].clone(), recv[me].clone());
    let mut k = 1;
    while k < p {
        let end = (k + SCATTERED_BATCH).min(p);
        for d in k..end {
            let from = (c.rank - d).rem_euclid(p) as usize;
            if recv[from].bytes > 0 {
                s.recv(from as i32, recv[from].clone());
            }
        }
        for d in k..end {
            let to = (c.rank + d) % p;
            if send[to as usize].bytes > 0 {
                s.send(to, send[to as usize].clone());
            }
        }
        s.next_round();
        k = end;
    }
    s.next_round();
}

/// Bruck alltoall over equal blocks.
pub fn bruck(c: &Ctx, s: &mut Schedule, send: &Blocks, recv: &Blocks) {
    let p = c.size as usize;
    let rank = c.rank as usize;
    let b = recv.packed;
    if b == 0 {
        return;
    }
    // t[i] = the block for rank (rank + i) mod p.
    let t = Blocks::tmp(s, p, b);
    copy_run(s, send, rank, &t, 0, p - rank);
    copy_run(s, send, 0, &t, p - rank, rank);
    let most = p / 2 + 1;
    let pk = Blocks::tmp(s, most, b);
    let rk = Blocks::tmp(s, most, b);
    let mut pof2 = 1;
    let picked = |pof2: usize| (0..p).filter(move |i| i & pof2 != 0);
    for (j, i) in picked(pof2).enumerate() {
        copy_run(s, &t, i, &pk, j, 1);
    }
    s.next_round();
    while pof2 < p {
        let n = picked(pof2).count();
        s.send(((rank + pof2) % p) as i32, pk.run(0, n));
        s.recv(((rank + p - pof2) % p) as i32, rk.run(0, n));
        for (j, i) in picked(pof2).enumerate() {
            copy_run(s, &rk, j, &t, i, 1);
        }
        pof2 <<= 1;
        if pof2 < p {
            for (j, i) in picked(pof2).enumerate() {
                copy_run(s, &t, i, &pk, j, 1);
            }
        }
        s.next_round();
    }
    // t[i] now holds the block from rank (rank - i) mod p.
    for src in 0..p {
        copy_run(s, &t, (rank + p - src) % p, recv, src, 1);
    }
    s.next_round();
}
