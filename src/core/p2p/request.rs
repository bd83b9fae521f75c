//! Requests: the state of one nonblocking or persistent operation.

use crate::mpi_abi::consts::*;
use crate::mpi_abi::types::MPI_Status;

/// Completion information of an operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Status {
    /// Source rank (communicator rank) or `MPI_PROC_NULL` / `MPI_ANY_SOURCE`.
    pub source: i32,
    /// Tag.
    pub tag: i32,
    /// Error class of the operation.
    pub error: i32,
    /// Bytes received.
    pub bytes: u64,
    /// Whether the operation was cancelled.
    pub cancelled: bool,
}

impl Status {
    /// The "empty" status of a null or inactive request.
    pub const EMPTY: Status = Status {
        source: MPI_ANY_SOURCE,
        tag: MPI_ANY_TAG,
        error: MPI_SUCCESS,
        bytes: 0,
        cancelled: false,
    };
    /// The status of a receive from `MPI_PROC_NULL`.
    pub const PROC_NULL: Status = Status {
        source: MPI_PROC_NULL,
        tag: MPI_ANY_TAG,
        error: MPI_SUCCESS,
        bytes: 0,
        cancelled: false,
    };

    /// Writes this status into a C status (the `MPI_ERROR` field only when `with_error`, as
    /// single-completion calls leave it alone).
    #[inline]
    pub fn write(&self, out: &mut MPI_Status, with_error: bool) {
        out.MPI_SOURCE = self.source;
        out.MPI_TAG = self.tag;
        if with_error {
            out.MPI_ERROR = self.error;
        }
        set_bytes(out, self.bytes);
        out.MPI_internal[2] = self.cancelled as i32;
    }

    /// Reads a C status (as a generalized request's `query_fn` filled it), with `error` as
    /// the error of the operation.
    #[inline]
    pub fn from_c(st: &MPI_Status, error: i32) -> Status {
        Status {
            source: st.MPI_SOURCE,
            tag: st.MPI_TAG,
            error,
            bytes: get_bytes(st),
            cancelled: st.MPI_internal[2] != 0,
        }
    }
}

/// Stores a byte count in a C status.
#[inline]
pub fn set_bytes(out: &mut MPI_Status, bytes: u64) {
    out.MPI_internal[0] = bytes as u32 as i32;
    out.MPI_internal[1] = (bytes >> 32) as u32 as i32;
}

/// The byte count stored in a C status.
#[inline]
pub fn get_bytes(st: &MPI_Status) -> u64 {
    (st.MPI_internal[0] as u32 as u64) | ((st.MPI_internal[1] as u32 as u64) << 32)
}

/// Send modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendMode {
    /// `MPI_Send`.
    Standard,
    /// `MPI_Ssend`: completes once matched.
    Sync,
    /// `MPI_Bsend`: copied into the attached buffer.
    Buffered,
    /// `MPI_Rsend`: the receive is known to be posted.
    Ready,
}

/// Arguments kept by a persistent request for each `MPI_Start`.
#[derive(Clone, Debug)]
pub struct PersistentOp {
    /// Send mode, or `None` for a receive.
    pub send: Option<SendMode>,
    /// User buffer.
    pub buf: *mut u8,
    /// Bytes to move.
    pub bytes: usize,
    /// Destination or source rank.
    pub peer: i32,
    /// Tag.
    pub tag: i32,
    /// Communicator index.
    pub comm: u32,
    /// Element layout of the datatype.
    pub unit: crate::core::datatype::TypeInfo,
    /// Noncontiguous derived datatype.
    pub layout: Option<crate::core::datatype::Layout>,
}

/// What a request is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReqKind {
    /// A send.
    Send,
    /// A receive.
    Recv,
    /// A request created complete (e.g. `MPI_Ibsend` after the copy).
    Done,
    /// A generalized request (`MPI_Grequest_start`): complete once the user calls
    /// `MPI_Grequest_complete`; its callbacks are in `Extra::grequest`.
    Generalized,
}

