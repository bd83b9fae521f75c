/* rma_acc: accumulate operations and atomics.
 *
 *  - MPI_Accumulate on MPI_INT with MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN, MPI_BAND, MPI_BOR,
 *    MPI_BXOR, MPI_LAND, MPI_LOR and on MPI_DOUBLE with SUM, PROD, MAX, MIN: every rank
 *    accumulates (count 2) into every rank inside a fence epoch; the result is checked
 *    against the reduction computed locally (commutative ops: order does not matter).
 *    MPI_REPLACE from the left neighbour only.
 *  - MPI_Get_accumulate (SUM, MPI_NO_OP as an atomic read, REPLACE as a swap, MAX on
 *    doubles), MPI_Fetch_and_op (SUM, NO_OP, REPLACE, SUM on MPI_DOUBLE),
 *    MPI_Compare_and_swap (matching and not matching compare value) in a ring: fetched
 *    values are the target's old values, targets get the new ones.
 *  - MPI_Rput, MPI_Rget, MPI_Raccumulate, MPI_Rget_accumulate in a lock_all epoch, each
 *    completed by MPI_Wait (get results checked right after the wait).
 *  - MPI_MAXLOC and MPI_MINLOC on MPI_DOUBLE_INT from every rank to every rank (ties go to
 *    the lowest index).
 *  - Concurrency: every rank adds 1 to a counter on rank 0 1000 times with MPI_Accumulate
 *    under lock_all (total size*1000), then 1000 times with MPI_Fetch_and_op + flush (the
 *    fetched values of all ranks are exactly 0 .. size*1000-1, increasing on each rank).
 *  - A mutex built from MPI_Compare_and_swap on rank 0 (spin with MPI_Win_flush) protects a
 *    non-atomic read-modify-write (MPI_Get, flush, increment, MPI_Put, flush) of a counter
 *    on the last rank; while holding it, an atomic read shows the holder's id; the total
 *    equals the number of increments. */
#include "mtest.h"
#include <sched.h>

static int me, np;

/* ---- element-wise ops ---- */

enum { O_SUM, O_PROD, O_MAX, O_MIN, O_BAND, O_BOR, O_BXOR, O_LAND, O_LOR, NIOPS };
static const MPI_Op iop[NIOPS] = {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN, MPI_BAND,
                                  MPI_BOR, MPI_BXOR, MPI_LAND, MPI_LOR};
static const char *iopname[NIOPS] = {"SUM", "PROD", "MAX", "MIN", "BAND",
                                     "BOR", "BXOR", "LAND", "LOR"};
#define NDOPS 4 /* SUM, PROD, MAX, MIN on doubles */

static int iapply(int op, int a, int b)
{
    switch (op) {
    case O_SUM: return a + b;
    case O_PROD: return a * b;
    case O_MAX: return a > b ? a : b;
    case O_MIN: return a < b ? a : b;
    case O_BAND: return a & b;
    case O_BOR: return a | b;
    case O_BXOR: return a ^ b;
    case O_LAND: return a && b;
    case O_LOR: return a || b;
    }
    return 0;
}

static double dapply(int op, double a, double b)
{
    switch (op) {
    case O_SUM: return a + b;
    case O_PROD: return a * b;
    case O_MAX: return a > b ? a : b;
    case O_MIN: return a < b ? a : b;
    }
    return 0;
}

/* Initial value of slot k of op at target t, and the contribution of origin r. */
static int iinit(int op, int t, int k)
{
    switch (op) {
    case O_SUM: return t * 10 + k;
    case O_PROD: return 2 + k;
    case O_MAX: return -100 - k;
    case O_MIN: return 100 + k;
    case O_BAND: return 0x7fff;
    case O_BOR: return 0x10000 << k;
    case O_BXOR: return 0x5a5a + k;
    case O_LAND: return 5;
    case O_LOR: return k == 0 ? 0 : 9;
    }
    return 0;
}

static int icontrib(int op, int r, int t, int k)
{
    switch (op) {
    case O_SUM: return r + 1 + k * t;
    case O_PROD: return (r + t + k) % 3 + 1;
    case O_MAX:
    case O_MIN: return (r * 7 + t + k) % 11 - 5;
    case O_BAND: return ~(1 << ((r + k) % 15));
    case O_BOR: return 1 << ((r + t + k) % 15);
    case O_BXOR: return (r + 1) * (0x111 + t + k);
    case O_LAND: return k == 0 ? 3 : (r == np - 1 ? 0 : 2);
    case O_LOR: return k == 0 ? (r == 0 ? 7 : 0) : 0;
    }
    return 0;
}

