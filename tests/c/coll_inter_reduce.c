/* coll_inter_reduce: reductions on intercommunicators (MPI-4.1 §6.2.2, §6.9, §6.10): each
 * group gets the reduction of the *other* group's data.
 *   - MPI_Reduce to the first and last rank of each group (MPI_ROOT / MPI_PROC_NULL / remote
 *     rank; the receive buffers of MPI_PROC_NULL processes stay untouched);
 *   - MPI_Allreduce;
 *   - MPI_Reduce_scatter_block (recvcount = remote size * m, so both groups reduce vectors of
 *     local size * remote size * m elements);
 *   - MPI_Reduce_scatter with uneven counts (zeros where the group has more processes than
 *     elements) summing to the same total in both groups;
 * each blocking, nonblocking, persistent (started twice with new data) and big-count (_c,
 * MPI >= 4), with MPI_SUM on ints (1 and 1000 elements), MPI_MAX, and a non-commutative user
 * op (composition of affine maps x -> a*x + b mod 10007 on pairs of ints, a contiguous
 * type), whose result depends on the order of the ranks.  On the four intercommunicator
 * shapes of mtest_inter.h. */
#include "mtest.h"
#include "mtest_inter.h"

#define GUARD (-55)
#define P 10007

enum { M_BLOCK, M_NB, M_PERSIST, M_BIGC, NMODES };
static const char *mode_name[NMODES] = {"blocking", "nonblocking", "persistent", "big-count"};

#if MPI_VERSION >= 4
#define BIGCALL(x) x
#else
#define BIGCALL(x) MPI_ERR_OTHER
#endif

#define RUN(what, BLK, NB, INIT, BIGF)                                                        \
    do {                                                                                      \
        int rc_ = MPI_SUCCESS;                                                                \
        switch (mode) {                                                                       \
        case M_BLOCK: rc_ = BLK; break;                                                       \
        case M_NB:                                                                            \
            rc_ = NB;                                                                         \
            if (rc_ == MPI_SUCCESS)                                                           \
                rc_ = MPI_Wait(&req, MPI_STATUS_IGNORE);                                      \
            break;                                                                            \
        case M_PERSIST:                                                                       \
            if (req == MPI_REQUEST_NULL)                                                      \
                rc_ = INIT;                                                                   \
            if (rc_ == MPI_SUCCESS)                                                           \
                rc_ = MPI_Start(&req);                                                        \
            if (rc_ == MPI_SUCCESS)                                                           \
                rc_ = MPI_Wait(&req, MPI_STATUS_IGNORE);                                      \
            break;                                                                            \
        default: rc_ = BIGF; break;                                                           \
        }                                                                                     \
        CHECK_RC(rc_, what);                                                                  \
    } while (0)

static MPI_Comm ic;
static int color, lrank, lsize, rsize, mode, iters;
static const char *sname, *mname;
static MPI_Datatype affine; /* pair of ints (a, b): x -> a*x + b */
static MPI_Op compose;

/* Element i of rank r of group g, iteration it (int ops). */
static int ival(int g, int r, int i, int it)
{
    return (g + 1) * 1000 + r * 37 + i * 3 + it * 11 + ((r + i) % 5) * 101;
}

/* Affine map of rank r of group g, element i: (a, b) both in 1..P-1. */
static void aval(int g, int r, int i, int it, int *ab)
{
    ab[0] = 2 + (g * 7 + r * 5 + i * 3 + it) % 50;
    ab[1] = 1 + (g * 13 + r * 29 + i * 17 + it * 3) % 1000;
}

/* in (lower ranks) then inout: inout = inout o in, i.e. apply in first. */
static void compose_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    int *x = in, *y = inout;
    for (int k = 0; k < *len; k++) {
        long a1 = x[2 * k], b1 = x[2 * k + 1], a2 = y[2 * k], b2 = y[2 * k + 1];
        y[2 * k] = (int)(a1 * a2 % P);
        y[2 * k + 1] = (int)((a2 * b1 + b2) % P);
    }
}

/* Expected result element i of the reduction over group g (size n) with op kind:
 * 0 sum, 1 max, 2 compose (out: 2 ints). */
