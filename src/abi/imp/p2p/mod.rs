//! Point-to-point communication: the C functions, by family (one file each); the shared
//! helpers and imports are here.

use super::grequest;
use super::util::out;
use crate::abi::consts::*;
use crate::abi::entry::{self, Code, ErrObj, Leaf};
use crate::abi::types::*;
use crate::core::datatype;
use crate::core::error::{fail, MpiError, MpiResult};
pub(crate) use crate::core::p2p::args::buffer_bytes;
use crate::core::p2p::args::{recv_args, send_args};
use crate::core::p2p::bsend::{self, Scope, Space};
use crate::core::p2p::completion::{finish, ready, Fin};
use crate::core::p2p::fastpath;
use crate::core::p2p::leaf::{self, Locked};
use crate::core::p2p::matching::{Pattern, Payload};
use crate::core::p2p::request::{self, PersistentOp, ReqKind, SendMode, Status, DONE_SEND};
use crate::core::p2p::{check_recv_tag, check_source, check_spread, RecvArgs, SendArgs};
use crate::core::runtime::{self, Runtime};
use crate::core::threads::vci;
use core::ffi::{c_int, c_void};

mod buffer;
mod completion;
mod persistent;
mod probe;
mod send_recv;
mod sendrecv;
mod status;
mod wait;

pub(crate) use buffer::*;
pub(crate) use completion::*;
pub(crate) use persistent::*;
pub(crate) use probe::*;
pub(crate) use send_recv::*;
pub(crate) use sendrecv::*;
pub(crate) use status::*;
pub(crate) use wait::*;

#[inline(always)]
fn request_index(rt: &Runtime, h: MPI_Request) -> MpiResult<u32> {
    match rt.reqs.decode(h as usize) {
        Some(i) => Ok(i),
        None => fail(
            MPI_ERR_REQUEST,
            format!("invalid request handle {:#x}", h as usize),
        ),
    }
}

/// The error of a completed operation, directed at its communicator's handler, or for a
/// nonblocking file access (a request on a file's own communicator) at the file's.
#[cold]
fn status_error(rt: &Runtime, comm: u32, st: &Status) -> MpiError {
    let msg = match st.error {
        MPI_ERR_TRUNCATE => format!("message truncated: the receive buffer holds {} bytes but a longer message from rank {} (tag {}) arrived", st.bytes, st.source, st.tag),
        e => format!("operation failed: {}", crate::error::class_string(e)),
    };
    let handle = rt.comm_handle(comm);
    let obj = match rt.file_of_comm(handle) {
        Some(fh) => ErrObj::File(fh),
        None => ErrObj::Comm(handle),
    };
    MpiError::new(st.error, msg).on(obj)
}

#[inline]
unsafe fn write_status(status: *mut MPI_Status, st: &Status) {
    // SAFETY: MPI_STATUS_IGNORE is NULL; any other pointer is the caller's status.
    if let Some(s) = unsafe { status.as_mut() } {
        st.write(s, false);
    }
}
