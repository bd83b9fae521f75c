//! The "external32" data representation (`MPI_Pack_external`): big-endian, no padding, with
//! the standard's fixed sizes (`long` is 4 bytes, `long double` an IEEE binary128).
//!
//! Conversion works on the native packed stream (what [`super::engine`] produces), walking the
//! type's structure down to its basic types.

use super::derived::{Dtype, Kids};
use crate::core::error::{fail, MpiResult};
use crate::mpi_abi::consts::*;

/// How one component of a basic type is represented.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// Bytes with no order (characters, `MPI_BYTE`, `MPI_PACKED`, booleans).
    Raw,
    /// Two's-complement signed integer.
    Int,
    /// Unsigned integer.
    Uint,
    /// IEEE float of the same size in both representations.
    Float,
    /// x87 80-bit extended (native, 16 bytes with padding) <-> binary128.
    LongDouble,
}

/// Components of a basic type: (native bytes, external32 bytes, kind).
fn components(h: usize) -> Option<&'static [(usize, usize, Kind)]> {
    use Kind::*;
    const LONG: usize = std::mem::size_of::<libc::c_long>();
    Some(match h {
        MPI_CHAR | MPI_SIGNED_CHAR | MPI_UNSIGNED_CHAR | MPI_BYTE | MPI_PACKED | MPI_C_BOOL
        | MPI_CXX_BOOL | MPI_CHARACTER | MPI_INT8_T | MPI_UINT8_T | MPI_LOGICAL1 | MPI_INTEGER1 => {
            &[(1, 1, Raw)]
        }
        MPI_SHORT | MPI_INT16_T | MPI_INTEGER2 => &[(2, 2, Int)],
        MPI_UNSIGNED_SHORT | MPI_UINT16_T | MPI_LOGICAL2 => &[(2, 2, Uint)],
        MPI_INT | MPI_INT32_T | MPI_INTEGER | MPI_INTEGER4 => &[(4, 4, Int)],
        MPI_UNSIGNED | MPI_UINT32_T | MPI_LOGICAL | MPI_LOGICAL4 | MPI_WCHAR => &[(4, 4, Uint)],
        MPI_LONG => &[(LONG, 4, Int)],
        MPI_UNSIGNED_LONG => &[(LONG, 4, Uint)],
        MPI_LONG_LONG | MPI_INT64_T | MPI_INTEGER8 | MPI_AINT | MPI_COUNT | MPI_OFFSET => {
            &[(8, 8, Int)]
        }
        MPI_UNSIGNED_LONG_LONG | MPI_UINT64_T | MPI_LOGICAL8 => &[(8, 8, Uint)],
        MPI_INTEGER16 | MPI_LOGICAL16 => &[(16, 16, Int)],
        MPI_REAL2 => &[(2, 2, Float)],
        MPI_FLOAT | MPI_REAL | MPI_REAL4 => &[(4, 4, Float)],
        MPI_DOUBLE | MPI_DOUBLE_PRECISION | MPI_REAL8 => &[(8, 8, Float)],
        MPI_REAL16 => &[(16, 16, Float)],
        MPI_LONG_DOUBLE => &[(16, 16, LongDouble)],
        MPI_COMPLEX4 => &[(2, 2, Float), (2, 2, Float)],
        MPI_C_FLOAT_COMPLEX | MPI_CXX_FLOAT_COMPLEX | MPI_COMPLEX | MPI_COMPLEX8 => {
            &[(4, 4, Float), (4, 4, Float)]
        }
        MPI_C_DOUBLE_COMPLEX | MPI_CXX_DOUBLE_COMPLEX | MPI_DOUBLE_COMPLEX | MPI_COMPLEX16 => {
            &[(8, 8, Float), (8, 8, Float)]
        }
        MPI_COMPLEX32 => &[(16, 16, Float), (16, 16, Float)],
        MPI_C_LONG_DOUBLE_COMPLEX | MPI_CXX_LONG_DOUBLE_COMPLEX => {
            &[(16, 16, LongDouble), (16, 16, LongDouble)]
        }
        MPI_FLOAT_INT => &[(4, 4, Float), (4, 4, Int)],
        MPI_DOUBLE_INT => &[(8, 8, Float), (4, 4, Int)],
        MPI_LONG_INT => &[(LONG, 4, Int), (4, 4, Int)],
        MPI_2INT | MPI_2INTEGER => &[(4, 4, Int), (4, 4, Int)],
        MPI_SHORT_INT => &[(2, 2, Int), (4, 4, Int)],
        MPI_LONG_DOUBLE_INT => &[(16, 16, LongDouble), (4, 4, Int)],
        MPI_2REAL => &[(4, 4, Float), (4, 4, Float)],
        MPI_2DOUBLE_PRECISION => &[(8, 8, Float), (8, 8, Float)],
        _ => return None,
    })
}

