//! The nonblocking data-movement collectives (`MPI_Igather` to `MPI_Ialltoallw`, each with
//! its `_c` form): the builders of `coll_move.rs`, started and returned as a request.

use super::coll::collective;
use super::coll_move::*;
use crate::abi::types::*;
use crate::core::error::MpiResult;
use core::ffi::{c_int, c_void};

pub(crate) unsafe fn MPI_Igather(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    collective(comm, "MPI_Igather", Some(request), |rt, c, s| {
        gather(
            rt,
            c,
            s,
            "MPI_Igather",
            sendbuf,
            sendcount as i64,
            sendtype,
            recvbuf,
            recvcount as i64,
            recvtype,
            root,
        )
    })
}

pub(crate) unsafe fn MPI_Igather_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    collective(comm, "MPI_Igather_c", Some(request), |rt, c, s| {
        gather(
            rt,
            c,
            s,
            "MPI_Igather_c",
            sendbuf,
            sendcount,
            sendtype,
            recvbuf,
            recvcount,
            recvtype,
            root,
        )
    })
}

pub(crate) unsafe fn MPI_Igatherv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    displs: *const c_int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    collective(comm, "MPI_Igatherv", Some(request), |rt, c, s| {
        gatherv(
            rt,
            c,
            s,
            "MPI_Igatherv",
            sendbuf,
            sendcount as i64,
            sendtype,
            recvbuf,
            Arr::Int(recvcounts),
            Arr::Int(displs),
            recvtype,
            root,
        )
    })
}

pub(crate) unsafe fn MPI_Igatherv_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const MPI_Count,
    displs: *const MPI_Aint,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    collective(comm, "MPI_Igatherv_c", Some(request), |rt, c, s| {
        gatherv(
            rt,
            c,
            s,
            "MPI_Igatherv_c",
            sendbuf,
            sendcount,
            sendtype,
            recvbuf,
            Arr::Count(recvcounts),
            Arr::Aint(displs),
            recvtype,
            root,
        )
    })
}

pub(crate) unsafe fn MPI_Iscatter(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    collective(comm, "MPI_Iscatter", Some(request), |rt, c, s| {
        scatter(
            rt,
            c,
            s,
            "MPI_Iscatter",
            sendbuf,
            sendcount as i64,
            sendtype,
            recvbuf,
            recvcount as i64,
            recvtype,
            root,
        )
    })
}

pub(crate) unsafe fn MPI_Iscatter_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    collective(comm, "MPI_Iscatter_c", Some(request), |rt, c, s| {
        scatter(
            rt,
            c,
            s,
            "MPI_Iscatter_c",
            sendbuf,
            sendcount,
            sendtype,
            recvbuf,
            recvcount,
            recvtype,
            root,
        )
    })
}

pub(crate) unsafe fn MPI_Iscatterv(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    displs: *const c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    collective(comm, "MPI_Iscatterv", Some(request), |rt, c, s| {
        scatterv(
            rt,
            c,
            s,
            "MPI_Iscatterv",
            sendbuf,
            Arr::Int(sendcounts),
            Arr::Int(displs),
            sendtype,
            recvbuf,
            recvcount as i64,
            recvtype,
            root,
        )
    })
}

pub(crate) unsafe fn MPI_Iscatterv_c(
    sendbuf: *const c_void,
    sendcounts: *const MPI_Count,
    displs: *const MPI_Aint,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    collective(comm, "MPI_Iscatterv_c", Some(request), |rt, c, s| {
        scatterv(
            rt,
            c,
            s,
            "MPI_Iscatterv_c",
            sendbuf,
            Arr::Count(sendcounts),
            Arr::Aint(displs),
            sendtype,
            recvbuf,
            recvcount,
            recvtype,
            root,
        )
    })
}

pub(crate) unsafe fn MPI_Iallgather(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    collective(comm, "MPI_Iallgather", Some(request), |rt, c, s| {
        allgather(
            rt,
            c,
            s,
            "MPI_Iallgather",
            sendbuf,
            sendcount as i64,
            sendtype,
            recvbuf,
            recvcount as i64,
            recvtype,
        )
    })
}

