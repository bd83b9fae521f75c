/*
 * Multithreaded message rate between ranks 0 and 1 (OSU/Sandia multirate
 * style).  Each rank runs T threads; thread t of rank 0 sends 8-byte
 * messages to thread t of rank 1 in windows of W MPI_Isend (rank 1 posts W
 * MPI_Irecv), both sides MPI_Waitall, then rank 1 acks the window with a
 * 4-byte message.  Pair t uses tag t on MPI_COMM_WORLD, or, with -d, its own
 * communicator from MPI_Comm_dup.  Requires MPI_THREAD_MULTIPLE.
 *
 * Reported: messages per second summed over all pairs = T * iters * W /
 * (last stop - first start) as seen by rank 0's threads.  Each pair's start
 * follows an in-process thread barrier and a zero-byte handshake with its
 * peer thread (no MPI_Barrier).
 *
 * When the library lacks MPI_THREAD_MULTIPLE, or MPI_Comm_dup fails in -d
 * mode (checked at run time with MPI_ERRORS_RETURN), a "# ... unsupported"
 * line is printed and the program exits 0 without data rows.
 *
 * Options: -t LIST thread counts (default 1,2; one row each), -d dup mode,
 *          -i N timed windows per thread (default 2000), -x N warm-up
 *          windows (default 200), -w N window (default 64).
 */
#include <pthread.h>
#include "bench_mpi.h"

#define MAX_THREADS 64
#define MAX_COUNTS 16
#define MSG_SIZE 8

struct config {
    int rank;
    long iters, skip;
    int window;
    int nthreads;
    MPI_Comm comms[MAX_THREADS]; /* per pair; all MPI_COMM_WORLD unless -d */
    pthread_barrier_t start;
};

struct worker {
    struct config *cfg;
    int id;
    double t0, t1; /* timed section, MPI_Wtime */
};

/* W messages one way, then a 4-byte ack back: one window. */
static void window(const struct config *c, MPI_Comm comm, int tag, char *buf,
                   MPI_Request *reqs)
{
    int peer = 1 - c->rank, k, ack = 0;
    if (c->rank == 0) {
        for (k = 0; k < c->window; k++)
            MPI_Isend(buf + k * MSG_SIZE, MSG_SIZE, MPI_BYTE, peer, tag, comm, &reqs[k]);
        MPI_Waitall(c->window, reqs, MPI_STATUSES_IGNORE);
        MPI_Recv(&ack, 1, MPI_INT, peer, tag, comm, MPI_STATUS_IGNORE);
    } else {
        for (k = 0; k < c->window; k++)
            MPI_Irecv(buf + k * MSG_SIZE, MSG_SIZE, MPI_BYTE, peer, tag, comm, &reqs[k]);
        MPI_Waitall(c->window, reqs, MPI_STATUSES_IGNORE);
        MPI_Send(&ack, 1, MPI_INT, peer, tag, comm);
    }
}

/* Zero-byte round trip between the two threads of a pair. */
static void handshake(int rank, MPI_Comm comm, int tag)
{
    char d = 0;
    if (rank == 0) {
        MPI_Send(&d, 0, MPI_BYTE, 1, tag, comm);
        MPI_Recv(&d, 0, MPI_BYTE, 1, tag, comm, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(&d, 0, MPI_BYTE, 0, tag, comm, MPI_STATUS_IGNORE);
        MPI_Send(&d, 0, MPI_BYTE, 0, tag, comm);
    }
}

static void *run_pair(void *arg)
{
    struct worker *w = arg;
    const struct config *c = w->cfg;
    MPI_Comm comm = c->comms[w->id];
    char *buf = calloc((size_t)c->window, MSG_SIZE);
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * (size_t)c->window);
    long i;

    if (!buf || !reqs) MPI_Abort(MPI_COMM_WORLD, 3);
    for (i = 0; i < c->skip; i++) window(c, comm, w->id, buf, reqs);
    pthread_barrier_wait(&w->cfg->start);
    handshake(c->rank, comm, w->id);
    w->t0 = MPI_Wtime();
    for (i = 0; i < c->iters; i++) window(c, comm, w->id, buf, reqs);
    w->t1 = MPI_Wtime();
    free(buf);
    free(reqs);
    return NULL;
}

