//! The datatype fuzz driver, shared by the integration test `tests/datatype_fuzz.rs` (stable
//! Rust, fixed-seed inputs plus the seed corpus) and the cargo-fuzz target
//! `fuzz/fuzz_targets/datatype.rs` (libFuzzer).
//!
//! An input is decoded into a short program of calls to hympi's C entry points, made as a C
//! program would make them: type constructors with random (often invalid) counts, strides,
//! displacements and block lengths, nested on earlier results; commit, dup, free and the reuse
//! of freed handles; queries (size, extents, envelope, contents); pack/unpack (native and
//! "external32") with buffers too small and positions out of range.
//!
//! Invariants checked (a violation panics, which both harnesses report as a failure):
//! - every failing call returns a code that `MPI_Error_class` maps to a valid error class;
//! - negative counts, freed handles, `MPI_DATATYPE_NULL` (but for a zero count in pack and
//!   unpack) and uncommitted types are rejected;
//! - for committed types within the size caps, pack gives the bytes of the type map (walked
//!   naively from the constructor arguments the driver recorded), unpack writes exactly those
//!   bytes back, and the positions advance by the packed size;
//! - packing into a buffer one byte too small fails with `MPI_ERR_TRUNCATE` and leaves the
//!   position alone.
//!
//! The memory a case touches is bounded: buffers are allocated only for types whose data and
//! span fit the caps below; larger (or absurd) sizes are only handed to calls that must reject
//! them before touching memory (a buffer too small for the data).
#![allow(dead_code)]

use hympi::abi::consts::*;
use hympi::abi::generated as mpi;
use hympi::abi::types::*;
use std::ptr::{null, null_mut};
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Once;

/// Counters over all cases of the process: types created, calls that failed (with a valid
/// class), round trips checked against the naive map, round trips checked without one.
pub static STATS: [AtomicUsize; 4] = [const { AtomicUsize::new(0) }; 4];

/// Largest packed size (bytes) of a round trip.
const MAX_PACKED: usize = 1 << 20;
/// Largest span (bytes) of a user buffer the driver allocates.
const MAX_SPAN: usize = 8 << 20;
/// Largest number of basic blocks the naive walker enumerates.
const MAX_SEGS: usize = 1 << 16;
/// Operations per case.
const MAX_OPS: usize = 48;
/// Types created per case.
const MAX_TYPES: usize = 24;
/// Longest argument array handed to a constructor.
const MAX_ARR: usize = 8;

/// Initialises MPI once per process (a singleton) with errors returned, not fatal.
pub fn init() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let mut provided = 0;
        // SAFETY: plain C calls with valid out-pointers.
        unsafe {
            assert_eq!(
                mpi::MPI_Init_thread(null_mut(), null_mut(), MPI_THREAD_MULTIPLE, &mut provided),
                MPI_SUCCESS
            );
            for c in [MPI_COMM_WORLD, MPI_COMM_SELF] {
                assert_eq!(
                    mpi::MPI_Comm_set_errhandler(
                        c as MPI_Comm,
                        MPI_ERRORS_RETURN as MPI_Errhandler
                    ),
                    MPI_SUCCESS
                );
            }
        }
    });
}

/// Bytes of the input, read front to back; zeros once exhausted.
struct Input<'a> {
    data: &'a [u8],
    at: usize,
}

impl Input<'_> {
    fn done(&self) -> bool {
        self.at >= self.data.len()
    }
    fn u8(&mut self) -> u8 {
        let b = self.data.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        b
    }
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes([self.u8(), self.u8(), self.u8(), self.u8()])
    }
    fn below(&mut self, n: usize) -> usize {
        self.u8() as usize % n
    }
    /// A count-like value: mostly small, sometimes zero, negative, huge or raw.
    fn int(&mut self) -> i64 {
        match self.u8() {
            0..=159 => (self.u8() % 6) as i64,
            160..=179 => (self.u8() % 9) as i64 - 4,
            180..=189 => 1 << (self.u8() % 31),
            190..=199 => i32::MAX as i64 - (self.u8() % 3) as i64,
            200..=209 => i32::MIN as i64 + (self.u8() % 3) as i64,
            210..=219 => -1,
            220..=229 => (self.u8() % 64) as i64,
            _ => self.u32() as i32 as i64,
        }
    }
    /// A large-count value: like `int`, plus values beyond 32 bits.
    fn count(&mut self) -> i64 {
        match self.u8() {
            0..=239 => self.int(),
            240..=247 => i64::MAX - (self.u8() % 3) as i64,
            248..=251 => i64::MIN + (self.u8() % 3) as i64,
            _ => 1 << (31 + self.u8() % 32),
        }
    }
    /// A displacement or stride: small signed, sometimes huge.
    fn disp(&mut self) -> i64 {
        match self.u8() {
            0..=199 => (self.u8() % 65) as i64 - 32,
            200..=229 => self.int(),
            _ => self.count(),
        }
    }
}

/// How a type was built, as far as the naive walker needs: the type map of one element is
/// walked from this and the extents the library reported for the components.
enum Shape {
    /// A predefined type: its (offset, length) pieces.
    Basic(Vec<(isize, usize)>),
    /// Blocks of `bl` consecutive copies of the child at the given byte displacements.
    Blocks(Vec<(isize, usize)>, Rc<Node>),
    /// Struct fields (blocklength, byte displacement, type).
    Struct(Vec<(usize, isize, Rc<Node>)>),
    /// The same map as the child (dup, resized).
    Same(Rc<Node>),
    /// (size, subsize, start) per dimension, Fortran order flag.
    Subarray(Vec<(usize, usize, usize)>, bool, Rc<Node>),
    /// No naive model (darray): only library-internal consistency is checked.
    Opaque,
}

