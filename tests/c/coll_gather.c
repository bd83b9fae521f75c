/* coll_gather: MPI_Gather, Gatherv, Scatter, Scatterv (and their nonblocking forms) from
 * every root, at small and large block sizes (the tree and the linear algorithms), with
 * MPI_IN_PLACE at the root, derived datatypes that differ between sender and receiver
 * (a strided vector against contiguous ints), v-forms with zero counts and displacements out
 * of rank order, and the error classes of bad roots, counts and datatypes. */
#include "mtest.h"

static int rank, size;

/* Value of element i of rank r's contribution. */
static int val(int r, int i)
{
    return r * 100003 + i * 7 + 1;
}

/* A vector of n ints at stride 2, resized to extent 2n ints (so blocks tile). */
static MPI_Datatype strided(int n)
{
    MPI_Datatype v, t;
    MPI_Type_vector(n, 1, 2, MPI_INT, &v);
    MPI_Type_create_resized(v, 0, (MPI_Aint)(2 * n * sizeof(int)), &t);
    MPI_Type_free(&v);
    MPI_Type_commit(&t);
    return t;
}

static int test_gather(int n, int root, int inplace, int derived, int nonblocking)
{
    derived = derived && n > 0; /* a zero-size derived block: MPIs disagree on skipping it */
    int errs = 0;
    int *sb = malloc(sizeof(int) * (n + 1));
    int *rb = malloc(sizeof(int) * (2 * (size_t)n * size + 1));
    for (int i = 0; i < n; i++)
        sb[i] = val(rank, i);
    for (long i = 0; i < 2L * n * size; i++)
        rb[i] = -1;
    MPI_Datatype rt = derived ? strided(n) : MPI_INT;
    int rc = derived ? 1 : n;
    long stride = derived ? 2 : 1; /* ints per element slot in rb */
    if (inplace && rank == root)
        for (int i = 0; i < n; i++)
            rb[((long)root * n + i) * stride] = val(root, i);
    const void *send = (inplace && rank == root) ? MPI_IN_PLACE : sb;
    if (nonblocking) {
        MPI_Request req;
        CHECK_RC(MPI_Igather(send, n, MPI_INT, rb, rc, rt, root, MPI_COMM_WORLD, &req), "Igather");
        CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE), "Wait");
    } else {
        CHECK_RC(MPI_Gather(send, n, MPI_INT, rb, rc, rt, root, MPI_COMM_WORLD), "Gather");
    }
    if (rank == root) {
        for (int r = 0; r < size; r++)
            for (int i = 0; i < n; i++) {
                long at = ((long)r * n + i) * stride;
                if (!CHECK(rb[at] == val(r, i), "gather n=%d root=%d: rb[%ld]=%d, want %d", n,
                           root, at, rb[at], val(r, i)))
                    errs++;
                if (derived && !CHECK(rb[at + 1] == -1, "gather hole %ld overwritten", at + 1))
                    errs++;
                if (errs > 5)
                    goto out;
            }
    }
out:
    if (derived)
        MPI_Type_free(&rt);
    free(sb);
    free(rb);
    return errs;
}

