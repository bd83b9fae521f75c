//! The `offload` thread-safety model (`HYMPI_THREAD_MODEL=offload`): application threads hand
//! their operations to a dedicated communication thread, after the "LLN lockless offload"
//! baseline of Amer et al., "Software Combining to Mitigate Multithreaded MPI Contention"
//! (ICS '19), §2.3, Fig. 1c.
//!
//! The communication thread is the asynchronous progress thread (`crate::core::threads::async_progress`),
//! which under this model never sleeps: each round it serves every posted operation, then
//! polls the progress engine. A nonblocking fast-path call (`MPI_Isend`, `MPI_Irecv`) wraps its
//! body in a closure, pushes a [`Post`] holding it (on the caller's stack) on the process's
//! [`Inbox`] with one compare-and-swap, and spins until the communication thread has run it
//! under the VCI's lock: application threads never contend for a VCI lock on initiation, only
//! for the inbox's head word. Completion calls check their requests under the VCI's lock as in
//! the `vci` model (the communication thread completes them meanwhile). This variant waits
//! for its operation to run, so its result (a request handle) is exact and its buffer is read
//! in place; the paper's variant returns at once and needs requests made before the hand-off.
//!
//! **Inbox.** A Treiber stack whose consumer takes everything at once (one swap to empty):
//! pushes are lock-free, and a push's compare-and-swap cannot succeed on a stale head (ABA)
//! in a harmful way, since the consumer never pops one node: a head address seen again is the
//! head again. The consumer reverses each batch, so posts run in push order; a post's caller
//! waits until it ran, so a thread's operations run in its program order, and operations
//! ordered by the application (A's call returned before B's began) run in that order.
//!
//! **Node lifetime.** The communication thread reads a post's `next` and runs its job before
//! it stores `done`; after that store it never touches the post, whose owner may return.
//!
//! A loom model (`--cfg loom`) checks that every post runs exactly once, after the posts of its
//! thread that preceded it, and that its owner returns only after it ran.

#[cfg(loom)]
use loom::sync::atomic::{AtomicBool, AtomicPtr, Ordering};
#[cfg(not(loom))]
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};

/// A posted operation: a function and its closure, run on behalf of a waiting thread.
pub struct Post {
    next: AtomicPtr<Post>,
    done: AtomicBool,
    /// VCI the operation runs on.
    vci: usize,
    run: unsafe fn(*mut (), *mut ()),
    data: *mut (),
}

/// Calls closure `data` (an `F`) on the state `state` (an `S`).
///
/// # Safety
/// `data` points to a live `F` nothing else uses meanwhile; `state` to an `S` the caller may
/// mutate.
unsafe fn call<S, F: FnMut(&mut S)>(data: *mut (), state: *mut ()) {
    // SAFETY: forwarded from the caller.
    unsafe { (*(data as *mut F))(&mut *(state as *mut S)) }
}

/// The posts waiting for the communication thread.
pub struct Inbox {
    head: AtomicPtr<Post>,
}

impl Default for Inbox {
    fn default() -> Self {
        Self::new()
    }
}

impl Inbox {
    /// An empty inbox.
    pub fn new() -> Self {
        Inbox {
            head: AtomicPtr::new(std::ptr::null_mut()),
        }
    }

    /// Posts `f` for VCI `vci` and waits until the communication thread ran it.
    ///
    /// # Safety
    /// The consumer runs `f` on a state of type `S` (the VCI's); `f` must not depend on the
    /// identity of its thread. A consumer must serve this inbox for the call to return.
    pub unsafe fn post_and_wait<S, F: FnMut(&mut S)>(&self, vci: usize, f: &mut F) {
        let post = Post {
            next: AtomicPtr::new(std::ptr::null_mut()),
            done: AtomicBool::new(false),
            vci,
            run: call::<S, F>,
            data: f as *mut F as *mut (),
        };
        // SAFETY: `post` outlives its service: this function waits for `done` below.
        unsafe { self.push(&post as *const Post as *mut Post) };
        // Spin briefly, then yield: the communication thread needs a core to run the post.
        #[cfg(not(loom))]
        let mut polls = 0u32;
        while !post.done.load(Ordering::Acquire) {
            #[cfg(not(loom))]
            {
                polls += 1;
                if polls < 256 {
                    std::hint::spin_loop();
                    continue;
                }
            }
            #[cfg(loom)]
            loom::thread::yield_now();
            #[cfg(not(loom))]
            std::thread::yield_now();
        }
    }

