/* rma_flavors: every window flavour under every synchronization mode.
 *
 *  - Flavours: MPI_Win_create on malloc'd memory, MPI_Win_allocate, MPI_Win_allocate_shared
 *    (on the MPI_COMM_TYPE_SHARED split of WORLD) and MPI_Win_create_dynamic +
 *    MPI_Win_attach (displacements are the MPI_Get_address of the attached buffers,
 *    exchanged with MPI_Allgather).
 *  - Synchronization: MPI_Win_fence (NOPRECEDE / NOSUCCEED asserts); PSCW where every rank
 *    posts to and starts on the whole window group, ended by MPI_Win_wait, and once by an
 *    MPI_Win_test loop; MPI_Win_lock/unlock shared and exclusive; MPI_Win_lock_all with
 *    MPI_Win_flush, MPI_Win_flush_local (the origin buffer is overwritten right after and
 *    the target must still get the old values), MPI_Win_flush_local_all, MPI_Win_flush_all.
 *  - In each round every rank puts a rank- and round-dependent pattern into its right
 *    neighbour and gets the pattern of its left neighbour (itself at one rank); the window
 *    memory starts as a sentinel, so that an operation that did nothing fails.
 *  - Window attributes: MPI_WIN_BASE, MPI_WIN_SIZE, MPI_WIN_DISP_UNIT, MPI_WIN_CREATE_FLAVOR,
 *    MPI_WIN_MODEL (MPI_WIN_UNIFIED); MPI_Win_get_group equals the communicator's group;
 *    names (empty by default, MPI_Win_set_name / MPI_Win_get_name); MPI_Win_free sets
 *    MPI_WIN_NULL.
 *  - Windows of 3 and 5 ints (not multiples of 8 or 16 bytes), MPI_Win_create and
 *    MPI_Win_allocate: a fence ring put lands in the right rank's memory.
 * Reference MPIs: MPICH 4.0.2 misplaces puts into MPI_Win_allocate windows whose size is not
 * a multiple of 16 bytes (that check is not run with it); Open MPI 4.1 gives windows a
 * default name, and cannot create a window on one process here (skipped at 1 rank). */
#include "mtest.h"

#define N 8 /* ints per region */
#define NREG 3 /* [0,N): put A, [N,2N): pattern got by others, [2N,3N): put B */
#define SENT (-7)

enum { F_CREATE, F_ALLOCATE, F_SHARED, F_DYNAMIC, NFLAVORS };
static const char *fname[] = {"create", "allocate", "allocate_shared", "dynamic"};
enum { S_FENCE, S_PSCW, S_PSCW_TEST, S_LOCK_SHARED, S_LOCK_EXCL, S_LOCK_ALL, NSYNCS };
static const char *sname[] = {"fence", "pscw", "pscw+Win_test", "lock shared", "lock exclusive",
                              "lock_all+flush"};

typedef struct {
    MPI_Comm comm;
    int rank, size, flavor;
    MPI_Win win;
    int *mem;       /* local window memory (NREG*N ints) */
    MPI_Aint *addr; /* dynamic: attached address of every rank */
} Ctx;

static int val(int kind, int src, int round, int i)
{
    return kind * 1000000 + src * 10000 + round * 100 + i + 1;
}

/* Displacement of int index idx in target's window. */
static MPI_Aint disp(const Ctx *c, int target, int idx)
{
    if (c->flavor == F_DYNAMIC)
        return c->addr[target] + (MPI_Aint)idx * (MPI_Aint)sizeof(int);
    return idx;
}

static int passive(int s)
{
    return s >= S_LOCK_SHARED;
}

