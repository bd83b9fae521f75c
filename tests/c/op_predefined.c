/* op_predefined: every predefined reduction op on every datatype the standard allows it for,
 * through MPI_Reduce_local (and MPI_Reduce_local_c on MPIs of standard 4.0 or later), against
 * a reference computed here: inoutbuf[i] = inbuf[i] op inoutbuf[i].
 *
 * Lengths 0, 1, 7 and 1000003 exercise empty calls, scalar tails and long vector loops.
 * Values are small integers, so every floating result is exact whatever the evaluation order.
 * MPI_REPLACE and MPI_NO_OP belong to the accumulate functions (op_errors checks that
 * MPI_Reduce_local refuses them). Datatypes an MPI does not provide (MPI_DATATYPE_NULL, e.g. Fortran kinds) are skipped.
 * The half-precision and quad-precision Fortran kinds (REAL2, REAL16, COMPLEX4, COMPLEX32)
 * are checked on hympi only: MPICH maps MPI_REAL16 to long double, gfortran to __float128. */
#include <stdbool.h>
#include "mtest.h"

static const long lengths[] = {0, 1, 7, 1000003};
#define NLEN ((int)(sizeof lengths / sizeof lengths[0]))

enum { SUM, PROD, MAX, MIN, LAND, LOR, LXOR, BAND, BOR, BXOR, NOPS };
static const char *opname[NOPS] = {"SUM", "PROD", "MAX", "MIN", "LAND", "LOR", "LXOR",
                                   "BAND", "BOR", "BXOR"};
static MPI_Op ophandle(int op)
{
    switch (op) {
    case SUM: return MPI_SUM;
    case PROD: return MPI_PROD;
    case MAX: return MPI_MAX;
    case MIN: return MPI_MIN;
    case LAND: return MPI_LAND;
    case LOR: return MPI_LOR;
    case LXOR: return MPI_LXOR;
    case BAND: return MPI_BAND;
    case BOR: return MPI_BOR;
    default: return MPI_BXOR;
    }
}

#define ARITH_OPS ((1 << SUM) | (1 << PROD) | (1 << MAX) | (1 << MIN))
#define LOGIC_OPS ((1 << LAND) | (1 << LOR) | (1 << LXOR))
#define BIT_OPS ((1 << BAND) | (1 << BOR) | (1 << BXOR))
#define CPLX_OPS ((1 << SUM) | (1 << PROD))

static int use_c; /* alternate MPI_Reduce_local and MPI_Reduce_local_c */

static int reduce_local(void *in, void *io, long n, MPI_Datatype dt, MPI_Op op)
{
#if MPI_VERSION >= 4
    if (use_c++ & 1) return MPI_Reduce_local_c(in, io, (MPI_Count)n, dt, op);
#endif
    return MPI_Reduce_local(in, io, (int)n, dt, op);
}

/* Small values: signed types get -5..5, unsigned ones 0..10; zeros included. */
#define VAL(T, i, seed) \
    (((T)-1 < (T)0) ? (T)((long)(((i) * 7 + (seed)) % 11) - 5) : (T)(((i) * 7 + (seed)) % 11))

/* Integer-like types (also float/double for the arithmetic ops): reference per op. */
#define DEFINE_REAL_TEST(FN, T)                                                           \
    static void FN(MPI_Datatype dt, const char *name, unsigned ops)                         \
    {                                                                                       \
        if (dt == MPI_DATATYPE_NULL) return;                                                \
        for (int op = 0; op < NOPS; op++) {                                                 \
            if (!(ops & (1u << op))) continue;              \
            for (int l = 0; l < NLEN; l++) {                                                \
                long n = lengths[l], bad = 0, first = -1;                                   \
                T *a = malloc((n + 1) * sizeof(T)), *b = malloc((n + 1) * sizeof(T));      \
                T *r = malloc((n + 1) * sizeof(T));                                         \
                for (long i = 0; i < n; i++) {                                              \
                    a[i] = VAL(T, i, 3);                                                    \
                    b[i] = VAL(T, i * 3, 1);                                                \
                    T x = a[i], y = b[i];                                                   \
                    switch (op) {                                                           \
                    case SUM: r[i] = (T)(x + y); break;                                     \
                    case PROD: r[i] = (T)(x * y); break;                                    \
                    case MAX: r[i] = y > x ? y : x; break;                                  \
                    case MIN: r[i] = y < x ? y : x; break;                                  \
                    case LAND: r[i] = (T)((x != 0) && (y != 0)); break;                     \
                    case LOR: r[i] = (T)((x != 0) || (y != 0)); break;                      \
                    case LXOR: r[i] = (T)((x != 0) != (y != 0)); break;                     \
                    default: r[i] = 0;                                                      \
                    }                                                                       \
                }                                                                           \
                int rc = reduce_local(a, b, n, dt, ophandle(op));                           \
                if (!CHECK(rc == MPI_SUCCESS, "%s on %s n=%ld: %s", opname[op], name, n,    \
                           MTest_Describe(rc)))                                             \
                    goto next;                                                              \
                for (long i = 0; i < n; i++)                                                \
                    if (!(b[i] == r[i])) {                                                  \
                        if (first < 0) first = i;                                           \
                        bad++;                                                              \
                    }                                                                       \
                CHECK(bad == 0, "%s on %s n=%ld: %ld wrong elements, first at %ld",         \
                      opname[op], name, n, bad, first);                                     \
            next:                                                                           \
                free(a);                                                                    \
                free(b);                                                                    \
                free(r);                                                                    \
            }                                                                               \
        }                                                                                   \
    }

