//! Neighbourhood collectives on Cartesian, graph and distributed-graph communicators
//! (`MPI_Neighbor_allgather(v)`, `MPI_Neighbor_alltoall(v,w)` and their nonblocking,
//! persistent and big-count forms): one round with a receive from every source and a send to every
//! destination, in the order of the topology's neighbour lists (`MPI_PROC_NULL` neighbours of
//! a non-periodic grid are skipped, their blocks left untouched). Messages between the same
//! two processes match in posting order: list order on graphs, by direction on Cartesian
//! grids (see [`Hood::recv_order`]).

use super::coll::{collective, user_span};
use super::coll_move::{in_place, span_at, span_at_bytes, types, Arr};
use crate::abi::consts::*;
use crate::abi::types::*;
use crate::coll::sched::{Schedule, Span};
use crate::coll::Ctx;
use crate::core::error::{fail, MpiResult};
use crate::core::runtime::Runtime;
use core::ffi::{c_int, c_void};

/// This rank's neighbourhood: its sources and destinations in the communicator's topology,
/// and the order in which the receives from the sources are posted.
struct Hood {
    /// Sources, in the topology's order (receive block `i` comes from `srcs[i]`).
    srcs: Vec<i32>,
    /// Destinations, in the topology's order (send block `j` goes to `dsts[j]`).
    dsts: Vec<i32>,
    /// Receive blocks in posting order.
    ///
    /// Messages between two processes match in posting order, which decides the blocks when
    /// one process is a neighbour in several directions. On a Cartesian grid, MPI-4.0's
    /// errata fix the rule by direction: the block from the negative neighbour of dimension
    /// `d` is the one it sent in its positive direction, and vice versa. Every process sends
    /// dimension by dimension, negative direction first, so the receives go dimension by
    /// dimension, positive-direction source (block `2d + 1`) first. On a periodic dimension
    /// of size 1 or 2 both neighbours are the same process and this order picks the right
    /// block; elsewhere the two sources differ and the order changes nothing. Graphs keep the
    /// list order, as the standard says.
    recv_order: Vec<usize>,
}

