/* A job that never ends by itself (tests/slurm/run): every rank waits for a message that
 * never comes, so only the launcher can end it.
 *
 *   stuck wait       every rank prints "rank R waiting" and blocks in MPI_Recv;
 *   stuck die R      as wait, but rank R sends itself SIGKILL instead of waiting.
 *
 * The runner then checks that the launcher (srun --kill-on-bad-exit, scancel) ends the whole
 * job quickly and leaves no process behind. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank, size, x = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int victim = (argc > 2 && strcmp(argv[1], "die") == 0) ? atoi(argv[2]) : -1;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == victim) {
        printf("rank %d dying\n", rank);
        fflush(stdout);
        raise(SIGKILL);
    }
    printf("rank %d waiting\n", rank);
    fflush(stdout);
    MPI_Recv(&x, 1, MPI_INT, (rank + 1) % size, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("rank %d: the receive completed, which it must not\n", rank);
    MPI_Finalize();
    return 1;
}
