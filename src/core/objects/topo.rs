//! Process topologies: the data a communicator carries about its virtual topology and the
//! arithmetic on it (`MPI_Dims_create`, Cartesian coordinates and shifts, graph neighbours).
//! Pure computation: creating the communicators that carry a topology is done elsewhere on
//! top of these functions ([`Topology::cart`], [`Cart::sub`], [`Topology::graph`],
//! [`Topology::dist_graph`]).

use crate::core::error::{fail, MpiResult};
use crate::mpi_abi::consts::*;

/// A communicator's virtual topology (`MPI_Topo_test` tells which).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Topology {
    /// A Cartesian grid (`MPI_CART`).
    Cart(Cart),
    /// A general graph, known to every process (`MPI_GRAPH`).
    Graph(Graph),
    /// A distributed graph: each process knows its own edges (`MPI_DIST_GRAPH`).
    DistGraph(DistGraph),
}

/// A Cartesian grid; ranks are numbered in row-major order (the last dimension varies
/// fastest).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cart {
    /// Extent of each dimension (all positive).
    pub dims: Vec<i32>,
    /// Whether each dimension wraps around.
    pub periods: Vec<bool>,
}

/// A general graph over ranks `0..index.len()` in `MPI_Graph_create`'s encoding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Graph {
    /// `index[i]`: total number of neighbours of nodes `0..=i`.
    pub index: Vec<i32>,
    /// Neighbour lists of all nodes, concatenated.
    pub edges: Vec<i32>,
}

/// The local part of a distributed graph: this process's in- and out-edges.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DistGraph {
    /// Ranks with an edge to this process.
    pub sources: Vec<i32>,
    /// Weights of those edges (empty when unweighted).
    pub sourceweights: Vec<i32>,
    /// Ranks this process has an edge to.
    pub destinations: Vec<i32>,
    /// Weights of those edges (empty when unweighted).
    pub destweights: Vec<i32>,
    /// Whether weights were given (`MPI_UNWEIGHTED` was not passed).
    pub weighted: bool,
}

/// The `MPI_Topo_test` value of an optional topology.
pub fn topo_kind(t: Option<&Topology>) -> i32 {
    match t {
        None => MPI_UNDEFINED,
        Some(Topology::Cart(_)) => MPI_CART,
        Some(Topology::Graph(_)) => MPI_GRAPH,
        Some(Topology::DistGraph(_)) => MPI_DIST_GRAPH,
    }
}

/// Product of the extents (`MPI_ERR_DIMS` when an extent is not positive or the product
/// overflows an `int`).
fn grid_size(dims: &[i32]) -> MpiResult<i32> {
    let mut n: i32 = 1;
    for (i, &d) in dims.iter().enumerate() {
        if d <= 0 {
            return fail(
                MPI_ERR_DIMS,
                format!("dims[{i}] = {d}: every dimension must be positive"),
            );
        }
        n = match n.checked_mul(d) {
            Some(v) => v,
            None => {
                return fail(
                    MPI_ERR_DIMS,
                    "the product of the dimensions does not fit an int",
                )
            }
        };
    }
    Ok(n)
}

/// Prime factors of `n` in increasing order.
fn prime_factors(mut n: i32) -> Vec<i32> {
    let mut f = Vec::new();
    let mut p = 2;
    while p * p <= n {
        while n % p == 0 {
            f.push(p);
            n /= p;
        }
        p += 1;
    }
    if n > 1 {
        f.push(n);
    }
    f
}

