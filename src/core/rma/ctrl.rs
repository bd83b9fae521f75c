//! A window's control block, in shared memory mapped by every rank of the window (all on one
//! node): per rank a passive-target lock word, an accumulate lock and the attached regions of
//! a dynamic window; per (target, origin) pair the post and complete counters of generalized
//! active-target synchronization. The window memory of `MPI_Win_allocate` and
//! `MPI_Win_allocate_shared` follows it in the same mapping.
//!
//! Every process that owns or targets a window thus synchronizes through atomics in memory it
//! maps: a target needs not enter MPI for its lock to be taken or its memory to be accessed.

use crate::core::rma::acc_steal::TaskTarget;
use crate::core::rma::epoch::LockKind;
use crate::core::rma::{claimword, lockword};
use crate::platform::shared_map::SharedMap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// Most regions a rank may attach to a dynamic window at once.
pub const MAX_REGIONS: usize = 256;

/// One rank's words.
#[repr(C)]
struct RankWords {
    /// Passive-target lock (`lockword`): writer bit or the number of shared holders.
    lock: AtomicU32,
    /// Accumulate lock (0 free, 1 held): makes accumulates to this rank atomic per element,
    /// and guards its table of attached regions.
    acc: AtomicU32,
    /// Regions attached (dynamic windows).
    regions: AtomicU32,
    _pad: [u32; 13],
}

/// The accumulate task slot of one rank (`acc_steal`): a task published by the origin that
/// holds the rank's accumulate lock, its chunks claimed through one word.
#[repr(C)]
pub struct TaskSlot {
    /// The open task's generation (0: none open).
    state: AtomicU32,
    /// A chunk could not be reduced.
    failed: AtomicU32,
    /// Chunks reduced.
    done: AtomicU32,
    /// Chunks of the task.
    nchunks: AtomicU32,
    /// Claims (`claimword`): generation, chunk count, next chunk.
    claim: AtomicU64,
    pid: AtomicU64,
    origin: AtomicU64,
    result: AtomicU64,
    /// 0: `target` is an offset in the window memory area; else the process whose memory
    /// `target` addresses.
    target_pid: AtomicU64,
    target: AtomicU64,
    len: AtomicU64,
    op: AtomicU64,
    dt: AtomicU64,
    _pad: [u64; 6],
}

const _: () = assert!(std::mem::size_of::<TaskSlot>() == 136);

pub use crate::core::rma::claimword::MAX_CHUNKS;

impl TaskSlot {
    /// Publishes `task` in `nchunks` chunks (the caller holds the rank's accumulate lock).
    pub fn publish(&self, task: &crate::core::rma::acc_steal::Task, nchunks: u32) {
        let gen = claimword::next_generation(&self.claim);
        self.pid.store(task.pid as u64, Ordering::Relaxed);
        self.origin.store(task.origin as u64, Ordering::Relaxed);
        self.result.store(task.result as u64, Ordering::Relaxed);
        let (target_pid, target) = match task.target {
            TaskTarget::Shared { off } => (0, off),
            TaskTarget::Process { pid, addr } => (pid as u32 as u64, addr),
        };
        self.target_pid.store(target_pid, Ordering::Relaxed);
        self.target.store(target as u64, Ordering::Relaxed);
        self.len.store(task.len as u64, Ordering::Relaxed);
        self.op.store(task.op as u64, Ordering::Relaxed);
        self.dt.store(task.dt as u64, Ordering::Relaxed);
        self.nchunks.store(nchunks, Ordering::Relaxed);
        self.done.store(0, Ordering::Relaxed);
        self.failed.store(0, Ordering::Relaxed);
        claimword::open(&self.claim, gen, nchunks);
        self.state.store(gen, Ordering::Release);
    }

    /// The open task's generation (0: none).
    pub fn generation(&self) -> u32 {
        self.state.load(Ordering::Acquire)
    }

    /// The open task, if any, with its generation.
    pub fn open_task(&self) -> Option<(u32, crate::core::rma::acc_steal::Task)> {
        let gen = self.generation();
        if gen == 0 || !claimword::has_chunks(&self.claim, gen) {
            return None;
        }
        Some((
            gen,
            crate::core::rma::acc_steal::Task {
                pid: self.pid.load(Ordering::Relaxed) as i32,
                origin: self.origin.load(Ordering::Relaxed) as usize,
                result: self.result.load(Ordering::Relaxed) as usize,
                target: match self.target_pid.load(Ordering::Relaxed) {
                    0 => TaskTarget::Shared {
                        off: self.target.load(Ordering::Relaxed) as usize,
                    },
                    pid => TaskTarget::Process {
                        pid: pid as u32 as i32,
                        addr: self.target.load(Ordering::Relaxed) as usize,
                    },
                },
                len: self.len.load(Ordering::Relaxed) as usize,
                op: self.op.load(Ordering::Relaxed) as usize,
                dt: self.dt.load(Ordering::Relaxed) as usize,
            },
        ))
    }

