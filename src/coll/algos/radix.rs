//! The allgather cores of the generalized-radix family (Wilkins, "Generalized collective
//! algorithms for the exascale era"), shared by Allgather and by the scatter + allgather
//! broadcasts: recursive multiplying and k-ring.
//!
//! Both work on `p` blocks in an order of "sequence positions" (the ranks for an allgather,
//! the ranks relative to the root for a broadcast): `abs(i)` is the communicator rank at
//! position `i` and `run(lo, n)` the span of blocks `lo .. lo + n` (consecutive blocks are
//! one span). Empty spans are skipped on both sides alike (every rank computes the same
//! sizes).

use super::blocks::copy;
use crate::coll::sched::{Schedule, Span};

/// How recursive multiplying folds `p` positions onto the largest power of `k` not above
/// `p` (`pofk`): position runs ("chunks") of `p / pofk` or one more consecutive positions,
/// the first of each (its leader) standing for the chunk. With `p < k * pofk` a chunk has at
/// most k positions; k = 2 pairs up the first `2 * (p - pofk)` positions as the classic
/// recursive doubling does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fold {
    /// Largest power of k not above p.
    pub pofk: usize,
    q: usize,
    extra: usize,
}

impl Fold {
    /// The fold of `p >= 1` positions for radix `k >= 2`.
    pub fn new(p: usize, k: usize) -> Fold {
        let mut pofk = 1;
        while pofk * k <= p {
            pofk *= k;
        }
        Fold {
            pofk,
            q: p / pofk,
            extra: p % pofk,
        }
    }

    /// First position of chunk `c` (`start(pofk)` is p).
    pub fn start(&self, c: usize) -> usize {
        c * self.q + c.min(self.extra)
    }

    /// Positions in chunk `c`.
    pub fn size(&self, c: usize) -> usize {
        self.q + usize::from(c < self.extra)
    }

    /// The chunk of position `i`.
    pub fn chunk_of(&self, i: usize) -> usize {
        let big = self.extra * (self.q + 1);
        if i < big {
            i / (self.q + 1)
        } else {
            self.extra + (i - big) / self.q
        }
    }

    /// The chunks chunk `c` exchanges with at distance `d` (a power of k below `pofk`): the
    /// k chunks `base + c mod d + j * d`, j = 0..k, of its group of `d * k` chunks, in order
    /// (`c` itself among them, at index `(c / d) mod k`).
    pub fn peers(&self, c: usize, d: usize, k: usize) -> impl Iterator<Item = usize> {
        let base = c / (d * k) * (d * k) + c % d;
        (0..k).map(move |j| base + j * d)
    }

    /// The positions chunk `c` holds after the rounds below distance `d`: the chunks of its
    /// aligned group of d chunks, as `(first, count)`.
    pub fn held(&self, c: usize, d: usize) -> (usize, usize) {
        let b = c / d * d;
        let lo = self.start(b);
        (lo, self.start(b + d) - lo)
    }
}

fn send(s: &mut Schedule, to: i32, d: Span) {
    if d.bytes > 0 {
        s.send(to, d);
    }
}

fn recv(s: &mut Schedule, from: i32, d: Span) {
    if d.bytes > 0 {
        s.recv(from, d);
    }
}

/// Recursive-multiplying allgather with radix `k >= 2` (k = 2: recursive doubling). After
/// the fold (chunk members hand their block to the chunk leader), in the round at distance
/// d = 1, k, k², ... < pofk every leader exchanges the run of blocks it holds with the k-1
/// other leaders of its group of `d * k` chunks (sending its run to and receiving theirs from
/// each), so runs grow k-fold per round; finally leaders send everything to their members.
/// `own` is the caller's block when it is not yet in place at position `me`: sent from there
/// in this rank's first round and copied into place after that round's traffic.
#[allow(clippy::too_many_arguments)]
pub fn recursive_multiplying(
    s: &mut Schedule,
    p: usize,
    me: usize,
    k: usize,
    abs: &dyn Fn(usize) -> i32,
    run: &dyn Fn(usize, usize) -> Span,
    own: Option<&Span>,
) {
    let k = k.max(2);
    let f = Fold::new(p, k);
    let ch = f.chunk_of(me);
    let lead = f.start(ch);
    let csz = f.size(ch);
    let mut own = own;
    // The span of positions lo..lo+n, from `own` when that is exactly this rank's block and
    // not yet in place.
    let out = |own: Option<&Span>, lo: usize, n: usize| match own {
        Some(o) if lo == me && n == 1 => o.clone(),
        _ => run(lo, n),
    };
    let place = |s: &mut Schedule, own: &mut Option<&Span>| {
        if let Some(o) = own.take() {
            copy(s, o.clone(), run(me, 1));
        }
    };
    if me != lead {
        send(s, abs(lead), out(own, me, 1));
        place(s, &mut own);
        s.next_round();
        recv(s, abs(lead), run(0, p));
        s.next_round();
        return;
    }
    if csz > 1 {
        for m in lead + 1..lead + csz {
            recv(s, abs(m), run(m, 1));
        }
        place(s, &mut own);
        s.next_round();
    }
    let mut d = 1;
    while d < f.pofk {
        let (lo, n) = f.held(ch, d);
        let mine = out(own, lo, n);
        for pc in f.peers(ch, d, k).filter(|&pc| pc != ch) {
            let peer = abs(f.start(pc));
            send(s, peer, mine.clone());
            let (plo, pn) = f.held(pc, d);
            recv(s, peer, run(plo, pn));
        }
        place(s, &mut own);
        s.next_round();
        d *= k;
    }
    place(s, &mut own);
    for m in lead + 1..lead + csz {
        send(s, abs(m), run(0, p));
    }
    s.next_round();
}

