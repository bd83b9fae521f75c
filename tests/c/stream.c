/* stream: MPICH's stream interface (MPIX_Stream_*), as implemented by hympi.
 *  - MPIX_Stream_comm_create: ring, Allreduce and MPIX_Stream_send/recv on a stream
 *    communicator; MPIX_Comm_get_stream; a stream in use cannot be freed;
 *  - MPIX_Stream_comm_create_multiplex: process p attaches 1 + p % 3 streams (MTEST_STREAMS
 *    caps the modulus), one thread per stream; every stream sends NSEQ numbered messages to
 *    every stream of every process (its own included) with MPIX_Stream_isend and receives
 *    each stream's sequence with MPIX_Stream_recv on (source rank, source stream index):
 *    payloads name both ends, sequences arrive in order; statuses carry process ranks;
 *  - stream indices out of range give MPI_ERR_ARG.
 * hympi only: other libraries skip (MPICH 4.0 has no MPIX_Stream). */
#include "mtest.h"
#include <pthread.h>

#ifdef HYMPI
#include "hympi_mpix.h"

#define NSEQ 20

static MPI_Comm mux;
static int *counts, nmine;

struct thr {
    int j, errs;
};

#define TFAIL(t, ...)                                                                          \
    do {                                                                                       \
        if ((t)->errs++ < 10) {                                                                \
            printf("[%d] stream %d: ", mtest_rank, (t)->j);                                    \
            printf(__VA_ARGS__);                                                               \
            printf("\n");                                                                      \
            fflush(stdout);                                                                    \
        }                                                                                      \
    } while (0)

static void *stream_thread(void *arg)
{
    struct thr *t = arg;
    int nsend = 0;
    for (int q = 0; q < mtest_size; q++)
        nsend += counts[q] * NSEQ;
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * (size_t)nsend);
    int(*out)[5] = malloc(sizeof(int[5]) * (size_t)nsend);
    int n = 0;
    for (int s = 0; s < NSEQ; s++)
        for (int q = 0; q < mtest_size; q++)
            for (int i = 0; i < counts[q]; i++) {
                int *m = out[n];
                m[0] = mtest_rank, m[1] = t->j, m[2] = q, m[3] = i, m[4] = s;
                int rc = MPIX_Stream_isend(m, 5, MPI_INT, q, 3, mux, t->j, i, &reqs[n]);
                if (rc != MPI_SUCCESS)
                    TFAIL(t, "MPIX_Stream_isend to %d.%d failed", q, i);
                n++;
            }
    for (int q = 0; q < mtest_size; q++)
        for (int i = 0; i < counts[q]; i++)
            for (int s = 0; s < NSEQ; s++) {
                int m[5] = {-1, -1, -1, -1, -1};
                MPI_Status st;
                int rc = MPIX_Stream_recv(m, 5, MPI_INT, q, 3, mux, i, t->j, &st);
                if (rc != MPI_SUCCESS) {
                    TFAIL(t, "MPIX_Stream_recv from %d.%d failed", q, i);
                    continue;
                }
                if (m[0] != q || m[1] != i || m[2] != mtest_rank || m[3] != t->j || m[4] != s)
                    TFAIL(t, "from %d.%d seq %d: got (%d.%d -> %d.%d seq %d)", q, i, s, m[0], m[1],
                          m[2], m[3], m[4]);
                if (st.MPI_SOURCE != q || st.MPI_TAG != 3)
                    TFAIL(t, "status source %d tag %d, expected %d 3", st.MPI_SOURCE, st.MPI_TAG,
                          q);
            }
    MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
    free(out);
    free(reqs);
    return NULL;
}
#endif

