/* type_constructors: every datatype constructor, sent and received element by element.
 *
 * For each derived type over MPI_INT (or MPI_DOUBLE for the struct-with-padding case) the
 * test knows its type map as a list of int indices (computed here by plain loops).  It then
 * (a) sends 2 elements of the type and receives them as contiguous ints, checking that every
 * value came from the expected index, and (b) sends contiguous ints and receives them with
 * the type into a zeroed buffer, checking every expected index got its value and every other
 * int (the holes) stayed 0.  The transfer goes to the partner rank (rank ^ 1) when there is
 * one, else to self.  Size, extent and true extent are checked against the type map, and the
 * envelope/contents, dup, resized and name queries against the arguments. */
#include "mtest.h"
#include <stddef.h>
#include <string.h>

#define NBUF 8192
#define BASE 2048 /* buffers are addressed from here, so negative lower bounds fit */

static int partner, peer_exists;
static int src[NBUF], dst[NBUF];

/* Moves data from rank (rank & ~1) to rank (rank | 1), or to self. */
static void xfer(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                 MPI_Datatype rtype, MPI_Status *st, const char *what)
{
    int rc;
    if (!peer_exists) {
        MPI_Request req;
        rc = MPI_Isend(sbuf, scount, stype, 0, 5, MPI_COMM_SELF, &req);
        CHECK_RC(rc, what);
        rc = MPI_Recv(rbuf, rcount, rtype, 0, 5, MPI_COMM_SELF, st);
        CHECK_RC(rc, what);
        rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
        CHECK_RC(rc, what);
    } else if (mtest_rank % 2 == 0) {
        rc = MPI_Send(sbuf, scount, stype, partner, 5, MPI_COMM_WORLD);
        CHECK_RC(rc, what);
    } else {
        rc = MPI_Recv(rbuf, rcount, rtype, partner, 5, MPI_COMM_WORLD, st);
        CHECK_RC(rc, what);
    }
}

static int receiving(void)
{
    return !peer_exists || mtest_rank % 2 == 1;
}

/* Checks type t (committed here) whose one-element type map is idx[0..n) (int indices from the
 * buffer start), with extent ext_ints ints. */
static void check_map(MPI_Datatype t, const int *idx, int n, int ext_ints, const char *name)
{
    MPI_Status st;
    int rc = MPI_Type_commit(&t);
    CHECK_RC(rc, name);
    int size = -1;
    MPI_Aint lb, ext, tlb, text;
    MPI_Type_size(t, &size);
    MPI_Type_get_extent(t, &lb, &ext);
    MPI_Type_get_true_extent(t, &tlb, &text);
    CHECK(size == n * 4, "%s: size %d, want %d", name, size, n * 4);
    CHECK(ext == ext_ints * 4, "%s: extent %ld, want %d", name, (long)ext, ext_ints * 4);
    if (n > 0) {
        int lo = idx[0], hi = idx[0];
        for (int i = 0; i < n; i++) {
            lo = idx[i] < lo ? idx[i] : lo;
            hi = idx[i] > hi ? idx[i] : hi;
        }
        CHECK(tlb == lo * 4 && text == (hi - lo + 1) * 4, "%s: true extent (%ld,%ld), want (%d,%d)",
              name, (long)tlb, (long)text, lo * 4, (hi - lo + 1) * 4);
    }
    /* (a) derived -> contiguous, two elements */
    for (int i = 0; i < NBUF; i++)
        src[i] = i + 1;
    memset(dst, 0, sizeof dst);
    xfer(src + BASE, 2, t, dst, 2 * n, MPI_INT, &st, name);
    if (receiving()) {
        int cnt = -1;
        MPI_Get_count(&st, MPI_INT, &cnt);
        CHECK(cnt == 2 * n, "%s: received %d ints, want %d", name, cnt, 2 * n);
        MPI_Get_count(&st, t, &cnt);
        CHECK(cnt == 2, "%s: MPI_Get_count with the type %d, want 2", name, cnt);
        int bad = 0;
        for (int e = 0; e < 2; e++)
            for (int i = 0; i < n; i++) {
                int want = BASE + e * ext_ints + idx[i] + 1;
                if (dst[e * n + i] != want && bad++ < 3)
                    CHECK(0, "%s: element %d item %d is %d, want %d", name, e, i, dst[e * n + i], want);
            }
    }
    /* (b) contiguous -> derived */
    for (int i = 0; i < 2 * n; i++)
        src[i] = 100000 + i;
    memset(dst, 0, sizeof dst);
    xfer(src, 2 * n, MPI_INT, dst + BASE, 2, t, &st, name);
    if (receiving()) {
        static int expect[NBUF];
        memset(expect, 0, sizeof expect);
        for (int e = 0; e < 2; e++)
            for (int i = 0; i < n; i++)
                expect[BASE + e * ext_ints + idx[i]] = 100000 + e * n + i;
        int bad = 0;
        for (int i = 0; i < NBUF; i++)
            if (dst[i] != expect[i] && bad++ < 3)
                CHECK(0, "%s: received buffer int %d is %d, want %d", name, i - BASE, dst[i], expect[i]);
    }
    rc = MPI_Type_free(&t);
    CHECK_RC(rc, name);
    CHECK(t == MPI_DATATYPE_NULL, "%s: freed handle not MPI_DATATYPE_NULL", name);
}

