//! Context-id agreement: how the members of a new communicator pick a context id that none of
//! them is using, even when several threads of a process create communicators at once.
//!
//! Each process keeps a bit mask of the ids it has free (`ContextPool`). To create a
//! communicator, its future members AND their masks together (an allreduce, `core::objects::team`)
//! and take the lowest id left: it is free in every member, so no member can confuse the new
//! communicator's traffic with another's. Freed communicators return their id to the mask.
//!
//! With `MPI_THREAD_MULTIPLE` two threads of one process may run agreements for different
//! parents at the same time; if both contributed the same mask, both could pick the same id.
//! So a process lends its mask to one agreement per round (the algorithm of MPICH's
//! `MPIR_Get_contextid`): the *owner*, which is the waiting agreement with the lowest
//! priority key, contributes the mask; every other agreement contributes all zeros plus a
//! cleared "owned" flag, which makes its round fail everywhere (the AND is zero), and it
//! retries. The priority key is the same on every member (derived from the parent's
//! context id), so all members of the agreement with the lowest key eventually lend it their
//! masks in the same round and it succeeds; then the next lowest proceeds. A round that
//! every member owned and that still yields no id means the ids are exhausted.
//!
//! A lent mask stays lent until its round ends, which may wait on other processes. So that a
//! construction only this process takes part in (a dup of `MPI_COMM_SELF`, a singleton
//! split, an endpoint's own id) never waits behind such a round, the owner lends the mask
//! without its highest few free ids (`RESERVE`); those serve local takes meanwhile. Without
//! it, a thread spinning for the mask in a `MPI_Comm_dup(MPI_COMM_SELF)` could hold back the
//! very process whose participation the owner's round waits for.

use std::collections::BTreeSet;

/// Words in a mask.
pub const MASK_WORDS: usize = 64;
/// Number of context ids (`MASK_WORDS * 64`).
pub const MAX_IDS: u32 = (MASK_WORDS * 64) as u32;

/// The context id of the two-process links over which the roots of `MPI_Comm_accept` and
/// `MPI_Comm_connect` build their intercommunicator (`core::objects::dynamic`): never free,
/// never agreed on; links are told apart by their tags.
pub const BRIDGE_ID: u32 = MAX_IDS - 1;

/// Free ids kept out of a lent mask for local takes (only while more than twice as many
/// are free, so that the reserve never makes agreements fail near exhaustion).
pub const RESERVE: u32 = 16;

/// What a finished round means for an agreement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// This id is now ours.
    Got(u32),
    /// Another agreement held a mask somewhere: run another round.
    Retry,
    /// Every member lent its mask and no id is free in all of them.
    Exhausted,
}

/// The context ids this process has free, and who may lend them this round.
#[derive(Debug)]
pub struct ContextPool {
    free: [u64; MASK_WORDS],
    /// Free ids not lent with the mask this round (`RESERVE`).
    withheld: [u64; MASK_WORDS],
    owner: Option<u64>,
    waiting: BTreeSet<(u64, u64)>,
    next_ticket: u64,
}

impl Default for ContextPool {
    fn default() -> Self {
        let mut free = [u64::MAX; MASK_WORDS];
        free[0] &= !0b11; // ids 0 (MPI_COMM_WORLD) and 1 (MPI_COMM_SELF)
        free[MASK_WORDS - 1] &= !(1 << 63); // BRIDGE_ID
        ContextPool {
            free,
            withheld: [0; MASK_WORDS],
            owner: None,
            waiting: BTreeSet::new(),
            next_ticket: 1,
        }
    }
}

impl ContextPool {
    /// Enters an agreement with priority `key` (lower goes first); returns its ticket.
    pub fn register(&mut self, key: u64) -> u64 {
        let t = self.next_ticket;
        self.next_ticket += 1;
        self.waiting.insert((key, t));
        t
    }

    /// Leaves an agreement without an id (on error).
    pub fn cancel(&mut self, ticket: u64) {
        self.waiting.retain(|&(_, t)| t != ticket);
        if self.owner == Some(ticket) {
            self.owner = None;
            self.withheld = [0; MASK_WORDS];
        }
    }

    /// This round's contribution of agreement `ticket`: the mask and a set "owned" word if it
    /// may lend the mask, else all zeros.
    pub fn contribution(&mut self, ticket: u64) -> Vec<u64> {
        let first = self.waiting.iter().next().map(|&(_, t)| t);
        if self.owner.is_none() && first == Some(ticket) {
            self.owner = Some(ticket);
            self.withhold_reserve();
        }
        let mut v = vec![0u64; MASK_WORDS + 1];
        if self.owner == Some(ticket) {
            for (w, (f, h)) in v.iter_mut().zip(self.free.iter().zip(&self.withheld)) {
                *w = f & !h;
            }
            v[MASK_WORDS] = 1;
        }
        v
    }