pub(crate) unsafe fn MPI_Iallgather_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    collective(comm, "MPI_Iallgather_c", Some(request), |rt, c, s| {
        allgather(
            rt,
            c,
            s,
            "MPI_Iallgather_c",
            sendbuf,
            sendcount,
            sendtype,
            recvbuf,
            recvcount,
            recvtype,
        )
    })
}

pub(crate) unsafe fn MPI_Iallgatherv(
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
    collective(comm, "MPI_Iallgatherv", Some(request), |rt, c, s| {
        allgatherv(
            rt,
            c,
            s,
            "MPI_Iallgatherv",
            sendbuf,
            sendcount as i64,
            sendtype,
            recvbuf,
            Arr::Int(recvcounts),
            Arr::Int(displs),
            recvtype,
        )
    })
}

pub(crate) unsafe fn MPI_Iallgatherv_c(
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
    collective(comm, "MPI_Iallgatherv_c", Some(request), |rt, c, s| {
        allgatherv(
            rt,
            c,
            s,
            "MPI_Iallgatherv_c",
            sendbuf,
            sendcount,
            sendtype,
            recvbuf,
            Arr::Count(recvcounts),
            Arr::Aint(displs),
            recvtype,
        )
    })
}

pub(crate) unsafe fn MPI_Ialltoall(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    collective(comm, "MPI_Ialltoall", Some(request), |rt, c, s| {
        alltoall(
            rt,
            c,
            s,
            "MPI_Ialltoall",
            sendbuf,
            sendcount as i64,
            sendtype,
            recvbuf,
            recvcount as i64,
            recvtype,
        )
    })
}

pub(crate) unsafe fn MPI_Ialltoall_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    collective(comm, "MPI_Ialltoall_c", Some(request), |rt, c, s| {
        alltoall(
            rt,
            c,
            s,
            "MPI_Ialltoall_c",
            sendbuf,
            sendcount,
            sendtype,
            recvbuf,
            recvcount,
            recvtype,
        )
    })
}

pub(crate) unsafe fn MPI_Ialltoallv(
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
    collective(comm, "MPI_Ialltoallv", Some(request), |rt, c, s| {
        alltoallv(
            rt,
            c,
            s,
            "MPI_Ialltoallv",
            sendbuf,
            Arr::Int(sendcounts),
            Arr::Int(sdispls),
            sendtype,
            recvbuf,
            Arr::Int(recvcounts),
            Arr::Int(rdispls),
            recvtype,
        )
    })
}

pub(crate) unsafe fn MPI_Ialltoallv_c(
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
    collective(comm, "MPI_Ialltoallv_c", Some(request), |rt, c, s| {
        alltoallv(
            rt,
            c,
            s,
            "MPI_Ialltoallv_c",
            sendbuf,
            Arr::Count(sendcounts),
            Arr::Aint(sdispls),
            sendtype,
            recvbuf,
            Arr::Count(recvcounts),
            Arr::Aint(rdispls),
            recvtype,
        )
    })
}

pub(crate) unsafe fn MPI_Ialltoallw(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const c_int,
    sendtypes: *const MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const c_int,
    recvtypes: *const MPI_Datatype,
    comm: MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult<()> {
    collective(comm, "MPI_Ialltoallw", Some(request), |rt, c, s| {
        alltoallw(
            rt,
            c,
            s,
            "MPI_Ialltoallw",
            sendbuf,
            Arr::Int(sendcounts),
            Arr::Int(sdispls),
            sendtypes,
            recvbuf,
            Arr::Int(recvcounts),
            Arr::Int(rdispls),
            recvtypes,
        )
    })
}

pub(crate) unsafe fn MPI_Ialltoallw_c(
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
    collective(comm, "MPI_Ialltoallw_c", Some(request), |rt, c, s| {
        alltoallw(
            rt,
            c,
            s,
            "MPI_Ialltoallw_c",
            sendbuf,
            Arr::Count(sendcounts),
            Arr::Aint(sdispls),
            sendtypes,
            recvbuf,
            Arr::Count(recvcounts),
            Arr::Aint(rdispls),
            recvtypes,
        )
    })
}