/// Splits `n` into `k` factors, as equal as possible, in non-increasing order.
///
/// Searches all non-increasing factorizations (bounded) for the one with the smallest spread
/// (largest minus smallest factor), ties broken by the smaller largest factor; falls back to
/// the greedy assignment (largest prime factor to the currently smallest part) when the
/// search would be too long.
fn balanced_factors(n: i32, k: usize) -> Vec<i32> {
    if k == 0 {
        return Vec::new();
    }
    let mut divisors: Vec<i32> = (1..)
        .take_while(|d: &i32| (*d as i64) * (*d as i64) <= n as i64)
        .filter(|d| n % d == 0)
        .flat_map(|d| [d, n / d])
        .collect();
    divisors.sort_unstable_by(|a, b| b.cmp(a));
    divisors.dedup();

    struct Search<'a> {
        divisors: &'a [i32],
        best: Option<(i32, i32, Vec<i32>)>,
        cur: Vec<i32>,
        budget: u32,
    }
    impl Search<'_> {
        // Choose the next factor `d <= max` of `rest`, with `left` factors still to choose.
        fn go(&mut self, rest: i32, left: usize, max: i32) {
            if self.budget == 0 {
                return;
            }
            self.budget -= 1;
            if left == 1 {
                if rest <= max {
                    self.cur.push(rest);
                    let (hi, lo) = (self.cur[0], rest);
                    let better = match &self.best {
                        None => true,
                        Some((s, h, _)) => (hi - lo, hi) < (*s, *h),
                    };
                    if better {
                        self.best = Some((hi - lo, hi, self.cur.clone()));
                    }
                    self.cur.pop();
                }
                return;
            }
            for i in 0..self.divisors.len() {
                let d = self.divisors[i];
                if d > max || rest % d != 0 {
                    continue;
                }
                // The remaining factors are all <= d, so d^left must reach `rest`.
                if (d as f64).powi(left as i32) < rest as f64 * (1.0 - 1e-9) {
                    break;
                }
                // The smallest factor will be at most d and at most the geometric mean of
                // what is left, which bounds the spread from below.
                if let Some((s, _, _)) = &self.best {
                    let hi = self.cur.first().copied().unwrap_or(d);
                    let mean = ((rest as f64).powf(1.0 / left as f64) + 1e-9).floor() as i32;
                    if hi - d.min(mean) > *s {
                        if self.cur.is_empty() {
                            continue;
                        }
                        break;
                    }
                }
                self.cur.push(d);
                self.go(rest / d, left - 1, d);
                self.cur.pop();
            }
        }
    }
    let mut s = Search {
        divisors: &divisors,
        best: None,
        cur: Vec::with_capacity(k),
        budget: 200_000,
    };
    s.go(n, k, n);
    if let (Some((_, _, v)), true) = (&s.best, s.budget > 0) {
        return v.clone();
    }
    // Greedy fallback.
    let mut parts = vec![1i32; k];
    for p in prime_factors(n).into_iter().rev() {
        let smallest = (0..k).min_by_key(|&i| parts[i]).unwrap();
        parts[smallest] *= p;
    }
    parts.sort_unstable_by(|a, b| b.cmp(a));
    parts
}

/// `MPI_Dims_create`: fills the zero entries of `dims` so that the product of all entries is
/// `nnodes`, the filled entries being as close to each other as possible and in
/// non-increasing order; non-zero entries are kept. `MPI_ERR_ARG` for `nnodes < 1`,
/// `MPI_ERR_DIMS` for a negative entry or when the fixed entries do not divide `nnodes`.
pub fn dims_create(nnodes: i32, dims: &mut [i32]) -> MpiResult<()> {
    if nnodes < 1 {
        return fail(
            MPI_ERR_ARG,
            format!("nnodes = {nnodes}: the number of nodes must be positive"),
        );
    }
    if dims.is_empty() {
        // Nothing to fill (MPICH accepts any nnodes here too).
        return Ok(());
    }
    let mut fixed: i64 = 1;
    let mut free = 0;
    for (i, &d) in dims.iter().enumerate() {
        if d < 0 {
            return fail(
                MPI_ERR_DIMS,
                format!("dims[{i}] = {d}: entries must be 0 (free) or positive"),
            );
        }
        if d == 0 {
            free += 1;
        } else {
            fixed = fixed.saturating_mul(d as i64);
        }
    }
    if nnodes as i64 % fixed != 0 || (free == 0 && fixed != nnodes as i64) {
        return fail(
            MPI_ERR_DIMS,
            format!(
                "the fixed dimensions (product {fixed}) do not divide nnodes = {nnodes} into the free ones"
            ),
        );
    }
    let parts = balanced_factors((nnodes as i64 / fixed) as i32, free);
    for (d, p) in dims.iter_mut().filter(|d| **d == 0).zip(parts) {
        *d = p;
    }
    Ok(())
}