    /// Marks the highest `RESERVE` free ids as withheld from the mask about to be lent.
    fn withhold_reserve(&mut self) {
        self.withheld = [0; MASK_WORDS];
        if self.free_count() <= 2 * RESERVE {
            return;
        }
        let mut left = RESERVE;
        for w in (0..MASK_WORDS).rev() {
            let mut word = self.free[w];
            while word != 0 && left > 0 {
                let bit = 63 - word.leading_zeros();
                self.withheld[w] |= 1u64 << bit;
                word &= !(1u64 << bit);
                left -= 1;
            }
            if left == 0 {
                break;
            }
        }
    }

    /// Concludes a round of agreement `ticket` given the AND of all contributions.
    pub fn conclude(&mut self, ticket: u64, and: &[u64]) -> Outcome {
        self.conclude_run(ticket, and, 1)
    }

    /// Concludes a round of an agreement on `count` consecutive ids (endpoint
    /// communicators): the lowest run of `count` ids free in every member; `Got` names the
    /// first, and all of them are taken from this process's mask.
    pub fn conclude_run(&mut self, ticket: u64, and: &[u64], count: u32) -> Outcome {
        if self.owner != Some(ticket) {
            return Outcome::Retry;
        }
        self.owner = None;
        self.withheld = [0; MASK_WORDS];
        let count = count.max(1);
        let found = lowest_run(&and[..MASK_WORDS], count);
        match found {
            Some(id) => {
                for i in id..id + count {
                    self.free[i as usize / 64] &= !(1u64 << (i % 64));
                }
                self.waiting.retain(|&(_, t)| t != ticket);
                Outcome::Got(id)
            }
            None if and[MASK_WORDS] == 1 => {
                self.waiting.retain(|&(_, t)| t != ticket);
                Outcome::Exhausted
            }
            None => Outcome::Retry,
        }
    }

    /// Takes one id for a communicator whose id need be unique in this process only (a
    /// communicator of this process alone, or an endpoint of an endpoint communicator, whose
    /// senders address each rank by its own id): the highest free id; while the mask is lent
    /// to an agreement round, the highest withheld one (`None` when the reserve is used up:
    /// try again once the round concluded, since the round may pick any id it lent).
    pub fn take_local(&mut self) -> Option<u32> {
        let lent = self.owner.is_some();
        let (w, word) = (0..MASK_WORDS)
            .rev()
            .map(|w| {
                let avail = if lent {
                    self.free[w] & self.withheld[w]
                } else {
                    self.free[w]
                };
                (w, avail)
            })
            .find(|&(_, a)| a != 0)?;
        let bit = 63 - word.leading_zeros();
        self.free[w] &= !(1u64 << bit);
        self.withheld[w] &= !(1u64 << bit);
        Some(w as u32 * 64 + bit)
    }

    /// Returns `id` to the free mask.
    pub fn release(&mut self, id: u32) {
        if (2..BRIDGE_ID).contains(&id) {
            self.free[id as usize / 64] |= 1u64 << (id % 64);
        }
    }

    /// Number of free ids.
    pub fn free_count(&self) -> u32 {
        self.free.iter().map(|w| w.count_ones()).sum()
    }
}

/// The first id of the lowest run of `count` consecutive set bits of `mask`.
fn lowest_run(mask: &[u64], count: u32) -> Option<u32> {
    let bit = |i: u32| mask[i as usize / 64] >> (i % 64) & 1 == 1;
    let total = mask.len() as u32 * 64;
    let mut start = 0;
    let mut len = 0;
    for i in 0..total {
        if bit(i) {
            if len == 0 {
                start = i;
            }
            len += 1;
            if len == count {
                return Some(start);
            }
        } else {
            len = 0;
        }
    }
    None
}

