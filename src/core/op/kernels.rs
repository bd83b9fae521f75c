//! The predefined reductions on the types Rust has: integers, `f32`/`f64`, their complex
//! pairs, logicals, bytes and the value-index pairs of MAXLOC/MINLOC.
//!
//! Every kernel has the shape [`Kernel`]: `f(in, inout)` computes `inout[k] = in[k] op
//! inout[k]` over the whole elements the two byte slices hold. Elements are read and written
//! with `from_ne_bytes`/`to_ne_bytes` on fixed-size chunks, so the buffers need no alignment
//! and the loop itself needs no `unsafe`; for the plain numeric types LLVM turns it into vector
//! loads, a vector op and vector stores (SSE2, or AVX2/AVX-512 when the CPU has them: see
//! `zip`; measured by the `reduce_local` benchmark). The kernel is chosen once per call, never
//! per element.

/// A reduction kernel over byte buffers (see the module documentation).
pub type Kernel = fn(&[u8], &mut [u8]);

/// A fixed-size value stored in native byte order.
pub trait Scalar: Copy {
    /// Bytes of one value.
    const N: usize;
    /// Reads a value from the first `N` bytes of `b`.
    fn ld(b: &[u8]) -> Self;
    /// Writes the value to the first `N` bytes of `b`.
    fn st(self, b: &mut [u8]);
}

/// Arithmetic of the SUM/PROD/MAX/MIN ops (integers wrap, as C's unsigned types do).
pub trait Arith: Scalar {
    /// `a + b`.
    fn add(a: Self, b: Self) -> Self;
    /// `a * b`.
    fn mul(a: Self, b: Self) -> Self;
    /// `b > a ? b : a` (the C ops' MAX, with `b` the inout operand).
    fn max(a: Self, b: Self) -> Self;
    /// `b < a ? b : a`.
    fn min(a: Self, b: Self) -> Self;
}

/// Bitwise and logical ops of the integer types.
pub trait Bits: Scalar {
    /// `a & b`.
    fn and(a: Self, b: Self) -> Self;
    /// `a | b`.
    fn or(a: Self, b: Self) -> Self;
    /// `a ^ b`.
    fn xor(a: Self, b: Self) -> Self;
    /// `a != 0`.
    fn truth(a: Self) -> bool;
    /// 1 or 0.
    fn of_bool(b: bool) -> Self;
}

macro_rules! scalar {
    ($($t:ty),*) => {$(
        impl Scalar for $t {
            const N: usize = std::mem::size_of::<$t>();
            #[inline(always)]
            fn ld(b: &[u8]) -> Self {
                <$t>::from_ne_bytes(b[..Self::N].try_into().unwrap())
            }
            #[inline(always)]
            fn st(self, b: &mut [u8]) {
                b[..Self::N].copy_from_slice(&self.to_ne_bytes())
            }
        }
    )*};
}
scalar!(i8, i16, i32, i64, i128, u8, u16, u32, u64, f32, f64);

macro_rules! int_arith {
    ($($t:ty),*) => {$(
        impl Arith for $t {
            #[inline(always)]
            fn add(a: Self, b: Self) -> Self { a.wrapping_add(b) }
            #[inline(always)]
            fn mul(a: Self, b: Self) -> Self { a.wrapping_mul(b) }
            #[inline(always)]
            fn max(a: Self, b: Self) -> Self { if b > a { b } else { a } }
            #[inline(always)]
            fn min(a: Self, b: Self) -> Self { if b < a { b } else { a } }
        }
        impl Bits for $t {
            #[inline(always)]
            fn and(a: Self, b: Self) -> Self { a & b }
            #[inline(always)]
            fn or(a: Self, b: Self) -> Self { a | b }
            #[inline(always)]
            fn xor(a: Self, b: Self) -> Self { a ^ b }
            #[inline(always)]
            fn truth(a: Self) -> bool { a != 0 }
            #[inline(always)]
            fn of_bool(b: bool) -> Self { b as $t }
        }
    )*};
}
int_arith!(i8, i16, i32, i64, i128, u8, u16, u32, u64);

