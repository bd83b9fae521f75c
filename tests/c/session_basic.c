/* session_basic: the Sessions Model without MPI_Init (MPI-4.0 chapter 11.3).
 *
 *  - MPI_Initialized and MPI_Finalized give 0 before, during and after the session (the
 *    World Model is never initialized).
 *  - MPI_Session_init with an info "thread_level" = "MPI_THREAD_MULTIPLE" and
 *    MPI_ERRORS_RETURN; MPI_Session_get_errhandler returns MPI_ERRORS_RETURN (skipped with
 *    MTEST_SKIP_INIT_ERRHANDLER=1, and by default for MPICH: MPICH 4.0.2 ignores the
 *    errhandler argument of MPI_Session_init and attaches MPI_ERRORS_ARE_FATAL).
 *  - MPI_Session_get_info: a new info object with the key "thread_level", whose value is
 *    one of the four MPI_THREAD_* names (which one is the library's choice: printed).
 *  - MPI_Session_get_num_psets >= 2; MPI_Session_get_nth_pset for every n: pset_len 0
 *    gives the needed length (strlen + 1) and leaves the buffer alone; a buffer of exactly
 *    that length receives the name (strlen = needed - 1, pset_len still needed); a shorter
 *    buffer (pset_len 1, and needed - 1) receives the NUL-terminated prefix and nothing is
 *    written past pset_len bytes; names at most MPI_MAX_PSET_NAME_LEN characters, all
 *    different, "mpi://WORLD" and "mpi://SELF" among them.  (What pset_len holds after a
 *    truncated call is not checked: the standard says "on return ... the required buffer
 *    size", MPICH 4.0.2 leaves the caller's value.)
 *  - MPI_Session_get_pset_info on every pset: key "mpi_size" = MPI_Group_size of
 *    MPI_Group_from_session_pset of that pset; the calling process is in the group or not
 *    (rank MPI_UNDEFINED), a rank in range otherwise; mpi://SELF: size 1, rank 0;
 *    mpi://WORLD: size = number of processes started (MTEST_NP, set by the runner).
 *  - MPI_Comm_create_from_group(WORLD group, "org.hympi.test.basic", MPI_INFO_NULL,
 *    MPI_ERRORS_RETURN): rank and size are the group's, MPI_Comm_get_errhandler gives
 *    MPI_ERRORS_RETURN, its group is MPI_IDENT to the pset's group; MPI_Allreduce (sum of
 *    ranks), a ring MPI_Sendrecv, MPI_Bcast from the last rank.
 *  - A second communicator from the same group with another string tag is MPI_CONGRUENT to
 *    the first and separate: interleaved nonblocking messages with the same tag on both are
 *    received on the other communicator first and each gets its own; a collective on each.
 *  - MPI_Comm_free -> MPI_COMM_NULL, MPI_Group_free -> MPI_GROUP_NULL,
 *    MPI_Session_finalize -> MPI_SESSION_NULL.
 * Reporting: the failure counts are summed over the first communicator before it is freed
 * (MTest_Session_report); the checks after that (frees, finalize, MPI_Initialized after the
 * session) make the process exit non-zero on failure. */
#include "mtest_session.h"
#if MTEST_SESSIONS

#define MAXPSETS 64

static int is_thread_name(const char *v)
{
    return !strcmp(v, "MPI_THREAD_SINGLE") || !strcmp(v, "MPI_THREAD_FUNNELED") ||
           !strcmp(v, "MPI_THREAD_SERIALIZED") || !strcmp(v, "MPI_THREAD_MULTIPLE");
}

