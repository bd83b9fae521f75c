/*
 * Reduction collectives and MPI_Barrier: time per call of MPI_Reduce (root 0) or
 * MPI_Reduce_scatter_block (MPI_SUM of doubles, -s bytes per rank), or of MPI_Barrier,
 * on MPI_COMM_WORLD, in microseconds.
 *
 * reduce, reduce_scatter_block: each sample is one call after an MPI_Barrier (a rooted
 * reduction would otherwise pipeline back-to-back calls); a rank's result is the median of
 * its -i samples (after -x warm-up calls) and the reported time is the slowest rank's median.
 * "Bytes per rank" is the reduced vector for MPI_Reduce (count = bytes / 8 doubles) and the
 * block each rank receives for MPI_Reduce_scatter_block (recvcount = bytes / 8; every rank
 * contributes nranks * bytes).  Rank 0 checks the result of the last call of every size
 * (every contribution is an exact small integer, so the sums are exact).
 *
 * barrier: back-to-back MPI_Barrier calls in 15 blocks; a block's time is its average per
 * call on the slowest rank; the median block is reported as one row of size 0.
 *
 * exchange: back-to-back MPI_Sendrecv of -s bytes (MPI_BYTE, default 0, 1, 8, 64, 1024) with
 * the partner rank ^ 1 (MPI_PROC_NULL for the last of an odd count), timed as barrier: the
 * exchange a barrier or a small collective between two nodes is made of.
 *
 * Options: -o barrier|exchange|reduce|reduce_scatter_block (default reduce), -s LIST sizes
 * in bytes (default 8 B .. 1 MiB, powers of two; multiples of 8 for the reductions), -i N
 * samples per size (default by size), -x N warm-up calls.  Output (OSU-style):
 *     # Size      Time/op (us)
 */
#include "bench_mpi.h"

#define TAG_TIME 3
#define BLOCKS 15