/// The neighbourhood of this rank in the communicator's topology.
fn neighbors(rt: &Runtime, c: &Ctx, function: &str) -> MpiResult<Hood> {
    let Some(t) = rt.comms.get(c.comm).and_then(|k| k.topo.clone()) else {
        return fail(
            MPI_ERR_TOPOLOGY,
            format!("{function} needs a communicator with a process topology"),
        );
    };
    let (srcs, dsts) = t.neighbor_lists(c.rank)?;
    let recv_order = match *t {
        crate::core::objects::topo::Topology::Cart(_) => (0..srcs.len() / 2)
            .flat_map(|d| [2 * d + 1, 2 * d])
            .collect(),
        _ => (0..srcs.len()).collect(),
    };
    Ok(Hood {
        srcs,
        dsts,
        recv_order,
    })
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn neighbor_allgather_build(
    rt: &Runtime,
    c: &Ctx,
    s: &mut Schedule,
    sendbuf: *const c_void,
    sendcount: i64,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: i64,
    recvtype: MPI_Datatype,
) -> MpiResult<()> {
    let h = neighbors(rt, c, "MPI_Neighbor_allgather")?;
    let send = user_span(rt, sendbuf, sendcount, sendtype)?;
    for &i in &h.recv_order {
        let block = span_at(rt, recvbuf, i as i64 * recvcount, recvcount, recvtype)?;
        if h.srcs[i] != MPI_PROC_NULL {
            s.recv(h.srcs[i], block);
        }
    }
    for &d in &h.dsts {
        if d != MPI_PROC_NULL {
            s.send(d, send.clone());
        }
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn neighbor_alltoall_build(
    rt: &Runtime,
    c: &Ctx,
    s: &mut Schedule,
    sendbuf: *const c_void,
    sendcount: i64,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: i64,
    recvtype: MPI_Datatype,
) -> MpiResult<()> {
    let h = neighbors(rt, c, "MPI_Neighbor_alltoall")?;
    for &i in &h.recv_order {
        let block = span_at(rt, recvbuf, i as i64 * recvcount, recvcount, recvtype)?;
        if h.srcs[i] != MPI_PROC_NULL {
            s.recv(h.srcs[i], block);
        }
    }
    for (j, &d) in h.dsts.iter().enumerate() {
        let block = span_at(rt, sendbuf, j as i64 * sendcount, sendcount, sendtype)?;
        if d != MPI_PROC_NULL {
            s.send(d, block);
        }
    }
    Ok(())
}

/// `MPI_ERR_BUFFER` for `MPI_IN_PLACE`, which no neighbourhood collective accepts.
fn not_in_place(buf: *const c_void, what: &str, function: &str) -> MpiResult<()> {
    if in_place(buf) {
        return fail(
            MPI_ERR_BUFFER,
            format!("{function} does not accept MPI_IN_PLACE as {what}"),
        );
    }
    Ok(())
}

/// One side of a vector neighbourhood collective: per-neighbour counts and displacements
/// (in elements of one datatype, or in bytes with a datatype per neighbour).
#[derive(Clone, Copy)]
pub(crate) enum NSide {
    /// Counts, element displacements, one datatype (`v` forms).
    V(Arr, Arr, MPI_Datatype),
    /// Counts, byte displacements, datatypes (`w` form).
    W(Arr, Arr, *const MPI_Datatype),
}

impl NSide {
    /// The spans of `buf` for `n` neighbours.
    fn spans(self, rt: &Runtime, buf: *const c_void, n: usize, what: &str) -> MpiResult<Vec<Span>> {
        let mut v = Vec::with_capacity(n);
        if n == 0 {
            return Ok(v);
        }
        match self {
            NSide::V(c, d, dt) => {
                // SAFETY: one entry per neighbour (MPI's contract for these arrays).
                let (c, d) = unsafe {
                    (
                        c.counts(n, &format!("{what}counts"))?,
                        d.read(n, &format!("{what}displs"))?,
                    )
                };
                for j in 0..n {
                    v.push(span_at(rt, buf, d[j], c[j], dt)?);
                }
            }
            NSide::W(c, d, t) => {
                // SAFETY: one entry per neighbour (MPI's contract for these arrays).
                let (c, d, t) = unsafe {
                    (
                        c.counts(n, &format!("{what}counts"))?,
                        d.read(n, &format!("{what}displs"))?,
                        types(t, n, &format!("{what}types"))?,
                    )
                };
                for j in 0..n {
                    v.push(span_at_bytes(rt, buf, d[j], c[j], t[j])?);
                }
            }
        }
        Ok(v)
    }
}

/// Posts a receive of `recv[i]` from every source (in the neighbourhood's receive order) and
/// a send of `send[j]` to every destination (`MPI_PROC_NULL` neighbours skipped).
fn post(s: &mut Schedule, h: &Hood, send: &[Span], recv: &[Span]) {
    for &i in &h.recv_order {
        if h.srcs[i] != MPI_PROC_NULL {
            s.recv(h.srcs[i], recv[i].clone());
        }
    }
    for (&d, block) in h.dsts.iter().zip(send) {
        if d != MPI_PROC_NULL {
            s.send(d, block.clone());
        }
    }
}

/// `MPI_Neighbor_allgatherv`: this rank's `sendbuf` to every destination; the block of source
/// `i` at `displs[i]` elements into `recvbuf`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn neighbor_allgatherv_build(
    rt: &Runtime,
    c: &Ctx,
    s: &mut Schedule,
    function: &str,
    sendbuf: *const c_void,
    sendcount: i64,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recv: NSide,
) -> MpiResult<()> {
    let h = neighbors(rt, c, function)?;
    not_in_place(sendbuf, "sendbuf", function)?;
    not_in_place(recvbuf, "recvbuf", function)?;
    let send = user_span(rt, sendbuf, sendcount, sendtype)?;
    let recv = recv.spans(rt, recvbuf, h.srcs.len(), "recv")?;
    post(s, &h, &vec![send; h.dsts.len()], &recv);
    Ok(())
}

/// `MPI_Neighbor_alltoallv` / `MPI_Neighbor_alltoallw`: block `j` of `sendbuf` to destination
/// `j`, the block of source `i` into block `i` of `recvbuf`.
pub(crate) fn neighbor_alltoallv_build(
    rt: &Runtime,
    c: &Ctx,
    s: &mut Schedule,
    function: &str,
    sendbuf: *const c_void,
    send: NSide,
    recvbuf: *mut c_void,
    recv: NSide,
) -> MpiResult<()> {
    let h = neighbors(rt, c, function)?;
    not_in_place(sendbuf, "sendbuf", function)?;
    not_in_place(recvbuf, "recvbuf", function)?;
    let send = send.spans(rt, sendbuf, h.dsts.len(), "send")?;
    let recv = recv.spans(rt, recvbuf, h.srcs.len(), "recv")?;
    post(s, &h, &send, &recv);
    Ok(())
}

macro_rules! neighbor_fns {
    ($blocking:ident, $blocking_c:ident, $nb:ident, $nb_c:ident, $build:ident) => {
        pub(crate) unsafe fn $blocking(
            sendbuf: *const c_void,
            sendcount: c_int,
            sendtype: MPI_Datatype,
            recvbuf: *mut c_void,
            recvcount: c_int,
            recvtype: MPI_Datatype,
            comm: MPI_Comm,
        ) -> MpiResult<()> {
            collective(comm, stringify!($blocking), None, |rt, c, s| {
                $build(
                    rt,
                    c,
                    s,
                    sendbuf,
                    sendcount as i64,
                    sendtype,
                    recvbuf,
                    recvcount as i64,
                    recvtype,
                )
            })
        }
        pub(crate) unsafe fn $blocking_c(
            sendbuf: *const c_void,
            sendcount: MPI_Count,
            sendtype: MPI_Datatype,
            recvbuf: *mut c_void,
            recvcount: MPI_Count,
            recvtype: MPI_Datatype,
            comm: MPI_Comm,
        ) -> MpiResult<()> {
            collective(comm, stringify!($blocking_c), None, |rt, c, s| {
                $build(
                    rt, c, s, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                )
            })
        }
        pub(crate) unsafe fn $nb(
            sendbuf: *const c_void,
            sendcount: c_int,
            sendtype: MPI_Datatype,
            recvbuf: *mut c_void,
            recvcount: c_int,
            recvtype: MPI_Datatype,
            comm: MPI_Comm,
            request: *mut MPI_Request,
        ) -> MpiResult<()> {
            collective(comm, stringify!($nb), Some(request), |rt, c, s| {
                $build(
                    rt,
                    c,
                    s,
                    sendbuf,
                    sendcount as i64,
                    sendtype,
                    recvbuf,
                    recvcount as i64,
                    recvtype,
                )
            })
        }
        pub(crate) unsafe fn $nb_c(
            sendbuf: *const c_void,
            sendcount: MPI_Count,
            sendtype: MPI_Datatype,
            recvbuf: *mut c_void,
            recvcount: MPI_Count,
            recvtype: MPI_Datatype,
            comm: MPI_Comm,
            request: *mut MPI_Request,
        ) -> MpiResult<()> {
            collective(comm, stringify!($nb_c), Some(request), |rt, c, s| {
                $build(
                    rt, c, s, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                )
            })
        }
    };
}

neighbor_fns!(
    MPI_Neighbor_allgather,
    MPI_Neighbor_allgather_c,
    MPI_Ineighbor_allgather,
    MPI_Ineighbor_allgather_c,
    neighbor_allgather_build
);
neighbor_fns!(
    MPI_Neighbor_alltoall,
    MPI_Neighbor_alltoall_c,
    MPI_Ineighbor_alltoall,
    MPI_Ineighbor_alltoall_c,
    neighbor_alltoall_build
);

macro_rules! neighbor_init_fns {
    ($init:ident, $init_c:ident, $build:ident) => {
        pub(crate) unsafe fn $init(
            sendbuf: *const c_void,
            sendcount: c_int,
            sendtype: MPI_Datatype,
            recvbuf: *mut c_void,
            recvcount: c_int,
            recvtype: MPI_Datatype,
            comm: MPI_Comm,
            info: MPI_Info,
            request: *mut MPI_Request,
        ) -> MpiResult<()> {
            super::coll::collective_init(comm, stringify!($init), info, request, |rt, c, s| {
                $build(
                    rt,
                    c,
                    s,
                    sendbuf,
                    sendcount as i64,
                    sendtype,
                    recvbuf,
                    recvcount as i64,
                    recvtype,
                )
            })
        }
        pub(crate) unsafe fn $init_c(
            sendbuf: *const c_void,
            sendcount: MPI_Count,
            sendtype: MPI_Datatype,
            recvbuf: *mut c_void,
            recvcount: MPI_Count,
            recvtype: MPI_Datatype,
            comm: MPI_Comm,
            info: MPI_Info,
            request: *mut MPI_Request,
        ) -> MpiResult<()> {
            super::coll::collective_init(comm, stringify!($init_c), info, request, |rt, c, s| {
                $build(
                    rt, c, s, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                )
            })
        }
    };
}

neighbor_init_fns!(
    MPI_Neighbor_allgather_init,
    MPI_Neighbor_allgather_init_c,
    neighbor_allgather_build
);
neighbor_init_fns!(
    MPI_Neighbor_alltoall_init,
    MPI_Neighbor_alltoall_init_c,
    neighbor_alltoall_build
);

// ---------------------------------------------------------------------------------------
// MPI_Neighbor_allgatherv, MPI_Neighbor_alltoallv, MPI_Neighbor_alltoallw: every form.

pub(crate) unsafe fn MPI_Neighbor_allgatherv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    displs: *const c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> MpiResult<()> {
    collective(comm, "MPI_Neighbor_allgatherv", None, |rt, c, s| {
        neighbor_allgatherv_build(
            rt,
            c,
            s,
            "MPI_Neighbor_allgatherv",
            sendbuf,
            sendcount as i64,
            sendtype,
            recvbuf,
            NSide::V(Arr::Int(recvcounts), Arr::Int(displs), recvtype),
        )
    })
}

pub(crate) unsafe fn MPI_Neighbor_alltoallv(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> MpiResult<()> {
    collective(comm, "MPI_Neighbor_alltoallv", None, |rt, c, s| {
        neighbor_alltoallv_build(
            rt,
            c,
            s,
            "MPI_Neighbor_alltoallv",
            sendbuf,
            NSide::V(Arr::Int(sendcounts), Arr::Int(sdispls), sendtype),
            recvbuf,
            NSide::V(Arr::Int(recvcounts), Arr::Int(rdispls), recvtype),
        )
    })
}

pub(crate) unsafe fn MPI_Neighbor_alltoallw(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const MPI_Aint,
    sendtypes: *const MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const MPI_Aint,
    recvtypes: *const MPI_Datatype,
    comm: MPI_Comm,
) -> MpiResult<()> {
    collective(comm, "MPI_Neighbor_alltoallw", None, |rt, c, s| {
        neighbor_alltoallv_build(
            rt,
            c,
            s,
            "MPI_Neighbor_alltoallw",
            sendbuf,
            NSide::W(Arr::Int(sendcounts), Arr::Aint(sdispls), sendtypes),
            recvbuf,
            NSide::W(Arr::Int(recvcounts), Arr::Aint(rdispls), recvtypes),
        )
    })
}

pub(crate) unsafe fn MPI_Neighbor_allgatherv_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const MPI_Count,
    displs: *const MPI_Aint,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> MpiResult<()> {
    collective(comm, "MPI_Neighbor_allgatherv_c", None, |rt, c, s| {
        neighbor_allgatherv_build(
            rt,
            c,
            s,
            "MPI_Neighbor_allgatherv_c",
            sendbuf,
            sendcount,
            sendtype,
            recvbuf,
            NSide::V(Arr::Count(recvcounts), Arr::Aint(displs), recvtype),
        )
    })
}

pub(crate) unsafe fn MPI_Neighbor_alltoallv_c(
    sendbuf: *const c_void,
    sendcounts: *const MPI_Count,
    sdispls: *const MPI_Aint,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const MPI_Count,
    rdispls: *const MPI_Aint,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> MpiResult<()> {
    collective(comm, "MPI_Neighbor_alltoallv_c", None, |rt, c, s| {
        neighbor_alltoallv_build(
            rt,
            c,
            s,
            "MPI_Neighbor_alltoallv_c",
            sendbuf,
            NSide::V(Arr::Count(sendcounts), Arr::Aint(sdispls), sendtype),
            recvbuf,
            NSide::V(Arr::Count(recvcounts), Arr::Aint(rdispls), recvtype),
        )
    })
}

pub(crate) unsafe fn MPI_Neighbor_alltoallw_c(
    sendbuf: *const c_void,
    sendcounts: *const MPI_Count,
    sdispls: *const MPI_Aint,
    sendtypes: *const MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const MPI_Count,
    rdispls: *const MPI_Aint,
    recvtypes: *const MPI_Datatype,
    comm: MPI_Comm,
) -> MpiResult<()> {
    collective(comm, "MPI_Neighbor_alltoallw_c", None, |rt, c, s| {
        neighbor_alltoallv_build(
            rt,
            c,
            s,
            "MPI_Neighbor_alltoallw_c",
            sendbuf,
            NSide::W(Arr::Count(sendcounts), Arr::Aint(sdispls), sendtypes),
            recvbuf,
            NSide::W(Arr::Count(recvcounts), Arr::Aint(rdispls), recvtypes),
        )
    })
}

pub(crate) unsafe fn MPI_Ineighbor_allgatherv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    displs: *const c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    collective(
        comm,
        "MPI_Ineighbor_allgatherv",
        Some(request),
        |rt, c, s| {
            neighbor_allgatherv_build(
                rt,
                c,
                s,
                "MPI_Ineighbor_allgatherv",
                sendbuf,
                sendcount as i64,
                sendtype,
                recvbuf,
                NSide::V(Arr::Int(recvcounts), Arr::Int(displs), recvtype),
            )
        },
    )
}

pub(crate) unsafe fn MPI_Ineighbor_alltoallv(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    collective(
        comm,
        "MPI_Ineighbor_alltoallv",
        Some(request),
        |rt, c, s| {
            neighbor_alltoallv_build(
                rt,
                c,
                s,
                "MPI_Ineighbor_alltoallv",
                sendbuf,
                NSide::V(Arr::Int(sendcounts), Arr::Int(sdispls), sendtype),
                recvbuf,
                NSide::V(Arr::Int(recvcounts), Arr::Int(rdispls), recvtype),
            )
        },
    )
}

pub(crate) unsafe fn MPI_Ineighbor_alltoallw(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const MPI_Aint,
    sendtypes: *const MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const MPI_Aint,
    recvtypes: *const MPI_Datatype,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    collective(
        comm,
        "MPI_Ineighbor_alltoallw",
        Some(request),
        |rt, c, s| {
            neighbor_alltoallv_build(
                rt,
                c,
                s,
                "MPI_Ineighbor_alltoallw",
                sendbuf,
                NSide::W(Arr::Int(sendcounts), Arr::Aint(sdispls), sendtypes),
                recvbuf,
                NSide::W(Arr::Int(recvcounts), Arr::Aint(rdispls), recvtypes),
            )
        },
    )
}

pub(crate) unsafe fn MPI_Ineighbor_allgatherv_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const MPI_Count,
    displs: *const MPI_Aint,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    collective(
        comm,
        "MPI_Ineighbor_allgatherv_c",
        Some(request),
        |rt, c, s| {
            neighbor_allgatherv_build(
                rt,
                c,
                s,
                "MPI_Ineighbor_allgatherv_c",
                sendbuf,
                sendcount,
                sendtype,
                recvbuf,
                NSide::V(Arr::Count(recvcounts), Arr::Aint(displs), recvtype),
            )
        },
    )
}

pub(crate) unsafe fn MPI_Ineighbor_alltoallv_c(
    sendbuf: *const c_void,
    sendcounts: *const MPI_Count,
    sdispls: *const MPI_Aint,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const MPI_Count,
    rdispls: *const MPI_Aint,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    collective(
        comm,
        "MPI_Ineighbor_alltoallv_c",
        Some(request),
        |rt, c, s| {
            neighbor_alltoallv_build(
                rt,
                c,
                s,
                "MPI_Ineighbor_alltoallv_c",
                sendbuf,
                NSide::V(Arr::Count(sendcounts), Arr::Aint(sdispls), sendtype),
                recvbuf,
                NSide::V(Arr::Count(recvcounts), Arr::Aint(rdispls), recvtype),
            )
        },
    )
}

pub(crate) unsafe fn MPI_Ineighbor_alltoallw_c(
    sendbuf: *const c_void,
    sendcounts: *const MPI_Count,
    sdispls: *const MPI_Aint,
    sendtypes: *const MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const MPI_Count,
    rdispls: *const MPI_Aint,
    recvtypes: *const MPI_Datatype,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    collective(
        comm,
        "MPI_Ineighbor_alltoallw_c",
        Some(request),
        |rt, c, s| {
            neighbor_alltoallv_build(
                rt,
                c,
                s,
                "MPI_Ineighbor_alltoallw_c",
                sendbuf,
                NSide::W(Arr::Count(sendcounts), Arr::Aint(sdispls), sendtypes),
                recvbuf,
                NSide::W(Arr::Count(recvcounts), Arr::Aint(rdispls), recvtypes),
            )
        },
    )
}

pub(crate) unsafe fn MPI_Neighbor_allgatherv_init(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    displs: *const c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    super::coll::collective_init(
        comm,
        "MPI_Neighbor_allgatherv_init",
        info,
        request,
        |rt, c, s| {
            neighbor_allgatherv_build(
                rt,
                c,
                s,
                "MPI_Neighbor_allgatherv_init",
                sendbuf,
                sendcount as i64,
                sendtype,
                recvbuf,
                NSide::V(Arr::Int(recvcounts), Arr::Int(displs), recvtype),
            )
        },
    )
}

pub(crate) unsafe fn MPI_Neighbor_alltoallv_init(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    super::coll::collective_init(
        comm,
        "MPI_Neighbor_alltoallv_init",
        info,
        request,
        |rt, c, s| {
            neighbor_alltoallv_build(
                rt,
                c,
                s,
                "MPI_Neighbor_alltoallv_init",
                sendbuf,
                NSide::V(Arr::Int(sendcounts), Arr::Int(sdispls), sendtype),
                recvbuf,
                NSide::V(Arr::Int(recvcounts), Arr::Int(rdispls), recvtype),
            )
        },
    )
}

pub(crate) unsafe fn MPI_Neighbor_alltoallw_init(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const MPI_Aint,
    sendtypes: *const MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const MPI_Aint,
    recvtypes: *const MPI_Datatype,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    super::coll::collective_init(
        comm,
        "MPI_Neighbor_alltoallw_init",
        info,
        request,
        |rt, c, s| {
            neighbor_alltoallv_build(
                rt,
                c,
                s,
                "MPI_Neighbor_alltoallw_init",
                sendbuf,
                NSide::W(Arr::Int(sendcounts), Arr::Aint(sdispls), sendtypes),
                recvbuf,
                NSide::W(Arr::Int(recvcounts), Arr::Aint(rdispls), recvtypes),
            )
        },
    )
}

pub(crate) unsafe fn MPI_Neighbor_allgatherv_init_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const MPI_Count,
    displs: *const MPI_Aint,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    super::coll::collective_init(
        comm,
        "MPI_Neighbor_allgatherv_init_c",
        info,
        request,
        |rt, c, s| {
            neighbor_allgatherv_build(
                rt,
                c,
                s,
                "MPI_Neighbor_allgatherv_init_c",
                sendbuf,
                sendcount,
                sendtype,
                recvbuf,
                NSide::V(Arr::Count(recvcounts), Arr::Aint(displs), recvtype),
            )
        },
    )
}

pub(crate) unsafe fn MPI_Neighbor_alltoallv_init_c(
    sendbuf: *const c_void,
    sendcounts: *const MPI_Count,
    sdispls: *const MPI_Aint,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const MPI_Count,
    rdispls: *const MPI_Aint,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    super::coll::collective_init(
        comm,
        "MPI_Neighbor_alltoallv_init_c",
        info,
        request,
        |rt, c, s| {
            neighbor_alltoallv_build(
                rt,
                c,
                s,
                "MPI_Neighbor_alltoallv_init_c",
                sendbuf,
                NSide::V(Arr::Count(sendcounts), Arr::Aint(sdispls), sendtype),
                recvbuf,
                NSide::V(Arr::Count(recvcounts), Arr::Aint(rdispls), recvtype),
            )
        },
    )
}

pub(crate) unsafe fn MPI_Neighbor_alltoallw_init_c(
    sendbuf: *const c_void,
    sendcounts: *const MPI_Count,
    sdispls: *const MPI_Aint,
    sendtypes: *const MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const MPI_Count,
    rdispls: *const MPI_Aint,
    recvtypes: *const MPI_Datatype,
    comm: MPI_Comm,
    info: MPI_Info,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    super::coll::collective_init(
        comm,
        "MPI_Neighbor_alltoallw_init_c",
        info,
        request,
        |rt, c, s| {
            neighbor_alltoallv_build(
                rt,
                c,
                s,
                "MPI_Neighbor_alltoallw_init_c",
                sendbuf,
                NSide::W(Arr::Count(sendcounts), Arr::Aint(sdispls), sendtypes),
                recvbuf,
                NSide::W(Arr::Count(recvcounts), Arr::Aint(rdispls), recvtypes),
            )
        },
    )
}
