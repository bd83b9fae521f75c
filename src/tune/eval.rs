//! ACCLAiM's quality metrics (thesis Table 3.2) of a selection table against measurements
//! of every algorithm at every point (the oracle): average slowdown of the selected
//! algorithm, proportion of significant mistakes (more than 10 % slower than the best) and
//! accuracy. The table is asked the way the runtime asks it (`coll::tuning`): the
//! shared-memory path's query on one node, the node-aware offer's on several, then the
//! flat query.

use super::active::Sample;
use super::space::Space;
use crate::coll::tuning::{Choice, Query, Shape, Table, NODE_AWARE, SHM};
use crate::sim::build::takes_radix;

/// How good a table's choices are.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Score {
    /// Mean over points of `t(selected) / t(best)`.
    pub avg_slowdown: f64,
    /// Fraction of points where the selected algorithm is more than 10 % slower.
    pub significant_mistakes: f64,
    /// Fraction of points where the selected algorithm is the fastest.
    pub accuracy: f64,
    /// Points scored.
    pub points: usize,
    /// Points where the table picked an algorithm that was not measured there (scored as
    /// the slowest measured one).
    pub unmeasured_picks: usize,
}

/// The index in `space.algos` of the table's choice `c`.
fn index(space: &Space, c: &Choice) -> Option<usize> {
    space
        .algos
        .iter()
        .position(|a| a.name == c.name && (!takes_radix(&a.name) || a.k == c.k))
}

/// The algorithm `table` selects for `space.coll` at `bytes` per rank on `nodes × ppn`,
/// asked as the runtime asks.
pub fn selected(
    table: &Table,
    space: &Space,
    nodes: usize,
    ppn: usize,
    bytes: usize,
) -> Option<Choice> {
    let p = (nodes * ppn) as i32;
    let total = match space.coll {
        crate::coll::tuning::Coll::Bcast
        | crate::coll::tuning::Coll::Reduce
        | crate::coll::tuning::Coll::Allreduce => bytes,
        _ => bytes * p as usize,
    };
    let shape = Shape::of(nodes, nodes * ppn);
    let mut q = Query::new(p, bytes, total).on(shape);
    // One node: a blocking call takes the shared-memory path where the table names it.
    if nodes == 1 {
        if let Some(c) = table.select_skipping(space.coll, &q, &[]) {
            if c.name == SHM {
                return Some(c);
            }
        }
    }
    if nodes > 1 && ppn > 1 {
        q.node_aware = true;
        if let Some(c) = table.select_skipping(space.coll, &q, &[SHM]) {
            if NODE_AWARE.contains(&c.name) {
                return Some(c);
            }
        }
        q.node_aware = false;
    }
    let mut skip = vec![SHM];
    skip.extend(NODE_AWARE);
    table.select_skipping(space.coll, &q, &skip)
}

/// Scores `table` on `truth` (every algorithm measured at each point).
pub fn score(table: &Table, space: &Space, truth: &[Sample]) -> Score {
    let mut s = Score::default();
    for x in truth {
        let Some(best) = x.best() else { continue };
        let worst = x.times.iter().flatten().copied().fold(best, f64::max);
        let pick = selected(table, space, x.layout.nodes, x.layout.ppn, x.bytes);
        let t = match pick.and_then(|c| index(space, &c)).and_then(|a| x.times[a]) {
            Some(t) => t,
            None => {
                s.unmeasured_picks += 1;
                worst
            }
        };
        s.points += 1;
        s.avg_slowdown += t / best;
        if t > 1.1 * best {
            s.significant_mistakes += 1.0;
        }
        if t <= best {
            s.accuracy += 1.0;
        }
    }
    if s.points > 0 {
        let n = s.points as f64;
        s.avg_slowdown /= n;
        s.significant_mistakes /= n;
        s.accuracy /= n;
    }
    s
}

/// Measures every algorithm at every grid point of `space` (exhaustive search, the oracle
/// the metrics compare against); `progress(done, of)` after each point.
pub fn oracle(
    space: &Space,
    bench: &mut dyn super::Bench,
    mut progress: impl FnMut(usize, usize),
) -> Result<(Vec<Sample>, f64), String> {
    let mut t = super::Tuner::new(space.clone(), super::Settings::default());
    for i in 0..space.points() {
        let (l, b) = space.point(i);
        t.measure(bench, l, b)?;
        progress(i + 1, space.points());
    }
    Ok((t.samples, t.cost_us))
}

/// The points where `table` picks an algorithm more than 10 % slower than the best, worst
/// first: `(sample, picked algorithm, best algorithm, slowdown)`.
pub fn mistakes<'a>(
    table: &Table,
    space: &Space,
    truth: &'a [Sample],
) -> Vec<(&'a Sample, String, String, f64)> {
    let mut out = Vec::new();
    for x in truth {
        let Some(best) = x.best() else { continue };
        let Some(b) = x.times.iter().position(|t| *t == Some(best)) else {
            continue;
        };
        let pick = selected(table, space, x.layout.nodes, x.layout.ppn, x.bytes);
        let Some(a) = pick.and_then(|c| index(space, &c)) else {
            continue;
        };
        if let Some(t) = x.times[a] {
            if t > 1.1 * best {
                out.push((
                    x,
                    space.algos[a].to_string(),
                    space.algos[b].to_string(),
                    t / best,
                ));
            }
        }
    }
    out.sort_by(|p, q| q.3.total_cmp(&p.3));
    out
}
