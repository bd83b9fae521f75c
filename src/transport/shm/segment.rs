//! The node's shared segment: layout, creation and mapping.
//!
//! One segment per node and job. The lowest rank of the node creates it as an anonymous
//! `memfd` (mode 0600 by construction, no name in `/dev/shm`, so nothing can be left behind
//! by any exit, crash included) and publishes `pid:fd` through the bootstrap; the other local
//! ranks open `/proc/<pid>/fd/<fd>` and map it; once every local rank has mapped it the creator
//! closes its descriptor, and the memory lives exactly as long as some rank maps it.
//!
//! Layout: a header, one [`RankSlot`] per local rank (its receive queue, its queue of returned
//! cells, its pid), the fastboxes, then `nlocal × cells_per_rank` cells, then the collective
//! region ([`super::collslot`]). Memory is linear in local ranks (the fastboxes aside).

use super::queue::{AtomicU32, Links, MpscQueue, NIL};
use crate::platform::shared_map::map;
use std::io;
use std::sync::atomic::{AtomicI32, AtomicU64, Ordering};

/// Magic number at the start of the segment ("hympishm").
const MAGIC: u64 = 0x6879_6d70_6973_686d;

/// Header at offset 0.
#[repr(C, align(64))]
pub struct SegHeader {
    magic: AtomicU64,
    /// Local ranks sharing the segment.
    pub nlocal: u32,
    /// Cells owned by each local rank.
    pub cells_per_rank: u32,
    /// Bytes per cell, header included.
    pub cell_size: u32,
    _pad: [u8; 44],
    /// Arrivals at the current node barrier.
    pub barrier_arrived: AtomicU32,
    _pad2: [u8; 60],
    /// Generation of the node barrier.
    pub barrier_gen: AtomicU32,
    _pad3: [u8; 60],
}

/// Per-local-rank state.
#[repr(C, align(64))]
pub struct RankSlot {
    /// Cells addressed to this rank.
    pub recv: MpscQueue,
    /// This rank's own cells, returned by their receivers.
    pub free: MpscQueue,
    /// Process id (for CMA).
    pub pid: AtomicI32,
    /// 1 when this rank could read its neighbour with CMA, 2 when it could not.
    pub cma_ok: AtomicU32,
    /// Address of a word in this process that neighbours read to probe CMA.
    pub probe_addr: AtomicU64,
    /// The value stored at `probe_addr`.
    pub probe_value: AtomicU64,
    /// 1 while this rank is blocked in a waiting call (a sender that waits can take half of a
    /// large copy; one that computes is left alone).
    pub waiting: AtomicU32,
    /// 1 once this rank has started finalising (set before the node barrier of
    /// `MPI_Finalize`): its process may end from then on without ending the job.
    pub finalizing: AtomicU32,
    /// Rung by every node peer that sends this rank a cell or fills one of its fastboxes
    /// (and by receivers returning its cells): a waiting rank on a loaded node sleeps on it.
    pub bell: crate::platform::doorbell::Doorbell,
    _pad: [u8; 24],
}

/// Header of every cell; the payload follows it.
#[repr(C)]
pub struct CellHdr {
    /// Queue link.
    pub next: AtomicU32,
    /// [`MsgKind`](crate::transport::wire::MsgKind) as a word.
    pub kind: u32,
    /// Local rank of the sender (replies go there).
    pub src_local: u32,
    /// Sender's rank in the communicator.
    pub src_rank: i32,
    /// Message tag.
    pub tag: i32,
    /// Context id of the communicator.
    pub ctx: u32,
    /// Payload bytes in this cell.
    pub len: u32,
    /// Per-pair sequence number of matched messages (Eager, EagerSync, Rts), which orders
    /// them against messages sent through the pair's fastbox.
    pub seq: u32,
    /// Total bytes of the message.
    pub total: u64,
    /// Sender's request token.
    pub sreq: u64,
    /// Receiver's request token.
    pub rreq: u64,
    /// Sender buffer address (Rts) or byte offset (Data).
    pub addr: u64,
}

/// Payload bytes of a fastbox.
pub const FB_PAYLOAD: usize = 472;

/// Bytes of a fastbox before its payload.
pub const FB_HEADER: usize = 512 - FB_PAYLOAD;

/// Most fastboxes per (sender, receiver) pair: a ring the sender fills and the receiver
/// empties in order.
pub const FB_SLOTS: u32 = 64;

