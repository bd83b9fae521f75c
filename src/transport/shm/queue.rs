//! A multi-producer, single-consumer FIFO of cells linked by index, living in shared memory.
//!
//! This is the Nemesis-style queue: producers `swap` the tail and then link the previous tail
//! to the new cell (or publish it as the head when the queue was empty); the single consumer
//! follows the links. Cells are named by `u32` indices (pointers differ between processes), and
//! each cell carries its own `next` link, reached through [`Links`].
//!
//! Memory orderings (checked by the loom model in this file's tests):
//! - a producer writes the cell's contents, then `next = NIL` (relaxed), then `swap(tail)`
//!   (AcqRel) and finally a *release* store of the link (`prev.next` or `head`); the consumer's
//!   *acquire* load of that link makes the contents visible;
//! - only the consumer moves `tail` back to NIL (CAS, AcqRel), and it clears `head` *before*
//!   that CAS, so a producer that later finds the tail NIL and stores `head` is ordered after
//!   the consumer's clearing store;
//! - when a producer has swapped the tail but not yet linked (it may be descheduled there), the
//!   consumer does not spin: it restores `head` and reports the queue empty for now.

/// The atomic type of queue links (loom's under `--cfg loom`, for model checking).
#[cfg(loom)]
pub use loom::sync::atomic::AtomicU32;
#[cfg(loom)]
use loom::sync::atomic::Ordering;
/// The atomic type of queue links (loom's under `--cfg loom`, for model checking).
#[cfg(not(loom))]
pub use std::sync::atomic::AtomicU32;
#[cfg(not(loom))]
use std::sync::atomic::Ordering;

/// The "no cell" index.
pub const NIL: u32 = u32::MAX;

/// Gives access to the `next` link of each cell.
pub trait Links {
    /// The link field of cell `cell`.
    fn link(&self, cell: u32) -> &AtomicU32;
}

/// Head and tail of one queue, each on its own cache line.
#[repr(C, align(64))]
pub struct MpscQueue {
    head: AtomicU32,
    _pad: [u8; 60],
    tail: AtomicU32,
    _pad2: [u8; 60],
}

impl Default for MpscQueue {
    fn default() -> Self {
        Self::new()
    }
}

impl MpscQueue {
    /// An empty queue.
    pub fn new() -> Self {
        MpscQueue {
            head: AtomicU32::new(NIL),
            _pad: [0; 60],
            tail: AtomicU32::new(NIL),
            _pad2: [0; 60],
        }
    }

    /// Appends `cell` (any thread or process).
    #[inline]
    pub fn push<L: Links + ?Sized>(&self, links: &L, cell: u32) {
        links.link(cell).store(NIL, Ordering::Relaxed);
        let prev = self.tail.swap(cell, Ordering::AcqRel);
        if prev == NIL {
            self.head.store(cell, Ordering::Release);
        } else {
            links.link(prev).store(cell, Ordering::Release);
        }
    }

    /// Whether the queue looks empty (a hint; the consumer's fast check before `pop`).
    #[inline]
    pub fn is_empty_hint(&self) -> bool {
        self.head.load(Ordering::Relaxed) == NIL
    }

