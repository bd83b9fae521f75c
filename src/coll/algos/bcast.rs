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
