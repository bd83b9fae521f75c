/* rma_dtypes: derived datatypes and displacement units in one-sided operations.
 *
 *  - Every rank's window has its own disp_unit: rank r uses {1, 4, 8, 12}[r % 4]; origins
 *    compute target displacements with the target's unit (regions start at byte offsets that
 *    are multiples of 24).
 *  - MPI_Put: vector origin -> contiguous target; contiguous -> indexed target; struct of
 *    MPI_DOUBLE -> struct of MPI_DOUBLE (type-map order differs from address order);
 *    resized MPI_INT (extent 8) -> resized MPI_INT (extent 12).
 *  - MPI_Get: vector target -> contiguous origin; contiguous target -> indexed origin (the
 *    gaps of the origin buffer untouched).
 *  - MPI_Accumulate(MPI_SUM): vector origin -> indexed target; contiguous -> resized target.
 *  - Ring: every rank targets its right neighbour and gets from its left one (itself at one
 *    rank).  The whole target window is compared byte by byte with the expected image
 *    (sentinel bytes where nothing was targeted), and so are the origin buffers of the gets.
 *  - Two passes: MPI_Win_create + fences, MPI_Win_allocate + lock_all/unlock_all. */
#include "mtest.h"

#define W 768
#define SENTB 0xA5
/* Region byte offsets (multiples of 24 = lcm of the units). */
#define R_VEC 48     /* put: vector -> 8 contiguous ints */
#define R_IDX 96     /* put: 8 ints -> indexed (13 ints extent) */
#define R_STRUCT 168 /* put: struct of doubles (48 bytes extent) */
#define R_RES 240    /* put: resized ints, extent 12, count 5 */
#define R_GET 312    /* 64 ints read by gets */
#define R_ACC1 600   /* accumulate: vector -> indexed, 13 ints initialized */
#define R_ACC2 672   /* accumulate: contiguous -> resized(12), 13 ints initialized */
#define NACC 13

static const int units[4] = {1, 4, 8, 12};
static int unit_of(int r)
{
    return units[r % 4];
}

static int ival(int kind, int src, int i)
{
    return kind * 1000000 + src * 1000 + i + 1;
}

static double dval(int src, int i)
{
    return src * 100.0 + i + 0.5;
}

static void set_int(unsigned char *img, size_t off, int v)
{
    memcpy(img + off, &v, sizeof v);
}

static int get_int(const unsigned char *img, size_t off)
{
    int v;
    memcpy(&v, img + off, sizeof v);
    return v;
}

static void set_double(unsigned char *img, size_t off, double v)
{
    memcpy(img + off, &v, sizeof v);
}

static const int idx_bl[4] = {1, 3, 2, 2}, idx_dp[4] = {0, 2, 7, 11};
/* Target int positions of the indexed type, in type-map order. */
static const int idx_pos[8] = {0, 2, 3, 4, 7, 8, 11, 12};
/* Origin positions of vector(4, 2, 3). */
static const int vec3_pos[8] = {0, 1, 3, 4, 6, 7, 9, 10};
/* Target positions of vector(4, 2, 5). */
static const int vec5_pos[8] = {0, 1, 5, 6, 10, 11, 15, 16};
/* Origin positions of the get's indexed type {2,1,3,2} at {1,4,6,10}. */
static const int gidx_bl[4] = {2, 1, 3, 2}, gidx_dp[4] = {1, 4, 6, 10};
static const int gidx_pos[8] = {1, 2, 4, 6, 7, 8, 10, 11};

static MPI_Datatype vec3, vec5, idx, gidx, dstruct_o, dstruct_t, res8, res12;

static void make_types(void)
{
    MPI_Type_vector(4, 2, 3, MPI_INT, &vec3);
    MPI_Type_vector(4, 2, 5, MPI_INT, &vec5);
    MPI_Type_indexed(4, idx_bl, idx_dp, MPI_INT, &idx);
    MPI_Type_indexed(4, gidx_bl, gidx_dp, MPI_INT, &gidx);
    /* Origin struct: doubles 3,4 then 0 then 7 of the buffer. */
    int obl[3] = {2, 1, 1};
    MPI_Aint odp[3] = {24, 0, 56};
    MPI_Datatype ot[3] = {MPI_DOUBLE, MPI_DOUBLE, MPI_DOUBLE};
    MPI_Type_create_struct(3, obl, odp, ot, &dstruct_o);
    /* Target struct: doubles at bytes 0, 16, 24, 40. */
    int tbl[3] = {1, 2, 1};
    MPI_Aint tdp[3] = {0, 16, 40};
    MPI_Type_create_struct(3, tbl, tdp, ot, &dstruct_t);
    MPI_Type_create_resized(MPI_INT, 0, 8, &res8);
    MPI_Type_create_resized(MPI_INT, 0, 12, &res12);
    MPI_Datatype *all[] = {&vec3, &vec5, &idx, &gidx, &dstruct_o, &dstruct_t, &res8, &res12};
    for (int i = 0; i < 8; i++) {
        int rc = MPI_Type_commit(all[i]);
        CHECK_RC(rc, "MPI_Type_commit");
    }
    MPI_Aint lb, ext;
    MPI_Type_get_extent(res12, &lb, &ext);
    CHECK(lb == 0 && ext == 12, "resized extent %ld", (long)ext);
}

