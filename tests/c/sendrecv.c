/* sendrecv: MPI_Sendrecv and MPI_Sendrecv_replace.
 *
 * A ring shift over all ranks (send right, receive from left) with sizes 0 B .. 4 MiB (both
 * calls; the status gives the left neighbour and the tag, the count is the received size);
 * send and receive counts, datatypes and tags that differ; a pairwise exchange where each
 * side sends and receives at once (would deadlock with blocking Send/Recv of large
 * messages); MPI_ANY_SOURCE or MPI_ANY_TAG on the receive half; exchanges with self on WORLD
 * and SELF. */
#include "mtest.h"

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    int size = mtest_size, rank = mtest_rank;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    static const int sizes[] = {0, 1, 17, 4096, 65536, 1 << 20, 4 << 20};
    MPI_Status st;
    int rc, count;

    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        int n = sizes[i];
        unsigned char *s = malloc(n + 1), *r = malloc(n + 8);
        MTest_Fill_bytes(s, n, rank * 1000 + i);
        memset(r, 0x3c, n + 8);
        MTest_Poison_status(&st);
        rc = MPI_Sendrecv(s, n, MPI_BYTE, right, 5, r, n + 8, MPI_BYTE, left, 5, MPI_COMM_WORLD, &st);
        CHECK_RC(rc, "MPI_Sendrecv");
        MPI_Get_count(&st, MPI_BYTE, &count);
        CHECK(count == n && st.MPI_SOURCE == left && st.MPI_TAG == 5, "MPI_Sendrecv %d B: count %d source %d tag %d", n,
              count, st.MPI_SOURCE, st.MPI_TAG);
        CHECK(MTest_Verify_bytes(r, n, left * 1000 + i) < 0, "MPI_Sendrecv of %d B corrupted", n);
        CHECK(MTest_Check_const(r + n, 8, 0x3c) < 0, "MPI_Sendrecv wrote past the message");
        CHECK(MTest_Verify_bytes(s, n, rank * 1000 + i) < 0, "MPI_Sendrecv changed the send buffer");

        /* Sendrecv_replace: the buffer is sent, then overwritten by the message received. */
        MTest_Fill_bytes(s, n, 50000 + rank * 1000 + i);
        MTest_Poison_status(&st);
        rc = MPI_Sendrecv_replace(s, n, MPI_BYTE, right, 6, left, 6, MPI_COMM_WORLD, &st);
        CHECK_RC(rc, "MPI_Sendrecv_replace");
        MPI_Get_count(&st, MPI_BYTE, &count);
        CHECK(count == n && st.MPI_SOURCE == left && st.MPI_TAG == 6, "MPI_Sendrecv_replace %d B: count %d source %d tag %d",
              n, count, st.MPI_SOURCE, st.MPI_TAG);
        CHECK(MTest_Verify_bytes(s, n, 50000 + left * 1000 + i) < 0, "MPI_Sendrecv_replace of %d B corrupted", n);
        free(s);
        free(r);
    }

    /* Different types, counts and tags on the two halves: send 10 doubles with tag 7+rank,
     * receive as bytes from the left with MPI_ANY_TAG.  (MPI_ANY_SOURCE would race with the
     * pairwise exchange below, which a faster partner may already have started.) */
    {
        double d[10];
        unsigned char b[200];
        for (int k = 0; k < 10; k++)
            d[k] = rank + k / 4.0;
        rc = MPI_Sendrecv(d, 10, MPI_DOUBLE, right, 7 + rank, b, 200, MPI_BYTE, left, MPI_ANY_TAG,
                          MPI_COMM_WORLD, &st);
        CHECK_RC(rc, "MPI_Sendrecv (mixed types, wildcards)");
        MPI_Get_count(&st, MPI_BYTE, &count);
        CHECK(count == 80 && st.MPI_SOURCE == left && st.MPI_TAG == 7 + left, "mixed: count %d source %d tag %d", count,
              st.MPI_SOURCE, st.MPI_TAG);
        double got[10];
        memcpy(got, b, sizeof got);
        for (int k = 0; k < 10; k++)
            CHECK(got[k] == left + k / 4.0, "mixed: element %d is %g", k, got[k]);
        /* Sendrecv_replace with MPI_INT, receive from MPI_ANY_SOURCE with tag 8 (only the
         * left neighbour sends tag 8 to this rank). */
        int v[4] = {rank, rank, rank, rank};
        rc = MPI_Sendrecv_replace(v, 4, MPI_INT, right, 8, MPI_ANY_SOURCE, 8, MPI_COMM_WORLD, &st);
        CHECK(rc == MPI_SUCCESS && v[0] == left && v[3] == left && st.MPI_SOURCE == left && st.MPI_TAG == 8,
              "MPI_Sendrecv_replace (wildcards): rc %d v %d source %d tag %d", rc, v[0], st.MPI_SOURCE, st.MPI_TAG);
    }

    /* Pairwise exchange of 2 MiB each way. */
    int partner = MTest_Partner();
    if (partner >= 0) {
        int n = 2 << 20;
        unsigned char *s = malloc(n), *r = malloc(n);
        MTest_Fill_bytes(s, n, 77 + rank);
        rc = MPI_Sendrecv(s, n, MPI_BYTE, partner, 9, r, n, MPI_BYTE, partner, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK_RC(rc, "MPI_Sendrecv (pairwise, STATUS_IGNORE)");
        CHECK(MTest_Verify_bytes(r, n, 77 + partner) < 0, "pairwise exchange corrupted");
        rc = MPI_Sendrecv_replace(s, n, MPI_BYTE, partner, 10, partner, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK_RC(rc, "MPI_Sendrecv_replace (pairwise)");
        CHECK(MTest_Verify_bytes(s, n, 77 + partner) < 0, "pairwise replace corrupted");
        free(s);
        free(r);
    }

    /* With self. */
    for (int c = 0; c < 2; c++) {
        MPI_Comm comm = c ? MPI_COMM_SELF : MPI_COMM_WORLD;
        int me = c ? 0 : rank;
        int n = 300000;
        unsigned char *s = malloc(n), *r = malloc(n);
        MTest_Fill_bytes(s, n, 9 + c);
        rc = MPI_Sendrecv(s, n, MPI_BYTE, me, 11, r, n, MPI_BYTE, me, 11, comm, &st);
        CHECK(rc == MPI_SUCCESS && st.MPI_SOURCE == me, "MPI_Sendrecv with self: rc %d source %d", rc, st.MPI_SOURCE);
        CHECK(MTest_Verify_bytes(r, n, 9 + c) < 0, "MPI_Sendrecv with self corrupted");
        rc = MPI_Sendrecv_replace(s, n, MPI_BYTE, me, 12, me, 12, comm, &st);
        CHECK(rc == MPI_SUCCESS && st.MPI_SOURCE == me, "MPI_Sendrecv_replace with self: rc %d", rc);
        CHECK(MTest_Verify_bytes(s, n, 9 + c) < 0, "MPI_Sendrecv_replace with self corrupted");
        free(s);
        free(r);
    }
    return MTest_Finalize(0);
}
