//! Fitting the simulator's machine parameters to measurements of this machine
//! (`hympi-sim calibrate`; the measuring, which launches jobs, lives in the command).
//!
//! - **Links** ([`link`]): a least-squares line through ping-pong one-way latencies up to a
//!   size gives `L + 2o` (intercept) and `G` (slope); the time per message of an 8-byte
//!   window gives `o = g` (at most half the intercept).
//! - **Large on-node messages** ([`cma`]): the line through the on-node latencies above the
//!   eager limit gives the start-up (beyond the eager intercept) and the time per byte of one
//!   transfer; that time splits into the copy (`memcpy`'s speed) and a per-page term that
//!   grows with concurrent readers as the measured contention polynomial says
//!   (`platform::cma_calibrate`; the CMA paper's Broadwell fit where single copies do not
//!   work), so one transfer costs what the line says and concurrent ones what the contention
//!   measurement says.
//! - **Software costs** ([`software_costs`]): the time a collective takes beyond its messages'
//!   prediction is `call_us * calls + round_us * rounds` along its critical path; the
//!   simulator itself counts both for each timed collective, and a non-negative least-squares
//!   fit of the relative errors over all of them gives the two costs.

use super::build::{Call, Machine};
use super::model::{per_byte, Cma, Link, Model, MIN_BIDIRECTIONAL};
use super::{run, Options};

/// The least-squares line through `points` (x, y): `(intercept, slope)`; `None` for fewer
/// than two distinct x.
pub fn line(points: &[(f64, f64)]) -> Option<(f64, f64)> {
    if points.len() < 2 {
        return None;
    }
    let n = points.len() as f64;
    let (sx, sy) = points
        .iter()
        .fold((0.0, 0.0), |(a, b), &(x, y)| (a + x, b + y));
    let (mx, my) = (sx / n, sy / n);
    let sxx: f64 = points.iter().map(|&(x, _)| (x - mx) * (x - mx)).sum();
    let sxy: f64 = points.iter().map(|&(x, y)| (x - mx) * (y - my)).sum();
    if sxx <= 0.0 {
        return None;
    }
    let slope = sxy / sxx;
    Some((my - slope * mx, slope))
}

/// A link's LogGP parameters from ping-pong rows `(bytes, one-way microseconds)` up to
/// `upto` bytes and the time per message (microseconds) of an 8-byte window; also returns
/// the line's intercept (`L + 2o`, microseconds).
pub fn link(latency: &[(f64, f64)], message_us: f64, upto: f64) -> Result<(Link, f64), String> {
    let pts: Vec<(f64, f64)> = latency.iter().copied().filter(|p| p.0 <= upto).collect();
    let (a, b) = line(&pts).ok_or("too few ping-pong sizes to fit a link")?;
    let o = message_us.min(a / 2.0).max(0.0);
    Ok((
        Link {
            latency: (a - 2.0 * o).max(0.0) * 1e-6,
            overhead: o * 1e-6,
            gap: o * 1e-6,
            per_byte: b.max(0.0) * 1e-6,
        },
        a,
    ))
}

/// The CMA paper's Broadwell contention polynomial (`gamma(c) = 0.18 c^2 + 0.83 c`), used
/// where single copies cannot be measured.
const PAPER_GAMMA: (f64, f64) = (0.18, 0.83);

/// The large-message model on the node: from the on-node ping-pong rows above `eager` bytes,
/// the eager line's intercept `eager_intercept_us`, the copy's time per byte
/// (`copy_per_byte`, seconds: `memcpy`) and the contention measurement (`None`: none).
pub fn cma(
    latency: &[(f64, f64)],
    eager: usize,
    eager_intercept_us: f64,
    copy_per_byte: f64,
    contention: Option<&Cma>,
) -> Result<Cma, String> {
    let pts: Vec<(f64, f64)> = latency
        .iter()
        .copied()
        .filter(|p| p.0 > eager as f64)
        .collect();
    let (a, b) = line(&pts).ok_or("too few ping-pong sizes above the eager limit")?;
    let line_per_byte = b.max(0.0) * 1e-6;
    let (page, quadratic, linear) = match contention {
        Some(c) => (c.page, c.quadratic, c.linear),
        None => (4096, PAPER_GAMMA.0, PAPER_GAMMA.1),
    };
    // One transfer pays `copy + lock * gamma(1) / page` per byte: the copy at memcpy's speed
    // (never more than the line), the locking the rest.
    let copy = copy_per_byte.min(line_per_byte);
    let gamma1 = (quadratic + linear).max(f64::MIN_POSITIVE);
    Ok(Cma {
        threshold: eager + 1,
        startup: (a - eager_intercept_us).max(0.0) * 1e-6,
        per_byte: copy,
        lock_per_page: (line_per_byte - copy) * page as f64 / gamma1,
        page,
        quadratic,
        linear,
    })
}

