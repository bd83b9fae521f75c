//! The layout engine: a datatype compiled into a compact program of contiguous copies,
//! strided runs and loops, and the walkers that pack, unpack and list memory segments of any
//! byte range of the packed stream (so large messages can be moved piece by piece).
//!
//! Programs are built bottom-up by the constructors ([`Prog::try_repeat`], [`Prog::concat`]):
//! repeated contiguous blocks fold into one copy, a repeated block with a gap becomes a strided
//! run, a repeated strided run that continues its own stride becomes a longer strided run, and
//! adjacent copies merge. A 3-D subarray face thus compiles to one copy, one strided run of
//! blocks, or one strided run of single elements.
//!
//! Offsets are bytes relative to an element's base address and may be negative; the walkers
//! work on integer addresses (`MPI_BOTTOM` is address 0).

use std::sync::Arc;

/// One step of a layout program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    /// `len` contiguous bytes at `off`.
    Copy {
        /// Offset from the base.
        off: isize,
        /// Bytes.
        len: usize,
    },
    /// `count` blocks of `len` bytes, `stride` bytes apart, the first at `off`.
    Strided {
        /// Offset of the first block.
        off: isize,
        /// Bytes per block.
        len: usize,
        /// Blocks.
        count: usize,
        /// Distance between block starts.
        stride: isize,
    },
    /// `count` repetitions of `body`, `stride` bytes apart, the first at `off`.
    Loop {
        /// Offset of the first repetition.
        off: isize,
        /// Repetitions.
        count: usize,
        /// Distance between repetitions.
        stride: isize,
        /// What is repeated.
        body: Arc<Prog>,
    },
}

impl Op {
    /// Data bytes this step moves.
    pub fn size(&self) -> usize {
        match self {
            Op::Copy { len, .. } => *len,
            // Saturating: a type whose size overflows is rejected by its constructor, which
            // computes the size with checks.
            Op::Strided { len, count, .. } => len.saturating_mul(*count),
            Op::Loop { count, body, .. } => count.saturating_mul(body.size),
        }
    }
    fn shifted(&self, d: isize) -> Op {
        let mut o = self.clone();
        match &mut o {
            Op::Copy { off, .. } | Op::Strided { off, .. } | Op::Loop { off, .. } => *off += d,
        }
        o
    }
    /// Contiguous segments this step touches.
    fn segments(&self) -> usize {
        match self {
            Op::Copy { .. } => 1,
            Op::Strided { count, .. } => *count,
            Op::Loop { count, body, .. } => count.saturating_mul(body.segments),
        }
    }
}

/// A compiled layout: the steps of one element, in type-map order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Prog {
    /// Steps.
    pub ops: Vec<Op>,
    /// Packed offset at which each step starts (prefix sums of their sizes).
    pub starts: Vec<usize>,
    /// Data bytes of one element.
    pub size: usize,
    /// Contiguous segments of one element (after merging).
    pub segments: usize,
    /// The lowest and highest (exclusive) byte offsets touched, `None` when empty.
    lohi: Option<(isize, isize)>,
}

impl Prog {
    /// A program of the given steps (empty ones dropped, adjacent copies merged).
    pub fn new(ops: Vec<Op>) -> Prog {
        let mut out: Vec<Op> = Vec::with_capacity(ops.len());
        for op in ops {
            if op.size() == 0 {
                continue;
            }
            if let (Some(Op::Copy { off: a, len: la }), Op::Copy { off: b, len: lb }) =
                (out.last_mut(), &op)
            {
                if *a + *la as isize == *b {
                    *la += lb;
                    continue;
                }
            }
            out.push(op);
        }
        let mut starts = Vec::with_capacity(out.len());
        let mut size = 0usize;
        let mut segments = 0usize;
        for op in &out {
            starts.push(size);
            size = size.saturating_add(op.size());
            segments = segments.saturating_add(op.segments());
        }
        let lohi = bounds_of(&out);
        Prog {
            ops: out,
            starts,
            size,
            segments,
            lohi,
        }
    }

    /// `len` contiguous bytes at `off`.
    pub fn bytes(off: isize, len: usize) -> Prog {
        Prog::new(vec![Op::Copy { off, len }])
    }

