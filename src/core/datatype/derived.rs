//! Derived datatypes: the type object, the constructors (all of them reduce to "blocks of one
//! old type", "fields of several types", "an n-dimensional box" or "new bounds"), and the
//! queries that need the type's structure (basic elements in a partial message).

use super::engine::{Op, Prog};
use super::{predefined, TypeInfo};
use crate::core::error::{fail, MpiResult};
use crate::mpi_abi::consts::*;
use std::sync::Arc;

/// How a type is made of others, for counting basic elements and converting representations.
#[derive(Debug)]
pub enum Kids {
    /// A predefined type.
    Basic,
    /// `n` copies of one type, in type-map order.
    Single {
        /// Copies.
        n: u64,
        /// The type.
        child: Arc<Dtype>,
    },
    /// Fields of a struct: (copies, type), in type-map order.
    Struct(Vec<(u64, Arc<Dtype>)>),
}

/// The arguments a type was built with (`MPI_Type_get_envelope` / `MPI_Type_get_contents`).
#[derive(Debug, Default)]
pub struct Contents {
    /// `MPI_COMBINER_*`.
    pub combiner: i32,
    /// Integer arguments.
    pub ints: Vec<i32>,
    /// Address arguments.
    pub addrs: Vec<isize>,
    /// Large-count arguments (the `_c` constructors).
    pub counts: Vec<i64>,
    /// Datatype arguments.
    pub types: Vec<Arc<Dtype>>,
}

/// A datatype (predefined or derived), immutable once built; shared by `Arc` between the
/// handle table, the types built from it and the transfers using it.
#[derive(Debug)]
pub struct Dtype {
    /// The ABI handle of a predefined type; 0 for derived types.
    pub handle: usize,
    /// Data bytes of one element.
    pub size: usize,
    /// Lower bound.
    pub lb: isize,
    /// Extent (upper bound minus lower bound).
    pub extent: isize,
    /// Lowest data byte offset.
    pub true_lb: isize,
    /// Span of the data bytes.
    pub true_extent: isize,
    /// Basic elements in one element.
    pub elements: u64,
    /// Alignment (largest alignment of the basic types in it), for struct padding.
    pub align: usize,
    /// Bounds set explicitly (`MPI_Type_create_resized`): structs do not pad them.
    pub sticky: bool,
    /// The compiled layout of one element.
    pub prog: Arc<Prog>,
    /// Structure.
    pub kids: Kids,
    /// Construction arguments.
    pub contents: Contents,
}

/// Largest count of anything a type may hold (keeps every byte computation in `isize`).
const LIMIT: u128 = isize::MAX as u128;

fn too_big<T>() -> MpiResult<T> {
    fail(
        MPI_ERR_COUNT,
        "the datatype would be larger than the address space",
    )
}

fn mul(a: usize, b: usize) -> MpiResult<usize> {
    match (a as u128) * (b as u128) {
        p if p <= LIMIT => Ok(p as usize),
        _ => too_big(),
    }
}

fn imul(a: isize, b: isize) -> MpiResult<isize> {
    a.checked_mul(b).map_or_else(too_big, Ok)
}

/// `hi - lo`, an extent (`MPI_ERR_COUNT` beyond `isize`).
fn span(lo: isize, hi: isize) -> MpiResult<isize> {
    hi.checked_sub(lo).map_or_else(too_big, Ok)
}

fn iadd(a: isize, b: isize) -> MpiResult<isize> {
    a.checked_add(b).map_or_else(too_big, Ok)
}

impl Dtype {
    /// The predefined type with ABI handle `h`, as a type object (`None` when unknown).
    pub fn predefined(h: usize) -> Option<Dtype> {
        let t = predefined(h)?;
        let head = t.head as usize;
        let prog = Prog::new(vec![
            Op::Copy { off: 0, len: head },
            Op::Copy {
                off: t.tail_at as isize,
                len: t.size - head,
            },
        ]);
        let (tl, th) = prog.bounds().unwrap_or((0, 0));
        Some(Dtype {
            handle: h,
            size: t.size,
            lb: 0,
            extent: t.extent as isize,
            true_lb: tl,
            true_extent: th - tl,
            elements: t.basic as u64,
            align: basic_align(h, &t),
            sticky: false,
            prog: Arc::new(prog),
            kids: Kids::Basic,
            contents: Contents {
                combiner: MPI_COMBINER_NAMED,
                ..Default::default()
            },
        })
    }

