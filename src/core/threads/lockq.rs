//! The `lockq` thread-safety model (`HYMPI_THREAD_MODEL=lockq`): per-VCI try-lock plus a
//! FIFO queue of operation descriptors, after Amer et al., "Software Combining to Mitigate
//! Multithreaded MPI Contention" (ICS '19), §3.4.
//!
//! Every VCI keeps its lock (`crate::core::threads::vci_lock`) and gains a [`Queue`] of [`Op`]
//! descriptors. A nonblocking fast-path call (`MPI_Isend` to oneself or to `MPI_PROC_NULL`,
//! `MPI_Irecv`) first tries the lock exactly as the `vci` model's fast paths do, with one
//! compare-and-swap that succeeds only if the lock is free *and* no work is pending (so the
//! uncontended path of `lockq` is the `vci` model's, instruction for instruction). When that
//! fails, [`isend_contended`] / [`irecv_contended`] *try* the VCI's lock:
//! - it gets it: it first drains the queue (executes every queued descriptor, in queue
//!   order), then runs its own operation, as under the `vci` model;
//! - it misses it: it fills a descriptor, pushes it on the queue and returns at once, without
//!   waiting for the lock. A send copies its data into the descriptor (only messages up to
//!   the eager limit are deferred), so its buffer is free at once and it returns the shared
//!   complete send request. A receive takes a request that a lock holder reserved in
//!   advance ([`Reserve`]: handles of placeholder requests already in the VCI's table, taken
//!   with one atomic swap), so its handle is valid at once; the thread that drains the
//!   descriptor fills that request in place (same index, same generation).
//!
//! **Every path that takes a VCI lock drains first**: the fast paths (initiation and the
//! `MPI_Wait`/`MPI_Test`/`MPI_Waitall` completion path, through the clean acquisition or
//! [`enter`], [`enter_contended`], [`isend_contended`] and [`irecv_contended`], which call
//! [`drain`])
//! and the slow path (`crate::core::runtime::with`, which holds every VCI lock and drains every
//! queue before it runs: `MPI_Wait` on incomplete requests, `MPI_Request_free`, `MPI_Cancel`,
//! `MPI_Comm_free`, `MPI_Finalize` and all other calls). A descriptor the VCI alone cannot
//! execute (a receive that meets a rendezvous or synchronous message, a send that meets a
//! receive with a derived datatype) is parked in the VCI's `held` slot; a fast path that finds
//! the slot occupied gives up its lock and takes the slow path, which executes the parked
//! descriptor with the whole runtime before anything else.
//!
//! **Ordering argument.** The queue is FIFO in the order of the producers' tail swaps, and
//! only the lock holder consumes it. Let operation A happen before operation B (program order
//! on one thread, or application-level synchronisation between threads), both on one VCI.
//! When B's call starts, A's call has returned, so A was either executed under the lock or
//! fully pushed (swap *and* link done). If B gets the lock, it drains the queue before running,
//! and the drain reaches A: a descriptor is only invisible while its push is half done, which
//! cannot be A's. If B misses the lock, it is pushed behind A (A's swap precedes B's swap), and
//! whoever drains runs A first. A parked descriptor precedes everything still queued and runs
//! before it. Hence operations that happen-before each other start in that order, which is all
//! MPI's non-overtaking rule needs (operations of different VCIs use different communicators,
//! which are never ordered against each other). Concurrent operations, which MPI does not
//! order, may start in either order. Completion calls see their operation started: the
//! request's owner waits after its initiation returned, so the descriptor is in the queue and
//! the waiter drains it.
//!
//! The queue's pending mark is a bit of the VCI's lock word (`crate::core::threads::vci_lock`).
//! Producers set it with a release read-modify-write after their push (and after parking or
//! reserving); a holder clears it with an acquire read-modify-write before it drains, and a
//! clean acquisition (word 0 -> locked) proves there is nothing to drain. If A's push
//! precedes B, B's acquisition reads either the mark, and B's holder drains, or a word from
//! which a holder had cleared it after A's setting or a later one (read-modify-writes extend
//! A's release sequence): that holder saw A's push, held the lock before B's holder did, and
//! ran A or parked it (and set the mark again, under the lock).
//!
//! **Progress.** A missed try-lock costs a bounded number of steps (one swap and one store to
//! push; at most [`RESERVE`] loads and one swap to reserve a request). When the reserve is
//! empty, or the arguments cannot be checked without the lock, the call waits for the lock as
//! under the `vci` model. A queued operation is executed at the latest by the next call that
//! takes the VCI's lock, which includes the owner's own `MPI_Wait`/`MPI_Test` on it (MPI
//! requires one), and by every progress poll of the slow path. The queue can hold at most as
//! many receives as the reserve has slots, so one drain is bounded for receives; sends are
//! bounded by what the other threads push meanwhile.
//!
//! The queue is checked by loom models (`--cfg loom`): no descriptor is lost, duplicated or
//! reordered per producer, and every operation runs after all operations of its thread that
//! preceded it (drain-before-acquire), under every interleaving.

