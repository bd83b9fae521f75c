//! Accumulates by hardware atomics, for windows that ask for element granularity
//! (`mpi_accumulate_granularity` of 1 to 8 bytes, or `HYMPI_ACC_ATOMICS=always`) and own
//! their memory (`MPI_Win_allocate*`, mapped by every rank of the node).
//!
//! On such a target every element that one atomic instruction can hold (1, 2, 4 or 8 bytes,
//! no holes, naturally aligned) is updated by that instruction alone: a swap for
//! `MPI_REPLACE`, a load for `MPI_NO_OP`, a compare-and-swap loop around the op's kernel
//! otherwise. No lock is taken, so origins updating different elements of one target never
//! wait for each other. Whether an element qualifies depends only on its address and type,
//! so every accumulate to it, from any origin, node or thread, takes the same path; the
//! elements that do not qualify (unaligned, 12- or 16-byte types, pairs with holes) are
//! updated under the target's accumulate lock as on every other window, and the atomic
//! path never writes them.

use crate::core::datatype;
use crate::core::op::{Builtin, Reducer};
use crate::core::rma::access::Element;
use crate::core::rma::ctrl::Ctrl;
use crate::mpi_abi::consts::*;
use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, AtomicU8, Ordering};

/// The widest element one instruction updates.
pub const MAX_BYTES: usize = 8;

/// Whether an element of `size` bytes (hole-free when `dense`) at `addr` is updated by one
/// hardware atomic.
#[inline]
pub fn capable(size: usize, dense: bool, addr: usize) -> bool {
    dense && matches!(size, 1 | 2 | 4 | 8) && addr.is_multiple_of(size)
}

/// What to do to each element.
#[derive(Clone, Copy)]
pub enum Update<'a> {
    /// Only read it (`MPI_NO_OP`).
    Read,
    /// Replace it by the origin's (`MPI_REPLACE`).
    Replace,
    /// `origin op target` with the element's reduction.
    Reduce(&'a Reducer),
}

impl<'a> Update<'a> {
    /// The update for element `el` (`None`: `MPI_NO_OP`).
    pub fn of(el: Option<&'a Element>) -> Update<'a> {
        match el {
            None => Update::Read,
            Some(e) if e.replace => Update::Replace,
            Some(e) => Update::Reduce(&e.reducer),
        }
    }
}

macro_rules! one_element {
    ($name:ident, $atomic:ty, $int:ty) => {
        /// One element of this width, atomically; returns the value it held.
        ///
        /// # Safety
        /// `target` must be aligned, mapped and writable for the element; `origin` readable
        /// for it (unless the update is `Read`).
        #[inline]
        unsafe fn $name(update: Update<'_>, origin: *const u8, target: *mut u8) -> $int {
            // SAFETY: aligned and valid for the width (caller); every concurrent accessor of
            // the element uses an atomic of the same width (module rule), so it is one.
            let cell = unsafe { &*(target as *const $atomic) };
            let value = || {
                // SAFETY: `origin` holds one element (caller); it may be unaligned.
                unsafe { std::ptr::read_unaligned(origin as *const $int) }
            };
            match update {
                Update::Read => cell.load(Ordering::Acquire),
                Update::Replace => cell.swap(value(), Ordering::AcqRel),
                Update::Reduce(reducer) => {
                    let mut cur = cell.load(Ordering::Relaxed);
                    loop {
                        let mut new = cur;
                        // SAFETY: one element on each side, in separate locals.
                        unsafe { reducer.apply_raw(1, origin, &mut new as *mut $int as *mut u8) };
                        match cell.compare_exchange_weak(
                            cur,
                            new,
                            Ordering::AcqRel,
                            Ordering::Relaxed,
                        ) {
                            Ok(old) => return old,
                            Err(seen) => cur = seen,
                        }
                    }
                }
            }
        }
    };
}

one_element!(update8, AtomicU8, u8);
one_element!(update16, AtomicU16, u16);
one_element!(update32, AtomicU32, u32);
one_element!(update64, AtomicU64, u64);

/// The commonest one-element accumulates (`MPI_SUM` of a double or a 4- or 8-byte integer:
/// counters and sums), applied inline without looking up and calling the op's kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scalar {
    /// `MPI_SUM` of `MPI_DOUBLE`.
    AddF64,
    /// `MPI_SUM` of an 8-byte integer (two's complement: signed and unsigned alike).
    AddI64,
    /// `MPI_SUM` of a 4-byte integer.
    AddI32,
}

