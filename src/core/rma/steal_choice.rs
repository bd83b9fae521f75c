//! Whether a large accumulate is shared out to waiting processes (`acc_steal`) or reduced by
//! its origin alone, measured rather than assumed.
//!
//! Which is faster depends on the machine and on where the target data lives. A helper
//! reads the origin's data by CMA; when the origin reaches the target with loads and stores
//! (shared window memory) its own reduction runs at memory speed, and on a 2-CPU VM helpers
//! made such accumulates about 1.2x slower; when the origin itself must go through CMA
//! (`MPI_Win_create` memory of another process), the target's own waiting threads, which
//! reach it directly, made them 2x faster (benches/README.md, "Accumulate stealing"). So by
//! default (`HYMPI_STEAL_ACC=auto`) the origin times both ways per target kind and
//! power-of-two size class and keeps the faster: the class's first accumulate is a warm-up
//! (first-touch costs, not counted), then [`MEASURED`] accumulates of each way alternate, and
//! from then on the faster way runs with a probe of the other every `gap` accumulates (16 at
//! first, doubling up to 512 while probes confirm the choice, back to 16 when one wins). A
//! way's estimate is the mean of its [`RECENT`] latest costs without the worst, so one
//! descheduled accumulate cannot decide. `HYMPI_STEAL_ACC=always` shares every eligible
//! accumulate.

use crate::platform::config::{self, Knob};
use parking_lot::Mutex;
use std::sync::OnceLock;

/// Where the target data of an eligible accumulate lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetKind {
    /// Window memory every process of the node maps.
    Shared = 0,
    /// One process's own memory (reached by CMA from the others).
    Process = 1,
}

/// Measured accumulates of each way before the first choice.
pub const MEASURED: u32 = 3;
/// Latest costs a way's estimate remembers.
pub const RECENT: usize = 4;
/// Accumulates between probes of the slower way, at first and at most.
const FIRST_GAP: u32 = 16;
const MAX_GAP: u32 = 512;

/// The measurements of one target kind and size class.
#[derive(Clone, Copy, Debug)]
struct Class {
    /// The warm-up accumulate ran.
    warm: bool,
    /// Latest costs (ns per byte) of each way (index: shared or not), a ring.
    costs: [[f64; RECENT]; 2],
    /// Costs recorded of each way.
    counts: [u32; 2],
    /// Accumulates since the last probe, and the current gap between probes.
    since_probe: u32,
    gap: u32,
}

impl Class {
    const NEW: Class = Class {
        warm: false,
        costs: [[0.0; RECENT]; 2],
        counts: [0; 2],
        since_probe: 0,
        gap: FIRST_GAP,
    };

    /// The estimate of way `w` (mean of its recent costs without the worst).
    fn estimate(&self, w: usize) -> f64 {
        let n = (self.counts[w] as usize).min(RECENT);
        let recent = &self.costs[w][..n];
        let sum: f64 = recent.iter().sum();
        if n < 2 {
            return sum;
        }
        let worst = recent.iter().copied().fold(f64::MIN, f64::max);
        (sum - worst) / (n - 1) as f64
    }

    /// Whether both ways have been measured enough to choose.
    fn measured(&self) -> bool {
        self.counts.iter().all(|&c| c >= MEASURED)
    }

    /// The faster way so far: shared or not.
    fn best(&self) -> bool {
        self.estimate(1) < self.estimate(0)
    }
}

/// The choices of one process: per target kind, per power-of-two size class.
#[derive(Debug)]
pub struct StealChoice {
    classes: [[Class; 64]; 2],
    /// Share every eligible accumulate (`HYMPI_STEAL_ACC=always`).
    always: bool,
}

impl StealChoice {
    /// A choice that measures (`always`: one that always shares).
    pub const fn new(always: bool) -> StealChoice {
        StealChoice {
            classes: [[Class::NEW; 64]; 2],
            always,
        }
    }

    fn class(&mut self, kind: TargetKind, bytes: usize) -> &mut Class {
        &mut self.classes[kind as usize][bytes.max(1).ilog2() as usize]
    }

    /// Whether the next accumulate of `bytes` into target data of `kind` is shared out.
    pub fn choose(&mut self, kind: TargetKind, bytes: usize) -> bool {
        if self.always {
            return true;
        }
        let c = self.class(kind, bytes);
        if !c.warm {
            return false;
        }
        if !c.measured() {
            // Alternate, sharing first.
            return c.counts[1] <= c.counts[0];
        }
        let best = c.best();
        if c.since_probe + 1 >= c.gap {
            return !best;
        }
        best
    }

    /// Records that an accumulate of `bytes` into target data of `kind` took `ns`
    /// nanoseconds, `shared` or not.
    pub fn record(&mut self, kind: TargetKind, bytes: usize, shared: bool, ns: u64) {
        if self.always {
            return;
        }
        let c = self.class(kind, bytes);
        if !c.warm {
            c.warm = true;
            return;
        }
        let was_measured = c.measured();
        let best_before = c.best();
        let w = shared as usize;
        c.costs[w][c.counts[w] as usize % RECENT] = ns as f64 / bytes.max(1) as f64;
        c.counts[w] += 1;
        if !was_measured {
            return;
        }
        if shared != best_before {
            // A probe: confirmed (the gap grows) or the winner now (probes come soon).
            c.since_probe = 0;
            c.gap = if c.best() == best_before {
                (c.gap * 2).min(MAX_GAP)
            } else {
                FIRST_GAP
            };
        } else {
            c.since_probe += 1;
        }
    }

