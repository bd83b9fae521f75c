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

/// An accumulate to share: `len` bytes of the origin's data at `origin` (in process `pid`)
/// reduced with `op` on elements of `dt` into the window memory at `target_off` from the
/// start of the memory area (`target` is that address here).
#[derive(Clone, Copy, Debug)]
pub struct Task {
    /// The origin's process.
    pub pid: i32,
    /// The origin data's address (in the origin process).
    pub origin: usize,
    /// The target data's offset in the window memory area.
    pub target_off: usize,
    /// Bytes.
    pub len: usize,
    /// The op handle (predefined).
    pub op: usize,
    /// The element type handle (predefined, without holes).
    pub dt: usize,
}

/// Reduces chunk `i` of `task` whose target data is at `target` here; reads the origin's
/// data directly when it is this process's.
fn reduce_chunk(task: &Task, target: usize, i: usize, scratch: &mut Vec<u8>) -> bool {
    let Some(k) = Builtin::from_handle(task.op).and_then(|b| builtin_kernel(b, task.dt)) else {
        return false;
    };
    let off = i * CHUNK;
    let n = CHUNK.min(task.len - off);
    let local = task.pid == std::process::id() as i32;
    let input: &[u8] = if local {
        // SAFETY: the origin's buffer holds `len` bytes and stays valid until the task is
        // done (the origin waits for every chunk before it returns).
        unsafe { std::slice::from_raw_parts((task.origin + off) as *const u8, n) }
    } else {
        scratch.resize(n, 0);
        // SAFETY: `scratch` holds `n` bytes; the kernel checks the origin's range.
        if unsafe {
            cma::read_from(
                task.pid,
                (task.origin + off) as u64,
                scratch.as_mut_ptr(),
                n,
            )
        }
        .is_err()
        {
            return false;
        }
        scratch
    };
    // SAFETY: the target range was checked against the window by the origin and lies in the
    // mapped memory area; only the claimer of chunk `i` writes it meanwhile (the accumulate
    // lock keeps other accumulates out).
    let out = unsafe { std::slice::from_raw_parts_mut((target + off) as *mut u8, n) };
    k(input, out);
    true
}

/// Runs `task` on target rank `rank`'s slot of `ctrl` (the caller holds that rank's
/// accumulate lock): publishes it, reduces chunks until none is left, and waits for the
/// chunks helpers claimed. Returns false if a chunk could not be reduced.
pub fn run(ctrl: &Ctrl, rank: usize, task: Task) -> bool {
    let slot = ctrl.task(rank);
    let nchunks = task.len.div_ceil(CHUNK);
    slot.publish(&task, nchunks as u32);
    TASKS.fetch_add(1, Ordering::Relaxed);
    let target = ctrl.memory() + task.target_off;
    let mut ok = true;
    let mut scratch = Vec::new();
    let gen = slot.generation();
    while let Some(i) = slot.claim(gen) {
        ok &= reduce_chunk(&task, target, i as usize, &mut scratch);
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
    let mut scratch = Vec::new();
    for c in &ctrls {
        for r in 0..c.ranks() {
            let slot = c.task(r);
            let Some((gen, task)) = slot.open_task() else {
                continue;
            };
            let target = c.memory() + task.target_off;
            while let Some(i) = slot.claim(gen) {
                if !reduce_chunk(&task, target, i as usize, &mut scratch) {
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
    format!(
        "hympi stats: rank {rank}: {} stealable accumulates, {} chunks, {} reduced by waiting processes",
        TASKS.load(Ordering::Relaxed),
        CHUNKS.load(Ordering::Relaxed),
        CHUNKS_BY_HELPERS.load(Ordering::Relaxed)
    )
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::core::rma::ctrl::Layout;
    use crate::mpi_abi::consts::{MPI_DOUBLE, MPI_SUM};
    use crate::platform::shared_map::SharedMap;

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
            pid: std::process::id() as i32,
            origin: origin.as_ptr() as usize,
            target_off: 0,
            len: n * 8,
            op: MPI_SUM,
            dt: MPI_DOUBLE,
        };
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let helper = {
            let (c, stop) = (ctrl.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut did = 0;
                while !stop.load(Ordering::Relaxed) {
                    let slot = c.task(1);
                    if let Some((gen, t)) = slot.open_task() {
                        let target = c.memory() + t.target_off;
                        let mut s = Vec::new();
                        while let Some(i) = slot.claim(gen) {
                            assert!(reduce_chunk(&t, target, i as usize, &mut s));
                            slot.finish();
                            did += 1;
                        }
                    }
                }
                did
            })
        };
        for _ in 0..3 {
            assert!(run(&ctrl, 1, task));
        }
        stop.store(true, Ordering::Relaxed);
        helper.join().unwrap();
        for k in 0..n {
            // SAFETY: as above.
            assert_eq!(unsafe { *target.add(k) }, k as f64 * 2.5, "element {k}");
        }
    }
}
