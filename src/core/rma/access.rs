//! Moving data to and from a target's window memory: direct loads and stores where the memory
//! is mapped here (`MPI_Win_allocate*`, or our own window), cross-memory attach
//! (`process_vm_readv`/`writev`, vectored for derived datatypes) into another process's
//! `MPI_Win_create`d or attached memory. Accumulates run under the target's accumulate lock,
//! element by element with the reduction kernels.

use crate::core::datatype::{Dtype, Layout};
use crate::core::error::{fail, MpiResult};
use crate::core::op::Reducer;
use crate::mpi_abi::consts::*;
use crate::platform::cma;
use std::sync::Arc;

/// Where a target's window memory is, seen from this process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// Mapped here: loads and stores at this address (the target's window base; 0 for our
    /// own dynamic window, whose displacements are addresses).
    Mapped(usize),
    /// In another process: cross-memory attach at its address `base`.
    Remote {
        /// Target process.
        pid: i32,
        /// The window base in its address space (0 for dynamic windows).
        base: usize,
    },
    /// On another node: reached through its window server (`rma::net`); shapes hold offsets
    /// from its window base (addresses, for dynamic windows).
    OtherNode,
}

/// A buffer described by (address, count, datatype): one contiguous run, or a layout.
#[derive(Clone, Debug)]
pub enum Shape {
    /// `len` contiguous bytes at `addr`.
    Contig {
        /// First byte.
        addr: usize,
        /// Bytes.
        len: usize,
    },
    /// A derived layout whose elements start at `addr`.
    Spread {
        /// Base address of the elements.
        addr: usize,
        /// Elements and type.
        layout: Layout,
    },
}

impl Shape {
    /// The shape of `count` elements of `dt` at `addr`.
    pub fn new(addr: usize, count: usize, dt: &Arc<Dtype>) -> Shape {
        match dt.contiguous_run(count) {
            Some(off) => Shape::Contig {
                addr: addr.wrapping_add_signed(off),
                len: dt.size * count,
            },
            None => Shape::Spread {
                addr,
                layout: Layout {
                    dt: dt.clone(),
                    count,
                },
            },
        }
    }

    /// Data bytes.
    pub fn bytes(&self) -> usize {
        match self {
            Shape::Contig { len, .. } => *len,
            Shape::Spread { layout, .. } => layout.bytes(),
        }
    }

    /// The address range `[lo, hi)` the data bytes lie in (empty: `None`).
    pub fn span(&self) -> Option<(usize, usize)> {
        match self {
            Shape::Contig { addr, len } => (*len > 0).then(|| (*addr, addr + len)),
            Shape::Spread { addr, layout } => {
                let t = &layout.dt;
                if layout.count == 0 || t.size == 0 {
                    return None;
                }
                let first = addr.wrapping_add_signed(t.true_lb);
                let last_start = (layout.count as isize - 1) * t.extent;
                let lo = first.wrapping_add_signed(last_start.min(0));
                let hi = first
                    .wrapping_add_signed(last_start.max(0))
                    .wrapping_add(t.true_extent as usize);
                Some((lo, hi))
            }
        }
    }

    /// The same shape moved to base `addr + delta`.
    pub fn moved(&self, delta: isize) -> Shape {
        match self {
            Shape::Contig { addr, len } => Shape::Contig {
                addr: addr.wrapping_add_signed(delta),
                len: *len,
            },
            Shape::Spread { addr, layout } => Shape::Spread {
                addr: addr.wrapping_add_signed(delta),
                layout: layout.clone(),
            },
        }
    }

    /// The contiguous run, if the shape is one.
    pub fn contig(&self) -> Option<(usize, usize)> {
        match self {
            Shape::Contig { addr, len } => Some((*addr, *len)),
            Shape::Spread { .. } => None,
        }
    }

    /// The memory segments (address, length), in packed order.
    pub fn segments(&self) -> Vec<(usize, usize)> {
        match self {
            Shape::Contig { addr, len } => vec![(*addr, *len)],
            Shape::Spread { addr, layout } => {
                layout.segments(*addr, 0, layout.bytes(), usize::MAX).iov
            }
        }
    }

    /// Packs the data (local memory) into `out` (`bytes()` long).
    ///
    /// # Safety
    /// The shape's memory must be readable here.
    pub unsafe fn pack(&self, out: &mut [u8]) {
        match self {
            // SAFETY: caller guarantee; `out` is ours, distinct from the user's memory.
            Shape::Contig { addr, len } => unsafe {
                std::ptr::copy(*addr as *const u8, out.as_mut_ptr(), *len)
            },
            // SAFETY: caller guarantee.
            Shape::Spread { addr, layout } => unsafe { layout.pack(*addr, 0, out) },
        }
    }

