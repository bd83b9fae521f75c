/* wait: MPI_Wait, MPI_Waitall, MPI_Waitany, MPI_Waitsome.
 *
 * Corner cases: MPI_Wait on MPI_REQUEST_NULL gives an empty status; count 0 arrays;
 * arrays of only MPI_REQUEST_NULL (MPI_Waitany: index MPI_UNDEFINED and an empty status;
 * MPI_Waitsome: outcount MPI_UNDEFINED; MPI_Waitall: success, empty statuses); arrays mixing
 * MPI_REQUEST_NULL and active requests; MPI_STATUSES_IGNORE.
 * Semantics: on MPI_COMM_SELF, with receives of five tags posted and only one tag sent,
 * MPI_Waitany returns that index and MPI_Waitsome exactly that one; completed requests are
 * set to MPI_REQUEST_NULL; loops of MPI_Waitany / MPI_Waitsome over receives from the
 * partner and sends to it see each index exactly once, then MPI_UNDEFINED. */
#include "mtest.h"

enum { N = 8 };

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    int rc, idx, outcount, count;
    MPI_Status st, sts[2 * N];
    MPI_Request reqs[2 * N];
    int indices[2 * N];

    /* MPI_REQUEST_NULL and empty arrays. */
    MPI_Request rn = MPI_REQUEST_NULL;
    MTest_Poison_status(&st);
    rc = MPI_Wait(&rn, &st);
    CHECK(rc == MPI_SUCCESS && MTest_Is_empty_status(&st), "MPI_Wait(MPI_REQUEST_NULL): rc %d, source %d tag %d", rc, st.MPI_SOURCE, st.MPI_TAG);
    rc = MPI_Waitall(0, reqs, sts);
    CHECK_RC(rc, "MPI_Waitall(0)");
    idx = -5;
    rc = MPI_Waitany(0, reqs, &idx, &st);
    CHECK(rc == MPI_SUCCESS && idx == MPI_UNDEFINED, "MPI_Waitany(0): rc %d index %d", rc, idx);
    outcount = -5;
    rc = MPI_Waitsome(0, reqs, &outcount, indices, sts);
    CHECK(rc == MPI_SUCCESS && outcount == MPI_UNDEFINED, "MPI_Waitsome(0): rc %d outcount %d", rc, outcount);
    for (int i = 0; i < N; i++)
        reqs[i] = MPI_REQUEST_NULL;
    for (int i = 0; i < N; i++)
        MTest_Poison_status(&sts[i]);
    rc = MPI_Waitall(N, reqs, sts);
    CHECK_RC(rc, "MPI_Waitall(all null)");
    for (int i = 0; i < N; i++)
        CHECK(MTest_Is_empty_status(&sts[i]), "MPI_Waitall(all null): status %d not empty", i);
    idx = -5;
    MTest_Poison_status(&st);
    rc = MPI_Waitany(N, reqs, &idx, &st);
    CHECK(rc == MPI_SUCCESS && idx == MPI_UNDEFINED, "MPI_Waitany(all null): rc %d index %d", rc, idx);
    CHECK(MTest_Is_empty_status(&st), "MPI_Waitany(all null): status not empty");
    outcount = -5;
    rc = MPI_Waitsome(N, reqs, &outcount, indices, MPI_STATUSES_IGNORE);
    CHECK(rc == MPI_SUCCESS && outcount == MPI_UNDEFINED, "MPI_Waitsome(all null): rc %d outcount %d", rc, outcount);

    /* SELF: five receives, one message. */
    {
        int vals[5], x = 123;
        for (int i = 0; i < 5; i++) {
            vals[i] = -1;
            MPI_Irecv(&vals[i], 1, MPI_INT, 0, 10 + i, MPI_COMM_SELF, &reqs[i]);
        }
        MPI_Request s;
        MPI_Isend(&x, 1, MPI_INT, 0, 13, MPI_COMM_SELF, &s);
        MTest_Poison_status(&st);
        rc = MPI_Waitany(5, reqs, &idx, &st);
        CHECK(rc == MPI_SUCCESS && idx == 3, "MPI_Waitany: index %d, want 3", idx);
        CHECK(st.MPI_TAG == 13 && st.MPI_SOURCE == 0 && vals[3] == 123, "MPI_Waitany: tag %d value %d", st.MPI_TAG, vals[3]);
        CHECK(reqs[3] == MPI_REQUEST_NULL, "MPI_Waitany did not free the completed request");
        for (int i = 0; i < 5; i++)
            if (i != 3)
                CHECK(reqs[i] != MPI_REQUEST_NULL, "MPI_Waitany freed an incomplete request %d", i);
        MPI_Wait(&s, MPI_STATUS_IGNORE);
        /* Now tag 11; MPI_Waitsome over the array (index 3 is null now). */
        MPI_Isend(&x, 1, MPI_INT, 0, 11, MPI_COMM_SELF, &s);
        MPI_Wait(&s, MPI_STATUS_IGNORE);
        outcount = -5;
        rc = MPI_Waitsome(5, reqs, &outcount, indices, sts);
        CHECK(rc == MPI_SUCCESS && outcount == 1 && indices[0] == 1, "MPI_Waitsome: outcount %d first index %d", outcount, indices[0]);
        CHECK(sts[0].MPI_TAG == 11 && reqs[1] == MPI_REQUEST_NULL, "MPI_Waitsome: status tag %d", sts[0].MPI_TAG);
        /* Finish the rest by sending their tags, and MPI_Waitall with nulls mixed in. */
        for (int t = 0; t < 5; t++)
            if (t != 1 && t != 3)
                MPI_Send(&t, 1, MPI_INT, 0, 10 + t, MPI_COMM_SELF); /* receives are posted */
        for (int i = 0; i < 5; i++)
            MTest_Poison_status(&sts[i]);
        rc = MPI_Waitall(5, reqs, sts);
        CHECK_RC(rc, "MPI_Waitall (mixed)");
        for (int i = 0; i < 5; i++) {
            CHECK(reqs[i] == MPI_REQUEST_NULL, "MPI_Waitall left request %d", i);
            if (i == 1 || i == 3)
                CHECK(MTest_Is_empty_status(&sts[i]), "MPI_Waitall: status %d of a null request not empty", i);
            else
                CHECK(sts[i].MPI_TAG == 10 + i && vals[i] == i, "MPI_Waitall: status %d tag %d value %d", i, sts[i].MPI_TAG, vals[i]);
        }
    }

    /* With the partner: N receives and N sends in one array, completed by MPI_Waitany,
     * then by MPI_Waitsome. */
    int partner = MTest_Partner();
    if (partner >= 0) {
        for (int way = 0; way < 2; way++) {
            int in[N], out[N];
            char seen[2 * N];
            memset(seen, 0, sizeof seen);
            for (int i = 0; i < N; i++) {
                in[i] = -1;
                out[i] = mtest_rank * 100 + i;
                MPI_Irecv(&in[i], 1, MPI_INT, partner, 40 + i, MPI_COMM_WORLD, &reqs[i]);
            }
            for (int i = 0; i < N; i++)
                MPI_Isend(&out[i], 1, MPI_INT, partner, 40 + (N - 1 - i) , MPI_COMM_WORLD, &reqs[N + i]);
            /* out[i] goes with tag 40+N-1-i, so in[j] receives partner's out[N-1-j]. */
            int done = 0;
            while (done < 2 * N) {
                if (way == 0) {
                    rc = MPI_Waitany(2 * N, reqs, &idx, &st);
                    if (!CHECK(rc == MPI_SUCCESS && idx >= 0 && idx < 2 * N, "MPI_Waitany: rc %d index %d", rc, idx))
                        break;
                    CHECK(!seen[idx], "MPI_Waitany returned index %d twice", idx);
                    seen[idx] = 1;
                    done++;
                    if (idx < N) {
                        MPI_Get_count(&st, MPI_INT, &count);
                        CHECK(st.MPI_TAG == 40 + idx && st.MPI_SOURCE == partner && count == 1, "MPI_Waitany status: tag %d", st.MPI_TAG);
                    }
                } else {
                    rc = MPI_Waitsome(2 * N, reqs, &outcount, indices, sts);
                    if (!CHECK(rc == MPI_SUCCESS && outcount >= 1 && outcount <= 2 * N, "MPI_Waitsome: rc %d outcount %d", rc, outcount))
                        break;
                    for (int k = 0; k < outcount; k++) {
                        int j = indices[k];
                        if (!CHECK(j >= 0 && j < 2 * N && !seen[j], "MPI_Waitsome: index %d bad or repeated", j))
                            continue;
                        seen[j] = 1;
                        done++;
                        if (j < N)
                            CHECK(sts[k].MPI_TAG == 40 + j, "MPI_Waitsome status %d: tag %d, want %d", k, sts[k].MPI_TAG, 40 + j);
                    }
                }
            }
            if (way == 0) {
                rc = MPI_Waitany(2 * N, reqs, &idx, &st);
                CHECK(rc == MPI_SUCCESS && idx == MPI_UNDEFINED, "MPI_Waitany after all done: index %d", idx);
            } else {
                rc = MPI_Waitsome(2 * N, reqs, &outcount, indices, sts);
                CHECK(rc == MPI_SUCCESS && outcount == MPI_UNDEFINED, "MPI_Waitsome after all done: outcount %d", outcount);
            }
            for (int j = 0; j < N; j++)
                CHECK(in[j] == partner * 100 + (N - 1 - j), "receive %d got %d", j, in[j]);
        }
    }
    return MTest_Finalize(0);
}
