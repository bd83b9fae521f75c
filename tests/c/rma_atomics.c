/* rma_atomics: accumulates that hardware atomics may serve, checked for lost, doubled or torn
 * updates. Two MPI_Win_allocate windows (disp_unit 1), one created with the info hint
 * mpi_accumulate_granularity = 8 (hympi then updates aligned elements of 1 to 8 bytes with
 * one atomic instruction each and no lock), one without it (a per-target lock). On each,
 * inside one MPI_Win_lock_all epoch, every rank (and at MPI_THREAD_MULTIPLE 4 threads per
 * rank: the "workers") targets rank 0:
 *  - MPI_Accumulate(MPI_SUM) of one element: MPI_LONG into 8 counters in turn, MPI_DOUBLE,
 *    MPI_SHORT, MPI_UNSIGNED_CHAR, and an MPI_INT at an odd byte address (no atomic
 *    instruction holds it: the lock path); every 10th round also one accumulate of all 8
 *    longs at once and one through a strided vector type of ints, so single-element and
 *    multi-element updates meet on the same elements;
 *  - MPI_Fetch_and_op(MPI_SUM) on one counter: the fetched values of all workers are exactly
 *    0 .. total-1;
 *  - a mutex built from MPI_Compare_and_swap around a plain Get/Put increment;
 *  - MPI_MAXLOC on MPI_2INT (an 8-byte pair) and MPI_Fetch_and_op(MPI_REPLACE) as a swap (the
 *    old values and the last one are every worker's id and the initial value, once each);
 *  - MPI_Get_accumulate(MPI_NO_OP) reads a counter while the others update it: never a value
 *    above the final one or below the worker's own previous read.
 * Rank 0 checks every total after the epoch. */
#include "mtest.h"
#include <pthread.h>

#define MAXT 4
#define ITER 320
#define MUTEX_ROUNDS 10
#define WIN_BYTES 192

/* Byte offsets in rank 0's window. */
#define OFF_CNT 0      /* long[8] */
#define OFF_DSUM 64    /* double */
#define OFF_SHORT 80   /* short[4] */
#define OFF_UCHAR 88   /* unsigned char[8] */
#define OFF_MIS 97     /* int at an odd address */
#define OFF_FOP 104    /* long */
#define OFF_LOCK 112   /* int */
#define OFF_GUARD 120  /* long */
#define OFF_MAXLOC 128 /* int[2] */
#define OFF_SWAP 136   /* long */
#define OFF_IV 144     /* int[8] */