    /// Claims the next chunk of task generation `gen`, if any is left.
    pub fn claim(&self, gen: u32) -> Option<u32> {
        claimword::claim(&self.claim, gen)
    }

    /// Records that a claimed chunk is reduced.
    pub fn finish(&self) {
        self.done.fetch_add(1, Ordering::AcqRel);
    }

    /// Records that a chunk could not be reduced.
    pub fn fail(&self) {
        self.failed.store(1, Ordering::Relaxed);
    }

    /// Whether every chunk of the published task is reduced.
    pub fn all_done(&self) -> bool {
        self.done.load(Ordering::Acquire) >= self.nchunks.load(Ordering::Relaxed)
    }

    /// Closes the task (every chunk done); whether a chunk failed.
    pub fn close(&self) -> bool {
        self.state.store(0, Ordering::Release);
        self.failed.swap(0, Ordering::Relaxed) != 0
    }
}

/// Byte layout of the mapping for `n` ranks.
#[derive(Clone, Copy, Debug)]
pub struct Layout {
    n: usize,
    post: usize,
    complete: usize,
    tasks: usize,
    regions: usize,
    /// Offset of the window memory.
    pub memory: usize,
}

impl Layout {
    /// The layout for `n` ranks, with region tables when `dynamic`.
    pub fn new(n: usize, dynamic: bool) -> Layout {
        let post = n * std::mem::size_of::<RankWords>();
        let complete = post + n * n * 4;
        let tasks = (complete + n * n * 4).next_multiple_of(64);
        let regions = tasks + n * std::mem::size_of::<TaskSlot>();
        let end = if dynamic {
            regions + n * MAX_REGIONS * 16
        } else {
            regions
        };
        Layout {
            n,
            post,
            complete,
            tasks,
            regions,
            memory: end.next_multiple_of(4096),
        }
    }
}

/// A window's control block (and memory, if any), mapped.
#[derive(Debug)]
pub struct Ctrl {
    map: SharedMap,
    layout: Layout,
}

/// Holds the accumulate lock of one rank; releases it when dropped.
pub struct AccGuard<'a> {
    word: &'a AtomicU32,
}

impl Drop for AccGuard<'_> {
    fn drop(&mut self) {
        self.word.store(0, Ordering::Release);
    }
}

/// Waits for a held accumulate lock word and takes it.
#[cold]
#[inline(never)]
fn acc_lock_wait(word: &AtomicU32) {
    let mut spins = 0u32;
    while word
        .compare_exchange_weak(0, 1, Ordering::Acquire, Ordering::Relaxed)
        .is_err()
    {
        spins += 1;
        if spins < 64 {
            std::hint::spin_loop();
        } else {
            // The holder may be descheduled (more ranks than cores): let it run.
            std::thread::yield_now();
        }
    }
}

impl Ctrl {
    /// The control block over `map` (zero-filled at creation), laid out as `layout`.
    pub fn new(map: SharedMap, layout: Layout) -> Ctrl {
        assert!(
            map.len() >= layout.memory,
            "mapping smaller than its layout"
        );
        Ctrl { map, layout }
    }

    /// The mapping (to close the creator's descriptor).
    pub fn map_mut(&mut self) -> &mut SharedMap {
        &mut self.map
    }

    /// Ranks of the window.
    pub fn ranks(&self) -> usize {
        self.layout.n
    }

    /// Rank `r`'s accumulate task slot.
    pub fn task(&self, r: usize) -> &TaskSlot {
        assert!(r < self.layout.n);
        // SAFETY: `r < n`: the slot lies inside the task table, inside the mapping; a
        // zero-filled slot is valid (atomics and padding), 64-aligned.
        unsafe { &*(self.map.base().add(self.layout.tasks) as *const TaskSlot).add(r) }
    }

    /// Address of the window memory area (`MPI_Win_allocate*`).
    pub fn memory(&self) -> usize {
        self.map.base() as usize + self.layout.memory
    }

    #[inline]
    fn words(&self, r: usize) -> &RankWords {
        assert!(r < self.layout.n);
        // SAFETY: `r < n`, so the entry lies inside the mapping (checked in `new`); the
        // mapping is zero-filled shared memory, a valid `RankWords` (atomics and padding).
        unsafe { &*(self.map.base() as *const RankWords).add(r) }
    }

    fn counter(&self, off: usize, target: usize, origin: usize) -> &AtomicU32 {
        let n = self.layout.n;
        assert!(target < n && origin < n);
        // SAFETY: the index is below n*n, so the word lies inside the table at `off`, which is
        // inside the mapping; a zero-filled word is a valid AtomicU32, 4-aligned (offsets are
        // multiples of 4 from a page-aligned base).
        unsafe { &*(self.map.base().add(off) as *const AtomicU32).add(target * n + origin) }
    }

    /// Times `origin` has posted to `target`... seen from the target: `MPI_Win_post` by
    /// `target` for origin `origin`.
    pub fn post_count(&self, target: usize, origin: usize) -> &AtomicU32 {
        self.counter(self.layout.post, target, origin)
    }