static void check_attrs(Ctx *c)
{
    int rc, flag = 0;
    void *base = NULL;
    MPI_Aint *sizep = NULL;
    int *unitp = NULL, *flavp = NULL, *modelp = NULL;
    const char *fl = fname[c->flavor];

    rc = MPI_Win_get_attr(c->win, MPI_WIN_BASE, &base, &flag);
    CHECK(rc == MPI_SUCCESS && flag, "%s: MPI_WIN_BASE not set", fl);
    if (flag) {
        if (c->flavor == F_DYNAMIC)
            CHECK(base == MPI_BOTTOM, "%s: MPI_WIN_BASE %p, expected MPI_BOTTOM", fl, base);
        else
            CHECK(base == (void *)c->mem, "%s: MPI_WIN_BASE %p, expected %p", fl, base,
                  (void *)c->mem);
    }
    flag = 0;
    rc = MPI_Win_get_attr(c->win, MPI_WIN_SIZE, &sizep, &flag);
    CHECK(rc == MPI_SUCCESS && flag && sizep, "%s: MPI_WIN_SIZE not set", fl);
    if (flag && sizep) {
        MPI_Aint want = c->flavor == F_DYNAMIC ? 0 : (MPI_Aint)(NREG * N * sizeof(int));
        CHECK(*sizep == want, "%s: MPI_WIN_SIZE %ld, expected %ld", fl, (long)*sizep, (long)want);
    }
    flag = 0;
    rc = MPI_Win_get_attr(c->win, MPI_WIN_DISP_UNIT, &unitp, &flag);
    CHECK(rc == MPI_SUCCESS && flag && unitp, "%s: MPI_WIN_DISP_UNIT not set", fl);
    if (flag && unitp) {
        int want = c->flavor == F_DYNAMIC ? 1 : (int)sizeof(int);
        CHECK(*unitp == want, "%s: MPI_WIN_DISP_UNIT %d, expected %d", fl, *unitp, want);
    }
    flag = 0;
    rc = MPI_Win_get_attr(c->win, MPI_WIN_CREATE_FLAVOR, &flavp, &flag);
    CHECK(rc == MPI_SUCCESS && flag && flavp, "%s: MPI_WIN_CREATE_FLAVOR not set", fl);
    if (flag && flavp) {
        static const int want[] = {MPI_WIN_FLAVOR_CREATE, MPI_WIN_FLAVOR_ALLOCATE,
                                   MPI_WIN_FLAVOR_SHARED, MPI_WIN_FLAVOR_DYNAMIC};
        CHECK(*flavp == want[c->flavor], "%s: MPI_WIN_CREATE_FLAVOR %d, expected %d", fl, *flavp,
              want[c->flavor]);
    }
    flag = 0;
    rc = MPI_Win_get_attr(c->win, MPI_WIN_MODEL, &modelp, &flag);
    CHECK(rc == MPI_SUCCESS && flag && modelp, "%s: MPI_WIN_MODEL not set", fl);
    if (flag && modelp)
        CHECK(*modelp == MPI_WIN_UNIFIED, "%s: MPI_WIN_MODEL %d, expected MPI_WIN_UNIFIED %d", fl,
              *modelp, MPI_WIN_UNIFIED);

    /* Group. */
    MPI_Group wg = MPI_GROUP_NULL, cg = MPI_GROUP_NULL;
    int res = -1;
    rc = MPI_Win_get_group(c->win, &wg);
    CHECK_RC(rc, "MPI_Win_get_group");
    MPI_Comm_group(c->comm, &cg);
    MPI_Group_compare(wg, cg, &res);
    CHECK(res == MPI_IDENT, "%s: window group vs communicator group: %d", fl, res);
    MPI_Group_free(&wg);
    MPI_Group_free(&cg);

    /* Names. */
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    memset(name, 'x', sizeof name);
    rc = MPI_Win_get_name(c->win, name, &len);
#ifndef OPEN_MPI /* Open MPI 4.1 names its windows ("rdma window 3") */
    CHECK(rc == MPI_SUCCESS && len == 0 && name[0] == 0, "%s: default name '%.20s' len %d", fl,
          name, len);
#endif
    char want[64];
    snprintf(want, sizeof want, "rma_flavors window %s", fl);
    rc = MPI_Win_set_name(c->win, want);
    CHECK_RC(rc, "MPI_Win_set_name");
    len = -1;
    memset(name, 'x', sizeof name);
    rc = MPI_Win_get_name(c->win, name, &len);
    CHECK(rc == MPI_SUCCESS && len == (int)strlen(want) && strcmp(name, want) == 0,
          "%s: name '%.60s' len %d, expected '%s'", fl, name, len, want);
}

