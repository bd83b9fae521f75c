//! Per-VCI statistics (`HYMPI_STATS=1`): messages and bytes sent and received by protocol,
//! VCI lock acquisitions and misses, waits and the time they took, and the collective
//! algorithms chosen. Printed per rank at `MPI_Finalize` ([`report`]) and read by tools as
//! `MPI_T` performance variables ([`total`]).
//!
//! Each VCI's counters sit on cache lines of their own, so threads on different VCIs do
//! not share lines; one more row counts waits of the slow path, which serves every VCI.
//! Counters are relaxed atomics: a VCI's are normally touched by its lock holder only, but
//! the slow path and waits outside any lock touch them too.

use crate::core::threads::vci::MAX_VCIS;
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// How a message travelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Proto {
    /// To oneself: a copy in the process.
    SelfCopy = 0,
    /// Eager through the node's shared memory (fastbox or cell).
    ShmEager = 1,
    /// Rendezvous with a node peer (single-copy CMA, split or streamed through cells).
    ShmRendezvous = 2,
    /// Eager over the network transport.
    NetEager = 3,
    /// Rendezvous over the network transport.
    NetRendezvous = 4,
}

/// Number of [`Proto`]s.
pub const PROTOS: usize = 5;

/// Names of the [`Proto`]s, as printed and in `MPI_T` variable names.
pub const PROTO_NAMES: [&str; PROTOS] = [
    "self",
    "shm_eager",
    "shm_rendezvous",
    "net_eager",
    "net_rendezvous",
];

impl Proto {
    /// The protocol of a message of `bytes` bytes: `eager` or not, over the network or not.
    #[inline]
    pub fn of(network: bool, eager: bool) -> Proto {
        match (network, eager) {
            (false, true) => Proto::ShmEager,
            (false, false) => Proto::ShmRendezvous,
            (true, true) => Proto::NetEager,
            (true, false) => Proto::NetRendezvous,
        }
    }
}

/// The counters of one VCI.
#[repr(C, align(128))]
struct VciCounters {
    sent_msgs: [AtomicU64; PROTOS],
    sent_bytes: [AtomicU64; PROTOS],
    recv_msgs: [AtomicU64; PROTOS],
    recv_bytes: [AtomicU64; PROTOS],
    locks: AtomicU64,
    lock_misses: AtomicU64,
    waits: AtomicU64,
    wait_ns: AtomicU64,
}

impl VciCounters {
    const fn new() -> Self {
        VciCounters {
            sent_msgs: [const { AtomicU64::new(0) }; PROTOS],
            sent_bytes: [const { AtomicU64::new(0) }; PROTOS],
            recv_msgs: [const { AtomicU64::new(0) }; PROTOS],
            recv_bytes: [const { AtomicU64::new(0) }; PROTOS],
            locks: AtomicU64::new(0),
            lock_misses: AtomicU64::new(0),
            waits: AtomicU64::new(0),
            wait_ns: AtomicU64::new(0),
        }
    }
}

/// The row of waits of the slow path (after the VCIs' rows).
pub const SLOW_PATH: usize = MAX_VCIS;

static ROWS: [VciCounters; MAX_VCIS + 1] = [const { VciCounters::new() }; MAX_VCIS + 1];

/// Collective algorithm choices: "collective: algorithm" -> calls.
static COLL: Mutex<BTreeMap<String, u64>> = Mutex::new(BTreeMap::new());

fn row(v: usize) -> &'static VciCounters {
    &ROWS[v.min(SLOW_PATH)]
}

fn add(c: &AtomicU64, n: u64) {
    c.fetch_add(n, Relaxed);
}

/// A message of `bytes` bytes left on VCI `v` by protocol `p`.
#[cold]
#[inline(never)]
pub fn sent(v: usize, p: Proto, bytes: usize) {
    let r = row(v);
    add(&r.sent_msgs[p as usize], 1);
    add(&r.sent_bytes[p as usize], bytes as u64);
}

/// A message of `bytes` bytes arrived for VCI `v` by protocol `p`.
#[cold]
#[inline(never)]
pub fn received(v: usize, p: Proto, bytes: usize) {
    let r = row(v);
    add(&r.recv_msgs[p as usize], 1);
    add(&r.recv_bytes[p as usize], bytes as u64);
}

/// VCI `v`'s lock was taken; `missed`: the first attempt found it held (or work pending).
#[cold]
#[inline(never)]
pub fn locked(v: usize, missed: bool) {
    let r = row(v);
    add(&r.locks, 1);
    if missed {
        add(&r.lock_misses, 1);
    }
}

/// An attempt on VCI `v`'s lock found it held (the caller took another way).
#[cold]
#[inline(never)]
pub fn lock_missed(v: usize) {
    add(&row(v).lock_misses, 1);
}

/// A wait on VCI `v` (or [`SLOW_PATH`]) took `ns` nanoseconds.
#[cold]
#[inline(never)]
pub fn waited(v: usize, ns: u64) {
    let r = row(v);
    add(&r.waits, 1);
    add(&r.wait_ns, ns);
}

/// A collective chose algorithm `algo` (radix `k`, 0 when it has none).
#[cold]
#[inline(never)]
pub fn coll_choice(coll: &str, algo: &str, k: u32) {
    let key = if k > 0 {
        format!("{coll}: {algo} (k={k})")
    } else {
        format!("{coll}: {algo}")
    };
    *COLL.lock().entry(key).or_insert(0) += 1;
}