    /// `count` copies of `body`, `stride` bytes apart, the first at `off`, folded into the
    /// simplest equivalent steps. `None` when the bytes touched would not all lie within
    /// `isize` offsets (a span the address space cannot hold), so that every offset the
    /// steps and their walks compute fits.
    pub fn try_repeat(off: isize, count: usize, stride: isize, body: &Prog) -> Option<Vec<Op>> {
        if count == 0 || body.size == 0 {
            return Some(Vec::new());
        }
        let (bl, bh) = body.bounds()?;
        // |span| < 2^64 * 2^63 fits i128; the sums are checked.
        let span = (count as i128 - 1) * stride as i128;
        let lo = (off as i128 + bl as i128).checked_add(span.min(0))?;
        let hi = (off as i128 + bh as i128).checked_add(span.max(0))?;
        if lo < isize::MIN as i128 || hi > isize::MAX as i128 || hi - lo > isize::MAX as i128 {
            return None;
        }
        Some(Self::repeat_within(off, count, stride, body))
    }

    /// [`Prog::try_repeat`] for layouts known to fit (tests, benchmarks).
    ///
    /// # Panics
    /// When the bytes touched do not all lie within `isize` offsets.
    pub fn repeat(off: isize, count: usize, stride: isize, body: &Prog) -> Vec<Op> {
        Self::try_repeat(off, count, stride, body).expect("a layout beyond isize offsets")
    }

    fn repeat_within(off: isize, count: usize, stride: isize, body: &Prog) -> Vec<Op> {
        if count == 1 {
            return body.ops.iter().map(|o| o.shifted(off)).collect();
        }
        if body.ops.len() == 1 {
            match body.ops[0] {
                Op::Copy { off: o, len } => {
                    if stride == len as isize {
                        // Within the checked span: len * count bytes fit isize.
                        return vec![Op::Copy {
                            off: off + o,
                            len: len * count,
                        }];
                    }
                    return vec![Op::Strided {
                        off: off + o,
                        len,
                        count,
                        stride,
                    }];
                }
                Op::Strided {
                    off: o,
                    len,
                    count: c,
                    stride: s,
                } if s.checked_mul(c as isize) == Some(stride)
                    && c.checked_mul(count).is_some() =>
                {
                    return vec![Op::Strided {
                        off: off + o,
                        len,
                        count: c * count,
                        stride: s,
                    }];
                }
                _ => {}
            }
        }
        vec![Op::Loop {
            off,
            count,
            stride,
            body: Arc::new(body.clone()),
        }]
    }

    /// Whether the program is one contiguous block: its offset and length.
    pub fn single(&self) -> Option<(isize, usize)> {
        match self.ops.as_slice() {
            [Op::Copy { off, len }] => Some((*off, *len)),
            [] => Some((0, 0)),
            _ => None,
        }
    }

    /// The lowest and highest (exclusive) byte offsets touched, `None` when empty.
    pub fn bounds(&self) -> Option<(isize, isize)> {
        self.lohi
    }
}

/// Bounds of steps made by [`Prog::try_repeat`] (which checked that they fit `isize`).
fn bounds_of(ops: &[Op]) -> Option<(isize, isize)> {
    let mut lo = isize::MAX;
    let mut hi = isize::MIN;
    for op in ops {
        let (l, h) = match op {
            Op::Copy { off, len } => (*off, *off + *len as isize),
            Op::Strided {
                off,
                len,
                count,
                stride,
            } => {
                let last = *off + (*count as isize - 1) * *stride;
                ((*off).min(last), (*off).max(last) + *len as isize)
            }
            Op::Loop {
                off,
                count,
                stride,
                body,
            } => {
                let (bl, bh) = body.bounds().expect("non-empty body");
                let last = (*count as isize - 1) * *stride;
                (off + bl + last.min(0), off + bh + last.max(0))
            }
        };
        lo = lo.min(l);
        hi = hi.max(h);
    }
    (lo <= hi).then_some((lo, hi))
}

