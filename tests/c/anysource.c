/* anysource: MPI_ANY_SOURCE and MPI_ANY_TAG.
 *
 * Every rank sends rank 0 three messages with tags 100+rank, 200+rank, 300+rank; rank 0
 * receives them with (ANY_SOURCE, ANY_TAG), (ANY_SOURCE, specific tag), (specific source,
 * ANY_TAG), blocking and nonblocking, and the statuses tell the real source and tag.  Per
 * source the three arrive in send order under (s, ANY_TAG).  Rank 0 includes itself
 * (nonblocking self-sends).  Then each rank echoes back to a wildcard receive. */
#include "mtest.h"

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    int size = mtest_size, rank = mtest_rank;
    MPI_Status st;
    int rc;

    MPI_Request sreq[3];
    int out[3];
    for (int k = 0; k < 3; k++) {
        out[k] = rank * 10 + k;
        rc = MPI_Isend(&out[k], 1, MPI_INT, 0, 100 * (k + 1) + rank, MPI_COMM_WORLD, &sreq[k]);
        CHECK_RC(rc, "MPI_Isend");
    }
    if (rank == 0) {
        /* Phase 1: the tag-100 messages with (ANY_SOURCE, ANY_TAG) can match any message:
         * receive 3*size messages with three kinds of wildcards, in an order that is always
         * satisfiable: first (s, ANY_TAG) for every s (the first message of s: tag 100+s),
         * then (ANY_SOURCE, 200+s) for every s, then (ANY_SOURCE, ANY_TAG) for the rest. */
        for (int s = 0; s < size; s++) {
            int v = -1;
            rc = MPI_Recv(&v, 1, MPI_INT, s, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            CHECK_RC(rc, "MPI_Recv(s, ANY_TAG)");
            CHECK(st.MPI_SOURCE == s, "(s, ANY_TAG): source %d, want %d", st.MPI_SOURCE, s);
            CHECK(st.MPI_TAG == 100 + s, "(%d, ANY_TAG): tag %d, want %d (the first sent)", s, st.MPI_TAG, 100 + s);
            CHECK(v == s * 10, "(%d, ANY_TAG): value %d", s, v);
        }
        MPI_Request r[64];
        int vals[64];
        for (int s = 0; s < size; s++) {
            rc = MPI_Irecv(&vals[s], 1, MPI_INT, MPI_ANY_SOURCE, 200 + s, MPI_COMM_WORLD, &r[s]);
            CHECK_RC(rc, "MPI_Irecv(ANY_SOURCE, tag)");
        }
        MPI_Status sts[64];
        MPI_Waitall(size, r, sts);
        for (int s = 0; s < size; s++) {
            CHECK(sts[s].MPI_SOURCE == s && sts[s].MPI_TAG == 200 + s && vals[s] == s * 10 + 1,
                  "(ANY_SOURCE, %d): source %d tag %d value %d", 200 + s, sts[s].MPI_SOURCE, sts[s].MPI_TAG, vals[s]);
        }
        char *seen = calloc(size, 1);
        for (int i = 0; i < size; i++) {
            int v = -1;
            rc = MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            CHECK_RC(rc, "MPI_Recv(ANY_SOURCE, ANY_TAG)");
            int s = st.MPI_SOURCE;
            if (!CHECK(s >= 0 && s < size, "(ANY, ANY): source %d", s))
                continue;
            CHECK(!seen[s], "(ANY, ANY): two third messages from %d", s);
            seen[s] = 1;
            CHECK(st.MPI_TAG == 300 + s && v == s * 10 + 2, "(ANY, ANY) from %d: tag %d value %d", s, st.MPI_TAG, v);
            int count;
            MPI_Get_count(&st, MPI_INT, &count);
            CHECK(count == 1, "count %d", count);
        }
        free(seen);
    }
    MPI_Waitall(3, sreq, MPI_STATUSES_IGNORE);

    /* Phase 2: rank 0 sends each other rank two messages (tags 7 then 8); they receive
     * with ANY_SOURCE/ANY_TAG and must see tag 7 first. */
    if (rank == 0) {
        for (int s = 1; s < size; s++) {
            int a = 7, b = 8;
            MPI_Send(&a, 1, MPI_INT, s, 7, MPI_COMM_WORLD);
            MPI_Send(&b, 1, MPI_INT, s, 8, MPI_COMM_WORLD);
        }
    } else {
        for (int k = 0; k < 2; k++) {
            int v = -1;
            MPI_Request r;
            if (k == 0)
                rc = MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            else {
                MPI_Irecv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r);
                rc = MPI_Wait(&r, &st);
            }
            CHECK_RC(rc, "wildcard receive");
            CHECK(st.MPI_SOURCE == 0 && st.MPI_TAG == 7 + k && v == 7 + k, "message %d: source %d tag %d value %d", k,
                  st.MPI_SOURCE, st.MPI_TAG, v);
        }
    }
    return MTest_Finalize(0);
}
