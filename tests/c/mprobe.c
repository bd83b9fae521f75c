/* mprobe: matched probes, MPI_Mprobe / MPI_Improbe / MPI_Mrecv / MPI_Imrecv.
 *
 * A matched message is taken out of matching: with two messages of one tag pending,
 * MPI_Mprobe takes the first; MPI_Probe and a plain receive then see the second; MPI_Mrecv
 * of the handle delivers the first and sets the handle to MPI_MESSAGE_NULL.  MPI_Improbe is
 * false while nothing was sent (flag false leaves the message handle alone), true after,
 * with the status of the message; MPI_Imrecv + MPI_Wait / MPI_Test; several matched handles
 * held at once and received in reverse order; sizes 0 B .. 4 MiB; wildcards; on
 * MPI_COMM_SELF too.  (MPI_PROC_NULL and MPI_MESSAGE_NO_PROC are in procnull.c.) */
#include "mtest.h"

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    int partner = MTest_Partner();
    MPI_Status st;
    MPI_Message msg;
    int rc, flag, count, dummy = 0;

    if (partner >= 0) {
        int a = mtest_rank < partner;
        /* Two messages of one tag. */
        if (a) {
            int m1[10], m2[20];
            for (int k = 0; k < 20; k++) {
                if (k < 10)
                    m1[k] = 100 + k;
                m2[k] = 200 + k;
            }
            MPI_Send(m1, 10, MPI_INT, partner, 5, MPI_COMM_WORLD);
            MPI_Send(m2, 20, MPI_INT, partner, 5, MPI_COMM_WORLD);
        } else {
            int r1[10], r2[20];
            msg = MPI_MESSAGE_NULL;
            rc = MPI_Mprobe(partner, 5, MPI_COMM_WORLD, &msg, &st);
            CHECK_RC(rc, "MPI_Mprobe");
            CHECK(msg != MPI_MESSAGE_NULL && msg != MPI_MESSAGE_NO_PROC, "MPI_Mprobe gave no message handle");
            MPI_Get_count(&st, MPI_INT, &count);
            CHECK(count == 10 && st.MPI_SOURCE == partner && st.MPI_TAG == 5, "MPI_Mprobe: count %d source %d tag %d", count,
                  st.MPI_SOURCE, st.MPI_TAG);
            MPI_Probe(partner, 5, MPI_COMM_WORLD, &st);
            MPI_Get_count(&st, MPI_INT, &count);
            CHECK(count == 20, "after MPI_Mprobe, MPI_Probe sees a message of %d ints (want the second, 20)", count);
            rc = MPI_Recv(r2, 20, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &st);
            CHECK_RC(rc, "MPI_Recv of the second message");
            MPI_Get_count(&st, MPI_INT, &count);
            CHECK(count == 20 && r2[0] == 200 && r2[19] == 219, "the plain receive got count %d first %d", count, r2[0]);
            MTest_Poison_status(&st);
            rc = MPI_Mrecv(r1, 10, MPI_INT, &msg, &st);
            CHECK_RC(rc, "MPI_Mrecv");
            CHECK(msg == MPI_MESSAGE_NULL, "MPI_Mrecv did not set the handle to MPI_MESSAGE_NULL");
            MPI_Get_count(&st, MPI_INT, &count);
            CHECK(count == 10 && st.MPI_SOURCE == partner && st.MPI_TAG == 5 && r1[0] == 100 && r1[9] == 109,
                  "MPI_Mrecv: count %d source %d tag %d first %d", count, st.MPI_SOURCE, st.MPI_TAG, r1[0]);
        }

        /* Improbe before and after the send; Imrecv; sizes. */
        static const int sizes[] = {0, 3, 5000, 200000, 4 << 20};
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            int n = sizes[i], tag = 30 + (int)i;
            if (a) {
                unsigned char *s = malloc(n + 1);
                MTest_Fill_bytes(s, n, 90 + i);
                MPI_Recv(&dummy, 0, MPI_INT, partner, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(s, n, MPI_BYTE, partner, tag, MPI_COMM_WORLD);
                free(s);
            } else {
                msg = MPI_MESSAGE_NULL;
                flag = -1;
                rc = MPI_Improbe(partner, tag, MPI_COMM_WORLD, &flag, &msg, &st);
                CHECK(rc == MPI_SUCCESS && flag == 0, "MPI_Improbe before the send: rc %d flag %d", rc, flag);
                CHECK(msg == MPI_MESSAGE_NULL, "MPI_Improbe with flag false changed the handle");
                MPI_Send(&dummy, 0, MPI_INT, partner, 1, MPI_COMM_WORLD);
                flag = 0;
                double t0 = MPI_Wtime();
                while (!flag && MPI_Wtime() - t0 < 30)
                    MPI_Improbe(i % 2 ? MPI_ANY_SOURCE : partner, i % 2 ? MPI_ANY_TAG : tag, MPI_COMM_WORLD, &flag, &msg, &st);
                if (!CHECK(flag, "MPI_Improbe never saw the %d B message", n))
                    continue;
                MPI_Get_count(&st, MPI_BYTE, &count);
                CHECK(count == n && st.MPI_SOURCE == partner && st.MPI_TAG == tag, "MPI_Improbe: count %d source %d tag %d",
                      count, st.MPI_SOURCE, st.MPI_TAG);
                unsigned char *r = malloc(n + 1);
                MPI_Request req;
                rc = MPI_Imrecv(r, n, MPI_BYTE, &msg, &req);
                CHECK_RC(rc, "MPI_Imrecv");
                CHECK(msg == MPI_MESSAGE_NULL, "MPI_Imrecv did not set the handle to MPI_MESSAGE_NULL");
                MTest_Poison_status(&st);
                if (i % 2) {
                    rc = MPI_Wait(&req, &st);
                } else {
                    flag = 0;
                    while (!flag)
                        rc = MPI_Test(&req, &flag, &st);
                }
                CHECK_RC(rc, "completion of MPI_Imrecv");
                MPI_Get_count(&st, MPI_BYTE, &count);
                CHECK(count == n && st.MPI_SOURCE == partner && st.MPI_TAG == tag, "MPI_Imrecv: count %d source %d tag %d",
                      count, st.MPI_SOURCE, st.MPI_TAG);
                CHECK(MTest_Verify_bytes(r, n, 90 + i) < 0, "matched message of %d B corrupted", n);
                free(r);
            }
        }

        /* Several matched handles at once, received in reverse order. */
        enum { H = 6 };
        if (a) {
            for (int k = 0; k < H; k++) {
                int v[2] = {k, -k};
                MPI_Send(v, 2, MPI_INT, partner, 80, MPI_COMM_WORLD);
            }
        } else {
            MPI_Message m[H];
            for (int k = 0; k < H; k++) {
                rc = MPI_Mprobe(MPI_ANY_SOURCE, 80, MPI_COMM_WORLD, &m[k], MPI_STATUS_IGNORE);
                CHECK_RC(rc, "MPI_Mprobe (several)");
            }
            for (int k = H - 1; k >= 0; k--) {
                int v[2] = {-1, -1};
                rc = MPI_Mrecv(v, 2, MPI_INT, &m[k], MPI_STATUS_IGNORE);
                CHECK(rc == MPI_SUCCESS && v[0] == k && v[1] == -k, "handle %d delivered %d,%d (matched out of order?)", k, v[0], v[1]);
            }
        }
    }

    /* SELF. */
    int x[3] = {7, 8, 9}, y[3] = {0, 0, 0};
    MPI_Request req;
    MPI_Isend(x, 3, MPI_INT, 0, 12, MPI_COMM_SELF, &req);
    rc = MPI_Mprobe(0, MPI_ANY_TAG, MPI_COMM_SELF, &msg, &st);
    CHECK(rc == MPI_SUCCESS && st.MPI_TAG == 12 && st.MPI_SOURCE == 0, "MPI_Mprobe on SELF: rc %d tag %d", rc, st.MPI_TAG);
    flag = 1;
    MPI_Message m2 = MPI_MESSAGE_NULL;
    MPI_Improbe(0, 12, MPI_COMM_SELF, &flag, &m2, MPI_STATUS_IGNORE);
    CHECK(flag == 0, "MPI_Improbe on SELF sees a message already matched");
    rc = MPI_Mrecv(y, 3, MPI_INT, &msg, MPI_STATUS_IGNORE);
    CHECK(rc == MPI_SUCCESS && y[0] == 7 && y[2] == 9, "MPI_Mrecv on SELF: rc %d data %d..%d", rc, y[0], y[2]);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    return MTest_Finalize(0);
}