    /// Removes the oldest cell. Only one thread (the owner) may call this.
    #[inline]
    pub fn pop<L: Links + ?Sized>(&self, links: &L) -> Option<u32> {
        let h = self.head.load(Ordering::Acquire);
        if h == NIL {
            return None;
        }
        let next = links.link(h).load(Ordering::Acquire);
        if next != NIL {
            self.head.store(next, Ordering::Relaxed);
            return Some(h);
        }
        // `h` looks like the last cell: try to empty the queue.
        self.head.store(NIL, Ordering::Relaxed);
        if self
            .tail
            .compare_exchange(h, NIL, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            return Some(h);
        }
        // A producer has swapped the tail after `h` but may not have linked it yet.
        let next = links.link(h).load(Ordering::Acquire);
        if next != NIL {
            self.head.store(next, Ordering::Relaxed);
            Some(h)
        } else {
            self.head.store(h, Ordering::Relaxed);
            None
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    struct Cells(Vec<AtomicU32>);
    impl Links for Cells {
        fn link(&self, cell: u32) -> &AtomicU32 {
            &self.0[cell as usize]
        }
    }

    #[test]
    fn fifo_single_thread() {
        let cells = Cells((0..8).map(|_| AtomicU32::new(NIL)).collect());
        let q = MpscQueue::new();
        assert_eq!(q.pop(&cells), None);
        for i in [3, 1, 7, 0] {
            q.push(&cells, i);
        }
        let got: Vec<u32> = std::iter::from_fn(|| q.pop(&cells)).collect();
        assert_eq!(got, vec![3, 1, 7, 0]);
        q.push(&cells, 5);
        assert_eq!(q.pop(&cells), Some(5));
        assert_eq!(q.pop(&cells), None);
    }

    #[test]
    fn threads_keep_per_producer_order() {
        use std::sync::Arc;
        const P: u32 = 4;
        const N: u32 = 20_000;
        let cells = Arc::new(Cells((0..P * N).map(|_| AtomicU32::new(NIL)).collect()));
        let q = Arc::new(MpscQueue::new());
        let handles: Vec<_> = (0..P)
            .map(|p| {
                let (cells, q) = (cells.clone(), q.clone());
                std::thread::spawn(move || {
                    for i in 0..N {
                        q.push(&*cells, p * N + i);
                    }
                })
            })
            .collect();
        let mut last = vec![None::<u32>; P as usize];
        let mut got = 0;
        while got < P * N {
            if let Some(c) = q.pop(&*cells) {
                let (p, i) = (c / N, c % N);
                assert!(
                    last[p as usize].is_none_or(|l| l + 1 == i),
                    "producer {p}: {i} after {:?}",
                    last[p as usize]
                );
                last[p as usize] = Some(i);
                got += 1;
            } else {
                std::hint::spin_loop();
            }
        }
        for h in handles {
            h.join().unwrap();
        }
        assert_eq!(q.pop(&*cells), None);
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use loom::sync::Arc;

    struct Cells(Vec<AtomicU32>);
    impl Links for Cells {
        fn link(&self, cell: u32) -> &AtomicU32 {
            &self.0[cell as usize]
        }
    }

    /// Two producers push two cells each while the consumer pops: every cell arrives exactly
    /// once and each producer's cells arrive in push order, under every interleaving.
    #[test]
    fn mpsc_two_producers() {
        let mut model = loom::model::Builder::new();
        // Bounded preemptions keep the state space tractable (and cover the known races of
        // this queue, which need at most two preemptions to show).
        model.preemption_bound = Some(3);
        model.check(|| {
            let cells = Arc::new(Cells((0..4).map(|_| AtomicU32::new(NIL)).collect()));
            let q = Arc::new(MpscQueue::new());
            let ps: Vec<_> = (0..2u32)
                .map(|p| {
                    let (cells, q) = (cells.clone(), q.clone());
                    loom::thread::spawn(move || {
                        q.push(&*cells, 2 * p);
                        q.push(&*cells, 2 * p + 1);
                    })
                })
                .collect();
            let mut seen = Vec::new();
            let mut spins = 0;
            while seen.len() < 4 && spins < 2 {
                match q.pop(&*cells) {
                    Some(c) => seen.push(c),
                    None => {
                        spins += 1;
                        loom::thread::yield_now();
                    }
                }
            }
            for p in ps {
                p.join().unwrap();
            }
            while let Some(c) = q.pop(&*cells) {
                seen.push(c);
            }
            assert_eq!(seen.len(), 4, "lost or duplicated: {seen:?}");
            for p in 0..2 {
                let order: Vec<u32> = seen.iter().copied().filter(|c| c / 2 == p).collect();
                assert_eq!(order, vec![2 * p, 2 * p + 1]);
            }
        });
    }
}
