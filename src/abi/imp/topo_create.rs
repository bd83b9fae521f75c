//! Process topologies: the C functions that create communicators (`MPI_Cart_create`,
//! `MPI_Cart_sub`, `MPI_Graph_create`, `MPI_Dist_graph_create_adjacent`,
//! `MPI_Dist_graph_create`). Ranks are never reordered (`reorder` is accepted and ignored,
//! which the standard allows): the new communicator is a split of the old one keyed by rank.

use super::group::int_array;
use super::util::out;
use crate::abi::consts::*;
use crate::abi::types::*;
use crate::core::error::{fail, MpiResult};
use crate::core::objects::comm_build;
use crate::core::objects::topo::Topology;
use crate::core::runtime;
use core::ffi::c_int;
use std::sync::Arc;

/// Rank and size of an intracommunicator (`MPI_ERR_COMM` for an intercommunicator).
fn intra(comm: MPI_Comm, function: &str) -> MpiResult<(i32, i32)> {
    runtime::with(|rt| {
        let (_, c) = rt.comm_plain(comm as usize)?;
        if c.is_inter() {
            return fail(
                MPI_ERR_COMM,
                format!("{function} needs an intracommunicator"),
            );
        }
        Ok((c.rank, c.size))
    })
}

/// Splits `comm` (color 0 for members, `MPI_UNDEFINED` for the others; key = rank) and
/// attaches `topo` to the result.
unsafe fn split_with(
    comm: MPI_Comm,
    member: bool,
    key: i32,
    topo: Topology,
    newcomm: *mut MPI_Comm,
) -> MpiResult<()> {
    let slot = out(newcomm, "newcomm")?;
    let color = if member { 0 } else { MPI_UNDEFINED };
    let made = comm_build::split(comm as usize, color, key)?;
    if let Some(h) = made {
        runtime::with(|rt| {
            let (idx, _) = rt.comm(h)?;
            rt.comms.get_mut(idx).unwrap().topo = Some(Arc::new(topo));
            Ok(())
        })?;
    }
    *slot = made.unwrap_or(MPI_COMM_NULL) as MPI_Comm;
    Ok(())
}

pub(crate) unsafe fn MPI_Cart_create(
    comm_old: MPI_Comm,
    ndims: c_int,
    dims: *const c_int,
    periods: *const c_int,
    _reorder: c_int,
    comm_cart: *mut MPI_Comm,
) -> MpiResult<()> {
    out(comm_cart, "comm_cart")?;
    let (rank, size) = intra(comm_old, "MPI_Cart_create")?;
    let dims = int_array(dims, ndims, "dims")?;
    let periods: Vec<bool> = int_array(periods, ndims, "periods")?
        .iter()
        .map(|&p| p != 0)
        .collect();
    let topo = Topology::cart(dims, &periods)?;
    let n: i64 = dims.iter().map(|&d| d as i64).product();
    if n > size as i64 {
        return fail(
            MPI_ERR_ARG,
            format!("the grid has {n} processes but the communicator only {size}"),
        );
    }
    split_with(comm_old, (rank as i64) < n, rank, topo, comm_cart)
}

pub(crate) unsafe fn MPI_Cart_sub(
    comm: MPI_Comm,
    remain_dims: *const c_int,
    newcomm: *mut MPI_Comm,
) -> MpiResult<()> {
    out(newcomm, "newcomm")?;
    let (topo, rank) = runtime::with(|rt| {
        let (_, c) = rt.comm_plain(comm as usize)?;
        Ok((c.topo.clone(), c.rank))
    })?;
    let cart = Topology::as_cart(topo.as_deref(), "MPI_Cart_sub")?;
    let remain: Vec<bool> = int_array(remain_dims, cart.ndims() as c_int, "remain_dims")?
        .iter()
        .map(|&r| r != 0)
        .collect();
    let (color, key, sub) = cart.sub(rank, &remain)?;
    let slot = out(newcomm, "newcomm")?;
    let made = comm_build::split(comm as usize, color, key)?;
    let h = made.expect("every member of a Cartesian grid is in one of its subgrids");
    runtime::with(|rt| {
        let (idx, _) = rt.comm(h)?;
        rt.comms.get_mut(idx).unwrap().topo = Some(Arc::new(Topology::Cart(sub)));
        Ok(())
    })?;
    *slot = h as MPI_Comm;
    Ok(())
}

