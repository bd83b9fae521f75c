//! The lock of one VCI: a one-byte word that also carries the `lockq` model's "work pending"
//! mark, so that a fast path takes the lock *and* learns that nothing waits to be drained with
//! one compare-and-swap.
//!
//! Bits of the word:
//! - `LOCKED`: held;
//! - `PARKED`: a thread sleeps (through `parking_lot_core`, keyed by the word's address)
//!   waiting for it;
//! - `PENDING`: a thread that missed the lock under the `lockq` model queued work (an
//!   operation descriptor, a parked descriptor, a reserve to refill) that the next holder must
//!   run (`crate::core::threads::lockq`).
//!
//! The uncontended acquisition is `compare_exchange(0, LOCKED)`: it succeeds only when the lock
//! is free *and* nothing is pending, so a holder that got the lock this way has nothing to
//! drain. Any other word goes to the out-of-line paths, which take the lock while keeping
//! `PENDING` set; the holder then clears it with [`VciLock::take_pending`] and drains.
//! Release is `fetch_sub(LOCKED)` (one `lock dec`): it clears `LOCKED` and keeps any other
//! bit; when it finds `PARKED` set, the out-of-line path wakes a parked thread. Clearing
//! `LOCKED` first is safe for the parked threads: a thread parks only while its validation,
//! run under the parking lot's bucket lock, finds `LOCKED | PARKED`, and the wake-up runs
//! under that bucket lock after the release, so a thread either sees the lock free and does
//! not park, or is in the queue when the wake-up looks (see [`VciLock::wake_after_release`]).
//!
//! **Ordering.** Every change of the word is a read-modify-write, so each release RMW (an
//! unlock, a [`VciLock::mark_pending`]) heads a release sequence that every later change
//! continues: an acquiring RMW that reads any later value synchronises with it. Hence (1) the
//! lock orders its critical sections like any mutex, and (2) a holder that clears `PENDING`
//! (an acquire RMW) sees every descriptor pushed before any marking it cleared. If marking A
//! happens before a holder's acquisition B, B's compare-and-swap reads A's value or a later
//! one (coherence): either `PENDING` is still set (B drains) or a holder cleared it after A,
//! saw A's work and ran or re-marked it before B's acquisition.
//!
//! Under `--cfg loom` the waiting thread yields instead of parking (loom models threads
//! itself); the word's protocol is checked by the loom models below.

#[cfg(loom)]
use loom::sync::atomic::{AtomicU8, Ordering};
#[cfg(not(loom))]
use std::sync::atomic::{AtomicU8, Ordering};

/// The lock is held.
const LOCKED: u8 = 1;
/// A thread is parked waiting for the lock (unused under loom, whose threads yield).
#[cfg_attr(loom, allow(dead_code))]
const PARKED: u8 = 2;
/// Work queued for the next holder (`lockq`).
const PENDING: u8 = 4;

/// A VCI's lock (see the module doc).
pub struct VciLock {
    word: AtomicU8,
}

impl Default for VciLock {
    fn default() -> Self {
        Self::new()
    }
}

impl VciLock {
    /// A free lock with nothing pending.
    #[cfg(not(loom))]
    pub const fn new() -> Self {
        VciLock {
            word: AtomicU8::new(0),
        }
    }

    /// A free lock with nothing pending.
    #[cfg(loom)]
    pub fn new() -> Self {
        VciLock {
            word: AtomicU8::new(0),
        }
    }

