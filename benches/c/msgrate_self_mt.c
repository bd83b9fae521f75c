/*
 * Multithreaded message rate inside one process: T threads, each on its own duplicate of
 * MPI_COMM_SELF, each posting a window of W MPI_Irecv (8 B) and W MPI_Isend to itself, then
 * one MPI_Waitall over the 2W requests.  Measures what MPI_THREAD_MULTIPLE costs threads
 * that share nothing but the library: with per-VCI state they should scale with the cores.
 * Requires MPI_THREAD_MULTIPLE; run as a singleton (no launcher needed) or on any number of
 * ranks (each measures alone; rank 0 reports).
 *
 * Reported: messages per second summed over threads = T * iters * W / (last stop - first
 * start), one row per thread count.
 *
 * Options: -t LIST thread counts (default 1,2), -i N timed windows per thread (default
 * 20000), -x N warm-up windows (default 500), -w N window (default 64), -s: all threads
 * share one duplicate of MPI_COMM_SELF made with the info mpi_assert_no_any_tag = true,
 * each thread using its own tag (its index) for every message instead of tags 0..W-1; -S:
 * the same without the info (the baseline for -s).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <mpi.h>

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif

#define MAX_THREADS 64
#define MAX_COUNTS 16
#define MSG_SIZE 8

struct config {
    long iters, skip;
    int window, nthreads, shared, hinted;
    MPI_Comm comms[MAX_THREADS];
    pthread_barrier_t start;
};

struct worker {
    struct config *cfg;
    int id;
    double t0, t1;
    long errors;
};

static void window(const struct config *c, MPI_Comm comm, int id, char *sbuf, char *rbuf,
                   MPI_Request *reqs)
{
    int k, w = c->window;
    for (k = 0; k < w; k++)
        MPI_Irecv(rbuf + k * MSG_SIZE, MSG_SIZE, MPI_BYTE, 0, c->shared ? id : k, comm, &reqs[k]);
    for (k = 0; k < w; k++)
        MPI_Isend(sbuf + k * MSG_SIZE, MSG_SIZE, MPI_BYTE, 0, c->shared ? id : k, comm,
                  &reqs[w + k]);
    MPI_Waitall(2 * w, reqs, MPI_STATUSES_IGNORE);
}

static void *run(void *arg)
{
    struct worker *w = arg;
    const struct config *c = w->cfg;
    MPI_Comm comm = c->comms[w->id];
    size_t bytes = (size_t)c->window * MSG_SIZE;
    char *sbuf = malloc(bytes), *rbuf = calloc(1, bytes);
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * 2 * (size_t)c->window);
    long i;
    size_t k;

    if (!sbuf || !rbuf || !reqs) MPI_Abort(MPI_COMM_WORLD, 3);
    for (k = 0; k < bytes; k++) sbuf[k] = (char)(k * 7 + w->id);
    for (i = 0; i < c->skip; i++) window(c, comm, w->id, sbuf, rbuf, reqs);
    pthread_barrier_wait(&w->cfg->start);
    w->t0 = MPI_Wtime();
    for (i = 0; i < c->iters; i++) window(c, comm, w->id, sbuf, rbuf, reqs);
    w->t1 = MPI_Wtime();
    w->errors = memcmp(sbuf, rbuf, bytes) != 0;
    free(sbuf);
    free(rbuf);
    free(reqs);
    return NULL;
}

static double measure(struct config *c, long *errors)
{
    pthread_t tid[MAX_THREADS];
    struct worker w[MAX_THREADS];
    double first = 0.0, last = 0.0;
    int t;

    pthread_barrier_init(&c->start, NULL, (unsigned)c->nthreads);
    for (t = 0; t < c->nthreads; t++) {
        w[t].cfg = c;
        w[t].id = t;
        w[t].errors = 0;
        if (pthread_create(&tid[t], NULL, run, &w[t]) != 0) MPI_Abort(MPI_COMM_WORLD, 3);
    }
    for (t = 0; t < c->nthreads; t++) {
        pthread_join(tid[t], NULL);
        if (t == 0 || w[t].t0 < first) first = w[t].t0;
        if (t == 0 || w[t].t1 > last) last = w[t].t1;
        *errors += w[t].errors;
    }
    pthread_barrier_destroy(&c->start);
    return (double)c->nthreads * (double)c->iters * c->window / (last - first);
}

int main(int argc, char **argv)
{
    static struct config c;
    int counts[MAX_COUNTS] = {1, 2}, ncounts = 2, maxt = 1, provided, rank, k, opt;
    char *copy, *save = NULL, *tok;
    long errors = 0;

    c.iters = 20000;
    c.skip = 500;
    c.window = 64;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    while ((opt = getopt(argc, argv, "t:i:x:w:sS")) != -1) {
        switch (opt) {
        case 't':
            ncounts = 0;
            copy = strdup(optarg);
            for (tok = strtok_r(copy, ",", &save); tok && ncounts < MAX_COUNTS;
                 tok = strtok_r(NULL, ",", &save))
                counts[ncounts++] = atoi(tok);
            free(copy);
            break;
        case 'i': c.iters = atol(optarg); break;
        case 'x': c.skip = atol(optarg); break;
        case 'w': c.window = atoi(optarg); break;
        case 's': c.shared = c.hinted = 1; break;
        case 'S': c.shared = 1; c.hinted = 0; break;
        default:
            fprintf(stderr, "usage: %s [-t n,n,...] [-i iters] [-x skip] [-w window] [-s|-S]\n",
                    argv[0]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    for (k = 0; k < ncounts; k++) {
        if (counts[k] < 1 || counts[k] > MAX_THREADS) MPI_Abort(MPI_COMM_WORLD, 2);
        if (counts[k] > maxt) maxt = counts[k];
    }
    if (rank == 0)
        printf("# hympi-bench Multithreaded self message rate (%d B, window %d, %s)\n", MSG_SIZE,
               c.window,
               c.hinted   ? "one MPI_COMM_SELF duplicate with mpi_assert_no_any_tag, a tag per "
                            "thread"
               : c.shared ? "one MPI_COMM_SELF duplicate, a tag per thread"
                          : "one MPI_COMM_SELF duplicate per thread");
    if (provided < MPI_THREAD_MULTIPLE) {
        if (rank == 0) printf("# unsupported: MPI_THREAD_MULTIPLE not provided\n");
        MPI_Finalize();
        return 0;
    }
    if (c.shared) {
        MPI_Info info;
        MPI_Info_create(&info);
        if (c.hinted) MPI_Info_set(info, "mpi_assert_no_any_tag", "true");
        MPI_Comm_dup_with_info(MPI_COMM_SELF, info, &c.comms[0]);
        MPI_Info_free(&info);
        for (k = 1; k < maxt; k++) c.comms[k] = c.comms[0];
    } else {
        for (k = 0; k < maxt; k++) MPI_Comm_dup(MPI_COMM_SELF, &c.comms[k]);
    }
    if (rank == 0) printf("# Threads       Messages/s\n");
    for (k = 0; k < ncounts; k++) {
        double rate;
        c.nthreads = counts[k];
        rate = measure(&c, &errors);
        if (rank == 0) {
            printf("%-10d%18.0f\n", c.nthreads, rate);
            fflush(stdout);
        }
    }
    for (k = 0; k < (c.shared ? 1 : maxt); k++) MPI_Comm_free(&c.comms[k]);
    if (errors) {
        fprintf(stderr, "msgrate_self_mt: %ld threads received wrong data\n", errors);
        MPI_Abort(MPI_COMM_WORLD, 4);
    }
    MPI_Finalize();
    return 0;
}
