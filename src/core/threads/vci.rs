//! Virtual communication interfaces (VCIs): the per-VCI half of the runtime.
//!
//! Each VCI owns a request table, the matching queues of the communicators mapped to it and a
//! cache of those communicators' point-to-point facts, behind its own lock (cache-line
//! aligned, so VCIs used by different threads share no line). A communicator maps to VCI
//! `(context id) % n`; context ids are agreed by all ranks, so communicator-per-thread codes
//! spread over the VCIs with no settings, as the blueprint's §3 asks.
//!
//! Two kinds of access, which never overlap:
//! - the **slow path** ([`crate::core::runtime::with`]) owns the whole runtime: under
//!   `MPI_THREAD_MULTIPLE` it holds the global lock *and every VCI lock* (taken in index
//!   order), below MULTIPLE the application guarantees a single caller. It reaches the VCIs
//!   through the [`Requests`] and [`Matchers`] views the runtime holds;
//! - a **fast path** ([`VciGuard`], [`with_vci`]) holds only its VCI's lock (no lock below MULTIPLE) and
//!   touches nothing but that VCI: operations on one communicator from different threads on
//!   different VCIs run in parallel. Fast paths handle the common simple cases (see
//!   `crate::core::p2p::fastpath`) and leave everything else to the slow path.
//!
//! Request indices (`rid`) carry their VCI: `rid = vci << RID_VCI_SHIFT | index`; request
//! handles carry it in their slab tag.

use crate::core::diag::stats;
use crate::core::objects::comm::CONTEXTS_PER_ID;
use crate::core::objects::slab::{kind, Slab};
use crate::core::p2p::matching::Matcher;
use crate::core::p2p::request::Request;
use crate::core::threads::csync::{Combining, Resource};
use crate::core::threads::vci_lock::VciLock;
use crate::platform::config::{self, Knob};
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicPtr, AtomicU32, AtomicU8, Ordering};

mod leaf_ways;
pub use leaf_ways::{set as set_leaf_way, ways as leaf_ways, LeafSlot, LeafWay, LeafWays, Way};

/// Most VCIs a process uses.
pub const MAX_VCIS: usize = 64;
/// Bit position of the VCI in a request index.
pub const RID_VCI_SHIFT: u32 = 26;
const RID_INDEX_MASK: u32 = (1 << RID_VCI_SHIFT) - 1;

/// The VCI of a request index.
#[inline(always)]
pub fn vci_of_rid(rid: u32) -> usize {
    (rid >> RID_VCI_SHIFT) as usize
}

/// Point-to-point facts of an intracommunicator, cached in its VCI for the fast paths.
#[derive(Clone, Copy, Debug)]
pub struct FastComm {
    /// Communicator handle (with its generation).
    pub handle: usize,
    /// Table index.
    pub idx: u32,
    /// Wire context of user point-to-point traffic.
    pub ctx: u32,
    /// This process's rank.
    pub rank: i32,
    /// Number of ranks.
    pub size: i32,
    /// Index of its table of node-local ranks in [`VciState::peer_tables`], or [`NO_PEERS`]
    /// (sends to other ranks then take the slow path).
    pub peers: u32,
}

/// [`FastComm::peers`] of a communicator without a peer table.
pub const NO_PEERS: u32 = u32::MAX;

/// Marks a rank in a peer table that no fast path reaches (oneself, other jobs' processes).
pub const NOT_LOCAL: u32 = u32::MAX;

/// The state of one VCI.
pub struct VciState {
    /// Requests of the communicators mapped here.
    pub reqs: Slab<Request>,
    /// Matching queues of those communicators.
    pub matcher: Matcher,
    /// Intracommunicators known to the fast paths.
    pub comms: Vec<FastComm>,
    /// Node-local rank of each communicator rank (`transport::ofi::NET_PEER | world rank` on
    /// another node, [`NOT_LOCAL`] for oneself), per
    /// communicator with a fast path to other ranks ([`FastComm::peers`]); `None`: free entry.
    pub peer_tables: Vec<Option<std::sync::Arc<[u32]>>>,
}

impl VciState {
    /// The cached facts of communicator `handle`.
    #[inline(always)]
    pub fn comm(&self, handle: usize) -> Option<FastComm> {
        self.comms.iter().find(|c| c.handle == handle).copied()
    }

    /// Like [`VciState::comm`], and moves the entry found to the front, so that a code
    /// that uses one communicator at a time finds it first.
    #[inline(always)]
    pub fn comm_mru(&mut self, handle: usize) -> Option<FastComm> {
        match self.comms.first() {
            Some(c) if c.handle == handle => Some(*c),
            _ => {
                let i = self.comms.iter().position(|c| c.handle == handle)?;
                self.comms.swap(0, i);
                Some(self.comms[0])
            }
        }
    }
}