/// One transfer of a k-ring round: send or receive block `block` to or from position `peer`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Move {
    /// Whether this rank sends (else receives).
    pub send: bool,
    /// The other position.
    pub peer: usize,
    /// The block moved.
    pub block: usize,
}

/// The k-ring allgather of position `me` among `p` with group size `k >= 1` (k = 1: the
/// ring), as rounds of single-block moves. Positions form `g = ceil(p / k)` groups of k
/// consecutive positions (the last one may be smaller). In super-step t = 0..g the members of
/// group G hold the blocks of source group `G - t`, block j at member `j mod |G|`; `|G| - 1`
/// ring rounds inside the group give every member all of them; then (except after the last
/// super-step) one round between groups passes block j of that source from member
/// `j mod |G|` to member `j mod |G+1|` of the next group. With groups of k that is
/// `g (k - 1)` rounds inside groups and `g - 1` between them, p - 1 in all as for the ring,
/// but only one round in k crosses group boundaries. Each block reaches every position once
/// and each rank sends a block to at most one peer per round.
pub fn kring_plan(p: usize, me: usize, k: usize) -> Vec<Vec<Move>> {
    let mut rounds = Vec::new();
    kring_rounds(p, me, k, |r| rounds.push(r.to_vec()));
    rounds
}

/// The rounds of [`kring_plan`], handed to `round` one at a time in one reused buffer (no
/// allocation per round: small collectives build this plan on every call).
pub fn kring_rounds(p: usize, me: usize, k: usize, mut round: impl FnMut(&[Move])) {
    let k = k.clamp(1, p.max(1));
    let g = p.div_ceil(k);
    let grp = |x: usize| (x * k, k.min(p - x * k));
    let gi = me / k;
    let (gs, gn) = grp(gi);
    let i = me - gs;
    let right = gs + (i + 1) % gn;
    let left = gs + (i + gn - 1) % gn;
    let (ns, nn) = grp((gi + 1) % g);
    let (ps, pn) = grp((gi + g - 1) % g);
    let mv = |send, peer, block| Move { send, peer, block };
    let mut r: Vec<Move> = Vec::with_capacity(8);
    for step in 0..g {
        let src = (gi + g - step) % g;
        let (ss, sn) = grp(src);
        for t in 0..gn - 1 {
            let out_cl = (i + gn - t) % gn;
            let in_cl = (i + 2 * gn - t - 1) % gn;
            r.clear();
            r.extend((out_cl..sn).step_by(gn).map(|j| mv(true, right, ss + j)));
            r.extend((in_cl..sn).step_by(gn).map(|j| mv(false, left, ss + j)));
            round(&r);
        }
        if step + 1 < g {
            r.clear();
            r.extend((i..sn).step_by(gn).map(|j| mv(true, ns + j % nn, ss + j)));
            let (s2s, s2n) = grp((src + g - 1) % g);
            r.extend(
                (i..s2n)
                    .step_by(gn)
                    .map(|j| mv(false, ps + j % pn, s2s + j)),
            );
            round(&r);
        }
    }
}