    /// Unpacks `data` into the shape's (local) memory.
    ///
    /// # Safety
    /// The shape's memory must be writable here and not overlap `data`.
    pub unsafe fn unpack(&self, data: &[u8]) {
        match self {
            // SAFETY: caller guarantee.
            Shape::Contig { addr, len } => unsafe {
                std::ptr::copy(data.as_ptr(), *addr as *mut u8, *len)
            },
            // SAFETY: caller guarantee.
            Shape::Spread { addr, layout } => unsafe { layout.unpack(*addr, 0, data) },
        }
    }
}

fn other_node<T>() -> MpiResult<T> {
    fail(
        MPI_ERR_INTERN,
        "a target on another node is reached through its window server",
    )
}

fn cma_failed<T>(e: std::io::Error) -> MpiResult<T> {
    fail(
        MPI_ERR_OTHER,
        format!("cross-memory access to the target's window failed: {e}"),
    )
}

/// Reads the target data `t` (addresses in the target's space at `place`) into `out`.
///
/// # Safety
/// For a mapped place, `t` must lie in mapped window memory; `out` is `t.bytes()` long.
pub unsafe fn read_target(place: Place, t: &Shape, out: &mut [u8]) -> MpiResult<()> {
    match place {
        // SAFETY: caller guarantee.
        Place::Mapped(_) => unsafe { t.pack(out) },
        Place::OtherNode => return other_node(),
        Place::Remote { pid, .. } => {
            let segs = t.segments();
            // SAFETY: `out` holds the segments' total; the kernel checks the remote ranges.
            let copied = unsafe { cma::transfer_segments(false, pid, out.as_mut_ptr(), &segs) };
            if let Err(e) = copied {
                return cma_failed(e);
            }
        }
    }
    Ok(())
}

/// Writes `data` to the target data `t` at `place`.
///
/// # Safety
/// As [`read_target`].
pub unsafe fn write_target(place: Place, t: &Shape, data: &[u8]) -> MpiResult<()> {
    match place {
        // SAFETY: caller guarantee.
        Place::Mapped(_) => unsafe { t.unpack(data) },
        Place::OtherNode => return other_node(),
        Place::Remote { pid, .. } => {
            // SAFETY: a write only reads `data`, which holds the segments' total.
            if let Err(e) = unsafe {
                cma::transfer_segments(true, pid, data.as_ptr() as *mut u8, &t.segments())
            } {
                return cma_failed(e);
            }
        }
    }
    Ok(())
}

/// `MPI_Put`: origin data `o` (local) to target data `t`.
///
/// # Safety
/// `o` must be readable; `t` as for [`write_target`].
pub unsafe fn put(place: Place, o: &Shape, t: &Shape) -> MpiResult<()> {
    if let (Some((oa, len)), Some((ta, _)), Place::Mapped(_)) = (o.contig(), t.contig(), place) {
        // SAFETY: both ranges are valid (caller guarantees); they may overlap (a put into
        // our own window from inside it), hence `copy`.
        unsafe { std::ptr::copy(oa as *const u8, ta as *mut u8, len) };
        return Ok(());
    }
    if let (Some((oa, _)), Place::Remote { pid, .. }) = (o.contig(), place) {
        // SAFETY: `oa` holds `len` readable bytes (caller); the kernel checks the target side.
        return match unsafe { cma::transfer_segments(true, pid, oa as *mut u8, &t.segments()) } {
            Ok(()) => Ok(()),
            Err(e) => cma_failed(e),
        };
    }
    let mut buf = vec![0u8; o.bytes()];
    // SAFETY: caller guarantees.
    unsafe {
        o.pack(&mut buf);
        write_target(place, t, &buf)
    }
}

/// `MPI_Get`: target data `t` into origin buffer `o` (local).
///
/// # Safety
/// `o` must be writable; `t` as for [`read_target`].
pub unsafe fn get(place: Place, o: &Shape, t: &Shape) -> MpiResult<()> {
    if let (Some((oa, len)), Some((ta, _)), Place::Mapped(_)) = (o.contig(), t.contig(), place) {
        // SAFETY: as in `put`.
        unsafe { std::ptr::copy(ta as *const u8, oa as *mut u8, len) };
        return Ok(());
    }
    if let (Some((oa, _)), Place::Remote { pid, .. }) = (o.contig(), place) {
        // SAFETY: `oa` holds the bytes (caller); the kernel checks the target side.
        return match unsafe { cma::transfer_segments(false, pid, oa as *mut u8, &t.segments()) } {
            Ok(()) => Ok(()),
            Err(e) => cma_failed(e),
        };
    }
    let mut buf = vec![0u8; t.bytes()];
    // SAFETY: caller guarantees.
    unsafe {
        read_target(place, t, &mut buf)?;
        o.unpack(&buf);
    }
    Ok(())
}