/// Fastboxes per pair on a node of `nlocal` ranks: [`FB_SLOTS`] up to 8 ranks, then halved
/// as the node doubles (at least one: 8 at 64 ranks), so that a rank's rings stay at 256 KiB
/// per lane up to 512 ranks and grow linearly beyond, as a single mailbox per pair did.
pub fn fb_slots_for(nlocal: u32) -> u32 {
    let mut slots = FB_SLOTS;
    let mut n = 8;
    while nlocal > n && slots > 1 {
        slots /= 2;
        n *= 2;
    }
    slots
}

/// A mailbox slot for one small eager message; each (sender, receiver) pair has a ring of
/// [`fb_slots_for`] (at most [`FB_SLOTS`]) of them. The sender writes the next slot of its ring when it is free and the
/// receiver polls `full` of the next slot it expects, which costs far fewer cache-line
/// transfers than a queue round trip (and a ring keeps a burst of messages on this path).
/// Matched messages carry a per-pair sequence number so the receiver can order fastbox and
/// queue traffic of one sender.
#[repr(C, align(64))]
pub struct Fastbox {
    /// 1 while a message waits (release-stored by the sender, cleared with release by the
    /// receiver once it copied the message out).
    pub full: AtomicU32,
    /// Sequence number (see [`CellHdr::seq`]).
    pub seq: u32,
    /// [`MsgKind`](crate::transport::wire::MsgKind): `Eager` or `EagerSync`.
    pub kind: u32,
    /// Sender's rank in the communicator.
    pub src_rank: i32,
    /// Tag.
    pub tag: i32,
    /// Context id.
    pub ctx: u32,
    /// Payload bytes.
    pub len: u32,
    _pad: u32,
    /// Sender's request token (for the acknowledgement of a synchronous send).
    pub sreq: u64,
    /// The message.
    pub payload: [u8; FB_PAYLOAD],
}

/// Bytes reserved for the cell header.
pub const CELL_HDR: usize = 64;
#[cfg(not(loom))]
const _: () = assert!(
    std::mem::size_of::<CellHdr>() <= CELL_HDR
        && std::mem::size_of::<Fastbox>() == 512
        && std::mem::offset_of!(Fastbox, payload) == FB_HEADER
        && FB_SLOTS.is_power_of_two()
);

/// A mapped segment.
pub struct Segment {
    base: *mut u8,
    len: usize,
    slots_off: usize,
    fb_off: usize,
    cells_off: usize,
    coll_off: usize,
    nlocal: u32,
    cells_per_rank: u32,
    cell_size: usize,
    /// Fastboxes per pair minus one ([`fb_slots_for`] is a power of two).
    fb_mask: u32,
    /// The creator keeps the memfd open until everyone has mapped it.
    fd: Option<i32>,
}

// SAFETY: the segment is plain shared memory; all cross-process state in it is accessed through
// atomics or under the queue protocol, which hands each cell to exactly one owner at a time.
unsafe impl Send for Segment {}
// SAFETY: as above.
unsafe impl Sync for Segment {}

/// Sizes of the segment parts.
pub struct Geometry {
    /// Local ranks.
    pub nlocal: u32,
    /// Cells per rank.
    pub cells_per_rank: u32,
    /// Bytes per cell.
    pub cell_size: usize,
}

impl Geometry {
    fn offsets(&self) -> (usize, usize, usize) {
        let slots_off = std::mem::size_of::<SegHeader>();
        let cells_off = align_up(self.fb_off() + self.fastbox_bytes(), 4096);
        let len = self.coll_off() + super::collslot::region_bytes(self.nlocal);
        (slots_off, cells_off, align_up(len, 4096))
    }
    fn coll_off(&self) -> usize {
        let cells_off = align_up(self.fb_off() + self.fastbox_bytes(), 4096);
        align_up(
            cells_off + self.nlocal as usize * self.cells_per_rank as usize * self.cell_size,
            4096,
        )
    }
    fn fb_off(&self) -> usize {
        align_up(
            std::mem::size_of::<SegHeader>()
                + self.nlocal as usize * std::mem::size_of::<RankSlot>(),
            64,
        )
    }
    fn fastbox_bytes(&self) -> usize {
        (self.nlocal as usize).pow(2)
            * fb_slots_for(self.nlocal) as usize
            * std::mem::size_of::<Fastbox>()
    }
    /// Total bytes of the segment.
    pub fn total_len(&self) -> usize {
        self.offsets().2
    }
}

