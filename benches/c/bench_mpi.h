/* MPI-side helpers for the two-rank benchmarks (see bench_util.h). */
#ifndef HYMPI_BENCH_MPI_H
#define HYMPI_BENCH_MPI_H

#include <mpi.h>
#include "bench_util.h"

/* GCC (>= 11) warns that MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE) writes to a
 * zero-sized region with MPICH's header, whose MPI_STATUSES_IGNORE is
 * (MPI_Status *)1: a false positive, silenced so -Wall -Wextra stays clean. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif

/* Zero-byte handshake between ranks 0 and 1 (stands in for MPI_Barrier). */
static inline void bench_pair_sync(int rank)
{
    char dummy = 0;
    if (rank == 0) {
        MPI_Send(&dummy, 0, MPI_BYTE, 1, 999, MPI_COMM_WORLD);
        MPI_Recv(&dummy, 0, MPI_BYTE, 1, 999, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
        MPI_Recv(&dummy, 0, MPI_BYTE, 0, 999, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&dummy, 0, MPI_BYTE, 0, 999, MPI_COMM_WORLD);
    }
}

/* Init, check there are at least two ranks, parse options. Returns rank. */
static inline int bench_init(int *argc, char ***argv, long min_size, struct bench_opts *o)
{
    int rank, size;
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (bench_parse(*argc, *argv, min_size, o) != 0) MPI_Abort(MPI_COMM_WORLD, 2);
    if (size < 2) {
        if (rank == 0) fprintf(stderr, "this benchmark needs at least 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return rank;
}

#endif
