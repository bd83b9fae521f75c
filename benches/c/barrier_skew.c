/*
 * Barrier exit skew (standalone, 2 ranks, x86-64): how long after the later of the two
 * ranks enters MPI_Barrier each rank leaves it, and what that does to an 8-byte
 * MPI_Allgather timed right after the barrier (as coll_move times it).
 *
 * Each iteration: t_in = TSC, MPI_Barrier, t_out = TSC, MPI_Allgather(8 B), t_end = TSC.
 * Rank 1 sends its stamps to rank 0, which reports medians in nanoseconds:
 *   - "last arriver leaves": t_out - t_in of the rank that entered the barrier last;
 *   - "other leaves": t_out of the other rank minus the last arriver's t_in;
 *   - "last arriver leaves first": share of iterations where it did;
 *   - "allgather after barrier": t_end - t_out per rank (the slower median is what
 *     coll_move reports).
 * The time stamp counter must be synchronised across cores (constant_tsc/nonstop_tsc, as
 * on this machine kind); -f GHz gives its rate (default: measured against MPI_Wtime).
 * Options: -i N iterations (default 20000).
 */
#include "bench_mpi.h"

#if defined(__x86_64__)
#include <x86intrin.h>

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

static long median(long *v, int n)
{
    qsort(v, (size_t)n, sizeof(long), cmp_long);
    return v[n / 2];
}

int main(int argc, char **argv)
{
    int rank, nranks, c, n = 20000, i, last_first = 0;
    double ghz = 0;
    char sbuf[8] = {0}, rbuf[16];
    long *mine, *theirs;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    while ((c = getopt(argc, argv, "i:f:h")) != -1) {
        if (c == 'i') n = atoi(optarg);
        else if (c == 'f') ghz = atof(optarg);
        else {
            if (rank == 0) fprintf(stderr, "usage: %s [-i iterations] [-f tsc_ghz]\n", argv[0]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (nranks != 2 || n < 1) {
        if (rank == 0) fprintf(stderr, "barrier_skew: needs exactly 2 ranks and -i >= 1\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (ghz <= 0) {
        double w0 = MPI_Wtime();
        long t0 = (long)__rdtsc();
        while (MPI_Wtime() - w0 < 0.05) {
        }
        ghz = (double)((long)__rdtsc() - t0) / ((MPI_Wtime() - w0) * 1e9);
    }
    mine = malloc(sizeof(long) * 3 * (size_t)n);
    theirs = malloc(sizeof(long) * 3 * (size_t)n);
    if (!mine || !theirs) MPI_Abort(MPI_COMM_WORLD, 3);
    for (i = -n / 10; i < n; i++) {
        long a = (long)__rdtsc(), b, e;
        MPI_Barrier(MPI_COMM_WORLD);
        b = (long)__rdtsc();
        MPI_Allgather(sbuf, 8, MPI_BYTE, rbuf, 8, MPI_BYTE, MPI_COMM_WORLD);
        e = (long)__rdtsc();
        if (i >= 0) {
            mine[3 * i] = a;
            mine[3 * i + 1] = b;
            mine[3 * i + 2] = e;
        }
    }
    if (rank == 1) {
        MPI_Send(mine, 3 * n, MPI_LONG, 0, 0, MPI_COMM_WORLD);
    } else {
        long *last = malloc(sizeof(long) * (size_t)n), *other = malloc(sizeof(long) * (size_t)n);
        long *ag0 = malloc(sizeof(long) * (size_t)n), *ag1 = malloc(sizeof(long) * (size_t)n);
        if (!last || !other || !ag0 || !ag1) MPI_Abort(MPI_COMM_WORLD, 3);
        MPI_Recv(theirs, 3 * n, MPI_LONG, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (i = 0; i < n; i++) {
            const long *l = theirs[3 * i] > mine[3 * i] ? theirs : mine;
            const long *o = l == theirs ? mine : theirs;
            last[i] = l[3 * i + 1] - l[3 * i];
            other[i] = o[3 * i + 1] - l[3 * i];
            if (l[3 * i + 1] < o[3 * i + 1]) last_first++;
            ag0[i] = mine[3 * i + 2] - mine[3 * i + 1];
            ag1[i] = theirs[3 * i + 2] - theirs[3 * i + 1];
        }
        printf("# barrier_skew, 2 ranks, %d iterations, TSC %.3f GHz, medians in ns\n", n, ghz);
        printf("last arriver leaves %.0f, other leaves %.0f, last arriver leaves first %d%%\n",
               median(last, n) / ghz, median(other, n) / ghz, last_first * 100 / n);
        printf("allgather after barrier: rank 0 %.0f, rank 1 %.0f\n", median(ag0, n) / ghz,
               median(ag1, n) / ghz);
        free(last);
        free(other);
        free(ag0);
        free(ag1);
    }
    free(mine);
    free(theirs);
    MPI_Finalize();
    return 0;
}
#else
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    fprintf(stderr, "barrier_skew: x86-64 only (time stamp counter)\n");
    MPI_Finalize();
    return 0;
}
#endif