/* Bitwise ops are not defined on floating types in C: a separate reference. */
#define DEFINE_BIT_TEST(FN, T)                                                            \
    static void FN(MPI_Datatype dt, const char *name)                                       \
    {                                                                                       \
        if (dt == MPI_DATATYPE_NULL) return;                                                \
        for (int op = BAND; op <= BXOR; op++) {                                             \
            for (int l = 0; l < NLEN; l++) {                                                \
                long n = lengths[l], bad = 0;                                               \
                T *a = malloc((n + 1) * sizeof(T)), *b = malloc((n + 1) * sizeof(T));      \
                T *r = malloc((n + 1) * sizeof(T));                                         \
                for (long i = 0; i < n; i++) {                                              \
                    a[i] = (T)((i * 0x9e3779b97f4a7c15ull) >> 7);                           \
                    b[i] = (T)((i * 0xbf58476d1ce4e5b9ull) >> 11);                          \
                    r[i] = op == BAND ? (T)(a[i] & b[i])                                    \
                                      : op == BOR ? (T)(a[i] | b[i]) : (T)(a[i] ^ b[i]);     \
                }                                                                           \
                int rc = reduce_local(a, b, n, dt, ophandle(op));                           \
                if (CHECK(rc == MPI_SUCCESS, "%s on %s n=%ld: %s", opname[op], name, n,     \
                          MTest_Describe(rc))) {                                            \
                    for (long i = 0; i < n; i++) bad += b[i] != r[i];                       \
                    CHECK(bad == 0, "%s on %s n=%ld: %ld wrong elements", opname[op], name, \
                          n, bad);                                                          \
                }                                                                           \
                free(a);                                                                    \
                free(b);                                                                    \
                free(r);                                                                    \
            }                                                                               \
        }                                                                                   \
    }

/* Complex: SUM and PROD, compared part by part. */
#define DEFINE_COMPLEX_TEST(FN, R)                                                         \
    typedef struct { R p[2]; } FN##_t;                                                      \
    static void FN(MPI_Datatype dt, const char *name)                                       \
    {                                                                                       \
        if (dt == MPI_DATATYPE_NULL) return;                                                \
        for (int op = SUM; op <= PROD; op++) {                                              \
            for (int l = 0; l < NLEN; l++) {                                                \
                long n = lengths[l], bad = 0;                                               \
                FN##_t *a = malloc((n + 1) * sizeof *a), *b = malloc((n + 1) * sizeof *b); \
                FN##_t *r = malloc((n + 1) * sizeof *r);                                    \
                for (long i = 0; i < n; i++) {                                              \
                    R ar = VAL(R, i, 3), ai = VAL(R, i, 5), br = VAL(R, i * 3, 1),          \
                      bi = VAL(R, i * 5, 2);                                                \
                    R ra = op == SUM ? ar + br : ar * br - ai * bi;                         \
                    R ri = op == SUM ? ai + bi : ar * bi + ai * br;                         \
                    memcpy((R *)&a[i], &ar, sizeof(R));                                     \
                    memcpy((R *)&a[i] + 1, &ai, sizeof(R));                                 \
                    memcpy((R *)&b[i], &br, sizeof(R));                                     \
                    memcpy((R *)&b[i] + 1, &bi, sizeof(R));                                 \
                    memcpy((R *)&r[i], &ra, sizeof(R));                                     \
                    memcpy((R *)&r[i] + 1, &ri, sizeof(R));                                 \
                }                                                                           \
                int rc = reduce_local(a, b, n, dt, ophandle(op));                           \
                if (CHECK(rc == MPI_SUCCESS, "%s on %s n=%ld: %s", opname[op], name, n,     \
                          MTest_Describe(rc))) {                                            \
                    for (long i = 0; i < n; i++)                                            \
                        bad += ((R *)&b[i])[0] != ((R *)&r[i])[0] ||                        \
                               ((R *)&b[i])[1] != ((R *)&r[i])[1];                          \
                    CHECK(bad == 0, "%s on %s n=%ld: %ld wrong elements", opname[op], name, \
                          n, bad);                                                          \
                }                                                                           \
                free(a);                                                                    \
                free(b);                                                                    \
                free(r);                                                                    \
            }                                                                               \
        }                                                                                   \
    }

