//! The schedules of every rank of a modelled job, built by the very algorithm code the
//! library runs (`coll::algos`) on a [`Schedule::modelled`] schedule, then compacted to what
//! the engine needs: per rank, rounds of sends, receives and local steps with their bytes.

use crate::coll::algos::{
    allgather, allreduce, alltoall, barrier, bcast, blocks::Blocks, gather, hier, multi_object,
    reduce, reduce::Elems, scatter,
};
use crate::coll::sched::{Schedule, Span, Step};
use crate::coll::tuning::Coll;
use crate::coll::Ctx;
use crate::core::objects::nodes::NodeLayout;
use crate::core::op::{Builtin, Reducer};
use crate::mpi_abi::consts::{MPI_DOUBLE, MPI_INT8_T};
use std::sync::Arc;

/// Where the modelled send buffers start (never dereferenced).
const SEND_BASE: usize = 1 << 48;
/// Where the modelled receive buffers start (never dereferenced).
const RECV_BASE: usize = 2 << 48;

/// The ranks of a modelled job and their nodes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Machine {
    /// Node of each rank.
    pub node_of: Vec<u32>,
}

impl Machine {
    /// `nodes` nodes of `ppn` ranks each, ranks numbered node by node (as launchers place
    /// them by default).
    pub fn regular(nodes: usize, ppn: usize) -> Machine {
        Machine::from_sizes(&vec![ppn; nodes])
    }

    /// Nodes of the given sizes (uneven allowed), ranks numbered node by node.
    pub fn from_sizes(sizes: &[usize]) -> Machine {
        let node_of = sizes
            .iter()
            .enumerate()
            .flat_map(|(n, &k)| std::iter::repeat_n(n as u32, k))
            .collect();
        Machine { node_of }
    }

    /// Number of ranks.
    pub fn ranks(&self) -> usize {
        self.node_of.len()
    }

    /// Number of nodes.
    pub fn nodes(&self) -> usize {
        self.node_of.iter().max().map_or(0, |&n| n as usize + 1)
    }

    /// The layout the node-aware algorithms read.
    pub fn layout(&self) -> NodeLayout {
        let keys: Vec<u64> = self.node_of.iter().map(|&n| n as u64).collect();
        NodeLayout::from_keys(&keys)
    }
}

/// What one step of a compacted schedule does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpKind {
    /// Sends `bytes` to `peer`.
    Send,
    /// Receives `bytes` from `peer`.
    Recv,
    /// Combines `bytes` of operands after the round's messages.
    Reduce,
    /// Copies `bytes` locally after the round's messages.
    Copy,
}

/// One step of a compacted schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Op {
    /// What it does.
    pub kind: OpKind,
    /// The other rank (sends and receives; 0 otherwise).
    pub peer: u32,
    /// Bytes moved or combined.
    pub bytes: u64,
}

/// One rank's schedule as the engine reads it: its distinct rounds in order, each with the
/// number of times it runs in a row (a ring's p - 1 identical rounds are stored once, which
/// keeps a 9216-rank ring allgather's programs small).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Program {
    /// The steps of the stored rounds, one after another.
    pub ops: Vec<Op>,
    /// Where each stored round's steps end in `ops`.
    pub round_ends: Vec<u32>,
    /// How many times each stored round runs in a row.
    pub repeats: Vec<u32>,
}

impl Program {
    /// Appends a round with steps `ops` (counted again when it equals the last one).
    pub fn push_round(&mut self, ops: &[Op]) {
        if let Some(n) = self.repeats.len().checked_sub(1) {
            if self.stored(n) == ops {
                self.repeats[n] += 1;
                return;
            }
        }
        self.ops.extend_from_slice(ops);
        self.round_ends.push(self.ops.len() as u32);
        self.repeats.push(1);
    }

