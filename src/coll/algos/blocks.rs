//! Buffers of equal blocks, one per rank (the receive buffer of a gather, both buffers of an
//! alltoall, ...), and the local-copy helpers the data-movement algorithms share.

use crate::coll::sched::{Schedule, Span};
use crate::core::datatype::Layout;

/// `p` equal blocks laid out one after another: block `i` starts `i * stride` bytes after
/// block 0. Any run of consecutive blocks is itself one span (a longer count of the same
/// datatype), so algorithms can move several blocks in one message.
#[derive(Clone, Debug)]
pub struct Blocks {
    /// Block 0.
    pub first: Span,
    /// Bytes from one block's start to the next's (memory extent of one block).
    pub stride: isize,
    /// Bytes of data in one block (packed size).
    pub packed: usize,
}

impl Blocks {
    /// Blocks of a user buffer: `first` is block 0 (`count` elements), `stride` the memory
    /// extent of `count` elements.
    pub fn user(first: Span, stride: isize) -> Blocks {
        let packed = packed(&first);
        Blocks {
            first,
            stride,
            packed,
        }
    }

    /// `n` packed blocks of `packed` bytes in a new temporary of `s`.
    pub fn tmp(s: &mut Schedule, n: usize, packed: usize) -> Blocks {
        let addr = s.tmp(n * packed);
        Blocks::packed_at(addr, packed)
    }

    /// Packed blocks of `packed` bytes at `addr`.
    pub fn packed_at(addr: usize, packed: usize) -> Blocks {
        Blocks {
            first: Span::bytes(addr, packed),
            stride: packed as isize,
            packed,
        }
    }

    /// Blocks `i .. i + n` as one span.
    pub fn run(&self, i: usize, n: usize) -> Span {
        let f = &self.first;
        Span {
            addr: f
                .addr
                .wrapping_add_signed(self.stride.wrapping_mul(i as isize)),
            bytes: f.bytes * n,
            unit: f.unit,
            layout: f.layout.as_ref().map(|l| Layout {
                dt: l.dt.clone(),
                count: l.count * n,
            }),
        }
    }

    /// Block `i`.
    pub fn block(&self, i: usize) -> Span {
        self.run(i, 1)
    }

    /// Whether the blocks are packed bytes (a temporary or a contiguous user buffer).
    pub fn is_packed(&self) -> bool {
        self.first.is_contiguous() && self.stride == self.packed as isize
    }
}

/// Bytes of data a span holds (its packed size).
pub fn packed(s: &Span) -> usize {
    s.packed()
}

/// Whether `s` is a predefined-type span whose elements have holes (its `bytes` is then the
/// memory extent, not the data size).
fn holey(s: &Span) -> bool {
    s.layout.is_none() && s.unit.size != s.unit.extent
}

/// Copies `src` to `dst` after the current round's communication. Two spans of element types
/// with holes go through a packed temporary, so the copy moves exactly their data.
pub fn copy(s: &mut Schedule, src: Span, dst: Span) {
    let n = packed(&src).min(packed(&dst));
    if n == 0 {
        return;
    }
    if holey(&src) && holey(&dst) {
        let t = Span::bytes(s.tmp(n), n);
        s.copy(src, t.clone());
        s.copy(t, dst);
    } else {
        s.copy(src, dst);
    }
}

/// Copies `n` blocks starting at block `from` of `src` to blocks starting at `to` of `dst`,
/// in one step when both runs are single spans (always: runs of `Blocks` are spans).
pub fn copy_run(s: &mut Schedule, src: &Blocks, from: usize, dst: &Blocks, to: usize, n: usize) {
    if n > 0 {
        copy(s, src.run(from, n), dst.run(to, n));
    }
}

/// Copies `p` blocks of `src` (ordered by rank) into `dst` rotated: `dst[j] = src[(j + shift)
/// mod p]` (two runs).
pub fn copy_rotated(s: &mut Schedule, src: &Blocks, dst: &Blocks, p: usize, shift: usize) {
    let shift = shift % p.max(1);
    copy_run(s, src, shift, dst, 0, p - shift);
    copy_run(s, src, 0, dst, p - shift, shift);
}
