/* coll_scan: MPI_Scan, MPI_Exscan, MPI_Reduce_scatter_block and MPI_Reduce_scatter
 * (blocking, nonblocking, _c forms), in place and not, with SUM and with a non-commutative
 * user op (2x2 matrix product mod 1000) whose results must follow rank order. */
#include "mtest.h"
#include <stdlib.h>
#include <string.h>

static int rank, size;

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

/* Matrix of rank r, element k. */
static void mat_of(int r, int k, int *m)
{
    m[0] = 1 + r + k; m[1] = 2; m[2] = (r + k) % 3; m[3] = 1;
}

/* Product of the matrices of ranks lo..hi-1 (element k). */
static void mat_prod(int lo, int hi, int k, int *m)
{
    int acc[4] = {1, 0, 0, 1}, x[4];
    for (int r = lo; r < hi; r++) {
        mat_of(r, k, x);
        int c0 = (acc[0] * x[0] + acc[1] * x[2]) % 1000, c1 = (acc[0] * x[1] + acc[1] * x[3]) % 1000;
        int c2 = (acc[2] * x[0] + acc[3] * x[2]) % 1000, c3 = (acc[2] * x[1] + acc[3] * x[3]) % 1000;
        acc[0] = c0; acc[1] = c1; acc[2] = c2; acc[3] = c3;
    }
    memcpy(m, acc, sizeof acc);
}

static MPI_Op matop;
static MPI_Datatype mat;

