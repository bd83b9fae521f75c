//! Stealing-aware waits (CAB-MPI, `../shared/papers` digest §1): threads blocked inside MPI
//! copy chunks of other operations' large transfers instead of spinning.
//!
//! A large rendezvous receive from a node peer becomes a [`CopyJob`] when another thread of
//! this process is waiting inside MPI (`WAITERS`, counted by `runtime::wait_for`): the message
//! is cut into chunks (a quarter of the message, 256 KiB to 1 MiB: see [`chunk_for`];
//! `HYMPI_STEAL_CHUNK` overrides) and published in the open-job list.
//! Each chunk is one `process_vm_readv` of a disjoint range, claimed by an atomic counter, so
//! every chunk is copied exactly once by whoever claims it:
//! - waiting threads call [`help`] between polls, outside the runtime lock, so several
//!   threads copy at once;
//! - the progress engine (under the lock) copies one chunk of each unfinished job per round
//!   and completes the receive (status, `Fin` to the sender) once every chunk is done, so no
//!   operation depends on a helper: a thread testing or waiting on its own request drains its
//!   own job.
//!
//! Jobs are created only after matching, so MPI's ordering is untouched. `HYMPI_STEAL=0`
//! turns stealing off; `HYMPI_STATS=1` prints, at `MPI_Finalize`, how many chunks were copied
//! and how many of them by waiting threads.

#[cfg(loom)]
use loom::sync::atomic::{AtomicUsize as ClaimCounter, Ordering as ClaimOrdering};
#[cfg(not(loom))]
use std::sync::atomic::{AtomicUsize as ClaimCounter, Ordering as ClaimOrdering};

use crate::platform::cma;
use crate::platform::config::{self, Knob};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

/// Threads of this process currently blocked in a waiting loop.
static WAITERS: AtomicUsize = AtomicUsize::new(0);
/// Jobs with chunks nobody has claimed yet.
static OPEN: Mutex<Vec<Arc<CopyJob>>> = Mutex::new(Vec::new());
/// Chunks copied, and chunks copied by waiting threads outside the progress engine.
static CHUNKS: AtomicUsize = AtomicUsize::new(0);
static CHUNKS_BY_WAITERS: AtomicUsize = AtomicUsize::new(0);
static JOBS: AtomicUsize = AtomicUsize::new(0);
/// Jobs in `OPEN` (a waiting loop checks it before taking the list's lock).
static PUBLISHED: AtomicUsize = AtomicUsize::new(0);

/// The stealing knobs, read once.
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    /// Whether stealing is on (`HYMPI_STEAL`).
    pub on: bool,
    /// Smallest message made into a job (`HYMPI_STEAL_MIN`).
    pub min: usize,
    /// Fixed chunk size, or 0 for on-demand sizes (`HYMPI_STEAL_CHUNK`).
    pub chunk: usize,
}

/// The knobs.
pub fn settings() -> Settings {
    static S: OnceLock<Settings> = OnceLock::new();
    *S.get_or_init(|| Settings {
        on: config::flag(Knob::Steal),
        min: config::int(Knob::StealMin) as usize,
        chunk: config::int(Knob::StealChunk) as usize,
    })
}

/// On-demand chunk size for a message of `len` bytes: a quarter of the message, between
/// 256 KiB and 1 MiB. The digest's sizes (16/32/64 KiB, §1.6) were tuned for memcpy between
/// PiP tasks; each chunk here is a `process_vm_readv` that pins the remote pages, and on this
/// machine kind chunks below 256 KiB cost more in calls than a second thread gains
/// (benches/README.md, `steal_recv`).
pub fn chunk_for(len: usize, fixed: usize) -> usize {
    if fixed > 0 {
        fixed
    } else {
        (len / 4).clamp(256 << 10, 1 << 20)
    }
}