macro_rules! float_arith {
    ($($t:ty),*) => {$(
        impl Arith for $t {
            #[inline(always)]
            fn add(a: Self, b: Self) -> Self { a + b }
            #[inline(always)]
            fn mul(a: Self, b: Self) -> Self { a * b }
            #[inline(always)]
            fn max(a: Self, b: Self) -> Self { if b > a { b } else { a } }
            #[inline(always)]
            fn min(a: Self, b: Self) -> Self { if b < a { b } else { a } }
        }
    )*};
}
float_arith!(f32, f64);

/// A complex number of two `T` (C `float _Complex`, Fortran `COMPLEX`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Complex<T> {
    /// Real part.
    pub re: T,
    /// Imaginary part.
    pub im: T,
}

impl<T: Scalar> Scalar for Complex<T> {
    const N: usize = 2 * T::N;
    #[inline(always)]
    fn ld(b: &[u8]) -> Self {
        Complex {
            re: T::ld(&b[..T::N]),
            im: T::ld(&b[T::N..2 * T::N]),
        }
    }
    #[inline(always)]
    fn st(self, b: &mut [u8]) {
        self.re.st(&mut b[..T::N]);
        self.im.st(&mut b[T::N..2 * T::N]);
    }
}

/// Applies `f(in, inout)` elementwise, storing into `inout`: the loop every elementwise kernel
/// is made of. On x86-64 the same loop is also compiled for AVX2 and AVX-512 and the widest
/// the CPU has is taken (one feature check per call, cached by the standard library).
#[inline(always)]
fn zip<T: Scalar, F: Fn(T, T) -> T + Copy>(i: &[u8], o: &mut [u8], f: F) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU supports AVX-512F (checked just above).
            return unsafe { zip_avx512(i, o, f) };
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked just above).
            return unsafe { zip_avx2(i, o, f) };
        }
    }
    zip_plain(i, o, f)
}

#[inline(always)]
fn zip_plain<T: Scalar, F: Fn(T, T) -> T + Copy>(i: &[u8], o: &mut [u8], f: F) {
    for (o, i) in o.chunks_exact_mut(T::N).zip(i.chunks_exact(T::N)) {
        f(T::ld(i), T::ld(o)).st(o);
    }
}

/// [`zip_plain`] compiled for AVX2. Safety: the CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn zip_avx2<T: Scalar, F: Fn(T, T) -> T + Copy>(i: &[u8], o: &mut [u8], f: F) {
    zip_plain(i, o, f)
}

/// [`zip_plain`] compiled for AVX-512F. Safety: the CPU must support AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn zip_avx512<T: Scalar, F: Fn(T, T) -> T + Copy>(i: &[u8], o: &mut [u8], f: F) {
    zip_plain(i, o, f)
}

/// MPI_SUM.
pub fn sum<T: Arith>(i: &[u8], o: &mut [u8]) {
    zip::<T, _>(i, o, T::add)
}
/// MPI_PROD.
pub fn prod<T: Arith>(i: &[u8], o: &mut [u8]) {
    zip::<T, _>(i, o, T::mul)
}
/// MPI_MAX.
pub fn max<T: Arith>(i: &[u8], o: &mut [u8]) {
    zip::<T, _>(i, o, T::max)
}
/// MPI_MIN.
pub fn min<T: Arith>(i: &[u8], o: &mut [u8]) {
    zip::<T, _>(i, o, T::min)
}
/// MPI_BAND.
pub fn band<T: Bits>(i: &[u8], o: &mut [u8]) {
    zip::<T, _>(i, o, T::and)
}
/// MPI_BOR.
pub fn bor<T: Bits>(i: &[u8], o: &mut [u8]) {
    zip::<T, _>(i, o, T::or)
}
/// MPI_BXOR.
pub fn bxor<T: Bits>(i: &[u8], o: &mut [u8]) {
    zip::<T, _>(i, o, T::xor)
}
/// MPI_LAND (result 1 or 0).
pub fn land<T: Bits>(i: &[u8], o: &mut [u8]) {
    zip::<T, _>(i, o, |a, b| T::of_bool(T::truth(a) && T::truth(b)))
}
/// MPI_LOR.
pub fn lor<T: Bits>(i: &[u8], o: &mut [u8]) {
    zip::<T, _>(i, o, |a, b| T::of_bool(T::truth(a) || T::truth(b)))
}
/// MPI_LXOR.
pub fn lxor<T: Bits>(i: &[u8], o: &mut [u8]) {
    zip::<T, _>(i, o, |a, b| T::of_bool(T::truth(a) != T::truth(b)))
}

