/* op_loc: MPI_MAXLOC and MPI_MINLOC on every pair type (MPI_FLOAT_INT, MPI_DOUBLE_INT,
 * MPI_LONG_INT, MPI_2INT, MPI_SHORT_INT, MPI_LONG_DOUBLE_INT, MPI_2REAL,
 * MPI_2DOUBLE_PRECISION, MPI_2INTEGER) through MPI_Reduce_local, with the buffers laid out
 * as the C structs (padding included) and many ties: a larger (smaller) value wins with its
 * index, equal values keep the lower index. */
#include "mtest.h"

static const long lengths[] = {0, 1, 7, 1000003};
#define NLEN ((int)(sizeof lengths / sizeof lengths[0]))

#define DEFINE_LOC_TEST(FN, V, I)                                                         \
    typedef struct { V v; I i; } FN##_t;                                                    \
    static void FN(MPI_Datatype dt, const char *name)                                       \
    {                                                                                       \
        if (dt == MPI_DATATYPE_NULL) return;                                                \
        for (int max = 0; max < 2; max++) {                                                 \
            for (int l = 0; l < NLEN; l++) {                                                \
                long n = lengths[l], bad = 0, first = -1;                                   \
                FN##_t *a = malloc((n + 1) * sizeof *a), *b = malloc((n + 1) * sizeof *b);  \
                FN##_t *r = malloc((n + 1) * sizeof *r);                                    \
                for (long k = 0; k < n; k++) {                                              \
                    a[k].v = (V)((k * 7 + 3) % 5) - (V)2;                                   \
                    a[k].i = (I)((k * 3) % 17);                                             \
                    b[k].v = (V)((k * 5 + 1) % 5) - (V)2;                                   \
                    b[k].i = (I)((k * 11) % 13);                                            \
                    r[k] = b[k];                                                            \
                    if (max ? a[k].v > b[k].v : a[k].v < b[k].v)                            \
                        r[k] = a[k];                                                        \
                    else if (a[k].v == b[k].v && a[k].i < b[k].i)                           \
                        r[k].i = a[k].i;                                                    \
                }                                                                           \
                int rc = MPI_Reduce_local(a, b, (int)n, dt, max ? MPI_MAXLOC : MPI_MINLOC); \
                if (CHECK(rc == MPI_SUCCESS, "%s on %s n=%ld: %s", max ? "MAXLOC" : "MINLOC", \
                          name, n, MTest_Describe(rc))) {                                   \
                    for (long k = 0; k < n; k++)                                            \
                        if (b[k].v != r[k].v || b[k].i != r[k].i) {                         \
                            if (first < 0) first = k;                                       \
                            bad++;                                                          \
                        }                                                                   \
                    CHECK(bad == 0, "%s on %s n=%ld: %ld wrong, first at %ld",              \
                          max ? "MAXLOC" : "MINLOC", name, n, bad, first);                  \
                }                                                                           \
                free(a);                                                                    \
                free(b);                                                                    \
                free(r);                                                                    \
            }                                                                               \
        }                                                                                   \
    }

DEFINE_LOC_TEST(t_float_int, float, int)
DEFINE_LOC_TEST(t_double_int, double, int)
DEFINE_LOC_TEST(t_long_int, long, int)
DEFINE_LOC_TEST(t_2int, int, int)
DEFINE_LOC_TEST(t_short_int, short, int)
DEFINE_LOC_TEST(t_ldouble_int, long double, int)
DEFINE_LOC_TEST(t_2real, float, float)
DEFINE_LOC_TEST(t_2double, double, double)

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    MTest_Errors_return_all();

    t_float_int(MPI_FLOAT_INT, "MPI_FLOAT_INT");
    t_double_int(MPI_DOUBLE_INT, "MPI_DOUBLE_INT");
    t_long_int(MPI_LONG_INT, "MPI_LONG_INT");
    t_2int(MPI_2INT, "MPI_2INT");
    t_short_int(MPI_SHORT_INT, "MPI_SHORT_INT");
    t_ldouble_int(MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT");
    t_2real(MPI_2REAL, "MPI_2REAL");
    t_2double(MPI_2DOUBLE_PRECISION, "MPI_2DOUBLE_PRECISION");
    t_2int(MPI_2INTEGER, "MPI_2INTEGER");

    /* A hand-made case: equal values everywhere, the lower index must win both ways. */
    {
        struct { double v; int i; } in[3] = {{1.0, 5}, {1.0, 2}, {-1.0, 9}},
                                    io[3] = {{1.0, 3}, {1.0, 7}, {-1.0, 1}};
        int rc = MPI_Reduce_local(in, io, 3, MPI_DOUBLE_INT, MPI_MAXLOC);
        CHECK(rc == MPI_SUCCESS && io[0].i == 3 && io[1].i == 2 && io[2].i == 1,
              "ties: got %d %d %d, want 3 2 1", io[0].i, io[1].i, io[2].i);
    }

    return MTest_Finalize(mtest_errors);
}