static double dinit(int op, int t, int k)
{
    return op == O_PROD ? 1.5 + k : op == O_MAX ? -50.0 : op == O_MIN ? 50.0 : t + 0.25 * k;
}

static double dcontrib(int op, int r, int t, int k)
{
    if (op == O_PROD)
        return ((r + t + k) % 3) * 0.5 + 1.0; /* 1, 1.5, 2: exact products */
    return (r + 1) * 0.5 + t - 2.0 * k;
}

/* int window layout (slots) */
#define S_OPS 0                     /* NIOPS*2 */
#define S_REPL (S_OPS + NIOPS * 2)  /* 2: REPLACE from the left */
#define S_GA (S_REPL + 2)           /* 2: Get_accumulate SUM */
#define S_GN (S_GA + 2)             /* 2: Get_accumulate NO_OP */
#define S_GR (S_GN + 2)             /* 2: Get_accumulate REPLACE */
#define S_FS (S_GR + 2)             /* 1: Fetch_and_op SUM */
#define S_FN (S_FS + 1)             /* 1: Fetch_and_op NO_OP */
#define S_FR (S_FN + 1)             /* 1: Fetch_and_op REPLACE */
#define S_CS1 (S_FR + 1)            /* 1: CAS matching */
#define S_CS2 (S_CS1 + 1)           /* 1: CAS not matching */
#define S_RP (S_CS2 + 1)            /* 4: Rput */
#define S_RG (S_RP + 4)             /* 4: Rget source */
#define S_RA (S_RG + 4)             /* 4: Raccumulate */
#define S_RGA (S_RA + 4)            /* 4: Rget_accumulate */
#define NISLOTS (S_RGA + 4)
/* double window layout */
#define D_OPS 0                     /* NDOPS*2 */
#define D_REPL (D_OPS + NDOPS * 2)  /* 2 */
#define D_FS (D_REPL + 2)           /* 1: Fetch_and_op SUM on double */
#define D_GMAX (D_FS + 1)           /* 2: Get_accumulate MAX on double */
#define NDSLOTS (D_GMAX + 2)

static int islot_init(int t, int s)
{
    if (s < S_REPL)
        return iinit((s - S_OPS) / 2, t, (s - S_OPS) % 2);
    return 100000 + t * 1000 + s; /* distinct from everything any origin writes */
}

static double dslot_init(int t, int s)
{
    if (s < D_REPL)
        return dinit((s - D_OPS) / 2, t, (s - D_OPS) % 2);
    return 1000.0 + t * 10.0 + s * 0.25;
}

/* Window sizes are rounded up to a multiple of 16 bytes: MPICH 4.0.2 (ch4) misplaces the
 * remote base of MPI_Win_allocate windows of other sizes (rma_flavors checks odd sizes). */
#define ROUND16(n) ((((n) + 15) / 16) * 16)

