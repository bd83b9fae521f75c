/*
 * Unidirectional bandwidth, rank 0 -> rank 1 (OSU osu_bw style).
 * Per iteration rank 0 posts a window of MPI_Isend, rank 1 a window of
 * MPI_Irecv; both MPI_Waitall, then rank 1 returns a 4-byte ack.
 * Reports MB/s (10^6 bytes/s) and GB/s (10^9 bytes/s).
 * Defaults: sizes 1 B .. 4 MiB, window 64, 100 iterations + 10 warm-up for
 * sizes <= 8 KiB, 20 + 2 above (the OSU defaults).
 */
#include "bench_mpi.h"

int main(int argc, char **argv)
{
    struct bench_opts o;
    int rank = bench_init(&argc, &argv, 1, &o);
    char *sbuf = bench_alloc(o.max_size, 'a');
    char *rbuf = bench_alloc(o.max_size, 'b');
    MPI_Request *req;
    int k;

    req = malloc(sizeof(MPI_Request) * (size_t)o.window);
    if (!sbuf || !rbuf || !req) MPI_Abort(MPI_COMM_WORLD, 3);
    if (rank == 0) {
        printf("# hympi-bench Bandwidth Test (window %d)\n", o.window);
        printf("# Size      Bandwidth (MB/s)    Bandwidth (GB/s)\n");
        fflush(stdout);
    }
    for (k = 0; k < o.nsizes; k++) {
        long size = o.sizes[k];
        long iters = bench_iters(&o, size, 100, 20);
        long skip = bench_skip(&o, size, 10, 2);
        double t0 = 0.0, t1;
        long i;
        int j;

        bench_pair_sync(rank);
        if (rank == 0) {
            for (i = 0; i < iters + skip; i++) {
                if (i == skip) t0 = MPI_Wtime();
                for (j = 0; j < o.window; j++)
                    MPI_Isend(sbuf, (int)size, MPI_BYTE, 1, 100, MPI_COMM_WORLD, &req[j]);
                MPI_Waitall(o.window, req, MPI_STATUSES_IGNORE);
                MPI_Recv(rbuf, 4, MPI_BYTE, 1, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
            t1 = MPI_Wtime();
            {
                double mbs = (double)size * (double)iters * o.window / (t1 - t0) / 1e6;
                printf("%-10ld%18.2f%20.3f\n", size, mbs, mbs / 1e3);
                fflush(stdout);
            }
        } else if (rank == 1) {
            for (i = 0; i < iters + skip; i++) {
                for (j = 0; j < o.window; j++)
                    MPI_Irecv(rbuf, (int)size, MPI_BYTE, 0, 100, MPI_COMM_WORLD, &req[j]);
                MPI_Waitall(o.window, req, MPI_STATUSES_IGNORE);
                MPI_Send(sbuf, 4, MPI_BYTE, 0, 101, MPI_COMM_WORLD);
            }
        }
    }
    bench_pair_sync(rank);
    free(req);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