    /// `MPI_Win_complete` by `origin` for target `target`.
    pub fn complete_count(&self, target: usize, origin: usize) -> &AtomicU32 {
        self.counter(self.layout.complete, target, origin)
    }

    /// Tries to take rank `r`'s passive-target lock.
    pub fn try_lock(&self, r: usize, kind: LockKind) -> bool {
        lockword::try_lock(&self.words(r).lock, kind == LockKind::Exclusive)
    }

    /// Releases rank `r`'s passive-target lock taken as `kind`.
    pub fn unlock(&self, r: usize, kind: LockKind) {
        lockword::unlock(&self.words(r).lock, kind == LockKind::Exclusive)
    }

    /// Takes rank `r`'s accumulate lock (held only for one operation's copy). The free
    /// lock is taken inline; waiting for a held one is out of line ([`acc_lock_wait`]).
    #[inline]
    pub fn acc_lock(&self, r: usize) -> AccGuard<'_> {
        let word = &self.words(r).acc;
        if word
            .compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            acc_lock_wait(word);
        }
        AccGuard { word }
    }

    fn region(&self, r: usize, k: usize) -> (&AtomicU64, &AtomicU64) {
        assert!(r < self.layout.n && k < MAX_REGIONS && self.layout.memory > self.layout.regions);
        let i = (r * MAX_REGIONS + k) * 2;
        // SAFETY: the window is dynamic (the tables exist: `memory > regions`) and the index is
        // inside rank r's table; 16-aligned zero-filled words are valid AtomicU64s.
        unsafe {
            let t = self.map.base().add(self.layout.regions) as *const AtomicU64;
            (&*t.add(i), &*t.add(i + 1))
        }
    }

    /// The regions attached by rank `r` (call with its accumulate lock held).
    pub fn regions(&self, r: usize) -> Vec<(u64, u64)> {
        let n = self.words(r).regions.load(Ordering::Acquire) as usize;
        (0..n.min(MAX_REGIONS))
            .map(|k| {
                let (b, l) = self.region(r, k);
                (b.load(Ordering::Relaxed), l.load(Ordering::Relaxed))
            })
            .collect()
    }

    /// Attaches `[base, base + len)` to rank `r`'s table (its accumulate lock held); false
    /// when the table is full.
    pub fn add_region(&self, r: usize, base: u64, len: u64) -> bool {
        let count = &self.words(r).regions;
        let n = count.load(Ordering::Acquire) as usize;
        if n >= MAX_REGIONS {
            return false;
        }
        let (b, l) = self.region(r, n);
        b.store(base, Ordering::Relaxed);
        l.store(len, Ordering::Relaxed);
        count.store(n as u32 + 1, Ordering::Release);
        true
    }

    /// Detaches the region starting at `base` from rank `r`'s table (its accumulate lock
    /// held); false when no region starts there.
    pub fn remove_region(&self, r: usize, base: u64) -> bool {
        let all = self.regions(r);
        let Some(k) = all.iter().position(|&(b, _)| b == base) else {
            return false;
        };
        let last = all.len() - 1;
        let (b, l) = self.region(r, k);
        b.store(all[last].0, Ordering::Relaxed);
        l.store(all[last].1, Ordering::Relaxed);
        self.words(r).regions.store(last as u32, Ordering::Release);
        true
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn ctrl(n: usize, dynamic: bool) -> Ctrl {
        let layout = Layout::new(n, dynamic);
        let (map, _) = SharedMap::create(layout.memory + 64).unwrap();
        Ctrl::new(map, layout)
    }

    #[test]
    fn locks_exclude_as_they_should() {
        let c = ctrl(3, false);
        assert!(c.try_lock(1, LockKind::Shared));
        assert!(c.try_lock(1, LockKind::Shared));
        assert!(!c.try_lock(1, LockKind::Exclusive));
        c.unlock(1, LockKind::Shared);
        c.unlock(1, LockKind::Shared);
        assert!(c.try_lock(1, LockKind::Exclusive));
        assert!(!c.try_lock(1, LockKind::Shared));
        assert!(c.try_lock(2, LockKind::Exclusive));
        c.unlock(1, LockKind::Exclusive);
        assert!(c.try_lock(1, LockKind::Shared));
        drop(c.acc_lock(0));
        drop(c.acc_lock(0));
    }

    #[test]
    fn counters_are_distinct_and_regions_round_trip() {
        let c = ctrl(4, true);
        c.post_count(3, 2).fetch_add(1, Ordering::Relaxed);
        assert_eq!(c.post_count(2, 3).load(Ordering::Relaxed), 0);
        assert_eq!(c.complete_count(3, 2).load(Ordering::Relaxed), 0);
        assert!(c.add_region(3, 0x1000, 64));
        assert!(c.add_region(3, 0x2000, 8));
        assert!(!c.remove_region(3, 0x3000));
        assert!(c.remove_region(3, 0x1000));
        assert_eq!(c.regions(3), vec![(0x2000, 8)]);
        assert!(c.regions(2).is_empty());
        assert_eq!(c.memory() % 4096, 0);
    }
}
