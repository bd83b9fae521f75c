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

pub mod collslot;
pub mod engine_ref;
pub mod queue;
pub mod segment;

use crate::error::{MpiError, MpiResult};
use crate::mpi_abi::consts::*;
use crate::platform::bootstrap::Bootstrap;
use crate::platform::cma;
use crate::platform::config::{self, Knob};
use crate::transport::wire::{copy_bytes, Envelope, Gather, MsgKind};
pub use crate::transport::wire::{Incoming, Outgoing};
use segment::{CellHdr, Fastbox, Geometry, Segment, FB_PAYLOAD, FB_SLOTS};
use std::collections::VecDeque;
use std::sync::atomic::Ordering;

/// A rendezvous message being streamed through cells (no CMA).
#[derive(Debug)]
pub struct Stream {
    dest: u32,
    sreq: u64,
    rreq: u64,
    buf: *const u8,
    total: usize,
    off: usize,
    /// The send buffer is laid out by a derived datatype: cells are packed from it.
    layout: Option<Box<dyn Gather>>,
}

/// The node transport of one rank.
pub struct ShmEngine {
    seg: Segment,
    me: u32,
    cma: bool,
    /// CMA works between every pair of local ranks (whatever `HYMPI_CMA` says).
    cma_capable: bool,
    pids: Vec<i32>,
    pending: VecDeque<Outgoing>,
    streams: Vec<Stream>,
    barrier_gen_seen: u32,
    /// Sequence number of the next matched message to each local rank.
    send_seq: Vec<u32>,
    /// Sequence number of the next matched message expected from each local rank.
    recv_seq: Vec<u32>,
    /// A queue cell that arrived ahead of its sender's fastbox message; handed out next.
    stashed: Option<Incoming>,
    /// A message a fast path polled but left for the general progress engine; handed out
    /// first (its sequence number is already accounted for).
    returned: Option<Incoming>,
    /// Fastbox polling starts here (rotates for fairness).
    fb_cursor: u32,
    /// Slot of the next fastbox message to each local rank (a counter; its ring index is
    /// `Segment::fb_index`).
    fb_send: Vec<u32>,
    /// Slot of the next fastbox message expected from each local rank.
    fb_recv: Vec<u32>,
    /// Fastbox messages taken in a row without looking at the receive queue.
    fb_streak: u32,
}

/// `Incoming::cell` values at and above this denote fastbox `slot` of the ring from local rank
/// `src` as `FB_TAG + src * FB_SLOTS + slot` (see [`fb_cell`]).
const FB_TAG: u32 = 0xff00_0000;

/// Ring messages [`ShmEngine::poll`] takes in a row before it looks at the receive queue
/// first.
const FB_STREAK: u32 = 16;

/// How many slots ahead of the message it takes from a ring the receiver prefetches that
/// ring (the lines the message just taken filled): a sender's burst then streams in while
/// earlier messages are being matched, instead of each slot's lines coming from the sender's
/// cache one after the other when polled. Measured on an Intel Xeon VM, one pair, windows of
/// 64 messages: 8 B 14-15 M msg/s without, 20-21 M/s at 4-6 ahead (1 ahead was slower than
/// none: it pulls the line the sender is writing); 32 / 128 / 256 B 9-14 / 10.4 / 9.4 M/s
/// with the first line only, 24 / 23 / 14-15 M/s with all the message's lines.
const FB_PREFETCH_AHEAD: u32 = 4;

/// The `Incoming::cell` value of fastbox `slot` (an index in the ring, < `FB_SLOTS`) from
/// local rank `src`.
#[inline(always)]
fn fb_cell(src: u32, slot: u32) -> u32 {
    FB_TAG + src * FB_SLOTS + slot
}

/// The sender and slot of a fastbox `Incoming::cell` value (one at or above `FB_TAG`).
#[inline(always)]
fn fb_of_cell(cell: u32) -> (u32, u32) {
    let i = cell - FB_TAG;
    (i / FB_SLOTS, i % FB_SLOTS)
}

/// A barrier of the node's ranks through the segment's header during setup (the same
/// counter and generation as [`ShmEngine::barrier_arrive`], which starts after it): spin,
/// then yield, until the last of the `present` local ranks arrives.
fn setup_barrier(seg: &Segment, present: u32) {
    let h = seg.header();
    let gen = h.barrier_gen.load(Ordering::Acquire);
    if h.barrier_arrived.fetch_add(1, Ordering::AcqRel) + 1 == present {
        h.barrier_arrived.store(0, Ordering::Relaxed);
        h.barrier_gen.store(gen.wrapping_add(1), Ordering::Release);
        return;
    }
    let mut backoff = crate::platform::wait::Backoff::new();
    while h.barrier_gen.load(Ordering::Acquire) == gen {
        backoff.idle();
    }
}

/// Reads whether a local peer has started finalising (from any thread).
pub type FinalizingReader = Box<dyn Fn() -> bool + Send>;

/// A peer's finalising flag in the node segment, readable from another thread.
#[derive(Clone, Copy)]
struct FlagRef(*const queue::AtomicU32);

// SAFETY: the flag is an atomic in shared memory that stays mapped as long as the engine
// lives, and `watched_peers` requires the reader to be dropped before the engine.
unsafe impl Send for FlagRef {}

impl FlagRef {
    fn is_set(&self) -> bool {
        // SAFETY: see the `Send` impl: the segment is still mapped while a reader exists.
        unsafe { (*self.0).load(Ordering::Acquire) != 0 }
    }
}

// SAFETY: raw buffer pointers in pending items refer to user buffers whose requests are still
// active; the engine is only used under the runtime's access discipline.
unsafe impl Send for ShmEngine {}

impl ShmEngine {
    /// Process-manager barriers one [`ShmEngine::setup`] takes (ranks that set up no lane
    /// join as many, so that every rank of the job joins the same barriers). The later steps
    /// synchronise only the node's ranks, through the segment itself ([`setup_barrier`]):
    /// under Slurm a process-manager barrier travels to `srun` and back.
    pub const SETUP_BARRIERS: usize = 1;

