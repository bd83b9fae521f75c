//! The machine model the simulator times schedules with: LogGP links inside a node and
//! between nodes, one NIC per node shared by its ranks, the contention-aware CMA cost of
//! large on-node transfers, and per-byte costs of reductions and local copies.
//!
//! A message of `m` bytes from rank a to rank b, posted when a's round starts at `t`:
//! - a's CPU spends `o` on it (`start = max(t, cpu_a)`, then `cpu_a = start + o`);
//! - between nodes, a's node NIC injects it from `i = max(start + o, nic_out)` for
//!   `m * G` (the NIC is then busy for `max(g, m * G)`), it crosses the fabric in `L` and b's
//!   node NIC takes it in at the same rate (several nodes sending to one node serialize
//!   there): it arrives at `max(i + m * G + L, nic_in + m * G)`;
//! - inside a node below the CMA threshold the same with the on-node link, the rank's own
//!   copy port in place of the NIC;
//! - inside a node from the CMA threshold up, the receiver reads the sender's pages once
//!   both have posted (a notification of `L` after the send): the copy takes
//!   `alpha + m * beta + lock * gamma(c) * ceil(m / page)` with `c` the number of reads of
//!   the sender's memory under way, `gamma(c) = gamma2 * c^2 + gamma1 * c` (the CMA paper's
//!   Table II model);
//! - b's CPU spends `o` once the message is there and its receive posted;
//! - each round costs the rank's CPU `round_us` when it starts, the first also `call_us`
//!   (the library's software cost per call and per round, beyond each message's `o`);
//! - a link's `bidirectional` factor (its bidirectional over its unidirectional bandwidth,
//!   2 when absent) says how much the two directions slow each other down: a transfer also
//!   keeps the other direction's port busy for the share `h = 2 / bidirectional - 1` of its
//!   time (0: full duplex, 1: half duplex), so an exchange takes `(1 + h)` times a one-way
//!   transfer. Between nodes that port is the node NIC's receive side (virtual nodes, whose
//!   loopback traffic the same cores copy both ways); on the node, below the CMA threshold,
//!   each rank's receive side (the copy out of the shared-memory cells, which the sender's
//!   copy in shares), and above it the sender's copy port, where a reader with `h > 0` also
//!   waits for its own port.
//!
//! A send completes when its data has left (eager); a round completes when its sends and
//! receives have, and then its local steps cost `reduce * bytes` or `copy * bytes` of the
//! rank's CPU. Closed forms follow: with one rank per node, a binomial broadcast over
//! `2^k` ranks takes `k * (L + 2o + m G)`, a ring allgather `(p - 1) (L + 2o + m G)`.

use serde_json::Value;

/// The LogGP parameters of one kind of link (times in seconds).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Link {
    /// Latency `L`: time on the wire (or through memory) from sender to receiver.
    pub latency: f64,
    /// Overhead `o`: CPU time the sender and the receiver each spend on a message.
    pub overhead: f64,
    /// Gap `g`: least time between two message injections of one port.
    pub gap: f64,
    /// `G`: time per byte (the inverse of the bandwidth).
    pub per_byte: f64,
}

/// The contention-aware CMA model of large on-node transfers (`platform::cma_model`).
pub use crate::platform::cma_model::Cma;

/// A machine: what the simulator needs to time a schedule.
#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    /// Name of the parameter set (shown in reports).
    pub name: String,
    /// Links between ranks on one node (shared memory).
    pub intra: Link,
    /// Links between nodes (the NIC's `g` and `G` are per node, shared by its ranks).
    pub inter: Link,
    /// Large on-node transfers.
    pub cma: Cma,
    /// Seconds per byte a reduction step combines (`gamma`).
    pub reduce_per_byte: f64,
    /// Seconds per byte a local copy step moves.
    pub copy_per_byte: f64,
    /// CPU time a rank spends on a collective call before its first round (building the
    /// schedule, entering the library).
    pub call_overhead: f64,
    /// CPU time a rank spends starting each round (posting and completing its requests),
    /// on top of each message's `o`.
    pub round_overhead: f64,
    /// Bidirectional over unidirectional bandwidth on the node (1: half duplex, 2: full;
    /// from 0.5).
    pub intra_bidirectional: f64,
    /// The same between nodes.
    pub inter_bidirectional: f64,
}

