/* coll_inter: data-movement collectives and barrier on intercommunicators (MPI-4.1 §6.2.2),
 * each blocking, nonblocking (MPI_I*), persistent (MPI_*_init, started twice with new data)
 * and big-count (_c, MPI >= 4), on the four intercommunicator shapes of mtest_inter.h
 * (even/odd, one/rest, rest/one with the last ranks as leaders, halves):
 *   - MPI_Barrier (MPI_Ibarrier of one group cannot complete before the other group enters);
 *   - MPI_Bcast from the first and last rank of each group (MPI_ROOT at the root,
 *     MPI_PROC_NULL elsewhere in its group, whose buffers stay untouched), 3 and 20000 ints;
 *   - MPI_Gather, MPI_Gatherv, MPI_Scatter, MPI_Scatterv with the same roots (v forms: counts
 *     0..2 per remote rank, blocks in reverse order with guards between them);
 *   - MPI_Allgather, MPI_Allgatherv, MPI_Alltoall, MPI_Alltoallv, MPI_Alltoallw (the w form
 *     sends pairs of ints to odd remote ranks, byte displacements);
 *   - MPI_Scan / MPI_Exscan on an intercommunicator: MPI_ERR_COMM; an invalid root
 *     everywhere: MPI_ERR_ROOT.
 * Every value encodes (group, rank, index, iteration), so a block from the wrong process,
 * place or iteration is caught. */
#include "mtest.h"
#include "mtest_inter.h"

#define GUARD (-77)
#define BIG 20000

enum { M_BLOCK, M_NB, M_PERSIST, M_BIGC, NMODES };
static const char *mode_name[NMODES] = {"blocking", "nonblocking", "persistent", "big-count"};

#if MPI_VERSION >= 4
#define BIGCALL(x) x
#else
#define BIGCALL(x) MPI_ERR_OTHER
#endif

/* Runs the form `mode` of a collective; `req` is the persistent request (created on the
 * first use). */
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

#define FREE_REQ()                                                                            \
    do {                                                                                      \
        if (req != MPI_REQUEST_NULL)                                                          \
            MPI_Request_free(&req);                                                           \
    } while (0)

static MPI_Comm ic;
static int color, lrank, lsize, rsize, mode, iters;
static const char *sname, *mname;

static int val(int g, int r, int i, int it)
{
    return 100000000 * g + 100000 * r + i + 7 * it;
}

/* Count of the v forms: what rank r of group g sends to / receives from rank q. */
static int vcnt(int g, int r, int q)
{
    return (r + 2 * q + g) % 3;
}

/* Checks n ints of buf against want(k); reports the first few differences. */
#define VERIFY(buf, n, wantexpr, what)                                                        \
    do {                                                                                      \
        int bad_ = 0;                                                                         \
        for (int k_ = 0; k_ < (n); k_++) {                                                    \
            int w_ = (wantexpr);                                                              \
            if ((buf)[k_] != w_ && bad_++ < 3)                                                \
                CHECK(0, "%s %s %s it %d: [%d] = %d, want %d", sname, mname, what, it, k_,    \
                      (buf)[k_], w_);                                                         \
        }                                                                                     \
    } while (0)

static int *rbuf, *sbuf;

/* MPICH 4.0.2 runs the second MPI_Start of a persistent intercommunicator MPI_Gather,
 * MPI_Allgather or MPI_Scatter (not the v forms) on the data of the first: with it these
 * run once (the standard reads the buffers at every start). */
#if defined(MPICH_VERSION)
#define STALE_PERSIST(v) (!(v) && mode == M_PERSIST)
#else
#define STALE_PERSIST(v) 0
#endif

/* MPICH 4.0.2's MPI_Ibcast and MPI_Bcast_init on an intercommunicator deliver nothing when
 * the root is not rank 0 of its group (from 4 processes on): not run there. */
#if defined(MPICH_VERSION)
#define BAD_IBCAST_ROOT(root) ((root) != 0 && (mode == M_NB || mode == M_PERSIST))
#else
#define BAD_IBCAST_ROOT(root) 0
#endif

