//! Node-local transport over one shared segment: cells through per-receiver MPSC queues for
//! small messages and control, single-copy CMA reads (or pipelined cells) for large ones.
//!
//! Protocols (the receiver side lives in `core::p2p`, which owns matching):
//! - eager: the whole message in one cell (`Eager`; `EagerSync` asks for an `Ack` on match);
//! - rendezvous: `Rts` announces the sender's buffer; on match the receiver copies it with
//!   `process_vm_readv` and answers `Fin`, or, without CMA, answers `Cts` and the sender
//!   streams `Data` cells that the receiver copies into place.
//!
//! A rank sends only with its own cells; the receiver hands each cell back to its owner's
//! `free` queue. When no cell is free, outgoing items wait in FIFO order in `pending`, which
//! keeps MPI's per-pair message order.

pub mod queue;
pub mod segment;

use crate::abi::consts::*;
use crate::core::error::{MpiError, MpiResult};
use crate::core::matching::Envelope;
use crate::platform::bootstrap::Bootstrap;
use crate::platform::{cma, config};
use segment::{CellHdr, CellKind, Geometry, Segment};
use std::collections::VecDeque;
use std::sync::atomic::Ordering;

/// Something to put in a cell.
#[derive(Debug)]
pub enum Outgoing {
    /// A message (eager or rendezvous announcement) from a user buffer.
    Msg {
        /// Destination local rank.
        dest: u32,
        /// `Eager`, `EagerSync` or `Rts`.
        kind: CellKind,
        /// Envelope (source is the sender's communicator rank).
        env: Envelope,
        /// Sender request token.
        sreq: u64,
        /// User buffer.
        buf: *const u8,
        /// Message length.
        bytes: usize,
    },
    /// A control reply (`Ack`, `Fin`, `Cts`).
    Reply {
        /// Destination local rank.
        dest: u32,
        /// The kind.
        kind: CellKind,
        /// Sender request token.
        sreq: u64,
        /// Receiver request token.
        rreq: u64,
    },
}

/// A rendezvous message being streamed through cells (no CMA).
#[derive(Debug)]
pub struct Stream {
    dest: u32,
    sreq: u64,
    rreq: u64,
    buf: *const u8,
    total: usize,
    off: usize,
}

/// The node transport of one rank.
pub struct ShmEngine {
    seg: Segment,
    me: u32,
    cma: bool,
    pids: Vec<i32>,
    pending: VecDeque<Outgoing>,
    streams: Vec<Stream>,
    barrier_gen_seen: u32,
}

// SAFETY: raw buffer pointers in pending items refer to user buffers whose requests are still
// active; the engine is only used under the runtime's access discipline.
unsafe impl Send for ShmEngine {}

/// What a received cell says, copied out of its header.
#[derive(Clone, Copy, Debug)]
pub struct Incoming {
    /// Cell index (release it with [`ShmEngine::release`]).
    pub cell: u32,
    /// Kind.
    pub kind: CellKind,
    /// Sender's local rank.
    pub src_local: u32,
    /// Envelope.
    pub env: Envelope,
    /// Payload bytes in the cell.
    pub len: usize,
    /// Total message bytes.
    pub total: u64,
    /// Sender request token.
    pub sreq: u64,
    /// Receiver request token.
    pub rreq: u64,
    /// Address or offset.
    pub addr: u64,
}