/// Bytes of one element of `t` in external32.
pub fn size(t: &Dtype) -> MpiResult<usize> {
    Ok(match &t.kids {
        Kids::Basic => match components(t.handle) {
            Some(c) => c.iter().map(|x| x.1).sum(),
            None => return unsupported(t.handle),
        },
        Kids::Single { n, child } => times(*n, size(child)?)?,
        Kids::Struct(f) => {
            let mut s = 0usize;
            for (n, c) in f {
                s = s
                    .checked_add(times(*n, size(c)?)?)
                    .map_or_else(too_big, Ok)?;
            }
            s
        }
    })
}

/// `n` copies of `size` bytes (`MPI_ERR_COUNT` when the product overflows).
fn times(n: u64, size: usize) -> MpiResult<usize> {
    usize::try_from(n)
        .ok()
        .and_then(|n| n.checked_mul(size))
        .map_or_else(too_big, Ok)
}

#[cold]
fn too_big<T>() -> MpiResult<T> {
    fail(MPI_ERR_COUNT, "the external32 size overflows")
}

#[cold]
fn unsupported<T>(h: usize) -> MpiResult<T> {
    fail(
        MPI_ERR_TYPE,
        format!("datatype {h:#x} has no external32 representation"),
    )
}

/// Converts one element of native packed data (`src`, `t.size` bytes) to external32 (`dst`)
/// or back (`to_ext` false: `src` is external32, `dst` native). Returns (bytes read, written).
pub fn convert(t: &Dtype, src: &[u8], dst: &mut [u8], to_ext: bool) -> MpiResult<(usize, usize)> {
    match &t.kids {
        Kids::Basic => {
            let Some(comps) = components(t.handle) else {
                return unsupported(t.handle);
            };
            let (mut r, mut w) = (0, 0);
            for &(nat, ext, kind) in comps {
                let (rs, ws) = if to_ext { (nat, ext) } else { (ext, nat) };
                one(&src[r..r + rs], &mut dst[w..w + ws], kind, to_ext)?;
                r += rs;
                w += ws;
            }
            Ok((r, w))
        }
        // Types without data hold no basic elements: nothing to convert, however many.
        Kids::Single { child, .. } if child.size == 0 => Ok((0, 0)),
        Kids::Single { n, child } => {
            let (mut r, mut w) = (0, 0);
            for _ in 0..*n {
                let (a, b) = convert(child, &src[r..], &mut dst[w..], to_ext)?;
                r += a;
                w += b;
            }
            Ok((r, w))
        }
        Kids::Struct(f) => {
            let (mut r, mut w) = (0, 0);
            for (n, c) in f.iter().filter(|(_, c)| c.size > 0) {
                for _ in 0..*n {
                    let (a, b) = convert(c, &src[r..], &mut dst[w..], to_ext)?;
                    r += a;
                    w += b;
                }
            }
            Ok((r, w))
        }
    }
}

/// The representation every basic item of a type shares, when the type is made of one basic
/// type (however nested) whose components are alike: its conversion runs in bulk
/// ([`convert_uniform`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Uniform {
    native: usize,
    external: usize,
    kind: Kind,
}

impl Uniform {
    /// Bytes of one item in memory.
    pub fn native(self) -> usize {
        self.native
    }
    /// Bytes of one item in external32.
    pub fn external(self) -> usize {
        self.external
    }
}

/// The [`Uniform`] representation of `t`'s items, if they have one.
pub fn uniform(t: &Dtype) -> Option<Uniform> {
    if t.size == 0 {
        return None;
    }
    match &t.kids {
        Kids::Basic => {
            let c = components(t.handle)?;
            let (native, external, kind) = c[0];
            (kind != Kind::LongDouble && c.iter().all(|&x| x == c[0])).then_some(Uniform {
                native,
                external,
                kind,
            })
        }
        Kids::Single { child, .. } => uniform(child),
        Kids::Struct(f) => {
            let mut fields = f.iter().filter(|(n, c)| *n > 0 && c.size > 0);
            let first = uniform(&fields.next()?.1)?;
            fields
                .all(|(_, c)| uniform(c) == Some(first))
                .then_some(first)
        }
    }
}