/// One VCI: its lock first (at the slot's address, so that the leaf paths reach it without
/// an offset held apart), then its index and state.
#[repr(C, align(128))]
struct Slot {
    /// The VCI's lock, which also carries the `lockq` model's pending mark.
    lock: VciLock,
    /// This VCI's index as it sits in request indices (`index << RID_VCI_SHIFT`).
    rid_base: u32,
    state: UnsafeCell<VciState>,
    /// The `csync` model's combining queue of this VCI (idle under the other models).
    comb: Combining<VciState>,
}

impl Resource for Slot {
    type State = VciState;

    #[inline(always)]
    fn lock(&self) {
        self.lock.lock();
    }

    #[inline(always)]
    unsafe fn unlock(&self) {
        // SAFETY: held by this thread (caller's contract).
        unsafe { self.lock.unlock() };
    }

    #[inline(always)]
    unsafe fn with_state<T>(&self, f: impl FnOnce(&mut VciState) -> T) -> T {
        // SAFETY: the slot lock is held by this thread, which has no other reference to the
        // state (caller's contract).
        f(unsafe { &mut *self.state.get() })
    }
}

/// All VCIs of the process.
pub struct Pool {
    slots: Box<[Slot]>,
    /// Largest message a fast-path self send may buffer.
    pub eager_max: usize,
    /// Largest message a fast path sends eagerly to another node's rank.
    pub net_eager_max: usize,
}

// SAFETY: a slot's state is only reached by a thread holding the slot's lock (fast path) or
// holding every slot lock (slow path under MULTIPLE), or, below MULTIPLE, by the one thread
// the application lets call MPI at a time.
unsafe impl Sync for Pool {}

static POOL: AtomicPtr<Pool> = AtomicPtr::new(std::ptr::null_mut());

/// Hint from a communicator table index to its VCI + 1 (0: unknown); validated by the VCI's
/// communicator cache, so a stale hint only costs a trip to the slow path.
static COMM_VCI: [AtomicU8; COMM_HINTS] = [const { AtomicU8::new(0) }; COMM_HINTS];
const COMM_HINTS: usize = 4096;
/// [`COMM_VCI`] of a communicator spread over the VCIs (`crate::core::threads::spread`): its VCI
/// depends on each message's source and tag.
const SPREAD_MARK: u8 = u8::MAX;
/// Context id of each communicator marked [`SPREAD_MARK`].
static COMM_ID: [AtomicU32; COMM_HINTS] = [const { AtomicU32::new(0) }; COMM_HINTS];

