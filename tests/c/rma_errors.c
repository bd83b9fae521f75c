/* rma_errors: erroneous one-sided calls under MPI_ERRORS_RETURN, and window error handlers.
 *
 *  - With MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN), the error class of: MPI_Put outside
 *    any epoch, MPI_Win_unlock without a lock, MPI_Win_unlock_all without lock_all,
 *    MPI_Win_flush outside a passive epoch, a nested MPI_Win_lock on the same target,
 *    MPI_Win_complete without MPI_Win_start, MPI_Win_wait without MPI_Win_post
 *    (MPI_ERR_RMA_SYNC); MPI_Put past the end of the target window (MPI_ERR_RMA_RANGE;
 *    the window is the first 16 ints of a 64-int buffer, so an undetected put does no
 *    harm, and the tail is checked untouched); MPI_Win_lock with lock type 12345
 *    (MPI_ERR_LOCKTYPE); MPI_Win_fence with assert 0x1 (MPI_ERR_ASSERT); target rank = size
 *    in MPI_Put and MPI_Win_lock (MPI_ERR_RANK); MPI_Accumulate with a user-defined op
 *    (MPI_ERR_OP).
 *  - Through the communicator's handler (MPI_ERRORS_RETURN on WORLD): MPI_Win_create with a
 *    negative size (MPI_ERR_SIZE) and with disp_unit 0 (MPI_ERR_DISP), MPI_Win_allocate
 *    with a negative size (MPI_ERR_SIZE).
 *  - Dynamic windows: MPI_Win_attach of a region overlapping an attached one
 *    (MPI_ERR_RMA_ATTACH); MPI_Put to an address that is not attached (MPI_ERR_RMA_RANGE; the
 *    address is inside a larger buffer of the target, so an undetected put does no harm).
 *  - MPI_Win_shared_query on a dynamic window (MPI_ERR_RMA_FLAVOR); on an MPI_Win_create
 *    window it is an error before MPI-4.1 (MPI_ERR_RMA_FLAVOR) and allowed since (size 0 /
 *    NULL, or the real segment: for oneself, the window's base and size).
 *  - A user handler from MPI_Win_create_errhandler records its calls: called by
 *    MPI_Win_call_errhandler (with the window and the code) and by a real error
 *    (MPI_Win_unlock without a lock: the code the call returns); still called after
 *    MPI_Errhandler_free while attached; MPI_Win_get_errhandler returns it; a new window's handler is
 *    MPI_ERRORS_ARE_FATAL.
 *  - After every error the epochs are closed properly and the windows still work: a fence
 *    ring put/get and a lock ring put are checked at the end.
 * Reference MPIs (library version containing "MPICH" or "Open MPI") do not detect some of
 * these erroneous programs: for the checks marked relaxed (last argument of EXPECT 1) they
 * may return any code (what they did is printed as an "MTEST_NOTE" line); hympi and other
 * MPIs must return the exact class.  MPICH 4.0.2: MPI_ERR_ARG for the lock type and the
 * fence assert; a put past the window end, an overlapping attach and a put to memory not
 * attached succeed (the latter two write where they were told).  Open MPI 4.1 also accepts
 * MPI_Win_complete without MPI_Win_start and a nested lock (after which the window's
 * lock_all hangs: the nested lock is not tried there). */
#include "mtest.h"

#define WN 16  /* window size in ints */
#define BUFN 64

static int me, np, right, left;
static int is_mpich, is_ompi, is_hympi;
/* Relaxations (last argument of EXPECT): the reference MPI may return anything there. */
#define R_MPICH 1
#define R_OMPI 2
#define R_BOTH 3

