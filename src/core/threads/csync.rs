//! The `csync` thread-safety model (`HYMPI_THREAD_MODEL=csync`): software combining on an MCS
//! queue, after Amer et al., "Software Combining to Mitigate Multithreaded MPI Contention"
//! (ICS '19), §3.3 (DSM-Synch by Fatourou and Kallimanis, decomposed into acquire, combine
//! and release).
//!
//! Every VCI keeps its lock (`crate::core::threads::vci`) and gains a [`Combining`] queue. A
//! nonblocking fast-path call (`MPI_Isend`, `MPI_Irecv`) *announces* its operation: it links a
//! node holding the operation into the queue with one swap of the tail (the MCS lock's
//! enqueue). The thread at the head of the queue is the **combiner**: it takes the VCI's lock,
//! runs its own operation, then the operations of the nodes queued behind it, in queue order,
//! marking each `COMPLETE`, and finally hands the combiner role to the next node (`UNLOCKED`)
//! or empties the queue. A thread whose node was served returns without ever touching the
//! lock; a thread handed the role combines in turn. At most [`MAX_COMBINE`] operations of
//! others are run per turn, so the role circulates. Unlike `lockq`, an announcing call waits
//! until its operation ran (by itself or by the combiner): the operation reads the caller's
//! arguments in place, nothing is copied, and the call's result is exact.
//!
//! Completion calls that need the lock for a while (the `MPI_Wait`/`MPI_Test`/`MPI_Waitall`
//! fast paths) use [`Combining::acquire`] / [`Combining::release`]: an operation-less node
//! (the paper's NULL descriptor) that a combiner never serves but hands the role to; its
//! holder then takes the VCI's lock and runs its critical section; on release it combines the
//! operations queued meanwhile before handing on. A second lock among acquirers keeps at most
//! one operation-less node in the queue (it lives in the [`Combining`] itself), so
//! completion calls do not interrupt combining more than once per turn. Slow paths take the
//! VCI locks directly, as under the other models: a combiner holds its VCI's lock while it
//! runs operations, so they exclude each other.
//!
//! **Node lifetime.** Announcing nodes live on their caller's stack. A node is written by its
//! owner before the swap that publishes it, by its successor (the link, `next`), and by the
//! combiner (its status). The combiner marks a node `COMPLETE` (or the role holder hands on
//! from it) only once that node's successor is known — linked, or none because the combiner
//! swung the tail back to empty — so after `COMPLETE` no thread reaches the node and its
//! owner may return.
//!
//! **Ordering argument.** A call returns only after its operation ran. If operation A
//! happens before operation B (program order, or synchronisation between threads) on one VCI,
//! A ran before B's call began, so B runs after A. Concurrent operations run in queue order.
//!
//! **Progress.** Announcing costs one swap and one store; waiting ends when the combiner
//! reaches the node or hands on. The combiner serves at most [`MAX_COMBINE`] others, and
//! every operation it runs is a bounded fast-path step. Loom models (`--cfg loom`) check that
//! every operation runs once, in per-thread order, that combiners never race on the state, and
//! that acquire/release interleaves with combining.

#[cfg(loom)]
use loom::sync::atomic::{AtomicBool, AtomicPtr, AtomicU8, Ordering};
#[cfg(not(loom))]
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU8, Ordering};

/// Most operations of other threads one combiner runs before handing the role on (the paper's
/// default).
pub const MAX_COMBINE: usize = 1024;

const WAIT: u8 = 0;
const UNLOCKED: u8 = 1;
const COMPLETE: u8 = 2;

/// What the combining queue protects: a lock and the state behind it.
pub trait Resource {
    /// The protected state.
    type State;
    /// Takes the lock (blocking).
    fn lock(&self);
    /// Releases the lock.
    ///
    /// # Safety
    /// The calling thread holds it.
    unsafe fn unlock(&self);
    /// Runs `f` on the state.
    ///
    /// # Safety
    /// The calling thread holds the lock and has no other reference to the state.
    unsafe fn with_state<T>(&self, f: impl FnOnce(&mut Self::State) -> T) -> T;
}