/// K-ring allgather with group size `k >= 1` ([`kring_plan`]). `own` is the caller's
/// block when it is not yet in place at position `me`: the first round (which always sends
/// it) sends it from there, and it is copied into place after that round's traffic.
#[allow(clippy::too_many_arguments)]
pub fn kring(
    s: &mut Schedule,
    p: usize,
    me: usize,
    k: usize,
    abs: &dyn Fn(usize) -> i32,
    run: &dyn Fn(usize, usize) -> Span,
    own: Option<&Span>,
) {
    let mut own = own;
    kring_rounds(p, me, k, |round| {
        for &m in round {
            if m.send {
                let d = match own {
                    Some(o) if m.block == me => o.clone(),
                    _ => run(m.block, 1),
                };
                send(s, abs(m.peer), d);
            } else {
                recv(s, abs(m.peer), run(m.block, 1));
            }
        }
        if let Some(o) = own.take() {
            copy(s, o.clone(), run(me, 1));
        }
        s.next_round();
    });
    if let Some(o) = own {
        copy(s, o.clone(), run(me, 1));
        s.next_round();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fold_partitions_the_positions() {
        for k in 2..10 {
            for p in 1..100 {
                let f = Fold::new(p, k);
                assert!(f.pofk <= p && p < f.pofk * k, "{p} {k}");
                assert_eq!(f.start(f.pofk), p);
                for c in 0..f.pofk {
                    assert!((1..=k).contains(&f.size(c)));
                    assert_eq!(f.start(c + 1), f.start(c) + f.size(c));
                    for i in f.start(c)..f.start(c + 1) {
                        assert_eq!(f.chunk_of(i), c);
                    }
                }
                // Every chunk meets every other exactly once over the rounds.
                let mut d = 1;
                let mut held = vec![1usize; f.pofk];
                while d < f.pofk {
                    for (c, h) in held.iter_mut().enumerate() {
                        let peers: Vec<usize> = f.peers(c, d, k).collect();
                        assert!(peers.contains(&c));
                        assert!(peers.iter().all(|&x| x < f.pofk));
                        *h *= k;
                    }
                    d *= k;
                    for c in 0..f.pofk {
                        let (lo, n) = f.held(c, d);
                        assert!(lo <= f.start(c) && f.start(c) < lo + n);
                    }
                }
                assert!(held.iter().all(|&h| h == f.pofk));
            }
        }
    }

    /// Runs the plans of all ranks together: messages between two ranks match in order (as
    /// MPI's do, checking both sides name the same block) and a round ends when each of its
    /// moves' counterparts has been posted. Returns whether every rank finished and which
    /// blocks each rank received (panics on a block sent before it was held or received
    /// twice, when `track`).
    fn simulate(p: usize, plans: &[Vec<Vec<Move>>], track: bool) -> (bool, Vec<Vec<bool>>) {
        let mut matched = Vec::new();
        for (r, plan) in plans.iter().enumerate() {
            let mut seq = std::collections::HashMap::new();
            let mut m_r = Vec::new();
            for round in plan {
                let mut m_t = Vec::new();
                for m in round {
                    let n = seq.entry((m.send, m.peer)).or_insert(0usize);
                    let t2 = plans[m.peer]
                        .iter()
                        .enumerate()
                        .flat_map(|(t2, r2)| r2.iter().map(move |m2| (t2, m2)))
                        .filter(|(_, m2)| m2.send != m.send && m2.peer == r)
                        .nth(*n)
                        .map(|(t2, m2)| {
                            assert_eq!(m2.block, m.block, "block mismatch");
                            t2
                        })
                        .expect("unmatched move");
                    *n += 1;
                    m_t.push(t2);
                }
                m_r.push(m_t);
            }
            matched.push(m_r);
        }
        let mut cur = vec![0usize; p];
        let mut has: Vec<Vec<bool>> = (0..p).map(|r| (0..p).map(|b| b == r).collect()).collect();
        loop {
            let mut progressed = false;
            for r in 0..p {
                let t = cur[r];
                if t == plans[r].len() {
                    continue;
                }
                let ready = plans[r][t]
                    .iter()
                    .zip(&matched[r][t])
                    .all(|(m, &t2)| cur[m.peer] >= t2);
                if !ready {
                    continue;
                }
                for m in &plans[r][t] {
                    if track {
                        assert_eq!(has[r][m.block], m.send, "{r}: block {} ({m:?})", m.block);
                    }
                }
                for m in plans[r][t].iter().filter(|m| !m.send) {
                    has[r][m.block] = true;
                }
                cur[r] += 1;
                progressed = true;
            }
            if !progressed {
                break;
            }
        }
        ((0..p).all(|r| cur[r] == plans[r].len()), has)
    }

    /// The k-ring plan delivers every block to every position exactly once, without
    /// deadlock, forwards and backwards in time (the allreduce's reduce-scatter).
    #[test]
    fn kring_plan_delivers_every_block_once() {
        for p in 1..14 {
            for k in 1..=p + 1 {
                let plans: Vec<_> = (0..p).map(|me| kring_plan(p, me, k)).collect();
                let (done, has) = simulate(p, &plans, true);
                assert!(done, "{p} {k}: deadlock");
                assert!(has.iter().all(|h| h.iter().all(|&x| x)), "{p} {k}");
                if p % k == 0 || k >= p {
                    assert!(plans.iter().all(|x| x.len() == p - 1), "{p} {k}: rounds");
                }
                let back: Vec<Vec<Vec<Move>>> = plans
                    .iter()
                    .map(|pl| {
                        pl.iter()
                            .rev()
                            .map(|r| {
                                r.iter()
                                    .map(|m| Move {
                                        send: !m.send,
                                        ..*m
                                    })
                                    .collect()
                            })
                            .collect()
                    })
                    .collect();
                assert!(simulate(p, &back, false).0, "{p} {k}: reversed deadlock");
            }
        }
    }

    #[test]
    fn fold_with_radix_two_pairs_like_recursive_doubling() {
        // p = 6: pofk 4, chunks {0,1} {2,3} {4} {5}.
        let f = Fold::new(6, 2);
        assert_eq!(f.pofk, 4);
        let sizes: Vec<usize> = (0..4).map(|c| f.size(c)).collect();
        assert_eq!(sizes, [2, 2, 1, 1]);
    }
}