    /// Upper bound.
    pub fn ub(&self) -> isize {
        self.lb + self.extent
    }

    /// Whether `count` elements at a buffer form one contiguous block: its offset from the
    /// buffer.
    pub fn contiguous_run(&self, count: usize) -> Option<isize> {
        let (off, len) = self.prog.single()?;
        (count <= 1 || self.extent == len as isize).then_some(off)
    }

    /// Element layout for the transfer paths that treat the type as opaque bytes.
    pub fn info(&self) -> TypeInfo {
        TypeInfo {
            size: self.size,
            extent: self.extent.max(0) as usize,
            head: 0,
            tail_at: 0,
            basic: 1,
        }
    }

    /// Basic elements in the first `bytes` data bytes of a message of this type
    /// (`MPI_Get_elements`); `None` when the bytes end inside a basic element.
    pub fn elements_in(&self, bytes: u64) -> Option<u64> {
        if self.size == 0 {
            return (bytes == 0).then_some(0);
        }
        let s = self.size as u64;
        Some((bytes / s) * self.elements + self.prefix_elements(bytes % s)?)
    }

    /// Basic elements in the first `rem` (< size) data bytes of one element.
    fn prefix_elements(&self, rem: u64) -> Option<u64> {
        if rem == 0 {
            return Some(0);
        }
        match &self.kids {
            Kids::Basic => {
                let t = predefined(self.handle)?;
                (t.basic == 2 && rem == super::first_component(self.handle, &t) as u64).then_some(1)
            }
            Kids::Single { child, .. } => child.elements_in(rem),
            Kids::Struct(fields) => {
                let mut rem = rem;
                let mut acc = 0u64;
                for (n, t) in fields {
                    let fb = n * t.size as u64;
                    if rem >= fb {
                        acc += n * t.elements;
                        rem -= fb;
                    } else {
                        return Some(acc + t.elements_in(rem)?);
                    }
                }
                (rem == 0).then_some(acc)
            }
        }
    }

    /// Whether the type contains only copies of one basic type (whose handle it returns).
    pub fn basic_type(&self) -> Option<usize> {
        match &self.kids {
            Kids::Basic => Some(self.handle),
            Kids::Single { child, .. } => child.basic_type(),
            Kids::Struct(fields) => {
                let mut it = fields.iter().filter(|(n, t)| *n > 0 && t.size > 0);
                let first = it.next()?.1.basic_type()?;
                it.all(|(_, t)| t.basic_type() == Some(first))
                    .then_some(first)
            }
        }
    }
}

/// Alignment of a predefined type in C structs on this platform.
fn basic_align(h: usize, t: &TypeInfo) -> usize {
    match h {
        MPI_C_FLOAT_COMPLEX | MPI_CXX_FLOAT_COMPLEX | MPI_COMPLEX | MPI_COMPLEX8 => 4,
        MPI_C_DOUBLE_COMPLEX | MPI_CXX_DOUBLE_COMPLEX | MPI_DOUBLE_COMPLEX | MPI_COMPLEX16 => 8,
        MPI_C_LONG_DOUBLE_COMPLEX | MPI_CXX_LONG_DOUBLE_COMPLEX | MPI_COMPLEX32 => 16,
        MPI_COMPLEX4 => 2,
        _ if t.basic == 2 => match t.extent {
            8 => 4,
            16 => 8,
            32 => 16,
            _ => 4,
        },
        _ => t.size.clamp(1, 16),
    }
}

/// Bounds and data of blocks: `(displacement in bytes, copies of old)`.
struct Blocks {
    ops: Vec<Op>,
    lo: isize,
    hi: isize,
    any: bool,
    copies: usize,
}

