/*
 * The ceiling of reduce_local: the same measurement (best of 5 trials, bytes of one vector
 * per second) of a plain C loop `a[i] += b[i]` on doubles, compiled with -O3 (function
 * attribute; the runner builds with -O2), no MPI.  Defaults: sizes 8 KiB, 1 MiB, 16 MiB.
 */
#define _POSIX_C_SOURCE 200809L
#include <time.h>
#include "bench_util.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

__attribute__((noinline, optimize("O3"))) static void add(double *restrict a,
                                                           const double *restrict b, long n)
{
    for (long i = 0; i < n; i++) a[i] += b[i];
}

int main(int argc, char **argv)
{
    struct bench_opts o;
    int k;
    double *in, *io;

    if (argc == 1) {
        static char *defargv[] = {NULL, "-s", "8192,1048576,16777216", NULL};
        defargv[0] = argv[0];
        argv = defargv;
        argc = 3;
    }
    if (bench_parse(argc, argv, 8, &o) != 0) return 2;
    in = (double *)bench_alloc(o.max_size, 0);
    io = (double *)bench_alloc(o.max_size, 0);
    if (!in || !io) return 3;
    for (long i = 0; i < o.max_size / 8; i++) {
        in[i] = 1.0 + (double)(i & 7);
        io[i] = 0.0;
    }

    printf("# hympi-bench a[i] += b[i] ceiling (plain C -O3, single core, best of 5 trials)\n");
    printf("# Size      Bandwidth (GB/s)    Time per call (us)\n");
    for (k = 0; k < o.nsizes; k++) {
        long size = o.sizes[k] < 8 ? 8 : o.sizes[k];
        long n = size / 8;
        long iters = o.iters > 0 ? o.iters : (256L << 20) / size;
        double best = 1e30;
        long i;

        if (iters < 16) iters = 16;
        for (i = 0; i < 4; i++) add(io, in, n);
        for (int trial = 0; trial < 5; trial++) {
            double t0 = now(), t;
            for (i = 0; i < iters; i++) {
                add(io, in, n);
                __asm__ __volatile__("" ::: "memory");
            }
            t = (now() - t0) / (double)iters;
            if (t < best) best = t;
        }
        printf("%-10ld%18.3f%22.3f\n", size, (double)size / best / 1e9, best * 1e6);
        fflush(stdout);
    }
    if (io[0] < 0) printf("impossible\n");
    free(in);
    free(io);
    return 0;
}
