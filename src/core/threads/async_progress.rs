//! Asynchronous progress (`HYMPI_ASYNC_PROGRESS=1`): a thread of the library polls the
//! progress engine while the application computes, so rendezvous copies, acknowledgements,
//! stealable chunks and nonblocking collectives' schedules advance without the application
//! calling MPI.
//!
//! The runtime then runs locked (as at `MPI_THREAD_MULTIPLE`) whatever level the application
//! asked for, since two threads reach it. The thread polls through `runtime::with`; when a
//! poll finds nothing it spins briefly, then yields, then sleeps 50 µs between polls, so an
//! idle job costs little CPU. `MPI_Finalize` stops and joins it before tearing the runtime
//! down. Under the `offload` thread model the thread is also the communication thread that runs
//! the operations application threads post (`crate::core::threads::offload`); it then never sleeps.

use crate::core::runtime;
use crate::platform::config;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

static STOP: AtomicBool = AtomicBool::new(false);
static THREAD: Mutex<Option<JoinHandle<()>>> = Mutex::new(None);

/// Whether `HYMPI_ASYNC_PROGRESS` asks for the progress thread.
pub fn requested() -> bool {
    config::flag(config::Knob::AsyncProgress)
}

/// Starts the progress thread (after `MPI_Init` made the runtime ready).
pub fn start() {
    STOP.store(false, Ordering::Release);
    let spawned = std::thread::Builder::new()
        .name("hympi-progress".into())
        .spawn(run);
    match spawned {
        Ok(h) => *THREAD.lock() = Some(h),
        Err(e) => eprintln!("hympi: cannot start the asynchronous progress thread: {e}"),
    }
}

/// Whether the progress thread runs.
pub fn running() -> bool {
    THREAD.lock().is_some()
}

/// Stops and joins the progress thread, if running.
pub fn stop() {
    STOP.store(true, Ordering::Release);
    if let Some(h) = THREAD.lock().take() {
        let _ = h.join();
    }
}

fn run() {
    let mut idle = 0u32;
    let mut rounds = 0u32;
    while !STOP.load(Ordering::Acquire) {
        // Under the offload model this is the communication thread: it runs what application
        // threads posted first, and never sleeps (they spin until their post ran).
        // It polls the progress engine (which takes every VCI lock) every 64th round only, so a
        // post waits for at most a short check of the inbox.
        let offload =
            crate::core::threads::vci::queued() == crate::core::threads::vci::Queued::Offload;
        let served = offload && crate::core::threads::offload::serve_process() > 0;
        rounds = rounds.wrapping_add(1);
        let polled = (!offload || rounds.is_multiple_of(64))
            && (runtime::with_quiet(|rt| rt.progress()).unwrap_or(false)
                | crate::core::threads::steal::help());
        let did = served || polled;
        if did {
            idle = 0;
            continue;
        }
        idle = idle.saturating_add(1);
        if offload {
            if idle < 4096 {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        } else if idle < 64 {
            std::hint::spin_loop();
        } else if idle < 256 {
            std::thread::yield_now();
        } else {
            std::thread::sleep(Duration::from_micros(50));
        }
    }
}
