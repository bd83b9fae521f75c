/*
 * MPI_Reduce_local(MPI_SUM, MPI_DOUBLE) throughput, singleton: for each size (bytes of one
 * vector of doubles), inoutbuf += inbuf repeatedly (about 256 MiB of inoutbuf per trial,
 * at least 16 calls), 5 trials, and reports the best trial as GB/s (bytes of one vector per
 * second, 10^9 B/s) and microseconds per call.  Page-aligned, pre-touched buffers.
 * Defaults: sizes 8 KiB, 1 MiB, 16 MiB.  Options: -s LIST (sizes), -i N (calls per trial).
 * The plain-C ceiling is reduce_ceiling.c.
 */
#include <mpi.h>
#include "bench_util.h"

int main(int argc, char **argv)
{
    struct bench_opts o;
    int k;
    double *in, *io;

    MPI_Init(&argc, &argv);
    if (argc == 1) {
        static char *defargv[] = {NULL, "-s", "8192,1048576,16777216", NULL};
        defargv[0] = argv[0];
        argv = defargv;
        argc = 3;
    }
    if (bench_parse(argc, argv, 8, &o) != 0) MPI_Abort(MPI_COMM_WORLD, 2);
    in = (double *)bench_alloc(o.max_size, 0);
    io = (double *)bench_alloc(o.max_size, 0);
    if (!in || !io) MPI_Abort(MPI_COMM_WORLD, 3);
    for (long i = 0; i < o.max_size / 8; i++) {
        in[i] = 1.0 + (double)(i & 7);
        io[i] = 0.0;
    }

    printf("# hympi-bench MPI_Reduce_local(MPI_SUM, MPI_DOUBLE), singleton, best of 5 trials\n");
    printf("# Size      Bandwidth (GB/s)    Time per call (us)\n");
    for (k = 0; k < o.nsizes; k++) {
        long size = o.sizes[k] < 8 ? 8 : o.sizes[k];
        int n = (int)(size / 8);
        long iters = o.iters > 0 ? o.iters : (256L << 20) / size;
        double best = 1e30;
        long i;

        if (iters < 16) iters = 16;
        for (i = 0; i < 4; i++) MPI_Reduce_local(in, io, n, MPI_DOUBLE, MPI_SUM);
        for (int trial = 0; trial < 5; trial++) {
            double t0 = MPI_Wtime(), t;
            for (i = 0; i < iters; i++) MPI_Reduce_local(in, io, n, MPI_DOUBLE, MPI_SUM);
            t = (MPI_Wtime() - t0) / (double)iters;
            if (t < best) best = t;
        }
        printf("%-10ld%18.3f%22.3f\n", size, (double)size / best / 1e9, best * 1e6);
        fflush(stdout);
    }
    if (io[0] < 0) printf("impossible\n"); /* keep the results alive */
    free(in);
    free(io);
    MPI_Finalize();
    return 0;
}