impl ShmEngine {
    /// Creates or attaches the node segment and probes CMA. Collective over the job's ranks
    /// (it uses bootstrap barriers).
    pub fn setup(
        boot: &mut dyn Bootstrap,
        host: &str,
        me: u32,
        nlocal: u32,
    ) -> MpiResult<ShmEngine> {
        let err = |what: &str, e: std::io::Error| {
            MpiError::new(MPI_ERR_OTHER, format!("shared memory setup: {what}: {e}"))
        };
        let cell_size =
            (config::int("HYMPI_SHM_CELL_SIZE").clamp(1024, 1 << 22) as usize).next_multiple_of(64);
        let geo = Geometry {
            nlocal,
            cells_per_rank: config::int("HYMPI_SHM_CELLS").clamp(4, 1 << 16) as u32,
            cell_size,
        };
        let key = format!("shm-{host}");
        let mut seg = if me == 0 {
            let (seg, text) = Segment::create(&geo).map_err(|e| err("memfd", e))?;
            boot.put(&key, &text).map_err(|e| err("PMI put", e))?;
            boot.barrier().map_err(|e| err("PMI barrier", e))?;
            seg
        } else {
            boot.barrier().map_err(|e| err("PMI barrier", e))?;
            let text = boot
                .get(&key)
                .map_err(|e| err("PMI get", e))?
                .ok_or_else(|| {
                    MpiError::new(
                        MPI_ERR_OTHER,
                        "shared memory setup: the node leader did not publish its segment",
                    )
                })?;
            Segment::attach(&text, &geo).map_err(|e| err("mapping the node segment", e))?
        };
        // Publish our pid and a probe word for CMA.
        let probe = Box::new(0x5eed_0000_0000_0000u64 | me as u64);
        let slot = seg.slot(me);
        slot.pid.store(std::process::id() as i32, Ordering::Relaxed);
        slot.probe_addr
            .store(&*probe as *const u64 as u64, Ordering::Relaxed);
        slot.probe_value.store(*probe, Ordering::Release);
        boot.barrier().map_err(|e| err("PMI barrier", e))?;
        seg.close_creator_fd();
        let pids: Vec<i32> = (0..nlocal)
            .map(|r| seg.slot(r).pid.load(Ordering::Acquire))
            .collect();

        // Probe CMA on the next local rank.
        let peer = (me + 1) % nlocal;
        let mut word = 0u64;
        let ok = {
            let ps = seg.slot(peer);
            // SAFETY: `word` is a valid 8-byte destination.
            let r = unsafe {
                cma::read_from(
                    pids[peer as usize],
                    ps.probe_addr.load(Ordering::Acquire),
                    (&mut word as *mut u64).cast(),
                    8,
                )
            };
            r.is_ok() && word == ps.probe_value.load(Ordering::Acquire)
        };
        seg.slot(me)
            .cma_ok
            .store(if ok { 1 } else { 2 }, Ordering::Release);
        boot.barrier().map_err(|e| err("PMI barrier", e))?;
        let all_ok = (0..nlocal).all(|r| seg.slot(r).cma_ok.load(Ordering::Acquire) == 1);
        drop(probe);
        let cma = all_ok && config::int("HYMPI_CMA") != 0;
        let barrier_gen_seen = seg.header().barrier_gen.load(Ordering::Acquire);
        Ok(ShmEngine {
            seg,
            me,
            cma,
            pids,
            pending: VecDeque::new(),
            streams: Vec::new(),
            barrier_gen_seen,
        })
    }

    /// Payload bytes of one cell.
    pub fn payload_cap(&self) -> usize {
        self.seg.payload_cap()
    }

    /// Whether single-copy CMA is in use.
    pub fn cma_enabled(&self) -> bool {
        self.cma
    }

    /// Bytes of shared memory mapped for the node.
    pub fn segment_bytes(&self) -> usize {
        self.seg.len()
    }

    /// Whether nothing waits to be sent.
    pub fn idle(&self) -> bool {
        self.pending.is_empty() && self.streams.is_empty()
    }

    /// Sends `o` now if a cell is free and nothing is queued before it; otherwise queues it.
    /// Returns true when it went out now.
    #[inline]
    pub fn send_or_queue(&mut self, o: Outgoing) -> bool {
        if self.pending.is_empty() && self.try_emit(&o) {
            return true;
        }
        self.pending.push_back(o);
        false
    }

    /// Queues a stream of `Data` cells (answer to a `Cts`).
    pub fn start_stream(&mut self, dest: u32, sreq: u64, rreq: u64, buf: *const u8, total: usize) {
        self.streams.push(Stream {
            dest,
            sreq,
            rreq,
            buf,
            total,
            off: 0,
        });
    }

    #[inline]
    fn try_emit(&self, o: &Outgoing) -> bool {
        let Some(c) = self.seg.slot(self.me).free.pop(&self.seg) else {
            return false;
        };
        let h = self.seg.cell(c);
        // SAFETY: cell `c` was just taken from our free queue, so we own it until we push it;
        // payload writes stay within the cell (eager lengths are checked by the caller against
        // payload_cap).
        unsafe {
            match *o {
                Outgoing::Msg {
                    dest,
                    kind,
                    env,
                    sreq,
                    buf,
                    bytes,
                } => {
                    write_hdr(h, kind, self.me, &env, 0, bytes as u64, sreq, 0, buf as u64);
                    if kind != CellKind::Rts {
                        (*h).len = bytes as u32;
                        if bytes > 0 {
                            std::ptr::copy_nonoverlapping(buf, self.seg.payload(c), bytes);
                        }
                    }
                    self.seg.slot(dest).recv.push(&self.seg, c);
                }
                Outgoing::Reply {
                    dest,
                    kind,
                    sreq,
                    rreq,
                } => {
                    write_hdr(
                        h,
                        kind,
                        self.me,
                        &Envelope {
                            ctx: 0,
                            src: 0,
                            tag: 0,
                        },
                        0,
                        0,
                        sreq,
                        rreq,
                        0,
                    );
                    self.seg.slot(dest).recv.push(&self.seg, c);
                }
            }
        }
        true
    }

