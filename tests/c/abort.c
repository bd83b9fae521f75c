/* abort: MPI_Abort(MPI_COMM_WORLD, 3) from rank 1 (rank 0 when alone) ends the whole job
 * with a non-zero exit status.  The other ranks wait in a receive that is never matched.
 * The testlist marks this program expect=abort: the runner passes it when the launcher
 * exits non-zero within the timeout and " No Errors" was not printed. */
#include "mtest.h"

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    int aborter = mtest_size > 1 ? 1 : 0;
    if (mtest_rank == aborter) {
        MTest_Aborting("MPI_Abort(MPI_COMM_WORLD, 3)");
        MPI_Abort(MPI_COMM_WORLD, 3);
        printf("MPI_Abort returned\n");
        return 0;
    }
    int x;
    MPI_Recv(&x, 1, MPI_INT, aborter, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("the receive from the aborting rank completed\n");
    return MTest_Finalize(1);
}
