//! Allreduce algorithms and their selection.
//!
//! - recursive doubling: log2 p exchanges of the whole vector; the fewest rounds, best for
//!   small vectors; any op (operands combine in rank order).
//! - Rabenseifner: reduce-scatter by recursive halving, then allgather by recursive
//!   doubling; every rank reduces only its share, so large vectors cost ~2x the data moved
//!   and the reduction work is split across ranks. Commutative ops only.
//! - ring: reduce-scatter then allgather around a ring; bandwidth-optimal for any p,
//!   commutative ops only.
//! - k-nomial (radix k; k = 2 is the former "reduce + bcast"): k-nomial reduce to rank 0,
//!   then k-nomial broadcast; any op (the reduce keeps rank order).
//! - recursive multiplying (radix k; k = 2 is recursive doubling): in each round every rank
//!   exchanges its whole vector with k-1 peers and combines the k vectors in rank order; any
//!   op, because sizes that are not powers of k fold runs of consecutive ranks
//!   ([`super::radix::Fold`]) instead of pairing ranks across the communicator.
//!
//! - k-ring (group size k; k = 1 moves data as the ring): the time reversal of the k-ring
//!   allgather ([`super::radix::kring_plan`]) as reduce-scatter, then the k-ring allgather.
//!
//! Rabenseifner, the ring and the k-ring reorder operands, so they are never used for a non-commutative
//! op (nor for elements that cannot be split or fewer elements than ranks): a table or
//! override naming them falls back to recursive doubling there.
//!
//! Sizes that are not powers of two use the standard pre/post step: of the first `2 * rem`
//! ranks (`rem = p - 2^floor(log2 p)`) each even one hands its vector to its odd neighbour
//! and receives the result at the end.

use super::radix::Fold;
use super::reduce::{knomial, Acc, Elems};
use crate::coll::sched::Schedule;
use crate::coll::tuning::{self, Coll, Shape};
use crate::coll::Ctx;

/// The allreduce algorithms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algo {
    /// Recursive doubling.
    RecursiveDoubling,
    /// Reduce-scatter (recursive halving) + allgather (recursive doubling).
    Rabenseifner,
    /// Ring reduce-scatter + ring allgather.
    Ring,
    /// K-nomial reduce to rank 0, then k-nomial broadcast, with this radix.
    Knomial(i32),
    /// Recursive multiplying with this radix.
    RecursiveMultiplying(i32),
    /// K-ring reduce-scatter + k-ring allgather with this group size.
    Kring(i32),
}

/// The algorithm for the vector `e` on `p` ranks, from the tuning table
/// ([`crate::coll::tuning`]; `HYMPI_ALLREDUCE_ALGORITHM=recursive_doubling|rabenseifner|
/// ring|knomial[:k=N]|reduce_bcast|recursive_multiplying[:k=N]|kring[:k=N]` overrides). The
/// split algorithms (Rabenseifner, ring, k-ring) need a commutative op, elements that can be addressed in
/// ranges and at least one element per rank; without that they become recursive doubling.
pub fn choose(e: &Elems, p: i32, shape: Shape) -> Algo {
    let split_ok = e.reducer.commutative && e.splittable() && e.count >= p as usize;
    let ch = tuning::select(Coll::Allreduce, &e.query(p).on(shape));
    let k = ch.k as i32;
    match ch.name {
        "rabenseifner" if split_ok => Algo::Rabenseifner,
        "ring" if split_ok => Algo::Ring,
        "knomial" => Algo::Knomial(k),
        "recursive_multiplying" => Algo::RecursiveMultiplying(k),
        "kring" if split_ok => Algo::Kring(k),
        _ => Algo::RecursiveDoubling,
    }
}

/// Appends an allreduce of `e` from base `send` (equal to `recv` for `MPI_IN_PLACE`) into
/// base `recv` with the algorithm `choose` picks.
pub fn allreduce(c: &Ctx, s: &mut Schedule, e: &Elems, send: usize, recv: usize) {
    if c.size == 1 {
        e.copy(s, send, recv);
        s.next_round();
        return;
    }
    match choose(e, c.size, c.shape) {
        Algo::RecursiveDoubling => recursive_doubling(c, s, e, send, recv),
        Algo::Rabenseifner => rabenseifner(c, s, e, send, recv),
        Algo::Ring => ring(c, s, e, send, recv),
        Algo::Knomial(k) => {
            knomial(c, s, e, send, recv, 0, k);
            super::bcast::knomial(c, s, &e.span(recv), 0, k);
        }
        Algo::RecursiveMultiplying(k) => recursive_multiplying(c, s, e, send, recv, k),
        Algo::Kring(k) => kring(c, s, e, send, recv, k),
    }
}