/* Class names mtest.h does not know. */
static const char *cname(int c)
{
    if (c == MPI_ERR_RMA_SYNC) return "MPI_ERR_RMA_SYNC";
    if (c == MPI_ERR_RMA_RANGE) return "MPI_ERR_RMA_RANGE";
    if (c == MPI_ERR_RMA_ATTACH) return "MPI_ERR_RMA_ATTACH";
    if (c == MPI_ERR_RMA_FLAVOR) return "MPI_ERR_RMA_FLAVOR";
    if (c == MPI_ERR_LOCKTYPE) return "MPI_ERR_LOCKTYPE";
    if (c == MPI_ERR_ASSERT) return "MPI_ERR_ASSERT";
    if (c == MPI_ERR_SIZE) return "MPI_ERR_SIZE";
    if (c == MPI_ERR_DISP) return "MPI_ERR_DISP";
    return MTest_Class_name(c);
}
static void note(const char *what, int rc)
{
    if (me != 0)
        return;
    if (rc == MPI_SUCCESS)
        printf("MTEST_NOTE: not detected by this MPI: %s\n", what);
    else
        printf("MTEST_NOTE: %s: got class %d (%s)\n", what, MTest_Class(rc),
               cname(MTest_Class(rc)));
}

/* The call failed with class cls; when relaxed and the library is a reference MPI, any
 * outcome is accepted (and noted). */
static void expect(int rc, int cls, const char *what, int relaxed)
{
    if (!is_hympi && (((relaxed & R_MPICH) && is_mpich) || ((relaxed & R_OMPI) && is_ompi))) {
        if (rc == MPI_SUCCESS || MTest_Class(rc) != cls)
            note(what, rc);
        return;
    }
    CHECK_CLASS(rc, cls, what);
}

#define EXPECT(rc, cls, what, relaxed)                                                       \
    do {                                                                                     \
        char what_[200];                                                                     \
        snprintf(what_, sizeof what_, "%s (expected %s)", (what), cname(cls));               \
        expect((rc), (cls), what_, (relaxed));                                               \
    } while (0)

static void user_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)in;
    (void)inout;
    (void)len;
    (void)dt;
}

static int h_calls, h_code;
static MPI_Win h_win;
static void win_handler(MPI_Win *win, int *code, ...)
{
    h_calls++;
    h_win = *win;
    h_code = *code;
}

/* Fence ring put/get + lock ring put on w (memory m, WN ints): the window works. */
static void still_works(MPI_Win w, int *m, const char *what)
{
    int rc, v[2] = {500 + me, 600 + me}, g = -1;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, w);
    for (int i = 0; i < WN; i++)
        m[i] = 10000 * (me + 1) + i;
    MPI_Win_unlock(me, w);
    MPI_Barrier(MPI_COMM_WORLD);
    rc = MPI_Win_fence(0, w);
    CHECK_RC(rc, "MPI_Win_fence (after the errors)");
    rc = MPI_Put(&v[0], 1, MPI_INT, right, 0, 1, MPI_INT, w);
    CHECK_RC(rc, "MPI_Put (after the errors)");
    rc = MPI_Get(&g, 1, MPI_INT, left, 5, 1, MPI_INT, w);
    CHECK_RC(rc, "MPI_Get (after the errors)");
    rc = MPI_Win_fence(MPI_MODE_NOSUCCEED, w);
    CHECK_RC(rc, "MPI_Win_fence (after the errors)");
    CHECK(m[0] == 500 + left, "%s: fence put after the errors: %d", what, m[0]);
    CHECK(g == 10000 * (left + 1) + 5, "%s: fence get after the errors: %d", what, g);
    MPI_Barrier(MPI_COMM_WORLD);
    rc = MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, w);
    CHECK_RC(rc, "MPI_Win_lock (after the errors)");
    rc = MPI_Put(&v[1], 1, MPI_INT, right, 1, 1, MPI_INT, w);
    CHECK_RC(rc, "MPI_Put (after the errors)");
    rc = MPI_Win_unlock(right, w);
    CHECK_RC(rc, "MPI_Win_unlock (after the errors)");
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, me, 0, w);
    CHECK(m[1] == 600 + left, "%s: lock put after the errors: %d", what, m[1]);
    MPI_Win_unlock(me, w);
}

