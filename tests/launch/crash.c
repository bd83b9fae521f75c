/* Launch checks: ranks exchange messages in a ring; depending on argv[1], one rank dies.
 *   kill   rank 1 sends itself SIGKILL after ~2000 exchanges (prints "killing" first)
 *   abort  rank 1 calls MPI_Abort(MPI_COMM_WORLD, 7)
 *   none   everyone finishes and prints " No Errors" from rank 0
 * The other ranks keep communicating (they would block forever on the dead rank). */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "none";
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    long rounds = strcmp(mode, "none") == 0 ? 5000 : 1000000000L;
    for (long i = 0; i < rounds; i++) {
        int out = (int)i, in = -1;
        if (rank == 1 && i == 2000) {
            if (strcmp(mode, "kill") == 0) {
                printf("killing\n");
                fflush(stdout);
                kill(getpid(), SIGKILL);
            } else if (strcmp(mode, "abort") == 0) {
                MPI_Abort(MPI_COMM_WORLD, 7);
            }
        }
        MPI_Sendrecv(&out, 1, MPI_INT, next, 0, &in, 1, MPI_INT, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (in != (int)i) {
            printf("rank %d: round %ld got %d\n", rank, i, in);
            return 1;
        }
    }
    if (rank == 0) printf(" No Errors\n");
    MPI_Finalize();
    return 0;
}