/// ANDs `b` into `a` word by word (the reduction of an agreement round).
pub fn and_into(a: &mut [u64], b: &[u64]) {
    for (x, y) in a.iter_mut().zip(b) {
        *x &= *y;
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn round(pools: &mut [ContextPool], tickets: &[u64]) -> Vec<Outcome> {
        let mut acc = vec![u64::MAX; MASK_WORDS + 1];
        for (p, &t) in pools.iter_mut().zip(tickets) {
            and_into(&mut acc, &p.contribution(t));
        }
        pools
            .iter_mut()
            .zip(tickets)
            .map(|(p, &t)| p.conclude(t, &acc))
            .collect()
    }

    #[test]
    fn agreement_takes_lowest_common_id_and_recycles() {
        let mut p = [ContextPool::default(), ContextPool::default()];
        let t: Vec<u64> = p.iter_mut().map(|x| x.register(0)).collect();
        assert_eq!(round(&mut p, &t), [Outcome::Got(2), Outcome::Got(2)]);
        // Process 1 alone takes 3 (e.g. a split it is part of).
        let t1 = p[1].register(0);
        assert_eq!(round(&mut p[1..], &[t1]), [Outcome::Got(3)]);
        let t: Vec<u64> = p.iter_mut().map(|x| x.register(0)).collect();
        assert_eq!(round(&mut p, &t), [Outcome::Got(4), Outcome::Got(4)]);
        p[0].release(2);
        p[1].release(2);
        let t: Vec<u64> = p.iter_mut().map(|x| x.register(0)).collect();
        assert_eq!(round(&mut p, &t), [Outcome::Got(2), Outcome::Got(2)]);
    }

    #[test]
    fn local_ids_come_from_the_top_and_wait_for_a_lent_mask() {
        let mut p = ContextPool::default();
        assert_eq!(p.take_local(), Some(MAX_IDS - 2));
        assert_eq!(p.take_local(), Some(MAX_IDS - 3));
        let t = p.register(0);
        let c = p.contribution(t);
        assert_eq!(c[MASK_WORDS - 1] >> 62, 0, "a local id is not lent");
        // While the mask is lent, local takes come from the withheld reserve only, which
        // the lent mask does not contain.
        for i in 0..RESERVE {
            let id = p.take_local().expect("reserve");
            assert_eq!(id, MAX_IDS - 4 - i);
            assert_eq!(c[id as usize / 64] >> (id % 64) & 1, 0, "id {id} was lent");
        }
        assert_eq!(
            p.take_local(),
            None,
            "reserve used up while the mask is lent"
        );
        assert_eq!(p.conclude(t, &c), Outcome::Got(2));
        assert_eq!(p.take_local(), Some(MAX_IDS - 4 - RESERVE));
        p.release(MAX_IDS - 2);
        assert_eq!(p.take_local(), Some(MAX_IDS - 2), "released ids come back");
    }

    #[test]
    fn runs_of_ids_skip_holes() {
        let mut p = ContextPool::default();
        let t = p.register(0);
        let mut c = p.contribution(t);
        c[0] &= !(1 << 4); // id 4 taken elsewhere
        assert_eq!(p.conclude_run(t, &c, 3), Outcome::Got(5));
        for id in 5..8 {
            assert_eq!(p.free[0] >> id & 1, 0, "id {id} taken");
        }
        assert_eq!(p.free[0] >> 2 & 1, 1, "ids before the run stay free");
        assert_eq!(lowest_run(&[0, 1], 1), Some(64));
        assert_eq!(lowest_run(&[1 << 63, 1], 2), Some(63), "runs cross words");
        assert_eq!(lowest_run(&[0b1011, 0], 3), None);
    }

    #[test]
    fn only_the_lowest_key_owns_the_mask() {
        let mut p = ContextPool::default();
        let high = p.register(10);
        let low = p.register(4);
        // `low` owns; `high` contributes zeros and must retry.
        assert_eq!(p.contribution(high)[MASK_WORDS], 0);
        let c = p.contribution(low);
        assert_eq!(c[MASK_WORDS], 1);
        assert_eq!(p.conclude(high, &vec![0; MASK_WORDS + 1]), Outcome::Retry);
        assert_eq!(p.conclude(low, &c), Outcome::Got(2));
        // Now `high` is first.
        let c = p.contribution(high);
        assert_eq!(c[MASK_WORDS], 1);
        assert_eq!(p.conclude(high, &c), Outcome::Got(3));
    }

    #[test]
    fn a_zero_contribution_elsewhere_means_retry_and_exhaustion_is_detected() {
        let mut p = ContextPool::default();
        let t = p.register(0);
        let mut c = p.contribution(t);
        c[MASK_WORDS] = 0; // another member did not own its mask
        c[..MASK_WORDS].fill(0);
        assert_eq!(p.conclude(t, &c), Outcome::Retry);
        p.cancel(t);
        for _ in 2..BRIDGE_ID {
            let t = p.register(0);
            let c = p.contribution(t);
            assert!(matches!(p.conclude(t, &c), Outcome::Got(_)));
        }
        assert_eq!(p.free_count(), 0);
        let t = p.register(0);
        let c = p.contribution(t);
        assert_eq!(p.conclude(t, &c), Outcome::Exhausted);
    }
}