/// `MPI_Cart_map`: the rank of the calling process in a grid of `dims` built from a
/// communicator of `size` processes (this implementation does not reorder: ranks below the
/// grid size keep their rank, the others get `MPI_UNDEFINED`; an extent of 0 leaves every
/// process out). `MPI_ERR_DIMS` when an extent is negative or the grid is larger than the
/// communicator.
pub fn cart_map(size: i32, rank: i32, dims: &[i32]) -> MpiResult<i32> {
    // An extent of 0 makes an empty grid in which no process has a place (MPICH accepts it
    // too; rsmpi's cartesian_map example asks for one below 4 processes).
    let n = match dims.iter().position(|&d| d == 0) {
        Some(_) if dims.iter().all(|&d| d >= 0) => 0,
        _ => grid_size(dims)?,
    };
    if n > size {
        return fail(
            MPI_ERR_DIMS,
            format!("the grid has {n} processes but the communicator only {size}"),
        );
    }
    Ok(if rank < n { rank } else { MPI_UNDEFINED })
}

/// `MPI_Graph_map`: like [`cart_map`] for a graph of `nnodes` nodes (`MPI_ERR_ARG` when it has
/// more nodes than the communicator).
pub fn graph_map(size: i32, rank: i32, nnodes: i32) -> MpiResult<i32> {
    if nnodes < 1 || nnodes > size {
        return fail(
            MPI_ERR_ARG,
            format!("nnodes = {nnodes}: must be between 1 and the communicator size {size}"),
        );
    }
    Ok(if rank < nnodes { rank } else { MPI_UNDEFINED })
}

impl Cart {
    /// A grid; `MPI_ERR_DIMS` when an extent is not positive or the product overflows,
    /// `MPI_ERR_ARG` when `periods` has another length than `dims`.
    pub fn new(dims: &[i32], periods: &[bool]) -> MpiResult<Cart> {
        if dims.len() != periods.len() {
            return fail(MPI_ERR_ARG, "dims and periods differ in length");
        }
        grid_size(dims)?;
        Ok(Cart {
            dims: dims.to_vec(),
            periods: periods.to_vec(),
        })
    }

    /// Number of dimensions.
    pub fn ndims(&self) -> usize {
        self.dims.len()
    }

    /// Number of processes in the grid.
    pub fn size(&self) -> i32 {
        self.dims.iter().product()
    }

    /// Coordinates of `rank` (which must be in `0..size()`), written to `out`
    /// (`ndims()` entries).
    pub fn coords_into(&self, rank: i32, out: &mut [i32]) {
        let mut r = rank;
        for i in (0..self.dims.len()).rev() {
            out[i] = r % self.dims[i];
            r /= self.dims[i];
        }
    }

    /// Coordinates of `rank`; `MPI_ERR_RANK` when it is not in the grid.
    pub fn coords(&self, rank: i32) -> MpiResult<Vec<i32>> {
        if rank < 0 || rank >= self.size() {
            return fail(
                MPI_ERR_RANK,
                format!(
                    "rank {rank} is not in the grid of {} processes",
                    self.size()
                ),
            );
        }
        let mut c = vec![0; self.dims.len()];
        self.coords_into(rank, &mut c);
        Ok(c)
    }

    /// Rank at `coords` (`ndims()` entries). Periodic dimensions wrap; a coordinate outside a
    /// non-periodic dimension gives `MPI_ERR_ARG` (`MPI_ERR_ARG` too for a wrong length).
    pub fn rank(&self, coords: &[i32]) -> MpiResult<i32> {
        if coords.len() != self.dims.len() {
            return fail(MPI_ERR_ARG, "wrong number of coordinates");
        }
        let mut r: i64 = 0;
        for (i, (&c, &d)) in coords.iter().zip(&self.dims).enumerate() {
            let c = if self.periods[i] {
                c.rem_euclid(d)
            } else if c < 0 || c >= d {
                return fail(
                    MPI_ERR_ARG,
                    format!(
                        "coords[{i}] = {c} is outside the non-periodic dimension of extent {d}"
                    ),
                );
            } else {
                c
            };
            r = r * d as i64 + c as i64;
        }
        Ok(r as i32)
    }

