/* errhandler_fatal: the default error handler of MPI_COMM_WORLD is MPI_ERRORS_ARE_FATAL: an
 * erroneous call (a send to a rank that does not exist) on rank 1 (rank 0 when alone) ends
 * the job.  expect=abort in the testlist. */
#include "mtest.h"

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    int culprit = mtest_size > 1 ? 1 : 0;
    if (mtest_rank == culprit) {
        int x = 0;
        MTest_Aborting("MPI_Send to a rank that does not exist, with MPI_ERRORS_ARE_FATAL");
        MPI_Send(&x, 1, MPI_INT, mtest_size + 5, 0, MPI_COMM_WORLD);
        printf("the erroneous MPI_Send returned\n");
        return 0;
    }
    int x;
    MPI_Recv(&x, 1, MPI_INT, culprit, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("the receive from the failing rank completed\n");
    return MTest_Finalize(1);
}