impl Scalar {
    /// The inline form of builtin `op` on predefined type `dt`, if it has one.
    pub fn of(op: Builtin, dt: usize) -> Option<Scalar> {
        if op != Builtin::Sum {
            return None;
        }
        match dt {
            MPI_DOUBLE => Some(Scalar::AddF64),
            MPI_LONG
            | MPI_LONG_LONG
            | MPI_UNSIGNED_LONG
            | MPI_UNSIGNED_LONG_LONG
            | MPI_INT64_T
            | MPI_UINT64_T
            | MPI_AINT
            | MPI_COUNT
            | MPI_OFFSET => Some(Scalar::AddI64),
            MPI_INT | MPI_UNSIGNED | MPI_INT32_T | MPI_UINT32_T => Some(Scalar::AddI32),
            _ => None,
        }
    }

    /// Bytes of the element.
    pub fn size(self) -> usize {
        match self {
            Scalar::AddF64 | Scalar::AddI64 => 8,
            Scalar::AddI32 => 4,
        }
    }

    /// Adds the element at `origin` to the one at `target`, by one atomic instruction (or a
    /// compare-and-swap loop for the double) when `atomic`, else by a plain load and store
    /// (the caller holds the target's accumulate lock); the old value goes to `old`.
    ///
    /// # Safety
    /// `origin` readable and `old` writable for one element (any alignment); `target`
    /// readable and writable for it, and aligned when `atomic` (then every concurrent
    /// accessor of it is atomic: the module rule).
    #[inline]
    pub unsafe fn add(
        self,
        atomic: bool,
        origin: *const u8,
        target: *mut u8,
        old: Option<*mut u8>,
    ) {
        // SAFETY: the caller's guarantees, element by element below.
        unsafe {
            match self {
                Scalar::AddF64 => {
                    let v = std::ptr::read_unaligned(origin as *const f64);
                    let was = if atomic {
                        let cell = &*(target as *const AtomicU64);
                        let mut cur = cell.load(Ordering::Relaxed);
                        loop {
                            let new = (f64::from_bits(cur) + v).to_bits();
                            match cell.compare_exchange_weak(
                                cur,
                                new,
                                Ordering::AcqRel,
                                Ordering::Relaxed,
                            ) {
                                Ok(_) => break f64::from_bits(cur),
                                Err(seen) => cur = seen,
                            }
                        }
                    } else {
                        let was = std::ptr::read_unaligned(target as *const f64);
                        std::ptr::write_unaligned(target as *mut f64, was + v);
                        was
                    };
                    if let Some(p) = old {
                        std::ptr::write_unaligned(p as *mut f64, was);
                    }
                }
                Scalar::AddI64 => {
                    let v = std::ptr::read_unaligned(origin as *const u64);
                    let was = if atomic {
                        (*(target as *const AtomicU64)).fetch_add(v, Ordering::AcqRel)
                    } else {
                        let was = std::ptr::read_unaligned(target as *const u64);
                        std::ptr::write_unaligned(target as *mut u64, was.wrapping_add(v));
                        was
                    };
                    if let Some(p) = old {
                        std::ptr::write_unaligned(p as *mut u64, was);
                    }
                }
                Scalar::AddI32 => {
                    let v = std::ptr::read_unaligned(origin as *const u32);
                    let was = if atomic {
                        (*(target as *const AtomicU32)).fetch_add(v, Ordering::AcqRel)
                    } else {
                        let was = std::ptr::read_unaligned(target as *const u32);
                        std::ptr::write_unaligned(target as *mut u32, was.wrapping_add(v));
                        was
                    };
                    if let Some(p) = old {
                        std::ptr::write_unaligned(p as *mut u32, was);
                    }
                }
            }
        }
    }
}

/// Updates `n` contiguous elements of `size` bytes at `target` (each [`capable`]) one
/// atomic at a time with the elements at `origin`; the old values go to `old` when given.
///
/// # Safety
/// `target` must be mapped, writable and `size`-aligned for `n` elements; `origin` readable
/// for `n` elements unless the update is `Read`; `old` writable for `n` elements and apart
/// from `target`.
pub unsafe fn update(
    update: Update<'_>,
    size: usize,
    n: usize,
    origin: *const u8,
    target: *mut u8,
    old: Option<*mut u8>,
) {
    for k in 0..n {
        let (o, t) = (origin.wrapping_add(k * size), target.wrapping_add(k * size));
        // SAFETY: element k lies in the ranges the caller vouches for; `old` is written
        // unaligned (a user buffer).
        unsafe {
            macro_rules! put_old {
                ($v:expr, $int:ty) => {{
                    let v: $int = $v;
                    if let Some(p) = old {
                        std::ptr::write_unaligned(p.add(k * size) as *mut $int, v);
                    }
                }};
            }
            match size {
                1 => put_old!(update8(update, o, t), u8),
                2 => put_old!(update16(update, o, t), u16),
                4 => put_old!(update32(update, o, t), u32),
                8 => put_old!(update64(update, o, t), u64),
                _ => unreachable!("only capable elements come here"),
            }
        }
    }
}

