//! Safe wrappers over the C kernels of `ext.c`: the floating types Rust has no type for
//! (x86-64 `long double`, `__float128`, `_Float16`, their complex pairs, and
//! `MPI_LONG_DOUBLE_INT`). Same shape as the Rust kernels: `f(in, inout)` over whole elements.

use super::kernels::Kernel;

mod c {
    extern "C" {
        pub fn hympi_op_ld_sum(i: *const u8, o: *mut u8, n: usize);
        pub fn hympi_op_ld_prod(i: *const u8, o: *mut u8, n: usize);
        pub fn hympi_op_ld_max(i: *const u8, o: *mut u8, n: usize);
        pub fn hympi_op_ld_min(i: *const u8, o: *mut u8, n: usize);
        pub fn hympi_op_cld_sum(i: *const u8, o: *mut u8, n: usize);
        pub fn hympi_op_cld_prod(i: *const u8, o: *mut u8, n: usize);
        pub fn hympi_op_f128_sum(i: *const u8, o: *mut u8, n: usize);
        pub fn hympi_op_f128_prod(i: *const u8, o: *mut u8, n: usize);
        pub fn hympi_op_f128_max(i: *const u8, o: *mut u8, n: usize);
        pub fn hympi_op_f128_min(i: *const u8, o: *mut u8, n: usize);
        pub fn hympi_op_cf128_sum(i: *const u8, o: *mut u8, n: usize);
        pub fn hympi_op_cf128_prod(i: *const u8, o: *mut u8, n: usize);
        pub fn hympi_op_f16_sum(i: *const u8, o: *mut u8, n: usize);
        pub fn hympi_op_f16_prod(i: *const u8, o: *mut u8, n: usize);
        pub fn hympi_op_f16_max(i: *const u8, o: *mut u8, n: usize);
        pub fn hympi_op_f16_min(i: *const u8, o: *mut u8, n: usize);
        pub fn hympi_op_cf16_sum(i: *const u8, o: *mut u8, n: usize);
        pub fn hympi_op_cf16_prod(i: *const u8, o: *mut u8, n: usize);
        pub fn hympi_op_ldi_maxloc(i: *const u8, o: *mut u8, n: usize);
        pub fn hympi_op_ldi_minloc(i: *const u8, o: *mut u8, n: usize);
    }
}

macro_rules! wrap {
    ($($name:ident => $cfn:ident, $ext:expr;)*) => {$(
        #[doc = concat!("`", stringify!($cfn), "` over whole elements of ", stringify!($ext), " bytes.")]
        pub fn $name(i: &[u8], o: &mut [u8]) {
            let n = o.len().min(i.len()) / $ext;
            // SAFETY: the C kernel reads and writes exactly `n * ext` bytes of each buffer, which
            // both slices hold; the slices cannot overlap (one is borrowed mutably); the kernel
            // loads and stores with memcpy, so no alignment is assumed.
            unsafe { c::$cfn(i.as_ptr(), o.as_mut_ptr(), n) }
        }
    )*};
}

wrap! {
    ld_sum => hympi_op_ld_sum, 16;
    ld_prod => hympi_op_ld_prod, 16;
    ld_max => hympi_op_ld_max, 16;
    ld_min => hympi_op_ld_min, 16;
    cld_sum => hympi_op_cld_sum, 32;
    cld_prod => hympi_op_cld_prod, 32;
    f128_sum => hympi_op_f128_sum, 16;
    f128_prod => hympi_op_f128_prod, 16;
    f128_max => hympi_op_f128_max, 16;
    f128_min => hympi_op_f128_min, 16;
    cf128_sum => hympi_op_cf128_sum, 32;
    cf128_prod => hympi_op_cf128_prod, 32;
    f16_sum => hympi_op_f16_sum, 2;
    f16_prod => hympi_op_f16_prod, 2;
    f16_max => hympi_op_f16_max, 2;
    f16_min => hympi_op_f16_min, 2;
    cf16_sum => hympi_op_cf16_sum, 4;
    cf16_prod => hympi_op_cf16_prod, 4;
    ldi_maxloc => hympi_op_ldi_maxloc, 32;
    ldi_minloc => hympi_op_ldi_minloc, 32;
}

/// Kernels by (type, op) for the C types; `None` where the op does not apply.
pub fn real(which: Which, op: super::Builtin) -> Option<Kernel> {
    use super::Builtin::*;
    Some(match (which, op) {
        (Which::LongDouble, Sum) => ld_sum,
        (Which::LongDouble, Prod) => ld_prod,
        (Which::LongDouble, Max) => ld_max,
        (Which::LongDouble, Min) => ld_min,
        (Which::Quad, Sum) => f128_sum,
        (Which::Quad, Prod) => f128_prod,
        (Which::Quad, Max) => f128_max,
        (Which::Quad, Min) => f128_min,
        (Which::Half, Sum) => f16_sum,
        (Which::Half, Prod) => f16_prod,
        (Which::Half, Max) => f16_max,
        (Which::Half, Min) => f16_min,
        _ => return None,
    })
}

/// Complex kernels (SUM, PROD) for the C types.
pub fn complex(which: Which, op: super::Builtin) -> Option<Kernel> {
    use super::Builtin::*;
    Some(match (which, op) {
        (Which::LongDouble, Sum) => cld_sum,
        (Which::LongDouble, Prod) => cld_prod,
        (Which::Quad, Sum) => cf128_sum,
        (Which::Quad, Prod) => cf128_prod,
        (Which::Half, Sum) => cf16_sum,
        (Which::Half, Prod) => cf16_prod,
        _ => return None,
    })
}

/// The floating types implemented in C.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Which {
    /// x86-64 `long double` (80-bit extended in 16 bytes).
    LongDouble,
    /// `__float128` (IEEE binary128, gfortran REAL(16)).
    Quad,
    /// `_Float16` (IEEE binary16, REAL(2)).
    Half,
}
