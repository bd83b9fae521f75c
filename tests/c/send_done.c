/* Sends that complete within their start call (to MPI_PROC_NULL, or to oneself into a posted
 * receive) still behave as full requests: distinct completion calls, MPI_Request_free,
 * MPI_Request_get_status, MPI_Cancel + MPI_Test_cancelled, several in one Waitall / Waitany /
 * Waitsome / Testall, and MPI_Start on one is an error (MPI_ERR_REQUEST). */
#include "mtest.h"

#define N 6

int main(int argc, char **argv)
{
    int errs = 0, rank, i, flag, idx, outcount, indices[2 * N], rc;
    int sbuf[N], rbuf[N];
    MPI_Request rr[N], sr[N], all[2 * N];
    MPI_Status st, sts[2 * N];

    MTest_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MTest_Errors_return(MPI_COMM_WORLD);
    MTest_Errors_return(MPI_COMM_SELF);

    /* 1. Several self sends into posted receives, all in one Waitall with the receives. */
    for (i = 0; i < N; i++) {
        sbuf[i] = 1000 * rank + i;
        rbuf[i] = -1;
        MPI_Irecv(&rbuf[i], 1, MPI_INT, 0, i, MPI_COMM_SELF, &rr[i]);
    }
    for (i = 0; i < N; i++) {
        MPI_Isend(&sbuf[N - 1 - i], 1, MPI_INT, 0, N - 1 - i, MPI_COMM_SELF, &sr[i]);
        CHECK(sr[i] != MPI_REQUEST_NULL, "started send %d has a request", i);
    }
    for (i = 0; i < N; i++) {
        all[2 * i] = sr[i];
        all[2 * i + 1] = rr[i];
    }
    rc = MPI_Waitall(2 * N, all, sts);
    CHECK_RC(rc, "Waitall");
    for (i = 0; i < 2 * N; i++)
        CHECK(all[i] == MPI_REQUEST_NULL, "request %d freed by Waitall", i);
    for (i = 0; i < N; i++) {
        CHECK(rbuf[i] == 1000 * rank + i, "rbuf[%d] = %d", i, rbuf[i]);
        CHECK(sts[2 * i + 1].MPI_TAG == i && sts[2 * i + 1].MPI_SOURCE == 0,
              "receive %d status source %d tag %d", i, sts[2 * i + 1].MPI_SOURCE,
              sts[2 * i + 1].MPI_TAG);
    }

    /* 2. Waitany / Waitsome / Testall over completed sends. */
    for (i = 0; i < 2; i++) {
        MPI_Irecv(&rbuf[i], 1, MPI_INT, 0, 7, MPI_COMM_SELF, &rr[i]);
        MPI_Isend(&sbuf[i], 1, MPI_INT, 0, 7, MPI_COMM_SELF, &sr[i]);
    }
    rc = MPI_Waitany(2, sr, &idx, &st);
    CHECK_RC(rc, "Waitany");
    CHECK(idx == 0 || idx == 1, "Waitany index %d", idx);
    CHECK(sr[idx] == MPI_REQUEST_NULL, "Waitany freed its request");
    rc = MPI_Waitsome(2, sr, &outcount, indices, sts);
    CHECK_RC(rc, "Waitsome");
    CHECK(outcount == 1 && indices[0] == 1 - idx, "Waitsome gave %d (first %d)", outcount,
          indices[0]);
    rc = MPI_Testall(2, rr, &flag, sts);
    CHECK_RC(rc, "Testall");
    CHECK(flag, "Testall complete");
    CHECK(rbuf[0] == sbuf[0] && rbuf[1] == sbuf[1], "data of part 2");

    /* 3. Request_get_status leaves the request; Request_free releases it. */
    MPI_Irecv(&rbuf[0], 1, MPI_INT, 0, 8, MPI_COMM_SELF, &rr[0]);
    MPI_Isend(&sbuf[0], 1, MPI_INT, 0, 8, MPI_COMM_SELF, &sr[0]);
    flag = 0;
    rc = MPI_Request_get_status(sr[0], &flag, &st);
    CHECK_RC(rc, "Request_get_status");
    CHECK(flag, "completed send reports complete");
    CHECK(sr[0] != MPI_REQUEST_NULL, "get_status keeps the request");
    rc = MPI_Request_free(&sr[0]);
    CHECK_RC(rc, "Request_free");
    CHECK(sr[0] == MPI_REQUEST_NULL, "Request_free nulls the handle");
    MPI_Wait(&rr[0], MPI_STATUS_IGNORE);

    /* 4. Cancel of a completed send: no effect, not cancelled. */
    MPI_Irecv(&rbuf[0], 1, MPI_INT, 0, 9, MPI_COMM_SELF, &rr[0]);
    MPI_Isend(&sbuf[0], 1, MPI_INT, 0, 9, MPI_COMM_SELF, &sr[0]);
    rc = MPI_Cancel(&sr[0]);
    CHECK_RC(rc, "Cancel");
    rc = MPI_Wait(&sr[0], &st);
    CHECK_RC(rc, "Wait after Cancel");
    MPI_Test_cancelled(&st, &flag);
    CHECK(!flag, "a completed send is not cancelled");
    MPI_Wait(&rr[0], MPI_STATUS_IGNORE);
    CHECK(rbuf[0] == sbuf[0], "data of part 4");

    /* 5. MPI_Start on a completed send request is an error; it stays valid. */
    MPI_Isend(&sbuf[0], 1, MPI_INT, MPI_PROC_NULL, 3, MPI_COMM_WORLD, &sr[0]);
    MPI_Isend(&sbuf[1], 1, MPI_INT, MPI_PROC_NULL, 3, MPI_COMM_WORLD, &sr[1]);
    rc = MPI_Start(&sr[0]);
    CHECK_CLASS(rc, MPI_ERR_REQUEST, "Start on a nonpersistent request");
    rc = MPI_Waitall(2, sr, MPI_STATUSES_IGNORE);
    CHECK_RC(rc, "Waitall of PROC_NULL sends");
    CHECK(sr[0] == MPI_REQUEST_NULL && sr[1] == MPI_REQUEST_NULL, "PROC_NULL sends freed");

    /* 6. Blocking self send into a posted receive. */
    MPI_Irecv(&rbuf[2], 1, MPI_INT, 0, 10, MPI_COMM_SELF, &rr[0]);
    rc = MPI_Send(&sbuf[2], 1, MPI_INT, 0, 10, MPI_COMM_SELF);
    CHECK_RC(rc, "Send to self");
    MPI_Wait(&rr[0], MPI_STATUS_IGNORE);
    CHECK(rbuf[2] == sbuf[2], "data of part 6");

    return MTest_Finalize(errs);
}
