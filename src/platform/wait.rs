//! Waiting politely: spin briefly, then yield the CPU (at once when the node is
//! oversubscribed, so that the rank we wait for can run).

use crate::platform::doorbell;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{Duration, Instant};

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
    sleep: Sleep,
}

/// Whether and how a [`Backoff`] sleeps on this rank's doorbell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sleep {
    /// Never: the wait is for something no peer rings for.
    Off,
    /// Not yet: yields, timing each; a yield that lost the CPU for long says the node is
    /// loaded.
    Watching,
    /// The node is loaded: the next idle step arms the doorbell.
    Loaded,
    /// Armed with this word: the wait has looked for work once more, the next idle step
    /// sleeps.
    Armed(u32),
}

/// A yield that returned later than this gave the CPU to another runnable task for a
/// slice: the node is loaded, and the wait sleeps on its doorbell from then on.
const LOADED_YIELD: Duration = Duration::from_micros(200);

/// The longest sleep; it bounds what a missed ring costs (see [`doorbell`]).
const SLEEP_TIMEOUT: Duration = Duration::from_millis(1);

/// Whether message waits may sleep on the doorbell when the node is loaded
/// (`HYMPI_WAIT_SLEEP`, set at init).
static SLEEP_ON: AtomicBool = AtomicBool::new(true);

/// Sets whether message waits may sleep on the doorbell (`HYMPI_WAIT_SLEEP`).
pub fn set_sleep(on: bool) {
    SLEEP_ON.store(on, Ordering::Relaxed);
}

impl Default for Backoff {
    fn default() -> Self {
        Self::new()
    }
}

impl Backoff {
    /// A fresh backoff that spins, then yields.
    #[inline]
    pub fn new() -> Self {
        Backoff {
            polls: 0,
            limit: SPIN_LIMIT.load(Ordering::Relaxed),
            sleep: Sleep::Off,
        }
    }

    /// A fresh backoff for a wait on node peers (messages, whose senders ring this rank's
    /// doorbell): spins, then yields, and once a yield shows the node loaded sleeps on the
    /// doorbell instead, so that the sender's ring gets it the CPU at once.
    #[inline]
    pub fn for_peers() -> Self {
        let sleep = if SLEEP_ON.load(Ordering::Relaxed) && doorbell::own().is_some() {
            Sleep::Watching
        } else {
            Sleep::Off
        };
        Backoff {
            polls: 0,
            limit: SPIN_LIMIT.load(Ordering::Relaxed),
            sleep,
        }
    }

    /// Progress was made: start spinning again.
    #[inline]
    pub fn reset(&mut self) {
        self.polls = 0;
        if let Sleep::Armed(_) = self.sleep {
            self.disarm();
        }
    }

    /// Nothing happened: spin, yield or sleep.
    #[inline]
    pub fn idle(&mut self) {
        self.polls += 1;
        if self.polls < self.limit {
            std::hint::spin_loop();
            return;
        }
        match self.sleep {
            Sleep::Off => std::thread::yield_now(),
            Sleep::Watching => {
                let t = Instant::now();
                std::thread::yield_now();
                if t.elapsed() > LOADED_YIELD {
                    self.sleep = Sleep::Loaded;
                }
            }
            Sleep::Loaded => match doorbell::own() {
                // The caller looks for work once more before the next idle step sleeps.
                Some(bell) => self.sleep = Sleep::Armed(bell.arm()),
                None => std::thread::yield_now(),
            },
            Sleep::Armed(word) => {
                if let Some(bell) = doorbell::own() {
                    bell.sleep(word, SLEEP_TIMEOUT);
                }
                self.disarm();
            }
        }
    }

    /// Withdraws an armed sleeper.
    #[cold]
    fn disarm(&mut self) {
        if let Some(bell) = doorbell::own() {
            bell.disarm();
        }
        self.sleep = Sleep::Loaded;
    }
}

impl Drop for Backoff {
    #[inline]
    fn drop(&mut self) {
        if let Sleep::Armed(_) = self.sleep {
            self.disarm();
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