    /// Compacts a schedule: sends and receives as they are, a round's local steps summed into
    /// at most one reduction and one copy at its end (the engine runs them after the round's
    /// messages anyway; an algorithm that rotates p blocks one by one would otherwise keep
    /// p steps per round of every rank).
    pub fn of(s: &Schedule) -> Program {
        let mut p = Program::default();
        let mut ops = Vec::new();
        for round in s.round_steps() {
            ops.clear();
            let (mut reduced, mut copied) = (0u64, 0u64);
            for step in round {
                match step {
                    Step::Send { peer, data, .. } => ops.push(Op {
                        kind: OpKind::Send,
                        peer: *peer as u32,
                        bytes: data.packed() as u64,
                    }),
                    Step::Recv { peer, data, .. } => ops.push(Op {
                        kind: OpKind::Recv,
                        peer: *peer as u32,
                        bytes: data.packed() as u64,
                    }),
                    Step::Reduce { reducer, count, .. } => {
                        reduced += (*count * reducer.extent) as u64
                    }
                    Step::Copy { src, .. } => copied += src.packed() as u64,
                }
            }
            for (kind, bytes) in [(OpKind::Reduce, reduced), (OpKind::Copy, copied)] {
                if bytes > 0 {
                    ops.push(Op {
                        kind,
                        peer: 0,
                        bytes,
                    });
                }
            }
            p.push_round(&ops);
        }
        p
    }

    /// The steps of stored round `i`.
    pub fn stored(&self, i: usize) -> &[Op] {
        let start = match i {
            0 => 0,
            _ => self.round_ends[i - 1] as usize,
        };
        &self.ops[start..self.round_ends[i] as usize]
    }

    /// Number of rounds the rank runs.
    pub fn rounds(&self) -> usize {
        self.repeats.iter().map(|&n| n as usize).sum()
    }

    /// The steps of every round the rank runs, in order.
    pub fn each_round(&self) -> impl Iterator<Item = &[Op]> {
        (0..self.repeats.len())
            .flat_map(move |i| std::iter::repeat_n(self.stored(i), self.repeats[i] as usize))
    }
}

/// An algorithm by its name in the tuning table and its radix (or group size).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Algorithm {
    /// Name, as in the tuning table and `HYMPI_<COLL>_ALGORITHM`.
    pub name: String,
    /// Radix or group size for the algorithms that take one (ignored otherwise).
    pub k: u32,
}

impl Algorithm {
    /// Parses `name` or `name:k=N` (the override variables' syntax).
    pub fn parse(text: &str) -> Result<Algorithm, String> {
        let (name, rest) = text.split_once(':').unwrap_or((text, ""));
        let k = match rest.trim().strip_prefix("k=") {
            Some(v) => v
                .parse()
                .map_err(|_| format!("`{text}`: k must be a positive integer"))?,
            None if rest.trim().is_empty() => 2,
            None => return Err(format!("`{text}`: expected name or name:k=N")),
        };
        Ok(Algorithm {
            name: name.trim().to_string(),
            k,
        })
    }
}

impl std::fmt::Display for Algorithm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if takes_radix(&self.name) {
            write!(f, "{}:k={}", self.name, self.k)
        } else {
            f.write_str(&self.name)
        }
    }
}

/// Whether algorithm `name` takes a radix or group size.
pub fn takes_radix(name: &str) -> bool {
    matches!(name, "knomial" | "recursive_multiplying" | "kring")
}

/// The algorithms the simulator builds for `coll` (radix-taking ones once, with k = 2).
pub fn catalog(coll: Coll) -> &'static [&'static str] {
    match coll {
        Coll::Barrier => &["dissemination", "smp"],
        Coll::Bcast => &[
            "knomial",
            "scatter_allgather",
            "recursive_multiplying",
            "kring",
            "smp",
        ],
        Coll::Reduce => &["knomial", "smp"],
        Coll::Allreduce => &[
            "recursive_doubling",
            "rabenseifner",
            "ring",
            "knomial",
            "recursive_multiplying",
            "kring",
            "smp",
            "multi_object_bruck",
        ],
        Coll::Allgather => &[
            "ring",
            "recursive_doubling",
            "bruck",
            "knomial",
            "recursive_multiplying",
            "kring",
            "smp",
            "multi_object_ring",
            "multi_object_bruck",
        ],
        Coll::Gather => &["binomial", "linear", "smp"],
        Coll::Scatter => &["binomial", "linear", "smp", "multi_object_tree"],
        Coll::Alltoall => &["pairwise", "scattered", "bruck"],
        _ => &[],
    }
}

