//! The network transport: ranks on different nodes, over a libfabric RDM endpoint with
//! tagged messages (default provider `tcp;ofi_rxm`, `HYMPI_OFI_PROVIDER` chooses another).
//!
//! It carries the same protocol messages as the node transport ([`Outgoing`] in,
//! [`Incoming`] out), in the same shape: a message is a 64-byte header and its payload in a
//! buffer of this rank's own. Receives land in a pool of posted buffers, the counterpart of
//! the node transport's cells: [`NetEngine::poll`] hands one out as an [`Incoming`] whose
//! `cell` is its buffer, and [`NetEngine::release`] posts it again. Sends are copied into
//! send buffers, so an eager send is complete once posted; when every send buffer is in
//! flight, items wait in FIFO order in `pending` (keeping MPI's per-pair order), as on the
//! node. Large messages use the protocol's rendezvous: the receiver answers `Rts` with `Cts`.
//! When its buffer is contiguous and takes the whole message, it first posts a tagged
//! receive straight into that buffer ([`NetEngine::recv_into`]) and flags the `Cts`; the
//! sender then posts its whole buffer as one tagged send with that receive's tag, and the
//! provider moves the bytes between the two user buffers (its own rendezvous for large
//! messages). The arrival is handed out as one `Data` message whose payload is already in
//! place. Otherwise the sender streams `Data` chunks of up to [`PAYLOAD_CAP`] bytes through
//! the buffers.
//!
//! Per-pair sequence numbers on matched messages (`Eager`, `EagerSync`, `Rts`) restore the
//! send order if a provider ever completes receives out of order.
//!
//! Peers are named by process index with [`NET_PEER`] set (the core tells the two transports'
//! peers apart by that bit): world ranks first, then processes of other jobs in the order
//! they were met ([`NetEngine::add_peer`], dynamic processes). Every header carries its
//! sender's job id and world rank, which the receiver maps to its index. Addresses of the
//! job's ranks are exchanged through the process manager's key-value space at `MPI_Init`
//! when the job spans nodes; a job on one node opens the engine when it first connects to
//! another job ([`NetEngine::open_late`]), and a connecting process introduces itself with
//! a [`Hello`] to a port of the accepting one.

pub mod ffi;
mod flush;
mod setup;

use crate::error::{MpiError, MpiResult};
use crate::mpi_abi::consts::*;
use crate::platform::bootstrap::Bootstrap;
use crate::platform::config::{self, Knob};
use crate::transport::lanes::{LaneBox, LaneTable};
use crate::transport::wire::{Envelope, Gather, Incoming, MsgKind, Outgoing};
use ffi::{Cqe, Endpoint, FiContext, FI_EAGAIN};
use std::collections::{HashMap, VecDeque};

/// Set in a peer index that names a rank of another node (the network transport's peer); the
/// other bits are its world rank. Without it, a peer index is a local rank of the node
/// transport.
pub const NET_PEER: u32 = 1 << 31;

/// `Hdr::kind` of a [`Hello`] (not a protocol message: the engine handles it itself).
const HELLO_KIND: u32 = 0x4845;

/// `Hdr::addr` of a [`HELLO_KIND`] message: a request, or the answer (port open or not).
const HELLO_ASK: u64 = 0;
const HELLO_WELCOME: u64 = 1;
const HELLO_REFUSED: u64 = 2;

/// The libfabric address of a process whose address is not known (yet).
const NO_ADDR: u64 = u64::MAX;

/// A process of another job (or of this one) asked to connect to one of this process's
/// ports (`MPI_Comm_connect`); kept until `MPI_Comm_accept` on that port takes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hello {
    /// The port it connects to (this process's port number).
    pub port: u32,
    /// The connection's tag, chosen by the connecting process.
    pub nonce: i32,
    /// Its process index (registered on arrival).
    pub peer: u32,
}

/// Bytes of one send or receive buffer: the header and a payload of 32 KiB, so that messages
/// of exactly 32 KiB (common: halves of 64 KiB, a ring's blocks) still go eagerly and a stream
/// moves aligned 32 KiB chunks.
const BUF: usize = 32 * 1024 + HDR;

/// Bytes of the header in front of every message.
const HDR: usize = std::mem::size_of::<Hdr>();

/// Payload bytes one message carries (eager messages and stream chunks).
pub const PAYLOAD_CAP: usize = BUF - HDR;

/// Receive buffers kept posted.
const RX_SLOTS: usize = 64;

/// Send buffers (messages in flight at once).
const TX_SLOTS: usize = 64;