static void sync_errors(void)
{
    int rc, x = 7, *buf = malloc(BUFN * sizeof(int));
    for (int i = 0; i < BUFN; i++)
        buf[i] = -1;
    MPI_Win w;
    rc = MPI_Win_create(buf, WN * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w);
    CHECK_RC(rc, "MPI_Win_create");
    rc = MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN);
    CHECK_RC(rc, "MPI_Win_set_errhandler(MPI_ERRORS_RETURN)");

    /* No epoch open. */
    rc = MPI_Put(&x, 1, MPI_INT, right, 2, 1, MPI_INT, w);
    EXPECT(rc, MPI_ERR_RMA_SYNC, "MPI_Put outside any epoch", 0);
    rc = MPI_Win_unlock(right, w);
    EXPECT(rc, MPI_ERR_RMA_SYNC, "MPI_Win_unlock without MPI_Win_lock", 0);
    rc = MPI_Win_unlock_all(w);
    EXPECT(rc, MPI_ERR_RMA_SYNC, "MPI_Win_unlock_all without MPI_Win_lock_all", 0);
    rc = MPI_Win_flush(right, w);
    EXPECT(rc, MPI_ERR_RMA_SYNC, "MPI_Win_flush outside a passive epoch", 0);
    rc = MPI_Win_complete(w);
    EXPECT(rc, MPI_ERR_RMA_SYNC, "MPI_Win_complete without MPI_Win_start", R_OMPI);
    rc = MPI_Win_wait(w);
    EXPECT(rc, MPI_ERR_RMA_SYNC, "MPI_Win_wait without MPI_Win_post", R_OMPI);
    /* An undetected put outside an epoch is completed by this fence pair (puts 7 into slot
     * 2, which no check reads before still_works rewrites it). */
    MPI_Win_fence(0, w);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, w);

    /* PSCW misuse: complete twice. */
    MPI_Group g;
    MPI_Win_get_group(w, &g);
    MPI_Barrier(MPI_COMM_WORLD);
    rc = MPI_Win_post(g, 0, w);
    CHECK_RC(rc, "MPI_Win_post");
    rc = MPI_Win_start(g, 0, w);
    CHECK_RC(rc, "MPI_Win_start");
    rc = MPI_Win_complete(w);
    CHECK_RC(rc, "MPI_Win_complete");
    rc = MPI_Win_complete(w);
    EXPECT(rc, MPI_ERR_RMA_SYNC, "second MPI_Win_complete", R_OMPI);
    rc = MPI_Win_wait(w);
    CHECK_RC(rc, "MPI_Win_wait");
    MPI_Group_free(&g);

    /* Bad arguments. */
    rc = MPI_Win_lock(12345, right, 0, w);
    EXPECT(rc, MPI_ERR_LOCKTYPE, "MPI_Win_lock with lock type 12345", R_BOTH);
    if (rc == MPI_SUCCESS)
        MPI_Win_unlock(right, w);
    rc = MPI_Win_lock(MPI_LOCK_SHARED, np, 0, w);
    EXPECT(rc, MPI_ERR_RANK, "MPI_Win_lock of rank size", 0);
    rc = MPI_Win_fence(0x1, w);
    EXPECT(rc, MPI_ERR_ASSERT, "MPI_Win_fence with assert 0x1", R_BOTH);
    if (rc == MPI_SUCCESS) /* the fence happened: close its epoch */
        MPI_Win_fence(MPI_MODE_NOSUCCEED, w);

    /* Nested lock on one target. */
    rc = MPI_Win_lock(MPI_LOCK_SHARED, right, 0, w);
    CHECK_RC(rc, "MPI_Win_lock");
    /* Open MPI 4.1 takes the nested lock, and the window's lock_all hangs afterwards: not
     * run there. */
    int nested = MPI_ERR_RMA_SYNC;
    if (!is_ompi) {
        nested = MPI_Win_lock(MPI_LOCK_SHARED, right, 0, w);
        EXPECT(nested, MPI_ERR_RMA_SYNC, "nested MPI_Win_lock on the same target", 0);
    }
    /* Put past the end, inside the lock epoch. */
    int two[2] = {111, 222};
    rc = MPI_Put(two, 2, MPI_INT, right, WN - 1, 2, MPI_INT, w);
    EXPECT(rc, MPI_ERR_RMA_RANGE, "MPI_Put across the end of the target window", R_BOTH);
    rc = MPI_Put(&x, 1, MPI_INT, right, WN + 4, 1, MPI_INT, w);
    EXPECT(rc, MPI_ERR_RMA_RANGE, "MPI_Put past the end of the target window", R_BOTH);
    rc = MPI_Put(&x, 1, MPI_INT, np, 0, 1, MPI_INT, w);
    EXPECT(rc, MPI_ERR_RANK, "MPI_Put to rank size", 0);
    rc = MPI_Win_unlock(right, w);
    CHECK_RC(rc, "MPI_Win_unlock (after the nested lock error)");
    if (nested == MPI_SUCCESS) /* the MPI took the nested lock: release it too */
        MPI_Win_unlock(right, w);
    MPI_Barrier(MPI_COMM_WORLD);
    if (is_hympi || !(is_mpich || is_ompi)) {
        MPI_Win_lock(MPI_LOCK_SHARED, me, 0, w);
        for (int i = WN; i < BUFN; i++)
            if (!CHECK(buf[i] == -1, "memory past the window end changed: [%d] = %d", i, buf[i]))
                break;
        MPI_Win_unlock(me, w);
    }

    /* User op in accumulate, inside lock_all. */
    MPI_Op uop;
    MPI_Op_create(user_fn, 1, &uop);
    rc = MPI_Win_lock_all(0, w);
    CHECK_RC(rc, "MPI_Win_lock_all");
    rc = MPI_Accumulate(&x, 1, MPI_INT, right, 3, 1, MPI_INT, uop, w);
    EXPECT(rc, MPI_ERR_OP, "MPI_Accumulate with a user-defined op", 0);
    rc = MPI_Win_lock_all(0, w);
    EXPECT(rc, MPI_ERR_RMA_SYNC, "MPI_Win_lock_all inside lock_all", 0);
    rc = MPI_Win_unlock_all(w);
    CHECK_RC(rc, "MPI_Win_unlock_all");
    MPI_Op_free(&uop);

    still_works(w, buf, "MPI_Win_create window");
    rc = MPI_Win_free(&w);
    CHECK_RC(rc, "MPI_Win_free");
    free(buf);
}

