//! Partitioned point-to-point communication (MPI-4 `MPI_Psend_init` / `MPI_Precv_init`).
//!
//! A partitioned request is a persistent request whose state is a [`Part`] in the request's
//! `Extra`. The two sides meet once, by a handshake on the communicator's internal context:
//! the sender's init sends (user tag, partitions, bytes per partition, its request token) on
//! [`HS_TAG`]; each receive request takes, in the order of the `MPI_Precv_init` calls, the
//! first such message from its source with its tag (MPI's matching order: the handshakes of
//! one sender travel in order, and the receive requests scan in init order because their
//! handshake operations sit in the runtime's background list in that order). The receiver
//! answers on [`HS_REPLY_TAG`] with its partitioning and a range of internal data tags it
//! reserved for this pair of requests.
//!
//! Both sides then cut the message at the union of both partitionings: every *segment* lies in
//! one send partition and one receive partition, and travels as one internal message with tag
//! `data_tag(base + segment)` (eager, or rendezvous with one CMA copy, as any message). A send
//! partition's segments leave at `MPI_Pready`; the receiver posts one internal receive per
//! segment when a round starts. Each `MPI_Start` begins a round; the same tags serve every
//! round, and MPI's non-overtaking order per (source, tag) keeps round `r + 1`'s message for a
//! segment behind round `r`'s. A receive partition has arrived when all its segments' receives
//! have completed. The segment requests are internal parts of the partitioned request
//! (`Request::parent`), whose round completes when the last one does.
//!
//! Noncontiguous buffers (derived types with holes, predefined pair types) go through a
//! packed staging copy: a send partition is packed at `MPI_Pready`, a receive partition is
//! unpacked when `MPI_Parrived` first sees it complete or when the round completes.

use crate::core::datatype::{Layout, TypeInfo};
use crate::core::error::{fail, MpiResult};
use crate::core::p2p::matching::Payload;
use crate::core::p2p::request::{ReqKind, SendMode, Status};
use crate::core::p2p::{unpack_from, wire_ctx, RecvArgs, SendArgs, INTERNAL_TAG_MAX};
use crate::core::runtime::{Background, Runtime};
use crate::mpi_abi::consts::*;
use parking_lot::Mutex;

/// Internal tag of the sender's handshake (below the collective tags of `coll::sched`).
pub const HS_TAG: i32 = INTERNAL_TAG_MAX - (1 << 26);
/// Internal tag of the receiver's answer.
pub const HS_REPLY_TAG: i32 = HS_TAG - 1;
/// Data tags are `DATA_TAG_TOP - n` for `n < DATA_TAGS`.
const DATA_TAG_TOP: i32 = HS_TAG - 2;
/// Number of internal data tags (each live receive request reserves one per segment).
const DATA_TAGS: u32 = 1 << 30;

/// Length of a handshake message: five 64-bit words.
const HS_LEN: usize = 40;

/// The internal tag of data tag number `n`.
fn data_tag(n: u32) -> i32 {
    DATA_TAG_TOP - n as i32
}

/// Free ranges (start, length) of the data tag space, first fit.
static TAGS: Mutex<Vec<(u32, u32)>> = Mutex::new(Vec::new());
/// Whether [`TAGS`] was initialised.
static TAGS_INIT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

fn alloc_tags(n: u32) -> Option<u32> {
    let mut t = TAGS.lock();
    if !TAGS_INIT.swap(true, std::sync::atomic::Ordering::Relaxed) {
        t.push((0, DATA_TAGS));
    }
    let i = t.iter().position(|&(_, len)| len >= n)?;
    let (start, len) = t[i];
    if len == n {
        t.remove(i);
    } else {
        t[i] = (start + n, len - n);
    }
    Some(start)
}

fn release_tags(start: u32, n: u32) {
    if n == 0 {
        return;
    }
    let mut t = TAGS.lock();
    let i = t.partition_point(|&(s, _)| s < start);
    t.insert(i, (start, n));
    // Merge with the neighbours.
    if i + 1 < t.len() && t[i].0 + t[i].1 == t[i + 1].0 {
        t[i].1 += t[i + 1].1;
        t.remove(i + 1);
    }
    if i > 0 && t[i - 1].0 + t[i - 1].1 == t[i].0 {
        t[i - 1].1 += t[i].1;
        t.remove(i);
    }
}

