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
mod tests;

/// A model of the fastbox ring protocol ([`ShmEngine::fastbox_put`] on the sender's side,
/// `take_fastbox` and [`ShmEngine::release`] on the receiver's): each slot's `full` word hands
/// its fields over (release store, acquire load) in both directions, and the sender reuses a
/// slot only once the receiver cleared it, lap after lap.
#[cfg(all(test, loom))]
mod loom_tests;
