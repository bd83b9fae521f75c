/*
 * Multithreaded latency between ranks 0 and 1.  Each rank runs T threads;
 * thread t of rank 0 ping-pongs an 8-byte message (MPI_Send/MPI_Recv) with
 * thread t of rank 1, all pairs at the same time.  Pair t uses tag t on
 * MPI_COMM_WORLD, or, with -d, its own communicator from MPI_Comm_dup (tag 0).
 * Requires MPI_THREAD_MULTIPLE.
 *
 * A pair's one-way latency is its round-trip time / 2, averaged over its
 * iterations.  Reported per thread count: the average over the T pairs
 * (Latency (us)) and the slowest pair (Max pair (us)).  Each pair's timed
 * section follows an in-process thread barrier and a zero-byte handshake
 * with its peer thread (no MPI_Barrier).
 *
 * Oversubscribed runs (2 x T threads on fewer cores) can be very slow for
 * libraries that busy-poll, so each pair stops after -i round trips or
 * after -b seconds, whichever comes first: rank 0's thread decides and sets
 * a stop flag in the last ping, which its peer echoes, so both sides stop
 * after the same round trip.  The average is over the round trips done.
 *
 * When the library lacks MPI_THREAD_MULTIPLE, or MPI_Comm_dup fails in -d
 * mode (checked at run time with MPI_ERRORS_RETURN), a "# unsupported: ..."
 * line is printed and the program exits 0 without data rows.
 *
 * Options: -t LIST thread counts (default 1,2; one row each), -d dup mode,
 *          -i N timed round trips per pair (default 10000), -x N warm-up
 *          round trips (default 100), -b S time budget per pair in seconds
 *          (default 5).
 */
#include <pthread.h>
#include "bench_mpi.h"

#define MAX_THREADS 64
#define MAX_COUNTS 16
#define MSG_SIZE 8

struct config {
    int rank;
    long iters, skip;
    double budget;
    int nthreads;
    int dup;
    MPI_Comm comms[MAX_THREADS]; /* per pair; all MPI_COMM_WORLD unless -d */
    pthread_barrier_t start;
};

struct worker {
    struct config *cfg;
    int id;
    long done;     /* timed round trips */
    double t0, t1; /* timed section, MPI_Wtime */
};

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

/* Up to n round trips; rank 0 stops early once `deadline` (MPI_Wtime) has
 * passed (deadline < 0: never).  buf[0] carries the stop flag, buf[1] the
 * pair id (checked on both sides).  Returns the round trips done. */
static long pingpong(const struct config *c, MPI_Comm comm, int id, long n, double deadline)
{
    unsigned char buf[MSG_SIZE];
    long i;
    int tag = c->dup ? 0 : id;

    for (i = 0; i < n;) {
        if (c->rank == 0) {
            memset(buf, 0, sizeof buf);
            i++;
            buf[0] = (i == n || (deadline >= 0 && MPI_Wtime() > deadline)) ? 1 : 0;
            buf[1] = (unsigned char)id;
            MPI_Send(buf, MSG_SIZE, MPI_BYTE, 1, tag, comm);
            MPI_Recv(buf, MSG_SIZE, MPI_BYTE, 1, tag, comm, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, MSG_SIZE, MPI_BYTE, 0, tag, comm, MPI_STATUS_IGNORE);
            MPI_Send(buf, MSG_SIZE, MPI_BYTE, 0, tag, comm);
            i++;
        }
        if (buf[1] != (unsigned char)id) {
            fprintf(stderr, "rank %d pair %d: received a message of pair %d\n", c->rank, id,
                    buf[1]);
            MPI_Abort(MPI_COMM_WORLD, 4);
        }
        if (buf[0]) break;
    }
    return i;
}

static void *run_pair(void *arg)
{
    struct worker *w = arg;
    const struct config *c = w->cfg;
    MPI_Comm comm = c->comms[w->id];
    int tag = c->dup ? 0 : w->id;

    if (c->skip > 0) pingpong(c, comm, w->id, c->skip, -1.0);
    pthread_barrier_wait(&w->cfg->start);
    handshake(c->rank, comm, tag);
    w->t0 = MPI_Wtime();
    w->done = pingpong(c, comm, w->id, c->iters, w->t0 + c->budget);
    w->t1 = MPI_Wtime();
    return NULL;
}