    /// Takes the lock if it is free and nothing is pending (one compare-and-swap): the caller
    /// then holds it with nothing to drain.
    #[inline(always)]
    pub fn try_lock_clean(&self) -> bool {
        self.word
            .compare_exchange(0, LOCKED, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    /// Takes the lock, waiting for it (spinning, then parked). Leaves a pending mark in place
    /// for [`VciLock::take_pending`].
    #[inline(always)]
    pub fn lock(&self) {
        if !self.try_lock_clean() {
            self.lock_slow();
        }
    }

    /// Takes the lock if it is free now, pending work or not.
    #[inline]
    pub fn try_lock(&self) -> bool {
        let mut state = self.word.load(Ordering::Relaxed);
        while state & LOCKED == 0 {
            match self.word.compare_exchange_weak(
                state,
                state | LOCKED,
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(x) => state = x,
            }
        }
        false
    }

    /// Releases the lock.
    ///
    /// # Safety
    /// The calling thread holds it.
    #[inline(always)]
    pub unsafe fn unlock(&self) {
        // SAFETY: forwarded.
        if !unsafe { self.release() } {
            self.wake_after_release();
        }
    }

    /// Releases the lock with one atomic decrement: whether that is all, else the caller
    /// must call [`VciLock::wake_after_release`] (a thread may be parked), as soon as it can
    /// and before it takes the lock again.
    ///
    /// # Safety
    /// The calling thread holds it.
    #[inline(always)]
    #[must_use]
    pub unsafe fn release(&self) -> bool {
        // Only this thread clears `LOCKED` (it holds the lock); other threads only set
        // `PARKED` and `PENDING` meanwhile, so the word is at least `LOCKED`.
        self.word.fetch_sub(LOCKED, Ordering::Release) == LOCKED
    }

    /// Marks work pending for the next holder (any thread, after it queued the work).
    #[inline]
    pub fn mark_pending(&self) {
        self.word.fetch_or(PENDING, Ordering::Release);
    }

    /// Clears the pending mark: whether it was set, in which case the work queued before
    /// every marking since the last clearing is visible to the caller.
    ///
    /// The caller holds the lock (only holders clear the mark).
    #[inline(always)]
    pub fn take_pending(&self) -> bool {
        self.word.load(Ordering::Relaxed) & PENDING != 0
            && self.word.fetch_and(!PENDING, Ordering::AcqRel) & PENDING != 0
    }

    /// Whether the lock is held (by any thread; a hint).
    pub fn is_locked(&self) -> bool {
        self.word.load(Ordering::Relaxed) & LOCKED != 0
    }

    #[cold]
    #[inline(never)]
    fn lock_slow(&self) {
        #[cfg(not(loom))]
        let mut spin = parking_lot_core::SpinWait::new();
        let mut state = self.word.load(Ordering::Relaxed);
        loop {
            if state & LOCKED == 0 {
                match self.word.compare_exchange_weak(
                    state,
                    state | LOCKED,
                    Ordering::Acquire,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => return,
                    Err(x) => state = x,
                }
                continue;
            }
            #[cfg(loom)]
            {
                loom::thread::yield_now();
                state = self.word.load(Ordering::Relaxed);
            }
            #[cfg(not(loom))]
            {
                if state & PARKED == 0 && spin.spin() {
                    state = self.word.load(Ordering::Relaxed);
                    continue;
                }
                if state & PARKED == 0 {
                    if let Err(x) = self.word.compare_exchange_weak(
                        state,
                        state | PARKED,
                        Ordering::Relaxed,
                        Ordering::Relaxed,
                    ) {
                        state = x;
                        continue;
                    }
                }
                let addr = self as *const VciLock as usize;
                let validate =
                    || self.word.load(Ordering::Relaxed) & (LOCKED | PARKED) == LOCKED | PARKED;
                // SAFETY: `addr` is this lock's address, used as the parking key by this
                // lock only; the callbacks neither panic nor call into parking_lot.
                unsafe {
                    parking_lot_core::park(
                        addr,
                        validate,
                        || {},
                        |_, _| {},
                        parking_lot_core::DEFAULT_PARK_TOKEN,
                        None,
                    );
                }
                spin.reset();
                state = self.word.load(Ordering::Relaxed);
            }
        }
    }

    /// The rest of a release that found more than `LOCKED` ([`VciLock::release`]): wakes a
    /// parked thread if there is one. Harmless when there is none (only `PENDING` was set).
    #[cold]
    #[inline(never)]
    pub fn wake_after_release(&self) {
        // Under loom waiting threads yield instead of parking: nothing to wake.
        #[cfg(not(loom))]
        {
            if self.word.load(Ordering::Relaxed) & PARKED == 0 {
                // Nobody parked, or a later holder's release wakes them (a thread that sets
                // `PARKED` from now on sees the lock held by someone else).
                return;
            }
            let addr = self as *const VciLock as usize;
            let callback = |result: parking_lot_core::UnparkResult| {
                // Under the bucket lock: with nobody left in the queue, a thread that set
                // `PARKED` and has not parked yet fails its validation and retries.
                if !result.have_more_threads {
                    self.word.fetch_and(!PARKED, Ordering::Relaxed);
                }
                parking_lot_core::DEFAULT_UNPARK_TOKEN
            };
            // SAFETY: `addr` is this lock's parking key; the callback neither panics nor
            // calls into parking_lot.
            unsafe {
                parking_lot_core::unpark_one(addr, callback);
            }
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn clean_acquisition_needs_a_free_lock_without_pending_work() {
        let l = VciLock::new();
        assert!(l.try_lock_clean());
        assert!(!l.try_lock_clean() && !l.try_lock(), "held");
        l.mark_pending();
        // SAFETY: held by this thread.
        unsafe { l.unlock() };
        assert!(!l.is_locked(), "released with the mark kept");
        assert!(!l.try_lock_clean(), "pending work");
        assert!(l.try_lock());
        assert!(l.take_pending());
        assert!(!l.take_pending(), "cleared");
        // SAFETY: held by this thread.
        unsafe { l.unlock() };
        assert!(l.try_lock_clean());
        // SAFETY: held by this thread.
        unsafe { l.unlock() };
        l.lock();
        assert!(l.is_locked());
        // SAFETY: held by this thread.
        unsafe { l.unlock() };
    }

    /// A release that finds more than `LOCKED` says so and keeps the other bits: a pending
    /// mark stays for the next holder; a parked waiter is woken by `wake_after_release`.
    #[test]
    fn release_reports_and_keeps_other_bits_and_the_wake_up_frees_a_parked_waiter() {
        let l = VciLock::new();
        assert!(l.try_lock_clean());
        assert!(
            // SAFETY: held by this thread.
            unsafe { l.release() },
            "nothing else set: one decrement is all"
        );
        assert!(l.try_lock_clean());
        l.mark_pending();
        // SAFETY: held by this thread.
        assert!(!unsafe { l.release() }, "pending work reported");
        assert!(
            !l.is_locked() && l.word.load(Ordering::Relaxed) == PENDING,
            "mark kept"
        );
        l.wake_after_release(); // nobody parked: nothing to do
        assert!(l.try_lock());
        assert!(l.take_pending());
        // SAFETY: held by this thread.
        unsafe { l.unlock() };

        let l = Arc::new(VciLock::new());
        assert!(l.try_lock_clean());
        let waiter = {
            let l = l.clone();
            std::thread::spawn(move || {
                l.lock();
                // SAFETY: held by this thread.
                unsafe { l.unlock() };
            })
        };
        while l.word.load(Ordering::Relaxed) & PARKED == 0 {
            std::thread::yield_now();
        }
        // SAFETY: held by this thread.
        assert!(!unsafe { l.release() }, "a parked waiter reported");
        l.wake_after_release();
        waiter.join().unwrap();
        assert_eq!(l.word.load(Ordering::Relaxed), 0, "released, nobody parked");
    }

    /// Threads that outnumber the cores contend (and park): every increment survives.
    #[test]
    fn excludes_under_contention() {
        struct Shared {
            lock: VciLock,
            n: std::cell::UnsafeCell<u64>,
        }
        // SAFETY: (test) `n` is touched under `lock` only.
        unsafe impl Sync for Shared {}
        let s = Arc::new(Shared {
            lock: VciLock::new(),
            n: std::cell::UnsafeCell::new(0),
        });
        let threads: Vec<_> = (0..6)
            .map(|t| {
                let s = s.clone();
                std::thread::spawn(move || {
                    for i in 0..20_000u32 {
                        if t % 2 == 0 && i % 7 == 0 {
                            s.lock.mark_pending();
                        }
                        s.lock.lock();
                        s.lock.take_pending();
                        // SAFETY: under the lock.
                        unsafe { *s.n.get() += 1 };
                        if i % 1000 == 0 {
                            std::thread::sleep(std::time::Duration::from_micros(50));
                        }
                        // SAFETY: held by this thread.
                        unsafe { s.lock.unlock() };
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        // SAFETY: every thread joined.
        assert_eq!(unsafe { *s.n.get() }, 6 * 20_000);
        assert!(!s.lock.is_locked());
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use loom::cell::UnsafeCell;
    use loom::sync::Arc;

    /// Two threads increment a counter under the lock (loom checks the accesses for races):
    /// mutual exclusion and release/acquire hand-over of the protected data.
    #[test]
    fn loom_vci_lock_excludes() {
        loom::model(|| {
            let l = Arc::new((VciLock::new(), UnsafeCell::new(0u32)));
            let ts: Vec<_> = (0..2)
                .map(|_| {
                    let l = l.clone();
                    loom::thread::spawn(move || {
                        l.0.lock();
                        // SAFETY: (model) under the lock.
                        l.1.with_mut(|n| unsafe { *n += 1 });
                        // SAFETY: (model) held by this thread.
                        unsafe { l.0.unlock() };
                    })
                })
                .collect();
            for t in ts {
                t.join().unwrap();
            }
            l.0.lock();
            // SAFETY: (model) under the lock.
            assert_eq!(l.1.with(|n| unsafe { *n }), 2);
        });
    }

    /// A producer writes work and marks it pending while another thread holds and releases
    /// the lock: the next holder either took the lock clean (then the work was already taken
    /// by an earlier holder) or sees the mark and the work.
    #[test]
    fn loom_pending_mark_publishes_the_work() {
        loom::model(|| {
            let l = Arc::new((VciLock::new(), UnsafeCell::new(0u32), UnsafeCell::new(0u32)));
            let producer = {
                let l = l.clone();
                loom::thread::spawn(move || {
                    // The work: written before the mark, read by the holder that clears it.
                    // SAFETY: (model) the producer's slot; read only after the mark.
                    l.2.with_mut(|w| unsafe { *w = 7 });
                    l.0.mark_pending();
                })
            };
            let holder = {
                let l = l.clone();
                loom::thread::spawn(move || {
                    if l.0.try_lock() {
                        if l.0.take_pending() {
                            // SAFETY: (model) published by the mark this clearing read.
                            let w = l.2.with(|w| unsafe { *w });
                            assert_eq!(w, 7);
                            // SAFETY: (model) under the lock.
                            l.1.with_mut(|n| unsafe { *n += 1 });
                        }
                        // SAFETY: (model) held by this thread.
                        unsafe { l.0.unlock() };
                    }
                })
            };
            producer.join().unwrap();
            holder.join().unwrap();
            // The producer finished: a clean acquisition now means the work was taken.
            let clean = l.0.try_lock_clean();
            if !clean {
                l.0.lock();
                if l.0.take_pending() {
                    // SAFETY: (model) as above.
                    assert_eq!(l.2.with(|w| unsafe { *w }), 7);
                    // SAFETY: (model) under the lock.
                    l.1.with_mut(|n| unsafe { *n += 1 });
                }
            }
            // SAFETY: (model) under the lock.
            assert_eq!(l.1.with(|n| unsafe { *n }), 1, "taken once");
        });
    }
}
