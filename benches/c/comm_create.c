/*
 * Communicator creation cost: time per MPI_Comm_dup(MPI_COMM_WORLD) + MPI_Comm_free,
 * or per MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank) + MPI_Comm_free, on all ranks.
 *
 * Each sample is one create+free; before it all ranks synchronise (a zero-byte
 * gather/release through rank 0 stands in for MPI_Barrier), and the sample is the
 * slowest rank's time (sent to rank 0).  Reported: the median over -i samples
 * (default 2000, after -x warm-up ones, default 100) in microseconds, and the minimum.
 * Options: -o dup|split (default dup), -i N, -x N.  Output (OSU-style, one row; the
 * size column is the number of ranks):
 *     # Size      Time/op (us)      Min (us)
 */
#include "bench_mpi.h"

#define TAG_SYNC 2
#define TAG_TIME 3

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

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    int rank, nranks, c, split = 0;
    long iters = 2000, skip = 100, i;
    double *samples;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    while ((c = getopt(argc, argv, "o:i:x:h")) != -1) {
        switch (c) {
        case 'o': split = strcmp(optarg, "split") == 0; break;
        case 'i': iters = atol(optarg); break;
        case 'x': skip = atol(optarg); break;
        default:
            if (rank == 0) fprintf(stderr, "usage: %s [-o dup|split] [-i iters] [-x skip]\n", argv[0]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (iters < 1 || skip < 0) MPI_Abort(MPI_COMM_WORLD, 2);
    samples = malloc(sizeof(double) * (size_t)iters);
    if (!samples) MPI_Abort(MPI_COMM_WORLD, 3);
    if (rank == 0) {
        printf("# hympi-bench communicator creation: MPI_Comm_%s + MPI_Comm_free, %d ranks\n",
               split ? "split (parity)" : "dup (WORLD)", nranks);
        printf("# Size          Time/op (us)          Min (us)\n");
        fflush(stdout);
    }
    for (i = 0; i < iters + skip; i++) {
        MPI_Comm nc;
        double t0, dt, other;
        int r;
        all_sync(rank, nranks);
        t0 = MPI_Wtime();
        if (split)
            MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &nc);
        else
            MPI_Comm_dup(MPI_COMM_WORLD, &nc);
        MPI_Comm_free(&nc);
        dt = MPI_Wtime() - t0;
        if (rank == 0) {
            for (r = 1; r < nranks; r++) {
                MPI_Recv(&other, 1, MPI_DOUBLE, r, TAG_TIME, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                if (other > dt) dt = other;
            }
            if (i >= skip) samples[i - skip] = dt;
        } else {
            MPI_Send(&dt, 1, MPI_DOUBLE, 0, TAG_TIME, MPI_COMM_WORLD);
        }
    }
    if (rank == 0) {
        qsort(samples, (size_t)iters, sizeof(double), cmp_double);
        printf("%-10d%18.3f%18.3f\n", nranks, samples[iters / 2] * 1e6, samples[0] * 1e6);
        fflush(stdout);
    }
    free(samples);
    MPI_Finalize();
    return 0;
}
