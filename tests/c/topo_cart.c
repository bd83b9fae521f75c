/* topo_cart: Cartesian topologies.
 *
 *  - MPI_Dims_create: product = nnodes, non-increasing free dimensions, fixed entries
 *    kept; a few exact cases (6 in 3 with a fixed 3 -> 2,3,1; 7 in 2 -> 7,1; 12 in 2 ->
 *    4,3; 1 in 3 -> 1,1,1).
 *  - MPI_Cart_create on WORLD: 2D from MPI_Dims_create with periods {1, 0}, reorder 0 (ranks
 *    unchanged), and 3D fully periodic with reorder 1; a 1D grid of size-1 processes
 *    (the last process gets MPI_COMM_NULL).
 *  - MPI_Topo_test (MPI_CART; MPI_UNDEFINED on WORLD), MPI_Cartdim_get, MPI_Cart_get,
 *    MPI_Cart_coords (row-major), MPI_Cart_rank (inverse; wraps on periodic dimensions).
 *  - MPI_Cart_shift in every dimension with displacements 1 and -1 (and 2 on the periodic
 *    ones): neighbours computed from the coordinates, MPI_PROC_NULL past the borders of a
 *    non-periodic dimension; a halo exchange with MPI_Sendrecv over those neighbours
 *    checks that the messages come from them (nothing arrives from MPI_PROC_NULL).
 *  - MPI_Cart_sub: rows and columns of the 2D grid (members checked by messages), and no
 *    dimension kept (size 1).
 *  - MPI_Cart_map: a rank in the grid or MPI_UNDEFINED; MPI_UNDEFINED for all in a 2 x 0 grid.
 *  - A dup of a Cartesian communicator keeps the topology.
 *  - MPI_ERR_TOPOLOGY (MPI_ERRORS_RETURN) for Cartesian calls on WORLD (no topology). */
#include "mtest.h"
#include "mtest_comm.h"

#define MAXP 64

static int prod(const int *d, int n)
{
    int p = 1;
    for (int i = 0; i < n; i++)
        p *= d[i];
    return p;
}

static void check_dims(int nnodes, int ndims, const int *in, const int *expect, const char *what)
{
    int d[8];
    memcpy(d, in, ndims * sizeof(int));
    int rc = MPI_Dims_create(nnodes, ndims, d);
    CHECK_RC(rc, "MPI_Dims_create");
    CHECK(prod(d, ndims) == nnodes, "%s: product %d != %d", what, prod(d, ndims), nnodes);
    int last = 1 << 30;
    for (int i = 0; i < ndims; i++) {
        if (in[i] > 0) {
            CHECK(d[i] == in[i], "%s: fixed dims[%d] %d changed to %d", what, i, in[i], d[i]);
        } else {
            CHECK(d[i] <= last, "%s: dims not non-increasing at %d", what, i);
            last = d[i];
        }
    }
    if (expect)
        for (int i = 0; i < ndims; i++)
            CHECK(d[i] == expect[i], "%s: dims[%d] = %d, expected %d", what, i, d[i], expect[i]);
}

/* Neighbour along dim at displacement disp from coords, or MPI_PROC_NULL. */
static int neighbour(MPI_Comm c, int ndims, const int *dims, const int *periods, const int *coords,
                     int dim, int disp)
{
    int cc[8];
    memcpy(cc, coords, ndims * sizeof(int));
    cc[dim] += disp;
    if (cc[dim] < 0 || cc[dim] >= dims[dim]) {
        if (!periods[dim])
            return MPI_PROC_NULL;
        cc[dim] = ((cc[dim] % dims[dim]) + dims[dim]) % dims[dim];
    }
    int r = -1;
    MPI_Cart_rank(c, cc, &r);
    return r;
}