static void free_types(void)
{
    MPI_Datatype *all[] = {&vec3, &vec5, &idx, &gidx, &dstruct_o, &dstruct_t, &res8, &res12};
    for (int i = 0; i < 8; i++)
        MPI_Type_free(all[i]);
}

/* Initial window image of rank r. */
static void init_image(unsigned char *img, int r)
{
    memset(img, SENTB, W);
    for (int i = 0; i < 64; i++)
        set_int(img, R_GET + 4 * i, ival(5, r, i));
    for (int i = 0; i < NACC; i++) {
        set_int(img, R_ACC1 + 4 * i, ival(6, r, i));
        set_int(img, R_ACC2 + 4 * i, ival(7, r, i));
    }
}

/* Origin data of rank r. */
typedef struct {
    int v1[12];   /* put vector source */
    int v2[8];    /* put -> indexed source */
    double d[8];  /* struct source */
    int v4[10];   /* resized(8) source */
    int a1[12];   /* accumulate vector source */
    int a2[5];    /* accumulate -> resized(12) source */
} Origin;

static void fill_origin(Origin *o, int r)
{
    memset(o, 0, sizeof *o); /* padding too: origins are compared with memcmp */
    for (int i = 0; i < 12; i++)
        o->v1[i] = ival(1, r, i);
    for (int i = 0; i < 8; i++)
        o->v2[i] = ival(2, r, i);
    for (int i = 0; i < 8; i++)
        o->d[i] = dval(r, i);
    for (int i = 0; i < 10; i++)
        o->v4[i] = ival(4, r, i);
    for (int i = 0; i < 12; i++)
        o->a1[i] = r * 10 + i + 1;
    for (int i = 0; i < 5; i++)
        o->a2[i] = r * 100 + 7 * i + 3;
}

/* Expected image of rank me after its left neighbour left targeted it. */
static void expected_image(unsigned char *img, int me, int left)
{
    Origin o;
    init_image(img, me);
    fill_origin(&o, left);
    for (int k = 0; k < 8; k++)
        set_int(img, R_VEC + 4 * k, o.v1[vec3_pos[k]]);
    for (int k = 0; k < 8; k++)
        set_int(img, R_IDX + 4 * idx_pos[k], o.v2[k]);
    set_double(img, R_STRUCT + 0, o.d[3]);
    set_double(img, R_STRUCT + 16, o.d[4]);
    set_double(img, R_STRUCT + 24, o.d[0]);
    set_double(img, R_STRUCT + 40, o.d[7]);
    for (int k = 0; k < 5; k++)
        set_int(img, R_RES + 12 * k, o.v4[2 * k]);
    for (int k = 0; k < 8; k++) {
        size_t off = R_ACC1 + 4 * idx_pos[k];
        set_int(img, off, get_int(img, off) + o.a1[vec3_pos[k]]);
    }
    for (int k = 0; k < 5; k++) {
        size_t off = R_ACC2 + 12 * k;
        set_int(img, off, get_int(img, off) + o.a2[k]);
    }
}

static MPI_Aint tdisp(int target, int byteoff)
{
    CHECK(byteoff % unit_of(target) == 0, "test bug: offset %d, unit %d", byteoff, unit_of(target));
    return byteoff / unit_of(target);
}

/* Issue every operation of the pass (inside an epoch). */
static void issue(MPI_Win win, int me, int right, int left, Origin *o, int *g1, int *g2)
{
    int rc;
    rc = MPI_Put(o->v1, 1, vec3, right, tdisp(right, R_VEC), 8, MPI_INT, win);
    CHECK_RC(rc, "MPI_Put vector -> contiguous");
    rc = MPI_Put(o->v2, 8, MPI_INT, right, tdisp(right, R_IDX), 1, idx, win);
    CHECK_RC(rc, "MPI_Put contiguous -> indexed");
    rc = MPI_Put(o->d, 1, dstruct_o, right, tdisp(right, R_STRUCT), 1, dstruct_t, win);
    CHECK_RC(rc, "MPI_Put struct -> struct");
    rc = MPI_Put(o->v4, 5, res8, right, tdisp(right, R_RES), 5, res12, win);
    CHECK_RC(rc, "MPI_Put resized -> resized");
    rc = MPI_Get(g1, 8, MPI_INT, left, tdisp(left, R_GET), 1, vec5, win);
    CHECK_RC(rc, "MPI_Get vector -> contiguous");
    rc = MPI_Get(g2, 1, gidx, left, tdisp(left, R_GET + 4 * 18), 8, MPI_INT, win);
    CHECK_RC(rc, "MPI_Get contiguous -> indexed");
    rc = MPI_Accumulate(o->a1, 1, vec3, right, tdisp(right, R_ACC1), 1, idx, MPI_SUM, win);
    CHECK_RC(rc, "MPI_Accumulate vector -> indexed");
    rc = MPI_Accumulate(o->a2, 5, MPI_INT, right, tdisp(right, R_ACC2), 5, res12, MPI_SUM, win);
    CHECK_RC(rc, "MPI_Accumulate contiguous -> resized");
}

