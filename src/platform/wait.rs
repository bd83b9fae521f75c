//! Waiting politely: spin briefly, then yield the CPU (at once when the node is
//! oversubscribed, so that the rank we wait for can run).

use std::sync::atomic::{AtomicU32, Ordering};

/// Empty polls before yielding (set at init from `HYMPI_SPIN` and oversubscription).
static SPIN_LIMIT: AtomicU32 = AtomicU32::new(2000);

/// Sets the number of empty polls before a waiter yields.
pub fn set_spin_limit(n: u32) {
    SPIN_LIMIT.store(n.max(1), Ordering::Relaxed);
}

/// Empty polls a waiter makes before yielding (1 on an oversubscribed node).
pub fn spin_limit() -> u32 {
    SPIN_LIMIT.load(Ordering::Relaxed)
}

/// Called when a test-style call (`MPI_Test`, `MPI_Iprobe`, ...) found nothing: on an
/// oversubscribed node it yields the CPU so that the rank being waited for can run (codes that
/// poll in a loop would otherwise burn their whole time slice).
#[inline]
pub fn poll_found_nothing() {
    if SPIN_LIMIT.load(Ordering::Relaxed) <= 1 {
        std::thread::yield_now();
    }
}

/// Per-wait backoff state.
pub struct Backoff {
    polls: u32,
    limit: u32,
}

impl Default for Backoff {
    fn default() -> Self {
        Self::new()
    }
}

impl Backoff {
    /// A fresh backoff.
    #[inline]
    pub fn new() -> Self {
        Backoff {
            polls: 0,
            limit: SPIN_LIMIT.load(Ordering::Relaxed),
        }
    }
    /// Progress was made: start spinning again.
    #[inline]
    pub fn reset(&mut self) {
        self.polls = 0;
    }
    /// Nothing happened: spin or yield.
    #[inline]
    pub fn idle(&mut self) {
        self.polls += 1;
        if self.polls < self.limit {
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
}

/// Number of CPUs this process may run on.
pub fn usable_cpus() -> usize {
    let domain = crate::platform::affinity::domain_cpus().unwrap_or(0);
    match crate::platform::affinity::own_cpus() {
        Some(cpus) if !cpus.is_empty() => cpus.len().max(domain),
        _ => std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
            .max(domain),
    }
}

/// Number of CPUs on the node (not just this process's binding).
pub fn node_cpus() -> usize {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    if n > 0 {
        n as usize
    } else {
        1
    }
}