/// Recursive multiplying, radix `k` (any op). Ranks fold into `pofk` chunks of consecutive
/// ranks (the largest power of k not above p; [`super::radix::Fold`]): members send their
/// vector to the chunk's first rank, which combines them in rank order. Then, for distance
/// d = 1, k, k², ... < pofk, each leader sends its partial result to the k-1 other leaders of
/// its group of `d * k` chunks and combines the k partial results (consecutive rank ranges)
/// in rank order. Leaders finally send the result to their members.
pub fn recursive_multiplying(
    c: &Ctx,
    s: &mut Schedule,
    e: &Elems,
    send: usize,
    recv: usize,
    k: i32,
) {
    let k = k.max(2) as usize;
    let me = c.rank as usize;
    let f = Fold::new(c.size as usize, k);
    let ch = f.chunk_of(me);
    let lead = f.start(ch);
    let csz = f.size(ch);
    if me != lead {
        s.send(lead as i32, e.span(send));
        s.next_round();
        s.recv(lead as i32, e.span(recv));
        s.next_round();
        return;
    }
    let mut acc = Acc::new(send, send == recv, vec![recv]);
    if csz > 1 {
        let mut ops = vec![acc.cur];
        for m in lead + 1..lead + csz {
            let b = acc.free(e, s, &ops);
            s.recv(m as i32, e.span(b));
            ops.push(b);
        }
        acc.combine(e, s, &ops);
        s.next_round();
    }
    let mut d = 1;
    while d < f.pofk {
        let mut ops = Vec::with_capacity(k);
        for pc in f.peers(ch, d, k) {
            if pc == ch {
                ops.push(acc.cur);
            } else {
                let peer = f.start(pc) as i32;
                let b = acc.free(e, s, &ops);
                s.send(peer, e.span(acc.cur));
                s.recv(peer, e.span(b));
                ops.push(b);
            }
        }
        acc.combine(e, s, &ops);
        s.next_round();
        d *= k;
    }
    acc.finish_in(e, s, recv);
    s.next_round();
    for m in lead + 1..lead + csz {
        s.send(m as i32, e.span(recv));
    }
    s.next_round();
}

/// The power-of-two group of the pre/post step: `(p2, rem, newrank)` with `newrank` None
/// for the ranks that sit out.
fn fold(rank: i32, p: i32) -> (i32, i32, Option<i32>) {
    let mut p2 = 1;
    while p2 * 2 <= p {
        p2 *= 2;
    }
    let rem = p - p2;
    let nr = if rank < 2 * rem {
        (rank % 2 == 1).then_some(rank / 2)
    } else {
        Some(rank - rem)
    };
    (p2, rem, nr)
}

fn real_rank(nr: i32, rem: i32) -> i32 {
    if nr < rem {
        nr * 2 + 1
    } else {
        nr + rem
    }
}

/// Pre-step: even ranks below `2 * rem` send their vector to the next rank, which absorbs it.
/// Returns false for the ranks that sit out (they then wait for the result).
fn pre(c: &Ctx, s: &mut Schedule, e: &Elems, acc: &mut Acc, rem: i32) -> bool {
    if c.rank >= 2 * rem {
        return true;
    }
    if c.rank % 2 == 0 {
        s.send(c.rank + 1, e.span(acc.cur));
        s.next_round();
        false
    } else {
        let b = acc.free(e, s, &[]);
        s.recv(c.rank - 1, e.span(b));
        acc.absorb(e, s, b, true);
        s.next_round();
        true
    }
}

/// Post-step: odd ranks below `2 * rem` send the result to the even rank before them.
fn post(c: &Ctx, s: &mut Schedule, e: &Elems, recv: usize, rem: i32) {
    if c.rank < 2 * rem {
        if c.rank % 2 == 1 {
            s.send(c.rank - 1, e.span(recv));
        } else {
            s.recv(c.rank + 1, e.span(recv));
        }
        s.next_round();
    }
}