static void ops_and_atomics(void)
{
    int rc, *im = NULL, right = (me + 1) % np, left = (me + np - 1) % np;
    double *dm = NULL;
    MPI_Win iw, dw;
    rc = MPI_Win_allocate(ROUND16(NISLOTS * sizeof(int)), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &im,
                          &iw);
    CHECK_RC(rc, "MPI_Win_allocate(int)");
    rc = MPI_Win_allocate(ROUND16(NDSLOTS * sizeof(double)), sizeof(double), MPI_INFO_NULL,
                          MPI_COMM_WORLD, &dm, &dw);
    CHECK_RC(rc, "MPI_Win_allocate(double)");
    for (int s = 0; s < NISLOTS; s++)
        im[s] = islot_init(me, s);
    for (int s = 0; s < NDSLOTS; s++)
        dm[s] = dslot_init(me, s);

    /* -- accumulate with every op, every rank into every rank -- */
    MPI_Win_fence(0, iw);
    MPI_Win_fence(0, dw);
    /* Origin buffers stay untouched until the epoch ends: one per operation. */
    int *iv = malloc((size_t)np * NIOPS * 2 * sizeof(int));
    double *dv = malloc((size_t)np * NDOPS * 2 * sizeof(double));
    for (int t = 0; t < np; t++) {
        for (int op = 0; op < NIOPS; op++) {
            int *v = iv + (t * NIOPS + op) * 2;
            v[0] = icontrib(op, me, t, 0);
            v[1] = icontrib(op, me, t, 1);
            rc = MPI_Accumulate(v, 2, MPI_INT, t, S_OPS + 2 * op, 2, MPI_INT, iop[op], iw);
            CHECK_RC(rc, "MPI_Accumulate(int)");
        }
        for (int op = 0; op < NDOPS; op++) {
            double *v = dv + (t * NDOPS + op) * 2;
            v[0] = dcontrib(op, me, t, 0);
            v[1] = dcontrib(op, me, t, 1);
            rc = MPI_Accumulate(v, 2, MPI_DOUBLE, t, D_OPS + 2 * op, 2, MPI_DOUBLE, iop[op], dw);
            CHECK_RC(rc, "MPI_Accumulate(double)");
        }
    }
    int repl_i[2] = {-1000 - me, -2000 - me};
    double repl_d[2] = {-0.5 - me, -0.75 - me};
    rc = MPI_Accumulate(repl_i, 2, MPI_INT, right, S_REPL, 2, MPI_INT, MPI_REPLACE, iw);
    CHECK_RC(rc, "MPI_Accumulate(REPLACE, int)");
    rc = MPI_Accumulate(repl_d, 2, MPI_DOUBLE, right, D_REPL, 2, MPI_DOUBLE, MPI_REPLACE, dw);
    CHECK_RC(rc, "MPI_Accumulate(REPLACE, double)");

    /* -- fetching atomics in a ring (same epoch, other slots) -- */
    int ga_o[2] = {me + 1, me + 2}, ga_r[2] = {-1, -1};
    int gn_o[2] = {77, 77}, gn_r[2] = {-1, -1};
    int gr_o[2] = {-3000 - me, -4000 - me}, gr_r[2] = {-1, -1};
    int fs_o = me + 5, fs_r = -1, fn_r = -1, fr_o = -5000 - me, fr_r = -1;
    int cs1_c = islot_init(right, S_CS1), cs1_s = 9000 + me, cs1_r = -1;
    int cs2_c = islot_init(right, S_CS2) + 1, cs2_s = 9500 + me, cs2_r = -1;
    double dfs_o = 0.5 * me + 0.25, dfs_r = -1, dg_o[2] = {5000.0 + me, 0.0}, dg_r[2] = {-1, -1};

    rc = MPI_Get_accumulate(ga_o, 2, MPI_INT, ga_r, 2, MPI_INT, right, S_GA, 2, MPI_INT, MPI_SUM,
                            iw);
    CHECK_RC(rc, "MPI_Get_accumulate(SUM)");
    rc = MPI_Get_accumulate(gn_o, 2, MPI_INT, gn_r, 2, MPI_INT, right, S_GN, 2, MPI_INT,
                            MPI_NO_OP, iw);
    CHECK_RC(rc, "MPI_Get_accumulate(NO_OP)");
    rc = MPI_Get_accumulate(gr_o, 2, MPI_INT, gr_r, 2, MPI_INT, right, S_GR, 2, MPI_INT,
                            MPI_REPLACE, iw);
    CHECK_RC(rc, "MPI_Get_accumulate(REPLACE)");
    rc = MPI_Fetch_and_op(&fs_o, &fs_r, MPI_INT, right, S_FS, MPI_SUM, iw);
    CHECK_RC(rc, "MPI_Fetch_and_op(SUM)");
    rc = MPI_Fetch_and_op(NULL, &fn_r, MPI_INT, right, S_FN, MPI_NO_OP, iw);
    CHECK_RC(rc, "MPI_Fetch_and_op(NO_OP)");
    rc = MPI_Fetch_and_op(&fr_o, &fr_r, MPI_INT, right, S_FR, MPI_REPLACE, iw);
    CHECK_RC(rc, "MPI_Fetch_and_op(REPLACE)");
    rc = MPI_Compare_and_swap(&cs1_s, &cs1_c, &cs1_r, MPI_INT, right, S_CS1, iw);
    CHECK_RC(rc, "MPI_Compare_and_swap (matching)");
    rc = MPI_Compare_and_swap(&cs2_s, &cs2_c, &cs2_r, MPI_INT, right, S_CS2, iw);
    CHECK_RC(rc, "MPI_Compare_and_swap (not matching)");
    rc = MPI_Fetch_and_op(&dfs_o, &dfs_r, MPI_DOUBLE, right, D_FS, MPI_SUM, dw);
    CHECK_RC(rc, "MPI_Fetch_and_op(SUM, double)");
    rc = MPI_Get_accumulate(dg_o, 2, MPI_DOUBLE, dg_r, 2, MPI_DOUBLE, right, D_GMAX, 2,
                            MPI_DOUBLE, MPI_MAX, dw);
    CHECK_RC(rc, "MPI_Get_accumulate(MAX, double)");
    MPI_Win_fence(0, iw);
    MPI_Win_fence(0, dw);
    free(iv);
    free(dv);

    /* accumulate results */
    for (int op = 0; op < NIOPS; op++)
        for (int k = 0; k < 2; k++) {
            int want = iinit(op, me, k);
            for (int r = 0; r < np; r++)
                want = iapply(op, want, icontrib(op, r, me, k));
            CHECK(im[S_OPS + 2 * op + k] == want, "MPI_%s on int [%d]: %d, expected %d (initial %d)",
                  iopname[op], k, im[S_OPS + 2 * op + k], want, iinit(op, me, k));
        }
    for (int op = 0; op < NDOPS; op++)
        for (int k = 0; k < 2; k++) {
            double want = dinit(op, me, k);
            for (int r = 0; r < np; r++)
                want = dapply(op, want, dcontrib(op, r, me, k));
            CHECK(dm[D_OPS + 2 * op + k] == want, "MPI_%s on double [%d]: %g, expected %g",
                  iopname[op], k, dm[D_OPS + 2 * op + k], want);
        }
    CHECK(im[S_REPL] == -1000 - left && im[S_REPL + 1] == -2000 - left,
          "MPI_REPLACE on int: %d %d", im[S_REPL], im[S_REPL + 1]);
    CHECK(dm[D_REPL] == -0.5 - left && dm[D_REPL + 1] == -0.75 - left,
          "MPI_REPLACE on double: %g %g", dm[D_REPL], dm[D_REPL + 1]);

    /* fetching atomics: results (old values of the right neighbour) */
    for (int k = 0; k < 2; k++) {
        CHECK(ga_r[k] == islot_init(right, S_GA + k), "Get_accumulate(SUM) fetched %d, expected %d",
              ga_r[k], islot_init(right, S_GA + k));
        CHECK(gn_r[k] == islot_init(right, S_GN + k), "Get_accumulate(NO_OP) fetched %d, "
              "expected %d", gn_r[k], islot_init(right, S_GN + k));
        CHECK(gr_r[k] == islot_init(right, S_GR + k), "Get_accumulate(REPLACE) fetched %d, "
              "expected %d", gr_r[k], islot_init(right, S_GR + k));
        CHECK(dg_r[k] == dslot_init(right, D_GMAX + k), "Get_accumulate(MAX, double) fetched "
              "%g, expected %g", dg_r[k], dslot_init(right, D_GMAX + k));
    }
    CHECK(fs_r == islot_init(right, S_FS), "Fetch_and_op(SUM) fetched %d", fs_r);
    CHECK(fn_r == islot_init(right, S_FN), "Fetch_and_op(NO_OP) fetched %d", fn_r);
    CHECK(fr_r == islot_init(right, S_FR), "Fetch_and_op(REPLACE) fetched %d", fr_r);
    CHECK(cs1_r == islot_init(right, S_CS1), "Compare_and_swap (matching) fetched %d", cs1_r);
    CHECK(cs2_r == islot_init(right, S_CS2), "Compare_and_swap (not matching) fetched %d", cs2_r);
    CHECK(dfs_r == dslot_init(right, D_FS), "Fetch_and_op(SUM, double) fetched %g", dfs_r);
    /* ... and the new values here (written by the left neighbour) */
    for (int k = 0; k < 2; k++) {
        CHECK(im[S_GA + k] == islot_init(me, S_GA + k) + left + 1 + k,
              "Get_accumulate(SUM) target [%d] = %d", k, im[S_GA + k]);
        CHECK(im[S_GN + k] == islot_init(me, S_GN + k), "Get_accumulate(NO_OP) changed the "
              "target [%d] to %d", k, im[S_GN + k]);
        CHECK(im[S_GR + k] == (k == 0 ? -3000 : -4000) - left,
              "Get_accumulate(REPLACE) target [%d] = %d", k, im[S_GR + k]);
    }
    CHECK(dm[D_GMAX] == 5000.0 + left && dm[D_GMAX + 1] == dslot_init(me, D_GMAX + 1),
          "Get_accumulate(MAX, double) target %g %g", dm[D_GMAX], dm[D_GMAX + 1]);
    CHECK(im[S_FS] == islot_init(me, S_FS) + left + 5, "Fetch_and_op(SUM) target %d", im[S_FS]);
    CHECK(im[S_FN] == islot_init(me, S_FN), "Fetch_and_op(NO_OP) changed the target: %d",
          im[S_FN]);
    CHECK(im[S_FR] == -5000 - left, "Fetch_and_op(REPLACE) target %d", im[S_FR]);
    CHECK(im[S_CS1] == 9000 + left, "Compare_and_swap (matching) target %d", im[S_CS1]);
    CHECK(im[S_CS2] == islot_init(me, S_CS2), "Compare_and_swap (not matching) changed the "
          "target to %d", im[S_CS2]);
    CHECK(dm[D_FS] == dslot_init(me, D_FS) + 0.5 * left + 0.25, "Fetch_and_op(SUM, double) "
          "target %g", dm[D_FS]);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, iw);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, dw);

    /* -- request-based operations in a lock_all epoch -- */
    int rp_o[4], rg_r[5], ra_o[4], rga_o[4], rga_r[4];
    for (int k = 0; k < 4; k++) {
        rp_o[k] = 20000 + me * 10 + k;
        ra_o[k] = me * 3 + k;
        rga_o[k] = 100 * (me + 1) + k;
        rg_r[k] = rga_r[k] = -1;
    }
    rg_r[4] = -1;
    MPI_Request req;
    MPI_Barrier(MPI_COMM_WORLD);
    rc = MPI_Win_lock_all(0, iw);
    CHECK_RC(rc, "MPI_Win_lock_all");
    req = MPI_REQUEST_NULL;
    rc = MPI_Rput(rp_o, 4, MPI_INT, right, S_RP, 4, MPI_INT, iw, &req);
    CHECK(rc == MPI_SUCCESS && req != MPI_REQUEST_NULL, "MPI_Rput: %d", rc);
    rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    CHECK(rc == MPI_SUCCESS && req == MPI_REQUEST_NULL, "MPI_Wait(Rput)");
    req = MPI_REQUEST_NULL;
    rc = MPI_Rget(rg_r, 4, MPI_INT, left, S_RG, 4, MPI_INT, iw, &req);
    CHECK(rc == MPI_SUCCESS && req != MPI_REQUEST_NULL, "MPI_Rget: %d", rc);
    rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    CHECK(rc == MPI_SUCCESS && req == MPI_REQUEST_NULL, "MPI_Wait(Rget)");
    for (int k = 0; k < 4; k++)
        CHECK(rg_r[k] == islot_init(left, S_RG + k), "Rget [%d] = %d after MPI_Wait, expected %d",
              k, rg_r[k], islot_init(left, S_RG + k));
    CHECK(rg_r[4] == -1, "Rget wrote past its buffer");
    req = MPI_REQUEST_NULL;
    rc = MPI_Raccumulate(ra_o, 4, MPI_INT, right, S_RA, 4, MPI_INT, MPI_SUM, iw, &req);
    CHECK(rc == MPI_SUCCESS && req != MPI_REQUEST_NULL, "MPI_Raccumulate: %d", rc);
    rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    CHECK(rc == MPI_SUCCESS && req == MPI_REQUEST_NULL, "MPI_Wait(Raccumulate)");
    /* The origin buffer may be reused after the wait. */
    for (int k = 0; k < 4; k++)
        ra_o[k] = -1;
    req = MPI_REQUEST_NULL;
    rc = MPI_Rget_accumulate(rga_o, 4, MPI_INT, rga_r, 4, MPI_INT, right, S_RGA, 4, MPI_INT,
                             MPI_SUM, iw, &req);
    CHECK(rc == MPI_SUCCESS && req != MPI_REQUEST_NULL, "MPI_Rget_accumulate: %d", rc);
    rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    CHECK(rc == MPI_SUCCESS && req == MPI_REQUEST_NULL, "MPI_Wait(Rget_accumulate)");
    for (int k = 0; k < 4; k++)
        CHECK(rga_r[k] == islot_init(right, S_RGA + k), "Rget_accumulate fetched [%d] = %d, "
              "expected %d", k, rga_r[k], islot_init(right, S_RGA + k));
    rc = MPI_Win_flush_all(iw);
    CHECK_RC(rc, "MPI_Win_flush_all");
    rc = MPI_Win_unlock_all(iw);
    CHECK_RC(rc, "MPI_Win_unlock_all");
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, me, 0, iw);
    for (int k = 0; k < 4; k++) {
        CHECK(im[S_RP + k] == 20000 + left * 10 + k, "Rput target [%d] = %d", k, im[S_RP + k]);
        CHECK(im[S_RA + k] == islot_init(me, S_RA + k) + left * 3 + k, "Raccumulate target [%d] "
              "= %d", k, im[S_RA + k]);
        CHECK(im[S_RGA + k] == islot_init(me, S_RGA + k) + 100 * (left + 1) + k,
              "Rget_accumulate target [%d] = %d", k, im[S_RGA + k]);
    }
    MPI_Win_unlock(me, iw);

    MPI_Win_free(&iw);
    MPI_Win_free(&dw);
}

