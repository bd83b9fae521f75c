//! Process topologies: the C functions that compute or query (`MPI_Dims_create`,
//! `MPI_Topo_test`, `MPI_Cart_*` queries, `MPI_Graph_*` queries, `MPI_Dist_graph_neighbors*`,
//! `MPI_Cart_map`, `MPI_Graph_map`). The arithmetic is in `core::objects::topo`.

use super::group::{int_array, int_array_mut};
use super::util::out;
use crate::abi::consts::*;
use crate::abi::types::*;
use crate::core::error::{fail, MpiResult};
use crate::core::objects::topo::{self, Topology};
use crate::core::runtime;
use core::ffi::c_int;
use std::sync::Arc;

/// The communicator's topology (shared, so it can be read outside the runtime), its rank and
/// its size.
fn topo_of(comm: MPI_Comm) -> MpiResult<(Option<Arc<Topology>>, c_int, c_int)> {
    runtime::with(|rt| {
        let (_, c) = rt.comm(comm as usize)?;
        Ok((c.topo.clone(), c.rank, c.size))
    })
}

/// A `max*` length argument: `MPI_ERR_ARG` when negative.
fn max_len(n: c_int, what: &str) -> MpiResult<usize> {
    if n < 0 {
        return fail(MPI_ERR_ARG, format!("{what} = {n} is negative"));
    }
    Ok(n as usize)
}

/// Copies as much of `src` as fits in the caller's array of `max` ints.
unsafe fn fill(dst: *mut c_int, max: usize, src: &[c_int], what: &str) -> MpiResult<()> {
    let n = src.len().min(max);
    // SAFETY: the caller's array holds `max` ints (C contract).
    let d = unsafe { int_array_mut(dst, n as c_int, what)? };
    d.copy_from_slice(&src[..n]);
    Ok(())
}

pub(crate) unsafe fn MPI_Dims_create(
    nnodes: c_int,
    ndims: c_int,
    dims: *mut c_int,
) -> MpiResult<()> {
    if ndims < 0 {
        return fail(MPI_ERR_ARG, format!("ndims = {ndims} is negative"));
    }
    let d = int_array_mut(dims, ndims, "dims")?;
    topo::dims_create(nnodes, d)
}

pub(crate) unsafe fn MPI_Topo_test(comm: MPI_Comm, status: *mut c_int) -> MpiResult<()> {
    let (t, _, _) = topo_of(comm)?;
    *out(status, "status")? = topo::topo_kind(t.as_deref());
    Ok(())
}

pub(crate) unsafe fn MPI_Cartdim_get(comm: MPI_Comm, ndims: *mut c_int) -> MpiResult<()> {
    let (t, _, _) = topo_of(comm)?;
    let c = Topology::as_cart(t.as_deref(), "MPI_Cartdim_get")?;
    *out(ndims, "ndims")? = c.ndims() as c_int;
    Ok(())
}

pub(crate) unsafe fn MPI_Cart_get(
    comm: MPI_Comm,
    maxdims: c_int,
    dims: *mut c_int,
    periods: *mut c_int,
    coords: *mut c_int,
) -> MpiResult<()> {
    let (t, rank, _) = topo_of(comm)?;
    let c = Topology::as_cart(t.as_deref(), "MPI_Cart_get")?;
    let n = c.ndims();
    if max_len(maxdims, "maxdims")? < n {
        return fail(
            MPI_ERR_ARG,
            format!("maxdims = {maxdims} is smaller than the number of dimensions {n}"),
        );
    }
    let mut here = vec![0; n];
    c.coords_into(rank, &mut here);
    let p: Vec<c_int> = c.periods.iter().map(|&b| b as c_int).collect();
    fill(dims, n, &c.dims, "dims")?;
    fill(periods, n, &p, "periods")?;
    fill(coords, n, &here, "coords")
}

pub(crate) unsafe fn MPI_Cart_rank(
    comm: MPI_Comm,
    coords: *const c_int,
    rank: *mut c_int,
) -> MpiResult<()> {
    let (t, _, _) = topo_of(comm)?;
    let c = Topology::as_cart(t.as_deref(), "MPI_Cart_rank")?;
    let r = c.rank(int_array(coords, c.ndims() as c_int, "coords")?)?;
    *out(rank, "rank")? = r;
    Ok(())
}

pub(crate) unsafe fn MPI_Cart_coords(
    comm: MPI_Comm,
    rank: c_int,
    maxdims: c_int,
    coords: *mut c_int,
) -> MpiResult<()> {
    let (t, _, _) = topo_of(comm)?;
    let c = Topology::as_cart(t.as_deref(), "MPI_Cart_coords")?;
    let n = c.ndims();
    if max_len(maxdims, "maxdims")? < n {
        return fail(
            MPI_ERR_ARG,
            format!("maxdims = {maxdims} is smaller than the number of dimensions {n}"),
        );
    }
    let v = c.coords(rank)?;
    fill(coords, n, &v, "coords")
}

pub(crate) unsafe fn MPI_Cart_shift(
    comm: MPI_Comm,
    direction: c_int,
    disp: c_int,
    rank_source: *mut c_int,
    rank_dest: *mut c_int,
) -> MpiResult<()> {
    let (t, rank, _) = topo_of(comm)?;
    let c = Topology::as_cart(t.as_deref(), "MPI_Cart_shift")?;
    let (s, d) = c.shift(rank, direction, disp)?;
    *out(rank_source, "rank_source")? = s;
    *out(rank_dest, "rank_dest")? = d;
    Ok(())
}

