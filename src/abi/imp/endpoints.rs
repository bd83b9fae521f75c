//! Endpoint and thread communicators (`MPIX_Comm_create_endpoints`, `MPIX_Threadcomm_*`):
//! the C functions. The work is in `core::threads::endpoints`.

use super::util::out;
use crate::abi::consts::*;
use crate::abi::types::*;
use crate::core::error::{fail, MpiResult};
use crate::core::threads::endpoints;
use core::ffi::c_int;

pub(crate) unsafe fn MPIX_Comm_create_endpoints(
    parent_comm: MPI_Comm,
    my_num_ep: c_int,
    info: MPI_Info,
    out_comm_handles: *mut MPI_Comm,
) -> MpiResult<()> {
    if out_comm_handles.is_null() {
        return fail(MPI_ERR_ARG, "out_comm_handles must not be NULL");
    }
    let info = crate::core::objects::info::lookup_opt(info as usize)?.unwrap_or_default();
    let handles = endpoints::create(parent_comm as usize, my_num_ep, info)?;
    if handles.len() != my_num_ep as usize {
        return fail(
            MPI_ERR_INTERN,
            "too many communicators: not every endpoint could be created",
        );
    }
    for (i, h) in handles.into_iter().enumerate() {
        // SAFETY: the caller's array holds my_num_ep handles (MPIX contract), i < my_num_ep.
        unsafe { *out_comm_handles.add(i) = h as MPI_Comm };
    }
    Ok(())
}

pub(crate) unsafe fn MPIX_Threadcomm_init(
    comm: MPI_Comm,
    num_threads: c_int,
    newthreadcomm: *mut MPI_Comm,
) -> MpiResult<()> {
    let slot = out(newthreadcomm, "newthreadcomm")?;
    *slot = endpoints::threadcomm_init(comm as usize, num_threads)? as MPI_Comm;
    Ok(())
}

pub(crate) unsafe fn MPIX_Threadcomm_free(threadcomm: *mut MPI_Comm) -> MpiResult<()> {
    let slot = out(threadcomm, "threadcomm")?;
    endpoints::threadcomm_free(*slot as usize)?;
    *slot = MPI_COMM_NULL as MPI_Comm;
    Ok(())
}

pub(crate) unsafe fn MPIX_Threadcomm_start(threadcomm: MPI_Comm) -> MpiResult<()> {
    endpoints::threadcomm_start(threadcomm as usize)
}

pub(crate) unsafe fn MPIX_Threadcomm_finish(threadcomm: MPI_Comm) -> MpiResult<()> {
    endpoints::threadcomm_finish(threadcomm as usize)
}