/// The parameter set for a 100 Gb/s fabric and a two-socket node (`src/sim/params/fabric-100g.json`).
pub const FABRIC_100G: &str = include_str!("params/fabric-100g.json");

impl Default for Model {
    /// [`FABRIC_100G`].
    fn default() -> Self {
        Model::from_json(FABRIC_100G).expect("the built-in parameter set parses")
    }
}

/// Reads `obj[key]` as a number.
fn num(obj: &Value, key: &str) -> Result<f64, String> {
    obj.get(key)
        .and_then(Value::as_f64)
        .filter(|v| v.is_finite() && *v >= 0.0)
        .ok_or_else(|| format!("parameter `{key}`: missing or not a number >= 0"))
}

/// A link from `{"latency_us", "overhead_us", "gap_us", "bandwidth_gbs"}`.
fn link(v: &Value, what: &str) -> Result<Link, String> {
    let obj = v
        .get(what)
        .ok_or_else(|| format!("parameter set has no `{what}` link"))?;
    let bw = num(obj, "bandwidth_gbs")?;
    Ok(Link {
        latency: num(obj, "latency_us")? * 1e-6,
        overhead: num(obj, "overhead_us")? * 1e-6,
        gap: num(obj, "gap_us")? * 1e-6,
        per_byte: per_byte(bw),
    })
}

/// Link `what`'s `bidirectional` factor, between 0.5 and 2 (absent: 2, full duplex).
fn bidirectional(v: &Value, what: &str) -> Result<f64, String> {
    match v.get(what).and_then(|l| l.get("bidirectional")) {
        None => Ok(2.0),
        Some(d) => d
            .as_f64()
            .filter(|b| (MIN_BIDIRECTIONAL..=2.0).contains(b))
            .ok_or_else(|| format!("`{what}.bidirectional`: a number from 0.5 to 2")),
    }
}

/// The least bidirectional factor a link can have: below 1 the two directions slow each
/// other down more than taking turns would (TCP over loopback on the same 2 cores measures
/// 0.7-0.85 here); at 0.5 an exchange takes four one-way transfers.
pub const MIN_BIDIRECTIONAL: f64 = 0.5;

/// The share of a transfer's time that also keeps the other direction's port busy, from a
/// link's bidirectional factor (2: 0, full duplex; 1: 1, half duplex; 0.5: 3).
pub fn reverse_share(bidirectional: f64) -> f64 {
    2.0 / bidirectional.clamp(MIN_BIDIRECTIONAL, 2.0) - 1.0
}

/// Reads `obj[key]` as a number, 0 when absent (parameters added after the format's first
/// version).
fn num_or_zero(obj: &Value, key: &str) -> Result<f64, String> {
    match obj.get(key) {
        None => Ok(0.0),
        Some(_) => num(obj, key),
    }
}

/// Seconds per byte of a bandwidth in GB/s (0: free).
pub(super) fn per_byte(gbs: f64) -> f64 {
    if gbs > 0.0 {
        1e-9 / gbs
    } else {
        0.0
    }
}