static void make_window(Ctx *c, int flavor)
{
    int rc;
    MPI_Aint bytes = NREG * N * sizeof(int);
    c->flavor = flavor;
    c->comm = MPI_COMM_WORLD;
    c->mem = NULL;
    c->addr = NULL;
    c->win = MPI_WIN_NULL;
    switch (flavor) {
    case F_CREATE:
        c->mem = malloc(bytes);
        rc = MPI_Win_create(c->mem, bytes, sizeof(int), MPI_INFO_NULL, c->comm, &c->win);
        CHECK_RC(rc, "MPI_Win_create");
        break;
    case F_ALLOCATE:
        rc = MPI_Win_allocate(bytes, sizeof(int), MPI_INFO_NULL, c->comm, &c->mem, &c->win);
        CHECK_RC(rc, "MPI_Win_allocate");
        break;
    case F_SHARED:
        rc = MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &c->comm);
        CHECK_RC(rc, "MPI_Comm_split_type(SHARED)");
        rc = MPI_Win_allocate_shared(bytes, sizeof(int), MPI_INFO_NULL, c->comm, &c->mem, &c->win);
        CHECK_RC(rc, "MPI_Win_allocate_shared");
        break;
    case F_DYNAMIC: {
        rc = MPI_Win_create_dynamic(MPI_INFO_NULL, c->comm, &c->win);
        CHECK_RC(rc, "MPI_Win_create_dynamic");
        c->mem = malloc(bytes);
        rc = MPI_Win_attach(c->win, c->mem, bytes);
        CHECK_RC(rc, "MPI_Win_attach");
        break;
    }
    }
    MPI_Comm_rank(c->comm, &c->rank);
    MPI_Comm_size(c->comm, &c->size);
    if (flavor == F_DYNAMIC) {
        MPI_Aint mine;
        c->addr = malloc(c->size * sizeof(MPI_Aint));
        MPI_Get_address(c->mem, &mine);
        MPI_Allgather(&mine, 1, MPI_AINT, c->addr, 1, MPI_AINT, c->comm);
        CHECK(c->addr[c->rank] == mine, "allgather of addresses");
    }
}

static void free_window(Ctx *c)
{
    int rc;
    if (c->flavor == F_DYNAMIC) {
        rc = MPI_Win_detach(c->win, c->mem);
        CHECK_RC(rc, "MPI_Win_detach");
    }
    rc = MPI_Win_free(&c->win);
    CHECK(rc == MPI_SUCCESS && c->win == MPI_WIN_NULL, "%s: MPI_Win_free rc %d, handle %s",
          fname[c->flavor], rc, c->win == MPI_WIN_NULL ? "MPI_WIN_NULL" : "not MPI_WIN_NULL");
    if (c->flavor == F_CREATE || c->flavor == F_DYNAMIC)
        free(c->mem);
    if (c->flavor == F_SHARED)
        MPI_Comm_free(&c->comm);
    free(c->addr);
}

/* Local stores to the window (initialization) and local loads (checks): under a lock on
 * oneself in the passive modes, between synchronizations otherwise. */
static void local_begin(Ctx *c, int s, int lock_type)
{
    if (passive(s))
        MPI_Win_lock(lock_type, c->rank, 0, c->win);
}

static void local_end(Ctx *c, int s)
{
    if (passive(s))
        MPI_Win_unlock(c->rank, c->win);
}

