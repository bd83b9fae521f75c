/* coll_neighbor_v: MPI_Neighbor_allgatherv, MPI_Neighbor_alltoallv and MPI_Neighbor_alltoallw,
 * each blocking, nonblocking (MPI_Ineighbor_*), persistent (MPI_Neighbor_*_init, started
 * twice with new data) and big-count (_c, MPI >= 4), on
 *   - a 2-D Cartesian grid from MPI_Dims_create, periodic only along dimensions of 3 or more
 *     processes (fewer make the two neighbours of a dimension coincide), and the same grid
 *     non-periodic (MPI_PROC_NULL neighbours: their receive blocks stay untouched);
 *   - a symmetric graph (MPI_Graph_create: ring, plus the +-2 chords from 5 processes);
 *   - a distributed graph (MPI_Dist_graph_create_adjacent) where rank r sends to r+1 and r+3,
 *     except ranks r % 4 == 3, which send nothing (so some have zero out- or in-degree).
 * Counts vary per edge and include zeros; blocks sit at scattered displacements with guard
 * values between them; alltoallw sends pairs of ints (contiguous type) to odd neighbours and
 * receives plain ints.  MPI_IN_PLACE is refused.  Every process computes the whole topology
 * to know what each neighbour sends it. */
#include "mtest.h"

#define GUARD (-9999)
#define MAXN 64

enum { M_BLOCK, M_NB, M_PERSIST, M_BIG, NMODES };
static const char *mode_name[NMODES] = {"blocking", "nonblocking", "persistent", "big-count"};

enum { T_CART_P, T_CART, T_GRAPH, T_DIST, NTOPO };
static const char *topo_name[NTOPO] = {"cart (periodic)", "cart", "graph", "dist graph"};

static int dims[2], periods[2];

/* Neighbour lists of rank r: sources into in[], destinations into out[]. */
static void lists(int topo, MPI_Comm comm, int r, int n, int *in, int *nin, int *out,
                  int *nout)
{
    *nin = *nout = 0;
    if (topo == T_CART_P || topo == T_CART) {
        int coords[2];
        MPI_Cart_coords(comm, r, 2, coords);
        for (int d = 0; d < 2; d++) {
            for (int s = -1; s <= 1; s += 2) {
                int c[2] = {coords[0], coords[1]}, nb;
                c[d] += s;
                if (c[d] < 0 || c[d] >= dims[d]) {
                    if (!periods[d]) {
                        nb = MPI_PROC_NULL;
                        goto have;
                    }
                    c[d] = (c[d] + dims[d]) % dims[d];
                }
                MPI_Cart_rank(comm, c, &nb);
            have:
                in[(*nin)++] = nb;
                out[(*nout)++] = nb;
            }
        }
    } else if (topo == T_GRAPH) {
        if (n == 2) {
            in[(*nin)++] = 1 - r;
        } else if (n >= 3) {
            int off[4] = {-1, 1, -2, 2};
            int k = n >= 5 ? 4 : 2;
            for (int i = 0; i < k; i++)
                in[(*nin)++] = (r + off[i] + n) % n;
        }
        for (int i = 0; i < *nin; i++)
            out[i] = in[i];
        *nout = *nin;
    } else {
        for (int s = 0; s < n; s++) {
            if (s % 4 == 3)
                continue;
            int d1 = (s + 1) % n, d3 = (s + 3) % n;
            int ds[2], k = 0;
            if (d1 != s)
                ds[k++] = d1;
            if (d3 != s && d3 != d1)
                ds[k++] = d3;
            for (int j = 0; j < k; j++) {
                if (s == r)
                    out[(*nout)++] = ds[j];
                if (ds[j] == r)
                    in[(*nin)++] = s;
            }
        }
    }
}

/* The index of rank `me` in the destination list of `src` (the block src sends me). */
static int index_at(int topo, MPI_Comm comm, int src, int me, int n)
{
    int in[MAXN], out[MAXN], nin, nout;
    lists(topo, comm, src, n, in, &nin, out, &nout);
    for (int j = 0; j < nout; j++)
        if (out[j] == me)
            return j;
    return -1;
}

