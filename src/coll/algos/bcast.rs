//! Broadcast algorithms.

use crate::coll::sched::{Schedule, Span};
use crate::coll::tuning::{self, Coll, Query, Shape};
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

/// Broadcast algorithms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algo {
    /// K-nomial tree with this radix.
    Knomial(i32),
    /// Scatter + ring allgather (van de Geijn).
    ScatterAllgather,
    /// Scatter + recursive-multiplying allgather with this radix.
    RecursiveMultiplying(i32),
    /// Scatter + k-ring allgather with this group size.
    Kring(i32),
}

/// Picks the algorithm for `bytes` of data on `p` ranks from the tuning table
/// ([`crate::coll::tuning`]; `HYMPI_BCAST_ALGORITHM=knomial[:k=N]|scatter_allgather|
/// recursive_multiplying[:k=N]|kring[:k=N]` overrides). The scatter-based algorithms need
/// the data as one block of memory (`contiguous`; [`run`] packs it otherwise) and fall back
/// to the binomial tree without it.
pub fn choose(p: i32, bytes: usize, contiguous: bool, shape: Shape) -> Algo {
    let ch = tuning::select(Coll::Bcast, &Query::new(p, bytes, bytes).on(shape));
    let k = ch.k as i32;
    let a = match ch.name {
        "scatter_allgather" => Algo::ScatterAllgather,
        "recursive_multiplying" => Algo::RecursiveMultiplying(k),
        "kring" => Algo::Kring(k),
        _ => Algo::Knomial(k.max(2)),
    };
    match a {
        Algo::Knomial(_) => a,
        _ if !contiguous => Algo::Knomial(2),
        _ => a,
    }
}

/// Broadcasts `data` from `root` with the algorithm [`choose`] picks. The choice depends
/// only on what every rank knows alike (the type signature's size), not on this rank's
/// layout: the scatter-based algorithms cut the packed data, so a buffer that is not one
/// contiguous block goes through a packed temporary.
pub fn run(c: &Ctx, s: &mut Schedule, data: &Span, root: i32) {
    if c.size < 2 || data.bytes == 0 {
        return;
    }
    let algo = choose(c.size, data.bytes, true, c.shape);
    if let Algo::Knomial(k) = algo {
        knomial(c, s, data, root, k);
        return;
    }
    if data.is_contiguous() {
        scatter_then(c, s, data, root, algo);
        return;
    }
    let packed = Span::bytes(s.tmp(data.bytes), data.bytes);
    if c.rank == root {
        s.copy(data.clone(), packed.clone());
        s.next_round();
    }
    scatter_then(c, s, &packed, root, algo);
    if c.rank != root {
        s.copy(packed, data.clone());
    }
}

fn scatter_then(c: &Ctx, s: &mut Schedule, data: &Span, root: i32, algo: Algo) {
    match algo {
        Algo::RecursiveMultiplying(k) => scatter_recursive_multiplying(c, s, data, root, k),
        Algo::Kring(k) => scatter_kring(c, s, data, root, k),
        _ => scatter_allgather(c, s, data, root),
    }
}

/// The pieces of a contiguous buffer of `n` bytes at `addr` cut for a scatter over `p`
/// ranks: `piece(from, to)` is relative ranks `from..to`'s bytes (the last pieces may be
/// short or empty).
fn pieces(addr: usize, n: usize, p: i32) -> impl Fn(usize, usize) -> Span {
    let chunk = n.div_ceil(p as usize);
    move |from, to| {
        let lo = (from * chunk).min(n);
        let hi = (to * chunk).min(n);
        Span::bytes(addr + lo, hi - lo)
    }
}

/// Binomial scatter of the pieces of `data` over relative ranks (rank `root` is relative
/// rank 0): each rank ends with piece `rel` (and its subtree's pieces on the way).
fn scatter(c: &Ctx, s: &mut Schedule, data: &Span, root: i32) {
    let p = c.size;
    let piece = pieces(data.addr, data.bytes, p);
    let rel = (c.rank - root).rem_euclid(p);
    let abs = |r: i32| (r + root) % p;
    let (size, parent) = super::gather::subtree(rel, p);
    if let Some(parent) = parent {
        let mine = piece(rel as usize, (rel + size) as usize);
        if mine.bytes > 0 {
            s.recv(abs(parent), mine);
        }
        s.next_round();
    }
    for (child, csz) in super::gather::children(rel, size, p).into_iter().rev() {
        let theirs = piece(child as usize, (child + csz) as usize);
        if theirs.bytes > 0 {
            s.send(abs(child), theirs);
        }
    }
    s.next_round();
}

/// Scatter + recursive-multiplying allgather broadcast of a contiguous buffer, radix `k`
/// (the generalized-radix analogue of scatter + recursive doubling): a binomial scatter of
/// p pieces over relative ranks, then [`super::radix::recursive_multiplying`] on them.
pub fn scatter_recursive_multiplying(c: &Ctx, s: &mut Schedule, data: &Span, root: i32, k: i32) {
    scatter(c, s, data, root);
    let p = c.size;
    let piece = pieces(data.addr, data.bytes, p);
    let abs = |r: usize| (r as i32 + root) % p;
    let rel = (c.rank - root).rem_euclid(p) as usize;
    let run = |lo: usize, n: usize| piece(lo, lo + n);
    super::radix::recursive_multiplying(s, p as usize, rel, k as usize, &abs, &run, None);
}

/// Scatter + k-ring allgather broadcast of a contiguous buffer, group size `k` (k = 1 is
/// the ring of [`scatter_allgather`]): a binomial scatter of p pieces over relative ranks,
/// then [`super::radix::kring`] on them.
pub fn scatter_kring(c: &Ctx, s: &mut Schedule, data: &Span, root: i32, k: i32) {
    scatter(c, s, data, root);
    let p = c.size;
    let piece = pieces(data.addr, data.bytes, p);
    let abs = |r: usize| (r as i32 + root) % p;
    let rel = (c.rank - root).rem_euclid(p) as usize;
    let run = |lo: usize, n: usize| piece(lo, lo + n);
    super::radix::kring(s, p as usize, rel, k.max(1) as usize, &abs, &run, None);
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
