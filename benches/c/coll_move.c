/*
 * Data-movement collectives: time per call of MPI_Bcast (root 0), MPI_Allgather,
 * MPI_Alltoall, MPI_Gather or MPI_Scatter (root 0) with -s bytes per rank (per block for
 * the last four), on all ranks.
 *
 * Each sample is one call after an MPI_Barrier; a rank's result is the median of its -i
 * samples (after -x warm-up calls), and the reported time is the slowest rank's median,
 * in microseconds.  Options: -o bcast|allgather|alltoall|gather|scatter (default bcast), -s BYTES
 * (default 8), -i N (default by size), -x N.  Output (OSU-style, one row):
 *     # Size      Time/op (us)
 */
#include "bench_mpi.h"

#define TAG_TIME 3

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int rank, nranks, c, op = 0;
    long size = 8, iters = -1, skip = -1, i;
    double *samples, med, worst;
    char *sbuf, *rbuf;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    while ((c = getopt(argc, argv, "o:s:i:x:h")) != -1) {
        switch (c) {
        case 'o':
            op = strcmp(optarg, "allgather") == 0   ? 1
                 : strcmp(optarg, "alltoall") == 0  ? 2
                 : strcmp(optarg, "gather") == 0    ? 3
                 : strcmp(optarg, "scatter") == 0   ? 4
                                                    : 0;
            break;
        case 's': size = atol(optarg); break;
        case 'i': iters = atol(optarg); break;
        case 'x': skip = atol(optarg); break;
        default:
            if (rank == 0)
                fprintf(stderr, "usage: %s [-o bcast|allgather|alltoall|gather|scatter] [-s bytes] [-i iters] [-x skip]\n",
                        argv[0]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (iters < 0) iters = size <= 8192 ? 5000 : size <= 131072 ? 1000 : 200;
    if (skip < 0) skip = iters / 10 + 1;
    if (iters < 1 || size < 0) MPI_Abort(MPI_COMM_WORLD, 2);
    samples = malloc(sizeof(double) * (size_t)iters);
    sbuf = bench_alloc(size * (op ? nranks : 1), 'a');
    rbuf = bench_alloc(size * (op ? nranks : 1), 'b');
    if (!samples || !sbuf || !rbuf) MPI_Abort(MPI_COMM_WORLD, 3);
    if (rank == 0) {
        static const char *names[] = {"MPI_Bcast", "MPI_Allgather", "MPI_Alltoall",
                                      "MPI_Gather", "MPI_Scatter"};
        printf("# hympi-bench %s, %d ranks\n", names[op], nranks);
        printf("# Size      Time/op (us)\n");
        fflush(stdout);
    }
    for (i = -skip; i < iters; i++) {
        double t0, t1;
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        if (op == 0)
            MPI_Bcast(sbuf, (int)size, MPI_BYTE, 0, MPI_COMM_WORLD);
        else if (op == 1)
            MPI_Allgather(sbuf, (int)size, MPI_BYTE, rbuf, (int)size, MPI_BYTE, MPI_COMM_WORLD);
        else if (op == 2)
            MPI_Alltoall(sbuf, (int)size, MPI_BYTE, rbuf, (int)size, MPI_BYTE, MPI_COMM_WORLD);
        else if (op == 3)
            MPI_Gather(sbuf, (int)size, MPI_BYTE, rbuf, (int)size, MPI_BYTE, 0, MPI_COMM_WORLD);
        else
            MPI_Scatter(sbuf, (int)size, MPI_BYTE, rbuf, (int)size, MPI_BYTE, 0, MPI_COMM_WORLD);
        t1 = MPI_Wtime();
        if (i >= 0) samples[i] = t1 - t0;
    }
    qsort(samples, (size_t)iters, sizeof(double), cmp_double);
    med = samples[iters / 2];
    worst = med;
    if (rank == 0) {
        int r;
        for (r = 1; r < nranks; r++) {
            double m;
            MPI_Recv(&m, 1, MPI_DOUBLE, r, TAG_TIME, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (m > worst) worst = m;
        }
        printf("%-10ld%18.3f\n", size, worst * 1e6);
        fflush(stdout);
    } else {
        MPI_Send(&med, 1, MPI_DOUBLE, 0, TAG_TIME, MPI_COMM_WORLD);
    }
    free(samples);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