/// What both sides agreed at the handshake.
#[derive(Debug)]
pub struct Link {
    /// Bytes both sides move per round (the smaller of the two totals).
    pub total: usize,
    /// The peer's total bytes.
    pub peer_total: usize,
    /// First data tag number of this pair.
    pub tag_base: u32,
    /// Segments (packed offset, length), in order.
    pub segs: Vec<(usize, usize)>,
    /// For each partition of this side, its first segment (`parts + 1` entries).
    pub first: Vec<u32>,
}

impl Link {
    /// The segments receive partition `j` of `parts` waits for.
    ///
    /// When no data moves (`total == 0`) there is one empty segment per send partition, sent
    /// at its `MPI_Pready`; receive partition `j` then waits for the send partitions that
    /// share its position, `[j * S / parts, max(that + 1, (j + 1) * S / parts))`, so that
    /// every receive partition waits for at least one send partition.
    fn recv_range(&self, j: usize, parts: usize) -> (usize, usize) {
        if self.total > 0 {
            return (self.first[j] as usize, self.first[j + 1] as usize);
        }
        let s = self.segs.len();
        let lo = (j * s / parts).min(s.saturating_sub(1));
        let hi = ((j + 1) * s / parts).max(lo + 1).min(s);
        (lo, hi)
    }
}

/// The segments and send partitions' first segments of a transfer.
///
/// Data is cut at both partitionings; a transfer of no data (`total == 0`) still sends one
/// empty segment per send partition, so that a zero-size partition arrives only when its
/// sender marks it ready.
fn cut(total: usize, sparts: usize, spb: usize, rpb: usize) -> Vec<(usize, usize)> {
    if total == 0 {
        vec![(0, 0); sparts]
    } else {
        segments(total, spb, rpb)
    }
}

/// For each of `parts` partitions of `size` bytes of this side, its first segment.
fn firsts_of(segs: &[(usize, usize)], total: usize, parts: usize, size: usize) -> Vec<u32> {
    if total == 0 {
        // Sender side: segment i is partition i; the receiver uses `Link::recv_range`.
        (0..=parts).map(|i| i.min(segs.len()) as u32).collect()
    } else {
        firsts(segs, parts, size)
    }
}

/// State of a partitioned request.
#[derive(Debug)]
pub struct Part {
    /// Send side.
    pub send: bool,
    /// Communicator index.
    pub comm: u32,
    /// Peer rank or `MPI_PROC_NULL`.
    pub peer: i32,
    /// User tag.
    pub tag: i32,
    /// User buffer (base address of the transfer).
    pub buf: *mut u8,
    /// Partitions.
    pub parts: usize,
    /// Elements per partition.
    pub count: usize,
    /// Packed bytes per partition.
    pub part_bytes: usize,
    /// Element layout of a predefined (or contiguous derived) type.
    pub unit: TypeInfo,
    /// Noncontiguous derived type.
    pub layout: Option<Layout>,
    /// The data is not one contiguous block of the user buffer: it is staged in `scratch`.
    pub staged: bool,
    /// Packed staging copy (staged transfers only).
    pub scratch: Vec<u8>,
    /// Set once the handshake completed.
    pub link: Option<Link>,
    /// Send side: partitions marked ready in this round.
    pub ready: Vec<bool>,
    /// Send side: how many.
    pub nready: usize,
    /// Receive side: partitions unpacked from `scratch` in this round.
    pub unpacked: Vec<bool>,
    /// The current round's segments have been started (receive) or counted (send).
    pub running: bool,
    /// Segment requests of this round not yet complete.
    pub pending: usize,
    /// Token of each segment's internal request in this round (0: not started).
    pub seg_tok: Vec<u64>,
    /// First error of this round.
    pub error: i32,
    /// The handshake failed with this error class (`MPI_SUCCESS`: it did not).
    pub failed: i32,
}