    /// Creates or attaches the node segment of lane `lane` and probes CMA. Collective over
    /// the job's ranks (it uses [`ShmEngine::SETUP_BARRIERS`] bootstrap barriers), then over
    /// the node's ranks.
    pub fn setup(
        boot: &mut dyn Bootstrap,
        host: &str,
        me: u32,
        nlocal: u32,
        lane: usize,
    ) -> MpiResult<ShmEngine> {
        Self::setup_among(boot, host, me, nlocal, lane, nlocal)
    }

    /// [`Self::setup`] when only local ranks `0..present` take part (unit tests build the
    /// first engines of a larger node); the node barriers count `present` arrivals.
    fn setup_among(
        boot: &mut dyn Bootstrap,
        host: &str,
        me: u32,
        nlocal: u32,
        lane: usize,
        present: u32,
    ) -> MpiResult<ShmEngine> {
        let err = |what: &str, e: std::io::Error| {
            MpiError::new(MPI_ERR_OTHER, format!("shared memory setup: {what}: {e}"))
        };
        let cell_size = (config::int(Knob::ShmCellSize) as usize).next_multiple_of(64);
        let geo = Geometry {
            nlocal,
            cells_per_rank: config::int(Knob::ShmCells) as u32,
            cell_size,
        };
        // Cell indices stay below FB_TAG and fastbox ones fit above it.
        if u64::from(nlocal) * u64::from(geo.cells_per_rank) >= u64::from(FB_TAG)
            || u64::from(nlocal) * u64::from(FB_SLOTS) > u64::from(u32::MAX - FB_TAG)
        {
            return Err(MpiError::new(
                MPI_ERR_OTHER,
                format!("shared memory setup: {nlocal} local ranks are more than the node transport addresses"),
            ));
        }
        let key = match lane {
            0 => format!("shm-{host}"),
            l => format!("shm-{host}-lane{l}"),
        };
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
        // Our cells, which we write, and on a small node the cells we read (shared memory
        // pages are allocated by whichever process touches them first).
        seg.prefault_cells_of(me, true);
        if nlocal <= 8 {
            for r in (0..nlocal).filter(|&r| r != me) {
                seg.prefault_cells_of(r, false);
            }
        }
        // Publish our pid and a probe word for CMA.
        let probe = Box::new(0x5eed_0000_0000_0000u64 | me as u64);
        let slot = seg.slot(me);
        slot.pid.store(std::process::id() as i32, Ordering::Relaxed);
        slot.probe_addr
            .store(&*probe as *const u64 as u64, Ordering::Relaxed);
        slot.probe_value.store(*probe, Ordering::Release);
        // Every local rank has mapped the segment once it arrives here, so the creator may
        // close the descriptor the others opened it through.
        setup_barrier(&seg, present);
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
        setup_barrier(&seg, present);
        let all_ok = (0..nlocal).all(|r| seg.slot(r).cma_ok.load(Ordering::Acquire) == 1);
        drop(probe);
        let cma = all_ok && config::flag(Knob::Cma);
        let barrier_gen_seen = seg.header().barrier_gen.load(Ordering::Acquire);
        Ok(ShmEngine {
            seg,
            me,
            cma,
            cma_capable: all_ok,
            pids,
            pending: VecDeque::new(),
            streams: Vec::new(),
            barrier_gen_seen,
            send_seq: vec![0; nlocal as usize],
            recv_seq: vec![0; nlocal as usize],
            stashed: None,
            returned: None,
            fb_cursor: 0,
            fb_send: vec![0; nlocal as usize],
            fb_recv: vec![0; nlocal as usize],
            fb_streak: 0,
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

    /// Whether CMA works between every pair of local ranks (also with `HYMPI_CMA=0`, which
    /// only keeps point-to-point from using it).
    pub fn cma_capable(&self) -> bool {
        self.cma_capable
    }

    /// Bytes of shared memory mapped for the node.
    pub fn segment_bytes(&self) -> usize {
        self.seg.len()
    }

    /// The node segment's collective region.
    pub fn coll_region(&self) -> collslot::Region {
        collslot::Region::of(&self.seg)
    }

    /// Whether nothing waits to be sent.
    pub fn idle(&self) -> bool {
        self.pending.is_empty()
            && self.streams.is_empty()
            && self.stashed.is_none()
            && self.returned.is_none()
    }

    /// Whether items wait to be sent (queued messages or streamed rendezvous data), which only
    /// the general progress engine ([`ShmEngine::flush`]) moves.
    #[inline(always)]
    pub fn has_outgoing(&self) -> bool {
        !self.pending.is_empty() || !self.streams.is_empty()
    }

    /// Sends a standard-mode eager message now, through the pair's fastbox or a free cell, if
    /// nothing is queued before it; false (nothing sent) otherwise. The message needs no reply,
    /// so it is complete once this returns true.
    #[inline(always)]
    pub fn send_eager_now(
        &mut self,
        dest: u32,
        env: Envelope,
        buf: *const u8,
        bytes: usize,
    ) -> bool {
        if !self.pending.is_empty() {
            return false;
        }
        if bytes <= FB_PAYLOAD && self.fastbox_put(dest, MsgKind::Eager, env, 0, buf, bytes) {
            return true;
        }
        self.emit_eager(dest, env, buf, bytes)
    }

    /// [`ShmEngine::send_eager_now`] through a free cell (the pair's fastbox was busy or too
    /// small).
    #[inline(never)]
    fn emit_eager(&mut self, dest: u32, env: Envelope, buf: *const u8, bytes: usize) -> bool {
        if bytes > self.seg.payload_cap() {
            return false;
        }
        self.try_emit(&Outgoing::Msg {
            dest,
            kind: MsgKind::Eager,
            env,
            sreq: 0,
            buf,
            bytes,
        })
    }

    /// Gives back a message taken by [`ShmEngine::poll`] that the caller cannot handle: the
    /// next poll returns it again, before anything else.
    #[inline]
    pub fn unpoll(&mut self, m: Incoming) {
        debug_assert!(self.returned.is_none(), "one message given back at a time");
        self.returned = Some(m);
    }

    /// Sends `o` now if a cell is free and nothing is queued before it; otherwise queues it.
    /// Returns true when it went out now.
    #[inline]
    pub fn send_or_queue(&mut self, o: Outgoing) -> bool {
        if self.pending.is_empty() && (self.try_fastbox(&o) || self.try_emit(&o)) {
            return true;
        }
        self.pending.push_back(o);
        false
    }

    /// Queues a stream of `Data` cells (answer to a `Cts`); with a layout, `buf` is the base
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

    /// Sends a small eager message through the pair's fastbox when it is free.
    #[inline]
    fn try_fastbox(&mut self, o: &Outgoing) -> bool {
        let Outgoing::Msg {
            dest,
            kind,
            env,
            sreq,
            buf,
            bytes,
        } = *o
        else {
            return false;
        };
        if kind == MsgKind::Rts || bytes > FB_PAYLOAD {
            return false;
        }
        self.fastbox_put(dest, kind, env, sreq, buf, bytes)
    }

    /// Writes a message of at most `FB_PAYLOAD` bytes (callers check) from `buf` (which holds
    /// them, as every send's buffer does) into the next fastbox of our ring to local rank
    /// `dest` when it is free: whether it did.
    #[inline(always)]
    fn fastbox_put(
        &mut self,
        dest: u32,
        kind: MsgKind,
        env: Envelope,
        sreq: u64,
        buf: *const u8,
        bytes: usize,
    ) -> bool {
        debug_assert!(bytes <= FB_PAYLOAD);
        let slot = self.fb_send[dest as usize];
        let fb = self.seg.fastbox(dest, self.me, slot);
        // SAFETY: `full` is an atomic in the shared fastbox; the other fields are written only
        // while `full == 0` (the receiver is done with them: it cleared `full` with release,
        // which our acquire load pairs with) and published by the release store of `full`.
        // The payload copy fits: `bytes <= FB_PAYLOAD`.
        unsafe {
            if (*fb).full.load(Ordering::Acquire) != 0 {
                return false;
            }
            let seq = self.send_seq[dest as usize];
            self.send_seq[dest as usize] = seq.wrapping_add(1);
            (*fb).seq = seq;
            (*fb).kind = kind as u32;
            (*fb).src_rank = env.src;
            (*fb).tag = env.tag;
            (*fb).ctx = env.ctx;
            (*fb).len = bytes as u32;
            (*fb).sreq = sreq;
            copy_bytes(buf, (*fb).payload.as_mut_ptr(), bytes);
            (*fb).full.store(1, Ordering::Release);
        }
        self.seg.slot(dest).bell.ring();
        self.fb_send[dest as usize] = slot.wrapping_add(1);
        true
    }

    #[inline]
    fn try_emit(&mut self, o: &Outgoing) -> bool {
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
                    let seq = self.send_seq[dest as usize];
                    self.send_seq[dest as usize] = seq.wrapping_add(1);
                    (*h).seq = seq;
                    if kind != MsgKind::Rts {
                        (*h).len = bytes as u32;
                        if bytes > 0 {
                            std::ptr::copy_nonoverlapping(buf, self.seg.payload(c), bytes);
                        }
                    }
                    self.seg.deliver(dest, c);
                }
                Outgoing::RtsV {
                    dest,
                    env,
                    sreq,
                    addr,
                    total,
                    nseg,
                } => {
                    write_hdr(h, MsgKind::Rts, self.me, &env, 0, total, sreq, nseg, addr);
                    let seq = self.send_seq[dest as usize];
                    self.send_seq[dest as usize] = seq.wrapping_add(1);
                    (*h).seq = seq;
                    self.seg.deliver(dest, c);
                }
                Outgoing::Split {
                    dest,
                    sreq,
                    rreq,
                    addr,
                    total,
                } => {
                    write_hdr(
                        h,
                        MsgKind::Split,
                        self.me,
                        &Envelope {
                            ctx: 0,
                            src: 0,
                            tag: 0,
                        },
                        0,
                        total,
                        sreq,
                        rreq,
                        addr,
                    );
                    self.seg.deliver(dest, c);
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
                    self.seg.deliver(dest, c);
                }
            }
        }
        true
    }

