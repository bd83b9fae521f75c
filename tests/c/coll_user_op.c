/* coll_user_op: user-defined reduction operations in collectives.
 *
 * Non-commutative: the product of 2x2 integer matrices modulo 10007 (associative, not
 * commutative), each matrix one element of MPI_Type_contiguous(4, MPI_INT), the op made
 * with MPI_Op_create(commute = 0) (MPI_Op_commutative says 0).  The standard fixes the
 * order for non-commutative ops (MPI-4.0 section 6.9.5): the result is
 * a0 * a1 * ... * a(p-1) in rank order, the op being called as inoutvec = invec * inoutvec
 * with invec the earlier operand.  Checked with MPI_Reduce to every root, MPI_Allreduce
 * (also with MPI_IN_PLACE), MPI_Scan (rank r: a0 * ... * ar) and MPI_Exscan (rank r > 0:
 * a0 * ... * a(r-1)), for 1, 5 and 1000 matrices per process, on WORLD and on WORLD
 * reversed (split with key -rank, so rank order differs from world order).  The reference is
 * computed locally; the test also checks that the reversed product differs, so that the
 * data tell the orders apart.  The op checks the datatype handle it is given.
 *
 * Commutative: struct { double d; int i; } (4 bytes of padding), described with
 * MPI_Type_create_struct and MPI_Type_create_resized to sizeof the struct, op (d: sum,
 * i: max) with commute = 1; MPI_Reduce to the first and last rank and MPI_Allreduce of 1, 7
 * and 3000 elements; the padding bytes of the receive buffer are not written. */
#include "mtest.h"
#include <stddef.h>

#define P 10007

typedef struct {
    int m[4]; /* row-major a b / c d */
} mat;

static MPI_Datatype mat_type;
static int wrong_type_seen = 0;

static void mul(const mat *x, const mat *y, mat *out)
{
    mat r;
    r.m[0] = (int)(((long long)x->m[0] * y->m[0] + (long long)x->m[1] * y->m[2]) % P);
    r.m[1] = (int)(((long long)x->m[0] * y->m[1] + (long long)x->m[1] * y->m[3]) % P);
    r.m[2] = (int)(((long long)x->m[2] * y->m[0] + (long long)x->m[3] * y->m[2]) % P);
    r.m[3] = (int)(((long long)x->m[2] * y->m[1] + (long long)x->m[3] * y->m[3]) % P);
    *out = r;
}

static void matmul_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    if (*dt != mat_type)
        wrong_type_seen++;
    mat *a = in, *b = inout;
    for (int k = 0; k < *len; k++)
        mul(&a[k], &b[k], &b[k]);
}

/* Matrix of the process with world rank w, element k. */
static mat elem(int w, int k)
{
    mat x;
    x.m[0] = (w * 3 + 2) % P;
    x.m[1] = (w * 5 + k + 1) % P;
    x.m[2] = ((k + w) % 7 + 1) % P;
    x.m[3] = (w * w + 1) % P;
    return x;
}

static int same(const mat *x, const mat *y)
{
    return memcmp(x->m, y->m, sizeof x->m) == 0;
}

static int crank, csize, reversed;

static int world_of(int r)
{
    return reversed ? mtest_size - 1 - r : r;
}

/* Product of the elements k of comm ranks lo..hi (inclusive), in rank order. */
static mat product(int lo, int hi, int k)
{
    mat r = elem(world_of(lo), k);
    for (int q = lo + 1; q <= hi; q++) {
        mat e = elem(world_of(q), k);
        mul(&r, &e, &r);
    }
    return r;
}

static void check_mats(const mat *got, int n, int lo, int hi, const char *what, int root)
{
    int bad = 0;
    for (int k = 0; k < n && bad < 3; k++) {
        mat want = product(lo, hi, k);
        if (!CHECK(same(&got[k], &want),
                   "%s (%s, root %d, %d elements): element %d = [%d %d; %d %d], want product "
                   "of ranks %d..%d = [%d %d; %d %d]",
                   what, reversed ? "reversed WORLD" : "WORLD", root, n, k, got[k].m[0],
                   got[k].m[1], got[k].m[2], got[k].m[3], lo, hi, want.m[0], want.m[1],
                   want.m[2], want.m[3]))
            bad++;
    }
}