impl Drop for Part {
    fn drop(&mut self) {
        if !self.send {
            if let Some(l) = &self.link {
                release_tags(l.tag_base, l.segs.len() as u32);
            }
        }
    }
}

impl Part {
    /// Bytes this side moves per round at most.
    fn my_total(&self) -> usize {
        self.parts * self.part_bytes
    }

    /// Base address segments are sent from / received into.
    fn data_base(&mut self) -> *mut u8 {
        if self.staged {
            self.scratch.as_mut_ptr()
        } else {
            self.buf
        }
    }
}

/// Validated arguments of `MPI_Psend_init` / `MPI_Precv_init`.
#[derive(Debug)]
pub struct PartArgs {
    /// Send side.
    pub send: bool,
    /// Communicator index.
    pub comm: u32,
    /// Peer rank or `MPI_PROC_NULL`.
    pub peer: i32,
    /// User tag.
    pub tag: i32,
    /// Buffer (base of the transfer).
    pub buf: *mut u8,
    /// Partitions.
    pub parts: usize,
    /// Elements per partition.
    pub count: usize,
    /// Packed bytes of the whole buffer.
    pub packed: usize,
    /// Element layout.
    pub unit: TypeInfo,
    /// Noncontiguous derived layout.
    pub layout: Option<Layout>,
}

/// The partitioned state of request `rid`, if it is one.
pub fn part_of(rt: &mut Runtime, rid: u32) -> Option<&mut Part> {
    rt.reqs.get_mut(rid)?.extra_mut()?.part.as_deref_mut()
}

/// Whether request `rid` is partitioned.
pub fn is_part(rt: &Runtime, rid: u32) -> bool {
    rt.reqs
        .get(rid)
        .and_then(|r| r.extra_ref())
        .is_some_and(|e| e.part.is_some())
}

/// Background operation that completes the handshake of one partitioned request.
struct Handshake {
    /// The request's handle (generation checked: a freed request ends the operation).
    handle: usize,
}

impl Background for Handshake {
    fn poll(&mut self, rt: &mut Runtime) -> bool {
        let Some(rid) = rt.reqs.decode(self.handle) else {
            return true;
        };
        handshake_step(rt, rid).unwrap_or_else(|e| {
            // The request can never move data: its rounds complete with the error.
            if let Some(p) = part_of(rt, rid) {
                p.failed = e.class();
            }
            if rt.reqs.get(rid).is_some_and(|r| r.active() && !r.done()) {
                fail_round(rt, rid);
            }
            true
        })
    }
}