/// The tag of protocol messages.
const TAG_MSG: u64 = 0;

/// Rendezvous data sent straight between user buffers: tag `TAG_DIRECT | receiver token`.
const TAG_DIRECT: u64 = 1 << 63;

/// Operations on user buffers (rendezvous data) in flight at once: the first half for
/// receives, the second for sends. Apart, because a posted receive waits for the peer's send:
/// were sends to wait for slots that receives hold, two ranks receiving from each other could
/// hold all their slots and never send.
const DIRECT_SLOTS: usize = 64;

/// Direct slots below this index are for receives.
const DIRECT_RECV_SLOTS: u32 = DIRECT_SLOTS as u32 / 2;

/// `Incoming::cell` of a receive made straight into a user buffer: `DIRECT_CELL + slot`.
const DIRECT_CELL: u32 = 1 << 30;

/// `Hdr::addr` of a `Cts` whose receiver posted its buffer: send the data in one piece.
const CTS_DIRECT: u64 = 1;

/// A rendezvous transfer between user buffers in flight.
#[derive(Debug)]
struct Direct {
    /// A receive (else a send).
    recv: bool,
    /// World rank of the peer.
    peer: u32,
    /// The receiver's request token (the tag); for a send, also the sender's in `sreq`.
    rreq: u64,
    sreq: u64,
    buf: *mut u8,
    len: usize,
    /// A send's packed copy, when its buffer had a layout (kept alive until the send
    /// completes: `buf` points into it).
    _packed: Vec<u8>,
}

/// The header of a message on the wire.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct Hdr {
    kind: u32,
    /// The sender's world rank.
    src: u32,
    ctx: u32,
    src_rank: i32,
    tag: i32,
    /// Payload bytes that follow.
    len: u32,
    seq: u32,
    /// The sender's job id (`NetEngine::job`): with `src`, names the sender.
    job: u32,
    total: u64,
    sreq: u64,
    rreq: u64,
    addr: u64,
}

const _: () = assert!(HDR == 64);

/// Bytes of a short header: the fields up to `sreq`, for a message whose `rreq` and `addr` are
/// zero (eager messages, acknowledgements). It lets a small message fit the provider's inject
/// size (`tcp;ofi_rxm`: 64 bytes, a whole header), which it sends without a completion.
const SHORT_HDR: usize = std::mem::offset_of!(Hdr, rreq);

/// Set in `Hdr::kind` on the wire: the header is short ([`SHORT_HDR`] bytes, `rreq` and
/// `addr` zero), its payload follows at that offset.
const SHORT_BIT: u32 = 1 << 31;

const _: () = assert!(SHORT_HDR == 48 && HELLO_KIND & SHORT_BIT == 0);

/// A rendezvous message being streamed (answer to a `Cts`).
#[derive(Debug)]
struct Stream {
    dest: u32,
    sreq: u64,
    rreq: u64,
    buf: *const u8,
    total: usize,
    off: usize,
    layout: Option<Box<dyn Gather>>,
}

/// The network transport's lanes: lane `k` is an engine of its own (endpoint, completion
/// queue, buffers); world peers' messages of context id `id` travel on lane `id % lanes`,
/// other jobs' processes are met on lane 0 only.
pub static NET_LANES: LaneTable<NetEngine> = LaneTable::new();

/// The runtime's handle to one lane of the network transport.
pub type NetBox = LaneBox<NetEngine>;