/// `MPI_Compare_and_swap` on one [`capable`] element of `size` bytes at `target`: writes
/// `origin` if the element equals `compare` bit for bit; the old value goes to `result`.
///
/// # Safety
/// `target` as for [`update`] (one element); `origin`, `compare` readable and `result`
/// writable for one element.
pub unsafe fn compare_and_swap(
    size: usize,
    origin: *const u8,
    compare: *const u8,
    result: *mut u8,
    target: *mut u8,
) {
    macro_rules! cas {
        ($atomic:ty, $int:ty) => {{
            // SAFETY: as in `update`: aligned, valid, and only ever accessed atomically.
            let cell = unsafe { &*(target as *const $atomic) };
            // SAFETY: the caller's one-element buffers, possibly unaligned.
            let (new, expect) = unsafe {
                (
                    std::ptr::read_unaligned(origin as *const $int),
                    std::ptr::read_unaligned(compare as *const $int),
                )
            };
            let old = match cell.compare_exchange(expect, new, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(v) | Err(v) => v,
            };
            // SAFETY: `result` holds one element (caller).
            unsafe { std::ptr::write_unaligned(result as *mut $int, old) };
        }};
    }
    match size {
        1 => cas!(AtomicU8, u8),
        2 => cas!(AtomicU16, u16),
        4 => cas!(AtomicU32, u32),
        8 => cas!(AtomicU64, u64),
        _ => unreachable!("only capable elements come here"),
    }
}

/// The bytes of predefined type `basic` when one atomic instruction holds an element of it
/// (hole-free, 1 to 8 bytes).
pub fn width(basic: usize) -> Option<usize> {
    let info = datatype::predefined(basic)?;
    (info.size == info.extent && matches!(info.size, 1 | 2 | 4 | 8)).then_some(info.size)
}

/// An accumulate of packed `origin` data (ignored for `MPI_NO_OP`, `el` `None`) into the
/// segments `segs` of rank `rank`'s window memory mapped here, whole elements of predefined
/// width `size` ([`width`]): per element by hardware atomics where aligned, the rest under
/// the rank's accumulate lock in `ctrl`. Returns the packed old values when `fetch`.
///
/// # Safety
/// The segments must be mapped and writable here and `origin` hold their total (unless
/// `el` is `None`).
pub unsafe fn accumulate_packed(
    ctrl: &Ctrl,
    rank: usize,
    size: usize,
    segs: &[(usize, usize)],
    origin: &[u8],
    fetch: bool,
    el: Option<&Element>,
) -> Vec<u8> {
    let mut locked = |runs: &[(usize, usize, usize)], old: &mut [u8]| {
        let _g = ctrl.acc_lock(rank);
        for &(addr, len, at) in runs {
            // SAFETY: the run is one of the caller's segments, mapped and writable here, and
            // the accumulate lock is held: no other accessor of these (lock-path) elements.
            let cur = unsafe { std::slice::from_raw_parts_mut(addr as *mut u8, len) };
            if fetch {
                old[at..at + len].copy_from_slice(cur);
            }
            if let Some(el) = el {
                el.apply(&origin[at..at + len], cur);
            }
        }
    };
    // SAFETY: the caller's guarantees, passed on.
    unsafe { update_segments(Update::of(el), size, true, segs, origin, fetch, &mut locked) }
}

/// Runs of window memory the accumulate lock must cover: (address, length, offset in the
/// packed data), with the packed old values to fill.
pub type LockedRuns<'a> = &'a mut dyn FnMut(&[(usize, usize, usize)], &mut [u8]);