static void creation_errors(void)
{
    int rc, buf[16];
    MPI_Win w = MPI_WIN_NULL;
    rc = MPI_Win_create(buf, -1, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w);
    EXPECT(rc, MPI_ERR_SIZE, "MPI_Win_create with size -1", 0);
    if (rc == MPI_SUCCESS)
        MPI_Win_free(&w);
    w = MPI_WIN_NULL;
    rc = MPI_Win_create(buf, sizeof buf, 0, MPI_INFO_NULL, MPI_COMM_WORLD, &w);
    EXPECT(rc, MPI_ERR_DISP, "MPI_Win_create with disp_unit 0", 0);
    if (rc == MPI_SUCCESS)
        MPI_Win_free(&w);
    w = MPI_WIN_NULL;
    void *base = NULL;
    rc = MPI_Win_allocate(-16, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &w);
    EXPECT(rc, MPI_ERR_SIZE, "MPI_Win_allocate with size -16", 0);
    if (rc == MPI_SUCCESS)
        MPI_Win_free(&w);
}

static void dynamic_errors(void)
{
    int rc, x = 9, *buf = malloc(BUFN * sizeof(int));
    for (int i = 0; i < BUFN; i++)
        buf[i] = -1;
    MPI_Win w;
    rc = MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &w);
    CHECK_RC(rc, "MPI_Win_create_dynamic");
    MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN);
    rc = MPI_Win_attach(w, buf, WN * sizeof(int));
    CHECK_RC(rc, "MPI_Win_attach");
    rc = MPI_Win_attach(w, buf + WN / 2, WN * sizeof(int));
    EXPECT(rc, MPI_ERR_RMA_ATTACH, "MPI_Win_attach overlapping an attached region", R_BOTH);
    if (rc == MPI_SUCCESS)
        MPI_Win_detach(w, buf + WN / 2);
    MPI_Aint mine, *addr = malloc(np * sizeof(MPI_Aint));
    MPI_Get_address(buf, &mine);
    MPI_Allgather(&mine, 1, MPI_AINT, addr, 1, MPI_AINT, MPI_COMM_WORLD);

    rc = MPI_Win_lock(MPI_LOCK_SHARED, right, 0, w);
    CHECK_RC(rc, "MPI_Win_lock (dynamic)");
    rc = MPI_Put(&x, 1, MPI_INT, right, addr[right] + (WN + 8) * sizeof(int), 1, MPI_INT, w);
    EXPECT(rc, MPI_ERR_RMA_RANGE, "MPI_Put to memory not attached", R_BOTH);
    rc = MPI_Put(&x, 1, MPI_INT, right, addr[right] + 2 * sizeof(int), 1, MPI_INT, w);
    CHECK_RC(rc, "MPI_Put to attached memory");
    rc = MPI_Win_unlock(right, w);
    CHECK_RC(rc, "MPI_Win_unlock (dynamic)");
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, me, 0, w);
    CHECK(buf[2] == 9, "put to attached memory: %d", buf[2]);
    if (is_hympi || !(is_mpich || is_ompi))
        CHECK(buf[WN + 8] == -1, "memory not attached changed: %d", buf[WN + 8]);
    MPI_Win_unlock(me, w);

    /* Shared query on a dynamic window: an error in every version. */
    MPI_Aint sz = -1;
    int du = -1;
    void *p = NULL;
    rc = MPI_Win_shared_query(w, me, &sz, &du, &p);
    EXPECT(rc, MPI_ERR_RMA_FLAVOR, "MPI_Win_shared_query on a dynamic window", 0);

    MPI_Barrier(MPI_COMM_WORLD);
    rc = MPI_Win_detach(w, buf);
    CHECK_RC(rc, "MPI_Win_detach");
    MPI_Win_free(&w);
    free(addr);
    free(buf);
}

