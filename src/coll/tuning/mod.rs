//! Collective algorithm selection: a JSON table in MPICH's condition grammar, a user table
//! loaded from `HYMPI_COLL_TUNING_FILE`, and `HYMPI_<COLL>_ALGORITHM=name[:k=N]` overrides.
//!
//! A table is a JSON object keyed by `collective=<name>`; below that, nested objects whose
//! keys are conditions, evaluated top-down in file order, first match wins (a matching
//! condition whose subtree selects nothing lets the search go on with its next sibling). A
//! leaf is `"algorithm=<name>": {}`, with the algorithm's parameters as keys of that object
//! (`"algorithm=knomial": {"k=4": {}}`). Conditions (see `docs/collectives.md`):
//!
//! - `any` (also `<anything>=any`), `comm_type=intra` (always true here), `comm_type=inter`;
//! - `comm_size<N`, `comm_size<=N`, `comm_size=N`, `comm_size>=N`, `comm_size>N`,
//!   `comm_size=pow2` (also spelled `comm_size_pow2`);
//! - the same comparisons on `avg_msg_size`, `total_msg_size` and `count`, and on the
//!   communicator's node layout: `node_count` (nodes it spans) and `comm_avg_ppn` (ranks per
//!   node, average rounded down; MPICH's name);
//! - `is_commutative=yes|no`.
//!
//! Every input of a condition is the same on every rank of the call (the type signature's
//! size, never a rank's own layout), so every rank picks the same algorithm. Tables and
//! overrides are parsed once per process ([`OnceLock`]), on the first collective.

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use std::fmt;
use std::sync::OnceLock;

/// The collectives whose algorithm the tables choose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coll {
    /// `MPI_Bcast`.
    Bcast,
    /// `MPI_Reduce`.
    Reduce,
    /// `MPI_Allreduce`.
    Allreduce,
    /// `MPI_Allgather`.
    Allgather,
    /// `MPI_Alltoall`, `MPI_Alltoallv`, `MPI_Alltoallw`.
    Alltoall,
    /// `MPI_Gather`.
    Gather,
    /// `MPI_Scatter`.
    Scatter,
    /// `MPI_Barrier`.
    Barrier,
    /// `MPI_Reduce_scatter_block` and `MPI_Reduce_scatter`.
    ReduceScatter,
}

/// Every collective of [`Coll`], in declaration order (that of the knobs that force their
/// algorithms, `platform::config::COLL_ALGORITHM_KNOBS`).
pub const COLLS: [Coll; crate::platform::config::COLL_ALGORITHM_KNOBS.len()] = [
    Coll::Bcast,
    Coll::Reduce,
    Coll::Allreduce,
    Coll::Allgather,
    Coll::Alltoall,
    Coll::Gather,
    Coll::Scatter,
    Coll::Barrier,
    Coll::ReduceScatter,
];

/// Name of the shared-memory algorithm (`coll::shm`), offered by the collectives that have
/// it. The schedule builders never see it: [`select`] skips it, [`select_shm`] reports it.
pub const SHM: &str = "shm";

/// Name of the node-aware two-level algorithms (`coll::algos::hier`), as in MPICH: the
/// builders offer it first on communicators that span several nodes; the flat algorithms
/// that run its phases take their table's next choice for the phase's group.
pub const SMP: &str = "smp";

/// Name of the multi-object ring allgather (`coll::algos::hier`), PiP-MColl's: one ring per
/// local rank across the nodes, on layouts whose nodes hold the same number of ranks.
pub const MULTI_OBJECT_RING: &str = "multi_object_ring";

/// Name of PiP-MColl's small-message allgather and allreduce (`coll::algos::multi_object`):
/// Bruck with base P+1 between nodes of P ranks each, every rank of a node exchanging.
pub const MULTI_OBJECT_BRUCK: &str = "multi_object_bruck";

/// Name of PiP-MColl's scatter (`coll::algos::multi_object`): a (P+1)-ary tree over the
/// nodes, every rank of a node sending.
pub const MULTI_OBJECT_TREE: &str = "multi_object_tree";

/// The multi-object algorithms: on layouts whose nodes differ in size, `smp` runs instead.
pub const MULTI_OBJECT: [&str; 3] = [MULTI_OBJECT_RING, MULTI_OBJECT_BRUCK, MULTI_OBJECT_TREE];