    /// Sends queued items in order; eager sends that went out are reported in `done` (their
    /// requests are complete). Returns whether anything was sent.
    pub fn flush(&mut self, done: &mut Vec<u64>) -> bool {
        let mut any = false;
        while let Some(o) = self.pending.front() {
            if !self.try_emit(o) {
                break;
            }
            if let Some(Outgoing::Msg {
                kind: CellKind::Eager,
                sreq,
                ..
            }) = self.pending.pop_front()
            {
                done.push(sreq);
            }
            any = true;
        }
        let me = self.me;
        let mut i = 0;
        while i < self.streams.len() {
            let cap = self.seg.payload_cap();
            let s = &mut self.streams[i];
            while s.off < s.total {
                let Some(c) = self.seg.slot(me).free.pop(&self.seg) else {
                    break;
                };
                let n = cap.min(s.total - s.off);
                let h = self.seg.cell(c);
                // SAFETY: we own cell `c`; n ≤ payload capacity; the source range lies in the
                // user buffer of the active send request.
                unsafe {
                    write_hdr(
                        h,
                        CellKind::Data,
                        me,
                        &Envelope {
                            ctx: 0,
                            src: 0,
                            tag: 0,
                        },
                        n as u32,
                        s.total as u64,
                        s.sreq,
                        s.rreq,
                        s.off as u64,
                    );
                    std::ptr::copy_nonoverlapping(s.buf.add(s.off), self.seg.payload(c), n);
                }
                self.seg.slot(s.dest).recv.push(&self.seg, c);
                s.off += n;
                any = true;
            }
            if s.off >= s.total {
                done.push(s.sreq);
                self.streams.swap_remove(i);
            } else {
                i += 1;
            }
        }
        any
    }

    /// Takes the next cell addressed to this rank.
    #[inline]
    pub fn poll(&self) -> Option<Incoming> {
        let q = &self.seg.slot(self.me).recv;
        if q.is_empty_hint() {
            return None;
        }
        let c = q.pop(&self.seg)?;
        // SAFETY: the cell was handed to us by the queue; its header was written before the
        // producer's release store that the pop acquired.
        let h = unsafe { &*self.seg.cell(c) };
        let kind = CellKind::from_u32(h.kind).unwrap_or(CellKind::Eager);
        Some(Incoming {
            cell: c,
            kind,
            src_local: h.src_local,
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
        })
    }

    /// The payload of a received cell.
    #[inline]
    pub fn payload(&self, m: &Incoming) -> &[u8] {
        // SAFETY: the cell is ours until released, and `len` was bounded by the sender.
        unsafe {
            std::slice::from_raw_parts(self.seg.payload(m.cell), m.len.min(self.seg.payload_cap()))
        }
    }

    /// Hands a received cell back to its owner.
    #[inline]
    pub fn release(&self, cell: u32) {
        self.seg
            .slot(self.seg.owner(cell))
            .free
            .push(&self.seg, cell);
    }

    /// Reads `len` bytes of the rendezvous buffer at `addr` in local rank `src` into `dst`.
    ///
    /// # Safety
    /// `dst` must be valid for `len` bytes of writes.
    pub unsafe fn cma_read(
        &self,
        src: u32,
        addr: u64,
        dst: *mut u8,
        len: usize,
    ) -> std::io::Result<()> {
        // SAFETY: forwarded caller guarantee.
        unsafe { cma::read_from(self.pids[src as usize], addr, dst, len) }
    }

    /// Arrives at the node barrier; returns the generation to wait for.
    pub fn barrier_arrive(&mut self) -> u32 {
        let h = self.seg.header();
        let gen = h.barrier_gen.load(Ordering::Acquire);
        if h.barrier_arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.seg.nlocal() {
            h.barrier_arrived.store(0, Ordering::Relaxed);
            h.barrier_gen.store(gen.wrapping_add(1), Ordering::Release);
        }
        self.barrier_gen_seen = gen;
        gen
    }

    /// Whether the barrier of generation `gen` is complete.
    pub fn barrier_done(&self, gen: u32) -> bool {
        self.seg.header().barrier_gen.load(Ordering::Acquire) != gen
    }
}

/// Fills a cell header.
///
/// # Safety
/// `h` must point to a cell owned by the caller.
#[allow(clippy::too_many_arguments)]
#[inline]
unsafe fn write_hdr(
    h: *mut CellHdr,
    kind: CellKind,
    me: u32,
    env: &Envelope,
    len: u32,
    total: u64,
    sreq: u64,
    rreq: u64,
    addr: u64,
) {
    // SAFETY: caller guarantee; plain field writes.
    unsafe {
        (*h).kind = kind as u32;
        (*h).src_local = me;
        (*h).src_rank = env.src;
        (*h).tag = env.tag;
        (*h).ctx = env.ctx;
        (*h).len = len;
        (*h).total = total;
        (*h).sreq = sreq;
        (*h).rreq = rreq;
        (*h).addr = addr;
    }
}
