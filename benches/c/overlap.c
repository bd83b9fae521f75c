/*
 * Overlap of a large transfer with work outside MPI (asynchronous progress). Rank 0 sends
 * SIZE bytes to rank 1 with MPI_Isend/MPI_Irecv; both then stay out of MPI for WORK us
 * (usleep: work that leaves the cores free, e.g. waiting on a device or I/O) and call
 * MPI_Wait. Prints the time per iteration of the transfer alone (WORK = 0), of the work
 * alone, of both, and overlap = (comm + work - both) / min(comm, work): 0 means none, 1 full.
 * Under hympi, HYMPI_ASYNC_PROGRESS=1 turns the progress thread on.
 *
 * Usage: overlap [SIZE [WORK_US [ITERS]]]   (default 4194304 2000 50)
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static double run(char *buf, long size, long work, long iters, int rank)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (long i = 0; i < iters; i++) {
        MPI_Request r;
        if (rank == 0)
            MPI_Isend(buf, (int)size, MPI_BYTE, 1, 1, MPI_COMM_WORLD, &r);
        else
            MPI_Irecv(buf, (int)size, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &r);
        if (work > 0)
            usleep((useconds_t)work);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    return (MPI_Wtime() - t0) / (double)iters * 1e6;
}

int main(int argc, char **argv)
{
    int provided, rank;
    long size = argc > 1 ? atol(argv[1]) : 4194304, work = argc > 2 ? atol(argv[2]) : 2000;
    long iters = argc > 3 ? atol(argv[3]) : 50;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char *buf = malloc((size_t)size);
    memset(buf, rank, (size_t)size);
    run(buf, size, 0, 5, rank); /* warm-up */
    double comm = run(buf, size, 0, iters, rank);
    double both = run(buf, size, work, iters, rank);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (long i = 0; i < iters; i++) {
        usleep((useconds_t)work);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    double alone = (MPI_Wtime() - t0) / (double)iters * 1e6;
    if (rank == 0) {
        double lo = comm < alone ? comm : alone;
        printf("overlap %ld bytes, work %ld us: comm %.1f us, work %.1f us, both %.1f us, "
               "overlap %.2f\n",
               size, work, comm, alone, both, (comm + alone - both) / lo);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
