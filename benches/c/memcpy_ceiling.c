/*
 * Single-core memcpy bandwidth (no MPI): the ceiling that a one-copy
 * intra-node transfer can approach.  For each size, copies a page-aligned,
 * pre-touched source buffer into a pre-touched destination buffer
 * repeatedly (about 512 MiB per trial), 7 trials, and reports the best
 * trial, counting bytes copied once (not read + write).
 * Defaults: sizes 1 MiB and 4 MiB.  Options: -s LIST (sizes), -i N
 * (copies per trial).
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

int main(int argc, char **argv)
{
    struct bench_opts o;
    int k;
    char *src, *dst;

    if (argc == 1) {
        static char *defargv[] = {NULL, "-s", "1048576,4194304", NULL};
        defargv[0] = argv[0];
        argv = defargv;
        argc = 3;
    }
    if (bench_parse(argc, argv, 1, &o) != 0) return 2;
    src = bench_alloc(o.max_size, 'a');
    dst = bench_alloc(o.max_size, 'b');
    if (!src || !dst) return 3;

    printf("# hympi-bench memcpy ceiling (single core, best of 7 trials)\n");
    printf("# Size      Bandwidth (MB/s)    Bandwidth (GB/s)\n");
    for (k = 0; k < o.nsizes; k++) {
        long size = o.sizes[k] > 0 ? o.sizes[k] : 1;
        long iters = o.iters > 0 ? o.iters : (512L << 20) / size;
        double best = 0.0;
        int trial;
        long i;

        if (iters < 16) iters = 16;
        for (i = 0; i < 4; i++) { /* warm-up */
            memcpy(dst, src, (size_t)size);
            __asm__ __volatile__("" ::: "memory");
        }
        for (trial = 0; trial < 7; trial++) {
            double t0 = now(), t1, mbs;
            for (i = 0; i < iters; i++) {
                memcpy(dst, src, (size_t)size);
                __asm__ __volatile__("" ::: "memory");
            }
            t1 = now();
            mbs = (double)size * (double)iters / (t1 - t0) / 1e6;
            if (mbs > best) best = mbs;
        }
        printf("%-10ld%18.2f%20.3f\n", size, best, best / 1e3);
        fflush(stdout);
    }
    free(src);
    free(dst);
    return 0;
}
