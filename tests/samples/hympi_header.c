/* Checks include/hympi.h: it compiles as C99 and as C++17, with and without OpenMP (the runner
 * builds all four), and its functions do their work.
 *
 *  - MPIX_Info_region_hints: each flag gives its key = "true" and no other key; an unknown
 *    bit and a NULL pointer give MPI_ERR_ARG; the hints survive MPI_Comm_set_info on a
 *    communicator (hympi keeps mpi_assert_* and hympi_* keys).
 *  - With OpenMP, MPIX_Omp_thread_comm: every thread gets a distinct communicator congruent to
 *    the parent, carrying the hints; thread t of every rank holds the same one (a message from
 *    thread t of rank r reaches thread t of rank r+1, tagged with t); a team of different size
 *    on one rank makes every rank return MPI_ERR_ARG.
 *
 * Prints " No Errors" on success. Run on 1 and 2 ranks, with OMP_NUM_THREADS=2.
 */
#include <hympi.h>
#include <stdio.h>
#include <string.h>

static int errs = 0;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            errs++;                                                                                \
            printf("line %d: ", __LINE__);                                                         \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
        }                                                                                          \
    } while (0)

static const char *const KEYS[5] = {"mpi_assert_no_any_source", "mpi_assert_no_any_tag",
                                    "mpi_assert_allow_overtaking", "mpi_assert_exact_length",
                                    "hympi_per_thread_comm"};
static const int FLAGS[5] = {MPIX_HINT_NO_ANY_SOURCE, MPIX_HINT_NO_ANY_TAG,
                             MPIX_HINT_ALLOW_OVERTAKING, MPIX_HINT_EXACT_LENGTH,
                             MPIX_HINT_PER_THREAD};

/* 1 if info holds key = "true", 0 if it lacks key, -1 if it holds another value. */
static int has_true(MPI_Info info, const char *key)
{
    char value[MPI_MAX_INFO_VAL + 1];
    int buflen = (int)sizeof value, flag = 0;
    MPI_Info_get_string(info, key, &buflen, value, &flag);
    if (!flag)
        return 0;
    return strcmp(value, "true") == 0 ? 1 : -1;
}

static void check_hints(void)
{
    for (int f = 0; f < 5; f++) {
        MPI_Info info = MPI_INFO_NULL;
        int nkeys = -1;
        int err = MPIX_Info_region_hints(&info, FLAGS[f]);
        CHECK(err == MPI_SUCCESS, "MPIX_Info_region_hints(%#x) returned %d", FLAGS[f], err);
        if (err != MPI_SUCCESS)
            continue;
        MPI_Info_get_nkeys(info, &nkeys);
        CHECK(nkeys == 1, "flag %#x: %d keys", FLAGS[f], nkeys);
        CHECK(has_true(info, KEYS[f]) == 1, "flag %#x: %s is not true", FLAGS[f], KEYS[f]);
        MPI_Info_free(&info);
    }
    {
        MPI_Info info = MPI_INFO_NULL;
        int nkeys = -1, err = MPIX_Info_region_hints(&info, MPIX_HINT_ALL);
        CHECK(err == MPI_SUCCESS, "MPIX_HINT_ALL returned %d", err);
        MPI_Info_get_nkeys(info, &nkeys);
        CHECK(nkeys == 5, "MPIX_HINT_ALL: %d keys", nkeys);
        MPI_Info_free(&info);
        err = MPIX_Info_region_hints(&info, 0);
        MPI_Info_get_nkeys(info, &nkeys);
        CHECK(err == MPI_SUCCESS && nkeys == 0, "flags 0: err %d, %d keys", err, nkeys);
        MPI_Info_free(&info);
    }
    {
        MPI_Info info = MPI_INFO_NULL;
        int cls = -1, err = MPIX_Info_region_hints(&info, 0x100);
        MPI_Error_class(err, &cls);
        CHECK(cls == MPI_ERR_ARG && info == MPI_INFO_NULL, "unknown flag: class %d", cls);
        err = MPIX_Info_region_hints(NULL, MPIX_HINT_NO_ANY_TAG);
        MPI_Error_class(err, &cls);
        CHECK(cls == MPI_ERR_ARG, "NULL info: class %d", cls);
    }
    {
        /* The hints reach a communicator. */
        MPI_Info info, got;
        MPI_Comm dup;
        MPIX_Info_region_hints(&info, MPIX_HINT_NO_ANY_SOURCE | MPIX_HINT_PER_THREAD);
        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        MPI_Comm_set_info(dup, info);
        MPI_Comm_get_info(dup, &got);
        CHECK(has_true(got, "mpi_assert_no_any_source") == 1, "assertion not on the comm");
        CHECK(has_true(got, "hympi_per_thread_comm") == 1, "per-thread hint not on the comm");
        MPI_Info_free(&got);
        MPI_Info_free(&info);
        MPI_Comm_free(&dup);
    }
}

