//! Property tests of the engine: random nested datatypes pack and unpack exactly like a naive
//! walker of their type maps (whole and in random pieces), and random constructor arguments,
//! valid or not, never panic.

use super::derived::{self, Contents, Dtype};
use super::engine;
use crate::mpi_abi::consts::*;
use proptest::prelude::*;
use std::sync::Arc;

/// A type description, built both by the constructors and by the naive walker.
#[derive(Clone, Debug)]
enum Spec {
    Basic(usize),
    Contig(usize, Box<Spec>),
    Vector(usize, usize, isize, Box<Spec>),
    Hvector(usize, usize, isize, Box<Spec>),
    Indexed(Vec<(usize, isize)>, Box<Spec>),
    Struct(Vec<(usize, isize, Spec)>),
    Resized(isize, isize, Box<Spec>),
    Subarray(Vec<(usize, usize, usize)>, bool, Box<Spec>),
}

fn spec() -> impl Strategy<Value = Spec> {
    let leaf = prop_oneof![Just(1usize), Just(2), Just(4), Just(8)].prop_map(Spec::Basic);
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            (0usize..4, inner.clone()).prop_map(|(n, c)| Spec::Contig(n, Box::new(c))),
            (0usize..4, 0usize..3, -4isize..5, inner.clone())
                .prop_map(|(n, b, s, c)| Spec::Vector(n, b, s, Box::new(c))),
            (0usize..4, 0usize..3, -40isize..41, inner.clone())
                .prop_map(|(n, b, s, c)| Spec::Hvector(n, b, s, Box::new(c))),
            (
                prop::collection::vec((0usize..3, -5isize..6), 0..4),
                inner.clone()
            )
                .prop_map(|(v, c)| Spec::Indexed(v, Box::new(c))),
            prop::collection::vec((0usize..3, -32isize..33, inner.clone()), 1..4)
                .prop_map(Spec::Struct),
            (-16isize..17, 0isize..40, inner.clone()).prop_map(|(l, e, c)| Spec::Resized(
                l,
                e,
                Box::new(c)
            )),
            (
                prop::collection::vec((1usize..4, 0usize..4, 0usize..4), 1..4),
                any::<bool>(),
                inner
            )
                .prop_map(|(d, f, c)| {
                    // (size, subsize, start) made valid
                    let d = d
                        .into_iter()
                        .map(|(s, ss, st)| {
                            let ss = ss.clamp(1, s);
                            (s, ss, st.min(s - ss))
                        })
                        .collect();
                    Spec::Subarray(d, f, Box::new(c))
                }),
        ]
    })
}

fn basic(n: usize) -> Arc<Dtype> {
    let h = match n {
        1 => MPI_BYTE,
        2 => MPI_SHORT,
        4 => MPI_INT,
        _ => MPI_DOUBLE,
    };
    Arc::new(Dtype::predefined(h).unwrap())
}

fn build(s: &Spec) -> Arc<Dtype> {
    let c = Contents::default;
    Arc::new(match s {
        Spec::Basic(n) => return basic(*n),
        Spec::Contig(n, k) => derived::contiguous(*n, &build(k), c()).unwrap(),
        Spec::Vector(n, b, st, k) => {
            let o = build(k);
            derived::vector_bytes(*n, *b, st * o.extent, &o, c()).unwrap()
        }
        Spec::Hvector(n, b, st, k) => derived::vector_bytes(*n, *b, *st, &build(k), c()).unwrap(),
        Spec::Indexed(v, k) => {
            let o = build(k);
            let e = o.extent;
            derived::indexed_bytes(v.iter().map(|&(b, d)| (d * e, b)), &o, c()).unwrap()
        }
        Spec::Struct(f) => {
            let fields: Vec<_> = f.iter().map(|(b, d, k)| (*b, *d, build(k))).collect();
            derived::structure(&fields, c()).unwrap()
        }
        Spec::Resized(l, e, k) => derived::resized(&build(k), *l, *e, c()).unwrap(),
        Spec::Subarray(d, f, k) => {
            let sz: Vec<i64> = d.iter().map(|x| x.0 as i64).collect();
            let ss: Vec<i64> = d.iter().map(|x| x.1 as i64).collect();
            let st: Vec<i64> = d.iter().map(|x| x.2 as i64).collect();
            let order = if *f { MPI_ORDER_FORTRAN } else { MPI_ORDER_C };
            derived::subarray(&sz, &ss, &st, order, &build(k), c()).unwrap()
        }
    })
}

