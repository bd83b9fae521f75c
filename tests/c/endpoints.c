/* endpoints: MPIX_Comm_create_endpoints (hympi extension). Process p creates 1 + p % 3
 * endpoints (MTEST_EP_MAX caps it) and drives each from its own thread:
 *  - rank and size: ranks are numbered by parent rank, then endpoint index;
 *  - a ring Sendrecv (neighbours often live in the same process);
 *  - every rank sends a tagged, numbered stream to every other rank; receives use
 *    MPI_ANY_SOURCE; per source the sequence must arrive in order, nothing lost;
 *  - a 1 MiB message to the next rank (rendezvous, single copy between processes);
 *  - Barrier, Allreduce, Bcast, Allgather over the endpoints;
 *  - MPI_Comm_idup on an endpoint is refused (MPI_ERR_UNSUPPORTED_OPERATION; the
 *    constructors that work there are tested by endpoints_comm.c);
 *  - MPI_Comm_free of every endpoint.
 * hympi only (tests/c/testlist: only=hympi). */
#include "mtest.h"
#include <pthread.h>

#ifdef HYMPI
#include "hympi_mpix.h"

#define NSTREAM 40
#define BIG (1 << 20)

static int total, first_of_mine, ep_max = 3;

struct thr {
    int k;
    MPI_Comm comm;
    int errs;
};

#define TFAIL(t, ...)                                                                          \
    do {                                                                                       \
        if ((t)->errs++ < 10) {                                                                \
            printf("[%d] endpoint %d: ", mtest_rank, (t)->k);                                  \
            printf(__VA_ARGS__);                                                               \
            printf("\n");                                                                      \
            fflush(stdout);                                                                    \
        }                                                                                      \
    } while (0)

static void *run(void *arg)
{
    struct thr *t = arg;
    MPI_Comm c = t->comm;
    int rank = -1, size = -1;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    if (size != total)
        TFAIL(t, "size %d, expected %d", size, total);
    if (rank != first_of_mine + t->k)
        TFAIL(t, "rank %d, expected %d", rank, first_of_mine + t->k);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    /* Ring. */
    int got = -1;
    MPI_Sendrecv(&rank, 1, MPI_INT, right, 5, &got, 1, MPI_INT, left, 5, c, MPI_STATUS_IGNORE);
    if (got != left)
        TFAIL(t, "ring: got %d from %d", got, left);

    /* Streams to everybody, wildcard receives. */
    int nmsg = (size - 1) * NSTREAM;
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * (size_t)(nmsg + 1));
    int (*out)[2] = malloc(sizeof(int[2]) * (size_t)(nmsg + 1));
    int n = 0;
    for (int s = 0; s < NSTREAM; s++)
        for (int d = 0; d < size; d++)
            if (d != rank) {
                out[n][0] = rank;
                out[n][1] = s;
                MPI_Isend(out[n], 2, MPI_INT, d, 9, c, &reqs[n]);
                n++;
            }
    int *next = calloc((size_t)size, sizeof(int));
    for (int i = 0; i < nmsg; i++) {
        int in[2];
        MPI_Status st;
        MPI_Recv(in, 2, MPI_INT, MPI_ANY_SOURCE, 9, c, &st);
        if (st.MPI_SOURCE < 0 || st.MPI_SOURCE >= size || in[0] != st.MPI_SOURCE) {
            TFAIL(t, "stream: source %d carries %d", st.MPI_SOURCE, in[0]);
            continue;
        }
        if (in[1] != next[st.MPI_SOURCE])
            TFAIL(t, "stream from %d: seq %d, expected %d", st.MPI_SOURCE, in[1],
                  next[st.MPI_SOURCE]);
        next[st.MPI_SOURCE] = in[1] + 1;
    }
    MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
    for (int s = 0; s < size; s++)
        if (s != rank && next[s] != NSTREAM)
            TFAIL(t, "stream from %d: %d messages", s, next[s]);
    free(next);
    free(out);
    free(reqs);

    /* A large message to the right. */
    char *sb = malloc(BIG), *rb = malloc(BIG);
    MTest_Fill_bytes(sb, BIG, (uint64_t)rank * 77 + 1);
    memset(rb, 0, BIG);
    MPI_Sendrecv(sb, BIG, MPI_BYTE, right, 11, rb, BIG, MPI_BYTE, left, 11, c, MPI_STATUS_IGNORE);
    if (MTest_Verify_bytes(rb, BIG, (uint64_t)left * 77 + 1) >= 0)
        TFAIL(t, "large message from %d corrupted", left);
    free(sb);
    free(rb);

    /* Collectives. */
    MPI_Barrier(c);
    long sum = 0, me = rank;
    MPI_Allreduce(&me, &sum, 1, MPI_LONG, MPI_SUM, c);
    if (sum != (long)size * (size - 1) / 2)
        TFAIL(t, "allreduce %ld", sum);
    int root_val = rank == size - 1 ? 4242 : -1;
    MPI_Bcast(&root_val, 1, MPI_INT, size - 1, c);
    if (root_val != 4242)
        TFAIL(t, "bcast %d", root_val);
    int *all = malloc(sizeof(int) * (size_t)size);
    MPI_Allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, c);
    for (int i = 0; i < size; i++)
        if (all[i] != i)
            TFAIL(t, "allgather[%d] = %d", i, all[i]);
    free(all);

    /* A nonblocking constructor is refused. */
    MPI_Comm d = MPI_COMM_NULL;
    MPI_Request r = MPI_REQUEST_NULL;
    int rc = MPI_Comm_idup(c, &d, &r);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    if (rc == MPI_SUCCESS || cls != MPI_ERR_UNSUPPORTED_OPERATION)
        TFAIL(t, "MPI_Comm_idup on an endpoint: rc %d class %d", rc, cls);
    return NULL;
}
#endif

