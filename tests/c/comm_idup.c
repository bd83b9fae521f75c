/* comm_idup: MPI_Comm_idup and MPI_Comm_idup_with_info.
 *
 *  - Several idups outstanding at once (of WORLD, of a dup, of SELF), completed in another
 *    order than started, with point-to-point traffic on the parents while they are pending.
 *  - The results are congruent to their parents, isolated from them, and usable.
 *  - Attributes with MPI_COMM_DUP_FN are copied by idup.
 *  - MPI_Test loops complete an idup (progress without a blocking wait). */
#include "mtest.h"

static int ring(MPI_Comm comm, int tag)
{
    int rank, size, errs = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size, in = -1;
    MPI_Sendrecv(&rank, 1, MPI_INT, right, tag, &in, 1, MPI_INT, left, tag, comm,
                 MPI_STATUS_IGNORE);
    if (in != left)
        errs++;
    return errs;
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    MPI_Comm d1, d2, d3, base;
    MPI_Request r[3];
    int rc, result, flag;

    rc = MPI_Comm_dup(MPI_COMM_WORLD, &base);
    CHECK_RC(rc, "MPI_Comm_dup");
    int keyval, value = 42, *got = NULL;
    MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &keyval, NULL);
    MPI_Comm_set_attr(base, keyval, &value);

    rc = MPI_Comm_idup(MPI_COMM_WORLD, &d1, &r[0]);
    CHECK_RC(rc, "MPI_Comm_idup(WORLD)");
    rc = MPI_Comm_idup_with_info(base, MPI_INFO_NULL, &d2, &r[1]);
    CHECK_RC(rc, "MPI_Comm_idup_with_info(base)");
    rc = MPI_Comm_idup(MPI_COMM_SELF, &d3, &r[2]);
    CHECK_RC(rc, "MPI_Comm_idup(SELF)");

    /* Traffic on the parents while the idups are pending. */
    CHECK(ring(MPI_COMM_WORLD, 3) == 0, "ring on WORLD during idup");
    CHECK(ring(base, 4) == 0, "ring on base during idup");

    /* Complete the SELF one by testing, then the others in reverse order. */
    flag = 0;
    for (long i = 0; !flag && i < 100000000L; i++)
        MPI_Test(&r[2], &flag, MPI_STATUS_IGNORE);
    CHECK(flag, "MPI_Test never completed the idup of SELF");
    rc = MPI_Wait(&r[1], MPI_STATUS_IGNORE);
    CHECK_RC(rc, "MPI_Wait(idup of base)");
    rc = MPI_Wait(&r[0], MPI_STATUS_IGNORE);
    CHECK_RC(rc, "MPI_Wait(idup of WORLD)");
    CHECK(r[0] == MPI_REQUEST_NULL && r[1] == MPI_REQUEST_NULL, "requests not freed");

    MPI_Comm_compare(MPI_COMM_WORLD, d1, &result);
    CHECK(result == MPI_CONGRUENT, "idup of WORLD: compare gave %d", result);
    MPI_Comm_compare(base, d2, &result);
    CHECK(result == MPI_CONGRUENT, "idup of base: compare gave %d", result);
    MPI_Comm_compare(MPI_COMM_SELF, d3, &result);
    CHECK(result == MPI_CONGRUENT, "idup of SELF: compare gave %d", result);
    CHECK(d1 != d2 && d2 != d3 && d1 != d3, "distinct handles");

    flag = 0;
    MPI_Comm_get_attr(d2, keyval, &got, &flag);
    CHECK(flag && got == &value, "idup did not copy the MPI_COMM_DUP_FN attribute");

    /* Isolation: a wildcard receive on base must not see traffic on its idup d2 (not on
     * WORLD: MTest_Finalize's traffic from ranks that finished early arrives there). */
    int rank, size, in = -1, x = 7;
    MPI_Comm_rank(d1, &rank);
    MPI_Comm_size(d1, &size);
    MPI_Request pre, s;
    MPI_Irecv(&in, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, base, &pre);
    CHECK(ring(d1, 5) == 0, "ring on the idup of WORLD");
    CHECK(ring(d2, 6) == 0, "ring on the idup of base");
    CHECK(ring(d3, 7) == 0, "ring on the idup of SELF");
    MPI_Test(&pre, &flag, MPI_STATUS_IGNORE);
    CHECK(!flag, "a wildcard receive on base matched traffic of a duplicate");
    MPI_Isend(&x, 1, MPI_INT, rank, 9, base, &s);
    MPI_Wait(&pre, MPI_STATUS_IGNORE);
    MPI_Wait(&s, MPI_STATUS_IGNORE);
    CHECK(in == 7, "the receive on base got %d", in);

    MPI_Comm_free(&d1);
    MPI_Comm_free(&d2);
    MPI_Comm_free(&d3);
    MPI_Comm_free(&base);
    MPI_Comm_free_keyval(&keyval);
    MTest_Finalize(mtest_errors);
    return 0;
}