static void check_session_info(MPI_Session s)
{
    MPI_Info info = MPI_INFO_NULL;
    int rc = MPI_Session_get_info(s, &info);
    if (!CHECK_RC(rc, "MPI_Session_get_info"))
        return;
    if (!CHECK(info != MPI_INFO_NULL, "MPI_Session_get_info gave MPI_INFO_NULL"))
        return;
    char value[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    memset(value, 0, sizeof value);
    rc = MPI_Info_get(info, "thread_level", MPI_MAX_INFO_VAL, value, &flag);
    CHECK_RC(rc, "MPI_Info_get(thread_level)");
    if (CHECK(flag, "MPI_Session_get_info: no key \"thread_level\"")) {
        CHECK(is_thread_name(value), "MPI_Session_get_info: thread_level is \"%s\"", value);
        if (mtest_rank == 0)
            MTest_Session_note("session thread_level = %s (MPI_THREAD_MULTIPLE requested)",
                               value);
    }
    rc = MPI_Info_free(&info);
    CHECK(rc == MPI_SUCCESS && info == MPI_INFO_NULL, "MPI_Info_free of the session info");
}

/* Name of pset n, checked by the three-call protocol; returns 1 on success. */
static int get_pset_name(MPI_Session s, int n, char *name, int cap)
{
    char buf[MPI_MAX_PSET_NAME_LEN + 64];
    int len = 0;
    memset(buf, 'Z', sizeof buf);
    int rc = MPI_Session_get_nth_pset(s, MPI_INFO_NULL, n, &len, buf);
    if (!CHECK_RC(rc, "MPI_Session_get_nth_pset(pset_len 0)"))
        return 0;
    CHECK(MTest_Check_const(buf, sizeof buf, 'Z') < 0,
          "pset %d: MPI_Session_get_nth_pset with pset_len 0 wrote to the buffer", n);
    if (!CHECK(len >= 2 && len <= MPI_MAX_PSET_NAME_LEN + 1 && len <= cap,
               "pset %d: needed length %d (MPI_MAX_PSET_NAME_LEN %d)", n, len,
               MPI_MAX_PSET_NAME_LEN))
        return 0;
    int needed = len;

    /* Exactly the needed size. */
    memset(buf, 'Z', sizeof buf);
    len = needed;
    rc = MPI_Session_get_nth_pset(s, MPI_INFO_NULL, n, &len, buf);
    if (!CHECK_RC(rc, "MPI_Session_get_nth_pset(needed length)"))
        return 0;
    if (!CHECK(memchr(buf, 0, needed) != NULL && (int)strlen(buf) == needed - 1,
               "pset %d: name not NUL-terminated at needed-1 = %d", n, needed - 1))
        return 0;
    CHECK(len == needed, "pset %d: pset_len %d after the full call, expected %d", n, len, needed);
    CHECK(MTest_Check_const(buf + needed, sizeof buf - needed, 'Z') < 0,
          "pset %d: written past pset_len", n);
    memcpy(name, buf, needed);

    /* Truncated: pset_len 1 (empty string) and needed - 1 (all but the last character). */
    int shorts[2] = {1, needed - 1};
    for (int k = 0; k < 2; k++) {
        int plen = shorts[k];
        memset(buf, 'Z', sizeof buf);
        len = plen;
        rc = MPI_Session_get_nth_pset(s, MPI_INFO_NULL, n, &len, buf);
        if (!CHECK_RC(rc, "MPI_Session_get_nth_pset(truncated)"))
            continue;
        CHECK(buf[plen - 1] == 0 && memcmp(buf, name, plen - 1) == 0,
              "pset %d (%s): pset_len %d: not the NUL-terminated prefix of %d characters", n,
              name, plen, plen - 1);
        CHECK(MTest_Check_const(buf + plen, sizeof buf - plen, 'Z') < 0,
              "pset %d (%s): pset_len %d: written past pset_len", n, name, plen);
    }
    return 1;
}

/* "mpi_size" of the pset = size of its group; returns the group size (-1 on failure). */
static int check_pset(MPI_Session s, const char *name)
{
    MPI_Info info = MPI_INFO_NULL;
    int info_size = -1;
    int rc = MPI_Session_get_pset_info(s, name, &info);
    if (CHECK_RC(rc, "MPI_Session_get_pset_info") &&
        CHECK(info != MPI_INFO_NULL, "%s: MPI_Session_get_pset_info gave MPI_INFO_NULL", name)) {
        char value[MPI_MAX_INFO_VAL + 1];
        int flag = 0;
        memset(value, 0, sizeof value);
        MPI_Info_get(info, "mpi_size", MPI_MAX_INFO_VAL, value, &flag);
        if (CHECK(flag, "%s: pset info has no key \"mpi_size\"", name)) {
            char *end = NULL;
            long v = strtol(value, &end, 10);
            if (CHECK(end != value && *end == 0 && v >= 1, "%s: mpi_size \"%s\"", name, value))
                info_size = (int)v;
        }
        MPI_Info_free(&info);
    }

    MPI_Group g = MPI_GROUP_NULL;
    rc = MPI_Group_from_session_pset(s, name, &g);
    if (!CHECK_RC(rc, "MPI_Group_from_session_pset"))
        return -1;
    int size = -1, rank = -2;
    MPI_Group_size(g, &size);
    MPI_Group_rank(g, &rank);
    CHECK(size >= 1, "%s: group size %d", name, size);
    CHECK(rank == MPI_UNDEFINED || (rank >= 0 && rank < size), "%s: group rank %d of %d", name,
          rank, size);
    if (info_size != -1)
        CHECK(info_size == size, "%s: mpi_size %d, group size %d", name, info_size, size);
    if (!strcmp(name, "mpi://SELF"))
        CHECK(size == 1 && rank == 0, "mpi://SELF: group size %d rank %d, expected 1 and 0", size,
              rank);
    if (!strcmp(name, "mpi://WORLD")) {
        int np = MTest_Session_np();
        CHECK(rank >= 0 && rank < size, "mpi://WORLD: the calling process has rank %d", rank);
        if (np > 0)
            CHECK(size == np, "mpi://WORLD: group size %d, %d processes started", size, np);
    }
    rc = MPI_Group_free(&g);
    CHECK(rc == MPI_SUCCESS && g == MPI_GROUP_NULL, "MPI_Group_free (%s)", name);
    return size;
}

static void check_psets(MPI_Session s)
{
    int npsets = -1;
    int rc = MPI_Session_get_num_psets(s, MPI_INFO_NULL, &npsets);
    if (!CHECK_RC(rc, "MPI_Session_get_num_psets"))
        return;
    CHECK(npsets >= 2, "MPI_Session_get_num_psets gave %d, expected >= 2", npsets);
    static char names[MAXPSETS][MPI_MAX_PSET_NAME_LEN + 1];
    int have_world = 0, have_self = 0, got = 0;
    for (int n = 0; n < npsets && n < MAXPSETS; n++) {
        if (!get_pset_name(s, n, names[got], MPI_MAX_PSET_NAME_LEN + 1))
            continue;
        for (int k = 0; k < got; k++)
            CHECK(strcmp(names[k], names[got]) != 0, "pset name \"%s\" appears twice", names[k]);
        have_world |= !strcmp(names[got], "mpi://WORLD");
        have_self |= !strcmp(names[got], "mpi://SELF");
        check_pset(s, names[got]);
        got++;
    }
    CHECK(have_world, "\"mpi://WORLD\" is not among the %d psets", npsets);
    CHECK(have_self, "\"mpi://SELF\" is not among the %d psets", npsets);
    if (mtest_rank == 0 && npsets > 2) {
        for (int k = 0; k < got; k++)
            if (strcmp(names[k], "mpi://WORLD") && strcmp(names[k], "mpi://SELF"))
                MTest_Session_note("pset %s", names[k]);
    }
}

static void check_comm(MPI_Comm comm, MPI_Group wgroup)
{
    int grank = -1, gsize = -1, rank = -1, size = -1;
    MPI_Group_rank(wgroup, &grank);
    MPI_Group_size(wgroup, &gsize);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    CHECK(rank == grank && size == gsize, "communicator rank/size %d/%d, group %d/%d", rank,
          size, grank, gsize);

    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    int rc = MPI_Comm_get_errhandler(comm, &eh);
    CHECK(rc == MPI_SUCCESS && eh == MPI_ERRORS_RETURN,
          "MPI_Comm_get_errhandler of the new communicator is not MPI_ERRORS_RETURN");
    if (rc == MPI_SUCCESS && eh != MPI_ERRHANDLER_NULL)
        MPI_Errhandler_free(&eh);

    MPI_Group cg = MPI_GROUP_NULL;
    int cmp = -1;
    rc = MPI_Comm_group(comm, &cg);
    CHECK_RC(rc, "MPI_Comm_group");
    if (rc == MPI_SUCCESS) {
        MPI_Group_compare(cg, wgroup, &cmp);
        CHECK(cmp == MPI_IDENT, "MPI_Group_compare(communicator group, pset group) = %d", cmp);
        MPI_Group_free(&cg);
    }

    /* Allreduce: sum of the ranks. */
    int sum = -1;
    rc = MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, comm);
    CHECK_RC(rc, "MPI_Allreduce");
    CHECK(sum == size * (size - 1) / 2, "MPI_Allreduce sum of ranks %d, expected %d", sum,
          size * (size - 1) / 2);

    /* Ring. */
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out[2] = {rank, 4242}, in[2] = {-1, -1};
    MPI_Status st;
    rc = MPI_Sendrecv(out, 2, MPI_INT, right, 17, in, 2, MPI_INT, left, 17, comm, &st);
    CHECK_RC(rc, "MPI_Sendrecv (ring)");
    CHECK(in[0] == left && in[1] == 4242, "ring: got {%d, %d} from %d", in[0], in[1], left);
    CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 17, "ring: status source %d tag %d",
          st.MPI_SOURCE, st.MPI_TAG);

    /* Bcast from the last rank. */
    int root = size - 1, data[8];
    for (int i = 0; i < 8; i++)
        data[i] = rank == root ? 1000 + i : -1;
    rc = MPI_Bcast(data, 8, MPI_INT, root, comm);
    CHECK_RC(rc, "MPI_Bcast");
    for (int i = 0; i < 8; i++)
        if (!CHECK(data[i] == 1000 + i, "MPI_Bcast from %d: element %d is %d", root, i, data[i]))
            break;
}

