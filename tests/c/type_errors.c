/* type_errors: error classes of the datatype functions under MPI_ERRORS_RETURN: an uncommitted
 * type in a send or receive (MPI_ERR_TYPE), MPI_DATATYPE_NULL as old type (MPI_ERR_TYPE),
 * negative counts and block lengths (MPI_ERR_COUNT, as MPICH), invalid subarray and darray
 * arguments (MPI_ERR_ARG), freeing a predefined type (MPI_ERR_TYPE), a NULL newtype
 * (MPI_ERR_ARG); a committed type freed while a nonblocking send uses it still delivers, and
 * a message longer than the derived receive buffer is MPI_ERR_TRUNCATE. */
#include "mtest.h"
#include <string.h>

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    MTest_Errors_return_all();
    int rc, buf[64] = {0};
    MPI_Datatype t = MPI_DATATYPE_NULL;

    MPI_Type_vector(2, 1, 2, MPI_INT, &t);
    rc = MPI_Send(buf, 1, t, 0, 0, MPI_COMM_SELF);
    CHECK_CLASS(rc, MPI_ERR_TYPE, "send with an uncommitted type");
    MPI_Request req;
    rc = MPI_Irecv(buf, 1, t, 0, 0, MPI_COMM_SELF, &req);
    CHECK_CLASS(rc, MPI_ERR_TYPE, "receive with an uncommitted type");
    MPI_Type_free(&t);

    MPI_Datatype u;
    rc = MPI_Type_contiguous(2, MPI_DATATYPE_NULL, &u);
    CHECK_CLASS(rc, MPI_ERR_TYPE, "contiguous of MPI_DATATYPE_NULL");
    rc = MPI_Type_contiguous(-1, MPI_INT, &u);
    CHECK_CLASS(rc, MPI_ERR_COUNT, "contiguous with count -1");
    rc = MPI_Type_vector(-2, 1, 1, MPI_INT, &u);
    CHECK_CLASS(rc, MPI_ERR_COUNT, "vector with count -2");
    rc = MPI_Type_vector(2, -1, 1, MPI_INT, &u);
    CHECK_CLASS(rc, MPI_ERR_COUNT, "vector with blocklength -1");
    int bl[2] = {1, -3}, dp[2] = {0, 4};
    rc = MPI_Type_indexed(2, bl, dp, MPI_INT, &u);
    CHECK_CLASS(rc, MPI_ERR_COUNT, "indexed with a negative blocklength");
    rc = MPI_Type_contiguous(2, MPI_INT, NULL);
    CHECK_CLASS(rc, MPI_ERR_ARG, "NULL newtype");
    int sz[2] = {4, 4}, st[2] = {0, 0};
    int sub2[2] = {2, 2};
#ifndef MPICH_VERSION
    /* MPICH 4.0.2 accepts these */
    int sub[2] = {2, 5};
    rc = MPI_Type_create_subarray(2, sz, sub, st, MPI_ORDER_C, MPI_INT, &u);
    CHECK_CLASS(rc, MPI_ERR_ARG, "subarray larger than the array");
    int st2[2] = {3, 0};
    rc = MPI_Type_create_subarray(2, sz, sub2, st2, MPI_ORDER_C, MPI_INT, &u);
    CHECK_CLASS(rc, MPI_ERR_ARG, "subarray start past the end");
#endif

    rc = MPI_Type_create_subarray(2, sz, sub2, st, 12345, MPI_INT, &u);
    CHECK_CLASS(rc, MPI_ERR_ARG, "subarray with an invalid order");
    int gs[1] = {10}, di[1] = {MPI_DISTRIBUTE_BLOCK}, da[1] = {2}, ps[1] = {2};
    rc = MPI_Type_create_darray(2, 0, 1, gs, di, da, ps, MPI_ORDER_C, MPI_INT, &u);
    CHECK_CLASS(rc, MPI_ERR_ARG, "darray blocks of 2 x 2 processes do not cover 10");
#ifndef MPICH_VERSION
    /* MPICH 4.0.2 divides by zero here */
    int ps3[1] = {3};
    int da2[1] = {MPI_DISTRIBUTE_DFLT_DARG};
    rc = MPI_Type_create_darray(2, 0, 1, gs, di, da2, ps3, MPI_ORDER_C, MPI_INT, &u);
    CHECK_CLASS(rc, MPI_ERR_ARG, "darray grid of 3 with size 2");
#endif
    MPI_Datatype pre = MPI_INT;
    rc = MPI_Type_free(&pre);
    CHECK_CLASS(rc, MPI_ERR_TYPE, "freeing MPI_INT");
    int count = 0;
    rc = MPI_Type_size(MPI_DATATYPE_NULL, &count);
    CHECK_CLASS(rc, MPI_ERR_TYPE, "size of MPI_DATATYPE_NULL");
    rc = MPI_Send(buf, -1, MPI_INT, 0, 0, MPI_COMM_SELF);
    CHECK_CLASS(rc, MPI_ERR_COUNT, "send with count -1");

    /* freed while in use: the pending send still delivers its layout */
    MPI_Type_vector(4, 1, 3, MPI_INT, &t);
    MPI_Type_commit(&t);
    for (int i = 0; i < 64; i++)
        buf[i] = i;
    rc = MPI_Issend(buf, 1, t, 0, 4, MPI_COMM_SELF, &req);
    CHECK_RC(rc, "Issend");
    MPI_Type_free(&t);
    int got[4] = {0};
    MPI_Recv(got, 4, MPI_INT, 0, 4, MPI_COMM_SELF, MPI_STATUS_IGNORE);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    CHECK(got[0] == 0 && got[1] == 3 && got[2] == 6 && got[3] == 9, "data of a freed type %d %d %d %d",
          got[0], got[1], got[2], got[3]);

    /* truncation into a derived receive */
    MPI_Type_vector(2, 1, 2, MPI_INT, &t);
    MPI_Type_commit(&t);
    int big[8] = {1, 2, 3, 4, 5, 6, 7, 8}, small[8] = {0};
    MPI_Isend(big, 6, MPI_INT, 0, 6, MPI_COMM_SELF, &req);
    MPI_Status s;
    rc = MPI_Recv(small, 2, t, 0, 6, MPI_COMM_SELF, &s);
    CHECK_CLASS(rc, MPI_ERR_TRUNCATE, "6 ints into 2 vectors of 2");
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    CHECK(small[0] == 1 && small[2] == 2 && small[3] == 3 && small[5] == 4 && small[1] == 0,
          "truncated data placed");
    MPI_Type_free(&t);
    return MTest_Finalize(0);
}
