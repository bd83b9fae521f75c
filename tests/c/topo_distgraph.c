/* topo_distgraph: distributed graph topologies.
 *
 *  - MPI_Dist_graph_create_adjacent: a ring, sources {left, right}, destinations {right,
 *    left} (repeated neighbours at 1 and 2 processes: multi-edges are allowed), weighted
 *    and MPI_UNWEIGHTED; MPI_Dist_graph_neighbors_count (indegree, outdegree, weighted)
 *    and MPI_Dist_graph_neighbors give them back in the order given (MPI-4.0 section
 *    8.5.5); messages along every edge (sent to each destination, received from each
 *    source, in order) carry the edge's position.
 *  - MPI_Dist_graph_create where each process specifies edges of other processes: process
 *    r gives the edges (r+1) -> (r+2) and (r+2) -> (r+1) (mod n), which together make a
 *    bidirectional ring; edge a -> b weighs 100 a + b + 1, so the weights returned by
 *    MPI_Dist_graph_neighbors are checked whatever the order; also MPI_UNWEIGHTED and a
 *    process specifying no edge (n = 0 on odd ranks, the evens giving theirs too).
 *  - MPI_Topo_test (MPI_DIST_GRAPH), a dup keeps the topology, reorder 0 keeps the ranks.
 *  - MPI_ERR_TOPOLOGY (MPI_ERRORS_RETURN) for MPI_Dist_graph_neighbors_count on WORLD. */
#include "mtest.h"
#include "mtest_comm.h"

#define MAXP 64
#define MAXD (4 * MAXP)

/* Send my rank along every out-edge, receive along every in-edge. */
static void exchange(MPI_Comm c, int indeg, const int *src, int outdeg, const int *dst, const char *what)
{
    int rank, in[MAXD];
    MPI_Request req[2 * MAXD];
    MPI_Comm_rank(c, &rank);
    for (int k = 0; k < indeg; k++) {
        in[k] = -1;
        MPI_Irecv(&in[k], 1, MPI_INT, src[k], 70, c, &req[k]);
    }
    for (int k = 0; k < outdeg; k++)
        MPI_Isend(&rank, 1, MPI_INT, dst[k], 70, c, &req[indeg + k]);
    MPI_Waitall(indeg + outdeg, req, MPI_STATUSES_IGNORE);
    for (int k = 0; k < indeg; k++)
        CHECK(in[k] == src[k], "%s: from source %d got %d", what, src[k], in[k]);
}

static void adjacent(int weighted)
{
    int size = mtest_size, rank = mtest_rank, rc;
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    int srcs[2] = {left, right}, dsts[2] = {right, left}, sw[2] = {3, 4}, dw[2] = {5, 6};
    const char *what = weighted ? "adjacent ring, weighted" : "adjacent ring, unweighted";
    MPI_Comm c = MPI_COMM_NULL;
    rc = MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, srcs, weighted ? sw : MPI_UNWEIGHTED, 2,
                                        dsts, weighted ? dw : MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &c);
    CHECK_RC(rc, "MPI_Dist_graph_create_adjacent");
    int all[MAXP];
    for (int i = 0; i < size; i++)
        all[i] = i;
    MTest_Check_members(c, all, size, what);
    int status = -1, indeg = -1, outdeg = -1, w = -1;
    MPI_Topo_test(c, &status);
    CHECK(status == MPI_DIST_GRAPH, "%s: Topo_test %d", what, status);
    rc = MPI_Dist_graph_neighbors_count(c, &indeg, &outdeg, &w);
    CHECK(rc == MPI_SUCCESS && indeg == 2 && outdeg == 2 && (w != 0) == weighted,
          "%s: neighbors_count %d %d weighted %d", what, indeg, outdeg, w);
    int s[2] = {-1, -1}, d[2] = {-1, -1}, gsw[2] = {-1, -1}, gdw[2] = {-1, -1};
    rc = MPI_Dist_graph_neighbors(c, 2, s, weighted ? gsw : MPI_UNWEIGHTED, 2, d,
                                  weighted ? gdw : MPI_UNWEIGHTED);
    CHECK_RC(rc, "MPI_Dist_graph_neighbors");
    CHECK(s[0] == left && s[1] == right && d[0] == right && d[1] == left,
          "%s: neighbours %d %d / %d %d", what, s[0], s[1], d[0], d[1]);
    if (weighted)
        CHECK(gsw[0] == 3 && gsw[1] == 4 && gdw[0] == 5 && gdw[1] == 6, "%s: weights %d %d / %d %d",
              what, gsw[0], gsw[1], gdw[0], gdw[1]);
    exchange(c, 2, s, 2, d, what);
    MPI_Comm dup = MPI_COMM_NULL;
    MPI_Comm_dup(c, &dup);
    MPI_Topo_test(dup, &status);
    CHECK(status == MPI_DIST_GRAPH, "%s: dup: Topo_test %d", what, status);
    MPI_Dist_graph_neighbors_count(dup, &indeg, &outdeg, &w);
    CHECK(indeg == 2 && outdeg == 2, "%s: dup: degrees %d %d", what, indeg, outdeg);
    MTest_Free_comm(&dup, "MPI_Comm_free (dup)");
    MTest_Free_comm(&c, "MPI_Comm_free");
}

