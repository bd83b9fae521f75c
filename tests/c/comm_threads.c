/* comm_threads: communicator creation from several threads at once (MPI_THREAD_MULTIPLE).
 *
 * The main thread makes one parent communicator per thread (MPI_Comm_dup of WORLD, in the
 * same order on every process, before the threads start), then 4 threads per process run
 * 50 iterations each, concurrently: MPI_Comm_dup of their parent, MPI_Comm_split of the dup
 * by parity, a ring exchange with tag t on each new communicator (message: thread id,
 * iteration, world rank, checked on receipt), MPI_Comm_free of both.  Concurrent
 * collective calls on distinct communicators are allowed (MPI-4.0 section 11.6.2), so
 * nothing may clash or hang (the testlist gives a timeout).  Skips when
 * MPI_THREAD_MULTIPLE is not provided.  Threads count their own failures (mtest's counter
 * is not thread-safe) and the main thread adds them up.  MTEST_COMM_THREADS_ITER sets the
 * iteration count (the 5-rank line of the testlist uses 20: MPICH 4.0 needs ~75 s for 50
 * there, with 5 busy-polling processes on 2 cores). */
#include "mtest.h"
#include "mtest_comm.h"
#include <pthread.h>

#define NTHREADS 4
static int NITER = 50; /* MTEST_COMM_THREADS_ITER overrides */

struct thr {
    int id;
    MPI_Comm parent;
    int errs;
};

static void ring(MPI_Comm c, struct thr *t, int iter, const char *what)
{
    int size, rank;
    MPI_Comm_size(c, &size);
    MPI_Comm_rank(c, &rank);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out[3] = {t->id, iter, mtest_rank}, in[3] = {-1, -1, -1};
    MPI_Status st;
    int rc = MPI_Sendrecv(out, 3, MPI_INT, right, t->id, in, 3, MPI_INT, left, t->id, c, &st);
    /* World rank of the left neighbour: on the dup it is the world's left; on the parity
     * split, the previous process of my parity (cyclically). */
    int expect_w;
    if (strcmp(what, "dup") == 0) {
        expect_w = (mtest_rank + mtest_size - 1) % mtest_size;
    } else {
        int p = mtest_rank % 2, nsame = (mtest_size - p + 1) / 2, k = mtest_rank / 2;
        expect_w = ((k + nsame - 1) % nsame) * 2 + p;
    }
    if (rc != MPI_SUCCESS || in[0] != t->id || in[1] != iter || in[2] != expect_w ||
        st.MPI_TAG != t->id) {
        t->errs++;
        if (t->errs < 10)
            printf("[%d] thread %d iter %d %s: rc %d got (thread %d, iter %d, world %d) tag %d, "
                   "expected (%d, %d, %d) tag %d\n",
                   mtest_rank, t->id, iter, what, rc, in[0], in[1], in[2], st.MPI_TAG, t->id, iter,
                   expect_w, t->id);
    }
}

static void *worker(void *arg)
{
    struct thr *t = arg;
    for (int it = 0; it < NITER; it++) {
        MPI_Comm d = MPI_COMM_NULL, s = MPI_COMM_NULL;
        int rc = MPI_Comm_dup(t->parent, &d);
        if (rc != MPI_SUCCESS || d == MPI_COMM_NULL) {
            t->errs++;
            printf("[%d] thread %d: MPI_Comm_dup failed (%d)\n", mtest_rank, t->id, rc);
            return NULL;
        }
        rc = MPI_Comm_split(d, mtest_rank % 2, mtest_rank, &s);
        if (rc != MPI_SUCCESS || s == MPI_COMM_NULL) {
            t->errs++;
            printf("[%d] thread %d: MPI_Comm_split failed (%d)\n", mtest_rank, t->id, rc);
            return NULL;
        }
        int ds = -1, ss = -1;
        MPI_Comm_size(d, &ds);
        MPI_Comm_size(s, &ss);
        if (ds != mtest_size || ss != (mtest_size - mtest_rank % 2 + 1) / 2) {
            t->errs++;
            printf("[%d] thread %d: sizes %d %d\n", mtest_rank, t->id, ds, ss);
            return NULL;
        }
        ring(d, t, it, "dup");
        ring(s, t, it, "split");
        if (MPI_Comm_free(&s) != MPI_SUCCESS || MPI_Comm_free(&d) != MPI_SUCCESS ||
            s != MPI_COMM_NULL || d != MPI_COMM_NULL)
            t->errs++;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = -1;
    MTest_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided != MPI_THREAD_MULTIPLE) {
        MTest_Skip("MPI_THREAD_MULTIPLE not provided");
        return MTest_Finalize(0);
    }
    const char *it = getenv("MTEST_COMM_THREADS_ITER");
    if (it && atoi(it) > 0)
        NITER = atoi(it);
    struct thr t[NTHREADS];
    pthread_t th[NTHREADS];
    for (int i = 0; i < NTHREADS; i++) {
        t[i].id = i;
        t[i].errs = 0;
        int rc = MPI_Comm_dup(MPI_COMM_WORLD, &t[i].parent);
        CHECK_RC(rc, "MPI_Comm_dup (parent)");
    }
    for (int i = 0; i < NTHREADS; i++)
        if (pthread_create(&th[i], NULL, worker, &t[i]) != 0) {
            printf("pthread_create failed\n");
            return MTest_Finalize(1);
        }
    int errs = 0;
    for (int i = 0; i < NTHREADS; i++) {
        pthread_join(th[i], NULL);
        errs += t[i].errs;
    }
    int all[64];
    for (int i = 0; i < mtest_size && i < 64; i++)
        all[i] = i;
    for (int i = 0; i < NTHREADS; i++) {
        MTest_Check_members(t[i].parent, all, mtest_size, "parent after the threads");
        MTest_Free_comm(&t[i].parent, "MPI_Comm_free (parent)");
    }
    return MTest_Finalize(errs);
}
