/* ssend: synchronous mode.  An MPI_Issend does not complete before the matching receive is
 * posted, whatever its size (0 B .. 4 MiB), even after the receiver has probed the message
 * (a probe is not a receive): the sender tests it in a loop while the receiver is held back
 * by a handshake, then lets the receiver post, then waits.  MPI_Ssend delivers data; an
 * MPI_Issend to self on MPI_COMM_SELF is incomplete until the self receive is posted. */
#include "mtest.h"

/* Test req for about ms milliseconds: returns 1 if it completed. */
static int test_for(MPI_Request *req, int ms)
{
    int flag = 0;
    double end = MPI_Wtime() + ms / 1000.0;
    int iters = 0;
    while (MPI_Wtime() < end || iters < 100) {
        MPI_Test(req, &flag, MPI_STATUS_IGNORE);
        if (flag)
            return 1;
        iters++;
    }
    return 0;
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    int partner = MTest_Partner();
    static const int sizes[] = {0, 8, 1000, 65536, 1 << 20, 4 << 20};
    int rc, dummy = 0;
    MPI_Status st;

    if (partner >= 0) {
        int a = mtest_rank < partner;
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            int n = sizes[i];
            unsigned char *buf = malloc(n + 1);
            for (int probe = 0; probe < 2; probe++) {
                int tag = 100 + (int)i;
                if (a) {
                    MPI_Request req;
                    MTest_Fill_bytes(buf, n, 700 + i);
                    rc = MPI_Issend(buf, n, MPI_BYTE, partner, tag, MPI_COMM_WORLD, &req);
                    CHECK_RC(rc, "MPI_Issend");
                    if (probe) /* wait until the receiver has probed the message */
                        MPI_Recv(&dummy, 0, MPI_INT, partner, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    int done = test_for(&req, 150);
                    CHECK(!done, "MPI_Issend of %d B completed before the receive was posted%s", n,
                          probe ? " (the receiver had only probed it)" : "");
                    if (!done) {
                        int flag = -1;
                        MPI_Request_get_status(req, &flag, MPI_STATUS_IGNORE);
                        CHECK(flag == 0, "MPI_Request_get_status says an unmatched MPI_Issend of %d B is complete", n);
                    }
                    MPI_Send(&dummy, 0, MPI_INT, partner, 1, MPI_COMM_WORLD); /* go */
                    if (!done) {
                        rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
                        CHECK_RC(rc, "MPI_Wait on MPI_Issend");
                    }
                } else {
                    if (probe) {
                        rc = MPI_Probe(partner, tag, MPI_COMM_WORLD, &st);
                        CHECK_RC(rc, "MPI_Probe");
                        MPI_Send(&dummy, 0, MPI_INT, partner, 2, MPI_COMM_WORLD);
                    }
                    MPI_Recv(&dummy, 0, MPI_INT, partner, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    memset(buf, 0, n);
                    rc = MPI_Recv(buf, n, MPI_BYTE, partner, tag, MPI_COMM_WORLD, &st);
                    CHECK_RC(rc, "MPI_Recv of the synchronous message");
                    int count;
                    MPI_Get_count(&st, MPI_BYTE, &count);
                    CHECK(count == n, "synchronous message: count %d, want %d", count, n);
                    CHECK(MTest_Verify_bytes(buf, n, 700 + i) < 0, "synchronous message of %d B corrupted", n);
                }
            }
            /* Blocking MPI_Ssend, both directions. */
            for (int dir = 0; dir < 2; dir++) {
                if ((dir == 0) == a) {
                    MTest_Fill_bytes(buf, n, 900 + i + dir);
                    rc = MPI_Ssend(buf, n, MPI_BYTE, partner, 30, MPI_COMM_WORLD);
                    CHECK_RC(rc, "MPI_Ssend");
                } else {
                    memset(buf, 0, n);
                    MPI_Recv(buf, n, MPI_BYTE, partner, 30, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    CHECK(MTest_Verify_bytes(buf, n, 900 + i + dir) < 0, "MPI_Ssend of %d B corrupted", n);
                }
            }
            free(buf);
        }
    }

    /* Issend to self. */
    int x = 5, y = 0;
    MPI_Request req;
    rc = MPI_Issend(&x, 1, MPI_INT, 0, 3, MPI_COMM_SELF, &req);
    CHECK_RC(rc, "MPI_Issend to self");
    CHECK(!test_for(&req, 50), "MPI_Issend to self completed before the receive was posted");
    rc = MPI_Recv(&y, 1, MPI_INT, 0, 3, MPI_COMM_SELF, MPI_STATUS_IGNORE);
    CHECK_RC(rc, "MPI_Recv from self");
    rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    CHECK(rc == MPI_SUCCESS && y == 5, "Issend to self: rc %d value %d", rc, y);
    return MTest_Finalize(0);
}