/// What `hympi-sim calibrate` measured (times in microseconds, sizes in bytes).
pub struct Measured {
    /// Ping-pong rows `(bytes, one-way us)` between two ranks of one node.
    pub latency_intra: Vec<(f64, f64)>,
    /// The same between two nodes (virtual nodes here).
    pub latency_inter: Vec<(f64, f64)>,
    /// Time per 8-byte message in a window, on the node.
    pub message_intra_us: f64,
    /// The same between nodes.
    pub message_inter_us: f64,
    /// The largest message sent eagerly on the node.
    pub eager: usize,
    /// `MPI_Reduce_local` speed (GB/s).
    pub reduce_gbs: f64,
    /// `memcpy` speed (GB/s).
    pub copy_gbs: f64,
    /// The contention-aware CMA model measured here, if single copies work.
    pub contention: Option<Cma>,
    /// Bidirectional over unidirectional bandwidth of large messages on the node (2: the
    /// two directions do not slow each other down).
    pub bidirectional_intra: f64,
    /// The same between nodes.
    pub bidirectional_inter: f64,
}

/// The parameter set `m` implies (no software costs yet: [`software_costs`]).
pub fn model(name: &str, m: &Measured) -> Result<Model, String> {
    let (intra, intra_a) = link(&m.latency_intra, m.message_intra_us, m.eager as f64)
        .map_err(|e| format!("on the node: {e}"))?;
    let (inter, _) = link(&m.latency_inter, m.message_inter_us, f64::INFINITY)
        .map_err(|e| format!("between nodes: {e}"))?;
    let cma = cma(
        &m.latency_intra,
        m.eager,
        intra_a,
        per_byte(m.copy_gbs),
        m.contention.as_ref(),
    )?;
    Ok(Model {
        name: name.to_string(),
        intra,
        inter,
        cma,
        reduce_per_byte: per_byte(m.reduce_gbs),
        copy_per_byte: per_byte(m.copy_gbs),
        call_overhead: 0.0,
        round_overhead: 0.0,
        intra_bidirectional: m.bidirectional_intra.clamp(MIN_BIDIRECTIONAL, 2.0),
        inter_bidirectional: m.bidirectional_inter.clamp(MIN_BIDIRECTIONAL, 2.0),
    })
}

/// A collective timed on real ranks.
#[derive(Clone, Debug)]
pub struct Timed {
    /// What ran.
    pub call: Call,
    /// Where it ran.
    pub machine: Machine,
    /// Its measured time per call (us).
    pub measured_us: f64,
}

/// One timed collective as the software-cost fit saw it.
#[derive(Clone, Debug, PartialEq)]
pub struct Explained {
    /// The prediction of its messages alone (us).
    pub messages_us: f64,
    /// Calls charged along its critical path (1 unless a rank on it waits for nobody).
    pub calls: f64,
    /// Rounds started along its critical path.
    pub rounds: f64,
    /// What it measured (us).
    pub measured_us: f64,
}

/// The software costs fitted by [`software_costs`].
#[derive(Clone, Debug, PartialEq)]
pub struct SoftwareFit {
    /// CPU time per collective call (us).
    pub call_us: f64,
    /// CPU time per round (us).
    pub round_us: f64,
    /// Every timed collective, in the order given.
    pub points: Vec<Explained>,
}

/// Predicted microseconds of `t` under `model` with the given software costs.
fn predict(t: &Timed, model: &Model, call: f64, round: f64) -> Result<f64, String> {
    let m = Model {
        call_overhead: call * 1e-6,
        round_overhead: round * 1e-6,
        ..model.clone()
    };
    Ok(run(&t.call, &t.machine, &m, Options::default())?.time() * 1e6)
}

