/*
 * MPI_Allreduce latency (OSU osu_allreduce style): time per MPI_Allreduce(MPI_SUM) of N bytes
 * of doubles on MPI_COMM_WORLD, in microseconds.
 * The iterations run in 15 blocks, each started by MPI_Barrier; a block's time is its
 * average per call on the slowest rank (MPI_Reduce MAX); the median block is reported.
 * Defaults: sizes 8 B .. 4 MiB (powers of two); 2000 iterations for sizes <= 8 KiB, 300 above.
 */
#include "bench_mpi.h"

#define BLOCKS 15

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    struct bench_opts o;
    int rank = bench_init(&argc, &argv, 8, &o);
    double *sbuf = (double *)bench_alloc(o.max_size, 0);
    double *rbuf = (double *)bench_alloc(o.max_size, 0);
    int k;

    if (!sbuf || !rbuf) MPI_Abort(MPI_COMM_WORLD, 3);
    for (long i = 0; i < o.max_size / 8; i++) sbuf[i] = (double)(rank + i % 7);
    if (rank == 0) {
        printf("# hympi-bench Allreduce Test (MPI_SUM of doubles, median of %d blocks)\n",
               BLOCKS);
        printf("# Size          Latency (us)\n");
        fflush(stdout);
    }
    for (k = 0; k < o.nsizes; k++) {
        long size = o.sizes[k];
        int count = (int)(size / 8);
        long iters = bench_iters(&o, size, 2000, 300);
        long skip = bench_skip(&o, size, 100, 10);
        long per = iters / BLOCKS > 0 ? iters / BLOCKS : 1;
        double blocks[BLOCKS];
        long i;
        int b;

        if (count < 1) continue;
        for (i = 0; i < skip; i++)
            MPI_Allreduce(sbuf, rbuf, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        for (b = 0; b < BLOCKS; b++) {
            double t0, t, tmax = 0.0;
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
            for (i = 0; i < per; i++)
                MPI_Allreduce(sbuf, rbuf, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            t = (MPI_Wtime() - t0) / (double)per;
            MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
            blocks[b] = tmax;
        }
        if (rank == 0) {
            qsort(blocks, BLOCKS, sizeof blocks[0], cmp_double);
            printf("%-10ld%18.3f\n", size, blocks[BLOCKS / 2] * 1e6);
            fflush(stdout);
        }
    }
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