    /// `MPI_Cart_shift` for the process at `rank`: (source, destination) of a shift by `disp`
    /// along `direction`; `MPI_PROC_NULL` off the edge of a non-periodic dimension.
    /// `MPI_ERR_TOPOLOGY` for a zero-dimensional grid, `MPI_ERR_ARG` for a direction out of
    /// range (MPICH's classes).
    pub fn shift(&self, rank: i32, direction: i32, disp: i32) -> MpiResult<(i32, i32)> {
        if self.dims.is_empty() {
            return fail(
                MPI_ERR_TOPOLOGY,
                "MPI_Cart_shift on a zero-dimensional Cartesian topology",
            );
        }
        if direction < 0 || direction as usize >= self.dims.len() {
            return fail(
                MPI_ERR_ARG,
                format!(
                    "direction {direction} is not a dimension of the grid (0..{})",
                    self.dims.len()
                ),
            );
        }
        if disp == 0 {
            return Ok((rank, rank));
        }
        let dir = direction as usize;
        let mut c = self.coords(rank)?;
        let d = self.dims[dir] as i64;
        let here = c[dir] as i64;
        let at = |pos: i64, c: &mut Vec<i32>| -> i32 {
            let pos = if self.periods[dir] {
                pos.rem_euclid(d)
            } else if pos < 0 || pos >= d {
                return MPI_PROC_NULL;
            } else {
                pos
            };
            c[dir] = pos as i32;
            self.rank(c).unwrap_or(MPI_PROC_NULL)
        };
        let dest = at(here + disp as i64, &mut c);
        let source = at(here - disp as i64, &mut c);
        Ok((source, dest))
    }

    /// `MPI_Cart_sub` for the process at `rank`: `(color, key, subgrid)` where processes with
    /// the same color form one subgrid and `key` is the rank in it. `remain[i]` keeps
    /// dimension `i`; keeping none gives a zero-dimensional grid of one process.
    pub fn sub(&self, rank: i32, remain: &[bool]) -> MpiResult<(i32, i32, Cart)> {
        if remain.len() != self.dims.len() {
            return fail(MPI_ERR_ARG, "remain_dims has the wrong length");
        }
        let c = self.coords(rank)?;
        let (mut color, mut key) = (0i32, 0i32);
        let mut sub = Cart {
            dims: Vec::new(),
            periods: Vec::new(),
        };
        for i in 0..self.dims.len() {
            if remain[i] {
                key = key * self.dims[i] + c[i];
                sub.dims.push(self.dims[i]);
                sub.periods.push(self.periods[i]);
            } else {
                color = color * self.dims[i] + c[i];
            }
        }
        Ok((color, key, sub))
    }

    /// Neighbours in `MPI_Neighbor_*` order: for each dimension, the process at -1 then the one
    /// at +1 (`MPI_PROC_NULL` off a non-periodic edge). The same list serves as sources and
    /// destinations.
    pub fn neighbors(&self, rank: i32) -> MpiResult<Vec<i32>> {
        let mut out = Vec::with_capacity(2 * self.dims.len());
        for d in 0..self.dims.len() {
            let (minus, plus) = self.shift(rank, d as i32, 1)?;
            out.push(minus);
            out.push(plus);
        }
        Ok(out)
    }
}

impl Graph {
    /// A graph of `index.len()` nodes; checks that `index` does not decrease and ends at
    /// `edges.len()` (`MPI_ERR_ARG`) and that every edge names a node (`MPI_ERR_RANK`).
    pub fn new(index: &[i32], edges: &[i32]) -> MpiResult<Graph> {
        let mut prev = 0;
        for (i, &x) in index.iter().enumerate() {
            if x < prev {
                return fail(
                    MPI_ERR_ARG,
                    format!(
                        "index[{i}] = {x} is smaller than the previous entry {prev} (index is cumulative)"
                    ),
                );
            }
            prev = x;
        }
        if prev as usize != edges.len() {
            return fail(
                MPI_ERR_ARG,
                format!("index ends at {prev} but {} edges were given", edges.len()),
            );
        }
        let n = index.len() as i32;
        for (i, &e) in edges.iter().enumerate() {
            if e < 0 || e >= n {
                return fail(
                    MPI_ERR_RANK,
                    format!("edges[{i}] = {e} is not a node of the graph (0..{n})"),
                );
            }
        }
        Ok(Graph {
            index: index.to_vec(),
            edges: edges.to_vec(),
        })
    }

