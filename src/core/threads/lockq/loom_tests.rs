use super::*;
use loom::sync::Arc;

/// Two producers push two values each while the consumer pops: every value arrives once,
/// each producer's in push order, under every interleaving.
#[test]
fn loom_queue_loses_and_reorders_nothing() {
    let mut model = loom::model::Builder::new();
    model.preemption_bound = Some(3);
    model.check(|| {
        let q = Arc::new(Queue::new());
        let ps: Vec<_> = (0..2u32)
            .map(|p| {
                let q = q.clone();
                loom::thread::spawn(move || {
                    q.push(2 * p);
                    q.push(2 * p + 1);
                })
            })
            .collect();
        let mut seen = Vec::new();
        for _ in 0..2 {
            // SAFETY: (model) this thread is the only consumer.
            if let Some(x) = unsafe { q.pop() } {
                seen.push(x);
            }
        }
        for p in ps {
            p.join().unwrap();
        }
        // SAFETY: (model) as above.
        while let Some(x) = unsafe { q.pop() } {
            seen.push(x);
        }
        assert_eq!(seen.len(), 4, "lost or duplicated: {seen:?}");
        for p in 0..2 {
            let mine: Vec<u32> = seen.iter().copied().filter(|x| x / 2 == p).collect();
            assert_eq!(mine, vec![2 * p, 2 * p + 1], "reordered: {seen:?}");
        }
    });
}

/// The LockQ protocol itself, on the VCI lock word (`crate::core::threads::vci_lock`): two threads
/// each issue two operations (clean acquisition: run; else try-lock: drain if pending,
/// then run; else push and mark pending), and a final owner takes the lock and drains, as
/// a completion call does. Every operation runs exactly once, and each thread's operations
/// run in program order (drain-before-acquire), under every interleaving; the log is
/// touched under the lock only (loom checks it for races).
#[test]
fn loom_lockq_keeps_per_thread_order() {
    use crate::core::threads::vci_lock::VciLock;
    let mut model = loom::model::Builder::new();
    model.preemption_bound = Some(3);
    model.check(|| {
        struct Shared {
            q: Queue<u32>,
            lock: VciLock,
            log: RaceCell<Vec<u32>>,
        }
        // SAFETY: (model) `log` is touched under `lock` only.
        unsafe impl Sync for Shared {}
        // SAFETY: (model) as above.
        unsafe impl Send for Shared {}
        let sh = Arc::new(Shared {
            q: Queue::new(),
            lock: VciLock::new(),
            log: RaceCell::new(Vec::new()),
        });
        // The holder's drain: `drain`/`drain_cold` on the pending mark.
        let drain = |sh: &Shared| {
            if sh.lock.take_pending() {
                // SAFETY: (model) the lock holder is the only consumer and log user.
                while let Some(x) = unsafe { sh.q.pop() } {
                    // SAFETY: (model) as above: only the holder touches the log.
                    sh.log.with_mut(|l| unsafe { (*l).push(x) });
                }
            }
        };
        let issue = move |sh: &Shared, op: u32| {
            let held = if sh.lock.try_lock_clean() {
                true
            } else if sh.lock.try_lock() {
                drain(sh);
                true
            } else {
                false
            };
            if held {
                // SAFETY: (model) under the lock.
                sh.log.with_mut(|l| unsafe { (*l).push(op) });
                // SAFETY: (model) held by this thread.
                unsafe { sh.lock.unlock() };
            } else {
                sh.q.push(op);
                sh.lock.mark_pending();
            }
        };
        let ts: Vec<_> = (0..2u32)
            .map(|t| {
                let sh = sh.clone();
                loom::thread::spawn(move || {
                    issue(&sh, 2 * t);
                    issue(&sh, 2 * t + 1);
                })
            })
            .collect();
        for t in ts {
            t.join().unwrap();
        }
        sh.lock.lock();
        drain(&sh);
        // SAFETY: (model) under the lock.
        let ran = sh.log.with_mut(|l| unsafe { (*l).clone() });
        assert_eq!(ran.len(), 4, "lost or duplicated: {ran:?}");
        for t in 0..2 {
            let mine: Vec<u32> = ran.iter().copied().filter(|x| x / 2 == t).collect();
            assert_eq!(mine, vec![2 * t, 2 * t + 1], "reordered: {ran:?}");
        }
    });
}

/// Two takers and a refilling lock holder: no reserved handle is handed out twice and
/// a taker that gets one sees it as the filler wrote it.
#[test]
fn loom_reserve_hands_out_each_handle_once() {
    let mut model = loom::model::Builder::new();
    model.preemption_bound = Some(3);
    model.check(|| {
        let r = Arc::new(Reserve::new(2));
        let made = Arc::new(loom::sync::atomic::AtomicUsize::new(1));
        {
            let m = made.clone();
            r.refill(|| Some(m.fetch_add(1, Ordering::Relaxed) << 12));
        }
        let ts: Vec<_> = (0..2)
            .map(|k| {
                let r = r.clone();
                loom::thread::spawn(move || r.take(k))
            })
            .collect();
        {
            let m = made.clone();
            r.refill(|| Some(m.fetch_add(1, Ordering::Relaxed) << 12));
        }
        let mut got: Vec<usize> = ts.into_iter().filter_map(|t| t.join().unwrap()).collect();
        got.extend(r.drain());
        let n = got.len();
        got.sort();
        got.dedup();
        assert_eq!(got.len(), n, "a handle was handed out twice");
        assert!(got.iter().all(|&h| h != 0 && h % 4096 == 0));
    });
}