/// Applies an accumulate to window memory mapped here, segment by segment (`segs`: addresses
/// and lengths, whole elements of `size` bytes, hole-free when `dense`): capable runs by
/// [`update`], the others through `locked` (called once with every such run, under the
/// target's accumulate lock, which the caller takes only then). `origin` holds the packed
/// origin data (unless the update is `Read`); the packed old values are returned when
/// `fetch`.
///
/// # Safety
/// The segments must be mapped and writable here and `origin` hold their total.
pub unsafe fn update_segments(
    update_kind: Update<'_>,
    size: usize,
    dense: bool,
    segs: &[(usize, usize)],
    origin: &[u8],
    fetch: bool,
    locked: LockedRuns<'_>,
) -> Vec<u8> {
    let total: usize = segs.iter().map(|s| s.1).sum();
    let mut old = if fetch { vec![0u8; total] } else { Vec::new() };
    // Runs the lock must cover: (address, length, offset in the packed data).
    let mut rest = Vec::new();
    let mut at = 0usize;
    for &(addr, len) in segs {
        if size > 0 && capable(size, dense, addr) {
            let o = if matches!(update_kind, Update::Read) {
                std::ptr::null()
            } else {
                origin[at..at + len].as_ptr()
            };
            let out = fetch.then(|| old[at..].as_mut_ptr());
            // SAFETY: the segment is mapped and writable (caller), aligned (capable) and
            // holds `len / size` elements; `origin` and `old` hold as many at `at`.
            unsafe { update(update_kind, size, len / size, o, addr as *mut u8, out) };
        } else {
            rest.push((addr, len, at));
        }
        at += len;
    }
    if !rest.is_empty() {
        locked(&rest, &mut old);
    }
    old
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::op::Reducer;

    fn element(op: Builtin, dt: usize, size: usize) -> Element {
        Element {
            reducer: Reducer::builtin(op, dt).expect("defined pair"),
            handle: dt,
            size,
            extent: size,
            spread: None,
            replace: op == Builtin::Replace,
        }
    }

    #[test]
    fn scalar_adds_match_the_kernels_and_stay_atomic() {
        assert_eq!(Scalar::of(Builtin::Sum, MPI_DOUBLE), Some(Scalar::AddF64));
        assert_eq!(Scalar::of(Builtin::Sum, MPI_UINT64_T), Some(Scalar::AddI64));
        assert_eq!(Scalar::of(Builtin::Sum, MPI_INT), Some(Scalar::AddI32));
        assert_eq!(Scalar::of(Builtin::Max, MPI_INT), None);
        assert_eq!(Scalar::of(Builtin::Sum, MPI_FLOAT), None);
        // Plain (under a lock) at an odd address, with the old value fetched.
        let mut bytes = [0u8; 16];
        bytes[1..9].copy_from_slice(&(-5i64).to_ne_bytes());
        let (add, mut old) = (7i64, 0i64);
        // SAFETY: 8 bytes at bytes[1..9]; locals for the rest.
        unsafe {
            Scalar::AddI64.add(
                false,
                &add as *const i64 as *const u8,
                bytes.as_mut_ptr().add(1),
                Some(&mut old as *mut i64 as *mut u8),
            )
        };
        assert_eq!(
            (i64::from_ne_bytes(bytes[1..9].try_into().unwrap()), old),
            (2, -5)
        );
        // Atomic, from 4 threads.
        let (d, i) = (0u64, 0u32);
        let (pd, pi) = (&d as *const u64 as usize, &i as *const u32 as usize);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(move || {
                    let (half, one) = (0.5f64, 1u32);
                    for _ in 0..1000 {
                        // SAFETY: aligned locals of the scope, accessed only atomically.
                        unsafe {
                            Scalar::AddF64.add(
                                true,
                                &half as *const f64 as *const u8,
                                pd as *mut u8,
                                None,
                            );
                            Scalar::AddI32.add(
                                true,
                                &one as *const u32 as *const u8,
                                pi as *mut u8,
                                None,
                            );
                        }
                    }
                });
            }
        });
        assert_eq!((f64::from_bits(d), i), (2000.0, 4000));
    }

    #[test]
    fn capable_elements() {
        assert!(capable(8, true, 64));
        assert!(capable(4, true, 68));
        assert!(!capable(8, true, 68));
        assert!(!capable(8, false, 64));
        assert!(!capable(16, true, 64));
        assert!(!capable(12, true, 0));
        assert!(capable(1, true, 3));
    }

    #[test]
    fn threads_sum_doubles_and_longs_without_losing_updates() {
        let sum_d = element(Builtin::Sum, MPI_DOUBLE, 8);
        let sum_i = element(Builtin::Sum, MPI_INT, 4);
        let cells = [0u64; 4];
        let ints = [0u32; 4];
        let (pd, pi) = (cells.as_ptr() as usize, ints.as_ptr() as usize);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    let (one, onei) = ([1.0f64; 4], [1i32; 4]);
                    for _ in 0..2000 {
                        // SAFETY: 4 aligned elements each, accessed only atomically here.
                        unsafe {
                            update(
                                Update::Reduce(&sum_d.reducer),
                                8,
                                4,
                                one.as_ptr() as *const u8,
                                pd as *mut u8,
                                None,
                            );
                            update(
                                Update::Reduce(&sum_i.reducer),
                                4,
                                4,
                                onei.as_ptr() as *const u8,
                                pi as *mut u8,
                                None,
                            );
                        }
                    }
                });
            }
        });
        for c in cells {
            assert_eq!(f64::from_bits(c), 8000.0);
        }
        assert_eq!(ints, [8000; 4]);
    }

    #[test]
    fn fetched_values_are_distinct_and_replace_and_read_work() {
        let sum = element(Builtin::Sum, MPI_LONG, 8);
        let counter = 0u64;
        let p = &counter as *const u64 as usize;
        let fetched: Vec<u64> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..4)
                .map(|_| {
                    s.spawn(|| {
                        let mut seen = Vec::new();
                        for _ in 0..500 {
                            let (one, mut old) = (1i64, 0u64);
                            // SAFETY: one aligned element, accessed only atomically.
                            unsafe {
                                update(
                                    Update::Reduce(&sum.reducer),
                                    8,
                                    1,
                                    &one as *const i64 as *const u8,
                                    p as *mut u8,
                                    Some(&mut old as *mut u64 as *mut u8),
                                )
                            };
                            seen.push(old);
                        }
                        seen
                    })
                })
                .collect();
            hs.into_iter().flat_map(|h| h.join().unwrap()).collect()
        });
        let mut sorted = fetched.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..2000).collect::<Vec<u64>>());
        let (seven, mut old, mut now) = (7u64, 0u64, 0u64);
        // SAFETY: the counter as above; locals for the rest.
        unsafe {
            update(
                Update::Replace,
                8,
                1,
                &seven as *const u64 as *const u8,
                p as *mut u8,
                Some(&mut old as *mut u64 as *mut u8),
            );
            update(
                Update::Read,
                8,
                1,
                std::ptr::null(),
                p as *mut u8,
                Some(&mut now as *mut u64 as *mut u8),
            );
        }
        assert_eq!((old, now), (2000, 7));
    }

    #[test]
    fn compare_and_swap_builds_a_lock() {
        let word = 0u32;
        let total = std::cell::UnsafeCell::new(0u64);
        struct Shared(*const std::cell::UnsafeCell<u64>);
        // SAFETY: the counter is only touched while the CAS-built lock is held.
        unsafe impl Sync for Shared {}
        let shared = Shared(&total);
        let p = &word as *const u32 as usize;
        std::thread::scope(|s| {
            for _ in 0..4 {
                let shared = &shared;
                s.spawn(move || {
                    for _ in 0..1000 {
                        let (one, zero) = (1u32, 0u32);
                        loop {
                            let mut was = 9u32;
                            // SAFETY: one aligned word, accessed only atomically.
                            unsafe {
                                compare_and_swap(
                                    4,
                                    &one as *const u32 as *const u8,
                                    &zero as *const u32 as *const u8,
                                    &mut was as *mut u32 as *mut u8,
                                    p as *mut u8,
                                )
                            };
                            if was == 0 {
                                break;
                            }
                            std::hint::spin_loop();
                        }
                        // SAFETY: the lock above is held.
                        unsafe { *(*shared.0).get() += 1 };
                        let mut was = 9u32;
                        // SAFETY: as above.
                        unsafe {
                            compare_and_swap(
                                4,
                                &zero as *const u32 as *const u8,
                                &one as *const u32 as *const u8,
                                &mut was as *mut u32 as *mut u8,
                                p as *mut u8,
                            )
                        };
                        assert_eq!(was, 1);
                    }
                });
            }
        });
        // SAFETY: every thread has joined.
        assert_eq!(unsafe { *total.get() }, 4000);
    }

    #[test]
    fn segments_split_between_atomics_and_the_lock() {
        let sum = element(Builtin::Sum, MPI_INT, 4);
        let mut mem = [0u32; 8];
        let base = mem.as_mut_ptr() as usize;
        // One aligned run of 2 ints and one run starting 2 bytes in (unaligned).
        let segs = [(base, 8), (base + 18, 8)];
        let origin: Vec<u8> = [1i32, 2, 3, 4]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        let mut locked_runs = Vec::new();
        // SAFETY: the segments lie in `mem`.
        let old = unsafe {
            update_segments(
                Update::Reduce(&sum.reducer),
                4,
                true,
                &segs,
                &origin,
                true,
                &mut |runs, _old| locked_runs.extend_from_slice(runs),
            )
        };
        assert_eq!(locked_runs, vec![(base + 18, 8, 8)]);
        assert_eq!(&mem[..2], &[1, 2]);
        assert_eq!(old.len(), 16);
        assert_eq!(&old[..8], &[0u8; 8]);
    }
}
