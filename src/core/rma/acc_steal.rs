//! Accumulate stealing (CAB-MPI, `../shared/papers` digest §1.3 and "Reduce in
//! `MPI_Accumulate`"): a large contiguous accumulate into shared window memory becomes chunks
//! that any process of the node waiting inside MPI (the target's threads above all, idle in a
//! fence, a flush or a wait) reduces in parallel with the origin.
//!
//! The task lives in the target rank's slot of the window's control block, so every process
//! that maps the window sees it. The origin owns it (it holds the target's accumulate lock,
//! which keeps accumulates atomic and ordered, as the digest requires): it publishes the
//! chunk count, claims chunks itself and waits until every claimed chunk is reduced before it
//! releases the lock, so no accumulate depends on a helper. A claim is a compare-and-swap on a
//! word that carries the task's generation, so a helper that read an older task's fields can
//! never claim a chunk of a newer one. Helpers read the origin's data with CMA (or directly
//! in the origin's own process) and reduce with the same kernels.
//!
//! `HYMPI_STEAL` governs it; `HYMPI_STEAL_ACC_MIN` is the smallest accumulate cut into
//! chunks; `HYMPI_STATS=1` reports accumulate chunks and how many helpers reduced.

use crate::core::op::{builtin_kernel, Builtin};
use crate::core::rma::ctrl::Ctrl;
use crate::core::rma::steal_choice::{self, TargetKind};
use crate::platform::cma;
use crate::platform::config::{self, Knob};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock, Weak};

/// Bytes per chunk.
pub const CHUNK: usize = 64 << 10;

/// Windows of this process whose task slots its waiting threads check.
static WINDOWS: Mutex<Vec<Weak<Ctrl>>> = Mutex::new(Vec::new());
/// Live entries of `WINDOWS` (checked before taking its lock).
static REGISTERED: AtomicUsize = AtomicUsize::new(0);
/// Accumulates cut into chunks, chunks reduced, and chunks reduced by helpers.
static TASKS: AtomicUsize = AtomicUsize::new(0);
static CHUNKS: AtomicUsize = AtomicUsize::new(0);
static CHUNKS_BY_HELPERS: AtomicUsize = AtomicUsize::new(0);

/// Smallest accumulate cut into chunks, or `None` when stealing is off.
pub fn min_bytes() -> Option<usize> {
    static M: OnceLock<Option<usize>> = OnceLock::new();
    *M.get_or_init(|| config::flag(Knob::Steal).then(|| config::int(Knob::StealAccMin) as usize))
}

/// Makes the task slots of window control block `ctrl` visible to this process's waiting
/// threads.
pub fn register(ctrl: &Arc<Ctrl>) {
    if min_bytes().is_none() {
        return;
    }
    let mut w = WINDOWS.lock();
    w.retain(|c| c.strong_count() > 0);
    w.push(Arc::downgrade(ctrl));
    REGISTERED.store(w.len(), Ordering::Release);
}

/// Where the target data of a [`Task`] lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskTarget {
    /// In the window's shared memory area (`MPI_Win_allocate`, `MPI_Win_allocate_shared`),
    /// mapped by every process of the node: this offset from the area's start.
    Shared {
        /// Offset from the start of the memory area.
        off: usize,
    },
    /// In one process's own memory (`MPI_Win_create`, attached regions): this address in
    /// process `pid`, reached directly there and by CMA from the node's other processes.
    Process {
        /// The process holding the memory.
        pid: i32,
        /// The target data's address in that process.
        addr: usize,
    },
}

/// An accumulate to share: `len` bytes of the origin's data at `origin` (in process `pid`)
/// reduced with `op` on elements of `dt` into the target data; with a `result` buffer
/// (`MPI_Get_accumulate`), each chunk's old target bytes are first copied there.
#[derive(Clone, Copy, Debug)]
pub struct Task {
    /// The origin's process.
    pub pid: i32,
    /// The origin data's address (in the origin process), contiguous.
    pub origin: usize,
    /// The result buffer's address in the origin process (contiguous), 0 for none.
    pub result: usize,
    /// The target data.
    pub target: TaskTarget,
    /// Bytes.
    pub len: usize,
    /// The op handle (predefined).
    pub op: usize,
    /// The element type handle (predefined, without holes).
    pub dt: usize,
}

impl Task {
    /// The kind of the target data's memory (for `steal_choice`).
    pub fn kind(&self) -> TargetKind {
        match self.target {
            TaskTarget::Shared { .. } => TargetKind::Shared,
            TaskTarget::Process { .. } => TargetKind::Process,
        }
    }

    /// The target data's address in this process when it can be reached by loads and
    /// stores here (`memory`: the start of the window's memory area as mapped here).
    fn local_target(&self, memory: usize) -> Option<usize> {
        match self.target {
            TaskTarget::Shared { off } => Some(memory + off),
            TaskTarget::Process { pid, addr } if pid == own_pid() => Some(addr),
            TaskTarget::Process { .. } => None,
        }
    }
}

/// This process's id.
fn own_pid() -> i32 {
    std::process::id() as i32
}

