/*
 * Accumulate stealing (CAB-MPI method, digest "Accumulate stealing"): rank 0 accumulates
 * (MPI_SUM, doubles) into rank 1's window under fence; rank 1 only waits in the fence,
 * where an MPI that steals accumulate work reduces chunks alongside the origin.
 * Reports microseconds per accumulate+fence for 128 KiB .. 8 MiB, and checks the window.
 * Run with HYMPI_STEAL=0 and =1 to see the gain (other MPIs ignore the knob).
 * Arguments pick the case: the call, `acc` (MPI_Accumulate, default) or `getacc`
 * (MPI_Get_accumulate, the old values fetched to rank 0), then the window, `allocate`
 * (MPI_Win_allocate, default: memory every process of the node maps) or `create`
 * (MPI_Win_create on malloc'd memory, which other processes reach by CMA).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank, size;
    const long max = 8L << 20;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        if (rank == 0) fprintf(stderr, "rma_acc_steal needs 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long n = max / 8;
    const char *call = argc > 1 ? argv[1] : "acc", *kind = argc > 2 ? argv[2] : "allocate";
    int getacc = !strcmp(call, "getacc"), create = !strcmp(kind, "create");
    if ((!getacc && strcmp(call, "acc")) || (!create && strcmp(kind, "allocate"))) {
        if (rank == 0)
            fprintf(stderr, "rma_acc_steal: unknown case %s %s (acc|getacc allocate|create)\n",
                    call, kind);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    double *win_mem;
    MPI_Win win;
    if (create) {
        win_mem = malloc(max);
        MPI_Win_create(win_mem, rank == 1 ? max : 0, sizeof(double), MPI_INFO_NULL,
                       MPI_COMM_WORLD, &win);
    } else {
        MPI_Win_allocate(rank == 1 ? max : 0, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD,
                         &win_mem, &win);
    }
    double *src = malloc(max), *res = malloc(max);
    for (long i = 0; i < n; i++) src[i] = 1.0;
    if (rank == 0) {
        printf("# hympi-bench %s+fence (MPI_SUM, double, rank 0 -> rank 1, %s window)\n",
               getacc ? "get_accumulate" : "accumulate", create ? "created" : "allocated");
        printf("# Size          Latency (us)\n");
    }
    for (long bytes = 128L << 10; bytes <= max; bytes *= 2) {
        long cnt = bytes / 8, iters = bytes >= (4L << 20) ? 40 : 100, skip = 5;
        if (rank == 1)
            for (long i = 0; i < n; i++) win_mem[i] = 0.0;
        MPI_Win_fence(0, win);
        double t0 = 0.0;
        for (long it = 0; it < iters + skip; it++) {
            if (it == skip) t0 = MPI_Wtime();
            if (rank == 0 && getacc)
                MPI_Get_accumulate(src, (int)cnt, MPI_DOUBLE, res, (int)cnt, MPI_DOUBLE, 1, 0,
                                   (int)cnt, MPI_DOUBLE, MPI_SUM, win);
            else if (rank == 0)
                MPI_Accumulate(src, (int)cnt, MPI_DOUBLE, 1, 0, (int)cnt, MPI_DOUBLE, MPI_SUM, win);
            MPI_Win_fence(0, win);
        }
        double t = (MPI_Wtime() - t0) * 1e6 / iters;
        if (rank == 1) {
            long bad = 0;
            for (long i = 0; i < cnt; i++)
                if (win_mem[i] != (double)(iters + skip)) bad++;
            if (bad) {
                fprintf(stderr, "rma_acc_steal: %ld wrong elements at %ld bytes\n", bad, bytes);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }
        if (rank == 0 && getacc)
            for (long i = 0; i < cnt; i++)
                if (res[i] != (double)(iters + skip - 1)) {
                    fprintf(stderr, "rma_acc_steal: fetched %g, expected %g at %ld bytes\n",
                            res[i], (double)(iters + skip - 1), bytes);
                    MPI_Abort(MPI_COMM_WORLD, 1);
                }
        if (rank == 0) printf("%-10ld%18.3f\n", bytes, t);
        fflush(stdout);
    }
    MPI_Win_free(&win);
    if (create) free(win_mem);
    free(src);
    free(res);
    MPI_Finalize();
    return 0;
}
