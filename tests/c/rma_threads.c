/* rma_threads: one-sided operations from several threads (MPI_THREAD_MULTIPLE; skipped
 * when not provided).
 *
 *  - One lock_all epoch opened by the main thread on a window of one counter per rank;
 *    4 threads per rank each add 1 with MPI_Accumulate(MPI_SUM) 200 times to every rank's
 *    counter, calling MPI_Win_flush_all now and then and at the end; the main thread joins
 *    them, closes the epoch, and after a barrier every counter is size*4*200.
 *  - 4 threads per rank, each with its own window (created by the main thread): every
 *    thread locks each target in turn (MPI_LOCK_SHARED), puts its rank- and
 *    thread-dependent value into the slot of its rank, unlocks; afterwards every slot of
 *    every window holds the right value (sentinel before).
 *  - Threads mixing MPI_Fetch_and_op on one shared counter of rank 0 under the main
 *    thread's lock_all: the fetched values of all threads of all ranks are distinct and
 *    the total is right. */
#include "mtest.h"
#include <pthread.h>

#define NT 4
#define NACC 200
#define NFOP 50

static int me, np;
static MPI_Win cwin, twin[NT], fwin;
static int *fetched; /* NT * NFOP */

static void *acc_thread(void *arg)
{
    int one = 1;
    (void)arg;
    for (int i = 0; i < NACC; i++) {
        for (int t = 0; t < np; t++) {
            int rc = MPI_Accumulate(&one, 1, MPI_INT, t, 0, 1, MPI_INT, MPI_SUM, cwin);
            if (!CHECK_RC(rc, "MPI_Accumulate (thread)"))
                return NULL;
        }
        if (i % 50 == 49)
            MPI_Win_flush_all(cwin);
    }
    int rc = MPI_Win_flush_all(cwin);
    CHECK_RC(rc, "MPI_Win_flush_all (thread)");
    return NULL;
}

static int tval(int r, int t)
{
    return 7000000 + r * 100 + t;
}

static void *lock_thread(void *arg)
{
    int t = (int)(intptr_t)arg, v = tval(me, t);
    for (int k = 0; k < np; k++) {
        int target = (me + k) % np, rc;
        rc = MPI_Win_lock(MPI_LOCK_SHARED, target, 0, twin[t]);
        CHECK_RC(rc, "MPI_Win_lock (thread)");
        rc = MPI_Put(&v, 1, MPI_INT, target, me, 1, MPI_INT, twin[t]);
        CHECK_RC(rc, "MPI_Put (thread)");
        rc = MPI_Win_unlock(target, twin[t]);
        CHECK_RC(rc, "MPI_Win_unlock (thread)");
    }
    return NULL;
}

static void *fop_thread(void *arg)
{
    int t = (int)(intptr_t)arg, one = 1;
    for (int i = 0; i < NFOP; i++) {
        int rc = MPI_Fetch_and_op(&one, &fetched[t * NFOP + i], MPI_INT, 0, 0, MPI_SUM, fwin);
        if (!CHECK_RC(rc, "MPI_Fetch_and_op (thread)"))
            break;
        MPI_Win_flush(0, fwin);
    }
    return NULL;
}

static void run_threads(void *(*fn)(void *))
{
    pthread_t th[NT];
    for (int t = 0; t < NT; t++)
        pthread_create(&th[t], NULL, fn, (void *)(intptr_t)t);
    for (int t = 0; t < NT; t++)
        pthread_join(th[t], NULL);
}

int main(int argc, char **argv)
{
    int provided = MPI_THREAD_SINGLE, rc;
    MTest_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    me = mtest_rank;
    np = mtest_size;
    if (provided < MPI_THREAD_MULTIPLE) {
        MTest_Skip("MPI_THREAD_MULTIPLE not provided");
        return MTest_Finalize(0);
    }

    /* Accumulates from threads in one lock_all epoch. */
    int *cnt = NULL;
    rc = MPI_Win_allocate(16, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &cnt, &cwin);
    CHECK_RC(rc, "MPI_Win_allocate");
    cnt[0] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    rc = MPI_Win_lock_all(0, cwin);
    CHECK_RC(rc, "MPI_Win_lock_all");
    run_threads(acc_thread);
    rc = MPI_Win_unlock_all(cwin);
    CHECK_RC(rc, "MPI_Win_unlock_all");
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, me, 0, cwin);
    CHECK(cnt[0] == np * NT * NACC, "counter %d, expected %d", cnt[0], np * NT * NACC);
    MPI_Win_unlock(me, cwin);
    MPI_Win_free(&cwin);

    /* Each thread its own window, lock/put/unlock to every rank. */
    int *tmem[NT];
    for (int t = 0; t < NT; t++) {
        rc = MPI_Win_allocate(((np * sizeof(int) + 15) / 16) * 16, sizeof(int), MPI_INFO_NULL,
                              MPI_COMM_WORLD, &tmem[t], &twin[t]);
        CHECK_RC(rc, "MPI_Win_allocate (per thread)");
        for (int r = 0; r < np; r++)
            tmem[t][r] = -1;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    run_threads(lock_thread);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int t = 0; t < NT; t++) {
        MPI_Win_lock(MPI_LOCK_SHARED, me, 0, twin[t]);
        for (int r = 0; r < np; r++)
            CHECK(tmem[t][r] == tval(r, t), "window %d slot %d: %d, expected %d", t, r,
                  tmem[t][r], tval(r, t));
        MPI_Win_unlock(me, twin[t]);
        MPI_Win_free(&twin[t]);
    }

    /* Fetch_and_op from threads on one counter. */
    int *f = NULL;
    rc = MPI_Win_allocate(16, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &f, &fwin);
    CHECK_RC(rc, "MPI_Win_allocate");
    f[0] = 0;
    fetched = malloc(NT * NFOP * sizeof(int));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, fwin);
    run_threads(fop_thread);
    MPI_Win_unlock_all(fwin);
    int total = np * NT * NFOP;
    int *all = me == 0 ? malloc(total * sizeof(int)) : NULL;
    MPI_Gather(fetched, NT * NFOP, MPI_INT, all, NT * NFOP, MPI_INT, 0, MPI_COMM_WORLD);
    if (me == 0) {
        char *seen = calloc(total, 1);
        int bad = 0;
        for (int i = 0; i < total; i++) {
            if (all[i] < 0 || all[i] >= total || seen[all[i]]) {
                if (bad++ < 5)
                    CHECK(0, "fetched value %d out of range or repeated", all[i]);
            } else {
                seen[all[i]] = 1;
            }
        }
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, fwin);
        CHECK(f[0] == total, "fetch_and_op counter %d, expected %d", f[0], total);
        MPI_Win_unlock(0, fwin);
        free(seen);
        free(all);
    }
    free(fetched);
    MPI_Win_free(&fwin);
    return MTest_Finalize(0);
}