    /// Pushes post `me` (lock-free).
    ///
    /// # Safety
    /// `me` stays valid and unused by the caller until the consumer stored its `done`.
    unsafe fn push(&self, me: *mut Post) {
        let mut head = self.head.load(Ordering::Relaxed);
        loop {
            // SAFETY: valid (caller); not yet published.
            unsafe { (*me).next.store(head, Ordering::Relaxed) };
            match self
                .head
                .compare_exchange_weak(head, me, Ordering::Release, Ordering::Relaxed)
            {
                Ok(_) => return,
                Err(h) => head = h,
            }
        }
    }

    /// Takes every post and runs each, in push order, through `enter(vci, job)`, which must
    /// run `job` on VCI `vci`'s state under its lock. Returns how many ran.
    ///
    /// # Safety
    /// One consumer at a time; `enter` gives each job the state type its poster expects.
    pub unsafe fn serve(&self, mut enter: impl FnMut(usize, &mut dyn FnMut(*mut ()))) -> usize {
        if self.head.load(Ordering::Relaxed).is_null() {
            return 0;
        }
        let mut p = self.head.swap(std::ptr::null_mut(), Ordering::Acquire);
        // Reverse into push order.
        let mut order: *mut Post = std::ptr::null_mut();
        while !p.is_null() {
            // SAFETY: a taken post is valid until its `done` is stored.
            let next = unsafe { (*p).next.load(Ordering::Relaxed) };
            // SAFETY: as above; only the consumer touches `next` after the push.
            unsafe { (*p).next.store(order, Ordering::Relaxed) };
            order = p;
            p = next;
        }
        let mut n = 0;
        while !order.is_null() {
            // SAFETY: valid until `done` is stored below; `next` read first.
            let post = unsafe { &*order };
            let next = post.next.load(Ordering::Relaxed);
            // SAFETY: `data` is the poster's closure, which it does not use while waiting;
            // `enter` passes the state type the poster expects (caller's contract).
            enter(post.vci, &mut |state| unsafe {
                (post.run)(post.data, state)
            });
            post.done.store(true, Ordering::Release);
            order = next;
            n += 1;
        }
        n
    }
}

/// The process's inbox.
fn inbox() -> &'static Inbox {
    static INBOX: std::sync::OnceLock<Inbox> = std::sync::OnceLock::new();
    INBOX.get_or_init(Inbox::new)
}

/// Runs `f` on VCI `v` through the communication thread; returns once it ran.
///
/// # Safety
/// `f` must not depend on the identity of its thread; the caller must not be inside the slow
/// path.
pub unsafe fn run(v: usize, f: &mut impl FnMut(&mut crate::core::threads::vci::VciState)) {
    // SAFETY: `serve_process` runs every job on VCI state (`VciState`); thread independence is
    // the caller's; the communication thread runs while the model is on.
    unsafe { inbox().post_and_wait(v, f) };
}

