/* coll_sizes: blocking collectives over a range of sizes, on three communicators.
 *
 * MPI_Allreduce (SUM), MPI_Reduce (MAX, and SUM with MPI_IN_PLACE at the root), MPI_Bcast,
 * MPI_Allgather, MPI_Alltoall, MPI_Gather and MPI_Scatter, with 0, 1, 2, 3, 5, 17, 1023 and
 * 65537 doubles (per process where the call moves one block per process), on WORLD, on
 * WORLD reversed (MPI_Comm_split with key -rank) and on MPI_COMM_SELF; rooted calls from the
 * last rank (and the first too for 0, 3, 1023, 65537).  Values are integers (sums exact in doubles) derived from the
 * world rank of the sender, the receiver where it matters, the element index and a tag; each
 * result is compared with a reference computed locally.  Receive buffers end in a guard
 * that must stay untouched; buffers not significant at a process are passed as NULL.
 * With arg "quick" (the oversubscribed testlist line) only counts 0, 1, 3, 1023, 65537. */
#include "mtest.h"

#define GUARD 8
#define SENTINEL (-12345.25)

static int crank, csize, reversed_comm;

static int world_of(int r)
{
    if (csize == 1)
        return mtest_rank;
    return reversed_comm ? mtest_size - 1 - r : r;
}

static double d(int tag, int src, int dst, int i)
{
    return (double)(tag * 1000003 + src * 7919 + dst * 131 + (i % 100003) * 3);
}

static const char *cname;
static int cur_count;

static double *alloc_sent(size_t n)
{
    double *b = malloc((n + GUARD) * sizeof(double));
    for (size_t i = 0; i < n + GUARD; i++)
        b[i] = SENTINEL;
    return b;
}

/* Compare buf[0..n) with want(i) for each i, and the guard. */
#define VERIFY(buf, n, want_expr, what)                                                    \
    do {                                                                                   \
        int bad_ = 0;                                                                      \
        for (size_t i = 0; i < (size_t)(n) && bad_ < 3; i++) {                             \
            double w_ = (want_expr);                                                       \
            if (!CHECK((buf)[i] == w_, "%s on %s count %d: [%zu] = %.2f, want %.2f", what,   \
                       cname, cur_count, i, (buf)[i], w_))                                 \
                bad_++;                                                                    \
        }                                                                                  \
        for (size_t i = (n); i < (size_t)(n) + GUARD && bad_ < 3; i++)                     \
            if (!CHECK((buf)[i] == SENTINEL, "%s on %s count %d: guard [%zu] written", what, \
                       cname, cur_count, i))                                               \
                bad_++;                                                                    \
    } while (0)

/* MPI_IN_PLACE at the root of MPI_Reduce.  MPICH 4.0.2 crashes (segmentation fault in a
 * memcpy) on an in-place MPI_Reduce whose root is not rank 0 once the message exceeds its
 * short-message size (2 KiB; 1023 doubles crash): there the root passes a separate send
 * buffer instead. */
static int reduce_in_place_ok(int root, int n)
{
#ifdef MPICH_VERSION
    return root == 0 || n * sizeof(double) <= 2048;
#else
    (void)root;
    (void)n;
    return 1;
#endif
}

