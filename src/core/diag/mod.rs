//! Diagnostics users switch on: per-VCI statistics ([`stats`]: `HYMPI_STATS=1`, and the
//! same counters as `MPI_T` performance variables) and a timeline ([`trace`]:
//! `HYMPI_TRACE=dir`, Chrome-trace JSON per rank).
//!
//! Both are off by default, and then cost each instrumented spot one test of a process-wide
//! flag word ([`stats_on`], [`trace_on`]); the recording functions are out of line and cold.
//! The flags are set at `MPI_Init` from the environment; statistics also turn on when a tool
//! allocates a handle on one of their performance variables (a counter read through a
//! handle is its growth since the allocation, so counting from then on is exact).

pub mod stats;
pub mod trace;

use std::sync::atomic::{AtomicU8, Ordering};

/// The flags: [`STATS`] and [`TRACE`].
static FLAGS: AtomicU8 = AtomicU8::new(0);
/// Statistics are being counted.
const STATS: u8 = 1;
/// Events are being traced.
const TRACE: u8 = 2;

/// Whether statistics are counted.
#[inline(always)]
pub fn stats_on() -> bool {
    FLAGS.load(Ordering::Relaxed) & STATS != 0
}

/// Whether events are traced.
#[inline(always)]
pub fn trace_on() -> bool {
    FLAGS.load(Ordering::Relaxed) & TRACE != 0
}

/// Whether statistics or tracing are on (paths too narrow to record anything decline then,
/// leaving the call to a path that records).
#[inline(always)]
pub fn any_on() -> bool {
    FLAGS.load(Ordering::Relaxed) != 0
}

/// Starts counting statistics (and closes the leaf fast paths, which count nothing).
pub fn enable_stats() {
    if FLAGS.fetch_or(STATS, Ordering::Relaxed) & STATS == 0 {
        crate::core::threads::vci::set_leaf_way(crate::core::threads::vci::LeafWay::Closed);
    }
}

/// Sets the flags from the environment at `MPI_Init`, once the world rank is known:
/// `HYMPI_STATS=1` counts, a `HYMPI_TRACE` directory traces.
pub fn init(world_rank: i32) {
    use crate::platform::config::{self, Knob};
    if config::flag(Knob::Stats) {
        enable_stats();
    }
    let dir = config::text(Knob::Trace);
    if !dir.is_empty() {
        let events = config::int(Knob::TraceEvents) as usize;
        trace::start(std::path::PathBuf::from(dir), world_rank, events);
        FLAGS.fetch_or(TRACE, Ordering::Relaxed);
    }
}

/// Stops tracing and writes the trace (at `MPI_Finalize` or when the job aborts); a
/// message on stderr says where it went or why it could not be written.
pub fn finish_trace() {
    if FLAGS.fetch_and(!TRACE, Ordering::Relaxed) & TRACE != 0 {
        trace::flush();
    }
}

/// Nanoseconds of the real-time clock (shared by the ranks of a node, and by hosts whose
/// clocks are synchronized), the time base of traces and waits.
#[inline]
pub fn now_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

/// A wait inside MPI that had to wait (made only when statistics or tracing are on): when
/// dropped, its time goes to its VCI's statistics and to the trace.
pub struct Waiting {
    start: u64,
    vci: usize,
}

impl Waiting {
    /// Starts timing a wait on VCI `vci` ([`stats::SLOW_PATH`]: the slow path's).
    #[cold]
    #[inline(never)]
    pub fn start(vci: usize) -> Waiting {
        Waiting {
            start: now_ns(),
            vci,
        }
    }

    /// [`Waiting::start`] when statistics or tracing are on.
    #[inline(always)]
    pub fn start_if_on(vci: usize) -> Option<Waiting> {
        if any_on() {
            Some(Waiting::start(vci))
        } else {
            None
        }
    }
}

impl Drop for Waiting {
    fn drop(&mut self) {
        let end = now_ns();
        if stats_on() {
            stats::waited(self.vci, end.saturating_sub(self.start));
        }
        if trace_on() {
            let mut e = trace::Event::new("wait", trace::Cat::Wait, self.start, end);
            if self.vci != stats::SLOW_PATH {
                e.vci = self.vci as i32;
            }
            trace::record(e);
        }
    }
}
