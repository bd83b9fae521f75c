//! Writes the tuner's choices as a selection table in MPICH's JSON grammar (the one
//! `HYMPI_COLL_TUNING_FILE` reads, `coll::tuning`): per node count, per ranks per node, a
//! chain of message-size rules built as ACCLAiM does (thesis Fig. 3.16): the model is asked
//! at every power-of-two size; where the choice changes between sizes A and C it is asked
//! at B, halfway, and the rules `<= A: ALG(A)`, `< C: ALG(B)`, then C's run follow, merged
//! where two neighbours agree, so the table is complete and pruned.

use super::active::Tuner;
use super::space::Layout;
use crate::sim::build::takes_radix;
use crate::sim::Algorithm;
use std::fmt::Write;

/// One size rule: up to (`<=`) or below (`<`) a size, or any size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Bound {
    /// `avg_msg_size<=N`.
    UpTo(usize),
    /// `avg_msg_size<N`.
    Below(usize),
    /// `any`.
    Any,
}

/// What one layout's rule picks: the algorithm, and for a node-aware or shared-memory one
/// the flat algorithm the flat queries (which pass those over) take there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pick {
    /// The best algorithm.
    pub best: usize,
    /// The best flat algorithm, when `best` is node-aware or shared-memory.
    pub flat: Option<usize>,
}

/// The size rules of one layout.
pub fn rules(t: &Tuner, layout: Layout) -> Result<Vec<(Bound, Pick)>, String> {
    let pick = |bytes: usize| -> Result<Pick, String> {
        let best = t
            .best(layout, bytes, |_| true)?
            .ok_or_else(|| format!("no algorithm runs {bytes} B on {layout}"))?;
        let flat = if t.space.special(best) {
            t.best(layout, bytes, |a| !t.space.special(a))?
        } else {
            None
        };
        Ok(Pick { best, flat })
    };
    let sizes = &t.space.sizes;
    let picks: Vec<Pick> = sizes.iter().map(|&b| pick(b)).collect::<Result<_, _>>()?;
    let mut out: Vec<(Bound, Pick)> = Vec::new();
    for i in 0..sizes.len() {
        let last = i + 1 == sizes.len();
        if last {
            out.push((Bound::Any, picks[i].clone()));
            break;
        }
        if picks[i] == picks[i + 1] {
            continue;
        }
        let (a, c) = (sizes[i], sizes[i + 1]);
        let mid = pick(a + (c - a) / 2)?;
        if c - a < 2 || mid == picks[i] {
            out.push((Bound::Below(c), picks[i].clone()));
        } else if mid == picks[i + 1] {
            out.push((Bound::UpTo(a), picks[i].clone()));
        } else {
            out.push((Bound::UpTo(a), picks[i].clone()));
            out.push((Bound::Below(c), mid));
        }
    }
    Ok(out)
}

fn leaf(a: &Algorithm) -> String {
    if takes_radix(&a.name) {
        format!("\"algorithm={}\": {{ \"k={}\": {{}} }}", a.name, a.k)
    } else {
        format!("\"algorithm={}\": {{}}", a.name)
    }
}

fn condition(b: &Bound) -> String {
    match b {
        Bound::UpTo(n) => format!("avg_msg_size<={n}"),
        Bound::Below(n) => format!("avg_msg_size<{n}"),
        Bound::Any => "any".into(),
    }
}

/// A key of `values` (ascending): `<var><=v` for all but the last, `any` for the last.
fn range(var: &str, values: &[usize], i: usize) -> String {
    if i + 1 == values.len() {
        "any".into()
    } else {
        format!("{var}<={}", values[i])
    }
}

/// The JSON object of one collective (`"collective=<name>": {...}`, without braces
/// around it): by `node_count`, then `comm_avg_ppn` (on one node, `comm_size`), then size.
pub fn collective(t: &Tuner) -> Result<String, String> {
    let mut nodes: Vec<usize> = t.space.layouts.iter().map(|l| l.nodes).collect();
    nodes.dedup();
    let mut s = String::new();
    let _ = writeln!(s, "  \"collective={}\": {{", t.space.coll.name());
    for (ni, &n) in nodes.iter().enumerate() {
        let ppns: Vec<usize> = t
            .space
            .layouts
            .iter()
            .filter(|l| l.nodes == n)
            .map(|l| l.ppn)
            .collect();
        let _ = writeln!(s, "    \"{}\": {{", range("node_count", &nodes, ni));
        for (pi, &p) in ppns.iter().enumerate() {
            let _ = writeln!(s, "      \"{}\": {{", range("comm_avg_ppn", &ppns, pi));
            let r = rules(t, Layout { nodes: n, ppn: p })?;
            for (ri, (b, pick)) in r.iter().enumerate() {
                let mut leaves = leaf(&t.space.algos[pick.best]);
                if let Some(f) = pick.flat {
                    leaves = format!("{leaves}, {}", leaf(&t.space.algos[f]));
                }
                let comma = if ri + 1 < r.len() { "," } else { "" };
                let _ = writeln!(s, "        \"{}\": {{ {leaves} }}{comma}", condition(b));
            }
            let comma = if pi + 1 < ppns.len() { "," } else { "" };
            let _ = writeln!(s, "      }}{comma}");
        }
        let comma = if ni + 1 < nodes.len() { "," } else { "" };
        let _ = writeln!(s, "    }}{comma}");
    }
    s.push_str("  }");
    Ok(s)
}

/// A whole table (one JSON object) of the tuned collectives.
pub fn table(tuners: &[&Tuner]) -> Result<String, String> {
    let parts: Vec<String> = tuners
        .iter()
        .map(|t| collective(t))
        .collect::<Result<_, _>>()?;
    Ok(format!("{{\n{}\n}}\n", parts.join(",\n")))
}