/// Fits `call_us` and `round_us` (both at least 0) so that `model`'s predictions plus
/// `call_us * calls + round_us * rounds` match the timed collectives with the least sum of
/// squared relative errors, counting each one's calls and rounds on its critical path with
/// the simulator.
pub fn software_costs(model: &Model, timed: &[Timed]) -> Result<SoftwareFit, String> {
    let mut points = Vec::with_capacity(timed.len());
    for t in timed {
        let base = predict(t, model, 0.0, 0.0)?;
        points.push(Explained {
            messages_us: base,
            calls: predict(t, model, 1.0, 0.0)? - base,
            rounds: predict(t, model, 0.0, 1.0)? - base,
            measured_us: t.measured_us,
        });
    }
    // Each row divided by its measurement: relative errors, so the fast collectives count
    // as much as the slow ones.
    let rows: Vec<(f64, f64, f64)> = points
        .iter()
        .filter(|p| p.measured_us > 0.0)
        .map(|p| {
            let w = 1.0 / p.measured_us;
            (
                p.calls * w,
                p.rounds * w,
                (p.measured_us - p.messages_us) * w,
            )
        })
        .collect();
    let (call_us, round_us) = nonnegative_least_squares(&rows);
    Ok(SoftwareFit {
        call_us,
        round_us,
        points,
    })
}

