/* session_world: the Sessions Model alongside the World Model (MPI-4.0 section 11.3: a
 * process may use both; sessions are independent of MPI_Init / MPI_Finalize).
 *
 *  - MPI_Init_thread(MPI_THREAD_MULTIPLE), then MPI_Session_init (MPI_ERRORS_RETURN).
 *  - The session's mpi://WORLD group is MPI_IDENT to MPI_COMM_WORLD's group and its
 *    mpi://SELF group to MPI_COMM_SELF's; a communicator from the WORLD group
 *    (MPI_Comm_create_from_group) is MPI_CONGRUENT to MPI_COMM_WORLD (MPI_Comm_compare).
 *    These calls take one object of the session and one of the World Model; MPI-4.0 asks
 *    that objects of different sessions not be mixed in one call and is not explicit about
 *    the World Model: MTEST_SKIP_SESSION_MIX=1 skips them (they run by default, MPICH 4.0.2
 *    passes).
 *  - Traffic on both at once with the same tags does not mix: receives pre-posted on both
 *    with the same tag, then sends on both (in the other order); blocking receives with
 *    wildcards on the session communicator while a message with the same tag waits on
 *    MPI_COMM_WORLD; MPI_Iallreduce on both at once with different data.
 *  - MPI_Session_finalize before MPI_Finalize (handle MPI_SESSION_NULL; MPI_COMM_WORLD keeps
 *    working).
 *  - A second session opened before MPI_Finalize, with a communicator, finalized AFTER
 *    MPI_Finalize: after MPI_Finalize, MPI_Finalized and MPI_Initialized give 1 and the
 *    session communicator still works (MPI_Allreduce, ring) until it is freed and the session
 *    finalized.
 * Reporting: failure counts are summed over the second session's communicator after the
 * post-MPI_Finalize checks and printed by its rank 0; the frees and the final
 * MPI_Session_finalize after that make the process exit non-zero on failure. */
#include "mtest_session.h"
#if MTEST_SESSIONS

static int skip_mix(void)
{
    const char *v = getenv("MTEST_SKIP_SESSION_MIX");
    if (v && !strcmp(v, "1")) {
        MTest_Session_note("skipped (MTEST_SKIP_SESSION_MIX=1): group/communicator comparisons "
                           "between a session and the World Model");
        return 1;
    }
    return 0;
}

static void check_mix(MPI_Session s, MPI_Comm scomm)
{
    MPI_Group sg = MPI_GROUP_NULL, wg = MPI_GROUP_NULL;
    int cmp = -1;
    int rc = MPI_Group_from_session_pset(s, "mpi://WORLD", &sg);
    if (CHECK_RC(rc, "MPI_Group_from_session_pset(mpi://WORLD)")) {
        MPI_Comm_group(MPI_COMM_WORLD, &wg);
        rc = MPI_Group_compare(sg, wg, &cmp);
        CHECK(rc == MPI_SUCCESS && cmp == MPI_IDENT,
              "MPI_Group_compare(mpi://WORLD, MPI_COMM_WORLD's group) = %d (rc %d), expected "
              "MPI_IDENT", cmp, rc);
        MPI_Group_free(&wg);
        MPI_Group_free(&sg);
    }
    rc = MPI_Group_from_session_pset(s, "mpi://SELF", &sg);
    if (CHECK_RC(rc, "MPI_Group_from_session_pset(mpi://SELF)")) {
        MPI_Comm_group(MPI_COMM_SELF, &wg);
        cmp = -1;
        rc = MPI_Group_compare(sg, wg, &cmp);
        CHECK(rc == MPI_SUCCESS && cmp == MPI_IDENT,
              "MPI_Group_compare(mpi://SELF, MPI_COMM_SELF's group) = %d (rc %d), expected "
              "MPI_IDENT", cmp, rc);
        MPI_Group_free(&wg);
        MPI_Group_free(&sg);
    }
    cmp = -1;
    rc = MPI_Comm_compare(scomm, MPI_COMM_WORLD, &cmp);
    CHECK(rc == MPI_SUCCESS && cmp == MPI_CONGRUENT,
          "MPI_Comm_compare(session communicator, MPI_COMM_WORLD) = %d (rc %d), expected "
          "MPI_CONGRUENT", cmp, rc);
}

