/* cancel: MPI_Cancel of receives and MPI_Test_cancelled.
 *
 * A receive that nothing matches, cancelled, completes (MPI_Wait or an MPI_Test loop) with
 * MPI_Test_cancelled true and an untouched buffer, and consumes no message: a message sent
 * afterwards goes to the next receive.  Wildcard receives cancel too.  A receive already
 * matched and complete is not cancelled (MPI_Test_cancelled false, data delivered).  A
 * started persistent receive, cancelled, completes as cancelled and can be started again
 * and used.  A normal receive's status says not cancelled. */
#include "mtest.h"

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    int rc, flag, cancelled, count;
    MPI_Status st;
    MPI_Request req;
    int buf[4];

    for (int variant = 0; variant < 4; variant++) {
        MPI_Comm comm = variant % 2 ? MPI_COMM_SELF : MPI_COMM_WORLD;
        int src = variant >= 2 ? MPI_ANY_SOURCE : (variant % 2 ? 0 : mtest_rank);
        /* MPI_ANY_TAG only on SELF: on WORLD it could match the partner's later messages. */
        int tag = variant == 3 ? MPI_ANY_TAG : 77;
        memset(buf, 0x2b, sizeof buf);
        rc = MPI_Irecv(buf, 4, MPI_INT, src, tag, comm, &req);
        CHECK_RC(rc, "MPI_Irecv");
        rc = MPI_Cancel(&req);
        CHECK_RC(rc, "MPI_Cancel");
        CHECK(req != MPI_REQUEST_NULL, "MPI_Cancel freed the request");
        MTest_Poison_status(&st);
        if (variant % 2) {
            flag = 0;
            double t0 = MPI_Wtime();
            while (!flag && MPI_Wtime() - t0 < 30)
                rc = MPI_Test(&req, &flag, &st);
            CHECK(flag, "a cancelled receive never completed under MPI_Test");
        } else {
            rc = MPI_Wait(&req, &st);
        }
        CHECK_RC(rc, "completion of a cancelled receive");
        CHECK(req == MPI_REQUEST_NULL, "completion did not free the cancelled request");
        cancelled = 0;
        rc = MPI_Test_cancelled(&st, &cancelled);
        CHECK(rc == MPI_SUCCESS && cancelled, "variant %d: MPI_Test_cancelled gave %d", variant, cancelled);
        CHECK(MTest_Check_const(buf, sizeof buf, 0x2b) < 0, "a cancelled receive wrote its buffer");
    }

    /* The cancelled receive consumed nothing: a message sent now goes to a new receive. */
    {
        int x = 31, y = 0;
        MPI_Request r2;
        MPI_Irecv(&y, 1, MPI_INT, 0, 78, MPI_COMM_SELF, &req);
        MPI_Cancel(&req);
        MPI_Wait(&req, &st);
        MPI_Test_cancelled(&st, &cancelled);
        CHECK(cancelled, "not cancelled");
        MPI_Isend(&x, 1, MPI_INT, 0, 78, MPI_COMM_SELF, &r2);
        rc = MPI_Recv(&y, 1, MPI_INT, 0, 78, MPI_COMM_SELF, &st);
        CHECK(rc == MPI_SUCCESS && y == 31, "after a cancelled receive, a new receive got %d", y);
        MPI_Test_cancelled(&st, &cancelled);
        CHECK(!cancelled, "a normal receive's status says cancelled");
        MPI_Wait(&r2, MPI_STATUS_IGNORE);
    }

    /* Cancelling a receive that already completed has no effect. */
    {
        int x = 55, y = 0;
        MPI_Request s;
        MPI_Isend(&x, 1, MPI_INT, 0, 79, MPI_COMM_SELF, &s);
        MPI_Irecv(&y, 1, MPI_INT, 0, 79, MPI_COMM_SELF, &req);
        flag = 0;
        double t0 = MPI_Wtime();
        while (!flag && MPI_Wtime() - t0 < 30)
            MPI_Request_get_status(req, &flag, MPI_STATUS_IGNORE);
        CHECK(flag, "a matched self receive never completed");
        rc = MPI_Cancel(&req);
        CHECK_RC(rc, "MPI_Cancel of a completed receive");
        rc = MPI_Wait(&req, &st);
        CHECK_RC(rc, "MPI_Wait");
        MPI_Test_cancelled(&st, &cancelled);
        MPI_Get_count(&st, MPI_INT, &count);
        CHECK(!cancelled && y == 55 && count == 1, "cancel after completion: cancelled %d, value %d, count %d", cancelled, y, count);
        MPI_Wait(&s, MPI_STATUS_IGNORE);
    }

    /* Persistent receive: start, cancel, complete as cancelled; start again and use. */
    {
        int y = 0, x = 66;
        rc = MPI_Recv_init(&y, 1, MPI_INT, mtest_rank, 80, MPI_COMM_WORLD, &req);
        CHECK_RC(rc, "MPI_Recv_init");
        MPI_Start(&req);
        rc = MPI_Cancel(&req);
        CHECK_RC(rc, "MPI_Cancel of a persistent receive");
        MPI_Wait(&req, &st);
        MPI_Test_cancelled(&st, &cancelled);
        CHECK(cancelled, "persistent receive not cancelled");
        CHECK(req != MPI_REQUEST_NULL, "completion freed the persistent request");
        MPI_Start(&req);
        MPI_Send(&x, 1, MPI_INT, mtest_rank, 80, MPI_COMM_WORLD);
        MPI_Wait(&req, &st);
        MPI_Test_cancelled(&st, &cancelled);
        CHECK(!cancelled && y == 66, "restarted persistent receive: cancelled %d value %d", cancelled, y);
        MPI_Request_free(&req);
    }

    /* Between ranks: cancel a receive from the partner (of a tag it never sends), then
     * exchange normally. */
    int partner = MTest_Partner();
    if (partner >= 0) {
        int y = -1, x = mtest_rank;
        MPI_Irecv(&y, 1, MPI_INT, partner, 91, MPI_COMM_WORLD, &req); /* tag 91 is never sent */
        MPI_Cancel(&req);
        MPI_Wait(&req, &st);
        MPI_Test_cancelled(&st, &cancelled);
        CHECK(cancelled && y == -1, "cross-rank cancel: cancelled %d value %d", cancelled, y);
        rc = MPI_Sendrecv(&x, 1, MPI_INT, partner, 90, &y, 1, MPI_INT, partner, 90, MPI_COMM_WORLD, &st);
        CHECK(rc == MPI_SUCCESS && y == partner, "exchange after cancel: got %d", y);
    }
    return MTest_Finalize(0);
}