/// The node-aware algorithms: only queries that describe several nodes get them.
pub const NODE_AWARE: [&str; 4] = [
    SMP,
    MULTI_OBJECT_RING,
    MULTI_OBJECT_BRUCK,
    MULTI_OBJECT_TREE,
];

/// An algorithm a table may name: its name and, when it takes a radix `k`, the smallest and
/// the default radix.
#[derive(Clone, Copy, Debug)]
pub struct AlgoSpec {
    /// Name in tables and overrides.
    pub name: &'static str,
    /// `(smallest k, default k)` for the algorithms with a radix.
    pub radix: Option<(u32, u32)>,
}

const fn plain(name: &'static str) -> AlgoSpec {
    AlgoSpec { name, radix: None }
}

const fn radix(name: &'static str, min: u32, default: u32) -> AlgoSpec {
    AlgoSpec {
        name,
        radix: Some((min, default)),
    }
}

impl Coll {
    /// The name in tables (`collective=<name>`), lower case.
    pub fn name(self) -> &'static str {
        crate::platform::config::COLL_ALGORITHM_KNOBS[self as usize].0
    }

    /// The environment variable that forces this collective's algorithm.
    pub fn env_var(self) -> &'static str {
        crate::platform::config::COLL_ALGORITHM_KNOBS[self as usize].1
    }

    /// The algorithms this collective has.
    pub fn algorithms(self) -> &'static [AlgoSpec] {
        const BCAST: &[AlgoSpec] = &[
            radix("knomial", 2, 2),
            plain("scatter_allgather"),
            radix("recursive_multiplying", 2, 2),
            radix("kring", 1, 1),
            plain(SHM),
            plain(SMP),
        ];
        const REDUCE: &[AlgoSpec] = &[radix("knomial", 2, 2), plain(SHM), plain(SMP)];
        const ALLREDUCE: &[AlgoSpec] = &[
            plain("recursive_doubling"),
            plain("rabenseifner"),
            plain("ring"),
            radix("knomial", 2, 2),
            radix("recursive_multiplying", 2, 2),
            radix("kring", 1, 1),
            plain(SHM),
            plain(SMP),
            plain(MULTI_OBJECT_BRUCK),
        ];
        const ALLGATHER: &[AlgoSpec] = &[
            plain("ring"),
            plain("recursive_doubling"),
            plain("bruck"),
            radix("knomial", 2, 2),
            radix("recursive_multiplying", 2, 2),
            radix("kring", 1, 1),
            plain(SHM),
            plain(SMP),
            plain(MULTI_OBJECT_RING),
            plain(MULTI_OBJECT_BRUCK),
        ];
        const ALLTOALL: &[AlgoSpec] = &[
            plain("pairwise"),
            plain("scattered"),
            plain("bruck"),
            plain(SHM),
        ];
        const GATHER: &[AlgoSpec] = &[plain("binomial"), plain("linear"), plain(SHM), plain(SMP)];
        const SCATTER: &[AlgoSpec] = &[
            plain("binomial"),
            plain("linear"),
            plain(SHM),
            plain(SMP),
            plain(MULTI_OBJECT_TREE),
        ];
        const BARRIER: &[AlgoSpec] = &[plain("dissemination"), plain(SHM), plain(SMP)];
        const REDUCE_SCATTER: &[AlgoSpec] = &[plain("ring"), plain(SHM)];
        match self {
            Coll::Bcast => BCAST,
            Coll::Reduce => REDUCE,
            Coll::Allreduce => ALLREDUCE,
            Coll::Allgather => ALLGATHER,
            Coll::Alltoall => ALLTOALL,
            Coll::Gather => GATHER,
            Coll::Scatter => SCATTER,
            Coll::Barrier => BARRIER,
            Coll::ReduceScatter => REDUCE_SCATTER,
        }
    }

    /// Other names accepted for an algorithm with a fixed radix: `(alias, name, k)`.
    fn aliases(self) -> &'static [(&'static str, &'static str, u32)] {
        match self {
            Coll::Bcast | Coll::Reduce => &[("binomial", "knomial", 2)],
            Coll::Allreduce => &[("reduce_bcast", "knomial", 2)],
            _ => &[],
        }
    }

    fn from_name(name: &str) -> Option<Coll> {
        COLLS.into_iter().find(|c| c.name() == name)
    }
}

