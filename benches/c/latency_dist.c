/*
 * Ping-pong latency distribution between ranks 0 and 1: every round trip is
 * timed on its own, and rank 0 reports the one-way latency (round trip / 2)
 * per size as min, median, p99 and max over the iterations, plus the mean,
 * in microseconds.  Meant to be run on a loaded machine as well as a quiet
 * one: a mean alone (latency.c) hides whether a slow run is every message a
 * little slower or a few messages very much slower.
 * Defaults: sizes 8 B, 64 KiB, 1 MiB, 4 MiB; 1000 iterations + 10 warm-up for
 * every size (-i, -x and -s as in the other benchmarks).
 */
#include "bench_mpi.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The sample at quantile q (0..1) of the n sorted samples (nearest rank). */
static double quantile(const double *sorted, long n, double q)
{
    long i = (long)(q * (double)n + 0.999999) - 1;
    if (i < 0) i = 0;
    if (i >= n) i = n - 1;
    return sorted[i];
}

int main(int argc, char **argv)
{
    struct bench_opts o;
    int explicit_sizes = 0, k;
    for (k = 1; k < argc; k++)
        if (strcmp(argv[k], "-s") == 0) explicit_sizes = 1;
    int rank = bench_init(&argc, &argv, 0, &o);
    if (!explicit_sizes) {
        static const long defaults[] = {8, 65536, 1048576, 4194304};
        o.nsizes = 4;
        for (k = 0; k < 4; k++) o.sizes[k] = defaults[k];
        o.max_size = 4194304;
    }
    long iters = o.iters > 0 ? o.iters : 1000;
    long skip = o.skip >= 0 ? o.skip : 10;
    char *sbuf = bench_alloc(o.max_size, 'a');
    char *rbuf = bench_alloc(o.max_size, 'b');
    double *samples = malloc((size_t)iters * sizeof(double));

    if (!sbuf || !rbuf || !samples) MPI_Abort(MPI_COMM_WORLD, 3);
    if (rank == 0) {
        printf("# hympi-bench Latency Distribution (ping-pong, one-way, %ld iterations)\n", iters);
        printf("# Size       Min (us)  Median (us)     p99 (us)     Max (us)    Mean (us)\n");
        fflush(stdout);
    }
    for (k = 0; k < o.nsizes; k++) {
        long size = o.sizes[k];
        long i;

        bench_pair_sync(rank);
        if (rank == 0) {
            double sum = 0.0;
            for (i = 0; i < iters + skip; i++) {
                double t0 = MPI_Wtime();
                MPI_Send(sbuf, (int)size, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
                MPI_Recv(rbuf, (int)size, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                double t = (MPI_Wtime() - t0) * 1e6 / 2.0;
                if (i >= skip) {
                    samples[i - skip] = t;
                    sum += t;
                }
            }
            qsort(samples, (size_t)iters, sizeof(double), cmp_double);
            printf("%-10ld%10.3f%13.3f%13.3f%13.3f%13.3f\n", size, samples[0],
                   quantile(samples, iters, 0.5), quantile(samples, iters, 0.99),
                   samples[iters - 1], sum / (double)iters);
            fflush(stdout);
        } else if (rank == 1) {
            for (i = 0; i < iters + skip; i++) {
                MPI_Recv(rbuf, (int)size, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(sbuf, (int)size, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
            }
        }
    }
    bench_pair_sync(rank);
    free(samples);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