impl Blocks {
    fn new() -> Blocks {
        Blocks {
            ops: Vec::new(),
            lo: 0,
            hi: 0,
            any: false,
            copies: 0,
        }
    }
    /// Adds `bl` copies of `old` at `disp`, `stride` bytes apart (`old.extent` normally).
    fn add(&mut self, old: &Dtype, disp: isize, bl: usize, stride: isize) -> MpiResult<()> {
        if bl == 0 {
            return Ok(());
        }
        let span = imul(bl as isize - 1, stride)?;
        let lo = iadd(iadd(disp, old.lb)?, span.min(0))?;
        let hi = iadd(iadd(disp, old.ub())?, span.max(0))?;
        self.bound(lo, hi);
        self.copies = self.copies.checked_add(bl).map_or_else(too_big, Ok)?;
        self.ops
            .extend(Prog::try_repeat(disp, bl, stride, &old.prog).map_or_else(too_big, Ok)?);
        Ok(())
    }
    fn bound(&mut self, lo: isize, hi: isize) {
        if self.any {
            self.lo = self.lo.min(lo);
            self.hi = self.hi.max(hi);
        } else {
            (self.lo, self.hi, self.any) = (lo, hi, true);
        }
    }
}

/// Finishes a type made of `copies` copies of `old` laid out by `ops` within `[lo, hi)`.
fn single(
    old: &Arc<Dtype>,
    ops: Vec<Op>,
    lo: isize,
    hi: isize,
    copies: usize,
    contents: Contents,
) -> MpiResult<Dtype> {
    let size = mul(copies, old.size)?;
    let prog = Prog::new(ops);
    let (tl, th) = prog.bounds().unwrap_or((0, 0));
    Ok(Dtype {
        handle: 0,
        size,
        lb: lo,
        extent: span(lo, hi)?,
        true_lb: tl,
        true_extent: span(tl, th)?,
        elements: copies as u64 * old.elements,
        align: old.align,
        sticky: old.sticky,
        prog: Arc::new(prog),
        kids: Kids::Single {
            n: copies as u64,
            child: old.clone(),
        },
        contents,
    })
}

/// `MPI_Type_contiguous`.
pub fn contiguous(count: usize, old: &Arc<Dtype>, c: Contents) -> MpiResult<Dtype> {
    vector_bytes(1, count, 0, old, c)
}

/// `MPI_Type_vector` / `MPI_Type_create_hvector` with the stride in bytes.
pub fn vector_bytes(
    count: usize,
    bl: usize,
    stride: isize,
    old: &Arc<Dtype>,
    c: Contents,
) -> MpiResult<Dtype> {
    let mut b = Blocks::new();
    if count > 0 {
        // The first and the last block bound the type.
        b.add(old, 0, bl, old.extent)?;
        let last = imul(count as isize - 1, stride)?;
        b.add(old, last, bl, old.extent)?;
    }
    let block = Prog::new(Prog::try_repeat(0, bl, old.extent, &old.prog).map_or_else(too_big, Ok)?);
    let ops = Prog::try_repeat(0, count, stride, &block).map_or_else(too_big, Ok)?;
    single(old, ops, b.lo, b.hi, mul(count, bl)?, c)
}

/// The indexed family: blocks of `(displacement in bytes, blocklength)`.
pub fn indexed_bytes(
    blocks: impl Iterator<Item = (isize, usize)>,
    old: &Arc<Dtype>,
    c: Contents,
) -> MpiResult<Dtype> {
    let mut b = Blocks::new();
    for (d, bl) in blocks {
        b.add(old, d, bl, old.extent)?;
    }
    single(old, b.ops, b.lo, b.hi, b.copies, c)
}

