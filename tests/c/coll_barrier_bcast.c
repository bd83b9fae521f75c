/* coll_barrier_bcast: MPI_Barrier, MPI_Bcast, MPI_Ibcast.
 *
 * - Barrier ordering: one rank (0, the last, the middle one in turn) sleeps 50 ms before
 *   entering the barrier; every other rank must spend most of that time inside the
 *   barrier (measured with MPI_Wtime from the end of a preceding barrier; tolerant: at
 *   least 20 ms, since the ranks leave the preceding barrier at slightly different times).
 * - MPI_Bcast from every root of 0, 1, 7, 1000 and 300000 ints; receive buffers hold a
 *   guard past the data that must stay untouched; count 0 leaves the buffer alone.
 * - Type signatures: the root sends one MPI_Type_vector of n ints (stride 2) and the
 *   others receive n contiguous MPI_INT, and the other way round.
 * - MPI_Ibcast: several outstanding at once on WORLD (each root) and on a dup, completed
 *   by one MPI_Waitall over the requests in the reverse of the order they were started.
 * - MPI_Bcast on the odd/even split of WORLD, every root of the split, with a bcast on
 *   WORLD in between (the two halves run their broadcasts concurrently).
 * With arg "quick", messages of 100000 ints and more go from the first and last root only. */
#include "mtest.h"

/* arg "quick" (the oversubscribed testlist line): the largest messages from the first and
 * last root only. */
static int quick = 0;

static int skip_root(int count, int root)
{
    return quick && count >= 100000 && root != 0 && root != mtest_size - 1;
}

#define GUARD 16
#define GUARD_VAL (-7777)

static int value(int root, int count, int i)
{
    return root * 1000003 + count * 31 + i * 7 + 1;
}

static void check_buf(const int *buf, int count, int root, const char *what)
{
    int bad = 0;
    for (int i = 0; i < count && bad < 3; i++)
        if (!CHECK(buf[i] == value(root, count, i), "%s: root %d count %d: buf[%d] = %d, want %d",
                   what, root, count, i, buf[i], value(root, count, i)))
            bad++;
    for (int i = count; i < count + GUARD; i++)
        if (!CHECK(buf[i] == GUARD_VAL, "%s: root %d count %d: guard buf[%d] = %d overwritten",
                   what, root, count, i, buf[i]))
            break;
}

static void test_barrier(void)
{
    int sleepers[3] = {0, mtest_size - 1, mtest_size / 2};
    for (int k = 0; k < 3; k++) {
        int sleeper = sleepers[k];
        int rc = MPI_Barrier(MPI_COMM_WORLD);
        CHECK_RC(rc, "MPI_Barrier");
        double t0 = MPI_Wtime();
        if (mtest_rank == sleeper)
            MTest_Sleep_ms(50);
        rc = MPI_Barrier(MPI_COMM_WORLD);
        CHECK_RC(rc, "MPI_Barrier");
        double t1 = MPI_Wtime();
        if (mtest_rank != sleeper)
            CHECK(t1 - t0 >= 0.020,
                  "rank %d left the barrier %.1f ms after entering, while rank %d slept 50 ms "
                  "before entering",
                  mtest_rank, (t1 - t0) * 1e3, sleeper);
    }
    /* Many barriers in a row, on WORLD and SELF. */
    for (int i = 0; i < 50; i++) {
        int rc = MPI_Barrier(i % 2 ? MPI_COMM_WORLD : MPI_COMM_SELF);
        if (!CHECK_RC(rc, "MPI_Barrier loop"))
            break;
    }
}