static int me, np, nt;
static MPI_Win win;
static MPI_Datatype every_other_int; /* 4 ints, stride 2 */
static long fetched[MAXT][ITER];
static long swapped[MAXT];

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    int w = me * nt + t;
    long one = 1, ones[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    double done = 1.0;
    short sone = 1;
    unsigned char cone = 1;
    int ione = 1, iones[4] = {1, 1, 1, 1};
    long last_read = 0;
    for (int i = 0; i < ITER; i++) {
        CHECK_RC(MPI_Accumulate(&one, 1, MPI_LONG, 0, OFF_CNT + 8 * (i % 8), 1, MPI_LONG,
                                MPI_SUM, win),
                 "accumulate long");
        CHECK_RC(MPI_Accumulate(&done, 1, MPI_DOUBLE, 0, OFF_DSUM, 1, MPI_DOUBLE, MPI_SUM, win),
                 "accumulate double");
        CHECK_RC(MPI_Accumulate(&sone, 1, MPI_SHORT, 0, OFF_SHORT + 2 * (i % 4), 1, MPI_SHORT,
                                MPI_SUM, win),
                 "accumulate short");
        CHECK_RC(MPI_Accumulate(&cone, 1, MPI_UNSIGNED_CHAR, 0, OFF_UCHAR + (i % 8), 1,
                                MPI_UNSIGNED_CHAR, MPI_SUM, win),
                 "accumulate unsigned char");
        CHECK_RC(MPI_Accumulate(&ione, 1, MPI_INT, 0, OFF_MIS, 1, MPI_INT, MPI_SUM, win),
                 "accumulate misaligned int");
        CHECK_RC(MPI_Accumulate(&ione, 1, MPI_INT, 0, OFF_IV + 4 * (i % 8), 1, MPI_INT, MPI_SUM,
                                win),
                 "accumulate int");
        if (i % 10 == 9) {
            CHECK_RC(MPI_Accumulate(ones, 8, MPI_LONG, 0, OFF_CNT, 8, MPI_LONG, MPI_SUM, win),
                     "accumulate 8 longs");
            CHECK_RC(MPI_Accumulate(iones, 4, MPI_INT, 0, OFF_IV, 1, every_other_int, MPI_SUM,
                                    win),
                     "accumulate vector");
        }
        CHECK_RC(MPI_Fetch_and_op(&one, &fetched[t][i], MPI_LONG, 0, OFF_FOP, MPI_SUM, win),
                 "fetch_and_op");
        if (i % 16 == 0) {
            long seen = -1;
            CHECK_RC(MPI_Get_accumulate(NULL, 0, MPI_LONG, &seen, 1, MPI_LONG, 0, OFF_CNT, 1,
                                        MPI_LONG, MPI_NO_OP, win),
                     "get_accumulate no_op");
            CHECK_RC(MPI_Win_flush(0, win), "flush");
            CHECK(seen >= last_read, "worker %d read counter %ld after %ld", w, seen, last_read);
            last_read = seen;
        }
        if (i % 20 == 19)
            CHECK_RC(MPI_Win_flush(0, win), "flush");
    }
    CHECK_RC(MPI_Win_flush(0, win), "flush");

    /* A mutex from compare-and-swap (0 free, holder id + 1 held) around Get/Put. */
    for (int r = 0; r < MUTEX_ROUNDS; r++) {
        int mine = w + 1, free_ = 0, old = -1;
        for (;;) {
            CHECK_RC(MPI_Compare_and_swap(&mine, &free_, &old, MPI_INT, 0, OFF_LOCK, win), "cas");
            CHECK_RC(MPI_Win_flush(0, win), "flush");
            if (old == 0)
                break;
            CHECK(old >= 1 && old <= np * nt, "lock word holds %d", old);
            if (old < 1 || old > np * nt)
                break;
        }
        long g = -1;
        CHECK_RC(MPI_Get(&g, 1, MPI_LONG, 0, OFF_GUARD, 1, MPI_LONG, win), "get");
        CHECK_RC(MPI_Win_flush(0, win), "flush");
        g++;
        CHECK_RC(MPI_Put(&g, 1, MPI_LONG, 0, OFF_GUARD, 1, MPI_LONG, win), "put");
        CHECK_RC(MPI_Win_flush(0, win), "flush");
        CHECK_RC(MPI_Compare_and_swap(&free_, &mine, &old, MPI_INT, 0, OFF_LOCK, win), "cas");
        CHECK_RC(MPI_Win_flush(0, win), "flush");
        CHECK(old == mine, "worker %d released a lock word holding %d", w, old);
    }

    int pair[2] = {(w * 7919) % 1000, w};
    CHECK_RC(MPI_Accumulate(pair, 1, MPI_2INT, 0, OFF_MAXLOC, 1, MPI_2INT, MPI_MAXLOC, win),
             "maxloc");
    long id = w;
    CHECK_RC(MPI_Fetch_and_op(&id, &swapped[t], MPI_LONG, 0, OFF_SWAP, MPI_REPLACE, win),
             "swap");
    CHECK_RC(MPI_Win_flush(0, win), "flush");
    return NULL;
}

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

