/* coll_algos: MPI_Bcast, MPI_Allgather, MPI_Allreduce and MPI_Reduce against simple references
 * at counts 0, 1, odd and large, with MPI_IN_PLACE, derived datatypes (strided, with holes)
 * and a non-commutative user op (2x2 matrix product over unsigned ints) whose result checks
 * the standard's operand order (rank 0's operand leftmost).  The testlist runs it at 1..9 ranks
 * under every HYMPI_{BCAST,ALLGATHER,ALLREDUCE,REDUCE}_ALGORITHM setting, so each algorithm
 * (the generalized-radix family included) meets sizes that are not powers of its radix;
 * other MPIs ignore the variables. */
#include "mtest.h"

static int rank, size;
/* MPICH 4.0.2 (Debian) crashes in MPI_Reduce with MPI_IN_PLACE at a non-zero root once the
 * message passes about 2 KB (a memcpy out of bounds inside MPIR_Reduce, on 3 ranks already);
 * those cases are skipped there. */
static int mpich_inplace_bug;

static const int counts[] = {0, 1, 7, 1001, 70001};
#define NCOUNTS ((int)(sizeof(counts) / sizeof(counts[0])))

static int val(int r, long i)
{
    return (int)((r * 100003L + i * 7 + 1) % 1000000007L);
}

/* n ints each followed by a hole: a resized vector of stride 2. */
static MPI_Datatype strided(int n)
{
    MPI_Datatype v, t;
    MPI_Type_vector(n, 1, 2, MPI_INT, &v);
    MPI_Type_create_resized(v, 0, (MPI_Aint)(2 * (MPI_Aint)n * sizeof(int)), &t);
    MPI_Type_free(&v);
    MPI_Type_commit(&t);
    return t;
}

/* ---- Bcast ---- */

static int test_bcast(int n, int root, int derived)
{
    int errs = 0;
    long stride = derived ? 2 : 1;
    long len = n * stride + 1;
    int *b = malloc(sizeof(int) * len);
    for (long i = 0; i < len; i++)
        b[i] = -1;
    if (rank == root)
        for (long i = 0; i < n; i++)
            b[i * stride] = val(root, i);
    MPI_Datatype t = derived ? strided(n) : MPI_INT;
    CHECK_RC(MPI_Bcast(b, derived ? 1 : n, t, root, MPI_COMM_WORLD), "Bcast");
    for (long i = 0; i < n && errs < 5; i++) {
        if (!CHECK(b[i * stride] == val(root, i), "bcast n=%d root=%d derived=%d: b[%ld]=%d want %d",
                   n, root, derived, i * stride, b[i * stride], val(root, i)))
            errs++;
        if (derived && !CHECK(b[i * stride + 1] == -1, "bcast n=%d: hole %ld overwritten", n, i))
            errs++;
    }
    if (!CHECK(b[len - 1] == -1, "bcast n=%d derived=%d wrote past the end", n, derived))
        errs++;
    if (derived)
        MPI_Type_free(&t);
    free(b);
    return errs;
}

/* ---- Allgather ---- */

static int test_allgather(int n, int inplace, int derived)
{
    derived = derived && n > 0;
    int errs = 0;
    long stride = derived ? 2 : 1;
    int *sb = malloc(sizeof(int) * (n + 1));
    long len = stride * n * size + 1;
    int *rb = malloc(sizeof(int) * len);
    for (int i = 0; i < n; i++)
        sb[i] = val(rank, i);
    for (long i = 0; i < len; i++)
        rb[i] = -1;
    if (inplace)
        for (int i = 0; i < n; i++)
            rb[((long)rank * n + i) * stride] = val(rank, i);
    MPI_Datatype rt = derived ? strided(n) : MPI_INT;
    CHECK_RC(MPI_Allgather(inplace ? MPI_IN_PLACE : sb, n, MPI_INT, rb, derived ? 1 : n, rt,
                           MPI_COMM_WORLD),
             "Allgather");
    for (int r = 0; r < size && errs < 5; r++)
        for (int i = 0; i < n && errs < 5; i++) {
            long at = ((long)r * n + i) * stride;
            if (!CHECK(rb[at] == val(r, i), "allgather n=%d inplace=%d derived=%d: rb[%ld]=%d want %d",
                       n, inplace, derived, at, rb[at], val(r, i)))
                errs++;
            if (derived && !CHECK(rb[at + 1] == -1, "allgather n=%d: hole overwritten", n))
                errs++;
        }
    if (!CHECK(rb[len - 1] == -1, "allgather n=%d wrote past the end", n))
        errs++;
    if (derived)
        MPI_Type_free(&rt);
    free(sb);
    free(rb);
    return errs;
}

