//! Lanes: independent engines of one transport, and their access from the fast paths.
//!
//! A transport may run several *lanes*: whole engines of their own (the node transport's
//! segments and queues, the network transport's libfabric endpoints and completion queues),
//! every rank of the job agreeing on their number. Every message of a context id travels on
//! lane `context id % lanes` on both sides, so MPI's per-communicator order holds within a
//! lane, and threads working on communicators of different lanes share no queue, endpoint
//! or lock.
//!
//! The runtime owns each lane through a [`LaneBox`] and reaches it from the slow path (which,
//! under `MPI_THREAD_MULTIPLE`, holds every VCI lock). The fast paths reach a lane through
//! [`LaneTable::with`] while holding one VCI lock: that excludes the slow path, and when the
//! process has several VCIs the lane's own lock (taken only by fast paths) excludes fast
//! paths on other VCIs. Below `MPI_THREAD_MULTIPLE` one thread calls MPI at a time and no
//! lock is taken.

use parking_lot::lock_api::RawMutex as _;
use parking_lot::RawMutex;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

/// Most lanes of one transport.
pub const MAX_LANES: usize = 16;

/// One lane as the fast paths see it.
#[repr(align(128))]
struct LaneSlot<E> {
    /// The engine, null when there is none (no such peers, or finalized).
    engine: AtomicPtr<E>,
    /// Serialises fast paths of different VCIs on the lane.
    lock: RawMutex,
}

/// The lanes of one transport (a `static` per transport).
pub struct LaneTable<E> {
    slots: [LaneSlot<E>; MAX_LANES],
    /// Number of lanes in use (1 until set).
    count: AtomicUsize,
}

impl<E> Default for LaneTable<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> LaneTable<E> {
    /// A table with no engine and one lane.
    pub const fn new() -> Self {
        LaneTable {
            slots: [const {
                LaneSlot {
                    engine: AtomicPtr::new(std::ptr::null_mut()),
                    lock: RawMutex::INIT,
                }
            }; MAX_LANES],
            count: AtomicUsize::new(1),
        }
    }

    /// Sets the number of lanes (at init, before any traffic).
    pub fn set_count(&self, n: usize) {
        self.count.store(n.clamp(1, MAX_LANES), Ordering::Relaxed);
    }

    /// The number of lanes in use (1 before `MPI_Init` chose it).
    pub fn count(&self) -> usize {
        self.count.load(Ordering::Relaxed)
    }

    /// The lane of the messages of wire context `ctx`.
    #[inline(always)]
    pub fn lane_of(&self, ctx: u32) -> usize {
        match self.count.load(Ordering::Relaxed) {
            1 => 0,
            n => (ctx / crate::transport::wire::CONTEXTS_PER_ID) as usize % n,
        }
    }

    /// Runs `f` on the engine of lane `lane`, if there is one. `serialize`: take the lane's
    /// fast-path lock (the process has several VCIs and runs at `MPI_THREAD_MULTIPLE`).
    ///
    /// # Safety
    /// The caller holds a VCI lock (`MPI_THREAD_MULTIPLE`) or is the only thread inside MPI,
    /// and is not inside the slow path.
    #[inline(always)]
    pub unsafe fn with<R>(
        &'static self,
        lane: usize,
        serialize: bool,
        f: impl FnOnce(&mut E) -> R,
    ) -> Option<R> {
        let slot = self.slots.get(lane)?;
        let p = slot.engine.load(Ordering::Acquire);
        if p.is_null() {
            return None;
        }
        let _unlock = serialize.then(|| {
            slot.lock.lock();
            Unlock(&slot.lock)
        });
        // SAFETY: the slow path cannot run (the caller's VCI lock or single-threaded access),
        // and other fast paths are excluded by the lane's lock or by the caller's VCI lock
        // when there is one VCI; the engine lives until its box is dropped at finalization,
        // which runs alone.
        Some(f(unsafe { &mut *p }))
    }
}

/// The runtime's handle to one lane of a transport: owns its engine (like a `Box`) and
/// publishes it to the fast paths until dropped.
pub struct LaneBox<E: 'static> {
    engine: NonNull<E>,
    lane: usize,
    table: &'static LaneTable<E>,
}

// SAFETY: the engine is `Send`; the box owns it.
unsafe impl<E: Send> Send for LaneBox<E> {}

impl<E> LaneBox<E> {
    /// Takes ownership of `engine`, lane `lane` of `table`, and publishes it to the fast
    /// paths.
    pub fn new(table: &'static LaneTable<E>, engine: E, lane: usize) -> Self {
        let p = NonNull::from(Box::leak(Box::new(engine)));
        table.slots[lane]
            .engine
            .store(p.as_ptr(), Ordering::Release);
        LaneBox {
            engine: p,
            lane,
            table,
        }
    }
}

impl<E> Deref for LaneBox<E> {
    type Target = E;
    #[inline(always)]
    fn deref(&self) -> &E {
        // SAFETY: the box owns a live engine; fast paths reach it only while the slow path,
        // the one holder of this box, cannot run (module doc).
        unsafe { self.engine.as_ref() }
    }
}

impl<E> DerefMut for LaneBox<E> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut E {
        // SAFETY: as in `deref`; `&mut self` excludes other references through the box.
        unsafe { self.engine.as_mut() }
    }
}

impl<E> Drop for LaneBox<E> {
    fn drop(&mut self) {
        let _ = self.table.slots[self.lane].engine.compare_exchange(
            self.engine.as_ptr(),
            std::ptr::null_mut(),
            Ordering::AcqRel,
            Ordering::Acquire,
        );
        // SAFETY: created by `Box::leak` in `new`; unpublished above, and finalization runs
        // with no other thread inside MPI.
        drop(unsafe { Box::from_raw(self.engine.as_ptr()) });
    }
}

struct Unlock(&'static RawMutex);
impl Drop for Unlock {
    #[inline(always)]
    fn drop(&mut self) {
        // SAFETY: constructed right after `self.0.lock()` on this thread.
        unsafe { self.0.unlock() };
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    static TABLE: LaneTable<u64> = LaneTable::new();

    /// Swaps `v` into lane `lane`'s engine, if there is one, returning what it held.
    fn swap(lane: usize, v: u64) -> Option<u64> {
        // SAFETY: this test is the table's only user, one thread at a time.
        unsafe { TABLE.with(lane, true, |e| std::mem::replace(e, v)) }
    }

    #[test]
    fn a_box_publishes_its_engine_until_dropped() {
        TABLE.set_count(3);
        assert_eq!(TABLE.count(), 3);
        let per_id = crate::transport::wire::CONTEXTS_PER_ID;
        assert_eq!(TABLE.lane_of(4 * per_id + 1), 1);
        assert_eq!(swap(2, 1), None);
        let mut b = LaneBox::new(&TABLE, 7u64, 2);
        assert_eq!(swap(2, 8), Some(7));
        *b += 1;
        assert_eq!(*b, 9);
        drop(b);
        assert_eq!(swap(2, 1), None);
        assert_eq!(swap(MAX_LANES, 1), None);
        TABLE.set_count(0);
        assert_eq!(TABLE.count(), 1);
        assert_eq!(TABLE.lane_of(4 * per_id), 0);
    }
}