/* Shifts and halo exchange in every dimension. */
static void halo(MPI_Comm c, const char *what)
{
    int ndims = -1, dims[8], periods[8], coords[8], rank, rc;
    MPI_Cartdim_get(c, &ndims);
    MPI_Cart_get(c, ndims, dims, periods, coords);
    MPI_Comm_rank(c, &rank);
    for (int dim = 0; dim < ndims; dim++) {
        for (int disp = -2; disp <= 2; disp++) {
            if (disp == 0)
                continue;
            int src = -7, dst = -7;
            rc = MPI_Cart_shift(c, dim, disp, &src, &dst);
            CHECK_RC(rc, "MPI_Cart_shift");
            int esrc = neighbour(c, ndims, dims, periods, coords, dim, -disp);
            int edst = neighbour(c, ndims, dims, periods, coords, dim, disp);
            CHECK(src == esrc && dst == edst, "%s: shift dim %d disp %d: src %d dst %d, expected %d %d",
                  what, dim, disp, src, dst, esrc, edst);
            int out = rank, in = -1;
            MPI_Status st;
            rc = MPI_Sendrecv(&out, 1, MPI_INT, dst, 50 + dim, &in, 1, MPI_INT, src, 50 + dim, c, &st);
            CHECK_RC(rc, "MPI_Sendrecv (halo)");
            if (src == MPI_PROC_NULL)
                CHECK(in == -1 && st.MPI_SOURCE == MPI_PROC_NULL, "%s: got %d from MPI_PROC_NULL", what, in);
            else
                CHECK(in == src && st.MPI_SOURCE == src, "%s: dim %d disp %d: got %d (source %d), expected %d",
                      what, dim, disp, in, st.MPI_SOURCE, src);
        }
    }
}

