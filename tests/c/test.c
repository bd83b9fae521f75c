/* test: MPI_Test, MPI_Testall, MPI_Testany, MPI_Testsome.
 *
 * Corner cases: MPI_Test on MPI_REQUEST_NULL gives flag true and an empty status; count 0
 * arrays (MPI_Testall flag true, MPI_Testany flag true + index MPI_UNDEFINED, MPI_Testsome
 * outcount MPI_UNDEFINED); arrays of only MPI_REQUEST_NULL (same results); with active
 * requests none of which can complete (receives of tags never sent on MPI_COMM_SELF):
 * MPI_Test flag false, MPI_Testany flag false + index MPI_UNDEFINED, MPI_Testsome outcount 0,
 * MPI_Testall flag false, handles unchanged.  MPI_Testall with some complete and some not
 * modifies no request.  Polling loops of MPI_Testany / MPI_Testsome / MPI_Testall over
 * receives from the partner and sends to it complete everything, each index once. */
#include "mtest.h"

enum { N = 8 };

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    int rc, idx, outcount, flag;
    MPI_Status st, sts[2 * N];
    MPI_Request reqs[2 * N];
    int indices[2 * N];

    MPI_Request rn = MPI_REQUEST_NULL;
    flag = 0;
    MTest_Poison_status(&st);
    rc = MPI_Test(&rn, &flag, &st);
    CHECK(rc == MPI_SUCCESS && flag && MTest_Is_empty_status(&st), "MPI_Test(MPI_REQUEST_NULL): rc %d flag %d", rc, flag);

    for (int nulls = 0; nulls < 2; nulls++) {
        int n = nulls ? N : 0;
        for (int i = 0; i < N; i++)
            reqs[i] = MPI_REQUEST_NULL;
        flag = 0;
        rc = MPI_Testall(n, reqs, &flag, sts);
        CHECK(rc == MPI_SUCCESS && flag, "MPI_Testall(%d null): rc %d flag %d", n, rc, flag);
        flag = 0;
        idx = -5;
        MTest_Poison_status(&st);
        rc = MPI_Testany(n, reqs, &idx, &flag, &st);
        CHECK(rc == MPI_SUCCESS && flag && idx == MPI_UNDEFINED, "MPI_Testany(%d null): rc %d flag %d index %d", n, rc, flag, idx);
        if (nulls)
            CHECK(MTest_Is_empty_status(&st), "MPI_Testany(all null): status not empty");
        outcount = -5;
        rc = MPI_Testsome(n, reqs, &outcount, indices, sts);
        CHECK(rc == MPI_SUCCESS && outcount == MPI_UNDEFINED, "MPI_Testsome(%d null): rc %d outcount %d", n, rc, outcount);
        rc = MPI_Testall(n, reqs, &flag, MPI_STATUSES_IGNORE);
        CHECK(rc == MPI_SUCCESS && flag, "MPI_Testall(%d null, STATUSES_IGNORE)", n);
    }

    /* Active requests that cannot complete (yet): tags 10..13 on SELF, index 2 null. */
    int vals[4] = {-1, -1, -1, -1};
    for (int i = 0; i < 4; i++)
        if (i != 2)
            MPI_Irecv(&vals[i], 1, MPI_INT, 0, 10 + i, MPI_COMM_SELF, &reqs[i]);
    reqs[2] = MPI_REQUEST_NULL;
    MPI_Request saved[4];
    memcpy(saved, reqs, sizeof saved);
    flag = -1;
    rc = MPI_Test(&reqs[0], &flag, &st);
    CHECK(rc == MPI_SUCCESS && flag == 0 && reqs[0] == saved[0], "MPI_Test(incomplete): flag %d", flag);
    flag = -1;
    idx = -5;
    rc = MPI_Testany(4, reqs, &idx, &flag, &st);
    CHECK(rc == MPI_SUCCESS && flag == 0 && idx == MPI_UNDEFINED, "MPI_Testany(incomplete): flag %d index %d", flag, idx);
    outcount = -5;
    rc = MPI_Testsome(4, reqs, &outcount, indices, sts);
    CHECK(rc == MPI_SUCCESS && outcount == 0, "MPI_Testsome(incomplete): outcount %d", outcount);
    flag = -1;
    rc = MPI_Testall(4, reqs, &flag, sts);
    CHECK(rc == MPI_SUCCESS && flag == 0, "MPI_Testall(incomplete): flag %d", flag);
    CHECK(memcmp(saved, reqs, sizeof saved) == 0, "a failed test modified the handles");

    /* Complete tag 11 only: Testall stays false and modifies nothing, Testany finds index 1. */
    int x = 5;
    MPI_Send(&x, 1, MPI_INT, 0, 11, MPI_COMM_SELF); /* the receive is posted */
    flag = 0;
    double t0 = MPI_Wtime();
    while (!flag && MPI_Wtime() - t0 < 30)
        MPI_Request_get_status(reqs[1], &flag, MPI_STATUS_IGNORE);
    CHECK(flag, "the self receive of tag 11 never completed");
    flag = -1;
    rc = MPI_Testall(4, reqs, &flag, sts);
    CHECK(rc == MPI_SUCCESS && flag == 0, "MPI_Testall(one of three complete): flag %d", flag);
    CHECK(memcmp(saved, reqs, sizeof saved) == 0, "MPI_Testall returning false modified a request");
    flag = 0;
    rc = MPI_Testany(4, reqs, &idx, &flag, &st);
    CHECK(rc == MPI_SUCCESS && flag && idx == 1 && st.MPI_TAG == 11 && vals[1] == 5, "MPI_Testany: flag %d index %d tag %d", flag, idx, st.MPI_TAG);
    CHECK(reqs[1] == MPI_REQUEST_NULL, "MPI_Testany did not free the completed request");
    /* Tag 13: MPI_Testsome finds index 3. */
    MPI_Send(&x, 1, MPI_INT, 0, 13, MPI_COMM_SELF);
    outcount = 0;
    t0 = MPI_Wtime();
    while (outcount == 0 && MPI_Wtime() - t0 < 30)
        rc = MPI_Testsome(4, reqs, &outcount, indices, sts);
    CHECK(rc == MPI_SUCCESS && outcount == 1 && indices[0] == 3 && sts[0].MPI_TAG == 13, "MPI_Testsome: outcount %d index %d", outcount, indices[0]);
    /* Tag 10: MPI_Testall now true (index 1, 2, 3 null). */
    MPI_Send(&x, 1, MPI_INT, 0, 10, MPI_COMM_SELF);
    flag = 0;
    t0 = MPI_Wtime();
    while (!flag && MPI_Wtime() - t0 < 30)
        rc = MPI_Testall(4, reqs, &flag, sts);
    CHECK(rc == MPI_SUCCESS && flag && reqs[0] == MPI_REQUEST_NULL, "MPI_Testall: flag %d", flag);
    CHECK(sts[0].MPI_TAG == 10 && MTest_Is_empty_status(&sts[1]), "MPI_Testall statuses: tag %d / null entry not empty", sts[0].MPI_TAG);

    /* Polling with the partner. */
    int partner = MTest_Partner();
    if (partner >= 0) {
        for (int way = 0; way < 3; way++) {
            int in[N], out[N];
            char seen[2 * N];
            memset(seen, 0, sizeof seen);
            for (int i = 0; i < N; i++) {
                in[i] = -1;
                out[i] = mtest_rank * 1000 + way * 100 + i;
                MPI_Irecv(&in[i], 1, MPI_INT, partner, 60 + i, MPI_COMM_WORLD, &reqs[i]);
                MPI_Isend(&out[i], 1, MPI_INT, partner, 60 + i, MPI_COMM_WORLD, &reqs[N + i]);
            }
            int done = 0;
            t0 = MPI_Wtime();
            while (done < 2 * N && MPI_Wtime() - t0 < 30) {
                if (way == 0) {
                    flag = 0;
                    rc = MPI_Testany(2 * N, reqs, &idx, &flag, &st);
                    CHECK_RC(rc, "MPI_Testany");
                    if (flag) {
                        if (!CHECK(idx >= 0 && idx < 2 * N && !seen[idx], "MPI_Testany: index %d bad or repeated", idx))
                            break;
                        seen[idx] = 1;
                        done++;
                        if (idx < N)
                            CHECK(st.MPI_TAG == 60 + idx, "MPI_Testany status: tag %d, want %d", st.MPI_TAG, 60 + idx);
                    } else {
                        CHECK(idx == MPI_UNDEFINED, "MPI_Testany flag false but index %d", idx);
                    }
                } else if (way == 1) {
                    rc = MPI_Testsome(2 * N, reqs, &outcount, indices, sts);
                    if (!CHECK(rc == MPI_SUCCESS && outcount >= 0 && outcount <= 2 * N, "MPI_Testsome: outcount %d", outcount))
                        break;
                    for (int k = 0; k < outcount; k++) {
                        int j = indices[k];
                        if (!CHECK(j >= 0 && j < 2 * N && !seen[j], "MPI_Testsome: index %d bad or repeated", j))
                            continue;
                        seen[j] = 1;
                        done++;
                    }
                } else {
                    flag = 0;
                    rc = MPI_Testall(2 * N, reqs, &flag, MPI_STATUSES_IGNORE);
                    CHECK_RC(rc, "MPI_Testall");
                    if (flag)
                        done = 2 * N;
                }
            }
            CHECK(done == 2 * N, "way %d: only %d of %d requests completed in 30 s of polling", way, done, 2 * N);
            for (int j = 0; j < N; j++)
                CHECK(in[j] == partner * 1000 + way * 100 + j, "way %d: receive %d got %d", way, j, in[j]);
            for (int j = 0; j < 2 * N; j++)
                CHECK(reqs[j] == MPI_REQUEST_NULL, "way %d: request %d not freed", way, j);
        }
    }
    return MTest_Finalize(0);
}