use crate::core::datatype::TypeInfo;
use crate::core::p2p::fastpath::{self, DONE_SEND_HANDLE};
use crate::core::p2p::matching::{Envelope, Pattern, Payload, Posted, Unexpected};
use crate::core::p2p::request::{ReqKind, Request};
use crate::core::threads::vci::{FastComm, Pool, VciGuard, VciState, RID_VCI_SHIFT};
use crate::mpi_abi::consts::*;
use std::sync::atomic::{fence, Ordering as StdOrdering};
use std::sync::atomic::{AtomicBool as StdAtomicBool, AtomicI32, AtomicPtr as StdAtomicPtr};
use std::sync::atomic::{AtomicU32 as StdAtomicU32, AtomicUsize as StdAtomicUsize};

#[cfg(loom)]
use loom::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};
#[cfg(not(loom))]
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};

/// Request handles each VCI keeps reserved for receives that miss the lock.
pub const RESERVE: usize = 64;

// ---------------------------------------------------------------------------------------------
// The queue

/// A cell that loom checks for data races under `--cfg loom` (std's `UnsafeCell` otherwise).
struct RaceCell<T>(
    #[cfg(loom)] loom::cell::UnsafeCell<T>,
    #[cfg(not(loom))] std::cell::UnsafeCell<T>,
);

impl<T> RaceCell<T> {
    fn new(v: T) -> Self {
        #[cfg(loom)]
        return RaceCell(loom::cell::UnsafeCell::new(v));
        #[cfg(not(loom))]
        return RaceCell(std::cell::UnsafeCell::new(v));
    }

    /// Runs `f` on a pointer to the contents; the caller keeps accesses exclusive.
    fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        #[cfg(loom)]
        return self.0.with_mut(f);
        #[cfg(not(loom))]
        return f(self.0.get());
    }
}

struct Node<T> {
    next: AtomicPtr<Node<T>>,
    value: RaceCell<Option<T>>,
}

impl<T> Node<T> {
    fn alloc(value: Option<T>) -> *mut Node<T> {
        Box::into_raw(Box::new(Node {
            next: AtomicPtr::new(std::ptr::null_mut()),
            value: RaceCell::new(value),
        }))
    }
}

/// A multi-producer, single-consumer FIFO (the MCS-shaped queue of the LockQ paper, also known
/// as Vyukov's MPSC queue): producers swap the tail and then link the previous tail to their
/// node; the consumer follows links from a dummy head node.
///
/// Orderings: a producer writes its node (value, `next = null`) before the `swap` of `tail`
/// (AcqRel) and links it with a *release* store; the consumer's *acquire* load of a link makes
/// the node's value visible. A producer between its swap and its link hides its node (and the
/// nodes behind it) until it links: the consumer then reports the queue empty, which is
/// allowed because that push has not returned (its operation is concurrent with the consumer).
/// Push is wait-free (one swap, one store); pop is wait-free.
pub struct Queue<T> {
    tail: AtomicPtr<Node<T>>,
    /// The consumer's dummy node (touched only by the consumer).
    head: RaceCell<*mut Node<T>>,
}

// SAFETY: values move between threads through the queue (hence `T: Send`); `tail` is atomic,
// `head` is used by the one consumer at a time that `pop`'s contract requires.
unsafe impl<T: Send> Sync for Queue<T> {}
// SAFETY: as above; the nodes are owned by the queue.
unsafe impl<T: Send> Send for Queue<T> {}

impl<T> Default for Queue<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Queue<T> {
    /// An empty queue.
    pub fn new() -> Self {
        let stub = Node::alloc(None);
        Queue {
            tail: AtomicPtr::new(stub),
            head: RaceCell::new(stub),
        }
    }

