/* rsend: ready mode.  The receiver posts its receives first and then sends a zero-byte
 * handshake; only after receiving the handshake does the sender call MPI_Rsend / MPI_Irsend
 * (the standard requires the receive to be posted first).  Sizes 0 B .. 4 MiB; a batch of
 * MPI_Irsend covering many pre-posted receives of one tag arrives in order; MPI_Rsend to self
 * after posting the self receive. */
#include "mtest.h"

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    int partner = MTest_Partner();
    static const int sizes[] = {0, 1, 100, 8192, 65536, 500000, 4 << 20};
    enum { NS = sizeof sizes / sizeof sizes[0] };
    int rc, dummy = 0, count;
    MPI_Status st;

    if (partner >= 0) {
        int a = mtest_rank < partner;
        for (int i = 0; i < NS; i++) {
            int n = sizes[i];
            unsigned char *buf = malloc(n + 16);
            for (int blocking = 0; blocking < 2; blocking++) {
                int tag = 10 + i * 2 + blocking;
                if (a) {
                    /* sender */
                    MTest_Fill_bytes(buf, n, 300 + tag);
                    MPI_Recv(&dummy, 0, MPI_INT, partner, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    if (blocking) {
                        rc = MPI_Rsend(buf, n, MPI_BYTE, partner, tag, MPI_COMM_WORLD);
                        CHECK_RC(rc, "MPI_Rsend");
                    } else {
                        MPI_Request req;
                        rc = MPI_Irsend(buf, n, MPI_BYTE, partner, tag, MPI_COMM_WORLD, &req);
                        CHECK_RC(rc, "MPI_Irsend");
                        rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
                        CHECK_RC(rc, "MPI_Wait on MPI_Irsend");
                    }
                } else {
                    MPI_Request req;
                    memset(buf, 0xab, n + 16);
                    MPI_Irecv(buf, n + 16, MPI_BYTE, partner, tag, MPI_COMM_WORLD, &req);
                    MPI_Send(&dummy, 0, MPI_INT, partner, 1, MPI_COMM_WORLD);
                    MPI_Wait(&req, &st);
                    MPI_Get_count(&st, MPI_BYTE, &count);
                    CHECK(count == n, "ready message: count %d, want %d", count, n);
                    CHECK(MTest_Verify_bytes(buf, n, 300 + tag) < 0, "ready message of %d B (%s) corrupted", n,
                          blocking ? "MPI_Rsend" : "MPI_Irsend");
                    CHECK(MTest_Check_const(buf + n, 16, 0xab) < 0, "ready message wrote past its end");
                }
            }
            free(buf);
        }

        /* A batch: the receiver posts M receives of one tag, one handshake, M Irsends. */
        enum { M = 50 };
        if (a) {
            int vals[M];
            MPI_Request reqs[M];
            MPI_Recv(&dummy, 0, MPI_INT, partner, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (int k = 0; k < M; k++) {
                vals[k] = k * 7;
                rc = MPI_Irsend(&vals[k], 1, MPI_INT, partner, 60, MPI_COMM_WORLD, &reqs[k]);
                CHECK_RC(rc, "MPI_Irsend (batch)");
            }
            MPI_Waitall(M, reqs, MPI_STATUSES_IGNORE);
        } else {
            int vals[M];
            MPI_Request reqs[M];
            for (int k = 0; k < M; k++) {
                vals[k] = -1;
                MPI_Irecv(&vals[k], 1, MPI_INT, partner, 60, MPI_COMM_WORLD, &reqs[k]);
            }
            MPI_Send(&dummy, 0, MPI_INT, partner, 1, MPI_COMM_WORLD);
            MPI_Waitall(M, reqs, MPI_STATUSES_IGNORE);
            for (int k = 0; k < M; k++)
                CHECK(vals[k] == k * 7, "batch receive %d got %d (out of order?)", k, vals[k]);
        }
    }

    /* Rsend to self, receive posted first. */
    double x = 2.5, y = 0;
    MPI_Request req;
    MPI_Irecv(&y, 1, MPI_DOUBLE, mtest_rank, 4, MPI_COMM_WORLD, &req);
    rc = MPI_Rsend(&x, 1, MPI_DOUBLE, mtest_rank, 4, MPI_COMM_WORLD);
    CHECK_RC(rc, "MPI_Rsend to self");
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    CHECK(y == 2.5, "MPI_Rsend to self delivered %g", y);
    return MTest_Finalize(0);
}
