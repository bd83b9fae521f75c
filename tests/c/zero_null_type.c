/* zero_null_type.c: zero-count point-to-point messages with MPI_DATATYPE_NULL, a cheap
 * synchronisation some codes use and MPICH accepts: Send/Recv, Isend/Irecv, Ssend,
 * Sendrecv and persistent requests in a ring, with statuses reporting zero elements.
 * A nonzero count with MPI_DATATYPE_NULL stays an MPI_ERR_TYPE error. */
#include "mtest.h"

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int right = (mtest_rank + 1) % mtest_size, left = (mtest_rank + mtest_size - 1) % mtest_size;
    MPI_Status st;
    MPI_Request rq[2];
    int count;
    CHECK_RC(MPI_Sendrecv(NULL, 0, MPI_DATATYPE_NULL, right, 1, NULL, 0, MPI_DATATYPE_NULL, left,
                          1, MPI_COMM_WORLD, &st),
             "MPI_Sendrecv(0, MPI_DATATYPE_NULL)");
    CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 1, "Sendrecv status: source %d tag %d",
          st.MPI_SOURCE, st.MPI_TAG);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == 0, "Sendrecv count %d", count);

    CHECK_RC(MPI_Irecv(NULL, 0, MPI_DATATYPE_NULL, left, 2, MPI_COMM_WORLD, &rq[0]), "MPI_Irecv");
    CHECK_RC(MPI_Isend(NULL, 0, MPI_DATATYPE_NULL, right, 2, MPI_COMM_WORLD, &rq[1]), "MPI_Isend");
    CHECK_RC(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE), "MPI_Waitall");

    /* Pairs (0, 1), (2, 3), ...: the even rank synchronises with the odd one. */
    if (mtest_rank % 2 == 0 && mtest_rank + 1 < mtest_size) {
        CHECK_RC(MPI_Ssend(NULL, 0, MPI_DATATYPE_NULL, mtest_rank + 1, 3, MPI_COMM_WORLD),
                 "MPI_Ssend");
    } else if (mtest_rank % 2 == 1) {
        CHECK_RC(MPI_Recv(NULL, 0, MPI_DATATYPE_NULL, mtest_rank - 1, 3, MPI_COMM_WORLD, &st),
                 "MPI_Recv");
    }

    CHECK_RC(MPI_Recv_init(NULL, 0, MPI_DATATYPE_NULL, left, 4, MPI_COMM_WORLD, &rq[0]),
             "MPI_Recv_init");
    CHECK_RC(MPI_Send_init(NULL, 0, MPI_DATATYPE_NULL, right, 4, MPI_COMM_WORLD, &rq[1]),
             "MPI_Send_init");
    for (int i = 0; i < 3; i++) {
        CHECK_RC(MPI_Startall(2, rq), "MPI_Startall");
        CHECK_RC(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE), "MPI_Waitall(persistent)");
    }
    MPI_Request_free(&rq[0]);
    MPI_Request_free(&rq[1]);

    int x = 0;
    CHECK_CLASS(MPI_Send(&x, 1, MPI_DATATYPE_NULL, right, 5, MPI_COMM_WORLD), MPI_ERR_TYPE,
                "MPI_Send(1, MPI_DATATYPE_NULL)");
    MPI_Barrier(MPI_COMM_WORLD);
    return MTest_Finalize(mtest_errors);
}