    /// Appends `v` (any thread, wait-free).
    pub fn push(&self, v: T) {
        let n = Node::alloc(Some(v));
        let prev = self.tail.swap(n, Ordering::AcqRel);
        // SAFETY: `prev` is a live node: nodes are freed only by the consumer once it moved
        // past them, which needs this link first.
        unsafe { (*prev).next.store(n, Ordering::Release) };
    }

    /// Removes the oldest fully pushed value.
    ///
    /// # Safety
    /// Only one thread at a time consumes (for the VCI queues: the holder of the VCI lock).
    pub unsafe fn pop(&self) -> Option<T> {
        self.head.with_mut(|head| {
            // SAFETY: `head` is the consumer's own (caller's contract); it points at the live
            // dummy node.
            unsafe {
                let h = *head;
                let next = (*h).next.load(Ordering::Acquire);
                if next.is_null() {
                    return None;
                }
                *head = next;
                let v = (*next).value.with_mut(|p| (*p).take());
                drop(Box::from_raw(h));
                v
            }
        })
    }

    /// Whether a pushed value is visible to the consumer.
    ///
    /// # Safety
    /// As for [`Queue::pop`].
    pub unsafe fn is_empty(&self) -> bool {
        // SAFETY: as in `pop`.
        self.head
            .with_mut(|head| unsafe { (**head).next.load(Ordering::Acquire).is_null() })
    }
}

impl<T> Drop for Queue<T> {
    fn drop(&mut self) {
        // SAFETY: `&mut self`: no producer or consumer is left.
        while unsafe { self.pop() }.is_some() {}
        // SAFETY: the last dummy node is owned by the queue.
        self.head
            .with_mut(|head| drop(unsafe { Box::from_raw(*head) }));
    }
}

// ---------------------------------------------------------------------------------------------
// Reserved requests

/// Request handles reserved by lock holders for receives that miss the lock: each slot holds
/// a handle (0: empty). A taker swaps a full slot to 0 (so each handle is taken once); only a
/// lock holder refills empty slots, after inserting the placeholder request the handle names
/// (release store; the taker's acquire swap pairs with it).
pub struct Reserve {
    slots: Box<[AtomicUsize]>,
    /// Some slot was emptied since the last refill.
    taken: AtomicBool,
}

impl Reserve {
    /// `n` empty slots (marked taken, so the first lock holder fills them).
    pub fn new(n: usize) -> Self {
        Reserve {
            slots: (0..n).map(|_| AtomicUsize::new(0)).collect(),
            taken: AtomicBool::new(true),
        }
    }

    /// Takes a reserved handle (any thread; at most `n` loads and one swap per full slot
    /// seen), starting the scan at `hint`.
    pub fn take(&self, hint: usize) -> Option<usize> {
        let n = self.slots.len();
        for k in 0..n {
            let s = &self.slots[(hint + k) % n];
            if s.load(Ordering::Relaxed) != 0 {
                let h = s.swap(0, Ordering::Acquire);
                if h != 0 {
                    self.taken.store(true, Ordering::Relaxed);
                    return Some(h);
                }
            }
        }
        None
    }

    /// Whether slots were taken since the last [`Reserve::refill`].
    #[inline(always)]
    pub fn wants_refill(&self) -> bool {
        self.taken.load(Ordering::Relaxed)
    }

    /// Fills every empty slot with a handle from `make` (the consumer side: one thread at a
    /// time, the lock holder).
    pub fn refill(&self, mut make: impl FnMut() -> Option<usize>) {
        self.taken.store(false, Ordering::Relaxed);
        for s in self.slots.iter() {
            if s.load(Ordering::Relaxed) == 0 {
                match make() {
                    Some(h) => s.store(h, Ordering::Release),
                    None => return,
                }
            }
        }
    }

    /// Empties every slot; the handles it held (to be dropped by the caller).
    pub fn drain(&self) -> Vec<usize> {
        self.slots
            .iter()
            .map(|s| s.swap(0, Ordering::Acquire))
            .filter(|&h| h != 0)
            .collect()
    }
}

// ---------------------------------------------------------------------------------------------
// Descriptors and per-VCI state

