/* mtest_session.h: helpers of the sessions tests (session_*.c).
 *
 * The sessions programs do not call MPI_Init (or call it late), so they do not use
 * MTest_Init / MTest_Finalize: they count failures with CHECK and friends from mtest.h as
 * usual and report through a communicator made from a session's "mpi://WORLD" process set
 * (MTest_Session_report): the counts are summed at its rank 0 with point-to-point messages,
 * and that rank prints exactly one " No Errors" (or " Found N errors").  Checks made after
 * the report (the final MPI_Session_finalize and what follows) still print their failure
 * line and make the process exit non-zero (MTest_Session_exit_code), which fails the test.
 *
 * Until a session communicator exists, the "[rank]" prefix of failure lines is the
 * process's rank in the mpi://WORLD group (MTest_Session_set_rank).
 *
 * Reference-MPI deviations: a part of a test that MPICH 4.0.2 cannot run is guarded by
 * MTest_Session_skip("MTEST_SKIP_xxx", reason): it is skipped when the environment variable
 * is 1, runs when it is 0, and when unset is skipped only for MPICH (mpi.h defines
 * MPICH_VERSION and not HYMPI).  A skip prints "MTEST_NOTE: skipped (MTEST_SKIP_xxx): reason"
 * once (from the reporting rank, at the report).
 *
 * With an MPI older than 4.0 (Open MPI 4.1) this header defines main itself: the program
 * only reports MTEST_SKIP (the test files put their code inside #if MTEST_SESSIONS). */
#ifndef MTEST_SESSION_H_INCLUDED
#define MTEST_SESSION_H_INCLUDED

#include "mtest.h"

#if MPI_VERSION < 4
#define MTEST_SESSIONS 0
int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    MTest_Skip("the Sessions Model is MPI-4.0");
    return MTest_Finalize(0);
}
#else
#define MTEST_SESSIONS 1

#if defined(MPICH_VERSION) && !defined(HYMPI)
#define MTEST_SESSION_MPICH 1
#else
#define MTEST_SESSION_MPICH 0
#endif

#define MTEST_TAG_SESSION_ERRS 32020

/* Notes printed by the reporting rank at the report (skips). */
static char mtest_session_notes[2048];

MTEST_FN void MTest_Session_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
MTEST_FN void MTest_Session_note(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (strstr(mtest_session_notes, line))
        return; /* once */
    size_t used = strlen(mtest_session_notes);
    snprintf(mtest_session_notes + used, sizeof mtest_session_notes - used, "MTEST_NOTE: %s\n",
             line);
}

/* 1 when the part guarded by env should be skipped (see the top of this file). */
MTEST_FN int MTest_Session_skip(const char *env, const char *reason)
{
    const char *v = getenv(env);
    int skip = v ? !strcmp(v, "1") : MTEST_SESSION_MPICH;
    if (skip)
        MTest_Session_note("skipped (%s%s): %s", env, v ? "=1" : ", MPICH default", reason);
    return skip;
}

/* Name of an error class, with the classes sessions tests meet beyond mtest.h's list. */
MTEST_FN const char *MTest_Session_class_name(int cls)
{
    if (cls == MPI_ERR_SESSION) return "MPI_ERR_SESSION";
#ifdef MPI_ERR_ERRHANDLER /* MPI-4.1 */
    if (cls == MPI_ERR_ERRHANDLER) return "MPI_ERR_ERRHANDLER";
#endif
    if (cls == MPI_ERR_INFO) return "MPI_ERR_INFO";
    if (cls == MPI_ERR_INFO_KEY) return "MPI_ERR_INFO_KEY";
    if (cls == MPI_ERR_INFO_VALUE) return "MPI_ERR_INFO_VALUE";
    return MTest_Class_name(cls);
}

/* Number of processes started: MTEST_NP (set by tests/run-c-tests), or -1 when unknown. */
MTEST_FN int MTest_Session_np(void)
{
    const char *np = getenv("MTEST_NP");
    return np && *np ? atoi(np) : -1;
}

/* Use the process's rank in the mpi://WORLD group of session s as the "[rank]" prefix of
 * failure lines (and the reporting rank) until a communicator gives it. */
