/*
 * Multi-pair bandwidth and message rate (OSU osu_mbw_mr style).  With N
 * ranks (N even), rank i < N/2 sends to rank i + N/2: a window of W
 * MPI_Isend (the receiver posts W MPI_Irecv), both MPI_Waitall, then the
 * receiver returns a 4-byte ack.  All ranks start each size together (a
 * zero-byte gather/release through rank 0 stands in for MPI_Barrier); every
 * sender times its loop and sends the time to rank 0.
 *
 * Reported, aggregated over the N/2 pairs and using the slowest sender's
 * time: MB/s = 10^6 B/s and messages/s.
 * Defaults: sizes 1 B .. 4 MiB, window 64; 100 iterations + 10 warm-up for
 * sizes <= 8 KiB, 20 + 2 above (OSU defaults).  Options: see bench_util.h.
 */
#include "bench_mpi.h"

#define TAG_DATA 1
#define TAG_SYNC 2
#define TAG_TIME 3

/* Every rank reports to rank 0, which then releases them all. */
static void all_sync(int rank, int nranks)
{
    char d = 0;
    int r;
    if (rank == 0) {
        for (r = 1; r < nranks; r++)
            MPI_Recv(&d, 0, MPI_BYTE, r, TAG_SYNC, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (r = 1; r < nranks; r++) MPI_Send(&d, 0, MPI_BYTE, r, TAG_SYNC, MPI_COMM_WORLD);
    } else {
        MPI_Send(&d, 0, MPI_BYTE, 0, TAG_SYNC, MPI_COMM_WORLD);
        MPI_Recv(&d, 0, MPI_BYTE, 0, TAG_SYNC, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
}

/* Sender side of one size; returns the timed loop's duration. */
static double send_loop(int peer, char *buf, long size, long iters, long skip, int window,
                        MPI_Request *req)
{
    double t0 = 0.0;
    long i;
    int k, ack;
    for (i = 0; i < iters + skip; i++) {
        if (i == skip) t0 = MPI_Wtime();
        for (k = 0; k < window; k++)
            MPI_Isend(buf, (int)size, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, &req[k]);
        MPI_Waitall(window, req, MPI_STATUSES_IGNORE);
        MPI_Recv(&ack, 1, MPI_INT, peer, TAG_DATA, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    return MPI_Wtime() - t0;
}

static void recv_loop(int peer, char *buf, long size, long iters, int window, MPI_Request *req)
{
    long i;
    int k, ack = 0;
    for (i = 0; i < iters; i++) {
        for (k = 0; k < window; k++)
            MPI_Irecv(buf, (int)size, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, &req[k]);
        MPI_Waitall(window, req, MPI_STATUSES_IGNORE);
        MPI_Send(&ack, 1, MPI_INT, peer, TAG_DATA, MPI_COMM_WORLD);
    }
}

int main(int argc, char **argv)
{
    struct bench_opts o;
    int rank = bench_init(&argc, &argv, 1, &o), nranks, pairs, k, r;
    char *buf;
    MPI_Request *req;

    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (nranks % 2 != 0) {
        if (rank == 0) fprintf(stderr, "mbw_mr needs an even number of ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    pairs = nranks / 2;
    buf = bench_alloc(o.max_size, 'a');
    req = malloc(sizeof(MPI_Request) * (size_t)o.window);
    if (!buf || !req) MPI_Abort(MPI_COMM_WORLD, 3);
    if (rank == 0) {
        printf("# hympi-bench Multiple Bandwidth / Message Rate Test (%d pairs, window %d)\n",
               pairs, o.window);
        printf("# Size          MB/s        Messages/s\n");
        fflush(stdout);
    }
    for (k = 0; k < o.nsizes; k++) {
        long size = o.sizes[k];
        long iters = bench_iters(&o, size, 100, 20);
        long skip = bench_skip(&o, size, 10, 2);
        double t, tmax;

        all_sync(rank, nranks);
        if (rank < pairs) {
            t = send_loop(rank + pairs, buf, size, iters, skip, o.window, req);
            if (rank != 0) MPI_Send(&t, 1, MPI_DOUBLE, 0, TAG_TIME, MPI_COMM_WORLD);
        } else {
            recv_loop(rank - pairs, buf, size, iters + skip, o.window, req);
        }
        if (rank == 0) {
            double msgs;
            tmax = t;
            for (r = 1; r < pairs; r++) {
                MPI_Recv(&t, 1, MPI_DOUBLE, r, TAG_TIME, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                if (t > tmax) tmax = t;
            }
            msgs = (double)pairs * (double)iters * o.window;
            printf("%-10ld%16.2f%18.0f\n", size, msgs * (double)size / 1e6 / tmax, msgs / tmax);
            fflush(stdout);
        }
    }
    all_sync(rank, nranks);
    free(buf);
    free(req);
    MPI_Finalize();
    return 0;
}
