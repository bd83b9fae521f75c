//! Ownership of the node transport and its access from the fast paths.
//!
//! The runtime owns the engine through an [`EngineBox`] and reaches it from the slow path
//! (which, under `MPI_THREAD_MULTIPLE`, holds every VCI lock). The fast paths of
//! `crate::core::fastpath` reach the same engine through [`with_engine`] while holding one
//! VCI lock: that excludes the slow path, and when the process has several VCIs the engine's
//! own lock (taken only by fast paths) excludes fast paths on other VCIs. Below
//! `MPI_THREAD_MULTIPLE` one thread calls MPI at a time and no lock is taken.

use super::ShmEngine;
use parking_lot::lock_api::RawMutex as _;
use parking_lot::RawMutex;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicPtr, Ordering};

/// The engine of this process, null when there is none (alone on the node, or finalized).
static ENGINE: AtomicPtr<ShmEngine> = AtomicPtr::new(std::ptr::null_mut());
/// Serialises fast paths of different VCIs on the engine.
static FAST_LOCK: RawMutex = RawMutex::INIT;

/// The runtime's handle to the node transport: owns the engine (like a `Box`) and publishes
/// it to the fast paths until dropped.
pub struct EngineBox(NonNull<ShmEngine>);

// SAFETY: the engine is `Send` (see `ShmEngine`); the box owns it.
unsafe impl Send for EngineBox {}

impl EngineBox {
    /// Takes ownership of `engine` and publishes it to the fast paths.
    pub fn new(engine: ShmEngine) -> Self {
        let p = NonNull::from(Box::leak(Box::new(engine)));
        ENGINE.store(p.as_ptr(), Ordering::Release);
        EngineBox(p)
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
        let _ = ENGINE.compare_exchange(
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

struct Unlock;
impl Drop for Unlock {
    #[inline(always)]
    fn drop(&mut self) {
        // SAFETY: constructed right after `FAST_LOCK.lock()` on this thread.
        unsafe { FAST_LOCK.unlock() };
    }
}

/// Runs `f` on the engine, if there is one. `serialize`: take the engine's fast-path lock
/// (the process has several VCIs and runs at `MPI_THREAD_MULTIPLE`).
///
/// # Safety
/// The caller holds a VCI lock (`MPI_THREAD_MULTIPLE`) or is the only thread inside MPI, and
/// is not inside the slow path.
#[inline(always)]
pub unsafe fn with_engine<R>(serialize: bool, f: impl FnOnce(&mut ShmEngine) -> R) -> Option<R> {
    let p = ENGINE.load(Ordering::Acquire);
    if p.is_null() {
        return None;
    }
    let _unlock = serialize.then(|| {
        FAST_LOCK.lock();
        Unlock
    });
    // SAFETY: the slow path cannot run (the caller's VCI lock or single-threaded access), and
    // other fast paths are excluded by `FAST_LOCK` or by the caller's VCI lock when there is
    // one VCI; the engine lives until its box is dropped at finalization, which runs alone.
    Some(f(unsafe { &mut *p }))
}