static void run(MPI_Comm comm, int n)
{
    int p = csize, rc;
    cur_count = n;
    size_t np = (size_t)n * p;
    double *in = malloc((np + 1) * sizeof(double));
    double *out;

    /* Allreduce SUM */
    for (int i = 0; i < n; i++)
        in[i] = d(1, world_of(crank), 0, i);
    out = alloc_sent(n);
    rc = MPI_Allreduce(in, out, n, MPI_DOUBLE, MPI_SUM, comm);
    CHECK_RC(rc, "MPI_Allreduce");
    {
        double *ref = calloc(n + 1, sizeof(double));
        for (int r = 0; r < p; r++)
            for (int i = 0; i < n; i++)
                ref[i] += d(1, world_of(r), 0, i);
        VERIFY(out, n, ref[i], "MPI_Allreduce(SUM)");
        free(ref);
    }
    free(out);

    /* Rooted calls from the last rank, and also from the first for counts 0, 3, 1023 and
     * 65537 (the others from one root only, to keep the run short). */
    int roots[2] = {p - 1, 0};
    int nroots = (p > 1 && (n == 0 || n == 3 || n >= 1023)) ? 2 : 1;
    for (int k = 0; k < nroots; k++) {
        int root = roots[k];
        /* Reduce MAX: values chosen so that the max comes from different ranks per i. */
        for (int i = 0; i < n; i++)
            in[i] = (double)(((world_of(crank) + i) % p) * 1000 + i);
        out = crank == root ? alloc_sent(n) : NULL;
        rc = MPI_Reduce(in, out, n, MPI_DOUBLE, MPI_MAX, root, comm);
        CHECK_RC(rc, "MPI_Reduce");
        if (crank == root)
            VERIFY(out, n, (double)((p - 1) * 1000 + (int)i), "MPI_Reduce(MAX)");
        free(out);
        /* Reduce SUM, MPI_IN_PLACE at the root. */
        if (crank == root) {
            out = alloc_sent(n);
            for (int i = 0; i < n; i++)
                out[i] = d(2, world_of(crank), 0, i);
            if (reduce_in_place_ok(root, n)) {
                rc = MPI_Reduce(MPI_IN_PLACE, out, n, MPI_DOUBLE, MPI_SUM, root, comm);
            } else {
                memcpy(in, out, n * sizeof(double));
                rc = MPI_Reduce(in, out, n, MPI_DOUBLE, MPI_SUM, root, comm);
            }
            CHECK_RC(rc, "MPI_Reduce(MPI_IN_PLACE)");
            double *ref = calloc(n + 1, sizeof(double));
            for (int r = 0; r < p; r++)
                for (int i = 0; i < n; i++)
                    ref[i] += d(2, world_of(r), 0, i);
            VERIFY(out, n, ref[i], "MPI_Reduce(SUM, MPI_IN_PLACE)");
            free(ref);
            free(out);
        } else {
            for (int i = 0; i < n; i++)
                in[i] = d(2, world_of(crank), 0, i);
            rc = MPI_Reduce(in, NULL, n, MPI_DOUBLE, MPI_SUM, root, comm);
            CHECK_RC(rc, "MPI_Reduce (non-root of MPI_IN_PLACE)");
        }

        /* Bcast */
        out = alloc_sent(n);
        if (crank == root)
            for (int i = 0; i < n; i++)
                out[i] = d(3, world_of(root), 0, i);
        rc = MPI_Bcast(out, n, MPI_DOUBLE, root, comm);
        CHECK_RC(rc, "MPI_Bcast");
        VERIFY(out, n, d(3, world_of(root), 0, (int)i), "MPI_Bcast");
        free(out);

        /* Gather */
        for (int i = 0; i < n; i++)
            in[i] = d(4, world_of(crank), 0, i);
        out = crank == root ? alloc_sent(np) : NULL;
        rc = MPI_Gather(in, n, MPI_DOUBLE, out, n, MPI_DOUBLE, root, comm);
        CHECK_RC(rc, "MPI_Gather");
        if (crank == root) {
            VERIFY(out, np, d(4, world_of((int)(i / n)), 0, (int)(i % n)), "MPI_Gather");
            free(out);
        }

        /* Scatter */
        double *sbuf = NULL;
        if (crank == root) {
            sbuf = malloc((np + 1) * sizeof(double));
            for (size_t j = 0; j < np; j++)
                sbuf[j] = d(5, world_of(root), world_of((int)(j / n)), (int)(j % n));
        }
        out = alloc_sent(n);
        rc = MPI_Scatter(sbuf, n, MPI_DOUBLE, out, n, MPI_DOUBLE, root, comm);
        CHECK_RC(rc, "MPI_Scatter");
        VERIFY(out, n, d(5, world_of(root), world_of(crank), (int)i), "MPI_Scatter");
        free(out);
        free(sbuf);
    }

    /* Allgather */
    for (int i = 0; i < n; i++)
        in[i] = d(6, world_of(crank), 0, i);
    out = alloc_sent(np);
    rc = MPI_Allgather(in, n, MPI_DOUBLE, out, n, MPI_DOUBLE, comm);
    CHECK_RC(rc, "MPI_Allgather");
    VERIFY(out, np, d(6, world_of((int)(i / n)), 0, (int)(i % n)), "MPI_Allgather");
    free(out);

    /* Alltoall */
    free(in);
    in = malloc((np + 1) * sizeof(double));
    for (size_t j = 0; j < np; j++)
        in[j] = d(7, world_of(crank), world_of((int)(j / n)), (int)(j % n));
    out = alloc_sent(np);
    rc = MPI_Alltoall(in, n, MPI_DOUBLE, out, n, MPI_DOUBLE, comm);
    CHECK_RC(rc, "MPI_Alltoall");
    VERIFY(out, np, d(7, world_of((int)(i / n)), world_of(crank), (int)(i % n)), "MPI_Alltoall");
    free(out);
    free(in);
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    int quick = argc > 1 && strcmp(argv[1], "quick") == 0;
    static const int counts[] = {0, 1, 2, 3, 5, 17, 1023, 65537};
    MPI_Comm rev;
    MPI_Comm_split(MPI_COMM_WORLD, 0, -mtest_rank, &rev);
    MPI_Comm comms[3] = {MPI_COMM_WORLD, rev, MPI_COMM_SELF};
    const char *names[3] = {"WORLD", "reversed WORLD", "SELF"};
    for (int c = 0; c < 3; c++) {
        MPI_Comm_rank(comms[c], &crank);
        MPI_Comm_size(comms[c], &csize);
        reversed_comm = c == 1;
        cname = names[c];
        if (c == 1)
            CHECK(crank == mtest_size - 1 - mtest_rank, "reversed split: rank %d, want %d", crank,
                  mtest_size - 1 - mtest_rank);
        for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++)
            if (!quick || counts[k] == 0 || counts[k] == 1 || counts[k] == 3 || counts[k] >= 1023)
                run(comms[c], counts[k]);
    }
    MPI_Comm_free(&rev);
    return MTest_Finalize(0);
}