/// The network transport of one rank.
pub struct NetEngine {
    ep: Endpoint,
    me: u32,
    /// This job's id (the same on all its ranks).
    job: u32,
    /// World size of this job: process indices from here on are other jobs' processes.
    world: u32,
    /// This endpoint's address.
    name: Vec<u8>,
    /// libfabric address of each process index ([`NO_ADDR`]: not known).
    addrs: Vec<u64>,
    /// Process index of each process of another job met so far, by (job id, world rank).
    foreign: HashMap<(u32, u32), u32>,
    /// Connection requests received and not yet accepted.
    hellos: Vec<Hello>,
    /// Ports open (a `Hello` to another port is refused).
    ports: Vec<u32>,
    /// Answers to send to `Hello`s: (process index, port, nonce, accepted).
    answers_out: Vec<(u32, u32, i32, bool)>,
    /// Answers received to this process's `Hello`s: (process index, nonce, accepted).
    answers_in: Vec<(u32, i32, bool)>,
    /// `RX_SLOTS` receive buffers, then `TX_SLOTS` send buffers, `BUF` bytes each (as u64 for
    /// alignment).
    bufs: Box<[u64]>,
    /// The `fi_context` of each buffer's operation in flight (same order as `bufs`).
    ctxs: Box<[FiContext]>,
    tx_free: Vec<u32>,
    /// Receive buffers to post (again) once the provider takes them.
    rx_unposted: Vec<u32>,
    pending: VecDeque<Outgoing>,
    streams: Vec<Stream>,
    /// Messages taken from the completion queue, in order, not yet handed out.
    ready: VecDeque<Incoming>,
    /// Matched messages that arrived ahead of their sequence number.
    early: Vec<Incoming>,
    send_seq: Vec<u32>,
    recv_seq: Vec<u32>,
    /// Transfers between user buffers, by slot (their contexts follow the buffers' in `ctxs`).
    direct: Vec<Option<Direct>>,
    /// Free direct slots for receives and for sends.
    direct_free: [Vec<u32>; 2],
    /// Direct sends waiting for a slot or for the provider.
    direct_pending: VecDeque<Direct>,
    /// Receiver tokens of direct receives posted whose `Cts` is not sent yet.
    posted_direct: Vec<u64>,
    /// (peer, sender token) of flagged `Cts` received: their data goes in one piece.
    direct_wanted: Vec<(u32, u64)>,
    /// Sender tokens of direct sends completed, reported by the next flush.
    sends_done: Vec<u64>,
    /// Largest message the provider carries in one operation.
    max_msg: usize,
    /// Largest message (header included) sent as an inject: the provider copies it at once
    /// and reports no completion, so its buffer is free again right away.
    inject_max: usize,
    /// Smallest rendezvous received straight into the user buffer (`HYMPI_OFI_DIRECT_MIN`;
    /// `usize::MAX`: never).
    direct_min: usize,
    /// The first failure the provider reported (the job cannot go on).
    failed: Option<String>,
    /// Finalizing: errors from peers closing their connections are expected.
    closing: bool,
    provider: String,
}

// SAFETY: raw buffer pointers in pending items and streams refer to user buffers whose
// requests are still active; the engine is used under the runtime's access discipline, one
// thread at a time.
unsafe impl Send for NetEngine {}

impl std::fmt::Debug for NetEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NetEngine")
            .field("me", &self.me)
            .field("provider", &self.provider)
            .finish_non_exhaustive()
    }
}

/// Lowercase hex of `b`.
pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The bytes of lowercase or uppercase hex `s`.
pub fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// The provider to ask libfabric for: `HYMPI_OFI_PROVIDER` when set (empty: libfabric's
/// choice), else libfabric's choice when its own `FI_PROVIDER` is set, else the default.
fn provider_wanted() -> Option<String> {
    let p = if config::is_set(Knob::OfiProvider) || std::env::var_os("FI_PROVIDER").is_none() {
        config::text(Knob::OfiProvider)
    } else {
        String::new()
    };
    (!p.is_empty()).then_some(p)
}

/// Raises `ofi_rxm`'s eager limit to one of our buffers, unless the user set it: rxm sends
/// larger messages by segmentation or its own rendezvous, and its default (16 KiB) is below
/// our 32 KiB chunks, which then cost twice the time (two hosts: 1 MiB ping-pong 1128 against
/// 661 us, windowed bandwidth 0.96 against 1.95 GB/s). The limit sets no buffer size (the
/// tcp provider receives into ours), so memory is unchanged (118 MB resident either way).
/// libfabric reads it when its providers start, at our first `fi_getinfo`; that runs in
/// `MPI_Init`, before which the application has not been told it may use MPI from threads.
///
/// It also bounds rxm's shared receive pool to [`RXM_RX_POOL`] buffers (of rxm's own buffer
/// size) unless the user set `FI_OFI_RXM_MSG_RX_SIZE`: libfabric 1.17's default pool (4096
/// buffers) made every endpoint about 74 MB resident, which each network lane
/// pays (a rank of 2 on two virtual nodes: 99 against 48 MB with one lane, 322 against 115 MB
/// with four), with no change measured in message rate or bandwidth.
fn widen_rxm_eager_limit() {
    for (var, value) in [
        ("FI_OFI_RXM_EAGER_LIMIT", BUF),
        ("FI_OFI_RXM_MSG_RX_SIZE", RXM_RX_POOL),
    ] {
        if std::env::var_os(var).is_none() {
            std::env::set_var(var, value.to_string());
        }
    }
}

/// Buffers of `ofi_rxm`'s shared receive pool (see [`widen_rxm_eager_limit`]).
const RXM_RX_POOL: usize = 1024;