/// Converts the whole items of `src` (native to external32 when `to_ext`, else back) into
/// `dst`, which has room for them, in one pass: byte swaps of the same width, or a change of
/// width for integers (`long` and 4 bytes), checked (`MPI_ERR_CONVERSION` for a value that
/// does not fit).
pub fn convert_uniform(u: Uniform, src: &[u8], dst: &mut [u8], to_ext: bool) -> MpiResult<()> {
    let (rs, ws) = if to_ext {
        (u.native, u.external)
    } else {
        (u.external, u.native)
    };
    let n = src.len() / rs;
    let (src, dst) = (&src[..n * rs], &mut dst[..n * ws]);
    // Native data is little-endian (as everywhere in this module), external32 big-endian:
    // both directions of a same-width item are one byte swap.
    macro_rules! swap {
        ($t:ty, $w:expr) => {
            for (s, d) in src.chunks_exact($w).zip(dst.chunks_exact_mut($w)) {
                let v = <$t>::from_ne_bytes(s.try_into().expect("item width"));
                d.copy_from_slice(&v.swap_bytes().to_ne_bytes());
            }
        };
    }
    match (u.kind, rs, ws) {
        (Kind::Raw, _, _) => dst.copy_from_slice(src),
        (_, 2, 2) => swap!(u16, 2),
        (_, 4, 4) => swap!(u32, 4),
        (_, 8, 8) => swap!(u64, 8),
        (_, 16, 16) => swap!(u128, 16),
        (Kind::Int, 8, 4) => {
            for (s, d) in src.chunks_exact(8).zip(dst.chunks_exact_mut(4)) {
                let v = i64::from_le_bytes(s.try_into().expect("8 bytes"));
                let Ok(w) = i32::try_from(v) else {
                    return fail(
                        MPI_ERR_CONVERSION,
                        format!("value {v} does not fit in 4 bytes of external32"),
                    );
                };
                d.copy_from_slice(&w.to_be_bytes());
            }
        }
        (Kind::Uint, 8, 4) => {
            for (s, d) in src.chunks_exact(8).zip(dst.chunks_exact_mut(4)) {
                let v = u64::from_le_bytes(s.try_into().expect("8 bytes"));
                let Ok(w) = u32::try_from(v) else {
                    return fail(
                        MPI_ERR_CONVERSION,
                        format!("value {v} does not fit in 4 bytes of external32"),
                    );
                };
                d.copy_from_slice(&w.to_be_bytes());
            }
        }
        (Kind::Int, 4, 8) => {
            for (s, d) in src.chunks_exact(4).zip(dst.chunks_exact_mut(8)) {
                let v = i32::from_be_bytes(s.try_into().expect("4 bytes"));
                d.copy_from_slice(&i64::from(v).to_le_bytes());
            }
        }
        (Kind::Uint, 4, 8) => {
            for (s, d) in src.chunks_exact(4).zip(dst.chunks_exact_mut(8)) {
                let v = u32::from_be_bytes(s.try_into().expect("4 bytes"));
                d.copy_from_slice(&u64::from(v).to_le_bytes());
            }
        }
        _ => {
            for (s, d) in src.chunks_exact(rs).zip(dst.chunks_exact_mut(ws)) {
                one(s, d, u.kind, to_ext)?;
            }
        }
    }
    Ok(())
}

