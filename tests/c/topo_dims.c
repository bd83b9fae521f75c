/* topo_dims: MPI_Dims_create and the topology queries on communicators without a topology.
 *
 * Balanced factorizations in non-increasing order (the table MPICH and Open MPI agree on),
 * fixed entries kept, ndims 0; errors: a negative entry or fixed entries that do not divide
 * nnodes give MPI_ERR_DIMS, negative ndims or nnodes MPI_ERR_ARG. MPI_Topo_test on WORLD and
 * SELF is MPI_UNDEFINED; Cartesian/graph queries there give MPI_ERR_TOPOLOGY. MPI_Cart_map and
 * MPI_Graph_map keep ranks below the grid size and give MPI_UNDEFINED to the others. */
#include "mtest.h"

struct dcase { int nnodes, ndims, in[4], out[4]; };

static const struct dcase cases[] = {
    {6, 2, {0, 0}, {3, 2}},
    {7, 2, {0, 0}, {7, 1}},
    {12, 3, {0, 0, 0}, {3, 2, 2}},
    {24, 3, {0, 0, 0}, {4, 3, 2}},
    {16, 4, {0, 0, 0, 0}, {2, 2, 2, 2}},
    {16, 3, {0, 0, 0}, {4, 2, 2}},
    {1, 3, {0, 0, 0}, {1, 1, 1}},
    {64, 3, {0, 0, 0}, {4, 4, 4}},
    {60, 3, {0, 0, 0}, {5, 4, 3}},
    {36, 2, {0, 0}, {6, 6}},
    {12, 3, {0, 3, 0}, {2, 3, 2}},
    {24, 3, {2, 0, 0}, {2, 4, 3}},
    {12, 2, {3, 4}, {3, 4}},
    {16, 3, {0, 0, 8}, {2, 1, 8}},
    {5, 1, {0}, {5}},
};

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    MTest_Errors_return_all();
    int rc, x;

    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const struct dcase *c = &cases[i];
        int d[4];
        memcpy(d, c->in, sizeof d);
        rc = MPI_Dims_create(c->nnodes, c->ndims, d);
        if (!CHECK_RC(rc, "MPI_Dims_create"))
            continue;
        for (int k = 0; k < c->ndims; k++)
            CHECK(d[k] == c->out[k], "Dims_create(%d, %d): dims[%d] = %d, expected %d", c->nnodes,
                  c->ndims, k, d[k], c->out[k]);
    }
    /* The world size, in 2 and 3 dimensions: product right, non-increasing. */
    for (int nd = 2; nd <= 3; nd++) {
        int d[3] = {0, 0, 0};
        rc = MPI_Dims_create(mtest_size, nd, d);
        CHECK_RC(rc, "MPI_Dims_create(size)");
        int p = 1;
        for (int k = 0; k < nd; k++)
            p *= d[k];
        CHECK(p == mtest_size, "Dims_create(%d, %d): product %d", mtest_size, nd, p);
        for (int k = 1; k < nd; k++)
            CHECK(d[k - 1] >= d[k], "Dims_create(%d, %d): not non-increasing", mtest_size, nd);
    }
    int d0[1] = {0};
    rc = MPI_Dims_create(1, 0, d0);
    CHECK_RC(rc, "MPI_Dims_create(1, 0)");

    int d[3];
    d[0] = 2; d[1] = 0;
    rc = MPI_Dims_create(7, 2, d);
    CHECK_CLASS(rc, MPI_ERR_DIMS, "MPI_Dims_create(7, {2, 0})");
    d[0] = -1; d[1] = 0;
    rc = MPI_Dims_create(7, 2, d);
    CHECK_CLASS(rc, MPI_ERR_DIMS, "MPI_Dims_create(7, {-1, 0})");
    d[0] = 3; d[1] = 2;
    rc = MPI_Dims_create(7, 2, d);
    CHECK_CLASS(rc, MPI_ERR_DIMS, "MPI_Dims_create(7, {3, 2})");
    d[0] = 0; d[1] = 0;
    rc = MPI_Dims_create(7, -1, d);
    CHECK_CLASS(rc, MPI_ERR_ARG, "MPI_Dims_create(ndims -1)");
    rc = MPI_Dims_create(-1, 2, d);
    CHECK_CLASS(rc, MPI_ERR_ARG, "MPI_Dims_create(nnodes -1)");

    /* No topology on the predefined communicators. */
    rc = MPI_Topo_test(MPI_COMM_WORLD, &x);
    CHECK_RC(rc, "MPI_Topo_test(WORLD)");
    CHECK(x == MPI_UNDEFINED, "Topo_test(WORLD) = %d", x);
    rc = MPI_Topo_test(MPI_COMM_SELF, &x);
    CHECK(rc == MPI_SUCCESS && x == MPI_UNDEFINED, "Topo_test(SELF) = %d", x);
    rc = MPI_Cartdim_get(MPI_COMM_WORLD, &x);
    CHECK_CLASS(rc, MPI_ERR_TOPOLOGY, "MPI_Cartdim_get(WORLD)");
    int c2[2] = {0, 0}, dd[2], pp[2];