static void check_coords(MPI_Comm c, const char *what)
{
    int ndims, dims[8], periods[8], coords[8], rank, size, cc[8], r;
    MPI_Cartdim_get(c, &ndims);
    MPI_Cart_get(c, ndims, dims, periods, coords);
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    CHECK(prod(dims, ndims) == size, "%s: grid %d for size %d", what, prod(dims, ndims), size);
    for (int q = 0; q < size; q++) {
        MPI_Cart_coords(c, q, ndims, cc);
        /* row-major: the last dimension varies fastest */
        int lin = 0;
        for (int i = 0; i < ndims; i++)
            lin = lin * dims[i] + cc[i];
        CHECK(lin == q, "%s: coords of %d are not row-major (linear %d)", what, q, lin);
        MPI_Cart_rank(c, cc, &r);
        CHECK(r == q, "%s: Cart_rank(Cart_coords(%d)) = %d", what, q, r);
        if (q == rank)
            for (int i = 0; i < ndims; i++)
                CHECK(cc[i] == coords[i], "%s: Cart_get coords differ from Cart_coords", what);
    }
    /* Periodic wrap in Cart_rank. */
    for (int i = 0; i < ndims; i++) {
        if (!periods[i])
            continue;
        memcpy(cc, coords, ndims * sizeof(int));
        cc[i] += dims[i];
        MPI_Cart_rank(c, cc, &r);
        CHECK(r == rank, "%s: Cart_rank with coordinate + dims[%d] gave %d, expected %d", what, i, r, rank);
        cc[i] = coords[i] - dims[i];
        MPI_Cart_rank(c, cc, &r);
        CHECK(r == rank, "%s: Cart_rank with coordinate - dims[%d] gave %d", what, i, r);
    }
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    int size = mtest_size, rank = mtest_rank, rc, status = -1;

    /* Dims_create. */
    {
        int z3[3] = {0, 0, 0}, z2[2] = {0, 0}, f[3] = {0, 3, 0};
        int e1[3] = {2, 3, 1}, e2[2] = {7, 1}, e3[2] = {4, 3}, e4[3] = {1, 1, 1};
        check_dims(size, 2, z2, NULL, "Dims_create(size, 2)");
        check_dims(size, 3, z3, NULL, "Dims_create(size, 3)");
        check_dims(6, 3, f, e1, "Dims_create(6, {0,3,0})");
        check_dims(7, 2, z2, e2, "Dims_create(7, 2)");
        check_dims(12, 2, z2, e3, "Dims_create(12, 2)");
        check_dims(1, 3, z3, e4, "Dims_create(1, 3)");
        int fx[2] = {0, 1};
        int ex[2] = {size, 1};
        check_dims(size, 2, fx, ex, "Dims_create(size, {0,1})");
    }

    MPI_Topo_test(MPI_COMM_WORLD, &status);
    CHECK(status == MPI_UNDEFINED, "MPI_Topo_test(WORLD) gave %d", status);

    /* 2D, periods {1,0}, no reorder. */
    int dims[2] = {0, 0}, periods[2] = {1, 0};
    MPI_Dims_create(size, 2, dims);
    MPI_Comm c2 = MPI_COMM_NULL;
    rc = MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &c2);
    CHECK_RC(rc, "MPI_Cart_create (2D)");
    {
        int all[MAXP];
        for (int i = 0; i < size; i++)
            all[i] = i;
        MTest_Check_members(c2, all, size, "2D cart without reorder");
    }
    MPI_Topo_test(c2, &status);
    CHECK(status == MPI_CART, "MPI_Topo_test(cart) gave %d", status);
    int nd = -1, gd[2], gp[2], gc[2];
    MPI_Cartdim_get(c2, &nd);
    CHECK(nd == 2, "MPI_Cartdim_get gave %d", nd);
    MPI_Cart_get(c2, 2, gd, gp, gc);
    CHECK(gd[0] == dims[0] && gd[1] == dims[1] && gp[0] == 1 && gp[1] == 0,
          "MPI_Cart_get: dims %d %d periods %d %d", gd[0], gd[1], gp[0], gp[1]);
    CHECK(gc[0] == rank / dims[1] && gc[1] == rank % dims[1], "MPI_Cart_get coords %d %d", gc[0], gc[1]);
    check_coords(c2, "2D");
    halo(c2, "2D");

    /* Cart_sub: rows (keep dim 1), columns (keep dim 0), nothing. */
    {
        int keep_row[2] = {0, 1}, keep_col[2] = {1, 0}, keep_none[2] = {0, 0};
        int exp[MAXP], n = 0;
        MPI_Comm row = MPI_COMM_NULL, col = MPI_COMM_NULL, pt = MPI_COMM_NULL;
        rc = MPI_Cart_sub(c2, keep_row, &row);
        CHECK_RC(rc, "MPI_Cart_sub (row)");
        for (int j = 0; j < dims[1]; j++)
            exp[n++] = gc[0] * dims[1] + j;
        MTest_Check_members(row, exp, n, "Cart_sub row");
        MPI_Cartdim_get(row, &nd);
        CHECK(nd == 1, "row: Cartdim %d", nd);
        halo(row, "row");
        n = 0;
        rc = MPI_Cart_sub(c2, keep_col, &col);
        CHECK_RC(rc, "MPI_Cart_sub (column)");
        for (int i = 0; i < dims[0]; i++)
            exp[n++] = i * dims[1] + gc[1];
        MTest_Check_members(col, exp, n, "Cart_sub column");
        MPI_Cart_get(col, 1, gd, gp, gc);
        CHECK(gp[0] == 1 && gd[0] == dims[0], "column: periodic %d dim %d", gp[0], gd[0]);
        halo(col, "column");
        /* Keeping no dimension: MPI-4.0 section 8.5.6 gives a zero-dimensional topology;
         * MPICH 4.0 gives it only to one process and MPI_COMM_NULL to the others, so a
         * null result is accepted; a result has size 1. */
        rc = MPI_Cart_sub(c2, keep_none, &pt);
        CHECK_RC(rc, "MPI_Cart_sub (none)");
        if (pt != MPI_COMM_NULL) {
            int s = -1;
            MPI_Comm_size(pt, &s);
            CHECK(s == 1, "Cart_sub keeping nothing: size %d", s);
        }
        MTest_Free_comm(&row, "MPI_Comm_free (row)");
        MTest_Free_comm(&col, "MPI_Comm_free (col)");
        MTest_Free_comm(&pt, "MPI_Comm_free (point)");
    }

    /* Dup keeps the topology. */
    {
        MPI_Comm d = MPI_COMM_NULL;
        MPI_Comm_dup(c2, &d);
        MPI_Topo_test(d, &status);
        CHECK(status == MPI_CART, "dup of a cart: Topo_test %d", status);
        halo(d, "dup of 2D");
        MTest_Free_comm(&d, "MPI_Comm_free (dup)");
    }

    /* 3D, periodic, reorder. */
    {
        int d3[3] = {0, 0, 0}, p3[3] = {1, 1, 1};
        MPI_Dims_create(size, 3, d3);
        MPI_Comm c3 = MPI_COMM_NULL;
        rc = MPI_Cart_create(MPI_COMM_WORLD, 3, d3, p3, 1, &c3);
        CHECK_RC(rc, "MPI_Cart_create (3D, reorder)");
        int s = -1;
        MPI_Comm_size(c3, &s);
        CHECK(s == size, "3D: size %d", s);
        check_coords(c3, "3D");
        halo(c3, "3D");
        MTest_Free_comm(&c3, "MPI_Comm_free (3D)");
    }

    /* 1D with one process fewer (at size > 1). */
    if (size > 1) {
        int d1[1] = {size - 1}, p1[1] = {0};
        MPI_Comm c1 = MPI_COMM_NULL;
        rc = MPI_Cart_create(MPI_COMM_WORLD, 1, d1, p1, 0, &c1);
        CHECK_RC(rc, "MPI_Cart_create (1D, size-1)");
        if (rank == size - 1) {
            CHECK(c1 == MPI_COMM_NULL, "a process outside the grid did not get MPI_COMM_NULL");
        } else {
            int exp[MAXP];
            for (int i = 0; i < size - 1; i++)
                exp[i] = i;
            MTest_Check_members(c1, exp, size - 1, "1D of size-1");
            halo(c1, "1D");
            MTest_Free_comm(&c1, "MPI_Comm_free (1D)");
        }
        int nr = -2;
        rc = MPI_Cart_map(MPI_COMM_WORLD, 1, d1, p1, &nr);
        CHECK_RC(rc, "MPI_Cart_map");
        CHECK((nr >= 0 && nr < size) || nr == MPI_UNDEFINED, "MPI_Cart_map gave %d", nr);
#ifndef OPEN_MPI /* Open MPI 4.1 maps the process outside the grid to a rank */
        CHECK(rank < size - 1 || nr == MPI_UNDEFINED, "MPI_Cart_map: rank %d outside the grid got %d",
              rank, nr);
#endif
    }
    {
        int nr = -2;
        rc = MPI_Cart_map(MPI_COMM_WORLD, 2, dims, periods, &nr);
        CHECK(rc == MPI_SUCCESS && nr >= 0 && nr < size, "MPI_Cart_map (full grid) gave %d", nr);
    }