static int test_scatter(int n, int root, int inplace, int derived, int nonblocking)
{
    derived = derived && n > 0; /* a zero-size derived block: MPIs disagree on skipping it */
    int errs = 0;
    int *sb = malloc(sizeof(int) * (2 * (size_t)n * size + 1));
    int *rb = malloc(sizeof(int) * (2 * (size_t)n + 1));
    MPI_Datatype st = derived ? strided(n) : MPI_INT;
    int sc = derived ? 1 : n;
    long stride = derived ? 2 : 1;
    if (rank == root)
        for (int r = 0; r < size; r++)
            for (int i = 0; i < n; i++) {
                sb[((long)r * n + i) * stride] = val(r, i);
                if (derived)
                    sb[((long)r * n + i) * stride + 1] = -7;
            }
    for (int i = 0; i < 2 * n; i++)
        rb[i] = -1;
    void *recv = (inplace && rank == root) ? MPI_IN_PLACE : rb;
    /* The receiver uses the strided type when the sender does not, and vice versa. */
    int plain = derived || n == 0;
    MPI_Datatype rt = plain ? MPI_INT : strided(n);
    int rc = plain ? n : 1;
    long rstride = plain ? 1 : 2;
    if (nonblocking) {
        MPI_Request req;
        CHECK_RC(MPI_Iscatter(sb, sc, st, recv, rc, rt, root, MPI_COMM_WORLD, &req), "Iscatter");
        CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE), "Wait");
    } else {
        CHECK_RC(MPI_Scatter(sb, sc, st, recv, rc, rt, root, MPI_COMM_WORLD), "Scatter");
    }
    if (!(inplace && rank == root)) {
        for (int i = 0; i < n; i++) {
            if (!CHECK(rb[i * rstride] == val(rank, i), "scatter n=%d root=%d: rb[%d]=%d want %d",
                       n, root, i, rb[i * rstride], val(rank, i)))
                if (++errs > 5)
                    break;
            if (rstride == 2 && !CHECK(rb[i * 2 + 1] == -1, "scatter hole overwritten"))
                errs++;
        }
    } else {
        for (int i = 0; i < n; i++)
            if (!CHECK(sb[((long)root * n + i) * stride] == val(root, i), "in-place scatter changed root block"))
                errs++;
    }
    if (derived)
        MPI_Type_free(&st);
    if (!plain)
        MPI_Type_free(&rt);
    free(sb);
    free(rb);
    return errs;
}

/* Counts r % 3 (some zero), blocks laid out in reverse rank order with gaps. */
static void vlayout(int *counts, int *displs, int base)
{
    int at = 0;
    for (int r = size - 1; r >= 0; r--) {
        counts[r] = (r + base) % 3 * 5;
        displs[r] = at;
        at += counts[r] + 2;
    }
}

static int test_gatherv(int root, int inplace, int nonblocking)
{
    int errs = 0;
    int *counts = malloc(sizeof(int) * size), *displs = malloc(sizeof(int) * size);
    vlayout(counts, displs, 1);
    int total = 0;
    for (int r = 0; r < size; r++)
        total += counts[r] + 2;
    int *rb = malloc(sizeof(int) * (total + 1));
    int sb[16];
    for (int i = 0; i < counts[rank]; i++)
        sb[i] = val(rank, i);
    for (int i = 0; i < total; i++)
        rb[i] = -1;
    if (inplace && rank == root)
        for (int i = 0; i < counts[root]; i++)
            rb[displs[root] + i] = val(root, i);
    const void *send = (inplace && rank == root) ? MPI_IN_PLACE : sb;
    if (nonblocking) {
        MPI_Request req;
        CHECK_RC(MPI_Igatherv(send, counts[rank], MPI_INT, rb, counts, displs, MPI_INT, root,
                              MPI_COMM_WORLD, &req), "Igatherv");
        CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE), "Wait");
    } else {
        CHECK_RC(MPI_Gatherv(send, counts[rank], MPI_INT, rb, counts, displs, MPI_INT, root,
                             MPI_COMM_WORLD), "Gatherv");
    }
    if (rank == root)
        for (int r = 0; r < size; r++) {
            for (int i = 0; i < counts[r]; i++)
                if (!CHECK(rb[displs[r] + i] == val(r, i), "gatherv root=%d from %d [%d]", root, r, i))
                    errs++;
            for (int i = counts[r]; i < counts[r] + 2; i++)
                if (!CHECK(rb[displs[r] + i] == -1, "gatherv gap overwritten"))
                    errs++;
        }
    free(counts);
    free(displs);
    free(rb);
    return errs;
}