static void general(int weighted, int only_evens)
{
    int size = mtest_size, rank = mtest_rank, rc;
    const char *what = weighted ? (only_evens ? "Dist_graph_create, evens specify" : "Dist_graph_create, weighted")
                                : "Dist_graph_create, unweighted";
    /* The edges every process r specifies (or the evens for r and r+1). */
    int srcs[4], degs[4], dsts[4], wts[4], n = 0, ne = 0;
    for (int q = rank; q < rank + (only_evens ? 2 : 1); q++) {
        if (only_evens && (rank % 2 || q >= size))
            break;
        int a = (q + 1) % size, b = (q + 2) % size;
        srcs[n] = a;
        degs[n] = 1;
        dsts[ne] = b;
        wts[ne++] = 100 * a + b + 1;
        n++;
        srcs[n] = b;
        degs[n] = 1;
        dsts[ne] = a;
        wts[ne++] = 100 * b + a + 1;
        n++;
    }
    MPI_Comm c = MPI_COMM_NULL;
    rc = MPI_Dist_graph_create(MPI_COMM_WORLD, n, srcs, degs, dsts, weighted ? wts : MPI_UNWEIGHTED,
                               MPI_INFO_NULL, 0, &c);
    CHECK_RC(rc, "MPI_Dist_graph_create");
    int indeg = -1, outdeg = -1, w = -1, status = -1;
    MPI_Topo_test(c, &status);
    CHECK(status == MPI_DIST_GRAPH, "%s: Topo_test %d", what, status);
    rc = MPI_Dist_graph_neighbors_count(c, &indeg, &outdeg, &w);
    CHECK(rc == MPI_SUCCESS && indeg == 2 && outdeg == 2 && (w != 0) == weighted,
          "%s: neighbors_count %d %d weighted %d", what, indeg, outdeg, w);
    if (indeg != 2 || outdeg != 2) {
        MTest_Free_comm(&c, "MPI_Comm_free");
        return;
    }
    int s[2], d[2], sw[2], dw[2];
    rc = MPI_Dist_graph_neighbors(c, 2, s, weighted ? sw : MPI_UNWEIGHTED, 2, d,
                                  weighted ? dw : MPI_UNWEIGHTED);
    CHECK_RC(rc, "MPI_Dist_graph_neighbors");
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    /* As multisets: sources {left, right}, destinations {left, right}. */
    CHECK((s[0] == left && s[1] == right) || (s[0] == right && s[1] == left),
          "%s: sources %d %d, expected %d and %d", what, s[0], s[1], left, right);
    CHECK((d[0] == left && d[1] == right) || (d[0] == right && d[1] == left),
          "%s: destinations %d %d, expected %d and %d", what, d[0], d[1], left, right);
    if (weighted)
        for (int k = 0; k < 2; k++) {
            CHECK(sw[k] == 100 * s[k] + rank + 1, "%s: weight of edge %d -> %d is %d", what, s[k], rank, sw[k]);
            CHECK(dw[k] == 100 * rank + d[k] + 1, "%s: weight of edge %d -> %d is %d", what, rank, d[k], dw[k]);
        }
    exchange(c, 2, s, 2, d, what);
    MTest_Free_comm(&c, "MPI_Comm_free");
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    if (mtest_size > MAXP) {
        printf("at most %d ranks\n", MAXP);
        return MTest_Finalize(1);
    }
    adjacent(1);
    adjacent(0);
    general(1, 0);
    general(0, 0);
    general(1, 1);

    MTest_Errors_return_all();
    int indeg, outdeg, w;
    int rc = MPI_Dist_graph_neighbors_count(MPI_COMM_WORLD, &indeg, &outdeg, &w);
    CHECK_CLASS(rc, MPI_ERR_TOPOLOGY, "MPI_Dist_graph_neighbors_count on WORLD");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    return MTest_Finalize(0);
}
