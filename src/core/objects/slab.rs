//! Generation-checked object tables behind user handles.
//!
//! A user handle is a pointer-sized value
//! `(generation << 38) | (tag << 32) | ((index + 1) << 12) | kind`, with a 26-bit generation
//! on top, so that it wraps by itself;
//! `tag` is 0 except in the per-VCI request tables, where it names the VCI.
//! It is never dereferenced: decoding checks the kind tag, the index bound and the generation,
//! so a stale, foreign or garbage handle yields an MPI error class instead of a crash. Values
//! below 0x1000 are left to the standard's predefined handles.

/// Kind tags of user handles (low 12 bits).
pub mod kind {
    /// Communicator.
    pub const COMM: usize = 0x1;
    /// Request.
    pub const REQUEST: usize = 0x2;
    /// Error handler.
    pub const ERRHANDLER: usize = 0x3;
    /// Matched message (`MPI_Mprobe`).
    pub const MESSAGE: usize = 0x4;
    /// Group.
    pub const GROUP: usize = 0x5;
    /// Datatype.
    pub const DATATYPE: usize = 0x6;
    /// Reduction operation.
    pub const OP: usize = 0x7;
    /// Info object.
    pub const INFO: usize = 0x8;
    /// Stream (`MPIX_Stream`).
    pub const STREAM: usize = 0x9;
    /// One-sided window.
    pub const WIN: usize = 0xA;
    /// Open file (MPI-IO).
    pub const FILE: usize = 0xB;
    /// Session (MPI-4).
    pub const SESSION: usize = 0xC;
}

const MAX_INDEX: usize = (1 << 20) - 2;
/// Position of the generation (the top 26 bits) in a handle.
const GEN_SHIFT: u32 = 38;
/// Largest table tag (tags occupy bits 32 to 37 of a handle).
pub const MAX_TAG: usize = 63;

/// One table entry.
struct Slot<T> {
    /// The handle of the entry's current (or, while free, last) object:
    /// `base | generation << 32 | (index + 1) << 12`. Decoding compares a handle with it
    /// whole, which checks kind, tag, index and generation at once.
    handle: usize,
    /// While the entry is free: the next free entry's index, or [`NO_FREE`].
    next_free: u32,
    value: Option<T>,
}

/// The end of the free list.
const NO_FREE: u32 = u32::MAX;

/// Ends the life of the object that was in entry `s` (index `index`, just emptied): the
/// entry goes to the head of the free list. Its handle stays, but decodes to nothing while
/// the entry is empty, and a reuse moves it to a new generation ([`next_generation`]).
#[inline(always)]
fn retire<T>(s: &mut Slot<T>, index: u32, free_head: &mut u32) {
    s.next_free = *free_head;
    *free_head = index;
}

/// The table index a handle names. Values below 0x1000 (the predefined handles) have index
/// field 0, which wraps to `usize::MAX`: an index no table reaches, so that the bound check
/// that follows every decode rejects them too (one branch less than a separate test).
#[inline(always)]
fn index_field(handle: usize) -> usize {
    ((handle >> 12) & 0xfffff).wrapping_sub(1)
}

/// Moves a reused entry's handle to the next generation, so that the handles of the
/// entry's earlier objects become stale.
#[inline(always)]
fn next_generation(handle: usize) -> usize {
    // The generation is the handle's top field: it wraps without touching the others.
    handle.wrapping_add(1 << GEN_SHIFT)
}

/// A table of objects of one kind with a free list.
pub struct Slab<T> {
    slots: Vec<Slot<T>>,
    /// The most recently freed entry, first to be reused; the free entries are linked through
    /// [`Slot::next_free`] (no allocation on free or reuse).
    free_head: u32,
    /// `tag << 32 | kind`, or'ed into every handle.
    base: usize,
}

impl<T> Slab<T> {
    /// An empty table for handles of `kind`.
    pub fn new(kind: usize) -> Self {
        Slab::tagged(kind, 0)
    }

    /// An empty table for handles of `kind` carrying `tag` (at most [`MAX_TAG`]).
    pub fn tagged(kind: usize, tag: usize) -> Self {
        assert!(tag <= MAX_TAG);
        Slab {
            slots: Vec::new(),
            free_head: NO_FREE,
            base: (tag << 32) | kind,
        }
    }

    /// The tag of a handle (meaningful for handles of tagged tables).
    #[inline(always)]
    pub fn tag_of(handle: usize) -> usize {
        (handle >> 32) & MAX_TAG
    }

    /// Stores `value`, returning its index. `None` when the table is full.
    #[inline(always)]
    pub fn insert(&mut self, value: T) -> Option<u32> {
        if let Some(i) = self.pop_free() {
            let s = &mut self.slots[i as usize];
            s.handle = next_generation(s.handle);
            s.value = Some(value);
            return Some(i);
        }
        if self.slots.len() > MAX_INDEX {
            return None;
        }
        self.slots.push(Slot {
            // Generation 0: a table's first objects have handles that fit 32 bits (with tag
            // 0), which the fast paths compare as immediates (the shared complete send's).
            handle: self.base | (self.slots.len() + 1) << 12,
            next_free: NO_FREE,
            value: Some(value),
        });
        Some((self.slots.len() - 1) as u32)
    }

