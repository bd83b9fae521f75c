//! The leaf fast paths' ways into the VCIs (`crate::core::p2p::leaf`), kept in one static so that
//! one address reaches them all:
//! - **direct**: VCI 0's state while MPI runs below `MPI_THREAD_MULTIPLE` (runtime state
//!   `READY`) on a pool of one VCI; one load and no lock;
//! - **locked**: while the runtime is `READY_LOCKED` (the lock-based thread models), the VCI
//!   slot (lock and state) of each predefined communicator and of each VCI index, so that a
//!   leaf finds the slot of `MPI_COMM_WORLD`, `MPI_COMM_SELF` or of a request's VCI with one
//!   load and takes its lock with one compare-and-swap.
//!
//! One word tells which way is open ([`LeafWays::way`]): null (closed), [`LOCKED_OPEN`], or
//! VCI 0's state (direct). Once the locked way has been opened its tables hold a slot in
//! every entry (slot 0 where no other fits: the slot's communicator cache or request table
//! then declines) and are never emptied (the pool is never freed), so a leaf that found the
//! word open needs no null test.

use super::{comm_hint, pool, Slot, VciState, CONTEXTS_PER_ID, MAX_VCIS};
use crate::mpi_abi::consts::MPI_COMM_NULL;
use std::sync::atomic::{AtomicPtr, Ordering};

/// Number of predefined communicator handles from `MPI_COMM_NULL` on that the locked way
/// maps (`MPI_COMM_NULL`, `MPI_COMM_WORLD`, `MPI_COMM_SELF`, and one unused entry that keeps
/// the bound a power of two).
const PREDEFINED: usize = 4;

/// Which way [`set`] opens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeafWay {
    /// Neither.
    Closed,
    /// The direct way (runtime `READY`, one VCI).
    Direct,
    /// The locked way (runtime `READY_LOCKED`).
    Locked,
}

/// The address [`LeafWays`]'s word holds while the locked way is open: negative as a signed
/// number (no user-space address is), so that one test of the word's sign tells the direct
/// way from the others and the same flags tell the locked way from the closed one.
const LOCKED_OPEN: usize = usize::MAX;

/// Which way in is open, as a leaf finds it: the word of [`LeafWays`] as loaded once.
#[derive(Clone, Copy)]
pub struct Way(*mut VciState);

impl Way {
    /// VCI 0's state if the direct way is open.
    ///
    /// # Safety
    /// The caller is a C entry point (not inside the slow path) and drops the reference
    /// before it returns. While the direct way is open, MPI runs below MULTIPLE: this is the
    /// only thread in MPI, so nothing else reaches the state meanwhile.
    #[inline(always)]
    pub unsafe fn direct<'a>(self) -> Option<&'a mut VciState> {
        if self.0.addr() as isize > 0 {
            // SAFETY: VCI 0's state in the leaked pool (never freed), which only this thread
            // reaches now (the caller's contract).
            Some(unsafe { &mut *self.0 })
        } else {
            None
        }
    }

    /// Whether the locked way is open ([`LeafWays::locked_for_comm`],
    /// [`LeafWays::locked_for_vci`]).
    #[inline(always)]
    pub fn locked(self) -> bool {
        // Below zero: the only such word is `LOCKED_OPEN`.
        (self.0.addr() as isize) < 0
    }
}

/// The ways in (see the module doc).
pub struct LeafWays {
    /// Null, [`LOCKED_OPEN`] or VCI 0's state (see the module doc).
    word: AtomicPtr<VciState>,
    /// The slot of predefined communicator handle `MPI_COMM_NULL + k` (slot 0 for
    /// `MPI_COMM_NULL` and the spare entry); null until the locked way first opens.
    predefined: [AtomicPtr<Slot>; PREDEFINED],
    /// The slot of each VCI of the pool (slot 0 beyond it); null until the locked way first
    /// opens.
    by_vci: [AtomicPtr<Slot>; MAX_VCIS],
}