/// Receives the segments a walk produces.
pub trait Sink {
    /// `len` bytes at address `addr`.
    fn seg(&mut self, addr: usize, len: usize);
    /// `count` blocks of `len` bytes at `addr`, `addr + stride`, ...
    #[inline]
    fn strided(&mut self, addr: usize, len: usize, count: usize, stride: isize) {
        for k in 0..count {
            self.seg(addr.wrapping_add_signed(k as isize * stride), len);
        }
    }
    /// Whether the sink wants no more segments (stops the walk early).
    #[inline]
    fn full(&self) -> bool {
        false
    }
}

/// Walks bytes `[from, to)` of the packed stream of `prog` placed at address `base`.
pub fn walk<S: Sink>(prog: &Prog, base: usize, from: usize, to: usize, s: &mut S) {
    if from >= to {
        return;
    }
    let mut i = prog
        .starts
        .partition_point(|&st| st <= from)
        .saturating_sub(1);
    while i < prog.ops.len() && !s.full() {
        let st = prog.starts[i];
        if st >= to {
            break;
        }
        let op = &prog.ops[i];
        let lo = from.saturating_sub(st);
        let hi = (to - st).min(op.size());
        match *op {
            Op::Copy { off, .. } => s.seg(base.wrapping_add_signed(off + lo as isize), hi - lo),
            Op::Strided {
                off, len, stride, ..
            } => {
                let mut k = lo / len;
                let mut pos = lo;
                let at = |k: usize| base.wrapping_add_signed(off + k as isize * stride);
                let inner = lo % len;
                if inner != 0 {
                    let n = (len - inner).min(hi - pos);
                    s.seg(at(k) + inner, n);
                    pos += n;
                    k += 1;
                }
                let whole = (hi - pos) / len;
                if whole > 0 {
                    s.strided(at(k), len, whole, stride);
                    pos += whole * len;
                    k += whole;
                }
                if pos < hi {
                    s.seg(at(k), hi - pos);
                }
            }
            Op::Loop {
                off,
                stride,
                ref body,
                ..
            } => {
                let bs = body.size;
                let mut k = lo / bs;
                let mut pos = lo;
                while pos < hi && !s.full() {
                    let b0 = k * bs;
                    let end = (hi - b0).min(bs);
                    walk(
                        body,
                        base.wrapping_add_signed(off + k as isize * stride),
                        pos - b0,
                        end,
                        s,
                    );
                    pos = b0 + end;
                    k += 1;
                }
            }
        }
        i += 1;
    }
}

/// Walks bytes `[from, to)` of the packed stream of `count` elements of `prog`, `extent`
/// bytes apart, at address `base`.
pub fn walk_n<S: Sink>(
    prog: &Prog,
    extent: isize,
    count: usize,
    base: usize,
    from: usize,
    to: usize,
    s: &mut S,
) {
    let sz = prog.size;
    if sz == 0 {
        return;
    }
    let to = to.min(sz.saturating_mul(count));
    if prog.ops.len() == 1 && count > 1 {
        // Fold the element loop into the single step when it continues it.
        if let Some(ops) = Prog::try_repeat(0, count, extent, prog) {
            if ops.len() == 1 && !matches!(ops[0], Op::Loop { .. }) {
                let p = Prog::new(ops);
                return walk(&p, base, from, to, s);
            }
        }
    }
    let mut k = from / sz;
    let mut pos = from;
    while pos < to && !s.full() {
        let b0 = k * sz;
        let end = (to - b0).min(sz);
        walk(
            prog,
            base.wrapping_add_signed(k as isize * extent),
            pos - b0,
            end,
            s,
        );
        pos = b0 + end;
        k += 1;
    }
}

/// Copies segments out of memory into a packed buffer.
pub struct PackSink {
    /// Next byte of the packed buffer.
    pub out: *mut u8,
}

/// Copies a packed buffer out into memory segments.
pub struct UnpackSink {
    /// Next byte of the packed buffer.
    pub src: *const u8,
}

/// Bytes of the next block that a strided copy of blocks of at least [`PREFETCH_MIN`] bytes
/// asks the CPU to fetch while it copies the current one: blocks far apart (a face of a 3-D
/// grid) defeat the hardware prefetchers, which do not guess the jump to the next block.
const PREFETCH_AHEAD: usize = 2048;

/// Smallest block for which a strided copy prefetches the next block.
const PREFETCH_MIN: usize = 256;

