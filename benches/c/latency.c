/*
 * Ping-pong latency between ranks 0 and 1 (OSU osu_latency style).
 * Reports one-way latency = round-trip time / 2, in microseconds.
 * Defaults: sizes 0 and 1 B .. 4 MiB; 10000 iterations + 100 warm-up for
 * sizes <= 8 KiB, 1000 + 10 above (the OSU defaults).
 */
#include "bench_mpi.h"

int main(int argc, char **argv)
{
    struct bench_opts o;
    int rank = bench_init(&argc, &argv, 0, &o);
    char *sbuf = bench_alloc(o.max_size, 'a');
    char *rbuf = bench_alloc(o.max_size, 'b');
    int k;

    if (!sbuf || !rbuf) MPI_Abort(MPI_COMM_WORLD, 3);
    if (rank == 0) {
        printf("# hympi-bench Latency Test (ping-pong, one-way)\n");
        printf("# Size          Latency (us)\n");
        fflush(stdout);
    }
    for (k = 0; k < o.nsizes; k++) {
        long size = o.sizes[k];
        long iters = bench_iters(&o, size, 10000, 1000);
        long skip = bench_skip(&o, size, 100, 10);
        double t0 = 0.0, t1;
        long i;

        bench_pair_sync(rank);
        if (rank == 0) {
            for (i = 0; i < iters + skip; i++) {
                if (i == skip) t0 = MPI_Wtime();
                MPI_Send(sbuf, (int)size, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
                MPI_Recv(rbuf, (int)size, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
            t1 = MPI_Wtime();
            printf("%-10ld%18.3f\n", size, (t1 - t0) * 1e6 / (2.0 * (double)iters));
            fflush(stdout);
        } else if (rank == 1) {
            for (i = 0; i < iters + skip; i++) {
                MPI_Recv(rbuf, (int)size, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(sbuf, (int)size, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
            }
        }
    }
    bench_pair_sync(rank);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