impl NetEngine {
    /// Buffer `slot` (header at its start).
    #[inline(always)]
    fn buf(&mut self, slot: u32) -> *mut u8 {
        let words = BUF / 8;
        // SAFETY: slot < RX_SLOTS + TX_SLOTS, so the offset stays inside `bufs`.
        unsafe { self.bufs.as_mut_ptr().add(slot as usize * words).cast() }
    }

    /// Buffer `slot`, for reading.
    #[inline(always)]
    fn buf_ro(&self, slot: u32) -> *const u8 {
        let words = BUF / 8;
        // SAFETY: slot < RX_SLOTS + TX_SLOTS, so the offset stays inside `bufs`.
        unsafe { self.bufs.as_ptr().add(slot as usize * words).cast() }
    }

    /// The context of buffer `slot`'s operation.
    #[inline(always)]
    fn ctx(&mut self, slot: u32) -> *mut FiContext {
        &mut self.ctxs[slot as usize]
    }

    /// The buffer whose operation `c` completed.
    fn slot_of(&self, c: &Cqe) -> Option<u32> {
        let base = self.ctxs.as_ptr() as usize;
        let at = c.ctx as usize;
        let size = std::mem::size_of::<FiContext>();
        (at >= base && at < base + self.ctxs.len() * size && (at - base).is_multiple_of(size))
            .then(|| ((at - base) / size) as u32)
    }

    /// Posts the receive buffers waiting for it (those the provider refused stay waiting).
    fn post_receives(&mut self) {
        while let Some(slot) = self.rx_unposted.pop() {
            let (buf, ctx) = (self.buf(slot), self.ctx(slot));
            // SAFETY: the buffer (BUF bytes) and its context belong to this slot, which has no
            // operation in flight, until its completion is polled.
            let rc = unsafe { self.ep.trecv(buf, BUF, TAG_MSG, 0, ctx) };
            if rc == -FI_EAGAIN {
                self.rx_unposted.push(slot);
                return;
            }
            if rc != 0 {
                self.fail(format!("fi_trecv: {}", ffi::strerror(rc as i64)));
                return;
            }
        }
    }

    fn fail(&mut self, what: String) {
        if self.failed.is_none() {
            self.failed = Some(what);
        }
    }

    /// Writes `h` and `n` payload bytes from `fill` into a free send buffer and posts it to
    /// world rank `dest`. False, with nothing sent, when no buffer is free or the provider's
    /// queue is full.
    fn emit(&mut self, dest: u32, mut h: Hdr, fill: impl FnOnce(&mut [u8])) -> bool {
        let Some(slot) = self.tx_free.pop() else {
            return false;
        };
        h.job = self.job;
        let n = h.len as usize;
        debug_assert!(n <= PAYLOAD_CAP);
        // A small message with a short header goes as an inject.
        let short = h.rreq == 0 && h.addr == 0 && SHORT_HDR + n <= self.inject_max;
        let head = if short {
            h.kind |= SHORT_BIT;
            SHORT_HDR
        } else {
            HDR
        };
        let buf = self.buf(slot);
        // SAFETY: the send buffer is ours (free) and holds HDR + PAYLOAD_CAP ≥ head + n bytes;
        // it is 8-byte aligned. The payload goes after the header's wire length (over the
        // zero `rreq` and `addr` of a short one).
        unsafe {
            buf.cast::<Hdr>().write(h);
            fill(std::slice::from_raw_parts_mut(buf.add(head), n));
        }
        let to = self.addrs[(dest & !NET_PEER) as usize];
        let inject = head + n <= self.inject_max;
        let rc = if inject {
            // SAFETY: the buffer holds head + n bytes, copied by the provider before it
            // returns.
            unsafe { self.ep.tinject(buf, head + n, to, TAG_MSG) }
        } else {
            let ctx = self.ctx(slot);
            // SAFETY: buffer and context stay ours until the send's completion returns the
            // slot.
            unsafe { self.ep.tsend(buf, HDR + n, to, TAG_MSG, ctx) }
        };
        // An inject's buffer is free once the call returns; a refused send's too.
        if inject || rc != 0 {
            self.tx_free.push(slot);
        }
        if rc == 0 {
            return true;
        }
        if rc != -FI_EAGAIN {
            self.fail(format!(
                "{} to rank {}: {}",
                if inject { "fi_tinject" } else { "fi_tsend" },
                dest & !NET_PEER,
                ffi::strerror(rc as i64)
            ));
        }
        false
    }

