/* coll_alltoall: MPI_Alltoall, Alltoallv and Alltoallw (blocking and nonblocking) at block
 * sizes from empty to large, in place, with a strided datatype on one side and contiguous
 * ints on the other, v/w forms with zero counts and blocks in reverse rank order (w with a
 * different datatype per peer and byte displacements), and several nonblocking alltoalls
 * outstanding at once.  The testlist runs it under every HYMPI_ALLTOALL_ALGORITHM. */
#include "mtest.h"

static int rank, size;

/* Element i of the block rank `from` sends to rank `to`. */
static int val(int from, int to, int i)
{
    return from * 1000003 + to * 1009 + i * 3 + 1;
}

static MPI_Datatype strided(int n)
{
    MPI_Datatype v, t;
    MPI_Type_vector(n, 1, 2, MPI_INT, &v);
    MPI_Type_create_resized(v, 0, (MPI_Aint)(2 * n * sizeof(int)), &t);
    MPI_Type_free(&v);
    MPI_Type_commit(&t);
    return t;
}

static int test_alltoall(int n, int inplace, int derived, int nonblocking)
{
    derived = derived && n > 0; /* a zero-size derived block: MPIs disagree on skipping it */
    int errs = 0;
    long tot = (long)n * size;
    int *sb = malloc(sizeof(int) * (2 * tot + 1));
    int *rb = malloc(sizeof(int) * (2 * tot + 1));
    /* derived: the sender uses the strided type, the receiver plain ints (or, in place, both
     * sides the strided type). */
    MPI_Datatype st = derived ? strided(n) : MPI_INT;
    int sc = derived ? 1 : n;
    long sstride = derived ? 2 : 1;
    MPI_Datatype rt = (derived && inplace) ? st : MPI_INT;
    int rc = (derived && inplace) ? 1 : n;
    long rstride = (derived && inplace) ? 2 : 1;
    for (long i = 0; i < 2 * tot; i++)
        sb[i] = rb[i] = -1;
    for (int to = 0; to < size; to++)
        for (int i = 0; i < n; i++) {
            if (inplace)
                rb[((long)to * n + i) * rstride] = val(rank, to, i);
            else
                sb[((long)to * n + i) * sstride] = val(rank, to, i);
        }
    const void *send = inplace ? MPI_IN_PLACE : sb;
    if (nonblocking) {
        MPI_Request req;
        CHECK_RC(MPI_Ialltoall(send, sc, st, rb, rc, rt, MPI_COMM_WORLD, &req), "Ialltoall");
        CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE), "Wait");
    } else {
        CHECK_RC(MPI_Alltoall(send, sc, st, rb, rc, rt, MPI_COMM_WORLD), "Alltoall");
    }
    for (int from = 0; from < size && errs < 5; from++)
        for (int i = 0; i < n && errs < 5; i++) {
            long at = ((long)from * n + i) * rstride;
            if (!CHECK(rb[at] == val(from, rank, i),
                       "alltoall n=%d inplace=%d derived=%d: from %d [%d]=%d want %d", n, inplace,
                       derived, from, i, rb[at], val(from, rank, i)))
                errs++;
            if (rstride == 2 && !CHECK(rb[at + 1] == -1, "alltoall hole overwritten"))
                errs++;
        }
    if (derived)
        MPI_Type_free(&st);
    free(sb);
    free(rb);
    return errs;
}

/* Count of the block from -> to: zero for some pairs. */
static int vcount(int from, int to, int scale)
{
    return (from + 2 * to) % 3 * scale;
}