static WAYS: LeafWays = LeafWays {
    word: AtomicPtr::new(std::ptr::null_mut()),
    predefined: [const { AtomicPtr::new(std::ptr::null_mut()) }; PREDEFINED],
    by_vci: [const { AtomicPtr::new(std::ptr::null_mut()) }; MAX_VCIS],
};

/// The ways in.
#[inline(always)]
pub fn ways() -> &'static LeafWays {
    &WAYS
}

/// Opens `way` (closing the other) or closes both. The runtime opens the direct way once it
/// is `READY` on a pool of one VCI and the locked way once it is `READY_LOCKED`, and closes
/// them before it leaves that state. Predefined communicators are never pinned to a VCI
/// (only streams' are), so their slots stay right while the way is open.
pub fn set(way: LeafWay) {
    let Some(pool) = pool() else {
        WAYS.word.store(std::ptr::null_mut(), Ordering::Release);
        return;
    };
    let word = match way {
        LeafWay::Direct if pool.len() == 1 => pool.slots[0].state.get(),
        LeafWay::Locked => {
            // The tables first, then the word that makes them reachable.
            let slot = |v: usize| {
                let v = if v < pool.len() { v } else { 0 };
                &pool.slots[v] as *const Slot as *mut Slot
            };
            for (v, s) in WAYS.by_vci.iter().enumerate() {
                s.store(slot(v), Ordering::Relaxed);
            }
            for (k, s) in WAYS.predefined.iter().enumerate() {
                // MPI_COMM_WORLD has context id 0, MPI_COMM_SELF id 1; NULL, spare: slot 0.
                let v = match k {
                    1 | 2 => pool.vci_of_ctx((k as u32 - 1) * CONTEXTS_PER_ID),
                    _ => 0,
                };
                s.store(slot(v), Ordering::Relaxed);
            }
            std::ptr::without_provenance_mut(LOCKED_OPEN)
        }
        _ => std::ptr::null_mut(),
    };
    WAYS.word.store(word, Ordering::Release);
}

impl LeafWays {
    /// Which way is open (one load).
    #[inline(always)]
    pub fn way(&self) -> Way {
        Way(self.word.load(Ordering::Acquire))
    }

    /// The slot of communicator handle `comm`'s VCI when known without a call (predefined
    /// communicators, and others by their hint; not those spread over the VCIs). The slot's
    /// communicator cache still validates `comm`. Only after [`LeafWays::way`] found
    /// [`Way::locked`].
    #[inline(always)]
    pub fn locked_for_comm(&self, comm: usize) -> Option<&'static LeafSlot> {
        let k = comm.wrapping_sub(MPI_COMM_NULL);
        let slot = if k < PREDEFINED {
            self.predefined[k].load(Ordering::Relaxed)
        } else {
            match comm_hint(comm) {
                Some(v) if v < MAX_VCIS => self.by_vci[v].load(Ordering::Relaxed),
                _ => return None,
            }
        };
        // SAFETY: the locked way has been opened (the caller found it open, with an acquire
        // load of the word stored after the tables), so the entry is a slot of the leaked
        // pool (never freed).
        Some(LeafSlot::new(unsafe { filled(slot) }))
    }

    /// The slot of VCI `v` (`< MAX_VCIS`; slot 0 if `v` is not a VCI of the pool: its
    /// request table then declines). Only after [`LeafWays::way`] found [`Way::locked`].
    #[inline(always)]
    pub fn locked_for_vci(&self, v: usize) -> Option<&'static LeafSlot> {
        let slot = self.by_vci.get(v)?.load(Ordering::Relaxed);
        // SAFETY: as in `locked_for_comm`.
        Some(LeafSlot::new(unsafe { filled(slot) }))
    }
}