impl Pool {
    /// Creates the pool of `n` VCIs (1..=[`MAX_VCIS`]) once per process and returns it.
    /// `eager_max` and `net_eager_max`: the eager limits of the node and network transports.
    pub fn install(n: usize, eager_max: usize, net_eager_max: usize) -> &'static Pool {
        let n = n.clamp(1, MAX_VCIS);
        let slots = (0..n)
            .map(|v| Slot {
                lock: VciLock::new(),
                rid_base: (v as u32) << RID_VCI_SHIFT,
                state: UnsafeCell::new(VciState {
                    reqs: Slab::tagged(kind::REQUEST, v),
                    matcher: Matcher::default(),
                    comms: Vec::new(),
                    peer_tables: Vec::new(),
                }),
                comb: Combining::new(),
            })
            .collect();
        let pool: &'static Pool = Box::leak(Box::new(Pool {
            slots,
            eager_max,
            net_eager_max,
        }));
        POOL.store(pool as *const Pool as *mut Pool, Ordering::Release);
        pool
    }

    /// Number of VCIs.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether the pool is empty (never: it has at least one VCI).
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The VCI of wire context `ctx`: the one its context id is pinned to (streams), else
    /// the context id modulo the number of VCIs.
    #[inline(always)]
    pub fn vci_of_ctx(&self, ctx: u32) -> usize {
        let id = (ctx / CONTEXTS_PER_ID) as usize;
        match PINNED.get(id).map(|p| p.load(Ordering::Relaxed)) {
            Some(v) if v != 0 => v as usize - 1,
            _ => id % self.slots.len().max(1), // never 0: no division check
        }
    }

    /// The VCI where a message with source `src` and tag `tag` on wire context `ctx` is
    /// matched: the spread VCI of a communicator whose assertions spread it
    /// (`crate::core::threads::spread`), else the context's VCI ([`Pool::vci_of_ctx`]).
    #[inline(always)]
    pub fn vci_of_msg(&self, ctx: u32, src: i32, tag: i32) -> usize {
        if self.slots.len() == 1 {
            return 0;
        }
        match crate::core::threads::spread::vci_of_msg(ctx, src, tag, self.slots.len()) {
            Some(v) => v,
            None => self.vci_of_ctx(ctx),
        }
    }

    /// Marks work queued for the next holder of VCI `v`'s lock (the `lockq` model; any
    /// thread, after it queued the work).
    #[inline]
    pub fn mark_pending(&self, v: usize) {
        if let Some(s) = self.slots.get(v) {
            s.lock.mark_pending();
        }
    }

    /// Clears VCI `v`'s pending mark: whether it was set (then the work queued before it is
    /// visible). The caller holds VCI `v`'s lock.
    #[inline(always)]
    pub fn take_pending(&self, v: usize) -> bool {
        self.slots.get(v).is_some_and(|s| s.lock.take_pending())
    }

    /// Takes every VCI lock, in index order (slow path under MULTIPLE).
    pub fn lock_all(&self) {
        if crate::core::diag::stats_on() {
            return self.lock_all_counted();
        }
        for s in self.slots.iter() {
            s.lock.lock();
        }
    }

    /// [`Pool::lock_all`] counting each acquisition in its VCI's statistics.
    #[cold]
    #[inline(never)]
    fn lock_all_counted(&self) {
        for (v, s) in self.slots.iter().enumerate() {
            let missed = !s.lock.try_lock_clean();
            if missed {
                s.lock.lock();
            }
            stats::locked(v, missed);
        }
    }

    /// Releases every VCI lock.
    ///
    /// # Safety
    /// The caller holds them all ([`Pool::lock_all`]).
    pub unsafe fn unlock_all(&self) {
        for s in self.slots.iter().rev() {
            // SAFETY: the caller holds every lock.
            unsafe { s.lock.unlock() };
        }
    }

    /// The state of VCI `v`.
    ///
    /// # Safety
    /// The caller has exclusive access to VCI `v` (see the module doc) for the lifetime of
    /// the reference and holds no other reference to it.
    #[allow(clippy::mut_from_ref)]
    #[inline(always)]
    unsafe fn state(&self, v: usize) -> &mut VciState {
        // SAFETY: forwarded to the caller.
        unsafe { &mut *self.slots[v].state.get() }
    }

    /// Sums of the `csync` counters of every VCI: operations run by a combiner for another
    /// thread, and hand-ons of the combiner role.
    pub fn combining_counts(&self) -> (usize, usize) {
        self.slots.iter().fold((0, 0), |(a, b), s| {
            let (x, y) = s.comb.counts();
            (a + x, b + y)
        })
    }

    /// Empties every VCI (at `MPI_Finalize`, when no other thread is inside MPI).
    pub fn clear(&self) {
        for v in 0..self.slots.len() {
            // SAFETY: finalize runs alone (state BUSY), so nothing else reaches the VCIs.
            let s = unsafe { self.state(v) };
            s.reqs = Slab::tagged(kind::REQUEST, v);
            s.matcher = Matcher::default();
            s.comms.clear();
            s.peer_tables.clear();
        }
        for h in COMM_VCI.iter() {
            h.store(0, Ordering::Relaxed);
        }
    }
}

/// Context id to VCI + 1 for the communicators of streams (`MPIX_Stream_comm_create`);
/// 0: not pinned. Set before the id carries traffic, cleared when it is released.
static PINNED: [AtomicU8; crate::core::objects::context::MAX_IDS as usize] =
    [const { AtomicU8::new(0) }; crate::core::objects::context::MAX_IDS as usize];

/// Whether context id `id` is pinned to a VCI ([`pin`]).
pub fn pinned(id: u32) -> bool {
    PINNED
        .get(id as usize)
        .is_some_and(|p| p.load(Ordering::Relaxed) != 0)
}

/// Pins context id `id` to VCI `v` (a stream's), or unpins it (`None`).
pub fn pin(id: u32, v: Option<usize>) {
    if let Some(p) = PINNED.get(id as usize) {
        p.store(v.map_or(0, |v| v as u8 + 1), Ordering::Relaxed);
    }
}

/// The thread model in force when it routes fast paths through something other than the
/// VCI lock alone (the fast paths read it folded into the runtime state,
/// `runtime::fast_state`; the slower paths read it here).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Queued {
    /// `vci` or `global` (or below `MPI_THREAD_MULTIPLE`): the VCI lock alone.
    None = 0,
    /// `lockq` (`crate::core::threads::lockq`).
    Lockq = 1,
    /// `csync` (`crate::core::threads::csync`).
    Csync = 2,
    /// `offload`, with its communication thread running (`crate::core::threads::offload`).
    Offload = 3,
}

