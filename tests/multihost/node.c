/* Prints which node each rank is on, as MPI_COMM_TYPE_SHARED sees it:
 *   rank R node N of K nodes, S on it
 * Nodes are numbered by their lowest world rank. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    int rank, size, shared_size, leader, nodes = 0, node = 0;
    MPI_Comm shared;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared);
    MPI_Comm_size(shared, &shared_size);
    MPI_Allreduce(&rank, &leader, 1, MPI_INT, MPI_MIN, shared);
    int *leaders = malloc(sizeof(int) * size);
    MPI_Allgather(&leader, 1, MPI_INT, leaders, 1, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++) {
        if (leaders[r] == r) {
            if (r < leader) node++;
            nodes++;
        }
    }
    printf("rank %d node %d of %d nodes, %d on it\n", rank, node, nodes, shared_size);
    free(leaders);
    MPI_Comm_free(&shared);
    MPI_Finalize();
    return 0;
}