/// `MPI_Type_create_struct`: fields of `(blocklength, displacement, type)`.
pub fn structure(fields: &[(usize, isize, Arc<Dtype>)], c: Contents) -> MpiResult<Dtype> {
    let mut b = Blocks::new();
    let mut size = 0usize;
    let mut elements = 0u64;
    let mut align = 1usize;
    let mut sticky = false;
    let mut kids = Vec::with_capacity(fields.len());
    for (bl, d, t) in fields {
        kids.push((*bl as u64, t.clone()));
        if *bl == 0 {
            continue;
        }
        b.add(t, *d, *bl, t.extent)?;
        size = size
            .checked_add(mul(*bl, t.size)?)
            .map_or_else(too_big, Ok)?;
        elements += *bl as u64 * t.elements;
        align = align.max(t.align);
        sticky |= t.sticky;
    }
    let (lo, mut hi) = (b.lo, b.hi);
    if !sticky && b.any {
        let ext = span(lo, hi)?;
        let a = align as isize;
        if ext % a != 0 {
            hi = iadd(hi, a - ext.rem_euclid(a))?;
        }
    }
    let prog = Prog::new(b.ops);
    let (tl, th) = prog.bounds().unwrap_or((0, 0));
    Ok(Dtype {
        handle: 0,
        size,
        lb: lo,
        extent: span(lo, hi)?,
        true_lb: tl,
        true_extent: span(tl, th)?,
        elements,
        align,
        sticky,
        prog: Arc::new(prog),
        kids: Kids::Struct(kids),
        contents: c,
    })
}

/// `MPI_Type_create_resized`.
pub fn resized(old: &Arc<Dtype>, lb: isize, extent: isize, c: Contents) -> MpiResult<Dtype> {
    iadd(lb, extent)?;
    Ok(Dtype {
        handle: 0,
        size: old.size,
        lb,
        extent,
        true_lb: old.true_lb,
        true_extent: old.true_extent,
        elements: old.elements,
        align: old.align,
        sticky: true,
        prog: old.prog.clone(),
        kids: Kids::Single {
            n: 1,
            child: old.clone(),
        },
        contents: c,
    })
}

/// `MPI_Type_dup`.
pub fn dup(old: &Arc<Dtype>) -> Dtype {
    Dtype {
        handle: 0,
        size: old.size,
        lb: old.lb,
        extent: old.extent,
        true_lb: old.true_lb,
        true_extent: old.true_extent,
        elements: old.elements,
        align: old.align,
        sticky: old.sticky,
        prog: old.prog.clone(),
        kids: Kids::Single {
            n: 1,
            child: old.clone(),
        },
        contents: Contents {
            combiner: MPI_COMBINER_DUP,
            types: vec![old.clone()],
            ..Default::default()
        },
    }
}

/// Indices `start + i * step + j` for `i < count`, `j < len`: `count` runs of `len`
/// consecutive indices along one dimension (a cyclic distribution is one such group plus
/// perhaps a shorter last run, whatever the number of blocks).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Runs {
    start: usize,
    len: usize,
    count: usize,
    step: usize,
}

impl Runs {
    /// One run of `len` indices from `start`.
    fn one(start: usize, len: usize) -> Runs {
        Runs {
            start,
            len,
            count: 1,
            step: 0,
        }
    }
}

/// An n-dimensional box of `old` in an array of `sizes` (outermost dimension first): along
/// each dimension the groups of runs of indices it holds. Lower bound 0, extent the whole
/// array.
fn boxed(sizes: &[usize], runs: &[Vec<Runs>], old: &Arc<Dtype>, c: Contents) -> MpiResult<Dtype> {
    let n = sizes.len();
    let mut strides = vec![old.extent; n];
    for d in (0..n.saturating_sub(1)).rev() {
        strides[d] = imul(strides[d + 1], isz(sizes[d + 1])?)?;
    }
    let whole = if n == 0 {
        old.extent
    } else {
        imul(strides[0], isz(sizes[0])?)?
    };
    let mut prog = (*old.prog).clone();
    let mut copies = 1usize;
    for d in (0..n).rev() {
        let mut ops = Vec::new();
        let mut here = 0usize;
        for r in &runs[d] {
            let block =
                Prog::new(Prog::try_repeat(0, r.len, strides[d], &prog).map_or_else(too_big, Ok)?);
            ops.extend(
                Prog::try_repeat(
                    imul(isz(r.start)?, strides[d])?,
                    r.count,
                    imul(isz(r.step)?, strides[d])?,
                    &block,
                )
                .map_or_else(too_big, Ok)?,
            );
            here = here
                .checked_add(mul(r.len, r.count)?)
                .map_or_else(too_big, Ok)?;
        }
        copies = mul(copies, here)?;
        prog = Prog::new(ops);
    }
    let (tl, th) = prog.bounds().unwrap_or((0, 0));
    Ok(Dtype {
        handle: 0,
        size: mul(copies, old.size)?,
        lb: 0,
        extent: whole,
        true_lb: tl,
        true_extent: span(tl, th)?,
        elements: copies as u64 * old.elements,
        align: old.align,
        sticky: true,
        prog: Arc::new(prog),
        kids: Kids::Single {
            n: copies as u64,
            child: old.clone(),
        },
        contents: c,
    })
}

