/* threadcomm: MPICH's thread communicators (MPIX_Threadcomm_init/start/finish/free), as
 * implemented by hympi. Process p runs 1 + p % 2 threads (MTEST_TC_MAX caps the count at
 * 1 + p % MTEST_TC_MAX); between start and finish each thread is a rank of the thread
 * communicator (ranks by process, then by the order threads called start):
 *  - MPI_Comm_rank/size through the one shared handle;
 *  - a ring Sendrecv and a wildcard gather of every rank's number at the last rank;
 *  - Allreduce and Barrier;
 *  - MPI_Comm_dup of the handle inside a region: an endpoint communicator per thread;
 *  - two parallel regions on one thread communicator (start/finish twice);
 *  - the handle outside a region is MPI_ERR_COMM; MPI_Comm_free on it is refused;
 *    MPIX_Threadcomm_free releases it.
 * hympi only: other libraries skip. */
#include "mtest.h"
#include <pthread.h>

#ifdef HYMPI
#include "hympi_mpix.h"

static MPI_Comm tc;
static int total, nthreads;
static int seen_ranks[64];
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;

struct thr {
    int id, errs;
};

#define TFAIL(t, ...)                                                                          \
    do {                                                                                       \
        if ((t)->errs++ < 10) {                                                                \
            printf("[%d] thread %d: ", mtest_rank, (t)->id);                                   \
            printf(__VA_ARGS__);                                                               \
            printf("\n");                                                                      \
            fflush(stdout);                                                                    \
        }                                                                                      \
    } while (0)

static void *region(void *arg)
{
    struct thr *t = arg;
    int rc = MPIX_Threadcomm_start(tc);
    if (rc != MPI_SUCCESS) {
        TFAIL(t, "MPIX_Threadcomm_start failed");
        return NULL;
    }
    int rank = -1, size = -1;
    MPI_Comm_rank(tc, &rank);
    MPI_Comm_size(tc, &size);
    if (size != total)
        TFAIL(t, "size %d, expected %d", size, total);
    pthread_mutex_lock(&seen_lock);
    if (rank >= 0 && rank < 64)
        seen_ranks[rank]++;
    pthread_mutex_unlock(&seen_lock);

    int right = (rank + 1) % size, left = (rank + size - 1) % size, got = -1;
    MPI_Sendrecv(&rank, 1, MPI_INT, right, 1, &got, 1, MPI_INT, left, 1, tc, MPI_STATUS_IGNORE);
    if (got != left)
        TFAIL(t, "ring: got %d, expected %d", got, left);

    if (rank == size - 1) {
        int *hits = calloc((size_t)size, sizeof(int));
        for (int i = 0; i < size - 1; i++) {
            int v = -1;
            MPI_Status st;
            MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 2, tc, &st);
            if (v != st.MPI_SOURCE || v < 0 || v >= size)
                TFAIL(t, "gather: %d from source %d", v, st.MPI_SOURCE);
            else
                hits[v]++;
        }
        for (int i = 0; i < size - 1; i++)
            if (hits[i] != 1)
                TFAIL(t, "gather: %d messages from %d", hits[i], i);
        free(hits);
    } else {
        MPI_Send(&rank, 1, MPI_INT, size - 1, 2, tc);
    }

    long sum = 0, me = rank + 1;
    MPI_Allreduce(&me, &sum, 1, MPI_LONG, MPI_SUM, tc);
    if (sum != (long)size * (size + 1) / 2)
        TFAIL(t, "allreduce %ld", sum);
    MPI_Barrier(tc);

    /* Inside a region, MPI_Comm_dup of the handle gives the thread its own endpoint of a new
     * endpoint communicator, usable after finish. */
    MPI_Comm d = MPI_COMM_NULL;
    if (MPI_Comm_dup(tc, &d) != MPI_SUCCESS || d == MPI_COMM_NULL)
        TFAIL(t, "MPI_Comm_dup of the thread communicator failed");
    if (MPIX_Threadcomm_finish(tc) != MPI_SUCCESS)
        TFAIL(t, "MPIX_Threadcomm_finish failed");
    if (d != MPI_COMM_NULL) {
        int drank = -1, dsize = -1;
        MPI_Comm_rank(d, &drank);
        MPI_Comm_size(d, &dsize);
        if (drank != rank || dsize != size)
            TFAIL(t, "duplicate: rank %d of %d, expected %d of %d", drank, dsize, rank, size);
        long dsum = 0;
        MPI_Allreduce(&me, &dsum, 1, MPI_LONG, MPI_SUM, d);
        if (dsum != sum)
            TFAIL(t, "duplicate: allreduce %ld, expected %ld", dsum, sum);
        MPI_Comm_free(&d);
    }
    return NULL;
}
#endif

int main(int argc, char **argv)
{
    int provided, errs = 0;
    MTest_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
#ifndef HYMPI
    MTest_Skip("MPIX_Threadcomm_* are not in this MPI library's release");
    return MTest_Finalize(0);
#else
    if (provided < MPI_THREAD_MULTIPLE) {
        MTest_Skip("MPI_THREAD_MULTIPLE not provided");
        return MTest_Finalize(0);
    }
    int cap = getenv("MTEST_TC_MAX") ? atoi(getenv("MTEST_TC_MAX")) : 2;
    nthreads = 1 + mtest_rank % cap;
    MPI_Allreduce(&nthreads, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MTest_Errors_return(MPI_COMM_WORLD);

    CHECK_RC(MPIX_Threadcomm_init(MPI_COMM_WORLD, nthreads, &tc), "MPIX_Threadcomm_init");
    for (int round = 0; round < 2; round++) {
        memset(seen_ranks, 0, sizeof seen_ranks);
        pthread_t th[16];
        struct thr t[16];
        for (int i = 0; i < nthreads; i++) {
            t[i].id = i;
            t[i].errs = 0;
            pthread_create(&th[i], NULL, region, &t[i]);
        }
        for (int i = 0; i < nthreads; i++) {
            pthread_join(th[i], NULL);
            errs += t[i].errs;
        }
        /* This process's threads took distinct ranks. */
        for (int r = 0; r < 64; r++)
            CHECK(seen_ranks[r] <= 1, "rank %d taken by %d threads", r, seen_ranks[r]);
    }

    /* Outside a region the handle names no rank; MPI_Comm_free is refused. */
    int rank = -1;
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    CHECK_CLASS(MPI_Comm_rank(tc, &rank), MPI_ERR_COMM, "MPI_Comm_rank outside a region");
    MPI_Comm copy = tc;
    CHECK_CLASS(MPI_Comm_free(&copy), MPI_ERR_COMM, "MPI_Comm_free(threadcomm)");
    CHECK_CLASS(MPIX_Threadcomm_start(MPI_COMM_WORLD), MPI_ERR_COMM,
                "MPIX_Threadcomm_start(MPI_COMM_WORLD)");
    CHECK_RC(MPIX_Threadcomm_free(&tc), "MPIX_Threadcomm_free");
    CHECK(tc == MPI_COMM_NULL, "handle not reset");
    return MTest_Finalize(errs);
#endif
}
