//! Shared slots for small-message collectives on node-local communicators.
//!
//! The collective region of the node segment holds [`SLOTS`] slots. A communicator whose
//! members are all on the node may own one: its rank 0 claims a free slot (compare-and-swap on
//! the slot's owner word), resets its sequence words and tells the members which one (or that
//! none was free: the communicator then keeps the message schedules). Every member gives its
//! share back when it frees the communicator; the last one frees the slot.
//!
//! A slot has, for each rank of the communicator and each *parity* (0, 1), an area of
//! [`AREA`] bytes: a sequence word, then [`CAP`] bytes of data (the first 48 of them share the
//! word's cache line, so a small payload arrives with its flag). Collective number `s` (1, 2,
//! ... on the communicator) uses parity `s & 1`:
//!
//! - a rank that writes data for call `s` first waits until every rank has *entered* call
//!   `s - 1` ([`Slot::drained`]), i.e. finished reading call `s - 2`, the last user of that
//!   parity; then it writes its area and publishes `s` ([`Slot::publish`], release);
//! - a rank that writes nothing publishes `s` on entry too (it has finished call `s - 1`);
//! - a reader of rank `w`'s data waits for `w`'s word of parity `s & 1` to reach `s`
//!   ([`Slot::ready`], acquire).
//!
//! A rank's word of one parity only grows (`s`, `s + 2`, ...) and cannot pass `s + 1` before
//! every reader of call `s` has entered call `s + 1`, so back-to-back calls need no other
//! synchronisation and two areas per rank are enough.

use super::segment::Segment;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// Slots in a node's collective region.
pub const SLOTS: usize = 16;
/// Bytes of one area (one rank, one parity).
pub const AREA: usize = 8192;
/// Offset of the data in an area (16-byte aligned, after the sequence word).
const DATA_OFF: usize = 16;
/// Data bytes of one area: the most a rank contributes to one call.
pub const CAP: usize = AREA - DATA_OFF;
/// Bytes of the slot headers (one cache line each), rounded to a page.
const HEADERS: usize = 4096;
const _: () = assert!(SLOTS * 64 <= HEADERS);

/// Bytes of the collective region for `nlocal` local ranks.
pub fn region_bytes(nlocal: u32) -> usize {
    HEADERS + SLOTS * nlocal as usize * 2 * AREA
}

/// Header of a slot.
#[repr(C, align(64))]
struct SlotHdr {
    /// 0: free; otherwise the key of the communicator owning it.
    owner: AtomicU64,
    /// Members that have not given the slot back yet.
    users: AtomicU32,
}

/// The collective region of a mapped segment.
#[derive(Clone, Copy, Debug)]
pub struct Region {
    base: *mut u8,
    nlocal: u32,
}

// SAFETY: the region is shared memory accessed through atomics and the slot protocol; the
// pointer stays valid while the segment is mapped (until `MPI_Finalize`).
unsafe impl Send for Region {}
// SAFETY: as above.
unsafe impl Sync for Region {}

impl Region {
    /// The region of `seg`.
    pub fn of(seg: &Segment) -> Region {
        Region {
            base: seg.coll_region(),
            nlocal: seg.nlocal(),
        }
    }

    fn hdr(&self, i: usize) -> &SlotHdr {
        debug_assert!(i < SLOTS);
        // SAFETY: slot headers are the first `SLOTS` cache lines of the region, zero-filled
        // at creation (a valid `SlotHdr`) and accessed only through atomics.
        unsafe { &*(self.base.add(i * 64) as *const SlotHdr) }
    }

    /// Claims a free slot for a communicator of `users` ranks identified by `key` (nonzero),
    /// trying slot `hint % SLOTS` first; resets its sequence words. `None` when every slot is
    /// taken. The caller then tells the members the slot's index (any message, which orders
    /// the reset before their first use).
    pub fn claim(&self, key: u64, users: u32, hint: usize) -> Option<u32> {
        debug_assert!(key != 0 && users as usize <= self.nlocal as usize);
        for j in 0..SLOTS {
            let i = (hint + j) % SLOTS;
            let h = self.hdr(i);
            if h.owner.load(Ordering::Relaxed) != 0 {
                continue;
            }
            if h.owner
                .compare_exchange(0, key, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
            {
                let s = self.slot(i as u32);
                for r in 0..self.nlocal as usize {
                    s.seq(r, 0).store(0, Ordering::Relaxed);
                    s.seq(r, 1).store(0, Ordering::Relaxed);
                }
                h.users.store(users, Ordering::Relaxed);
                return Some(i as u32);
            }
        }
        None
    }

    /// A member gives slot `i` back (it will not touch it again); the last one frees it.
    pub fn leave(&self, i: u32) {
        let h = self.hdr(i as usize);
        if h.users.fetch_sub(1, Ordering::AcqRel) == 1 {
            h.owner.store(0, Ordering::Release);
        }
    }

    /// Whether slot `i` is owned by some communicator.
    pub fn taken(&self, i: u32) -> bool {
        self.hdr(i as usize).owner.load(Ordering::Acquire) != 0
    }

    /// Slot `i`.
    pub fn slot(&self, i: u32) -> Slot {
        debug_assert!((i as usize) < SLOTS);
        // SAFETY: the areas follow the headers; slot i's lie inside the region.
        let base = unsafe {
            self.base
                .add(HEADERS + i as usize * self.nlocal as usize * 2 * AREA)
        };
        Slot { base }
    }
}

/// One slot: the areas of its communicator's ranks.
#[derive(Clone, Copy, Debug)]
pub struct Slot {
    base: *mut u8,
}

// SAFETY: see `Region`.
unsafe impl Send for Slot {}
// SAFETY: see `Region`.
unsafe impl Sync for Slot {}

impl Slot {
    fn area(&self, rank: usize, parity: usize) -> *mut u8 {
        // SAFETY: rank < the slot's communicator size <= nlocal, parity < 2: inside the slot.
        unsafe { self.base.add((rank * 2 + parity) * AREA) }
    }