    /// Sends `o` if a send buffer is free (and the provider takes it).
    fn try_emit(&mut self, o: &Outgoing) -> bool {
        let me = self.me;
        match *o {
            Outgoing::Msg {
                dest,
                kind,
                env,
                sreq,
                buf,
                bytes,
            } => {
                let d = (dest & !NET_PEER) as usize;
                let seq = self.send_seq[d];
                let carried = if kind == MsgKind::Rts { 0 } else { bytes };
                let h = Hdr {
                    kind: kind as u32,
                    src: me,
                    ctx: env.ctx,
                    src_rank: env.src,
                    tag: env.tag,
                    len: carried as u32,
                    seq,
                    total: bytes as u64,
                    sreq,
                    // Only a rendezvous request names the sender's buffer: eager messages
                    // leave it zero, so that small ones take the short header.
                    addr: if kind == MsgKind::Rts { buf as u64 } else { 0 },
                    ..Hdr::default()
                };
                let sent = self.emit(dest, h, |out| {
                    if carried > 0 {
                        // SAFETY: the send buffer holds `bytes` bytes (eager sizes are
                        // checked against PAYLOAD_CAP by the caller's eager limit).
                        unsafe { std::ptr::copy_nonoverlapping(buf, out.as_mut_ptr(), carried) };
                    }
                });
                if sent {
                    self.send_seq[d] = seq.wrapping_add(1);
                }
                sent
            }
            Outgoing::RtsV {
                dest,
                env,
                sreq,
                total,
                ..
            } => {
                // The network has no vectored reads: the receiver asks for a stream.
                let d = (dest & !NET_PEER) as usize;
                let seq = self.send_seq[d];
                let h = Hdr {
                    kind: MsgKind::Rts as u32,
                    src: me,
                    ctx: env.ctx,
                    src_rank: env.src,
                    tag: env.tag,
                    seq,
                    total,
                    sreq,
                    rreq: crate::transport::wire::RTS_STREAM,
                    ..Hdr::default()
                };
                let sent = self.emit(dest, h, |_| {});
                if sent {
                    self.send_seq[d] = seq.wrapping_add(1);
                }
                sent
            }
            Outgoing::Split { dest, .. } => {
                // Splits are a node-transport protocol (CMA); the core never asks for one here.
                self.fail(format!(
                    "a split copy was asked of rank {} over the network",
                    dest & !NET_PEER
                ));
                true
            }
            Outgoing::Reply {
                dest,
                kind,
                sreq,
                rreq,
            } => {
                let direct = kind == MsgKind::Cts && self.posted_direct.contains(&rreq);
                let h = Hdr {
                    kind: kind as u32,
                    src: me,
                    sreq,
                    rreq,
                    addr: if direct { CTS_DIRECT } else { 0 },
                    ..Hdr::default()
                };
                let sent = self.emit(dest, h, |_| {});
                if sent && direct {
                    self.posted_direct.retain(|&t| t != rreq);
                }
                sent
            }
        }
    }

    /// Sends `o` now if a send buffer is free and nothing is queued before it; otherwise
    /// queues it. Returns true when it went out now.
    pub fn send_or_queue(&mut self, o: Outgoing) -> bool {
        if self.pending.is_empty() && self.try_emit(&o) {
            return true;
        }
        self.pending.push_back(o);
        false
    }

    /// Queues a stream of `Data` chunks (answer to a `Cts`); with a layout, `buf` is the base
    /// of the derived-datatype buffer and `total` its packed length.
    pub fn start_stream(
        &mut self,
        dest: u32,
        sreq: u64,
        rreq: u64,
        buf: *const u8,
        total: usize,
        layout: Option<Box<dyn Gather>>,
    ) {
        let peer = dest & !NET_PEER;
        if let Some(i) = self.direct_wanted.iter().position(|&w| w == (peer, sreq)) {
            // The receiver posted its buffer: one send of the whole message.
            self.direct_wanted.swap_remove(i);
            let packed = match layout {
                Some(l) => {
                    let mut v = vec![0u8; total];
                    // SAFETY: `buf` is the base of the active send, whose layout packs to
                    // `total` bytes.
                    unsafe { l.pack(buf as usize, 0, &mut v) };
                    v
                }
                None => Vec::new(),
            };
            let buf = if packed.is_empty() {
                buf as *mut u8
            } else {
                packed.as_ptr() as *mut u8
            };
            self.direct_pending.push_back(Direct {
                recv: false,
                peer,
                rreq,
                sreq,
                buf,
                len: total,
                _packed: packed,
            });
            self.post_direct_sends();
            return;
        }
        self.streams.push(Stream {
            dest,
            sreq,
            rreq,
            buf,
            total,
            off: 0,
            layout,
        });
    }