/// The slot of a table entry of the opened locked way.
///
/// # Safety
/// `slot` was loaded from a table after the locked way was opened (then it points to a
/// slot of the leaked pool, never freed).
#[inline(always)]
unsafe fn filled(slot: *mut Slot) -> &'static Slot {
    // SAFETY: the caller's contract; telling the compiler so spares the leaves a null test.
    unsafe {
        std::hint::assert_unchecked(!slot.is_null());
        &*slot
    }
}

/// A VCI's slot as the locked way hands it to a leaf: enter (take its lock if free and
/// nothing is pending), use the state, leave.
#[repr(transparent)]
pub struct LeafSlot(Slot);

impl LeafSlot {
    #[inline(always)]
    fn new(slot: &Slot) -> &LeafSlot {
        // SAFETY: `LeafSlot` is a transparent wrapper of `Slot`.
        unsafe { &*(slot as *const Slot as *const LeafSlot) }
    }

    /// This slot's VCI as it sits in request indices (`vci << RID_VCI_SHIFT`).
    #[inline(always)]
    pub fn rid_base(&self) -> u32 {
        self.0.rid_base
    }

    /// The VCI's state under its lock, taken with one compare-and-swap that also finds no
    /// work pending for its holder; `None` (without waiting) when that fails. Leave with
    /// [`LeafSlot::leave`].
    ///
    /// # Safety
    /// The caller is not inside the slow path and uses the state only until it calls
    /// [`LeafSlot::leave`].
    #[inline(always)]
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn enter(&self) -> Option<&mut VciState> {
        if !self.0.lock.try_lock_clean() {
            return None;
        }
        // SAFETY: the lock is held; the slow path, which reaches VCIs otherwise, holds every
        // slot lock when it does; the caller drops the reference before it leaves.
        Some(unsafe { &mut *self.0.state.get() })
    }

    /// Leaves the VCI entered by [`LeafSlot::enter`] (releases its lock, and wakes a thread
    /// parked on it if needed).
    ///
    /// # Safety
    /// `enter` succeeded on this thread and its state is no longer used.
    #[inline(always)]
    pub unsafe fn leave(&self) {
        // SAFETY: this thread took the lock (caller's contract).
        unsafe { self.0.lock.unlock() }
    }

    /// Leaves the VCI entered by [`LeafSlot::enter`] with one atomic decrement: whether that
    /// is all, else the caller must call [`LeafSlot::wake`] next.
    ///
    /// # Safety
    /// `enter` succeeded on this thread and its state is no longer used.
    #[inline(always)]
    #[must_use]
    pub unsafe fn release(&self) -> bool {
        // SAFETY: this thread took the lock (caller's contract).
        unsafe { self.0.lock.release() }
    }

    /// The rest of a [`LeafSlot::release`] that returned false: wakes a thread parked on the
    /// lock, if any.
    #[inline(always)]
    pub fn wake(&self) {
        self.0.lock.wake_after_release();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one word tells the three ways apart: null, `LOCKED_OPEN`, a state's address.
    #[test]
    fn the_word_tells_the_ways_apart() {
        let closed = Way(std::ptr::null_mut());
        // SAFETY: (test) no state is handed out for these words.
        assert!(unsafe { closed.direct() }.is_none() && !closed.locked());
        let locked = Way(std::ptr::without_provenance_mut(LOCKED_OPEN));
        // SAFETY: (test) as above.
        assert!(unsafe { locked.direct() }.is_none() && locked.locked());
        let mut state = VciState {
            reqs: crate::core::objects::slab::Slab::tagged(
                crate::core::objects::slab::kind::REQUEST,
                0,
            ),
            matcher: Default::default(),
            comms: Vec::new(),
            peer_tables: Vec::new(),
        };
        let direct = Way(&mut state);
        assert!(!direct.locked());
        // SAFETY: (test) `state` lives on this stack and nothing else refers to it.
        let got = unsafe { direct.direct() }.map(|s| s as *mut VciState as usize);
        assert_eq!(got, Some(&state as *const VciState as usize));
    }
}
