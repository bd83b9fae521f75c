/* neighbor_periodic.c: neighbourhood alltoall on periodic Cartesian grids where a process is
 * its own neighbour or both neighbours of a dimension are the same process (dimension sizes
 * 1 and 2), checked block by block and direction by direction.
 *
 * MPI-4.0 (errata) fixes the rule: on a Cartesian communicator, the block received from the
 * negative-direction neighbour of dimension d is the block that neighbour sent in its
 * positive direction, and the block from the positive neighbour is the one it sent in its
 * negative direction.  Covers MPI_Neighbor_alltoall, _alltoallv, _alltoallw (also with
 * MPI_BOTTOM and absolute displacements), the nonblocking and (MPI-4) persistent forms, on 1,
 * 2 and 3 dimensional grids with periodic and non-periodic dimensions. */
#include "mtest.h"

#define K 3 /* ints per block */

/* Whether to check blocks from a process that is both neighbours of a dimension.  MPICH
 * before 4.1 matches those by posting order (the rule before MPI-4.0's errata); against it
 * only the blocks from distinct neighbours are checked, which still tests this program. */
static int check_same_peer = 1;

enum { A2A, A2AV, A2AW, A2AW_BOTTOM, IA2A, IA2AW, A2A_INIT, NFORMS };
static const char *form_name[NFORMS] = {"alltoall", "alltoallv", "alltoallw",
                                        "alltoallw(MPI_BOTTOM)", "ineighbor_alltoall",
                                        "ineighbor_alltoallw", "neighbor_alltoall_init"};

/* The value a sender puts at position k of its block for dimension d, direction dir. */
static int val(int rank, int d, int dir, int k)
{
    return rank * 1000 + d * 100 + dir * 10 + k;
}

static void run(MPI_Comm cart, int ndims, const int *dims, const int *periods, int form)
{
    int rank, n = 2 * ndims;
    MPI_Comm_rank(cart, &rank);
    int *sbuf = malloc(sizeof(int) * n * K), *rbuf = malloc(sizeof(int) * n * K);
    int *counts = malloc(sizeof(int) * n), *displs = malloc(sizeof(int) * n);
    MPI_Aint *bdispls = malloc(sizeof(MPI_Aint) * n), *sabs = malloc(sizeof(MPI_Aint) * n),
             *rabs = malloc(sizeof(MPI_Aint) * n);
    MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * n);
    for (int j = 0; j < n; j++) {
        for (int k = 0; k < K; k++) {
            sbuf[j * K + k] = val(rank, j / 2, j % 2, k);
            rbuf[j * K + k] = -1;
        }
        counts[j] = K;
        displs[j] = j * K;
        bdispls[j] = (MPI_Aint)(j * K * sizeof(int));
        types[j] = MPI_INT;
        MPI_Get_address(&sbuf[j * K], &sabs[j]);
        MPI_Get_address(&rbuf[j * K], &rabs[j]);
    }
    int rc = MPI_SUCCESS;
    MPI_Request req;
    switch (form) {
    case A2A:
        rc = MPI_Neighbor_alltoall(sbuf, K, MPI_INT, rbuf, K, MPI_INT, cart);
        break;
    case A2AV:
        rc = MPI_Neighbor_alltoallv(sbuf, counts, displs, MPI_INT, rbuf, counts, displs, MPI_INT,
                                    cart);
        break;
    case A2AW:
        rc = MPI_Neighbor_alltoallw(sbuf, counts, bdispls, types, rbuf, counts, bdispls, types,
                                    cart);
        break;
    case A2AW_BOTTOM:
        rc = MPI_Neighbor_alltoallw(MPI_BOTTOM, counts, sabs, types, MPI_BOTTOM, counts, rabs,
                                    types, cart);
        break;
    case IA2A:
        rc = MPI_Ineighbor_alltoall(sbuf, K, MPI_INT, rbuf, K, MPI_INT, cart, &req);
        if (rc == MPI_SUCCESS)
            rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
        break;
    case IA2AW:
        rc = MPI_Ineighbor_alltoallw(MPI_BOTTOM, counts, sabs, types, MPI_BOTTOM, counts, rabs,
                                     types, cart, &req);
        if (rc == MPI_SUCCESS)
            rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
        break;
    case A2A_INIT:
        rc = MPI_Neighbor_alltoall_init(sbuf, K, MPI_INT, rbuf, K, MPI_INT, cart, MPI_INFO_NULL,
                                        &req);
        for (int round = 0; rc == MPI_SUCCESS && round < 2; round++) {
            rc = MPI_Start(&req);
            if (rc == MPI_SUCCESS)
                rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
        }
        if (rc == MPI_SUCCESS)
            MPI_Request_free(&req);
        break;
    }
    CHECK_RC(rc, form_name[form]);
    char shape[64];
    int at = 0;
    for (int d = 0; d < ndims; d++)
        at += snprintf(shape + at, sizeof shape - at, "%s%d%s", d ? "x" : "", dims[d],
                       periods[d] ? "p" : "");
    for (int d = 0; rc == MPI_SUCCESS && d < ndims; d++) {
        int src_neg, src_pos;
        MPI_Cart_shift(cart, d, 1, &src_neg, &src_pos);
        if (src_neg == src_pos && !check_same_peer)
            continue;
        for (int dir = 0; dir < 2; dir++) {
            int src = dir ? src_pos : src_neg, slot = 2 * d + dir;
            for (int k = 0; k < K; k++) {
                /* From the negative neighbour: what it sent positively, and vice versa. */
                int want = src == MPI_PROC_NULL ? -1 : val(src, d, 1 - dir, k);
                int got = rbuf[slot * K + k];
                if (got != want) {
                    CHECK(0, "%s on %s, rank %d: block %d (dim %d, %s neighbour %d) [%d] = %d, "
                             "expected %d",
                          form_name[form], shape, rank, slot, d, dir ? "positive" : "negative",
                          src, k, got, want);
                    break;
                }
            }
        }
    }
    free(sbuf), free(rbuf), free(counts), free(displs), free(bdispls), free(sabs), free(rabs),
        free(types);
}