static void test_scan(int n)
{
    int *s = malloc((n + 1) * sizeof(int)), *r = malloc((n + 1) * sizeof(int));
    for (int i = 0; i < n; i++) { s[i] = rank + i; r[i] = -1; }
    int rc = MPI_Scan(s, r, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK_RC(rc, "MPI_Scan");
    int bad = 0;
    for (int i = 0; i < n; i++) bad += r[i] != rank * (rank + 1) / 2 + (rank + 1) * i;
    CHECK(bad == 0, "Scan SUM n=%d: %d wrong", n, bad);
    for (int i = 0; i < n; i++) r[i] = rank + i;
    rc = MPI_Scan(MPI_IN_PLACE, r, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK_RC(rc, "MPI_Scan in place");
    bad = 0;
    for (int i = 0; i < n; i++) bad += r[i] != rank * (rank + 1) / 2 + (rank + 1) * i;
    CHECK(bad == 0, "Scan SUM in place n=%d: %d wrong", n, bad);
    for (int i = 0; i < n; i++) r[i] = -1;
    rc = MPI_Exscan(s, r, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK_RC(rc, "MPI_Exscan");
    bad = 0;
    if (rank > 0)
        for (int i = 0; i < n; i++) bad += r[i] != (rank - 1) * rank / 2 + rank * i;
    CHECK(bad == 0, "Exscan SUM n=%d: %d wrong", n, bad);
    for (int i = 0; i < n; i++) r[i] = rank + i;
    rc = MPI_Exscan(MPI_IN_PLACE, r, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK_RC(rc, "MPI_Exscan in place");
    bad = 0;
    if (rank > 0)
        for (int i = 0; i < n; i++) bad += r[i] != (rank - 1) * rank / 2 + rank * i;
    CHECK(bad == 0, "Exscan SUM in place n=%d: %d wrong", n, bad);
    free(s); free(r);
}

static void test_scan_noncomm(void)
{
    int m[12], out[12], want[4];
    for (int k = 0; k < 3; k++) mat_of(rank, k, m + 4 * k);
    int rc = MPI_Scan(m, out, 3, mat, matop, MPI_COMM_WORLD);
    CHECK_RC(rc, "MPI_Scan non-commutative");
    for (int k = 0; k < 3; k++) {
        mat_prod(0, rank + 1, k, want);
        CHECK(memcmp(out + 4 * k, want, sizeof want) == 0, "Scan non-commutative [%d] wrong", k);
    }
    memset(out, 0, sizeof out);
    MPI_Request q;
    rc = MPI_Iexscan(m, out, 3, mat, matop, MPI_COMM_WORLD, &q);
    CHECK_RC(rc, "MPI_Iexscan non-commutative");
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    if (rank > 0)
        for (int k = 0; k < 3; k++) {
            mat_prod(0, rank, k, want);
            CHECK(memcmp(out + 4 * k, want, sizeof want) == 0, "Exscan non-commutative [%d] wrong",
                  k);
        }
    memcpy(out, m, sizeof m);
    rc = MPI_Iscan(MPI_IN_PLACE, out, 3, mat, matop, MPI_COMM_WORLD, &q);
    CHECK_RC(rc, "MPI_Iscan in place");
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    mat_prod(0, rank + 1, 2, want);
    CHECK(memcmp(out + 8, want, sizeof want) == 0, "Iscan non-commutative in place wrong");
}

static void test_reduce_scatter(int blk)
{
    int total = blk * size;
    int *s = malloc((total + 1) * sizeof(int)), *r = malloc((total + 1) * sizeof(int));
    for (int i = 0; i < total; i++) s[i] = rank + i;
    for (int i = 0; i <= total; i++) r[i] = -1;
    int rc = MPI_Reduce_scatter_block(s, r, blk, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK_RC(rc, "MPI_Reduce_scatter_block");
    int bad = 0;
    for (int i = 0; i < blk; i++) bad += r[i] != size * (size - 1) / 2 + size * (rank * blk + i);
    CHECK(bad == 0 && r[blk] == -1, "Reduce_scatter_block blk=%d: %d wrong", blk, bad);
    memcpy(r, s, total * sizeof(int));
    rc = MPI_Reduce_scatter_block(MPI_IN_PLACE, r, blk, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK_RC(rc, "MPI_Reduce_scatter_block in place");
    bad = 0;
    for (int i = 0; i < blk; i++) bad += r[i] != size * (size - 1) / 2 + size * (rank * blk + i);
    CHECK(bad == 0, "Reduce_scatter_block in place blk=%d: %d wrong", blk, bad);

    /* uneven counts: rank i gets i + blk % 3 elements */
    int *counts = malloc(size * sizeof(int));
    MPI_Count *ccounts = malloc(size * sizeof(MPI_Count));
    int sum = 0, off = 0;
    for (int i = 0; i < size; i++) {
        counts[i] = i + blk % 3;
        ccounts[i] = counts[i];
        if (i < rank) off += counts[i];
        sum += counts[i];
    }
    int *s2 = malloc((sum + 1) * sizeof(int)), *r2 = malloc((sum + 1) * sizeof(int));
    for (int i = 0; i < sum; i++) { s2[i] = rank * i; r2[i] = -1; }
    rc = MPI_Reduce_scatter(s2, r2, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK_RC(rc, "MPI_Reduce_scatter");
    bad = 0;
    for (int i = 0; i < counts[rank]; i++) bad += r2[i] != size * (size - 1) / 2 * (off + i);
    CHECK(bad == 0, "Reduce_scatter: %d wrong", bad);
    memcpy(r2, s2, sum * sizeof(int));
    MPI_Request q;
    rc = MPI_Ireduce_scatter_c(MPI_IN_PLACE, r2, ccounts, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q);
    CHECK_RC(rc, "MPI_Ireduce_scatter_c in place");
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    bad = 0;
    for (int i = 0; i < counts[rank]; i++) bad += r2[i] != size * (size - 1) / 2 * (off + i);
    CHECK(bad == 0, "Ireduce_scatter_c in place: %d wrong", bad);
    free(s); free(r); free(s2); free(r2); free(counts); free(ccounts);
}

static void test_reduce_scatter_noncomm(void)
{
    /* 2 matrices per rank */
    int total = 2 * size;
    int *m = malloc(4 * total * sizeof(int)), out[8], want[4];
    for (int e = 0; e < total; e++) mat_of(rank, e, m + 4 * e);
    int rc = MPI_Reduce_scatter_block(m, out, 2, mat, matop, MPI_COMM_WORLD);
    CHECK_RC(rc, "MPI_Reduce_scatter_block non-commutative");
    for (int k = 0; k < 2; k++) {
        mat_prod(0, size, 2 * rank + k, want);
        CHECK(memcmp(out + 4 * k, want, sizeof want) == 0,
              "Reduce_scatter_block non-commutative [%d] wrong", k);
    }
    int *counts = malloc(size * sizeof(int));
    for (int i = 0; i < size; i++) counts[i] = 2;
    MPI_Request q;
    rc = MPI_Ireduce_scatter(MPI_IN_PLACE, m, counts, mat, matop, MPI_COMM_WORLD, &q);
    CHECK_RC(rc, "MPI_Ireduce_scatter non-commutative in place");
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    for (int k = 0; k < 2; k++) {
        mat_prod(0, size, 2 * rank + k, want);
        CHECK(memcmp(m + 4 * k, want, sizeof want) == 0,
              "Ireduce_scatter non-commutative in place [%d] wrong", k);
    }
    free(m); free(counts);
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Op_create(matmul, 0, &matop);
    MPI_Type_contiguous(4, MPI_INT, &mat);
    MPI_Type_commit(&mat);
    int counts[] = {0, 1, 7, 10000};
    for (unsigned k = 0; k < sizeof counts / sizeof counts[0]; k++) {
        test_scan(counts[k]);
        test_reduce_scatter(counts[k]);
    }
    test_scan_noncomm();
    test_reduce_scatter_noncomm();
    MPI_Type_free(&mat);
    MPI_Op_free(&matop);
    MTest_Finalize(0);
    return 0;
}