/// Reads `n` bytes at `addr` of another process `pid` into `buf` by CMA; false when refused.
fn read_remote(pid: i32, addr: usize, n: usize, buf: &mut Vec<u8>) -> bool {
    buf.resize(n, 0);
    // SAFETY: `buf` holds `n` writable bytes of ours; the kernel checks the remote range.
    unsafe { cma::read_from(pid, addr as u64, buf.as_mut_ptr(), n) }.is_ok()
}

/// Writes `data` to `addr` of process `pid` (directly when it is this process); false when
/// CMA refused.
///
/// # Safety
/// When `pid` is this process, `addr` must be writable for `data.len()` bytes.
unsafe fn write_bytes(pid: i32, addr: usize, data: &[u8]) -> bool {
    if pid == own_pid() {
        // SAFETY: caller guarantee; `data` is a separate buffer of ours.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), addr as *mut u8, data.len()) };
        return true;
    }
    // SAFETY: a write only reads `data`; the kernel checks the remote range.
    unsafe { cma::write_to(pid, data.as_ptr(), addr as u64, data.len()) }.is_ok()
}

/// Scratch buffers of one reducing thread.
#[derive(Default)]
struct Scratch {
    input: Vec<u8>,
    target: Vec<u8>,
}

/// Reduces chunk `i` of `task` (`memory`: the window's memory area as mapped here): copies
/// its old target bytes to the result buffer first when there is one. Reads and writes the
/// origin's process and the target's directly when they are this one, else by CMA.
fn reduce_chunk(task: &Task, memory: usize, i: usize, scratch: &mut Scratch) -> bool {
    let Some(k) = Builtin::from_handle(task.op).and_then(|b| builtin_kernel(b, task.dt)) else {
        return false;
    };
    let off = i * CHUNK;
    let n = CHUNK.min(task.len - off);
    let local = task.pid == own_pid();
    let input: &[u8] = if local {
        // SAFETY: the origin's buffer holds `len` bytes and stays valid until the task is
        // done (the origin waits for every chunk before it returns).
        unsafe { std::slice::from_raw_parts((task.origin + off) as *const u8, n) }
    } else {
        if !read_remote(task.pid, task.origin + off, n, &mut scratch.input) {
            return false;
        }
        &scratch.input
    };
    match task.local_target(memory) {
        Some(target) => {
            // SAFETY: the target range was checked against the window by the origin and
            // lies in memory this process reaches; only the claimer of chunk `i` writes it
            // meanwhile (the accumulate lock keeps other accumulates out).
            let out = unsafe { std::slice::from_raw_parts_mut((target + off) as *mut u8, n) };
            if task.result != 0 {
                // SAFETY: the result buffer holds `len` bytes in the origin's process, valid
                // until the task is done; `out` is a separate window range.
                if !unsafe { write_bytes(task.pid, task.result + off, out) } {
                    return false;
                }
            }
            k(input, out);
            true
        }
        None => {
            let TaskTarget::Process { pid, addr } = task.target else {
                return false;
            };
            // `pid` is another process (`local_target`).
            let cur = &mut scratch.target;
            read_remote(pid, addr + off, n, cur)
                // SAFETY: the result buffer holds `len` bytes in the origin's process, valid
                // until the task is done; `cur` is ours.
                && (task.result == 0 || unsafe { write_bytes(task.pid, task.result + off, cur) })
                && {
                    k(input, cur);
                    // SAFETY: another process: the kernel checks the range.
                    unsafe { write_bytes(pid, addr + off, cur) }
                }
        }
    }
}

