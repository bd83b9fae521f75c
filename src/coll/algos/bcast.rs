//! Broadcast algorithms.

use crate::coll::sched::{Schedule, Span};
use crate::coll::Ctx;

/// K-nomial tree broadcast from `root` (k = 2 is the classic binomial tree): in each round a
/// rank that has the data sends it to up to k-1 children whose relative rank differs in one
/// base-k digit. `data` is the buffer on every rank.
pub fn knomial(c: &Ctx, s: &mut Schedule, data: &Span, root: i32, k: i32) {
    let k = k.max(2);
    let p = c.size;
    let rel = (c.rank - root).rem_euclid(p);
    // Find the round in which this rank receives: the lowest nonzero base-k digit of rel.
    let mut mask = 1;
    while mask < p {
        if rel % (mask * k) != 0 {
            let parent = rel - rel % (mask * k);
            s.recv((parent + root) % p, data.clone());
            s.next_round();
            break;
        }
        mask *= k;
    }
    // Then send to children at lower digit positions, largest first.
    mask /= k;
    while mask > 0 {
        for j in 1..k {
            let child = rel + j * mask;
            if child < p {
                s.send((child + root) % p, data.clone());
            }
        }
        s.next_round();
        mask /= k;
    }
}

/// Smallest message broadcast by scatter + allgather (larger than this on more than two ranks).
pub const SCATTER_ALLGATHER_MIN: usize = 256 * 1024;

/// Broadcast algorithms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algo {
    /// K-nomial tree with this radix.
    Knomial(i32),
    /// Scatter + ring allgather (van de Geijn).
    ScatterAllgather,
}

/// Picks the algorithm for `bytes` of data on `p` ranks (`contiguous`: the data is one block
/// of memory, which the scatter + allgather algorithm needs). The environment variable
/// `HYMPI_BCAST_ALGORITHM=knomial[:k=N]|scatter_allgather` overrides.
pub fn choose(p: i32, bytes: usize, contiguous: bool) -> Algo {
    let forced = super::blocks::env_choice("HYMPI_BCAST_ALGORITHM").and_then(|v| {
        let v = v.trim();
        if v == "scatter_allgather" {
            Some(Algo::ScatterAllgather)
        } else if let Some(rest) = v.strip_prefix("knomial") {
            let k = rest
                .strip_prefix(":k=")
                .and_then(|k| k.parse::<i32>().ok())
                .unwrap_or(2);
            Some(Algo::Knomial(k.max(2)))
        } else {
            None
        }
    });
    let a = forced.unwrap_or(if p > 2 && bytes >= SCATTER_ALLGATHER_MIN {
        Algo::ScatterAllgather
    } else {
        Algo::Knomial(2)
    });
    if a == Algo::ScatterAllgather && !contiguous {
        Algo::Knomial(2)
    } else {
        a
    }
}

/// Scatter + allgather broadcast (van de Geijn) of a contiguous buffer: the data is cut into
/// p chunks, chunk r going to relative rank r by a binomial scatter, then a ring allgather
/// over relative ranks completes every copy. Moves about 2x the data instead of log2 p x.
pub fn scatter_allgather(c: &Ctx, s: &mut Schedule, data: &Span, root: i32) {
    let p = c.size;
    let n = data.bytes;
    let chunk = n.div_ceil(p as usize);
    // Bytes [lo, hi) of relative chunks [from, to).
    let piece = |from: i32, to: i32| {
        let lo = (from as usize * chunk).min(n);
        let hi = (to as usize * chunk).min(n);
        Span::bytes(data.addr + lo, hi - lo)
    };
    let rel = (c.rank - root).rem_euclid(p);
    let abs = |r: i32| (r + root) % p;
    let (size, parent) = super::gather::subtree(rel, p);
    if let Some(parent) = parent {
        let mine = piece(rel, rel + size);
        if mine.bytes > 0 {
            s.recv(abs(parent), mine);
        }
        s.next_round();
    }
    for (child, csz) in super::gather::children(rel, size, p).into_iter().rev() {
        let theirs = piece(child, child + csz);
        if theirs.bytes > 0 {
            s.send(abs(child), theirs);
        }
    }
    s.next_round();
    let blocks: Vec<Span> = (0..p).map(|r| piece(r, r + 1)).collect();
    // Ring over relative ranks: the neighbours of relative rank `rel`.
    let right = abs((rel + 1) % p);
    let left = abs((rel - 1).rem_euclid(p));
    for k in 0..p - 1 {
        let out = &blocks[(rel - k).rem_euclid(p) as usize];
        let inn = &blocks[(rel - k - 1).rem_euclid(p) as usize];
        if out.bytes > 0 {
            s.send(right, out.clone());
        }
        if inn.bytes > 0 {
            s.recv(left, inn.clone());
        }
        s.next_round();
    }
}