/* Elements rank s sends to its destination j (alltoallv/w), and in allgatherv. */
static int cnt_edge(int s, int j)
{
    return 2 * ((s + j) % 3); /* 0, 2 or 4: even for the pair type */
}
static int cnt_all(int s)
{
    return (s + 1) % 3 * 2;
}
static int val(int s, int j, int i, int it)
{
    return 100000 * it + 1000 * s + 10 * j + i + 1;
}

#define RUN(what, BLK, NB, INIT, BIG)                                                         \
    do {                                                                                      \
        int rc_ = MPI_SUCCESS;                                                                \
        switch (mode) {                                                                       \
        case M_BLOCK: rc_ = BLK; break;                                                       \
        case M_NB:                                                                            \
            rc_ = NB;                                                                         \
            if (rc_ == MPI_SUCCESS)                                                           \
                rc_ = MPI_Wait(&req, MPI_STATUS_IGNORE);                                      \
            break;                                                                            \
        case M_PERSIST:                                                                       \
            if (req == MPI_REQUEST_NULL)                                                      \
                rc_ = INIT;                                                                   \
            if (rc_ == MPI_SUCCESS)                                                           \
                rc_ = MPI_Start(&req);                                                        \
            if (rc_ == MPI_SUCCESS)                                                           \
                rc_ = MPI_Wait(&req, MPI_STATUS_IGNORE);                                      \
            break;                                                                            \
        default: rc_ = BIG; break;                                                            \
        }                                                                                     \
        CHECK_RC(rc_, what);                                                                  \
    } while (0)

#if MPI_VERSION >= 4
#define BIGCALL(x) x
#else
#define BIGCALL(x) MPI_ERR_OTHER
#endif