/* Same tags on the session communicator and MPI_COMM_WORLD at once. */
static void check_traffic(MPI_Comm scomm)
{
    int wrank = -1, wsize = -1, srank = -1, ssize = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    MPI_Comm_rank(scomm, &srank);
    MPI_Comm_size(scomm, &ssize);
    if (!CHECK(ssize == wsize, "session communicator size %d, MPI_COMM_WORLD %d", ssize, wsize))
        return;
    int wright = (wrank + 1) % wsize, wleft = (wrank + wsize - 1) % wsize;
    int sright = (srank + 1) % ssize, sleft = (srank + ssize - 1) % ssize;

    for (int round = 0; round < 4; round++) {
        /* Receives pre-posted on both with the same tag; sends in alternating order. */
        int win = -1, sin = -1, wout = 10000 + 100 * wrank + round, sout = 20000 + 100 * srank + round;
        MPI_Request rq[4];
        MPI_Status st[4];
        MPI_Irecv(&win, 1, MPI_INT, round & 1 ? MPI_ANY_SOURCE : wleft, 5, MPI_COMM_WORLD, &rq[0]);
        MPI_Irecv(&sin, 1, MPI_INT, round & 1 ? MPI_ANY_SOURCE : sleft, 5, scomm, &rq[1]);
        if (round & 1) {
            MPI_Isend(&sout, 1, MPI_INT, sright, 5, scomm, &rq[2]);
            MPI_Isend(&wout, 1, MPI_INT, wright, 5, MPI_COMM_WORLD, &rq[3]);
        } else {
            MPI_Isend(&wout, 1, MPI_INT, wright, 5, MPI_COMM_WORLD, &rq[3]);
            MPI_Isend(&sout, 1, MPI_INT, sright, 5, scomm, &rq[2]);
        }
        int rc = MPI_Waitall(4, rq, st);
        CHECK_RC(rc, "MPI_Waitall (both communicators)");
        CHECK(win == 10000 + 100 * wleft + round, "round %d: MPI_COMM_WORLD received %d, "
              "expected %d", round, win, 10000 + 100 * wleft + round);
        CHECK(sin == 20000 + 100 * sleft + round, "round %d: session communicator received %d, "
              "expected %d", round, sin, 20000 + 100 * sleft + round);
    }

    /* A message waits on MPI_COMM_WORLD while a wildcard receive runs on the session
     * communicator: it must take the session's message. */
    {
        int wout = 30000 + wrank, sout = 40000 + srank, win = -1, sin = -1;
        MPI_Request rq[2];
        MPI_Status st;
        MPI_Isend(&wout, 1, MPI_INT, wright, 6, MPI_COMM_WORLD, &rq[0]);
        MPI_Barrier(MPI_COMM_WORLD); /* the world message had time to arrive */
        MPI_Isend(&sout, 1, MPI_INT, sright, 6, scomm, &rq[1]);
        int rc = MPI_Recv(&sin, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, scomm, &st);
        CHECK(rc == MPI_SUCCESS && sin == 40000 + sleft && st.MPI_SOURCE == sleft &&
                  st.MPI_TAG == 6,
              "wildcard receive on the session communicator got %d from %d tag %d, expected %d "
              "from %d tag 6", sin, st.MPI_SOURCE, st.MPI_TAG, 40000 + sleft, sleft);
        rc = MPI_Recv(&win, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        CHECK(rc == MPI_SUCCESS && win == 30000 + wleft,
              "MPI_COMM_WORLD then received %d, expected %d", win, 30000 + wleft);
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    }

    /* Nonblocking collectives on both at once. */
    {
        int a = 1, b = srank, sa = -1, sb = -1;
        MPI_Request rq[2];
        MPI_Iallreduce(&a, &sa, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq[0]);
        MPI_Iallreduce(&b, &sb, 1, MPI_INT, MPI_SUM, scomm, &rq[1]);
        int rc = MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        CHECK_RC(rc, "MPI_Waitall (MPI_Iallreduce on both)");
        CHECK(sa == wsize, "MPI_Iallreduce on MPI_COMM_WORLD gave %d, expected %d", sa, wsize);
        CHECK(sb == ssize * (ssize - 1) / 2, "MPI_Iallreduce on the session communicator gave "
              "%d, expected %d", sb, ssize * (ssize - 1) / 2);
    }
}

static void allreduce_ring(MPI_Comm comm, const char *what)
{
    int rank = -1, size = -1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int v = rank + 1, sum = -1;
    int rc = MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, comm);
    CHECK_RC(rc, "MPI_Allreduce");
    CHECK(sum == size * (size + 1) / 2, "%s: MPI_Allreduce gave %d, expected %d", what, sum,
          size * (size + 1) / 2);
    int right = (rank + 1) % size, left = (rank + size - 1) % size, in = -1;
    rc = MPI_Sendrecv(&rank, 1, MPI_INT, right, 8, &in, 1, MPI_INT, left, 8, comm,
                      MPI_STATUS_IGNORE);
    CHECK(rc == MPI_SUCCESS && in == left, "%s: ring got %d, expected %d", what, in, left);
}

