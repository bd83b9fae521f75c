//! The blocking data-movement collectives (`MPI_Gather` to `MPI_Alltoallw`, each with its
//! `_c` form): each reads its arguments into the builder of `coll_move.rs` and runs the
//! schedule.

use super::coll::collective;
use super::coll_move::*;
use crate::abi::types::*;
use crate::core::error::MpiResult;
use core::ffi::{c_int, c_void};

pub(crate) unsafe fn MPI_Gather(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> MpiResult<()> {
    collective(comm, "MPI_Gather", None, |rt, c, s| {
        gather(
            rt,
            c,
            s,
            "MPI_Gather",
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

pub(crate) unsafe fn MPI_Gather_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> MpiResult<()> {
    collective(comm, "MPI_Gather_c", None, |rt, c, s| {
        gather(
            rt,
            c,
            s,
            "MPI_Gather_c",
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

pub(crate) unsafe fn MPI_Gatherv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    displs: *const c_int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> MpiResult<()> {
    collective(comm, "MPI_Gatherv", None, |rt, c, s| {
        gatherv(
            rt,
            c,
            s,
            "MPI_Gatherv",
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

pub(crate) unsafe fn MPI_Gatherv_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const MPI_Count,
    displs: *const MPI_Aint,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> MpiResult<()> {
    collective(comm, "MPI_Gatherv_c", None, |rt, c, s| {
        gatherv(
            rt,
            c,
            s,
            "MPI_Gatherv_c",
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

pub(crate) unsafe fn MPI_Scatter(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> MpiResult<()> {
    collective(comm, "MPI_Scatter", None, |rt, c, s| {
        scatter(
            rt,
            c,
            s,
            "MPI_Scatter",
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

pub(crate) unsafe fn MPI_Scatter_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> MpiResult<()> {
    collective(comm, "MPI_Scatter_c", None, |rt, c, s| {
        scatter(
            rt,
            c,
            s,
            "MPI_Scatter_c",
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

pub(crate) unsafe fn MPI_Scatterv(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    displs: *const c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> MpiResult<()> {
    collective(comm, "MPI_Scatterv", None, |rt, c, s| {
        scatterv(
            rt,
            c,
            s,
            "MPI_Scatterv",
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

pub(crate) unsafe fn MPI_Scatterv_c(
    sendbuf: *const c_void,
    sendcounts: *const MPI_Count,
    displs: *const MPI_Aint,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    recvtype: MPI_Datatype,
    root: c_int,
    comm: MPI_Comm,
) -> MpiResult<()> {
    collective(comm, "MPI_Scatterv_c", None, |rt, c, s| {
        scatterv(
            rt,
            c,
            s,
            "MPI_Scatterv_c",
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

pub(crate) unsafe fn MPI_Allgather(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> MpiResult<()> {
    // SAFETY: the buffers hold the call's data (the caller's MPI contract).
    if let Some(done) = unsafe {
        crate::coll::shm::allgather_now(
            comm as usize,
            sendbuf as usize,
            sendcount as i64,
            sendtype as usize,
            recvbuf as usize,
            recvcount as i64,
            recvtype as usize,
        )
    } {
        return done;
    }
    collective(comm, "MPI_Allgather", None, |rt, c, s| {
        allgather(
            rt,
            c,
            s,
            "MPI_Allgather",
            sendbuf,
            sendcount as i64,
            sendtype,
            recvbuf,
            recvcount as i64,
            recvtype,
        )
    })
}

pub(crate) unsafe fn MPI_Allgather_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> MpiResult<()> {
    collective(comm, "MPI_Allgather_c", None, |rt, c, s| {
        allgather(
            rt,
            c,
            s,
            "MPI_Allgather_c",
            sendbuf,
            sendcount,
            sendtype,
            recvbuf,
            recvcount,
            recvtype,
        )
    })
}

pub(crate) unsafe fn MPI_Allgatherv(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    displs: *const c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> MpiResult<()> {
    collective(comm, "MPI_Allgatherv", None, |rt, c, s| {
        allgatherv(
            rt,
            c,
            s,
            "MPI_Allgatherv",
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

pub(crate) unsafe fn MPI_Allgatherv_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const MPI_Count,
    displs: *const MPI_Aint,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> MpiResult<()> {
    collective(comm, "MPI_Allgatherv_c", None, |rt, c, s| {
        allgatherv(
            rt,
            c,
            s,
            "MPI_Allgatherv_c",
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

pub(crate) unsafe fn MPI_Alltoall(
    sendbuf: *const c_void,
    sendcount: c_int,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: c_int,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> MpiResult<()> {
    // SAFETY: the buffers hold the call's data (the caller's MPI contract).
    if let Some(done) = unsafe {
        crate::coll::shm::alltoall_now(
            comm as usize,
            sendbuf as usize,
            sendcount as i64,
            sendtype as usize,
            recvbuf as usize,
            recvcount as i64,
            recvtype as usize,
        )
    } {
        return done;
    }
    collective(comm, "MPI_Alltoall", None, |rt, c, s| {
        alltoall(
            rt,
            c,
            s,
            "MPI_Alltoall",
            sendbuf,
            sendcount as i64,
            sendtype,
            recvbuf,
            recvcount as i64,
            recvtype,
        )
    })
}

pub(crate) unsafe fn MPI_Alltoall_c(
    sendbuf: *const c_void,
    sendcount: MPI_Count,
    sendtype: MPI_Datatype,
    recvbuf: *mut c_void,
    recvcount: MPI_Count,
    recvtype: MPI_Datatype,
    comm: MPI_Comm,
) -> MpiResult<()> {
    collective(comm, "MPI_Alltoall_c", None, |rt, c, s| {
        alltoall(
            rt,
            c,
            s,
            "MPI_Alltoall_c",
            sendbuf,
            sendcount,
            sendtype,
            recvbuf,
            recvcount,
            recvtype,
        )
    })
}

pub(crate) unsafe fn MPI_Alltoallv(
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
    collective(comm, "MPI_Alltoallv", None, |rt, c, s| {
        alltoallv(
            rt,
            c,
            s,
            "MPI_Alltoallv",
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

pub(crate) unsafe fn MPI_Alltoallv_c(
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
    collective(comm, "MPI_Alltoallv_c", None, |rt, c, s| {
        alltoallv(
            rt,
            c,
            s,
            "MPI_Alltoallv_c",
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

pub(crate) unsafe fn MPI_Alltoallw(
    sendbuf: *const c_void,
    sendcounts: *const c_int,
    sdispls: *const c_int,
    sendtypes: *const MPI_Datatype,
    recvbuf: *mut c_void,
    recvcounts: *const c_int,
    rdispls: *const c_int,
    recvtypes: *const MPI_Datatype,
    comm: MPI_Comm,
) -> MpiResult<()> {
    collective(comm, "MPI_Alltoallw", None, |rt, c, s| {
        alltoallw(
            rt,
            c,
            s,
            "MPI_Alltoallw",
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

pub(crate) unsafe fn MPI_Alltoallw_c(
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
    collective(comm, "MPI_Alltoallw_c", None, |rt, c, s| {
        alltoallw(
            rt,
            c,
            s,
            "MPI_Alltoallw_c",
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
