/* session_errors: session error handlers and the error classes of erroneous session calls.
 *
 * Phase 1, Sessions Model only (no MPI_Init):
 *  - MPI_Session_create_errhandler before any initialization (allowed at any time, MPI-4.0
 *    section 11.4.1) with a user function that counts its calls and records the session and
 *    the code; MPI_Session_init(MPI_INFO_NULL, that handler); MPI_Session_get_errhandler
 *    returns it (the returned handle is freed with MPI_Errhandler_free).
 *  - Erroneous calls on the session return an error and call the user handler exactly once
 *    with the session and the returned code: MPI_Session_get_nth_pset with n = number of
 *    psets and n = -1, MPI_Group_from_session_pset and MPI_Session_get_pset_info with the
 *    names "mpi://NO-SUCH-PSET" and "org.hympi.test/no-such-pset": class MPI_ERR_ARG.
 *  - MPI_Session_call_errhandler(s, MPI_ERR_OTHER) calls it once with MPI_ERR_OTHER and
 *    returns MPI_SUCCESS.
 *  - MPI_Session_set_errhandler(s, MPI_ERRORS_RETURN): get returns MPI_ERRORS_RETURN; an
 *    erroneous call still returns MPI_ERR_ARG but no longer calls the user handler;
 *    MPI_ERRORS_ARE_FATAL can be set and read back too.
 *  - The user handler set again, then freed with MPI_Errhandler_free while attached
 *    (handle -> MPI_ERRHANDLER_NULL): MPI_Session_call_errhandler still calls it.
 * Phase 2, with the World Model (MPI_Init, MPI_ERRORS_RETURN on MPI_COMM_WORLD and
 * MPI_COMM_SELF): calls on MPI_SESSION_NULL (MPI_Session_get_num_psets,
 * MPI_Session_get_nth_pset, MPI_Group_from_session_pset, MPI_Session_finalize) return an error
 * of class MPI_ERR_SESSION or MPI_ERR_ARG (the class found is printed as an MTEST_NOTE) and do
 * not call the user handler.  Such an error belongs to no session, so it is raised on
 * MPI_COMM_SELF when the World Model is initialized, and on the initial error handler
 * (MPI_ERRORS_ARE_FATAL unless mpiexec was told otherwise) when it is not: that is why these
 * checks need MPI_Init.  MTEST_SKIP_SESSION_NULL=1 leaves phase 2 (and MPI_Init) out.
 * Reporting: a communicator from the session's mpi://WORLD group at the end.
 *
 * MPICH 4.0.2 deviations, each skipped by default for MPICH only and with its variable =1
 * anywhere (=0 forces the check):
 *  - MTEST_SKIP_ERRH_BEFORE_INIT: MPI_Session_create_errhandler before initialization is a
 *    fatal "before initializing" error: the handler is created after MPI_Session_init there.
 *  - MTEST_SKIP_INIT_ERRHANDLER: the errhandler argument of MPI_Session_init is ignored
 *    (MPI_ERRORS_ARE_FATAL is attached): the handler is attached with
 *    MPI_Session_set_errhandler and the check right after MPI_Session_init is not made.
 *  - MTEST_SKIP_SESSION_ERROR_CALLS: errors raised by session functions are fatal whatever
 *    the session's handler (and MPI_Session_get_nth_pset with n = number of psets crashes):
 *    the erroneous calls on a valid session are not made. */
#include "mtest_session.h"
#if MTEST_SESSIONS

static int h_calls = 0, h_code = MPI_SUCCESS;
static MPI_Session h_session = MPI_SESSION_NULL;

static void user_handler(MPI_Session *session, int *code, ...)
{
    h_calls++;
    h_code = *code;
    h_session = session ? *session : MPI_SESSION_NULL;
}

static const char *cname(int rc)
{
    return rc == MPI_SUCCESS ? "MPI_SUCCESS" : MTest_Session_class_name(MTest_Class(rc));
}

/* rc is an error of class MPI_ERR_ARG; the user handler was called once more (handled) or
 * not at all, with s and rc. */