    /// Number of nodes.
    pub fn nnodes(&self) -> i32 {
        self.index.len() as i32
    }

    /// Neighbours of `rank`; `MPI_ERR_RANK` when it is not a node.
    pub fn neighbors(&self, rank: i32) -> MpiResult<&[i32]> {
        if rank < 0 || rank >= self.nnodes() {
            return fail(
                MPI_ERR_RANK,
                format!(
                    "rank {rank} is not a node of the graph (0..{})",
                    self.nnodes()
                ),
            );
        }
        let r = rank as usize;
        let lo = if r == 0 {
            0
        } else {
            self.index[r - 1] as usize
        };
        Ok(&self.edges[lo..self.index[r] as usize])
    }
}

impl DistGraph {
    /// This process's part of a distributed graph over a communicator of `size` processes.
    /// Weights are `None` for `MPI_UNWEIGHTED`; `MPI_ERR_RANK` for a neighbour out of range,
    /// `MPI_ERR_ARG` for a negative weight or weight lists of the wrong length.
    pub fn new(
        size: i32,
        sources: &[i32],
        sourceweights: Option<&[i32]>,
        destinations: &[i32],
        destweights: Option<&[i32]>,
    ) -> MpiResult<DistGraph> {
        for (what, list) in [("sources", sources), ("destinations", destinations)] {
            for (i, &r) in list.iter().enumerate() {
                if r < 0 || r >= size {
                    return fail(
                        MPI_ERR_RANK,
                        format!(
                            "{what}[{i}] = {r} is not a rank of the communicator (size {size})"
                        ),
                    );
                }
            }
        }
        let weighted = sourceweights.is_some() || destweights.is_some();
        let take = |w: Option<&[i32]>, n: usize, what: &str| -> MpiResult<Vec<i32>> {
            match w {
                None if weighted => Ok(vec![1; n]),
                None => Ok(Vec::new()),
                Some(w) if w.len() != n => fail(
                    MPI_ERR_ARG,
                    format!("{what} has {} entries for {n} edges", w.len()),
                ),
                Some(w) => match w.iter().position(|&x| x < 0) {
                    Some(i) => fail(
                        MPI_ERR_ARG,
                        format!("{what}[{i}] = {}: weights must be non-negative", w[i]),
                    ),
                    None => Ok(w.to_vec()),
                },
            }
        };
        Ok(DistGraph {
            sourceweights: take(sourceweights, sources.len(), "sourceweights")?,
            destweights: take(destweights, destinations.len(), "destweights")?,
            sources: sources.to_vec(),
            destinations: destinations.to_vec(),
            weighted,
        })
    }
}

impl Topology {
    /// A Cartesian topology (see [`Cart::new`]).
    pub fn cart(dims: &[i32], periods: &[bool]) -> MpiResult<Topology> {
        Cart::new(dims, periods).map(Topology::Cart)
    }

    /// A graph topology (see [`Graph::new`]).
    pub fn graph(index: &[i32], edges: &[i32]) -> MpiResult<Topology> {
        Graph::new(index, edges).map(Topology::Graph)
    }

    /// A distributed graph topology (see [`DistGraph::new`]).
    pub fn dist_graph(
        size: i32,
        sources: &[i32],
        sourceweights: Option<&[i32]>,
        destinations: &[i32],
        destweights: Option<&[i32]>,
    ) -> MpiResult<Topology> {
        DistGraph::new(size, sources, sourceweights, destinations, destweights)
            .map(Topology::DistGraph)
    }