/// Minimizes `sum (r - x c - y n)^2` over `x, y >= 0` for rows `(c, n, r)`: the unconstrained
/// solution when both are non-negative, else the better of the two one-variable fits (or 0).
fn nonnegative_least_squares(rows: &[(f64, f64, f64)]) -> (f64, f64) {
    let (mut scc, mut snn, mut scn, mut scr, mut snr) = (0.0, 0.0, 0.0, 0.0, 0.0);
    for &(c, n, r) in rows {
        scc += c * c;
        snn += n * n;
        scn += c * n;
        scr += c * r;
        snr += n * r;
    }
    let det = scc * snn - scn * scn;
    if det.abs() > 1e-9 * (scc * snn).max(1e-300) {
        let x = (scr * snn - snr * scn) / det;
        let y = (snr * scc - scr * scn) / det;
        if x >= 0.0 && y >= 0.0 {
            return (x, y);
        }
    }
    let sse = |x: f64, y: f64| -> f64 {
        rows.iter()
            .map(|&(c, n, r)| (r - x * c - y * n).powi(2))
            .sum()
    };
    let only_call = if scc > 0.0 { (scr / scc).max(0.0) } else { 0.0 };
    let only_round = if snn > 0.0 { (snr / snn).max(0.0) } else { 0.0 };
    if sse(only_call, 0.0) <= sse(0.0, only_round) {
        (only_call, 0.0)
    } else {
        (0.0, only_round)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coll::tuning::Coll;
    use crate::sim::Algorithm;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol * b.abs().max(1e-12)
    }

    #[test]
    fn a_line_through_exact_points_is_found() {
        let pts: Vec<(f64, f64)> = (0..6).map(|i| (i as f64, 2.0 + 0.5 * i as f64)).collect();
        let (a, b) = line(&pts).unwrap();
        assert!(close(a, 2.0, 1e-12) && close(b, 0.5, 1e-12));
        assert!(line(&[(1.0, 1.0)]).is_none());
        assert!(line(&[(1.0, 1.0), (1.0, 2.0)]).is_none());
    }

    #[test]
    fn a_links_loggp_parameters_come_back_from_its_ping_pong() {
        // L = 0.3, o = 0.1, G = 0.5 ns/B: one-way time L + 2o + m G.
        let rows: Vec<(f64, f64)> = [0.0, 8.0, 512.0, 4096.0, 16384.0, 1e6]
            .iter()
            .map(|&m| (m, if m <= 16384.0 { 0.5 + m * 0.5e-3 } else { 99.0 }))
            .collect();
        let (l, a) = link(&rows, 0.1, 16384.0).unwrap();
        assert!(close(a, 0.5, 1e-9));
        assert!(close(l.latency, 0.3e-6, 1e-9) && close(l.overhead, 0.1e-6, 1e-9));
        assert!(close(l.per_byte, 0.5e-9, 1e-9) && l.gap == l.overhead);
        // A message rate slower than the whole latency leaves L at 0 and o at half of it.
        let (l, _) = link(&rows, 5.0, 16384.0).unwrap();
        assert!(l.latency == 0.0 && close(l.overhead, 0.25e-6, 1e-9));
    }

    #[test]
    fn the_large_message_line_splits_into_copy_and_contended_locking() {
        // Above 16 KiB: 2.5 + m / 5 GB/s; the eager line's intercept is 0.5; memcpy 10 GB/s.
        let rows: Vec<(f64, f64)> = [65536.0, 262144.0, 1048576.0]
            .iter()
            .map(|&m| (m, 2.5 + m * 0.2e-3))
            .collect();
        let measured = Cma {
            threshold: 0,
            startup: 1e-6,
            per_byte: 1e-10,
            lock_per_page: 0.1e-6,
            page: 4096,
            quadratic: 0.5,
            linear: 1.5,
        };
        let c = cma(&rows, 16320, 0.5, 0.1e-9, Some(&measured)).unwrap();
        assert_eq!(c.threshold, 16321);
        assert!(close(c.startup, 2.0e-6, 1e-9));
        assert!(close(c.per_byte, 0.1e-9, 1e-9));
        // One reader: the line's time per byte; the polynomial's shape is the measured one.
        let one = c.per_byte + c.lock_per_page * c.contention(1) / 4096.0;
        assert!(close(one, 0.2e-9, 1e-9), "{c:?}");
        assert_eq!((c.quadratic, c.linear), (0.5, 1.5));
        // A memcpy slower than the line leaves no locking term.
        let c = cma(&rows, 16320, 0.5, 1e-9, None).unwrap();
        assert!(close(c.per_byte, 0.2e-9, 1e-9) && c.lock_per_page == 0.0);
        assert_eq!((c.quadratic, c.linear), (0.18, 0.83));
    }

    fn timed(coll: Coll, algo: &str, bytes: usize, nodes: usize, ppn: usize) -> Timed {
        Timed {
            call: Call {
                coll,
                algo: Algorithm::parse(algo).unwrap(),
                bytes,
                root: 0,
            },
            machine: Machine::regular(nodes, ppn),
            measured_us: 0.0,
        }
    }

    #[test]
    fn software_costs_come_back_from_collectives_the_simulator_timed() {
        let model = Model::default();
        let mut set = vec![
            timed(Coll::Bcast, "knomial", 8, 1, 2),
            timed(Coll::Allreduce, "knomial", 8, 1, 2),
            timed(Coll::Allreduce, "ring", 64, 1, 4),
            timed(Coll::Allgather, "ring", 8, 1, 4),
            timed(Coll::Allgather, "bruck", 1024, 1, 4),
            timed(Coll::Bcast, "scatter_allgather", 1024, 2, 2),
        ];
        for t in &mut set {
            t.measured_us = predict(t, &model, 0.2, 0.1).unwrap();
        }
        let fit = software_costs(&model, &set).unwrap();
        assert!(close(fit.call_us, 0.2, 1e-6), "{fit:?}");
        assert!(close(fit.round_us, 0.1, 1e-6), "{fit:?}");
        // The ring allgather on 4 ranks has 3 rounds on its critical path, the bcast 1.
        assert!(close(fit.points[3].rounds, 3.0, 1e-6), "{fit:?}");
        assert!(close(fit.points[0].rounds, 1.0, 1e-6), "{fit:?}");
        // Collectives faster than their messages cost nothing extra (never a negative cost).
        for t in &mut set {
            t.measured_us = predict(t, &model, 0.0, 0.0).unwrap() * 0.5;
        }
        let fit = software_costs(&model, &set).unwrap();
        assert_eq!((fit.call_us, fit.round_us), (0.0, 0.0));
    }

    #[test]
    fn a_negative_unconstrained_cost_falls_back_to_the_other_alone() {
        // r = 1 * n exactly, plus a call column that would take a negative weight.
        let rows = [(1.0, 1.0, 0.5), (1.0, 2.0, 2.0), (1.0, 3.0, 3.5)];
        let (x, y) = nonnegative_least_squares(&rows);
        assert_eq!(x, 0.0);
        assert!(y > 0.0);
    }
}