/// MPI_SUM on complex numbers.
pub fn csum<T: Arith>(i: &[u8], o: &mut [u8]) {
    zip::<Complex<T>, _>(i, o, |a, b| Complex {
        re: T::add(a.re, b.re),
        im: T::add(a.im, b.im),
    })
}

/// MPI_PROD on complex numbers: `(ar br - ai bi) + (ar bi + ai br) i`.
pub fn cprod<T: Arith + std::ops::Sub<Output = T>>(i: &[u8], o: &mut [u8]) {
    zip::<Complex<T>, _>(i, o, |a, b| Complex {
        re: T::mul(a.re, b.re) - T::mul(a.im, b.im),
        im: T::add(T::mul(a.re, b.im), T::mul(a.im, b.re)),
    })
}

/// MPI_REPLACE: `inout = in`.
pub fn replace(i: &[u8], o: &mut [u8]) {
    let n = o.len().min(i.len());
    o[..n].copy_from_slice(&i[..n]);
}

/// MPI_NO_OP: `inout` unchanged.
pub fn no_op(_: &[u8], _: &mut [u8]) {}

/// MAXLOC/MINLOC on a value-index pair: value `V` at offset 0, index `I` at offset `AT`,
/// elements `EXT` bytes apart. `MAX` selects MAXLOC. A strictly better value wins with its
/// index; equal values keep the lower index.
pub fn loc<V, I, const AT: usize, const EXT: usize, const MAX: bool>(i: &[u8], o: &mut [u8])
where
    V: Scalar + PartialOrd,
    I: Scalar + PartialOrd,
{
    for (o, i) in o.chunks_exact_mut(EXT).zip(i.chunks_exact(EXT)) {
        let (av, bv) = (V::ld(i), V::ld(o));
        let better = if MAX { av > bv } else { av < bv };
        let ai = I::ld(&i[AT..]);
        if better {
            av.st(o);
            ai.st(&mut o[AT..]);
        } else if av == bv && ai < I::ld(&o[AT..]) {
            ai.st(&mut o[AT..]);
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn bytes<T: Scalar>(v: &[T]) -> Vec<u8> {
        let mut b = vec![0u8; v.len() * T::N];
        for (x, c) in v.iter().zip(b.chunks_exact_mut(T::N)) {
            x.st(c);
        }
        b
    }
    fn values<T: Scalar>(b: &[u8]) -> Vec<T> {
        b.chunks_exact(T::N).map(T::ld).collect()
    }

    /// Runs `k` on `a` (in) and `b` (inout) and compares with `reference` elementwise.
    fn check<T: Scalar + PartialEq + std::fmt::Debug>(
        k: Kernel,
        a: &[T],
        b: &[T],
        reference: impl Fn(T, T) -> T,
    ) {
        let ib = bytes(a);
        let mut ob = bytes(b);
        k(&ib, &mut ob);
        let got: Vec<T> = values(&ob);
        for (n, ((x, y), g)) in a.iter().zip(b).zip(&got).enumerate() {
            assert_eq!(*g, reference(*x, *y), "element {n}: {x:?} op {y:?}");
        }
    }

    fn ints<T: TryFrom<i64>>(n: usize, seed: i64) -> Vec<T>
    where
        <T as TryFrom<i64>>::Error: std::fmt::Debug,
    {
        (0..n as i64)
            .map(|k| {
                T::try_from((k * 37 + seed * 11) % 120 - if seed % 2 == 0 { 0 } else { 60 })
                    .unwrap_or_else(|_| T::try_from(0).unwrap())
            })
            .collect()
    }

    macro_rules! int_cases {
        ($($t:ty),*) => {$({
            for n in [0usize, 1, 7, 64, 1003] {
                let a: Vec<$t> = ints(n, 1);
                let b: Vec<$t> = ints(n, 2);
                check::<$t>(sum::<$t>, &a, &b, |x, y| x.wrapping_add(y));
                check::<$t>(prod::<$t>, &a, &b, |x, y| x.wrapping_mul(y));
                check::<$t>(max::<$t>, &a, &b, |x, y| std::cmp::max(x, y));
                check::<$t>(min::<$t>, &a, &b, |x, y| std::cmp::min(x, y));
                check::<$t>(band::<$t>, &a, &b, |x, y| x & y);
                check::<$t>(bor::<$t>, &a, &b, |x, y| x | y);
                check::<$t>(bxor::<$t>, &a, &b, |x, y| x ^ y);
                check::<$t>(land::<$t>, &a, &b, |x, y| ((x != 0) && (y != 0)) as $t);
                check::<$t>(lor::<$t>, &a, &b, |x, y| ((x != 0) || (y != 0)) as $t);
                check::<$t>(lxor::<$t>, &a, &b, |x, y| ((x != 0) != (y != 0)) as $t);
                check::<$t>(replace, &a, &b, |x, _| x);
                check::<$t>(no_op, &a, &b, |_, y| y);
            }
            // Wrap-around.
            check::<$t>(sum::<$t>, &[<$t>::MAX], &[1], |x, y| x.wrapping_add(y));
            check::<$t>(prod::<$t>, &[<$t>::MAX], &[<$t>::MAX], |x, y| x.wrapping_mul(y));
        })*};
    }

    #[test]
    fn integer_kernels_match_scalar_reference() {
        int_cases!(i8, i16, i32, i64, i128, u8, u16, u32, u64);
    }

    macro_rules! float_cases {
        ($($t:ty),*) => {$({
            for n in [0usize, 1, 7, 64, 1003] {
                let a: Vec<$t> = (0..n).map(|k| (k as $t) * 0.37 - 11.0).collect();
                let b: Vec<$t> = (0..n).map(|k| 7.5 - (k as $t) * 0.11).collect();
                check::<$t>(sum::<$t>, &a, &b, |x, y| x + y);
                check::<$t>(prod::<$t>, &a, &b, |x, y| x * y);
                check::<$t>(max::<$t>, &a, &b, |x, y| if y > x { y } else { x });
                check::<$t>(min::<$t>, &a, &b, |x, y| if y < x { y } else { x });
                let ca: Vec<Complex<$t>> = a.iter().zip(&b).map(|(&re, &im)| Complex { re, im }).collect();
                let cb: Vec<Complex<$t>> = b.iter().zip(&a).map(|(&re, &im)| Complex { re: re * 0.5, im }).collect();
                check::<Complex<$t>>(csum::<$t>, &ca, &cb, |x, y| Complex { re: x.re + y.re, im: x.im + y.im });
                check::<Complex<$t>>(cprod::<$t>, &ca, &cb, |x, y| Complex {
                    re: x.re * y.re - x.im * y.im,
                    im: x.re * y.im + x.im * y.re,
                });
            }
        })*};
    }

    #[test]
    fn float_and_complex_kernels_match_scalar_reference() {
        float_cases!(f32, f64);
    }

    /// The plain, AVX2 and AVX-512 builds of the loop agree (whichever the CPU can run), on
    /// lengths around the vector widths.
    #[test]
    fn every_vector_width_agrees() {
        for n in [0usize, 1, 3, 7, 8, 15, 16, 17, 31, 33, 64, 127, 1001] {
            let a: Vec<f64> = (0..n).map(|k| k as f64 * 0.5 - 3.0).collect();
            let b: Vec<f64> = (0..n).map(|k| 2.0 - k as f64).collect();
            let want: Vec<f64> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
            let ai: Vec<i8> = (0..n).map(|k| (k % 200) as i8).collect();
            let bi: Vec<i8> = (0..n).map(|k| (k * 3 % 250) as i8).collect();
            let wanti: Vec<i8> = ai
                .iter()
                .zip(&bi)
                .map(|(x, y)| x.wrapping_add(*y))
                .collect();
            type Run = fn(&[u8], &mut [u8], bool);
            let mut runs: Vec<Run> = vec![|i, o, f| {
                if f {
                    zip_plain(i, o, f64::add)
                } else {
                    zip_plain(i, o, i8::add)
                }
            }];
            #[cfg(target_arch = "x86_64")]
            {
                if std::arch::is_x86_feature_detected!("avx2") {
                    // SAFETY: AVX2 is available (checked).
                    runs.push(|i, o, f| unsafe {
                        if f {
                            zip_avx2(i, o, f64::add)
                        } else {
                            zip_avx2(i, o, i8::add)
                        }
                    });
                }
                if std::arch::is_x86_feature_detected!("avx512f") {
                    // SAFETY: AVX-512F is available (checked).
                    runs.push(|i, o, f| unsafe {
                        if f {
                            zip_avx512(i, o, f64::add)
                        } else {
                            zip_avx512(i, o, i8::add)
                        }
                    });
                }
            }
            for run in runs {
                let mut ob = bytes(&b);
                run(&bytes(&a), &mut ob, true);
                assert_eq!(values::<f64>(&ob), want, "f64, n = {n}");
                let mut ob = bytes(&bi);
                run(&bytes(&ai), &mut ob, false);
                assert_eq!(values::<i8>(&ob), wanti, "i8, n = {n}");
            }
        }
    }

    #[test]
    fn unaligned_buffers() {
        let a: Vec<f64> = (0..33).map(|k| k as f64).collect();
        let ib = bytes(&a);
        let mut ob = vec![0u8; ib.len() + 3];
        let mut ib2 = vec![0u8; ib.len() + 5];
        ib2[5..].copy_from_slice(&ib);
        ob[3..].copy_from_slice(&ib);
        sum::<f64>(&ib2[5..], &mut ob[3..]);
        let got: Vec<f64> = values(&ob[3..]);
        assert_eq!(got, a.iter().map(|x| 2.0 * x).collect::<Vec<_>>());
    }

    /// Reference MAXLOC/MINLOC on (value, index) pairs.
    fn loc_ref<V: PartialOrd + Copy, I: PartialOrd + Copy>(
        max: bool,
        a: (V, I),
        b: (V, I),
    ) -> (V, I) {
        if (max && a.0 > b.0) || (!max && a.0 < b.0) {
            a
        } else if a.0 == b.0 {
            (b.0, if a.1 < b.1 { a.1 } else { b.1 })
        } else {
            b
        }
    }

    fn check_loc<V, I, const AT: usize, const EXT: usize>(vals: &[(V, I)], other: &[(V, I)])
    where
        V: Scalar + PartialOrd + std::fmt::Debug,
        I: Scalar + PartialOrd + std::fmt::Debug,
    {
        let enc = |v: &[(V, I)]| {
            let mut b = vec![0xa5u8; v.len() * EXT];
            for (x, c) in v.iter().zip(b.chunks_exact_mut(EXT)) {
                x.0.st(c);
                x.1.st(&mut c[AT..]);
            }
            b
        };
        for max in [true, false] {
            let ib = enc(vals);
            let mut ob = enc(other);
            if max {
                loc::<V, I, AT, EXT, true>(&ib, &mut ob);
            } else {
                loc::<V, I, AT, EXT, false>(&ib, &mut ob);
            }
            for (k, c) in ob.chunks_exact(EXT).enumerate() {
                let got = (V::ld(c), I::ld(&c[AT..]));
                let want = loc_ref(max, vals[k], other[k]);
                assert!(
                    got.0 == want.0 && got.1 == want.1,
                    "{k}: {got:?} != {want:?}"
                );
                // Padding untouched.
                assert!(c[V::N..AT].iter().all(|&p| p == 0xa5));
                assert!(c[AT + I::N..].iter().all(|&p| p == 0xa5));
            }
        }
    }

    #[test]
    fn maxloc_minloc_with_ties_take_the_lower_index() {
        let a: Vec<(f64, i32)> = (0..41).map(|k| ((k % 5) as f64, k)).collect();
        let b: Vec<(f64, i32)> = (0..41).map(|k| ((k % 3) as f64, 40 - k)).collect();
        check_loc::<f64, i32, 8, 16>(&a, &b);
        let a: Vec<(i16, i32)> = (0..41).map(|k| ((k % 5) as i16, k)).collect();
        let b: Vec<(i16, i32)> = (0..41).map(|k| ((k % 3) as i16, 40 - k)).collect();
        check_loc::<i16, i32, 4, 8>(&a, &b);
        let a: Vec<(f32, f32)> = (0..41).map(|k| ((k % 5) as f32, k as f32)).collect();
        let b: Vec<(f32, f32)> = (0..41).map(|k| ((k % 3) as f32, (40 - k) as f32)).collect();
        check_loc::<f32, f32, 4, 8>(&a, &b);
        let a: Vec<(i64, i32)> = (0..41).map(|k| ((k % 5) as i64 - 2, k)).collect();
        let b: Vec<(i64, i32)> = (0..41).map(|k| ((k % 3) as i64 - 1, 40 - k)).collect();
        check_loc::<i64, i32, 8, 16>(&a, &b);
    }
}