fn one(src: &[u8], dst: &mut [u8], kind: Kind, to_ext: bool) -> MpiResult<()> {
    match kind {
        Kind::Raw => dst.copy_from_slice(src),
        Kind::Float => {
            dst.copy_from_slice(src);
            dst.reverse();
        }
        Kind::Int | Kind::Uint => {
            // Read the value (little-endian native or big-endian external), then write it
            // at the other width.
            let mut v: i128 = 0;
            let n = src.len();
            for i in 0..n {
                let b = if to_ext { src[n - 1 - i] } else { src[i] };
                v = (v << 8) | b as i128;
            }
            if kind == Kind::Int && n < 16 && (v >> (8 * n - 1)) & 1 == 1 {
                v -= 1i128 << (8 * n);
            }
            let m = dst.len();
            if m < 16 {
                let fits = match kind {
                    Kind::Int => {
                        let half = 1i128 << (8 * m - 1);
                        (-half..half).contains(&v)
                    }
                    _ => v >= 0 && v < (1i128 << (8 * m)),
                };
                if !fits {
                    return fail(
                        MPI_ERR_CONVERSION,
                        format!("value {v} does not fit in {m} bytes of external32"),
                    );
                }
            }
            for i in 0..m {
                let b = (v >> (8 * i)) as u8;
                if to_ext {
                    dst[m - 1 - i] = b;
                } else {
                    dst[i] = b;
                }
            }
        }
        Kind::LongDouble => {
            if to_ext {
                let mant = u64::from_le_bytes(src[0..8].try_into().unwrap());
                let se = u16::from_le_bytes(src[8..10].try_into().unwrap());
                // binary128: sign, 15-bit exponent (same bias), 112-bit fraction without the
                // explicit integer bit of x87.
                let frac = ((mant << 1) as u128) << 48;
                let q = ((se as u128) << 112) | frac;
                dst.copy_from_slice(&q.to_be_bytes());
            } else {
                let q = u128::from_be_bytes(src.try_into().unwrap());
                let se = (q >> 112) as u16;
                let frac = (q >> 49) as u64 & ((1u64 << 63) - 1);
                let int_bit = if se & 0x7fff != 0 { 1u64 << 63 } else { 0 };
                dst.fill(0);
                dst[0..8].copy_from_slice(&(frac | int_bit).to_le_bytes());
                dst[8..10].copy_from_slice(&se.to_le_bytes());
            }
        }
    }
    Ok(())
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn bulk_conversion_matches_item_by_item() {
        let mut seed = 0x9e3779b97f4a7c15u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for h in [
            MPI_SHORT,
            MPI_INT,
            MPI_UNSIGNED,
            MPI_FLOAT,
            MPI_DOUBLE,
            MPI_LONG,
            MPI_UNSIGNED_LONG,
            MPI_C_DOUBLE_COMPLEX,
            MPI_CHAR,
        ] {
            let t = Dtype::predefined(h).unwrap();
            let u = uniform(&t).unwrap();
            let ext = size(&t).unwrap();
            // 37 items of native data; longs keep to 32 bits so that they convert.
            let mut native = vec![0u8; 37 * t.size];
            for c in native.chunks_exact_mut(t.size) {
                let v = next();
                let v = if h == MPI_LONG || h == MPI_UNSIGNED_LONG {
                    (v >> 33)
                        | if h == MPI_LONG && v & 1 == 1 {
                            !0 << 31
                        } else {
                            0
                        }
                } else {
                    v
                };
                for (i, b) in c.iter_mut().enumerate() {
                    *b = (v >> (8 * (i % 8))) as u8;
                }
            }
            let (mut bulk, mut each) = (vec![0u8; 37 * ext], vec![0u8; 37 * ext]);
            convert_uniform(u, &native, &mut bulk, true).unwrap();
            for i in 0..37 {
                convert(&t, &native[i * t.size..], &mut each[i * ext..], true).unwrap();
            }
            assert_eq!(bulk, each, "to external32, type {h:#x}");
            let mut back = vec![0u8; native.len()];
            convert_uniform(u, &bulk, &mut back, false).unwrap();
            assert_eq!(back, native, "back, type {h:#x}");
        }
        let long = Dtype::predefined(MPI_LONG).unwrap();
        let e = convert_uniform(
            uniform(&long).unwrap(),
            &(1i64 << 40).to_le_bytes(),
            &mut [0u8; 4],
            true,
        )
        .unwrap_err();
        assert_eq!(e.class(), MPI_ERR_CONVERSION);
        assert!(uniform(&Dtype::predefined(MPI_LONG_DOUBLE).unwrap()).is_none());
        assert!(uniform(&Dtype::predefined(MPI_DOUBLE_INT).unwrap()).is_none());
    }

    #[test]
    fn known_bytes() {
        let i = Dtype::predefined(MPI_INT).unwrap();
        let mut out = [0u8; 4];
        convert(&i, &1i32.to_le_bytes(), &mut out, true).unwrap();
        assert_eq!(out, [0, 0, 0, 1]);
        let d = Dtype::predefined(MPI_DOUBLE).unwrap();
        let mut o8 = [0u8; 8];
        convert(&d, &1.0f64.to_le_bytes(), &mut o8, true).unwrap();
        assert_eq!(o8, [0x3f, 0xf0, 0, 0, 0, 0, 0, 0]);
        let l = Dtype::predefined(MPI_LONG).unwrap();
        assert_eq!(size(&l).unwrap(), 4);
        convert(&l, &(-2i64).to_le_bytes(), &mut out, true).unwrap();
        assert_eq!(out, [0xff, 0xff, 0xff, 0xfe]);
        let mut back = [0u8; 8];
        convert(&l, &out, &mut back, false).unwrap();
        assert_eq!(i64::from_le_bytes(back), -2);
        assert!(convert(&l, &(1i64 << 40).to_le_bytes(), &mut out, true).is_err());
        // long double 1.0: x87 mantissa 0x8000.., exponent 0x3fff.
        let ld = Dtype::predefined(MPI_LONG_DOUBLE).unwrap();
        let mut x = [0u8; 16];
        x[7] = 0x80;
        x[8] = 0xff;
        x[9] = 0x3f;
        let mut q = [0u8; 16];
        convert(&ld, &x, &mut q, true).unwrap();
        assert_eq!(&q[..2], &[0x3f, 0xff]);
        assert!(q[2..].iter().all(|&b| b == 0));
        let mut y = [0u8; 16];
        convert(&ld, &q, &mut y, false).unwrap();
        assert_eq!(x, y);
    }
}