static QUEUED: AtomicU8 = AtomicU8::new(Queued::None as u8);

/// The queueing thread model in force (set at `MPI_Init`, cleared at `MPI_Finalize`).
#[inline(always)]
pub fn queued() -> Queued {
    match QUEUED.load(Ordering::Relaxed) {
        1 => Queued::Lockq,
        2 => Queued::Csync,
        3 => Queued::Offload,
        _ => Queued::None,
    }
}

/// Records the queueing thread model in force (see [`queued`]).
pub fn set_queued(q: Queued) {
    QUEUED.store(q as u8, Ordering::Release);
}

/// The pool, once installed.
#[inline(always)]
pub fn pool() -> Option<&'static Pool> {
    // SAFETY: the pointer is null or a leaked (never freed) pool.
    unsafe { POOL.load(Ordering::Acquire).as_ref() }
}

/// Exclusive access to one VCI for a fast path: holds the VCI's lock when `locked`
/// (MPI_THREAD_MULTIPLE) until dropped, nothing below. Straight-line code on the guard
/// compiles without the closure call [`with_vci`] may leave behind.
pub struct VciGuard<'a> {
    slot: &'a Slot,
    /// [`UNLOCKED`], [`LOCKED`] or [`COMBINING`].
    mode: u8,
}

/// A [`VciGuard`] that holds nothing (below MULTIPLE).
const UNLOCKED: u8 = 0;
/// A [`VciGuard`] that holds the VCI's lock.
const LOCKED: u8 = 1;
/// A [`VciGuard`] that holds the VCI's lock and its combining role (`csync`).
const COMBINING: u8 = 2;

impl<'a> VciGuard<'a> {
    /// Enters VCI `v`: under its lock when `locked`, else directly. The caller must not be
    /// inside the slow path.
    #[inline(always)]
    pub fn enter(pool: &'a Pool, v: usize, locked: bool) -> Self {
        let slot = &pool.slots[v];
        if locked {
            if crate::core::diag::stats_on() {
                let missed = !slot.lock.try_lock_clean();
                if missed {
                    slot.lock.lock();
                }
                stats::locked(v, missed);
            } else {
                slot.lock.lock();
            }
        }
        VciGuard {
            slot,
            mode: locked as u8,
        }
    }

    /// Enters VCI `v` through its combining queue (the `csync` model's acquisition): the
    /// combiner role and the lock; on drop, runs the operations announced meanwhile.
    #[inline(always)]
    pub fn enter_combining(pool: &'a Pool, v: usize) -> Self {
        let slot = &pool.slots[v];
        slot.comb.acquire(slot);
        if crate::core::diag::stats_on() {
            stats::locked(v, false);
        }
        VciGuard {
            slot,
            mode: COMBINING,
        }
    }

    /// Enters VCI `v` under its lock if the lock is free now (the `lockq` model's try-lock),
    /// pending work or not.
    #[inline(always)]
    pub fn try_enter(pool: &'a Pool, v: usize) -> Option<Self> {
        let slot = &pool.slots[v];
        let got = slot.lock.try_lock();
        if crate::core::diag::stats_on() {
            count_try(v, got);
        }
        // `then`, not `then_some`: a guard built for a failed try would unlock on drop.
        got.then(|| VciGuard { slot, mode: LOCKED })
    }

    /// Enters VCI `v` under its lock if the lock is free now and no work is pending for its
    /// holder (one compare-and-swap; the fast paths' acquisition under every lock-based
    /// model, `crate::core::threads::vci_lock`).
    #[inline(always)]
    pub fn try_enter_clean(pool: &'a Pool, v: usize) -> Option<Self> {
        let slot = &pool.slots[v];
        let got = slot.lock.try_lock_clean();
        if crate::core::diag::stats_on() {
            count_try(v, got);
        }
        got.then(|| VciGuard { slot, mode: LOCKED })
    }

    /// Leaves VCI's lock held without a guard, for [`VciGuard::adopt`] on this thread.
    #[inline(always)]
    pub fn keep(self) {
        debug_assert_eq!(self.mode, LOCKED);
        std::mem::forget(self);
    }

    /// The guard of VCI `v`'s lock, which this thread holds after [`VciGuard::keep`].
    ///
    /// # Safety
    /// `v` is a VCI of `pool` (`v < pool.len()`), and this thread holds its lock and no guard
    /// of it.
    #[inline(always)]
    pub unsafe fn adopt(pool: &'a Pool, v: usize) -> Self {
        debug_assert!(v < pool.len());
        VciGuard {
            // SAFETY: `v < pool.len()` (the caller's contract; the lock it holds was taken
            // through the same index).
            slot: unsafe { pool.slots.get_unchecked(v) },
            mode: LOCKED,
        }
    }