MTEST_FN void MTest_Session_set_rank(MPI_Session s)
{
    MPI_Group g = MPI_GROUP_NULL;
    if (MPI_Group_from_session_pset(s, "mpi://WORLD", &g) != MPI_SUCCESS)
        return;
    int r = MPI_UNDEFINED, n = 0;
    MPI_Group_rank(g, &r);
    MPI_Group_size(g, &n);
    if (r != MPI_UNDEFINED)
        mtest_rank = r;
    mtest_size = n;
    MPI_Group_free(&g);
}

/* A communicator over the mpi://WORLD process set of session s, with string tag tag and
 * MPI_ERRORS_RETURN; MPI_COMM_NULL (and a counted failure) when that fails.  Sets
 * mtest_rank / mtest_size from it. */
MTEST_FN MPI_Comm MTest_Session_world_comm(MPI_Session s, const char *tag)
{
    MPI_Group g = MPI_GROUP_NULL;
    MPI_Comm comm = MPI_COMM_NULL;
    int rc = MPI_Group_from_session_pset(s, "mpi://WORLD", &g);
    if (!CHECK_RC(rc, "MPI_Group_from_session_pset(mpi://WORLD)"))
        return MPI_COMM_NULL;
    rc = MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &comm);
    CHECK_RC(rc, "MPI_Comm_create_from_group(mpi://WORLD)");
    MPI_Group_free(&g);
    if (rc != MPI_SUCCESS)
        return MPI_COMM_NULL;
    if (!CHECK(comm != MPI_COMM_NULL, "MPI_Comm_create_from_group(%s) gave MPI_COMM_NULL", tag))
        return MPI_COMM_NULL;
    MPI_Comm_rank(comm, &mtest_rank);
    MPI_Comm_size(comm, &mtest_size);
    return comm;
}

/* Sum the failure counts of all processes at rank 0 of comm (a communicator over every
 * process of the job) and print the verdict there, with the notes.  With comm
 * MPI_COMM_NULL (it could not be made) every process prints its own verdict if it saw
 * errors.  Returns the total at rank 0, the local count elsewhere. */
MTEST_FN int MTest_Session_report(MPI_Comm comm)
{
    int local = mtest_errors;
    if (comm == MPI_COMM_NULL) {
        if (local) {
            printf(" Found %d errors\n", local);
            fflush(stdout);
        }
        return local;
    }
    int rank = 0, size = 1, total = local;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (rank == 0) {
        for (int r = 1; r < size; r++) {
            int e = 0;
            int rc = MPI_Recv(&e, 1, MPI_INT, r, MTEST_TAG_SESSION_ERRS, comm, MPI_STATUS_IGNORE);
            if (rc != MPI_SUCCESS)
                e = 1;
            total += e;
        }
        if (mtest_session_notes[0])
            fputs(mtest_session_notes, stdout);
        if (mtest_skip_reason)
            printf("MTEST_SKIP: %s\n", mtest_skip_reason);
        if (total == 0)
            printf(" No Errors\n");
        else
            printf(" Found %d errors\n", total);
        fflush(stdout);
        return total;
    }
    MPI_Send(&local, 1, MPI_INT, 0, MTEST_TAG_SESSION_ERRS, comm);
    return local;
}

/* Exit code of the process: non-zero when it saw any failure (also after the report). */
MTEST_FN int MTest_Session_exit_code(void)
{
    return mtest_errors != 0;
}

/* MPI_Initialized / MPI_Finalized are init and fin (what: where in the program). */
#define MTEST_CHECK_WORLD_STATE(init, fin, what)                                            \
    do {                                                                                    \
        int i_ = -1, f_ = -1;                                                               \
        int rc_ = MPI_Initialized(&i_);                                                     \
        CHECK(rc_ == MPI_SUCCESS && i_ == (init), "%s: MPI_Initialized gave %d (rc %d), "   \
              "expected %d", (what), i_, rc_, (init));                                      \
        rc_ = MPI_Finalized(&f_);                                                           \
        CHECK(rc_ == MPI_SUCCESS && f_ == (fin), "%s: MPI_Finalized gave %d (rc %d), "      \
              "expected %d", (what), f_, rc_, (fin));                                       \
    } while (0)

#endif /* MPI_VERSION >= 4 */

#endif /* MTEST_SESSION_H_INCLUDED */