static void check_image(const unsigned char *mem, const unsigned char *want, const char *pass)
{
    int shown = 0;
    for (int i = 0; i < W && shown < 8; i++) {
        if (mem[i] != want[i]) {
            int a = i & ~3;
            CHECK(0, "%s: window byte %d is 0x%02x, expected 0x%02x (int at %d: %d, expected %d)",
                  pass, i, mem[i], want[i], a, get_int(mem, a), get_int(want, a));
            shown++;
            i = a + 3; /* one report per int */
        }
    }
}

static void check_gets(const int *g1, const int *g2, int left, const char *pass)
{
    for (int k = 0; k < 8; k++)
        CHECK(g1[k] == ival(5, left, vec5_pos[k]), "%s: get vector -> contiguous [%d] = %d, "
              "expected %d", pass, k, g1[k], ival(5, left, vec5_pos[k]));
    CHECK(g1[8] == -99, "%s: get wrote past the contiguous origin (%d)", pass, g1[8]);
    int want[16];
    for (int i = 0; i < 16; i++)
        want[i] = -99;
    for (int k = 0; k < 8; k++)
        want[gidx_pos[k]] = ival(5, left, 18 + k);
    for (int i = 0; i < 16; i++)
        CHECK(g2[i] == want[i], "%s: get contiguous -> indexed origin[%d] = %d, expected %d",
              pass, i, g2[i], want[i]);
}

static void run_pass(int pass)
{
    int rc, me, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (me + 1) % size, left = (me + size - 1) % size;
    const char *pname = pass == 0 ? "create+fence" : "allocate+lock_all";
    unsigned char *mem = NULL, *want = malloc(W);
    MPI_Win win = MPI_WIN_NULL;

    if (pass == 0) {
        mem = malloc(W);
        rc = MPI_Win_create(mem, W, unit_of(me), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
        CHECK_RC(rc, "MPI_Win_create");
    } else {
        rc = MPI_Win_allocate(W, unit_of(me), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
        CHECK_RC(rc, "MPI_Win_allocate");
    }
    int *unitp = NULL, flag = 0;
    MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &unitp, &flag);
    CHECK(flag && unitp && *unitp == unit_of(me), "%s: MPI_WIN_DISP_UNIT %d, expected %d", pname,
          flag && unitp ? *unitp : -1, unit_of(me));

    Origin o;
    fill_origin(&o, me);
    int g1[9], g2[16];
    for (int i = 0; i < 9; i++)
        g1[i] = -99;
    for (int i = 0; i < 16; i++)
        g2[i] = -99;

    if (pass == 0) {
        init_image(mem, me);
        rc = MPI_Win_fence(0, win);
        CHECK_RC(rc, "MPI_Win_fence");
        issue(win, me, right, left, &o, g1, g2);
        rc = MPI_Win_fence(0, win);
        CHECK_RC(rc, "MPI_Win_fence");
    } else {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, win);
        init_image(mem, me);
        MPI_Win_unlock(me, win);
        MPI_Barrier(MPI_COMM_WORLD);
        rc = MPI_Win_lock_all(0, win);
        CHECK_RC(rc, "MPI_Win_lock_all");
        issue(win, me, right, left, &o, g1, g2);
        rc = MPI_Win_unlock_all(win);
        CHECK_RC(rc, "MPI_Win_unlock_all");
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_lock(MPI_LOCK_SHARED, me, 0, win);
    }
    expected_image(want, me, left);
    check_image(mem, want, pname);
    check_gets(g1, g2, left, pname);
    if (pass == 1)
        MPI_Win_unlock(me, win);

    /* Origin buffers of puts and accumulates are not modified. */
    Origin o2;
    fill_origin(&o2, me);
    CHECK(memcmp(&o, &o2, sizeof o) == 0, "%s: an origin buffer changed", pname);

    rc = MPI_Win_free(&win);
    CHECK(rc == MPI_SUCCESS && win == MPI_WIN_NULL, "MPI_Win_free");
    if (pass == 0)
        free(mem);
    free(want);
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
#ifdef OPEN_MPI
    if (mtest_size == 1) { /* no one-sided component for a single process in Open MPI 4.1 here */
        MTest_Skip("Open MPI 4.1: MPI_Win_create on one process fails with MPI_ERR_WIN");
        return MTest_Finalize(0);
    }
#endif
    make_types();
    run_pass(0);
    run_pass(1);
    free_types();
    return MTest_Finalize(0);
}