/// One collective call to model: which, how, on what, with how much.
#[derive(Clone, Debug)]
pub struct Call {
    /// The collective.
    pub coll: Coll,
    /// Its algorithm.
    pub algo: Algorithm,
    /// Bytes per rank: the broadcast or reduced vector, one rank's block of a gather,
    /// scatter or allgather, one peer's block of an alltoall.
    pub bytes: usize,
    /// Root of the rooted collectives.
    pub root: u32,
}

/// Builds the programs of every rank of `machine` for `call` (on all cores).
pub fn programs(call: &Call, machine: &Machine) -> Result<Vec<Program>, String> {
    let p = machine.ranks();
    if p == 0 {
        return Err("the machine has no ranks".into());
    }
    if call.root as usize >= p {
        return Err(format!("root {} is not a rank of {p}", call.root));
    }
    check(call, machine)?;
    let layout = Arc::new(machine.layout());
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(p);
    let chunk = p.div_ceil(threads);
    let parts: Vec<Vec<Program>> = std::thread::scope(|sc| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let layout = &layout;
                sc.spawn(move || {
                    (t * chunk..((t + 1) * chunk).min(p))
                        .map(|r| Program::of(&schedule(call, layout, p, r)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a schedule builder panicked"))
            .collect()
    });
    Ok(parts.into_iter().flatten().collect())
}

/// Whether `call` can run on `m` (the library's selection never picks it where it cannot):
/// the algorithm is in the [`catalog`] and its conditions hold (several nodes for the node-aware ones, a power-of-two size for the recursive
/// doubling allgather, an element per rank for the splitting allreduces).
pub fn check(call: &Call, m: &Machine) -> Result<(), String> {
    let name = call.algo.name.as_str();
    if !catalog(call.coll).contains(&name) {
        return Err(format!(
            "{}: no algorithm `{name}` (known: {})",
            call.coll.name(),
            catalog(call.coll).join(", ")
        ));
    }
    let p = m.ranks();
    let l = m.layout();
    let multi_object = name.starts_with("multi_object_");
    if (name == "smp" || multi_object) && !l.is_hierarchical() {
        return Err(format!(
            "`{name}` needs several nodes, one of them with several ranks"
        ));
    }
    if multi_object && !l.is_uniform() {
        return Err(format!("`{name}` needs nodes of one size"));
    }
    if call.coll == Coll::Allgather && name == "recursive_doubling" && !p.is_power_of_two() {
        return Err("allgather `recursive_doubling` needs a power-of-two size".into());
    }
    if call.coll == Coll::Allreduce && matches!(name, "rabenseifner" | "ring" | "kring") {
        let (_, count) = element(call.bytes);
        if count < p {
            return Err(format!(
                "allreduce `{name}` needs at least one element per rank ({count} < {p})"
            ));
        }
    }
    Ok(())
}

/// The element type and count a modelled reduction of `bytes` uses (doubles when they fit).
fn element(bytes: usize) -> (usize, usize) {
    if bytes.is_multiple_of(8) {
        (MPI_DOUBLE, bytes / 8)
    } else {
        (MPI_INT8_T, bytes)
    }
}

/// The elements of a modelled `MPI_SUM` reduction of `bytes`.
fn elems(bytes: usize) -> Elems {
    let (dt, count) = element(bytes);
    let reducer = Reducer::builtin(Builtin::Sum, dt).expect("MPI_SUM on a basic type");
    let span = Span {
        addr: 0,
        bytes: count * reducer.extent,
        unit: crate::core::datatype::predefined(dt).expect("predefined"),
        layout: None,
    };
    Elems::new(reducer, count, 0, &span, 0, span.bytes as isize)
}

/// Rank `rank`'s schedule of `call` on `p` ranks laid out as `l`.
fn schedule(call: &Call, l: &NodeLayout, p: usize, rank: usize) -> Schedule {
    let mut s = Schedule::modelled();
    let c = Ctx {
        comm: 0,
        rank: rank as i32,
        size: p as i32,
        inter: None,
        blocking: false,
        shape: crate::coll::tuning::Shape::of(l.nodes(), p),
    };
    let (b, k, root) = (call.bytes, call.algo.k as i32, call.root as i32);
    let name = call.algo.name.as_str();
    let is_root = rank as i32 == root;
    let sd = Span::bytes(SEND_BASE, b);
    let rblocks = Blocks::packed_at(RECV_BASE, b);
    let sblocks = Blocks::packed_at(SEND_BASE, b);
    let s_ = &mut s;
    match call.coll {
        Coll::Barrier => match name {
            "smp" => hier::barrier(&c, s_, l),
            _ => barrier::dissemination(&c, s_),
        },
        Coll::Bcast => {
            let data = Span::bytes(RECV_BASE, b);
            match name {
                "knomial" => bcast::knomial(&c, s_, &data, root, k),
                "scatter_allgather" => bcast::scatter_allgather(&c, s_, &data, root),
                "recursive_multiplying" => {
                    bcast::scatter_recursive_multiplying(&c, s_, &data, root, k)
                }
                "kring" => bcast::scatter_kring(&c, s_, &data, root, k),
                _ => hier::bcast(&c, s_, l, &data, root),
            }
        }
        Coll::Reduce => {
            let e = elems(b);
            match name {
                "smp" => hier::reduce(&c, s_, l, &e, SEND_BASE, RECV_BASE, root),
                _ => reduce::knomial(&c, s_, &e, SEND_BASE, RECV_BASE, root, k),
            }
        }
        Coll::Allreduce => {
            let e = elems(b);
            let (sb, rb) = (SEND_BASE, RECV_BASE);
            match name {
                "rabenseifner" => allreduce::rabenseifner(&c, s_, &e, sb, rb),
                "ring" => allreduce::ring(&c, s_, &e, sb, rb),
                "knomial" => {
                    reduce::knomial(&c, s_, &e, sb, rb, 0, k);
                    bcast::knomial(&c, s_, &e.span(rb), 0, k);
                }
                "recursive_multiplying" => allreduce::recursive_multiplying(&c, s_, &e, sb, rb, k),
                "kring" => allreduce::kring(&c, s_, &e, sb, rb, k),
                "smp" => hier::allreduce(&c, s_, l, &e, sb, rb),
                "multi_object_bruck" => multi_object::allreduce_bruck(&c, s_, l, &e, sb, rb),
                _ => allreduce::recursive_doubling(&c, s_, &e, sb, rb),
            }
        }
        Coll::Allgather => {
            let own = Some(&sd);
            let algo = match name {
                "recursive_doubling" => allgather::Algo::RecursiveDoubling,
                "bruck" => allgather::Algo::Bruck,
                "knomial" => allgather::Algo::Knomial(k),
                "recursive_multiplying" => allgather::Algo::RecursiveMultiplying(k),
                "kring" => allgather::Algo::Kring(k),
                _ => allgather::Algo::Ring,
            };
            match name {
                "smp" => hier::allgather(&c, s_, l, &rblocks, own),
                "multi_object_ring" => multi_object::allgather_ring(&c, s_, l, &rblocks, own),
                "multi_object_bruck" => multi_object::allgather_bruck(&c, s_, l, &rblocks, own),
                _ => allgather::run(&c, s_, algo, &rblocks, own),
            }
        }
        Coll::Gather => {
            let recv = is_root.then_some(&rblocks);
            match name {
                "smp" => hier::gather(&c, s_, l, Some(&sd), recv, b, root),
                "binomial" => gather::binomial(&c, s_, Some(&sd), recv, b, root),
                _ => {
                    let spans: Vec<Span> = match recv {
                        Some(r) => (0..p).map(|i| r.block(i)).collect(),
                        None => Vec::new(),
                    };
                    gather::linear(&c, s_, Some(&sd), &spans, root)
                }
            }
        }
        Coll::Scatter => {
            let send = is_root.then_some(&sblocks);
            let rd = Span::bytes(RECV_BASE, b);
            match name {
                "smp" => hier::scatter(&c, s_, l, send, Some(&rd), b, root),
                "multi_object_tree" => {
                    multi_object::scatter_tree(&c, s_, l, send, Some(&rd), b, root)
                }
                "binomial" => scatter::binomial(&c, s_, send, Some(&rd), b, root),
                _ => {
                    let spans: Vec<Span> = match send {
                        Some(x) => (0..p).map(|i| x.block(i)).collect(),
                        None => Vec::new(),
                    };
                    scatter::linear(&c, s_, &spans, Some(&rd), root)
                }
            }
        }
        Coll::Alltoall => match name {
            "bruck" => alltoall::bruck(&c, s_, &sblocks, &rblocks),
            _ => {
                let send: Vec<Span> = (0..p).map(|i| sblocks.block(i)).collect();
                let recv: Vec<Span> = (0..p).map(|i| rblocks.block(i)).collect();
                if name == "pairwise" {
                    alltoall::pairwise(&c, s_, &send, &recv)
                } else {
                    alltoall::scattered(&c, s_, &send, &recv)
                }
            }
        },
        _ => {}
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(coll: Coll, algo: &str, bytes: usize) -> Call {
        Call {
            coll,
            algo: Algorithm::parse(algo).unwrap(),
            bytes,
            root: 0,
        }
    }

    #[test]
    fn machines_number_ranks_node_by_node() {
        let m = Machine::from_sizes(&[2, 3]);
        assert_eq!(m.node_of, vec![0, 0, 1, 1, 1]);
        assert_eq!(m.nodes(), 2);
        assert_eq!(Machine::regular(3, 2).ranks(), 6);
    }

    #[test]
    fn algorithm_names_parse() {
        let a = Algorithm::parse("knomial:k=4").unwrap();
        assert_eq!((a.name.as_str(), a.k), ("knomial", 4));
        assert_eq!(a.to_string(), "knomial:k=4");
        assert!(Algorithm::parse("ring:x").is_err());
        assert!(Algorithm::parse("kring:k=z").is_err());
    }

    #[test]
    fn binomial_bcast_sends_p_minus_1_messages() {
        let m = Machine::regular(8, 1);
        let progs = programs(&call(Coll::Bcast, "knomial", 100), &m).unwrap();
        let sends: usize = progs
            .iter()
            .flat_map(|p| p.ops.iter())
            .filter(|o| o.kind == OpKind::Send)
            .count();
        assert_eq!(sends, 7);
        // The root sends in log2(8) = 3 rounds.
        assert_eq!(progs[0].rounds(), 3);
    }

    #[test]
    fn every_catalog_entry_builds_on_uneven_nodes() {
        let m = Machine::from_sizes(&[2, 3, 1]);
        for coll in [
            Coll::Barrier,
            Coll::Bcast,
            Coll::Reduce,
            Coll::Allreduce,
            Coll::Allgather,
            Coll::Gather,
            Coll::Scatter,
            Coll::Alltoall,
        ] {
            for name in catalog(coll) {
                let r = programs(&call(coll, name, 4096), &m);
                let expect_err = name.starts_with("multi_object_")
                    || (*name == "recursive_doubling" && coll == Coll::Allgather);
                assert_eq!(r.is_err(), expect_err, "{coll:?} {name}: {r:?}");
            }
        }
    }

    #[test]
    fn unknown_algorithms_and_roots_are_refused() {
        let m = Machine::regular(2, 2);
        assert!(programs(&call(Coll::Bcast, "nope", 8), &m).is_err());
        let mut c = call(Coll::Bcast, "knomial", 8);
        c.root = 4;
        assert!(programs(&c, &m).is_err());
        // Too few elements to split over the ranks.
        assert!(programs(&call(Coll::Allreduce, "ring", 8), &m).is_err());
    }
}