static void noncommutative(MPI_Comm comm, MPI_Op op)
{
    static const int counts[] = {1, 5, 1000};
    MPI_Comm_rank(comm, &crank);
    MPI_Comm_size(comm, &csize);
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        int n = counts[c], rc;
        mat *in = malloc(n * sizeof(mat)), *out = malloc(n * sizeof(mat));
        for (int k = 0; k < n; k++)
            in[k] = elem(world_of(crank), k);

        for (int root = 0; root < csize; root++) {
            memset(out, 0xff, n * sizeof(mat));
            rc = MPI_Reduce(in, out, n, mat_type, op, root, comm);
            CHECK_RC(rc, "MPI_Reduce (matrix product)");
            if (crank == root)
                check_mats(out, n, 0, csize - 1, "MPI_Reduce", root);
        }

        memset(out, 0xff, n * sizeof(mat));
        rc = MPI_Allreduce(in, out, n, mat_type, op, comm);
        CHECK_RC(rc, "MPI_Allreduce (matrix product)");
        check_mats(out, n, 0, csize - 1, "MPI_Allreduce", -1);

        memcpy(out, in, n * sizeof(mat));
        rc = MPI_Allreduce(MPI_IN_PLACE, out, n, mat_type, op, comm);
        CHECK_RC(rc, "MPI_Allreduce(MPI_IN_PLACE) (matrix product)");
        check_mats(out, n, 0, csize - 1, "MPI_Allreduce(MPI_IN_PLACE)", -1);

        memset(out, 0xff, n * sizeof(mat));
        rc = MPI_Scan(in, out, n, mat_type, op, comm);
        CHECK_RC(rc, "MPI_Scan (matrix product)");
        check_mats(out, n, 0, crank, "MPI_Scan", -1);

        memset(out, 0xff, n * sizeof(mat));
        rc = MPI_Exscan(in, out, n, mat_type, op, comm);
        CHECK_RC(rc, "MPI_Exscan (matrix product)");
        if (crank > 0)
            check_mats(out, n, 0, crank - 1, "MPI_Exscan", -1);

        /* The data distinguish the orders: the reversed product differs. */
        if (csize > 1 && c == 0) {
            mat fwd = product(0, csize - 1, 0);
            mat rev = elem(world_of(csize - 1), 0);
            for (int q = csize - 2; q >= 0; q--) {
                mat e = elem(world_of(q), 0);
                mul(&rev, &e, &rev);
            }
            CHECK(!same(&fwd, &rev), "test data: forward and reversed products agree");
        }
        free(in);
        free(out);
    }
}

/* ---- commutative op on a padded struct ---- */

typedef struct {
    double d;
    int i;
} sd;

static MPI_Datatype sd_type;

static void sd_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    if (*dt != sd_type)
        wrong_type_seen++;
    sd *a = in, *b = inout;
    for (int k = 0; k < *len; k++) {
        b[k].d += a[k].d;
        if (a[k].i > b[k].i)
            b[k].i = a[k].i;
    }
}

static sd sd_elem(int w, int k)
{
    sd x;
    memset(&x, 0xcd, sizeof x); /* padding differs from the receive buffer's */
    x.d = w * 1.5 + k * 0.25;
    x.i = (w * 37 + k * 11) % 101;
    return x;
}