/// A counter, summed over the VCIs (what an `MPI_T` performance variable reads).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counter {
    /// Messages sent by a protocol.
    SentMsgs(Proto),
    /// Bytes sent by a protocol.
    SentBytes(Proto),
    /// Messages received by a protocol.
    RecvMsgs(Proto),
    /// Bytes received by a protocol.
    RecvBytes(Proto),
    /// VCI lock acquisitions.
    Locks,
    /// VCI lock attempts that found the lock held.
    LockMisses,
    /// Waits inside MPI that had to wait.
    Waits,
    /// Nanoseconds spent in them.
    WaitNs,
    /// Collective calls whose algorithm was chosen.
    CollChoices,
}

/// Elements of counter `c` as a tool reads it: one per VCI and the slow path's row
/// ([`SLOW_PATH`]), or one for [`Counter::CollChoices`].
pub fn width(c: Counter) -> usize {
    if c == Counter::CollChoices {
        1
    } else {
        ROWS.len()
    }
}

/// The value of counter `c` over every VCI (and the slow path's row).
pub fn total(c: Counter) -> u64 {
    per_row(c).iter().sum()
}

/// The values of counter `c`, [`width`] of them: per VCI, then the slow path's row.
pub fn per_row(c: Counter) -> Vec<u64> {
    if c == Counter::CollChoices {
        return vec![COLL.lock().values().sum()];
    }
    ROWS.iter()
        .map(|r| {
            let a = match c {
                Counter::SentMsgs(p) => &r.sent_msgs[p as usize],
                Counter::SentBytes(p) => &r.sent_bytes[p as usize],
                Counter::RecvMsgs(p) => &r.recv_msgs[p as usize],
                Counter::RecvBytes(p) => &r.recv_bytes[p as usize],
                Counter::Locks => &r.locks,
                Counter::LockMisses => &r.lock_misses,
                Counter::Waits => &r.waits,
                Counter::WaitNs => &r.wait_ns,
                Counter::CollChoices => unreachable!(),
            };
            a.load(Relaxed)
        })
        .collect()
}

/// "3 msgs 96 B" per protocol with traffic, or "none".
fn traffic(msgs: &[AtomicU64; PROTOS], bytes: &[AtomicU64; PROTOS]) -> String {
    let parts: Vec<String> = (0..PROTOS)
        .filter(|&p| msgs[p].load(Relaxed) > 0)
        .map(|p| {
            format!(
                "{} {} msgs {} B",
                PROTO_NAMES[p],
                msgs[p].load(Relaxed),
                bytes[p].load(Relaxed)
            )
        })
        .collect();
    if parts.is_empty() {
        "none".to_string()
    } else {
        parts.join(", ")
    }
}

/// The statistics of rank `rank` with `vcis` VCIs, one line per VCI, then the slow path's
/// waits and the collective choices (each line starts `hympi[rank] stats:`).
pub fn report(rank: i32, vcis: usize) -> String {
    let mut out = Vec::new();
    for (v, r) in ROWS.iter().enumerate().take(vcis.clamp(1, MAX_VCIS)) {
        out.push(format!(
            "hympi[{rank}] stats: vci {v}: sent {}; received {}; lock {} acquisitions, {} misses; waited {} times, {:.3} ms",
            traffic(&r.sent_msgs, &r.sent_bytes),
            traffic(&r.recv_msgs, &r.recv_bytes),
            r.locks.load(Relaxed),
            r.lock_misses.load(Relaxed),
            r.waits.load(Relaxed),
            r.wait_ns.load(Relaxed) as f64 / 1e6
        ));
    }
    let s = &ROWS[SLOW_PATH];
    out.push(format!(
        "hympi[{rank}] stats: slow path (all VCIs): waited {} times, {:.3} ms",
        s.waits.load(Relaxed),
        s.wait_ns.load(Relaxed) as f64 / 1e6
    ));
    let coll = COLL.lock();
    let choices: Vec<String> = coll.iter().map(|(k, n)| format!("{k} x{n}")).collect();
    out.push(format!(
        "hympi[{rank}] stats: collective algorithms: {}",
        if choices.is_empty() {
            "none".to_string()
        } else {
            choices.join(", ")
        }
    ));
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_add_up_per_vci_and_in_total() {
        let before = total(Counter::SentBytes(Proto::ShmEager));
        sent(1, Proto::ShmEager, 100);
        sent(2, Proto::ShmEager, 28);
        received(1, Proto::NetRendezvous, 1 << 20);
        locked(1, true);
        locked(1, false);
        waited(SLOW_PATH, 2_000_000);
        coll_choice("allreduce", "recursive_doubling", 2);
        coll_choice("allreduce", "recursive_doubling", 2);
        assert!(total(Counter::SentBytes(Proto::ShmEager)) >= before + 128);
        let rows = per_row(Counter::Locks);
        assert_eq!(rows.len(), width(Counter::Locks));
        assert_eq!(rows.len(), MAX_VCIS + 1);
        assert!(rows[1] >= 2);
        assert!(per_row(Counter::WaitNs)[SLOW_PATH] >= 2_000_000);
        assert_eq!(width(Counter::CollChoices), 1);
        let r = report(7, 3);
        let vci1 = r.lines().find(|l| l.contains("vci 1:")).unwrap();
        assert!(vci1.starts_with("hympi[7] stats:"), "{vci1}");
        assert!(vci1.contains("shm_eager 1 msgs 100 B"), "{vci1}");
        assert!(vci1.contains("net_rendezvous 1 msgs 1048576 B"), "{vci1}");
        assert!(vci1.contains("lock 2 acquisitions, 1 misses"), "{vci1}");
        assert!(r.contains("slow path (all VCIs): waited"), "{r}");
        assert!(r.contains("allreduce: recursive_doubling (k=2) x"), "{r}");
        assert!(!r.contains("vci 3:"), "only the VCIs in use: {r}");
    }
}
