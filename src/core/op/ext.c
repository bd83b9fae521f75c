/* Reduction kernels for the floating types Rust has no type for: x86-64 `long double` (80-bit
 * extended, stored in 16 bytes), `__float128` (gfortran's REAL(16)), `_Float16` (REAL(2)), their
 * complex pairs, and MPI_LONG_DOUBLE_INT. Built by build.rs with the `cc` crate and called from
 * src/core/op/ext.rs.
 *
 * Every kernel is `f(in, inout, n)`: n elements, `inout[k] = in[k] op inout[k]`, elements `EXT`
 * bytes apart (the C extent). Values are loaded and stored with memcpy, so the buffers need no
 * particular alignment. Only the data bytes of an element are written. */
#include <stddef.h>
#include <string.h>

#define LD_DATA 10 /* bytes of data in an x86-64 long double */

#define LOAD(T, p) ({ T v_; memcpy(&v_, (p), sizeof(T)); v_; })

/* Real kernels: SUM, PROD, MAX, MIN (MAX/MIN as `inout > in ? inout : in`, like the C ops). */
#define REAL_KERNELS(NAME, T, EXT, DATA)                                                      \
    void hympi_op_##NAME##_sum(const unsigned char *in, unsigned char *io, size_t n)          \
    {                                                                                        \
        for (size_t k = 0; k < n; k++) {                                                     \
            T r = LOAD(T, in + k * EXT) + LOAD(T, io + k * EXT);                             \
            memcpy(io + k * EXT, &r, DATA);                                                  \
        }                                                                                    \
    }                                                                                        \
    void hympi_op_##NAME##_prod(const unsigned char *in, unsigned char *io, size_t n)         \
    {                                                                                        \
        for (size_t k = 0; k < n; k++) {                                                     \
            T r = LOAD(T, in + k * EXT) * LOAD(T, io + k * EXT);                             \
            memcpy(io + k * EXT, &r, DATA);                                                  \
        }                                                                                    \
    }                                                                                        \
    void hympi_op_##NAME##_max(const unsigned char *in, unsigned char *io, size_t n)          \
    {                                                                                        \
        for (size_t k = 0; k < n; k++) {                                                     \
            T a = LOAD(T, in + k * EXT), b = LOAD(T, io + k * EXT);                          \
            T r = b > a ? b : a;                                                             \
            memcpy(io + k * EXT, &r, DATA);                                                  \
        }                                                                                    \
    }                                                                                        \
    void hympi_op_##NAME##_min(const unsigned char *in, unsigned char *io, size_t n)          \
    {                                                                                        \
        for (size_t k = 0; k < n; k++) {                                                     \
            T a = LOAD(T, in + k * EXT), b = LOAD(T, io + k * EXT);                          \
            T r = b < a ? b : a;                                                             \
            memcpy(io + k * EXT, &r, DATA);                                                  \
        }                                                                                    \
    }

/* Complex kernels: SUM and PROD on (re, im) pairs of T, each component `HALF` bytes apart
 * (the component size including padding) with `DATA` bytes of data. */
#define COMPLEX_KERNELS(NAME, T, HALF, DATA)                                                  \
    void hympi_op_##NAME##_sum(const unsigned char *in, unsigned char *io, size_t n)          \
    {                                                                                        \
        for (size_t k = 0; k < n; k++) {                                                     \
            const unsigned char *a = in + k * 2 * HALF;                                      \
            unsigned char *b = io + k * 2 * HALF;                                            \
            T re = LOAD(T, a) + LOAD(T, b), im = LOAD(T, a + HALF) + LOAD(T, b + HALF);      \
            memcpy(b, &re, DATA);                                                            \
            memcpy(b + HALF, &im, DATA);                                                     \
        }                                                                                    \
    }                                                                                        \
    void hympi_op_##NAME##_prod(const unsigned char *in, unsigned char *io, size_t n)         \
    {                                                                                        \
        for (size_t k = 0; k < n; k++) {                                                     \
            const unsigned char *a = in + k * 2 * HALF;                                      \
            unsigned char *b = io + k * 2 * HALF;                                            \
            T ar = LOAD(T, a), ai = LOAD(T, a + HALF), br = LOAD(T, b), bi = LOAD(T, b + HALF); \
            T re = ar * br - ai * bi, im = ar * bi + ai * br;                                \
            memcpy(b, &re, DATA);                                                            \
            memcpy(b + HALF, &im, DATA);                                                     \
        }                                                                                    \
    }

REAL_KERNELS(ld, long double, 16, LD_DATA)
COMPLEX_KERNELS(cld, long double, 16, LD_DATA)
REAL_KERNELS(f128, __float128, 16, 16)
COMPLEX_KERNELS(cf128, __float128, 16, 16)
REAL_KERNELS(f16, _Float16, 2, 2)
COMPLEX_KERNELS(cf16, _Float16, 2, 2)

/* MPI_LONG_DOUBLE_INT: { long double value; int index; }, the index at offset 16, extent 32.
 * A larger (smaller) value wins; equal values keep the lower index. */
#define LDI_KERNEL(NAME, CMP)                                                                 \
    void hympi_op_ldi_##NAME(const unsigned char *in, unsigned char *io, size_t n)            \
    {                                                                                        \
        for (size_t k = 0; k < n; k++) {                                                     \
            const unsigned char *a = in + k * 32;                                            \
            unsigned char *b = io + k * 32;                                                  \
            long double av = LOAD(long double, a), bv = LOAD(long double, b);                \
            int ai = LOAD(int, a + 16), bi = LOAD(int, b + 16);                              \
            if (av CMP bv) {                                                                 \
                memcpy(b, a, LD_DATA);                                                       \
                memcpy(b + 16, &ai, sizeof ai);                                              \
            } else if (av == bv && ai < bi) {                                                \
                memcpy(b + 16, &ai, sizeof ai);                                              \
            }                                                                                \
        }                                                                                    \
    }

LDI_KERNEL(maxloc, >)
LDI_KERNEL(minloc, <)
