/* mtest.h: shared helpers of hympi's C conformance suite.
 *
 * Modeled on the conventions of the MPICH test suite: every program calls MTest_Init, counts
 * its failures, and ends with MTest_Finalize(errs), after which rank 0 prints exactly
 * " No Errors" (leading space) when no rank saw an error, else " Found N errors".
 *
 * Only point-to-point is used to gather the counts (hympi has no collectives yet), and only
 * the functions this suite covers.  Everything here is static so that each program is a
 * single translation unit.
 *
 * A program that cannot run its checks with the MPI it is built against (a feature of a
 * newer standard than the library implements) calls MTest_Skip(reason) before
 * MTest_Finalize: it still prints " No Errors", plus a line "MTEST_SKIP: reason" that
 * tests/run-c-tests reports as SKIP rather than PASS. */
#ifndef MTEST_H_INCLUDED
#define MTEST_H_INCLUDED

#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Tag used by MTest_Finalize to gather error counts: far from the tags the tests use. */
#define MTEST_TAG_ERRS 32001

static int mtest_rank = 0;
static int mtest_size = 1;
static int mtest_errors = 0; /* failures counted by CHECK and friends */
static const char *mtest_skip_reason = NULL;

/* ---- failure reporting ---- */

/* Every helper is static (one translation unit per program) and may go unused. */
#define MTEST_FN static __attribute__((unused))