static void test_bcast_counts(void)
{
    static const int counts[] = {0, 1, 7, 1000, 300000};
    int *buf = malloc((300000 + GUARD) * sizeof(int));
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        int count = counts[c];
        for (int root = 0; root < mtest_size; root++) {
            if (skip_root(count, root))
                continue;
            for (int i = 0; i < count + GUARD; i++)
                buf[i] = (mtest_rank == root && i < count) ? value(root, count, i) : GUARD_VAL;
            int rc = MPI_Bcast(count ? buf : NULL, count, MPI_INT, root, MPI_COMM_WORLD);
            CHECK_RC(rc, "MPI_Bcast");
            check_buf(buf, count, root, "MPI_Bcast");
        }
    }
    /* Count 0 with a valid buffer: nothing is written. */
    for (int i = 0; i < GUARD; i++)
        buf[i] = GUARD_VAL;
    int rc = MPI_Bcast(buf, 0, MPI_INT, mtest_size - 1, MPI_COMM_WORLD);
    CHECK_RC(rc, "MPI_Bcast count 0");
    check_buf(buf, 0, mtest_size - 1, "MPI_Bcast count 0");
    free(buf);
}

/* Root uses one vector of n ints with stride 2 (or n contiguous ints), the others the
 * other shape: same type signature (n ints). */
static void test_bcast_vector(void)
{
    static const int ns[] = {1, 1000, 100000};
    int *buf = malloc((2 * 100000 + GUARD) * sizeof(int));
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
        int n = ns[k];
        MPI_Datatype vec;
        MPI_Type_vector(n, 1, 2, MPI_INT, &vec);
        MPI_Type_commit(&vec);
        for (int vec_at_root = 0; vec_at_root < 2; vec_at_root++) {
            for (int root = 0; root < mtest_size; root++) {
                if (skip_root(n, root))
                    continue;
                int use_vec = (mtest_rank == root) == vec_at_root;
                int span = use_vec ? 2 * n - 1 : n;
                for (int i = 0; i < span + GUARD; i++)
                    buf[i] = GUARD_VAL;
                if (mtest_rank == root)
                    for (int i = 0; i < n; i++)
                        buf[use_vec ? 2 * i : i] = value(root, n, i);
                int rc = use_vec ? MPI_Bcast(buf, 1, vec, root, MPI_COMM_WORLD)
                                 : MPI_Bcast(buf, n, MPI_INT, root, MPI_COMM_WORLD);
                CHECK_RC(rc, "MPI_Bcast vector/contiguous");
                int bad = 0;
                for (int i = 0; i < n && bad < 3; i++) {
                    int got = buf[use_vec ? 2 * i : i];
                    if (!CHECK(got == value(root, n, i),
                               "bcast n %d root %d (%s here, vector at %s): element %d = %d, "
                               "want %d",
                               n, root, use_vec ? "vector" : "contiguous",
                               vec_at_root ? "root" : "non-roots", i, got, value(root, n, i)))
                        bad++;
                }
                if (use_vec)
                    for (int i = 1; i < 2 * n - 1 && bad < 3; i += 2)
                        if (!CHECK(buf[i] == GUARD_VAL, "bcast vector n %d root %d: gap %d written",
                                   n, root, i))
                            bad++;
                for (int i = span; i < span + GUARD && bad < 3; i++)
                    if (!CHECK(buf[i] == GUARD_VAL, "bcast n %d root %d: guard %d written", n,
                               root, i))
                        bad++;
            }
        }
        MPI_Type_free(&vec);
    }
    free(buf);
}

/* Several Ibcasts outstanding on WORLD (one per root, two rounds) and on a dup, completed
 * by one MPI_Waitall over the requests in reverse order. */
