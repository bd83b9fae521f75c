/* init_null: MPI_Init(NULL, NULL) is valid (MPI-4.0 section 11.2.1), and so is
 * MPI_Init_thread(NULL, NULL, ...): with the environment variable MTEST_INIT_NULL_THREAD=1
 * (set by the testlist) the program uses MPI_Init_thread instead of MPI_Init. */
#include "mtest.h"

int main(void)
{
    const char *t = getenv("MTEST_INIT_NULL_THREAD");
    int provided = -1, rc;
    if (t && strcmp(t, "1") == 0) {
        rc = MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
        if (rc != MPI_SUCCESS) {
            printf("MPI_Init_thread(NULL, NULL) failed: %d\n", rc);
            return 1;
        }
        MTest_Init_common();
        CHECK(provided == MPI_THREAD_SINGLE || provided == MPI_THREAD_FUNNELED ||
                  provided == MPI_THREAD_SERIALIZED || provided == MPI_THREAD_MULTIPLE,
              "provided %d", provided);
    } else {
        rc = MPI_Init(NULL, NULL);
        if (rc != MPI_SUCCESS) {
            printf("MPI_Init(NULL, NULL) failed: %d\n", rc);
            return 1;
        }
        MTest_Init_common();
    }
    int flag = 0;
    MPI_Initialized(&flag);
    CHECK(flag == 1, "MPI_Initialized gave %d", flag);
    /* The job works: a token goes around the ring. */
    int token = 0;
    if (mtest_size > 1) {
        int next = (mtest_rank + 1) % mtest_size, prev = (mtest_rank + mtest_size - 1) % mtest_size;
        if (mtest_rank == 0) {
            token = 1;
            MPI_Send(&token, 1, MPI_INT, next, 5, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_INT, prev, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(token == mtest_size, "token came back as %d", token);
        } else {
            MPI_Recv(&token, 1, MPI_INT, prev, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            token++;
            MPI_Send(&token, 1, MPI_INT, next, 5, MPI_COMM_WORLD);
        }
    }
    return MTest_Finalize(0);
}