/// Rarely used request state, kept out of line so the common request stays small.
#[derive(Debug, Default)]
pub struct Extra {
    /// Persistent collective: its operation between activations (the collective layer's
    /// schedule, which only that layer reads back; taken out while it runs).
    pub schedule: Option<Box<dyn std::any::Any>>,
    /// Persistent request arguments.
    pub persistent: Option<PersistentOp>,
    /// Streamed rendezvous receive: total bytes announced.
    pub stream_total: u64,
    /// Streamed rendezvous receive: bytes arrived so far.
    pub stream_got: u64,
    /// Rendezvous receive timed by `Runtime::copy_choice`: its size as started (0: untimed).
    pub timed_bytes: u64,
    /// Compound request: parts not yet complete.
    pub parts: u32,
    /// Receive of a datatype with holes: it lands packed in `scratch` and is spread to
    /// (user buffer, element layout) on completion.
    pub unpack: Option<(*mut u8, crate::core::datatype::TypeInfo)>,
    /// Compound request: data it owns while active (the send copy of
    /// `MPI_Isendrecv_replace`).
    pub scratch: Vec<u8>,
    /// Noncontiguous derived datatype of the user buffer (`Request::buf`): receives unpack
    /// into it, streamed sends pack from it.
    pub layout: Option<crate::core::datatype::Layout>,
    /// Vectored rendezvous send: the segments (address, length) the receiver reads.
    pub iov: Vec<[u64; 2]>,
    /// Partitioned request (`MPI_Psend_init` / `MPI_Precv_init`): its state (`core::p2p::part`).
    pub part: Option<Box<crate::core::p2p::part::Part>>,
    /// Generalized request (`MPI_Grequest_start`): its callbacks, taken out (`None`) once the
    /// request was handed over to be freed, so that they run only once.
    pub grequest: Option<Grequest>,
}

/// The user callbacks of a generalized request (`MPI_Grequest_start`): C function addresses
/// (0 for a NULL pointer, which is skipped) and the user's `extra_state`. They are only ever
/// called outside the runtime lock (`abi::imp::grequest`), since they may call MPI.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grequest {
    /// `MPI_Grequest_query_function *`: fills the status on completion.
    pub query: usize,
    /// `MPI_Grequest_free_function *`: called once when the request is freed.
    pub free: usize,
    /// `MPI_Grequest_cancel_function *`: called by `MPI_Cancel`.
    pub cancel: usize,
    /// The `extra_state` argument passed to each callback.
    pub extra_state: usize,
}

/// Bits of [`Request::flags`].
pub mod flag {
    /// Completed (for persistent requests: the current activation completed).
    pub const DONE: u8 = 1;
    /// Freed by the user while active: release on completion.
    pub const USER_FREED: u8 = 2;
    /// Internal request (buffered-send copy, part of a compound): release on completion, no
    /// user handle.
    pub const INTERNAL: u8 = 4;
    /// A persistent request (its arguments are in `extra`).
    pub const PERSISTENT: u8 = 8;
    /// Persistent request started and not yet completed by a wait or test (always set for
    /// other requests).
    pub const ACTIVE: u8 = 16;
    /// The buffer is laid out by a derived datatype (in `extra.layout`); `cap` counts packed
    /// bytes.
    pub const NONCONTIG: u8 = 32;
    /// The request may own out-of-line state ([`Request::extra`] set it): the fast paths,
    /// which compare the flags with exact values, take no such request, and so need not
    /// look at the state itself.
    pub const EXTRA: u8 = 64;
}

/// One operation.
#[derive(Debug)]
pub struct Request {
    /// Kind.
    pub kind: ReqKind,
    /// State bits ([`flag`]), one byte so that the fast paths test them with one compare; read
    /// and set through the accessors below.
    pub flags: u8,
    /// Communicator index (its error handler handles this request's errors).
    pub comm: u32,
    /// For a part of a compound operation (`MPI_Isendrecv`): the request it belongs to, or
    /// `NO_PARENT`.
    pub parent: u32,
    /// Completion information.
    pub status: Status,
    /// Receive buffer (or, for a rendezvous send, the send buffer).
    pub buf: *mut u8,
    /// Receive buffer capacity in bytes (or the rendezvous send length).
    pub cap: usize,
    /// Rarely used state, created by [`Request::extra`], which also sets [`flag::EXTRA`].
    extra: Option<Box<Extra>>,
}