    /// Clears the VCI's pending mark (`lockq`): whether it was set. The guard holds the lock.
    #[inline(always)]
    pub fn take_pending(&self) -> bool {
        self.slot.lock.take_pending()
    }

    /// Sets the VCI's pending mark for its next lock holder (`lockq`: a descriptor parked
    /// for the slow path).
    #[inline]
    pub fn mark_pending(&self) {
        self.slot.lock.mark_pending();
    }

    /// The VCI's state.
    #[inline(always)]
    pub fn state(&mut self) -> &mut VciState {
        // SAFETY: the slot lock is held (MULTIPLE) or this is the only thread in MPI; the
        // slow path, which reaches VCIs otherwise, holds every slot lock or is not running.
        // `&mut self` makes this the only reference obtained through the guard.
        unsafe { &mut *self.slot.state.get() }
    }
}

/// Counts an attempt on VCI `v`'s lock in its statistics: an acquisition, or a miss.
#[cold]
#[inline(never)]
fn count_try(v: usize, got: bool) {
    if got {
        stats::locked(v, false);
    } else {
        stats::lock_missed(v);
    }
}

impl Drop for VciGuard<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        if self.mode != UNLOCKED {
            if self.mode == LOCKED {
                // SAFETY: locked by `enter` or `try_enter` on this thread.
                unsafe { self.slot.lock.unlock() };
            } else {
                self.release_combining();
            }
        }
    }
}

impl VciGuard<'_> {
    /// The `csync` part of the drop, out of line so that the drop of the other modes (one
    /// test, or the unlock) inlines into every fast path.
    #[inline(never)]
    fn release_combining(&mut self) {
        // SAFETY: acquired by `enter_combining` on this thread (the only other mode).
        unsafe { self.slot.comb.release(self.slot) };
    }
}

/// Runs `f` on VCI `v` on behalf of this thread under a model that does not let the caller
/// take the VCI's lock itself on initiation: through the communication thread (`offload`) or
/// the VCI's combining queue (`csync`). Returns once `f` ran.
///
/// # Safety
/// As for [`run_combined`].
#[inline(always)]
pub unsafe fn run_delegated(pool: &Pool, v: usize, f: &mut impl FnMut(&mut VciState)) {
    if queued() == Queued::Offload {
        // SAFETY: forwarded from the caller.
        unsafe { crate::core::threads::offload::run(v, f) }
    } else {
        // SAFETY: forwarded from the caller.
        unsafe { run_combined(pool, v, f) }
    }
}

/// Enters VCI `v` for a completion fast path under queueing model `q`: `None` when a queued
/// operation needs the slow path first (`lockq`).
#[inline(always)]
pub fn enter_queued(pool: &Pool, v: usize, q: Queued) -> Option<VciGuard<'_>> {
    match q {
        Queued::Lockq => crate::core::threads::lockq::enter(pool, v),
        Queued::Csync => Some(VciGuard::enter_combining(pool, v)),
        Queued::Offload | Queued::None => Some(VciGuard::enter(pool, v, true)),
    }
}

/// Runs `f` on VCI `v` through its combining queue (the `csync` model): on this thread, as
/// the combiner (then also running operations other threads announced), or on the combiner's
/// thread while this one waits. Returns once `f` ran.
///
/// # Safety
/// `f` must not depend on the identity of the thread it runs on, and the caller must not be
/// inside the slow path.
#[inline(always)]
pub unsafe fn run_combined(pool: &Pool, v: usize, f: &mut impl FnMut(&mut VciState)) {
    let slot = &pool.slots[v];
    // SAFETY: the slot's state is reached through its queue (fast paths under csync) or
    // under its lock (every other path), and the queue serves this slot only; `f`'s thread
    // independence is the caller's.
    unsafe { slot.comb.run(slot, f) };
}

/// Runs `f` on VCI `v` alone: under its lock when `locked` (MPI_THREAD_MULTIPLE), else
/// directly. The caller must not be inside the slow path.
#[inline(always)]
pub fn with_vci<R>(pool: &Pool, v: usize, locked: bool, f: impl FnOnce(&mut VciState) -> R) -> R {
    f(VciGuard::enter(pool, v, locked).state())
}

/// The VCI hint of communicator handle `h` (a user handle's table index), if any.
#[inline(always)]
pub fn comm_hint(h: usize) -> Option<usize> {
    let idx = ((h >> 12) & 0xfffff).checked_sub(1)?;
    match COMM_VCI.get(idx)?.load(Ordering::Relaxed) {
        0 => None,
        v => Some(v as usize - 1),
    }
}