static int idx[NBUF];

static void simple_constructors(void)
{
    MPI_Datatype t;
    int n = 0;

    MPI_Type_contiguous(7, MPI_INT, &t);
    for (n = 0; n < 7; n++)
        idx[n] = n;
    check_map(t, idx, 7, 7, "contiguous");

    MPI_Type_contiguous_c(5, MPI_INT, &t);
    check_map(t, idx, 5, 5, "contiguous_c");

    /* vector(4, 3, 5): blocks of 3 ints every 5 */
    MPI_Type_vector(4, 3, 5, MPI_INT, &t);
    n = 0;
    for (int b = 0; b < 4; b++)
        for (int j = 0; j < 3; j++)
            idx[n++] = b * 5 + j;
    check_map(t, idx, n, 18, "vector");
    MPI_Type_vector_c(4, 3, 5, MPI_INT, &t);
    check_map(t, idx, n, 18, "vector_c");

    /* vector with a negative stride: blocks at 0, -4, -8 */
    MPI_Type_vector(3, 2, -4, MPI_INT, &t);
    n = 0;
    for (int b = 0; b < 3; b++)
        for (int j = 0; j < 2; j++)
            idx[n++] = -4 * b + j;
    check_map(t, idx, n, 10, "vector negative stride");

    /* hvector of a vector: 2D block */
    MPI_Datatype row;
    MPI_Type_vector(3, 1, 2, MPI_INT, &row); /* ints 0,2,4; extent 5 */
    MPI_Type_create_hvector(3, 1, 40, row, &t);
    n = 0;
    for (int b = 0; b < 3; b++)
        for (int j = 0; j < 3; j++)
            idx[n++] = b * 10 + 2 * j;
    check_map(t, idx, n, 25, "hvector of vector");
    MPI_Type_create_hvector_c(3, 1, 40, row, &t);
    check_map(t, idx, n, 25, "hvector_c");
    MPI_Type_free(&row);

    /* indexed: blocks (2 at 1), (0 at 3), (3 at 10), (1 at 6) -- out of order */
    {
        int bl[4] = {2, 0, 3, 1}, dp[4] = {1, 3, 10, 6};
        MPI_Type_indexed(4, bl, dp, MPI_INT, &t);
        n = 0;
        for (int b = 0; b < 4; b++)
            for (int j = 0; j < bl[b]; j++)
                idx[n++] = dp[b] + j;
        check_map(t, idx, n, 12, "indexed");
        MPI_Count blc[4] = {2, 0, 3, 1}, dpc[4] = {1, 3, 10, 6};
        MPI_Type_indexed_c(4, blc, dpc, MPI_INT, &t);
        check_map(t, idx, n, 12, "indexed_c");
    }
    /* hindexed: byte displacements */
    {
        int bl[3] = {1, 2, 2};
        MPI_Aint dp[3] = {8, 0, 40};
        MPI_Type_create_hindexed(3, bl, dp, MPI_INT, &t);
        int m[] = {2, 0, 1, 10, 11};
        check_map(t, m, 5, 12, "hindexed");
        MPI_Count blc[3] = {1, 2, 2}, dpc[3] = {8, 0, 40};
        MPI_Type_create_hindexed_c(3, blc, dpc, MPI_INT, &t);
        check_map(t, m, 5, 12, "hindexed_c");
    }
    /* indexed_block and hindexed_block */
    {
        int dp[3] = {9, 2, 5};
        MPI_Type_create_indexed_block(3, 2, dp, MPI_INT, &t);
        int m[] = {9, 10, 2, 3, 5, 6};
        check_map(t, m, 6, 9, "indexed_block");
        MPI_Aint hdp[3] = {36, 8, 20};
        MPI_Type_create_hindexed_block(3, 2, hdp, MPI_INT, &t);
        check_map(t, m, 6, 9, "hindexed_block");
        MPI_Count cdp[3] = {9, 2, 5};
        MPI_Type_create_indexed_block_c(3, 2, cdp, MPI_INT, &t);
        check_map(t, m, 6, 9, "indexed_block_c");
        MPI_Count chdp[3] = {36, 8, 20};
        MPI_Type_create_hindexed_block_c(3, 2, chdp, MPI_INT, &t);
        check_map(t, m, 6, 9, "hindexed_block_c");
    }
    /* struct of ints and a vector */
    {
        MPI_Datatype v;
        MPI_Type_vector(2, 1, 3, MPI_INT, &v); /* ints 0, 3; extent 4 */
        int bl[3] = {2, 1, 2};
        MPI_Aint dp[3] = {0, 16, 40};
        MPI_Datatype ty[3] = {MPI_INT, MPI_INT, v};
        MPI_Type_create_struct(3, bl, dp, ty, &t);
        int m[] = {0, 1, 4, 10, 13, 14, 17};
        check_map(t, m, 7, 18, "struct");
        MPI_Count blc[3] = {2, 1, 2}, dpc[3] = {0, 16, 40};
        MPI_Type_create_struct_c(3, blc, dpc, ty, &t);
        check_map(t, m, 7, 18, "struct_c");
        MPI_Type_free(&v);
    }
    /* resized: a vector with a larger extent and a negative lower bound */
    {
        MPI_Datatype v;
        MPI_Type_vector(2, 1, 2, MPI_INT, &v);
        MPI_Type_create_resized(v, -8, 32, &t);
        MPI_Aint lb, ext;
        MPI_Type_get_extent(t, &lb, &ext);
        CHECK(lb == -8 && ext == 32, "resized: lb %ld extent %ld", (long)lb, (long)ext);
        int m[] = {0, 2};
        check_map(t, m, 2, 8, "resized");
        MPI_Type_create_resized_c(v, 0, 20, &t);
        check_map(t, m, 2, 5, "resized_c");
        MPI_Type_free(&v);
    }
    /* dup of a committed indexed type keeps the map */
    {
        int bl[2] = {1, 2}, dp[2] = {4, 0};
        MPI_Datatype a;
        MPI_Type_indexed(2, bl, dp, MPI_INT, &a);
        MPI_Type_commit(&a);
        MPI_Type_dup(a, &t);
        MPI_Type_free(&a); /* the dup stays valid */
        int m[] = {4, 0, 1};
        check_map(t, m, 3, 5, "dup");
    }
}