static int test_alltoallv(int scale, int inplace, int nonblocking, int w)
{
    int errs = 0;
    int *sc = malloc(sizeof(int) * size), *sd = malloc(sizeof(int) * size);
    int *rc = malloc(sizeof(int) * size), *rd = malloc(sizeof(int) * size);
    MPI_Datatype *stt = malloc(sizeof(MPI_Datatype) * size), *rtt = malloc(sizeof(MPI_Datatype) * size);
    int sat = 0, rat = 0;
    /* Blocks in reverse rank order, two ints of gap after each. */
    for (int r = size - 1; r >= 0; r--) {
        sc[r] = vcount(rank, r, scale);
        rc[r] = vcount(r, rank, scale);
        sd[r] = sat;
        rd[r] = rat;
        sat += sc[r] + 2;
        rat += rc[r] + 2;
    }
    if (inplace) { /* one buffer: the receive layout for both sides (counts must match) */
        for (int r = 0; r < size; r++)
            rc[r] = sc[r] = (rank + r) % 3 * scale; /* symmetric: r->rank == rank->r */
        rat = 0;
        for (int r = size - 1; r >= 0; r--) {
            rd[r] = rat;
            rat += rc[r] + 2;
        }
    }
    int *sb = malloc(sizeof(int) * (sat + 1)), *rb = malloc(sizeof(int) * (rat + 1));
    for (int i = 0; i < sat; i++)
        sb[i] = -1;
    for (int i = 0; i < rat; i++)
        rb[i] = -1;
    for (int r = 0; r < size; r++)
        for (int i = 0; i < (inplace ? rc[r] : sc[r]); i++) {
            if (inplace)
                rb[rd[r] + i] = val(rank, r, i);
            else
                sb[sd[r] + i] = val(rank, r, i);
        }
    const void *send = inplace ? MPI_IN_PLACE : sb;
    MPI_Request req;
    if (w) {
        /* Byte displacements; even peers get MPI_INT, odd ones a contiguous pair type
         * (counts halved when even, else plain ints). */
        MPI_Datatype pair;
        MPI_Type_contiguous(2, MPI_INT, &pair);
        MPI_Type_commit(&pair);
        int *swc = malloc(sizeof(int) * size), *rwc = malloc(sizeof(int) * size);
        int *swd = malloc(sizeof(int) * size), *rwd = malloc(sizeof(int) * size);
        for (int r = 0; r < size; r++) {
            int sp = !inplace && sc[r] % 2 == 0 && r % 2 == 1;
            int rp = rc[r] % 2 == 0 && r % 2 == 1 && !inplace;
            stt[r] = sp ? pair : MPI_INT;
            swc[r] = sp ? sc[r] / 2 : sc[r];
            rtt[r] = rp ? MPI_INT : MPI_INT;
            rwc[r] = rc[r];
            swd[r] = sd[r] * (int)sizeof(int);
            rwd[r] = rd[r] * (int)sizeof(int);
        }
        if (nonblocking) {
            CHECK_RC(MPI_Ialltoallw(send, swc, swd, stt, rb, rwc, rwd, rtt, MPI_COMM_WORLD, &req),
                     "Ialltoallw");
            CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE), "Wait");
        } else {
            CHECK_RC(MPI_Alltoallw(send, swc, swd, stt, rb, rwc, rwd, rtt, MPI_COMM_WORLD),
                     "Alltoallw");
        }
        MPI_Type_free(&pair);
        free(swc);
        free(rwc);
        free(swd);
        free(rwd);
    } else if (nonblocking) {
        CHECK_RC(MPI_Ialltoallv(send, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, MPI_COMM_WORLD, &req),
                 "Ialltoallv");
        CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE), "Wait");
    } else {
        CHECK_RC(MPI_Alltoallv(send, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, MPI_COMM_WORLD),
                 "Alltoallv");
    }
    for (int r = 0; r < size && errs < 5; r++) {
        for (int i = 0; i < rc[r]; i++)
            if (!CHECK(rb[rd[r] + i] == val(r, rank, i), "alltoall%s inplace=%d from %d [%d]=%d",
                       w ? "w" : "v", inplace, r, i, rb[rd[r] + i]))
                errs++;
        for (int i = rc[r]; i < rc[r] + 2; i++)
            if (!CHECK(rb[rd[r] + i] == -1, "alltoall%s gap overwritten", w ? "w" : "v"))
                errs++;
    }
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    free(stt);
    free(rtt);
    free(sb);
    free(rb);
    return errs;
}

int main(int argc, char **argv)
{
    int errs = 0;
    MTest_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int sizes[] = {0, 1, 3, 100, 9000, 40000};
    for (int k = 0; k < 6; k++)
        for (int variant = 0; variant < 5; variant++)
            errs += test_alltoall(sizes[k], variant == 1 || variant == 4, variant >= 2 && variant != 3,
                                  variant == 3);
    int scales[] = {0, 1, 4, 9000};
    for (int k = 0; k < 4; k++)
        for (int variant = 0; variant < 6; variant++)
            errs += test_alltoallv(scales[k], variant % 3 == 1, variant % 3 == 2, variant >= 3);
    /* Several nonblocking alltoalls outstanding, completed in reverse order. */
    {
        enum { K = 4, N = 3 };
        MPI_Request reqs[K];
        int *sb = malloc(sizeof(int) * K * N * size), *rb = malloc(sizeof(int) * K * N * size);
        for (int k = 0; k < K; k++) {
            for (int to = 0; to < size; to++)
                for (int i = 0; i < N; i++)
                    sb[((long)k * size + to) * N + i] = val(rank, to, i) + k;
            MPI_Ialltoall(sb + (long)k * N * size, N, MPI_INT, rb + (long)k * N * size, N, MPI_INT,
                          MPI_COMM_WORLD, &reqs[k]);
        }
        for (int k = K - 1; k >= 0; k--)
            MPI_Wait(&reqs[k], MPI_STATUS_IGNORE);
        for (int k = 0; k < K; k++)
            for (int from = 0; from < size; from++)
                for (int i = 0; i < N; i++)
                    if (!CHECK(rb[((long)k * size + from) * N + i] == val(from, rank, i) + k,
                               "outstanding Ialltoall %d", k))
                        errs++;
        free(sb);
        free(rb);
    }
    return MTest_Finalize(errs);
}