/// Recursive doubling (any op).
pub fn recursive_doubling(c: &Ctx, s: &mut Schedule, e: &Elems, send: usize, recv: usize) {
    let (p2, rem, nr) = fold(c.rank, c.size);
    let mut acc = Acc::new(send, send == recv, vec![recv]);
    if pre(c, s, e, &mut acc, rem) {
        let nr = nr.expect("participating rank");
        let mut mask = 1;
        while mask < p2 {
            let pn = nr ^ mask;
            let partner = real_rank(pn, rem);
            let b = acc.free(e, s, &[]);
            s.send(partner, e.span(acc.cur));
            s.recv(partner, e.span(b));
            acc.absorb(e, s, b, pn < nr);
            s.next_round();
            mask *= 2;
        }
        acc.finish_in(e, s, recv);
        s.next_round();
    }
    post(c, s, e, recv, rem);
}

/// Element counts and offsets of `n` blocks of `count` elements.
fn blocks(count: usize, n: usize) -> (Vec<usize>, Vec<usize>) {
    let cnt: Vec<usize> = (0..n)
        .map(|i| count / n + usize::from(i < count % n))
        .collect();
    let mut off = vec![0; n];
    for i in 1..n {
        off[i] = off[i - 1] + cnt[i - 1];
    }
    (cnt, off)
}

/// Reduces the received range `first..first+n` of base `inc` into the same range of `dst`
/// (commutative ops).
fn reduce_range(s: &mut Schedule, e: &Elems, inc: usize, dst: usize, first: usize, n: usize) {
    if n > 0 {
        s.reduce(e.reducer, n, e.at(inc, first), e.at(dst, first));
    }
}

/// Rabenseifner: reduce-scatter by recursive halving, allgather by recursive doubling
/// (commutative ops, splittable elements).
pub fn rabenseifner(c: &Ctx, s: &mut Schedule, e: &Elems, send: usize, recv: usize) {
    let (p2, rem, nr) = fold(c.rank, c.size);
    let in_place = send == recv;
    let mut acc = Acc::new(send, in_place, vec![recv]);
    if pre(c, s, e, &mut acc, rem) {
        let nr = nr.expect("participating rank") as usize;
        let p2 = p2 as usize;
        let (cnt, off) = blocks(e.count, p2);
        let span_of = |lo: usize, hi: usize| -> (usize, usize) {
            let first = off[lo];
            let n = if hi > lo {
                off[hi - 1] + cnt[hi - 1] - first
            } else {
                0
            };
            (first, n)
        };
        // Reduce-scatter: the partial result lives in `acc.cur` (maybe the send buffer) until
        // the first exchange, which lands in the receive buffer.
        let mut tmp = None;
        let (mut lo, mut hi) = (0usize, p2);
        let mut mask = p2 / 2;
        while mask > 0 {
            let pn = nr ^ mask;
            let partner = real_rank(pn as i32, rem);
            let mid = lo + (hi - lo) / 2;
            let (keep, give) = if nr & mask == 0 {
                ((lo, mid), (mid, hi))
            } else {
                ((mid, hi), (lo, mid))
            };
            let (gf, gn) = span_of(give.0, give.1);
            let (kf, kn) = span_of(keep.0, keep.1);
            s.send(partner, e.range(acc.cur, gf, gn));
            if acc.cur != recv {
                // First exchange straight into the receive buffer; the op commutes.
                s.recv(partner, e.range(recv, kf, kn));
                reduce_range(s, e, acc.cur, recv, kf, kn);
            } else {
                let t = *tmp.get_or_insert_with(|| e.tmp(s));
                s.recv(partner, e.range(t, kf, kn));
                reduce_range(s, e, t, recv, kf, kn);
            }
            acc.cur = recv;
            s.next_round();
            (lo, hi) = keep;
            mask /= 2;
        }
        if p2 == 1 {
            acc.finish_in(e, s, recv);
            s.next_round();
        }
        // Allgather: exchange aligned windows of doubling size.
        let mut mask = 1;
        while mask < p2 {
            let pn = nr ^ mask;
            let partner = real_rank(pn as i32, rem);
            let mine = nr & !(mask - 1);
            let theirs = pn & !(mask - 1);
            let (mf, mn) = span_of(mine, mine + mask);
            let (tf, tn) = span_of(theirs, theirs + mask);
            s.send(partner, e.range(recv, mf, mn));
            s.recv(partner, e.range(recv, tf, tn));
            s.next_round();
            mask *= 2;
        }
    }
    post(c, s, e, recv, rem);
}