int main(int argc, char **argv)
{
    int provided = -1;
    MTest_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MTest_Errors_return_all();
    MTEST_CHECK_WORLD_STATE(1, 0, "after MPI_Init_thread");

    /* First session: used with the World Model, finalized before MPI_Finalize. */
    MPI_Session s1 = MPI_SESSION_NULL;
    int rc = MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s1);
    if (CHECK_RC(rc, "MPI_Session_init (first)")) {
        MTEST_CHECK_WORLD_STATE(1, 0, "with a session");
        MPI_Comm scomm = MTest_Session_world_comm(s1, "org.hympi.test.world.first");
        if (scomm != MPI_COMM_NULL) {
            if (!skip_mix())
                check_mix(s1, scomm);
            check_traffic(scomm);
            rc = MPI_Comm_free(&scomm);
            CHECK(rc == MPI_SUCCESS && scomm == MPI_COMM_NULL, "MPI_Comm_free (first session)");
        }
        rc = MPI_Session_finalize(&s1);
        CHECK_RC(rc, "MPI_Session_finalize (first, before MPI_Finalize)");
        CHECK(s1 == MPI_SESSION_NULL, "MPI_Session_finalize did not set MPI_SESSION_NULL");
    }
    MTEST_CHECK_WORLD_STATE(1, 0, "after the first session");
    allreduce_ring(MPI_COMM_WORLD, "MPI_COMM_WORLD after the first session's finalize");

    /* Second session: outlives the World Model. */
    MPI_Session s2 = MPI_SESSION_NULL;
    MPI_Comm scomm2 = MPI_COMM_NULL;
    rc = MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s2);
    if (CHECK_RC(rc, "MPI_Session_init (second)")) {
        scomm2 = MTest_Session_world_comm(s2, "org.hympi.test.world.second");
        if (scomm2 != MPI_COMM_NULL)
            allreduce_ring(scomm2, "second session before MPI_Finalize");
    }
    rc = MPI_Finalize();
    CHECK_RC(rc, "MPI_Finalize");
    MTEST_CHECK_WORLD_STATE(1, 1, "after MPI_Finalize, second session open");
    if (scomm2 != MPI_COMM_NULL)
        allreduce_ring(scomm2, "second session after MPI_Finalize");

    MTest_Session_report(scomm2);

    if (scomm2 != MPI_COMM_NULL) {
        rc = MPI_Comm_free(&scomm2);
        CHECK(rc == MPI_SUCCESS && scomm2 == MPI_COMM_NULL, "MPI_Comm_free after MPI_Finalize");
    }
    if (s2 != MPI_SESSION_NULL) {
        rc = MPI_Session_finalize(&s2);
        CHECK_RC(rc, "MPI_Session_finalize (second, after MPI_Finalize)");
        CHECK(s2 == MPI_SESSION_NULL, "MPI_Session_finalize did not set MPI_SESSION_NULL");
    }
    MTEST_CHECK_WORLD_STATE(1, 1, "at the end");
    return MTest_Session_exit_code();
}
#endif /* MTEST_SESSIONS */
