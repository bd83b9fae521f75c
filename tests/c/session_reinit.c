/* session_reinit: two sessions at once, and sessions again after all were finalized
 * (MPI-4.0 chapter 11.3: any number of sessions, each independent, "MPI can be initialized
 * and finalized multiple times" in the Sessions Model).  No MPI_Init.  Three rounds of:
 *
 *  - MPI_Session_init A, MPI_Session_init B (different handles); the psets of A: WORLD and
 *    SELF among them, and every pset whose name does not start with "mpi://" has a group
 *    (the calling process in it or not) whose size is its "mpi_size";
 *  - a communicator from each session's mpi://WORLD group with different string tags; both
 *    used at once: interleaved nonblocking messages with the same tag (received on B's
 *    first), an MPI_Allreduce on each with different data;
 *  - A's communicator freed, MPI_Session_finalize(A) -> MPI_SESSION_NULL; B still works: an
 *    MPI_Allreduce, a ring MPI_Sendrecv, and a new communicator made from B afterwards;
 *  - B finalized: no session is left.  Re-initialization: MPI_Session_init C, a
 *    communicator, MPI_Allreduce, ring, freed, C finalized.  The next round starts again
 *    from nothing.
 * MPI_Initialized / MPI_Finalized stay 0 throughout.
 *
 * MTEST_SKIP_SESSION_REINIT=1 (the default for MPICH: MPICH 4.0.2 crashes in
 * MPI_Session_init once every session was finalized) runs one round without the
 * re-initialization.  The failure counts are summed over the last communicator (C of the
 * last round, or B when re-initialization is skipped) before it is freed; checks after that
 * make the process exit non-zero. */
#include "mtest_session.h"
#if MTEST_SESSIONS

#define ROUNDS 3
#define MAXPSETS 64

static MPI_Session open_session(const char *what)
{
    MPI_Session s = MPI_SESSION_NULL;
    int rc = MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s);
    if (!CHECK(rc == MPI_SUCCESS && s != MPI_SESSION_NULL, "MPI_Session_init (%s): %s", what,
               MTest_Describe(rc)))
        return MPI_SESSION_NULL;
    return s;
}

static void close_session(MPI_Session *s, const char *what)
{
    if (*s == MPI_SESSION_NULL)
        return;
    int rc = MPI_Session_finalize(s);
    CHECK_RC(rc, what);
    CHECK(*s == MPI_SESSION_NULL, "%s: handle not set to MPI_SESSION_NULL", what);
}

static void free_comm(MPI_Comm *c)
{
    if (*c == MPI_COMM_NULL)
        return;
    int rc = MPI_Comm_free(c);
    CHECK(rc == MPI_SUCCESS && *c == MPI_COMM_NULL, "MPI_Comm_free");
}

/* The psets of s: WORLD and SELF present; for others ("mpi://" names are the standard's),
 * group size = "mpi_size" and the calling process in it or not. */
static void check_psets(MPI_Session s, int round)
{
    int npsets = -1, world = 0, self = 0;
    int rc = MPI_Session_get_num_psets(s, MPI_INFO_NULL, &npsets);
    if (!CHECK_RC(rc, "MPI_Session_get_num_psets"))
        return;
    for (int n = 0; n < npsets && n < MAXPSETS; n++) {
        char name[MPI_MAX_PSET_NAME_LEN + 1];
        int len = (int)sizeof name;
        rc = MPI_Session_get_nth_pset(s, MPI_INFO_NULL, n, &len, name);
        if (!CHECK_RC(rc, "MPI_Session_get_nth_pset"))
            continue;
        world |= !strcmp(name, "mpi://WORLD");
        self |= !strcmp(name, "mpi://SELF");
        if (!strncmp(name, "mpi://", 6))
            continue;
        MPI_Info info = MPI_INFO_NULL;
        int mpi_size = -1;
        rc = MPI_Session_get_pset_info(s, name, &info);
        if (CHECK_RC(rc, "MPI_Session_get_pset_info")) {
            char v[MPI_MAX_INFO_VAL + 1];
            int flag = 0;
            MPI_Info_get(info, "mpi_size", MPI_MAX_INFO_VAL, v, &flag);
            if (CHECK(flag, "pset %s: no \"mpi_size\"", name))
                mpi_size = atoi(v);
            MPI_Info_free(&info);
        }
        MPI_Group g = MPI_GROUP_NULL;
        rc = MPI_Group_from_session_pset(s, name, &g);
        if (!CHECK_RC(rc, "MPI_Group_from_session_pset"))
            continue;
        int gs = -1, gr = -2;
        MPI_Group_size(g, &gs);
        MPI_Group_rank(g, &gr);
        CHECK(gs == mpi_size, "pset %s: group size %d, mpi_size %d", name, gs, mpi_size);
        CHECK(gr == MPI_UNDEFINED || (gr >= 0 && gr < gs), "pset %s: rank %d of %d", name, gr, gs);
        MPI_Group_free(&g);
        if (round == 0 && mtest_rank == 0)
            MTest_Session_note("pset %s: size %d", name, gs);
    }
    CHECK(world && self, "round %d: mpi://WORLD (%d) or mpi://SELF (%d) missing", round, world,
          self);
}