/// Ring: p - 1 steps of reduce-scatter and p - 1 of allgather around the ring (commutative
/// ops, splittable elements).
pub fn ring(c: &Ctx, s: &mut Schedule, e: &Elems, send: usize, recv: usize) {
    let p = c.size as usize;
    let r = c.rank as usize;
    let next = ((r + 1) % p) as i32;
    let prev = ((r + p - 1) % p) as i32;
    let (cnt, off) = blocks(e.count, p);
    let in_place = send == recv;
    let tmp = if in_place { e.tmp(s) } else { 0 };
    for i in 0..p - 1 {
        let sb = (r + p - i) % p;
        let rb = (r + 2 * p - i - 1) % p;
        // Step 0 sends from the send buffer; later steps forward the block just reduced.
        let from = if i == 0 { send } else { recv };
        s.send(next, e.range(from, off[sb], cnt[sb]));
        if in_place {
            s.recv(prev, e.range(tmp, off[rb], cnt[rb]));
            reduce_range(s, e, tmp, recv, off[rb], cnt[rb]);
        } else {
            // Block rb of the receive buffer holds nothing yet (each block arrives once):
            // receive there and add this rank's own contribution from the send buffer.
            s.recv(prev, e.range(recv, off[rb], cnt[rb]));
            reduce_range(s, e, send, recv, off[rb], cnt[rb]);
        }
        s.next_round();
    }
    for i in 0..p - 1 {
        let sb = (r + 1 + p - i) % p;
        let rb = (r + p - i) % p;
        s.send(next, e.range(recv, off[sb], cnt[sb]));
        s.recv(prev, e.range(recv, off[rb], cnt[rb]));
        s.next_round();
    }
}

/// K-ring allreduce, group size `k` (commutative ops, splittable elements). The vector is cut
/// into p blocks; the reduce-scatter is the k-ring allgather run backwards in time with sends
/// and receives swapped (where the allgather sends block b to a peer, the reduce-scatter
/// receives that peer's partial sum of b and adds it; where it receives b, this rank sends
/// its partial sum), so block r's sums flow along the tree that later spreads it and end
/// complete at rank r; then the k-ring allgather spreads the blocks. As in [`ring`], a block's
/// first contribution is received straight into the receive buffer and this rank's own
/// part added from the send buffer, and a block nothing was added to yet is sent from the
/// send buffer, so k = 1 moves and reduces exactly as the ring does.
pub fn kring(c: &Ctx, s: &mut Schedule, e: &Elems, send: usize, recv: usize, k: i32) {
    let p = c.size as usize;
    let me = c.rank as usize;
    let k = k.max(1) as usize;
    let (cnt, off) = blocks(e.count, p);
    // Whether block b of the receive buffer holds this rank's partial sum.
    let mut partial = vec![send == recv; p];
    let mut tmp = None;
    let plan = super::radix::kring_plan(p, me, k);
    for round in plan.iter().rev() {
        let mut got = Vec::new();
        for m in round.iter().filter(|m| cnt[m.block] > 0) {
            let (b, peer) = (m.block, m.peer as i32);
            if !m.send {
                let from = if partial[b] { recv } else { send };
                s.send(peer, e.range(from, off[b], cnt[b]));
            } else if partial[b] {
                let t = *tmp.get_or_insert_with(|| e.tmp(s));
                s.recv(peer, e.range(t, off[b], cnt[b]));
                reduce_range(s, e, t, recv, off[b], cnt[b]);
            } else {
                s.recv(peer, e.range(recv, off[b], cnt[b]));
                reduce_range(s, e, send, recv, off[b], cnt[b]);
                got.push(b);
            }
        }
        for b in got {
            partial[b] = true;
        }
        s.next_round();
    }
    if !partial[me] && cnt[me] > 0 {
        // Only when nothing reached this rank's block (p = 1).
        s.copy(
            e.range(send, off[me], cnt[me]),
            e.range(recv, off[me], cnt[me]),
        );
        s.next_round();
    }
    let abs = |i: usize| i as i32;
    let run = |lo: usize, n: usize| {
        let total = cnt[lo..lo + n].iter().sum();
        e.range(recv, off[lo], total)
    };
    super::radix::kring(s, p, me, k, &abs, &run, None);
}