/* Subarray faces of a 3D grid NZ x NY x NX (C order) and the same in Fortran order. */
#define NZ 5
#define NY 6
#define NX 7
static void subarrays(void)
{
    int sizes[3] = {NZ, NY, NX};
    struct {
        const char *name;
        int sub[3], start[3];
    } faces[] = {
        {"subarray X-Y face", {1, NY, NX}, {2, 0, 0}},
        {"subarray X-Z face", {NZ, 1, NX}, {0, 4, 0}},
        {"subarray Y-Z face", {NZ, NY, 1}, {0, 0, 6}},
        {"subarray inner box", {3, 2, 4}, {1, 3, 2}},
    };
    for (int f = 0; f < 4; f++) {
        MPI_Datatype t;
        int rc = MPI_Type_create_subarray(3, sizes, faces[f].sub, faces[f].start, MPI_ORDER_C,
                                          MPI_INT, &t);
        CHECK_RC(rc, faces[f].name);
        int n = 0;
        for (int z = 0; z < faces[f].sub[0]; z++)
            for (int y = 0; y < faces[f].sub[1]; y++)
                for (int x = 0; x < faces[f].sub[2]; x++)
                    idx[n++] = ((z + faces[f].start[0]) * NY + y + faces[f].start[1]) * NX + x +
                               faces[f].start[2];
        check_map(t, idx, n, NX * NY * NZ, faces[f].name);
        /* Fortran order: dimension 0 varies fastest. */
        rc = MPI_Type_create_subarray(3, sizes, faces[f].sub, faces[f].start, MPI_ORDER_FORTRAN,
                                      MPI_INT, &t);
        CHECK_RC(rc, faces[f].name);
        n = 0;
        for (int x = 0; x < faces[f].sub[2]; x++)
            for (int y = 0; y < faces[f].sub[1]; y++)
                for (int z = 0; z < faces[f].sub[0]; z++)
                    idx[n++] = ((x + faces[f].start[2]) * NY + y + faces[f].start[1]) * NZ + z +
                               faces[f].start[0];
        check_map(t, idx, n, NX * NY * NZ, "subarray (Fortran order)");
    }
    MPI_Count csz[3] = {NZ, NY, NX}, csub[3] = {2, 2, 2}, cst[3] = {1, 1, 1};
    MPI_Datatype t;
    MPI_Type_create_subarray_c(3, csz, csub, cst, MPI_ORDER_C, MPI_INT, &t);
    int n = 0;
    for (int z = 1; z < 3; z++)
        for (int y = 1; y < 3; y++)
            for (int x = 1; x < 3; x++)
                idx[n++] = (z * NY + y) * NX + x;
    check_map(t, idx, n, NX * NY * NZ, "subarray_c");
}