/// An index or count as a displacement factor (`MPI_ERR_ARG` beyond `isize`).
fn isz(v: usize) -> MpiResult<isize> {
    isize::try_from(v).or_else(|_| fail(MPI_ERR_ARG, format!("{v} is too large")))
}

fn check_order(order: i32) -> MpiResult<()> {
    if order == MPI_ORDER_C || order == MPI_ORDER_FORTRAN {
        Ok(())
    } else {
        fail(
            MPI_ERR_ARG,
            format!("invalid order {order} (MPI_ORDER_C or MPI_ORDER_FORTRAN)"),
        )
    }
}

/// `MPI_Type_create_subarray` (dimensions as given; `order` says which varies fastest).
pub fn subarray(
    sizes: &[i64],
    subsizes: &[i64],
    starts: &[i64],
    order: i32,
    old: &Arc<Dtype>,
    c: Contents,
) -> MpiResult<Dtype> {
    check_order(order)?;
    if sizes.is_empty() {
        return fail(MPI_ERR_ARG, "subarray needs at least one dimension");
    }
    for d in 0..sizes.len() {
        let (s, ss, st) = (sizes[d], subsizes[d], starts[d]);
        if s <= 0 {
            return fail(
                MPI_ERR_ARG,
                format!("array size {s} of dimension {d} must be positive"),
            );
        }
        if ss <= 0 || ss > s {
            return fail(
                MPI_ERR_ARG,
                format!("subarray size {ss} of dimension {d} must be in 1..={s}"),
            );
        }
        if st < 0 || st > s - ss {
            return fail(
                MPI_ERR_ARG,
                format!(
                    "start {st} of dimension {d} must be in 0..={} (size {s}, subsize {ss})",
                    s - ss
                ),
            );
        }
    }
    let mut dims: Vec<(usize, Vec<Runs>)> = (0..sizes.len())
        .map(|d| {
            (
                sizes[d] as usize,
                vec![Runs::one(starts[d] as usize, subsizes[d] as usize)],
            )
        })
        .collect();
    if order == MPI_ORDER_FORTRAN {
        dims.reverse();
    }
    let (sz, runs): (Vec<_>, Vec<_>) = dims.into_iter().unzip();
    boxed(&sz, &runs, old, c)
}