/* ---- MAXLOC / MINLOC on MPI_DOUBLE_INT ---- */

typedef struct {
    double v;
    int i;
} DI;

static void loc_ops(void)
{
    DI *m = NULL;
    MPI_Win w;
    int rc = MPI_Win_allocate(ROUND16(2 * sizeof(DI)), sizeof(DI), MPI_INFO_NULL, MPI_COMM_WORLD, &m, &w);
    CHECK_RC(rc, "MPI_Win_allocate(DI)");
    m[0].v = -1e9;
    m[0].i = -1;
    m[1].v = 1e9;
    m[1].i = -1;
    MPI_Win_fence(0, w);
    DI *xs = malloc(np * sizeof(DI)); /* untouched until the fence */
    for (int t = 0; t < np; t++) {
        xs[t].v = (double)((me * 3 + t) % 4);
        xs[t].i = me * 10 + t;
        rc = MPI_Accumulate(&xs[t], 1, MPI_DOUBLE_INT, t, 0, 1, MPI_DOUBLE_INT, MPI_MAXLOC, w);
        CHECK_RC(rc, "MPI_Accumulate(MAXLOC)");
        rc = MPI_Accumulate(&xs[t], 1, MPI_DOUBLE_INT, t, 1, 1, MPI_DOUBLE_INT, MPI_MINLOC, w);
        CHECK_RC(rc, "MPI_Accumulate(MINLOC)");
    }
    MPI_Win_fence(0, w);
    free(xs);
    DI mx = {-1e9, -1}, mn = {1e9, -1};
    for (int r = 0; r < np; r++) {
        DI x = {(double)((r * 3 + me) % 4), r * 10 + me};
        if (x.v > mx.v || (x.v == mx.v && x.i < mx.i))
            mx = x;
        if (x.v < mn.v || (x.v == mn.v && x.i < mn.i))
            mn = x;
    }
    CHECK(m[0].v == mx.v && m[0].i == mx.i, "MAXLOC: (%g, %d), expected (%g, %d)", m[0].v, m[0].i,
          mx.v, mx.i);
    CHECK(m[1].v == mn.v && m[1].i == mn.i, "MINLOC: (%g, %d), expected (%g, %d)", m[1].v, m[1].i,
          mn.v, mn.i);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, w);
    MPI_Win_free(&w);
}

