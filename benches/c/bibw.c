/*
 * Bidirectional bandwidth between ranks 0 and 1 (OSU osu_bibw style).
 * Per iteration both ranks post a window of MPI_Irecv and a window of
 * MPI_Isend, then MPI_Waitall on all of them.  Bytes counted in both
 * directions.  Reports MB/s (10^6 bytes/s) and GB/s (10^9 bytes/s).
 * Defaults as bandwidth.c.
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

    req = malloc(sizeof(MPI_Request) * 2 * (size_t)o.window);
    if (!sbuf || !rbuf || !req) MPI_Abort(MPI_COMM_WORLD, 3);
    if (rank == 0) {
        printf("# hympi-bench Bi-Directional Bandwidth Test (window %d)\n", o.window);
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
        if (rank <= 1) {
            int peer = 1 - rank;
            for (i = 0; i < iters + skip; i++) {
                if (i == skip) t0 = MPI_Wtime();
                for (j = 0; j < o.window; j++)
                    MPI_Irecv(rbuf, (int)size, MPI_BYTE, peer, 10, MPI_COMM_WORLD, &req[j]);
                for (j = 0; j < o.window; j++)
                    MPI_Isend(sbuf, (int)size, MPI_BYTE, peer, 10, MPI_COMM_WORLD,
                              &req[o.window + j]);
                MPI_Waitall(2 * o.window, req, MPI_STATUSES_IGNORE);
            }
            t1 = MPI_Wtime();
            if (rank == 0) {
                double mbs = (double)size * (double)iters * o.window * 2.0 / (t1 - t0) / 1e6;
                printf("%-10ld%18.2f%20.3f\n", size, mbs, mbs / 1e3);
                fflush(stdout);
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