pub(crate) unsafe fn MPI_Cart_map(
    comm: MPI_Comm,
    ndims: c_int,
    dims: *const c_int,
    _periods: *const c_int,
    newrank: *mut c_int,
) -> MpiResult<()> {
    let (_, rank, size) = topo_of(comm)?;
    if ndims < 0 {
        return fail(MPI_ERR_ARG, format!("ndims = {ndims} is negative"));
    }
    let r = topo::cart_map(size, rank, int_array(dims, ndims, "dims")?)?;
    *out(newrank, "newrank")? = r;
    Ok(())
}

pub(crate) unsafe fn MPI_Graph_map(
    comm: MPI_Comm,
    nnodes: c_int,
    indx: *const c_int,
    edges: *const c_int,
    newrank: *mut c_int,
) -> MpiResult<()> {
    let (_, rank, size) = topo_of(comm)?;
    let r = topo::graph_map(size, rank, nnodes)?;
    let index = int_array(indx, nnodes, "index")?;
    let nedges = index.last().copied().unwrap_or(0);
    topo::Graph::new(index, int_array(edges, nedges, "edges")?)?;
    *out(newrank, "newrank")? = r;
    Ok(())
}

pub(crate) unsafe fn MPI_Graphdims_get(
    comm: MPI_Comm,
    nnodes: *mut c_int,
    nedges: *mut c_int,
) -> MpiResult<()> {
    let (t, _, _) = topo_of(comm)?;
    let g = Topology::as_graph(t.as_deref(), "MPI_Graphdims_get")?;
    *out(nnodes, "nnodes")? = g.nnodes();
    *out(nedges, "nedges")? = g.edges.len() as c_int;
    Ok(())
}

pub(crate) unsafe fn MPI_Graph_get(
    comm: MPI_Comm,
    maxindex: c_int,
    maxedges: c_int,
    indx: *mut c_int,
    edges: *mut c_int,
) -> MpiResult<()> {
    let (t, _, _) = topo_of(comm)?;
    let g = Topology::as_graph(t.as_deref(), "MPI_Graph_get")?;
    fill(indx, max_len(maxindex, "maxindex")?, &g.index, "index")?;
    fill(edges, max_len(maxedges, "maxedges")?, &g.edges, "edges")
}

pub(crate) unsafe fn MPI_Graph_neighbors_count(
    comm: MPI_Comm,
    rank: c_int,
    nneighbors: *mut c_int,
) -> MpiResult<()> {
    let (t, _, _) = topo_of(comm)?;
    let g = Topology::as_graph(t.as_deref(), "MPI_Graph_neighbors_count")?;
    let n = g.neighbors(rank)?.len() as c_int;
    *out(nneighbors, "nneighbors")? = n;
    Ok(())
}

pub(crate) unsafe fn MPI_Graph_neighbors(
    comm: MPI_Comm,
    rank: c_int,
    maxneighbors: c_int,
    neighbors: *mut c_int,
) -> MpiResult<()> {
    let (t, _, _) = topo_of(comm)?;
    let g = Topology::as_graph(t.as_deref(), "MPI_Graph_neighbors")?;
    let n = g.neighbors(rank)?;
    fill(
        neighbors,
        max_len(maxneighbors, "maxneighbors")?,
        n,
        "neighbors",
    )
}

pub(crate) unsafe fn MPI_Dist_graph_neighbors_count(
    comm: MPI_Comm,
    indegree: *mut c_int,
    outdegree: *mut c_int,
    weighted: *mut c_int,
) -> MpiResult<()> {
    let (t, _, _) = topo_of(comm)?;
    let g = Topology::as_dist_graph(t.as_deref(), "MPI_Dist_graph_neighbors_count")?;
    *out(indegree, "indegree")? = g.sources.len() as c_int;
    *out(outdegree, "outdegree")? = g.destinations.len() as c_int;
    *out(weighted, "weighted")? = g.weighted as c_int;
    Ok(())
}

/// Whether a weights output array is real (not `MPI_UNWEIGHTED`/`MPI_WEIGHTS_EMPTY`/NULL).
fn weights_wanted(p: *mut c_int) -> bool {
    let v = p as usize;
    v != 0 && v != MPI_UNWEIGHTED && v != MPI_WEIGHTS_EMPTY
}

pub(crate) unsafe fn MPI_Dist_graph_neighbors(
    comm: MPI_Comm,
    maxindegree: c_int,
    sources: *mut c_int,
    sourceweights: *mut c_int,
    maxoutdegree: c_int,
    destinations: *mut c_int,
    destweights: *mut c_int,
) -> MpiResult<()> {
    let (t, _, _) = topo_of(comm)?;
    let g = Topology::as_dist_graph(t.as_deref(), "MPI_Dist_graph_neighbors")?;
    let maxin = max_len(maxindegree, "maxindegree")?;
    let maxout = max_len(maxoutdegree, "maxoutdegree")?;
    fill(sources, maxin, &g.sources, "sources")?;
    fill(destinations, maxout, &g.destinations, "destinations")?;
    if g.weighted {
        if weights_wanted(sourceweights) {
            fill(sourceweights, maxin, &g.sourceweights, "sourceweights")?;
        }
        if weights_wanted(destweights) {
            fill(destweights, maxout, &g.destweights, "destweights")?;
        }
    }
    Ok(())
}