    /// Whether nothing waits to be sent, handed out or completed.
    pub fn idle(&self) -> bool {
        self.pending.is_empty()
            && self.streams.is_empty()
            && self.ready.is_empty()
            && self.early.is_empty()
            && self.tx_free.len() == TX_SLOTS
            && self.rx_unposted.is_empty()
            && self.direct_free[0].len() + self.direct_free[1].len() == DIRECT_SLOTS
            && self.direct_pending.is_empty()
            && self.sends_done.is_empty()
            && self.answers_out.is_empty()
    }

    /// Posts a receive of the `len`-byte message of rendezvous `rreq` from `peer` straight
    /// into `buf`, so that the sender, told by the `Cts`, sends it in one piece: whether it
    /// did (else the data comes in chunks). The arrival is handed out as one `Data` message
    /// whose payload is `buf` itself.
    ///
    /// # Safety
    /// `buf` must stay writable for `len` bytes until that `Data` message is released.
    pub unsafe fn recv_into(&mut self, peer: u32, rreq: u64, buf: *mut u8, len: usize) -> bool {
        if len == 0 || len < self.direct_min || len > self.max_msg {
            return false;
        }
        let Some(slot) = self.direct_free[0].pop() else {
            return false;
        };
        let ctx = self.ctx(Self::direct_ctx(slot));
        // SAFETY: the caller keeps the buffer writable until the message is released, which
        // is after this receive completed; the context is this free slot's.
        let rc = unsafe { self.ep.trecv(buf, len, TAG_DIRECT | rreq, 0, ctx) };
        if rc != 0 {
            self.free_direct(slot);
            if rc != -FI_EAGAIN {
                self.fail(format!("fi_trecv: {}", ffi::strerror(rc as i64)));
            }
            return false;
        }
        self.direct[slot as usize] = Some(Direct {
            recv: true,
            peer: peer & !NET_PEER,
            rreq,
            sreq: 0,
            buf,
            len,
            _packed: Vec::new(),
        });
        self.posted_direct.push(rreq);
        true
    }

    /// Gives direct slot `slot` back to its pool.
    fn free_direct(&mut self, slot: u32) {
        self.direct_free[(slot >= DIRECT_RECV_SLOTS) as usize].push(slot);
    }

    /// The index in `ctxs` of direct slot `slot`.
    fn direct_ctx(slot: u32) -> u32 {
        (RX_SLOTS + TX_SLOTS) as u32 + slot
    }

    /// Posts waiting direct sends while slots are free and the provider takes them.
    fn post_direct_sends(&mut self) {
        while !self.direct_pending.is_empty() {
            let Some(slot) = self.direct_free[1].pop() else {
                return;
            };
            let d = self.direct_pending.pop_front().expect("not empty");
            let ctx = self.ctx(Self::direct_ctx(slot));
            let to = self.addrs[d.peer as usize];
            // SAFETY: the send buffer (the user's, whose request completes only when this
            // send does, or the slot's own packed copy) and the context stay valid until the
            // completion frees the slot.
            let rc = unsafe { self.ep.tsend(d.buf, d.len, to, TAG_DIRECT | d.rreq, ctx) };
            if rc == 0 {
                self.direct[slot as usize] = Some(d);
                continue;
            }
            self.free_direct(slot);
            self.direct_pending.push_front(d);
            if rc != -FI_EAGAIN {
                let peer = self.direct_pending[0].peer;
                self.fail(format!(
                    "fi_tsend to rank {peer}: {}",
                    ffi::strerror(rc as i64)
                ));
            }
            return;
        }
    }

    /// A transfer between user buffers completed (`got` bytes for a receive).
    fn direct_done(&mut self, slot: u32, got: usize) {
        let Some(d) = self.direct[slot as usize].take() else {
            self.fail("a completion for a finished transfer".into());
            return;
        };
        if !d.recv {
            self.free_direct(slot);
            self.sends_done.push(d.sreq);
            return;
        }
        // Handed out as the whole message's one `Data` chunk; released by the protocol.
        let len = got.min(d.len);
        let m = Incoming {
            cell: DIRECT_CELL + slot,
            kind: MsgKind::Data,
            src_local: NET_PEER | d.peer,
            env: Envelope {
                ctx: 0,
                src: 0,
                tag: 0,
            },
            len,
            total: d.len as u64,
            sreq: 0,
            rreq: d.rreq,
            addr: 0,
            seq: 0,
        };
        self.direct[slot as usize] = Some(Direct { len, ..d });
        self.ready.push_back(m);
    }