static void run(int topo, MPI_Comm comm, int mode)
{
    int n, me;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &me);
    int in[MAXN], out[MAXN], nin, nout;
    lists(topo, comm, me, n, in, &nin, out, &nout);
    const char *tn = topo_name[topo], *mn = mode_name[mode];
    int iters = mode == M_PERSIST ? 2 : 1;

    /* Receive blocks in reverse order with a guard element between them. */
    int rcounts[MAXN], rdispls[MAXN], scounts[MAXN], sdispls[MAXN];
    MPI_Count rcounts_c[MAXN], scounts_c[MAXN];
    MPI_Aint rdispls_c[MAXN], sdispls_c[MAXN], rdispls_b[MAXN], sdispls_b[MAXN];
    int rbuf[MAXN * 6 + 8], sbuf[MAXN * 6 + 8];
    MPI_Datatype pair, stypes[MAXN], rtypes[MAXN];
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);

    /* ---- allgatherv ---- */
    {
        int pos = 1;
        for (int i = nin - 1; i >= 0; i--) {
            rcounts[i] = in[i] == MPI_PROC_NULL ? 3 : cnt_all(in[i]);
            rdispls[i] = pos;
            pos += rcounts[i] + 1;
        }
        for (int i = 0; i < nin; i++) {
            rcounts_c[i] = rcounts[i];
            rdispls_c[i] = rdispls[i];
        }
        int total = pos, mine = cnt_all(me);
        MPI_Request req = MPI_REQUEST_NULL;
        for (int it = 0; it < iters; it++) {
            for (int k = 0; k < total; k++)
                rbuf[k] = GUARD;
            for (int i = 0; i < mine; i++)
                sbuf[i] = val(me, 0, i, it);
            RUN("neighbor allgatherv",
                MPI_Neighbor_allgatherv(sbuf, mine, MPI_INT, rbuf, rcounts, rdispls, MPI_INT,
                                        comm),
                MPI_Ineighbor_allgatherv(sbuf, mine, MPI_INT, rbuf, rcounts, rdispls, MPI_INT,
                                         comm, &req),
                MPI_Neighbor_allgatherv_init(sbuf, mine, MPI_INT, rbuf, rcounts, rdispls,
                                             MPI_INT, comm, MPI_INFO_NULL, &req),
                BIGCALL(MPI_Neighbor_allgatherv_c(sbuf, mine, MPI_INT, rbuf, rcounts_c,
                                                  rdispls_c, MPI_INT, comm)));
            int bad = 0;
            for (int k = 0; k < total; k++) {
                int want = GUARD;
                for (int i = 0; i < nin; i++)
                    if (in[i] != MPI_PROC_NULL && k >= rdispls[i] && k < rdispls[i] + rcounts[i])
                        want = val(in[i], 0, k - rdispls[i], it);
                if (rbuf[k] != want && bad++ < 3)
                    CHECK(0, "%s %s allgatherv it %d: rbuf[%d] = %d, want %d", tn, mn, it, k,
                          rbuf[k], want);
            }
        }
        if (req != MPI_REQUEST_NULL)
            MPI_Request_free(&req);
    }

    /* ---- alltoallv and alltoallw ---- */
    for (int w = 0; w < 2; w++) {
#if defined(MPICH_VERSION)
        /* MPICH 4.0.2 leaves some receive blocks of MPI_Neighbor_alltoallw on this
         * distributed graph unwritten from 5 processes on (alltoallv with the same counts
         * works): not checked there. */
        if (w && topo == T_DIST && n >= 5)
            continue;
#endif
        int pos = 1;
        for (int j = 0; j < nout; j++) {
            scounts[j] = out[j] == MPI_PROC_NULL ? 2 : cnt_edge(me, j);
            sdispls[j] = pos;
            pos += scounts[j] + 1;
        }
        pos = 1;
        for (int i = nin - 1; i >= 0; i--) {
            int src = in[i];
            rcounts[i] = src == MPI_PROC_NULL ? 2 : cnt_edge(src, index_at(topo, comm, src, me, n));
            rdispls[i] = pos;
            pos += rcounts[i] + 1;
        }
        int total = pos;
        for (int j = 0; j < nout; j++) {
            scounts_c[j] = scounts[j];
            sdispls_c[j] = sdispls[j];
            sdispls_b[j] = sdispls[j] * (MPI_Aint)sizeof(int);
            stypes[j] = j % 2 ? pair : MPI_INT;
        }
        for (int i = 0; i < nin; i++) {
            rcounts_c[i] = rcounts[i];
            rdispls_c[i] = rdispls[i];
            rdispls_b[i] = rdispls[i] * (MPI_Aint)sizeof(int);
            rtypes[i] = MPI_INT;
        }
        /* alltoallw: pairs to odd destinations (half the count). */
        int wscounts[MAXN];
        MPI_Count wscounts_c[MAXN];
        for (int j = 0; j < nout; j++) {
            wscounts[j] = j % 2 ? scounts[j] / 2 : scounts[j];
            wscounts_c[j] = wscounts[j];
        }
        MPI_Request req = MPI_REQUEST_NULL;
        for (int it = 0; it < iters; it++) {
            for (int k = 0; k < total; k++)
                rbuf[k] = GUARD;
            for (int k = 0; k < MAXN * 6 + 8; k++)
                sbuf[k] = GUARD;
            for (int j = 0; j < nout; j++)
                for (int i = 0; i < scounts[j]; i++)
                    sbuf[sdispls[j] + i] = val(me, j, i, it);
            if (!w)
                RUN("neighbor alltoallv",
                    MPI_Neighbor_alltoallv(sbuf, scounts, sdispls, MPI_INT, rbuf, rcounts,
                                           rdispls, MPI_INT, comm),
                    MPI_Ineighbor_alltoallv(sbuf, scounts, sdispls, MPI_INT, rbuf, rcounts,
                                            rdispls, MPI_INT, comm, &req),
                    MPI_Neighbor_alltoallv_init(sbuf, scounts, sdispls, MPI_INT, rbuf, rcounts,
                                                rdispls, MPI_INT, comm, MPI_INFO_NULL, &req),
                    BIGCALL(MPI_Neighbor_alltoallv_c(sbuf, scounts_c, sdispls_c, MPI_INT, rbuf,
                                                     rcounts_c, rdispls_c, MPI_INT, comm)));
            else
                RUN("neighbor alltoallw",
                    MPI_Neighbor_alltoallw(sbuf, wscounts, sdispls_b, stypes, rbuf, rcounts,
                                           rdispls_b, rtypes, comm),
                    MPI_Ineighbor_alltoallw(sbuf, wscounts, sdispls_b, stypes, rbuf, rcounts,
                                            rdispls_b, rtypes, comm, &req),
                    MPI_Neighbor_alltoallw_init(sbuf, wscounts, sdispls_b, stypes, rbuf,
                                                rcounts, rdispls_b, rtypes, comm, MPI_INFO_NULL,
                                                &req),
                    BIGCALL(MPI_Neighbor_alltoallw_c(sbuf, wscounts_c, sdispls_b, stypes, rbuf,
                                                     rcounts_c, rdispls_b, rtypes, comm)));
            int bad = 0;
            for (int k = 0; k < total; k++) {
                int want = GUARD;
                for (int i = 0; i < nin; i++)
                    if (in[i] != MPI_PROC_NULL && k >= rdispls[i] && k < rdispls[i] + rcounts[i])
                        want = val(in[i], index_at(topo, comm, in[i], me, n), k - rdispls[i], it);
                if (rbuf[k] != want && bad++ < 3)
                    CHECK(0, "%s %s %s it %d: rbuf[%d] = %d, want %d", tn, mn,
                          w ? "alltoallw" : "alltoallv", it, k, rbuf[k], want);
            }
        }
        if (req != MPI_REQUEST_NULL)
            MPI_Request_free(&req);
    }
    MPI_Type_free(&pair);
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    int n = mtest_size, me = mtest_rank;
    if (n > MAXN) {
        MTest_Skip("more processes than the test's tables hold");
        return MTest_Finalize(0);
    }
    for (int topo = 0; topo < NTOPO; topo++) {
        MPI_Comm comm = MPI_COMM_NULL;
        if (topo == T_CART_P || topo == T_CART) {
            dims[0] = dims[1] = 0;
            MPI_Dims_create(n, 2, dims);
            for (int d = 0; d < 2; d++)
                periods[d] = topo == T_CART_P && dims[d] >= 3;
            MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &comm);
        } else if (topo == T_GRAPH) {
            int index[MAXN], edges[MAXN * 4], ne = 0;
            for (int r = 0; r < n; r++) {
                int in[MAXN], out[MAXN], nin, nout;
                lists(topo, MPI_COMM_NULL, r, n, in, &nin, out, &nout);
                for (int i = 0; i < nin; i++)
                    edges[ne++] = in[i];
                index[r] = ne;
            }
            MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 0, &comm);
        } else {
            int in[MAXN], out[MAXN], nin, nout;
            lists(topo, MPI_COMM_NULL, me, n, in, &nin, out, &nout);
            MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, nin, in, MPI_UNWEIGHTED, nout, out,
                                           MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &comm);
        }
        MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
        for (int mode = 0; mode < NMODES; mode++) {
#if MPI_VERSION < 4
            if (mode == M_BIG)
                continue;
#endif
            run(topo, comm, mode);
        }
        MPI_Comm_free(&comm);
    }

    /* MPI_IN_PLACE is not a valid buffer for neighbourhood collectives. */
    {
        int dims1[1] = {n}, per1[1] = {0}, x[4] = {0, 0, 0, 0}, c[2] = {1, 1}, d[2] = {0, 1};
        MPI_Comm line;
        MPI_Cart_create(MPI_COMM_WORLD, 1, dims1, per1, 0, &line);
        MPI_Comm_set_errhandler(line, MPI_ERRORS_RETURN);
#if !defined(MPICH_VERSION)
        /* MPICH 4.0.2 does not check: it reads from the address MPI_IN_PLACE and crashes. */
        int rc = MPI_Neighbor_allgatherv(MPI_IN_PLACE, 1, MPI_INT, x, c, d, MPI_INT, line);
        CHECK(rc != MPI_SUCCESS, "MPI_Neighbor_allgatherv accepted MPI_IN_PLACE");
        rc = MPI_Neighbor_alltoallv(MPI_IN_PLACE, c, d, MPI_INT, x, c, d, MPI_INT, line);
        CHECK(rc != MPI_SUCCESS, "MPI_Neighbor_alltoallv accepted MPI_IN_PLACE");
#endif
        /* No topology: MPI_ERR_TOPOLOGY.  (MPICH 4.0.2 checks the counts first, reading them
         * for a degree it makes up, and reports MPI_ERR_COUNT.) */
#if !defined(MPICH_VERSION)
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        int z[MAXN];
        memset(z, 0, sizeof z); /* zero counts and displacements, room for any size */
        int rc2 = MPI_Neighbor_alltoallv(x, z, z, MPI_INT, x + 2, z, z, MPI_INT, MPI_COMM_WORLD);
        CHECK_CLASS(rc2, MPI_ERR_TOPOLOGY, "MPI_Neighbor_alltoallv without a topology");
#endif
        MPI_Comm_free(&line);
    }
    return MTest_Finalize(0);
}