DEFINE_REAL_TEST(t_schar, signed char)
DEFINE_REAL_TEST(t_uchar, unsigned char)
DEFINE_REAL_TEST(t_short, short)
DEFINE_REAL_TEST(t_ushort, unsigned short)
DEFINE_REAL_TEST(t_int, int)
DEFINE_REAL_TEST(t_uint, unsigned)
DEFINE_REAL_TEST(t_long, long)
DEFINE_REAL_TEST(t_ulong, unsigned long)
DEFINE_REAL_TEST(t_llong, long long)
DEFINE_REAL_TEST(t_ullong, unsigned long long)
DEFINE_REAL_TEST(t_i8, int8_t)
DEFINE_REAL_TEST(t_u8, uint8_t)
DEFINE_REAL_TEST(t_i16, int16_t)
DEFINE_REAL_TEST(t_u16, uint16_t)
DEFINE_REAL_TEST(t_i32, int32_t)
DEFINE_REAL_TEST(t_u32, uint32_t)
DEFINE_REAL_TEST(t_i64, int64_t)
DEFINE_REAL_TEST(t_u64, uint64_t)
DEFINE_REAL_TEST(t_i128, __int128)
DEFINE_REAL_TEST(t_aint, MPI_Aint)
DEFINE_REAL_TEST(t_offset, MPI_Offset)
DEFINE_REAL_TEST(t_count, MPI_Count)
DEFINE_REAL_TEST(t_float, float)
DEFINE_REAL_TEST(t_double, double)
DEFINE_REAL_TEST(t_ldouble, long double)
DEFINE_REAL_TEST(t_bool, bool)
DEFINE_BIT_TEST(b_schar, signed char)
DEFINE_BIT_TEST(b_uchar, unsigned char)
DEFINE_BIT_TEST(b_short, short)
DEFINE_BIT_TEST(b_ushort, unsigned short)
DEFINE_BIT_TEST(b_int, int)
DEFINE_BIT_TEST(b_uint, unsigned)
DEFINE_BIT_TEST(b_long, long)
DEFINE_BIT_TEST(b_ulong, unsigned long)
DEFINE_BIT_TEST(b_llong, long long)
DEFINE_BIT_TEST(b_ullong, unsigned long long)
DEFINE_BIT_TEST(b_i8, int8_t)
DEFINE_BIT_TEST(b_u8, uint8_t)
DEFINE_BIT_TEST(b_i16, int16_t)
DEFINE_BIT_TEST(b_u16, uint16_t)
DEFINE_BIT_TEST(b_i32, int32_t)
DEFINE_BIT_TEST(b_u32, uint32_t)
DEFINE_BIT_TEST(b_i64, int64_t)
DEFINE_BIT_TEST(b_u64, uint64_t)
DEFINE_BIT_TEST(b_i128, __int128)
DEFINE_COMPLEX_TEST(c_float, float)
DEFINE_COMPLEX_TEST(c_double, double)
DEFINE_COMPLEX_TEST(c_ldouble, long double)
#ifdef HYMPI
DEFINE_REAL_TEST(t_half, _Float16)
DEFINE_REAL_TEST(t_quad, __float128)
DEFINE_COMPLEX_TEST(c_half, _Float16)
DEFINE_COMPLEX_TEST(c_quad, __float128)
#endif