/* darray: a 10 x 9 array on a 2 x 2 grid, block rows and cyclic(2) columns; a 1-D cyclic. */
static void darrays(void)
{
    int gs[2] = {10, 9}, dist[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC};
    int darg[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2}, ps[2] = {2, 2};
    for (int r = 0; r < 4; r++) {
        MPI_Datatype t;
        int rc = MPI_Type_create_darray(4, r, 2, gs, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t);
        CHECK_RC(rc, "darray");
        int pr = r / 2, pc = r % 2, n = 0;
        for (int i = pr * 5; i < pr * 5 + 5; i++)
            for (int j = 0; j < 9; j++)
                if ((j / 2) % 2 == pc)
                    idx[n++] = i * 9 + j;
        check_map(t, idx, n, 90, "darray block x cyclic(2)");
        MPI_Count cgs[2] = {10, 9};
        rc = MPI_Type_create_darray_c(4, r, 2, cgs, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t);
        CHECK_RC(rc, "darray_c");
        check_map(t, idx, n, 90, "darray_c");
        /* Fortran order: element (i, j) at i + 10 * j, dimension 0 fastest */
        rc = MPI_Type_create_darray(4, r, 2, gs, dist, darg, ps, MPI_ORDER_FORTRAN, MPI_INT, &t);
        CHECK_RC(rc, "darray Fortran");
        n = 0;
        for (int j = 0; j < 9; j++)
            for (int i = pr * 5; i < pr * 5 + 5; i++)
                if ((j / 2) % 2 == pc)
                    idx[n++] = i + 10 * j;
        check_map(t, idx, n, 90, "darray Fortran order");
    }
    for (int r = 0; r < 3; r++) {
        int g = 11, d = MPI_DISTRIBUTE_CYCLIC, a = MPI_DISTRIBUTE_DFLT_DARG, p = 3;
        MPI_Datatype t;
        MPI_Type_create_darray(3, r, 1, &g, &d, &a, &p, MPI_ORDER_C, MPI_INT, &t);
        int n = 0;
        for (int i = r; i < 11; i += 3)
            idx[n++] = i;
        check_map(t, idx, n, 11, "darray cyclic 1-D");
    }
}

