//! Dissemination barrier (Hensgen, Finkel, Manber): in round k every rank signals rank
//! `rank + 2^k` and waits for `rank - 2^k`; after ceil(log2 p) rounds everyone has heard,
//! directly or not, from everyone. Any size.

use crate::coll::sched::{Schedule, Span};
use crate::coll::Ctx;

/// Appends a dissemination barrier to `s`.
pub fn dissemination(c: &Ctx, s: &mut Schedule) {
    let p = c.size;
    let mut dist = 1;
    while dist < p {
        let to = (c.rank + dist) % p;
        let from = (c.rank - dist).rem_euclid(p);
        s.send(to, Span::bytes(0, 0));
        s.recv(from, Span::bytes(0, 0));
        s.next_round();
        dist *= 2;
    }
}