/// A deferred operation.
#[derive(Debug)]
pub enum Op {
    /// `MPI_Isend` to oneself, its data copied.
    Send {
        /// Envelope of the message.
        env: Envelope,
        /// The message.
        data: Vec<u8>,
    },
    /// `MPI_Irecv` on a reserved request.
    Recv {
        /// Table index of the reserved request in its VCI.
        index: u32,
        /// Communicator table index.
        comm: u32,
        /// What the receive accepts (wire context, source, tag).
        pattern: Pattern,
        /// Source rank as given (for the slow path).
        src: i32,
        /// Tag as given.
        tag: i32,
        /// Receive buffer.
        buf: *mut u8,
        /// Its capacity in bytes.
        cap: usize,
        /// The predefined contiguous datatype's layout.
        unit: TypeInfo,
    },
}

// SAFETY: the raw buffer pointer is the user's receive buffer, which MPI lets any thread fill
// until the request completes; nothing else in an `Op` is thread-bound.
unsafe impl Send for Op {}

/// The LockQ state of one VCI.
struct Vq {
    queue: Queue<Op>,
    /// A descriptor only the slow path can execute (touched under the VCI lock only).
    held: RaceCell<Option<Op>>,
    reserve: Reserve,
}

/// Per-VCI queues, installed at `MPI_Init` when the model is on.
struct State {
    vqs: Box<[Vq]>,
}

static STATE: StdAtomicPtr<State> = StdAtomicPtr::new(std::ptr::null_mut());

/// Marks VCI `v`'s queue, parked slot or reserve as needing its next lock holder: the
/// `PENDING` bit of the VCI's lock word (`crate::core::threads::vci_lock`), set with a release
/// read-modify-write after the push, reservation or parking. A holder that took the lock with
/// the word at 0 has nothing to drain, so the uncontended path costs no extra step.
#[inline(always)]
fn mark(pool: &Pool, v: usize) {
    pool.mark_pending(v);
}

/// Counters for `HYMPI_STATS` (touched only off the uncontended path): sends queued,
/// receives queued, descriptors run by the slow path, lock misses that waited for the lock,
/// descriptors parked for the slow path.
static STATS: [StdAtomicUsize; 5] = [const { StdAtomicUsize::new(0) }; 5];
const ST_SEND: usize = 0;
const ST_RECV: usize = 1;
const ST_SLOW: usize = 2;
const ST_WAITED: usize = 3;
const ST_PARKED: usize = 4;

#[inline(always)]
fn count(i: usize) {
    STATS[i].fetch_add(1, StdOrdering::Relaxed);
}

/// The model's counters, in the order sends queued, receives queued, descriptors run by the
/// slow path, lock misses that waited for the lock, descriptors parked for the slow path
/// (also `MPI_T` performance variables).
pub fn counts() -> [usize; 5] {
    let g = |i: usize| STATS[i].load(StdOrdering::Relaxed);
    [
        g(ST_SEND),
        g(ST_RECV),
        g(ST_SLOW),
        g(ST_WAITED),
        g(ST_PARKED),
    ]
}

/// The `HYMPI_STATS` line of the model.
pub fn stats_line(rank: i32) -> String {
    let g = |i: usize| STATS[i].load(StdOrdering::Relaxed);
    format!(
        "hympi[{rank}] lockq: {} sends and {} receives queued, {} run by the slow path ({} parked), {} lock misses waited",
        g(ST_SEND),
        g(ST_RECV),
        g(ST_SLOW),
        g(ST_PARKED),
        g(ST_WAITED)
    )
}
static ON: StdAtomicBool = StdAtomicBool::new(false);

/// Whether the lockq model is active (`HYMPI_THREAD_MODEL=lockq` at `MPI_THREAD_MULTIPLE`).
#[inline(always)]
pub fn on() -> bool {
    ON.load(StdOrdering::Relaxed)
}

/// Turns the model on for `pool` (at `MPI_Init`, before any other thread can call MPI;
/// `MPI_Init` runs once per process).
pub fn install(pool: &Pool) {
    let n = pool.len();
    if !STATE.load(StdOrdering::Acquire).is_null() {
        ON.store(true, StdOrdering::Release);
        return;
    }
    let vqs = (0..n)
        .map(|_| Vq {
            queue: Queue::new(),
            held: RaceCell::new(None),
            reserve: Reserve::new(RESERVE),
        })
        .collect();
    let s = Box::leak(Box::new(State { vqs }));
    STATE.store(s, StdOrdering::Release);
    for v in 0..n {
        mark(pool, v); // fill the reserves at the first acquisition
    }
    ON.store(true, StdOrdering::Release);
}