/* MPI_Type_get_contents gives back the constants a subarray or darray was made with
 * (MPI_ORDER_*, MPI_DISTRIBUTE_*), in this mpi.h's values, and they make the type again. */
static void decoded_constants(void)
{
    int sizes[2] = {6, 8}, sub[2] = {2, 3}, start[2] = {1, 2}, ints[32];
    MPI_Aint addrs[4];
    MPI_Datatype t, types[2], again;
    int ni, na, nd, comb;
    MPI_Type_create_subarray(2, sizes, sub, start, MPI_ORDER_FORTRAN, MPI_INT, &t);
    MPI_Type_get_envelope(t, &ni, &na, &nd, &comb);
    CHECK(comb == MPI_COMBINER_SUBARRAY && ni == 8 && nd == 1,
          "subarray envelope: combiner %d, %d integers, %d types", comb, ni, nd);
    int rc = MPI_Type_get_contents(t, 32, 4, 2, ints, addrs, types);
    CHECK_RC(rc, "MPI_Type_get_contents(subarray)");
    CHECK(ints[0] == 2 && ints[7] == MPI_ORDER_FORTRAN,
          "subarray contents: ndims %d, order %d (MPI_ORDER_FORTRAN is %d)", ints[0], ints[7],
          MPI_ORDER_FORTRAN);
    rc = MPI_Type_create_subarray(ints[0], ints + 1, ints + 3, ints + 5, ints[7], types[0], &again);
    CHECK_RC(rc, "subarray made again from its contents");
    if (rc == MPI_SUCCESS)
        MPI_Type_free(&again);
    MPI_Type_free(&t);

    int gs[2] = {10, 9}, dist[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC};
    int darg[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2}, ps[2] = {2, 2};
    MPI_Type_create_darray(4, 1, 2, gs, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t);
    MPI_Type_get_envelope(t, &ni, &na, &nd, &comb);
    CHECK(comb == MPI_COMBINER_DARRAY && ni == 12, "darray envelope: combiner %d, %d integers",
          comb, ni);
    rc = MPI_Type_get_contents(t, 32, 4, 2, ints, addrs, types);
    CHECK_RC(rc, "MPI_Type_get_contents(darray)");
    CHECK(ints[5] == MPI_DISTRIBUTE_BLOCK && ints[6] == MPI_DISTRIBUTE_CYCLIC &&
              ints[7] == MPI_DISTRIBUTE_DFLT_DARG && ints[8] == 2 && ints[11] == MPI_ORDER_C,
          "darray contents: distribs %d %d, dargs %d %d, order %d", ints[5], ints[6], ints[7],
          ints[8], ints[11]);
    rc = MPI_Type_create_darray(ints[0], ints[1], ints[2], ints + 3, ints + 5, ints + 7, ints + 9,
                                ints[11], types[0], &again);
    CHECK_RC(rc, "darray made again from its contents");
    if (rc == MPI_SUCCESS)
        MPI_Type_free(&again);
    MPI_Type_free(&t);
}

/* A C struct with padding, sent as an array of 5. */
struct rec {
    char c;
    double d;
    short s;
    int i[3];
};