/// An announced operation: a function and its closure.
type Job<S> = (unsafe fn(*mut (), &mut S), *mut ());

/// A queue node: an announcement of one operation (or of a lock acquisition when `job` is
/// `None`).
struct Node<S> {
    status: AtomicU8,
    next: AtomicPtr<Node<S>>,
    /// Set before the node is published, read only after.
    job: Option<Job<S>>,
}

impl<S> Node<S> {
    fn new(job: Option<Job<S>>) -> Self {
        Node {
            status: AtomicU8::new(WAIT),
            next: AtomicPtr::new(std::ptr::null_mut()),
            job,
        }
    }
}

/// Spins (then yields) until `status` leaves `WAIT`; the value it left for.
fn wait_status(status: &AtomicU8) -> u8 {
    #[cfg(not(loom))]
    let mut backoff = crate::platform::wait::Backoff::new();
    loop {
        let s = status.load(Ordering::Acquire);
        if s != WAIT {
            return s;
        }
        #[cfg(loom)]
        loom::thread::yield_now();
        #[cfg(not(loom))]
        backoff.idle();
    }
}

/// Links node `me` behind `pred` (the tail it swapped out) and waits until a combiner
/// serves it (`COMPLETE`) or hands it the role (`UNLOCKED`).
///
/// # Safety
/// `pred` was the queue's tail before `me` replaced it, and `me` is the caller's node.
#[cold]
#[inline(never)]
unsafe fn join<S>(pred: *mut Node<S>, me: *mut Node<S>) -> u8 {
    // SAFETY: a node stays valid until its successor is known (module doc), and `me` is its
    // successor.
    unsafe { (*pred).next.store(me, Ordering::Release) };
    // SAFETY: the caller's node.
    wait_status(unsafe { &(*me).status })
}

/// Calls closure `data` (an `F`) on `state`.
///
/// # Safety
/// `data` points to a live `F` that nothing else uses meanwhile.
unsafe fn call<S, F: FnMut(&mut S)>(data: *mut (), state: &mut S) {
    // SAFETY: forwarded from the caller.
    unsafe { (*(data as *mut F))(state) }
}

/// The combining queue of one VCI (or of any [`Resource`]).
pub struct Combining<S> {
    tail: AtomicPtr<Node<S>>,
    /// Held by the one thread whose operation-less node may be in the queue.
    acquirer: AtomicBool,
    /// That node.
    held: Node<S>,
    /// Most operations of others one combiner runs per turn.
    max_combine: usize,
    /// Operations run by a combiner for another thread, and hand-ons of the role (for
    /// `HYMPI_STATS`; written by the role's holder only).
    counts: [std::sync::atomic::AtomicUsize; 2],
}

// SAFETY: the raw pointers in the queue reach nodes whose owners wait until the protocol
// releases them (see the module doc); jobs run under the resource's lock on behalf of threads
// blocked until they ran.
unsafe impl<S> Sync for Combining<S> {}
// SAFETY: as above; a `Combining` owns no node but `held`.
unsafe impl<S> Send for Combining<S> {}

impl<S> Default for Combining<S> {
    fn default() -> Self {
        Self::new()
    }
}

impl<S> Combining<S> {
    /// An empty queue.
    pub fn new() -> Self {
        Combining {
            tail: AtomicPtr::new(std::ptr::null_mut()),
            acquirer: AtomicBool::new(false),
            held: Node::new(None),
            max_combine: MAX_COMBINE,
            counts: [const { std::sync::atomic::AtomicUsize::new(0) }; 2],
        }
    }