/// Runs `task` on target rank `rank`'s slot of `ctrl` (the caller holds that rank's
/// accumulate lock): publishes it, reduces chunks until none is left, and waits for the
/// chunks helpers claimed. Returns false if a chunk could not be reduced.
pub fn run(ctrl: &Ctrl, rank: usize, task: Task) -> bool {
    let slot = ctrl.task(rank);
    let nchunks = task.len.div_ceil(CHUNK);
    slot.publish(&task, nchunks as u32);
    TASKS.fetch_add(1, Ordering::Relaxed);
    let memory = ctrl.memory();
    let mut ok = true;
    let mut scratch = Scratch::default();
    let gen = slot.generation();
    while let Some(i) = slot.claim(gen) {
        ok &= reduce_chunk(&task, memory, i as usize, &mut scratch);
        CHUNKS.fetch_add(1, Ordering::Relaxed);
        slot.finish();
    }
    let mut spins = 0u32;
    while !slot.all_done() {
        spins += 1;
        if spins < 64 {
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
    ok && !slot.close()
}

/// Reduces chunks of accumulates published in this process's windows (called by threads
/// waiting inside MPI, outside the runtime lock); whether any chunk was reduced.
pub fn help() -> bool {
    if REGISTERED.load(Ordering::Acquire) == 0 {
        return false;
    }
    let ctrls: Vec<Arc<Ctrl>> = match WINDOWS.try_lock() {
        Some(w) => w.iter().filter_map(Weak::upgrade).collect(),
        None => return false,
    };
    let mut did = false;
    let mut scratch = Scratch::default();
    for c in &ctrls {
        for r in 0..c.ranks() {
            let slot = c.task(r);
            let Some((gen, task)) = slot.open_task() else {
                continue;
            };
            while let Some(i) = slot.claim(gen) {
                if !reduce_chunk(&task, c.memory(), i as usize, &mut scratch) {
                    slot.fail();
                }
                CHUNKS.fetch_add(1, Ordering::Relaxed);
                CHUNKS_BY_HELPERS.fetch_add(1, Ordering::Relaxed);
                slot.finish();
                did = true;
            }
        }
    }
    did
}

/// The `HYMPI_STATS=1` line of this process.
pub fn stats_line(rank: i32) -> String {
    let (shared, alone) = steal_choice::counts();
    format!(
        "hympi stats: rank {rank}: {} stealable accumulates, {} chunks, {} reduced by waiting processes; timed by the choice: {shared} shared, {alone} alone",
        TASKS.load(Ordering::Relaxed),
        CHUNKS.load(Ordering::Relaxed),
        CHUNKS_BY_HELPERS.load(Ordering::Relaxed)
    )
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::core::rma::ctrl::Layout;
    use crate::mpi_abi::consts::{MPI_DOUBLE, MPI_INT, MPI_SUM};
    use crate::platform::shared_map::SharedMap;

    /// Runs `task` three times on rank 1's slot of `ctrl` while a helper thread claims
    /// chunks; returns how many chunks the helper reduced.
    fn run_with_helper(ctrl: &Arc<Ctrl>, task: Task, each: impl Fn()) -> usize {
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let helper = {
            let (c, stop) = (ctrl.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut did = 0;
                while !stop.load(Ordering::Relaxed) {
                    let slot = c.task(1);
                    if let Some((gen, t)) = slot.open_task() {
                        assert_eq!(t.target, task.target);
                        assert_eq!(t.result, task.result);
                        let mut s = Scratch::default();
                        while let Some(i) = slot.claim(gen) {
                            assert!(reduce_chunk(&t, c.memory(), i as usize, &mut s));
                            slot.finish();
                            did += 1;
                        }
                    }
                }
                did
            })
        };
        for _ in 0..3 {
            assert!(run(ctrl, 1, task));
            each();
        }
        stop.store(true, Ordering::Relaxed);
        helper.join().unwrap()
    }

    #[test]
    fn helpers_and_owner_reduce_every_chunk_once() {
        let layout = Layout::new(2, false);
        let n = 100_000usize; // doubles: 800000 bytes, 13 chunks
        let (map, _) = SharedMap::create(layout.memory + n * 8).unwrap();
        let ctrl = Arc::new(Ctrl::new(map, layout));
        let target = ctrl.memory() as *mut f64;
        for k in 0..n {
            // SAFETY: the memory area holds n doubles.
            unsafe { *target.add(k) = k as f64 };
        }
        let origin: Vec<f64> = (0..n).map(|k| 0.5 * k as f64).collect();
        let task = Task {
            pid: own_pid(),
            origin: origin.as_ptr() as usize,
            result: 0,
            target: TaskTarget::Shared { off: 0 },
            len: n * 8,
            op: MPI_SUM,
            dt: MPI_DOUBLE,
        };
        run_with_helper(&ctrl, task, || {});
        for k in 0..n {
            // SAFETY: as above.
            assert_eq!(unsafe { *target.add(k) }, k as f64 * 2.5, "element {k}");
        }
    }

    #[test]
    fn results_get_each_chunks_old_bytes_and_process_memory_is_reached() {
        let layout = Layout::new(2, false);
        let (map, _) = SharedMap::create(layout.memory).unwrap();
        let ctrl = Arc::new(Ctrl::new(map, layout));
        let n = 70_000usize; // ints: 280000 bytes, 5 chunks, the last one short
                             // Target memory of this process's own (`MPI_Win_create`), not the shared area.
        let mut target: Vec<i32> = (0..n as i32).collect();
        let origin: Vec<i32> = (0..n as i32).map(|k| 2 * k + 1).collect();
        let result = std::cell::RefCell::new(vec![-1i32; n]);
        let round = std::cell::Cell::new(0i32);
        let task = Task {
            pid: own_pid(),
            origin: origin.as_ptr() as usize,
            result: result.borrow_mut().as_mut_ptr() as usize,
            target: TaskTarget::Process {
                pid: own_pid(),
                addr: target.as_mut_ptr() as usize,
            },
            len: n * 4,
            op: MPI_SUM,
            dt: MPI_INT,
        };
        run_with_helper(&ctrl, task, || {
            // After round r the result holds the values before it: k + r (2k + 1).
            let r = round.get();
            for (k, &v) in result.borrow().iter().enumerate() {
                let k = k as i32;
                assert_eq!(v, k + r * (2 * k + 1), "round {r}, element {k}");
            }
            round.set(r + 1);
        });
        for (k, &v) in target.iter().enumerate() {
            let k = k as i32;
            assert_eq!(v, k + 3 * (2 * k + 1), "element {k}");
        }
    }
}