static void round_(Ctx *c, int s, int round)
{
    int rc;
    int right = (c->rank + 1) % c->size, left = (c->rank + c->size - 1) % c->size;
    int pa[N], pb[N], ga[N], gb[N];
    const char *fl = fname[c->flavor], *sy = sname[s];

    for (int i = 0; i < N; i++) {
        pa[i] = val(1, c->rank, round, i);
        pb[i] = val(3, c->rank, round, i);
        ga[i] = gb[i] = SENT;
    }
    local_begin(c, s, MPI_LOCK_EXCLUSIVE);
    for (int i = 0; i < N; i++) {
        c->mem[i] = SENT;
        c->mem[N + i] = val(2, c->rank, round, i);
        c->mem[2 * N + i] = SENT;
    }
    local_end(c, s);
    MPI_Barrier(c->comm);

    switch (s) {
    case S_FENCE:
        rc = MPI_Win_fence(MPI_MODE_NOPRECEDE, c->win);
        CHECK_RC(rc, "MPI_Win_fence(NOPRECEDE)");
        rc = MPI_Put(pa, N, MPI_INT, right, disp(c, right, 0), N, MPI_INT, c->win);
        CHECK_RC(rc, "MPI_Put");
        rc = MPI_Get(ga, N, MPI_INT, left, disp(c, left, N), N, MPI_INT, c->win);
        CHECK_RC(rc, "MPI_Get");
        rc = MPI_Win_fence(0, c->win);
        CHECK_RC(rc, "MPI_Win_fence(0)");
        /* A second epoch opened by the fence above. */
        rc = MPI_Put(pb, N, MPI_INT, right, disp(c, right, 2 * N), N, MPI_INT, c->win);
        CHECK_RC(rc, "MPI_Put");
        rc = MPI_Get(gb, N, MPI_INT, left, disp(c, left, N), N, MPI_INT, c->win);
        CHECK_RC(rc, "MPI_Get");
        rc = MPI_Win_fence(MPI_MODE_NOSUCCEED, c->win);
        CHECK_RC(rc, "MPI_Win_fence(NOSUCCEED)");
        break;
    case S_PSCW:
    case S_PSCW_TEST: {
        MPI_Group g;
        MPI_Win_get_group(c->win, &g);
        rc = MPI_Win_post(g, 0, c->win);
        CHECK_RC(rc, "MPI_Win_post");
        rc = MPI_Win_start(g, 0, c->win);
        CHECK_RC(rc, "MPI_Win_start");
        rc = MPI_Put(pa, N, MPI_INT, right, disp(c, right, 0), N, MPI_INT, c->win);
        CHECK_RC(rc, "MPI_Put");
        rc = MPI_Get(ga, N, MPI_INT, left, disp(c, left, N), N, MPI_INT, c->win);
        CHECK_RC(rc, "MPI_Get");
        rc = MPI_Put(pb, N, MPI_INT, right, disp(c, right, 2 * N), N, MPI_INT, c->win);
        CHECK_RC(rc, "MPI_Put");
        rc = MPI_Get(gb, N, MPI_INT, left, disp(c, left, N), N, MPI_INT, c->win);
        CHECK_RC(rc, "MPI_Get");
        rc = MPI_Win_complete(c->win);
        CHECK_RC(rc, "MPI_Win_complete");
        if (s == S_PSCW) {
            rc = MPI_Win_wait(c->win);
            CHECK_RC(rc, "MPI_Win_wait");
        } else {
            int flag = 0, iters = 0;
            do {
                rc = MPI_Win_test(c->win, &flag);
                iters++;
            } while (rc == MPI_SUCCESS && !flag);
            CHECK(rc == MPI_SUCCESS && flag, "MPI_Win_test rc %d flag %d after %d calls", rc, flag,
                  iters);
        }
        MPI_Group_free(&g);
        break;
    }
    case S_LOCK_SHARED:
    case S_LOCK_EXCL: {
        int lt = s == S_LOCK_SHARED ? MPI_LOCK_SHARED : MPI_LOCK_EXCLUSIVE;
        rc = MPI_Win_lock(lt, right, 0, c->win);
        CHECK_RC(rc, "MPI_Win_lock(right)");
        rc = MPI_Put(pa, N, MPI_INT, right, disp(c, right, 0), N, MPI_INT, c->win);
        CHECK_RC(rc, "MPI_Put");
        rc = MPI_Put(pb, N, MPI_INT, right, disp(c, right, 2 * N), N, MPI_INT, c->win);
        CHECK_RC(rc, "MPI_Put");
        rc = MPI_Win_unlock(right, c->win);
        CHECK_RC(rc, "MPI_Win_unlock(right)");
        rc = MPI_Win_lock(lt, left, 0, c->win);
        CHECK_RC(rc, "MPI_Win_lock(left)");
        rc = MPI_Get(ga, N, MPI_INT, left, disp(c, left, N), N, MPI_INT, c->win);
        CHECK_RC(rc, "MPI_Get");
        rc = MPI_Win_unlock(left, c->win);
        CHECK_RC(rc, "MPI_Win_unlock(left)");
        /* Data of a get is there once the epoch is closed. */
        for (int i = 0; i < N; i++)
            CHECK(ga[i] == val(2, left, round, i), "%s/%s: get[%d] = %d before the barrier", fl,
                  sy, i, ga[i]);
        rc = MPI_Win_lock(lt, left, 0, c->win);
        CHECK_RC(rc, "MPI_Win_lock(left)");
        rc = MPI_Get(gb, N, MPI_INT, left, disp(c, left, N), N, MPI_INT, c->win);
        CHECK_RC(rc, "MPI_Get");
        rc = MPI_Win_unlock(left, c->win);
        CHECK_RC(rc, "MPI_Win_unlock(left)");
        break;
    }
    case S_LOCK_ALL: {
        rc = MPI_Win_lock_all(0, c->win);
        CHECK_RC(rc, "MPI_Win_lock_all");
        rc = MPI_Put(pa, N, MPI_INT, right, disp(c, right, 0), N, MPI_INT, c->win);
        CHECK_RC(rc, "MPI_Put");
        rc = MPI_Win_flush(right, c->win);
        CHECK_RC(rc, "MPI_Win_flush");
        rc = MPI_Get(ga, N, MPI_INT, left, disp(c, left, N), N, MPI_INT, c->win);
        CHECK_RC(rc, "MPI_Get");
        rc = MPI_Win_flush_local(left, c->win);
        CHECK_RC(rc, "MPI_Win_flush_local");
        for (int i = 0; i < N; i++)
            CHECK(ga[i] == val(2, left, round, i), "%s/%s: get[%d] = %d after flush_local", fl,
                  sy, i, ga[i]);
        rc = MPI_Put(pb, N, MPI_INT, right, disp(c, right, 2 * N), N, MPI_INT, c->win);
        CHECK_RC(rc, "MPI_Put");
        rc = MPI_Win_flush_local_all(c->win);
        CHECK_RC(rc, "MPI_Win_flush_local_all");
        /* The origin buffer may be reused now: the target must get the old values. */
        for (int i = 0; i < N; i++)
            pb[i] = -1000 - i;
        rc = MPI_Get(gb, N, MPI_INT, left, disp(c, left, N), N, MPI_INT, c->win);
        CHECK_RC(rc, "MPI_Get");
        rc = MPI_Win_flush_all(c->win);
        CHECK_RC(rc, "MPI_Win_flush_all");
        for (int i = 0; i < N; i++)
            CHECK(gb[i] == val(2, left, round, i), "%s/%s: get[%d] = %d after flush_all", fl, sy,
                  i, gb[i]);
        rc = MPI_Win_unlock_all(c->win);
        CHECK_RC(rc, "MPI_Win_unlock_all");
        break;
    }
    }
    if (passive(s))
        MPI_Barrier(c->comm);

    for (int i = 0; i < N; i++) {
        CHECK(ga[i] == val(2, left, round, i), "%s/%s: get A[%d] = %d, expected %d", fl, sy, i,
              ga[i], val(2, left, round, i));
        CHECK(gb[i] == val(2, left, round, i), "%s/%s: get B[%d] = %d, expected %d", fl, sy, i,
              gb[i], val(2, left, round, i));
    }
    local_begin(c, s, MPI_LOCK_SHARED);
    for (int i = 0; i < N; i++) {
        CHECK(c->mem[i] == val(1, left, round, i), "%s/%s: put A[%d] = %d, expected %d", fl, sy, i,
              c->mem[i], val(1, left, round, i));
        CHECK(c->mem[N + i] == val(2, c->rank, round, i), "%s/%s: got-from region [%d] = %d", fl,
              sy, i, c->mem[N + i]);
        CHECK(c->mem[2 * N + i] == val(3, left, round, i), "%s/%s: put B[%d] = %d, expected %d",
              fl, sy, i, c->mem[2 * N + i], val(3, left, round, i));
    }
    local_end(c, s);
    /* No barrier needed here: the closing synchronization above completed every access to
     * this memory, and the next round's accesses wait for its initialization barrier. */
}

