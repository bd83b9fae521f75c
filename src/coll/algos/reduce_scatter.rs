//! Reduce-scatter (`MPI_Reduce_scatter`, `MPI_Reduce_scatter_block`) and prefix reductions
//! (`MPI_Scan`, `MPI_Exscan`).

use super::reduce::{knomial, Elems};
use crate::coll::sched::Schedule;
use crate::coll::Ctx;

/// Reduce-scatter of the vector `e` (all blocks, `counts[i]` elements for rank i) from base
/// `send` (the receive buffer for `MPI_IN_PLACE`, then `send == recv`) into base `recv`, which
/// gets this rank's block at its start.
///
/// Commutative ops use the ring (p - 1 steps, each rank sends and reduces one block per step;
/// rank r ends with block r). Other ops reduce the whole vector to rank 0 in rank order
/// (binomial tree), which then sends every rank its block.
pub fn reduce_scatter(
    c: &Ctx,
    s: &mut Schedule,
    e: &Elems,
    counts: &[usize],
    send: usize,
    recv: usize,
) {
    let p = c.size as usize;
    let r = c.rank as usize;
    let mut off = vec![0usize; p];
    for i in 1..p {
        off[i] = off[i - 1] + counts[i - 1];
    }
    let in_place = send == recv;
    if p == 1 {
        if !in_place {
            e.copy(s, send, recv);
            s.next_round();
        }
        return;
    }
    if e.reducer.commutative && e.splittable() {
        let next = ((r + 1) % p) as i32;
        let prev = ((r + p - 1) % p) as i32;
        // Two ranks out of place need no temporary (the one step receives straight into
        // `recv`); a zeroed one of the whole vector costs a memset of it on every call.
        let t = if p == 2 && !in_place { 0 } else { e.tmp(s) };
        for i in 0..p - 1 {
            let sb = (r + 2 * p - i - 1) % p;
            let rb = (r + 2 * p - i - 2) % p;
            let from = if i == 0 { send } else { t };
            s.send(next, e.range(from, off[sb], counts[sb]));
            // Each block arrives once; add this rank's contribution to it.
            if rb == r && !in_place {
                s.recv(prev, e.range(recv, 0, counts[r]));
                if counts[r] > 0 {
                    s.reduce(e.reducer, counts[r], e.at(send, off[r]), recv);
                }
            } else {
                s.recv(prev, e.range(t, off[rb], counts[rb]));
                if counts[rb] > 0 {
                    s.reduce(e.reducer, counts[rb], e.at(send, off[rb]), e.at(t, off[rb]));
                }
                if rb == r {
                    s.copy(e.range(t, off[r], counts[r]), e.range(recv, 0, counts[r]));
                }
            }
            s.next_round();
        }
    } else {
        let t = if r == 0 { e.tmp(s) } else { 0 };
        knomial(c, s, e, send, t, 0, 2);
        if r == 0 {
            for i in 1..p {
                s.send(i as i32, e.range(t, off[i], counts[i]));
            }
            s.copy(e.range(t, 0, counts[0]), e.range(recv, 0, counts[0]));
        } else {
            s.recv(0, e.range(recv, 0, counts[r]));
        }
        s.next_round();
    }
}

/// Inclusive (`exclusive == false`, `MPI_Scan`) or exclusive (`MPI_Exscan`) prefix reduction
/// by recursive doubling: in step k each rank exchanges the reduction of its aligned group
/// of 2^k ranks with the partner group; results from lower groups are folded in on the left,
/// keeping rank order. `send == recv` for `MPI_IN_PLACE`. Rank 0's receive buffer is left
/// untouched by the exclusive scan.
pub fn scan(c: &Ctx, s: &mut Schedule, e: &Elems, send: usize, recv: usize, exclusive: bool) {
    let p = c.size;
    let r = c.rank;
    // `part`: reduction of this rank's current group; `inc`: where the partner's arrives.
    let mut part = e.tmp(s);
    let mut inc = e.tmp(s);
    e.copy(s, send, part);
    if !exclusive {
        e.copy(s, send, recv);
    }
    s.next_round();
    let mut have = !exclusive;
    let mut mask = 1;
    while mask < p {
        let partner = r ^ mask;
        if partner < p {
            s.send(partner, e.span(part));
            s.recv(partner, e.span(inc));
            if partner < r {
                if have {
                    e.reduce(s, inc, recv);
                } else {
                    e.copy(s, inc, recv);
                    have = true;
                }
                e.reduce(s, inc, part);
            } else if e.reducer.commutative {
                e.reduce(s, inc, part);
            } else {
                e.reduce(s, part, inc);
                std::mem::swap(&mut part, &mut inc);
            }
            s.next_round();
        }
        mask *= 2;
    }
}
