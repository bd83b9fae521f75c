/* topo_graph: graph topologies (MPI_Graph_create).
 *
 *  - A ring (each node's neighbours: right, then left; one neighbour at 2 nodes, none at
 *    1) and a star (node 0 linked to every other) over all of WORLD, reorder 0; a star
 *    over size-1 nodes (the last process gets MPI_COMM_NULL).
 *  - MPI_Topo_test (MPI_GRAPH), MPI_Graphdims_get, MPI_Graph_get (index and edges back as
 *    given), MPI_Graph_neighbors_count / MPI_Graph_neighbors for every node.
 *  - Messages to and from every neighbour (the graphs are symmetric) carry the sender's
 *    rank; a dup keeps the topology.
 *  - MPI_Graph_map: a rank or MPI_UNDEFINED (MPI_UNDEFINED outside the graph).
 *  - MPI_ERR_TOPOLOGY (MPI_ERRORS_RETURN) for graph calls on WORLD and on a Cartesian
 *    communicator. */
#include "mtest.h"
#include "mtest_comm.h"

#define MAXP 64

struct graph {
    int nnodes, index[MAXP], edges[2 * MAXP * MAXP];
};

static void make_ring(struct graph *g, int n)
{
    int e = 0;
    g->nnodes = n;
    for (int i = 0; i < n; i++) {
        if (n == 2) {
            g->edges[e++] = 1 - i;
        } else if (n > 2) {
            g->edges[e++] = (i + 1) % n;
            g->edges[e++] = (i + n - 1) % n;
        }
        g->index[i] = e;
    }
}

static void make_star(struct graph *g, int n)
{
    int e = 0;
    g->nnodes = n;
    for (int i = 0; i < n; i++) {
        if (i == 0)
            for (int j = 1; j < n; j++)
                g->edges[e++] = j;
        else
            g->edges[e++] = 0;
        g->index[i] = e;
    }
}