    /// Accumulates measured each way so far, over every class: (shared, alone).
    pub fn counts(&self) -> (u32, u32) {
        self.classes
            .iter()
            .flatten()
            .fold((0, 0), |(s, a), c| (s + c.counts[1], a + c.counts[0]))
    }
}

/// This process's choices.
fn choice() -> &'static Mutex<StealChoice> {
    static C: OnceLock<Mutex<StealChoice>> = OnceLock::new();
    C.get_or_init(|| {
        let v = config::text(Knob::StealAcc);
        let always = match v.trim() {
            "" | "auto" => false,
            "always" => true,
            other => {
                eprintln!(
                    "hympi: HYMPI_STEAL_ACC={other} is not a choice (auto, always); using auto"
                );
                false
            }
        };
        Mutex::new(StealChoice::new(always))
    })
}

/// Whether the next eligible accumulate of `bytes` into target data of `kind` is shared.
pub fn choose(kind: TargetKind, bytes: usize) -> bool {
    choice().lock().choose(kind, bytes)
}

/// Records an eligible accumulate's duration (see [`StealChoice::record`]).
pub fn record(kind: TargetKind, bytes: usize, shared: bool, ns: u64) {
    choice().lock().record(kind, bytes, shared, ns)
}

/// Eligible accumulates timed so far: (shared, alone).
pub fn counts() -> (u32, u32) {
    choice().lock().counts()
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    const MB: usize = 1 << 20;

    /// Runs `n` accumulates of `bytes`, shared ones costing `shared_ns`, the others
    /// `alone_ns`; returns the choices made.
    fn run(
        c: &mut StealChoice,
        n: usize,
        bytes: usize,
        shared_ns: u64,
        alone_ns: u64,
    ) -> Vec<bool> {
        (0..n)
            .map(|_| {
                let s = c.choose(TargetKind::Shared, bytes);
                c.record(
                    TargetKind::Shared,
                    bytes,
                    s,
                    if s { shared_ns } else { alone_ns },
                );
                s
            })
            .collect()
    }

    #[test]
    fn warms_up_alternates_then_keeps_the_faster_way() {
        let mut c = StealChoice::new(false);
        let got = run(&mut c, 8, 2 * MB, 100, 200);
        assert_eq!(got, [false, true, false, true, false, true, false, true]);
        // Shared is faster: it runs, with a probe of the other way after 16 accumulates.
        let got = run(&mut c, 20, 2 * MB, 100, 200);
        assert_eq!(got.iter().filter(|&&s| !s).count(), 1, "{got:?}");
        // The other way is faster in another size class.
        let got = run(&mut c, 8, 4 * MB, 300, 200);
        assert!(!got[7], "{got:?}");
        // Every accumulate but each class's warm-up was timed.
        assert_eq!(c.counts().0 + c.counts().1, 8 + 20 - 1 + 8 - 1);
    }

    #[test]
    fn probes_grow_rarer_while_confirmed_and_a_winning_probe_switches() {
        let mut c = StealChoice::new(false);
        run(&mut c, 7, 2 * MB, 100, 200);
        let got = run(&mut c, 16 + 32 + 64, 2 * MB, 100, 200);
        let probes: Vec<usize> = (0..got.len()).filter(|&i| !got[i]).collect();
        assert_eq!(probes, [15, 15 + 32, 15 + 32 + 64], "{got:?}");
        // The load changes: the next probe finds the other way faster, which then runs.
        let got = run(&mut c, 200, 2 * MB, 900, 200);
        assert!(got[150..].iter().filter(|&&s| s).count() <= 1, "{got:?}");
    }

    #[test]
    fn one_slow_accumulate_does_not_decide() {
        let mut c = StealChoice::new(false);
        run(&mut c, 1, 2 * MB, 0, 0);
        // Measured: shared 100, 100, 10000 (descheduled once); alone 200 each.
        for (s, ns) in [
            (true, 100),
            (false, 200),
            (true, 10_000),
            (false, 200),
            (true, 100),
            (false, 200),
        ] {
            assert_eq!(c.choose(TargetKind::Shared, 2 * MB), s);
            c.record(TargetKind::Shared, 2 * MB, s, ns);
        }
        assert!(c.choose(TargetKind::Shared, 2 * MB));
        // The kinds are apart: the other kind starts with its warm-up.
        assert!(!c.choose(TargetKind::Process, 2 * MB));
    }

    #[test]
    fn always_shares() {
        let mut c = StealChoice::new(true);
        assert!(run(&mut c, 10, 2 * MB, 900, 1).iter().all(|&s| s));
    }
}