static void shared_query_create(void)
{
    int rc, buf[WN];
    MPI_Win w;
    rc = MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w);
    CHECK_RC(rc, "MPI_Win_create");
    MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN);
    MPI_Aint sz = -1;
    int du = -1;
    void *p = NULL;
    rc = MPI_Win_shared_query(w, me, &sz, &du, &p);
    /* MPI-4.1: allowed on MPI_Win_create / MPI_Win_allocate windows. hympi follows 4.1 also
     * when a program is built with an MPI-4.0 header (MPICH's ABI, libmpich.so.12). */
    if (MPI_VERSION * 10 + MPI_SUBVERSION >= 41 || is_hympi) {
        CHECK_RC(rc, "MPI_Win_shared_query on an MPI_Win_create window (MPI >= 4.1)");
        if (rc == MPI_SUCCESS)
            CHECK((sz == 0 && p == NULL) || (sz == (MPI_Aint)sizeof buf && p == (void *)buf &&
                                             du == (int)sizeof(int)),
                  "MPI_Win_shared_query of myself on an MPI_Win_create window: size %ld ptr %p "
                  "du %d", (long)sz, p, du);
        for (int q = 0; q < np && rc == MPI_SUCCESS; q++) {
            sz = -1;
            p = NULL;
            rc = MPI_Win_shared_query(w, q, &sz, &du, &p);
            CHECK(rc == MPI_SUCCESS && (sz == 0 || (sz == (MPI_Aint)sizeof buf && p != NULL)),
                  "MPI_Win_shared_query of rank %d: rc %d size %ld", q, rc, (long)sz);
        }
    } else {
        EXPECT(rc, MPI_ERR_RMA_FLAVOR, "MPI_Win_shared_query on an MPI_Win_create window (MPI 4.0)",
               0);
    }
    MPI_Win_free(&w);
}

