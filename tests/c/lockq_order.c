/* lockq_order: threads of one process share one communicator (one VCI, one lock), so under
 * a try-lock model (HYMPI_THREAD_MODEL=lockq) many of their nonblocking calls miss the lock
 * and are queued. Checks that nothing is lost or reordered (MPI's non-overtaking rule per
 * sending thread) and that every completion path runs queued operations:
 *  1. posted first: a window of Irecv (tag = thread), then a window of Isend to itself,
 *     then Waitall;
 *  2. unexpected first: a window of Isend, then Irecv, completed by MPI_Test loops;
 *  3. Isend followed by MPI_Request_free, then a blocking Recv of that message;
 *  4. across threads: thread t receives from thread t-1 (tag 1000 + receiver) and sends to
 *     thread t+1; sequences per sender arrive in order;
 *  5. MPI_Issend to itself, then MPI_Irecv, Waitall (a queued receive meeting a synchronous
 *     message is run by the slow path).
 * Skips when MPI_THREAD_MULTIPLE is not provided. */
#include "mtest.h"
#include <pthread.h>

#define NTHREADS 4
#define WIN 16
#ifdef HYMPI
static int ITERS = 60; /* MTEST_LOCKQ_ITERS overrides */
#else
/* MPICH 4.0.2 takes over 100 s for 60 windows of this pattern (its global critical section
 * under four polling threads); a few windows still prove the test's expectations there. */
static int ITERS = 4;
#endif

static MPI_Comm shared;

struct thr {
    int id;
    int errs;
};

#define TFAIL(t, ...)                                                                          \
    do {                                                                                       \
        if ((t)->errs++ < 10) {                                                                \
            printf("thread %d: ", (t)->id);                                                    \
            printf(__VA_ARGS__);                                                               \
            printf("\n");                                                                      \
            fflush(stdout);                                                                    \
        }                                                                                      \
    } while (0)

static void *run(void *arg)
{
    struct thr *t = arg;
    int id = t->id, it, k, seq = 0, xseq = 0, xrecv = 0;
    int sbuf[WIN][2], rbuf[WIN][2];
    MPI_Request reqs[2 * WIN];
    int next = (id + 1) % NTHREADS, prev = (id + NTHREADS - 1) % NTHREADS;

    for (it = 0; it < ITERS; it++) {
        /* 1. posted first */
        for (k = 0; k < WIN; k++) {
            rbuf[k][0] = rbuf[k][1] = -1;
            MPI_Irecv(rbuf[k], 2, MPI_INT, 0, id, shared, &reqs[k]);
        }
        for (k = 0; k < WIN; k++) {
            sbuf[k][0] = id;
            sbuf[k][1] = seq + k;
            MPI_Isend(sbuf[k], 2, MPI_INT, 0, id, shared, &reqs[WIN + k]);
        }
        MPI_Waitall(2 * WIN, reqs, MPI_STATUSES_IGNORE);
        for (k = 0; k < WIN; k++)
            if (rbuf[k][0] != id || rbuf[k][1] != seq + k)
                TFAIL(t, "posted: slot %d got (%d,%d), expected (%d,%d)", k, rbuf[k][0],
                      rbuf[k][1], id, seq + k);
        seq += WIN;

        /* 2. unexpected first, completed by MPI_Test */
        for (k = 0; k < WIN; k++) {
            sbuf[k][0] = id;
            sbuf[k][1] = seq + k;
            MPI_Isend(sbuf[k], 2, MPI_INT, 0, id, shared, &reqs[k]);
        }
        for (k = 0; k < WIN; k++) {
            rbuf[k][0] = rbuf[k][1] = -1;
            MPI_Irecv(rbuf[k], 2, MPI_INT, 0, id, shared, &reqs[WIN + k]);
        }
        for (k = 0; k < 2 * WIN; k++) {
            int done = 0;
            MPI_Status st;
            while (!done) MPI_Test(&reqs[k], &done, &st);
            if (k >= WIN && (st.MPI_TAG != id || st.MPI_SOURCE != 0))
                TFAIL(t, "unexpected: status (%d,%d)", st.MPI_SOURCE, st.MPI_TAG);
        }
        for (k = 0; k < WIN; k++)
            if (rbuf[k][0] != id || rbuf[k][1] != seq + k)
                TFAIL(t, "unexpected: slot %d got (%d,%d), expected (%d,%d)", k, rbuf[k][0],
                      rbuf[k][1], id, seq + k);
        seq += WIN;

        /* 3. freed send, then a blocking receive */
        {
            int v[2] = {id, seq}, w[2] = {-1, -1};
            MPI_Request r;
            MPI_Isend(v, 2, MPI_INT, 0, 500 + id, shared, &r);
            MPI_Request_free(&r);
            MPI_Recv(w, 2, MPI_INT, 0, 500 + id, shared, MPI_STATUS_IGNORE);
            if (w[0] != id || w[1] != seq)
                TFAIL(t, "freed send: got (%d,%d), expected (%d,%d)", w[0], w[1], id, seq);
            seq++;
        }

        /* 5. a synchronous send to itself, then its receive: a queued receive that meets it
         * cannot be run under the VCI lock alone and goes to the slow path */
        {
            int v[2] = {id, seq}, w[2] = {-1, -1};
            MPI_Request r[2];
            MPI_Issend(v, 2, MPI_INT, 0, 700 + id, shared, &r[0]);
            MPI_Irecv(w, 2, MPI_INT, 0, 700 + id, shared, &r[1]);
            MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
            if (w[0] != id || w[1] != seq)
                TFAIL(t, "synchronous: got (%d,%d), expected (%d,%d)", w[0], w[1], id, seq);
            seq++;
        }

        /* 4. to the next thread, from the previous one (receives posted first: a send to
         * oneself need not complete before it is matched) */
        {
            int w[2][2] = {{-1, -1}, {-1, -1}};
            for (k = 0; k < 2; k++)
                MPI_Irecv(w[k], 2, MPI_INT, 0, 1000 + id, shared, &reqs[k]);
            for (k = 0; k < 2; k++) {
                sbuf[k][0] = id;
                sbuf[k][1] = xseq++;
                MPI_Isend(sbuf[k], 2, MPI_INT, 0, 1000 + next, shared, &reqs[2 + k]);
            }
            MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE);
            for (k = 0; k < 2; k++) {
                if (w[k][0] != prev || w[k][1] != xrecv)
                    TFAIL(t, "from thread %d: got (%d,%d), expected (%d,%d)", prev, w[k][0],
                          w[k][1], prev, xrecv);
                xrecv++;
            }
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided, i, errs = 0;
    struct thr th[NTHREADS];
    pthread_t tid[NTHREADS];
    const char *env = getenv("MTEST_LOCKQ_ITERS");

    if (env && atoi(env) > 0) ITERS = atoi(env);
    MTest_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE) {
        MTest_Skip("MPI_THREAD_MULTIPLE not provided");
        return MTest_Finalize(0);
    }
    MPI_Comm_dup(MPI_COMM_SELF, &shared);
    for (i = 0; i < NTHREADS; i++) {
        th[i].id = i;
        th[i].errs = 0;
    }
    for (i = 0; i < NTHREADS; i++) pthread_create(&tid[i], NULL, run, &th[i]);
    for (i = 0; i < NTHREADS; i++) {
        pthread_join(tid[i], NULL);
        errs += th[i].errs;
    }
    MPI_Comm_free(&shared);
    return MTest_Finalize(errs);
}