/// The type map of one element as (byte offset, length) of its basic elements, walked
/// directly from the description.
fn naive(s: &Spec, out: &mut Vec<(isize, usize)>, at: isize) {
    let ext = |k: &Spec| build(k).extent;
    match s {
        Spec::Basic(n) => out.push((at, *n)),
        Spec::Contig(n, k) => {
            for i in 0..*n {
                naive(k, out, at + i as isize * ext(k));
            }
        }
        Spec::Vector(n, b, st, k) => {
            let e = ext(k);
            for i in 0..*n {
                for j in 0..*b {
                    naive(k, out, at + (i as isize * st + j as isize) * e);
                }
            }
        }
        Spec::Hvector(n, b, st, k) => {
            let e = ext(k);
            for i in 0..*n {
                for j in 0..*b {
                    naive(k, out, at + i as isize * st + j as isize * e);
                }
            }
        }
        Spec::Indexed(v, k) => {
            let e = ext(k);
            for &(b, d) in v {
                for j in 0..b {
                    naive(k, out, at + (d + j as isize) * e);
                }
            }
        }
        Spec::Struct(f) => {
            for (b, d, k) in f {
                let e = ext(k);
                for j in 0..*b {
                    naive(k, out, at + d + j as isize * e);
                }
            }
        }
        Spec::Resized(_, _, k) => naive(k, out, at),
        Spec::Subarray(d, f, k) => {
            let e = ext(k);
            let mut dims = d.clone();
            if *f {
                dims.reverse();
            }
            // Row-major walk over the box, outermost dimension first.
            let mut idx = vec![0usize; dims.len()];
            'outer: loop {
                let mut off = 0isize;
                for (i, &(s, _, st)) in dims.iter().enumerate() {
                    off = off * s as isize + (idx[i] + st) as isize;
                }
                naive(k, out, at + off * e);
                for i in (0..dims.len()).rev() {
                    idx[i] += 1;
                    if idx[i] < dims[i].1 {
                        continue 'outer;
                    }
                    idx[i] = 0;
                }
                break;
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn pack_matches_naive_walker(s in spec(), count in 0usize..3, cuts in prop::collection::vec(0usize..64, 0..4), seed in any::<u64>()) {
        let t = build(&s);
        let mut map = Vec::new();
        for e in 0..count {
            naive(&s, &mut map, e as isize * t.extent);
        }
        let size: usize = map.iter().map(|m| m.1).sum();
        prop_assert_eq!(size, t.size * count);
        let lo = map.iter().map(|m| m.0).min().unwrap_or(0).min(0);
        let hi = map.iter().map(|m| m.0 + m.1 as isize).max().unwrap_or(0).max(0);
        let len = (hi - lo) as usize;
        let mut x = seed | 1;
        let src: Vec<u8> = (0..len).map(|_| { x ^= x << 13; x ^= x >> 7; x ^= x << 17; x as u8 }).collect();
        let base = src.as_ptr() as usize + (-lo) as usize;
        let want: Vec<u8> = map.iter().flat_map(|&(o, n)| src[(o - lo) as usize..(o - lo) as usize + n].iter().copied()).collect();
        let mut got = vec![0u8; size];
        // SAFETY: every segment lies in `src` (the naive map's bounds).
        unsafe { engine::pack(&t.prog, t.extent, count, base, 0, &mut got) };
        prop_assert_eq!(&got, &want);
        // In pieces, cut at random offsets.
        let mut pieces = vec![0u8; size];
        let mut at = 0usize;
        for c in cuts.iter().chain(std::iter::once(&usize::MAX)) {
            let end = at.saturating_add(*c).min(size);
            // SAFETY: as above.
            unsafe { engine::pack(&t.prog, t.extent, count, base, at, &mut pieces[at..end]) };
            at = end;
        }
        prop_assert_eq!(&pieces, &want);
        // Unpack into a zeroed buffer: exactly the naive writes.
        let mut dst = vec![0u8; len];
        let mut expect = vec![0u8; len];
        let mut p = 0;
        for &(o, n) in &map {
            expect[(o - lo) as usize..(o - lo) as usize + n].copy_from_slice(&want[p..p + n]);
            p += n;
        }
        let dbase = dst.as_mut_ptr() as usize + (-lo) as usize;
        let half = size / 2;
        // SAFETY: every segment lies in `dst`.
        unsafe {
            engine::unpack(&t.prog, t.extent, count, dbase, 0, &want[..half]);
            engine::unpack(&t.prog, t.extent, count, dbase, half, &want[half..]);
        }
        prop_assert_eq!(dst, expect);
        // The segment list covers the same bytes.
        let mut segs = engine::IovSink::new(usize::MAX);
        engine::walk_n(&t.prog, t.extent, count, base, 0, size, &mut segs);
        prop_assert_eq!(segs.bytes, size);
        // Get_elements: whole elements count all their basic elements.
        let basics = map.len() as u64;
        prop_assert_eq!(t.elements_in(size as u64), Some(basics));
    }

    #[test]
    fn random_constructor_arguments_never_panic(
        n in -3i64..6, b in -3i64..6, st in any::<i64>(),
        sizes in prop::collection::vec(-2i64..6, 1..4),
        subs in prop::collection::vec(-2i64..6, 1..4),
        starts in prop::collection::vec(-2i64..6, 1..4),
        order in -1i32..4,
        gs in prop::collection::vec(-2i64..9, 1..3),
        dist in prop::collection::vec(0i32..4, 1..3),
        darg in prop::collection::vec(-2i32..4, 1..3),
        ps in prop::collection::vec(-1i32..3, 1..3),
        size in -1i32..5, rank in -1i32..5,
    ) {
        let o = basic(8);
        let c = Contents::default;
        if n >= 0 && b >= 0 {
            let _ = derived::vector_bytes(n as usize, b as usize, st as isize, &o, c());
            let _ = derived::indexed_bytes([(st as isize, b as usize)].into_iter(), &o, c());
            let big = derived::contiguous(usize::MAX / 4, &o, c());
            prop_assert!(big.is_err());
        }
        let k = sizes.len().min(subs.len()).min(starts.len());
        let r = derived::subarray(&sizes[..k], &subs[..k], &starts[..k], order, &o, c());
        if let Ok(t) = r {
            let cells: i64 = subs[..k].iter().product();
            prop_assert_eq!(t.size as i64, cells * 8);
        }
        let k = gs.len().min(dist.len()).min(darg.len()).min(ps.len());
        let dist: Vec<i32> = dist[..k].iter().map(|&d| match d { 0 => MPI_DISTRIBUTE_NONE, 1 => MPI_DISTRIBUTE_BLOCK, 2 => MPI_DISTRIBUTE_CYCLIC, _ => 77 }).collect();
        let darg: Vec<i32> = darg[..k].iter().map(|&d| if d == -2 { MPI_DISTRIBUTE_DFLT_DARG } else { d }).collect();
        let _ = derived::darray(size, rank, &gs[..k], &dist, &darg, &ps[..k], MPI_ORDER_C, &o, c());
    }
}