/* ---- reductions: MPI_SUM on ints ---- */

static int sum_ref(long i)
{
    long s = 0;
    for (int r = 0; r < size; r++)
        s += val(r, i) % 1000; /* keep the sum inside int */
    return (int)s;
}

/* root < 0: Allreduce; else Reduce to root. */
static int test_sum(int n, int root, int inplace)
{
    int errs = 0;
    int *sb = malloc(sizeof(int) * (n + 1));
    int *rb = malloc(sizeof(int) * (n + 1));
    for (int i = 0; i < n; i++) {
        sb[i] = val(rank, i) % 1000;
        rb[i] = inplace ? sb[i] : -1;
    }
    rb[n] = -7;
    if (inplace && root > 0 && mpich_inplace_bug && n > 500) {
        free(sb);
        free(rb);
        return 0;
    }
    int gets = root < 0 || rank == root;
    const void *send = inplace && gets ? MPI_IN_PLACE : sb;
    if (root < 0)
        CHECK_RC(MPI_Allreduce(send, rb, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD), "Allreduce");
    else
        CHECK_RC(MPI_Reduce(send, rb, n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD), "Reduce");
    if (gets)
        for (int i = 0; i < n && errs < 5; i++)
            if (!CHECK(rb[i] == sum_ref(i), "sum n=%d root=%d inplace=%d: rb[%d]=%d want %d", n,
                       root, inplace, i, rb[i], sum_ref(i)))
                errs++;
    if (!CHECK(rb[n] == -7, "sum n=%d root=%d wrote past the end", n, root))
        errs++;
    for (int i = 0; i < n && !inplace && errs < 5; i++)
        if (!CHECK(sb[i] == val(rank, i) % 1000, "sum: send buffer changed"))
            errs++;
    free(sb);
    free(rb);
    return errs;
}

/* ---- reductions: a non-commutative op on a derived type ---- */

typedef struct {
    unsigned a, b, c, d; /* [[a b] [c d]] */
} mat;

static mat mat_of(int r, long i)
{
    mat m = {(unsigned)((r * 7 + i * 3) % 11 + 1), (unsigned)((r * r + i) % 13),
             (unsigned)((r * 5 + 2) % 7 + 1), (unsigned)((r + i * i) % 17)};
    return m;
}

static mat mul(mat x, mat y)
{
    mat z = {x.a * y.a + x.b * y.c, x.a * y.b + x.b * y.d, x.c * y.a + x.d * y.c,
             x.c * y.b + x.d * y.d};
    return z;
}

/* inout = in * inout: `in` holds the lower ranks' operand. */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    mat *x = in, *y = inout;
    for (int i = 0; i < *len; i++)
        y[i] = mul(x[i], y[i]);
}

static int eq(mat x, mat y)
{
    return x.a == y.a && x.b == y.b && x.c == y.c && x.d == y.d;
}

static int test_noncomm(int n, int root, int inplace, MPI_Datatype mt, MPI_Op op)
{
    int errs = 0;
    mat *sb = malloc(sizeof(mat) * (n + 1));
    mat *rb = malloc(sizeof(mat) * (n + 1));
    mat poison = {7, 7, 7, 7};
    for (int i = 0; i < n; i++) {
        sb[i] = mat_of(rank, i);
        rb[i] = inplace ? sb[i] : poison;
    }
    rb[n] = poison;
    if (inplace && root > 0 && mpich_inplace_bug && n > 100) {
        free(sb);
        free(rb);
        return 0;
    }
    int gets = root < 0 || rank == root;
    const void *send = inplace && gets ? MPI_IN_PLACE : sb;
    if (root < 0)
        CHECK_RC(MPI_Allreduce(send, rb, n, mt, op, MPI_COMM_WORLD), "Allreduce(matmul)");
    else
        CHECK_RC(MPI_Reduce(send, rb, n, mt, op, root, MPI_COMM_WORLD), "Reduce(matmul)");
    if (gets)
        for (int i = 0; i < n && errs < 5; i++) {
            mat want = mat_of(0, i);
            for (int r = 1; r < size; r++)
                want = mul(want, mat_of(r, i));
            if (!CHECK(eq(rb[i], want), "matmul n=%d root=%d inplace=%d: element %d wrong (%u %u %u %u, want %u %u %u %u)",
                       n, root, inplace, i, rb[i].a, rb[i].b, rb[i].c, rb[i].d, want.a, want.b,
                       want.c, want.d))
                errs++;
        }
    if (!CHECK(eq(rb[n], poison), "matmul n=%d wrote past the end", n))
        errs++;
    free(sb);
    free(rb);
    return errs;
}