/* Windows whose size is not a multiple of 8 or 16 bytes (3 ints at even ranks, 5 at odd
 * ones): a fence ring put of every int.  Not run with MPI_Win_allocate under MPICH 4.0.2,
 * which misplaces the remote base of such windows (puts land in the wrong rank's memory). */
static void odd_sizes(int allocate)
{
    int me = mtest_rank, np = mtest_size, rc;
    int right = (me + 1) % np, left = (me + np - 1) % np;
    int n = me % 2 ? 5 : 3, nr = right % 2 ? 5 : 3, nl = left % 2 ? 5 : 3;
    int *mem = NULL, src[5];
    MPI_Win win = MPI_WIN_NULL;
    const char *what = allocate ? "odd-size MPI_Win_allocate" : "odd-size MPI_Win_create";
    if (allocate) {
        rc = MPI_Win_allocate(n * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem,
                              &win);
    } else {
        mem = malloc(n * sizeof(int));
        rc = MPI_Win_create(mem, n * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    }
    CHECK_RC(rc, what);
    for (int i = 0; i < n; i++)
        mem[i] = SENT;
    for (int i = 0; i < 5; i++)
        src[i] = val(4, me, 0, i);
    MPI_Win_fence(0, win);
    int cnt = n < nr ? n : nr; /* what fits in the smaller of the two windows */
    rc = MPI_Put(src, cnt, MPI_INT, right, 0, cnt, MPI_INT, win);
    CHECK_RC(rc, "MPI_Put");
    MPI_Win_fence(0, win);
    int got = n < nl ? n : nl;
    for (int i = 0; i < n; i++)
        CHECK(mem[i] == (i < got ? val(4, left, 0, i) : SENT), "%s: [%d] = %d, expected %d",
              what, i, mem[i], i < got ? val(4, left, 0, i) : SENT);
    MPI_Win_free(&win);
    if (!allocate)
        free(mem);
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
    int round = 0;
    for (int f = 0; f < NFLAVORS; f++) {
        Ctx c;
        make_window(&c, f);
        if (c.win == MPI_WIN_NULL)
            continue;
        check_attrs(&c);
        for (int s = 0; s < NSYNCS; s++)
            round_(&c, s, ++round);
        free_window(&c);
    }
    odd_sizes(0);
#ifndef MPICH_VERSION
    odd_sizes(1);
#endif
    return MTest_Finalize(0);
}