static void user_handler(void)
{
    int rc, buf[WN];
    MPI_Win w;
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL, got = MPI_ERRHANDLER_NULL;
    rc = MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w);
    CHECK_RC(rc, "MPI_Win_create");
    rc = MPI_Win_get_errhandler(w, &got);
    CHECK(rc == MPI_SUCCESS && got == MPI_ERRORS_ARE_FATAL,
          "a new window's handler is not MPI_ERRORS_ARE_FATAL");
    rc = MPI_Win_create_errhandler(win_handler, &eh);
    CHECK_RC(rc, "MPI_Win_create_errhandler");
    rc = MPI_Win_set_errhandler(w, eh);
    CHECK_RC(rc, "MPI_Win_set_errhandler(user)");
    got = MPI_ERRHANDLER_NULL;
    rc = MPI_Win_get_errhandler(w, &got);
    CHECK(rc == MPI_SUCCESS && got == eh, "MPI_Win_get_errhandler did not return the handler");
    if (got != MPI_ERRHANDLER_NULL) {
        rc = MPI_Errhandler_free(&got);
        CHECK(rc == MPI_SUCCESS && got == MPI_ERRHANDLER_NULL, "MPI_Errhandler_free (got)");
    }

    h_calls = 0;
    h_code = -1;
    h_win = MPI_WIN_NULL;
    rc = MPI_Win_call_errhandler(w, MPI_ERR_OTHER);
    CHECK_RC(rc, "MPI_Win_call_errhandler");
    CHECK(h_calls == 1 && h_win == w && h_code == MPI_ERR_OTHER,
          "MPI_Win_call_errhandler: %d calls, window %s, code %d", h_calls,
          h_win == w ? "right" : "wrong", h_code);

    h_calls = 0;
    h_code = -1;
    h_win = MPI_WIN_NULL;
    rc = MPI_Win_unlock(right, w);
    CHECK(rc != MPI_SUCCESS && MTest_Class(rc) == MPI_ERR_RMA_SYNC, "MPI_Win_unlock without a "
          "lock, with the user handler: %s", rc == MPI_SUCCESS ? "MPI_SUCCESS" : MTest_Describe(rc));
    CHECK(h_calls == 1 && h_win == w && h_code == rc,
          "real error: %d handler calls, window %s, code %d (call returned %d)", h_calls,
          h_win == w ? "right" : "wrong", h_code, rc);

    /* Freed while attached: still called. */
    rc = MPI_Errhandler_free(&eh);
    CHECK(rc == MPI_SUCCESS && eh == MPI_ERRHANDLER_NULL, "MPI_Errhandler_free (attached)");
    h_calls = 0;
    rc = MPI_Win_call_errhandler(w, MPI_ERR_RMA_SYNC);
    CHECK(rc == MPI_SUCCESS && h_calls == 1 && h_code == MPI_ERR_RMA_SYNC,
          "after MPI_Errhandler_free: %d calls, code %d", h_calls, h_code);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&w);
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
    me = mtest_rank;
    np = mtest_size;
    right = (me + 1) % np;
    left = (me + np - 1) % np;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(lib, &len);
    is_hympi = strstr(lib, "hympi") != NULL;
    is_mpich = strstr(lib, "MPICH") != NULL;
    is_ompi = strstr(lib, "Open MPI") != NULL;
    MTest_Errors_return_all();

    sync_errors();
    creation_errors();
    dynamic_errors();
    shared_query_create();
    user_handler();
    return MTest_Finalize(0);
}