static void expect_arg_error(int rc, MPI_Session s, int calls_before, int handled,
                             const char *what)
{
    CHECK(rc != MPI_SUCCESS && MTest_Class(rc) == MPI_ERR_ARG, "%s: expected MPI_ERR_ARG, got %s",
          what, rc == MPI_SUCCESS ? "MPI_SUCCESS" : MTest_Describe(rc));
    if (handled) {
        CHECK(h_calls == calls_before + 1, "%s: user handler called %d times, expected once",
              what, h_calls - calls_before);
        if (h_calls == calls_before + 1) {
            CHECK(h_code == rc, "%s: user handler got code %d, the call returned %d", what,
                  h_code, rc);
            CHECK(h_session == s, "%s: user handler got another session handle", what);
        }
    } else {
        CHECK(h_calls == calls_before, "%s: user handler called %d times, expected none", what,
              h_calls - calls_before);
    }
}

static void erroneous_calls(MPI_Session s, int npsets, int handled)
{
    char buf[256];
    int len, before, rc;

    before = h_calls;
    len = (int)sizeof buf;
    rc = MPI_Session_get_nth_pset(s, MPI_INFO_NULL, npsets, &len, buf);
    expect_arg_error(rc, s, before, handled, "MPI_Session_get_nth_pset(n = number of psets)");

    before = h_calls;
    len = (int)sizeof buf;
    rc = MPI_Session_get_nth_pset(s, MPI_INFO_NULL, -1, &len, buf);
    expect_arg_error(rc, s, before, handled, "MPI_Session_get_nth_pset(n = -1)");

    const char *bad[2] = {"mpi://NO-SUCH-PSET", "org.hympi.test/no-such-pset"};
    for (int k = 0; k < 2; k++) {
        char what[128];
        MPI_Group g = MPI_GROUP_NULL;
        before = h_calls;
        rc = MPI_Group_from_session_pset(s, bad[k], &g);
        snprintf(what, sizeof what, "MPI_Group_from_session_pset(\"%s\")", bad[k]);
        expect_arg_error(rc, s, before, handled, what);
        if (rc == MPI_SUCCESS && g != MPI_GROUP_NULL)
            MPI_Group_free(&g);

        MPI_Info info = MPI_INFO_NULL;
        before = h_calls;
        rc = MPI_Session_get_pset_info(s, bad[k], &info);
        snprintf(what, sizeof what, "MPI_Session_get_pset_info(\"%s\")", bad[k]);
        expect_arg_error(rc, s, before, handled, what);
        if (rc == MPI_SUCCESS && info != MPI_INFO_NULL)
            MPI_Info_free(&info);
    }
}

/* MPI_Session_get_errhandler(s) is expected; the returned handle is freed. */
static void check_get(MPI_Session s, MPI_Errhandler expected, const char *what)
{
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    int rc = MPI_Session_get_errhandler(s, &eh);
    CHECK_RC(rc, "MPI_Session_get_errhandler");
    CHECK(eh == expected, "MPI_Session_get_errhandler: not %s", what);
    if (rc == MPI_SUCCESS && eh != MPI_ERRHANDLER_NULL) {
        rc = MPI_Errhandler_free(&eh);
        CHECK(rc == MPI_SUCCESS && eh == MPI_ERRHANDLER_NULL,
              "MPI_Errhandler_free of the handle MPI_Session_get_errhandler returned (%s)", what);
    }
}

static void call_handler(MPI_Session s, const char *what)
{
    int before = h_calls;
    h_code = MPI_SUCCESS;
    int rc = MPI_Session_call_errhandler(s, MPI_ERR_OTHER);
    CHECK(rc == MPI_SUCCESS, "MPI_Session_call_errhandler (%s) returned %s", what, cname(rc));
    CHECK(h_calls == before + 1, "MPI_Session_call_errhandler (%s): handler called %d times",
          what, h_calls - before);
    CHECK(h_code == MPI_ERR_OTHER, "MPI_Session_call_errhandler (%s): handler got code %d, "
          "expected MPI_ERR_OTHER", what, h_code);
    CHECK(h_session == s, "MPI_Session_call_errhandler (%s): handler got another session", what);
}