/// The VCI of a message to or from rank `peer` with tag `tag` on communicator handle `h`
/// when [`comm_hint`] marks it spread (`crate::core::threads::spread`); `None` otherwise, or for a
/// wildcard the communicator asserted away (the slow path reports it).
#[inline]
pub fn comm_spread_vci(h: usize, peer: i32, tag: i32, n: usize) -> Option<usize> {
    let idx = ((h >> 12) & 0xfffff).checked_sub(1)?;
    if COMM_VCI.get(idx)?.load(Ordering::Relaxed) != SPREAD_MARK {
        return None;
    }
    let id = COMM_ID.get(idx)?.load(Ordering::Relaxed);
    match crate::core::threads::spread::mode(id) {
        0 => None,
        m => crate::core::threads::spread::vci(id, m, peer, tag, n),
    }
}

/// The slow path's view of the request tables of all VCIs.
pub struct Requests {
    pool: &'static Pool,
}

impl Requests {
    /// The view over `pool`.
    pub fn new(pool: &'static Pool) -> Self {
        Requests { pool }
    }

    #[inline(always)]
    fn slab(&self, v: usize) -> &Slab<Request> {
        // SAFETY: the slow path has exclusive access to every VCI (module doc); `&self`
        // borrows the runtime, so no mutable reference from this view is alive.
        unsafe { &self.pool.state(v).reqs }
    }

    #[inline(always)]
    fn slab_mut(&mut self, v: usize) -> &mut Slab<Request> {
        // SAFETY: as in `slab`, with `&mut self` excluding every other reference.
        unsafe { &mut self.pool.state(v).reqs }
    }

    /// Stores a request in VCI `v`; its index, or `None` when the table is full.
    #[inline(always)]
    pub fn insert(&mut self, v: usize, r: Request) -> Option<u32> {
        let i = self.slab_mut(v).insert(r)?;
        Some(((v as u32) << RID_VCI_SHIFT) | i)
    }

    /// The request `rid`.
    #[inline(always)]
    pub fn get(&self, rid: u32) -> Option<&Request> {
        self.slab(vci_of_rid(rid)).get(rid & RID_INDEX_MASK)
    }

    /// The request `rid`, mutably.
    #[inline(always)]
    pub fn get_mut(&mut self, rid: u32) -> Option<&mut Request> {
        self.slab_mut(vci_of_rid(rid)).get_mut(rid & RID_INDEX_MASK)
    }

    /// Drops request `rid`; whether it was live.
    #[inline(always)]
    pub fn free(&mut self, rid: u32) -> bool {
        self.slab_mut(vci_of_rid(rid)).free(rid & RID_INDEX_MASK)
    }

    /// Removes and returns request `rid`.
    #[inline]
    pub fn remove(&mut self, rid: u32) -> Option<Request> {
        self.slab_mut(vci_of_rid(rid)).remove(rid & RID_INDEX_MASK)
    }

    /// The user handle of request `rid`.
    #[inline(always)]
    pub fn handle(&self, rid: u32) -> usize {
        self.slab(vci_of_rid(rid)).handle(rid & RID_INDEX_MASK)
    }

    /// The wire token of request `rid` (its handle).
    #[inline]
    pub fn token(&self, rid: u32) -> u64 {
        self.handle(rid) as u64
    }

    /// Decodes a request handle or token to a live request index.
    #[inline(always)]
    pub fn decode(&self, h: usize) -> Option<u32> {
        let v = Slab::<Request>::tag_of(h);
        if v >= self.pool.len() {
            return None;
        }
        let i = self.slab(v).decode(h)?;
        Some(((v as u32) << RID_VCI_SHIFT) | i)
    }

    /// The live request of VCI `v` at table index `index` (integer handle conversion).
    pub fn at(&self, v: usize, index: u32) -> Option<u32> {
        if v >= self.pool.len() {
            return None;
        }
        self.slab(v)
            .get(index)
            .map(|_| ((v as u32) << RID_VCI_SHIFT) | index)
    }

    /// The VCI of wire context `ctx`.
    #[inline(always)]
    pub fn vci_of_ctx(&self, ctx: u32) -> usize {
        self.pool.vci_of_ctx(ctx)
    }
}

/// The slow path's view of the matching queues and communicator caches of all VCIs.
pub struct Matchers {
    pool: &'static Pool,
}

impl Matchers {
    /// The view over `pool`.
    pub fn new(pool: &'static Pool) -> Self {
        Matchers { pool }
    }

