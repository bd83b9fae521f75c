//! Point-to-point protocols: starting sends and receives, matching arrivals, completing
//! requests, and the progress engine that drives the node transport.
//!
//! Paths by destination: to oneself, messages are matched directly in this process (small
//! ones buffered, large or synchronous ones copied straight from the sender's buffer when the
//! receive matches); to a rank on the node, through [`ShmEngine`] (eager cells below
//! `eager_max`, rendezvous above); to a rank on another node, through [`crate::transport::ofi::NetEngine`] (the same
//! protocol messages; rendezvous data streamed). The handlers are generic over
//! [`Transport`], so each transport gets its own copy.

pub mod args;
pub mod bsend;
pub mod completion;
pub mod copy_choice;
pub mod fastpath;
pub mod leaf;
pub mod matching;
pub mod part;
mod progress;
pub mod request;
mod start;

use crate::core::datatype::{Layout, TypeInfo};
use crate::core::diag::stats::{self, Proto};
use crate::core::error::{fail, MpiResult};
use crate::core::objects::comm::Comm;
use crate::core::p2p::bsend::{BsendBuffer, Space};
use crate::core::p2p::copy_choice::CopyKind;
use crate::core::p2p::matching::{Envelope, Pattern, Payload, Posted, Unexpected, RTS_STREAM};
use crate::core::p2p::request::{ReqKind, Request, SendMode, Status, NO_PARENT};
use crate::core::runtime::tool::timestamp_ns;
use crate::core::runtime::Runtime;
use crate::core::threads::vci::vci_of_rid;
use crate::mpi_abi::consts::*;
use crate::transport::ofi::{NetEngine, NET_LANES, NET_PEER};
use crate::transport::shm::engine_ref::{self, EngineBox};
use crate::transport::shm::ShmEngine;
pub use crate::transport::wire::copy_bytes;
use crate::transport::wire::MsgKind;
use crate::transport::wire::{Incoming, Outgoing};
use crate::transport::Transport;
pub use progress::*;

/// Cells handled per progress call before returning to the caller.
const POLL_BATCH: usize = 64;

/// The error message of a buffered send of `bytes` bytes that does not fit in buffer `b`.
#[cold]
fn bsend_no_room(b: &BsendBuffer, bytes: usize) -> String {
    match b.space {
        Space::User { size, .. } => format!(
            "buffered send of {bytes} bytes does not fit in the attached buffer ({size} bytes, {} in use; each message also needs MPI_BSEND_OVERHEAD = {})",
            b.in_use(),
            crate::core::p2p::bsend::OVERHEAD
        ),
        _ => format!(
            "buffered send of {bytes} bytes with no buffer attached (MPI_Buffer_attach or MPI_Comm_attach_buffer)"
        ),
    }
}

/// Validated arguments of a send.
#[derive(Clone, Debug)]
pub struct SendArgs {
    /// Communicator index.
    pub comm: u32,
    /// Destination rank or `MPI_PROC_NULL`.
    pub dest: i32,
    /// Tag.
    pub tag: i32,
    /// Buffer.
    pub buf: *const u8,
    /// Bytes the elements span in the buffer.
    pub bytes: usize,
    /// Mode.
    pub mode: SendMode,
    /// Element layout of the datatype.
    pub unit: TypeInfo,
    /// Noncontiguous derived datatype: `buf` is its base and `bytes` the packed length.
    pub layout: Option<Layout>,
}

impl SendArgs {
    /// A private copy of the message data (packed for derived types), for sends whose buffer
    /// may change before they complete (`MPI_Isendrecv_replace`). Points `self` at nothing:
    /// the caller points `buf` at the copy's final home.
    pub fn take_copy(&mut self) -> Vec<u8> {
        match self.layout.take() {
            Some(l) => {
                let mut v = vec![0u8; l.bytes()];
                // SAFETY: `buf` is the base of a valid send of this layout.
                unsafe { l.pack(self.buf as usize, 0, &mut v) };
                self.unit = TypeInfo {
                    size: 1,
                    extent: 1,
                    head: 1,
                    tail_at: 1,
                    basic: 1,
                };
                v
            }
            // SAFETY: the send buffer holds `bytes` bytes (checked at validation).
            None => unsafe { raw_slice(self.buf, self.bytes) }.to_vec(),
        }
    }
}

