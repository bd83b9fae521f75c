/* init_finalize: MPI_Init, MPI_Initialized, MPI_Finalized, MPI_Finalize, MPI_Query_thread and
 * MPI_Is_thread_main after MPI_Init, and that MPI_Init hands the program its arguments.
 *
 * MPI_Initialized and MPI_Finalized may be called before MPI_Init and after MPI_Finalize;
 * after MPI_Finalize, MPI_Initialized still says true (MPI-4.0 section 11.2.1).
 * The testlist passes the arguments "alpha" and "beta gamma": they must survive MPI_Init. */
#include "mtest.h"

int main(int argc, char **argv)
{
    int flag = -1, rc;

    rc = MPI_Initialized(&flag);
    CHECK(rc == MPI_SUCCESS && flag == 0, "MPI_Initialized before MPI_Init: rc %d flag %d", rc, flag);
    flag = -1;
    rc = MPI_Finalized(&flag);
    CHECK(rc == MPI_SUCCESS && flag == 0, "MPI_Finalized before MPI_Init: rc %d flag %d", rc, flag);

    int orig_argc = argc;
    MTest_Init(&argc, &argv);

    /* The arguments after the program name are still there. */
    CHECK(argc == orig_argc, "argc changed by MPI_Init: %d -> %d", orig_argc, argc);
    if (argc >= 3) {
        CHECK(strcmp(argv[1], "alpha") == 0, "argv[1] is '%s'", argv[1]);
        CHECK(strcmp(argv[2], "beta gamma") == 0, "argv[2] is '%s'", argv[2]);
    } else {
        CHECK(0, "expected the arguments 'alpha' 'beta gamma', got argc %d", argc);
    }

    flag = -1;
    rc = MPI_Initialized(&flag);
    CHECK(rc == MPI_SUCCESS && flag == 1, "MPI_Initialized after MPI_Init: rc %d flag %d", rc, flag);
    flag = -1;
    rc = MPI_Finalized(&flag);
    CHECK(rc == MPI_SUCCESS && flag == 0, "MPI_Finalized before MPI_Finalize: rc %d flag %d", rc, flag);

    /* MPI_Init behaves as MPI_Init_thread with MPI_THREAD_SINGLE required; the level provided
     * is implementation-defined but one of the four. */
    int level = -1;
    rc = MPI_Query_thread(&level);
    CHECK_RC(rc, "MPI_Query_thread");
    CHECK(level == MPI_THREAD_SINGLE || level == MPI_THREAD_FUNNELED ||
              level == MPI_THREAD_SERIALIZED || level == MPI_THREAD_MULTIPLE,
          "MPI_Query_thread gave %d", level);
    flag = -1;
    rc = MPI_Is_thread_main(&flag);
    CHECK(rc == MPI_SUCCESS && flag == 1, "MPI_Is_thread_main on the main thread: rc %d flag %d", rc, flag);

    /* The level constants are ordered (MPI-4.0 section 11.2.3). */
    CHECK(MPI_THREAD_SINGLE < MPI_THREAD_FUNNELED && MPI_THREAD_FUNNELED < MPI_THREAD_SERIALIZED &&
              MPI_THREAD_SERIALIZED < MPI_THREAD_MULTIPLE,
          "thread level constants are not monotonic");

    int total = MTest_Sum_errors(0);
    rc = MPI_Finalize();
    int post = 0;
    if (rc != MPI_SUCCESS) {
        printf("[%d] MPI_Finalize returned %d\n", mtest_rank, rc);
        post++;
    }
    flag = -1;
    rc = MPI_Finalized(&flag);
    if (rc != MPI_SUCCESS || flag != 1) {
        printf("[%d] MPI_Finalized after MPI_Finalize: rc %d flag %d\n", mtest_rank, rc, flag);
        post++;
    }
    flag = -1;
    rc = MPI_Initialized(&flag);
    if (rc != MPI_SUCCESS || flag != 1) {
        printf("[%d] MPI_Initialized after MPI_Finalize: rc %d flag %d\n", mtest_rank, rc, flag);
        post++;
    }
    /* Errors after MPI_Finalize cannot be gathered: each rank reports its own, and rank 0
     * prints the verdict only when its own post-finalize checks passed too. */
    if (mtest_rank == 0)
        MTest_Report(total + post);
    return post != 0 || mtest_errors != 0;
}