thread_local! {
    /// Node visits left to the current naive walk.
    static WALK_BUDGET: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// A type the driver made or named, with the facts recorded when it was made.
struct Node {
    shape: Shape,
    extent: isize,
}

impl Node {
    /// Appends the type map of one element at `at`; false when the budget runs out or the
    /// type has no model.
    fn walk(&self, at: isize, out: &mut Vec<(isize, usize)>) -> bool {
        // Visits are budgeted too: zero-size children add no segments however many.
        if WALK_BUDGET.with(|b| b.replace(b.get().saturating_sub(1))) == 0 {
            return false;
        }
        match &self.shape {
            Shape::Basic(p) => {
                for &(o, n) in p {
                    if out.len() >= MAX_SEGS {
                        return false;
                    }
                    out.push((at.wrapping_add(o), n));
                }
                true
            }
            // Wrapping: the offsets of an accepted type are exact modulo 2^64 (a sum of a
            // displacement and an extent of opposite signs may leave isize on the way).
            Shape::Blocks(b, k) => b.iter().all(|&(d, bl)| {
                (0..bl).all(|j| {
                    k.walk(
                        at.wrapping_add(d)
                            .wrapping_add((j as isize).wrapping_mul(k.extent)),
                        out,
                    )
                })
            }),
            Shape::Struct(f) => f.iter().all(|(bl, d, k)| {
                (0..*bl).all(|j| {
                    k.walk(
                        at.wrapping_add(*d)
                            .wrapping_add((j as isize).wrapping_mul(k.extent)),
                        out,
                    )
                })
            }),
            Shape::Same(k) => k.walk(at, out),
            Shape::Subarray(d, fortran, k) => {
                let mut dims = d.clone();
                if *fortran {
                    dims.reverse();
                }
                if dims.iter().any(|x| x.1 == 0) {
                    return true;
                }
                let mut idx = vec![0usize; dims.len()];
                loop {
                    let mut off = 0isize;
                    for (i, &(s, _, st)) in dims.iter().enumerate() {
                        off = off
                            .wrapping_mul(s as isize)
                            .wrapping_add((idx[i] + st) as isize);
                    }
                    if !k.walk(at.wrapping_add(off.wrapping_mul(k.extent)), out) {
                        return false;
                    }
                    let mut i = dims.len();
                    loop {
                        if i == 0 {
                            return true;
                        }
                        i -= 1;
                        idx[i] += 1;
                        if idx[i] < dims[i].1 {
                            break;
                        }
                        idx[i] = 0;
                    }
                }
            }
            Shape::Opaque => false,
        }
    }
}

/// A handle in the case's table.
struct Entry {
    h: MPI_Datatype,
    node: Rc<Node>,
    /// Predefined (never freed, always committed).
    named: bool,
    committed: bool,
    /// False once freed (the handle value is kept to be reused).
    live: bool,
}

/// (offset, length) pieces of a type map.
type Pieces = Vec<(isize, usize)>;

/// Predefined types with their maps: (handle, pieces, extent).
fn predefined() -> Vec<(usize, Pieces, isize)> {
    vec![
        (MPI_BYTE, vec![(0, 1)], 1),
        (MPI_SHORT, vec![(0, 2)], 2),
        (MPI_INT, vec![(0, 4)], 4),
        (MPI_FLOAT, vec![(0, 4)], 4),
        (MPI_DOUBLE, vec![(0, 8)], 8),
        (MPI_SHORT_INT, vec![(0, 2), (4, 4)], 8),
        (MPI_DOUBLE_INT, vec![(0, 8), (8, 4)], 16),
    ]
}

/// Panics unless `rc` is `MPI_SUCCESS` or a code with a valid error class; returns the class.
fn class_of(what: &str, rc: i32) -> i32 {
    if rc == MPI_SUCCESS {
        return MPI_SUCCESS;
    }
    STATS[1].fetch_add(1, Relaxed);
    let mut cls = -1;
    // SAFETY: valid out-pointer.
    let r = unsafe { mpi::MPI_Error_class(rc, &mut cls) };
    assert_eq!(r, MPI_SUCCESS, "{what}: MPI_Error_class({rc}) failed");
    assert!(
        cls > 0 && cls <= MPI_ERR_LASTCODE,
        "{what}: code {rc} has class {cls}"
    );
    cls
}

/// Frees a type `MPI_Type_get_contents` returned, unless it is predefined.
///
/// # Safety
/// MPI is initialised and `t` came from `MPI_Type_get_contents`.
unsafe fn free_returned(mut t: MPI_Datatype) {
    let (mut a, mut b, mut c, mut d, mut comb) = (0, 0, 0, 0, 0);
    let rc = mpi::MPI_Type_get_envelope_c(t, &mut a, &mut b, &mut c, &mut d, &mut comb);
    assert_eq!(
        rc, MPI_SUCCESS,
        "envelope of a type returned by get_contents"
    );
    if comb != MPI_COMBINER_NAMED {
        assert_eq!(
            mpi::MPI_Type_free(&mut t),
            MPI_SUCCESS,
            "free of a contents type"
        );
    }
}

/// xorshift64 bytes for buffer contents.
fn fill(seed: u64, buf: &mut [u8]) {
    let mut x = seed | 1;
    for b in buf {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        *b = (x >> 24) as u8;
    }
}

struct Case {
    types: Vec<Entry>,
    created: usize,
}

impl Case {
    /// Picks a handle: an entry of the table, or `MPI_DATATYPE_NULL`, or a made-up value.
    fn pick(&self, inp: &mut Input) -> (MPI_Datatype, Option<usize>) {
        let n = self.types.len();
        let i = inp.below(n + 2);
        if i < n {
            (self.types[i].h, Some(i))
        } else if i == n {
            (MPI_DATATYPE_NULL as MPI_Datatype, None)
        } else {
            (
                (0x5a5a_0000usize | (inp.u8() as usize)) as MPI_Datatype,
                None,
            )
        }
    }

    fn live(&self, i: Option<usize>) -> bool {
        i.is_some_and(|i| self.types[i].live)
    }

    fn extent_of(h: MPI_Datatype) -> isize {
        let (mut lb, mut ext) = (0, 0);
        // SAFETY: valid out-pointers.
        let rc = unsafe { mpi::MPI_Type_get_extent(h, &mut lb, &mut ext) };
        assert_eq!(rc, MPI_SUCCESS, "extent of a new type");
        ext
    }

    /// Records the outcome of a constructor: checks the code, and on success adds the type.
    fn made(&mut self, what: &str, rc: i32, h: MPI_Datatype, valid_olds: bool, shape: Shape) {
        let cls = class_of(what, rc);
        if !valid_olds {
            assert_ne!(rc, MPI_SUCCESS, "{what} accepted a freed or invalid handle");
        }
        if cls != MPI_SUCCESS {
            return;
        }
        let extent = Self::extent_of(h);
        self.created += 1;
        STATS[0].fetch_add(1, Relaxed);
        self.types.push(Entry {
            h,
            node: Rc::new(Node { shape, extent }),
            named: false,
            committed: false,
            live: true,
        });
    }

    fn node(&self, i: Option<usize>) -> Rc<Node> {
        match i {
            Some(i) => self.types[i].node.clone(),
            None => Rc::new(Node {
                shape: Shape::Opaque,
                extent: 0,
            }),
        }
    }

    fn step(&mut self, inp: &mut Input) {
        let op = inp.below(16);
        // SAFETY: (whole match) every pointer handed to the library is a live local of the
        // size the call reads or writes, or NULL; buffers for pack/unpack cover the span of
        // the data as the library's own extents report it.
        unsafe {
            match op {
                0..=6 if self.created >= MAX_TYPES => self.query(inp),
                0 => self.contiguous(inp),
                1 => self.vector(inp),
                2 | 3 => self.indexed(inp),
                4 => self.structure(inp),
                5 => self.subarray(inp),
                6 => self.other_ctor(inp),
                7 | 8 => {
                    let (mut h, i) = self.pick(inp);
                    let rc = mpi::MPI_Type_commit(&mut h);
                    class_of("commit", rc);
                    match i {
                        Some(i) if self.types[i].live => {
                            assert_eq!(rc, MPI_SUCCESS, "commit of a live type");
                            self.types[i].committed = true;
                        }
                        Some(i) if !self.types[i].named => {
                            assert_ne!(rc, MPI_SUCCESS, "commit of a freed type")
                        }
                        _ => {}
                    }
                }
                9 => {
                    let (mut h, i) = self.pick(inp);
                    let rc = mpi::MPI_Type_free(&mut h);
                    class_of("free", rc);
                    match i {
                        Some(i) if self.types[i].named => {
                            assert_ne!(rc, MPI_SUCCESS, "free of a predefined type")
                        }
                        Some(i) if self.types[i].live => {
                            assert_eq!(rc, MPI_SUCCESS, "free of a live type");
                            assert_eq!(h, MPI_DATATYPE_NULL as MPI_Datatype);
                            self.types[i].live = false;
                        }
                        Some(_) => assert_ne!(rc, MPI_SUCCESS, "double free"),
                        None => {}
                    }
                }
                10 | 11 => self.query(inp),
                12..=14 => self.round_trip(inp),
                _ => self.bad_pack(inp),
            }
        }
    }

    /// `MPI_Type_contiguous` (or `_c`) of a known type with a decoded count.
    ///
    /// # Safety
    /// MPI is initialised (as [`run`] ensures) and this thread is the only one calling it.
    unsafe fn contiguous(&mut self, inp: &mut Input) {
        let (o, i) = self.pick(inp);
        let large = inp.u8() & 1 == 1;
        let n = if large { inp.count() } else { inp.int() };
        let mut h = null_mut();
        let rc = if large {
            mpi::MPI_Type_contiguous_c(n, o, &mut h)
        } else {
            mpi::MPI_Type_contiguous(n as i32, o, &mut h)
        };
        if n < 0 {
            assert_ne!(rc, MPI_SUCCESS, "negative count accepted");
        }
        let k = self.node(i);
        let shape = match usize::try_from(n) {
            Ok(n) if n <= MAX_SEGS => Shape::Blocks(
                (0..n)
                    .map(|j| ((j as isize).wrapping_mul(k.extent), 1))
                    .collect(),
                k,
            ),
            _ => Shape::Opaque,
        };
        self.made("contiguous", rc, h, self.live(i), shape);
    }

    /// `MPI_Type_vector`/`hvector` (or `_c`) with decoded count, block length and stride.
    ///
    /// # Safety
    /// MPI is initialised (as [`run`] ensures) and this thread is the only one calling it.
    unsafe fn vector(&mut self, inp: &mut Input) {
        let (o, i) = self.pick(inp);
        let kind = inp.below(4);
        let (n, bl, st) = if kind >= 2 {
            (inp.count(), inp.count(), inp.disp())
        } else {
            (inp.int(), inp.int(), inp.disp())
        };
        let (n32, bl32) = (n as i32, bl as i32);
        let mut h = null_mut();
        let rc = match kind {
            0 => mpi::MPI_Type_vector(n32, bl32, st as i32, o, &mut h),
            1 => mpi::MPI_Type_create_hvector(n32, bl32, st as isize, o, &mut h),
            2 => mpi::MPI_Type_vector_c(n, bl, st, o, &mut h),
            _ => mpi::MPI_Type_create_hvector_c(n, bl, st, o, &mut h),
        };
        let (n, bl, st) = if kind < 2 {
            (
                n32 as i64,
                bl32 as i64,
                if kind == 0 { st as i32 as i64 } else { st },
            )
        } else {
            (n, bl, st)
        };
        if n < 0 || bl < 0 {
            assert_ne!(rc, MPI_SUCCESS, "negative count or blocklength accepted");
        }
        let k = self.node(i);
        let bytes = if kind.is_multiple_of(2) {
            (st as isize).checked_mul(k.extent)
        } else {
            Some(st as isize)
        };
        let shape = match (usize::try_from(n), usize::try_from(bl), bytes) {
            (Ok(n), Ok(bl), Some(s)) if n <= MAX_SEGS => Shape::Blocks(
                (0..n).map(|j| ((j as isize).wrapping_mul(s), bl)).collect(),
                k,
            ),
            _ => Shape::Opaque,
        };
        self.made("vector", rc, h, self.live(i), shape);
    }

    /// The indexed family (indexed, hindexed, indexed_block, hindexed_block; int or `_c`).
    ///
    /// # Safety
    /// MPI is initialised (as [`run`] ensures) and this thread is the only one calling it.
    unsafe fn indexed(&mut self, inp: &mut Input) {
        let (o, i) = self.pick(inp);
        let kind = inp.below(8);
        let len = inp.below(MAX_ARR + 1);
        // The count: the arrays' length, or something else with NULL arrays.
        let with_null = inp.u8() < 16;
        let n = if with_null { inp.count() } else { len as i64 };
        let bls: Vec<i64> = (0..len).map(|_| inp.int()).collect();
        let ds: Vec<i64> = (0..len).map(|_| inp.disp()).collect();
        let bl1 = inp.int();
        let bls32: Vec<i32> = bls.iter().map(|&b| b as i32).collect();
        let ds32: Vec<i32> = ds.iter().map(|&d| d as i32).collect();
        let dsa: Vec<isize> = ds.iter().map(|&d| d as isize).collect();
        let p = |v: *const i32| if with_null { null() } else { v };
        let pa = |v: *const isize| if with_null { null() } else { v };
        let pl = |v: *const i64| if with_null { null() } else { v };
        let mut h = null_mut();
        let n32 = n as i32;
        let rc = match kind {
            0 => mpi::MPI_Type_indexed(n32, p(bls32.as_ptr()), p(ds32.as_ptr()), o, &mut h),
            1 => mpi::MPI_Type_create_hindexed(n32, p(bls32.as_ptr()), pa(dsa.as_ptr()), o, &mut h),
            2 => mpi::MPI_Type_create_indexed_block(n32, bl1 as i32, p(ds32.as_ptr()), o, &mut h),
            3 => mpi::MPI_Type_create_hindexed_block(n32, bl1 as i32, pa(dsa.as_ptr()), o, &mut h),
            4 => mpi::MPI_Type_indexed_c(n, pl(bls.as_ptr()), pl(ds.as_ptr()), o, &mut h),
            5 => mpi::MPI_Type_create_hindexed_c(n, pl(bls.as_ptr()), pl(ds.as_ptr()), o, &mut h),
            6 => mpi::MPI_Type_create_indexed_block_c(n, bl1, pl(ds.as_ptr()), o, &mut h),
            _ => mpi::MPI_Type_create_hindexed_block_c(n, bl1, pl(ds.as_ptr()), o, &mut h),
        };
        let small = kind < 4;
        let n = if small { n32 as i64 } else { n };
        if n < 0 || (with_null && n > 0) {
            assert_ne!(rc, MPI_SUCCESS, "negative count or NULL arrays accepted");
        }
        if rc != MPI_SUCCESS || with_null {
            return self.made("indexed", rc, h, self.live(i), Shape::Opaque);
        }
        let k = self.node(i);
        let block = kind % 4 >= 2;
        let bytes = kind % 2 == 1;
        let mut blocks = Vec::new();
        for j in 0..len {
            let b = if block { bl1 } else { bls[j] };
            let b = if small { b as i32 as i64 } else { b };
            let d = if small && !bytes {
                ds32[j] as i64
            } else {
                ds[j]
            };
            let d = if bytes {
                Some(d as isize)
            } else {
                (d as isize).checked_mul(k.extent)
            };
            match (usize::try_from(b), d) {
                (Ok(b), Some(d)) => blocks.push((d, b)),
                _ => return self.made("indexed", rc, h, self.live(i), Shape::Opaque),
            }
        }
        self.made("indexed", rc, h, self.live(i), Shape::Blocks(blocks, k));
    }

    /// `MPI_Type_create_struct` (or `_c`) over known types.
    ///
    /// # Safety
    /// MPI is initialised (as [`run`] ensures) and this thread is the only one calling it.
    unsafe fn structure(&mut self, inp: &mut Input) {
        let len = inp.below(MAX_ARR) + 1;
        let with_null = inp.u8() < 12;
        let large = inp.u8() & 1 == 1;
        let n = if with_null { inp.count() } else { len as i64 };
        let picks: Vec<_> = (0..len).map(|_| self.pick(inp)).collect();
        let bls: Vec<i64> = (0..len).map(|_| inp.int()).collect();
        let ds: Vec<i64> = (0..len).map(|_| inp.disp()).collect();
        let hs: Vec<MPI_Datatype> = picks.iter().map(|p| p.0).collect();
        let bls32: Vec<i32> = bls.iter().map(|&b| b as i32).collect();
        let dsa: Vec<isize> = ds.iter().map(|&d| d as isize).collect();
        let mut h = null_mut();
        let tp = if with_null { null() } else { hs.as_ptr() };
        let rc = if large {
            let (b, d) = if with_null {
                (null(), null())
            } else {
                (bls.as_ptr(), ds.as_ptr())
            };
            mpi::MPI_Type_create_struct_c(n, b, d, tp, &mut h)
        } else {
            let (b, d) = if with_null {
                (null(), null())
            } else {
                (bls32.as_ptr(), dsa.as_ptr())
            };
            mpi::MPI_Type_create_struct(n as i32, b, d, tp, &mut h)
        };
        let bl_of = |j: usize| if large { bls[j] } else { bls32[j] as i64 };
        if with_null || rc != MPI_SUCCESS {
            if with_null && (if large { n } else { n as i32 as i64 }) > 0 {
                assert_ne!(rc, MPI_SUCCESS, "NULL struct arrays accepted");
            }
            return self.made("struct", rc, h, true, Shape::Opaque);
        }
        let valid = picks.iter().all(|p| self.live(p.1));
        let mut fields = Vec::new();
        for (j, p) in picks.iter().enumerate() {
            assert!(bl_of(j) >= 0, "struct: negative blocklength accepted");
            fields.push((bl_of(j) as usize, ds[j] as isize, self.node(p.1)));
        }
        self.made("struct", rc, h, valid, Shape::Struct(fields));
    }

    /// `MPI_Type_create_subarray` (or `_c`) with decoded sizes, subsizes and starts.
    ///
    /// # Safety
    /// MPI is initialised (as [`run`] ensures) and this thread is the only one calling it.
    unsafe fn subarray(&mut self, inp: &mut Input) {
        let (o, i) = self.pick(inp);
        let nd = inp.below(5);
        let ndims = if inp.u8() < 8 {
            inp.int() as i32
        } else {
            nd as i32
        };
        let large = inp.u8() & 1 == 1;
        let sizes: Vec<i64> = (0..nd).map(|_| inp.int()).collect();
        let subs: Vec<i64> = (0..nd).map(|_| inp.int()).collect();
        let starts: Vec<i64> = (0..nd).map(|_| inp.int()).collect();
        let order = match inp.below(4) {
            0 => MPI_ORDER_FORTRAN,
            3 => inp.int() as i32,
            _ => MPI_ORDER_C,
        };
        // Arrays shorter than ndims are passed as NULL (the call must then fail).
        let fits = ndims >= 0 && ndims as usize <= nd;
        let mut h = null_mut();
        let rc = if large {
            let p = |v: &Vec<i64>| if fits { v.as_ptr() } else { null() };
            mpi::MPI_Type_create_subarray_c(
                ndims,
                p(&sizes),
                p(&subs),
                p(&starts),
                order,
                o,
                &mut h,
            )
        } else {
            let s32: Vec<Vec<i32>> = [&sizes, &subs, &starts]
                .iter()
                .map(|v| v.iter().map(|&x| x as i32).collect())
                .collect();
            let p = |v: &Vec<i32>| if fits { v.as_ptr() } else { null() };
            mpi::MPI_Type_create_subarray(
                ndims,
                p(&s32[0]),
                p(&s32[1]),
                p(&s32[2]),
                order,
                o,
                &mut h,
            )
        };
        if !fits || ndims <= 0 {
            assert_ne!(rc, MPI_SUCCESS, "subarray with bad ndims accepted");
        }
        if rc != MPI_SUCCESS {
            return self.made("subarray", rc, h, self.live(i), Shape::Opaque);
        }
        let cv = |x: i64| if large { x } else { x as i32 as i64 };
        let mut dims = Vec::new();
        for d in 0..ndims as usize {
            let (s, ss, st) = (cv(sizes[d]), cv(subs[d]), cv(starts[d]));
            assert!(
                s > 0 && ss >= 0 && st >= 0 && ss <= s - st,
                "subarray accepted dims ({s}, {ss}, {st})"
            );
            dims.push((s as usize, ss as usize, st as usize));
        }
        assert!(
            order == MPI_ORDER_C || order == MPI_ORDER_FORTRAN,
            "bad order accepted"
        );
        let k = self.node(i);
        self.made(
            "subarray",
            rc,
            h,
            self.live(i),
            Shape::Subarray(dims, order == MPI_ORDER_FORTRAN, k),
        );
    }

    /// darray, resized and dup.
    ///
    /// # Safety
    /// MPI is initialised (as [`run`] ensures) and this thread is the only one calling it.
    unsafe fn other_ctor(&mut self, inp: &mut Input) {
        let (o, i) = self.pick(inp);
        let mut h = null_mut();
        match inp.below(4) {
            0 => {
                let (lb, ext) = (inp.disp(), inp.disp());
                let rc = if inp.u8() & 1 == 1 {
                    mpi::MPI_Type_create_resized_c(o, lb, ext, &mut h)
                } else {
                    mpi::MPI_Type_create_resized(o, lb as isize, ext as isize, &mut h)
                };
                let k = self.node(i);
                self.made("resized", rc, h, self.live(i), Shape::Same(k));
            }
            1 => {
                let rc = mpi::MPI_Type_dup(o, &mut h);
                let k = self.node(i);
                let committed = i.is_some_and(|i| self.types[i].committed);
                self.made("dup", rc, h, self.live(i), Shape::Same(k));
                if rc == MPI_SUCCESS {
                    // A duplicate of a committed type is committed (MPI 5.1.10).
                    self.types.last_mut().unwrap().committed = committed;
                }
            }
            _ => {
                let nd = inp.below(4);
                let size = inp.int() as i32;
                let rank = inp.int() as i32;
                let gs: Vec<i64> = (0..nd).map(|_| inp.int()).collect();
                let dist: Vec<i32> = (0..nd)
                    .map(|_| match inp.below(5) {
                        0 => MPI_DISTRIBUTE_NONE,
                        1 | 2 => MPI_DISTRIBUTE_BLOCK,
                        3 => MPI_DISTRIBUTE_CYCLIC,
                        _ => inp.int() as i32,
                    })
                    .collect();
                let darg: Vec<i32> = (0..nd)
                    .map(|_| match inp.below(3) {
                        0 => MPI_DISTRIBUTE_DFLT_DARG,
                        _ => inp.int() as i32,
                    })
                    .collect();
                let ps: Vec<i32> = (0..nd).map(|_| inp.int() as i32).collect();
                let order = if inp.u8() & 1 == 1 {
                    MPI_ORDER_FORTRAN
                } else {
                    MPI_ORDER_C
                };
                let rc = if inp.u8() & 1 == 1 {
                    mpi::MPI_Type_create_darray_c(
                        size,
                        rank,
                        nd as i32,
                        gs.as_ptr(),
                        dist.as_ptr(),
                        darg.as_ptr(),
                        ps.as_ptr(),
                        order,
                        o,
                        &mut h,
                    )
                } else {
                    let g32: Vec<i32> = gs.iter().map(|&x| x as i32).collect();
                    mpi::MPI_Type_create_darray(
                        size,
                        rank,
                        nd as i32,
                        g32.as_ptr(),
                        dist.as_ptr(),
                        darg.as_ptr(),
                        ps.as_ptr(),
                        order,
                        o,
                        &mut h,
                    )
                };
                if size <= 0 || rank < 0 || rank >= size || nd == 0 {
                    assert_ne!(
                        rc, MPI_SUCCESS,
                        "darray accepted size {size} rank {rank} ndims {nd}"
                    );
                }
                self.made("darray", rc, h, self.live(i), Shape::Opaque);
            }
        }
    }

    /// Size, extent, true extent, envelope and contents queries of a picked handle (freed
    /// and null handles must fail).
    ///
    /// # Safety
    /// MPI is initialised (as [`run`] ensures) and this thread is the only one calling it.
    unsafe fn query(&mut self, inp: &mut Input) {
        let (h, i) = self.pick(inp);
        let must_fail = match i {
            Some(i) => !self.types[i].live,
            None => true,
        };
        let mut rcs = Vec::new();
        let (mut a, mut b) = (0isize, 0isize);
        let (mut c1, mut c2) = (0i64, 0i64);
        let mut s = 0;
        rcs.push(mpi::MPI_Type_size(h, &mut s));
        rcs.push(mpi::MPI_Type_size_c(h, &mut c1));
        rcs.push(mpi::MPI_Type_get_extent(h, &mut a, &mut b));
        rcs.push(mpi::MPI_Type_get_true_extent(h, &mut a, &mut b));
        rcs.push(mpi::MPI_Type_get_extent_c(h, &mut c1, &mut c2));
        rcs.push(mpi::MPI_Type_get_true_extent_c(h, &mut c1, &mut c2));
        let (mut ni, mut na, mut nd, mut comb) = (0, 0, 0, 0);
        let rc_small = mpi::MPI_Type_get_envelope(h, &mut ni, &mut na, &mut nd, &mut comb);
        class_of("get_envelope", rc_small);
        if must_fail {
            assert_ne!(
                rc_small, MPI_SUCCESS,
                "envelope of a freed or invalid handle"
            );
        }
        let mut nl = 0i64;
        let (mut ci, mut ca, mut cd) = (0i64, 0i64, 0i64);
        let rce = mpi::MPI_Type_get_envelope_c(h, &mut ci, &mut ca, &mut nl, &mut cd, &mut comb);
        rcs.push(rce);
        for (k, &rc) in rcs.iter().enumerate() {
            class_of("query", rc);
            if must_fail {
                assert_ne!(
                    rc, MPI_SUCCESS,
                    "query {k} accepted a freed or invalid handle"
                );
            } else {
                assert_eq!(rc, MPI_SUCCESS, "query {k} of a live type failed");
            }
        }
        if rce != MPI_SUCCESS || comb == MPI_COMBINER_NAMED {
            return;
        }
        // Contents, with the exact sizes or with arrays too small by a random amount.
        let short = inp.below(4);
        let cut = |n: i64| if short == 0 { (n - 1).max(0) } else { n };
        let (mi, ma, ml, md) = (cut(ci), cut(ca), cut(nl), cut(cd));
        let mut ints = vec![0i32; mi as usize];
        let mut addrs = vec![0isize; ma as usize];
        let mut larges = vec![0i64; ml as usize];
        let mut dts = vec![null_mut(); md as usize];
        let rc = mpi::MPI_Type_get_contents_c(
            h,
            mi,
            ma,
            ml,
            md,
            ints.as_mut_ptr(),
            addrs.as_mut_ptr(),
            larges.as_mut_ptr(),
            dts.as_mut_ptr(),
        );
        class_of("get_contents_c", rc);
        let exact = (mi, ma, ml, md) == (ci, ca, nl, cd);
        if exact {
            assert_eq!(
                rc, MPI_SUCCESS,
                "get_contents with the envelope's sizes failed"
            );
        } else if rc == MPI_SUCCESS {
            // Fine only if nothing was needed beyond what was given: impossible here.
            panic!("get_contents accepted arrays smaller than the envelope");
        }
        if rc == MPI_SUCCESS {
            // The returned derived types are new handles to free (MPI 5.1.13).
            dts.into_iter().for_each(|t| free_returned(t));
        }
        if rc_small == MPI_SUCCESS
            && (0..=64).contains(&ni)
            && (0..=64).contains(&na)
            && (0..=64).contains(&nd)
        {
            let mut ints = vec![0i32; ni as usize];
            let mut addrs = vec![0isize; na as usize];
            let mut dts = vec![null_mut(); nd as usize];
            let rc = mpi::MPI_Type_get_contents(
                h,
                ni,
                na,
                nd,
                ints.as_mut_ptr(),
                addrs.as_mut_ptr(),
                dts.as_mut_ptr(),
            );
            class_of("get_contents", rc);
            if rc == MPI_SUCCESS {
                dts.into_iter().for_each(|t| free_returned(t));
            }
        }
    }

    /// Pack, unpack (native and external32) of a committed type, checked against the naive
    /// type map.
    ///
    /// # Safety
    /// MPI is initialised (as [`run`] ensures) and this thread is the only one calling it.
    unsafe fn round_trip(&mut self, inp: &mut Input) {
        let (h, i) = self.pick(inp);
        let count = inp.below(4) as i64;
        let seed = inp.u32() as u64;
        let start = inp.below(8) as i64;
        let usable = i.is_some_and(|i| self.types[i].live && self.types[i].committed);
        let comm = MPI_COMM_WORLD as MPI_Comm;
        let mut ps = 0i64;
        let rc = mpi::MPI_Pack_size_c(count, h, comm, &mut ps);
        class_of("pack_size", rc);
        if !i.is_some_and(|i| self.types[i].live) {
            assert_ne!(
                rc, MPI_SUCCESS,
                "pack_size accepted a freed or invalid handle"
            );
        }
        if !usable {
            // Pack must refuse it without touching memory (buffers big enough for nothing).
            let mut pos = 0i64;
            let mut out = [0u8; 16];
            let rc = mpi::MPI_Pack_c(
                null(),
                count,
                h,
                out.as_mut_ptr().cast(),
                16,
                &mut pos,
                comm,
            );
            class_of("pack", rc);
            // A zero count of MPI_DATATYPE_NULL is an empty buffer (as in MPICH; see the
            // README), so it may pass.
            let empty_null = count == 0 && h as usize == MPI_DATATYPE_NULL;
            if (count > 0 || i.is_none_or(|i| !self.types[i].live)) && !empty_null {
                assert_ne!(rc, MPI_SUCCESS, "pack of an unusable type accepted");
            }
            return;
        }
        let i = i.unwrap();
        let (mut size, mut lb, mut ext, mut tlb, mut text) = (0i64, 0i64, 0i64, 0i64, 0i64);
        assert_eq!(mpi::MPI_Type_size_c(h, &mut size), MPI_SUCCESS);
        assert_eq!(
            mpi::MPI_Type_get_extent_c(h, &mut lb, &mut ext),
            MPI_SUCCESS
        );
        assert_eq!(
            mpi::MPI_Type_get_true_extent_c(h, &mut tlb, &mut text),
            MPI_SUCCESS
        );
        if rc != MPI_SUCCESS {
            // Only a count too large to express is a reason.
            assert!(
                size.checked_mul(count).is_none(),
                "pack_size of a committed type failed"
            );
            return;
        }
        let Some(bytes) = size.checked_mul(count) else {
            panic!("pack_size succeeded for an overflowing size")
        };
        assert_eq!(ps, bytes, "pack_size");
        if bytes as u64 > MAX_PACKED as u64 {
            // Too big to move here: a buffer one byte too small must be refused untouched.
            let mut pos = 0i64;
            let mut out = [0u8; 16];
            let inb = [0u8; 16];
            let rc = mpi::MPI_Pack_c(
                inb.as_ptr().cast(),
                count,
                h,
                out.as_mut_ptr().cast(),
                16,
                &mut pos,
                comm,
            );
            assert_eq!(
                class_of("pack", rc),
                MPI_ERR_TRUNCATE,
                "pack of {bytes} bytes into 16"
            );
            assert_eq!(pos, 0);
            return;
        }
        // The span of `count` elements: [lo, hi) around the buffer origin.
        if size == 0 || count == 0 {
            let mut pos = start;
            let mut out = [0u8; 8];
            let rc = mpi::MPI_Pack_c(null(), count, h, out.as_mut_ptr().cast(), 8, &mut pos, comm);
            assert_eq!(rc, MPI_SUCCESS, "empty pack");
            assert_eq!(pos, start);
            return;
        }
        let last = (count - 1).checked_mul(ext);
        let Some(last) = last else { return };
        let lo = tlb.min(tlb.saturating_add(last));
        let hi = tlb
            .saturating_add(text)
            .max(tlb.saturating_add(text).saturating_add(last));
        let span = hi.saturating_sub(lo);
        if !(0..=MAX_SPAN as i64).contains(&span) {
            return;
        }
        let mut src = vec![0u8; span as usize];
        fill(seed, &mut src);
        let base = src.as_ptr().wrapping_offset((lo as isize).wrapping_neg());
        let total = start + bytes;
        let mut out = vec![0u8; total as usize];
        // One byte short: refused, position kept.
        let mut pos = start;
        let rc = mpi::MPI_Pack_c(
            base.cast(),
            count,
            h,
            out.as_mut_ptr().cast(),
            total - 1,
            &mut pos,
            comm,
        );
        assert_eq!(
            class_of("pack", rc),
            MPI_ERR_TRUNCATE,
            "pack into a buffer one byte short"
        );
        assert_eq!(pos, start, "position moved by a failed pack");
        let rc = mpi::MPI_Pack_c(
            base.cast(),
            count,
            h,
            out.as_mut_ptr().cast(),
            total,
            &mut pos,
            comm,
        );
        assert_eq!(rc, MPI_SUCCESS, "pack of a committed type");
        assert_eq!(pos, total, "position after pack");
        let packed = &out[start as usize..];
        // The naive type map, when the type has a model.
        let node = self.types[i].node.clone();
        let mut map = Vec::new();
        let mut modelled = true;
        WALK_BUDGET.with(|b| b.set(4 * MAX_SEGS));
        for e in 0..count as isize {
            if !node.walk(e.wrapping_mul(ext as isize), &mut map) {
                modelled = false;
                break;
            }
        }
        if modelled {
            let n: usize = map.iter().map(|m| m.1).sum();
            assert_eq!(n as i64, bytes, "type size against the naive map");
            let mut want = Vec::with_capacity(n);
            for &(o, l) in &map {
                let at = (o as i64 - lo) as usize;
                want.extend_from_slice(&src[at..at + l]);
            }
            assert!(
                packed == &want[..],
                "packed bytes differ from the naive type map"
            );
        }
        // Unpack into a zeroed buffer: the covered bytes come back, the others stay zero.
        let mut dst = vec![0u8; span as usize];
        let dbase = dst
            .as_mut_ptr()
            .wrapping_offset((lo as isize).wrapping_neg());
        let mut pos = start;
        let rc = mpi::MPI_Unpack_c(
            out.as_ptr().cast(),
            total - 1,
            &mut pos,
            dbase.cast(),
            count,
            h,
            comm,
        );
        assert_eq!(
            class_of("unpack", rc),
            MPI_ERR_TRUNCATE,
            "unpack from a buffer one byte short"
        );
        assert_eq!(pos, start);
        let rc = mpi::MPI_Unpack_c(
            out.as_ptr().cast(),
            total,
            &mut pos,
            dbase.cast(),
            count,
            h,
            comm,
        );
        assert_eq!(rc, MPI_SUCCESS, "unpack of a committed type");
        assert_eq!(pos, total, "position after unpack");
        if modelled {
            let mut expect = vec![0u8; span as usize];
            for &(o, l) in &map {
                let at = (o as i64 - lo) as usize;
                expect[at..at + l].copy_from_slice(&src[at..at + l]);
            }
            assert!(
                dst == expect,
                "unpack wrote other bytes than the naive type map"
            );
            STATS[2].fetch_add(1, Relaxed);
        } else {
            // Without a model: packing the unpacked buffer gives the same stream.
            let mut again = vec![0u8; bytes as usize];
            let mut p = 0i64;
            let rc = mpi::MPI_Pack_c(
                dbase.cast(),
                count,
                h,
                again.as_mut_ptr().cast(),
                bytes,
                &mut p,
                comm,
            );
            assert_eq!(rc, MPI_SUCCESS);
            assert!(again == packed, "pack(unpack(x)) != x");
            STATS[3].fetch_add(1, Relaxed);
        }
        // external32: the same bytes come back.
        let rep = c"external32".as_ptr();
        let mut esize = 0i64;
        let rc = mpi::MPI_Pack_external_size_c(rep, count, h, &mut esize);
        assert_eq!(rc, MPI_SUCCESS, "pack_external_size");
        if esize < 0 || esize as usize > 2 * MAX_PACKED {
            return;
        }
        let mut ext_buf = vec![0u8; esize as usize];
        let mut p = 0i64;
        if esize > 0 {
            let rc = mpi::MPI_Pack_external_c(
                rep,
                base.cast(),
                count,
                h,
                ext_buf.as_mut_ptr().cast(),
                esize - 1,
                &mut p,
            );
            assert_ne!(
                rc, MPI_SUCCESS,
                "pack_external into a buffer one byte short"
            );
            class_of("pack_external", rc);
            assert_eq!(p, 0);
        }
        let rc = mpi::MPI_Pack_external_c(
            rep,
            base.cast(),
            count,
            h,
            ext_buf.as_mut_ptr().cast(),
            esize,
            &mut p,
        );
        assert_eq!(rc, MPI_SUCCESS, "pack_external");
        assert_eq!(p, esize);
        let mut dst2 = vec![0u8; span as usize];
        let d2 = dst2
            .as_mut_ptr()
            .wrapping_offset((lo as isize).wrapping_neg());
        let mut p = 0i64;
        let rc = mpi::MPI_Unpack_external_c(
            rep,
            ext_buf.as_ptr().cast(),
            esize,
            &mut p,
            d2.cast(),
            count,
            h,
        );
        assert_eq!(rc, MPI_SUCCESS, "unpack_external");
        assert_eq!(p, esize);
        assert!(
            dst2 == dst,
            "external32 round trip differs from the native one"
        );
    }

    /// Pack and unpack calls with invalid arguments that the library can check: negative
    /// counts and sizes, positions outside the buffer, buffers too small, bad communicators,
    /// NULL position pointers. None may touch the (tiny) buffers.
    ///
    /// # Safety
    /// MPI is initialised (as [`run`] ensures) and this thread is the only one calling it.
    unsafe fn bad_pack(&mut self, inp: &mut Input) {
        let (h, i) = self.pick(inp);
        let count = inp.count();
        let outsize = match inp.below(3) {
            0 => inp.count(),
            _ => inp.below(17) as i64,
        };
        let mut pos = inp.count();
        let comm = match inp.below(6) {
            0 => MPI_COMM_NULL as MPI_Comm,
            1 => 0x7777_0000usize as MPI_Comm,
            _ => MPI_COMM_SELF as MPI_Comm,
        };
        let mut buf = [0u8; 16];
        let inb = [0u8; 16];
        let use32 = inp.u8() & 1 == 1;
        let unpack = inp.u8() & 1 == 1;
        // The values the call sees. The buffers hold 16 bytes: a positive size is clamped to
        // that, and a call that could legally move data (the data fits) is not made, since
        // the type's span may exceed the buffers.
        let outsize = outsize.min(16);
        let (c, r, p) = if use32 {
            (
                count as i32 as i64,
                outsize as i32 as i64,
                pos as i32 as i64,
            )
        } else {
            (count, outsize, pos)
        };
        let mut need = 0i64;
        let sized = mpi::MPI_Pack_size_c(c.max(0), h, MPI_COMM_SELF as MPI_Comm, &mut need);
        if c > 0 && sized == MPI_SUCCESS && need <= r.max(0) {
            return;
        }
        // A zero count of MPI_DATATYPE_NULL is an empty buffer (see `round_trip`).
        let src_ok =
            i.is_some_and(|i| self.types[i].live) || (c == 0 && h as usize == MPI_DATATYPE_NULL);
        let rc = if use32 {
            let mut p32 = p as i32;
            let (c, r) = (c as i32, r as i32);
            let rc = if unpack {
                mpi::MPI_Unpack(
                    inb.as_ptr().cast(),
                    r,
                    &mut p32,
                    buf.as_mut_ptr().cast(),
                    c,
                    h,
                    comm,
                )
            } else {
                mpi::MPI_Pack(
                    inb.as_ptr().cast(),
                    c,
                    h,
                    buf.as_mut_ptr().cast(),
                    r,
                    &mut p32,
                    comm,
                )
            };
            pos = p32 as i64;
            rc
        } else if unpack {
            mpi::MPI_Unpack_c(
                inb.as_ptr().cast(),
                r,
                &mut pos,
                buf.as_mut_ptr().cast(),
                c,
                h,
                comm,
            )
        } else {
            mpi::MPI_Pack_c(
                inb.as_ptr().cast(),
                c,
                h,
                buf.as_mut_ptr().cast(),
                r,
                &mut pos,
                comm,
            )
        };
        let cls = class_of("bad pack", rc);
        if rc != MPI_SUCCESS {
            assert_eq!(pos, p, "position moved by a failed call");
        }
        if c < 0 || r < 0 || p < 0 || p > r || comm != MPI_COMM_SELF as MPI_Comm || !src_ok {
            assert_ne!(
                cls, MPI_SUCCESS,
                "bad pack accepted (count {c} size {r} pos {p})"
            );
        }
        // Null position pointers.
        let rc = mpi::MPI_Pack_c(
            inb.as_ptr().cast(),
            0,
            h,
            buf.as_mut_ptr().cast(),
            16,
            null_mut(),
            comm,
        );
        assert_ne!(class_of("pack", rc), MPI_SUCCESS, "NULL position accepted");
        let mut es = 0i64;
        let rc = mpi::MPI_Pack_external_size_c(c"external32".as_ptr(), count, h, &mut es);
        class_of("pack_external_size", rc);
        let rc = mpi::MPI_Pack_external_size_c(c"native".as_ptr(), 1, h, &mut es);
        assert_ne!(
            class_of("pack_external_size", rc),
            MPI_SUCCESS,
            "datarep \"native\" accepted"
        );
    }
}

/// Runs one input. Panics when an invariant is violated.
pub fn run(data: &[u8]) {
    init();
    let mut inp = Input { data, at: 0 };
    let mut case = Case {
        types: predefined()
            .into_iter()
            .map(|(h, p, e)| Entry {
                h: h as MPI_Datatype,
                node: Rc::new(Node {
                    shape: Shape::Basic(p),
                    extent: e,
                }),
                named: true,
                committed: true,
                live: true,
            })
            .collect(),
        created: 0,
    };
    let mut ops = 0;
    while !inp.done() && ops < MAX_OPS {
        case.step(&mut inp);
        ops += 1;
    }
    // Free what is left, so that a long run does not grow the type table.
    for e in &mut case.types {
        if e.live && !e.named {
            // SAFETY: valid in/out pointer.
            let rc = unsafe { mpi::MPI_Type_free(&mut e.h) };
            assert_eq!(rc, MPI_SUCCESS, "free at the end");
            e.live = false;
        }
    }
}