/* comm1 and comm2 are over the same group: messages with the same tag stay on their own. */
static void check_two_comms(MPI_Comm comm1, MPI_Comm comm2)
{
    int rank = -1, size = -1, cmp = -1;
    MPI_Comm_rank(comm1, &rank);
    MPI_Comm_size(comm1, &size);
    int rc = MPI_Comm_compare(comm1, comm2, &cmp);
    CHECK(rc == MPI_SUCCESS && cmp == MPI_CONGRUENT,
          "MPI_Comm_compare of two communicators from one group: %d, expected MPI_CONGRUENT", cmp);
    int r2 = -1;
    MPI_Comm_rank(comm2, &r2);
    CHECK(r2 == rank, "second communicator: rank %d, first %d", r2, rank);

    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int round = 0; round < 3; round++) {
        /* Send on comm1 first, receive on comm2 first. */
        int out1 = 100000 + 100 * rank + round, out2 = 200000 + 100 * rank + round;
        int in1 = -1, in2 = -1;
        MPI_Request rq[2];
        MPI_Status st;
        MPI_Isend(&out1, 1, MPI_INT, right, 5, comm1, &rq[0]);
        MPI_Isend(&out2, 1, MPI_INT, right, 5, comm2, &rq[1]);
        rc = MPI_Recv(&in2, 1, MPI_INT, MPI_ANY_SOURCE, 5, comm2, &st);
        CHECK_RC(rc, "MPI_Recv on the second communicator");
        CHECK(in2 == 200000 + 100 * left + round,
              "round %d: second communicator received %d, expected %d", round, in2,
              200000 + 100 * left + round);
        rc = MPI_Recv(&in1, 1, MPI_INT, left, MPI_ANY_TAG, comm1, &st);
        CHECK_RC(rc, "MPI_Recv on the first communicator");
        CHECK(in1 == 100000 + 100 * left + round,
              "round %d: first communicator received %d, expected %d", round, in1,
              100000 + 100 * left + round);
        rc = MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        CHECK_RC(rc, "MPI_Waitall (two communicators)");
    }
    /* A collective on each, different data. */
    int a = 1, b = rank, sa = -1, sb = -1;
    MPI_Allreduce(&a, &sa, 1, MPI_INT, MPI_SUM, comm2);
    MPI_Allreduce(&b, &sb, 1, MPI_INT, MPI_MAX, comm1);
    CHECK(sa == size, "MPI_Allreduce on the second communicator: %d, expected %d", sa, size);
    CHECK(sb == size - 1, "MPI_Allreduce(MPI_MAX) on the first communicator: %d", sb);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    MTEST_CHECK_WORLD_STATE(0, 0, "before MPI_Session_init");

    MPI_Info info = MPI_INFO_NULL;
    MPI_Info_create(&info);
    MPI_Info_set(info, "thread_level", "MPI_THREAD_MULTIPLE");
    MPI_Session s = MPI_SESSION_NULL;
    int rc = MPI_Session_init(info, MPI_ERRORS_RETURN, &s);
    MPI_Info_free(&info);
    if (rc != MPI_SUCCESS || s == MPI_SESSION_NULL) {
        printf("MPI_Session_init failed: %s\n", MTest_Describe(rc));
        printf(" Found 1 errors\n");
        return 1;
    }
    MTest_Session_set_rank(s);
    MTEST_CHECK_WORLD_STATE(0, 0, "after MPI_Session_init");

    if (!MTest_Session_skip("MTEST_SKIP_INIT_ERRHANDLER", "MPICH 4.0.2 does not attach the "
                            "error handler given to MPI_Session_init")) {
        MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
        rc = MPI_Session_get_errhandler(s, &eh);
        CHECK(rc == MPI_SUCCESS && eh == MPI_ERRORS_RETURN,
              "MPI_Session_get_errhandler: not the MPI_ERRORS_RETURN given to MPI_Session_init");
        if (rc == MPI_SUCCESS && eh != MPI_ERRHANDLER_NULL)
            MPI_Errhandler_free(&eh);
    }

    check_session_info(s);
    check_psets(s);

    MPI_Group wgroup = MPI_GROUP_NULL;
    MPI_Comm comm = MPI_COMM_NULL, comm2 = MPI_COMM_NULL;
    rc = MPI_Group_from_session_pset(s, "mpi://WORLD", &wgroup);
    if (CHECK_RC(rc, "MPI_Group_from_session_pset(mpi://WORLD)")) {
        rc = MPI_Comm_create_from_group(wgroup, "org.hympi.test.basic", MPI_INFO_NULL,
                                        MPI_ERRORS_RETURN, &comm);
        if (!CHECK_RC(rc, "MPI_Comm_create_from_group(org.hympi.test.basic)"))
            comm = MPI_COMM_NULL;
    }
    if (comm != MPI_COMM_NULL) {
        MPI_Comm_rank(comm, &mtest_rank);
        MPI_Comm_size(comm, &mtest_size);
        check_comm(comm, wgroup);
        MTEST_CHECK_WORLD_STATE(0, 0, "with a session communicator");
        rc = MPI_Comm_create_from_group(wgroup, "org.hympi.test.basic.second", MPI_INFO_NULL,
                                        MPI_ERRORS_RETURN, &comm2);
        if (CHECK_RC(rc, "MPI_Comm_create_from_group(org.hympi.test.basic.second)")) {
            check_two_comms(comm, comm2);
            rc = MPI_Comm_free(&comm2);
            CHECK(rc == MPI_SUCCESS && comm2 == MPI_COMM_NULL, "MPI_Comm_free (second)");
        }
    }

    MTest_Session_report(comm);

    if (comm != MPI_COMM_NULL) {
        rc = MPI_Comm_free(&comm);
        CHECK(rc == MPI_SUCCESS && comm == MPI_COMM_NULL, "MPI_Comm_free");
    }
    if (wgroup != MPI_GROUP_NULL) {
        rc = MPI_Group_free(&wgroup);
        CHECK(rc == MPI_SUCCESS && wgroup == MPI_GROUP_NULL, "MPI_Group_free");
    }
    rc = MPI_Session_finalize(&s);
    CHECK_RC(rc, "MPI_Session_finalize");
    CHECK(s == MPI_SESSION_NULL, "MPI_Session_finalize did not set the handle to MPI_SESSION_NULL");
    MTEST_CHECK_WORLD_STATE(0, 0, "after MPI_Session_finalize");
    return MTest_Session_exit_code();
}
#endif /* MTEST_SESSIONS */