    fn seq(&self, rank: usize, parity: usize) -> &AtomicU64 {
        // SAFETY: the first word of an area (8-aligned, zero-filled at creation) is only
        // accessed atomically.
        unsafe { &*(self.area(rank, parity) as *const AtomicU64) }
    }

    /// The data area of `rank` for call `s` ([`CAP`] bytes, 16-byte aligned). Only `rank`
    /// writes it, between [`Slot::drained`] and [`Slot::publish`]; others read it once
    /// [`Slot::ready`].
    pub fn data(&self, rank: usize, s: u64) -> *mut u8 {
        // SAFETY: DATA_OFF < AREA.
        unsafe { self.area(rank, (s & 1) as usize).add(DATA_OFF) }
    }

    /// `rank` entered call `s` (and wrote its data for it, if any).
    #[inline]
    pub fn publish(&self, rank: usize, s: u64) {
        self.seq(rank, (s & 1) as usize).store(s, Ordering::Release);
    }

    /// Whether `rank` has entered call `s` (its data for `s` is visible).
    #[inline]
    pub fn ready(&self, rank: usize, s: u64) -> bool {
        self.seq(rank, (s & 1) as usize).load(Ordering::Acquire) >= s
    }

    /// Whether ranks `0..p` have all entered call `s - 1`, so no one reads the areas of parity
    /// `s & 1` any more (call `s - 2`'s) and they may be written for call `s`.
    #[inline]
    pub fn drained(&self, p: usize, s: u64) -> bool {
        s < 2 || (0..p).all(|r| self.ready(r, s - 1))
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::super::segment::{Geometry, Segment};
    use super::*;

    fn seg(nlocal: u32) -> Segment {
        let geo = Geometry {
            nlocal,
            cells_per_rank: 4,
            cell_size: 1024,
        };
        Segment::create(&geo).unwrap().0
    }

    #[test]
    fn claim_until_full_then_free_on_last_leave() {
        let s = seg(3);
        let r = Region::of(&s);
        let got: Vec<u32> = (0..SLOTS)
            .map(|i| r.claim(i as u64 + 1, 2, 5).unwrap())
            .collect();
        assert_eq!(got[0], 5);
        let mut sorted = got.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), SLOTS);
        assert_eq!(r.claim(99, 2, 0), None);
        r.leave(got[3]);
        assert!(r.taken(got[3]));
        assert_eq!(r.claim(99, 2, 0), None);
        r.leave(got[3]);
        assert!(!r.taken(got[3]));
        // A reclaimed slot starts with fresh sequence words.
        let sl = r.slot(got[3]);
        sl.publish(1, 7);
        assert!(sl.ready(1, 7));
        assert_eq!(r.claim(100, 3, 0), Some(got[3]));
        assert!(!sl.ready(1, 1) && sl.drained(3, 1));
    }

    /// Ranks as threads run many back-to-back allgathers and one-root broadcasts on one
    /// slot with the sequence protocol only; every value read must be the one of its call.
    #[test]
    fn back_to_back_calls_never_see_stale_or_torn_data() {
        const P: usize = 3;
        const CALLS: u64 = 20_000;
        let s = seg(P as u32);
        let r = Region::of(&s);
        let i = r.claim(1, P as u32, 0).unwrap();
        let slot = r.slot(i);
        std::thread::scope(|sc| {
            for me in 0..P {
                sc.spawn(move || {
                    let wait = |f: &dyn Fn() -> bool| {
                        while !f() {
                            std::thread::yield_now();
                        }
                    };
                    for call in 1..=CALLS {
                        let root = (call % P as u64) as usize;
                        let bcast = call % 3 == 0;
                        let writes = !bcast || me == root;
                        if writes {
                            wait(&|| slot.drained(P, call));
                            let v = call * 100 + me as u64;
                            // SAFETY: this rank's own area for `call`, drained above.
                            unsafe {
                                for k in 0..64 {
                                    (slot.data(me, call) as *mut u64).add(k).write(v + k as u64);
                                }
                            }
                        }
                        slot.publish(me, call);
                        let from: Vec<usize> = if bcast { vec![root] } else { (0..P).collect() };
                        for w in from {
                            wait(&|| slot.ready(w, call));
                            for k in 0..64 {
                                // SAFETY: `w` published `call`, so its area holds this call's
                                // data until we enter the next call.
                                let got =
                                    unsafe { (slot.data(w, call) as *const u64).add(k).read() };
                                assert_eq!(got, call * 100 + w as u64 + k as u64, "call {call}");
                            }
                        }
                    }
                });
            }
        });
    }
}