    /// Sends queued items in order; eager sends that went out are reported in `done` (their
    /// requests are complete). Returns whether anything was sent.
    pub fn flush(&mut self, done: &mut Vec<u64>) -> bool {
        let mut any = false;
        while let Some(o) = self.pending.pop_front() {
            if !(self.try_fastbox(&o) || self.try_emit(&o)) {
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
                        MsgKind::Data,
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
                    match &s.layout {
                        None => {
                            std::ptr::copy_nonoverlapping(s.buf.add(s.off), self.seg.payload(c), n)
                        }
                        Some(l) => l.pack(
                            s.buf as usize,
                            s.off,
                            std::slice::from_raw_parts_mut(self.seg.payload(c), n),
                        ),
                    }
                }
                self.seg.deliver(s.dest, c);
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

    /// Takes the next message addressed to this rank: from a fastbox or the receive queue,
    /// keeping each sender's matched messages in sequence.
    #[inline]
    pub fn poll(&mut self) -> Option<Incoming> {
        // Tested before taking: `take` would move the whole message out on every poll.
        if self.returned.is_some() {
            return self.returned.take();
        }
        if let Some(m) = self.stashed {
            // Fastbox messages its sender published before this cell come out first.
            if m.seq != self.recv_seq[m.src_local as usize] {
                if let Some(fb) = self.take_fastbox(m.src_local) {
                    return Some(fb);
                }
                debug_assert!(false, "sequence gap without a fastbox message");
            }
            self.stashed = None;
            self.recv_seq[m.src_local as usize] = m.seq.wrapping_add(1);
            return Some(m);
        }
        // Peers that keep their rings full must not hold back the queue (control cells of
        // other peers, rendezvous): after a streak of ring messages the queue goes first
        // once. Any order across senders is fine; `in_sequence` keeps each sender's.
        if self.fb_streak >= FB_STREAK {
            self.fb_streak = 0;
            if let Some(m) = self.poll_queue() {
                return Some(self.in_sequence(m));
            }
        }
        if let Some(m) = self.poll_fastboxes() {
            self.fb_streak += 1;
            return Some(m);
        }
        self.fb_streak = 0;
        let m = self.poll_queue()?;
        Some(self.in_sequence(m))
    }

    /// Puts a message taken from the queue in its sender's sequence: when the sender's
    /// previous matched messages are still in its fastboxes (they were published before this
    /// cell was queued, so they are visible), the first of them is returned and the cell is
    /// kept for the polls after them.
    #[inline]
    fn in_sequence(&mut self, m: Incoming) -> Incoming {
        if matches!(m.kind, MsgKind::Eager | MsgKind::EagerSync | MsgKind::Rts) {
            let src = m.src_local;
            if m.seq != self.recv_seq[src as usize] {
                let Some(fb) = self.take_fastbox(src) else {
                    debug_assert!(false, "sequence gap without a fastbox message");
                    self.recv_seq[src as usize] = m.seq.wrapping_add(1);
                    return m;
                };
                self.stashed = Some(m);
                return fb;
            }
            self.recv_seq[src as usize] = m.seq.wrapping_add(1);
        }
        m
    }

    /// Takes the fastbox message expected next from local rank `src` if it is there and is
    /// the next of `src`'s matched messages.
    #[inline]
    fn take_fastbox(&mut self, src: u32) -> Option<Incoming> {
        let slot = self.fb_recv[src as usize];
        let fb = self.seg.fastbox(self.me, src, slot);
        // SAFETY: `full` is an atomic in the shared fastbox; once it reads 1 (acquire) the
        // slot is ours until we clear it.
        unsafe {
            if (*fb).full.load(Ordering::Acquire) == 0 {
                return None;
            }
            self.take_full(fb, src, slot)
        }
    }

    /// Takes the message in fastbox `fb`, slot `slot` of the ring from `src`, if it is the
    /// next of `src`'s matched messages.
    ///
    /// # Safety
    /// `fb` is that slot and its `full` was read as 1 with acquire ordering, so the sender's
    /// field writes are visible and stay unchanged until we clear `full`.
    #[inline(always)]
    unsafe fn take_full(&mut self, fb: *const Fastbox, src: u32, slot: u32) -> Option<Incoming> {
        // SAFETY: the caller's guarantee.
        let f: &Fastbox = unsafe { &*fb };
        // A full slot may still hold a message taken one lap ago (not released yet), or the
        // next one may follow a queued cell of its sender.
        if f.seq != self.recv_seq[src as usize] {
            return None;
        }
        self.recv_seq[src as usize] = f.seq.wrapping_add(1);
        self.fb_recv[src as usize] = slot.wrapping_add(1);
        // Messages of a stream tend to have one size: the lines this one filled.
        self.seg.prefetch_fastbox(
            self.me,
            src,
            slot.wrapping_add(FB_PREFETCH_AHEAD),
            f.len as usize,
        );
        Some(Incoming {
            cell: fb_cell(src, self.seg.fb_index(slot)),
            kind: MsgKind::from_u32(f.kind).unwrap_or(MsgKind::Eager),
            src_local: src,
            env: Envelope {
                ctx: f.ctx,
                src: f.src_rank,
                tag: f.tag,
            },
            len: (f.len as usize).min(FB_PAYLOAD),
            total: f.len as u64,
            sreq: f.sreq,
            rreq: 0,
            addr: 0,
            seq: f.seq,
        })
    }

    /// The next in-sequence fastbox message, if any.
    #[inline]
    fn poll_fastboxes(&mut self) -> Option<Incoming> {
        let n = self.seg.nlocal();
        // The rings from the cursor on, wrapping (no division: this loop is the spin of every
        // blocking receive).
        let mut next = self.fb_cursor;
        for _ in 0..n {
            let src = if next >= n { 0 } else { next };
            next = src + 1;
            if src == self.me {
                continue;
            }
            let slot = self.fb_recv[src as usize];
            let fb = self.seg.fastbox(self.me, src, slot);
            // SAFETY: `full` is an atomic in the shared fastbox; read as 1 (acquire), the
            // slot is ours until we clear it, which is what `take_full` needs.
            let m = unsafe {
                if (*fb).full.load(Ordering::Acquire) == 0 {
                    continue;
                }
                self.take_full(fb, src, slot)
            };
            if m.is_some() {
                self.fb_cursor = if src + 1 == n { 0 } else { src + 1 };
                return m;
            }
        }
        None
    }

    /// Takes the next cell of the receive queue.
    #[inline]
    fn poll_queue(&self) -> Option<Incoming> {
        let q = &self.seg.slot(self.me).recv;
        if q.is_empty_hint() {
            return None;
        }
        let c = q.pop(&self.seg)?;
        // SAFETY: the cell was handed to us by the queue; its header was written before the
        // producer's release store that the pop acquired.
        let h = unsafe { &*self.seg.cell(c) };
        let kind = MsgKind::from_u32(h.kind).unwrap_or(MsgKind::Eager);
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
            seq: h.seq,
        })
    }