/// The basic element an accumulate works on: its packed size and its extent in memory (they
/// differ for the pair types of `MPI_MINLOC`/`MPI_MAXLOC`), and the reduction on it.
#[derive(Clone, Debug)]
pub struct Element {
    /// The reduction of the op on this element type.
    pub reducer: Reducer,
    /// The element type's handle (predefined).
    pub handle: usize,
    /// Its data bytes.
    pub size: usize,
    /// Its extent.
    pub extent: usize,
    /// Its layout, for types with holes (`None`: `size == extent`).
    pub spread: Option<Arc<Dtype>>,
    /// The op is `MPI_REPLACE` (the new value is the origin's, whatever the target held).
    pub replace: bool,
}

impl Element {
    /// Whether the element has no holes (packed data is its memory layout).
    pub fn dense(&self) -> bool {
        self.spread.is_none()
    }

    /// Applies `origin op target` to packed element data, in place in `target`.
    pub fn apply(&self, origin: &[u8], target: &mut [u8]) {
        let size = self.size;
        if size == 0 {
            return;
        }
        let n = target.len().min(origin.len()) / size;
        let Some(dt) = &self.spread else {
            // SAFETY: both buffers hold `n` whole elements of `size == extent` bytes.
            unsafe {
                self.reducer
                    .apply_raw(n, origin.as_ptr(), target.as_mut_ptr())
            };
            return;
        };
        // Elements with holes: spread both to their memory layout, reduce, pack back.
        let shape = |buf: &mut Vec<u8>| Shape::Spread {
            addr: buf.as_mut_ptr() as usize,
            layout: Layout {
                dt: dt.clone(),
                count: n,
            },
        };
        let span = n * self.extent;
        let (mut eo, mut et) = (vec![0u8; span], vec![0u8; span]);
        let (so, st) = (shape(&mut eo), shape(&mut et));
        // SAFETY: `eo`/`et` hold `n` elements of the type's extent; the packed buffers hold
        // `n * size` bytes; the kernel reads and writes whole elements of the spread buffers.
        unsafe {
            so.unpack(&origin[..n * size]);
            st.unpack(&target[..n * size]);
            self.reducer.apply_raw(n, eo.as_ptr(), et.as_mut_ptr());
            st.pack(&mut target[..n * size]);
        }
    }
}

/// The accumulate family in one: under the target's accumulate lock (held by the caller),
/// reads the target data `t` into `result` (when given: `MPI_Get_accumulate`), then, unless
/// the op is `MPI_NO_OP` (`el` is `None`), writes `origin op target` back.
///
/// # Safety
/// `o` readable, `result` writable (local), `t` as for [`read_target`] and [`write_target`].
pub unsafe fn accumulate(
    place: Place,
    o: &Shape,
    t: &Shape,
    result: Option<&Shape>,
    el: Option<&Element>,
) -> MpiResult<()> {
    // Fast path: contiguous data of a hole-free element in mapped memory, and a contiguous
    // result buffer if any (the old values are copied there first).
    if let (Some(el), Place::Mapped(_), Some((oa, len)), Some((ta, _))) =
        (el, place, o.contig(), t.contig())
    {
        let res = result.map(Shape::contig);
        let size = el.size;
        if size > 0 && el.dense() && res.is_none_or(|r| r.is_some()) {
            // SAFETY: both runs hold `len / size` whole elements (caller), the result buffer
            // `len` bytes, apart from the window memory; the kernel copes with overlap
            // (`apply_raw`).
            unsafe {
                if let Some(Some((ra, _))) = res {
                    std::ptr::copy_nonoverlapping(ta as *const u8, ra as *mut u8, len);
                }
                el.reducer
                    .apply_raw(len / size, oa as *const u8, ta as *mut u8)
            };
            return Ok(());
        }
    }
    if let (Place::Remote { pid, .. }, Some((ta, len))) = (place, t.contig()) {
        let origin = o.contig().map(|(a, _)| a);
        let res = result.map(Shape::contig);
        let dense = el.is_none_or(|e| e.size > 0 && e.dense());
        if dense && (el.is_none() || origin.is_some()) && res.is_none_or(|r| r.is_some()) {
            // SAFETY: caller guarantees.
            return unsafe { accumulate_remote_contig(pid, ta, len, origin, res.flatten(), el) };
        }
    }
    let mut cur = vec![0u8; t.bytes()];
    // SAFETY: caller guarantees.
    unsafe { read_target(place, t, &mut cur)? };
    if let Some(r) = result {
        // SAFETY: caller guarantee; `cur` is ours.
        unsafe { r.unpack(&cur[..r.bytes().min(cur.len())]) };
    }
    if let Some(el) = el {
        let mut inp = vec![0u8; o.bytes()];
        // SAFETY: caller guarantee.
        unsafe { o.pack(&mut inp) };
        el.apply(&inp, &mut cur);
        // SAFETY: caller guarantees.
        unsafe { write_target(place, t, &cur)? };
    }
    Ok(())
}