static void test_ibcast(void)
{
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    static const int counts[] = {1, 7, 1000, 20000};
    int ncounts = sizeof counts / sizeof counts[0];
    int nreq = 2 * ncounts * mtest_size;
    int **bufs = calloc(nreq, sizeof(int *));
    int *roots = calloc(nreq, sizeof(int));
    int *cnts = calloc(nreq, sizeof(int));
    MPI_Request *req = calloc(nreq, sizeof(MPI_Request));
    int k = 0;
    for (int c = 0; c < ncounts; c++) {
        for (int root = 0; root < mtest_size; root++) {
            for (int which = 0; which < 2; which++) {
                int count = counts[c];
                /* Distinguish the two communicators' data. */
                int vroot = root + which * 100;
                bufs[k] = malloc((count + GUARD) * sizeof(int));
                for (int i = 0; i < count + GUARD; i++)
                    bufs[k][i] = (mtest_rank == root && i < count) ? value(vroot, count, i)
                                                                   : GUARD_VAL;
                roots[k] = vroot;
                cnts[k] = count;
                int rc = MPI_Ibcast(bufs[k], count, MPI_INT, root, which ? dup : MPI_COMM_WORLD,
                                    &req[k]);
                CHECK_RC(rc, "MPI_Ibcast");
                k++;
            }
        }
    }
    /* Reverse the request array. */
    MPI_Request *rev = calloc(nreq, sizeof(MPI_Request));
    for (int i = 0; i < nreq; i++)
        rev[i] = req[nreq - 1 - i];
    int rc = MPI_Waitall(nreq, rev, MPI_STATUSES_IGNORE);
    CHECK_RC(rc, "MPI_Waitall of Ibcasts");
    for (int i = 0; i < nreq; i++) {
        CHECK(rev[i] == MPI_REQUEST_NULL, "request %d not freed by MPI_Waitall", i);
        check_buf(bufs[i], cnts[i], roots[i], "MPI_Ibcast");
        free(bufs[i]);
    }
    free(rev);
    free(req);
    free(cnts);
    free(roots);
    free(bufs);
    MPI_Comm_free(&dup);
}

/* Odd/even halves broadcast concurrently, every root of the half, interleaved with WORLD. */
static void test_split(void)
{
    MPI_Comm half;
    int rc = MPI_Comm_split(MPI_COMM_WORLD, mtest_rank % 2, mtest_rank, &half);
    CHECK_RC(rc, "MPI_Comm_split");
    int hsize, hrank;
    MPI_Comm_size(half, &hsize);
    MPI_Comm_rank(half, &hrank);
    static const int counts[] = {1, 1000, 50000};
    int *buf = malloc((50000 + GUARD) * sizeof(int));
    int *wbuf = malloc((100 + GUARD) * sizeof(int));
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        int count = counts[c];
        /* The even half has one process more than the odd one when the size is odd:
         * every process runs the same number of WORLD broadcasts. */
        for (int root = 0; root < (mtest_size + 1) / 2; root++) {
            if (root < hsize) {
                /* Data depends on the half, so that a message crossing halves shows. */
                int vroot = 1000 + 10 * root + mtest_rank % 2;
                for (int i = 0; i < count + GUARD; i++)
                    buf[i] = (hrank == root && i < count) ? value(vroot, count, i) : GUARD_VAL;
                rc = MPI_Bcast(buf, count, MPI_INT, root, half);
                CHECK_RC(rc, "MPI_Bcast on a half");
                check_buf(buf, count, vroot, "MPI_Bcast on a half");
            }
            int wroot = (root + (int)c) % mtest_size;
            for (int i = 0; i < 100 + GUARD; i++)
                wbuf[i] = (mtest_rank == wroot && i < 100) ? value(wroot, 100, i) : GUARD_VAL;
            rc = MPI_Bcast(wbuf, 100, MPI_INT, wroot, MPI_COMM_WORLD);
            CHECK_RC(rc, "MPI_Bcast on WORLD between halves");
            check_buf(wbuf, 100, wroot, "MPI_Bcast on WORLD between halves");
        }
    }
    free(wbuf);
    free(buf);
    MPI_Comm_free(&half);
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    quick = argc > 1 && strcmp(argv[1], "quick") == 0;
    test_barrier();
    test_bcast_counts();
    test_bcast_vector();
    test_ibcast();
    test_split();
    return MTest_Finalize(0);
}