#ifndef MPICH_VERSION
    /* MPICH 4.0 dereferences the missing topology here (segmentation fault). */
    rc = MPI_Cart_get(MPI_COMM_WORLD, 2, dd, pp, c2);
    CHECK_CLASS(rc, MPI_ERR_TOPOLOGY, "MPI_Cart_get(WORLD)");
#endif
    rc = MPI_Cart_rank(MPI_COMM_WORLD, c2, &x);
    CHECK_CLASS(rc, MPI_ERR_TOPOLOGY, "MPI_Cart_rank(WORLD)");
    rc = MPI_Cart_coords(MPI_COMM_WORLD, 0, 2, c2);
    CHECK_CLASS(rc, MPI_ERR_TOPOLOGY, "MPI_Cart_coords(WORLD)");
    int s, t;
    rc = MPI_Cart_shift(MPI_COMM_WORLD, 0, 1, &s, &t);
    CHECK_CLASS(rc, MPI_ERR_TOPOLOGY, "MPI_Cart_shift(WORLD)");
    int nn, ne;
    rc = MPI_Graphdims_get(MPI_COMM_WORLD, &nn, &ne);
    CHECK_CLASS(rc, MPI_ERR_TOPOLOGY, "MPI_Graphdims_get(WORLD)");
    int idx[4], edg[4];
    rc = MPI_Graph_get(MPI_COMM_WORLD, 4, 4, idx, edg);
    CHECK_CLASS(rc, MPI_ERR_TOPOLOGY, "MPI_Graph_get(WORLD)");
    rc = MPI_Graph_neighbors_count(MPI_COMM_WORLD, 0, &x);
    CHECK_CLASS(rc, MPI_ERR_TOPOLOGY, "MPI_Graph_neighbors_count(WORLD)");
    rc = MPI_Graph_neighbors(MPI_COMM_WORLD, 0, 4, edg);
    CHECK_CLASS(rc, MPI_ERR_TOPOLOGY, "MPI_Graph_neighbors(WORLD)");
    int in, out, w;
    rc = MPI_Dist_graph_neighbors_count(MPI_COMM_WORLD, &in, &out, &w);
    CHECK_CLASS(rc, MPI_ERR_TOPOLOGY, "MPI_Dist_graph_neighbors_count(WORLD)");
    rc = MPI_Dist_graph_neighbors(MPI_COMM_WORLD, 4, idx, MPI_UNWEIGHTED, 4, edg, MPI_UNWEIGHTED);
    CHECK_CLASS(rc, MPI_ERR_TOPOLOGY, "MPI_Dist_graph_neighbors(WORLD)");

    /* Cart_map / Graph_map: a 1 x k grid over the first k ranks. */
    int k = mtest_size > 1 ? mtest_size - 1 : 1;
    int gd[2] = {1, k}, gp[2] = {0, 1};
    rc = MPI_Cart_map(MPI_COMM_WORLD, 2, gd, gp, &x);
    CHECK_RC(rc, "MPI_Cart_map");
    CHECK(x == (mtest_rank < k ? mtest_rank : MPI_UNDEFINED), "Cart_map: newrank %d", x);
    gd[1] = mtest_size + 1;
    rc = MPI_Cart_map(MPI_COMM_WORLD, 2, gd, gp, &x);
    CHECK_CLASS(rc, MPI_ERR_DIMS, "MPI_Cart_map(grid larger than the communicator)");
    /* A ring of k nodes. */
    int gidx[64], gedges[128];
    for (int i = 0; i < k; i++) {
        gidx[i] = 2 * (i + 1);
        gedges[2 * i] = (i + 1) % k;
        gedges[2 * i + 1] = (i + k - 1) % k;
    }
    rc = MPI_Graph_map(MPI_COMM_WORLD, k, gidx, gedges, &x);
    CHECK_RC(rc, "MPI_Graph_map");
    CHECK(x == (mtest_rank < k ? mtest_rank : MPI_UNDEFINED), "Graph_map: newrank %d", x);
    return MTest_Finalize(0);
}