impl Model {
    /// Parses a parameter set: a JSON object with `name`, links `intra` and `inter`
    /// (`latency_us`, `overhead_us`, `gap_us`, `bandwidth_gbs`), `cma` (`threshold_bytes`,
    /// `startup_us`, `bandwidth_gbs`, `lock_per_page_us`, `page_bytes`, `gamma_quadratic`,
    /// `gamma_linear`), `reduce_gbs` and `copy_gbs` (0 means free), and optionally `call_us`
    /// and `round_us` (absent: 0) and each link's `bidirectional` (1 to 2, absent: 2).
    pub fn from_json(text: &str) -> Result<Model, String> {
        let v: Value = serde_json::from_str(text).map_err(|e| format!("parameter set: {e}"))?;
        let cma = v.get("cma").ok_or("parameter set has no `cma` section")?;
        let threshold = num(cma, "threshold_bytes")?;
        Ok(Model {
            name: v
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("unnamed")
                .to_string(),
            intra: link(&v, "intra")?,
            inter: link(&v, "inter")?,
            cma: Cma {
                threshold: if threshold >= usize::MAX as f64 {
                    usize::MAX
                } else {
                    threshold as usize
                },
                startup: num(cma, "startup_us")? * 1e-6,
                per_byte: per_byte(num(cma, "bandwidth_gbs")?),
                lock_per_page: num(cma, "lock_per_page_us")? * 1e-6,
                page: num(cma, "page_bytes")?.max(1.0) as usize,
                quadratic: num(cma, "gamma_quadratic")?,
                linear: num(cma, "gamma_linear")?,
            },
            reduce_per_byte: per_byte(num(&v, "reduce_gbs")?),
            copy_per_byte: per_byte(num(&v, "copy_gbs")?),
            call_overhead: num_or_zero(&v, "call_us")? * 1e-6,
            round_overhead: num_or_zero(&v, "round_us")? * 1e-6,
            intra_bidirectional: bidirectional(&v, "intra")?,
            inter_bidirectional: bidirectional(&v, "inter")?,
        })
    }

    /// Writes the parameter set in the format [`Model::from_json`] reads.
    pub fn to_json(&self) -> String {
        let gbs = |pb: f64| if pb > 0.0 { 1e-9 / pb } else { 0.0 };
        let link = |l: &Link, bidirectional: f64| {
            serde_json::json!({
                "latency_us": l.latency * 1e6,
                "overhead_us": l.overhead * 1e6,
                "gap_us": l.gap * 1e6,
                "bandwidth_gbs": gbs(l.per_byte),
                "bidirectional": bidirectional,
            })
        };
        let v = serde_json::json!({
            "name": self.name,
            "intra": link(&self.intra, self.intra_bidirectional),
            "inter": link(&self.inter, self.inter_bidirectional),
            "cma": {
                "threshold_bytes": if self.cma.threshold == usize::MAX { 1e300 } else { self.cma.threshold as f64 },
                "startup_us": self.cma.startup * 1e6,
                "bandwidth_gbs": gbs(self.cma.per_byte),
                "lock_per_page_us": self.cma.lock_per_page * 1e6,
                "page_bytes": self.cma.page,
                "gamma_quadratic": self.cma.quadratic,
                "gamma_linear": self.cma.linear,
            },
            "reduce_gbs": gbs(self.reduce_per_byte),
            "copy_gbs": gbs(self.copy_per_byte),
            "call_us": self.call_overhead * 1e6,
            "round_us": self.round_overhead * 1e6,
        });
        serde_json::to_string_pretty(&v).expect("a JSON value prints")
    }