/// Turns the model off (at `MPI_Finalize`, once every queue was drained and no other thread
/// is inside MPI); forgets the reserved handles (the VCI tables are emptied next).
pub fn clear() {
    ON.store(false, StdOrdering::Release);
    if let Some(s) = state() {
        for q in s.vqs.iter() {
            q.reserve.drain();
        }
    }
    for f in FACTS.iter() {
        f.handle.store(0, StdOrdering::Relaxed);
    }
}

#[inline(always)]
fn state() -> Option<&'static State> {
    // SAFETY: null or a leaked (never freed) state.
    unsafe { STATE.load(StdOrdering::Acquire).as_ref() }
}

#[inline(always)]
fn vq(v: usize) -> Option<&'static Vq> {
    state()?.vqs.get(v)
}

// ---------------------------------------------------------------------------------------------
// Communicator facts readable without a lock

/// The fast paths' facts of one intracommunicator, behind a sequence lock so that a thread
/// that missed the VCI lock can check its arguments. Written only by the slow path (which
/// holds every lock, so there is one writer at a time).
struct Facts {
    seq: StdAtomicU32,
    handle: StdAtomicUsize,
    ctx: StdAtomicU32,
    rank: AtomicI32,
    size: AtomicI32,
}

const FACT_SLOTS: usize = 4096;
#[allow(clippy::declare_interior_mutable_const)]
const NO_FACTS: Facts = Facts {
    seq: StdAtomicU32::new(0),
    handle: StdAtomicUsize::new(0),
    ctx: StdAtomicU32::new(0),
    rank: AtomicI32::new(0),
    size: AtomicI32::new(0),
};
static FACTS: [Facts; FACT_SLOTS] = [NO_FACTS; FACT_SLOTS];

/// Publishes communicator `c` (called by the slow path, which holds every lock).
pub fn publish(c: &FastComm) {
    let Some(f) = FACTS.get(c.idx as usize) else {
        return;
    };
    let s = f.seq.load(StdOrdering::Relaxed);
    f.seq.store(s.wrapping_add(1), StdOrdering::Relaxed);
    fence(StdOrdering::Release);
    f.handle.store(c.handle, StdOrdering::Relaxed);
    f.ctx.store(c.ctx, StdOrdering::Relaxed);
    f.rank.store(c.rank, StdOrdering::Relaxed);
    f.size.store(c.size, StdOrdering::Relaxed);
    f.seq.store(s.wrapping_add(2), StdOrdering::Release);
}

/// Withdraws communicator table entry `idx` (being freed or re-pinned).
pub fn retract(idx: u32) {
    if let Some(f) = FACTS.get(idx as usize) {
        let s = f.seq.load(StdOrdering::Relaxed);
        f.seq.store(s.wrapping_add(1), StdOrdering::Relaxed);
        fence(StdOrdering::Release);
        f.handle.store(0, StdOrdering::Relaxed);
        f.seq.store(s.wrapping_add(2), StdOrdering::Release);
    }
}

/// The published facts of communicator `handle`, if consistent.
#[inline]
fn facts(handle: usize) -> Option<FastComm> {
    let idx = ((handle >> 12) & 0xfffff).checked_sub(1)?;
    let f = FACTS.get(idx)?;
    let s1 = f.seq.load(StdOrdering::Acquire);
    if s1 & 1 != 0 {
        return None;
    }
    let c = FastComm {
        handle: f.handle.load(StdOrdering::Relaxed),
        idx: idx as u32,
        ctx: f.ctx.load(StdOrdering::Relaxed),
        rank: f.rank.load(StdOrdering::Relaxed),
        size: f.size.load(StdOrdering::Relaxed),
        // Queued operations reach oneself only; peers go through the lock.
        peers: crate::core::threads::vci::NO_PEERS,
    };
    fence(StdOrdering::Acquire);
    (f.seq.load(StdOrdering::Relaxed) == s1 && c.handle == handle).then_some(c)
}

// ---------------------------------------------------------------------------------------------
// Entering a VCI

