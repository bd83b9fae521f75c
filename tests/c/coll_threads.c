/* coll_threads: blocking collectives from several threads at once (MPI_THREAD_MULTIPLE).
 *
 * The main thread makes one MPI_Comm_dup of WORLD per thread (in the same order on every
 * process), then 4 threads per process each run, on their own communicator, NITER
 * iterations of MPI_Allreduce(SUM) of 4 ints, MPI_Bcast of 16 ints from a root that
 * changes every iteration, and MPI_Barrier, checking every value (they depend on the
 * thread, the iteration and the ranks, so that data crossing communicators shows).
 * Concurrent collectives on distinct communicators are allowed (MPI-4.0 section 11.6.2).
 * Skips when MPI_THREAD_MULTIPLE is not provided.  Threads count their own failures and
 * the main thread adds them up.  MTEST_COLL_THREADS_ITER sets the iteration count
 * (default 200).  The allreduce carries one more element, 1 from a process whose thread has
 * run longer than MTEST_COLL_THREADS_BUDGET seconds (default 1.5) after at least 5
 * iterations: all processes see the same sum and stop the thread together (MPICH 4.0 with
 * MPI_THREAD_MULTIPLE needs ~0.3 s an iteration at 5 processes on 2 cores, busy-polling).
 * Rank 0 prints how many iterations each thread ran. */
#include "mtest.h"
#include <pthread.h>

#define NTHREADS 4
static int NITER = 200;
static double BUDGET = 1.5;

struct thr {
    int id;
    MPI_Comm comm;
    int errs;
    int done; /* iterations run */
};

#define TCHECK(t, cond, ...)                                                      \
    do {                                                                          \
        if (!(cond)) {                                                            \
            if ((t)->errs++ < 10) {                                               \
                printf("[%d] thread %d: %s:%d: check failed: %s: ", mtest_rank, (t)->id, \
                       __FILE__, __LINE__, #cond);                                \
                printf(__VA_ARGS__);                                              \
                printf("\n");                                                     \
            }                                                                     \
        }                                                                         \
    } while (0)

static int v(int thread, int iter, int rank, int i)
{
    return thread * 1000000 + iter * 1000 + rank * 10 + i;
}

static void *worker(void *arg)
{
    struct thr *t = arg;
    int size = mtest_size, rank = mtest_rank;
    double t0 = MPI_Wtime();
    int stop = 0;
    for (int it = 0; it < NITER && !stop; it++) {
        int in[5], out[5] = {-1, -1, -1, -1, -1};
        for (int i = 0; i < 4; i++)
            in[i] = v(t->id, it, rank, i);
        in[4] = (it >= 4 && MPI_Wtime() - t0 > BUDGET) || t->errs >= 10;
        int rc = MPI_Allreduce(in, out, 5, MPI_INT, MPI_SUM, t->comm);
        stop = out[4] != 0;
        t->done = it + 1;
        TCHECK(t, rc == MPI_SUCCESS, "MPI_Allreduce rc %d", rc);
        for (int i = 0; i < 4; i++) {
            int want = 0;
            for (int r = 0; r < size; r++)
                want += v(t->id, it, r, i);
            TCHECK(t, out[i] == want, "iter %d: allreduce [%d] = %d, want %d", it, i, out[i],
                   want);
        }
        int root = (it + t->id) % size;
        int buf[16];
        for (int i = 0; i < 16; i++)
            buf[i] = rank == root ? v(t->id, it, root, i) : -1;
        rc = MPI_Bcast(buf, 16, MPI_INT, root, t->comm);
        TCHECK(t, rc == MPI_SUCCESS, "MPI_Bcast rc %d", rc);
        for (int i = 0; i < 16; i++)
            TCHECK(t, buf[i] == v(t->id, it, root, i), "iter %d: bcast from %d [%d] = %d, want %d",
                   it, root, i, buf[i], v(t->id, it, root, i));
        rc = MPI_Barrier(t->comm);
        TCHECK(t, rc == MPI_SUCCESS, "MPI_Barrier rc %d", rc);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = MPI_THREAD_SINGLE;
    MTest_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    const char *e = getenv("MTEST_COLL_THREADS_ITER");
    if (e && atoi(e) > 0)
        NITER = atoi(e);
    e = getenv("MTEST_COLL_THREADS_BUDGET");
    if (e && atof(e) > 0)
        BUDGET = atof(e);
    if (provided != MPI_THREAD_MULTIPLE) {
        MTest_Skip("MPI_THREAD_MULTIPLE not provided");
        return MTest_Finalize(0);
    }
    struct thr t[NTHREADS];
    for (int i = 0; i < NTHREADS; i++) {
        t[i].id = i;
        t[i].errs = 0;
        t[i].done = 0;
        int rc = MPI_Comm_dup(MPI_COMM_WORLD, &t[i].comm);
        CHECK_RC(rc, "MPI_Comm_dup");
    }
    pthread_t th[NTHREADS];
    for (int i = 0; i < NTHREADS; i++) {
        if (pthread_create(&th[i], NULL, worker, &t[i]) != 0) {
            printf("pthread_create failed\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    int errs = 0;
    for (int i = 0; i < NTHREADS; i++) {
        pthread_join(th[i], NULL);
        errs += t[i].errs;
        MPI_Comm_free(&t[i].comm);
    }
    if (mtest_rank == 0)
        printf("coll_threads: %d processes, iterations per thread: %d %d %d %d (of %d)\n",
               mtest_size, t[0].done, t[1].done, t[2].done, t[3].done, NITER);
    /* The communicators still agree after the threads: one more allreduce on WORLD. */
    int one = 1, sum = 0;
    int rc = MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK_RC(rc, "MPI_Allreduce on WORLD after the threads");
    CHECK(sum == mtest_size, "allreduce after the threads: %d, want %d", sum, mtest_size);
    return MTest_Finalize(errs);
}