int main(int argc, char **argv)
{
    int provided, errs = 0;
    MTest_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
#ifndef HYMPI
    MTest_Skip("MPIX_Comm_create_endpoints is a hympi extension");
    return MTest_Finalize(0);
#else
    if (provided < MPI_THREAD_MULTIPLE) {
        MTest_Skip("MPI_THREAD_MULTIPLE not provided");
        return MTest_Finalize(0);
    }
    if (getenv("MTEST_EP_MAX"))
        ep_max = atoi(getenv("MTEST_EP_MAX"));
    MTest_Errors_return(MPI_COMM_WORLD);
    int mine = 1 + mtest_rank % ep_max;
    int *counts = malloc(sizeof(int) * (size_t)mtest_size);
    MPI_Allgather(&mine, 1, MPI_INT, counts, 1, MPI_INT, MPI_COMM_WORLD);
    total = 0;
    for (int p = 0; p < mtest_size; p++) {
        if (p == mtest_rank)
            first_of_mine = total;
        total += counts[p];
    }
    free(counts);

    /* Bad arguments. */
    MPI_Comm bad[1];
    CHECK_CLASS(MPIX_Comm_create_endpoints(MPI_COMM_WORLD, 0, MPI_INFO_NULL, bad), MPI_ERR_ARG,
                "my_num_ep 0");
    CHECK_CLASS(MPIX_Comm_create_endpoints(MPI_COMM_NULL, 1, MPI_INFO_NULL, bad), MPI_ERR_COMM,
                "MPI_COMM_NULL parent");

    for (int round = 0; round < 2; round++) {
        MPI_Comm eps[8];
        int rc = MPIX_Comm_create_endpoints(MPI_COMM_WORLD, mine, MPI_INFO_NULL, eps);
        CHECK_RC(rc, "MPIX_Comm_create_endpoints");
        if (rc != MPI_SUCCESS)
            break;
        pthread_t th[8];
        struct thr t[8];
        for (int k = 0; k < mine; k++) {
            t[k].k = k;
            t[k].comm = eps[k];
            t[k].errs = 0;
            pthread_create(&th[k], NULL, run, &t[k]);
        }
        for (int k = 0; k < mine; k++) {
            pthread_join(th[k], NULL);
            errs += t[k].errs;
        }
        for (int k = 0; k < mine; k++)
            CHECK_RC(MPI_Comm_free(&eps[k]), "MPI_Comm_free(endpoint)");
    }
    return MTest_Finalize(errs);
#endif
}