/* Allreduce + ring on comm; tagval distinguishes the uses. */
static void use_comm(MPI_Comm comm, int tagval, const char *what)
{
    int rank = -1, size = -1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int v = rank + tagval, sum = -1;
    int rc = MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, comm);
    CHECK_RC(rc, "MPI_Allreduce");
    CHECK(sum == size * (size - 1) / 2 + size * tagval, "%s: MPI_Allreduce gave %d, expected %d",
          what, sum, size * (size - 1) / 2 + size * tagval);
    int right = (rank + 1) % size, left = (rank + size - 1) % size, in = -1;
    int out = rank * 10 + tagval;
    rc = MPI_Sendrecv(&out, 1, MPI_INT, right, 3, &in, 1, MPI_INT, left, 3, comm,
                      MPI_STATUS_IGNORE);
    CHECK_RC(rc, "MPI_Sendrecv (ring)");
    CHECK(in == left * 10 + tagval, "%s: ring got %d, expected %d", what, in, left * 10 + tagval);
}

/* ca and cb (same processes, different sessions): same tag, nothing crosses over. */
static void interleave(MPI_Comm ca, MPI_Comm cb)
{
    int rank = -1, size = -1;
    MPI_Comm_rank(ca, &rank);
    MPI_Comm_size(ca, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int oa = 1000 + rank, ob = 2000 + rank, ia = -1, ib = -1;
    MPI_Request rq[2];
    MPI_Isend(&oa, 1, MPI_INT, right, 9, ca, &rq[0]);
    MPI_Isend(&ob, 1, MPI_INT, right, 9, cb, &rq[1]);
    int rc = MPI_Recv(&ib, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, cb, MPI_STATUS_IGNORE);
    CHECK(rc == MPI_SUCCESS && ib == 2000 + left, "B's communicator received %d, expected %d",
          ib, 2000 + left);
    rc = MPI_Recv(&ia, 1, MPI_INT, left, 9, ca, MPI_STATUS_IGNORE);
    CHECK(rc == MPI_SUCCESS && ia == 1000 + left, "A's communicator received %d, expected %d",
          ia, 1000 + left);
    rc = MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    CHECK_RC(rc, "MPI_Waitall");
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    int skip_reinit = MTest_Session_skip("MTEST_SKIP_SESSION_REINIT",
                                         "MPICH 4.0.2 crashes in MPI_Session_init after the "
                                         "last session was finalized (one round, no re-init)");
    int rounds = skip_reinit ? 1 : ROUNDS;
    MTEST_CHECK_WORLD_STATE(0, 0, "start");

    for (int round = 0; round < rounds; round++) {
        int last = round == rounds - 1;
        MPI_Session a = open_session("A"), b = open_session("B");
        if (a == MPI_SESSION_NULL || b == MPI_SESSION_NULL) {
            MTest_Session_report(MPI_COMM_NULL);
            return 1;
        }
        CHECK(a != b, "round %d: two sessions have the same handle", round);
        MTest_Session_set_rank(a);
        check_psets(a, round);
        MTEST_CHECK_WORLD_STATE(0, 0, "two sessions");

        MPI_Comm ca = MTest_Session_world_comm(a, "org.hympi.test.reinit.A");
        MPI_Comm cb = MTest_Session_world_comm(b, "org.hympi.test.reinit.B");
        if (ca != MPI_COMM_NULL && cb != MPI_COMM_NULL) {
            interleave(ca, cb);
            use_comm(ca, 1, "A");
            use_comm(cb, 2, "B");
        }
        free_comm(&ca);
        close_session(&a, "MPI_Session_finalize(A)");

        /* B after A is gone. */
        if (cb != MPI_COMM_NULL)
            use_comm(cb, 3, "B after A's finalize");
        MPI_Comm cb2 = MTest_Session_world_comm(b, "org.hympi.test.reinit.B2");
        if (cb2 != MPI_COMM_NULL)
            use_comm(cb2, 4, "new communicator from B after A's finalize");
        free_comm(&cb2);
        if (skip_reinit) {
            MTest_Session_report(cb);
            free_comm(&cb);
            close_session(&b, "MPI_Session_finalize(B)");
            break;
        }
        free_comm(&cb);
        close_session(&b, "MPI_Session_finalize(B)");
        MTEST_CHECK_WORLD_STATE(0, 0, "all sessions finalized");

        /* Re-initialization. */
        MPI_Session c = open_session("C, after all sessions were finalized");
        if (c == MPI_SESSION_NULL) {
            MTest_Session_report(MPI_COMM_NULL);
            return 1;
        }
        MPI_Comm cc = MTest_Session_world_comm(c, "org.hympi.test.reinit.C");
        if (cc != MPI_COMM_NULL)
            use_comm(cc, 5 + round, "C (re-initialized)");
        if (last)
            MTest_Session_report(cc);
        free_comm(&cc);
        close_session(&c, "MPI_Session_finalize(C)");
    }
    MTEST_CHECK_WORLD_STATE(0, 0, "end");
    return MTest_Session_exit_code();
}
#endif /* MTEST_SESSIONS */