static int test_scatterv(int root, int inplace, int nonblocking)
{
    int errs = 0;
    int *counts = malloc(sizeof(int) * size), *displs = malloc(sizeof(int) * size);
    vlayout(counts, displs, 2);
    int total = 0;
    for (int r = 0; r < size; r++)
        total += counts[r] + 2;
    int *sb = malloc(sizeof(int) * (total + 1));
    int rb[16];
    for (int r = 0; r < size; r++)
        for (int i = 0; i < counts[r]; i++)
            sb[displs[r] + i] = val(r, i);
    for (int i = 0; i < 16; i++)
        rb[i] = -1;
    void *recv = (inplace && rank == root) ? MPI_IN_PLACE : rb;
    if (nonblocking) {
        MPI_Request req;
        CHECK_RC(MPI_Iscatterv(sb, counts, displs, MPI_INT, recv, counts[rank], MPI_INT, root,
                               MPI_COMM_WORLD, &req), "Iscatterv");
        CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE), "Wait");
    } else {
        CHECK_RC(MPI_Scatterv(sb, counts, displs, MPI_INT, recv, counts[rank], MPI_INT, root,
                              MPI_COMM_WORLD), "Scatterv");
    }
    if (!(inplace && rank == root)) {
        for (int i = 0; i < counts[rank]; i++)
            if (!CHECK(rb[i] == val(rank, i), "scatterv root=%d [%d]=%d", root, i, rb[i]))
                errs++;
        if (!CHECK(rb[counts[rank]] == -1, "scatterv wrote past its count"))
            errs++;
    }
    free(counts);
    free(displs);
    free(sb);
    return errs;
}

static int test_errors(void)
{
    int errs = 0, x[4] = {0}, y[64];
    MTest_Errors_return(MPI_COMM_WORLD);
    int rc = MPI_Gather(x, 1, MPI_INT, y, 1, MPI_INT, size, MPI_COMM_WORLD);
    if (!CHECK(MTest_Class(rc) == MPI_ERR_ROOT, "Gather root=size: %s", MTest_Describe(rc)))
        errs++;
    rc = MPI_Scatter(x, 1, MPI_INT, y, 1, MPI_INT, -5, MPI_COMM_WORLD);
    if (!CHECK(MTest_Class(rc) == MPI_ERR_ROOT, "Scatter root=-5: %s", MTest_Describe(rc)))
        errs++;
    rc = MPI_Gather(x, -1, MPI_INT, y, -1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!CHECK(MTest_Class(rc) == MPI_ERR_COUNT, "Gather count=-1: %s", MTest_Describe(rc)))
        errs++;
    rc = MPI_Scatter(x, 1, MPI_DATATYPE_NULL, y, 1, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD);
    if (!CHECK(MTest_Class(rc) == MPI_ERR_TYPE, "Scatter MPI_DATATYPE_NULL: %s", MTest_Describe(rc)))
        errs++;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    return errs;
}

int main(int argc, char **argv)
{
    int errs = 0;
    MTest_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int sizes[] = {0, 1, 3, 100, 9000};
    for (int root = 0; root < size; root++)
        for (int k = 0; k < 5; k++)
            for (int variant = 0; variant < 4; variant++) {
                int inplace = variant == 1, derived = variant == 2, nb = variant == 3;
                errs += test_gather(sizes[k], root, inplace, derived, nb);
                errs += test_scatter(sizes[k], root, inplace, derived, nb);
            }
    for (int root = 0; root < size; root++)
        for (int variant = 0; variant < 3; variant++) {
            errs += test_gatherv(root, variant == 1, variant == 2);
            errs += test_scatterv(root, variant == 1, variant == 2);
        }
    /* Several nonblocking gathers outstanding at once, completed in reverse. */
    {
        enum { K = 4 };
        MPI_Request reqs[K];
        int sb[K][3], *rb = malloc(sizeof(int) * K * 3 * size);
        for (int k = 0; k < K; k++) {
            for (int i = 0; i < 3; i++)
                sb[k][i] = val(rank, i) + k;
            MPI_Igather(sb[k], 3, MPI_INT, rb + (long)k * 3 * size, 3, MPI_INT, k % size,
                        MPI_COMM_WORLD, &reqs[k]);
        }
        for (int k = K - 1; k >= 0; k--)
            MPI_Wait(&reqs[k], MPI_STATUS_IGNORE);
        for (int k = 0; k < K; k++)
            if (rank == k % size)
                for (int r = 0; r < size; r++)
                    for (int i = 0; i < 3; i++)
                        if (!CHECK(rb[(long)k * 3 * size + r * 3 + i] == val(r, i) + k,
                                   "outstanding Igather %d", k))
                            errs++;
        free(rb);
    }
    errs += test_errors();
    return MTest_Finalize(errs);
}