    /// Receive buffer `slot` got a message of `got` bytes.
    fn arrived(&mut self, slot: u32, mut got: usize) {
        let buf = self.buf(slot);
        // SAFETY: a receive buffer holds BUF ≥ 4 bytes; it is aligned.
        if got >= SHORT_HDR && unsafe { buf.cast::<u32>().read() } & SHORT_BIT != 0 {
            if got > BUF - (HDR - SHORT_HDR) {
                self.fail(format!("a short-header message of {got} bytes"));
                self.rx_unposted.push(slot);
                return;
            }
            // Back to the full layout: the payload moves behind a whole header, whose `rreq`
            // and `addr` are zero.
            // SAFETY: the buffer holds `got` received bytes and room for HDR - SHORT_HDR more
            // (checked above); `copy` handles the overlap.
            unsafe {
                std::ptr::copy(buf.add(SHORT_HDR), buf.add(HDR), got - SHORT_HDR);
                std::ptr::write_bytes(buf.add(SHORT_HDR), 0, HDR - SHORT_HDR);
                let kind = buf.cast::<u32>();
                kind.write(kind.read() & !SHORT_BIT);
            }
            got += HDR - SHORT_HDR;
        }
        if got < HDR {
            self.fail(format!("a message of {got} bytes, shorter than its header"));
            self.rx_unposted.push(slot);
            return;
        }
        // SAFETY: the buffer holds a received message of at least HDR bytes; it is aligned.
        let mut h = unsafe { buf.cast::<Hdr>().read() };
        if h.kind == HELLO_KIND {
            self.hello_arrived(slot, h, got);
            return;
        }
        if h.job != self.job {
            // A process of another job: its index here.
            match self.foreign.get(&(h.job, h.src)) {
                Some(&i) => h.src = i,
                None => {
                    self.fail(format!(
                        "a message from rank {} of job {:08x}, which never connected",
                        h.src, h.job
                    ));
                    self.rx_unposted.push(slot);
                    return;
                }
            }
        }
        let Some(kind) = MsgKind::from_u32(h.kind) else {
            self.fail(format!("a message of unknown kind {}", h.kind));
            self.rx_unposted.push(slot);
            return;
        };
        if h.len as usize > got - HDR || h.src as usize >= self.recv_seq.len() {
            self.fail(format!(
                "a malformed message (kind {kind:?}, {} payload bytes of {got})",
                h.len
            ));
            self.rx_unposted.push(slot);
            return;
        }
        let m = Incoming {
            cell: slot,
            kind,
            src_local: NET_PEER | h.src,
            env: Envelope {
                ctx: h.ctx,
                src: h.src_rank,
                tag: h.tag,
            },
            len: h.len as usize,
            total: h.total,
            sreq: h.sreq,
            rreq: h.rreq,
            addr: h.addr,
            seq: h.seq,
        };
        if !matches!(kind, MsgKind::Eager | MsgKind::EagerSync | MsgKind::Rts) {
            if kind == MsgKind::Cts && h.addr == CTS_DIRECT {
                self.direct_wanted.push((h.src, h.sreq));
            }
            self.ready.push_back(m);
            return;
        }
        let src = h.src as usize;
        if h.seq != self.recv_seq[src] {
            self.early.push(m);
            return;
        }
        self.recv_seq[src] = h.seq.wrapping_add(1);
        self.ready.push_back(m);
        // Messages from the same sender that came ahead of this one follow it now.
        while let Some(i) = self
            .early
            .iter()
            .position(|e| (e.src_local & !NET_PEER) as usize == src && e.seq == self.recv_seq[src])
        {
            let e = self.early.swap_remove(i);
            self.recv_seq[src] = e.seq.wrapping_add(1);
            self.ready.push_back(e);
        }
    }

