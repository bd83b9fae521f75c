/*
 * Large intra-node receive while other threads of the receiving process wait inside MPI
 * (stealing-aware waits). Rank 0 starts ITERS messages of SIZE bytes to rank 1 with
 * MPI_Isend and, while each is in flight, is busy outside MPI (it sleeps GAP us, leaving the
 * cores to the receiver) before MPI_Wait; on rank 1, thread 0 receives them with MPI_Recv
 * while threads 1..T-1 sit in MPI_Recv for a "stop" message that rank 0 sends at the end.
 * Thread 0 first waits for each message with MPI_Probe, then times its MPI_Recv (the copy);
 * reports that time per message and the bandwidth it gives.
 * Under hympi, HYMPI_STEAL=0 gives the same run without stealing.
 *
 * Usage: steal_recv [SIZE [ITERS [T [GAP]]]]   (default 4194304 200 2 3000)
 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *stop_waiter(void *arg)
{
    int v;
    (void)arg;
    MPI_Recv(&v, 1, MPI_INT, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided, rank, size;
    long bytes = argc > 1 ? atol(argv[1]) : 4194304;
    long iters = argc > 2 ? atol(argv[2]) : 200, warm = iters / 10 + 1;
    int nthreads = argc > 3 ? atoi(argv[3]) : 2;
    long gap = argc > 4 ? atol(argv[4]) : 3000;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (provided < MPI_THREAD_MULTIPLE || size != 2 || nthreads < 1 || nthreads > 64) {
        if (rank == 0)
            fprintf(stderr, "steal_recv: needs 2 ranks, MPI_THREAD_MULTIPLE, 1..64 threads\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    char *buf = malloc((size_t)bytes);
    memset(buf, rank + 1, (size_t)bytes);
    pthread_t th[64];
    if (rank == 1)
        for (int t = 1; t < nthreads; t++)
            pthread_create(&th[t], NULL, stop_waiter, NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    double t = 0;
    for (long i = 0; i < iters + warm; i++) {
        if (rank == 0) {
            MPI_Request r;
            MPI_Isend(buf, (int)bytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD, &r);
            usleep((useconds_t)gap);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        } else {
            MPI_Probe(0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* the message has arrived */
            double t0 = MPI_Wtime();
            MPI_Recv(buf, (int)bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (i >= warm)
                t += MPI_Wtime() - t0;
        }
    }
    if (rank == 0) {
        int v = 0;
        for (int k = 1; k < nthreads; k++)
            MPI_Send(&v, 1, MPI_INT, 1, 99, MPI_COMM_WORLD);
    } else {
        for (int k = 1; k < nthreads; k++)
            pthread_join(th[k], NULL);
        printf("steal_recv %ld bytes, %d receiver threads: %.2f GB/s (%.1f us in MPI_Recv per "
               "message)\n",
               bytes, nthreads, (double)bytes * (double)iters / t / 1e9, t / (double)iters * 1e6);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}
