/* op_errors: error classes of the reduction calls, with MPI_ERRORS_RETURN: invalid op and
 * datatype combinations (MPI_ERR_OP), MPI_OP_NULL, MPI_DATATYPE_NULL (MPI_ERR_TYPE),
 * negative counts (MPI_ERR_COUNT), MPI_IN_PLACE and NULL buffers (MPI_ERR_BUFFER),
 * MPI_REPLACE and MPI_NO_OP outside accumulate (MPI_ERR_OP), freeing predefined ops
 * (MPI_ERR_OP). Every failed call leaves the output buffer alone. */
#include "mtest.h"

static void expect(int rc, int cls, const char *what)
{
    CHECK(rc != MPI_SUCCESS && MTest_Class(rc) == cls, "%s: got %s, want %s", what,
          MTest_Describe(rc), MTest_Class_name(cls));
}

int main(int argc, char **argv)
{
    double d[4] = {1, 2, 3, 4}, e[4] = {5, 6, 7, 8};
    int i2[4] = {1, 2, 3, 4}, j2[4] = {5, 6, 7, 8};
    int flag;
    MPI_Op op;

    MTest_Init(&argc, &argv);
    MTest_Errors_return_all();

    expect(MPI_Reduce_local(d, e, 4, MPI_DOUBLE, MPI_BAND), MPI_ERR_OP, "BAND on MPI_DOUBLE");
    expect(MPI_Reduce_local(i2, j2, 2, MPI_2INT, MPI_SUM), MPI_ERR_OP, "SUM on MPI_2INT");
    expect(MPI_Reduce_local(i2, j2, 4, MPI_INT, MPI_MAXLOC), MPI_ERR_OP, "MAXLOC on MPI_INT");
    expect(MPI_Reduce_local(i2, j2, 4, MPI_INT, MPI_MINLOC), MPI_ERR_OP, "MINLOC on MPI_INT");
    expect(MPI_Reduce_local(d, e, 2, MPI_C_DOUBLE_COMPLEX, MPI_MAX), MPI_ERR_OP,
           "MAX on MPI_C_DOUBLE_COMPLEX");
    expect(MPI_Reduce_local(i2, j2, 4, MPI_FLOAT, MPI_BXOR), MPI_ERR_OP, "BXOR on MPI_FLOAT");
    expect(MPI_Reduce_local(d, e, 4, MPI_DOUBLE, MPI_OP_NULL), MPI_ERR_OP, "MPI_OP_NULL");
    /* MPI_REPLACE and MPI_NO_OP are for the accumulate functions only. */
    expect(MPI_Reduce_local(i2, j2, 4, MPI_INT, MPI_REPLACE), MPI_ERR_OP, "MPI_REPLACE");
    expect(MPI_Reduce_local(i2, j2, 4, MPI_INT, MPI_NO_OP), MPI_ERR_OP, "MPI_NO_OP");
#ifdef HYMPI
    /* Checks MPICH 4.0 does not make: it asserts on LAND with MPI_DOUBLE, reports
     * MPI_DATATYPE_NULL as MPI_ERR_OP, accepts count -1 and dereferences NULL buffers. */
    expect(MPI_Reduce_local(d, e, 4, MPI_DOUBLE, MPI_LAND), MPI_ERR_OP, "LAND on MPI_DOUBLE");
    expect(MPI_Reduce_local(d, e, 4, MPI_DATATYPE_NULL, MPI_SUM), MPI_ERR_TYPE,
           "MPI_DATATYPE_NULL");
    expect(MPI_Reduce_local(d, e, -1, MPI_DOUBLE, MPI_SUM), MPI_ERR_COUNT, "count -1");
    expect(MPI_Reduce_local(NULL, e, 4, MPI_DOUBLE, MPI_SUM), MPI_ERR_BUFFER, "NULL inbuf");
    expect(MPI_Reduce_local(d, NULL, 4, MPI_DOUBLE, MPI_SUM), MPI_ERR_BUFFER, "NULL inoutbuf");
#endif
    expect(MPI_Reduce_local(MPI_IN_PLACE, e, 4, MPI_DOUBLE, MPI_SUM), MPI_ERR_BUFFER,
           "MPI_IN_PLACE");
    CHECK(e[0] == 5 && e[1] == 6 && e[2] == 7 && e[3] == 8, "a failed call changed the output");
    CHECK(j2[0] == 5 && j2[3] == 8, "a failed call changed the output");

    /* Predefined ops cannot be freed; MPI_OP_NULL is no op. */
    op = MPI_SUM;
    expect(MPI_Op_free(&op), MPI_ERR_OP, "MPI_Op_free(MPI_SUM)");
    CHECK(op == MPI_SUM, "a failed MPI_Op_free changed the handle");
    op = MPI_MAXLOC;
    expect(MPI_Op_free(&op), MPI_ERR_OP, "MPI_Op_free(MPI_MAXLOC)");
    op = MPI_OP_NULL;
    expect(MPI_Op_free(&op), MPI_ERR_OP, "MPI_Op_free(MPI_OP_NULL)");
    expect(MPI_Op_commutative(MPI_OP_NULL, &flag), MPI_ERR_OP, "MPI_Op_commutative(NULL op)");

    /* The valid calls still work after the errors. */
    CHECK_RC(MPI_Reduce_local(d, e, 4, MPI_DOUBLE, MPI_SUM), "MPI_Reduce_local");
    CHECK(e[0] == 6 && e[3] == 12, "sum after errors: %g %g", e[0], e[3]);

    return MTest_Finalize(mtest_errors);
}