macro_rules! flag_accessors {
    ($($get:ident, $set:ident => $bit:path;)*) => {$(
        #[doc = concat!("Whether [`", stringify!($bit), "`] is set.")]
        #[inline(always)]
        pub fn $get(&self) -> bool {
            self.flags & $bit != 0
        }
        #[doc = concat!("Sets or clears [`", stringify!($bit), "`].")]
        #[inline(always)]
        pub fn $set(&mut self, on: bool) {
            if on {
                self.flags |= $bit;
            } else {
                self.flags &= !$bit;
            }
        }
    )*};
}

impl Request {
    flag_accessors! {
        done, set_done => flag::DONE;
        user_freed, set_user_freed => flag::USER_FREED;
        internal, set_internal => flag::INTERNAL;
        persistent, set_persistent => flag::PERSISTENT;
        active, set_active => flag::ACTIVE;
        noncontig, set_noncontig => flag::NONCONTIG;
    }
}

/// `Request::parent` of a request that is not part of another.
pub const NO_PARENT: u32 = u32::MAX;

/// Index of the shared, permanently complete request that a send completed by the fast path
/// (to `MPI_PROC_NULL`, or to oneself; `core::p2p::fastpath`) returns, as MPICH's
/// lightweight requests do: such a send allocates nothing, and waiting for it only writes
/// `MPI_REQUEST_NULL`. It is never freed; completion calls recognise it by index.
pub const DONE_SEND: u32 = 0;

impl Request {
    /// A fresh, not yet completed request.
    #[inline]
    pub fn new(kind: ReqKind, comm: u32) -> Self {
        Request {
            kind,
            flags: flag::ACTIVE,
            comm,
            parent: NO_PARENT,
            status: Status::EMPTY,
            buf: std::ptr::null_mut(),
            cap: 0,
            extra: None,
        }
    }

    /// The shared complete send request stored at index [`DONE_SEND`].
    pub fn done_send() -> Self {
        Request {
            flags: flag::ACTIVE | flag::DONE,
            ..Request::new(ReqKind::Send, 0)
        }
    }

    /// The callbacks of a generalized request, if this is one and they were not taken yet.
    #[inline]
    pub fn grequest(&self) -> Option<Grequest> {
        self.extra.as_ref().and_then(|e| e.grequest)
    }

    /// The out-of-line state, created on first use (and [`flag::EXTRA`] set with it).
    pub fn extra(&mut self) -> &mut Extra {
        self.flags |= flag::EXTRA;
        self.extra.get_or_insert_with(Default::default)
    }

    /// The out-of-line state, if the request has some.
    #[inline]
    pub fn extra_ref(&self) -> Option<&Extra> {
        self.extra.as_deref()
    }

    /// The out-of-line state, mutable, if the request has some.
    #[inline]
    pub fn extra_mut(&mut self) -> Option<&mut Extra> {
        self.extra.as_deref_mut()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn flag_accessors_set_and_clear_one_bit() {
        let mut r = Request::new(ReqKind::Recv, 0);
        assert_eq!(r.flags, flag::ACTIVE);
        assert!(r.active() && !r.done() && !r.persistent());
        r.set_done(true);
        r.set_user_freed(true);
        r.set_internal(true);
        r.set_persistent(true);
        r.set_noncontig(true);
        r.set_active(false);
        assert!(r.done() && r.user_freed() && r.internal() && r.persistent() && r.noncontig());
        assert!(!r.active());
        r.set_done(false);
        assert!(!r.done() && r.user_freed() && r.noncontig());
        assert_eq!(Request::done_send().flags, flag::ACTIVE | flag::DONE);
    }
}
