/*
 * Cost of dynamic processes (benches/spawn, benches/README.md "Dynamic processes"):
 *  1. MPI_Comm_spawn of N children (default 4) by every rank of MPI_COMM_WORLD, root 0:
 *     the time from the call to its return (the children started by hympiexec, through
 *     their MPI_Init, connected), REPS times (default 5) after one warm-up, each followed by
 *     MPI_Comm_disconnect; printed per rep, with the median and minimum.
 *  2. Ping-pong one-way latency (OSU style) between the parents' rank 0 and a spawned
 *     child over the intercommunicator, at 0 B, 8 B, 1 KiB, 64 KiB and 1 MiB (processes of
 *     two jobs: the network transport, on this machine over loopback).
 * Usage: spawn_time [N [REPS]]   (children run the same program with argument "child")
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void pingpong(MPI_Comm ic, int parent)
{
    static const long sizes[] = {0, 8, 1024, 65536, 1 << 20};
    char *buf = malloc(1 << 20);
    memset(buf, 1, 1 << 20);
    int rank;
    MPI_Comm_rank(ic, &rank);
    for (int k = 0; k < 5; k++) {
        long n = sizes[k], iters = n <= 8192 ? 10000 : 1000, skip = n <= 8192 ? 100 : 10;
        double t0 = 0;
        if (rank != 0)
            continue;
        for (long i = 0; i < iters + skip; i++) {
            if (i == skip)
                t0 = MPI_Wtime();
            if (parent) {
                MPI_Send(buf, (int)n, MPI_BYTE, 0, 1, ic);
                MPI_Recv(buf, (int)n, MPI_BYTE, 0, 1, ic, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(buf, (int)n, MPI_BYTE, 0, 1, ic, MPI_STATUS_IGNORE);
                MPI_Send(buf, (int)n, MPI_BYTE, 0, 1, ic);
            }
        }
        if (parent)
            printf("pingpong %-8ld %10.3f us\n", n, (MPI_Wtime() - t0) * 1e6 / (2.0 * iters));
    }
    free(buf);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL) {
        if (argc > 2 && strcmp(argv[2], "pingpong") == 0)
            pingpong(parent, 0);
        MPI_Comm_disconnect(&parent);
        MPI_Finalize();
        return 0;
    }
    int n = argc > 1 ? atoi(argv[1]) : 4, reps = argc > 2 ? atoi(argv[2]) : 5, rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char *args[] = {"child", "spawn", NULL};
    double t[64];
    if (reps > 64)
        reps = 64;
    for (int r = -1; r < reps; r++) {
        MPI_Comm ic;
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        MPI_Comm_spawn(argv[0], args, n, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic, MPI_ERRCODES_IGNORE);
        double dt = MPI_Wtime() - t0;
        MPI_Comm_disconnect(&ic);
        if (r >= 0) {
            t[r] = dt;
            if (rank == 0)
                printf("spawn %d rep %d: %.1f ms\n", n, r, dt * 1e3);
        }
    }
    if (rank == 0) {
        qsort(t, reps, sizeof t[0], cmp);
        printf("spawn of %d children by %d parents: median %.1f ms, min %.1f ms\n", n, size,
               t[reps / 2] * 1e3, t[0] * 1e3);
    }
    char *pargs[] = {"child", "pingpong", NULL};
    MPI_Comm ic;
    MPI_Comm_spawn(argv[0], pargs, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic, MPI_ERRCODES_IGNORE);
    pingpong(ic, 1);
    MPI_Comm_disconnect(&ic);
    MPI_Finalize();
    return 0;
}