    /// A [`Hello`] arrived in receive buffer `slot`: registers its sender and keeps it for
    /// `MPI_Comm_accept`.
    #[cold]
    fn hello_arrived(&mut self, slot: u32, h: Hdr, got: usize) {
        let len = (h.len as usize).min(got - HDR);
        // SAFETY: the receive buffer holds `got` ≥ HDR + len bytes of the message.
        let name = unsafe { std::slice::from_raw_parts(self.buf_ro(slot).add(HDR), len) }.to_vec();
        self.rx_unposted.push(slot);
        if h.addr != HELLO_ASK {
            // An answer to one of ours: the sender is registered (we sent it the request).
            let peer = if h.job == self.job {
                Some(h.src)
            } else {
                self.foreign.get(&(h.job, h.src)).copied()
            };
            match peer {
                Some(p) => self.answers_in.push((p, h.tag, h.addr == HELLO_WELCOME)),
                None => self.fail("an answer from a process never asked".into()),
            }
            return;
        }
        match self.add_peer(h.job, h.src, &name) {
            Ok(peer) => {
                let open = self.ports.contains(&h.ctx);
                if open {
                    self.hellos.push(Hello {
                        port: h.ctx,
                        nonce: h.tag,
                        peer,
                    });
                }
                self.answers_out.push((peer, h.ctx, h.tag, open));
                self.send_answers();
            }
            Err(e) => self.fail(format!("a connection request: {e}")),
        }
    }

    /// Takes the next message addressed to this rank, in each sender's order.
    #[inline]
    pub fn poll(&mut self) -> Option<Incoming> {
        if self.ready.is_empty() {
            self.reap();
        }
        self.ready.pop_front()
    }

    /// Gives back message `m`, just polled, so that the next [`NetEngine::poll`] returns it
    /// again (a fast path that cannot handle it leaves it to the general progress engine).
    #[inline]
    pub fn unpoll(&mut self, m: Incoming) {
        self.ready.push_front(m);
    }

    /// Whether sends wait behind others (queued items or streams), so that a message sent
    /// now would overtake them.
    #[inline]
    pub fn has_outgoing(&self) -> bool {
        !self.pending.is_empty() || !self.streams.is_empty()
    }

    /// Sends a standard-mode eager message of `bytes` (at most [`PAYLOAD_CAP`]) to world rank
    /// `dest` now, if nothing is queued before it and a send buffer is free; false (nothing
    /// sent) otherwise. The payload is copied, and the message needs no reply, so it is
    /// complete once this returns true.
    ///
    /// # Safety
    /// `buf` holds `bytes` readable bytes.
    #[inline]
    pub unsafe fn send_eager_now(
        &mut self,
        dest: u32,
        env: Envelope,
        buf: *const u8,
        bytes: usize,
    ) -> bool {
        if bytes > PAYLOAD_CAP || !self.pending.is_empty() || (dest as usize) >= self.world as usize
        {
            return false;
        }
        if self.tx_free.is_empty() {
            self.reap();
        }
        self.try_emit(&Outgoing::Msg {
            dest: NET_PEER | dest,
            kind: MsgKind::Eager,
            env,
            sreq: 0,
            buf,
            bytes,
        })
    }

    /// The payload of message `m` (valid until it is released).
    pub fn payload(&self, m: &Incoming) -> &[u8] {
        if m.cell >= DIRECT_CELL {
            let d = self.direct[(m.cell - DIRECT_CELL) as usize]
                .as_ref()
                .expect("a direct receive handed out and not released");
            // SAFETY: the receive buffer holds the `len` bytes just received and stays valid
            // until the message is released (`recv_into`'s contract).
            return unsafe { std::slice::from_raw_parts(d.buf, m.len) };
        }
        let buf = self.buf_ro(m.cell);
        // SAFETY: the receive buffer is ours until released and holds HDR + len bytes of the
        // message (checked on arrival).
        unsafe { std::slice::from_raw_parts(buf.add(HDR), m.len) }
    }

    /// Posts the receive buffer of a handled message again.
    pub fn release(&mut self, cell: u32) {
        if cell >= DIRECT_CELL {
            let slot = cell - DIRECT_CELL;
            self.direct[slot as usize] = None;
            self.free_direct(slot);
            return;
        }
        self.rx_unposted.push(cell);
        self.post_receives();
    }
}

#[cfg(all(test, not(loom)))]
mod tests;

/// How long a rank waits, after a transfer failed because its peer is gone, for the launcher
/// to end the job with the cause before reporting the failure itself.
const PEER_GONE_GRACE: std::time::Duration = std::time::Duration::from_millis(1000);

/// Whether a completion error means the peer's end of the connection is gone.
fn peer_gone(err: i64) -> bool {
    [
        libc::EPIPE,
        libc::ECONNRESET,
        libc::ENOTCONN,
        libc::ECONNABORTED,
        libc::ECONNREFUSED,
    ]
    .iter()
    .any(|&e| i64::from(e) == err.abs())
}