    /// The matching queues of messages with source `src` and tag `tag` on wire context
    /// `ctx` ([`Pool::vci_of_msg`]).
    #[inline(always)]
    pub fn of_msg(&mut self, ctx: u32, src: i32, tag: i32) -> &mut Matcher {
        let v = self.pool.vci_of_msg(ctx, src, tag);
        // SAFETY: the slow path has exclusive access to every VCI; `&mut self` excludes other
        // references from this view, and `Requests` reaches only the `reqs` field.
        unsafe { &mut self.pool.state(v).matcher }
    }

    /// Number of VCIs.
    pub fn vcis(&self) -> usize {
        self.pool.len()
    }

    /// The matching queues of VCI `v`.
    #[inline]
    pub fn of_vci(&mut self, v: usize) -> &mut Matcher {
        // SAFETY: as in `of_msg`.
        unsafe { &mut self.pool.state(v).matcher }
    }

    /// [`Matchers::of_msg`], shared.
    #[inline(always)]
    pub fn of_msg_ref(&self, ctx: u32, src: i32, tag: i32) -> &Matcher {
        let v = self.pool.vci_of_msg(ctx, src, tag);
        // SAFETY: as in `of_msg`.
        unsafe { &self.pool.state(v).matcher }
    }

    /// Whether communicator `handle` (wire context `ctx`) is known to its VCI's fast paths.
    #[inline]
    pub fn knows_comm(&self, handle: usize, ctx: u32) -> bool {
        let v = self.pool.vci_of_ctx(ctx);
        // SAFETY: as in `of_msg`, shared.
        unsafe { self.pool.state(v) }.comm(handle).is_some()
    }

    /// Makes intracommunicator `c` (table index `idx`, handle `handle`) known to the fast
    /// paths of its VCI, with its table of node-local ranks when sends to other ranks may
    /// take a fast path.
    pub fn remember_comm(&mut self, c: FastComm, peers: Option<std::sync::Arc<[u32]>>) {
        let id = c.ctx / CONTEXTS_PER_ID;
        let spread = crate::core::threads::spread::mode(id) != 0;
        // A spread communicator is known to every VCI: its messages may be on any.
        let (first, last) = if spread {
            (0, self.pool.len() - 1)
        } else {
            let v = self.pool.vci_of_ctx(c.ctx);
            (v, v)
        };
        for v in first..=last {
            // SAFETY: as in `of_msg`.
            let s = unsafe { self.pool.state(v) };
            if s.comm(c.handle).is_some() {
                continue;
            }
            let mut c = c;
            c.peers = match peers.clone() {
                None => NO_PEERS,
                Some(t) => match s.peer_tables.iter().position(Option::is_none) {
                    Some(i) => {
                        s.peer_tables[i] = Some(t);
                        i as u32
                    }
                    None => {
                        s.peer_tables.push(Some(t));
                        s.peer_tables.len() as u32 - 1
                    }
                },
            };
            s.comms.push(c);
        }
        if crate::core::threads::lockq::on() {
            crate::core::threads::lockq::publish(&c);
        }
        let mark = if spread {
            if let Some(i) = COMM_ID.get(c.idx as usize) {
                i.store(id, Ordering::Relaxed);
            }
            SPREAD_MARK
        } else {
            first as u8 + 1
        };
        if let Some(h) = COMM_VCI.get(c.idx as usize) {
            h.store(mark, Ordering::Relaxed);
        }
    }

    /// Moves the unexpected messages and posted receives of the point-to-point context of
    /// context id `id`, which were matched on VCI `from`, to the VCIs where its spreading
    /// (just turned on) matches them, keeping the order of those that share a VCI.
    pub fn spread_out(&mut self, id: u32, from: usize) {
        let ctx = id * CONTEXTS_PER_ID;
        let (unexpected, mut posted) = {
            // SAFETY: as in `of_msg`; this reference ends with the block, before any target
            // VCI (possibly `from` again) is reached.
            let a = unsafe { self.pool.state(from) };
            (
                std::mem::take(&mut a.matcher.unexpected),
                std::mem::take(&mut a.matcher.posted),
            )
        };
        for u in unexpected {
            let v = if u.env.ctx == ctx {
                self.pool.vci_of_msg(ctx, u.env.src, u.env.tag)
            } else {
                from
            };
            self.of_vci(v).unexpected.push_back(u);
        }
        for p in posted.drain(..) {
            let v = if p.pattern.ctx == ctx {
                self.pool.vci_of_msg(ctx, p.pattern.src, p.pattern.tag)
            } else {
                from
            };
            self.of_vci(v).posted.push_back(p);
        }
    }

