//! Neighbourhood collectives on Cartesian, graph and distributed-graph communicators
//! (`MPI_Neighbor_allgather`, `MPI_Neighbor_alltoall` and their nonblocking, persistent and
//! big-count forms): one round with a receive from every source and a send to every
//! destination, in the order of the topology's neighbour lists (`MPI_PROC_NULL` neighbours of
//! a non-periodic grid are skipped, their blocks left untouched). Messages to the same
//! neighbour are matched in list order.

use super::coll::{collective, user_span};
use super::coll_move::span_at;
use crate::abi::consts::*;
use crate::abi::types::*;
use crate::coll::sched::Schedule;
use crate::coll::Ctx;
use crate::core::error::{fail, MpiResult};
use crate::core::runtime::Runtime;
use core::ffi::{c_int, c_void};

/// (sources, destinations) of this rank in the communicator's topology.
fn neighbors(rt: &Runtime, c: &Ctx, function: &str) -> MpiResult<(Vec<i32>, Vec<i32>)> {
    match rt.comms.get(c.comm).and_then(|k| k.topo.clone()) {
        Some(t) => t.neighbor_lists(c.rank),
        None => fail(
            MPI_ERR_TOPOLOGY,
            format!("{function} needs a communicator with a process topology"),
        ),
    }
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
    let (srcs, dsts) = neighbors(rt, c, "MPI_Neighbor_allgather")?;
    let send = user_span(rt, sendbuf, sendcount, sendtype)?;
    for (i, &src) in srcs.iter().enumerate() {
        let block = span_at(rt, recvbuf, i as i64 * recvcount, recvcount, recvtype)?;
        if src != MPI_PROC_NULL {
            s.recv(src, block);
        }
    }
    for &d in &dsts {
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
    let (srcs, dsts) = neighbors(rt, c, "MPI_Neighbor_alltoall")?;
    for (i, &src) in srcs.iter().enumerate() {
        let block = span_at(rt, recvbuf, i as i64 * recvcount, recvcount, recvtype)?;
        if src != MPI_PROC_NULL {
            s.recv(src, block);
        }
    }
    for (j, &d) in dsts.iter().enumerate() {
        let block = span_at(rt, sendbuf, j as i64 * sendcount, sendcount, sendtype)?;
        if d != MPI_PROC_NULL {
            s.send(d, block);
        }
    }
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