/* The nonblocking forms come from the same algorithms: an Ibcast, an Iallgather and an
 * Iallreduce outstanding together. */
static int test_nonblocking(int n)
{
    int errs = 0, root = size - 1;
    int *b = malloc(sizeof(int) * (n + 1));
    int *sb = malloc(sizeof(int) * (n + 1));
    int *gb = malloc(sizeof(int) * ((long)n * size + 1));
    int *rb = malloc(sizeof(int) * (n + 1));
    for (int i = 0; i < n; i++) {
        b[i] = rank == root ? val(root, i) : -1;
        sb[i] = val(rank, i) % 1000;
    }
    MPI_Request r[3];
    MPI_Ibcast(b, n, MPI_INT, root, MPI_COMM_WORLD, &r[0]);
    MPI_Iallgather(sb, n, MPI_INT, gb, n, MPI_INT, MPI_COMM_WORLD, &r[1]);
    MPI_Iallreduce(sb, rb, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r[2]);
    CHECK_RC(MPI_Waitall(3, r, MPI_STATUSES_IGNORE), "Waitall");
    for (int i = 0; i < n && errs < 5; i++) {
        if (!CHECK(b[i] == val(root, i), "Ibcast n=%d: b[%d]=%d", n, i, b[i]))
            errs++;
        if (!CHECK(rb[i] == sum_ref(i), "Iallreduce n=%d: rb[%d]=%d want %d", n, i, rb[i], sum_ref(i)))
            errs++;
        for (int q = 0; q < size; q++)
            if (!CHECK(gb[(long)q * n + i] == val(q, i) % 1000, "Iallgather n=%d: block %d", n, q))
                errs++;
    }
    free(b);
    free(sb);
    free(gb);
    free(rb);
    return errs;
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    rank = mtest_rank;
    size = mtest_size;
    int errs = 0;
    int roots[3] = {0, size - 1, size / 2};
    {
        char v[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(v, &len);
        mpich_inplace_bug = strstr(v, "MPICH Version:\t4.0") != NULL;
        /* Under another MPI a run with HYMPI_*_ALGORITHM set repeats the plain run. */
        const char *vars[] = {"HYMPI_BCAST_ALGORITHM", "HYMPI_ALLGATHER_ALGORITHM",
                              "HYMPI_ALLREDUCE_ALGORITHM", "HYMPI_REDUCE_ALGORITHM"};
        int forced = 0;
        for (int i = 0; i < 4; i++)
            forced |= getenv(vars[i]) != NULL;
        if (forced && strncmp(v, "hympi", 5) != 0) {
            MTest_Skip("HYMPI_*_ALGORITHM only matters on hympi (the plain run covers this MPI)");
            return MTest_Finalize(0);
        }
    }

    for (int c = 0; c < NCOUNTS; c++) {
        int n = counts[c];
        for (int j = 0; j < 3; j++) {
            errs += test_bcast(n, roots[j], 0);
            if (n > 0 && n < 2000)
                errs += test_bcast(n, roots[j], 1);
        }
        int m = n > 20000 ? 20001 : n; /* allgather: blocks of up to 80 KB */
        errs += test_allgather(m, 0, 0);
        errs += test_allgather(m, 1, 0);
        errs += test_allgather(m, 0, 1);
        errs += test_allgather(m, 1, 1);
        errs += test_sum(n, -1, 0);
        errs += test_sum(n, -1, 1);
        for (int j = 0; j < 3; j++) {
            errs += test_sum(n, roots[j], 0);
            errs += test_sum(n, roots[j], 1);
        }
    }
    errs += test_nonblocking(1);
    errs += test_nonblocking(5003);
    /* A derived-type bcast of a large buffer (packed for the scatter-based algorithms). */
    errs += test_bcast(40001, size / 2, 1);

    MPI_Datatype mt;
    MPI_Type_contiguous(4, MPI_UNSIGNED, &mt);
    MPI_Type_commit(&mt);
    MPI_Op op;
    MPI_Op_create(matmul, 0, &op);
    const int mcounts[] = {0, 1, 7, 3001};
    for (int c = 0; c < 4; c++) {
        int n = mcounts[c];
        errs += test_noncomm(n, -1, 0, mt, op);
        errs += test_noncomm(n, -1, 1, mt, op);
        for (int j = 0; j < 3; j++) {
            errs += test_noncomm(n, roots[j], 0, mt, op);
            errs += test_noncomm(n, roots[j], 1, mt, op);
        }
    }
    MPI_Op_free(&op);
    MPI_Type_free(&mt);
    return MTest_Finalize(errs);
}