/// Validated arguments of a receive.
#[derive(Clone, Debug)]
pub struct RecvArgs {
    /// Communicator index.
    pub comm: u32,
    /// Source rank, `MPI_ANY_SOURCE` or `MPI_PROC_NULL`.
    pub src: i32,
    /// Tag or `MPI_ANY_TAG`.
    pub tag: i32,
    /// Buffer.
    pub buf: *mut u8,
    /// Capacity in bytes.
    pub cap: usize,
    /// Element layout of the datatype.
    pub unit: TypeInfo,
    /// Noncontiguous derived datatype: `buf` is its base and `cap` the packed capacity.
    pub layout: Option<Layout>,
}

/// A rendezvous receive being copied in stealable chunks (`core::threads::steal`): completed, and the
/// sender told, once every chunk is done.
#[derive(Debug)]
pub struct PendingCopy {
    /// The receive request.
    pub rid: u32,
    /// Its copy.
    pub job: std::sync::Arc<crate::core::threads::steal::CopyJob>,
    /// The sender's local rank.
    pub src_local: u32,
    /// The sender's request token (for `Fin`).
    pub sreq: u64,
}

/// Checks a destination rank.
#[inline(always)]
pub fn check_dest(c: &Comm, dest: i32) -> MpiResult<()> {
    if (dest >= 0 && dest < c.peer_count()) || dest == MPI_PROC_NULL {
        Ok(())
    } else {
        fail(
            MPI_ERR_RANK,
            format!(
                "invalid destination rank {dest} (communicator {} has {} {}ranks)",
                c.name,
                c.peer_count(),
                if c.is_inter() { "remote " } else { "" }
            ),
        )
    }
}

/// Checks a source rank.
#[inline(always)]
pub fn check_source(c: &Comm, src: i32) -> MpiResult<()> {
    if (src >= 0 && src < c.peer_count()) || src == MPI_PROC_NULL || src == MPI_ANY_SOURCE {
        Ok(())
    } else {
        fail(
            MPI_ERR_RANK,
            format!(
                "invalid source rank {src} (communicator {} has {} {}ranks)",
                c.name,
                c.peer_count(),
                if c.is_inter() { "remote " } else { "" }
            ),
        )
    }
}

/// The largest tag (`MPI_TAG_UB`).
pub const TAG_UB: i32 = i32::MAX;

/// Tags at or below this value (far below the negative wildcards such as `MPI_ANY_TAG`) are
/// internal collective traffic: they travel on the
/// communicator's collective context (`ctx + 1`), out of reach of user receives and probes.
pub const INTERNAL_TAG_MAX: i32 = -1024;

/// The wire context of traffic with `tag` on communicator `c`.
#[inline(always)]
pub fn wire_ctx(c: &Comm, tag: i32) -> u32 {
    c.ctx + (tag <= INTERNAL_TAG_MAX) as u32
}

/// The wire context of a message with `tag` to rank `dest` of communicator `c`.
#[inline(always)]
pub fn send_wire_ctx(c: &Comm, dest: i32, tag: i32) -> u32 {
    c.dest_ctx(dest) + (tag <= INTERNAL_TAG_MAX) as u32
}

/// Checks a send tag.
#[inline(always)]
pub fn check_send_tag(tag: i32) -> MpiResult<()> {
    if tag >= 0 {
        Ok(())
    } else {
        fail(
            MPI_ERR_TAG,
            format!("invalid tag {tag} (tags are 0..={TAG_UB})"),
        )
    }
}

/// Checks that a receive or probe on `c` does not use a wildcard the communicator's
/// assertions ruled out (a communicator spread over the VCIs, `crate::core::threads::spread`).
#[inline(always)]
pub fn check_spread(c: &Comm, src: i32, tag: i32) -> MpiResult<()> {
    match crate::core::threads::spread::check_wildcards(c.context_id(), src, tag) {
        Ok(()) => Ok(()),
        Err((class, msg)) => fail(class, format!("{msg} ({})", c.name)),
    }
}

/// Checks a receive tag.
#[inline(always)]
pub fn check_recv_tag(tag: i32) -> MpiResult<()> {
    if tag >= 0 || tag == MPI_ANY_TAG {
        Ok(())
    } else {
        fail(
            MPI_ERR_TAG,
            format!("invalid tag {tag} (tags are 0..={TAG_UB} or MPI_ANY_TAG)"),
        )
    }
}