/// What a fast path gets from the LockQ entry.
pub enum Entry<T> {
    /// The VCI's lock is held by this thread, with its queue drained: take it over with
    /// [`VciGuard::adopt`] and run the operation now. (No guard travels in the value: a guard
    /// built where the caller sees it has a constant mode, so that leaving it compiles to the
    /// unlock alone.)
    Locked,
    /// The operation was queued; its result.
    Done(T),
    /// Take the slow path.
    Slow,
}

/// Waits for VCI `v`'s lock and drains its queue; `None` (lock released) when a descriptor
/// needs the slow path. (Under the other lock-based models nothing is ever pending: the lock
/// alone.)
#[inline(always)]
pub fn enter(pool: &Pool, v: usize) -> Option<VciGuard<'_>> {
    drained(VciGuard::enter(pool, v, true), v)
}

/// A lock miss that cannot be queued: waits for the lock as the `vci` model does.
#[cold]
fn waited<T>(pool: &Pool, v: usize) -> Entry<T> {
    count(ST_WAITED);
    locked_or_slow(enter(pool, v))
}

#[inline(always)]
fn locked_or_slow<T>(g: Option<VciGuard<'_>>) -> Entry<T> {
    match g {
        Some(g) => {
            g.keep();
            Entry::Locked
        }
        None => Entry::Slow,
    }
}

/// A completion fast path's entry to VCI `v` when its clean acquisition
/// ([`VciGuard::try_enter_clean`]) failed (the lock is held, or work is pending): waits for
/// the lock and drains. True: this thread holds the lock (take it over with
/// [`VciGuard::adopt`]); false: the slow path.
#[cold]
#[inline(never)]
pub fn enter_contended(pool: &Pool, v: usize) -> bool {
    match enter(pool, v) {
        Some(g) => {
            g.keep();
            true
        }
        None => false,
    }
}

/// `MPI_Isend` entry on VCI `v` (valid tag, `bytes` contiguous bytes at `buf`) when its clean
/// acquisition failed: under `lockq`, the lock if free now (drained), or the send queued
/// (its request handle); under the other models, the lock once free. Or the slow path.
#[cold]
#[inline(never)]
pub fn isend_contended(
    pool: &Pool,
    v: usize,
    comm: usize,
    dest: i32,
    tag: i32,
    buf: *const u8,
    bytes: usize,
) -> Entry<usize> {
    if !on() {
        return locked_or_slow(enter(pool, v));
    }
    match VciGuard::try_enter(pool, v) {
        Some(g) => locked_or_slow(drained(g, v)),
        None => defer_send(pool, v, comm, dest, tag, buf, bytes),
    }
}

