/* rma_acc_order: one origin's accumulates to one location apply in the order it issued them
 * (the default accumulate_ordering, rar,raw,war,waw), whatever their sizes, and the
 * fetching forms return the values of their place in that order.
 *
 * Rank 0 (origin) and the last rank (target; on another node in network mode), inside
 * MPI_Win_lock_all, for sizes from one double to 2 MiB (the sizes at which an accumulate's
 * data travels apart from its request, and below):
 *  1. MPI_Accumulate(MPI_REPLACE) of the round's value v to n doubles,
 *  2. MPI_Accumulate(MPI_SUM) of 1.0 to the same n doubles,
 *  3. MPI_Accumulate(MPI_SUM) of 0.5 to the first double (a small one behind large ones),
 *  4. MPI_Get_accumulate(MPI_SUM) of 2.0 to the same n doubles, fetching what was there,
 *  5. MPI_Accumulate(MPI_PROD) of 3.0, into every other double (a strided target type) when
 *     n > 1, else into the one double,
 * with no flush in between; then MPI_Win_flush and MPI_Get of the n doubles.  Expected: the
 * fetch saw v + 1 (+ 0.5 at 0), the end holds (v + 3 (+ 0.5)) * 3 where step 5 reached,
 * v + 3 (+ 0.5) elsewhere.  Then MPI_MAXLOC on MPI_DOUBLE_INT pairs (a type with a hole):
 * a REPLACE then a MAXLOC of larger values at odd indices. */
#include "mtest.h"
#include <stdlib.h>
#include <string.h>

#define MAXN (256 * 1024) /* doubles: 2 MiB */

struct di {
    double v;
    int i;
};

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    int target = mtest_size - 1;
    double *base;
    MPI_Win win;
    MPI_Win_allocate(MAXN * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                     &win);
    const int sizes[] = {1, 2 * 1024, 8 * 1024, 64 * 1024, MAXN};
    const int nsizes = (int)(sizeof sizes / sizeof sizes[0]);
    if (mtest_rank == 0) {
        double *v = malloc(MAXN * sizeof(double)), *ones = malloc(MAXN * sizeof(double));
        double *twos = malloc(MAXN * sizeof(double)), *threes = malloc(MAXN * sizeof(double));
        double *fetched = malloc(MAXN * sizeof(double)), *got = malloc(MAXN * sizeof(double));
        CHECK(v && ones && twos && threes && fetched && got, "out of memory");
        for (int k = 0; k < MAXN; k++) {
            ones[k] = 1.0;
            twos[k] = 2.0;
            threes[k] = 3.0;
        }
        const double half = 0.5;
        MPI_Win_lock_all(0, win);
        for (int round = 0; round < 3; round++) {
            for (int si = 0; si < nsizes; si++) {
                int n = sizes[si];
                for (int k = 0; k < n; k++)
                    v[k] = (double)(round * 1000 + si * 10 + (k % 7));
                MPI_Datatype every_other;
                int strided = n > 1;
                MPI_Type_vector(n / 2, 1, 2, MPI_DOUBLE, &every_other);
                MPI_Type_commit(&every_other);
                MPI_Accumulate(v, n, MPI_DOUBLE, target, 0, n, MPI_DOUBLE, MPI_REPLACE, win);
                MPI_Accumulate(ones, n, MPI_DOUBLE, target, 0, n, MPI_DOUBLE, MPI_SUM, win);
                MPI_Accumulate(&half, 1, MPI_DOUBLE, target, 0, 1, MPI_DOUBLE, MPI_SUM, win);
                MPI_Get_accumulate(twos, n, MPI_DOUBLE, fetched, n, MPI_DOUBLE, target, 0, n,
                                   MPI_DOUBLE, MPI_SUM, win);
                if (strided)
                    MPI_Accumulate(threes, n / 2, MPI_DOUBLE, target, 0, 1, every_other, MPI_PROD,
                                   win);
                else
                    MPI_Accumulate(threes, 1, MPI_DOUBLE, target, 0, 1, MPI_DOUBLE, MPI_PROD, win);
                MPI_Win_flush(target, win);
                MPI_Get(got, n, MPI_DOUBLE, target, 0, n, MPI_DOUBLE, win);
                MPI_Win_flush(target, win);
                MPI_Type_free(&every_other);
                long bad_fetch = 0, bad_end = 0, first_fetch = -1, first_end = -1;
                for (int k = 0; k < n; k++) {
                    double at_fetch = v[k] + 1.0 + (k == 0 ? 0.5 : 0.0);
                    double end = at_fetch + 2.0;
                    if (!strided || k % 2 == 0)
                        end *= 3.0;
                    if (fetched[k] != at_fetch && bad_fetch++ == 0)
                        first_fetch = k;
                    if (got[k] != end && bad_end++ == 0)
                        first_end = k;
                }
                CHECK(bad_fetch == 0,
                      "round %d, %d doubles: %ld fetched values out of order (first at %ld: "
                      "%g)", round, n, bad_fetch, first_fetch,
                      first_fetch >= 0 ? fetched[first_fetch] : 0.0);
                CHECK(bad_end == 0,
                      "round %d, %d doubles: %ld final values out of order (first at %ld: %g)",
                      round, n, bad_end, first_end, first_end >= 0 ? got[first_end] : 0.0);
            }
        }
        /* Pairs with a hole: REPLACE, then MAXLOC with larger values at odd indices. */
        int np = MAXN * (int)sizeof(double) / (int)sizeof(struct di);
        struct di *p = malloc((size_t)np * sizeof *p), *q = malloc((size_t)np * sizeof *q);
        struct di *r = malloc((size_t)np * sizeof *r);
        CHECK(p && q && r, "out of memory");
        for (int k = 0; k < np; k++) {
            p[k].v = (double)(k % 100);
            p[k].i = k;
            q[k].v = (double)(k % 100) + (k % 2 ? 1.0 : -1.0);
            q[k].i = -k;
        }
        MPI_Accumulate(p, np, MPI_DOUBLE_INT, target, 0, np, MPI_DOUBLE_INT, MPI_REPLACE, win);
        MPI_Accumulate(q, np, MPI_DOUBLE_INT, target, 0, np, MPI_DOUBLE_INT, MPI_MAXLOC, win);
        MPI_Win_flush(target, win);
        MPI_Get(r, np, MPI_DOUBLE_INT, target, 0, np, MPI_DOUBLE_INT, win);
        MPI_Win_flush(target, win);
        long bad = 0;
        for (int k = 0; k < np; k++) {
            struct di want = k % 2 ? q[k] : p[k];
            if (r[k].v != want.v || r[k].i != want.i)
                bad++;
        }
        CHECK(bad == 0, "MAXLOC on %d MPI_DOUBLE_INT pairs: %ld wrong", np, bad);
        MPI_Win_unlock_all(win);
        free(p);
        free(q);
        free(r);
        free(v);
        free(ones);
        free(twos);
        free(threes);
        free(fetched);
        free(got);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
    return MTest_Finalize(0);
}
