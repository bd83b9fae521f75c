/* coll_errors: argument errors of collective calls, with MPI_ERRORS_RETURN.
 *
 * Every process makes the same erroneous call, so that each detects the error locally:
 *   - invalid root (the size, size + 7, -1000) in MPI_Bcast, MPI_Ibcast, MPI_Reduce,
 *     MPI_Gather, MPI_Scatter -> MPI_ERR_ROOT;
 *   - negative count in MPI_Bcast, MPI_Allreduce, MPI_Reduce, MPI_Allgather,
 *     MPI_Alltoall, MPI_Gather, MPI_Scatter, MPI_Iallreduce -> MPI_ERR_COUNT;
 *   - MPI_DATATYPE_NULL in MPI_Bcast, MPI_Allreduce, MPI_Allgather, MPI_Alltoall, and an
 *     uncommitted derived datatype in MPI_Bcast -> MPI_ERR_TYPE;
 *   - MPI_OP_NULL in MPI_Allreduce, MPI_Reduce, MPI_Iallreduce, and MPI_BAND on MPI_DOUBLE
 *     (a predefined op not defined for the type) in MPI_Allreduce, MPI_Reduce -> MPI_ERR_OP;
 *   - MPI_COMM_NULL in MPI_Barrier, MPI_Ibarrier, MPI_Bcast, MPI_Allreduce -> MPI_ERR_COMM.
 * Receive buffers are not written by a failed call (the request of a failed nonblocking
 * call is undefined and not looked at).  Afterwards WORLD still works (barrier, bcast,
 * allreduce).  Reference-MPI deviations are relaxed at the spot (MPICH 4.0.2 does not check
 * the count of MPI_Allreduce/MPI_Reduce/MPI_Iallreduce; MPICH and Open MPI report
 * MPI_DATATYPE_NULL in MPI_Allreduce as MPI_ERR_OP). */
#include "mtest.h"

#define N 4

static void fill(int *b, int v)
{
    for (int i = 0; i < N; i++)
        b[i] = v;
}

static void untouched(const int *b, int v, const char *what)
{
    for (int i = 0; i < N; i++)
        if (!CHECK(b[i] == v, "%s: buffer [%d] = %d written by a failed call", what, i, b[i]))
            break;
}