/// `MPI_Type_create_darray`.
#[allow(clippy::too_many_arguments)]
pub fn darray(
    size: i32,
    rank: i32,
    gsizes: &[i64],
    distribs: &[i32],
    dargs: &[i32],
    psizes: &[i32],
    order: i32,
    old: &Arc<Dtype>,
    c: Contents,
) -> MpiResult<Dtype> {
    check_order(order)?;
    let n = gsizes.len();
    if n == 0 {
        return fail(MPI_ERR_ARG, "darray needs at least one dimension");
    }
    if size <= 0 || rank < 0 || rank >= size {
        return fail(
            MPI_ERR_ARG,
            format!("invalid rank {rank} in a group of {size}"),
        );
    }
    let mut prod: i64 = 1;
    for d in 0..n {
        if psizes[d] <= 0 {
            return fail(
                MPI_ERR_ARG,
                format!(
                    "process grid size {} of dimension {d} must be positive",
                    psizes[d]
                ),
            );
        }
        if gsizes[d] <= 0 {
            return fail(
                MPI_ERR_ARG,
                format!(
                    "global size {} of dimension {d} must be positive",
                    gsizes[d]
                ),
            );
        }
        prod = prod.saturating_mul(psizes[d] as i64);
    }
    if prod != size as i64 {
        return fail(
            MPI_ERR_ARG,
            format!("the process grid has {prod} processes but size is {size}"),
        );
    }
    // Row-major process coordinates, whatever the array order.
    let mut coords = vec![0i64; n];
    let mut r = rank as i64;
    for d in (0..n).rev() {
        coords[d] = r % psizes[d] as i64;
        r /= psizes[d] as i64;
    }
    let mut dims = Vec::with_capacity(n);
    for d in 0..n {
        let (g, p, k, darg) = (gsizes[d], psizes[d] as i64, coords[d], dargs[d]);
        let mut runs = Vec::new();
        match distribs[d] {
            x if x == MPI_DISTRIBUTE_NONE => {
                if p != 1 {
                    return fail(
                        MPI_ERR_ARG,
                        format!("dimension {d} is not distributed but has {p} processes"),
                    );
                }
                runs.push(Runs::one(0, g as usize));
            }
            x if x == MPI_DISTRIBUTE_BLOCK => {
                let b = if darg == MPI_DISTRIBUTE_DFLT_DARG {
                    // ceil(g / p) without overflow (g > 0)
                    (g - 1) / p + 1
                } else if darg <= 0 {
                    return fail(MPI_ERR_ARG, format!("invalid block size {darg}"));
                } else {
                    darg as i64
                };
                if b * p < g {
                    return fail(
                        MPI_ERR_ARG,
                        format!("block size {b} times {p} processes does not cover {g} elements of dimension {d}"),
                    );
                }
                let start = k * b;
                if start < g {
                    runs.push(Runs::one(start as usize, b.min(g - start) as usize));
                }
            }
            x if x == MPI_DISTRIBUTE_CYCLIC => {
                let b = if darg == MPI_DISTRIBUTE_DFLT_DARG {
                    1
                } else if darg <= 0 {
                    return fail(MPI_ERR_ARG, format!("invalid cyclic block size {darg}"));
                } else {
                    darg as i64
                };
                // Blocks of b from k * b, p * b apart (all products below 2^62); the last
                // one may be cut short by the end of the dimension.
                let (first, step) = (k * b, p * b);
                if first < g {
                    let blocks = (g - first - 1) / step + 1;
                    let last = first + (blocks - 1) * step;
                    let full = if g - last >= b { blocks } else { blocks - 1 };
                    if full > 0 {
                        runs.push(Runs {
                            start: first as usize,
                            len: b as usize,
                            count: full as usize,
                            step: step as usize,
                        });
                    }
                    if full < blocks {
                        runs.push(Runs::one(last as usize, (g - last) as usize));
                    }
                }
            }
            x => {
                return fail(
                    MPI_ERR_ARG,
                    format!("invalid distribution {x} for dimension {d}"),
                )
            }
        }
        dims.push((g as usize, runs));
    }
    if order == MPI_ORDER_FORTRAN {
        dims.reverse();
    }
    let (sz, runs): (Vec<_>, Vec<_>) = dims.into_iter().unzip();
    boxed(&sz, &runs, old, c)
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn pre(h: usize) -> Arc<Dtype> {
        Arc::new(Dtype::predefined(h).unwrap())
    }

    #[test]
    fn bounds_and_sizes() {
        let d = pre(MPI_DOUBLE);
        let v = vector_bytes(3, 2, 40, &d, Contents::default()).unwrap();
        assert_eq!((v.size, v.lb, v.extent), (48, 0, 96));
        assert_eq!((v.true_lb, v.true_extent), (0, 96));
        let neg = vector_bytes(3, 1, -16, &d, Contents::default()).unwrap();
        assert_eq!((neg.lb, neg.extent), (-32, 40));
        let s = structure(
            &[(1, 0, d.clone()), (1, 8, pre(MPI_CHAR))],
            Contents::default(),
        )
        .unwrap();
        assert_eq!((s.size, s.extent, s.true_extent), (9, 16, 9));
        let r = resized(&Arc::new(s), -4, 32, Contents::default()).unwrap();
        assert_eq!((r.lb, r.extent, r.true_lb), (-4, 32, 0));
        let sub = subarray(
            &[4, 5, 6],
            &[4, 5, 1],
            &[0, 0, 2],
            MPI_ORDER_C,
            &d,
            Contents::default(),
        )
        .unwrap();
        assert_eq!(sub.prog.ops.len(), 1);
        assert_eq!((sub.size, sub.extent, sub.true_lb), (160, 960, 16));
        assert!(subarray(&[4], &[5], &[0], MPI_ORDER_C, &d, Contents::default()).is_err());
    }

    #[test]
    fn darray_block_cyclic() {
        let i = pre(MPI_INT);
        // 10 elements, 3 processes, cyclic(2): rank 1 holds 2,3,8,9.
        let t = darray(
            3,
            1,
            &[10],
            &[MPI_DISTRIBUTE_CYCLIC],
            &[2],
            &[3],
            MPI_ORDER_C,
            &i,
            Contents::default(),
        )
        .unwrap();
        assert_eq!((t.size, t.extent, t.true_lb), (16, 40, 8));
        let b = darray(
            3,
            2,
            &[10],
            &[MPI_DISTRIBUTE_BLOCK],
            &[MPI_DISTRIBUTE_DFLT_DARG],
            &[3],
            MPI_ORDER_C,
            &i,
            Contents::default(),
        )
        .unwrap();
        assert_eq!((b.size, b.true_lb), (8, 32));
    }

    #[test]
    fn darray_cyclic_is_constant_size() {
        let i = pre(MPI_INT);
        // 11 elements, 3 processes, cyclic(2): rank 2 holds 4,5 and the cut block 10.
        let t = darray(
            3,
            2,
            &[11],
            &[MPI_DISTRIBUTE_CYCLIC],
            &[2],
            &[3],
            MPI_ORDER_C,
            &i,
            Contents::default(),
        )
        .unwrap();
        assert_eq!(
            (t.size, t.extent, t.true_lb, t.true_extent),
            (12, 44, 16, 28)
        );
        // 2^40 cyclic(1) blocks: one strided step, not a list of blocks.
        let big = darray(
            1,
            0,
            &[1 << 40],
            &[MPI_DISTRIBUTE_CYCLIC],
            &[1],
            &[1],
            MPI_ORDER_C,
            &i,
            Contents::default(),
        )
        .unwrap();
        assert_eq!(big.size, 4 << 40);
        assert!(big.prog.ops.len() <= 2);
        // ceil(g / p) near i64::MAX does not overflow.
        assert!(darray(
            1,
            0,
            &[i64::MAX],
            &[MPI_DISTRIBUTE_BLOCK],
            &[MPI_DISTRIBUTE_DFLT_DARG],
            &[1],
            MPI_ORDER_C,
            &i,
            Contents::default(),
        )
        .is_err());
    }

    #[test]
    fn layouts_beyond_isize_are_refused() {
        let d = pre(MPI_DOUBLE);
        // Extent 1, true extent 16: the extents fit, the true bounds of the vector do not.
        let c2 = Arc::new(contiguous(2, &d, Contents::default()).unwrap());
        let r = Arc::new(resized(&c2, 0, 1, Contents::default()).unwrap());
        assert!(vector_bytes(2, 1, isize::MAX - 4, &r, Contents::default()).is_err());
        // Two fields whose span exceeds isize::MAX.
        let far = structure(
            &[
                (1, isize::MIN / 2 - 8, d.clone()),
                (1, isize::MAX / 2 + 8, d.clone()),
            ],
            Contents::default(),
        );
        assert!(far.is_err());
        // A size that overflows usize in the engine is refused, not wrapped.
        let huge = Arc::new(contiguous(1 << 31, &d, Contents::default()).unwrap());
        assert!(vector_bytes(1 << 31, 1 << 31, 0, &huge, Contents::default()).is_err());
    }

    #[test]
    fn partial_elements() {
        let s = structure(
            &[(2, 0, pre(MPI_INT)), (1, 8, pre(MPI_DOUBLE))],
            Contents::default(),
        )
        .unwrap();
        assert_eq!(s.elements_in(16), Some(3));
        assert_eq!(s.elements_in(4), Some(1));
        assert_eq!(s.elements_in(6), None);
        assert_eq!(s.elements_in(16 + 8), Some(5));
        assert_eq!(s.basic_type(), None);
    }
}