/// Serves the process's inbox (the communication thread's turn): every post runs on its VCI
/// under the VCI's lock. Returns how many ran.
pub fn serve_process() -> usize {
    let Some(pool) = crate::core::threads::vci::pool() else {
        return 0;
    };
    // SAFETY: only the communication thread serves; every job was posted by `run` and so
    // expects a `VciState`, which `with_vci` passes under the VCI's lock.
    unsafe {
        inbox().serve(|v, job| {
            crate::core::threads::vci::with_vci(pool, v, true, |s| {
                job(s as *mut crate::core::threads::vci::VciState as *mut ())
            })
        })
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn posts_run_once_in_each_threads_order() {
        let inbox = Arc::new(Inbox::new());
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let ran = Arc::new(parking_lot::Mutex::new(Vec::<u32>::new()));
        let server = {
            let (inbox, stop, ran) = (inbox.clone(), stop.clone(), ran.clone());
            std::thread::spawn(move || {
                let mut state: Vec<u32> = Vec::new();
                while !stop.load(Ordering::Acquire) {
                    // SAFETY: (test) one consumer; jobs expect a Vec<u32>.
                    unsafe {
                        inbox.serve(|_, job| job(&mut state as *mut Vec<u32> as *mut ()));
                    }
                    std::thread::yield_now();
                }
                *ran.lock() = state;
            })
        };
        const T: u32 = 3;
        const N: u32 = 5000;
        let ts: Vec<_> = (0..T)
            .map(|t| {
                let inbox = inbox.clone();
                std::thread::spawn(move || {
                    for i in 0..N {
                        let mut seen = 0;
                        // SAFETY: (test) the server passes a Vec<u32>.
                        unsafe {
                            inbox.post_and_wait(0, &mut |s: &mut Vec<u32>| {
                                s.push(t * N + i);
                                seen = s.len();
                            })
                        };
                        assert!(seen > 0, "the job's effect is visible to its poster");
                    }
                })
            })
            .collect();
        for t in ts {
            t.join().unwrap();
        }
        stop.store(true, Ordering::Release);
        server.join().unwrap();
        let ran = ran.lock();
        assert_eq!(ran.len(), (T * N) as usize);
        for t in 0..T {
            let mine: Vec<u32> = ran.iter().copied().filter(|x| x / N == t).collect();
            assert!(
                mine.windows(2).all(|w| w[0] + 1 == w[1]),
                "thread {t} reordered"
            );
        }
    }
}

#[cfg(all(test, loom))]
mod loom_tests {
    use super::*;
    use loom::cell::UnsafeCell;
    use loom::sync::Arc;

    /// A posting thread (two posts) and a serving thread: every post runs once,
    /// in its thread's order, and each poster returns only after its job ran (it sees the
    /// job's result).
    #[test]
    fn loom_inbox_runs_each_post_once_in_order() {
        let mut m = loom::model::Builder::new();
        m.preemption_bound = Some(2);
        m.max_branches = 100_000;
        m.check(|| {
            let inbox = Arc::new(Inbox::new());
            let state = Arc::new(UnsafeCell::new(Vec::<u32>::new()));
            let posters: Vec<_> = (0..1u32)
                .map(|t| {
                    let inbox = inbox.clone();
                    loom::thread::spawn(move || {
                        for i in 0..2 - t {
                            let mut got = 0;
                            // SAFETY: (model) the server passes a Vec<u32>.
                            unsafe {
                                inbox.post_and_wait(0, &mut |s: &mut Vec<u32>| {
                                    s.push(2 * t + i);
                                    got = s.len();
                                })
                            };
                            assert!(got > 0);
                        }
                    })
                })
                .collect();
            let mut served = 0;
            while served < 2 {
                // SAFETY: (model) one consumer; jobs expect a Vec<u32>.
                served += unsafe { inbox.serve(|_, job| state.with_mut(|p| job(p as *mut ()))) };
                loom::thread::yield_now();
            }
            for p in posters {
                p.join().unwrap();
            }
            // SAFETY: (model) every other thread has ended; loom checks the read.
            let ran = state.with(|p| unsafe { (*p).clone() });
            assert_eq!(ran.len(), 2, "lost or duplicated: {ran:?}");
            let first: Vec<u32> = ran.iter().copied().filter(|x| x / 2 == 0).collect();
            assert_eq!(first, vec![0, 1], "reordered: {ran:?}");
        });
    }

    /// Two threads push concurrently (their compare-and-swaps race) while the consumer
    /// serves: each post runs exactly once and is marked done.
    #[test]
    fn loom_inbox_concurrent_pushes_lose_nothing() {
        let mut m = loom::model::Builder::new();
        m.preemption_bound = Some(3);
        m.check(|| {
            unsafe fn push_one(s: *mut (), _state: *mut ()) {
                // SAFETY: (model) `s` is the post's counter.
                unsafe { *(s as *mut u32) += 1 };
            }
            let inbox = Arc::new(Inbox::new());
            let posts: Vec<&'static Post> = (0..2)
                .map(|_| {
                    &*Box::leak(Box::new(Post {
                        next: AtomicPtr::new(std::ptr::null_mut()),
                        done: AtomicBool::new(false),
                        vci: 0,
                        run: push_one,
                        data: Box::into_raw(Box::new(0u32)) as *mut (),
                    }))
                })
                .collect();
            let ts: Vec<_> = posts
                .iter()
                .map(|&p| {
                    let inbox = inbox.clone();
                    let p = p as *const Post as usize;
                    loom::thread::spawn(move || {
                        // SAFETY: (model) leaked posts stay valid.
                        unsafe { inbox.push(p as *mut Post) };
                    })
                })
                .collect();
            // SAFETY: (model) one consumer; the jobs ignore the state.
            let mut served = unsafe { inbox.serve(|_, job| job(std::ptr::null_mut())) };
            for t in ts {
                t.join().unwrap();
            }
            // SAFETY: (model) as above.
            served += unsafe { inbox.serve(|_, job| job(std::ptr::null_mut())) };
            assert_eq!(served, 2, "lost or duplicated");
            for p in &posts {
                assert!(p.done.load(Ordering::Acquire));
                // SAFETY: (model) the counter of a served post, no longer shared.
                assert_eq!(unsafe { *(p.data as *mut u32) }, 1, "ran once");
            }
        });
    }
}
