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
    /// Opens this rank's endpoints (one per lane, `wanted` of them), publishes their addresses
    /// and connects the job's: collective over all ranks (it uses a bootstrap barrier). The
    /// job runs as many lanes as the rank that wants the fewest (every rank reads every
    /// rank's list), so the result has that many engines, lane 0 first; the other endpoints
    /// close.
    pub fn setup(
        boot: &mut dyn Bootstrap,
        me: u32,
        size: u32,
        job: u32,
        wanted: usize,
    ) -> MpiResult<Vec<NetEngine>> {
        let err = |what: String| MpiError::new(MPI_ERR_OTHER, format!("network transport: {what}"));
        let addr = config::text(Knob::OfiAddr);
        widen_rxm_eager_limit();
        let mut eps = Vec::with_capacity(wanted.max(1));
        let mut mine = Vec::with_capacity(wanted.max(1));
        for _ in 0..wanted.max(1) {
            let ep = Endpoint::open(
                provider_wanted().as_deref(),
                (!addr.is_empty()).then_some(addr.as_str()),
            )
            .map_err(err)?;
            mine.push(hex(&ep.name().map_err(err)?));
            eps.push(ep);
        }
        let io = |e: std::io::Error| err(format!("address exchange: {e}"));
        boot.put(&format!("ofi-{me}"), &mine.join(","))
            .map_err(io)?;
        boot.barrier().map_err(io)?;
        // names[r][lane]: rank r's address on each of its lanes.
        let mut names: Vec<Vec<Vec<u8>>> = Vec::with_capacity(size as usize);
        for r in 0..size {
            let v = boot.get(&format!("ofi-{r}")).map_err(io)?;
            let lanes: Option<Vec<Vec<u8>>> =
                v.as_deref().and_then(|v| v.split(',').map(unhex).collect());
            match lanes {
                Some(l) if !l.is_empty() => names.push(l),
                _ => {
                    return Err(err(format!(
                    "rank {r} published no network address (is it running hympi with the same provider?)"
                )))
                }
            }
        }
        let lanes = names.iter().map(Vec::len).min().unwrap_or(1).min(eps.len());
        eps.truncate(lanes);
        let mut engines = Vec::with_capacity(lanes);
        for (lane, ep) in eps.into_iter().enumerate() {
            let of_lane: Vec<Vec<u8>> = names.iter().map(|l| l[lane].clone()).collect();
            let addrs = ep.insert(&of_lane).map_err(err)?;
            let name = of_lane[me as usize].clone();
            engines.push(NetEngine::start(ep, me, job, name, addrs).map_err(err)?);
        }
        Ok(engines)
    }

    /// Opens the engine of world rank `me` of a job of `size` ranks (id `job`) on its own,
    /// knowing no peer yet: for a job on one node that connects to another job
    /// (`MPI_Comm_accept`, `MPI_Comm_connect`, `MPI_Comm_join`). Not collective.
    pub fn open_late(me: u32, size: u32, job: u32) -> MpiResult<NetEngine> {
        let err = |what: String| MpiError::new(MPI_ERR_OTHER, format!("network transport: {what}"));
        let addr = config::text(Knob::OfiAddr);
        widen_rxm_eager_limit();
        let ep = Endpoint::open(
            provider_wanted().as_deref(),
            (!addr.is_empty()).then_some(addr.as_str()),
        )
        .map_err(err)?;
        let name = ep.name().map_err(err)?;
        NetEngine::start(ep, me, job, name, vec![NO_ADDR; size as usize]).map_err(err)
    }

    /// The engine of world rank `me` on open endpoint `ep` (address `name`), given the
    /// libfabric address of every world rank.
    fn start(
        ep: Endpoint,
        me: u32,
        job: u32,
        name: Vec<u8>,
        addrs: Vec<u64>,
    ) -> Result<NetEngine, String> {
        let provider = ep.provider();
        let max_msg = ep.max_msg().min(usize::MAX as u64) as usize;
        let inject_max = ep.inject_max().min(BUF as u64) as usize;
        let size = addrs.len();
        let slots = RX_SLOTS + TX_SLOTS;
        let mut e = NetEngine {
            ep,
            me,
            job,
            world: size as u32,
            name,
            addrs,
            foreign: HashMap::new(),
            hellos: Vec::new(),
            ports: Vec::new(),
            answers_out: Vec::new(),
            answers_in: Vec::new(),
            // Filled (not zeroed, which would leave the pages unmapped until first use), so
            // the buffers are resident from the start: no page faults on the message path.
            bufs: vec![!0u64; slots * BUF / 8].into_boxed_slice(),
            ctxs: vec![FiContext::default(); slots + DIRECT_SLOTS].into_boxed_slice(),
            tx_free: (RX_SLOTS as u32..slots as u32).rev().collect(),
            rx_unposted: (0..RX_SLOTS as u32).collect(),
            pending: VecDeque::new(),
            streams: Vec::new(),
            ready: VecDeque::new(),
            early: Vec::new(),
            send_seq: vec![0; size],
            recv_seq: vec![0; size],
            direct: (0..DIRECT_SLOTS).map(|_| None).collect(),
            direct_free: [
                (0..DIRECT_RECV_SLOTS).rev().collect(),
                (DIRECT_RECV_SLOTS..DIRECT_SLOTS as u32).rev().collect(),
            ],
            direct_pending: VecDeque::new(),
            posted_direct: Vec::new(),
            direct_wanted: Vec::new(),
            sends_done: Vec::new(),
            max_msg,
            inject_max,
            direct_min: match config::setting(Knob::OfiDirectMin) {
                config::Setting::Value(v) => v as usize,
                _ => usize::MAX,
            },
            failed: None,
            closing: false,
            provider,
        };
        e.post_receives();
        match e.failed.take() {
            Some(f) => Err(f),
            None => Ok(e),
        }
    }

    /// The libfabric provider in use.
    pub fn provider(&self) -> &str {
        &self.provider
    }

    /// This endpoint's address (what other processes give [`NetEngine::add_peer`]).
    pub fn address(&self) -> &[u8] {
        &self.name
    }

    /// Process indices in use: the world's ranks and the other jobs' processes met so far.
    pub fn process_count(&self) -> u32 {
        self.addrs.len() as u32
    }

    /// The process index of world rank `rank` of job `job` at address `name`, registering
    /// it when it is new (a process of this job gets its world rank).
    pub fn add_peer(&mut self, job: u32, rank: u32, name: &[u8]) -> Result<u32, String> {
        let idx = if job == self.job {
            if rank >= self.world {
                return Err(format!(
                    "rank {rank} of this job, which has {} ranks",
                    self.world
                ));
            }
            if self.addrs[rank as usize] != NO_ADDR {
                return Ok(rank);
            }
            rank
        } else if let Some(&i) = self.foreign.get(&(job, rank)) {
            return Ok(i);
        } else {
            self.addrs.len() as u32
        };
        let a = self.ep.insert(&[name.to_vec()])?[0];
        if idx == self.addrs.len() as u32 {
            self.addrs.push(a);
            self.send_seq.push(0);
            self.recv_seq.push(0);
            self.foreign.insert((job, rank), idx);
        } else {
            self.addrs[idx as usize] = a;
        }
        Ok(idx)
    }

    /// Sends a [`Hello`] to port `port` of process `dest` (registered): this process asks to
    /// connect, in connection `nonce`. False when no send buffer is free (try again).
    pub fn send_hello(&mut self, dest: u32, port: u32, nonce: i32) -> bool {
        let name = std::mem::take(&mut self.name);
        let h = Hdr {
            kind: HELLO_KIND,
            src: self.me,
            ctx: port,
            tag: nonce,
            len: name.len() as u32,
            ..Hdr::default()
        };
        let sent = self.emit(NET_PEER | dest, h, |out| out.copy_from_slice(&name));
        self.name = name;
        sent
    }

    /// Takes the oldest connection request to port `port`, if any.
    pub fn take_hello(&mut self, port: u32) -> Option<Hello> {
        self.reap();
        let i = self.hellos.iter().position(|h| h.port == port)?;
        Some(self.hellos.remove(i))
    }

    /// The answer of process `peer` to this process's `Hello` `nonce`, once it came: whether
    /// its port was open.
    pub fn take_answer(&mut self, peer: u32, nonce: i32) -> Option<bool> {
        self.reap();
        let i = self
            .answers_in
            .iter()
            .position(|&(p, n, _)| (p, n) == (peer, nonce))?;
        Some(self.answers_in.swap_remove(i).2)
    }

    /// Opens port `port`: `Hello`s to it are welcomed and kept for [`NetEngine::take_hello`].
    pub fn open_port(&mut self, port: u32) {
        self.ports.push(port);
    }

    /// Closes port `port`: requests to it not yet accepted are forgotten, later ones refused.
    pub fn close_port(&mut self, port: u32) {
        self.ports.retain(|&p| p != port);
        self.hellos.retain(|h| h.port != port);
    }

    /// Sends the answers to `Hello`s that could not go out when they were due.
    fn send_answers(&mut self) {
        while let Some(&(dest, port, nonce, ok)) = self.answers_out.first() {
            let h = Hdr {
                kind: HELLO_KIND,
                src: self.me,
                ctx: port,
                tag: nonce,
                addr: if ok { HELLO_WELCOME } else { HELLO_REFUSED },
                ..Hdr::default()
            };
            if !self.emit(NET_PEER | dest, h, |_| {}) {
                return;
            }
            self.answers_out.remove(0);
        }
    }

    /// The first failure the provider reported, if any: the job cannot go on.
    #[inline]
    pub fn failure(&self) -> Option<&str> {
        self.failed.as_deref()
    }

    /// Marks the engine as finalizing (`true`: peers closing their connections is expected
    /// now) or as in use again (`false`: a session woke a quiesced runtime).
    pub fn set_closing(&mut self, closing: bool) {
        self.closing = closing;
    }

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

    /// Sends queued items in order, then stream chunks; eager sends that went out and
    /// streams fully sent are reported in `done` (their requests are complete). Returns
    /// whether anything was sent.
    pub fn flush(&mut self, done: &mut Vec<u64>) -> bool {
        self.reap();
        if !self.answers_out.is_empty() {
            self.send_answers();
        }
        if !self.rx_unposted.is_empty() {
            self.post_receives();
        }
        if !self.direct_pending.is_empty() {
            self.post_direct_sends();
        }
        let mut any = !self.sends_done.is_empty();
        done.append(&mut self.sends_done);
        while let Some(o) = self.pending.pop_front() {
            if !self.try_emit(&o) {
                self.pending.push_front(o);
                break;
            }
            if let Outgoing::Msg {
                kind: MsgKind::Eager,
                sreq,
                ..
            } = o
            {
                done.push(sreq);
            }
            any = true;
        }
        let me = self.me;
        let mut i = 0;
        while i < self.streams.len() {
            loop {
                let s = &self.streams[i];
                if s.off >= s.total {
                    break;
                }
                let n = PAYLOAD_CAP.min(s.total - s.off);
                let h = Hdr {
                    kind: MsgKind::Data as u32,
                    src: me,
                    len: n as u32,
                    total: s.total as u64,
                    sreq: s.sreq,
                    rreq: s.rreq,
                    addr: s.off as u64,
                    ..Hdr::default()
                };
                let (dest, base, off, layout) = (s.dest, s.buf, s.off, s.layout.as_deref());
                // The closure borrows the stream's layout while `emit` borrows the engine:
                // take the layout out for the call.
                let layout_ptr = layout.map(|l| l as *const dyn Gather);
                let sent = self.emit(dest, h, |out| match layout_ptr {
                    // SAFETY: [off, off + n) lies in the active send's buffer (its layout's
                    // packed length is `total`); the layout outlives the call (it is owned
                    // by the stream, which is not touched meanwhile).
                    Some(l) => unsafe { (*l).pack(base as usize, off, out) },
                    // SAFETY: as above, for a contiguous buffer of `total` bytes.
                    None => unsafe {
                        std::ptr::copy_nonoverlapping(base.add(off), out.as_mut_ptr(), n)
                    },
                });
                if !sent {
                    break;
                }
                self.streams[i].off += n;
                any = true;
            }
            if self.streams[i].off >= self.streams[i].total {
                done.push(self.streams[i].sreq);
                self.streams.swap_remove(i);
            } else {
                i += 1;
            }
        }
        any
    }

    /// Reads the completion queue: arrived messages go to `ready` (in each sender's order),
    /// finished sends free their buffers.
    fn reap(&mut self) {
        let mut cqes = [Cqe::default(); 32];
        loop {
            let (n, failed) = match self.ep.poll(&mut cqes) {
                Ok(r) => r,
                Err(e) => {
                    self.fail(e);
                    return;
                }
            };
            if n == 0 {
                return;
            }
            if let Some(msg) = failed {
                self.failed_op(&cqes[0], msg);
                continue;
            }
            for c in &cqes[..n] {
                let Some(slot) = self.slot_of(c) else {
                    self.fail("a completion for an unknown operation".into());
                    continue;
                };
                if (slot as usize) < RX_SLOTS {
                    self.arrived(slot, c.len as usize);
                } else if (slot as usize) < RX_SLOTS + TX_SLOTS {
                    self.tx_free.push(slot);
                } else {
                    self.direct_done(slot - (RX_SLOTS + TX_SLOTS) as u32, c.len as usize);
                }
            }
            if n < cqes.len() {
                return;
            }
        }
    }

    /// A failed operation: its buffer comes back; unless finalizing, the job cannot go on.
    #[cold]
    fn failed_op(&mut self, c: &Cqe, msg: String) {
        match self.slot_of(c) {
            Some(slot) if (slot as usize) < RX_SLOTS => self.rx_unposted.push(slot),
            Some(slot) if (slot as usize) < RX_SLOTS + TX_SLOTS => self.tx_free.push(slot),
            Some(slot) => {
                let d = slot - (RX_SLOTS + TX_SLOTS) as u32;
                self.direct[d as usize] = None;
                self.free_direct(d);
            }
            None => {}
        }
        if !self.closing {
            if peer_gone(c.err) {
                // The peer's process or host is gone. Its launcher knows why (a rank killed,
                // a host lost) and ends the job with that report within a fraction of a
                // second; give it the chance, rather than ending the job first with a report
                // that only says a connection broke.
                std::thread::sleep(PEER_GONE_GRACE);
            }
            self.fail(format!(
                "a transfer failed: {} ({msg})",
                ffi::strerror(c.err)
            ));
        }
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
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips() {
        let b = [0u8, 1, 0x7f, 0x80, 0xff];
        assert_eq!(hex(&b), "00017f80ff");
        assert_eq!(unhex("00017f80ff").as_deref(), Some(&b[..]));
        assert_eq!(unhex("0"), None);
        assert_eq!(unhex("zz"), None);
    }

    /// Two engines of one process (ranks 0 and 1) on provider `prov` over loopback.
    fn pair(prov: &str) -> (NetEngine, NetEngine) {
        let a = Endpoint::open(Some(prov), Some("127.0.0.1")).expect("endpoint 0");
        let b = Endpoint::open(Some(prov), Some("127.0.0.1")).expect("endpoint 1");
        let names = vec![a.name().unwrap(), b.name().unwrap()];
        let (aa, ba) = (a.insert(&names).unwrap(), b.insert(&names).unwrap());
        let (mut a, mut b) = (
            NetEngine::start(a, 0, 7, names[0].clone(), aa).unwrap(),
            NetEngine::start(b, 1, 7, names[1].clone(), ba).unwrap(),
        );
        // The tests use the direct path whatever HYMPI_OFI_DIRECT_MIN says.
        a.direct_min = 1;
        b.direct_min = 1;
        (a, b)
    }

    /// Polls `rx` (flushing both) until a message arrives; the sender's completed tokens
    /// go to `done`.
    fn next_done(tx: &mut NetEngine, rx: &mut NetEngine, done: &mut Vec<u64>) -> Incoming {
        let mut other = Vec::new();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while std::time::Instant::now() < deadline {
            tx.flush(done);
            rx.flush(&mut other);
            if let Some(m) = rx.poll() {
                return m;
            }
        }
        panic!("no message arrived (sender failure: {:?})", tx.failure());
    }

    /// [`next_done`] when the sender's completions do not matter.
    fn next(tx: &mut NetEngine, rx: &mut NetEngine) -> Incoming {
        next_done(tx, rx, &mut Vec::new())
    }

    fn eager(dest: u32, tag: i32, data: &[u8]) -> Outgoing {
        Outgoing::Msg {
            dest: NET_PEER | dest,
            kind: MsgKind::Eager,
            env: Envelope {
                ctx: 4,
                src: 0,
                tag,
            },
            sreq: 7,
            buf: data.as_ptr(),
            bytes: data.len(),
        }
    }

    /// Small messages, which go with a short header (and as injects where the provider's
    /// inject size takes them), arrive with every field and payload byte as sent: eager
    /// payloads of 0-40 bytes (across the short/full boundary), a synchronous send's token,
    /// a rendezvous request's buffer address, and replies.
    fn small_messages_arrive_whole(prov: &str) {
        let (mut a, mut b) = pair(prov);
        let data: Vec<u8> = (0..64u8)
            .map(|i| i.wrapping_mul(7).wrapping_add(1))
            .collect();
        for (i, n) in (0..=40).enumerate() {
            let kind = [MsgKind::Eager, MsgKind::EagerSync][i % 2];
            a.send_or_queue(Outgoing::Msg {
                dest: NET_PEER | 1,
                kind,
                env: Envelope {
                    ctx: 9,
                    src: 0,
                    tag: 100 + n as i32,
                },
                sreq: 1000 + n as u64,
                buf: data.as_ptr(),
                bytes: n,
            });
            let r = next(&mut a, &mut b);
            assert_eq!((r.kind, r.env.ctx, r.env.tag), (kind, 9, 100 + n as i32));
            assert_eq!(
                (r.sreq, r.rreq, r.addr, r.total),
                (1000 + n as u64, 0, 0, n as u64)
            );
            assert_eq!(b.payload(&r), &data[..n], "payload of {n} bytes");
            b.release(r.cell);
        }
        // A rendezvous request keeps its full header: the buffer address arrives.
        a.send_or_queue(Outgoing::Msg {
            dest: NET_PEER | 1,
            kind: MsgKind::Rts,
            env: Envelope {
                ctx: 9,
                src: 0,
                tag: 5,
            },
            sreq: 44,
            buf: data.as_ptr(),
            bytes: 1 << 20,
        });
        let r = next(&mut a, &mut b);
        assert_eq!((r.kind, r.sreq, r.total), (MsgKind::Rts, 44, 1 << 20));
        assert_eq!(r.addr, data.as_ptr() as u64);
        b.release(r.cell);
        for (kind, rreq) in [(MsgKind::Ack, 0), (MsgKind::Cts, 12)] {
            b.send_or_queue(Outgoing::Reply {
                dest: NET_PEER,
                kind,
                sreq: 31,
                rreq,
            });
            let r = next(&mut b, &mut a);
            assert_eq!((r.kind, r.sreq, r.rreq), (kind, 31, rreq));
            a.release(r.cell);
        }
    }

    /// Two one-rank jobs on provider `prov`: a connects to a port of b with a `Hello`; then
    /// messages both ways name the sender by its index in the receiver's table.
    fn connects_two_jobs(prov: &str) {
        let one = |job| {
            let ep = Endpoint::open(Some(prov), Some("127.0.0.1")).expect("endpoint");
            let name = ep.name().unwrap();
            NetEngine::start(ep, 0, job, name, vec![NO_ADDR]).unwrap()
        };
        let (mut a, mut b) = (one(11), one(22));
        let b_at_a = a.add_peer(22, 0, b.address()).unwrap();
        assert_eq!(
            b_at_a, 1,
            "the first process of another job follows the world"
        );
        assert_eq!(a.add_peer(22, 0, b.address()), Ok(1), "registered once");
        assert!(
            a.add_peer(11, 3, &[0; 4]).is_err(),
            "rank 3 of a 1-rank job"
        );
        b.open_port(5);
        // (The provider may refuse a send while it connects: flush and try again.)
        for (port, nonce) in [(5, 99), (6, 98)] {
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
            while !a.send_hello(b_at_a, port, nonce) {
                a.flush(&mut Vec::new());
                b.flush(&mut Vec::new());
                assert!(std::time::Instant::now() < deadline, "hello not sent");
            }
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        let mut answers = (None, None);
        let mut hello = None;
        while hello.is_none() || answers.0.is_none() || answers.1.is_none() {
            a.flush(&mut Vec::new());
            b.flush(&mut Vec::new());
            hello = hello.or_else(|| b.take_hello(5));
            answers.0 = answers.0.or_else(|| a.take_answer(1, 99));
            answers.1 = answers.1.or_else(|| a.take_answer(1, 98));
            assert!(std::time::Instant::now() < deadline, "no hello or answer");
        }
        assert_eq!(
            hello,
            Some(Hello {
                port: 5,
                nonce: 99,
                peer: 1
            })
        );
        assert_eq!(answers, (Some(true), Some(false)), "welcomed, refused");
        assert_eq!(b.take_hello(5), None);
        assert_eq!(
            b.take_hello(6),
            None,
            "a request to a closed port is not kept"
        );
        let hello = hello.unwrap();
        assert_eq!(b.process_count(), 2);
        b.send_or_queue(eager(hello.peer, 3, b"to a"));
        let r = next(&mut b, &mut a);
        assert_eq!((r.src_local, a.payload(&r)), (NET_PEER | 1, &b"to a"[..]));
        a.release(r.cell);
        a.send_or_queue(eager(b_at_a, 4, b"to b"));
        let r = next(&mut a, &mut b);
        assert_eq!((r.src_local, b.payload(&r)), (NET_PEER | 1, &b"to b"[..]));
        b.release(r.cell);
    }

    /// Many eager messages, more than there are send and receive buffers, arrive whole and
    /// in order; a stream arrives whole; replies carry their tokens.
    fn carries_messages_in_order(prov: &str) {
        let (mut a, mut b) = pair(prov);
        let n = 4 * (TX_SLOTS + RX_SLOTS);
        let msgs: Vec<Vec<u8>> = (0..n)
            .map(|i| (0..(i * 37) % 3000).map(|j| (i + j) as u8).collect())
            .collect();
        let mut got = 0;
        for (i, m) in msgs.iter().enumerate() {
            a.send_or_queue(eager(1, i as i32, m));
            // Drain now and then so the sender's queue both fills and empties.
            if i % 100 == 99 {
                while got < i / 2 {
                    let r = next(&mut a, &mut b);
                    assert_eq!(r.env.tag, got as i32, "order");
                    assert_eq!(b.payload(&r), &msgs[got][..]);
                    assert_eq!(r.src_local, NET_PEER);
                    b.release(r.cell);
                    got += 1;
                }
            }
        }
        while got < n {
            let r = next(&mut a, &mut b);
            assert_eq!(r.kind, MsgKind::Eager);
            assert_eq!(r.env.tag, got as i32, "order");
            assert_eq!(b.payload(&r), &msgs[got][..]);
            b.release(r.cell);
            got += 1;
        }
        // A stream of 5.5 chunks, from b to a.
        let big: Vec<u8> = (0..PAYLOAD_CAP * 11 / 2).map(|i| (i % 251) as u8).collect();
        b.start_stream(NET_PEER, 3, 9, big.as_ptr(), big.len(), None);
        let mut back = vec![0u8; big.len()];
        let mut have = 0;
        while have < big.len() {
            let r = next(&mut b, &mut a);
            assert_eq!((r.kind, r.sreq, r.rreq), (MsgKind::Data, 3, 9));
            let off = r.addr as usize;
            let p = a.payload(&r);
            back[off..off + p.len()].copy_from_slice(p);
            have += p.len();
            a.release(r.cell);
        }
        assert!(back == big, "stream content");
        // The same message straight between the two buffers: a posts its buffer, flags its
        // Cts, and b sends the whole in one piece.
        let mut direct = vec![0u8; big.len()];
        // SAFETY: `direct` outlives the transfer (released below).
        assert!(unsafe { a.recv_into(NET_PEER | 1, 77, direct.as_mut_ptr(), direct.len()) });
        a.send_or_queue(Outgoing::Reply {
            dest: NET_PEER | 1,
            kind: MsgKind::Cts,
            sreq: 5,
            rreq: 77,
        });
        let cts = next(&mut a, &mut b);
        assert_eq!(
            (cts.kind, cts.sreq, cts.rreq, cts.addr),
            (MsgKind::Cts, 5, 77, CTS_DIRECT)
        );
        b.release(cts.cell);
        b.start_stream(NET_PEER, 5, 77, big.as_ptr(), big.len(), None);
        let mut sent = Vec::new();
        let r = next_done(&mut b, &mut a, &mut sent);
        assert_eq!(
            (r.kind, r.rreq, r.len, r.addr),
            (MsgKind::Data, 77, big.len(), 0)
        );
        assert!(
            std::ptr::eq(a.payload(&r).as_ptr(), direct.as_ptr()),
            "received in place"
        );
        a.release(r.cell);
        assert!(direct == big, "direct content");
        // (The receiver's provider may still have to acknowledge: both sides progress.)
        let mut other = Vec::new();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while std::time::Instant::now() < deadline {
            b.flush(&mut sent);
            a.flush(&mut other);
            if sent.contains(&5) {
                break;
            }
        }
        assert_eq!(
            sent,
            vec![5],
            "the direct send completes its request (failures: {:?} {:?})",
            a.failure(),
            b.failure()
        );
        b.send_or_queue(Outgoing::Reply {
            dest: NET_PEER,
            kind: MsgKind::Fin,
            sreq: 11,
            rreq: 12,
        });
        let r = next(&mut b, &mut a);
        assert_eq!(
            (r.kind, r.sreq, r.rreq, r.src_local),
            (MsgKind::Fin, 11, 12, NET_PEER | 1)
        );
        a.release(r.cell);
        let mut done = Vec::new();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while std::time::Instant::now() < deadline {
            a.flush(&mut done);
            b.flush(&mut done);
            if a.idle() && b.idle() {
                break;
            }
        }
        assert!(a.idle() && b.idle(), "every send completed");
        assert!(a.failure().is_none() && b.failure().is_none());
    }

    /// The fast paths' calls: a direct eager send goes out only when nothing is queued
    /// before it (so it never overtakes a queued send of the same pair), a message given
    /// back is polled again first, and sends to other jobs' processes or above one buffer
    /// decline.
    fn fast_sends_keep_the_order(prov: &str) {
        let (mut a, mut b) = pair(prov);
        let env = |tag| Envelope {
            ctx: 4,
            src: 0,
            tag,
        };
        let data: Vec<u8> = (0..100u8).collect();
        let big = vec![1u8; PAYLOAD_CAP + 1];
        let fast = |e: &mut NetEngine, dest: u32, tag: i32, buf: &[u8]| {
            // SAFETY: `buf` is a live slice of `buf.len()` bytes.
            unsafe { e.send_eager_now(dest, env(tag), buf.as_ptr(), buf.len()) }
        };
        assert!(!fast(&mut a, 1, 0, &big));
        assert!(!fast(&mut a, 5, 0, &data[..1]), "not a world rank");
        for tag in 0..10 {
            // (The provider may refuse a send while it connects: progress and try again.)
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
            while !fast(&mut a, 1, tag, &data) {
                assert!(!a.has_outgoing() && a.failure().is_none());
                a.flush(&mut Vec::new());
                b.flush(&mut Vec::new());
                assert!(
                    std::time::Instant::now() < deadline,
                    "fast send {tag} refused"
                );
            }
        }
        // A send queued (as when every buffer was in flight) holds later fast sends back.
        a.pending.push_back(eager(1, 10, &data));
        assert!(a.has_outgoing());
        assert!(!fast(&mut a, 1, 11, &data));
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while a.has_outgoing() {
            a.flush(&mut Vec::new());
            b.flush(&mut Vec::new());
            assert!(
                std::time::Instant::now() < deadline,
                "the queued send never left"
            );
        }
        assert!(fast(&mut a, 1, 11, &data[..8]));
        for want in 0..12 {
            let m = next(&mut a, &mut b);
            assert_eq!(m.env.tag, want, "order");
            let len = if want == 11 { 8 } else { data.len() };
            assert_eq!(b.payload(&m), &data[..len]);
            if want == 3 {
                b.unpoll(m);
                let again = b.poll().expect("given back");
                assert_eq!(again.env.tag, 3, "the message given back comes first");
                b.release(again.cell);
            } else {
                b.release(m.cell);
            }
        }
    }

    #[test]
    fn tcp_rxm_fast_sends_keep_the_order() {
        fast_sends_keep_the_order("tcp;ofi_rxm");
    }

    #[test]
    fn sockets_fast_sends_keep_the_order() {
        fast_sends_keep_the_order("sockets");
    }

    #[test]
    fn tcp_rxm_carries_messages_in_order() {
        carries_messages_in_order("tcp;ofi_rxm");
    }

    #[test]
    fn sockets_carries_messages_in_order() {
        carries_messages_in_order("sockets");
    }

    #[test]
    fn tcp_rxm_small_messages_arrive_whole() {
        small_messages_arrive_whole("tcp;ofi_rxm");
    }

    #[test]
    fn sockets_small_messages_arrive_whole() {
        small_messages_arrive_whole("sockets");
    }

    #[test]
    fn tcp_rxm_connects_two_jobs() {
        connects_two_jobs("tcp;ofi_rxm");
    }

    #[test]
    fn sockets_connects_two_jobs() {
        connects_two_jobs("sockets");
    }

    #[test]
    fn an_unknown_provider_is_refused_with_its_name() {
        let e = Endpoint::open(Some("no-such-provider"), Some("127.0.0.1")).unwrap_err();
        assert!(e.contains("no-such-provider"), "{e}");
    }
}

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