pub(crate) unsafe fn MPI_Graph_create(
    comm_old: MPI_Comm,
    nnodes: c_int,
    indx: *const c_int,
    edges: *const c_int,
    _reorder: c_int,
    comm_graph: *mut MPI_Comm,
) -> MpiResult<()> {
    out(comm_graph, "comm_graph")?;
    let (rank, size) = intra(comm_old, "MPI_Graph_create")?;
    if nnodes > size {
        return fail(
            MPI_ERR_ARG,
            format!("the graph has {nnodes} nodes but the communicator only {size} processes"),
        );
    }
    let index = int_array(indx, nnodes, "index")?;
    let nedges = index.last().copied().unwrap_or(0);
    let edges = int_array(edges, nedges, "edges")?;
    let topo = Topology::graph(index, edges)?;
    split_with(comm_old, rank < nnodes, rank, topo, comm_graph)
}

/// A weights argument: `None` for `MPI_UNWEIGHTED`, an empty list for `MPI_WEIGHTS_EMPTY`.
unsafe fn weights<'a>(w: *const c_int, n: c_int, what: &str) -> MpiResult<Option<&'a [c_int]>> {
    match w as usize {
        MPI_UNWEIGHTED => Ok(None),
        MPI_WEIGHTS_EMPTY => {
            if n != 0 {
                return fail(
                    MPI_ERR_ARG,
                    format!("{what} is MPI_WEIGHTS_EMPTY but {n} edges are given"),
                );
            }
            Ok(Some(&[]))
        }
        // SAFETY: the caller passes `n` ints (C contract).
        _ => Ok(Some(unsafe { int_array(w, n, what)? })),
    }
}

pub(crate) unsafe fn MPI_Dist_graph_create_adjacent(
    comm_old: MPI_Comm,
    indegree: c_int,
    sources: *const c_int,
    sourceweights: *const c_int,
    outdegree: c_int,
    destinations: *const c_int,
    destweights: *const c_int,
    info: MPI_Info,
    _reorder: c_int,
    comm_dist_graph: *mut MPI_Comm,
) -> MpiResult<()> {
    out(comm_dist_graph, "comm_dist_graph")?;
    crate::core::objects::info::lookup_opt(info as usize)?;
    let (rank, size) = intra(comm_old, "MPI_Dist_graph_create_adjacent")?;
    let src = int_array(sources, indegree, "sources")?;
    let dst = int_array(destinations, outdegree, "destinations")?;
    let topo = Topology::dist_graph(
        size,
        src,
        weights(sourceweights, indegree, "sourceweights")?,
        dst,
        weights(destweights, outdegree, "destweights")?,
    )?;
    split_with(comm_old, true, rank, topo, comm_dist_graph)
}

pub(crate) unsafe fn MPI_Dist_graph_create(
    comm_old: MPI_Comm,
    n: c_int,
    sources: *const c_int,
    degrees: *const c_int,
    destinations: *const c_int,
    weights_: *const c_int,
    info: MPI_Info,
    _reorder: c_int,
    comm_dist_graph: *mut MPI_Comm,
) -> MpiResult<()> {
    out(comm_dist_graph, "comm_dist_graph")?;
    crate::core::objects::info::lookup_opt(info as usize)?;
    let (rank, size) = intra(comm_old, "MPI_Dist_graph_create")?;
    let src = int_array(sources, n, "sources")?;
    let deg = int_array(degrees, n, "degrees")?;
    if let Some(i) = deg.iter().position(|&d| d < 0) {
        return fail(
            MPI_ERR_ARG,
            format!("degrees[{i}] = {} is negative", deg[i]),
        );
    }
    let total: i64 = deg.iter().map(|&d| d as i64).sum();
    let total = c_int::try_from(total)
        .map_err(|_| crate::core::error::MpiError::new(MPI_ERR_ARG, "too many edges"))?;
    let dst = int_array(destinations, total, "destinations")?;
    let w = weights(weights_, total, "weights")?;
    let mut edges = Vec::with_capacity(total as usize);
    let mut k = 0usize;
    for (i, &s) in src.iter().enumerate() {
        for _ in 0..deg[i] {
            edges.push((s, dst[k], w.map(|w| w[k]).unwrap_or(1)));
            k += 1;
        }
    }
    for &(s, d, wt) in &edges {
        if s < 0 || s >= size || d < 0 || d >= size {
            return fail(
                MPI_ERR_RANK,
                format!("edge {s} -> {d} names a rank outside the communicator (size {size})"),
            );
        }
        if wt < 0 {
            return fail(
                MPI_ERR_ARG,
                format!("edge {s} -> {d} has negative weight {wt}"),
            );
        }
    }
    let (s, sw, d, dw) = comm_build::gather_edges(comm_old as usize, &edges)?;
    let weighted = w.is_some();
    let topo = Topology::dist_graph(
        size,
        &s,
        weighted.then_some(&sw[..]),
        &d,
        weighted.then_some(&dw[..]),
    )?;
    split_with(comm_old, true, rank, topo, comm_dist_graph)
}
