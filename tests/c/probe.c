/* probe: MPI_Probe and MPI_Iprobe.
 *
 * MPI_Iprobe gives flag false while no matching message was sent (the sender is held back
 * by a handshake) and does not touch the status then; once the message is sent, MPI_Iprobe
 * eventually gives true with the source, tag and count of the message (sizes 0 B .. 4 MiB);
 * probing does not receive: MPI_Probe sees the same message again, with wildcards too, and
 * a receive sized from the probed count then gets it.  Among two pending messages,
 * MPI_Probe(ANY_TAG) sees the first sent; after the second is received by tag, the first is
 * still there.  On MPI_COMM_SELF: MPI_Iprobe with nothing pending is false, true after an
 * MPI_Isend to self; MPI_STATUS_IGNORE is accepted. */
#include "mtest.h"

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    int partner = MTest_Partner();
    MPI_Status st;
    int rc, flag, count, dummy = 0;
    static const int sizes[] = {0, 4, 1000, 100000, 4 << 20};

    if (partner >= 0) {
        int a = mtest_rank < partner;
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
            int n = sizes[i], tag = 40 + (int)i;
            if (a) {
                unsigned char *s = malloc(n + 1);
                MTest_Fill_bytes(s, n, 600 + i);
                MPI_Recv(&dummy, 0, MPI_INT, partner, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(s, n, MPI_BYTE, partner, tag, MPI_COMM_WORLD);
                free(s);
            } else {
                flag = -1;
                MTest_Poison_status(&st);
                rc = MPI_Iprobe(partner, tag, MPI_COMM_WORLD, &flag, &st);
                CHECK_RC(rc, "MPI_Iprobe");
                CHECK(flag == 0, "MPI_Iprobe found a message that was not sent yet");
                CHECK(st.MPI_SOURCE == -77 && st.MPI_TAG == -77, "MPI_Iprobe with flag false changed the status");
                rc = MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
                CHECK(rc == MPI_SUCCESS && flag == 0, "MPI_Iprobe(ANY, ANY) found a message before any was sent");
                MPI_Send(&dummy, 0, MPI_INT, partner, 1, MPI_COMM_WORLD); /* go */
                flag = 0;
                double t0 = MPI_Wtime();
                while (!flag && MPI_Wtime() - t0 < 30) {
                    rc = MPI_Iprobe(partner, tag, MPI_COMM_WORLD, &flag, &st);
                    CHECK_RC(rc, "MPI_Iprobe");
                }
                if (!CHECK(flag, "MPI_Iprobe never saw the %d B message", n))
                    continue;
                MPI_Get_count(&st, MPI_BYTE, &count);
                CHECK(st.MPI_SOURCE == partner && st.MPI_TAG == tag && count == n, "MPI_Iprobe: source %d tag %d count %d (want %d)",
                      st.MPI_SOURCE, st.MPI_TAG, count, n);
                /* Probe again, blocking, with wildcards. */
                MTest_Poison_status(&st);
                rc = MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
                CHECK_RC(rc, "MPI_Probe");
                MPI_Get_count(&st, MPI_BYTE, &count);
                CHECK(st.MPI_SOURCE == partner && st.MPI_TAG == tag && count == n, "MPI_Probe(ANY, ANY): source %d tag %d count %d",
                      st.MPI_SOURCE, st.MPI_TAG, count);
                rc = MPI_Probe(partner, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                CHECK_RC(rc, "MPI_Probe with MPI_STATUS_IGNORE");
                /* Receive exactly the probed size from the probed source and tag. */
                unsigned char *r = malloc(count + 1);
                rc = MPI_Recv(r, count, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st);
                CHECK_RC(rc, "MPI_Recv after MPI_Probe");
                CHECK(MTest_Verify_bytes(r, n, 600 + i) < 0, "probed message of %d B corrupted", n);
                free(r);
                /* Gone now. */
                MPI_Iprobe(partner, tag, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
                CHECK(flag == 0, "MPI_Iprobe still sees the message after it was received");
            }
        }

        /* Two pending messages: tag 70 (sent first, 3 ints), tag 71 (sent second, 5 ints). */
        if (a) {
            int x[3] = {1, 2, 3}, y[5] = {4, 5, 6, 7, 8};
            MPI_Send(x, 3, MPI_INT, partner, 70, MPI_COMM_WORLD);
            MPI_Send(y, 5, MPI_INT, partner, 71, MPI_COMM_WORLD);
            MPI_Send(&dummy, 0, MPI_INT, partner, 2, MPI_COMM_WORLD);
        } else {
            int x[3], y[5];
            /* Both sent (and, non-overtaking, arrived) once the tag-2 message is received. */
            MPI_Recv(&dummy, 0, MPI_INT, partner, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Probe(partner, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            MPI_Get_count(&st, MPI_INT, &count);
            CHECK(st.MPI_TAG == 70 && count == 3, "first pending: tag %d count %d", st.MPI_TAG, count);
            flag = 0;
            MPI_Iprobe(partner, 71, MPI_COMM_WORLD, &flag, &st);
            MPI_Get_count(&st, MPI_INT, &count);
            CHECK(flag && st.MPI_TAG == 71 && count == 5, "MPI_Iprobe(tag 71): flag %d tag %d count %d", flag, st.MPI_TAG, count);
            MPI_Recv(y, 5, MPI_INT, partner, 71, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            CHECK(st.MPI_TAG == 70 && st.MPI_SOURCE == partner, "after receiving tag 71, probe sees tag %d", st.MPI_TAG);
            MPI_Recv(x, 3, MPI_INT, partner, 70, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(x[0] == 1 && x[2] == 3 && y[0] == 4 && y[4] == 8, "pending messages corrupted");
        }
    }

    /* SELF. */
    flag = -1;
    rc = MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF, &flag, &st);
    CHECK(rc == MPI_SUCCESS && flag == 0, "MPI_Iprobe on an idle MPI_COMM_SELF: rc %d flag %d", rc, flag);
    double v = 3.5, w = 0;
    MPI_Request req;
    MPI_Isend(&v, 1, MPI_DOUBLE, 0, 9, MPI_COMM_SELF, &req);
    flag = 0;
    for (int k = 0; k < 1000000 && !flag; k++)
        MPI_Iprobe(0, 9, MPI_COMM_SELF, &flag, &st);
    MPI_Get_count(&st, MPI_DOUBLE, &count);
    CHECK(flag && st.MPI_SOURCE == 0 && st.MPI_TAG == 9 && count == 1, "MPI_Iprobe on SELF: flag %d source %d tag %d count %d",
          flag, st.MPI_SOURCE, st.MPI_TAG, count);
    MPI_Probe(0, 9, MPI_COMM_SELF, MPI_STATUS_IGNORE);
    MPI_Recv(&w, 1, MPI_DOUBLE, 0, 9, MPI_COMM_SELF, MPI_STATUS_IGNORE);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    CHECK(w == 3.5, "self message %g", w);
    return MTest_Finalize(0);
}