/// A chosen algorithm: its name (one of [`Coll::algorithms`]) and radix (the default radix
/// when the table gives none; 0 for the algorithms without one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Choice {
    /// Algorithm name.
    pub name: &'static str,
    /// Radix.
    pub k: u32,
    /// Smallest radix (0: the algorithm has none).
    min_k: u32,
}

impl Choice {
    /// The same choice under another algorithm name (an algorithm that gives way to another
    /// where it does not apply, so the statistics count what ran).
    pub fn renamed(self, name: &'static str) -> Choice {
        Choice { name, ..self }
    }
}

/// What a condition may look at; the same on every rank of the call.
#[derive(Clone, Copy, Debug, Default)]
pub struct Query {
    /// Ranks in the communicator.
    pub comm_size: i32,
    /// Bytes one rank contributes or receives per peer (the vector of a reduction, a block
    /// of a gather or an alltoall, the whole buffer of a broadcast).
    pub avg_msg_size: usize,
    /// Bytes of the whole result (`avg_msg_size * comm_size` for the gathers and alltoall).
    pub total_msg_size: usize,
    /// Elements of a reduction; bytes for the other collectives (ranks may use different
    /// datatypes there, so only the byte count is the same everywhere).
    pub count: usize,
    /// Whether the reduction op commutes (true for the non-reductions).
    pub commutative: bool,
    /// Nodes the communicator spans (0: not known, taken as one node); see [`Query::on`].
    pub node_count: usize,
    /// Ranks per node, on average, rounded down (0: not known, taken as `comm_size`).
    pub comm_avg_ppn: usize,
    /// The node-aware offer's own query (`coll::algos::hier::offer`): only it may pick the
    /// node-aware algorithms ([`NODE_AWARE`]); the flat algorithms' queries pass them over.
    pub node_aware: bool,
}

/// Where a communicator's ranks sit, as the tables see it (`node_count`, `comm_avg_ppn`):
/// both 0 for a communicator on one node (or whose nodes are not known).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Shape {
    /// Nodes spanned (more than one), or 0.
    pub nodes: usize,
    /// Average ranks per node, rounded down, or 0.
    pub ppn: usize,
}

impl Shape {
    /// The shape of `ranks` ranks on `nodes` nodes (one node: the default shape).
    pub fn of(nodes: usize, ranks: usize) -> Shape {
        if nodes > 1 {
            Shape {
                nodes,
                ppn: ranks / nodes,
            }
        } else {
            Shape::default()
        }
    }
}

impl Query {
    /// A query for `bytes` per message on `p` ranks, the whole result being `total` bytes.
    pub fn new(p: i32, bytes: usize, total: usize) -> Query {
        Query {
            comm_size: p,
            avg_msg_size: bytes,
            total_msg_size: total,
            count: bytes,
            commutative: true,
            node_count: 0,
            comm_avg_ppn: 0,
            node_aware: false,
        }
    }