/* One measurement with nthreads pairs: average and maximum one-way latency
 * over the pairs, in seconds (meaningful on rank 0). */
static void measure(struct config *c, double *avg, double *max)
{
    pthread_t tid[MAX_THREADS];
    struct worker w[MAX_THREADS];
    int t;

    pthread_barrier_init(&c->start, NULL, (unsigned)c->nthreads);
    for (t = 0; t < c->nthreads; t++) {
        w[t].cfg = c;
        w[t].id = t;
        w[t].done = 0;
        if (pthread_create(&tid[t], NULL, run_pair, &w[t]) != 0) MPI_Abort(MPI_COMM_WORLD, 3);
    }
    *avg = 0.0;
    *max = 0.0;
    for (t = 0; t < c->nthreads; t++) {
        double lat;
        pthread_join(tid[t], NULL);
        lat = w[t].done > 0 ? (w[t].t1 - w[t].t0) / (2.0 * (double)w[t].done) : 0.0;
        *avg += lat / c->nthreads;
        if (lat > *max) *max = lat;
    }
    pthread_barrier_destroy(&c->start);
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
    int counts[MAX_COUNTS] = {1, 2}, ncounts = 2, maxt = 0, provided, size, k, t, opt;

    c.iters = 10000;
    c.skip = 100;
    c.budget = 5.0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    while ((opt = getopt(argc, argv, "t:di:x:b:")) != -1) {
        switch (opt) {
        case 't': ncounts = parse_counts(optarg, counts); break;
        case 'd': c.dup = 1; break;
        case 'i': c.iters = atol(optarg); break;
        case 'x': c.skip = atol(optarg); break;
        case 'b': c.budget = atof(optarg); break;
        default:
            if (c.rank == 0)
                fprintf(stderr, "usage: %s [-t n,n,...] [-d] [-i iters] [-x skip] [-b seconds]\n",
                        argv[0]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    for (k = 0; k < ncounts; k++) {
        if (counts[k] < 1 || counts[k] > MAX_THREADS) MPI_Abort(MPI_COMM_WORLD, 2);
        if (counts[k] > maxt) maxt = counts[k];
    }
    if (size != 2 || c.iters < 1 || c.skip < 0 || c.budget <= 0) {
        if (c.rank == 0) fprintf(stderr, "needs exactly 2 ranks, iters >= 1, budget > 0\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (c.rank == 0) {
        printf("# hympi-bench Multithreaded Latency (%d B ping-pong per thread pair, %s)\n",
               MSG_SIZE,
               c.dup ? "one MPI_Comm_dup per thread pair" : "MPI_COMM_WORLD, tag = thread");
    }
    if (provided < MPI_THREAD_MULTIPLE) {
        if (c.rank == 0) printf("# unsupported: MPI_THREAD_MULTIPLE not provided\n");
        MPI_Finalize();
        return 0;
    }
    for (k = 0; k < MAX_THREADS; k++) c.comms[k] = MPI_COMM_WORLD;
    if (c.dup && dup_comms(c.comms, maxt) != 0) {
        if (c.rank == 0) printf("# unsupported: dup mode (MPI_Comm_dup failed)\n");
        MPI_Finalize();
        return 0;
    }
    if (c.rank == 0) {
        printf("# Threads       Latency (us)    Max pair (us)\n");
        fflush(stdout);
    }
    for (k = 0; k < ncounts; k++) {
        double avg, max;
        c.nthreads = counts[k];
        measure(&c, &avg, &max);
        if (c.rank == 0) {
            printf("%-10d%18.3f%17.3f\n", c.nthreads, avg * 1e6, max * 1e6);
            fflush(stdout);
        }
    }
    if (c.dup)
        for (t = 0; t < maxt; t++) MPI_Comm_free(&c.comms[t]);
    MPI_Finalize();
    return 0;
}