    /// Moves the unexpected messages and posted receives of context id `id` from VCI `from`
    /// to VCI `to` (the id was just pinned), keeping their order.
    pub fn move_unexpected(&mut self, id: u32, from: usize, to: usize) {
        if from == to {
            return;
        }
        // SAFETY: as in `of_msg`; `from != to`, so the two references are disjoint.
        let (a, b) = unsafe { (self.pool.state(from), self.pool.state(to)) };
        let mut kept = std::collections::VecDeque::new();
        for u in a.matcher.unexpected.drain(..) {
            if u.env.ctx / CONTEXTS_PER_ID == id {
                b.matcher.unexpected.push_back(u);
            } else {
                kept.push_back(u);
            }
        }
        a.matcher.unexpected = kept;
        let mut kept = crate::core::p2p::matching::PostedQueue::default();
        for p in a.matcher.posted.drain(..) {
            if p.pattern.ctx / CONTEXTS_PER_ID == id {
                b.matcher.posted.push_back(p);
            } else {
                kept.push_back(p);
            }
        }
        a.matcher.posted = kept;
    }

    /// Forgets communicator `handle` (table index `idx`) everywhere (it is being freed).
    pub fn forget_comm(&mut self, idx: u32, handle: usize) {
        if let Some(h) = COMM_VCI.get(idx as usize) {
            h.store(0, Ordering::Relaxed);
        }
        crate::core::threads::lockq::retract(idx);
        for v in 0..self.pool.len() {
            // SAFETY: as in `of_msg`.
            let s = unsafe { self.pool.state(v) };
            let tables = &mut s.peer_tables;
            s.comms.retain(|c| {
                if c.handle != handle {
                    return true;
                }
                if let Some(t) = tables.get_mut(c.peers as usize) {
                    *t = None;
                }
                false
            });
        }
    }
}

/// The thread-safety model of `MPI_THREAD_MULTIPLE` (`HYMPI_THREAD_MODEL`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThreadModel {
    /// One lock for everything: a single VCI, whose lock every call takes.
    Global,
    /// A lock per VCI (the default).
    Vci,
    /// A lock per VCI, tried; a nonblocking call that misses it queues its operation for the
    /// lock holder (`crate::core::threads::lockq`).
    Lockq,
    /// A lock per VCI behind a combining queue: a thread that finds the VCI busy announces
    /// its operation and the lock holder runs it (`crate::core::threads::csync`).
    Csync,
    /// A lock per VCI, taken on initiation by a communication thread only: threads hand their
    /// `MPI_Isend`/`MPI_Irecv` to it (`crate::core::threads::offload`).
    Offload,
}

/// The model chosen by `HYMPI_THREAD_MODEL` (`global`, `vci`, `lockq`, `csync` or `offload`);
/// unknown names fall back to `vci` with a warning.
pub fn thread_model() -> ThreadModel {
    static M: std::sync::OnceLock<ThreadModel> = std::sync::OnceLock::new();
    *M.get_or_init(|| {
        let name = config::text(Knob::ThreadModel);
        parse_thread_model(&name).unwrap_or_else(|| {
            eprintln!(
                "hympi: HYMPI_THREAD_MODEL={} is not available (implemented: global, vci, lockq, csync, offload); using vci",
                name.trim()
            );
            ThreadModel::Vci
        })
    })
}

/// The thread models by name, the default first (also the items of the `MPI_T` enumeration
/// of `HYMPI_THREAD_MODEL`, `crate::core::runtime::tool`).
pub const THREAD_MODELS: [(&str, ThreadModel); 5] = [
    ("vci", ThreadModel::Vci),
    ("global", ThreadModel::Global),
    ("lockq", ThreadModel::Lockq),
    ("csync", ThreadModel::Csync),
    ("offload", ThreadModel::Offload),
];

/// The model a `HYMPI_THREAD_MODEL` value names (empty: the default), or `None`.
pub fn parse_thread_model(name: &str) -> Option<ThreadModel> {
    match name.trim() {
        "" => Some(ThreadModel::Vci),
        n => THREAD_MODELS.iter().find(|m| m.0 == n).map(|m| m.1),
    }
}

/// Number of VCIs for a process at thread level MULTIPLE (`multiple`) or below:
/// `HYMPI_NUM_VCIS` when set, else the CPUs this process may run on, capped at
/// [`MAX_VCIS`]; always 1 below MULTIPLE (one thread at a time gains nothing from more).
pub fn default_count(multiple: bool) -> usize {
    if !multiple || thread_model() == ThreadModel::Global {
        return 1;
    }
    match config::setting(Knob::NumVcis) {
        config::Setting::Value(n) => (n as usize).min(MAX_VCIS),
        _ => crate::platform::wait::usable_cpus().min(MAX_VCIS),
    }
}

#[cfg(all(test, not(loom)))]
mod tests;