static void run(const char *what, MPI_Info info)
{
    char *base;
    CHECK_RC(MPI_Win_allocate(WIN_BYTES, 1, info, MPI_COMM_WORLD, &base, &win), "allocate");
    memset(base, 0, WIN_BYTES);
    *(long *)(base + OFF_SWAP) = -1;
    *(int *)(base + OFF_MAXLOC) = -1;
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(MPI_Win_lock_all(0, win), "lock_all");
    pthread_t th[MAXT];
    for (int t = 1; t < nt; t++)
        pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
    worker((void *)(intptr_t)0);
    for (int t = 1; t < nt; t++)
        pthread_join(th[t], NULL);
    CHECK_RC(MPI_Win_unlock_all(win), "unlock_all");
    MPI_Barrier(MPI_COMM_WORLD);

    int workers = np * nt;
    long all_fetched_n = (long)workers * ITER;
    long *all_fetched = me == 0 ? malloc(sizeof(long) * all_fetched_n) : NULL;
    long *all_swapped = me == 0 ? malloc(sizeof(long) * (workers + 1)) : NULL;
    MPI_Gather(fetched, nt * ITER, MPI_LONG, all_fetched, nt * ITER, MPI_LONG, 0,
               MPI_COMM_WORLD);
    MPI_Gather(swapped, nt, MPI_LONG, all_swapped, nt, MPI_LONG, 0, MPI_COMM_WORLD);
    if (me == 0) {
        CHECK_RC(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win), "lock self");
        long per8 = ITER / 8, rounds10 = ITER / 10;
        for (int k = 0; k < 8; k++) {
            long c = *(long *)(base + OFF_CNT + 8 * k);
            CHECK(c == workers * (per8 + rounds10), "%s: long counter %d is %ld, not %ld", what,
                  k, c, workers * (per8 + rounds10));
            int v;
            memcpy(&v, base + OFF_IV + 4 * k, 4);
            long want = workers * (per8 + (k % 2 == 0 ? rounds10 : 0));
            CHECK(v == want, "%s: int %d is %d, not %ld", what, k, v, want);
            unsigned char u = *(unsigned char *)(base + OFF_UCHAR + k);
            CHECK(u == (unsigned char)(workers * per8), "%s: unsigned char %d is %u, not %u",
                  what, k, u, (unsigned char)(workers * per8));
        }
        double d = *(double *)(base + OFF_DSUM);
        CHECK(d == (double)workers * ITER, "%s: double sum is %g, not %d", what, d,
              workers * ITER);
        for (int k = 0; k < 4; k++) {
            short s = *(short *)(base + OFF_SHORT + 2 * k);
            CHECK(s == workers * (ITER / 4), "%s: short %d is %d, not %d", what, k, s,
                  workers * (ITER / 4));
        }
        int mis;
        memcpy(&mis, base + OFF_MIS, 4);
        CHECK(mis == workers * ITER, "%s: misaligned int is %d, not %d", what, mis,
              workers * ITER);
        long fop = *(long *)(base + OFF_FOP);
        CHECK(fop == all_fetched_n, "%s: fetch_and_op counter is %ld, not %ld", what, fop,
              all_fetched_n);
        qsort(all_fetched, all_fetched_n, sizeof(long), cmp_long);
        for (long k = 0; k < all_fetched_n; k++)
            if (!CHECK(all_fetched[k] == k, "%s: fetched value %ld is %ld (lost or repeated)",
                       what, k, all_fetched[k]))
                break;
        long g = *(long *)(base + OFF_GUARD);
        CHECK(g == (long)workers * MUTEX_ROUNDS, "%s: mutex-guarded counter is %ld, not %ld",
              what, g, (long)workers * MUTEX_ROUNDS);
        int lockword;
        memcpy(&lockword, base + OFF_LOCK, 4);
        CHECK(lockword == 0, "%s: the mutex is left held (%d)", what, lockword);
        int best = -1, at = -1;
        for (int w = 0; w < workers; w++)
            if ((w * 7919) % 1000 > best)
                best = (w * 7919) % 1000, at = w;
        int pair[2];
        memcpy(pair, base + OFF_MAXLOC, 8);
        CHECK(pair[0] == best && pair[1] == at, "%s: maxloc is (%d, %d), not (%d, %d)", what,
              pair[0], pair[1], best, at);
        all_swapped[workers] = *(long *)(base + OFF_SWAP);
        qsort(all_swapped, workers + 1, sizeof(long), cmp_long);
        for (int k = 0; k <= workers; k++)
            if (!CHECK(all_swapped[k] == k - 1, "%s: swap chain value %d is %ld", what, k,
                       all_swapped[k]))
                break;
        CHECK_RC(MPI_Win_unlock(0, win), "unlock self");
        free(all_fetched);
        free(all_swapped);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(MPI_Win_free(&win), "free");
}

int main(int argc, char **argv)
{
    int provided;
    MTest_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    nt = provided == MPI_THREAD_MULTIPLE ? MAXT : 1;
    MPI_Type_vector(4, 1, 2, MPI_INT, &every_other_int);
    MPI_Type_commit(&every_other_int);

    MPI_Info fine;
    MPI_Info_create(&fine);
    MPI_Info_set(fine, "mpi_accumulate_granularity", "8");
    MPI_Info_set(fine, "accumulate_ops", "same_op_no_op");
    run("granularity 8", fine);
    MPI_Info_free(&fine);
    run("no hint", MPI_INFO_NULL);

    MPI_Type_free(&every_other_int);
    return MTest_Finalize(0);
}