static void grid(int ndims, const int *dims, const int *periods)
{
    int prod = 1;
    for (int d = 0; d < ndims; d++)
        prod *= dims[d];
    if (prod > mtest_size)
        return;
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, ndims, dims, periods, 0, &cart);
    if (cart == MPI_COMM_NULL)
        return;
    for (int f = 0; f < NFORMS; f++) {
#if !(MPI_VERSION >= 4)
        if (f == A2A_INIT)
            continue;
#endif
        run(cart, ndims, dims, periods, f);
    }
    MPI_Comm_free(&cart);
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len, major = 0, minor = 0;
    MPI_Get_library_version(lib, &len);
    if (sscanf(lib, "MPICH Version: %d.%d", &major, &minor) == 2 &&
        (major < 4 || (major == 4 && minor < 1))) {
        check_same_peer = 0;
        if (mtest_rank == 0)
            printf("note: %d.%d predates the errata rule; same-process neighbours unchecked\n",
                   major, minor);
    }
    int p = mtest_size;
    static const int per[3] = {1, 1, 1}, mixed[3] = {1, 0, 1}, none[3] = {0, 0, 0};
    for (int v = 0; v < 3; v++) {
        const int *pd = v == 0 ? per : v == 1 ? mixed : none;
        int d1[1] = {p};
        grid(1, d1, pd);
        int one[1] = {1};
        grid(1, one, pd);
        int two[1] = {2};
        grid(1, two, pd);
        int d2a[2] = {p, 1}, d2b[2] = {1, p};
        grid(2, d2a, pd);
        grid(2, d2b, pd);
        int d2c[2] = {2, 2}, d2d[2] = {2, 1}, d2e[2] = {3, 2};
        grid(2, d2c, pd);
        grid(2, d2d, pd);
        grid(2, d2e, pd);
        int d3a[3] = {1, 2, 1}, d3b[3] = {2, 1, 3}, d3c[3] = {1, 1, 1};
        grid(3, d3a, pd);
        grid(3, d3b, pd);
        grid(3, d3c, pd);
    }
    return MTest_Finalize(mtest_errors);
}
