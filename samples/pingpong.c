/* pingpong: one-way latency and bandwidth between rank 0 and rank 1.
 *
 * For each message size, rank 0 sends to rank 1 and rank 1 sends it back, `reps` times after a
 * warm-up; half the round trip is the one-way latency. Rank 0 fills the buffer with a pattern
 * of the size and both ranks check it after the last round trip, so a wrong transfer fails the
 * program. Ranks above 1 only take part in the final reduction.
 *
 * Build and run: hympicc -O2 pingpong.c -o pingpong && hympiexec -n 2 ./pingpong [max_bytes]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned char pattern(size_t size, size_t i)
{
    return (unsigned char)(size * 7 + i * 13 + (i >> 8));
}

int main(int argc, char **argv)
{
    int rank, size, errors = 0;
    size_t max = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : (size_t)4 << 20;
    unsigned char *buf;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        if (rank == 0)
            fprintf(stderr, "pingpong needs at least 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    buf = malloc(max > 0 ? max : 1);
    if (rank == 0)
        printf("%10s %12s %12s\n", "bytes", "latency_us", "MB/s");

    for (size_t n = 1; n <= max; n *= 8) {
        int reps = n <= 65536 ? 2000 : 100, warm = reps / 10;
        double t0 = 0;
        if (rank > 1)
            break;
        if (rank == 0)
            for (size_t i = 0; i < n; i++)
                buf[i] = pattern(n, i);
        else
            memset(buf, 0, n);
        for (int r = -warm; r < reps; r++) {
            if (r == 0)
                t0 = MPI_Wtime();
            if (rank == 0) {
                MPI_Send(buf, (int)n, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
                MPI_Recv(buf, (int)n, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(buf, (int)n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, (int)n, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
            }
        }
        double t = MPI_Wtime() - t0;
        /* The bytes went there and back reps + warm times: they must be unchanged. */
        for (size_t i = 0; i < n; i++)
            errors += buf[i] != pattern(n, i);
        if (rank == 0) {
            double lat = t / reps / 2;
            printf("%10zu %12.3f %12.1f\n", n, lat * 1e6, (double)n / lat / 1e6);
            fflush(stdout);
        }
    }

    MPI_Allreduce(MPI_IN_PLACE, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("pingpong: %s (%d bad bytes)\n", errors ? "FAILED" : "OK", errors);
    free(buf);
    MPI_Finalize();
    return errors != 0;
}