static void expect(int kind, int g, int n, int i, int it, int *out)
{
    if (kind == 0) {
        long s = 0;
        for (int r = 0; r < n; r++)
            s += ival(g, r, i, it);
        out[0] = (int)s;
    } else if (kind == 1) {
        int m = ival(g, 0, i, it);
        for (int r = 1; r < n; r++)
            if (ival(g, r, i, it) > m)
                m = ival(g, r, i, it);
        out[0] = m;
    } else {
        int acc[2];
        aval(g, 0, i, it, acc);
        for (int r = 1; r < n; r++) {
            int nx[2];
            aval(g, r, i, it, nx);
            compose_fn(acc, nx, &(int){1}, NULL);
            acc[0] = nx[0];
            acc[1] = nx[1];
        }
        out[0] = acc[0];
        out[1] = acc[1];
    }
}

/* Fills n elements of this process's contribution for op kind. */
static void fill(int kind, int *buf, int n, int it)
{
    for (int i = 0; i < n; i++) {
        if (kind == 2)
            aval(color, lrank, i, it, buf + 2 * i);
        else
            buf[i] = ival(color, lrank, i, it);
    }
}

/* Checks n elements of buf (starting at element first of the vector) against the reduction
 * of group g's data, then a guard. */
static void verify(int kind, const int *buf, int first, int n, int g, int gn, int it,
                   const char *what)
{
    int w = kind == 2 ? 2 : 1, bad = 0;
    for (int i = 0; i < n; i++) {
        int want[2];
        expect(kind, g, gn, first + i, it, want);
        for (int c = 0; c < w; c++)
            if (buf[w * i + c] != want[c] && bad++ < 3)
                CHECK(0, "%s %s %s op %d it %d: element %d.%d = %d, want %d", sname, mname,
                      what, kind, it, first + i, c, buf[w * i + c], want[c]);
    }
    CHECK(buf[w * n] == GUARD, "%s %s %s op %d: guard after %d elements overwritten (%d)",
          sname, mname, what, kind, n, buf[w * n]);
}

static MPI_Datatype dtype(int kind)
{
    return kind == 2 ? affine : MPI_INT;
}
static MPI_Op op(int kind)
{
    return kind == 0 ? MPI_SUM : kind == 1 ? MPI_MAX : compose;
}

static int sbuf[2 * 64 * 64 * 4 + 2048], rbuf[2 * 64 * 64 * 4 + 2048];

static void guard_all(int *buf)
{
    for (int i = 0; i < (int)(sizeof rbuf / sizeof rbuf[0]); i++)
        buf[i] = GUARD;
}

static void t_reduce(int kind, int n)
{
    MPI_Datatype dt = dtype(kind);
    for (int g = 0; g < 2; g++) {
        int gsize = g == color ? lsize : rsize;
        for (int root = 0; root < gsize; root += (gsize > 1 ? gsize - 1 : 1)) {
            int rootarg = g != color ? root : (lrank == root ? MPI_ROOT : MPI_PROC_NULL);
            MPI_Request req = MPI_REQUEST_NULL;
            for (int it = 0; it < iters; it++) {
                guard_all(rbuf);
                guard_all(sbuf);
                fill(kind, sbuf, n, it);
                RUN("reduce", MPI_Reduce(sbuf, rbuf, n, dt, op(kind), rootarg, ic),
                    MPI_Ireduce(sbuf, rbuf, n, dt, op(kind), rootarg, ic, &req),
                    MPI_Reduce_init(sbuf, rbuf, n, dt, op(kind), rootarg, ic, MPI_INFO_NULL,
                                    &req),
                    BIGCALL(MPI_Reduce_c(sbuf, rbuf, n, dt, op(kind), rootarg, ic)));
                if (rootarg == MPI_ROOT)
                    verify(kind, rbuf, 0, n, 1 - color, rsize, it, "reduce");
                else
                    CHECK(rbuf[0] == GUARD, "%s %s reduce: receive buffer of a non-root written",
                          sname, mname);
            }
            if (req != MPI_REQUEST_NULL)
                MPI_Request_free(&req);
        }
    }
}

static void t_allreduce(int kind, int n)
{
    MPI_Datatype dt = dtype(kind);
    MPI_Request req = MPI_REQUEST_NULL;
    for (int it = 0; it < iters; it++) {
        guard_all(rbuf);
        guard_all(sbuf);
        fill(kind, sbuf, n, it);
        RUN("allreduce", MPI_Allreduce(sbuf, rbuf, n, dt, op(kind), ic),
            MPI_Iallreduce(sbuf, rbuf, n, dt, op(kind), ic, &req),
            MPI_Allreduce_init(sbuf, rbuf, n, dt, op(kind), ic, MPI_INFO_NULL, &req),
            BIGCALL(MPI_Allreduce_c(sbuf, rbuf, n, dt, op(kind), ic)));
        verify(kind, rbuf, 0, n, 1 - color, rsize, it, "allreduce");
    }
    if (req != MPI_REQUEST_NULL)
        MPI_Request_free(&req);
}