    /// Operations a combiner ran for another thread, and hand-ons of the combiner role, so
    /// far.
    pub fn counts(&self) -> (usize, usize) {
        let g = |i: usize| self.counts[i].load(std::sync::atomic::Ordering::Relaxed);
        (g(0), g(1))
    }

    /// Adds `n` to counter `i` (the role's holder only: no read-modify-write needed).
    fn bump(&self, i: usize, n: usize) {
        let c = &self.counts[i];
        c.store(
            c.load(std::sync::atomic::Ordering::Relaxed) + n,
            std::sync::atomic::Ordering::Relaxed,
        );
    }

    /// An empty queue whose combiners run at most `n` operations of others per turn.
    pub fn with_max_combine(n: usize) -> Self {
        Combining {
            max_combine: n,
            ..Self::new()
        }
    }

    /// Runs `f` on `r`'s state, under `r`'s lock, with every other operation announced on
    /// this queue excluded: by this thread (then also running operations announced behind
    /// it) or by the combiner of the moment. Returns once `f` ran.
    ///
    /// # Safety
    /// Every thread that reaches `r`'s state does so through this queue or under `r`'s lock,
    /// and `r` is the same resource for every user of this queue. `f` may run on another
    /// thread (while this one waits): it must not depend on the identity of its thread.
    pub unsafe fn run<R, F>(&self, r: &R, f: &mut F)
    where
        R: Resource<State = S>,
        F: FnMut(&mut S),
    {
        let node = Node::new(Some((
            call::<S, F> as unsafe fn(*mut (), &mut S),
            f as *mut F as *mut (),
        )));
        let me = &node as *const Node<S> as *mut Node<S>;
        let pred = self.tail.swap(me, Ordering::AcqRel);
        // SAFETY: `pred` is the node before `me` in the queue.
        if !pred.is_null() && unsafe { join(pred, me) } == COMPLETE {
            return; // a combiner ran `f`, and no longer reaches `node`
        }
        // This thread is the combiner.
        r.lock();
        // SAFETY: the lock is held, and the queue's protocol gives this thread the role.
        unsafe { r.with_state(|s| f(s)) };
        // SAFETY: the lock is held by this thread; `me` is its node, at the head.
        unsafe { self.release_from(r, me) };
    }

    /// The combiner's exit from its own node `me`: when nobody queued behind it, empties the
    /// queue and releases `r`'s lock (the uncontended case, inline); else combines.
    ///
    /// # Safety
    /// As for [`Combining::combine_and_release`].
    #[inline(always)]
    unsafe fn release_from<R: Resource<State = S>>(&self, r: &R, me: *mut Node<S>) {
        // SAFETY: `me` is the caller's node (valid).
        if unsafe { (*me).next.load(Ordering::Acquire) }.is_null()
            && self
                .tail
                .compare_exchange(
                    me,
                    std::ptr::null_mut(),
                    Ordering::AcqRel,
                    Ordering::Relaxed,
                )
                .is_ok()
        {
            // SAFETY: held by this thread (caller).
            unsafe { r.unlock() };
            return;
        }
        // SAFETY: forwarded from the caller.
        unsafe { self.combine_and_release(r, me) };
    }