    /// A model whose links all have the same parameters and whose local steps and CMA are
    /// free (`cma.threshold` = never): the closed forms of the textbook algorithms hold
    /// exactly on it.
    pub fn uniform(l: Link) -> Model {
        Model {
            name: "uniform".into(),
            intra: l,
            inter: l,
            cma: Cma {
                threshold: usize::MAX,
                startup: 0.0,
                per_byte: 0.0,
                lock_per_page: 0.0,
                page: 4096,
                quadratic: 0.0,
                linear: 1.0,
            },
            reduce_per_byte: 0.0,
            copy_per_byte: 0.0,
            call_overhead: 0.0,
            round_overhead: 0.0,
            intra_bidirectional: 2.0,
            inter_bidirectional: 2.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_set_round_trips() {
        let m = Model::default();
        assert!(m.inter.latency > 0.0 && m.inter.per_byte > 0.0);
        let back = Model::from_json(&m.to_json()).unwrap();
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * a.abs().max(1e-30);
        assert!(close(back.inter.per_byte, m.inter.per_byte));
        assert!(close(back.cma.lock_per_page, m.cma.lock_per_page));
        assert_eq!(back.cma.threshold, m.cma.threshold);
        assert_eq!(
            (back.intra_bidirectional, back.inter_bidirectional),
            (2.0, 2.0)
        );
        let half = Model {
            inter_bidirectional: 1.25,
            ..m
        };
        let back = Model::from_json(&half.to_json()).unwrap();
        assert_eq!(
            (back.intra_bidirectional, back.inter_bidirectional),
            (2.0, 1.25)
        );
        assert_eq!((reverse_share(2.0), reverse_share(1.0)), (0.0, 1.0));
        assert!((reverse_share(1.25) - 0.6).abs() < 1e-12);
        assert_eq!((reverse_share(0.8), reverse_share(0.1)), (1.5, 3.0));
    }

    #[test]
    fn best_throttle_is_the_papers_k_star() {
        // CMA paper, section 3.6 of the digest: Broadwell 4.0, KNL 6.7, POWER8 31.
        let broadwell = Model::from_json(FABRIC_100G).unwrap().cma;
        let built_in = crate::platform::cma_model::BUILT_IN;
        assert_eq!(broadwell.threshold, built_in.threshold);
        assert_eq!(broadwell.page, built_in.page);
        for (a, b) in [
            (broadwell.startup, built_in.startup),
            (broadwell.per_byte, built_in.per_byte),
            (broadwell.lock_per_page, built_in.lock_per_page),
            (broadwell.quadratic, built_in.quadratic),
            (broadwell.linear, built_in.linear),
        ] {
            assert!((a - b).abs() <= 1e-12 * a.abs(), "{a} {b}");
        }
        assert_eq!(broadwell.best_throttle(), 4);
        let knl = Cma {
            per_byte: 1.0 / 3.29e9,
            lock_per_page: 0.25e-6,
            quadratic: 0.11,
            linear: 1.6,
            ..broadwell
        };
        assert_eq!(knl.best_throttle(), 7);
        let power8 = Cma {
            per_byte: 1.0 / 3.17e9,
            lock_per_page: 0.53e-6,
            page: 65536,
            quadratic: 0.04,
            linear: 1.95,
            ..broadwell
        };
        assert_eq!(power8.best_throttle(), 31);
        let flat = Cma {
            quadratic: 0.0,
            ..broadwell
        };
        assert_eq!(flat.best_throttle(), usize::MAX);
    }

    #[test]
    fn cma_contention_is_the_papers_polynomial() {
        // Broadwell's fit (CMA paper, Table IV): gamma_p = 0.18 p^2 + 0.83 p.
        let c = Cma {
            threshold: 0,
            startup: 0.98e-6,
            per_byte: 1e-9 / 13.2,
            lock_per_page: 0.11e-6,
            page: 4096,
            quadratic: 0.18,
            linear: 0.83,
        };
        assert!((c.contention(4) - (0.18 * 16.0 + 0.83 * 4.0)).abs() < 1e-12);
        let t = c.read_time(8192, 2);
        let want = 0.98e-6 + 8192.0 / 13.2e9 + 0.11e-6 * (0.18 * 4.0 + 0.83 * 2.0) * 2.0;
        assert!((t - want).abs() < 1e-15);
    }

    #[test]
    fn bad_sets_are_refused() {
        assert!(Model::from_json("{}").is_err());
        let s = FABRIC_100G.replace("\"latency_us\"", "\"latency\"");
        assert!(Model::from_json(&s).unwrap_err().contains("latency_us"));
        let s = FABRIC_100G.replace(
            "\"latency_us\": 1.0,",
            "\"latency_us\": 1.0, \"bidirectional\": 3,",
        );
        assert!(Model::from_json(&s)
            .unwrap_err()
            .contains("inter.bidirectional"));
    }
}