/// `g` with VCI `v`'s queue drained, or `None` (lock released) when a descriptor needs the
/// slow path.
#[inline(always)]
fn drained(mut g: VciGuard<'_>, v: usize) -> Option<VciGuard<'_>> {
    drain(&mut g, v).then_some(g)
}

#[inline(always)] // reached only from the out-of-line `isend_contended`
fn defer_send(
    pool: &Pool,
    v: usize,
    comm: usize,
    dest: i32,
    tag: i32,
    buf: *const u8,
    bytes: usize,
) -> Entry<usize> {
    let (Some(c), Some(q)) = (facts(comm), vq(v)) else {
        return waited(pool, v);
    };
    if pool.vci_of_msg(c.ctx, dest, tag) != v {
        return waited(pool, v);
    }
    if dest == MPI_PROC_NULL {
        return Entry::Done(DONE_SEND_HANDLE);
    }
    if dest != c.rank {
        return Entry::Slow; // another process (or an error): the slow path, which drains first
    }
    if bytes > pool.eager_max {
        return waited(pool, v);
    }
    // SAFETY: the send buffer holds `bytes` bytes (the caller's MPI contract).
    let data = unsafe { crate::core::p2p::raw_slice(buf, bytes) }.to_vec();
    let env = Envelope {
        ctx: c.ctx,
        src: c.rank,
        tag,
    };
    q.queue.push(Op::Send { env, data });
    mark(pool, v);
    count(ST_SEND);
    Entry::Done(DONE_SEND_HANDLE)
}

/// `MPI_Irecv` entry on VCI `v` (valid tag, `cap` contiguous bytes of predefined type `dt` at
/// `buf`) when its clean acquisition failed: under `lockq`, the lock if free now (drained), or
/// the receive queued on a reserved request (its index and handle); under the other models,
/// the lock once free. Or the slow path.
#[cold]
#[inline(never)]
#[allow(clippy::too_many_arguments)]
pub fn irecv_contended(
    pool: &Pool,
    v: usize,
    comm: usize,
    src: i32,
    tag: i32,
    buf: *mut u8,
    cap: usize,
    dt: usize,
) -> Entry<(u32, usize)> {
    if !on() {
        return locked_or_slow(enter(pool, v));
    }
    match VciGuard::try_enter(pool, v) {
        Some(g) => locked_or_slow(drained(g, v)),
        None => defer_recv(pool, v, comm, src, tag, buf, cap, dt),
    }
}

#[inline(always)] // reached only from the out-of-line `irecv_contended`
#[allow(clippy::too_many_arguments)]
fn defer_recv(
    pool: &Pool,
    v: usize,
    comm: usize,
    src: i32,
    tag: i32,
    buf: *mut u8,
    cap: usize,
    dt: usize,
) -> Entry<(u32, usize)> {
    let (Some(c), Some(q), Some(unit)) =
        (facts(comm), vq(v), crate::core::datatype::predefined(dt))
    else {
        return waited(pool, v);
    };
    if pool.vci_of_msg(c.ctx, src, tag) != v {
        return waited(pool, v);
    }
    if !(fastpath::rank_in(src, c.size) || src == MPI_ANY_SOURCE) {
        return Entry::Slow; // MPI_PROC_NULL or an error
    }
    if (src | tag) < 0
        && crate::core::threads::spread::mode(c.ctx / crate::core::objects::comm::CONTEXTS_PER_ID)
            != 0
    {
        return Entry::Slow; // a wildcard on a spread communicator (maybe asserted away)
    }
    let hint = (buf as usize >> 6) ^ (tag as usize);
    let Some(h) = q.reserve.take(hint) else {
        return waited(pool, v);
    };
    let index = (((h >> 12) & 0xfffff) - 1) as u32;
    q.queue.push(Op::Recv {
        index,
        comm: c.idx,
        pattern: Pattern {
            ctx: c.ctx,
            src,
            tag,
        },
        src,
        tag,
        buf,
        cap,
        unit,
    });
    mark(pool, v);
    count(ST_RECV);
    Entry::Done((((v as u32) << RID_VCI_SHIFT) | index, h))
}

// ---------------------------------------------------------------------------------------------
// Draining

/// Executes the queued descriptors of VCI `v` (its lock held by `g`) in order and refills its
/// reserve, if its pending mark is set. False when a descriptor needs the slow path (it is
/// parked in `held`).
#[inline(always)]
pub fn drain(g: &mut VciGuard<'_>, v: usize) -> bool {
    !g.take_pending() || drain_cold(g, v)
}

#[cold]
#[inline(never)]
fn drain_cold(g: &mut VciGuard<'_>, v: usize) -> bool {
    let Some(q) = vq(v) else {
        return true;
    };
    // SAFETY: the caller holds the VCI lock: it is the queue's only consumer and the only
    // user of `held`.
    if q.held.with_mut(|h| unsafe { (*h).is_some() }) {
        g.mark_pending();
        return false;
    }
    let s = g.state();
    // SAFETY: as above.
    while let Some(op) = unsafe { q.queue.pop() } {
        if let Err(op) = run_fast(s, v, op) {
            // SAFETY: as above.
            q.held.with_mut(|h| unsafe { *h = Some(op) });
            g.mark_pending();
            count(ST_PARKED);
            return false;
        }
    }
    if q.reserve.wants_refill() {
        q.reserve.refill(|| {
            s.reqs
                .insert_handle(Request::new(ReqKind::Recv, 0))
                .map(|(_, h)| h)
        });
    }
    true
}

/// Runs `op` on VCI `v` alone; gives it back when it needs the slow path.
fn run_fast(s: &mut VciState, v: usize, op: Op) -> Result<(), Op> {
    match op {
        Op::Send { env, data } => {
            let Some(i) = s
                .matcher
                .posted
                .iter()
                .position(|p| p.pattern.accepts(&env))
            else {
                s.matcher.unexpected.push_back(Unexpected {
                    env,
                    payload: Payload::Eager { data, ack: None },
                });
                return Ok(());
            };
            let Some(rid) = s.matcher.posted.get(i).map(|p| p.req) else {
                return Err(Op::Send { env, data });
            };
            let plain = crate::core::threads::vci::vci_of_rid(rid) == v
                && s.reqs
                    .get(rid & ((1 << RID_VCI_SHIFT) - 1))
                    .is_some_and(fastpath::plain_recv);
            if !plain {
                return Err(Op::Send { env, data });
            }
            let r = s
                .reqs
                .get_mut(rid & ((1 << RID_VCI_SHIFT) - 1))
                .expect("checked above");
            fastpath::deliver(r, &env, data.as_ptr(), data.len());
            s.matcher.posted.remove(i);
            Ok(())
        }
        Op::Recv {
            index,
            comm,
            pattern,
            buf,
            cap,
            ..
        } => {
            let found = s.matcher.find_unexpected(&pattern);
            if let Some(i) = found {
                if !matches!(
                    s.matcher.unexpected[i].payload,
                    Payload::Eager { ack: None, .. }
                ) {
                    return Err(op);
                }
            }
            let Some(r) = s.reqs.get_mut(index) else {
                return Ok(()); // cannot happen: reserved entries stay until filled
            };
            *r = Request::new(ReqKind::Recv, comm);
            r.buf = buf;
            r.cap = cap;
            match found {
                Some(i) => {
                    let u = s.matcher.unexpected.remove(i).expect("found above");
                    if let Payload::Eager { data, .. } = &u.payload {
                        fastpath::deliver(r, &u.env, data.as_ptr(), data.len());
                    }
                }
                None => s.matcher.posted.push_back(Posted {
                    pattern,
                    req: ((v as u32) << RID_VCI_SHIFT) | index,
                }),
            }
            Ok(())
        }
    }
}

/// The slow path's drain: runs the parked and queued descriptors of every VCI with the whole
/// runtime (the caller holds every lock) and refills the reserves.
pub fn drain_all(rt: &mut crate::core::runtime::Runtime) {
    let Some(st) = state() else {
        return;
    };
    let Some(pool) = crate::core::threads::vci::pool() else {
        return;
    };
    for (v, q) in st.vqs.iter().enumerate() {
        if !pool.take_pending(v) {
            continue;
        }
        // SAFETY: the slow path holds every VCI lock: it is the only consumer and the only
        // user of `held`.
        let held = q.held.with_mut(|h| unsafe { (*h).take() });
        if let Some(op) = held {
            run_slow(rt, v, op);
        }
        // SAFETY: as above.
        while let Some(op) = unsafe { q.queue.pop() } {
            run_slow(rt, v, op);
        }
        if q.reserve.wants_refill() {
            q.reserve.refill(|| {
                let rid = rt.reqs.insert(v, Request::new(ReqKind::Recv, 0))?;
                Some(rt.reqs.handle(rid))
            });
        }
    }
}

fn run_slow(rt: &mut crate::core::runtime::Runtime, v: usize, op: Op) {
    count(ST_SLOW);
    match op {
        Op::Send { env, data } => {
            let m = rt.matchers.of_msg(env.ctx, env.src, env.tag);
            let u = Unexpected {
                env,
                payload: Payload::Eager { data, ack: None },
            };
            match m.take_posted(&env) {
                Some(p) => {
                    // Eager data without acknowledgement: delivering cannot fail.
                    let _ = rt.consume(p.req, u);
                }
                None => m.unexpected.push_back(u),
            }
        }
        Op::Recv {
            index,
            comm,
            src,
            tag,
            buf,
            cap,
            unit,
            ..
        } => {
            let rid = ((v as u32) << RID_VCI_SHIFT) | index;
            let Some(r) = rt.reqs.get_mut(rid) else {
                return;
            };
            *r = Request::new(ReqKind::Recv, comm);
            let args = crate::core::p2p::RecvArgs {
                comm,
                src,
                tag,
                buf,
                cap,
                unit,
                layout: None,
            };
            if let Err(e) = rt.start_recv(rid, args) {
                // The arguments were checked; report anything else at completion.
                if let Some(r) = rt.reqs.get_mut(rid) {
                    r.status.error = e.class();
                }
                rt.complete(rid);
            }
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests;

#[cfg(all(test, loom))]
mod loom_tests;