    /// Stores `value`, returning its index and handle. `None` when the table is full.
    #[inline(always)]
    pub fn insert_handle(&mut self, value: T) -> Option<(u32, usize)> {
        if let Some(i) = self.pop_free() {
            let s = self.slots.get_mut(i as usize)?;
            // A slot on the free list is empty: nothing to drop.
            debug_assert!(s.value.is_none());
            std::mem::forget(s.value.replace(value));
            s.handle = next_generation(s.handle);
            return Some((i, s.handle));
        }
        let i = self.insert(value)?;
        Some((i, self.handle(i)))
    }

    /// The index [`Slab::insert_reused`] would fill next, if any.
    #[inline(always)]
    pub fn next_reused(&self) -> Option<u32> {
        let i = self.free_head;
        self.slots.get(i as usize).map(|_| i)
    }

    /// Stores `value` in a free slot if one is left over from a removal (never grows the
    /// table, so never allocates): its index and handle.
    #[inline(always)]
    pub fn insert_reused(&mut self, value: T) -> Option<(u32, usize)> {
        let i = self.free_head;
        let s = self.slots.get_mut(i as usize)?;
        self.free_head = s.next_free;
        debug_assert!(s.value.is_none());
        // A slot on the free list is empty: nothing to drop.
        std::mem::forget(s.value.replace(value));
        s.handle = next_generation(s.handle);
        Some((i, s.handle))
    }

    /// Like [`Slab::free`], but forgets the object instead of dropping it when
    /// `owns_nothing(&object)` says dropping it would do nothing: that skips the call to its
    /// drop glue on hot paths. Whether the object was live.
    #[inline(always)]
    pub fn free_plain(&mut self, index: u32, owns_nothing: impl FnOnce(&T) -> bool) -> bool {
        let Some(s) = self.slots.get_mut(index as usize) else {
            return false;
        };
        let Some(v) = s.value.take() else {
            return false;
        };
        if owns_nothing(&v) {
            std::mem::forget(v);
        } else {
            drop(v);
        }
        retire(s, index, &mut self.free_head);
        true
    }

    /// Frees the object behind `handle` in one lookup when `plain` accepts it, after `last`
    /// has had a look at it (to copy a status out, say). `plain` vouches that the object owns
    /// nothing, so that its destructor is skipped (were it wrong, something would leak; no
    /// memory is misused). Whether it freed it; false for a stale or foreign handle, changing
    /// nothing.
    #[inline(always)]
    pub fn free_plain_handle(
        &mut self,
        handle: usize,
        plain: impl FnOnce(&T) -> bool,
        last: impl FnOnce(&T),
    ) -> bool {
        let index = index_field(handle);
        let Some(s) = self.slots.get_mut(index) else {
            return false;
        };
        if s.handle != handle {
            return false;
        }
        let Some(v) = s.value.as_ref() else {
            return false;
        };
        if !plain(v) {
            return false;
        }
        last(v);
        if let Some(v) = s.value.take() {
            std::mem::forget(v);
        }
        retire(s, index as u32, &mut self.free_head);
        true
    }

    /// Removes the object at `index`; its handles become stale.
    #[inline]
    pub fn remove(&mut self, index: u32) -> Option<T> {
        let s = self.slots.get_mut(index as usize)?;
        let v = s.value.take()?;
        retire(s, index, &mut self.free_head);
        Some(v)
    }

    /// Drops the object at `index` in place; its handles become stale. Whether it was live.
    #[inline(always)]
    pub fn free(&mut self, index: u32) -> bool {
        let Some(s) = self.slots.get_mut(index as usize) else {
            return false;
        };
        if s.value.is_none() {
            return false;
        }
        s.value = None;
        retire(s, index, &mut self.free_head);
        true
    }

    /// The object at `index`.
    #[inline(always)]
    pub fn get(&self, index: u32) -> Option<&T> {
        self.slots
            .get(index as usize)
            .and_then(|s| s.value.as_ref())
    }

    /// The object at `index`, mutably.
    #[inline(always)]
    pub fn get_mut(&mut self, index: u32) -> Option<&mut T> {
        self.slots
            .get_mut(index as usize)
            .and_then(|s| s.value.as_mut())
    }

    /// The handle value of the object at `index`.
    #[inline(always)]
    pub fn handle(&self, index: u32) -> usize {
        self.slots[index as usize].handle
    }

    /// The wire token of the object at `index` (same as its handle).
    #[inline]
    pub fn token(&self, index: u32) -> u64 {
        self.handle(index) as u64
    }

    /// Decodes a handle or token of this table's kind to a live index.
    #[inline(always)]
    pub fn decode(&self, handle: usize) -> Option<u32> {
        // The entry's handle holds this table's kind and tag, the index and the live
        // generation: equality checks them all.
        let index = index_field(handle);
        let s = self.slots.get(index)?;
        (s.handle == handle && s.value.is_some()).then_some(index as u32)
    }