/* Phase 2: MPI_SESSION_NULL with the World Model initialized. */
static void null_session_calls(void)
{
    int rc = MPI_Init(NULL, NULL);
    if (!CHECK_RC(rc, "MPI_Init"))
        return;
    MTest_Errors_return_all();
    MTEST_CHECK_WORLD_STATE(1, 0, "after MPI_Init");
    int before = h_calls, n = -1, len;
    char buf[64];
    MPI_Group g = MPI_GROUP_NULL;
    MPI_Session sn = MPI_SESSION_NULL;
    const char *what[4] = {"MPI_Session_get_num_psets(MPI_SESSION_NULL)",
                           "MPI_Session_get_nth_pset(MPI_SESSION_NULL)",
                           "MPI_Group_from_session_pset(MPI_SESSION_NULL)",
                           "MPI_Session_finalize(MPI_SESSION_NULL)"};
    for (int k = 0; k < 4; k++) {
        len = (int)sizeof buf;
        switch (k) {
        case 0: rc = MPI_Session_get_num_psets(MPI_SESSION_NULL, MPI_INFO_NULL, &n); break;
        case 1: rc = MPI_Session_get_nth_pset(MPI_SESSION_NULL, MPI_INFO_NULL, 0, &len, buf); break;
        case 2: rc = MPI_Group_from_session_pset(MPI_SESSION_NULL, "mpi://WORLD", &g); break;
        default: rc = MPI_Session_finalize(&sn); break;
        }
        int cls = rc == MPI_SUCCESS ? MPI_SUCCESS : MTest_Class(rc);
        CHECK(rc != MPI_SUCCESS && (cls == MPI_ERR_SESSION || cls == MPI_ERR_ARG),
              "%s: expected MPI_ERR_SESSION or MPI_ERR_ARG, got %s", what[k],
              rc == MPI_SUCCESS ? "MPI_SUCCESS" : MTest_Describe(rc));
        if (mtest_rank == 0 && rc != MPI_SUCCESS)
            MTest_Session_note("%s: %s", what[k], cname(rc));
    }
    CHECK(sn == MPI_SESSION_NULL, "MPI_Session_finalize(MPI_SESSION_NULL) changed the handle");
    CHECK(h_calls == before, "the session's user handler was called %d times for "
          "MPI_SESSION_NULL errors", h_calls - before);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    MTEST_CHECK_WORLD_STATE(0, 0, "start");
    int skip_before = MTest_Session_skip("MTEST_SKIP_ERRH_BEFORE_INIT",
        "MPICH 4.0.2 refuses MPI_Session_create_errhandler before initialization; created "
        "after MPI_Session_init");
    int skip_init_eh = MTest_Session_skip("MTEST_SKIP_INIT_ERRHANDLER",
        "MPICH 4.0.2 ignores the errhandler argument of MPI_Session_init; attached with "
        "MPI_Session_set_errhandler");
    int skip_errs = MTest_Session_skip("MTEST_SKIP_SESSION_ERROR_CALLS",
        "MPICH 4.0.2 makes errors in session functions fatal whatever the session's handler; "
        "erroneous calls on a valid session not made");
    const char *sn = getenv("MTEST_SKIP_SESSION_NULL");
    int skip_null = sn && !strcmp(sn, "1");
    if (skip_null)
        MTest_Session_note("skipped (MTEST_SKIP_SESSION_NULL=1): MPI_SESSION_NULL calls, MPI_Init");

    MPI_Errhandler user = MPI_ERRHANDLER_NULL;
    int rc;
    if (!skip_before) {
        rc = MPI_Session_create_errhandler(user_handler, &user);
        CHECK(rc == MPI_SUCCESS && user != MPI_ERRHANDLER_NULL,
              "MPI_Session_create_errhandler before initialization: %s", cname(rc));
    }
    MPI_Session s = MPI_SESSION_NULL;
    rc = MPI_Session_init(MPI_INFO_NULL,
                          user != MPI_ERRHANDLER_NULL ? user : MPI_ERRORS_RETURN, &s);
    if (rc != MPI_SUCCESS || s == MPI_SESSION_NULL) {
        printf("MPI_Session_init failed: %s\n", MTest_Describe(rc));
        printf(" Found 1 errors\n");
        return 1;
    }
    MTest_Session_set_rank(s);
    MTEST_CHECK_WORLD_STATE(0, 0, "with a session");
    if (user == MPI_ERRHANDLER_NULL) {
        rc = MPI_Session_create_errhandler(user_handler, &user);
        CHECK(rc == MPI_SUCCESS && user != MPI_ERRHANDLER_NULL,
              "MPI_Session_create_errhandler: %s", cname(rc));
    }
    if (!skip_init_eh)
        check_get(s, skip_before ? MPI_ERRORS_RETURN : user,
                  skip_before ? "MPI_ERRORS_RETURN given to MPI_Session_init"
                              : "the user handler given to MPI_Session_init");
    if (skip_before || skip_init_eh) {
        rc = MPI_Session_set_errhandler(s, user);
        CHECK_RC(rc, "MPI_Session_set_errhandler(user)");
    }
    check_get(s, user, "the user handler");
    CHECK(h_calls == 0, "the user handler was called %d times before any error", h_calls);

    int npsets = -1;
    rc = MPI_Session_get_num_psets(s, MPI_INFO_NULL, &npsets);
    CHECK(rc == MPI_SUCCESS && npsets >= 2, "MPI_Session_get_num_psets: %s, %d psets", cname(rc),
          npsets);

    /* Errors with the user handler attached. */
    if (!skip_errs)
        erroneous_calls(s, npsets, 1);
    call_handler(s, "user handler attached");

    /* MPI_ERRORS_RETURN: errors come back without the user handler. */
    rc = MPI_Session_set_errhandler(s, MPI_ERRORS_RETURN);
    CHECK_RC(rc, "MPI_Session_set_errhandler(MPI_ERRORS_RETURN)");
    check_get(s, MPI_ERRORS_RETURN, "MPI_ERRORS_RETURN");
    if (!skip_errs)
        erroneous_calls(s, npsets, 0);
    rc = MPI_Session_set_errhandler(s, MPI_ERRORS_ARE_FATAL);
    CHECK_RC(rc, "MPI_Session_set_errhandler(MPI_ERRORS_ARE_FATAL)");
    check_get(s, MPI_ERRORS_ARE_FATAL, "MPI_ERRORS_ARE_FATAL");

    /* The user handler again, freed while attached: still called. */
    rc = MPI_Session_set_errhandler(s, user);
    CHECK_RC(rc, "MPI_Session_set_errhandler(user) again");
    check_get(s, user, "the user handler (set again)");
    rc = MPI_Errhandler_free(&user);
    CHECK(rc == MPI_SUCCESS && user == MPI_ERRHANDLER_NULL, "MPI_Errhandler_free(user): %s",
          cname(rc));
    call_handler(s, "user handler freed while attached");

    if (!skip_null)
        null_session_calls();

    /* Report over the session. */
    MPI_Comm comm = MTest_Session_world_comm(s, "org.hympi.test.errors");
    MTest_Session_report(comm);
    if (comm != MPI_COMM_NULL) {
        rc = MPI_Comm_free(&comm);
        CHECK(rc == MPI_SUCCESS && comm == MPI_COMM_NULL, "MPI_Comm_free");
    }
    rc = MPI_Session_finalize(&s);
    CHECK_RC(rc, "MPI_Session_finalize");
    CHECK(s == MPI_SESSION_NULL, "MPI_Session_finalize did not set MPI_SESSION_NULL");
    if (!skip_null) {
        rc = MPI_Finalize();
        CHECK_RC(rc, "MPI_Finalize");
    }
    return MTest_Session_exit_code();
}
#endif /* MTEST_SESSIONS */