static void padded_struct(void)
{
    int bl[4] = {1, 1, 1, 3};
    MPI_Aint dp[4] = {offsetof(struct rec, c), offsetof(struct rec, d), offsetof(struct rec, s),
                      offsetof(struct rec, i)};
    MPI_Datatype ty[4] = {MPI_CHAR, MPI_DOUBLE, MPI_SHORT, MPI_INT}, t;
    MPI_Type_create_struct(4, bl, dp, ty, &t);
    MPI_Type_commit(&t);
    MPI_Aint lb, ext;
    int size;
    MPI_Type_get_extent(t, &lb, &ext);
    MPI_Type_size(t, &size);
    CHECK(lb == 0 && ext == (MPI_Aint)sizeof(struct rec), "padded struct: lb %ld extent %ld, want 0 %zu",
          (long)lb, (long)ext, sizeof(struct rec));
    CHECK(size == 1 + 8 + 2 + 12, "padded struct: size %d", size);
    struct rec a[5], b[5];
    memset(a, 0x55, sizeof a);
    memset(b, 0x77, sizeof b);
    for (int k = 0; k < 5; k++) {
        a[k].c = 'a' + k;
        a[k].d = k * 1.5;
        a[k].s = -k;
        for (int j = 0; j < 3; j++)
            a[k].i[j] = 10 * k + j;
    }
    MPI_Status st;
    xfer(a, 5, t, b, 5, t, &st, "padded struct");
    if (receiving()) {
        for (int k = 0; k < 5; k++) {
            CHECK(b[k].c == 'a' + k && b[k].d == k * 1.5 && b[k].s == -k && b[k].i[0] == 10 * k &&
                      b[k].i[2] == 10 * k + 2,
                  "padded struct: element %d differs", k);
            /* the padding after c was not written */
            CHECK(((unsigned char *)&b[k])[1] == 0x77, "padded struct: padding of element %d written", k);
        }
        int elems = -1;
        MPI_Get_elements(&st, t, &elems);
        CHECK(elems == 5 * 6, "padded struct: MPI_Get_elements %d, want 30", elems);
    }
    MPI_Type_free(&t);
}

static void queries(void)
{
    MPI_Datatype v, t, got[2];
    int ni, na, nd, comb;
    MPI_Type_vector(3, 2, 4, MPI_DOUBLE, &v);
    MPI_Type_get_envelope(v, &ni, &na, &nd, &comb);
    CHECK(comb == MPI_COMBINER_VECTOR && ni == 3 && na == 0 && nd == 1, "vector envelope");
    int ints[8];
    MPI_Aint addrs[4];
    MPI_Type_get_contents(v, 8, 4, 2, ints, addrs, got);
    CHECK(ints[0] == 3 && ints[1] == 2 && ints[2] == 4 && got[0] == MPI_DOUBLE, "vector contents");
    MPI_Type_create_hvector(2, 1, 100, v, &t);
    MPI_Type_get_envelope(t, &ni, &na, &nd, &comb);
    CHECK(comb == MPI_COMBINER_HVECTOR && ni == 2 && na == 1 && nd == 1, "hvector envelope");
    MPI_Type_get_contents(t, 8, 4, 2, ints, addrs, got);
    CHECK(addrs[0] == 100 && ints[0] == 2, "hvector contents");
    /* the returned derived type is equivalent to v (a new handle to free) */
    MPI_Aint lb, ext;
    MPI_Type_get_extent(got[0], &lb, &ext);
    CHECK(ext == 10 * 8, "contents type extent %ld", (long)ext);
    MPI_Type_free(&got[0]);
    MPI_Type_get_envelope(MPI_INT, &ni, &na, &nd, &comb);
    CHECK(comb == MPI_COMBINER_NAMED, "MPI_INT envelope is NAMED");
    MPI_Type_dup(t, &got[1]);
    MPI_Type_get_envelope(got[1], &ni, &na, &nd, &comb);
    CHECK(comb == MPI_COMBINER_DUP && nd == 1, "dup envelope");
    MPI_Type_free(&got[1]);
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_Type_set_name(t, "my hvector");
    MPI_Type_get_name(t, name, &len);
    CHECK(strcmp(name, "my hvector") == 0 && len == 10, "type name '%s'", name);
    MPI_Type_get_name(MPI_DOUBLE, name, &len);
    CHECK(strcmp(name, "MPI_DOUBLE") == 0, "predefined name '%s'", name);
    MPI_Type_free(&t);
    MPI_Type_free(&v);
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    partner = mtest_rank ^ 1;
    peer_exists = partner < mtest_size;
    simple_constructors();
    subarrays();
    darrays();
    decoded_constants();
    padded_struct();
    queries();
    return MTest_Finalize(0);
}
