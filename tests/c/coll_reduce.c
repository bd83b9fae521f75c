/* coll_reduce: MPI_Reduce and MPI_Allreduce (blocking, nonblocking, _c forms).
 *
 * - SUM / MAX on int and double, MAXLOC on MPI_DOUBLE_INT, every root, counts 0, 1, odd
 *   and large (100000, which takes the large-message allreduce algorithms).
 * - MPI_IN_PLACE at the root (Reduce) and everywhere (Allreduce).
 * - A user op on a vector datatype (strided data, holes untouched).
 * - A non-commutative user op (2x2 matrix product) whose result must follow rank order.
 * - Several outstanding MPI_Ireduce / MPI_Iallreduce on two communicators.
 * - Argument errors: bad root, negative count, bad op, aliased buffers. */
#include "mtest.h"
#include <stdlib.h>
#include <string.h>

static int rank, size;

/* 2x2 integer matrices (mod 1000 to stay small): inout = in * inout. */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    const int *a = in;
    int *b = inout;
    (void)dt;
    for (int k = 0; k < *len; k++, a += 4, b += 4) {
        int c0 = (a[0] * b[0] + a[1] * b[2]) % 1000, c1 = (a[0] * b[1] + a[1] * b[3]) % 1000;
        int c2 = (a[2] * b[0] + a[3] * b[2]) % 1000, c3 = (a[2] * b[1] + a[3] * b[3]) % 1000;
        b[0] = c0; b[1] = c1; b[2] = c2; b[3] = c3;
    }
}

static void mat_of(int r, int *m)
{
    m[0] = 1 + r; m[1] = 2; m[2] = r % 3; m[3] = 1;
}

/* Expected x0 * x1 * ... * x(p-1). */
static void mat_expected(int p, int *m)
{
    int acc[4] = {1, 0, 0, 1}, x[4];
    for (int r = 0; r < p; r++) {
        mat_of(r, x);
        int c0 = (acc[0] * x[0] + acc[1] * x[2]) % 1000, c1 = (acc[0] * x[1] + acc[1] * x[3]) % 1000;
        int c2 = (acc[2] * x[0] + acc[3] * x[2]) % 1000, c3 = (acc[2] * x[1] + acc[3] * x[3]) % 1000;
        acc[0] = c0; acc[1] = c1; acc[2] = c2; acc[3] = c3;
    }
    memcpy(m, acc, sizeof acc);
}

/* User op on the vector type: adds the first double of each block of 2, skipping the gap. */
static void vec_add(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    const double *a = in;
    double *b = inout;
    (void)dt;
    /* one element of the type = 3 blocks of 2 doubles with stride 4 (extent 10 doubles) */
    for (int k = 0; k < *len; k++)
        for (int j = 0; j < 3; j++)
            for (int t = 0; t < 2; t++) b[k * 10 + j * 4 + t] += a[k * 10 + j * 4 + t];
}

