//! The feature space the tuner explores for one collective: node layouts (nodes × ranks per
//! node), power-of-two message sizes, and the candidate algorithms with their radices; and
//! ACCLAiM's scaling of the features (`log2(x) + 1`).

use crate::coll::tuning::{Coll, NODE_AWARE, SHM};
use crate::sim::build::{check, takes_radix};
use crate::sim::{Algorithm, Call, Machine};
use std::fmt;

/// Nodes × ranks per node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Layout {
    /// Nodes.
    pub nodes: usize,
    /// Ranks on each node.
    pub ppn: usize,
}

impl Layout {
    /// Ranks in all.
    pub fn ranks(self) -> usize {
        self.nodes * self.ppn
    }

    /// The simulator's machine of this layout.
    pub fn machine(self) -> Machine {
        Machine::regular(self.nodes, self.ppn)
    }
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}", self.nodes, self.ppn)
    }
}

/// What the tuner chooses among, for one collective.
#[derive(Clone, Debug)]
pub struct Space {
    /// The collective.
    pub coll: Coll,
    /// The layouts, sorted by nodes, then ranks per node.
    pub layouts: Vec<Layout>,
    /// The power-of-two message sizes (bytes per rank, as `hympi-sim`'s `--bytes`), ascending.
    pub sizes: Vec<usize>,
    /// The candidate algorithms (each radix its own candidate).
    pub algos: Vec<Algorithm>,
}

impl Space {
    /// The space of `coll` over every layout `nodes × ppn` of at least 2 ranks, the powers
    /// of two from `min` to `max` bytes, and the simulator's algorithms for `coll` with each
    /// radix of `ks` for those that take one (`algos` narrows them by name, and may add
    /// `shm`, the shared-memory algorithm, which only real runs on one node measure).
    pub fn new(
        coll: Coll,
        nodes: &[usize],
        ppn: &[usize],
        min: usize,
        max: usize,
        algos: Option<&[String]>,
        ks: &[u32],
    ) -> Result<Space, String> {
        let mut layouts: Vec<Layout> = nodes
            .iter()
            .flat_map(|&n| ppn.iter().map(move |&p| Layout { nodes: n, ppn: p }))
            .filter(|l| l.nodes > 0 && l.ppn > 0 && l.ranks() >= 2)
            .collect();
        layouts.sort();
        layouts.dedup();
        if layouts.is_empty() {
            return Err("no layout of at least 2 ranks".into());
        }
        let mut sizes = Vec::new();
        let mut s = min.max(1).next_power_of_two();
        while s <= max {
            sizes.push(s);
            s *= 2;
        }
        if sizes.is_empty() {
            return Err(format!("no power of two between {min} and {max}"));
        }
        // The simulator's algorithms, and the shared-memory one where the collective has it
        // (real runs on one node only: the simulator does not model it).
        let mut catalog = crate::sim::build::catalog(coll).to_vec();
        if catalog.is_empty() {
            return Err(format!(
                "the simulator has no algorithms for {}",
                coll.name()
            ));
        }
        if coll.algorithms().iter().any(|a| a.name == SHM) {
            catalog.push(SHM);
        }
        let names: Vec<&str> = match algos {
            Some(list) => {
                for a in list {
                    if !catalog.contains(&a.as_str()) {
                        return Err(format!(
                            "{}: no algorithm `{a}` (known: {})",
                            coll.name(),
                            catalog.join(", ")
                        ));
                    }
                }
                catalog
                    .iter()
                    .copied()
                    .filter(|c| list.iter().any(|a| a == c))
                    .collect()
            }
            None => catalog.iter().copied().filter(|&n| n != SHM).collect(),
        };
        let mut out = Vec::new();
        for name in names {
            if takes_radix(name) {
                for &k in ks {
                    out.push(Algorithm {
                        name: name.to_string(),
                        k,
                    });
                }
            } else {
                out.push(Algorithm {
                    name: name.to_string(),
                    k: 2,
                });
            }
        }
        Ok(Space {
            coll,
            layouts,
            sizes,
            algos: out,
        })
    }

    /// Points `(layout, size)` on the power-of-two grid: `layouts × sizes`.
    pub fn points(&self) -> usize {
        self.layouts.len() * self.sizes.len()
    }

    /// The point of grid index `i` (layout-major).
    pub fn point(&self, i: usize) -> (Layout, usize) {
        (
            self.layouts[i / self.sizes.len()],
            self.sizes[i % self.sizes.len()],
        )
    }

    /// Whether algorithm `a` can run `bytes` on `layout` (the shared-memory one: on one
    /// node).
    pub fn applies(&self, a: usize, layout: Layout, bytes: usize) -> bool {
        let algo = &self.algos[a];
        if algo.name == SHM {
            return layout.nodes == 1;
        }
        let call = Call {
            coll: self.coll,
            algo: algo.clone(),
            bytes,
            root: 0,
        };
        let radix_fits =
            !takes_radix(&algo.name) || algo.k as usize <= layout.ranks() || algo.k == 2;
        radix_fits && check(&call, &layout.machine()).is_ok()
    }

    /// Whether algorithm `a` is chosen before the flat ones by a query of its own (the
    /// node-aware offer, the shared-memory path): the flat queries pass it over.
    pub fn special(&self, a: usize) -> bool {
        let n = self.algos[a].name.as_str();
        n == SHM || NODE_AWARE.contains(&n)
    }

    /// The model's input for algorithm `a` at `bytes` on `layout`: `log2(x) + 1` of nodes,
    /// ranks per node, ranks (which most algorithms' costs follow, and which a tree would
    /// otherwise have to piece together) and bytes (ACCLAiM's scaling), then the algorithm: its name one-hot
    /// (one input per name, so a tree tells any algorithm from the others in one split) and
    /// `log2(k) + 1` of its radix and `log_k(ranks)`, its number of rounds (both 0 without
    /// a radix above 1).
    pub fn features(&self, layout: Layout, bytes: usize, a: usize) -> Vec<f64> {
        let s = |x: usize| (x.max(1) as f64).log2() + 1.0;
        let mut v = vec![s(layout.nodes), s(layout.ppn), s(layout.ranks()), s(bytes)];
        let mut names: Vec<&str> = Vec::new();
        for x in &self.algos {
            if !names.contains(&x.name.as_str()) {
                names.push(&x.name);
            }
        }
        let algo = &self.algos[a];
        v.extend(names.iter().map(|n| f64::from(u8::from(*n == algo.name))));
        if takes_radix(&algo.name) && algo.k > 1 {
            let k = algo.k as f64;
            v.push(s(algo.k as usize));
            v.push((layout.ranks() as f64).ln() / k.ln());
        } else {
            v.push(0.0);
            v.push(0.0);
        }
        v
    }
}
