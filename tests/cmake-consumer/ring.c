/* A consumer of the installed hympi: passes a token around the ring, then checks an
 * MPI_Allreduce against the closed form. Exit status 0 and " No Errors" only when both hold.
 * Optional argument: the number of laps. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, size, laps = argc > 1 ? atoi(argv[1]) : 3, errs = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    long token = 0;
    for (int lap = 0; lap < laps; lap++) {
        if (rank == 0) {
            token += 1;
            MPI_Send(&token, 1, MPI_LONG, next, lap, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_LONG, prev, lap, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&token, 1, MPI_LONG, prev, lap, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            token += rank + 1;
            MPI_Send(&token, 1, MPI_LONG, next, lap, MPI_COMM_WORLD);
        }
    }
    /* Each lap adds 1 + 2 + ... + size. */
    long lap_sum = (long)size * (size + 1) / 2;
    if (rank == 0 && token != laps * lap_sum) {
        fprintf(stderr, "ring: token %ld, expected %ld\n", token, laps * lap_sum);
        errs++;
    }
    int mine = rank + 1, total = 0;
    MPI_Allreduce(&mine, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (total != (int)lap_sum) {
        fprintf(stderr, "ring: rank %d: allreduce %d, expected %ld\n", rank, total, lap_sum);
        errs++;
    }
    int all_errs = 0;
    MPI_Allreduce(&errs, &all_errs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all_errs == 0)
        printf(" No Errors\n");
    MPI_Finalize();
    return all_errs != 0;
}
