//! Ownership of the node transport's lanes and their access from the fast paths.
//!
//! The node transport has one or more *lanes*: independent engines (segment, cells, queues,
//! fastboxes, per-pair sequence numbers), all ranks of the node agreeing on their number.
//! Every message of a context id travels on lane `context id % lanes` on both sides, so MPI's
//! per-communicator order holds within a lane and threads working on communicators of
//! different lanes never share a queue, a cell pool or a lock.
//!
//! The runtime owns each lane through an [`EngineBox`] and reaches it from the slow path
//! (which, under `MPI_THREAD_MULTIPLE`, holds every VCI lock). The fast paths of
//! `crate::core::p2p::fastpath` reach a lane through [`with_engine`] while holding one VCI lock:
//! that excludes the slow path, and when the process has several VCIs the lane's own lock
//! (taken only by fast paths) excludes fast paths on other VCIs. Below
//! `MPI_THREAD_MULTIPLE` one thread calls MPI at a time and no lock is taken.

use super::ShmEngine;
use parking_lot::lock_api::RawMutex as _;
use parking_lot::RawMutex;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

/// Most lanes.
pub const MAX_LANES: usize = 16;

/// One lane as the fast paths see it.
#[repr(align(128))]
struct LaneSlot {
    /// The engine, null when there is none (alone on the node, or finalized).
    engine: AtomicPtr<ShmEngine>,
    /// Serialises fast paths of different VCIs on the lane.
    lock: RawMutex,
}

static LANES: [LaneSlot; MAX_LANES] = [const {
    LaneSlot {
        engine: AtomicPtr::new(std::ptr::null_mut()),
        lock: RawMutex::INIT,
    }
}; MAX_LANES];
/// Number of lanes in use (1 until set).
static LANE_COUNT: AtomicUsize = AtomicUsize::new(1);

/// Sets the number of lanes (at init, before any traffic).
pub fn set_lane_count(n: usize) {
    LANE_COUNT.store(n.clamp(1, MAX_LANES), Ordering::Relaxed);
}

/// The number of lanes in use (1 before `MPI_Init` chose it).
pub fn lane_count() -> usize {
    LANE_COUNT.load(Ordering::Relaxed)
}

/// The lane of the messages of wire context `ctx`.
#[inline(always)]
pub fn lane_of(ctx: u32) -> usize {
    match LANE_COUNT.load(Ordering::Relaxed) {
        1 => 0,
        n => (ctx / crate::transport::wire::CONTEXTS_PER_ID) as usize % n,
    }
}

/// The runtime's handle to one lane of the node transport: owns its engine (like a `Box`)
/// and publishes it to the fast paths until dropped.
pub struct EngineBox(NonNull<ShmEngine>, usize);

// SAFETY: the engine is `Send` (see `ShmEngine`); the box owns it.
unsafe impl Send for EngineBox {}

impl EngineBox {
    /// Takes ownership of `engine`, lane `lane`, and publishes it to the fast paths.
    pub fn new(engine: ShmEngine, lane: usize) -> Self {
        let p = NonNull::from(Box::leak(Box::new(engine)));
        LANES[lane].engine.store(p.as_ptr(), Ordering::Release);
        EngineBox(p, lane)
    }
}

impl Deref for EngineBox {
    type Target = ShmEngine;
    #[inline(always)]
    fn deref(&self) -> &ShmEngine {
        // SAFETY: the box owns a live engine; fast paths reach it only while the slow path,
        // the one holder of this box, cannot run (module doc).
        unsafe { self.0.as_ref() }
    }
}

impl DerefMut for EngineBox {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut ShmEngine {
        // SAFETY: as in `deref`; `&mut self` excludes other references through the box.
        unsafe { self.0.as_mut() }
    }
}

impl Drop for EngineBox {
    fn drop(&mut self) {
        let _ = LANES[self.1].engine.compare_exchange(
            self.0.as_ptr(),
            std::ptr::null_mut(),
            Ordering::AcqRel,
            Ordering::Acquire,
        );
        // SAFETY: created by `Box::leak` in `new`; unpublished above, and finalization runs
        // with no other thread inside MPI.
        drop(unsafe { Box::from_raw(self.0.as_ptr()) });
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

/// Runs `f` on the engine of lane `lane`, if there is one. `serialize`: take the lane's
/// fast-path lock (the process has several VCIs and runs at `MPI_THREAD_MULTIPLE`).
///
/// # Safety
/// The caller holds a VCI lock (`MPI_THREAD_MULTIPLE`) or is the only thread inside MPI, and
/// is not inside the slow path.
#[inline(always)]
pub unsafe fn with_engine<R>(
    lane: usize,
    serialize: bool,
    f: impl FnOnce(&mut ShmEngine) -> R,
) -> Option<R> {
    let slot = LANES.get(lane)?;
    let p = slot.engine.load(Ordering::Acquire);
    if p.is_null() {
        return None;
    }
    let _unlock = serialize.then(|| {
        slot.lock.lock();
        Unlock(&slot.lock)
    });
    // SAFETY: the slow path cannot run (the caller's VCI lock or single-threaded access), and
    // other fast paths are excluded by the lane's lock or by the caller's VCI lock when there is
    // one VCI; the engine lives until its box is dropped at finalization, which runs alone.
    Some(f(unsafe { &mut *p }))
}