#ifndef OPEN_MPI /* Open MPI 4.1 refuses an extent of 0 */
    {
        /* An empty grid (an extent of 0, as rsmpi's cartesian_map example asks below 4
         * processes; MPICH accepts it): nobody has a place. */
        int d0[2] = {2, 0}, p0[2] = {0, 0}, nr = -2;
        rc = MPI_Cart_map(MPI_COMM_WORLD, 2, d0, p0, &nr);
        CHECK(rc == MPI_SUCCESS && nr == MPI_UNDEFINED, "MPI_Cart_map (2 x 0 grid) gave rc %d, %d",
              rc, nr);
    }
#endif

    /* Errors. */
    MTest_Errors_return_all();
    MTest_Errors_return(c2);
    {
        int cc[2], nd2 = -1, r;
        rc = MPI_Cart_coords(MPI_COMM_WORLD, 0, 2, cc);
        CHECK_CLASS(rc, MPI_ERR_TOPOLOGY, "MPI_Cart_coords on WORLD");
        rc = MPI_Cartdim_get(MPI_COMM_WORLD, &nd2);
        CHECK_CLASS(rc, MPI_ERR_TOPOLOGY, "MPI_Cartdim_get on WORLD");
        rc = MPI_Cart_shift(MPI_COMM_WORLD, 0, 1, &r, &r);
        CHECK_CLASS(rc, MPI_ERR_TOPOLOGY, "MPI_Cart_shift on WORLD");
        cc[0] = cc[1] = 0;
        rc = MPI_Cart_rank(MPI_COMM_WORLD, cc, &r);
        CHECK_CLASS(rc, MPI_ERR_TOPOLOGY, "MPI_Cart_rank on WORLD");
        rc = MPI_Graph_neighbors_count(c2, 0, &r);
        CHECK_CLASS(rc, MPI_ERR_TOPOLOGY, "MPI_Graph_neighbors_count on a cart");
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);

    MTest_Free_comm(&c2, "MPI_Comm_free (2D)");
    return MTest_Finalize(0);
}
