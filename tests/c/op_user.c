/* op_user: user-defined operations (MPI_Op_create, MPI_Op_create_c), MPI_Op_commutative and
 * MPI_Op_free, applied with MPI_Reduce_local.
 *
 * - A non-commutative op f(a, b) = 2a + b checks the operand order: the function is called
 *   as f(invec, inoutvec) with inoutvec[i] = invec[i] op inoutvec[i].
 * - The function receives the count and the datatype handle, and may call MPI itself
 *   (MPI_Type_size on the datatype it was given).
 * - A user op on a pair type (MPI_DOUBLE_INT) walks the C struct layout.
 * - Commutativity flags as given; predefined ops are commutative. */
#include "mtest.h"

static long calls, last_len;
static MPI_Datatype last_type;
static int inner_size;

static void twice_plus(void *invec, void *inoutvec, int *len, MPI_Datatype *dt)
{
    const int *a = invec;
    int *b = inoutvec;
    calls++;
    last_len = *len;
    last_type = *dt;
    MPI_Type_size(*dt, &inner_size); /* an MPI call from inside the user function */
    for (int i = 0; i < *len; i++) b[i] = 2 * a[i] + b[i];
}

static void plus_d(void *invec, void *inoutvec, int *len, MPI_Datatype *dt)
{
    const double *a = invec;
    double *b = inoutvec;
    (void)dt;
    calls++;
    for (int i = 0; i < *len; i++) b[i] += a[i];
}

typedef struct { double v; int i; } dint;
/* Keep the entry with the smaller index, add the values. */
static void pair_op(void *invec, void *inoutvec, int *len, MPI_Datatype *dt)
{
    const dint *a = invec;
    dint *b = inoutvec;
    (void)dt;
    for (int k = 0; k < *len; k++) {
        b[k].v = a[k].v + b[k].v;
        if (a[k].i < b[k].i) b[k].i = a[k].i;
    }
}

#if MPI_VERSION >= 4
static MPI_Count last_len_c;
static void twice_plus_c(void *invec, void *inoutvec, MPI_Count *len, MPI_Datatype *dt)
{
    const int *a = invec;
    int *b = inoutvec;
    (void)dt;
    calls++;
    last_len_c = *len;
    for (MPI_Count i = 0; i < *len; i++) b[i] = 2 * a[i] + b[i];
}
#endif