int main(int argc, char **argv)
{
    int provided, errs = 0;
    MTest_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
#ifndef HYMPI
    MTest_Skip("MPIX_Stream_* are not in this MPI library's release");
    return MTest_Finalize(0);
#else
    if (provided < MPI_THREAD_MULTIPLE) {
        MTest_Skip("MPI_THREAD_MULTIPLE not provided");
        return MTest_Finalize(0);
    }
    MTest_Errors_return(MPI_COMM_WORLD);
    int rank = mtest_rank, size = mtest_size;

    /* A stream communicator. */
    MPIX_Stream s0 = MPIX_STREAM_NULL, got = MPIX_STREAM_NULL;
    MPI_Comm sc = MPI_COMM_NULL;
    CHECK_RC(MPIX_Stream_create(MPI_INFO_NULL, &s0), "MPIX_Stream_create");
    CHECK_RC(MPIX_Stream_comm_create(MPI_COMM_WORLD, s0, &sc), "MPIX_Stream_comm_create");
    MPI_Comm_set_errhandler(sc, MPI_ERRORS_RETURN);
    CHECK_RC(MPIX_Comm_get_stream(sc, 0, &got), "MPIX_Comm_get_stream");
    CHECK(got == s0, "MPIX_Comm_get_stream gave another stream");
    int right = (rank + 1) % size, left = (rank + size - 1) % size, v = -1;
    MPI_Sendrecv(&rank, 1, MPI_INT, right, 1, &v, 1, MPI_INT, left, 1, sc, MPI_STATUS_IGNORE);
    CHECK(v == left, "ring on the stream communicator: %d", v);
    long sum = 0, me = rank;
    MPI_Allreduce(&me, &sum, 1, MPI_LONG, MPI_SUM, sc);
    CHECK(sum == (long)size * (size - 1) / 2, "allreduce %ld", sum);
    MPI_Request r;
    v = -1;
    CHECK_RC(MPIX_Stream_irecv(&v, 1, MPI_INT, left, 2, sc, 0, 0, &r), "MPIX_Stream_irecv");
    CHECK_RC(MPIX_Stream_send(&rank, 1, MPI_INT, right, 2, sc, 0, 0), "MPIX_Stream_send");
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(v == left, "stream send/recv: %d", v);
    CHECK_CLASS(MPIX_Stream_free(&s0), MPI_ERR_OTHER, "MPIX_Stream_free of a stream in use");
    CHECK_RC(MPI_Comm_free(&sc), "MPI_Comm_free(stream comm)");
    CHECK_RC(MPIX_Stream_free(&s0), "MPIX_Stream_free");
    CHECK(s0 == MPIX_STREAM_NULL, "stream handle not reset");

    /* A multiplex communicator, one thread per local stream. */
    int modulus = getenv("MTEST_STREAMS") ? atoi(getenv("MTEST_STREAMS")) : 3;
    nmine = 1 + rank % modulus;
    counts = malloc(sizeof(int) * (size_t)size);
    MPI_Allgather(&nmine, 1, MPI_INT, counts, 1, MPI_INT, MPI_COMM_WORLD);
    MPIX_Stream st[8];
    for (int j = 0; j < nmine; j++)
        CHECK_RC(MPIX_Stream_create(MPI_INFO_NULL, &st[j]), "MPIX_Stream_create");
    int rc = MPIX_Stream_comm_create_multiplex(MPI_COMM_WORLD, nmine, st, &mux);
    CHECK_RC(rc, "MPIX_Stream_comm_create_multiplex");
    if (rc == MPI_SUCCESS) {
        MPI_Comm_set_errhandler(mux, MPI_ERRORS_RETURN);
        int mr = -1, ms = -1;
        MPI_Comm_rank(mux, &mr);
        MPI_Comm_size(mux, &ms);
        CHECK(mr == rank && ms == size, "multiplex rank %d size %d", mr, ms);
        for (int j = 0; j < nmine; j++) {
            CHECK_RC(MPIX_Comm_get_stream(mux, j, &got), "MPIX_Comm_get_stream");
            CHECK(got == st[j], "stream %d of the multiplex communicator", j);
        }
        CHECK_CLASS(MPIX_Comm_get_stream(mux, nmine, &got), MPI_ERR_ARG,
                    "MPIX_Comm_get_stream index out of range");
        CHECK_CLASS(MPIX_Stream_send(&rank, 1, MPI_INT, right, 4, mux, nmine, 0), MPI_ERR_ARG,
                    "source stream index out of range");
        CHECK_CLASS(MPIX_Stream_send(&rank, 1, MPI_INT, right, 4, mux, 0, counts[right]),
                    MPI_ERR_ARG, "destination stream index out of range");
        pthread_t th[8];
        struct thr t[8];
        for (int j = 0; j < nmine; j++) {
            t[j].j = j;
            t[j].errs = 0;
            pthread_create(&th[j], NULL, stream_thread, &t[j]);
        }
        for (int j = 0; j < nmine; j++) {
            pthread_join(th[j], NULL);
            errs += t[j].errs;
        }
        MPI_Barrier(mux);
        CHECK_RC(MPI_Comm_free(&mux), "MPI_Comm_free(multiplex)");
    }
    for (int j = 0; j < nmine; j++)
        CHECK_RC(MPIX_Stream_free(&st[j]), "MPIX_Stream_free");
    free(counts);
    return MTest_Finalize(errs);
#endif
}
