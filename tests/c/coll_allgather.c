/* coll_allgather: MPI_Allgather and Allgatherv (blocking and nonblocking) at block sizes from
 * empty to large, in place, with a strided receive datatype against contiguous sends, and
 * Allgatherv with zero counts and blocks laid out in reverse rank order; also MPI_Bcast of
 * large buffers from every root (the scatter + allgather broadcast).  The testlist runs it
 * under every HYMPI_ALLGATHER_ALGORITHM (other MPIs ignore the variable). */
#include "mtest.h"

static int rank, size;

static int val(int r, int i)
{
    return r * 100003 + i * 7 + 1;
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

static int test_allgather(int n, int inplace, int derived, int nonblocking)
{
    derived = derived && n > 0; /* a zero-size derived block: MPIs disagree on skipping it */
    int errs = 0;
    int *sb = malloc(sizeof(int) * (n + 1));
    int *rb = malloc(sizeof(int) * (2 * (size_t)n * size + 1));
    long stride = derived ? 2 : 1;
    MPI_Datatype rt = derived ? strided(n) : MPI_INT;
    int rc = derived ? 1 : n;
    for (int i = 0; i < n; i++)
        sb[i] = val(rank, i);
    for (long i = 0; i < 2L * n * size; i++)
        rb[i] = -1;
    if (inplace)
        for (int i = 0; i < n; i++)
            rb[((long)rank * n + i) * stride] = val(rank, i);
    const void *send = inplace ? MPI_IN_PLACE : sb;
    if (nonblocking) {
        MPI_Request req;
        CHECK_RC(MPI_Iallgather(send, n, MPI_INT, rb, rc, rt, MPI_COMM_WORLD, &req), "Iallgather");
        CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE), "Wait");
    } else {
        CHECK_RC(MPI_Allgather(send, n, MPI_INT, rb, rc, rt, MPI_COMM_WORLD), "Allgather");
    }
    for (int r = 0; r < size && errs < 5; r++)
        for (int i = 0; i < n && errs < 5; i++) {
            long at = ((long)r * n + i) * stride;
            if (!CHECK(rb[at] == val(r, i), "allgather n=%d inplace=%d derived=%d: rb[%ld]=%d want %d",
                       n, inplace, derived, at, rb[at], val(r, i)))
                errs++;
            if (derived && !CHECK(rb[at + 1] == -1, "allgather hole overwritten"))
                errs++;
        }
    if (derived)
        MPI_Type_free(&rt);
    free(sb);
    free(rb);
    return errs;
}

static int test_allgatherv(int scale, int inplace, int nonblocking)
{
    int errs = 0;
    int *counts = malloc(sizeof(int) * size), *displs = malloc(sizeof(int) * size);
    int at = 0;
    for (int r = size - 1; r >= 0; r--) {
        counts[r] = (r + 1) % 3 * scale;
        displs[r] = at;
        at += counts[r] + 2;
    }
    int *rb = malloc(sizeof(int) * (at + 1));
    int *sb = malloc(sizeof(int) * (counts[rank] + 1));
    for (int i = 0; i < counts[rank]; i++)
        sb[i] = val(rank, i);
    for (int i = 0; i < at; i++)
        rb[i] = -1;
    if (inplace)
        for (int i = 0; i < counts[rank]; i++)
            rb[displs[rank] + i] = val(rank, i);
    const void *send = inplace ? MPI_IN_PLACE : sb;
    if (nonblocking) {
        MPI_Request req;
        CHECK_RC(MPI_Iallgatherv(send, counts[rank], MPI_INT, rb, counts, displs, MPI_INT,
                                 MPI_COMM_WORLD, &req), "Iallgatherv");
        CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE), "Wait");
    } else {
        CHECK_RC(MPI_Allgatherv(send, counts[rank], MPI_INT, rb, counts, displs, MPI_INT,
                                MPI_COMM_WORLD), "Allgatherv");
    }
    for (int r = 0; r < size && errs < 5; r++) {
        for (int i = 0; i < counts[r]; i++)
            if (!CHECK(rb[displs[r] + i] == val(r, i), "allgatherv from %d [%d]", r, i))
                errs++;
        for (int i = counts[r]; i < counts[r] + 2; i++)
            if (!CHECK(rb[displs[r] + i] == -1, "allgatherv gap overwritten"))
                errs++;
    }
    free(counts);
    free(displs);
    free(rb);
    free(sb);
    return errs;
}

static int test_bcast(int n, int root)
{
    int errs = 0;
    int *b = malloc(sizeof(int) * (n + 1));
    for (int i = 0; i < n; i++)
        b[i] = rank == root ? val(root, i) : -1;
    CHECK_RC(MPI_Bcast(b, n, MPI_INT, root, MPI_COMM_WORLD), "Bcast");
    for (int i = 0; i < n && errs < 5; i++)
        if (!CHECK(b[i] == val(root, i), "bcast n=%d root=%d: [%d]=%d", n, root, i, b[i]))
            errs++;
    free(b);
    return errs;
}

int main(int argc, char **argv)
{
    int errs = 0;
    MTest_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int sizes[] = {0, 1, 3, 100, 9000, 70000};
    for (int k = 0; k < 6; k++)
        for (int variant = 0; variant < 4; variant++)
            errs += test_allgather(sizes[k], variant == 1, variant == 2, variant == 3);
    int scales[] = {0, 1, 5, 20000};
    for (int k = 0; k < 4; k++)
        for (int variant = 0; variant < 3; variant++)
            errs += test_allgatherv(scales[k], variant == 1, variant == 2);
    /* Several nonblocking allgathers outstanding at once. */
    {
        enum { K = 5 };
        MPI_Request reqs[K];
        int sb[K][4], *rb = malloc(sizeof(int) * K * 4 * size);
        for (int k = 0; k < K; k++) {
            for (int i = 0; i < 4; i++)
                sb[k][i] = val(rank, i) + k;
            MPI_Iallgather(sb[k], 4, MPI_INT, rb + (long)k * 4 * size, 4, MPI_INT, MPI_COMM_WORLD,
                           &reqs[k]);
        }
        MPI_Waitall(K, reqs, MPI_STATUSES_IGNORE);
        for (int k = 0; k < K; k++)
            for (int r = 0; r < size; r++)
                for (int i = 0; i < 4; i++)
                    if (!CHECK(rb[(long)k * 4 * size + r * 4 + i] == val(r, i) + k,
                               "outstanding Iallgather %d", k))
                        errs++;
        free(rb);
    }
    for (int root = 0; root < size; root++) {
        errs += test_bcast(1, root);
        errs += test_bcast(100003, root);
        errs += test_bcast(300000, root);
    }
    return MTest_Finalize(errs);
}