/// Hints the CPU to load the cache lines of `[addr, addr + len)` (a hint only: any address is
/// allowed, nothing faults).
#[inline(always)]
fn prefetch(addr: usize, len: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let mut a = addr & !63;
        let end = addr.wrapping_add(len);
        while a < end {
            // SAFETY: a prefetch is a hint that never faults, whatever the address; SSE is part
            // of the x86-64 baseline.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(a as *const i8) };
            a += 64;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (addr, len);
}

/// Copies `count` blocks of `len` bytes between strided memory at `addr` (`stride` apart) and a
/// packed buffer at `packed` (into the packed buffer when `pack`), prefetching the next block.
///
/// # Safety
/// Every block and `count * len` bytes at `packed` must be valid for the copy's direction and
/// not overlap.
#[inline]
unsafe fn strided_blocks(
    addr: usize,
    len: usize,
    count: usize,
    stride: isize,
    packed: *mut u8,
    pack: bool,
) {
    let mut a = addr;
    let mut p = packed;
    let ahead = len.min(PREFETCH_AHEAD);
    for k in 0..count {
        let next = a.wrapping_add_signed(stride);
        if len >= PREFETCH_MIN && k + 1 < count {
            prefetch(next, ahead);
        }
        // SAFETY: caller guarantee.
        unsafe {
            if pack {
                std::ptr::copy_nonoverlapping(a as *const u8, p, len);
            } else {
                std::ptr::copy_nonoverlapping(p, a as *mut u8, len);
            }
            p = p.add(len);
        }
        a = next;
    }
}

/// Runs `body(address, len)` on `count` blocks `stride` apart from `addr`, four per step
/// (one loop counter and address update per four elements: packing a face of single doubles
/// takes 3.5 instead of 4.0 instructions per element, unpacking 3.6).
macro_rules! fixed_strided {
    ($len:expr, $count:expr, $addr:expr, $stride:expr, $body:expr) => {{
        let mut a: usize = $addr;
        let s: isize = $stride;
        let (s2, s3, s4) = (s.wrapping_mul(2), s.wrapping_mul(3), s.wrapping_mul(4));
        for _ in 0..$count / 4 {
            $body(a, $len);
            $body(a.wrapping_add_signed(s), $len);
            $body(a.wrapping_add_signed(s2), $len);
            $body(a.wrapping_add_signed(s3), $len);
            a = a.wrapping_add_signed(s4);
        }
        for _ in 0..$count % 4 {
            $body(a, $len);
            a = a.wrapping_add_signed(s);
        }
    }};
}

impl Sink for PackSink {
    #[inline(always)]
    fn seg(&mut self, addr: usize, len: usize) {
        // SAFETY: the walk only produces segments of the caller's buffer (see `pack`), and
        // `out` has room for the bytes of the walked range.
        unsafe {
            crate::core::p2p::copy_bytes(addr as *const u8, self.out, len);
            self.out = self.out.add(len);
        }
    }
    #[inline]
    fn strided(&mut self, addr: usize, len: usize, count: usize, stride: isize) {
        // SAFETY: as in `seg`; the fixed-size variants read and write exactly `len` bytes.
        unsafe {
            let mut o = self.out;
            macro_rules! w {
                ($t:ty) => {
                    fixed_strided!(len, count, addr, stride, |a: usize, _l| {
                        (o as *mut $t).write_unaligned((a as *const $t).read_unaligned());
                        o = o.add(std::mem::size_of::<$t>());
                    })
                };
            }
            match len {
                8 => w!(u64),
                4 => w!(u32),
                16 => w!(u128),
                2 => w!(u16),
                1 => w!(u8),
                _ => {
                    strided_blocks(addr, len, count, stride, o, true);
                    o = o.add(len * count);
                }
            }
            self.out = o;
        }
    }
}

impl Sink for UnpackSink {
    #[inline(always)]
    fn seg(&mut self, addr: usize, len: usize) {
        // SAFETY: the walk only produces segments of the caller's buffer (see `unpack`), and
        // `src` holds the bytes of the walked range.
        unsafe {
            crate::core::p2p::copy_bytes(self.src, addr as *mut u8, len);
            self.src = self.src.add(len);
        }
    }
    #[inline]
    fn strided(&mut self, addr: usize, len: usize, count: usize, stride: isize) {
        // SAFETY: as in `seg`.
        unsafe {
            let mut p = self.src;
            macro_rules! r {
                ($t:ty) => {
                    fixed_strided!(len, count, addr, stride, |a: usize, _l| {
                        (a as *mut $t).write_unaligned((p as *const $t).read_unaligned());
                        p = p.add(std::mem::size_of::<$t>());
                    })
                };
            }
            match len {
                8 => r!(u64),
                4 => r!(u32),
                16 => r!(u128),
                2 => r!(u16),
                1 => r!(u8),
                _ => {
                    strided_blocks(addr, len, count, stride, p as *mut u8, false);
                    p = p.add(len * count);
                }
            }
            self.src = p;
        }
    }
}

/// Collects segments as `(address, length)` pairs, merging adjacent ones, up to `max`
/// entries (the walk stops when full; `bytes` says how far it got).
pub struct IovSink {
    /// Segments.
    pub iov: Vec<(usize, usize)>,
    /// Most segments wanted.
    pub max: usize,
    /// Bytes collected.
    pub bytes: usize,
    stopped: bool,
}

impl IovSink {
    /// An empty collector of at most `max` segments.
    pub fn new(max: usize) -> IovSink {
        IovSink {
            iov: Vec::new(),
            max,
            bytes: 0,
            stopped: false,
        }
    }
}

impl Sink for IovSink {
    #[inline]
    fn seg(&mut self, addr: usize, len: usize) {
        if self.stopped {
            return;
        }
        if let Some(l) = self.iov.last_mut() {
            if l.0 + l.1 == addr {
                l.1 += len;
                self.bytes += len;
                return;
            }
        }
        if self.iov.len() >= self.max {
            self.stopped = true;
            return;
        }
        self.iov.push((addr, len));
        self.bytes += len;
    }
    #[inline]
    fn strided(&mut self, addr: usize, len: usize, count: usize, stride: isize) {
        let mut a = addr;
        for _ in 0..count {
            if self.stopped {
                // The walk resumes by byte offset next time.
                return;
            }
            self.seg(a, len);
            a = a.wrapping_add_signed(stride);
        }
    }
    #[inline]
    fn full(&self) -> bool {
        self.stopped
    }
}

/// Packs bytes `[from, from + out.len())` of the packed stream of `count` elements at `base`.
///
/// # Safety
/// Every segment of those elements must be readable memory.
pub unsafe fn pack(
    prog: &Prog,
    extent: isize,
    count: usize,
    base: usize,
    from: usize,
    out: &mut [u8],
) {
    let mut s = PackSink {
        out: out.as_mut_ptr(),
    };
    walk_n(prog, extent, count, base, from, from + out.len(), &mut s);
}

/// Unpacks `data` as bytes `[from, from + data.len())` of the packed stream of `count`
/// elements at `base`.
///
/// # Safety
/// Every segment of those elements must be writable memory not overlapping `data`.
pub unsafe fn unpack(
    prog: &Prog,
    extent: isize,
    count: usize,
    base: usize,
    from: usize,
    data: &[u8],
) {
    let mut s = UnpackSink { src: data.as_ptr() };
    walk_n(prog, extent, count, base, from, from + data.len(), &mut s);
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn segs(p: &Prog, ext: isize, n: usize, from: usize, to: usize) -> Vec<(usize, usize)> {
        let mut s = IovSink::new(usize::MAX);
        walk_n(p, ext, n, 1000, from, to, &mut s);
        s.iov
    }

    #[test]
    fn folding() {
        let d = Prog::bytes(0, 8);
        // contiguous(4, double) -> one copy
        assert_eq!(
            Prog::repeat(0, 4, 8, &d),
            vec![Op::Copy { off: 0, len: 32 }]
        );
        // vector(3, 1, 4, double) -> strided
        let v = Prog::new(Prog::repeat(0, 3, 32, &d));
        assert_eq!(
            v.ops,
            vec![Op::Strided {
                off: 0,
                len: 8,
                count: 3,
                stride: 32
            }]
        );
        // repeating the vector at its own continuation extends it
        let vv = Prog::repeat(0, 2, 96, &v);
        assert_eq!(
            vv,
            vec![Op::Strided {
                off: 0,
                len: 8,
                count: 6,
                stride: 32
            }]
        );
        // adjacent copies merge
        let m = Prog::new(vec![
            Op::Copy { off: 0, len: 4 },
            Op::Copy { off: 4, len: 4 },
        ]);
        assert_eq!(m.single(), Some((0, 8)));
        assert_eq!(v.bounds(), Some((0, 72)));
    }

    #[test]
    fn partial_walks_cut_segments() {
        let d = Prog::bytes(0, 8);
        let v = Prog::new(Prog::repeat(0, 3, 32, &d));
        assert_eq!(
            segs(&v, 96, 1, 0, 24),
            vec![(1000, 8), (1032, 8), (1064, 8)]
        );
        assert_eq!(
            segs(&v, 96, 1, 4, 20),
            vec![(1004, 4), (1032, 8), (1064, 4)]
        );
        // two elements: the element loop continues the stride
        assert_eq!(segs(&v, 96, 2, 20, 30).len(), 2);
        let nested = Prog::new(Prog::repeat(8, 2, 200, &v));
        assert_eq!(nested.size, 48);
        assert_eq!(segs(&nested, 400, 1, 22, 30), vec![(1078, 2), (1208, 6)]);
    }

    /// Blocks large enough for the prefetching copy (also in part, from a byte offset that
    /// cuts a block) pack and unpack to the same bytes as a naive walk.
    #[test]
    fn large_blocks_pack_unpack() {
        let (len, count, stride) = (300usize, 7usize, 1000isize);
        let v = Prog::new(Prog::repeat(0, count, stride, &Prog::bytes(0, len)));
        let src: Vec<u8> = (0..8000u32).map(|i| (i * 7 % 251) as u8).collect();
        let naive: Vec<u8> = (0..count)
            .flat_map(|k| src[k * stride as usize..k * stride as usize + len].to_vec())
            .collect();
        let mut packed = vec![0u8; len * count];
        // SAFETY: the blocks lie within `src` (last one ends at 6300 < 8000).
        unsafe {
            pack(&v, 0, 1, src.as_ptr() as usize, 0, &mut packed[..450]);
            pack(&v, 0, 1, src.as_ptr() as usize, 450, &mut packed[450..]);
        }
        assert_eq!(packed, naive);
        let mut dst = vec![0u8; 8000];
        // SAFETY: as above, for `dst`.
        unsafe {
            unpack(&v, 0, 1, dst.as_mut_ptr() as usize, 0, &packed[..1234]);
            unpack(&v, 0, 1, dst.as_mut_ptr() as usize, 1234, &packed[1234..]);
        }
        for k in 0..count {
            let at = k * stride as usize;
            assert_eq!(dst[at..at + len], src[at..at + len]);
            assert!(dst[at + len..at + stride as usize].iter().all(|&b| b == 0));
        }
    }

    #[test]
    fn pack_unpack_roundtrip() {
        let d = Prog::bytes(0, 4);
        let v = Prog::new(Prog::repeat(4, 5, 12, &d));
        let src: Vec<u8> = (0..200u8).collect();
        let mut packed = vec![0u8; 40];
        // SAFETY: the elements lie within `src` (2 elements of extent 64, data below 64).
        unsafe { pack(&v, 64, 2, src.as_ptr() as usize, 0, &mut packed) };
        assert_eq!(&packed[..8], &[4, 5, 6, 7, 16, 17, 18, 19]);
        let mut dst = vec![0u8; 200];
        // SAFETY: as above for `dst`; unpack in two pieces.
        unsafe {
            unpack(&v, 64, 2, dst.as_mut_ptr() as usize, 0, &packed[..13]);
            unpack(&v, 64, 2, dst.as_mut_ptr() as usize, 13, &packed[13..]);
        }
        let mut again = vec![0u8; 40];
        // SAFETY: as above.
        unsafe { pack(&v, 64, 2, dst.as_ptr() as usize, 0, &mut again) };
        assert_eq!(packed, again);
    }
}
