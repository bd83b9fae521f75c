/* self_threads: many threads (more than cores) exchanging messages with themselves at once on
 * the *predefined* MPI_COMM_SELF and MPI_COMM_WORLD (MPI_THREAD_MULTIPLE), in the shape of the
 * software-overhead kernel: windows of MPI_Irecv + MPI_Isend + MPI_Waitall. The threads share
 * each communicator (and so its VCI and its lock), each with a tag of its own: nothing lost,
 * duplicated, corrupted or overtaken.
 *
 * Per iteration a thread picks one of these shapes:
 *  - receives posted first, then the sends, Waitall with MPI_STATUSES_IGNORE;
 *  - the sends first (unexpected messages), then the receives;
 *  - Waitall with statuses, checked (source, tag, count);
 *  - Waitall over an array with MPI_REQUEST_NULL entries mixed in;
 *  - a receive shorter than the message: MPI_ERR_TRUNCATE in its status (MPI_ERRORS_RETURN).
 * Skips when MPI_THREAD_MULTIPLE is not provided. Threads count their own failures. */
#include "mtest.h"
#include <pthread.h>

#define NTHREADS 8
#define WIN 4
#define WORDS 6 /* payload: thread, iteration, index, comm, checksum, spare */
static int NITER = 3000; /* MTEST_SELF_THREADS_ITERS overrides */

struct thr {
    int id;
    int errs;
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

static void fill(int *m, int t, int it, int k, int c)
{
    m[0] = t;
    m[1] = it;
    m[2] = k;
    m[3] = c;
    m[4] = (t * 7919) ^ (it * 31) ^ (k * 131) ^ (c * 17);
    m[5] = -1;
}

static void check(struct thr *t, const int *m, int it, int k, int c, const char *shape)
{
    int want = (t->id * 7919) ^ (it * 31) ^ (k * 131) ^ (c * 17);
    if (m[0] != t->id || m[1] != it || m[2] != k || m[3] != c || m[4] != want)
        TFAIL(t, "%s: iteration %d message %d on comm %d: got (%d, %d, %d, %d, %d)", shape, it,
              k, c, m[0], m[1], m[2], m[3], m[4]);
}

static void *run(void *arg)
{
    struct thr *t = arg;
    int sb[WIN][WORDS], rb[WIN][WORDS];
    MPI_Request req[2 * WIN + 2];
    MPI_Status st[2 * WIN + 2];
    int it, k, rc;

    for (it = 0; it < NITER; it++) {
        int c = it & 1; /* 0: MPI_COMM_SELF, 1: MPI_COMM_WORLD to this rank */
        MPI_Comm comm = c ? MPI_COMM_WORLD : MPI_COMM_SELF;
        int peer = c ? mtest_rank : 0;
        int tag = 10 + t->id;
        int shape = (it / 2) % 5;
        int n = 0;
        const char *name = "posted";

        for (k = 0; k < WIN; k++) {
            fill(sb[k], t->id, it, k, c);
            memset(rb[k], 0, sizeof rb[k]);
        }
        if (shape == 1) { /* sends first: unexpected on arrival */
            name = "unexpected";
            for (k = 0; k < WIN; k++)
                MPI_Isend(sb[k], WORDS, MPI_INT, peer, tag, comm, &req[WIN + k]);
            for (k = 0; k < WIN; k++)
                MPI_Irecv(rb[k], WORDS, MPI_INT, peer, tag, comm, &req[k]);
            n = 2 * WIN;
        } else {
            for (k = 0; k < WIN; k++)
                MPI_Irecv(rb[k], WORDS, MPI_INT, peer, tag, comm, &req[k]);
            for (k = 0; k < WIN; k++)
                MPI_Isend(sb[k], WORDS, MPI_INT, peer, tag, comm, &req[WIN + k]);
            n = 2 * WIN;
        }
        if (shape == 3) { /* null entries mixed in */
            name = "with nulls";
            req[n++] = MPI_REQUEST_NULL;
            req[n++] = MPI_REQUEST_NULL;
        }
        if (shape == 2 || shape == 4) {
            name = shape == 2 ? "statuses" : "truncated";
            if (shape == 4) {
                /* Complete the window, then a fresh pair whose receive is too short. */
                MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
                for (k = 0; k < WIN; k++) check(t, rb[k], it, k, c, "before truncation");
                MPI_Irecv(rb[0], WORDS - 2, MPI_INT, peer, tag, comm, &req[0]);
                MPI_Isend(sb[0], WORDS, MPI_INT, peer, tag, comm, &req[1]);
                rc = MPI_Waitall(2, req, st);
                if (MTest_Class(rc) != MPI_ERR_IN_STATUS ||
                    MTest_Class(st[0].MPI_ERROR) != MPI_ERR_TRUNCATE ||
                    (st[1].MPI_ERROR != MPI_SUCCESS && st[1].MPI_ERROR != MPI_ERR_PENDING))
                    TFAIL(t, "truncated receive: Waitall %d, status errors %d and %d", rc,
                          st[0].MPI_ERROR, st[1].MPI_ERROR);
                /* Whether a request that failed is freed, and whether the send completed
                 * (MPI_ERR_PENDING otherwise), is the implementation's choice. */
                for (k = 0; k < 2; k++)
                    if (req[k] != MPI_REQUEST_NULL) MPI_Request_free(&req[k]);
                if (rb[0][0] != t->id || rb[0][1] != it || rb[0][2] != 0 || rb[0][3] != c)
                    TFAIL(t, "truncated receive: the first %d ints differ", WORDS - 2);
                continue;
            }
            rc = MPI_Waitall(n, req, st);
            if (rc != MPI_SUCCESS) TFAIL(t, "Waitall with statuses returned %d", rc);
            for (k = 0; k < WIN; k++) {
                int cnt = -1;
                MPI_Get_count(&st[k], MPI_INT, &cnt);
                if (st[k].MPI_SOURCE != peer || st[k].MPI_TAG != tag || cnt != WORDS)
                    TFAIL(t, "status of receive %d: source %d tag %d count %d", k,
                          st[k].MPI_SOURCE, st[k].MPI_TAG, cnt);
            }
        } else {
            rc = MPI_Waitall(n, req, MPI_STATUSES_IGNORE);
            if (rc != MPI_SUCCESS) TFAIL(t, "Waitall returned %d", rc);
        }
        for (k = 0; k < n; k++)
            if (req[k] != MPI_REQUEST_NULL) TFAIL(t, "%s: request %d not freed", name, k);
        for (k = 0; k < WIN; k++) check(t, rb[k], it, k, c, name);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    pthread_t tid[NTHREADS];
    struct thr th[NTHREADS];
    int provided, i, errs = 0;
    const char *e = getenv("MTEST_SELF_THREADS_ITERS");

    if (e) NITER = atoi(e);
    MTest_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE) {
        MTest_Skip("MPI_THREAD_MULTIPLE not provided");
        return MTest_Finalize(0);
    }
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (i = 0; i < NTHREADS; i++) {
        th[i].id = i;
        th[i].errs = 0;
        pthread_create(&tid[i], NULL, run, &th[i]);
    }
    for (i = 0; i < NTHREADS; i++) {
        pthread_join(tid[i], NULL);
        errs += th[i].errs;
    }
    return MTest_Finalize(errs);
}