MTEST_FN int MTest_Fail(const char *file, int line, const char *cond, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
MTEST_FN int MTest_Fail(const char *file, int line, const char *cond, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    mtest_errors++;
    if (mtest_errors <= 100) {
        fprintf(stdout, "[%d] %s:%d: check failed: %s: %s\n", mtest_rank, file, line, cond, msg);
        fflush(stdout);
    } else if (mtest_errors == 101) {
        fprintf(stdout, "[%d] (further failures not printed)\n", mtest_rank);
        fflush(stdout);
    }
    return 0;
}

/* Identity, so that an unused CHECK result draws no warning. */
MTEST_FN inline int MTest_Ok(int ok)
{
    return ok;
}

/* CHECK(cond, fmt, ...): count and print a failure (with file:line) when cond is false.
 * Evaluates to cond's truth value, so it can guard follow-up checks. */
#define CHECK(cond, ...) \
    MTest_Ok((cond) ? 1 : MTest_Fail(__FILE__, __LINE__, #cond, __VA_ARGS__))

/* Name of an error class, for messages. */
MTEST_FN const char *MTest_Class_name(int cls)
{
    switch (cls) {
    case MPI_SUCCESS: return "MPI_SUCCESS";
    case MPI_ERR_BUFFER: return "MPI_ERR_BUFFER";
    case MPI_ERR_COUNT: return "MPI_ERR_COUNT";
    case MPI_ERR_TYPE: return "MPI_ERR_TYPE";
    case MPI_ERR_TAG: return "MPI_ERR_TAG";
    case MPI_ERR_COMM: return "MPI_ERR_COMM";
    case MPI_ERR_RANK: return "MPI_ERR_RANK";
    case MPI_ERR_REQUEST: return "MPI_ERR_REQUEST";
    case MPI_ERR_ROOT: return "MPI_ERR_ROOT";
    case MPI_ERR_GROUP: return "MPI_ERR_GROUP";
    case MPI_ERR_OP: return "MPI_ERR_OP";
    case MPI_ERR_TOPOLOGY: return "MPI_ERR_TOPOLOGY";
    case MPI_ERR_DIMS: return "MPI_ERR_DIMS";
    case MPI_ERR_ARG: return "MPI_ERR_ARG";
    case MPI_ERR_UNKNOWN: return "MPI_ERR_UNKNOWN";
    case MPI_ERR_TRUNCATE: return "MPI_ERR_TRUNCATE";
    case MPI_ERR_OTHER: return "MPI_ERR_OTHER";
    case MPI_ERR_INTERN: return "MPI_ERR_INTERN";
    case MPI_ERR_PENDING: return "MPI_ERR_PENDING";
    case MPI_ERR_IN_STATUS: return "MPI_ERR_IN_STATUS";
    default: return "(other class)";
    }
}

/* Class of an error code (or -1 if MPI_Error_class itself fails). */
MTEST_FN int MTest_Class(int code)
{
    int cls = -1;
    if (MPI_Error_class(code, &cls) != MPI_SUCCESS)
        return -1;
    return cls;
}

/* Describe an error code: "class NAME: string". */
MTEST_FN const char *MTest_Describe(int code)
{
    static char buf[MPI_MAX_ERROR_STRING + 64];
    char str[MPI_MAX_ERROR_STRING];
    int len = 0, cls = MTest_Class(code);
    str[0] = 0;
    if (MPI_Error_string(code, str, &len) != MPI_SUCCESS)
        snprintf(str, sizeof str, "(MPI_Error_string failed)");
    snprintf(buf, sizeof buf, "code %d class %s(%d): %s", code, MTest_Class_name(cls), cls, str);
    return buf;
}

/* CHECK_RC(rc, what): the call succeeded. */
#define CHECK_RC(rc, what) \
    CHECK((rc) == MPI_SUCCESS, "%s returned %s", (what), MTest_Describe(rc))

/* CHECK_CLASS(rc, cls, what): the call failed with an error of class cls. */
#define CHECK_CLASS(rc, cls, what)                                                       \
    CHECK((rc) != MPI_SUCCESS && MTest_Class(rc) == (cls), "%s: expected %s, got %s", \
          (what), MTest_Class_name(cls), ((rc) == MPI_SUCCESS ? "MPI_SUCCESS" : MTest_Describe(rc)))

/* ---- setup ---- */

MTEST_FN void MTest_Init_common(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    MPI_Comm_rank(MPI_COMM_WORLD, &mtest_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &mtest_size);
}

MTEST_FN void MTest_Init(int *argc, char ***argv)
{
    int rc = MPI_Init(argc, argv);
    if (rc != MPI_SUCCESS) {
        printf("MPI_Init failed (%d)\n", rc);
        exit(1);
    }
    MTest_Init_common();
}

MTEST_FN void MTest_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = MPI_Init_thread(argc, argv, required, provided);
    if (rc != MPI_SUCCESS) {
        printf("MPI_Init_thread failed (%d)\n", rc);
        exit(1);
    }
    MTest_Init_common();
}

/* Make errors on comm return codes instead of aborting. */
MTEST_FN void MTest_Errors_return(MPI_Comm comm)
{
    int rc = MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    CHECK_RC(rc, "MPI_Comm_set_errhandler(MPI_ERRORS_RETURN)");
}

/* Errors on both predefined communicators return codes: use this before a call whose error
 * is not attached to a communicator (MPI-3 raises such errors on MPI_COMM_WORLD, MPI-4 on
 * MPI_COMM_SELF) or whose communicator argument is itself invalid. */
MTEST_FN void MTest_Errors_return_all(void)
{
    MTest_Errors_return(MPI_COMM_WORLD);
    MTest_Errors_return(MPI_COMM_SELF);
}

MTEST_FN void MTest_Skip(const char *reason)
{
    mtest_skip_reason = reason;
}

/* A program expected to abort (expect=abort in the testlist) calls this right before the call
 * that must end the job: the runner passes the test only if the line was printed (so that a
 * crash earlier, in the setup, does not count as the expected abort). */
MTEST_FN void MTest_Aborting(const char *what)
{
    printf("MTEST_ABORTING: rank %d: %s\n", mtest_rank, what);
    fflush(stdout);
    /* Give the launcher time to forward the line: MPICH's Hydra may tear the job down
     * before it has read a rank's last output. */
    struct timespec ts = {0, 200000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* Sum of errs over all ranks, at rank 0 (0 elsewhere).  Point-to-point only. */
MTEST_FN int MTest_Sum_errors(int errs)
{
    int total = errs + mtest_errors;
    if (mtest_rank == 0) {
        for (int r = 1; r < mtest_size; r++) {
            int e = 0;
            MPI_Recv(&e, 1, MPI_INT, r, MTEST_TAG_ERRS, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            total += e;
        }
        return total;
    }
    MPI_Send(&total, 1, MPI_INT, 0, MTEST_TAG_ERRS, MPI_COMM_WORLD);
    return 0;
}

MTEST_FN void MTest_Report(int total)
{
    if (mtest_rank != 0)
        return;
    if (mtest_skip_reason)
        printf("MTEST_SKIP: %s\n", mtest_skip_reason);
    if (total == 0)
        printf(" No Errors\n");
    else
        printf(" Found %d errors\n", total);
    fflush(stdout);
}

/* Gather error counts, print the verdict at rank 0, finalize.  Returns the process exit code:
 * non-zero on a rank that saw errors itself. */
MTEST_FN int MTest_Finalize(int errs)
{
    int local = errs + mtest_errors;
    int total = MTest_Sum_errors(errs);
    MTest_Report(total);
    MPI_Finalize();
    return local != 0;
}

/* ---- utilities ---- */

/* splitmix64: deterministic, fast, good enough for test data and plans. */
MTEST_FN inline uint64_t MTest_Rand64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Uniform in [0, n). */
MTEST_FN inline uint64_t MTest_Rand_below(uint64_t *state, uint64_t n)
{
    return n ? MTest_Rand64(state) % n : 0;
}

/* Fill n bytes with a pattern derived from seed; MTest_Verify_bytes returns the index of the
 * first byte that differs from the pattern, or -1. */
MTEST_FN void MTest_Fill_bytes(void *buf, size_t n, uint64_t seed)
{
    unsigned char *p = buf;
    uint64_t st = seed;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t v = MTest_Rand64(&st);
        memcpy(p + i, &v, 8);
    }
    if (i < n) {
        uint64_t v = MTest_Rand64(&st);
        memcpy(p + i, &v, n - i);
    }
}

MTEST_FN long MTest_Verify_bytes(const void *buf, size_t n, uint64_t seed)
{
    const unsigned char *p = buf;
    uint64_t st = seed;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t v = MTest_Rand64(&st);
        if (memcmp(p + i, &v, 8) != 0) {
            for (size_t k = 0; k < 8; k++)
                if (p[i + k] != ((unsigned char *)&v)[k])
                    return (long)(i + k);
        }
    }
    if (i < n) {
        uint64_t v = MTest_Rand64(&st);
        for (size_t k = 0; k < n - i; k++)
            if (p[i + k] != ((unsigned char *)&v)[k])
                return (long)(i + k);
    }
    return -1;
}

/* Check that n bytes all equal c; returns the index of the first that does not, or -1. */
MTEST_FN long MTest_Check_const(const void *buf, size_t n, unsigned char c)
{
    const unsigned char *p = buf;
    for (size_t i = 0; i < n; i++)
        if (p[i] != c)
            return (long)i;
    return -1;
}

MTEST_FN void MTest_Sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* Pair partner for tests run by pairs (0,1), (2,3), ...: -1 for a rank without a partner. */
MTEST_FN int MTest_Partner(void)
{
    int p = mtest_rank ^ 1;
    return p < mtest_size ? p : -1;
}

/* The empty status of the standard (MPI-4.0 section 3.7.3): source MPI_ANY_SOURCE, tag
 * MPI_ANY_TAG, count 0, not cancelled.  Its error field is said to be MPI_SUCCESS there,
 * but section 3.2.5 says single-completion calls do not modify the error field; MPICH and
 * Open MPI leave it alone, and so this check does not look at it. */
MTEST_FN int MTest_Is_empty_status(const MPI_Status *st)
{
    int count = -1, cancelled = -1;
    MPI_Get_count(st, MPI_BYTE, &count);
    MPI_Test_cancelled(st, &cancelled);
    return st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG && count == 0 &&
           !cancelled;
}

/* Fill a status with garbage so that a test sees which fields a call sets. */
MTEST_FN void MTest_Poison_status(MPI_Status *st)
{
    memset(st, 0x5a, sizeof *st);
    st->MPI_SOURCE = -77;
    st->MPI_TAG = -77;
    st->MPI_ERROR = -77;
}

#endif /* MTEST_H_INCLUDED */