fn encode(words: [u64; 5]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

fn decode_words(data: &[u8]) -> Option<[u64; 5]> {
    if data.len() != HS_LEN {
        return None;
    }
    let mut w = [0u64; 5];
    for (i, c) in data.chunks_exact(8).enumerate() {
        w[i] = u64::from_le_bytes(c.try_into().ok()?);
    }
    Some(w)
}

/// Sends a handshake message (always eager, whatever `HYMPI_EAGER_MAX` says, so that the
/// peer can read it in its unexpected queue).
fn send_ctrl(rt: &mut Runtime, comm: u32, dest: i32, tag: i32, words: [u64; 5]) -> MpiResult<()> {
    let sid = rt.new_request(ReqKind::Send, comm)?;
    let r = rt.reqs.get_mut(sid).unwrap();
    r.set_internal(true);
    let e = r.extra();
    e.scratch = encode(words);
    let buf = e.scratch.as_ptr();
    let (em, nem) = (rt.eager_max, rt.net_eager_max);
    rt.eager_max = em.max(HS_LEN);
    rt.net_eager_max = nem.max(HS_LEN);
    let res = rt.start_send(
        sid,
        SendArgs {
            comm,
            dest,
            tag,
            buf,
            bytes: HS_LEN,
            mode: SendMode::Standard,
            unit: byte_unit(),
            layout: None,
        },
    );
    rt.eager_max = em;
    rt.net_eager_max = nem;
    res
}

/// Takes the first unexpected handshake message from `src` with `tag` on communicator
/// `comm` whose words satisfy `want`.
fn take_ctrl(
    rt: &mut Runtime,
    comm: u32,
    src: i32,
    tag: i32,
    want: impl Fn(&[u64; 5]) -> bool,
) -> Option<[u64; 5]> {
    let ctx = wire_ctx(rt.comms.get(comm)?, tag);
    let m = rt.matchers.of_msg(ctx, src, tag);
    let mut found = None;
    for (i, u) in m.unexpected.iter().enumerate() {
        if u.env.ctx != ctx || u.env.src != src || u.env.tag != tag {
            continue;
        }
        if let Payload::Eager { data, .. } = &u.payload {
            if let Some(w) = decode_words(data) {
                if want(&w) {
                    found = Some((i, w));
                    break;
                }
            }
        }
    }
    let (i, w) = found?;
    m.unexpected.remove(i);
    Some(w)
}

fn byte_unit() -> TypeInfo {
    crate::core::datatype::predefined(MPI_BYTE).expect("MPI_BYTE")
}

/// The segments of a message of `total` bytes cut at multiples of `a` and of `b`.
fn segments(total: usize, a: usize, b: usize) -> Vec<(usize, usize)> {
    let mut segs = Vec::new();
    let (mut x, mut y) = (a, b);
    let mut at = 0usize;
    while at < total {
        // Next boundary after `at` on either side.
        while x <= at {
            x += a;
        }
        while y <= at {
            y += b;
        }
        let end = x.min(y).min(total);
        segs.push((at, end - at));
        at = end;
    }
    segs
}

/// For each of `parts` partitions of `size` bytes, the index of its first segment.
fn firsts(segs: &[(usize, usize)], parts: usize, size: usize) -> Vec<u32> {
    (0..=parts)
        .map(|i| segs.partition_point(|&(off, _)| off < i.saturating_mul(size)) as u32)
        .collect()
}

/// Creates a partitioned request (inactive) and starts its handshake.
pub fn init(rt: &mut Runtime, a: PartArgs) -> MpiResult<u32> {
    let kind = if a.send { ReqKind::Send } else { ReqKind::Recv };
    let rid = rt.new_request(kind, a.comm)?;
    let staged = a.layout.is_some() || a.unit.size != a.unit.extent;
    let part_bytes = a.packed.checked_div(a.parts).unwrap_or(0);
    let p = Part {
        send: a.send,
        comm: a.comm,
        peer: a.peer,
        tag: a.tag,
        buf: a.buf,
        parts: a.parts,
        count: a.count,
        part_bytes,
        unit: a.unit,
        layout: a.layout,
        staged,
        scratch: if staged {
            vec![0u8; a.packed]
        } else {
            Vec::new()
        },
        link: None,
        ready: vec![false; a.parts],
        nready: 0,
        unpacked: if staged && !a.send {
            vec![false; a.parts]
        } else {
            Vec::new()
        },
        running: false,
        pending: 0,
        seg_tok: Vec::new(),
        error: MPI_SUCCESS,
        failed: MPI_SUCCESS,
    };
    let token = rt.reqs.token(rid);
    let r = rt.reqs.get_mut(rid).unwrap();
    r.set_persistent(true);
    r.set_active(false);
    r.set_done(true);
    r.extra().part = Some(Box::new(p));
    if a.peer == MPI_PROC_NULL {
        return Ok(rid);
    }
    if a.send {
        send_ctrl(
            rt,
            a.comm,
            a.peer,
            HS_TAG,
            [1, a.tag as u64, a.parts as u64, part_bytes as u64, token],
        )?;
    }
    let handle = rt.reqs.handle(rid);
    rt.background.push(Box::new(Handshake { handle }));
    Ok(rid)
}

/// One attempt at the handshake of request `rid`; whether it is complete.
fn handshake_step(rt: &mut Runtime, rid: u32) -> MpiResult<bool> {
    let token = rt.reqs.token(rid);
    let Some(p) = part_of(rt, rid) else {
        return Ok(true);
    };
    if p.link.is_some() {
        return Ok(true);
    }
    let (send, comm, peer, tag, parts, pb) = (p.send, p.comm, p.peer, p.tag, p.parts, p.part_bytes);
    if send {
        let Some(w) = take_ctrl(rt, comm, peer, HS_REPLY_TAG, |w| w[0] == 2 && w[1] == token)
        else {
            return Ok(false);
        };
        let (rparts, rpb, base) = (w[2] as usize, w[3] as usize, w[4] as u32);
        let peer_total = rparts.saturating_mul(rpb);
        let total = (parts * pb).min(peer_total);
        let segs = cut(total, parts, pb, rpb);
        let first = firsts_of(&segs, total, parts, pb);
        let p = part_of(rt, rid).unwrap();
        p.link = Some(Link {
            total,
            peer_total,
            tag_base: base,
            segs,
            first,
        });
    } else {
        let Some(w) = take_ctrl(rt, comm, peer, HS_TAG, |w| w[0] == 1 && w[1] == tag as u64) else {
            return Ok(false);
        };
        let (sparts, spb, stoken) = (w[2] as usize, w[3] as usize, w[4]);
        let peer_total = sparts.saturating_mul(spb);
        let total = (parts * pb).min(peer_total);
        let segs = cut(total, sparts, spb, pb);
        let Some(base) = alloc_tags(segs.len() as u32) else {
            return fail(
                MPI_ERR_INTERN,
                "out of internal tags for partitioned requests",
            );
        };
        let first = firsts_of(&segs, total, parts, pb);
        send_ctrl(
            rt,
            comm,
            peer,
            HS_REPLY_TAG,
            [2, stoken, parts as u64, pb as u64, base as u64],
        )?;
        let p = part_of(rt, rid).unwrap();
        p.link = Some(Link {
            total,
            peer_total,
            tag_base: base,
            segs,
            first,
        });
    }
    let active = rt.reqs.get(rid).is_some_and(|r| r.active() && !r.done());
    if active {
        begin_round(rt, rid)?;
    }
    Ok(true)
}

/// `MPI_Start` of a partitioned request: `Ok(false)` when `rid` is not one.
pub fn start(rt: &mut Runtime, rid: u32) -> MpiResult<bool> {
    if !is_part(rt, rid) {
        return Ok(false);
    }
    let r = rt.reqs.get_mut(rid).unwrap();
    if r.active() {
        return fail(MPI_ERR_REQUEST, "the partitioned request is already active");
    }
    r.set_active(true);
    r.set_done(false);
    r.status = Status::EMPTY;
    let p = part_of(rt, rid).unwrap();
    p.ready.fill(false);
    p.nready = 0;
    p.unpacked.fill(false);
    p.running = false;
    p.pending = 0;
    p.error = MPI_SUCCESS;
    if p.peer == MPI_PROC_NULL {
        let send = p.send;
        let r = rt.reqs.get_mut(rid).unwrap();
        r.status = if send {
            Status::EMPTY
        } else {
            Status::PROC_NULL
        };
        rt.complete(rid);
        return Ok(true);
    }
    if p.failed != MPI_SUCCESS {
        fail_round(rt, rid);
    } else if p.link.is_some() {
        begin_round(rt, rid)?;
    }
    Ok(true)
}

/// Completes the current round of `rid`, whose handshake failed, with that error.
fn fail_round(rt: &mut Runtime, rid: u32) {
    let Some(p) = part_of(rt, rid) else {
        return;
    };
    let error = p.failed;
    rt.reqs.get_mut(rid).unwrap().status = Status {
        error,
        ..Status::EMPTY
    };
    rt.complete(rid);
}

/// Begins the current round once the handshake is known: the receiver posts one receive per
/// segment; the sender sends the partitions already marked ready.
fn begin_round(rt: &mut Runtime, rid: u32) -> MpiResult<()> {
    let p = part_of(rt, rid).unwrap();
    if p.running {
        return Ok(());
    }
    p.running = true;
    let nseg = p.link.as_ref().unwrap().segs.len();
    p.pending = nseg;
    p.seg_tok = vec![0; nseg];
    if p.send {
        let ready: Vec<usize> = (0..p.parts).filter(|&i| p.ready[i]).collect();
        for i in ready {
            send_partition(rt, rid, i)?;
        }
        return check_send_done(rt, rid);
    }
    if nseg == 0 {
        return finish_round(rt, rid);
    }
    let base = p.data_base();
    let link = p.link.as_ref().unwrap();
    let (comm, peer, tag_base) = (p.comm, p.peer, link.tag_base);
    let segs = link.segs.clone();
    for (s, &(off, len)) in segs.iter().enumerate() {
        let q = rt.new_request(ReqKind::Recv, comm)?;
        let token = rt.reqs.token(q);
        let r = rt.reqs.get_mut(q).unwrap();
        r.set_internal(true);
        r.parent = rid;
        if let Some(p) = part_of(rt, rid) {
            p.seg_tok[s] = token;
        }
        rt.start_recv(
            q,
            RecvArgs {
                comm,
                src: peer,
                tag: data_tag(tag_base + s as u32),
                // SAFETY: (address arithmetic only) [off, off + len) lies in the buffer.
                buf: base.wrapping_add(off),
                cap: len,
                unit: byte_unit(),
                layout: None,
            },
        )?;
    }
    Ok(())
}

/// Sends the segments of send partition `i` (the round is running).
fn send_partition(rt: &mut Runtime, rid: u32, i: usize) -> MpiResult<()> {
    let p = part_of(rt, rid).unwrap();
    if p.staged {
        let (from, n) = (i * p.part_bytes, p.part_bytes);
        let base = p.buf;
        let (unit, count) = (p.unit, p.count);
        let layout = p.layout.clone();
        let out = &mut p.scratch[from..from + n];
        match layout {
            // SAFETY: `base` is the buffer of a valid transfer of this layout and
            // [from, from + n) lies within its packed bytes.
            Some(l) => unsafe { l.pack(base as usize, from, out) },
            // SAFETY: partition i's `count` elements start `i * count` extents into the
            // buffer, which holds `parts * count` elements.
            None => unsafe {
                crate::core::p2p::pack_into(base.add(i * count * unit.extent), unit, out)
            },
        }
    }
    let base = p.data_base();
    let link = p.link.as_ref().unwrap();
    let (a, b) = (link.first[i] as usize, link.first[i + 1] as usize);
    let segs: Vec<(usize, usize)> = link.segs[a..b].to_vec();
    let (comm, peer, tag_base) = (p.comm, p.peer, link.tag_base);
    for (k, &(off, len)) in segs.iter().enumerate() {
        let s = a + k;
        let q = rt.new_request(ReqKind::Send, comm)?;
        let token = rt.reqs.token(q);
        let r = rt.reqs.get_mut(q).unwrap();
        r.set_internal(true);
        r.parent = rid;
        if let Some(p) = part_of(rt, rid) {
            p.seg_tok[s] = token;
        }
        rt.start_send(
            q,
            SendArgs {
                comm,
                dest: peer,
                tag: data_tag(tag_base + s as u32),
                buf: base.wrapping_add(off),
                bytes: len,
                mode: SendMode::Standard,
                unit: byte_unit(),
                layout: None,
            },
        )?;
    }
    Ok(())
}

/// Completes the send round when every partition is ready and every segment sent.
fn check_send_done(rt: &mut Runtime, rid: u32) -> MpiResult<()> {
    let Some(p) = part_of(rt, rid) else {
        return Ok(());
    };
    if p.running && p.pending == 0 && p.nready == p.parts {
        return finish_round(rt, rid);
    }
    Ok(())
}

/// A segment request of partitioned request `parent` completed with `status` (called by
/// `Runtime::part_done`).
pub fn segment_done(rt: &mut Runtime, parent: u32, status: Status) {
    let Some(p) = part_of(rt, parent) else {
        return;
    };
    if status.error != MPI_SUCCESS && p.error == MPI_SUCCESS {
        p.error = status.error;
    }
    p.pending = p.pending.saturating_sub(1);
    if p.pending == 0 {
        let r = if p.send {
            check_send_done(rt, parent)
        } else {
            finish_round(rt, parent)
        };
        if let Err(e) = r {
            if let Some(p) = part_of(rt, parent) {
                p.error = e.class();
            }
        }
    }
}

/// Unpacks receive partition `j` from the staging copy into the user buffer.
fn unpack_partition(p: &mut Part, j: usize) {
    if !p.staged || p.unpacked[j] {
        return;
    }
    p.unpacked[j] = true;
    let total = p.link.as_ref().map_or(0, |l| l.total);
    let from = j * p.part_bytes;
    let to = ((j + 1) * p.part_bytes).min(total);
    if from >= to {
        return;
    }
    let data = &p.scratch[from..to];
    match &p.layout {
        // SAFETY: the receive buffer is a valid transfer of this layout and [from, to) lies
        // within its packed bytes.
        Some(l) => unsafe { l.unpack(p.buf as usize, from, data) },
        // SAFETY: partition j's elements start `j * count` extents into the buffer, which
        // holds `parts * count` elements; `data` is at most one partition.
        None => unsafe { unpack_from(p.buf.add(j * p.count * p.unit.extent), p.unit, data) },
    }
}

/// Ends the current round of `rid` and completes the request.
fn finish_round(rt: &mut Runtime, rid: u32) -> MpiResult<()> {
    let p = part_of(rt, rid).unwrap();
    p.running = false;
    let link = p.link.as_ref().unwrap();
    let (total, peer_total) = (link.total, link.peer_total);
    let status = if p.send {
        Status {
            error: p.error,
            ..Status::EMPTY
        }
    } else {
        for j in 0..p.parts {
            unpack_partition(p, j);
        }
        let error = if p.error != MPI_SUCCESS {
            p.error
        } else if peer_total > p.my_total() {
            MPI_ERR_TRUNCATE
        } else {
            MPI_SUCCESS
        };
        Status {
            source: p.peer,
            tag: p.tag,
            error,
            bytes: total as u64,
            cancelled: false,
        }
    };
    rt.reqs.get_mut(rid).unwrap().status = status;
    rt.complete(rid);
    Ok(())
}

/// Checks that `rid` is an active partitioned request of the given side.
fn active_part(rt: &mut Runtime, rid: u32, send: bool, what: &str) -> MpiResult<()> {
    let active = rt.reqs.get(rid).is_some_and(|r| r.active());
    let Some(p) = part_of(rt, rid) else {
        return fail(
            MPI_ERR_REQUEST,
            format!("{what} needs a partitioned request"),
        );
    };
    if p.send != send {
        return fail(
            MPI_ERR_REQUEST,
            format!(
                "{what} needs a partitioned {} request",
                if send { "send" } else { "receive" }
            ),
        );
    }
    if send && !active {
        return fail(
            MPI_ERR_REQUEST,
            format!("{what} needs an active (started) request"),
        );
    }
    Ok(())
}

/// `MPI_Pready` of the listed partitions (all checked before any is marked).
pub fn pready(rt: &mut Runtime, rid: u32, list: &[i64]) -> MpiResult<()> {
    active_part(rt, rid, true, "MPI_Pready")?;
    let p = part_of(rt, rid).unwrap();
    let n = p.parts;
    for (k, &i) in list.iter().enumerate() {
        if i < 0 || i as usize >= n {
            return fail(
                MPI_ERR_ARG,
                format!("partition {i} is out of range (the request has {n} partitions)"),
            );
        }
        if p.ready[i as usize] || list[..k].contains(&i) {
            return fail(
                MPI_ERR_ARG,
                format!("partition {i} is already marked ready in this round"),
            );
        }
    }
    for &i in list {
        let p = part_of(rt, rid).unwrap();
        p.ready[i as usize] = true;
        p.nready += 1;
        if p.running {
            send_partition(rt, rid, i as usize)?;
        }
    }
    check_send_done(rt, rid)
}

/// `MPI_Parrived`: whether receive partition `j` of `rid` has arrived (true for an inactive
/// request).
pub fn parrived(rt: &mut Runtime, rid: u32, j: i64) -> MpiResult<bool> {
    active_part(rt, rid, false, "MPI_Parrived")?;
    let (active, done) = {
        let r = rt.reqs.get(rid).unwrap();
        (r.active(), r.done())
    };
    let p = part_of(rt, rid).unwrap();
    if j < 0 || j as usize >= p.parts {
        return fail(
            MPI_ERR_ARG,
            format!(
                "partition {j} is out of range (the request has {} partitions)",
                p.parts
            ),
        );
    }
    if !active || done || p.peer == MPI_PROC_NULL {
        return Ok(true);
    }
    let j = j as usize;
    let Some(link) = p.link.as_ref() else {
        return Ok(false);
    };
    if !p.running {
        return Ok(false);
    }
    let (a, b) = link.recv_range(j, p.parts);
    let toks = p.seg_tok[a..b].to_vec();
    let arrived = toks
        .iter()
        .all(|&t| t != 0 && rt.reqs.decode(t as usize).is_none());
    if arrived {
        unpack_partition(part_of(rt, rid).unwrap(), j);
    }
    Ok(arrived)
}

/// Whether `rid` is a partitioned request in a round that has not completed (freeing or
/// cancelling it then is erroneous).
pub fn busy(rt: &Runtime, rid: u32) -> bool {
    is_part(rt, rid) && rt.reqs.get(rid).is_some_and(|r| r.active() && !r.done())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_cut_at_both_partitionings() {
        assert_eq!(segments(0, 4, 6), vec![]);
        assert_eq!(segments(12, 4, 4), vec![(0, 4), (4, 4), (8, 4)]);
        assert_eq!(segments(12, 4, 6), vec![(0, 4), (4, 2), (6, 2), (8, 4)]);
        // 3 x 40 against 8 x 15.
        let s = segments(120, 40, 15);
        let cuts: Vec<usize> = s.iter().map(|&(o, _)| o).collect();
        assert_eq!(cuts, vec![0, 15, 30, 40, 45, 60, 75, 80, 90, 105]);
        assert_eq!(s.iter().map(|&(_, l)| l).sum::<usize>(), 120);
        // A shorter total (truncated receive) stops at the total.
        assert_eq!(segments(10, 4, 100), vec![(0, 4), (4, 4), (8, 2)]);
    }

    #[test]
    fn firsts_index_the_segments_of_each_partition() {
        let s = segments(12, 4, 6);
        assert_eq!(firsts(&s, 3, 4), vec![0, 1, 3, 4]);
        assert_eq!(firsts(&s, 2, 6), vec![0, 2, 4]);
        // Partitions beyond the data have no segments.
        let s = segments(8, 4, 100);
        assert_eq!(firsts(&s, 4, 4), vec![0, 1, 2, 2, 2]);
    }

    #[test]
    fn zero_size_partitions_each_wait_for_a_send_partition() {
        let link = |s: usize| Link {
            total: 0,
            peer_total: 0,
            tag_base: 0,
            segs: cut(0, s, 0, 0),
            first: firsts_of(&cut(0, s, 0, 0), 0, s, 0),
        };
        let l = link(4);
        assert_eq!(l.first, vec![0, 1, 2, 3, 4]);
        let r: Vec<_> = (0..4).map(|j| l.recv_range(j, 4)).collect();
        assert_eq!(r, vec![(0, 1), (1, 2), (2, 3), (3, 4)]);
        let r: Vec<_> = (0..2).map(|j| l.recv_range(j, 2)).collect();
        assert_eq!(r, vec![(0, 2), (2, 4)]);
        // More receive partitions than send partitions: none waits for nothing.
        let l = link(2);
        let r: Vec<_> = (0..5).map(|j| l.recv_range(j, 5)).collect();
        assert_eq!(r, vec![(0, 1), (0, 1), (0, 1), (1, 2), (1, 2)]);
    }

    #[test]
    fn tag_ranges_are_disjoint_and_reused() {
        let a = alloc_tags(10).unwrap();
        let b = alloc_tags(5).unwrap();
        assert!(b >= a + 10 || b + 5 <= a);
        release_tags(a, 10);
        let c = alloc_tags(10).unwrap();
        assert!(c + 10 <= b || c >= b + 5);
        release_tags(b, 5);
        release_tags(c, 10);
    }

    #[test]
    fn handshake_words_round_trip() {
        let w = [1, 2, 3, u64::MAX, 5];
        assert_eq!(decode_words(&encode(w)), Some(w));
        assert_eq!(decode_words(&[0u8; 8]), None);
    }
}