static void test_sum(int n)
{
    int *s = malloc((n + 1) * sizeof(int)), *r = malloc((n + 1) * sizeof(int));
    double *sd = malloc((n + 1) * sizeof(double)), *rd = malloc((n + 1) * sizeof(double));
    for (int root = 0; root < size; root++) {
        for (int i = 0; i < n; i++) { s[i] = rank + i; r[i] = -1; }
        r[n] = -7;
        int rc = MPI_Reduce(s, r, n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
        CHECK_RC(rc, "MPI_Reduce SUM");
        if (rank == root) {
            int bad = 0;
            for (int i = 0; i < n; i++) bad += r[i] != size * (size - 1) / 2 + size * i;
            CHECK(bad == 0, "Reduce SUM n=%d root=%d: %d wrong", n, root, bad);
            CHECK(r[n] == -7, "Reduce wrote past the end");
        }
        /* MAX of doubles, root in place */
        for (int i = 0; i < n; i++) sd[i] = rd[i] = (double)((rank * 7 + i) % size);
        /* (MPICH 4.0 crashes in an in-place Reduce of ~1000+ doubles at a nonzero root: the
         * large counts test in place at root 0 only) */
        if (n > 100 && root != 0)
            rc = MPI_Reduce(sd, rd, n, MPI_DOUBLE, MPI_MAX, root, MPI_COMM_WORLD);
        else if (rank == root)
            rc = MPI_Reduce(MPI_IN_PLACE, rd, n, MPI_DOUBLE, MPI_MAX, root, MPI_COMM_WORLD);
        else
            rc = MPI_Reduce(sd, rd, n, MPI_DOUBLE, MPI_MAX, root, MPI_COMM_WORLD);
        CHECK_RC(rc, "MPI_Reduce MAX in place");
        if (rank == root) {
            int bad = 0;
            for (int i = 0; i < n; i++) {
                double want = 0;
                for (int q = 0; q < size; q++)
                    if ((q * 7 + i) % size > want) want = (q * 7 + i) % size;
                bad += rd[i] != want;
            }
            CHECK(bad == 0, "Reduce MAX in place n=%d root=%d: %d wrong", n, root, bad);
        }
    }
    /* Allreduce SUM of doubles, both forms */
    for (int i = 0; i < n; i++) { sd[i] = rank + 0.5 * i; rd[i] = -1; }
    int rc = MPI_Allreduce(sd, rd, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    CHECK_RC(rc, "MPI_Allreduce");
    int bad = 0;
    for (int i = 0; i < n; i++) bad += rd[i] != size * (size - 1) / 2.0 + size * 0.5 * i;
    CHECK(bad == 0, "Allreduce SUM n=%d: %d wrong", n, bad);
    for (int i = 0; i < n; i++) r[i] = rank * (i + 1);
    rc = MPI_Allreduce(MPI_IN_PLACE, r, n, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    CHECK_RC(rc, "MPI_Allreduce in place");
    bad = 0;
    for (int i = 0; i < n; i++) bad += r[i] != (size - 1) * (i + 1);
    CHECK(bad == 0, "Allreduce MAX in place n=%d: %d wrong", n, bad);
    for (int i = 0; i < n; i++) { sd[i] = rank + i; rd[i] = 0; }
    rc = MPI_Allreduce_c(MPI_IN_PLACE, sd, (MPI_Count)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    CHECK_RC(rc, "MPI_Allreduce_c in place");
    bad = 0;
    for (int i = 0; i < n; i++) bad += sd[i] != size * (size - 1) / 2.0 + (double)size * i;
    CHECK(bad == 0, "Allreduce_c SUM in place n=%d: %d wrong", n, bad);
    free(s); free(r); free(sd); free(rd);
}

static void test_maxloc(void)
{
    struct { double v; int i; } in[3], out[3];
    for (int k = 0; k < 3; k++) { in[k].v = (double)((rank + k) % size); in[k].i = rank; }
    int rc = MPI_Allreduce(in, out, 3, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD);
    CHECK_RC(rc, "MPI_Allreduce MAXLOC");
    for (int k = 0; k < 3; k++) {
        /* max value size-1 held by rank (size-1-k) mod size */
        int who = ((size - 1 - k) % size + size) % size;
        CHECK(out[k].v == size - 1 && out[k].i == who, "MAXLOC[%d] = (%g,%d), want (%d,%d)", k,
              out[k].v, out[k].i, size - 1, who);
    }
}

static void test_vector_userop(void)
{
    MPI_Datatype vt;
    MPI_Op op;
    MPI_Type_vector(3, 2, 4, MPI_DOUBLE, &vt);
    MPI_Type_commit(&vt);
    MPI_Op_create(vec_add, 1, &op);
    const int n = 5; /* elements of vt; extent 10 doubles each */
    double s[50], r[50];
    for (int i = 0; i < 50; i++) { s[i] = rank * 100 + i; r[i] = -1; }
    for (int root = 0; root < size; root++) {
        for (int i = 0; i < 50; i++) r[i] = -1;
        int rc = MPI_Reduce(s, r, n, vt, op, root, MPI_COMM_WORLD);
        CHECK_RC(rc, "MPI_Reduce vector user op");
        if (rank == root) {
            int bad = 0;
            for (int i = 0; i < 50; i++) {
                int in_elem = (i % 10) == 0 || (i % 10) == 1 || (i % 10) == 4 || (i % 10) == 5 ||
                              (i % 10) == 8 || (i % 10) == 9;
                double want = in_elem ? 100.0 * size * (size - 1) / 2 + (double)size * i : -1;
                bad += r[i] != want;
            }
            CHECK(bad == 0, "vector user op root=%d: %d wrong", root, bad);
        }
    }
    for (int i = 0; i < 50; i++) r[i] = -1;
    int rc = MPI_Allreduce(s, r, n, vt, op, MPI_COMM_WORLD);
    CHECK_RC(rc, "MPI_Allreduce vector user op");
    int bad = 0;
    for (int i = 0; i < 50; i++) {
        int m = i % 10, in_elem = m == 0 || m == 1 || m == 4 || m == 5 || m == 8 || m == 9;
        double want = in_elem ? 100.0 * size * (size - 1) / 2 + (double)size * i : -1;
        bad += r[i] != want;
    }
    CHECK(bad == 0, "Allreduce vector user op: %d wrong", bad);
    MPI_Op_free(&op);
    MPI_Type_free(&vt);
}

static void test_noncommutative(void)
{
    MPI_Op op;
    MPI_Op_create(matmul, 0, &op);
    int want[4];
    mat_expected(size, want);
    int m[8], out[8];
    mat_of(rank, m);
    mat_of(rank, m + 4);
    MPI_Datatype mt;
    MPI_Type_contiguous(4, MPI_INT, &mt);
    MPI_Type_commit(&mt);
    for (int root = 0; root < size; root++) {
        memset(out, 0, sizeof out);
        int rc = MPI_Reduce(m, out, 2, mt, op, root, MPI_COMM_WORLD);
        CHECK_RC(rc, "MPI_Reduce non-commutative");
        if (rank == root)
            for (int k = 0; k < 2; k++)
                CHECK(memcmp(out + 4 * k, want, sizeof want) == 0,
                      "non-commutative Reduce root=%d: [%d %d %d %d] want [%d %d %d %d]", root,
                      out[4 * k], out[4 * k + 1], out[4 * k + 2], out[4 * k + 3], want[0], want[1],
                      want[2], want[3]);
    }
    memset(out, 0, sizeof out);
    int rc = MPI_Allreduce(m, out, 2, mt, op, MPI_COMM_WORLD);
    CHECK_RC(rc, "MPI_Allreduce non-commutative");
    CHECK(memcmp(out, want, sizeof want) == 0 && memcmp(out + 4, want, sizeof want) == 0,
          "non-commutative Allreduce: [%d %d %d %d] want [%d %d %d %d]", out[0], out[1], out[2],
          out[3], want[0], want[1], want[2], want[3]);
    memcpy(out, m, sizeof m);
    rc = MPI_Allreduce(MPI_IN_PLACE, out, 2, mt, op, MPI_COMM_WORLD);
    CHECK_RC(rc, "MPI_Allreduce non-commutative in place");
    CHECK(memcmp(out + 4, want, sizeof want) == 0, "non-commutative Allreduce in place wrong");
    MPI_Type_free(&mt);
    MPI_Op_free(&op);
}

static void test_nonblocking(void)
{
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    enum { N = 4, LEN = 1000 };
    static int s[N][LEN], r[N][LEN], r2[N][LEN];
    MPI_Request req[2 * N];
    for (int k = 0; k < N; k++) {
        for (int i = 0; i < LEN; i++) { s[k][i] = rank + k + i; r[k][i] = r2[k][i] = -1; }
        int rc = MPI_Iallreduce(s[k], r[k], LEN, MPI_INT, MPI_SUM, k % 2 ? dup : MPI_COMM_WORLD,
                                &req[2 * k]);
        CHECK_RC(rc, "MPI_Iallreduce");
        rc = MPI_Ireduce(s[k], r2[k], LEN, MPI_INT, MPI_MAX, k % size, k % 2 ? MPI_COMM_WORLD : dup,
                         &req[2 * k + 1]);
        CHECK_RC(rc, "MPI_Ireduce");
    }
    int rc = MPI_Waitall(2 * N, req, MPI_STATUSES_IGNORE);
    CHECK_RC(rc, "MPI_Waitall");
    int bad = 0;
    for (int k = 0; k < N; k++)
        for (int i = 0; i < LEN; i++) {
            bad += r[k][i] != size * (size - 1) / 2 + size * (k + i);
            if (rank == k % size) bad += r2[k][i] != size - 1 + k + i;
        }
    CHECK(bad == 0, "nonblocking reductions: %d wrong", bad);
    /* _c forms */
    MPI_Request q;
    for (int i = 0; i < LEN; i++) r[0][i] = -1;
    rc = MPI_Iallreduce_c(s[0], r[0], (MPI_Count)LEN, MPI_INT, MPI_SUM, dup, &q);
    CHECK_RC(rc, "MPI_Iallreduce_c");
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    CHECK(r[0][5] == size * (size - 1) / 2 + size * 5, "Iallreduce_c wrong");
    rc = MPI_Ireduce_c(s[0], r[0], (MPI_Count)LEN, MPI_INT, MPI_SUM, 0, dup, &q);
    CHECK_RC(rc, "MPI_Ireduce_c");
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    rc = MPI_Reduce_c(s[0], r[0], (MPI_Count)LEN, MPI_INT, MPI_SUM, 0, dup);
    CHECK_RC(rc, "MPI_Reduce_c");
    if (rank == 0) CHECK(r[0][7] == size * (size - 1) / 2 + size * 7, "Reduce_c wrong");
    MPI_Comm_free(&dup);
}

static void test_errors(void)
{
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MTest_Errors_return(c);
    int a = 1, b = 0, rc;
    rc = MPI_Reduce(&a, &b, 1, MPI_INT, MPI_SUM, size, c);
    CHECK_CLASS(rc, MPI_ERR_ROOT, "MPI_Reduce root=size");
    rc = MPI_Reduce(&a, &b, 1, MPI_INT, MPI_SUM, -1, c);
    CHECK_CLASS(rc, MPI_ERR_ROOT, "MPI_Reduce root=-1");
#ifndef MPICH_VERSION /* MPICH 4.0 smashes its stack on a negative reduction count */
    rc = MPI_Allreduce(&a, &b, -1, MPI_INT, MPI_SUM, c);
    CHECK_CLASS(rc, MPI_ERR_COUNT, "MPI_Allreduce count=-1");
#endif
    rc = MPI_Allreduce(&a, &b, 1, MPI_INT, MPI_OP_NULL, c);
    CHECK_CLASS(rc, MPI_ERR_OP, "MPI_Allreduce MPI_OP_NULL");
    rc = MPI_Allreduce(&a, &b, 1, MPI_DATATYPE_NULL, MPI_SUM, c);
    /* MPICH reports MPI_ERR_OP (SUM undefined on the type), hympi MPI_ERR_TYPE */
    CHECK(rc != MPI_SUCCESS && (MTest_Class(rc) == MPI_ERR_TYPE || MTest_Class(rc) == MPI_ERR_OP),
          "MPI_Allreduce MPI_DATATYPE_NULL: got %s", MTest_Describe(rc));
    rc = MPI_Allreduce(&a, &a, 1, MPI_INT, MPI_SUM, c);
    CHECK_CLASS(rc, MPI_ERR_BUFFER, "MPI_Allreduce aliased buffers");
    /* still usable afterwards */
    rc = MPI_Allreduce(&a, &b, 1, MPI_INT, MPI_SUM, c);
    CHECK_RC(rc, "MPI_Allreduce after errors");
    CHECK(b == size, "Allreduce after errors: %d", b);
    MPI_Comm_free(&c);
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int counts[] = {0, 1, 7, 1001, 100000};
    for (unsigned k = 0; k < sizeof counts / sizeof counts[0]; k++) test_sum(counts[k]);
    test_maxloc();
    test_vector_userop();
    test_noncommutative();
    test_nonblocking();
    test_errors();
    MTest_Finalize(0);
    return 0;
}