int main(int argc, char **argv)
{
    MPI_Op op, op2, op3;
    int flag, rc;
    long n = 1000003;
    int *a, *b;

    MTest_Init(&argc, &argv);
    MTest_Errors_return_all();
    a = malloc(n * sizeof *a);
    b = malloc(n * sizeof *b);

    /* Non-commutative op: order of operands. */
    CHECK_RC(MPI_Op_create(twice_plus, 0, &op), "MPI_Op_create");
    CHECK_RC(MPI_Op_commutative(op, &flag), "MPI_Op_commutative");
    CHECK(flag == 0, "commute flag %d, want 0", flag);
    for (long i = 0; i < n; i++) {
        a[i] = (int)(i % 1000);
        b[i] = (int)(i % 7);
    }
    calls = 0;
    CHECK_RC(MPI_Reduce_local(a, b, (int)n, MPI_INT, op), "MPI_Reduce_local (user op)");
    CHECK(calls >= 1, "the user function was not called");
    CHECK(last_type == MPI_INT, "the user function got another datatype");
    CHECK(inner_size == (int)sizeof(int), "MPI_Type_size inside the op gave %d", inner_size);
    if (calls == 1) CHECK(last_len == n, "len %ld, want %ld", last_len, n);
    {
        long bad = 0;
        for (long i = 0; i < n; i++) bad += b[i] != 2 * (int)(i % 1000) + (int)(i % 7);
        CHECK(bad == 0, "non-commutative op: %ld wrong elements (operand order?)", bad);
    }
    /* A small case spelled out: in = {1, 2}, inout = {10, 20} -> {12, 24}. */
    {
        int x[2] = {1, 2}, y[2] = {10, 20};
        CHECK_RC(MPI_Reduce_local(x, y, 2, MPI_INT, op), "MPI_Reduce_local (2)");
        CHECK(y[0] == 12 && y[1] == 24, "got {%d, %d}, want {12, 24}", y[0], y[1]);
        CHECK(x[0] == 1 && x[1] == 2, "the input buffer changed");
    }
    /* Zero elements: nothing changes. */
    {
        int x = 5, y = 7;
        CHECK_RC(MPI_Reduce_local(&x, &y, 0, MPI_INT, op), "MPI_Reduce_local (0)");
        CHECK(y == 7, "count 0 changed the output");
    }
    CHECK_RC(MPI_Op_free(&op), "MPI_Op_free");
    CHECK(op == MPI_OP_NULL, "MPI_Op_free did not set MPI_OP_NULL");

    /* Commutative op on doubles. */
    CHECK_RC(MPI_Op_create(plus_d, 1, &op2), "MPI_Op_create (commutative)");
    CHECK_RC(MPI_Op_commutative(op2, &flag), "MPI_Op_commutative");
    CHECK(flag != 0, "commute flag %d, want true", flag);
    {
        double x[7], y[7];
        for (int i = 0; i < 7; i++) {
            x[i] = i;
            y[i] = 0.5 * i;
        }
        CHECK_RC(MPI_Reduce_local(x, y, 7, MPI_DOUBLE, op2), "MPI_Reduce_local (double)");
        for (int i = 0; i < 7; i++) CHECK(y[i] == 1.5 * i, "y[%d] = %g", i, y[i]);
    }

    /* User op on a pair type: walks the C struct (extent 16). */
    CHECK_RC(MPI_Op_create(pair_op, 1, &op3), "MPI_Op_create (pair)");
    {
        dint x[5], y[5];
        for (int k = 0; k < 5; k++) {
            x[k].v = k;
            x[k].i = 10 - k;
            y[k].v = 100;
            y[k].i = k + 5;
        }
        CHECK_RC(MPI_Reduce_local(x, y, 5, MPI_DOUBLE_INT, op3), "MPI_Reduce_local (pair)");
        for (int k = 0; k < 5; k++)
            CHECK(y[k].v == 100 + k && y[k].i == (10 - k < k + 5 ? 10 - k : k + 5),
                  "pair %d: {%g, %d}", k, y[k].v, y[k].i);
    }
    CHECK_RC(MPI_Op_free(&op3), "MPI_Op_free (pair)");
    CHECK_RC(MPI_Op_free(&op2), "MPI_Op_free (commutative)");

    /* Predefined ops are commutative. */
    {
        MPI_Op pre[] = {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN, MPI_LAND, MPI_LOR, MPI_LXOR,
                        MPI_BAND, MPI_BOR, MPI_BXOR, MPI_MAXLOC, MPI_MINLOC};
        for (unsigned k = 0; k < sizeof pre / sizeof pre[0]; k++) {
            flag = -1;
            rc = MPI_Op_commutative(pre[k], &flag);
            CHECK(rc == MPI_SUCCESS && flag == 1, "predefined op %u: rc %d flag %d", k, rc,
                  flag);
        }
    }

#if MPI_VERSION >= 4
    /* MPI_Op_create_c: the function gets an MPI_Count length. */
    {
        MPI_Op opc;
        CHECK_RC(MPI_Op_create_c(twice_plus_c, 0, &opc), "MPI_Op_create_c");
        for (long i = 0; i < n; i++) {
            a[i] = (int)(i % 1000);
            b[i] = (int)(i % 7);
        }
        calls = 0;
        CHECK_RC(MPI_Reduce_local_c(a, b, (MPI_Count)n, MPI_INT, opc), "MPI_Reduce_local_c");
        if (calls == 1) CHECK(last_len_c == n, "len %lld", (long long)last_len_c);
        long bad = 0;
        for (long i = 0; i < n; i++) bad += b[i] != 2 * (int)(i % 1000) + (int)(i % 7);
        CHECK(bad == 0, "MPI_Op_create_c op: %ld wrong elements", bad);
        CHECK_RC(MPI_Op_commutative(opc, &flag), "MPI_Op_commutative (c)");
        CHECK(flag == 0, "commute flag %d, want 0", flag);
        CHECK_RC(MPI_Op_free(&opc), "MPI_Op_free (c)");
    }
#endif

    free(a);
    free(b);
    return MTest_Finalize(mtest_errors);
}