/// Bytes of target data an accumulate into another process's memory moves per CMA round
/// trip (read, reduce, write back), through one scratch buffer per thread.
const REMOTE_CHUNK: usize = 256 << 10;

/// An accumulate of contiguous data into contiguous memory of process `pid` (`len` bytes at
/// `ta`), in chunks: each is read by CMA into a scratch buffer kept by the thread, copied to
/// the result buffer if there is one, reduced with the origin's bytes unless `el` is `None`
/// (`MPI_NO_OP`), and written back. Unlike a copy of the whole range, it allocates and
/// faults in no fresh memory per call.
///
/// # Safety
/// `origin` (when `el` is some) readable and `result` writable for `len` bytes; `el` a
/// hole-free element; the caller holds the target's accumulate lock.
unsafe fn accumulate_remote_contig(
    pid: i32,
    ta: usize,
    len: usize,
    origin: Option<usize>,
    result: Option<(usize, usize)>,
    el: Option<&Element>,
) -> MpiResult<()> {
    thread_local! {
        static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    let size = el.map_or(1, |e| e.size);
    let chunk = (REMOTE_CHUNK / size).max(1) * size;
    SCRATCH.with_borrow_mut(|cur| {
        cur.resize(chunk.min(len), 0);
        let mut off = 0;
        while off < len {
            let n = chunk.min(len - off);
            // SAFETY: `cur` holds at least `n` bytes; the kernel checks the remote range.
            if let Err(e) = unsafe { cma::read_from(pid, (ta + off) as u64, cur.as_mut_ptr(), n) } {
                return cma_failed(e);
            }
            if let Some((r, _)) = result {
                // SAFETY: the result buffer holds `len` bytes (caller); `cur` is ours.
                unsafe { std::ptr::copy_nonoverlapping(cur.as_ptr(), (r + off) as *mut u8, n) };
            }
            if let (Some(el), Some(o)) = (el, origin) {
                // SAFETY: the origin holds `len` bytes of whole elements (caller), `cur` the
                // chunk's `n / size` elements.
                unsafe {
                    el.reducer
                        .apply_raw(n / size, (o + off) as *const u8, cur.as_mut_ptr())
                };
                // SAFETY: a write only reads `cur`; the kernel checks the remote range.
                if let Err(e) = unsafe { cma::write_to(pid, cur.as_ptr(), (ta + off) as u64, n) } {
                    return cma_failed(e);
                }
            }
            off += n;
        }
        Ok(())
    })
}

/// `MPI_Compare_and_swap` on one element of `size` bytes (the caller holds the target's
/// accumulate lock): the old value goes to `result`; `origin` is written if it equalled
/// `compare`.
///
/// # Safety
/// `origin`, `compare` readable and `result` writable for `size` bytes; `t` one element.
pub unsafe fn compare_and_swap(
    place: Place,
    origin: usize,
    compare: usize,
    result: usize,
    t: &Shape,
    size: usize,
) -> MpiResult<()> {
    let mut cur = vec![0u8; size];
    // SAFETY: caller guarantees.
    unsafe {
        read_target(place, t, &mut cur)?;
        let cmp = std::slice::from_raw_parts(compare as *const u8, size);
        let equal = cur.as_slice() == cmp;
        let new = std::slice::from_raw_parts(origin as *const u8, size).to_vec();
        std::ptr::copy_nonoverlapping(cur.as_ptr(), result as *mut u8, size);
        if equal {
            write_target(place, t, &new)?;
        }
    }
    Ok(())
}
