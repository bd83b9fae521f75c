//! What the point-to-point protocols put on the wire, whichever transport carries it: the
//! envelope of a message, the kinds of protocol messages, the messages a protocol hands to
//! a transport ([`Outgoing`]) and gets from it ([`Incoming`]), how contexts are numbered, and
//! the byte copy every path uses. The transports and the core both name these; they import
//! nothing from the core.

/// Who sent a message, on which context, with which tag.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Envelope {
    /// Context id.
    pub ctx: u32,
    /// Source rank in the communicator.
    pub src: i32,
    /// Tag.
    pub tag: i32,
}

/// A protocol message for a transport to carry (the node transport puts one in a cell).
#[derive(Debug)]
pub enum Outgoing {
    /// A message (eager or rendezvous announcement) from a user buffer.
    Msg {
        /// Destination: the peer's index in the transport (its local rank on the node
        /// transport).
        dest: u32,
        /// `Eager`, `EagerSync` or `Rts`.
        kind: MsgKind,
        /// Envelope (source is the sender's communicator rank).
        env: Envelope,
        /// Sender request token.
        sreq: u64,
        /// User buffer.
        buf: *const u8,
        /// Message length.
        bytes: usize,
    },
    /// A rendezvous announcement of a noncontiguous send: `nseg` (address, length) segments
    /// listed at `addr`, or `RTS_STREAM` (the receiver must answer `Cts`).
    RtsV {
        /// Destination: the peer's index in the transport (its local rank on the node
        /// transport).
        dest: u32,
        /// Envelope.
        env: Envelope,
        /// Sender request token.
        sreq: u64,
        /// Address of the segment list (0 for streams).
        addr: u64,
        /// Packed message length.
        total: u64,
        /// Segments listed, or `RTS_STREAM`.
        nseg: u64,
    },
    /// A split request to the sender: copy the tail of `total` bytes to `addr`.
    Split {
        /// Destination (the sender): its index in the transport, as for [`Outgoing::Msg`].
        dest: u32,
        /// Sender request token.
        sreq: u64,
        /// Receiver request token.
        rreq: u64,
        /// Receive buffer address in the receiver.
        addr: u64,
        /// Bytes of the (possibly truncated) message.
        total: u64,
    },
    /// A control reply (`Ack`, `Fin`, `Cts`, `SplitDone`).
    Reply {
        /// Destination: the peer's index in the transport (its local rank on the node
        /// transport).
        dest: u32,
        /// The kind.
        kind: MsgKind,
        /// Sender request token.
        sreq: u64,
        /// Receiver request token.
        rreq: u64,
    },
}

/// A protocol message a transport delivered (on the node transport: what a received cell
/// says, copied out of its header).
#[derive(Clone, Copy, Debug)]
pub struct Incoming {
    /// The transport's handle of the buffer holding the payload (the node transport's
    /// cell index), released once the payload was read.
    pub cell: u32,
    /// Kind.
    pub kind: MsgKind,
    /// The sender: its index in the transport that carried the message (its local rank on
    /// the node transport).
    pub src_local: u32,
    /// Envelope.
    pub env: Envelope,
    /// Payload bytes carried with it.
    pub len: usize,
    /// Total message bytes.
    pub total: u64,
    /// Sender request token.
    pub sreq: u64,
    /// Receiver request token.
    pub rreq: u64,
    /// Address or offset.
    pub addr: u64,
    /// Per-pair sequence number (matched kinds only).
    pub seq: u32,
}
/// The bytes of a send buffer laid out by a derived datatype, as a transport packs them
/// into its own buffers (the core's datatype layouts implement it).
pub trait Gather: std::fmt::Debug {
    /// Packs bytes `[from, from + out.len())` of the transfer whose buffer is at `base`.
    ///
    /// # Safety
    /// `base` is the buffer of a valid transfer of this layout (readable).
    unsafe fn pack(&self, base: usize, from: usize, out: &mut [u8]);
}

/// The segment count of a rendezvous announcement whose data must be streamed (packed into
/// the transport's buffers): the receiver answers `Cts`.
pub const RTS_STREAM: u64 = u64::MAX;

/// Wire contexts per context id (a communicator's point-to-point, collective and other
/// traffic each have their own).
pub const CONTEXTS_PER_ID: u32 = 4;

/// The point-to-point protocol's message kinds (the node transport carries one per cell).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MsgKind {
    /// Whole message in the cell.
    Eager = 1,
    /// Whole message in the cell; the receiver acknowledges the match (synchronous send).
    EagerSync = 2,
    /// Request to send: large message; `addr` is the sender's buffer.
    Rts = 3,
    /// Receiver to sender: the synchronous eager message `sreq` was matched.
    Ack = 4,
    /// Receiver to sender: rendezvous `sreq` is finished (data copied).
    Fin = 5,
    /// Receiver to sender: matched rendezvous `sreq`; stream the data to `rreq` through cells.
    Cts = 6,
    /// Sender to receiver: a chunk of a streamed rendezvous message at offset `addr`.
    Data = 7,
    /// Receiver to a waiting sender: copy bytes [split_point(total), total) of rendezvous
    /// `sreq` into the receive buffer at `addr` yourself (with `process_vm_writev`) while the
    /// receiver reads the first part: two cores copy one message.
    Split = 8,
    /// Sender to receiver: its part of split rendezvous `rreq` is written (`addr` = 0) or
    /// could not be (`addr` = 1: the receiver copies it).
    SplitDone = 9,
}

impl MsgKind {
    /// Decodes a kind word.
    pub fn from_u32(v: u32) -> Option<Self> {
        Some(match v {
            1 => Self::Eager,
            2 => Self::EagerSync,
            3 => Self::Rts,
            4 => Self::Ack,
            5 => Self::Fin,
            6 => Self::Cts,
            7 => Self::Data,
            8 => Self::Split,
            9 => Self::SplitDone,
            _ => return None,
        })
    }
}

/// Copies `n` bytes, with inline moves for the small messages that dominate latency-bound
/// codes (a libc `memcpy` call costs more than the copy below 16 bytes).
///
/// # Safety
/// `src` must be readable and `dst` writable for `n` bytes, and they must not overlap.
#[inline(always)]
pub unsafe fn copy_bytes(src: *const u8, dst: *mut u8, n: usize) {
    // SAFETY: every access below stays within the first `n` bytes of both buffers.
    unsafe {
        if (8..=16).contains(&n) {
            let a = (src as *const u64).read_unaligned();
            let b = (src.add(n - 8) as *const u64).read_unaligned();
            (dst as *mut u64).write_unaligned(a);
            (dst.add(n - 8) as *mut u64).write_unaligned(b);
        } else if n > 16 {
            std::ptr::copy_nonoverlapping(src, dst, n);
        } else if n >= 4 {
            let a = (src as *const u32).read_unaligned();
            let b = (src.add(n - 4) as *const u32).read_unaligned();
            (dst as *mut u32).write_unaligned(a);
            (dst.add(n - 4) as *mut u32).write_unaligned(b);
        } else {
            for i in 0..n {
                *dst.add(i) = *src.add(i);
            }
        }
    }
}