    /// The payload of a received cell.
    #[inline]
    pub fn payload(&self, m: &Incoming) -> &[u8] {
        if m.cell >= FB_TAG {
            let (src, slot) = fb_of_cell(m.cell);
            let fb = self.seg.fastbox(self.me, src, slot);
            // SAFETY: the fastbox stays ours until released; len ≤ FB_PAYLOAD.
            return unsafe { std::slice::from_raw_parts((*fb).payload.as_ptr(), m.len) };
        }
        // SAFETY: the cell is ours until released, and `len` was bounded by the sender.
        unsafe {
            std::slice::from_raw_parts(self.seg.payload(m.cell), m.len.min(self.seg.payload_cap()))
        }
    }

    /// Hands a received cell back to its owner.
    #[inline]
    pub fn release(&self, cell: u32) {
        if cell >= FB_TAG {
            let (src, slot) = fb_of_cell(cell);
            let fb = self.seg.fastbox(self.me, src, slot);
            // SAFETY: atomic store to the shared fastbox; the sender may refill it afterwards.
            unsafe { (*fb).full.store(0, Ordering::Release) };
            return;
        }
        let owner = self.seg.slot(self.seg.owner(cell));
        owner.free.push(&self.seg, cell);
        // Its owner may wait for a free cell.
        owner.bell.ring();
    }