    /// Takes the combiner role and `r`'s lock without an operation, for a critical section of
    /// the caller's; [`Combining::release`] ends it.
    pub fn acquire<R: Resource<State = S>>(&self, r: &R) {
        #[cfg(not(loom))]
        let mut backoff = crate::platform::wait::Backoff::new();
        while self
            .acquirer
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            #[cfg(loom)]
            loom::thread::yield_now();
            #[cfg(not(loom))]
            backoff.idle();
        }
        // No thread reaches `held` now: its last use ended with its successor known.
        self.held.status.store(WAIT, Ordering::Relaxed);
        self.held
            .next
            .store(std::ptr::null_mut(), Ordering::Relaxed);
        let me = &self.held as *const Node<S> as *mut Node<S>;
        let pred = self.tail.swap(me, Ordering::AcqRel);
        if !pred.is_null() {
            // SAFETY: `pred` is the node before `me` in the queue.
            let s = unsafe { join(pred, me) };
            debug_assert_eq!(s, UNLOCKED, "an operation-less node is never served");
        }
        r.lock();
    }

    /// Ends [`Combining::acquire`]: runs the operations announced meanwhile, releases `r`'s
    /// lock and hands the role on.
    ///
    /// # Safety
    /// This thread called [`Combining::acquire`] with `r` and has not released since.
    pub unsafe fn release<R: Resource<State = S>>(&self, r: &R) {
        let me = &self.held as *const Node<S> as *mut Node<S>;
        // SAFETY: forwarded from the caller: the lock and the role are this thread's.
        unsafe { self.release_from(r, me) };
        self.acquirer.store(false, Ordering::Release);
    }

    /// The successor of `cur`, waiting for its link if an enqueuer swapped the tail but has
    /// not linked yet; null when there is none and the queue is now empty.
    ///
    /// # Safety
    /// `cur` is a node of the queue that the caller (the combiner) keeps valid.
    unsafe fn successor(&self, cur: *mut Node<S>) -> *mut Node<S> {
        // SAFETY: `cur` is valid (caller).
        let next = unsafe { &(*cur).next };
        let n = next.load(Ordering::Acquire);
        if !n.is_null() {
            return n;
        }
        if self
            .tail
            .compare_exchange(
                cur,
                std::ptr::null_mut(),
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_ok()
        {
            return std::ptr::null_mut();
        }
        #[cfg(not(loom))]
        let mut backoff = crate::platform::wait::Backoff::new();
        loop {
            let n = next.load(Ordering::Acquire);
            if !n.is_null() {
                return n;
            }
            #[cfg(loom)]
            loom::thread::yield_now();
            #[cfg(not(loom))]
            backoff.idle();
        }
    }

    /// The combiner, holding `r`'s lock, with its own node `start` done: runs the
    /// operations queued behind it (at most `max_combine`, stopping before an
    /// operation-less node), releases the lock and hands the role on or empties the queue.
    ///
    /// # Safety
    /// The caller holds `r`'s lock and the combiner role, and `start` is its node.
    #[inline(never)]
    unsafe fn combine_and_release<R: Resource<State = S>>(&self, r: &R, start: *mut Node<S>) {
        let mut cur = start;
        let mut served = 0;
        // Marks a served node complete; its owner may return and its node vanish after.
        let done = |n: *mut Node<S>| {
            if n != start {
                // SAFETY: `n` was served and is still valid: its owner waits for this store.
                unsafe { (*n).status.store(COMPLETE, Ordering::Release) };
            }
        };
        loop {
            // SAFETY: `cur` is `start` or a served node not yet marked complete.
            let next = unsafe { self.successor(cur) };
            if next.is_null() {
                if served > 0 {
                    self.bump(0, served);
                }
                // SAFETY: held by this thread (caller).
                unsafe { r.unlock() };
                done(cur);
                return;
            }
            // SAFETY: `next` is linked and waiting: valid until this thread marks it.
            match unsafe { (*next).job } {
                Some((run, data)) if served < self.max_combine => {
                    // SAFETY: the lock is held; `data` is the closure of `next`'s owner, who
                    // waits without using it.
                    unsafe { r.with_state(|s| run(data, s)) };
                    done(cur);
                    cur = next;
                    served += 1;
                }
                _ => {
                    self.bump(0, served);
                    self.bump(1, 1);
                    // SAFETY: held by this thread (caller).
                    unsafe { r.unlock() };
                    // SAFETY: `next` is valid until its owner sees this store.
                    unsafe { (*next).status.store(UNLOCKED, Ordering::Release) };
                    done(cur);
                    return;
                }
            }
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use parking_lot::lock_api::RawMutex as _;
    use std::cell::UnsafeCell;
    use std::sync::Arc;

    /// A vector of operation numbers behind a raw mutex.
    struct Log {
        lock: parking_lot::RawMutex,
        ran: UnsafeCell<Vec<u32>>,
    }
    // SAFETY: (test) `ran` is touched under `lock` only.
    unsafe impl Sync for Log {}

    impl Resource for Log {
        type State = Vec<u32>;
        fn lock(&self) {
            self.lock.lock();
        }
        unsafe fn unlock(&self) {
            // SAFETY: (test) held by this thread.
            unsafe { self.lock.unlock() };
        }
        unsafe fn with_state<T>(&self, f: impl FnOnce(&mut Vec<u32>) -> T) -> T {
            // SAFETY: (test) the lock is held.
            f(unsafe { &mut *self.ran.get() })
        }
    }

    #[test]
    fn threads_run_every_operation_once_in_their_order() {
        let log: &'static Log = Box::leak(Box::new(Log {
            lock: <parking_lot::RawMutex as parking_lot::lock_api::RawMutex>::INIT,
            ran: UnsafeCell::new(Vec::new()),
        }));
        let q = Arc::new(Combining::with_max_combine(2));
        const T: u32 = 4;
        const N: u32 = 20_000;
        let ts: Vec<_> = (0..T)
            .map(|t| {
                let q = q.clone();
                std::thread::spawn(move || {
                    for i in 0..N {
                        let op = t * N + i;
                        if i % 7 == 0 {
                            q.acquire(log);
                            // SAFETY: (test) lock and role held.
                            unsafe { log.with_state(|ran| ran.push(op)) };
                            // SAFETY: (test) acquired above.
                            unsafe { q.release(log) };
                        } else {
                            // SAFETY: (test) every user goes through `q` with `log`.
                            unsafe { q.run(log, &mut |ran: &mut Vec<u32>| ran.push(op)) };
                        }
                    }
                })
            })
            .collect();
        for t in ts {
            t.join().unwrap();
        }
        // SAFETY: (test) every thread ended.
        let ran = unsafe { &*log.ran.get() };
        assert_eq!(ran.len(), (T * N) as usize);
        for t in 0..T {
            let mine: Vec<u32> = ran.iter().copied().filter(|x| x / N == t).collect();
            assert!(
                mine.windows(2).all(|w| w[0] + 1 == w[1]),
                "thread {t} reordered"
            );
            assert_eq!(mine.len(), N as usize);
        }
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use loom::cell::UnsafeCell;
    use loom::sync::Arc;

    /// A resource whose lock is a loom spin lock and whose state loom checks for races.
    struct Log {
        locked: AtomicBool,
        ran: UnsafeCell<Vec<u32>>,
    }

    impl Resource for Log {
        type State = Vec<u32>;
        fn lock(&self) {
            while self
                .locked
                .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_err()
            {
                loom::thread::yield_now();
            }
        }
        unsafe fn unlock(&self) {
            self.locked.store(false, Ordering::Release);
        }
        unsafe fn with_state<T>(&self, f: impl FnOnce(&mut Vec<u32>) -> T) -> T {
            // SAFETY: (model) the lock is held; loom checks that claim.
            self.ran.with_mut(|p| f(unsafe { &mut *p }))
        }
    }

    fn model(f: impl Fn() + Sync + Send + 'static) {
        model_bounded(2, f)
    }

    fn model_bounded(preemptions: usize, f: impl Fn() + Sync + Send + 'static) {
        let mut m = loom::model::Builder::new();
        m.preemption_bound = Some(preemptions);
        // The waits spin (yielding): allow their branches.
        m.max_branches = 100_000;
        m.check(f);
    }

    /// Two threads announce two operations each: every operation runs once, each thread's
    /// in program order, and loom sees no race on the state, under every interleaving within
    /// the bound.
    #[test]
    fn loom_combining_runs_each_operation_once_in_order() {
        model(|| {
            let log = Arc::new(Log {
                locked: AtomicBool::new(false),
                ran: UnsafeCell::new(Vec::new()),
            });
            let q = Arc::new(Combining::new());
            let t = {
                let (q, log) = (q.clone(), log.clone());
                loom::thread::spawn(move || {
                    for i in 0..2 {
                        // SAFETY: (model) every user goes through `q` with `log`.
                        unsafe { q.run(&*log, &mut |ran: &mut Vec<u32>| ran.push(i)) };
                    }
                })
            };
            for i in 2..4 {
                // SAFETY: (model) as above.
                unsafe { q.run(&*log, &mut |ran: &mut Vec<u32>| ran.push(i)) };
            }
            t.join().unwrap();
            // SAFETY: (model) every other thread has ended; loom checks the read.
            let ran = log.ran.with(|p| unsafe { (*p).clone() });
            assert_eq!(ran.len(), 4, "lost or duplicated: {ran:?}");
            for t in 0..2 {
                let mine: Vec<u32> = ran.iter().copied().filter(|x| x / 2 == t).collect();
                assert_eq!(mine, vec![2 * t, 2 * t + 1], "reordered: {ran:?}");
            }
        });
    }

    /// Three threads announce one operation each, and a combiner serves at most one other
    /// before it hands on: every operation runs once (one preemption: three spinning
    /// threads make the space of two too large to explore).
    #[test]
    fn loom_combining_serves_and_hands_on() {
        model_bounded(1, || {
            let log = Arc::new(Log {
                locked: AtomicBool::new(false),
                ran: UnsafeCell::new(Vec::new()),
            });
            let q = Arc::new(Combining::with_max_combine(1));
            let ts: Vec<_> = (0..2u32)
                .map(|t| {
                    let (q, log) = (q.clone(), log.clone());
                    loom::thread::spawn(move || {
                        // SAFETY: (model) every user goes through `q` with `log`.
                        unsafe { q.run(&*log, &mut |ran: &mut Vec<u32>| ran.push(t)) };
                    })
                })
                .collect();
            // SAFETY: (model) as above.
            unsafe { q.run(&*log, &mut |ran: &mut Vec<u32>| ran.push(2)) };
            for t in ts {
                t.join().unwrap();
            }
            // SAFETY: (model) every other thread has ended; loom checks the read.
            let mut ran = log.ran.with(|p| unsafe { (*p).clone() });
            ran.sort();
            assert_eq!(ran, vec![0, 1, 2], "lost or duplicated");
        });
    }

    /// An acquirer's critical section interleaves with two announcing threads: it never
    /// overlaps an operation (loom would see the race), and every operation runs once.
    #[test]
    fn loom_acquire_release_excludes_and_loses_nothing() {
        model(|| {
            let log = Arc::new(Log {
                locked: AtomicBool::new(false),
                ran: UnsafeCell::new(Vec::new()),
            });
            let q = Arc::new(Combining::new());
            let ts: Vec<_> = (0..1u32)
                .map(|t| {
                    let (q, log) = (q.clone(), log.clone());
                    loom::thread::spawn(move || {
                        // SAFETY: (model) every user goes through `q` with `log`.
                        unsafe { q.run(&*log, &mut |ran: &mut Vec<u32>| ran.push(t)) };
                    })
                })
                .collect();
            q.acquire(&*log);
            // SAFETY: (model) lock and role held.
            unsafe { log.with_state(|ran| ran.push(7)) };
            // SAFETY: (model) acquired above.
            unsafe { q.release(&*log) };
            for t in ts {
                t.join().unwrap();
            }
            // SAFETY: (model) every other thread has ended; loom checks the read.
            let mut ran = log.ran.with(|p| unsafe { (*p).clone() });
            ran.sort();
            assert_eq!(ran, vec![0, 7], "lost or duplicated");
        });
    }
}