static void t_barrier(void)
{
    MPI_Request req = MPI_REQUEST_NULL;
    for (int it = 0; it < iters; it++)
        RUN("barrier", MPI_Barrier(ic), MPI_Ibarrier(ic, &req),
            MPI_Barrier_init(ic, MPI_INFO_NULL, &req), MPI_Barrier(ic));
    FREE_REQ();
    if (mode != M_BLOCK)
        return;
    /* Group 1 starts an MPI_Ibarrier; group 0 enters only after group 1's rank 0 has seen
     * the barrier incomplete and said so. */
    int go = 1, flag = 1;
    if (color == 1) {
        MPI_Ibarrier(ic, &req);
        if (lrank == 0) {
            MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
            CHECK(!flag, "%s: MPI_Ibarrier completed before the other group entered", sname);
            for (int q = 0; q < rsize; q++)
                MPI_Send(&go, 1, MPI_INT, q, 5, ic);
        }
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(&go, 1, MPI_INT, 0, 5, ic, MPI_STATUS_IGNORE);
        /* (A nonblocking collective matches only nonblocking ones.) */
        MPI_Ibarrier(ic, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
}

static void t_bcast(int count)
{
    for (int g = 0; g < 2; g++) {
        int gsize = g == color ? lsize : rsize;
        for (int root = 0; root < gsize; root += (gsize > 1 ? gsize - 1 : 1)) {
            int rootarg = g != color ? root : (lrank == root ? MPI_ROOT : MPI_PROC_NULL);
            MPI_Request req = MPI_REQUEST_NULL;
            if (BAD_IBCAST_ROOT(root))
                continue;
            for (int it = 0; it < iters; it++) {
                for (int i = 0; i < count + 1; i++)
                    rbuf[i] = rootarg == MPI_ROOT && i < count ? val(g, root, i, it) : GUARD;
                RUN("bcast", MPI_Bcast(rbuf, count, MPI_INT, rootarg, ic),
                    MPI_Ibcast(rbuf, count, MPI_INT, rootarg, ic, &req),
                    MPI_Bcast_init(rbuf, count, MPI_INT, rootarg, ic, MPI_INFO_NULL, &req),
                    BIGCALL(MPI_Bcast_c(rbuf, count, MPI_INT, rootarg, ic)));
                if (rootarg == MPI_PROC_NULL)
                    VERIFY(rbuf, count + 1, GUARD, "bcast (MPI_PROC_NULL)");
                else
                    VERIFY(rbuf, count + 1, k_ < count ? val(g, root, k_, it) : GUARD, "bcast");
            }
            FREE_REQ();
        }
    }
}

/* Gather / Gatherv (v) with k ints a process. */
static void t_gather(int v, int k)
{
    int counts[64], displs[64];
    MPI_Count counts_c[64];
    MPI_Aint displs_c[64];
    for (int g = 0; g < 2; g++) {
        int gsize = g == color ? lsize : rsize;
        for (int root = 0; root < gsize; root += (gsize > 1 ? gsize - 1 : 1)) {
            int rootarg = g != color ? root : (lrank == root ? MPI_ROOT : MPI_PROC_NULL);
            int total = 0;
            /* At the root: remote rank q's block, reverse order, one guard between. */
            for (int q = rsize - 1; q >= 0; q--) {
                counts[q] = v ? vcnt(1 - color, q, root) : k;
                displs[q] = total;
                total += counts[q] + 1;
            }
            for (int q = 0; q < rsize; q++) {
                counts_c[q] = counts[q];
                displs_c[q] = displs[q];
            }
            int mine = v ? vcnt(color, lrank, root) : k;
            MPI_Request req = MPI_REQUEST_NULL;
            for (int it = 0; it < (STALE_PERSIST(v) ? 1 : iters); it++) {
                for (int i = 0; i < total + 1; i++)
                    rbuf[i] = GUARD;
                for (int i = 0; i < mine; i++)
                    sbuf[i] = val(color, lrank, i, it);
                if (!v)
                    RUN("gather",
                        MPI_Gather(sbuf, k, MPI_INT, rbuf, k, MPI_INT, rootarg, ic),
                        MPI_Igather(sbuf, k, MPI_INT, rbuf, k, MPI_INT, rootarg, ic, &req),
                        MPI_Gather_init(sbuf, k, MPI_INT, rbuf, k, MPI_INT, rootarg, ic,
                                        MPI_INFO_NULL, &req),
                        BIGCALL(MPI_Gather_c(sbuf, k, MPI_INT, rbuf, k, MPI_INT, rootarg, ic)));
                else
                    RUN("gatherv",
                        MPI_Gatherv(sbuf, mine, MPI_INT, rbuf, counts, displs, MPI_INT, rootarg,
                                    ic),
                        MPI_Igatherv(sbuf, mine, MPI_INT, rbuf, counts, displs, MPI_INT,
                                     rootarg, ic, &req),
                        MPI_Gatherv_init(sbuf, mine, MPI_INT, rbuf, counts, displs, MPI_INT,
                                         rootarg, ic, MPI_INFO_NULL, &req),
                        BIGCALL(MPI_Gatherv_c(sbuf, mine, MPI_INT, rbuf, counts_c, displs_c,
                                              MPI_INT, rootarg, ic)));
                if (rootarg == MPI_ROOT) {
                    if (!v) {
                        VERIFY(rbuf, rsize * k, val(1 - color, k_ / k, k_ % k, it), "gather");
                    } else {
                        for (int q = 0; q < rsize; q++) {
                            int *b = rbuf + displs[q];
                            VERIFY(b, counts[q] + 1,
                                   k_ < counts[q] ? val(1 - color, q, k_, it) : GUARD, "gatherv");
                        }
                    }
                } else if (rootarg == MPI_PROC_NULL) {
                    VERIFY(rbuf, 1, GUARD, "gather (MPI_PROC_NULL)");
                }
            }
            FREE_REQ();
        }
    }
}

/* Scatter / Scatterv (v) with k ints a process. */
static void t_scatter(int v, int k)
{
    int counts[64], displs[64];
    MPI_Count counts_c[64];
    MPI_Aint displs_c[64];
    for (int g = 0; g < 2; g++) {
        int gsize = g == color ? lsize : rsize;
        for (int root = 0; root < gsize; root += (gsize > 1 ? gsize - 1 : 1)) {
            int rootarg = g != color ? root : (lrank == root ? MPI_ROOT : MPI_PROC_NULL);
            int total = 0;
            for (int q = rsize - 1; q >= 0; q--) {
                counts[q] = v ? vcnt(color, root, q) : k;
                displs[q] = total;
                total += counts[q] + 1;
            }
            for (int q = 0; q < rsize; q++) {
                counts_c[q] = counts[q];
                displs_c[q] = displs[q];
            }
            int mine = v ? vcnt(1 - color, root, lrank) : k;
            MPI_Request req = MPI_REQUEST_NULL;
            for (int it = 0; it < (STALE_PERSIST(v) ? 1 : iters); it++) {
                for (int i = 0; i < k + 4; i++)
                    rbuf[i] = GUARD;
                for (int q = 0; q < rsize; q++)
                    for (int i = 0; i < counts[q]; i++)
                        sbuf[v ? displs[q] + i : q * k + i] = val(color, lrank, 1000 * q + i, it);
                if (!v)
                    RUN("scatter",
                        MPI_Scatter(sbuf, k, MPI_INT, rbuf, k, MPI_INT, rootarg, ic),
                        MPI_Iscatter(sbuf, k, MPI_INT, rbuf, k, MPI_INT, rootarg, ic, &req),
                        MPI_Scatter_init(sbuf, k, MPI_INT, rbuf, k, MPI_INT, rootarg, ic,
                                         MPI_INFO_NULL, &req),
                        BIGCALL(MPI_Scatter_c(sbuf, k, MPI_INT, rbuf, k, MPI_INT, rootarg, ic)));
                else
                    RUN("scatterv",
                        MPI_Scatterv(sbuf, counts, displs, MPI_INT, rbuf, mine, MPI_INT, rootarg,
                                     ic),
                        MPI_Iscatterv(sbuf, counts, displs, MPI_INT, rbuf, mine, MPI_INT,
                                      rootarg, ic, &req),
                        MPI_Scatterv_init(sbuf, counts, displs, MPI_INT, rbuf, mine, MPI_INT,
                                          rootarg, ic, MPI_INFO_NULL, &req),
                        BIGCALL(MPI_Scatterv_c(sbuf, counts_c, displs_c, MPI_INT, rbuf, mine,
                                               MPI_INT, rootarg, ic)));
                if (g != color)
                    VERIFY(rbuf, mine + 1, k_ < mine ? val(g, root, 1000 * lrank + k_, it) : GUARD,
                           "scatter");
                else
                    VERIFY(rbuf, k + 1, GUARD, "scatter (root group)");
            }
            FREE_REQ();
        }
    }
}

/* Allgather / Allgatherv (v): k ints a process. */
static void t_allgather(int v, int k)
{
    int counts[64], displs[64], total = 0;
    MPI_Count counts_c[64];
    MPI_Aint displs_c[64];
    for (int q = rsize - 1; q >= 0; q--) {
        counts[q] = v ? vcnt(1 - color, q, 0) : k;
        displs[q] = total;
        total += counts[q] + 1;
    }
    for (int q = 0; q < rsize; q++) {
        counts_c[q] = counts[q];
        displs_c[q] = displs[q];
    }
    int mine = v ? vcnt(color, lrank, 0) : k;
    MPI_Request req = MPI_REQUEST_NULL;
    for (int it = 0; it < (STALE_PERSIST(v) ? 1 : iters); it++) {
        for (int i = 0; i < total + rsize * k + 1; i++)
            rbuf[i] = GUARD;
        for (int i = 0; i < mine; i++)
            sbuf[i] = val(color, lrank, i, it);
        if (!v) {
            RUN("allgather", MPI_Allgather(sbuf, k, MPI_INT, rbuf, k, MPI_INT, ic),
                MPI_Iallgather(sbuf, k, MPI_INT, rbuf, k, MPI_INT, ic, &req),
                MPI_Allgather_init(sbuf, k, MPI_INT, rbuf, k, MPI_INT, ic, MPI_INFO_NULL, &req),
                BIGCALL(MPI_Allgather_c(sbuf, k, MPI_INT, rbuf, k, MPI_INT, ic)));
            VERIFY(rbuf, rsize * k + 1,
                   k_ < rsize * k ? val(1 - color, k_ / k, k_ % k, it) : GUARD, "allgather");
        } else {
            RUN("allgatherv",
                MPI_Allgatherv(sbuf, mine, MPI_INT, rbuf, counts, displs, MPI_INT, ic),
                MPI_Iallgatherv(sbuf, mine, MPI_INT, rbuf, counts, displs, MPI_INT, ic, &req),
                MPI_Allgatherv_init(sbuf, mine, MPI_INT, rbuf, counts, displs, MPI_INT, ic,
                                    MPI_INFO_NULL, &req),
                BIGCALL(MPI_Allgatherv_c(sbuf, mine, MPI_INT, rbuf, counts_c, displs_c, MPI_INT,
                                         ic)));
            for (int q = 0; q < rsize; q++) {
                int *b = rbuf + displs[q];
                VERIFY(b, counts[q] + 1, k_ < counts[q] ? val(1 - color, q, k_, it) : GUARD,
                       "allgatherv");
            }
        }
    }
    FREE_REQ();
}

/* Alltoall (w = 0, k ints a block), Alltoallv (w = 1), Alltoallw (w = 2). */
static void t_alltoall(int w, int k)
{
    int sc[64], sd[64], rc[64], rd[64], stot = 0, rtot = 0;
    MPI_Count sc_c[64], rc_c[64], wsc_c[64];
    MPI_Aint sd_c[64], rd_c[64], sdb[64], rdb[64];
    int wsc[64], sdbi[64], rdbi[64]; /* byte displacements (int in MPI_Alltoallw) */
    MPI_Datatype pair, st[64], rt[64];
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    for (int q = 0; q < rsize; q++) {
        sc[q] = w ? 2 * vcnt(color, lrank, q) : k;
        sd[q] = stot;
        stot += sc[q] + 1;
    }
    for (int q = rsize - 1; q >= 0; q--) {
        rc[q] = w ? 2 * vcnt(1 - color, q, lrank) : k;
        rd[q] = rtot;
        rtot += rc[q] + 1;
    }
    for (int q = 0; q < rsize; q++) {
        sc_c[q] = sc[q];
        sd_c[q] = sd[q];
        rc_c[q] = rc[q];
        rd_c[q] = rd[q];
        sdb[q] = sd[q] * (MPI_Aint)sizeof(int);
        rdb[q] = rd[q] * (MPI_Aint)sizeof(int);
        sdbi[q] = (int)sdb[q];
        rdbi[q] = (int)rdb[q];
        st[q] = q % 2 ? pair : MPI_INT;
        wsc[q] = q % 2 ? sc[q] / 2 : sc[q];
        wsc_c[q] = wsc[q];
        rt[q] = MPI_INT;
    }
    MPI_Request req = MPI_REQUEST_NULL;
    for (int it = 0; it < iters; it++) {
        for (int i = 0; i < rtot + rsize * k + 1; i++)
            rbuf[i] = GUARD;
        for (int q = 0; q < rsize; q++)
            for (int i = 0; i < sc[q]; i++)
                sbuf[w ? sd[q] + i : q * k + i] = val(color, lrank, 1000 * q + i, it);
        if (w == 0) {
            RUN("alltoall", MPI_Alltoall(sbuf, k, MPI_INT, rbuf, k, MPI_INT, ic),
                MPI_Ialltoall(sbuf, k, MPI_INT, rbuf, k, MPI_INT, ic, &req),
                MPI_Alltoall_init(sbuf, k, MPI_INT, rbuf, k, MPI_INT, ic, MPI_INFO_NULL, &req),
                BIGCALL(MPI_Alltoall_c(sbuf, k, MPI_INT, rbuf, k, MPI_INT, ic)));
            VERIFY(rbuf, rsize * k + 1,
                   k_ < rsize * k ? val(1 - color, k_ / k, 1000 * lrank + k_ % k, it) : GUARD,
                   "alltoall");
            continue;
        }
        if (w == 1)
            RUN("alltoallv",
                MPI_Alltoallv(sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, ic),
                MPI_Ialltoallv(sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, ic, &req),
                MPI_Alltoallv_init(sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, ic,
                                   MPI_INFO_NULL, &req),
                BIGCALL(MPI_Alltoallv_c(sbuf, sc_c, sd_c, MPI_INT, rbuf, rc_c, rd_c, MPI_INT,
                                        ic)));
        else
            RUN("alltoallw", MPI_Alltoallw(sbuf, wsc, sdbi, st, rbuf, rc, rdbi, rt, ic),
                MPI_Ialltoallw(sbuf, wsc, sdbi, st, rbuf, rc, rdbi, rt, ic, &req),
                MPI_Alltoallw_init(sbuf, wsc, sdbi, st, rbuf, rc, rdbi, rt, ic, MPI_INFO_NULL,
                                   &req),
                BIGCALL(MPI_Alltoallw_c(sbuf, wsc_c, sdb, st, rbuf, rc_c, rdb, rt, ic)));
        for (int q = 0; q < rsize; q++) {
            int *b = rbuf + rd[q];
            VERIFY(b, rc[q] + 1, k_ < rc[q] ? val(1 - color, q, 1000 * lrank + k_, it) : GUARD,
                   w == 1 ? "alltoallv" : "alltoallw");
        }
    }
    FREE_REQ();
    MPI_Type_free(&pair);
}

static void errors(void)
{
    int x = 1, y = 0;
    int rc = MPI_Scan(&x, &y, 1, MPI_INT, MPI_SUM, ic);
    CHECK_CLASS(rc, MPI_ERR_COMM, "MPI_Scan on an intercommunicator");
    rc = MPI_Exscan(&x, &y, 1, MPI_INT, MPI_SUM, ic);
    CHECK_CLASS(rc, MPI_ERR_COMM, "MPI_Exscan on an intercommunicator");
    /* A root that is neither MPI_ROOT, MPI_PROC_NULL nor a remote rank, at every process. */
    rc = MPI_Bcast(&x, 1, MPI_INT, -5, ic);
    CHECK_CLASS(rc, MPI_ERR_ROOT, "MPI_Bcast with root -5 on an intercommunicator");
    rc = MPI_Gather(&x, 1, MPI_INT, &y, 1, MPI_INT, rsize, ic);
    CHECK_CLASS(rc, MPI_ERR_ROOT, "MPI_Gather with root = remote size");
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    rbuf = malloc(sizeof(int) * (BIG + 64 * 1024));
    sbuf = malloc(sizeof(int) * (BIG + 64 * 1024));
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
            t_barrier();
            t_bcast(3);
            t_bcast(BIG);
            for (int v = 0; v < 2; v++) {
                t_gather(v, 3);
                t_scatter(v, 3);
                t_allgather(v, 2);
            }
            t_gather(0, 0);
            t_alltoall(0, 2);
            t_alltoall(0, 1000);
            t_alltoall(1, 0);
            t_alltoall(2, 0);
        }
        errors();
        MPI_Comm_free(&ic);
    }
    free(rbuf);
    free(sbuf);
    return MTest_Finalize(0);
}
