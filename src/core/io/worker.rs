//! Nonblocking data access (`MPI_File_i*`) on a worker thread: the call queues the access and
//! returns; the worker moves the bytes; the progress engine completes the request when it
//! sees the result ([`IoWait`], a background operation). One worker per process keeps the
//! accesses of a process in the order they were started. The worker never calls into MPI.

use crate::core::error::MpiResult;
use crate::core::runtime::{Background, Runtime};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, OnceLock};

/// A queued access: moves the bytes, returns how many.
pub type Job = Box<dyn FnOnce() -> MpiResult<u64> + Send>;

/// Where the worker leaves an access's outcome.
#[derive(Default)]
pub struct Slot {
    done: AtomicBool,
    result: Mutex<Option<MpiResult<u64>>>,
}

impl Slot {
    /// The outcome, once the access is over.
    pub fn take(&self) -> Option<MpiResult<u64>> {
        if !self.done.load(Ordering::Acquire) {
            return None;
        }
        self.result.lock().take()
    }
}

/// The worker's queue: jobs and their slots.
type Queue = Mutex<Sender<(Job, Arc<Slot>)>>;

static QUEUE: OnceLock<Queue> = OnceLock::new();

fn queue() -> &'static Queue {
    QUEUE.get_or_init(|| {
        let (tx, rx) = channel::<(Job, Arc<Slot>)>();
        std::thread::Builder::new()
            .name("hympi-io".into())
            .spawn(move || {
                for (job, slot) in rx {
                    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job))
                        .unwrap_or_else(|p| Err(crate::core::error::MpiError::from_panic(p)));
                    *slot.result.lock() = Some(r);
                    slot.done.store(true, Ordering::Release);
                }
            })
            .expect("the I/O worker thread starts");
        Mutex::new(tx)
    })
}

/// Queues `job`; its outcome will be in the returned slot.
pub fn submit(job: Job) -> Arc<Slot> {
    let slot = Arc::new(Slot::default());
    if let Err(e) = queue().lock().send((job, slot.clone())) {
        // The worker is gone (it never exits while the process runs): run here.
        let (job, s) = e.0;
        *s.result.lock() = Some(job());
        s.done.store(true, Ordering::Release);
    }
    slot
}

/// The background operation completing request `rid` when its access is over.
pub struct IoWait {
    /// The request.
    pub rid: u32,
    /// The access's outcome.
    pub slot: Arc<Slot>,
}

impl Background for IoWait {
    fn poll(&mut self, rt: &mut Runtime) -> bool {
        let Some(result) = self.slot.take() else {
            return false;
        };
        if let Some(r) = rt.reqs.get_mut(self.rid) {
            match result {
                Ok(bytes) => r.status.bytes = bytes,
                Err(e) => r.status.error = e.class(),
            }
        }
        rt.complete(self.rid);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_run_in_order_and_report() {
        let log = Arc::new(Mutex::new(Vec::new()));
        let slots: Vec<_> = (0..5u64)
            .map(|k| {
                let l = log.clone();
                submit(Box::new(move || {
                    l.lock().push(k);
                    Ok(k * 10)
                }))
            })
            .collect();
        for (k, s) in slots.iter().enumerate() {
            let r = loop {
                if let Some(r) = s.take() {
                    break r;
                }
                std::thread::yield_now();
            };
            assert_eq!(r.unwrap(), k as u64 * 10);
        }
        assert_eq!(*log.lock(), vec![0, 1, 2, 3, 4]);
    }
}
