/* coll_neighbor: neighbourhood collectives (MPI_Neighbor_allgather, MPI_Neighbor_alltoall,
 * their nonblocking and persistent forms) on a periodic ring (Cartesian, 1-D), a non-periodic
 * line (MPI_PROC_NULL ends keep their blocks untouched) and a distributed graph (each rank
 * sends to the next two ranks). Sizes below 3 make the ring's two neighbours coincide, where
 * the standard's matching is ambiguous, so the ring runs from 3 ranks. */
#include "mtest.h"

#define UNTOUCHED (-777)

static void check_ring(MPI_Comm ring, int periodic)
{
    int rank, size;
    MPI_Comm_rank(ring, &rank);
    MPI_Comm_size(ring, &size);
    int left = rank - 1, right = rank + 1;
    if (periodic) {
        left = (left + size) % size;
        right %= size;
    } else {
        if (left < 0)
            left = MPI_PROC_NULL;
        if (right >= size)
            right = MPI_PROC_NULL;
    }
    int send = 100 * rank, got[2] = {UNTOUCHED, UNTOUCHED};
    int rc = MPI_Neighbor_allgather(&send, 1, MPI_INT, got, 1, MPI_INT, ring);
    CHECK_RC(rc, "MPI_Neighbor_allgather");
    /* Cartesian order: the source in the negative direction first. */
    int want0 = left == MPI_PROC_NULL ? UNTOUCHED : 100 * left;
    int want1 = right == MPI_PROC_NULL ? UNTOUCHED : 100 * right;
    CHECK(got[0] == want0 && got[1] == want1, "allgather got %d %d want %d %d", got[0], got[1],
          want0, want1);

    /* Alltoall: block 0 goes left, block 1 right; from the left I get its "right" block. */
    int sb[2] = {10 * rank + 0, 10 * rank + 1}, rb[2] = {UNTOUCHED, UNTOUCHED};
    MPI_Request r;
    rc = MPI_Ineighbor_alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, ring, &r);
    CHECK_RC(rc, "MPI_Ineighbor_alltoall");
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    want0 = left == MPI_PROC_NULL ? UNTOUCHED : 10 * left + 1;
    want1 = right == MPI_PROC_NULL ? UNTOUCHED : 10 * right + 0;
    CHECK(rb[0] == want0 && rb[1] == want1, "alltoall got %d %d want %d %d", rb[0], rb[1],
          want0, want1);

    /* Persistent allgather, restarted with new data. */
    rc = MPI_Neighbor_allgather_init(&send, 1, MPI_INT, got, 1, MPI_INT, ring, MPI_INFO_NULL, &r);
    CHECK_RC(rc, "MPI_Neighbor_allgather_init");
    for (int it = 0; it < 5; it++) {
        send = 1000 * it + rank;
        MPI_Start(&r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        if (left != MPI_PROC_NULL)
            CHECK(got[0] == 1000 * it + left, "persistent allgather iteration %d", it);
    }
    MPI_Request_free(&r);
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    int size = mtest_size, rank = mtest_rank;
    MPI_Comm ring;
    for (int periodic = 0; periodic < 2; periodic++) {
        if (periodic && size < 3)
            continue;
        int dims[1] = {size}, periods[1] = {periodic};
        MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
        check_ring(ring, periodic);
        MPI_Comm_free(&ring);
    }

    /* Distributed graph: I send to rank+1 and rank+2, receive from rank-1 and rank-2. */
    if (size >= 3) {
        int srcs[2] = {(rank - 1 + size) % size, (rank - 2 + size) % size};
        int dsts[2] = {(rank + 1) % size, (rank + 2) % size};
        MPI_Comm g;
        MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, srcs, MPI_UNWEIGHTED, 2, dsts,
                                       MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g);
        int sb[2] = {rank * 10 + 1, rank * 10 + 2}, rb[2] = {-1, -1};
        MPI_Neighbor_alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, g);
        CHECK(rb[0] == srcs[0] * 10 + 1 && rb[1] == srcs[1] * 10 + 2,
              "dist graph alltoall got %d %d", rb[0], rb[1]);
        MPI_Comm_free(&g);
    }

    /* No topology: MPI_ERR_TOPOLOGY. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int x = 0, y[8];
    int rc = MPI_Neighbor_allgather(&x, 1, MPI_INT, y, 1, MPI_INT, MPI_COMM_WORLD);
    CHECK_CLASS(rc, MPI_ERR_TOPOLOGY, "neighbor allgather without a topology");
    MTest_Finalize(mtest_errors);
    return 0;
}