    /// This query on a communicator of shape `shape`, so that tables may choose by
    /// `node_count` and `comm_avg_ppn` (written by `hympi-tune` per layout).
    pub fn on(mut self, shape: Shape) -> Query {
        self.node_count = shape.nodes;
        self.comm_avg_ppn = shape.ppn;
        self
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cmp {
    Lt,
    Le,
    Eq,
    Ge,
    Gt,
}

impl Cmp {
    fn holds(self, a: u64, b: u64) -> bool {
        match self {
            Cmp::Lt => a < b,
            Cmp::Le => a <= b,
            Cmp::Eq => a == b,
            Cmp::Ge => a >= b,
            Cmp::Gt => a > b,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Var {
    CommSize,
    AvgMsgSize,
    TotalMsgSize,
    Count,
    NodeCount,
    AvgPpn,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cond {
    Always(bool),
    Compare(Var, Cmp, u64),
    CommSizePow2,
    Commutative(bool),
}

impl Cond {
    fn parse(key: &str) -> Result<Cond, String> {
        let key = key.trim();
        if key == "any" || key.ends_with("=any") {
            return Ok(Cond::Always(true));
        }
        match key {
            "comm_type=intra" => return Ok(Cond::Always(true)),
            "comm_type=inter" => return Ok(Cond::Always(false)),
            "comm_size=pow2" | "comm_size_pow2" => return Ok(Cond::CommSizePow2),
            "is_commutative=yes" => return Ok(Cond::Commutative(true)),
            "is_commutative=no" => return Ok(Cond::Commutative(false)),
            _ => {}
        }
        let at = key
            .find(['<', '>', '='])
            .ok_or_else(|| format!("unknown condition \"{key}\""))?;
        let (var, rest) = key.split_at(at);
        let var = match var {
            "comm_size" => Var::CommSize,
            "avg_msg_size" => Var::AvgMsgSize,
            "total_msg_size" => Var::TotalMsgSize,
            "count" => Var::Count,
            "node_count" => Var::NodeCount,
            "comm_avg_ppn" => Var::AvgPpn,
            _ => return Err(format!("unknown condition \"{key}\"")),
        };
        let (cmp, num) = if let Some(n) = rest.strip_prefix("<=") {
            (Cmp::Le, n)
        } else if let Some(n) = rest.strip_prefix(">=") {
            (Cmp::Ge, n)
        } else if let Some(n) = rest.strip_prefix('<') {
            (Cmp::Lt, n)
        } else if let Some(n) = rest.strip_prefix('>') {
            (Cmp::Gt, n)
        } else {
            (Cmp::Eq, &rest[1..])
        };
        let n = num
            .trim()
            .parse::<u64>()
            .map_err(|_| format!("condition \"{key}\": \"{num}\" is not a number"))?;
        Ok(Cond::Compare(var, cmp, n))
    }

    fn holds(self, q: &Query) -> bool {
        match self {
            Cond::Always(b) => b,
            Cond::CommSizePow2 => q.comm_size > 0 && q.comm_size & (q.comm_size - 1) == 0,
            Cond::Commutative(b) => q.commutative == b,
            Cond::Compare(v, cmp, n) => {
                let a = match v {
                    Var::CommSize => q.comm_size.max(0) as u64,
                    Var::AvgMsgSize => q.avg_msg_size as u64,
                    Var::TotalMsgSize => q.total_msg_size as u64,
                    Var::Count => q.count as u64,
                    Var::NodeCount => q.node_count.max(1) as u64,
                    Var::AvgPpn if q.comm_avg_ppn == 0 => q.comm_size.max(0) as u64,
                    Var::AvgPpn => q.comm_avg_ppn as u64,
                };
                cmp.holds(a, n)
            }
        }
    }
}

/// A JSON object with its keys in file order (the values are objects too).
#[derive(Debug, Default)]
struct Obj(Vec<(String, Obj)>);

impl<'de> Deserialize<'de> for Obj {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Obj, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Obj;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object (every value in a tuning table is an object)")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Obj, A::Error> {
                let mut v = Vec::new();
                while let Some(e) = m.next_entry::<String, Obj>()? {
                    v.push(e);
                }
                Ok(Obj(v))
            }
        }
        d.deserialize_map(V)
    }
}

#[derive(Debug)]
enum Node {
    Algo(Choice),
    If(Cond, Vec<Node>),
}

/// First leaf whose conditions hold, skipping leaves named in `skip`.
fn select_in(nodes: &[Node], q: &Query, skip: &[&str]) -> Option<Choice> {
    for n in nodes {
        match n {
            Node::Algo(c) if skip.contains(&c.name) => {}
            Node::Algo(c) => return Some(*c),
            Node::If(cond, kids) if cond.holds(q) => {
                if let Some(c) = select_in(kids, q, skip) {
                    return Some(c);
                }
            }
            Node::If(..) => {}
        }
    }
    None
}

/// Resolves `name` with the parameters `params` (`("k", "4")`, ...) for `coll`.
fn choice(coll: Coll, name: &str, params: &[(&str, &str)]) -> Result<Choice, String> {
    let known = || {
        let mut v: Vec<&str> = coll.algorithms().iter().map(|a| a.name).collect();
        v.extend(coll.aliases().iter().map(|a| a.0));
        v.join(", ")
    };
    let (spec, fixed) = if let Some(&(_, canon, k)) = coll.aliases().iter().find(|a| a.0 == name) {
        let spec = coll.algorithms().iter().find(|a| a.name == canon);
        (spec.copied(), Some(k))
    } else {
        (
            coll.algorithms().iter().find(|a| a.name == name).copied(),
            None,
        )
    };
    let spec = spec.ok_or_else(|| {
        format!(
            "unknown algorithm \"{name}\" for {} (known: {})",
            coll.name(),
            known()
        )
    })?;
    let mut k = spec.radix.map_or(0, |r| r.1);
    if let Some(f) = fixed {
        k = f;
    }
    for &(key, val) in params {
        match (key, spec.radix, fixed) {
            ("k", Some((min, _)), None) => {
                k = val
                    .trim()
                    .parse::<u32>()
                    .ok()
                    .filter(|&v| v >= min)
                    .ok_or_else(|| {
                        format!(
                            "{}: k must be an integer >= {min}, not \"{val}\"",
                            spec.name
                        )
                    })?;
            }
            _ => return Err(format!("{name} takes no parameter \"{key}\"")),
        }
    }
    Ok(Choice {
        name: spec.name,
        k,
        min_k: spec.radix.map_or(0, |r| r.0),
    })
}

fn parse_nodes(coll: Coll, obj: &Obj, path: &str) -> Result<Vec<Node>, String> {
    let mut out = Vec::with_capacity(obj.0.len());
    for (key, val) in &obj.0 {
        let here = format!("{path} > {key}");
        if let Some(name) = key.strip_prefix("algorithm=") {
            let mut params = Vec::new();
            for (p, sub) in &val.0 {
                if !sub.0.is_empty() {
                    return Err(format!("{here} > {p}: a parameter's object must be empty"));
                }
                let (a, b) = p
                    .split_once('=')
                    .ok_or_else(|| format!("{here}: parameter \"{p}\" is not name=value"))?;
                params.push((a.trim(), b));
            }
            let c = choice(coll, name.trim(), &params).map_err(|e| format!("{here}: {e}"))?;
            out.push(Node::Algo(c));
        } else {
            let cond = Cond::parse(key).map_err(|e| format!("{path}: {e}"))?;
            out.push(Node::If(cond, parse_nodes(coll, val, &here)?));
        }
    }
    Ok(out)
}

/// A parsed selection table.
#[derive(Debug, Default)]
pub struct Table {
    rules: Vec<(Coll, Vec<Node>)>,
}

impl Table {
    /// Parses a table from JSON text; the error names the offending key's path.
    pub fn parse(text: &str) -> Result<Table, String> {
        let top: Obj = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let mut rules = Vec::new();
        for (key, val) in &top.0 {
            let coll = key
                .strip_prefix("collective=")
                .ok_or_else(|| format!("top-level key \"{key}\" is not collective=<name>"))
                .and_then(|n| {
                    Coll::from_name(n.trim()).ok_or_else(|| {
                        let known: Vec<&str> = COLLS.iter().map(|c| c.name()).collect();
                        format!("unknown collective \"{n}\" (known: {})", known.join(", "))
                    })
                })?;
            rules.push((coll, parse_nodes(coll, val, key)?));
        }
        Ok(Table { rules })
    }

    /// Whether the table has rules for `coll`.
    pub fn has(&self, coll: Coll) -> bool {
        self.rules.iter().any(|r| r.0 == coll)
    }

    /// The algorithm this table picks for `coll` and `q` (None when no rule matches).
    pub fn select(&self, coll: Coll, q: &Query) -> Option<Choice> {
        self.select_skipping(coll, q, &[])
    }

    /// As [`Table::select`], passing over the leaves that name an algorithm in `skip`.
    pub fn select_skipping(&self, coll: Coll, q: &Query, skip: &[&str]) -> Option<Choice> {
        self.rules
            .iter()
            .filter(|r| r.0 == coll)
            .find_map(|r| select_in(&r.1, q, skip))
    }
}

/// The built-in table (`src/coll/tuning/default.json`).
pub const DEFAULT_TABLE: &str = include_str!("default.json");

/// Parses an override value `name[:k=N]` for `coll`; `None` for an empty value or `auto`.
pub fn parse_forced(coll: Coll, value: &str) -> Result<Option<Choice>, String> {
    let v = value.trim();
    if v.is_empty() || v == "auto" {
        return Ok(None);
    }
    let (name, rest) = v.split_once(':').unwrap_or((v, ""));
    let mut params = Vec::new();
    for p in rest.split([':', ',']).filter(|p| !p.trim().is_empty()) {
        let (a, b) = p
            .split_once('=')
            .ok_or_else(|| format!("parameter \"{p}\" is not name=value"))?;
        params.push((a.trim(), b));
    }
    choice(coll, name.trim(), &params).map(Some)
}

struct Tuning {
    default: Table,
    user: Option<Table>,
    forced: [Option<Choice>; COLLS.len()],
}

fn warn(msg: &str) {
    eprintln!("hympi: warning: {msg}");
}

fn load() -> Tuning {
    let default = Table::parse(DEFAULT_TABLE).expect("the built-in tuning table parses");
    let path = crate::platform::config::text(crate::platform::config::Knob::CollTuningFile);
    let user = match path {
        path if !path.is_empty() => {
            match std::fs::read_to_string(&path)
                .map_err(|e| e.to_string())
                .and_then(|t| Table::parse(&t))
            {
                Ok(t) => Some(t),
                Err(e) => {
                    warn(&format!(
                        "HYMPI_COLL_TUNING_FILE={path}: {e}; using the built-in table"
                    ));
                    None
                }
            }
        }
        _ => None,
    };
    let forced = COLLS.map(|c| {
        let v = std::env::var(c.env_var()).ok()?;
        parse_forced(c, &v).unwrap_or_else(|e| {
            warn(&format!("{}={v}: {e}; using the tuning table", c.env_var()));
            None
        })
    });
    Tuning {
        default,
        user,
        forced,
    }
}

fn tuning() -> &'static Tuning {
    static T: OnceLock<Tuning> = OnceLock::new();
    T.get_or_init(load)
}

/// The message-schedule algorithm for `coll` and `q`: the `HYMPI_<COLL>_ALGORITHM` override
/// if set, else the user table's rules for `coll` if it has some that match, else the
/// built-in table's. The shared-memory algorithm ([`SHM`]) is passed over (the schedule
/// builders run where it does not apply: nonblocking calls, communicators without a slot),
/// so its rules fall through to the next matching ones. The caller still checks that the
/// algorithm applies (operand order, layout) and falls back.
///
/// The node-aware algorithms ([`NODE_AWARE`]) are passed over likewise unless `q` is the
/// node-aware offer's (`node_aware`) and describes several nodes (`node_count`).
///
/// A radix above the communicator size acts as the size (a flat tree, one group, one round)
/// and is clamped to it, so the algorithms' rank arithmetic cannot overflow.
pub fn select(coll: Coll, q: &Query) -> Choice {
    let c = select_unrecorded(coll, q);
    record(coll, c);
    c
}

/// Counts choice `c` for `coll` in the statistics (`HYMPI_STATS`).
pub fn record(coll: Coll, c: Choice) {
    if crate::core::diag::stats_on() {
        crate::core::diag::stats::coll_choice(coll.name(), c.name, c.k);
    }
}

/// As [`select`], without counting the choice in the statistics (for an offer that may
/// decline it).
pub fn select_unrecorded(coll: Coll, q: &Query) -> Choice {
    let t = tuning();
    // The node-aware algorithms only where the query describes several nodes (their own
    // offer); the flat algorithms that run their phases get the next choice.
    let skip: &[&str] = if q.node_aware && q.node_count > 1 {
        &[SHM]
    } else {
        &[
            SHM,
            SMP,
            MULTI_OBJECT_RING,
            MULTI_OBJECT_BRUCK,
            MULTI_OBJECT_TREE,
        ]
    };
    let mut c = t.forced[coll as usize]
        .filter(|f| !skip.contains(&f.name))
        .or_else(|| {
            t.user
                .as_ref()
                .and_then(|u| u.select_skipping(coll, q, skip))
        })
        .or_else(|| t.default.select_skipping(coll, q, skip))
        .unwrap_or_else(|| {
            let a = &coll.algorithms()[0];
            Choice {
                name: a.name,
                k: a.radix.map_or(0, |r| r.1),
                min_k: a.radix.map_or(0, |r| r.0),
            }
        });
    if c.min_k > 0 {
        c.k = c.k.min(q.comm_size.max(0) as u32).max(c.min_k);
    }
    c
}

/// Whether the tables (with the override first, as in [`select`]) pick the shared-memory
/// algorithm for `coll` and `q`.
pub fn select_shm(coll: Coll, q: &Query) -> bool {
    let t = tuning();
    let c = t.forced[coll as usize]
        .or_else(|| t.user.as_ref().and_then(|u| u.select(coll, q)))
        .or_else(|| t.default.select(coll, q));
    c.is_some_and(|c| c.name == SHM)
}

#[cfg(test)]
mod tests;