thread_local! {
    /// Whether the calling thread is in a waiting loop.
    static IN_WAIT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The calling thread's membership in `WAITERS` while it lives (a waiting loop holds one).
pub struct Waiting(());

impl Waiting {
    /// Counts the calling thread as waiting inside MPI until the value is dropped.
    pub fn start() -> Waiting {
        WAITERS.fetch_add(1, Ordering::Relaxed);
        IN_WAIT.with(|w| w.set(true));
        Waiting(())
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        IN_WAIT.with(|w| w.set(false));
        WAITERS.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Whether a thread other than the caller is waiting inside MPI and could help with a job.
pub fn helpers_available() -> bool {
    let me = IN_WAIT.with(|w| w.get()) as usize;
    WAITERS.load(Ordering::Relaxed) > me
}

/// The chunk bookkeeping of a job: the next chunk to claim and the chunks done. A claim is a
/// `fetch_add`, so every chunk goes to exactly one thread; a chunk's data is written before
/// its `finish` (release), and whoever sees [`Claims::finished`] (acquire) sees all of it
/// (checked by the loom model below).
#[derive(Debug)]
pub struct Claims {
    n: usize,
    next: ClaimCounter,
    done: ClaimCounter,
}

impl Claims {
    /// Bookkeeping of `n` chunks.
    pub fn new(n: usize) -> Self {
        Claims {
            n,
            next: ClaimCounter::new(0),
            done: ClaimCounter::new(0),
        }
    }

    /// Claims the next chunk, if any is left.
    pub fn claim(&self) -> Option<usize> {
        let i = self.next.fetch_add(1, ClaimOrdering::AcqRel);
        (i < self.n).then_some(i)
    }

    /// Records that a claimed chunk is done (its data written).
    pub fn finish(&self) {
        self.done.fetch_add(1, ClaimOrdering::AcqRel);
    }

    /// Whether every chunk is done.
    pub fn finished(&self) -> bool {
        self.done.load(ClaimOrdering::Acquire) >= self.n
    }

    /// Whether chunks are left to claim.
    pub fn open(&self) -> bool {
        self.next.load(ClaimOrdering::Relaxed) < self.n
    }
}

/// A large copy from a node peer's memory, cut into chunks.
#[derive(Debug)]
pub struct CopyJob {
    pid: i32,
    remote: u64,
    local: usize,
    len: usize,
    chunk: usize,
    claims: Claims,
    failed: AtomicBool,
}

impl CopyJob {
    /// A job copying `len` bytes from address `remote` of process `pid` to `local`.
    ///
    /// # Safety
    /// `local` must stay valid for writes of `len` bytes until [`CopyJob::finished`] (the
    /// receive request that owns the buffer completes only then).
    pub unsafe fn new(pid: i32, remote: u64, local: *mut u8, len: usize, chunk: usize) -> Self {
        let chunk = chunk.max(1);
        CopyJob {
            pid,
            remote,
            local: local as usize,
            len,
            chunk,
            claims: Claims::new(len.div_ceil(chunk).max(1)),
            failed: AtomicBool::new(false),
        }
    }

    /// Claims and copies one chunk; `false` when every chunk was already claimed.
    pub fn run_one(&self) -> bool {
        let Some(i) = self.claims.claim() else {
            return false;
        };
        let off = i * self.chunk;
        let n = self.chunk.min(self.len - off.min(self.len));
        if n > 0 {
            // SAFETY: chunk i is [off, off + n) of the job's buffer, valid for writes until
            // the job finishes (constructor contract), and claimed by this thread alone.
            let r = unsafe {
                cma::read_from(
                    self.pid,
                    self.remote + off as u64,
                    (self.local + off) as *mut u8,
                    n,
                )
            };
            if r.is_err() {
                self.failed.store(true, Ordering::Relaxed);
            }
        }
        CHUNKS.fetch_add(1, Ordering::Relaxed);
        self.claims.finish();
        true
    }

    /// Whether every chunk has been copied.
    pub fn finished(&self) -> bool {
        self.claims.finished()
    }

    /// Whether a copy failed.
    pub fn failed(&self) -> bool {
        self.failed.load(Ordering::Relaxed)
    }

    /// Whether chunks are left to claim.
    fn open(&self) -> bool {
        self.claims.open()
    }
}

/// Publishes `job` for waiting threads.
pub fn publish(job: &Arc<CopyJob>) {
    JOBS.fetch_add(1, Ordering::Relaxed);
    OPEN.lock().push(job.clone());
    PUBLISHED.fetch_add(1, Ordering::Release);
}

/// Copies chunks of published jobs until none is left to claim (called by waiting threads
/// outside the runtime lock); whether any chunk was copied.
pub fn help() -> bool {
    let mut did = false;
    loop {
        if PUBLISHED.load(Ordering::Acquire) == 0 {
            return did;
        }
        let job = {
            let mut open = OPEN.lock();
            let before = open.len();
            open.retain(|j| j.open());
            PUBLISHED.fetch_sub(before - open.len(), Ordering::Release);
            match open.first() {
                Some(j) => j.clone(),
                None => return did,
            }
        };
        while job.run_one() {
            CHUNKS_BY_WAITERS.fetch_add(1, Ordering::Relaxed);
            did = true;
        }
    }
}

/// The stealing counters of this process: stealable copies, chunks copied, and chunks
/// copied by waiting threads (what `HYMPI_STATS=1` prints; also `MPI_T` performance
/// variables).
pub fn counts() -> (usize, usize, usize) {
    (
        JOBS.load(Ordering::Relaxed),
        CHUNKS.load(Ordering::Relaxed),
        CHUNKS_BY_WAITERS.load(Ordering::Relaxed),
    )
}

/// The `HYMPI_STATS=1` line of this process.
pub fn stats_line(rank: i32) -> String {
    let chunks = CHUNKS.load(Ordering::Relaxed);
    let stolen = CHUNKS_BY_WAITERS.load(Ordering::Relaxed);
    format!(
        "hympi stats: rank {rank}: {} stealable copies, {chunks} chunks, {stolen} copied by waiting threads",
        JOBS.load(Ordering::Relaxed)
    )
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn chunks_are_a_quarter_between_256_kib_and_1_mib() {
        assert_eq!(chunk_for(80 << 10, 0), 256 << 10);
        assert_eq!(chunk_for(2 << 20, 0), 512 << 10);
        assert_eq!(chunk_for(4 << 20, 0), 1 << 20);
        assert_eq!(chunk_for(64 << 20, 0), 1 << 20);
        assert_eq!(chunk_for(4 << 20, 4096), 4096);
    }

    #[test]
    fn every_chunk_is_copied_once_by_concurrent_helpers() {
        let pid = std::process::id() as i32;
        let src: Vec<u8> = (0..300_001u32).map(|i| (i * 7 % 251) as u8).collect();
        let mut dst = vec![0u8; src.len()];
        let mut probe = 0u8;
        // SAFETY: reads one byte of our own vector into `probe`.
        if unsafe { cma::read_from(pid, src.as_ptr() as u64, &mut probe, 1) }.is_err() {
            return; // process_vm_readv not permitted here
        }
        // SAFETY: dst outlives the job (joined below).
        let job = Arc::new(unsafe {
            CopyJob::new(pid, src.as_ptr() as u64, dst.as_mut_ptr(), src.len(), 4096)
        });
        let helpers: Vec<_> = (0..3)
            .map(|_| {
                let j = job.clone();
                std::thread::spawn(move || {
                    let mut n = 0;
                    while j.run_one() {
                        n += 1;
                    }
                    n
                })
            })
            .collect();
        let mut n = 0;
        while job.run_one() {
            n += 1;
        }
        n += helpers
            .into_iter()
            .map(|h| h.join().unwrap())
            .sum::<usize>();
        assert_eq!(n, src.len().div_ceil(4096));
        assert!(job.finished() && !job.failed());
        assert_eq!(dst, src);
    }
}

#[cfg(all(loom, test))]
mod loom_tests {
    use super::Claims;
    use loom::cell::UnsafeCell;
    use loom::sync::Arc;

    /// A helper and the owner claim the chunks of a 3-chunk job and write them; every chunk
    /// is claimed once, and once the owner sees the job finished it reads every chunk's data
    /// without a race (loom checks the accesses), under every interleaving.
    #[test]
    fn loom_chunks_are_claimed_once_and_visible_when_finished() {
        let mut model = loom::model::Builder::new();
        model.preemption_bound = Some(3);
        model.check(|| {
            let claims = Arc::new(Claims::new(3));
            let data: Arc<Vec<UnsafeCell<usize>>> =
                Arc::new((0..3).map(|_| UnsafeCell::new(0)).collect());
            let run = |claims: &Claims, data: &[UnsafeCell<usize>]| {
                let mut n = 0;
                while let Some(i) = claims.claim() {
                    // SAFETY: (model) chunk i belongs to this claimer alone until `finish`.
                    data[i].with_mut(|p| unsafe { *p = i + 1 });
                    claims.finish();
                    n += 1;
                }
                n
            };
            let helpers: Vec<_> = (0..1)
                .map(|_| {
                    let (c, d) = (claims.clone(), data.clone());
                    loom::thread::spawn(move || run(&c, &d))
                })
                .collect();
            let mut n = run(&claims, &data);
            while !claims.finished() {
                loom::thread::yield_now();
            }
            for (i, d) in data.iter().enumerate() {
                // SAFETY: (model) every chunk finished; loom flags any unordered access.
                assert_eq!(d.with(|p| unsafe { *p }), i + 1);
            }
            n += helpers
                .into_iter()
                .map(|h| h.join().unwrap())
                .sum::<usize>();
            assert_eq!(n, 3);
        });
    }
}