    /// The grid, or `MPI_ERR_TOPOLOGY` naming `function`.
    pub fn as_cart<'a>(t: Option<&'a Topology>, function: &str) -> MpiResult<&'a Cart> {
        match t {
            Some(Topology::Cart(c)) => Ok(c),
            _ => fail(
                MPI_ERR_TOPOLOGY,
                format!("{function} needs a communicator with a Cartesian topology"),
            ),
        }
    }

    /// The graph, or `MPI_ERR_TOPOLOGY` naming `function`.
    pub fn as_graph<'a>(t: Option<&'a Topology>, function: &str) -> MpiResult<&'a Graph> {
        match t {
            Some(Topology::Graph(g)) => Ok(g),
            _ => fail(
                MPI_ERR_TOPOLOGY,
                format!("{function} needs a communicator with a graph topology"),
            ),
        }
    }

    /// The distributed graph, or `MPI_ERR_TOPOLOGY` naming `function`.
    pub fn as_dist_graph<'a>(t: Option<&'a Topology>, function: &str) -> MpiResult<&'a DistGraph> {
        match t {
            Some(Topology::DistGraph(g)) => Ok(g),
            _ => fail(
                MPI_ERR_TOPOLOGY,
                format!("{function} needs a communicator with a distributed graph topology"),
            ),
        }
    }

    /// (sources, destinations) of the process at `rank` in the order neighbourhood
    /// collectives use (MPI-4.1 section 8.6).
    pub fn neighbor_lists(&self, rank: i32) -> MpiResult<(Vec<i32>, Vec<i32>)> {
        match self {
            Topology::Cart(c) => {
                let n = c.neighbors(rank)?;
                Ok((n.clone(), n))
            }
            Topology::Graph(g) => {
                let n = g.neighbors(rank)?.to_vec();
                Ok((n.clone(), n))
            }
            Topology::DistGraph(d) => Ok((d.sources.clone(), d.destinations.clone())),
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn dc(nnodes: i32, dims: &[i32]) -> MpiResult<Vec<i32>> {
        let mut d = dims.to_vec();
        dims_create(nnodes, &mut d).map(|_| d)
    }

    #[test]
    fn dims_create_table() {
        let table: &[(i32, &[i32], &[i32])] = &[
            (6, &[0, 0], &[3, 2]),
            (7, &[0, 0], &[7, 1]),
            (12, &[0, 0, 0], &[3, 2, 2]),
            (24, &[0, 0, 0], &[4, 3, 2]),
            (16, &[0, 0, 0, 0], &[2, 2, 2, 2]),
            (16, &[0, 0, 0], &[4, 2, 2]),
            (1, &[0, 0, 0], &[1, 1, 1]),
            (4, &[0], &[4]),
            (8, &[0, 0], &[4, 2]),
            (36, &[0, 0], &[6, 6]),
            (60, &[0, 0, 0], &[5, 4, 3]),
            (64, &[0, 0, 0], &[4, 4, 4]),
            (30, &[0, 0, 0], &[5, 3, 2]),
            (72, &[0, 0, 0], &[6, 4, 3]),
            (2 * 3 * 5 * 7, &[0, 0], &[15, 14]),
            (1024, &[0, 0, 0], &[16, 8, 8]),
            (97, &[0, 0, 0], &[97, 1, 1]),
            // Fixed entries are kept; the free ones take the rest.
            (12, &[0, 3, 0], &[2, 3, 2]),
            (24, &[2, 0, 0], &[2, 4, 3]),
            (12, &[3, 4], &[3, 4]),
            (16, &[0, 0, 8], &[2, 1, 8]),
            (7, &[], &[]),
        ];
        for &(n, dims, want) in table {
            assert_eq!(dc(n, dims).unwrap(), want, "nnodes {n}, dims {dims:?}");
        }
    }

    #[test]
    fn dims_create_errors() {
        assert_eq!(dc(7, &[2, 0]).unwrap_err().class(), MPI_ERR_DIMS);
        assert_eq!(dc(7, &[-1, 0]).unwrap_err().class(), MPI_ERR_DIMS);
        assert_eq!(dc(12, &[3, 2]).unwrap_err().class(), MPI_ERR_DIMS);
        assert_eq!(dc(0, &[0, 0]).unwrap_err().class(), MPI_ERR_ARG);
        assert_eq!(dc(-4, &[0]).unwrap_err().class(), MPI_ERR_ARG);
    }

    #[test]
    fn dims_create_is_balanced_and_sorted() {
        for n in 1..=600 {
            for k in 1..=4 {
                let d = dc(n, &vec![0; k]).unwrap();
                assert_eq!(d.iter().product::<i32>(), n);
                assert!(d.windows(2).all(|w| w[0] >= w[1]), "{n} {k} {d:?}");
                // Nothing with a smaller spread exists (checked against the greedy answer).
                let mut g = vec![1; k];
                for p in prime_factors(n).into_iter().rev() {
                    let i = (0..k).min_by_key(|&i| g[i]).unwrap();
                    g[i] *= p;
                }
                let spread = |v: &[i32]| v.iter().max().unwrap() - v.iter().min().unwrap();
                assert!(spread(&d) <= spread(&g), "{n} {k} {d:?} vs {g:?}");
            }
        }
        // Large and many dimensions stay quick.
        assert_eq!(dc(1 << 30, &[0; 30]).unwrap(), vec![2; 30]);
        let d = dc(735_134_400, &[0; 8]).unwrap();
        assert_eq!(d.iter().product::<i32>(), 735_134_400);
    }

    #[test]
    fn cart_coords_rank_roundtrip() {
        let c = Cart::new(&[3, 4, 2], &[false, true, false]).unwrap();
        assert_eq!(c.size(), 24);
        assert_eq!(c.coords(0).unwrap(), vec![0, 0, 0]);
        assert_eq!(c.coords(1).unwrap(), vec![0, 0, 1]);
        assert_eq!(c.coords(2).unwrap(), vec![0, 1, 0]);
        assert_eq!(c.coords(23).unwrap(), vec![2, 3, 1]);
        for r in 0..24 {
            assert_eq!(c.rank(&c.coords(r).unwrap()).unwrap(), r);
        }
        assert_eq!(c.coords(24).unwrap_err().class(), MPI_ERR_RANK);
        // Periodic dimension wraps, non-periodic one does not.
        assert_eq!(c.rank(&[0, -1, 0]).unwrap(), c.rank(&[0, 3, 0]).unwrap());
        assert_eq!(c.rank(&[0, 9, 0]).unwrap(), c.rank(&[0, 1, 0]).unwrap());
        assert_eq!(c.rank(&[3, 0, 0]).unwrap_err().class(), MPI_ERR_ARG);
        assert_eq!(c.rank(&[0, 0, -1]).unwrap_err().class(), MPI_ERR_ARG);
        assert_eq!(
            Cart::new(&[2, 0], &[false, false]).unwrap_err().class(),
            MPI_ERR_DIMS
        );
        assert_eq!(
            Cart::new(&[65536, 65536], &[false, false])
                .unwrap_err()
                .class(),
            MPI_ERR_DIMS
        );
        let zero = Cart::new(&[], &[]).unwrap();
        assert_eq!(zero.size(), 1);
        assert_eq!(zero.rank(&[]).unwrap(), 0);
    }

    #[test]
    fn cart_shift() {
        // 3 x 4, first dimension not periodic, second periodic.
        let c = Cart::new(&[3, 4], &[false, true]).unwrap();
        let r = c.rank(&[1, 0]).unwrap(); // 4
        assert_eq!(c.shift(r, 0, 1).unwrap(), (0, 8));
        assert_eq!(c.shift(r, 0, 2).unwrap(), (MPI_PROC_NULL, MPI_PROC_NULL));
        assert_eq!(c.shift(r, 0, -1).unwrap(), (8, 0));
        assert_eq!(c.shift(r, 1, 1).unwrap(), (7, 5));
        assert_eq!(c.shift(r, 1, -1).unwrap(), (5, 7));
        assert_eq!(c.shift(r, 1, 5).unwrap(), (7, 5));
        assert_eq!(c.shift(r, 1, 0).unwrap(), (r, r));
        assert_eq!(c.shift(0, 0, 1).unwrap(), (MPI_PROC_NULL, 4));
        assert_eq!(c.shift(r, 2, 1).unwrap_err().class(), MPI_ERR_ARG);
        assert_eq!(c.shift(r, -1, 1).unwrap_err().class(), MPI_ERR_ARG);
        let zero = Cart::new(&[], &[]).unwrap();
        assert_eq!(zero.shift(0, 0, 1).unwrap_err().class(), MPI_ERR_TOPOLOGY);
        assert_eq!(c.neighbors(r).unwrap(), vec![0, 8, 7, 5]);
    }

    #[test]
    fn cart_sub() {
        let c = Cart::new(&[2, 3, 4], &[true, false, true]).unwrap();
        // Keep dimension 1: lines along it, colored by (d0, d2).
        let r = c.rank(&[1, 2, 3]).unwrap();
        let (color, key, sub) = c.sub(r, &[false, true, false]).unwrap();
        assert_eq!((color, key), (4 + 3, 2));
        assert_eq!(
            sub,
            Cart {
                dims: vec![3],
                periods: vec![false]
            }
        );
        // Keep 0 and 2.
        let (color, key, sub) = c.sub(r, &[true, false, true]).unwrap();
        assert_eq!((color, key), (2, 4 + 3));
        assert_eq!(sub.dims, vec![2, 4]);
        assert_eq!(sub.periods, vec![true, true]);
        // Keep none: everyone alone.
        let (color, key, sub) = c.sub(r, &[false, false, false]).unwrap();
        assert_eq!((color, key), (r, 0));
        assert_eq!(sub.ndims(), 0);
        // Keep all: one group, same ranks.
        assert_eq!(c.sub(r, &[true, true, true]).unwrap().0, 0);
        assert_eq!(c.sub(r, &[true, true, true]).unwrap().1, r);
        // Every (color, key) pair is unique.
        let mut seen = std::collections::HashSet::new();
        for r in 0..24 {
            let (col, k, _) = c.sub(r, &[true, false, true]).unwrap();
            assert!(seen.insert((col, k)));
        }
    }

    #[test]
    fn graphs() {
        // The standard's example: 4 nodes, edges 0-1, 0-3, 1-0, 2-3, 3-0, 3-2.
        let g = Graph::new(&[2, 3, 4, 6], &[1, 3, 0, 3, 0, 2]).unwrap();
        assert_eq!(g.neighbors(0).unwrap(), &[1, 3]);
        assert_eq!(g.neighbors(1).unwrap(), &[0]);
        assert_eq!(g.neighbors(3).unwrap(), &[0, 2]);
        assert_eq!(g.neighbors(4).unwrap_err().class(), MPI_ERR_RANK);
        assert_eq!(
            Graph::new(&[2, 1], &[1, 0]).unwrap_err().class(),
            MPI_ERR_ARG
        );
        assert_eq!(Graph::new(&[1], &[1]).unwrap_err().class(), MPI_ERR_RANK);
        assert_eq!(Graph::new(&[2], &[0]).unwrap_err().class(), MPI_ERR_ARG);
        let d = DistGraph::new(4, &[1, 2], None, &[3], None).unwrap();
        assert!(!d.weighted && d.sourceweights.is_empty());
        let d = DistGraph::new(4, &[1], Some(&[5]), &[], Some(&[])).unwrap();
        assert!(d.weighted);
        assert_eq!(
            DistGraph::new(4, &[4], None, &[], None)
                .unwrap_err()
                .class(),
            MPI_ERR_RANK
        );
        assert_eq!(
            DistGraph::new(4, &[1], Some(&[-1]), &[], None)
                .unwrap_err()
                .class(),
            MPI_ERR_ARG
        );
        assert_eq!(topo_kind(None), MPI_UNDEFINED);
        assert_eq!(topo_kind(Some(&Topology::Graph(g.clone()))), MPI_GRAPH);
        assert_eq!(cart_map(4, 3, &[2, 2]).unwrap(), 3);
        assert_eq!(cart_map(5, 4, &[2, 2]).unwrap(), MPI_UNDEFINED);
        assert_eq!(cart_map(3, 0, &[2, 2]).unwrap_err().class(), MPI_ERR_DIMS);
        assert_eq!(cart_map(3, 0, &[]).unwrap(), 0);
        assert_eq!(graph_map(3, 2, 2).unwrap(), MPI_UNDEFINED);
        assert_eq!(graph_map(3, 0, 4).unwrap_err().class(), MPI_ERR_ARG);
    }
}
