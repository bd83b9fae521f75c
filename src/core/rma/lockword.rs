//! The passive-target lock word of a window rank: a reader-writer lock in one 32-bit word of
//! shared memory ([`EXCLUSIVE`], or the number of shared holders), taken by `MPI_Win_lock`
//! from any process that maps it. Generic over the atomic type so the loom model below
//! checks the same code the control block runs.

use std::sync::atomic::Ordering;

/// The writer bit (the low bits count the shared holders).
pub const EXCLUSIVE: u32 = 1 << 31;

/// The atomic operations the lock needs (std's `AtomicU32`, and loom's under `--cfg loom`).
pub trait Word {
    /// `load`.
    fn load(&self, o: Ordering) -> u32;
    /// `store`.
    fn store(&self, v: u32, o: Ordering);
    /// `compare_exchange`.
    fn cas(&self, cur: u32, new: u32, ok: Ordering, err: Ordering) -> Result<u32, u32>;
    /// `fetch_sub`.
    fn fetch_sub(&self, v: u32, o: Ordering) -> u32;
}

macro_rules! word_impl {
    ($t:ty) => {
        impl Word for $t {
            fn load(&self, o: Ordering) -> u32 {
                <$t>::load(self, o)
            }
            fn store(&self, v: u32, o: Ordering) {
                <$t>::store(self, v, o)
            }
            fn cas(&self, cur: u32, new: u32, ok: Ordering, err: Ordering) -> Result<u32, u32> {
                <$t>::compare_exchange(self, cur, new, ok, err)
            }
            fn fetch_sub(&self, v: u32, o: Ordering) -> u32 {
                <$t>::fetch_sub(self, v, o)
            }
        }
    };
}
word_impl!(std::sync::atomic::AtomicU32);
#[cfg(loom)]
word_impl!(loom::sync::atomic::AtomicU32);

/// Tries to take the lock, shared or exclusive (acquire on success).
pub fn try_lock(w: &impl Word, exclusive: bool) -> bool {
    if exclusive {
        return w
            .cas(0, EXCLUSIVE, Ordering::Acquire, Ordering::Relaxed)
            .is_ok();
    }
    let v = w.load(Ordering::Relaxed);
    v & EXCLUSIVE == 0
        && w.cas(v, v + 1, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
}

/// Releases a lock taken by [`try_lock`] (release).
pub fn unlock(w: &impl Word, exclusive: bool) {
    if exclusive {
        w.store(0, Ordering::Release);
    } else {
        w.fetch_sub(1, Ordering::Release);
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use loom::cell::UnsafeCell;
    use loom::sync::atomic::AtomicU32;
    use loom::sync::Arc;

    /// Runs `body` under the lock if it can be taken within two tries (loom cannot model an
    /// unbounded spin); whether it ran.
    fn with_lock(word: &AtomicU32, exclusive: bool, body: impl FnOnce()) -> bool {
        for _ in 0..2 {
            if try_lock(word, exclusive) {
                body();
                unlock(word, exclusive);
                return true;
            }
            loom::thread::yield_now();
        }
        false
    }

    /// A writer and two readers: while the writer holds the lock nobody else does, and the
    /// readers see the writer's data whole (both halves written under the lock); once all
    /// are gone the word is free.
    #[test]
    fn writer_excludes_readers() {
        let mut model = loom::model::Builder::new();
        model.preemption_bound = Some(3);
        model.check(|| {
            let word = Arc::new(AtomicU32::new(0));
            let data = Arc::new(UnsafeCell::new((0u32, 0u32)));
            let writer = {
                let (word, data) = (word.clone(), data.clone());
                loom::thread::spawn(move || {
                    with_lock(&word, true, || {
                        // SAFETY: (model) the exclusive lock is held.
                        data.with_mut(|d| unsafe { *d = (1, 1) });
                    });
                })
            };
            let readers: Vec<_> = (0..2)
                .map(|_| {
                    let (word, data) = (word.clone(), data.clone());
                    loom::thread::spawn(move || {
                        with_lock(&word, false, || {
                            // SAFETY: (model) a shared lock is held; only the writer writes.
                            let (a, b) = data.with(|d| unsafe { *d });
                            assert_eq!(a, b, "a reader saw a half-written value");
                        });
                    })
                })
                .collect();
            writer.join().unwrap();
            for r in readers {
                r.join().unwrap();
            }
            assert_eq!(word.load(Ordering::Relaxed), 0);
        });
    }
}