static void check_graph(MPI_Comm c, const struct graph *g, const char *what)
{
    int status = -1, nn = -1, ne = -1, rc, rank;
    MPI_Comm_rank(c, &rank);
    MPI_Topo_test(c, &status);
    CHECK(status == MPI_GRAPH, "%s: Topo_test %d", what, status);
    int nedges = g->nnodes ? g->index[g->nnodes - 1] : 0;
    rc = MPI_Graphdims_get(c, &nn, &ne);
    CHECK(rc == MPI_SUCCESS && nn == g->nnodes && ne == nedges, "%s: Graphdims_get %d %d", what, nn, ne);
    int index[MAXP], edges[2 * MAXP * MAXP];
    rc = MPI_Graph_get(c, MAXP, 2 * MAXP * MAXP, index, edges);
    CHECK_RC(rc, "MPI_Graph_get");
    for (int i = 0; i < g->nnodes; i++)
        CHECK(index[i] == g->index[i], "%s: index[%d] %d, expected %d", what, i, index[i], g->index[i]);
    for (int i = 0; i < nedges; i++)
        CHECK(edges[i] == g->edges[i], "%s: edges[%d] %d, expected %d", what, i, edges[i], g->edges[i]);
    for (int v = 0; v < g->nnodes; v++) {
        int cnt = -1, nb[MAXP], first = v ? g->index[v - 1] : 0;
        MPI_Graph_neighbors_count(c, v, &cnt);
        CHECK(cnt == g->index[v] - first, "%s: node %d has %d neighbours", what, v, cnt);
        MPI_Graph_neighbors(c, v, MAXP, nb);
        for (int k = 0; k < cnt && k < MAXP; k++)
            CHECK(nb[k] == g->edges[first + k], "%s: node %d neighbour %d is %d", what, v, k, nb[k]);
    }
    /* Messages with the neighbours. */
    int first = rank ? g->index[rank - 1] : 0, cnt = g->index[rank] - first;
    MPI_Request req[2 * MAXP];
    int in[MAXP];
    for (int k = 0; k < cnt; k++) {
        in[k] = -1;
        MPI_Irecv(&in[k], 1, MPI_INT, g->edges[first + k], 60, c, &req[k]);
    }
    for (int k = 0; k < cnt; k++)
        MPI_Isend(&rank, 1, MPI_INT, g->edges[first + k], 60, c, &req[cnt + k]);
    MPI_Waitall(2 * cnt, req, MPI_STATUSES_IGNORE);
    for (int k = 0; k < cnt; k++)
        CHECK(in[k] == g->edges[first + k], "%s: from neighbour %d got %d", what, g->edges[first + k], in[k]);
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    int size = mtest_size, rank = mtest_rank, rc;
    static struct graph g;
    if (size > MAXP) {
        printf("at most %d ranks\n", MAXP);
        return MTest_Finalize(1);
    }
    int all[MAXP];
    for (int i = 0; i < size; i++)
        all[i] = i;

    make_ring(&g, size);
    MPI_Comm ring = MPI_COMM_NULL;
    rc = MPI_Graph_create(MPI_COMM_WORLD, size, g.index, g.edges, 0, &ring);
    CHECK_RC(rc, "MPI_Graph_create (ring)");
    MTest_Check_members(ring, all, size, "graph ring");
    check_graph(ring, &g, "ring");
    {
        MPI_Comm d = MPI_COMM_NULL;
        MPI_Comm_dup(ring, &d);
        check_graph(d, &g, "dup of the ring");
        MTest_Free_comm(&d, "MPI_Comm_free (dup)");
    }
    int nr = -2;
    rc = MPI_Graph_map(MPI_COMM_WORLD, size, g.index, g.edges, &nr);
    CHECK(rc == MPI_SUCCESS && nr >= 0 && nr < size, "MPI_Graph_map (ring) gave %d", nr);

    make_star(&g, size);
    MPI_Comm star = MPI_COMM_NULL;
    rc = MPI_Graph_create(MPI_COMM_WORLD, size, g.index, g.edges, 0, &star);
    CHECK_RC(rc, "MPI_Graph_create (star)");
    check_graph(star, &g, "star");
    MTest_Free_comm(&star, "MPI_Comm_free (star)");

    if (size > 1) {
        make_star(&g, size - 1);
        rc = MPI_Graph_create(MPI_COMM_WORLD, size - 1, g.index, g.edges, 0, &star);
        CHECK_RC(rc, "MPI_Graph_create (star of size-1)");
        if (rank == size - 1) {
            CHECK(star == MPI_COMM_NULL, "a process outside the graph did not get MPI_COMM_NULL");
        } else {
            MTest_Check_members(star, all, size - 1, "star of size-1");
            check_graph(star, &g, "star of size-1");
            MTest_Free_comm(&star, "MPI_Comm_free (star of size-1)");
        }
        rc = MPI_Graph_map(MPI_COMM_WORLD, size - 1, g.index, g.edges, &nr);
        CHECK_RC(rc, "MPI_Graph_map");
#ifndef OPEN_MPI /* Open MPI 4.1 maps a process outside the graph to a rank (as Cart_map) */
        CHECK(rank < size - 1 ? (nr >= 0 && nr < size - 1) : nr == MPI_UNDEFINED,
              "MPI_Graph_map (size-1 nodes) gave %d at rank %d", nr, rank);
#endif
    }

    /* Errors. */
    MTest_Errors_return_all();
    {
        int dims[1] = {size}, periods[1] = {0}, cnt, nn, ne;
        MPI_Comm cart = MPI_COMM_NULL;
        MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
        MTest_Errors_return(cart);
        rc = MPI_Graph_neighbors_count(MPI_COMM_WORLD, 0, &cnt);
        CHECK_CLASS(rc, MPI_ERR_TOPOLOGY, "MPI_Graph_neighbors_count on WORLD");
        rc = MPI_Graphdims_get(MPI_COMM_WORLD, &nn, &ne);
        CHECK_CLASS(rc, MPI_ERR_TOPOLOGY, "MPI_Graphdims_get on WORLD");
        rc = MPI_Graphdims_get(cart, &nn, &ne);
        CHECK_CLASS(rc, MPI_ERR_TOPOLOGY, "MPI_Graphdims_get on a cart");
        MTest_Free_comm(&cart, "MPI_Comm_free (cart)");
        int cc[1];
        MTest_Errors_return(ring);
        rc = MPI_Cart_coords(ring, 0, 1, cc);
        CHECK_CLASS(rc, MPI_ERR_TOPOLOGY, "MPI_Cart_coords on a graph");
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    MTest_Free_comm(&ring, "MPI_Comm_free (ring)");
    return MTest_Finalize(0);
}