enum { OP_BARRIER, OP_REDUCE, OP_RSB, OP_EXCHANGE };

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The slowest rank's value of v, at rank 0 (point-to-point, not a reduction under test). */
static double slowest(double v, int rank, int nranks)
{
    int r;
    if (rank != 0) {
        MPI_Send(&v, 1, MPI_DOUBLE, 0, TAG_TIME, MPI_COMM_WORLD);
        return v;
    }
    for (r = 1; r < nranks; r++) {
        double m;
        MPI_Recv(&m, 1, MPI_DOUBLE, r, TAG_TIME, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (m > v) v = m;
    }
    return v;
}

/* Contribution of rank r to element i (exact in a double, summed over <= 64 ranks). */
static double contrib(int r, long i)
{
    return (double)(r + 1) * (double)(i % 1000 + 1);
}

/* One call of a blocked row: MPI_Barrier, or an MPI_Sendrecv of `size` bytes with `peer`. */
static void blocked_call(int op, char *sbuf, char *rbuf, long size, int peer)
{
    if (op == OP_BARRIER)
        MPI_Barrier(MPI_COMM_WORLD);
    else
        MPI_Sendrecv(sbuf, (int)size, MPI_BYTE, peer, 0, rbuf, (int)size, MPI_BYTE, peer, 0,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

/* Back-to-back calls in BLOCKS blocks; prints the median block's time per call (slowest
 * rank) as the row of `size`. */
static void blocked_row(int rank, int nranks, int op, long size, long iters, long skip)
{
    double blocks[BLOCKS];
    long per = iters / BLOCKS > 0 ? iters / BLOCKS : 1, i;
    int b, peer = (rank ^ 1) < nranks ? rank ^ 1 : MPI_PROC_NULL;
    char *sbuf = malloc((size_t)size + 1), *rbuf = malloc((size_t)size + 1);

    if (!sbuf || !rbuf) MPI_Abort(MPI_COMM_WORLD, 3);
    memset(sbuf, rank + 1, (size_t)size + 1);
    for (i = 0; i < skip; i++) blocked_call(op, sbuf, rbuf, size, peer);
    for (b = 0; b < BLOCKS; b++) {
        double t0, t;
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        for (i = 0; i < per; i++) blocked_call(op, sbuf, rbuf, size, peer);
        t = (MPI_Wtime() - t0) / (double)per;
        blocks[b] = slowest(t, rank, nranks);
    }
    /* The partner's bytes arrived (each rank sends rank + 1 in every byte). */
    if (op == OP_EXCHANGE && peer != MPI_PROC_NULL && size > 0 &&
        (rbuf[0] != (char)(peer + 1) || rbuf[size - 1] != (char)(peer + 1))) {
        fprintf(stderr, "rank %d: exchange of %ld bytes delivered wrong data\n", rank, size);
        MPI_Abort(MPI_COMM_WORLD, 4);
    }
    if (rank == 0) {
        qsort(blocks, BLOCKS, sizeof blocks[0], cmp_double);
        printf("%-10ld%18.3f\n", size, blocks[BLOCKS / 2] * 1e6);
        fflush(stdout);
    }
    free(sbuf);
    free(rbuf);
}

int main(int argc, char **argv)
{
    int rank, nranks, c, op = OP_REDUCE, nsizes = 0, k;
    long sizes[BENCH_MAX_SIZES], max_size = 0, iters_opt = -1, skip_opt = -1;
    const char *list = NULL;
    const char *names[] = {"MPI_Barrier", "MPI_Reduce (root 0)", "MPI_Reduce_scatter_block",
                           "MPI_Sendrecv with rank ^ 1"};
    double *sbuf, *rbuf, *samples;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    while ((c = getopt(argc, argv, "o:s:i:x:h")) != -1) {
        switch (c) {
        case 'o':
            op = strcmp(optarg, "barrier") == 0 ? OP_BARRIER
                 : strcmp(optarg, "exchange") == 0 ? OP_EXCHANGE
                 : strcmp(optarg, "reduce") == 0 ? OP_REDUCE
                 : strcmp(optarg, "reduce_scatter_block") == 0 ? OP_RSB : -1;
            break;
        case 's': list = optarg; break;
        case 'i': iters_opt = atol(optarg); break;
        case 'x': skip_opt = atol(optarg); break;
        default: op = -1; break;
        }
    }
    if (op < 0) {
        if (rank == 0)
            fprintf(stderr, "usage: %s [-o barrier|exchange|reduce|reduce_scatter_block] "
                            "[-s bytes,...] "
                            "[-i iters] [-x skip]\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (list) {
        char *copy = strdup(list), *save = NULL, *tok;
        for (tok = strtok_r(copy, ",", &save); tok && nsizes < BENCH_MAX_SIZES;
             tok = strtok_r(NULL, ",", &save))
            sizes[nsizes++] = atol(tok);
        free(copy);
    } else if (op == OP_EXCHANGE) {
        long s[] = {0, 1, 8, 64, 1024};
        for (k = 0; k < 5; k++) sizes[nsizes++] = s[k];
    } else {
        long s;
        for (s = 8; s <= 1024L * 1024; s *= 2) sizes[nsizes++] = s;
    }
    for (k = 0; k < nsizes; k++) {
        if (op == OP_EXCHANGE) {
            if (sizes[k] < 0 || sizes[k] > (1L << 28)) {
                if (rank == 0) fprintf(stderr, "sizes must be in 0..256 MiB\n");
                MPI_Abort(MPI_COMM_WORLD, 2);
            }
            continue;
        }
        if (sizes[k] < 8 || sizes[k] % 8 != 0 || sizes[k] > (1L << 28)) {
            if (rank == 0) fprintf(stderr, "sizes must be multiples of 8 in 8..256 MiB\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        if (sizes[k] > max_size) max_size = sizes[k];
    }
    if (rank == 0) {
        printf("# hympi-bench %s, %d ranks%s\n", names[op], nranks,
               op == OP_BARRIER || op == OP_EXCHANGE
                   ? ", median of 15 blocks of back-to-back calls"
                                : ", MPI_SUM of doubles, bytes per rank, median per call after "
                                  "a barrier (slowest rank)");
        printf("# Size      Time/op (us)\n");
        fflush(stdout);
    }
    if (op == OP_BARRIER || op == OP_EXCHANGE) {
        long iters = iters_opt >= 0 ? iters_opt : 15000;
        if (op == OP_BARRIER) {
            nsizes = 1;
            sizes[0] = 0;
        }
        for (k = 0; k < nsizes; k++)
            blocked_row(rank, nranks, op, sizes[k], iters < 1 ? 1 : iters,
                        skip_opt >= 0 ? skip_opt : 1000);
        MPI_Finalize();
        return 0;
    }

    sbuf = (double *)bench_alloc(max_size * (op == OP_RSB ? nranks : 1), 0);
    rbuf = (double *)bench_alloc(max_size, 0);
    if (!sbuf || !rbuf) MPI_Abort(MPI_COMM_WORLD, 3);
    {
        long n = max_size / 8 * (op == OP_RSB ? nranks : 1), i;
        for (i = 0; i < n; i++) sbuf[i] = contrib(rank, i);
    }
    for (k = 0; k < nsizes; k++) {
        long size = sizes[k], count = size / 8, i;
        long iters = iters_opt >= 0 ? iters_opt
                     : size <= 8192 ? 5000 : size <= 131072 ? 1000 : 200;
        long skip = skip_opt >= 0 ? skip_opt : iters / 10 + 1;
        double worst;

        if (iters < 1) iters = 1;
        samples = malloc(sizeof(double) * (size_t)iters);
        if (!samples) MPI_Abort(MPI_COMM_WORLD, 3);
        for (i = -skip; i < iters; i++) {
            double t0, t1;
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
            if (op == OP_REDUCE)
                MPI_Reduce(sbuf, rbuf, (int)count, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
            else
                MPI_Reduce_scatter_block(sbuf, rbuf, (int)count, MPI_DOUBLE, MPI_SUM,
                                         MPI_COMM_WORLD);
            t1 = MPI_Wtime();
            if (i >= 0) samples[i] = t1 - t0;
        }
        /* Verify: element j of the result is sum over ranks of contrib(r, offset + j). */
        if (op == OP_RSB || rank == 0) {
            long off = op == OP_RSB ? (long)rank * count : 0, bad = -1;
            for (i = 0; i < count && bad < 0; i++) {
                double want = 0.0;
                int r;
                for (r = 0; r < nranks; r++) want += contrib(r, off + i);
                if (rbuf[i] != want) bad = i;
            }
            if (bad >= 0) {
                fprintf(stderr, "rank %d: wrong result at element %ld for %ld bytes\n", rank,
                        bad, size);
                MPI_Abort(MPI_COMM_WORLD, 4);
            }
        }
        qsort(samples, (size_t)iters, sizeof(double), cmp_double);
        worst = slowest(samples[iters / 2], rank, nranks);
        if (rank == 0) {
            printf("%-10ld%18.3f\n", size, worst * 1e6);
            fflush(stdout);
        }
        free(samples);
    }
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