/* One measurement with nthreads pairs; returns messages/s (rank 0). */
static double measure(struct config *c)
{
    pthread_t tid[MAX_THREADS];
    struct worker w[MAX_THREADS];
    double first = 0.0, last = 0.0;
    int t;

    pthread_barrier_init(&c->start, NULL, (unsigned)c->nthreads);
    for (t = 0; t < c->nthreads; t++) {
        w[t].cfg = c;
        w[t].id = t;
        if (pthread_create(&tid[t], NULL, run_pair, &w[t]) != 0) MPI_Abort(MPI_COMM_WORLD, 3);
    }
    for (t = 0; t < c->nthreads; t++) {
        pthread_join(tid[t], NULL);
        if (t == 0 || w[t].t0 < first) first = w[t].t0;
        if (t == 0 || w[t].t1 > last) last = w[t].t1;
    }
    pthread_barrier_destroy(&c->start);
    return (double)c->nthreads * (double)c->iters * c->window / (last - first);
}

/* Fills comms[0..n) with duplicates of MPI_COMM_WORLD; 0 on success. */
static int dup_comms(MPI_Comm *comms, int n)
{
    int t, rc = MPI_SUCCESS;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (t = 0; t < n && rc == MPI_SUCCESS; t++) rc = MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    if (rc == MPI_SUCCESS) return 0;
    while (--t > 0) MPI_Comm_free(&comms[t - 1]); /* the t - 1 that succeeded */
    return -1;
}

static int parse_counts(const char *list, int *counts)
{
    char *copy = strdup(list), *save = NULL, *tok;
    int n = 0;
    for (tok = strtok_r(copy, ",", &save); tok && n < MAX_COUNTS; tok = strtok_r(NULL, ",", &save))
        counts[n++] = atoi(tok);
    free(copy);
    return n;
}

int main(int argc, char **argv)
{
    static struct config c;
    int counts[MAX_COUNTS] = {1, 2}, ncounts = 2, maxt = 0, dup = 0, provided, size, k, t, opt;

    c.iters = 2000;
    c.skip = 200;
    c.window = 64;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    while ((opt = getopt(argc, argv, "t:di:x:w:")) != -1) {
        switch (opt) {
        case 't': ncounts = parse_counts(optarg, counts); break;
        case 'd': dup = 1; break;
        case 'i': c.iters = atol(optarg); break;
        case 'x': c.skip = atol(optarg); break;
        case 'w': c.window = atoi(optarg); break;
        default:
            if (c.rank == 0)
                fprintf(stderr, "usage: %s [-t n,n,...] [-d] [-i iters] [-x skip] [-w window]\n",
                        argv[0]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    for (k = 0; k < ncounts; k++) {
        if (counts[k] < 1 || counts[k] > MAX_THREADS) MPI_Abort(MPI_COMM_WORLD, 2);
        if (counts[k] > maxt) maxt = counts[k];
    }
    if (size != 2 || c.window < 1 || c.iters < 1 || c.skip < 0) {
        if (c.rank == 0) fprintf(stderr, "needs exactly 2 ranks, window >= 1, iters >= 1\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (c.rank == 0) {
        printf("# hympi-bench Multithreaded Message Rate (%d B, window %d, %s)\n", MSG_SIZE,
               c.window, dup ? "one MPI_Comm_dup per thread pair" : "MPI_COMM_WORLD, tag = thread");
    }
    if (provided < MPI_THREAD_MULTIPLE) {
        if (c.rank == 0) printf("# unsupported: MPI_THREAD_MULTIPLE not provided\n");
        MPI_Finalize();
        return 0;
    }
    for (k = 0; k < MAX_THREADS; k++) c.comms[k] = MPI_COMM_WORLD;
    if (dup && dup_comms(c.comms, maxt) != 0) {
        if (c.rank == 0) printf("# unsupported: dup mode (MPI_Comm_dup failed)\n");
        MPI_Finalize();
        return 0;
    }
    if (c.rank == 0) {
        printf("# Threads       Messages/s\n");
        fflush(stdout);
    }
    for (k = 0; k < ncounts; k++) {
        double rate;
        c.nthreads = counts[k];
        rate = measure(&c);
        if (c.rank == 0) {
            printf("%-10d%18.0f\n", c.nthreads, rate);
            fflush(stdout);
        }
    }
    if (dup)
        for (t = 0; t < maxt; t++) MPI_Comm_free(&c.comms[t]);
    MPI_Finalize();
    return 0;
}
