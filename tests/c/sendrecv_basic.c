/* sendrecv_basic: MPI_Send/MPI_Recv and MPI_Isend/MPI_Irecv between pairs of ranks and
 * around a ring: data arrives intact, the status holds the source and tag, MPI_Get_count
 * gives the number received (a message shorter than the receive buffer leaves the rest of
 * the buffer untouched), MPI_STATUS_IGNORE is accepted, tags select messages (a message sent
 * second with tag A is received first by a receive of tag A). */
#include "mtest.h"

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    int partner = MTest_Partner();
    MPI_Status st;
    int rc, count;

    if (partner >= 0) {
        /* Blocking, lower rank sends first. */
        int sbuf[100], rbuf[120];
        for (int i = 0; i < 100; i++)
            sbuf[i] = mtest_rank * 1000 + i;
        for (int round = 0; round < 2; round++) {
            memset(rbuf, 0xee, sizeof rbuf);
            int sender = (round == 0) == (mtest_rank < partner);
            if (sender) {
                rc = MPI_Send(sbuf, 100, MPI_INT, partner, 10 + round, MPI_COMM_WORLD);
                CHECK_RC(rc, "MPI_Send");
            } else {
                MTest_Poison_status(&st);
                rc = MPI_Recv(rbuf, 120, MPI_INT, partner, 10 + round, MPI_COMM_WORLD, &st);
                CHECK_RC(rc, "MPI_Recv");
                CHECK(st.MPI_SOURCE == partner, "status source %d", st.MPI_SOURCE);
                CHECK(st.MPI_TAG == 10 + round, "status tag %d", st.MPI_TAG);
                MPI_Get_count(&st, MPI_INT, &count);
                CHECK(count == 100, "count %d", count);
                int bad = -1;
                for (int i = 0; i < 100; i++)
                    if (rbuf[i] != partner * 1000 + i) {
                        bad = i;
                        break;
                    }
                CHECK(bad < 0, "element %d is %d", bad, bad >= 0 ? rbuf[bad] : 0);
                CHECK(MTest_Check_const(rbuf + 100, 20 * sizeof(int), 0xee) < 0,
                      "a shorter message wrote past its end in the receive buffer");
            }
        }

        /* Tags select: send tag 1 then tag 2; receive tag 2 first (nonblocking sends, so the
         * program is safe without buffering). */
        if (mtest_rank < partner) {
            int a = 1, b = 2;
            MPI_Request r[2];
            MPI_Isend(&a, 1, MPI_INT, partner, 1, MPI_COMM_WORLD, &r[0]);
            MPI_Isend(&b, 1, MPI_INT, partner, 2, MPI_COMM_WORLD, &r[1]);
            rc = MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
            CHECK_RC(rc, "MPI_Waitall");
        } else {
            int a = 0, b = 0;
            MPI_Recv(&b, 1, MPI_INT, partner, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Recv(&a, 1, MPI_INT, partner, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(a == 1 && b == 2, "tag selection: tag 1 gave %d, tag 2 gave %d", a, b);
        }

        /* Nonblocking both ways at once, many messages, each with its own tag. */
        enum { M = 64 };
        int out[M], in[M];
        MPI_Request reqs[2 * M];
        MPI_Status sts[2 * M];
        for (int i = 0; i < M; i++) {
            out[i] = mtest_rank * 100000 + i;
            in[i] = -1;
            rc = MPI_Irecv(&in[i], 1, MPI_INT, partner, 100 + i, MPI_COMM_WORLD, &reqs[i]);
            CHECK_RC(rc, "MPI_Irecv");
        }
        for (int i = 0; i < M; i++) {
            rc = MPI_Isend(&out[M - 1 - i], 1, MPI_INT, partner, 100 + (M - 1 - i), MPI_COMM_WORLD, &reqs[M + i]);
            CHECK_RC(rc, "MPI_Isend");
        }
        rc = MPI_Waitall(2 * M, reqs, sts);
        CHECK_RC(rc, "MPI_Waitall");
        for (int i = 0; i < M; i++) {
            CHECK(in[i] == partner * 100000 + i, "message %d is %d", i, in[i]);
            CHECK(sts[i].MPI_SOURCE == partner && sts[i].MPI_TAG == 100 + i, "status %d: source %d tag %d", i,
                  sts[i].MPI_SOURCE, sts[i].MPI_TAG);
            CHECK(reqs[i] == MPI_REQUEST_NULL && reqs[M + i] == MPI_REQUEST_NULL, "request %d not freed by MPI_Waitall", i);
        }
    }

    /* A ring with every rank: Irecv from the left, Send to the right, Wait. */
    if (mtest_size > 1) {
        int left = (mtest_rank + mtest_size - 1) % mtest_size, right = (mtest_rank + 1) % mtest_size;
        double in[1000], out[1000];
        for (int i = 0; i < 1000; i++)
            out[i] = mtest_rank + i * 0.5;
        MPI_Request req;
        rc = MPI_Irecv(in, 1000, MPI_DOUBLE, left, 77, MPI_COMM_WORLD, &req);
        CHECK_RC(rc, "MPI_Irecv");
        rc = MPI_Send(out, 1000, MPI_DOUBLE, right, 77, MPI_COMM_WORLD);
        CHECK_RC(rc, "MPI_Send");
        rc = MPI_Wait(&req, &st);
        CHECK_RC(rc, "MPI_Wait");
        CHECK(req == MPI_REQUEST_NULL, "MPI_Wait did not free the request");
        CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 77, "ring status: source %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
        MPI_Get_count(&st, MPI_DOUBLE, &count);
        CHECK(count == 1000, "ring count %d", count);
        int bad = -1;
        for (int i = 0; i < 1000; i++)
            if (in[i] != left + i * 0.5) {
                bad = i;
                break;
            }
        CHECK(bad < 0, "ring element %d wrong", bad);
    }
    return MTest_Finalize(0);
}
