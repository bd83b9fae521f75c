//! The claim word of an accumulate task slot (`acc_steal`): one 64-bit word holding the
//! task's generation (bits 40..64), its chunk count (20..40) and the next chunk to claim
//! (0..20). Claiming is a compare-and-swap that checks generation and count in the same word,
//! so a helper that read an older task can never take a chunk of a newer one. Generic over
//! the atomic type so the loom model below checks the code the slot runs.

use std::sync::atomic::Ordering;

/// Most chunks one task may have.
pub const MAX_CHUNKS: usize = (1 << 20) - 1;

const FIELD: u64 = (1 << 20) - 1;

/// The atomic operations the claim word needs (std's `AtomicU64`, loom's under `--cfg loom`).
pub trait Word64 {
    /// `load`.
    fn load(&self, o: Ordering) -> u64;
    /// `store`.
    fn store(&self, v: u64, o: Ordering);
    /// `compare_exchange_weak`.
    fn cas_weak(&self, cur: u64, new: u64, ok: Ordering, err: Ordering) -> Result<u64, u64>;
}

macro_rules! word64_impl {
    ($t:ty) => {
        impl Word64 for $t {
            fn load(&self, o: Ordering) -> u64 {
                <$t>::load(self, o)
            }
            fn store(&self, v: u64, o: Ordering) {
                <$t>::store(self, v, o)
            }
            fn cas_weak(
                &self,
                cur: u64,
                new: u64,
                ok: Ordering,
                err: Ordering,
            ) -> Result<u64, u64> {
                <$t>::compare_exchange_weak(self, cur, new, ok, err)
            }
        }
    };
}
word64_impl!(std::sync::atomic::AtomicU64);
#[cfg(loom)]
word64_impl!(loom::sync::atomic::AtomicU64);

/// The generation after the word's current one (never 0, which means "no task").
pub fn next_generation(w: &impl Word64) -> u32 {
    match ((w.load(Ordering::Relaxed) >> 40) + 1) & 0xff_ffff {
        0 => 1,
        g => g as u32,
    }
}

/// Opens task generation `gen` with `n` chunks (release: the task's fields, written before,
/// are visible to whoever claims).
pub fn open(w: &impl Word64, gen: u32, n: u32) {
    w.store(
        (gen as u64) << 40 | (n as u64 & FIELD) << 20,
        Ordering::Release,
    );
}

/// Whether generation `gen` has chunks left to claim.
pub fn has_chunks(w: &impl Word64, gen: u32) -> bool {
    let v = w.load(Ordering::Acquire);
    (v >> 40) as u32 == gen && v & FIELD < (v >> 20) & FIELD
}

/// Claims the next chunk of generation `gen`, if any is left.
pub fn claim(w: &impl Word64, gen: u32) -> Option<u32> {
    let mut v = w.load(Ordering::Acquire);
    loop {
        let (g, n, i) = (v >> 40, (v >> 20) & FIELD, v & FIELD);
        if g as u32 != gen || i >= n {
            return None;
        }
        match w.cas_weak(v, v + 1, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => return Some(i as u32),
            Err(now) => v = now,
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    #[test]
    fn generations_fence_off_stale_claims() {
        let w = AtomicU64::new(0);
        let g1 = next_generation(&w);
        open(&w, g1, 2);
        assert_eq!(claim(&w, g1), Some(0));
        assert_eq!(claim(&w, g1), Some(1));
        assert_eq!(claim(&w, g1), None);
        let g2 = next_generation(&w);
        assert_ne!(g1, g2);
        open(&w, g2, 1);
        assert_eq!(claim(&w, g1), None, "a stale generation claims nothing");
        assert!(has_chunks(&w, g2));
        assert_eq!(claim(&w, g2), Some(0));
        assert!(!has_chunks(&w, g2));
        let top = AtomicU64::new(0xff_ffff << 40);
        assert_eq!(next_generation(&top), 1);
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use loom::sync::atomic::{AtomicU32, AtomicU64};
    use loom::sync::Arc;

    /// The owner opens task 1 (2 chunks), claims what it can, waits until both chunks are
    /// done, then opens task 2 (1 chunk) and claims it; a helper that saw task 1 open keeps
    /// claiming with generation 1. Every chunk of every task is done exactly once, and the
    /// helper never takes a chunk of task 2 under task 1's generation.
    #[test]
    fn stale_helpers_never_claim_a_newer_task() {
        let mut model = loom::model::Builder::new();
        model.preemption_bound = Some(3);
        model.check(|| {
            let word = Arc::new(AtomicU64::new(0));
            let done = Arc::new([AtomicU32::new(0), AtomicU32::new(0)]);
            let g1 = next_generation(&*word);
            open(&*word, g1, 2);
            let helper = {
                let (word, done) = (word.clone(), done.clone());
                loom::thread::spawn(move || {
                    let mut took = 0;
                    for _ in 0..2 {
                        if let Some(i) = claim(&*word, g1) {
                            assert!(i < 2);
                            done[0].fetch_add(1, Ordering::AcqRel);
                            took += 1;
                        }
                    }
                    took
                })
            };
            let mut mine = 0;
            while let Some(i) = claim(&*word, g1) {
                assert!(i < 2);
                done[0].fetch_add(1, Ordering::AcqRel);
                mine += 1;
            }
            while done[0].load(Ordering::Acquire) < 2 {
                loom::thread::yield_now();
            }
            let g2 = next_generation(&*word);
            open(&*word, g2, 1);
            if claim(&*word, g2).is_some() {
                done[1].fetch_add(1, Ordering::AcqRel);
            }
            let theirs = helper.join().unwrap();
            assert_eq!(
                mine + theirs,
                2,
                "task 1's chunks were taken {} times",
                mine + theirs
            );
            assert_eq!(done[1].load(Ordering::Acquire), 1);
        });
    }
}