    /// This rank's doorbell (see [`crate::platform::doorbell`]).
    pub fn own_bell(&self) -> &crate::platform::doorbell::Doorbell {
        &self.seg.slot(self.me).bell
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

    /// Copies from the segments `remote` of local rank `src` into the local segments `local`
    /// (both as (address, length)); returns the bytes copied (the smaller total, unless the
    /// kernel stops early).
    ///
    /// # Safety
    /// Every local segment must be valid for writes.
    pub unsafe fn cma_readv(
        &self,
        src: u32,
        local: &[(usize, usize)],
        remote: &[(usize, usize)],
    ) -> std::io::Result<usize> {
        // SAFETY: forwarded caller guarantee.
        unsafe { cma::readv(self.pids[src as usize], local, remote) }
    }

    /// The process id of local rank `r` (for single-copy transfers run outside the engine).
    pub fn pid_of(&self, r: u32) -> i32 {
        self.pids[r as usize]
    }

    /// Whether local rank `r` is blocked in a waiting call right now.
    pub fn peer_waiting(&self, r: u32) -> bool {
        self.seg.slot(r).waiting.load(Ordering::Relaxed) != 0
    }

    /// Marks this rank as waiting (or not) for peers deciding whether to split copies.
    pub fn set_waiting(&self, on: bool) {
        self.seg
            .slot(self.me)
            .waiting
            .store(on as u32, Ordering::Relaxed);
    }

    /// Writes `len` bytes from `src` into local rank `dst`'s memory at `addr`.
    ///
    /// # Safety
    /// `src` must be valid for `len` bytes of reads.
    pub unsafe fn cma_write(
        &self,
        dst: u32,
        src: *const u8,
        addr: u64,
        len: usize,
    ) -> std::io::Result<()> {
        // SAFETY: forwarded caller guarantee.
        unsafe { cma::write_to(self.pids[dst as usize], src, addr, len) }
    }

    /// Says whether this rank has started finalising (see [`segment::RankSlot::finalizing`]).
    pub fn mark_finalizing(&self, on: bool) {
        self.seg
            .slot(self.me)
            .finalizing
            .store(u32::from(on), Ordering::Release);
    }

    /// The node's other ranks as `(local rank, pid, reader of its finalising flag)`, for a
    /// [`crate::platform::peer_watch::PeerWatch`]. The readers point into the segment: the
    /// watch must be stopped before this engine is dropped.
    pub fn watched_peers(&self) -> Vec<(u32, i32, FinalizingReader)> {
        (0..self.seg.nlocal())
            .filter(|&r| r != self.me)
            .map(|r| {
                let flag = FlagRef(&self.seg.slot(r).finalizing);
                let read: FinalizingReader = Box::new(move || flag.is_set());
                (r, self.pids[r as usize], read)
            })
            .collect()
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
    kind: MsgKind,
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

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::sync::{Arc, Barrier, Mutex};

    /// A bootstrap for ranks that are threads of one process (stands in for PMI in tests).
    struct ThreadBoot {
        rank: i32,
        kvs: Arc<Mutex<HashMap<String, String>>>,
        barrier: Arc<Barrier>,
    }

    impl Bootstrap for ThreadBoot {
        fn rank(&self) -> i32 {
            self.rank
        }
        fn size(&self) -> i32 {
            2
        }
        fn put(&mut self, key: &str, value: &str) -> std::io::Result<()> {
            self.kvs.lock().unwrap().insert(key.into(), value.into());
            Ok(())
        }
        fn barrier(&mut self) -> std::io::Result<()> {
            self.barrier.wait();
            Ok(())
        }
        fn get(&mut self, key: &str) -> std::io::Result<Option<String>> {
            Ok(self.kvs.lock().unwrap().get(key).cloned())
        }
        fn finalize(&mut self) -> std::io::Result<()> {
            Ok(())
        }
        fn abort(&mut self, _: i32, _: &str) -> std::io::Result<()> {
            Ok(())
        }
        fn job_name(&self) -> String {
            "threads".into()
        }
    }

    /// Two engines of one node, set up concurrently by two threads.
    fn pair() -> (ShmEngine, ShmEngine) {
        pair_n(2)
    }

    /// The first two engines of a node sized for `nlocal` local ranks (the ring size and
    /// segment layout follow `nlocal`).
    fn pair_n(nlocal: u32) -> (ShmEngine, ShmEngine) {
        let mut e = engines_n(2, nlocal);
        let b = e.pop().unwrap();
        (e.pop().unwrap(), b)
    }

    /// `k` engines (local ranks 0..k) of a node sized for `nlocal` local ranks, set up
    /// concurrently by `k` threads.
    fn engines_n(k: u32, nlocal: u32) -> Vec<ShmEngine> {
        let kvs = Arc::new(Mutex::new(HashMap::new()));
        let barrier = Arc::new(Barrier::new(k as usize));
        let threads: Vec<_> = (0..k)
            .map(|r| {
                let mut boot = ThreadBoot {
                    rank: r as i32,
                    kvs: kvs.clone(),
                    barrier: barrier.clone(),
                };
                std::thread::spawn(move || {
                    let host = format!("testhost{k}-{nlocal}");
                    ShmEngine::setup_among(&mut boot, &host, r, nlocal, 0, k)
                        .map_err(|e| e.message().to_string())
                })
            })
            .collect();
        threads
            .into_iter()
            .map(|t| t.join().unwrap().unwrap())
            .collect()
    }

    /// A random mix of ring and queue sends, give-backs, slots held beyond a lap and
    /// out-of-order releases loses, duplicates and reorders nothing, at every ring size and
    /// across the counters' wrap-around.
    #[test]
    fn random_ring_and_queue_mix_keeps_order_at_every_ring_size() {
        for (nlocal, wrap) in [
            (2u32, false),
            (9, false),
            (33, false),
            (65, false),
            (129, false),
            (300, false),
            (2, true),
            (129, true),
        ] {
            let (mut a, mut b) = pair_n(nlocal);
            if wrap {
                a.send_seq[1] = u32::MAX - 3000;
                b.recv_seq[0] = u32::MAX - 3000;
                a.fb_send[1] = u32::MAX - 2998;
                b.fb_recv[0] = u32::MAX - 2998;
            }
            let slots = a.seg.fb_slots();
            let mut rng = 0x1234_5678_9abc_def0u64 ^ nlocal as u64;
            let mut rnd = move |n: u64| {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                rng % n
            };
            let small = [1u8; 8];
            let big = vec![2u8; 1000];
            let env = |tag| Envelope {
                ctx: 0,
                src: 0,
                tag,
            };
            let mut done = Vec::new();
            let (mut sent, mut got, mut held) = (0i32, Vec::new(), Vec::<u32>::new());
            for _ in 0..20000 {
                match rnd(6) {
                    0 | 1 => {
                        let data: &[u8] = if rnd(4) == 0 { &big } else { &small };
                        if !a.send_eager_now(1, env(sent), data.as_ptr(), data.len()) {
                            a.send_or_queue(msg(sent, data));
                        }
                        sent += 1;
                    }
                    2 => {
                        a.send_or_queue(msg(sent, &small));
                        sent += 1;
                    }
                    3 => {
                        a.flush(&mut done);
                    }
                    _ => {
                        if let Some(m) = b.poll() {
                            if rnd(3) == 0 {
                                b.unpoll(m);
                                continue;
                            }
                            got.push(m.env.tag);
                            if rnd(2) == 0 && held.len() < 2 * slots as usize + 3 {
                                held.push(m.cell);
                            } else {
                                b.release(m.cell);
                            }
                        }
                        if rnd(4) == 0 && !held.is_empty() {
                            let i = rnd(held.len() as u64) as usize;
                            b.release(held.swap_remove(i));
                        }
                    }
                }
            }
            for c in held.drain(..) {
                b.release(c);
            }
            for _ in 0..1_000_000 {
                if got.len() == sent as usize {
                    break;
                }
                a.flush(&mut done);
                if let Some(m) = b.poll() {
                    got.push(m.env.tag);
                    b.release(m.cell);
                }
            }
            assert_eq!(
                got,
                (0..sent).collect::<Vec<_>>(),
                "nlocal {nlocal}: lost or reordered"
            );
            assert!(b.poll().is_none());
        }
    }

    /// Two concurrent senders and a receiver that holds and gives back messages: each
    /// sender's messages arrive once and in order.
    #[test]
    fn two_concurrent_senders_keep_their_order() {
        for nlocal in [3u32, 129, 300] {
            let mut es = engines_n(3, nlocal);
            let mut r = es.remove(0);
            const N: i32 = 200_000;
            let senders: Vec<_> = es
                .into_iter()
                .enumerate()
                .map(|(i, mut e)| {
                    std::thread::spawn(move || {
                        let mut rng = 0x9e37_79b9_7f4a_7c15u64 ^ i as u64;
                        let mut rnd = move |n: u64| {
                            rng ^= rng << 13;
                            rng ^= rng >> 7;
                            rng ^= rng << 17;
                            rng % n
                        };
                        let small = [1u8; 8];
                        let big = vec![2u8; 1000];
                        let mut done = Vec::new();
                        for t in 0..N {
                            let data: &[u8] = if rnd(5) == 0 { &big } else { &small };
                            let env = Envelope {
                                ctx: 0,
                                src: i as i32 + 1,
                                tag: t,
                            };
                            let kind = if rnd(50) == 0 {
                                MsgKind::EagerSync
                            } else {
                                MsgKind::Eager
                            };
                            if kind == MsgKind::Eager
                                && rnd(2) == 0
                                && e.send_eager_now(0, env, data.as_ptr(), data.len())
                            {
                                continue;
                            }
                            e.send_or_queue(Outgoing::Msg {
                                dest: 0,
                                kind,
                                env,
                                sreq: 0,
                                buf: data.as_ptr(),
                                bytes: data.len(),
                            });
                            if rnd(3) == 0 {
                                e.flush(&mut done);
                            }
                        }
                        while e.has_outgoing() {
                            e.flush(&mut done);
                            std::hint::spin_loop();
                        }
                        e
                    })
                })
                .collect();
            let mut next = [0i32; 2];
            let mut held: Vec<u32> = Vec::new();
            let mut rng = 77u64;
            let mut rnd = move |n: u64| {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                rng % n
            };
            while next[0] < N || next[1] < N {
                let Some(m) = r.poll() else {
                    std::hint::spin_loop();
                    continue;
                };
                if rnd(4) == 0 {
                    r.unpoll(m);
                    continue;
                }
                let s = (m.env.src - 1) as usize;
                assert_eq!(
                    m.env.tag, next[s],
                    "nlocal {nlocal}: sender {s} out of order"
                );
                assert_eq!(m.src_local as usize, s + 1);
                next[s] += 1;
                if rnd(3) == 0 && held.len() < 20 {
                    held.push(m.cell)
                } else {
                    r.release(m.cell)
                }
                if rnd(3) == 0 {
                    while let Some(c) = held.pop() {
                        r.release(c)
                    }
                }
            }
            while let Some(c) = held.pop() {
                r.release(c)
            }
            for t in senders {
                t.join().unwrap();
            }
        }
    }

    fn msg(tag: i32, data: &[u8]) -> Outgoing {
        Outgoing::Msg {
            dest: 1,
            kind: MsgKind::Eager,
            env: Envelope {
                ctx: 0,
                src: 0,
                tag,
            },
            sreq: tag as u64,
            buf: data.as_ptr(),
            bytes: data.len(),
        }
    }

    /// A sleeping receiver is rung by a message through its fastbox and by one through a
    /// cell, and a sender whose cell comes back is rung too; nobody rings when nothing is
    /// sent (the sleep then lasts its timeout).
    #[test]
    fn sends_and_returned_cells_ring_the_doorbell() {
        use std::time::{Duration, Instant};
        let (mut a, mut b) = pair();
        // Whether a sleep armed before `act` ends long before its 20 s timeout.
        let rung = |bell: &crate::platform::doorbell::Doorbell, act: &mut dyn FnMut()| {
            let armed = bell.arm();
            act();
            let t = Instant::now();
            bell.sleep(armed, Duration::from_secs(20));
            bell.disarm();
            t.elapsed() < Duration::from_secs(10)
        };
        let small = [1u8; 8];
        let big = vec![2u8; 4000];
        let mut done = Vec::new();
        assert!(rung(b.own_bell(), &mut || {
            a.send_or_queue(msg(0, &small));
            a.flush(&mut done);
        }));
        assert!(rung(b.own_bell(), &mut || {
            a.send_or_queue(msg(1, &big));
            a.flush(&mut done);
        }));
        let first = b.poll().expect("fastbox message");
        b.release(first.cell);
        let second = b.poll().expect("cell message");
        assert_eq!(second.len, 4000);
        assert!(rung(a.own_bell(), &mut || b.release(second.cell)));
        let armed = b.own_bell().arm();
        let t = Instant::now();
        b.own_bell().sleep(armed, Duration::from_millis(30));
        b.own_bell().disarm();
        assert!(
            t.elapsed() >= Duration::from_millis(29),
            "rung with nothing sent"
        );
    }

    /// Small messages go through the fastbox while it is free and through the queue while it
    /// is full; the receiver still sees them in send order, whatever the mix.
    #[test]
    fn fastbox_and_queue_keep_send_order() {
        let (mut a, mut b) = pair();
        let small = [7u8; 16];
        let big = vec![9u8; 4000];
        let mut sent = 0;
        let mut got = Vec::new();
        let mut done = Vec::new();
        for round in 0..200 {
            // Bursts of 1..5 messages, mixed sizes, before the receiver looks.
            for k in 0..(round % 5 + 1) {
                let data: &[u8] = if (round + k) % 3 == 0 { &big } else { &small };
                a.send_or_queue(msg(sent, data));
                sent += 1;
            }
            a.flush(&mut done);
            while let Some(m) = b.poll() {
                assert_eq!(b.payload(&m).len(), if m.len == 4000 { 4000 } else { 16 });
                got.push(m.env.tag);
                b.release(m.cell);
            }
        }
        while got.len() < sent as usize {
            a.flush(&mut done);
            if let Some(m) = b.poll() {
                got.push(m.env.tag);
                b.release(m.cell);
            }
        }
        assert_eq!(got, (0..sent).collect::<Vec<_>>(), "messages reordered");
        assert!(a.idle());
    }

    /// A burst of small messages fills the sender's fastbox ring before it spills into cells;
    /// the receiver sees send order even when it keeps messages unreleased for more than a
    /// lap of the ring (meeting its own held message in the slot it expects next) and
    /// releases them out of order.
    #[test]
    fn fastbox_ring_laps_and_held_slots_keep_order() {
        // The largest rings (two local ranks) and rings of 8 slots (33 local ranks).
        for (nlocal, want) in [(2u32, FB_SLOTS), (33, 8)] {
            laps_and_held_slots_keep_order(nlocal, want as i32);
        }
    }

    fn laps_and_held_slots_keep_order(nlocal: u32, want: i32) {
        let (mut a, mut b) = pair_n(nlocal);
        let small = [5u8; 8];
        let big = vec![6u8; 3000];
        let mut done = Vec::new();
        // An empty ring takes a whole burst of small messages.
        let slots = a.seg.fb_slots() as i32;
        assert_eq!(slots, want, "{nlocal} local ranks");
        // Held messages at most: more than a lap of the ring.
        let hold = slots as usize + 4;
        for t in 0..slots {
            a.send_or_queue(msg(t, &small));
        }
        let mut sent = slots;
        let mut got = Vec::new();
        while let Some(m) = b.poll() {
            assert!(m.cell >= FB_TAG, "message {} not in the ring", m.env.tag);
            got.push(m.env.tag);
            b.release(m.cell);
        }
        assert_eq!(got.len(), slots as usize);
        let mut held: Vec<u32> = Vec::new();
        for round in 0..400 {
            for k in 0..(round % 19 + 1) {
                let data: &[u8] = if (round + k) % 7 == 3 { &big } else { &small };
                a.send_or_queue(msg(sent, data));
                sent += 1;
            }
            a.flush(&mut done);
            for _ in 0..(round % 5 + 1) {
                let Some(m) = b.poll() else { break };
                got.push(m.env.tag);
                // Hold up to `hold` messages, and give them back newest first.
                held.push(m.cell);
                if held.len() > hold || (round as usize).is_multiple_of(hold + 1) {
                    while let Some(c) = held.pop() {
                        b.release(c);
                    }
                }
            }
        }
        while let Some(c) = held.pop() {
            b.release(c);
        }
        for _ in 0..100_000 {
            if got.len() == sent as usize {
                break;
            }
            a.flush(&mut done);
            if let Some(m) = b.poll() {
                got.push(m.env.tag);
                b.release(m.cell);
            }
        }
        assert_eq!(
            got,
            (0..sent).collect::<Vec<_>>(),
            "{nlocal} local ranks: messages lost or reordered"
        );
        assert!(b.poll().is_none());
    }

    /// A peer that keeps its ring full does not hold back the queue: a control reply queued
    /// behind ring messages (no sequence number, so nothing orders it after them) is taken
    /// within a bounded number of polls.
    #[test]
    fn full_rings_do_not_starve_the_queue() {
        let (mut a, mut b) = pair();
        let mut done = Vec::new();
        let small = [1u8; 8];
        let env = |tag| Envelope {
            ctx: 0,
            src: 0,
            tag,
        };
        // Ring-only sends (`send_eager_now` would spill into cells once the ring is full).
        let mut sent = 0;
        while a.fastbox_put(1, MsgKind::Eager, env(sent), 0, small.as_ptr(), small.len()) {
            sent += 1;
        }
        a.send_or_queue(Outgoing::Reply {
            dest: 1,
            kind: MsgKind::Ack,
            sreq: 77,
            rreq: 0,
        });
        a.flush(&mut done);
        let mut polls = 0;
        loop {
            let m = b.poll().expect("the ring is kept full");
            polls += 1;
            b.release(m.cell);
            if m.kind == MsgKind::Ack {
                assert_eq!(m.sreq, 77);
                break;
            }
            assert!(
                polls <= 2 * FB_STREAK,
                "the reply waited behind {polls} ring messages"
            );
            // Refill the slot just released.
            while a.fastbox_put(1, MsgKind::Eager, env(sent), 0, small.as_ptr(), small.len()) {
                sent += 1;
            }
        }
    }

    /// The race the sequence numbers exist for: the receiver takes a queued cell before it
    /// noticed the sender's earlier fastbox message. The fastbox message must come out first.
    #[test]
    fn queued_cell_waits_for_earlier_fastbox_message() {
        let (mut a, mut b) = pair();
        let mut done = Vec::new();
        let small = [1u8; 8];
        let big = vec![2u8; 1000];
        a.send_or_queue(msg(0, &small)); // fastbox
        a.send_or_queue(msg(1, &big)); // queue
        a.flush(&mut done);
        let cell = b.poll_queue().expect("queued cell");
        assert_eq!(cell.env.tag, 1);
        let first = b.in_sequence(cell);
        assert_eq!(
            first.env.tag, 0,
            "the fastbox message precedes the queued one"
        );
        b.release(first.cell);
        let second = b.poll().unwrap();
        assert_eq!(second.env.tag, 1);
        b.release(second.cell);
        assert!(b.poll().is_none());
    }

    /// The same race with several messages in the ring ahead of the queued cell: all of them
    /// come out, in order, before the cell.
    #[test]
    fn queued_cell_waits_for_every_earlier_ring_message() {
        let (mut a, mut b) = pair();
        let mut done = Vec::new();
        let small = [1u8; 8];
        let big = vec![2u8; 1000];
        for t in 0..3 {
            a.send_or_queue(msg(t, &small)); // ring
        }
        a.send_or_queue(msg(3, &big)); // queue
        a.flush(&mut done);
        let cell = b.poll_queue().expect("queued cell");
        assert_eq!(cell.env.tag, 3);
        let mut got = vec![b.in_sequence(cell).env.tag];
        while let Some(m) = b.poll() {
            got.push(m.env.tag);
            b.release(m.cell);
        }
        assert_eq!(got, [0, 1, 2, 3], "ring messages precede the queued one");
    }

    /// Eager sends of the fast path, mixed with queued sends: a fast send never overtakes a
    /// queued one, and a message given back with `unpoll` comes out next, before a stashed
    /// cell, so the receiver still sees send order.
    #[test]
    fn fast_sends_and_given_back_messages_keep_order() {
        let (mut a, mut b) = pair();
        let env = |tag| Envelope {
            ctx: 0,
            src: 0,
            tag,
        };
        let small = [3u8; 8];
        let big = vec![4u8; 2000];
        let mut done = Vec::new();
        let mut sent = 0;
        let mut got = Vec::new();
        for round in 0..300 {
            for k in 0..(round % 4 + 1) {
                let data: &[u8] = if (round + k) % 3 == 0 { &big } else { &small };
                if round % 7 == 0 || !a.send_eager_now(1, env(sent), data.as_ptr(), data.len()) {
                    a.send_or_queue(msg(sent, data));
                }
                sent += 1;
            }
            if round % 2 == 0 {
                a.flush(&mut done);
            }
            // Take a message, give it back, take it again.
            if let Some(m) = b.poll() {
                b.unpoll(m);
                assert!(!b.idle(), "a given-back message is work");
                let again = b.poll().unwrap();
                assert_eq!((again.env.tag, again.cell), (m.env.tag, m.cell));
                got.push(again.env.tag);
                b.release(again.cell);
            }
        }
        while got.len() < sent as usize {
            a.flush(&mut done);
            if let Some(m) = b.poll() {
                got.push(m.env.tag);
                b.release(m.cell);
            }
        }
        assert_eq!(got, (0..sent).collect::<Vec<_>>(), "messages reordered");
        assert!(!a.has_outgoing());
        assert!(
            !a.send_eager_now(1, env(0), big.as_ptr(), a.payload_cap() + 1),
            "larger than a cell"
        );
    }
}

/// A model of the fastbox ring protocol ([`ShmEngine::fastbox_put`] on the sender's side,
/// `take_fastbox` and [`ShmEngine::release`] on the receiver's): each slot's `full` word hands
/// its fields over (release store, acquire load) in both directions, and the sender reuses a
/// slot only once the receiver cleared it, lap after lap.
#[cfg(all(test, loom))]
mod loom_tests {
    use loom::cell::UnsafeCell;
    use loom::sync::atomic::{AtomicU32, Ordering};
    use loom::sync::Arc;

    /// Slots of the modelled ring (two, so that three messages lap it).
    const SLOTS: usize = 2;

    struct Slot {
        full: AtomicU32,
        seq: UnsafeCell<u32>,
    }

    #[test]
    fn fastbox_ring_hands_each_slot_over_lap_after_lap() {
        loom::model(|| {
            let ring: Arc<Vec<Slot>> = Arc::new(
                (0..SLOTS)
                    .map(|_| Slot {
                        full: AtomicU32::new(0),
                        seq: UnsafeCell::new(u32::MAX),
                    })
                    .collect(),
            );
            let tx = ring.clone();
            let sender = loom::thread::spawn(move || {
                for seq in 0..3u32 {
                    let s = &tx[seq as usize % SLOTS];
                    // A full slot: the real sender spills into a cell; here it waits.
                    while s.full.load(Ordering::Acquire) != 0 {
                        loom::thread::yield_now();
                    }
                    // SAFETY: the slot is the sender's while `full == 0` (acquire above).
                    s.seq.with_mut(|p| unsafe { *p = seq });
                    s.full.store(1, Ordering::Release);
                }
            });
            for expected in 0..3u32 {
                let s = &ring[expected as usize % SLOTS];
                while s.full.load(Ordering::Acquire) == 0 {
                    loom::thread::yield_now();
                }
                // SAFETY: the slot is the receiver's while `full == 1` (acquire above).
                let got = s.seq.with(|p| unsafe { *p });
                assert_eq!(got, expected, "a slot's message is seen whole and in order");
                s.full.store(0, Ordering::Release);
            }
            sender.join().unwrap();
        });
    }
}