fn align_up(v: usize, a: usize) -> usize {
    v.div_ceil(a) * a
}

impl Segment {
    /// Creates and initialises a segment (creator side). Returns it and the `pid:fd` text the
    /// other local ranks need to map it.
    pub fn create(geo: &Geometry) -> io::Result<(Segment, String)> {
        let (slots_off, cells_off, len) = geo.offsets();
        // SAFETY: memfd_create takes a NUL-terminated name; flags are valid.
        let fd = unsafe { libc::memfd_create(c"hympi-shm".as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: fd is the memfd just created.
        if unsafe { libc::ftruncate(fd, len as libc::off_t) } != 0 {
            let e = io::Error::last_os_error();
            // SAFETY: closing our own descriptor.
            unsafe { libc::close(fd) };
            return Err(e);
        }
        let base = map(fd, len)?;
        let seg = Segment {
            base,
            len,
            slots_off,
            fb_off: geo.fb_off(),
            cells_off,
            coll_off: geo.coll_off(),
            nlocal: geo.nlocal,
            cells_per_rank: geo.cells_per_rank,
            cell_size: geo.cell_size,
            fb_mask: fb_slots_for(geo.nlocal) - 1,
            fd: Some(fd),
        };
        seg.init();
        let key = format!("{}:{}", std::process::id(), fd);
        Ok((seg, key))
    }

    /// Maps a segment created by another local rank.
    pub fn attach(key: &str, geo: &Geometry) -> io::Result<Segment> {
        let (pid, fd) = key.split_once(':').ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidData, format!("bad segment key {key}"))
        })?;
        let path = std::ffi::CString::new(format!("/proc/{pid}/fd/{fd}")).unwrap();
        // SAFETY: path is NUL-terminated.
        let myfd = unsafe { libc::open(path.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
        if myfd < 0 {
            return Err(io::Error::last_os_error());
        }
        let (slots_off, cells_off, len) = geo.offsets();
        let mapped = map(myfd, len);
        // SAFETY: our own descriptor; the mapping keeps the memory alive.
        unsafe { libc::close(myfd) };
        let base = mapped?;
        let seg = Segment {
            base,
            len,
            slots_off,
            fb_off: geo.fb_off(),
            cells_off,
            coll_off: geo.coll_off(),
            nlocal: geo.nlocal,
            cells_per_rank: geo.cells_per_rank,
            cell_size: geo.cell_size,
            fb_mask: fb_slots_for(geo.nlocal) - 1,
            fd: None,
        };
        if seg.header().magic.load(Ordering::Acquire) != MAGIC || seg.header().nlocal != geo.nlocal
        {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "shared segment has an unexpected layout",
            ));
        }
        Ok(seg)
    }

    /// Closes the creator's descriptor once every local rank has mapped the segment.
    pub fn close_creator_fd(&mut self) {
        if let Some(fd) = self.fd.take() {
            // SAFETY: closing our own descriptor; the mapping stays valid.
            unsafe { libc::close(fd) };
        }
    }

    fn init(&self) {
        // SAFETY: the creator is the only user of the fresh, zero-filled mapping; each object is
        // written in place at an offset inside it, properly aligned by construction.
        unsafe {
            let h = self.base as *mut SegHeader;
            std::ptr::addr_of_mut!((*h).nlocal).write(self.nlocal);
            std::ptr::addr_of_mut!((*h).cells_per_rank).write(self.cells_per_rank);
            std::ptr::addr_of_mut!((*h).cell_size).write(self.cell_size as u32);
            for r in 0..self.nlocal {
                let s = self
                    .base
                    .add(self.slots_off + r as usize * std::mem::size_of::<RankSlot>())
                    as *mut RankSlot;
                std::ptr::addr_of_mut!((*s).recv).write(MpscQueue::new());
                std::ptr::addr_of_mut!((*s).free).write(MpscQueue::new());
            }
        }
        for r in 0..self.nlocal {
            for i in 0..self.cells_per_rank {
                let c = r * self.cells_per_rank + i;
                self.slot(r).free.push(self, c);
            }
        }
        self.header().magic.store(MAGIC, Ordering::Release);
    }

    /// Puts cell `c` (written) on local rank `dest`'s receive queue and rings its doorbell.
    #[inline(always)]
    pub fn deliver(&self, dest: u32, c: u32) {
        let slot = self.slot(dest);
        slot.recv.push(self, c);
        slot.bell.ring();
    }

    /// The header.
    pub fn header(&self) -> &SegHeader {
        // SAFETY: offset 0 holds an initialised SegHeader for the mapping's lifetime.
        unsafe { &*(self.base as *const SegHeader) }
    }

    /// Slot of local rank `r`.
    #[inline]
    pub fn slot(&self, r: u32) -> &RankSlot {
        debug_assert!(r < self.nlocal);
        // SAFETY: r < nlocal, so the slot lies inside the mapping and was initialised by init().
        unsafe {
            &*(self
                .base
                .add(self.slots_off + r as usize * std::mem::size_of::<RankSlot>())
                as *const RankSlot)
        }
    }

    /// Fastboxes per (sender, receiver) pair on this node.
    #[inline]
    pub fn fb_slots(&self) -> u32 {
        self.fb_mask + 1
    }

    /// The index in its ring (below [`Segment::fb_slots`]) of a ring counter value `slot`.
    #[inline(always)]
    pub fn fb_index(&self, slot: u32) -> u32 {
        slot & self.fb_mask
    }

    /// Fastbox `slot` (taken modulo [`Segment::fb_slots`]) of the ring carrying messages from
    /// local rank `src` to local rank `dst`.
    #[inline]
    pub fn fastbox(&self, dst: u32, src: u32, slot: u32) -> *mut Fastbox {
        debug_assert!(dst < self.nlocal && src < self.nlocal);
        let ring = dst as usize * self.nlocal as usize + src as usize;
        let i = ring * self.fb_slots() as usize + self.fb_index(slot) as usize;
        // SAFETY: dst, src < nlocal and the index in the ring is below `fb_slots()`, so the
        // box lies inside the fastbox area of the mapping (`Geometry::fastbox_bytes`, sized
        // with the same `fb_slots_for(nlocal)`).
        unsafe {
            self.base
                .add(self.fb_off + i * std::mem::size_of::<Fastbox>()) as *mut Fastbox
        }
    }

    /// Asks the CPU to bring the lines of fastbox `slot` of the ring from `src` to `dst` that
    /// a message of `len` payload bytes occupies into this core's cache (a hint: no effect on
    /// the contents; nothing on targets without a stable prefetch instruction).
    #[inline(always)]
    pub fn prefetch_fastbox(&self, dst: u32, src: u32, slot: u32, len: usize) {
        #[cfg(target_arch = "x86_64")]
        {
            let fb = self.fastbox(dst, src, slot) as *const i8;
            let end = FB_HEADER + len.min(FB_PAYLOAD);
            let mut off = 0;
            while off < end {
                // SAFETY: a prefetch reads nothing architecturally and cannot fault; `off`
                // stays inside the 512-byte box, which lies in the mapping.
                unsafe {
                    core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(
                        fb.add(off),
                    )
                };
                off += 64;
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = (dst, src, slot, len);
    }

    /// Maps in the pages of local rank `r`'s cells (which only `r` writes) for this process,
    /// for writing (`write`, our own cells) or reading (a peer's), so that the first messages streamed through them do not pay a page fault per 4 KiB:
    /// on the measured VM a first touch costs several microseconds, which made the first
    /// megabyte streamed run at a fraction of its later speed. Best effort: a kernel without
    /// `MADV_POPULATE_WRITE` (before 5.14) leaves the pages to fault in on use.
    pub fn prefault_cells_of(&self, r: u32, write: bool) {
        debug_assert!(r < self.nlocal);
        let bytes = self.cells_per_rank as usize * self.cell_size;
        let start = self.cells_off + r as usize * bytes;
        let first = align_up(start, 4096);
        let end = (start + bytes) & !4095;
        if end <= first {
            return;
        }
        // SAFETY: [first, end) lies inside the mapping (page-aligned within rank r's cells);
        // populating pages changes no byte of the shared memory.
        unsafe {
            libc::madvise(
                self.base.add(first).cast(),
                end - first,
                if write {
                    libc::MADV_POPULATE_WRITE
                } else {
                    libc::MADV_POPULATE_READ
                },
            )
        };
    }

    /// Header of cell `c`.
    #[inline]
    pub fn cell(&self, c: u32) -> *mut CellHdr {
        debug_assert!(c < self.nlocal * self.cells_per_rank);
        // SAFETY: c is a valid cell index, so the cell lies inside the mapping.
        unsafe { self.base.add(self.cells_off + c as usize * self.cell_size) as *mut CellHdr }
    }

    /// Payload of cell `c`.
    #[inline]
    pub fn payload(&self, c: u32) -> *mut u8 {
        // SAFETY: the payload follows the header inside the same cell.
        unsafe { (self.cell(c) as *mut u8).add(CELL_HDR) }
    }

    /// Payload capacity of a cell.
    pub fn payload_cap(&self) -> usize {
        self.cell_size - CELL_HDR
    }

    /// Local rank owning cell `c`.
    #[inline]
    pub fn owner(&self, c: u32) -> u32 {
        c / self.cells_per_rank
    }

    /// Start of the collective region ([`super::collslot::region_bytes`] bytes, 4096-aligned,
    /// zero-filled at creation).
    pub fn coll_region(&self) -> *mut u8 {
        // SAFETY: `coll_off` plus the region's size lies inside the mapping (see `offsets`).
        unsafe { self.base.add(self.coll_off) }
    }

    /// Local ranks.
    pub fn nlocal(&self) -> u32 {
        self.nlocal
    }

    /// Total mapped bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the segment is empty (never: it has at least a header).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Links for Segment {
    #[inline]
    fn link(&self, cell: u32) -> &AtomicU32 {
        // SAFETY: `next` is the first field of a live cell header.
        unsafe { &(*self.cell(cell)).next }
    }
}

impl Drop for Segment {
    fn drop(&mut self) {
        self.close_creator_fd();
        // SAFETY: unmapping our own mapping; no references into it outlive the Segment.
        unsafe { libc::munmap(self.base.cast(), self.len) };
    }
}

/// Used by `NIL` checks elsewhere.
pub const NO_CELL: u32 = NIL;

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn fastbox_rings_shrink_as_the_node_grows() {
        let want = [
            (2, 64),
            (8, 64),
            (9, 32),
            (16, 32),
            (17, 16),
            (33, 8),
            (64, 8),
            (65, 4),
            (128, 4),
            (129, 2),
            (256, 2),
            (257, 1),
            (4096, 1),
        ];
        for (nlocal, slots) in want {
            assert_eq!(fb_slots_for(nlocal), slots, "{nlocal} local ranks");
        }
        // A rank's rings (one per sender) stay within 256 KiB per lane up to 512 ranks.
        for nlocal in [2u32, 8, 9, 16, 33, 64, 100, 128, 256, 512] {
            let per_rank = nlocal as usize * fb_slots_for(nlocal) as usize * 512;
            assert!(per_rank <= 256 << 10, "{nlocal}: {per_rank}");
        }
    }

    #[test]
    fn create_attach_and_cells_round_trip() {
        let geo = Geometry {
            nlocal: 3,
            cells_per_rank: 8,
            cell_size: 1024,
        };
        let (seg, key) = Segment::create(&geo).unwrap();
        let other = Segment::attach(&key, &geo).unwrap();
        // Rank 1 takes one of its cells, fills it and sends it to rank 2.
        let c = seg.slot(1).free.pop(&seg).unwrap();
        assert_eq!(seg.owner(c), 1);
        // SAFETY: the cell was just popped, so this test owns it.
        unsafe {
            (*seg.cell(c)).tag = 42;
            *seg.payload(c) = 7;
        }
        seg.slot(2).recv.push(&seg, c);
        let got = other.slot(2).recv.pop(&other).unwrap();
        assert_eq!(got, c);
        // SAFETY: received cell, owned by the consumer now.
        unsafe {
            assert_eq!((*other.cell(got)).tag, 42);
            assert_eq!(*other.payload(got), 7);
        }
        // Every rank starts with all its cells free.
        let n = std::iter::from_fn(|| other.slot(0).free.pop(&other)).count();
        assert_eq!(n, 8);
        // Header, slots and cells in 8 pages, plus the 3 x 3 fastbox rings and the
        // collective region.
        let rings = 9 * fb_slots_for(3) as usize * std::mem::size_of::<Fastbox>();
        assert!(geo.total_len() <= 4096 * 8 + rings + super::super::collslot::region_bytes(3));
    }
}
