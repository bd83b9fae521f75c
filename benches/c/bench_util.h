/*
 * Shared helpers for the hympi benchmark suite (OSU-style output).
 *
 * Only a minimal set of standard MPI calls is used on purpose
 * (Init/Init_thread, Comm_rank/size, Send/Recv, Isend/Irecv, Waitall,
 * Wtime, Abort, Finalize) so the suite runs on an MPI that is still
 * being written.  Ranks are synchronised with a zero-byte Send/Recv
 * handshake instead of MPI_Barrier for the same reason.
 *
 * Common options (all optional):
 *   -s LIST   comma-separated list of message sizes in bytes (e.g. 0,8,1048576)
 *   -m MAX    largest size of the default power-of-two sweep (default 4 MiB)
 *   -i N      iterations for every size (default: OSU-like, depends on size)
 *   -x N      warm-up iterations skipped for every size (default: OSU-like)
 *   -w N      window size (bandwidth benchmarks, default 64)
 */
#ifndef HYMPI_BENCH_UTIL_H
#define HYMPI_BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BENCH_MAX_SIZES 64
#define BENCH_DEFAULT_MAX (4L * 1024 * 1024)
#define BENCH_LARGE_MESSAGE 8192 /* OSU LARGE_MESSAGE_SIZE */

struct bench_opts {
    long sizes[BENCH_MAX_SIZES];
    int nsizes;
    long max_size; /* largest size in sizes[] */
    long iters;    /* -1: size-dependent default */
    long skip;     /* -1: size-dependent default */
    int window;
};

static inline void bench_usage(const char *prog)
{
    fprintf(stderr,
            "usage: %s [-s size,size,...] [-m max] [-i iters] [-x skip] [-w window]\n",
            prog);
}

/* Parse options; min_size is the first size of the default sweep (0 or 1). */
static inline int bench_parse(int argc, char **argv, long min_size, struct bench_opts *o)
{
    const char *list = NULL;
    long max = BENCH_DEFAULT_MAX;
    int c;
    o->max_size = 0;
    o->iters = -1;
    o->skip = -1;
    o->window = 64;
    o->nsizes = 0;
    while ((c = getopt(argc, argv, "s:m:i:x:w:h")) != -1) {
        switch (c) {
        case 's': list = optarg; break;
        case 'm': max = atol(optarg); break;
        case 'i': o->iters = atol(optarg); break;
        case 'x': o->skip = atol(optarg); break;
        case 'w': o->window = atoi(optarg); break;
        default: bench_usage(argv[0]); return -1;
        }
    }
    if (o->window < 1 || o->window > 4096) {
        fprintf(stderr, "window must be in 1..4096\n");
        return -1;
    }
    if (list) {
        char *copy = strdup(list), *save = NULL, *tok;
        for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            if (o->nsizes == BENCH_MAX_SIZES) break;
            o->sizes[o->nsizes++] = atol(tok);
        }
        free(copy);
    } else {
        long s;
        if (min_size == 0) o->sizes[o->nsizes++] = 0;
        for (s = 1; s <= max && o->nsizes < BENCH_MAX_SIZES; s *= 2)
            if (s >= min_size) o->sizes[o->nsizes++] = s;
    }
    o->max_size = 0;
    for (c = 0; c < o->nsizes; c++) {
        if (o->sizes[c] < 0 || o->sizes[c] > (1L << 30)) {
            fprintf(stderr, "bad size %ld\n", o->sizes[c]);
            return -1;
        }
        if (o->sizes[c] > o->max_size) o->max_size = o->sizes[c];
    }
    return 0;
}

static inline long bench_iters(const struct bench_opts *o, long size, long small, long large)
{
    if (o->iters >= 0) return o->iters;
    return size > BENCH_LARGE_MESSAGE ? large : small;
}

static inline long bench_skip(const struct bench_opts *o, long size, long small, long large)
{
    if (o->skip >= 0) return o->skip;
    return size > BENCH_LARGE_MESSAGE ? large : small;
}

/* Page-aligned, touched buffer (at least 4 bytes so acks always fit). */
static inline char *bench_alloc(long size, int fill)
{
    void *p = NULL;
    size_t n = (size_t)(size < 4096 ? 4096 : size);
    if (posix_memalign(&p, 4096, n) != 0) return NULL;
    memset(p, fill, n);
    return (char *)p;
}

#endif