static void check_sd(const sd *got, int n, const char *what, int root)
{
    int bad = 0;
    for (int k = 0; k < n && bad < 3; k++) {
        double wd = 0;
        int wi = -1;
        for (int w = 0; w < mtest_size; w++) {
            sd e = sd_elem(w, k);
            wd += e.d;
            if (e.i > wi)
                wi = e.i;
        }
        if (!CHECK(got[k].d == wd && got[k].i == wi,
                   "%s root %d, %d elements: element %d = {%g, %d}, want {%g, %d}", what, root,
                   n, k, got[k].d, got[k].i, wd, wi))
            bad++;
        const unsigned char *pad = (const unsigned char *)&got[k] + offsetof(sd, i) + sizeof(int);
        size_t npad = sizeof(sd) - offsetof(sd, i) - sizeof(int);
        for (size_t b = 0; b < npad; b++)
            if (!CHECK(pad[b] == 0xab, "%s root %d: padding byte %zu of element %d written", what,
                       root, b, k)) {
                bad++;
                break;
            }
    }
}

static void commutative(void)
{
    int bl[2] = {1, 1};
    MPI_Aint dp[2] = {offsetof(sd, d), offsetof(sd, i)};
    MPI_Datatype ty[2] = {MPI_DOUBLE, MPI_INT}, tmp;
    MPI_Type_create_struct(2, bl, dp, ty, &tmp);
    MPI_Type_create_resized(tmp, 0, sizeof(sd), &sd_type);
    MPI_Type_free(&tmp);
    MPI_Type_commit(&sd_type);
    MPI_Aint lb, ext;
    MPI_Type_get_extent(sd_type, &lb, &ext);
    CHECK(lb == 0 && ext == (MPI_Aint)sizeof(sd), "struct type: lb %ld extent %ld", (long)lb,
          (long)ext);

    MPI_Op op;
    int rc = MPI_Op_create(sd_op, 1, &op);
    CHECK_RC(rc, "MPI_Op_create(commute = 1)");
    int commute = -1;
    MPI_Op_commutative(op, &commute);
    CHECK(commute == 1, "MPI_Op_commutative of a commutative op: %d", commute);

    static const int counts[] = {1, 7, 3000};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        int n = counts[c];
        sd *in = malloc(n * sizeof(sd)), *out = malloc(n * sizeof(sd));
        for (int k = 0; k < n; k++)
            in[k] = sd_elem(mtest_rank, k);
        int roots[2] = {0, mtest_size - 1};
        for (int j = 0; j < 2; j++) {
            memset(out, 0xab, n * sizeof(sd));
            rc = MPI_Reduce(in, out, n, sd_type, op, roots[j], MPI_COMM_WORLD);
            CHECK_RC(rc, "MPI_Reduce (struct op)");
            if (mtest_rank == roots[j])
                check_sd(out, n, "MPI_Reduce (struct op)", roots[j]);
        }
        memset(out, 0xab, n * sizeof(sd));
        rc = MPI_Allreduce(in, out, n, sd_type, op, MPI_COMM_WORLD);
        CHECK_RC(rc, "MPI_Allreduce (struct op)");
        check_sd(out, n, "MPI_Allreduce (struct op)", -1);
        free(in);
        free(out);
    }
    MPI_Op_free(&op);
    CHECK(op == MPI_OP_NULL, "MPI_Op_free did not set MPI_OP_NULL");
    MPI_Type_free(&sd_type);
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    MPI_Type_contiguous(4, MPI_INT, &mat_type);
    MPI_Type_commit(&mat_type);
    MPI_Op op;
    int rc = MPI_Op_create(matmul_op, 0, &op);
    CHECK_RC(rc, "MPI_Op_create(commute = 0)");
    int commute = -1;
    MPI_Op_commutative(op, &commute);
    CHECK(commute == 0, "MPI_Op_commutative of a non-commutative op: %d", commute);

    reversed = 0;
    noncommutative(MPI_COMM_WORLD, op);
    MPI_Comm rev;
    MPI_Comm_split(MPI_COMM_WORLD, 0, -mtest_rank, &rev);
    reversed = 1;
    noncommutative(rev, op);
    MPI_Comm_free(&rev);
    MPI_Op_free(&op);
    MPI_Type_free(&mat_type);

    commutative();
    CHECK(wrong_type_seen == 0, "user ops were called %d times with another datatype handle",
          wrong_type_seen);
    return MTest_Finalize(0);
}
