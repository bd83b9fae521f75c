/* self_send: messages from a rank to itself, on MPI_COMM_WORLD (to its own rank) and on
 * MPI_COMM_SELF (to rank 0), from 0 B to 8 MiB: receive posted first then MPI_Send; MPI_Isend
 * first then MPI_Recv (the send is pending until the receive: no blocking send to self
 * without a posted receive, which would be unsafe); MPI_Sendrecv to self; many outstanding
 * self-messages with one tag received in order; MPI_ANY_SOURCE on SELF gives source 0. */
#include "mtest.h"

static void one(MPI_Comm comm, int me, size_t n, int how, uint64_t seed)
{
    unsigned char *s = malloc(n + 1), *r = malloc(n + 16);
    MTest_Fill_bytes(s, n, seed);
    memset(r, 0xcd, n + 16);
    MPI_Status st;
    MPI_Request req;
    int rc, count;
    if (how == 0) {
        MPI_Irecv(r, (int)n, MPI_BYTE, me, 5, comm, &req);
        rc = MPI_Send(s, (int)n, MPI_BYTE, me, 5, comm);
        CHECK_RC(rc, "MPI_Send to self");
        MPI_Wait(&req, &st);
    } else if (how == 1) {
        MPI_Isend(s, (int)n, MPI_BYTE, me, 5, comm, &req);
        rc = MPI_Recv(r, (int)n + 16, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &st);
        CHECK_RC(rc, "MPI_Recv from self");
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else {
        rc = MPI_Sendrecv(s, (int)n, MPI_BYTE, me, 5, r, (int)n, MPI_BYTE, me, 5, comm, &st);
        CHECK_RC(rc, "MPI_Sendrecv with self");
    }
    MPI_Get_count(&st, MPI_BYTE, &count);
    CHECK(count == (int)n, "self message of %zu B (way %d): count %d", n, how, count);
    CHECK(st.MPI_SOURCE == me && st.MPI_TAG == 5, "self message: source %d (want %d) tag %d", st.MPI_SOURCE, me, st.MPI_TAG);
    CHECK(MTest_Verify_bytes(r, n, seed) < 0, "self message of %zu B (way %d) corrupted", n, how);
    CHECK(MTest_Check_const(r + n, 16, 0xcd) < 0, "self message of %zu B wrote past its end", n);
    free(s);
    free(r);
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    static const size_t sizes[] = {0, 1, 8, 100, 1024, 4096, 16384, 65536, 65537, 262144, 1 << 20, 8 << 20};
    for (int c = 0; c < 2; c++) {
        MPI_Comm comm = c ? MPI_COMM_SELF : MPI_COMM_WORLD;
        int me = c ? 0 : mtest_rank;
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
            for (int how = 0; how < 3; how++)
                one(comm, me, sizes[i], how, 17 + i * 3 + how + c * 100);
    }

    /* Many pending self-messages with one tag (mixed sizes) arrive in order. */
    enum { M = 40 };
    unsigned char *bufs[M];
    size_t lens[M];
    MPI_Request reqs[M];
    for (int i = 0; i < M; i++) {
        lens[i] = (i % 4 == 3) ? (size_t)300000 + i : (size_t)(i * 13);
        bufs[i] = malloc(lens[i] + 1);
        MTest_Fill_bytes(bufs[i], lens[i], 5000 + i);
        MPI_Isend(bufs[i], (int)lens[i], MPI_BYTE, 0, 9, MPI_COMM_SELF, &reqs[i]);
    }
    unsigned char *r = malloc(400000);
    for (int i = 0; i < M; i++) {
        MPI_Status st;
        int count;
        MPI_Recv(r, 400000, MPI_BYTE, 0, 9, MPI_COMM_SELF, &st);
        MPI_Get_count(&st, MPI_BYTE, &count);
        if (!CHECK(count == (int)lens[i], "self message %d: count %d, want %zu (out of order?)", i, count, lens[i]))
            continue;
        CHECK(MTest_Verify_bytes(r, lens[i], 5000 + i) < 0, "self message %d corrupted", i);
    }
    MPI_Waitall(M, reqs, MPI_STATUSES_IGNORE);
    for (int i = 0; i < M; i++)
        free(bufs[i]);
    free(r);
    return MTest_Finalize(0);
}