static void bad_roots(void)
{
    int p = mtest_size, rc;
    int sbuf[N * 16], rbuf[N * 16];
    int roots[3] = {p, p + 7, -1000};
    char what[128];
    for (int k = 0; k < 3; k++) {
        int root = roots[k];
        fill(rbuf, -3);
        rc = MPI_Bcast(rbuf, N, MPI_INT, root, MPI_COMM_WORLD);
        snprintf(what, sizeof what, "MPI_Bcast root %d of %d", root, p);
        CHECK_CLASS(rc, MPI_ERR_ROOT, what);
        untouched(rbuf, -3, what);

        MPI_Request req = MPI_REQUEST_NULL;
        rc = MPI_Ibcast(rbuf, N, MPI_INT, root, MPI_COMM_WORLD, &req);
        snprintf(what, sizeof what, "MPI_Ibcast root %d of %d", root, p);
        CHECK_CLASS(rc, MPI_ERR_ROOT, what);

        fill(sbuf, 1);
        fill(rbuf, -3);
        rc = MPI_Reduce(sbuf, rbuf, N, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
        snprintf(what, sizeof what, "MPI_Reduce root %d of %d", root, p);
        CHECK_CLASS(rc, MPI_ERR_ROOT, what);
        untouched(rbuf, -3, what);

        rc = MPI_Gather(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, root, MPI_COMM_WORLD);
        snprintf(what, sizeof what, "MPI_Gather root %d of %d", root, p);
        CHECK_CLASS(rc, MPI_ERR_ROOT, what);

        fill(rbuf, -3);
        rc = MPI_Scatter(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, root, MPI_COMM_WORLD);
        snprintf(what, sizeof what, "MPI_Scatter root %d of %d", root, p);
        CHECK_CLASS(rc, MPI_ERR_ROOT, what);
        untouched(rbuf, -3, what);
    }
}

static void bad_counts(void)
{
    int rc;
    int sbuf[N * 16], rbuf[N * 16];
    fill(sbuf, 1);
    fill(rbuf, -3);
    rc = MPI_Bcast(rbuf, -1, MPI_INT, 0, MPI_COMM_WORLD);
    CHECK_CLASS(rc, MPI_ERR_COUNT, "MPI_Bcast count -1");
    untouched(rbuf, -3, "MPI_Bcast count -1");
#ifndef MPICH_VERSION
    /* MPICH 4.0.2 does not check the count of MPI_Allreduce and MPI_Reduce: a negative
     * count crashes (segmentation fault, or a yaksa assertion on a memcpy of length -4). */
    rc = MPI_Allreduce(sbuf, rbuf, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK_CLASS(rc, MPI_ERR_COUNT, "MPI_Allreduce count -1");
    untouched(rbuf, -3, "MPI_Allreduce count -1");
    rc = MPI_Reduce(sbuf, rbuf, -5, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    CHECK_CLASS(rc, MPI_ERR_COUNT, "MPI_Reduce count -5");
#endif
    rc = MPI_Allgather(sbuf, -1, MPI_INT, rbuf, 1, MPI_INT, MPI_COMM_WORLD);
    CHECK_CLASS(rc, MPI_ERR_COUNT, "MPI_Allgather sendcount -1");
    rc = MPI_Alltoall(sbuf, -1, MPI_INT, rbuf, -1, MPI_INT, MPI_COMM_WORLD);
    CHECK_CLASS(rc, MPI_ERR_COUNT, "MPI_Alltoall counts -1");
    rc = MPI_Gather(sbuf, -1, MPI_INT, rbuf, 1, MPI_INT, 0, MPI_COMM_WORLD);
    CHECK_CLASS(rc, MPI_ERR_COUNT, "MPI_Gather sendcount -1");
    rc = MPI_Scatter(sbuf, 1, MPI_INT, rbuf, -1, MPI_INT, 0, MPI_COMM_WORLD);
    CHECK_CLASS(rc, MPI_ERR_COUNT, "MPI_Scatter recvcount -1");
    MPI_Request req = MPI_REQUEST_NULL;
#ifndef MPICH_VERSION
    /* MPICH 4.0.2 returns class MPI_ERR_OTHER here with several processes and crashes
     * (segmentation fault) with one. */
    rc = MPI_Iallreduce(sbuf, rbuf, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
    CHECK_CLASS(rc, MPI_ERR_COUNT, "MPI_Iallreduce count -1");
#else
    (void)req;
#endif
}

static void bad_types(void)
{
    int rc;
    int sbuf[N * 16], rbuf[N * 16];
    fill(sbuf, 1);
    fill(rbuf, -3);
    rc = MPI_Bcast(rbuf, N, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD);
    CHECK_CLASS(rc, MPI_ERR_TYPE, "MPI_Bcast MPI_DATATYPE_NULL");
    untouched(rbuf, -3, "MPI_Bcast MPI_DATATYPE_NULL");
    rc = MPI_Allreduce(sbuf, rbuf, N, MPI_DATATYPE_NULL, MPI_SUM, MPI_COMM_WORLD);
#if defined(MPICH_VERSION) || defined(OPEN_MPI)
    /* MPICH 4.0.2 and Open MPI 4.1 check the op against the type first and say
     * MPI_ERR_OP. */
    if (MTest_Class(rc) != MPI_ERR_OP)
#endif
        CHECK_CLASS(rc, MPI_ERR_TYPE, "MPI_Allreduce MPI_DATATYPE_NULL");
    untouched(rbuf, -3, "MPI_Allreduce MPI_DATATYPE_NULL");
    rc = MPI_Allgather(sbuf, 1, MPI_DATATYPE_NULL, rbuf, 1, MPI_INT, MPI_COMM_WORLD);
    CHECK_CLASS(rc, MPI_ERR_TYPE, "MPI_Allgather send type MPI_DATATYPE_NULL");
    rc = MPI_Alltoall(sbuf, 1, MPI_INT, rbuf, 1, MPI_DATATYPE_NULL, MPI_COMM_WORLD);
    CHECK_CLASS(rc, MPI_ERR_TYPE, "MPI_Alltoall receive type MPI_DATATYPE_NULL");
    MPI_Datatype unc;
    MPI_Type_contiguous(2, MPI_INT, &unc);
    rc = MPI_Bcast(rbuf, 1, unc, 0, MPI_COMM_WORLD);
    CHECK_CLASS(rc, MPI_ERR_TYPE, "MPI_Bcast with an uncommitted datatype");
    untouched(rbuf, -3, "MPI_Bcast with an uncommitted datatype");
    MPI_Type_free(&unc);
}

static void bad_ops(void)
{
    int rc;
    int sbuf[N * 16], rbuf[N * 16];
    fill(sbuf, 1);
    fill(rbuf, -3);
    rc = MPI_Allreduce(sbuf, rbuf, N, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD);
    CHECK_CLASS(rc, MPI_ERR_OP, "MPI_Allreduce MPI_OP_NULL");
    untouched(rbuf, -3, "MPI_Allreduce MPI_OP_NULL");
    rc = MPI_Reduce(sbuf, rbuf, N, MPI_INT, MPI_OP_NULL, 0, MPI_COMM_WORLD);
    CHECK_CLASS(rc, MPI_ERR_OP, "MPI_Reduce MPI_OP_NULL");
    MPI_Request req = MPI_REQUEST_NULL;
    rc = MPI_Iallreduce(sbuf, rbuf, N, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD, &req);
    CHECK_CLASS(rc, MPI_ERR_OP, "MPI_Iallreduce MPI_OP_NULL");

    double ds[N] = {1.0, 2.0, 3.0, 4.0}, dr[N] = {-3.0, -3.0, -3.0, -3.0};
    rc = MPI_Allreduce(ds, dr, N, MPI_DOUBLE, MPI_BAND, MPI_COMM_WORLD);
    CHECK_CLASS(rc, MPI_ERR_OP, "MPI_Allreduce MPI_BAND on MPI_DOUBLE");
    for (int i = 0; i < N; i++)
        if (!CHECK(dr[i] == -3.0, "MPI_Allreduce MPI_BAND on MPI_DOUBLE wrote [%d]", i))
            break;
    rc = MPI_Reduce(ds, dr, N, MPI_DOUBLE, MPI_BAND, mtest_size - 1, MPI_COMM_WORLD);
    CHECK_CLASS(rc, MPI_ERR_OP, "MPI_Reduce MPI_BAND on MPI_DOUBLE");
}

static void bad_comms(void)
{
    int rc;
    int buf[N];
    fill(buf, -3);
    rc = MPI_Barrier(MPI_COMM_NULL);
    CHECK_CLASS(rc, MPI_ERR_COMM, "MPI_Barrier(MPI_COMM_NULL)");
    MPI_Request req = MPI_REQUEST_NULL;
    rc = MPI_Ibarrier(MPI_COMM_NULL, &req);
    CHECK_CLASS(rc, MPI_ERR_COMM, "MPI_Ibarrier(MPI_COMM_NULL)");
    rc = MPI_Bcast(buf, N, MPI_INT, 0, MPI_COMM_NULL);
    CHECK_CLASS(rc, MPI_ERR_COMM, "MPI_Bcast on MPI_COMM_NULL");
    untouched(buf, -3, "MPI_Bcast on MPI_COMM_NULL");
    int one = 1, out = -3;
    rc = MPI_Allreduce(&one, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_NULL);
    CHECK_CLASS(rc, MPI_ERR_COMM, "MPI_Allreduce on MPI_COMM_NULL");
    CHECK(out == -3, "MPI_Allreduce on MPI_COMM_NULL wrote the result");
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    MTest_Errors_return_all();
    bad_roots();
    bad_counts();
    bad_types();
    bad_ops();
    bad_comms();

    /* WORLD still works. */
    int rc = MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(rc, "MPI_Barrier after the errors");
    int v = mtest_rank == mtest_size - 1 ? 42 : -1;
    rc = MPI_Bcast(&v, 1, MPI_INT, mtest_size - 1, MPI_COMM_WORLD);
    CHECK_RC(rc, "MPI_Bcast after the errors");
    CHECK(v == 42, "MPI_Bcast after the errors gave %d", v);
    int one = 1, sum = 0;
    rc = MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK_RC(rc, "MPI_Allreduce after the errors");
    CHECK(sum == mtest_size, "MPI_Allreduce after the errors gave %d", sum);
    return MTest_Finalize(0);
}