static void t_reduce_scatter_block(int kind, int m)
{
#if defined(MPICH_VERSION)
    /* MPICH 4.0.2's persistent MPI_Reduce_scatter_block_init on an intercommunicator runs
     * its second start on the first start's data, and from 4 processes fails it with
     * "Invalid communicator" and hangs: not run there. */
    if (mode == M_PERSIST)
        return;
#endif
    MPI_Datatype dt = dtype(kind);
    int rc = rsize * m; /* total lsize * rsize * m in both groups */
    MPI_Request req = MPI_REQUEST_NULL;
    for (int it = 0; it < iters; it++) {
        guard_all(rbuf);
        guard_all(sbuf);
        fill(kind, sbuf, lsize * rc, it);
        RUN("reduce_scatter_block", MPI_Reduce_scatter_block(sbuf, rbuf, rc, dt, op(kind), ic),
            MPI_Ireduce_scatter_block(sbuf, rbuf, rc, dt, op(kind), ic, &req),
            MPI_Reduce_scatter_block_init(sbuf, rbuf, rc, dt, op(kind), ic, MPI_INFO_NULL, &req),
            BIGCALL(MPI_Reduce_scatter_block_c(sbuf, rbuf, rc, dt, op(kind), ic)));
        verify(kind, rbuf, lrank * rc, rc, 1 - color, rsize, it, "reduce_scatter_block");
    }
    if (req != MPI_REQUEST_NULL)
        MPI_Request_free(&req);
}

static void t_reduce_scatter(int kind, int total)
{
    MPI_Datatype dt = dtype(kind);
    int counts[64], first = 0;
    MPI_Count counts_c[64];
    /* Uneven: rank i gets total / lsize, the last ranks one more each. */
    for (int i = 0; i < lsize; i++) {
        counts[i] = total / lsize + (lsize - 1 - i < total % lsize);
        counts_c[i] = counts[i];
        if (i < lrank)
            first += counts[i];
    }
    MPI_Request req = MPI_REQUEST_NULL;
    for (int it = 0; it < iters; it++) {
        guard_all(rbuf);
        guard_all(sbuf);
        fill(kind, sbuf, total, it);
        RUN("reduce_scatter", MPI_Reduce_scatter(sbuf, rbuf, counts, dt, op(kind), ic),
            MPI_Ireduce_scatter(sbuf, rbuf, counts, dt, op(kind), ic, &req),
            MPI_Reduce_scatter_init(sbuf, rbuf, counts, dt, op(kind), ic, MPI_INFO_NULL, &req),
            BIGCALL(MPI_Reduce_scatter_c(sbuf, rbuf, counts_c, dt, op(kind), ic)));
        verify(kind, rbuf, first, counts[lrank], 1 - color, rsize, it, "reduce_scatter");
    }
    if (req != MPI_REQUEST_NULL)
        MPI_Request_free(&req);
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    if (mtest_size > 64) {
        MTest_Skip("more processes than the test's tables hold");
        return MTest_Finalize(0);
    }
    MPI_Type_contiguous(2, MPI_INT, &affine);
    MPI_Type_commit(&affine);
    MPI_Op_create(compose_fn, 0, &compose);
    for (int shape = 0; shape < MTEST_INTER_SHAPES; shape++) {
        if (!MTest_Inter_make(shape, &ic, &color))
            continue;
        MPI_Comm_rank(ic, &lrank);
        MPI_Comm_size(ic, &lsize);
        MPI_Comm_remote_size(ic, &rsize);
        sname = MTest_Inter_name(shape);
        for (mode = 0; mode < NMODES; mode++) {
#if MPI_VERSION < 4
            if (mode == M_BIGC || mode == M_PERSIST)
                continue;
#endif
            mname = mode_name[mode];
            iters = mode == M_PERSIST ? 2 : 1;
            for (int kind = 0; kind < 3; kind++) {
                t_reduce(kind, 1);
                t_reduce(kind, kind == 0 ? 1000 : 5);
                t_allreduce(kind, 1);
                t_allreduce(kind, kind == 0 ? 1000 : 7);
                t_reduce_scatter_block(kind, 2);
                t_reduce_scatter(kind, 7);
                t_reduce_scatter(kind, kind == 0 ? 1000 : 3);
            }
        }
        MPI_Comm_free(&ic);
    }
    MPI_Op_free(&compose);
    MPI_Type_free(&affine);
    return MTest_Finalize(0);
}