/* ---- concurrency ---- */

#define NADD 1000
#define NMUTEX 12

static void concurrent(void)
{
    int *m = NULL, rc, one = 1, zero = 0, last = np - 1;
    MPI_Win w;
    /* [0] accumulate counter, [1] fetch_and_op counter (rank 0), [2] mutex word (rank 0),
     * [3] counter under the mutex (last rank) */
    rc = MPI_Win_allocate(ROUND16(4 * sizeof(int)), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &m, &w);
    CHECK_RC(rc, "MPI_Win_allocate(counters)");
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, w);
    m[0] = m[1] = m[2] = m[3] = 0;
    MPI_Win_unlock(me, w);
    MPI_Barrier(MPI_COMM_WORLD);

    /* Accumulate. */
    rc = MPI_Win_lock_all(0, w);
    CHECK_RC(rc, "MPI_Win_lock_all");
    for (int i = 0; i < NADD; i++) {
        rc = MPI_Accumulate(&one, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_SUM, w);
        if (!CHECK_RC(rc, "MPI_Accumulate(counter)"))
            break;
        if (i % 100 == 99)
            MPI_Win_flush(0, w);
    }
    rc = MPI_Win_unlock_all(w);
    CHECK_RC(rc, "MPI_Win_unlock_all");
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, w);
        CHECK(m[0] == np * NADD, "accumulate counter %d, expected %d", m[0], np * NADD);
        MPI_Win_unlock(0, w);
    }

    /* Fetch_and_op (flushed every 100: results land in distinct buffers). */
    int *mine = malloc(NADD * sizeof(int));
    rc = MPI_Win_lock_all(0, w);
    for (int i = 0; i < NADD; i++) {
        mine[i] = -1;
        rc = MPI_Fetch_and_op(&one, &mine[i], MPI_INT, 0, 1, MPI_SUM, w);
        if (!CHECK_RC(rc, "MPI_Fetch_and_op(counter)"))
            break;
        if (i % 100 == 99)
            MPI_Win_flush(0, w);
    }
    MPI_Win_unlock_all(w);
    /* Accumulate ordering (default rar,raw,war,waw): one origin's operations on one location
     * happen in order. */
    for (int i = 1; i < NADD; i++)
        if (!CHECK(mine[i] > mine[i - 1], "fetched %d after %d", mine[i], mine[i - 1]))
            break;
    int *all = me == 0 ? malloc((size_t)np * NADD * sizeof(int)) : NULL;
    MPI_Gather(mine, NADD, MPI_INT, all, NADD, MPI_INT, 0, MPI_COMM_WORLD);
    if (me == 0) {
        char *seen = calloc((size_t)np * NADD, 1);
        int bad = 0;
        for (int i = 0; i < np * NADD; i++) {
            if (all[i] < 0 || all[i] >= np * NADD || seen[all[i]]) {
                if (bad++ < 5)
                    CHECK(0, "fetch_and_op: value %d (from rank %d) out of range or repeated",
                          all[i], i / NADD);
            } else {
                seen[all[i]] = 1;
            }
        }
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, w);
        CHECK(m[1] == np * NADD, "fetch_and_op counter %d, expected %d", m[1], np * NADD);
        MPI_Win_unlock(0, w);
        free(seen);
        free(all);
    }
    free(mine);
    MPI_Barrier(MPI_COMM_WORLD);

    /* Mutex from compare-and-swap. */
    rc = MPI_Win_lock_all(0, w);
    for (int i = 0; i < NMUTEX; i++) {
        int id = me + 1, old = -1, tries = 0;
        for (;;) {
            rc = MPI_Compare_and_swap(&id, &zero, &old, MPI_INT, 0, 2, w);
            MPI_Win_flush(0, w);
            if (rc != MPI_SUCCESS || old == 0)
                break;
            if (++tries % 4 == 0)
                sched_yield();
        }
        if (!CHECK(rc == MPI_SUCCESS, "MPI_Compare_and_swap(mutex) failed"))
            break;
        int holder = -1;
        MPI_Fetch_and_op(NULL, &holder, MPI_INT, 0, 2, MPI_NO_OP, w);
        MPI_Win_flush(0, w);
        CHECK(holder == id, "mutex word %d while held by %d", holder, id);
        int v = -1;
        MPI_Get(&v, 1, MPI_INT, last, 3, 1, MPI_INT, w);
        MPI_Win_flush(last, w);
        v++;
        MPI_Put(&v, 1, MPI_INT, last, 3, 1, MPI_INT, w);
        MPI_Win_flush(last, w);
        /* release */
        MPI_Fetch_and_op(&zero, &old, MPI_INT, 0, 2, MPI_REPLACE, w);
        MPI_Win_flush(0, w);
        CHECK(old == id, "mutex word %d at release by %d", old, id);
    }
    MPI_Win_unlock_all(w);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == last) {
        MPI_Win_lock(MPI_LOCK_SHARED, me, 0, w);
        CHECK(m[3] == np * NMUTEX, "counter under the mutex %d, expected %d", m[3], np * NMUTEX);
        MPI_Win_unlock(me, w);
    }
    MPI_Win_free(&w);
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    me = mtest_rank;
    np = mtest_size;
    ops_and_atomics();
    loc_ops();
    concurrent();
    return MTest_Finalize(0);
}