#define CINT(FN, BFN, DT) \
    do {                 \
        FN(DT, #DT, ARITH_OPS | LOGIC_OPS); \
        BFN(DT, #DT);    \
    } while (0)
#define FINT(FN, BFN, DT) \
    do {                 \
        FN(DT, #DT, ARITH_OPS); \
        BFN(DT, #DT);    \
    } while (0)

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    MTest_Errors_return_all();

    /* C integers: arithmetic, logical and bitwise ops. */
    CINT(t_schar, b_schar, MPI_SIGNED_CHAR);
    CINT(t_uchar, b_uchar, MPI_UNSIGNED_CHAR);
    CINT(t_short, b_short, MPI_SHORT);
    CINT(t_ushort, b_ushort, MPI_UNSIGNED_SHORT);
    CINT(t_int, b_int, MPI_INT);
    CINT(t_uint, b_uint, MPI_UNSIGNED);
    CINT(t_long, b_long, MPI_LONG);
    CINT(t_ulong, b_ulong, MPI_UNSIGNED_LONG);
    CINT(t_llong, b_llong, MPI_LONG_LONG);
    CINT(t_llong, b_llong, MPI_LONG_LONG_INT);
    CINT(t_ullong, b_ullong, MPI_UNSIGNED_LONG_LONG);
    CINT(t_i8, b_i8, MPI_INT8_T);
    CINT(t_u8, b_u8, MPI_UINT8_T);
    CINT(t_i16, b_i16, MPI_INT16_T);
    CINT(t_u16, b_u16, MPI_UINT16_T);
    CINT(t_i32, b_i32, MPI_INT32_T);
    CINT(t_u32, b_u32, MPI_UINT32_T);
    CINT(t_i64, b_i64, MPI_INT64_T);
    CINT(t_u64, b_u64, MPI_UINT64_T);

    /* Fortran integers (gfortran kinds) and the multi-language types: arithmetic and
     * bitwise ops. */
    FINT(t_i32, b_i32, MPI_INTEGER);
    FINT(t_i8, b_i8, MPI_INTEGER1);
    FINT(t_i16, b_i16, MPI_INTEGER2);
    FINT(t_i32, b_i32, MPI_INTEGER4);
    FINT(t_i64, b_i64, MPI_INTEGER8);
#ifdef HYMPI
    FINT(t_i128, b_i128, MPI_INTEGER16);
#endif
    FINT(t_aint, b_i64, MPI_AINT);
    FINT(t_offset, b_i64, MPI_OFFSET);
    FINT(t_count, b_i64, MPI_COUNT);

    /* Floating point. */
    t_float(MPI_FLOAT, "MPI_FLOAT", ARITH_OPS);
    t_double(MPI_DOUBLE, "MPI_DOUBLE", ARITH_OPS);
    t_ldouble(MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", ARITH_OPS);
    t_float(MPI_REAL, "MPI_REAL", ARITH_OPS);
    t_double(MPI_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION", ARITH_OPS);
    t_float(MPI_REAL4, "MPI_REAL4", ARITH_OPS);
    t_double(MPI_REAL8, "MPI_REAL8", ARITH_OPS);
#ifdef HYMPI
    t_half(MPI_REAL2, "MPI_REAL2", ARITH_OPS);
    t_quad(MPI_REAL16, "MPI_REAL16", ARITH_OPS);
#endif

    /* Complex. */
    c_float(MPI_C_FLOAT_COMPLEX, "MPI_C_FLOAT_COMPLEX");
    c_float(MPI_C_COMPLEX, "MPI_C_COMPLEX");
    c_double(MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX");
    c_ldouble(MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX");
    c_float(MPI_COMPLEX, "MPI_COMPLEX");
    c_double(MPI_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX");
    c_float(MPI_COMPLEX8, "MPI_COMPLEX8");
    c_double(MPI_COMPLEX16, "MPI_COMPLEX16");
#ifdef HYMPI
    c_float(MPI_CXX_FLOAT_COMPLEX, "MPI_CXX_FLOAT_COMPLEX");
    c_double(MPI_CXX_DOUBLE_COMPLEX, "MPI_CXX_DOUBLE_COMPLEX");
    c_ldouble(MPI_CXX_LONG_DOUBLE_COMPLEX, "MPI_CXX_LONG_DOUBLE_COMPLEX");
    c_half(MPI_COMPLEX4, "MPI_COMPLEX4");
    c_quad(MPI_COMPLEX32, "MPI_COMPLEX32");
#endif

    /* Logical: C bool and Fortran LOGICAL (gfortran: .true. is 1). */
    t_bool(MPI_C_BOOL, "MPI_C_BOOL", LOGIC_OPS);
    t_i32(MPI_LOGICAL, "MPI_LOGICAL", LOGIC_OPS);
#ifdef HYMPI
    t_bool(MPI_CXX_BOOL, "MPI_CXX_BOOL", LOGIC_OPS);
    t_i8(MPI_LOGICAL1, "MPI_LOGICAL1", LOGIC_OPS);
    t_i16(MPI_LOGICAL2, "MPI_LOGICAL2", LOGIC_OPS);
    t_i32(MPI_LOGICAL4, "MPI_LOGICAL4", LOGIC_OPS);
    t_i64(MPI_LOGICAL8, "MPI_LOGICAL8", LOGIC_OPS);
    t_i128(MPI_LOGICAL16, "MPI_LOGICAL16", LOGIC_OPS);
#endif

    /* Bytes: bitwise ops. */
    b_uchar(MPI_BYTE, "MPI_BYTE");

    return MTest_Finalize(mtest_errors);
}