#ifdef _OPENMP
static void check_thread_comm(int rank, int size)
{
    MPI_Info hints;
    MPI_Comm comms[64];
    int nthreads = 0;
    MPIX_Info_region_hints(&hints, MPIX_HINT_NO_ANY_TAG | MPIX_HINT_PER_THREAD);

#pragma omp parallel num_threads(2)
    {
        int t = omp_get_thread_num(), err, cmp = -1, crank = -1;
        MPI_Comm tc = MPI_COMM_NULL;
        err = MPIX_Omp_thread_comm(MPI_COMM_WORLD, hints, &tc);
#pragma omp critical
        {
            CHECK(err == MPI_SUCCESS, "thread %d: MPIX_Omp_thread_comm returned %d", t, err);
            nthreads = omp_get_num_threads();
        }
        if (err == MPI_SUCCESS) {
            MPI_Info got;
            int tok = -1, want = (rank + size - 1) % size * 100 + t;
            comms[t] = tc;
            MPI_Comm_compare(MPI_COMM_WORLD, tc, &cmp);
            MPI_Comm_rank(tc, &crank);
            MPI_Comm_get_info(tc, &got);
            /* Thread t's ring on its own communicator, tag t: only thread t can match it. */
            int mine = rank * 100 + t;
            MPI_Sendrecv(&mine, 1, MPI_INT, (rank + 1) % size, t, &tok, 1, MPI_INT,
                         (rank + size - 1) % size, t, tc, MPI_STATUS_IGNORE);
#pragma omp critical
            {
                CHECK(cmp == MPI_CONGRUENT, "thread %d: comm compare %d", t, cmp);
                CHECK(crank == rank, "thread %d: rank %d in its comm", t, crank);
                CHECK(has_true(got, "mpi_assert_no_any_tag") == 1, "thread %d: no hint", t);
                CHECK(has_true(got, "hympi_per_thread_comm") == 1, "thread %d: no hint", t);
                CHECK(tok == want, "thread %d: got %d from its ring, want %d", t, tok, want);
            }
            MPI_Info_free(&got);
        }
    }
    if (nthreads == 2) {
        int cmp = -1;
        MPI_Comm_compare(comms[0], comms[1], &cmp);
        CHECK(cmp == MPI_CONGRUENT, "the two threads share a communicator (compare %d)", cmp);
        MPI_Comm_free(&comms[0]);
        MPI_Comm_free(&comms[1]);
    }

    /* Team sizes differ across ranks: every thread of every rank gets MPI_ERR_ARG. */
    if (size > 1) {
        int team = rank == 0 ? 1 : 2;
#pragma omp parallel num_threads(team)
        {
            MPI_Comm tc = MPI_COMM_WORLD;
            int cls = -1, err = MPIX_Omp_thread_comm(MPI_COMM_WORLD, hints, &tc);
            MPI_Error_class(err, &cls);
#pragma omp critical
            CHECK(cls == MPI_ERR_ARG && tc == MPI_COMM_NULL,
                  "mismatched teams: class %d, comm %s", cls,
                  tc == MPI_COMM_NULL ? "null" : "not null");
        }
    }
    MPI_Info_free(&hints);
}
#endif

int main(int argc, char **argv)
{
    int provided, rank, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    check_hints();
#ifdef _OPENMP
    if (provided == MPI_THREAD_MULTIPLE)
        check_thread_comm(rank, size);
    else
        CHECK(0, "MPI_THREAD_MULTIPLE not provided");
#endif
    MPI_Allreduce(MPI_IN_PLACE, &errs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        if (errs == 0)
            printf(" No Errors\n");
        else
            printf(" Found %d errors\n", errs);
    }
    MPI_Finalize();
    return errs != 0;
}