    /// Takes the most recently freed entry off the free list.
    #[inline(always)]
    fn pop_free(&mut self) -> Option<u32> {
        let i = self.free_head;
        let s = self.slots.get_mut(i as usize)?;
        self.free_head = s.next_free;
        Some(i)
    }

    /// Number of live objects (counted: no hot path asks, so no counter is kept).
    pub fn len(&self) -> usize {
        self.slots.iter().filter(|s| s.value.is_some()).count()
    }

    /// Whether no object is live.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Iterates over live objects with their indices.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &T)> {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.value.as_ref().map(|v| (i as u32, v)))
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn handles_are_checked() {
        let mut s = Slab::new(kind::REQUEST);
        let a = s.insert("a").unwrap();
        let h = s.handle(a);
        assert!(h >= 0x1000);
        assert_eq!(s.decode(h), Some(a));
        assert_eq!(s.decode(h ^ 0x3), None, "wrong kind");
        assert_eq!(s.decode(0x101), None, "predefined value");
        assert_eq!(s.decode(0xdead_beef_0000), None, "garbage");
        assert_eq!(s.remove(a), Some("a"));
        assert_eq!(s.decode(h), None, "stale after free");
        let b = s.insert("b").unwrap();
        assert_eq!(b, a, "slot reused");
        assert_ne!(s.handle(b), h, "new generation");
        assert_eq!(s.decode(h), None);
        assert_eq!(s.len(), 1);
        let (c, hc) = s.insert_handle("c").unwrap();
        assert_eq!(s.decode(hc), Some(c));
        assert!(s.free_plain(c, |_| true));
        assert!(!s.free_plain(c, |_| true), "already free");
        assert_eq!(s.decode(hc), None, "stale after free_plain");
        let (d, hd) = s.insert_handle("d").unwrap();
        assert_eq!(d, c, "slot reused");
        assert_ne!(hd, hc, "new generation");
        assert_eq!(s.decode(hd), Some(d));
    }

    #[test]
    fn reuse_takes_the_last_freed_entry_with_a_new_handle_and_never_grows() {
        let mut s = Slab::tagged(kind::REQUEST, 3);
        assert_eq!(s.next_reused(), None);
        assert_eq!(s.insert_reused(0), None, "nothing freed yet: no reuse");
        let (a, ha) = s.insert_handle(10).unwrap();
        let (b, hb) = s.insert_handle(11).unwrap();
        let (c, _) = s.insert_handle(12).unwrap();
        assert_eq!(Slab::<i32>::tag_of(hb), 3);
        assert!(s.free(a));
        assert!(s.free_plain(b, |_| true));
        assert_eq!(s.len(), 1);
        assert_eq!(s.next_reused(), Some(b), "last freed first");
        let (b2, hb2) = s.insert_reused(20).unwrap();
        assert_eq!(b2, b);
        assert_ne!(hb2, hb, "a new generation");
        assert_eq!(s.decode(hb), None, "the old handle is stale");
        assert_eq!(s.decode(hb2), Some(b));
        assert_eq!(s.get(b), Some(&20));
        assert_eq!(s.next_reused(), Some(a));
        let (a2, ha2) = s.insert_reused(21).unwrap();
        assert_eq!((a2, s.decode(ha)), (a, None));
        assert_eq!(s.decode(ha2), Some(a));
        assert_eq!(s.insert_reused(22), None, "free list empty again");
        assert_eq!(s.len(), 3);
        assert_eq!(s.slots.len(), 3, "no entry added by reuse");
        assert_eq!(s.get(c), Some(&12));
    }

    #[test]
    fn tagged_handles_carry_their_tag() {
        let mut a = Slab::tagged(kind::REQUEST, 5);
        let mut b = Slab::tagged(kind::REQUEST, 6);
        let ia = a.insert(1).unwrap();
        let ib = b.insert(2).unwrap();
        let (ha, hb) = (a.handle(ia), b.handle(ib));
        assert_eq!(Slab::<i32>::tag_of(ha), 5);
        assert_eq!(Slab::<i32>::tag_of(hb), 6);
        assert_eq!(a.decode(ha), Some(ia));
        assert_eq!(a.decode(hb), None, "other table's tag");
        assert_eq!(b.decode(hb), Some(ib));
    }

    #[test]
    fn generations_wrap_within_their_bits() {
        let mut s = Slab::new(kind::OP);
        let i = s.insert(0).unwrap();
        let top = usize::MAX << GEN_SHIFT;
        s.slots[i as usize].handle |= top;
        let h = s.handle(i);
        assert_eq!(s.decode(h), Some(i));
        s.free(i);
        let j = s.insert(0).unwrap();
        assert_eq!(j, i);
        assert_eq!(s.handle(j) & top, 0, "wraps to 0");
        assert_eq!(
            s.decode(s.handle(j)),
            Some(j),
            "generation 0 is a generation too"
        );
        assert_ne!(s.handle(j), h);
        assert_eq!(s.decode(h), None);
    }
}
