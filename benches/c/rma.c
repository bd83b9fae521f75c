/*
 * One-sided communication (RMA), 2 ranks (more ranks only take part in the collective
 * calls; the fence and halo cases then run on all of them).  -o selects what is timed;
 * rank 0 prints one OSU-style table ("# Size  <column> ..." then one row per size):
 *
 *   put        MPI_Put of 8 B (-s) + MPI_Win_flush, rank 0 -> rank 1, passive target:
 *              rank 0 holds MPI_Win_lock_all for the whole loop, rank 1 waits in
 *              MPI_Barrier.  us per put+flush.
 *   acc        MPI_Accumulate(MPI_SUM) of 1 MPI_DOUBLE, rank 0 -> rank 1, passive target
 *              (lock_all), MPI_Win_flush after every 100 operations.  us per operation,
 *              and the rate in millions of operations per second.
 *   fop        MPI_Fetch_and_op(MPI_SUM, 1 MPI_LONG) + MPI_Win_flush, rank 0 -> rank 1,
 *              passive target (lock_all): a shared counter as applications use one (each
 *              fetched value is checked).  us per operation.
 *   cas        MPI_Compare_and_swap of 1 MPI_LONG + MPI_Win_flush, rank 0 -> rank 1,
 *              passive target (lock_all), comparing with the value it holds (so each one
 *              swaps; checked).  us per operation.
 *   fop_all    every rank adds 1 to rank 0's counter with MPI_Fetch_and_op(MPI_SUM,
 *              MPI_LONG) + MPI_Win_flush (lock_all): contention on one element.
 *   acc_all    every rank adds 1.0 with MPI_Accumulate(MPI_SUM, 1 MPI_DOUBLE) to its own
 *              element of rank 0's window (lock_all, flush every 100): one target, no
 *              element shared.  Both: us per operation (slowest rank), totals checked.
 *   fence      MPI_Win_fence on all ranks, no operations; us per fence (slowest rank).
 *   fence_put  one 8 B MPI_Put to the next rank, then MPI_Win_fence; us per round.
 *   lock       MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1) + MPI_Win_unlock(1) on rank 0, no
 *              operation; rank 1 waits in MPI_Barrier.  us per pair.
 *   lock_put   the same with one 8 B MPI_Put inside the epoch (a library may acquire the
 *              lock lazily, so that an empty epoch is not what an application pays).
 *   get        MPI_Get bandwidth: rank 0 holds MPI_Win_lock_all and per iteration issues
 *              -w (default 16) MPI_Get of the size from rank 1's window into one local
 *              buffer (as osu_get_bw does), then MPI_Win_flush.  GB/s (10^9 B/s), and
 *              us per get.  Sizes -s (default 64 KiB, 1 MiB, 4 MiB).
 *   put_bw     MPI_Put bandwidth, the same way: -w MPI_Put of the size from one local
 *              buffer into rank 1's window, then MPI_Win_flush (as osu_put_bw does).
 *              Rank 1 checks the bytes put after the loop.
 *   acc_bw     MPI_Accumulate(MPI_SUM) bandwidth, the same way: -w accumulates of the size
 *              (in MPI_DOUBLE elements of 1.0) into rank 1's window, then MPI_Win_flush.
 *              Rank 1 checks the sums (the calls made) after the loop.
 *   getacc_bw  the same with MPI_Get_accumulate(MPI_SUM), the old values fetched into a
 *              second local buffer of the size.
 *   halo_shm   1-D ring halo exchange through MPI_Win_allocate_shared on the node
 *              communicator (MPI_Comm_split_type SHARED): each rank writes its two
 *              boundaries (-s bytes of doubles each, default 64 KiB) into its window
 *              segment, then MPI_Win_sync + MPI_Barrier + MPI_Win_sync (the MPI
 *              standard's shared-memory pattern, inside MPI_Win_lock_all with
 *              MPI_MODE_NOCHECK), then copies the neighbours' boundaries (pointers from
 *              MPI_Win_shared_query) into its private halo buffers with plain loads.
 *              Boundaries are double-buffered by iteration parity (as a Jacobi sweep
 *              alternates two grids), so one barrier per iteration suffices.
 *   halo_sendrecv  the same exchange with two MPI_Sendrecv (to the right neighbour /
 *              from the left, then the reverse) from private boundary buffers into the
 *              halo buffers.  Both halo cases: us per iteration (slowest rank).
 *
 * Windows come from MPI_Win_allocate (MPI_Win_allocate_shared for halo_shm), at least
 * one page.  Every case checks what it moved (the last value put, the accumulated sum,
 * the bytes got, the first and last element of every halo) and aborts on a mismatch.
 *
 * Iterations: by default each case (each size for get) warms up in rounds of 8, 16, 32 ...
 * iterations until a round takes 50 ms (rank 0's clock, broadcast for the cases all
 * ranks loop in), then times as many iterations as fit in -t seconds (default 0.5) at
 * the rate of the last round.  -i N times exactly N iterations after -x warm-up ones
 * (default N / 100).
 *
 * A library whose MPI_Win_allocate (or MPI_Win_allocate_shared) returns an error
 * (checked with MPI_ERRORS_RETURN), or ranks that do not share a node in the halo_shm
 * case, make it print "# unsupported: <reason>" and exit 0 without a row.
 *
 * Options: -o CASE (default put), -s LIST sizes in bytes, -t SECONDS, -i N, -x N,
 * -w N gets (puts) per flush, -g BYTES creates the windows with the info hint
 * mpi_accumulate_granularity = BYTES (8: accumulates to elements of at most 8 bytes may use
 * hardware atomics).
 */
#include "bench_mpi.h"

#include <stdint.h>

enum op { OP_PUT, OP_ACC, OP_FOP, OP_CAS, OP_FOP_ALL, OP_ACC_ALL, OP_FENCE, OP_FENCE_PUT, OP_LOCK, OP_LOCK_PUT, OP_GET, OP_PUT_BW, OP_ACC_BW, OP_GETACC_BW, OP_HALO_SHM,
          OP_HALO_SR };

static const struct {
    const char *name;
    enum op op;
} CASES[] = {
    {"put", OP_PUT},       {"acc", OP_ACC},
    {"fop", OP_FOP},       {"cas", OP_CAS},
    {"fop_all", OP_FOP_ALL}, {"acc_all", OP_ACC_ALL},
    {"fence", OP_FENCE},   {"fence_put", OP_FENCE_PUT},
    {"lock", OP_LOCK},     {"lock_put", OP_LOCK_PUT},
    {"get", OP_GET},       {"put_bw", OP_PUT_BW},
    {"acc_bw", OP_ACC_BW}, {"getacc_bw", OP_GETACC_BW},
    {"halo_shm", OP_HALO_SHM},
    {"halo_sendrecv", OP_HALO_SR},
};

#define ACC_FLUSH_EVERY 100
#define CALIB_SECONDS 0.05
#define MIN_WIN 4096 /* see passive_case() */

static int rank, nranks;
static double budget = 0.5; /* -t */
static long opt_iters = -1, opt_skip = -1;
static MPI_Info win_info = MPI_INFO_NULL; /* -g */

static void fail(const char *what)
{
    fprintf(stderr, "rma: rank %d: check failed: %s\n", rank, what);
    MPI_Abort(MPI_COMM_WORLD, 4);
}

static void unsupported(const char *why)
{
    if (rank == 0) {
        printf("# unsupported: %s\n", why);
        fflush(stdout);
    }
    MPI_Finalize();
    exit(0);
}

/* MPI_Win_allocate(_shared) with MPI_ERRORS_RETURN on comm: MPI_WIN_NULL on error. */
static MPI_Win win_alloc(MPI_Aint bytes, MPI_Comm comm, int shared, void *base)
{
    MPI_Win win = MPI_WIN_NULL;
    int rc, ok, all = 0;
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    if (shared)
        rc = MPI_Win_allocate_shared(bytes, 1, win_info, comm, base, &win);
    else
        rc = MPI_Win_allocate(bytes, 1, win_info, comm, base, &win);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_ARE_FATAL);
    /* All ranks agree (one rank failing alone would leave the others hanging). */
    ok = rc == MPI_SUCCESS;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, comm);
    if (!all) {
        if (rc == MPI_SUCCESS) MPI_Win_free(&win);
        return MPI_WIN_NULL;
    }
    return win;
}

/* Slowest rank's value, on rank 0. */
static double slowest(double t)
{
    double m = 0.0;
    MPI_Reduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    return m;
}

static void header(const char *title, const char *columns)
{
    if (rank == 0) {
        printf("# hympi-bench RMA: %s, %d ranks\n", title, nranks);
        printf("# Size      %s\n", columns);
        fflush(stdout);
    }
}

/* A timed loop: runs iterations first .. first + n - 1, returns the seconds taken. */
typedef double (*loop_fn)(void *ctx, long first, long n);

/*
 * Warm up and time f.  comm: the ranks that all run the loop (rank 0 of comm decides
 * the counts and broadcasts them), or MPI_COMM_NULL when only the caller runs it.
 * Returns the seconds of the timed part and its iteration count in *iters; *total is
 * the number of iterations run, warm-up included.
 */
static double timed(loop_fn f, void *ctx, MPI_Comm comm, long *iters, long *total)
{
    long first = 0, n;
    double t;
    if (opt_iters > 0) {
        long skip = opt_skip >= 0 ? opt_skip : opt_iters / 100;
        if (skip > 0) f(ctx, 0, skip);
        n = opt_iters;
        first = skip;
    } else {
        for (n = 8;; n *= 2) {
            t = f(ctx, first, n);
            first += n;
            if (comm != MPI_COMM_NULL) MPI_Bcast(&t, 1, MPI_DOUBLE, 0, comm);
            if (t >= CALIB_SECONDS || n >= (1L << 40)) break;
        }
        n = (long)(budget / (t > 0 ? t / (double)n : 1e-9));
        if (n < 1) n = 1;
        if (comm != MPI_COMM_NULL) MPI_Bcast(&n, 1, MPI_LONG, 0, comm);
    }
    if (comm != MPI_COMM_NULL) MPI_Barrier(comm);
    t = f(ctx, first, n);
    *iters = n;
    *total = first + n;
    return t;
}

/* ---- passive target from rank 0: put / acc / lock / lock_put ------------------------ */

struct passive {
    enum op op;
    long size;
    MPI_Win win;
    uint64_t *src;
};

static double passive_loop(void *vctx, long first, long n)
{
    struct passive *c = vctx;
    double one = 1.0, t0 = MPI_Wtime();
    long i;
    switch (c->op) {
    case OP_PUT:
        for (i = first; i < first + n; i++) {
            c->src[0] = (uint64_t)i + 1;
            MPI_Put(c->src, (int)c->size, MPI_BYTE, 1, 0, (int)c->size, MPI_BYTE, c->win);
            MPI_Win_flush(1, c->win);
        }
        break;
    case OP_ACC:
        for (i = first; i < first + n; i++) {
            MPI_Accumulate(&one, 1, MPI_DOUBLE, 1, 0, 1, MPI_DOUBLE, MPI_SUM, c->win);
            if ((i + 1) % ACC_FLUSH_EVERY == 0) MPI_Win_flush(1, c->win);
        }
        if ((first + n) % ACC_FLUSH_EVERY != 0) MPI_Win_flush(1, c->win);
        break;
    case OP_FOP:
        for (i = first; i < first + n; i++) {
            long add = 1, old = -1;
            MPI_Fetch_and_op(&add, &old, MPI_LONG, 1, 0, MPI_SUM, c->win);
            MPI_Win_flush(1, c->win);
            if (old != i) fail("fetched value");
        }
        break;
    case OP_CAS:
        for (i = first; i < first + n; i++) {
            long next = i + 1, expect = i, old = -1;
            MPI_Compare_and_swap(&next, &expect, &old, MPI_LONG, 1, 0, c->win);
            MPI_Win_flush(1, c->win);
            if (old != i) fail("compare-and-swap old value");
        }
        break;
    case OP_LOCK:
        for (i = first; i < first + n; i++) {
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, c->win);
            MPI_Win_unlock(1, c->win);
        }
        break;
    default:
        for (i = first; i < first + n; i++) {
            c->src[0] = (uint64_t)i + 1;
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, c->win);
            MPI_Put(c->src, 8, MPI_BYTE, 1, 0, 8, MPI_BYTE, c->win);
            MPI_Win_unlock(1, c->win);
        }
        break;
    }
    return MPI_Wtime() - t0;
}

static void passive_case(enum op op, long size)
{
    /* At least a page: with an 8-byte MPI_Win_allocate window MPICH 4.0.2 (ch4:ucx) gives
     * rank 1 a local address other than the memory remote puts reach. */
    MPI_Aint wbytes = size < MIN_WIN ? MIN_WIN : size;
    struct passive c;
    char *base = NULL;
    long iters = 0, total = 0;
    double t = 0.0;

    c.op = op;
    c.size = size;
    c.win = win_alloc(wbytes, MPI_COMM_WORLD, 0, &base);
    if (c.win == MPI_WIN_NULL) unsupported("MPI_Win_allocate failed");
    c.src = (uint64_t *)bench_alloc(wbytes, 0);
    if (!c.src) MPI_Abort(MPI_COMM_WORLD, 3);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, c.win);
    memset(base, 0, (size_t)wbytes);
    MPI_Win_unlock(rank, c.win);
    switch (op) {
    case OP_PUT:
        header("MPI_Put + MPI_Win_flush, passive target (lock_all held), rank 0 -> 1",
               "Time/op (us)");
        break;
    case OP_ACC:
        header("MPI_Accumulate(MPI_SUM, 1 MPI_DOUBLE), passive target (lock_all held), "
               "MPI_Win_flush every 100 ops, rank 0 -> 1",
               "Time/op (us)      Rate (Mops/s)");
        break;
    case OP_FOP:
        header("MPI_Fetch_and_op(MPI_SUM, 1 MPI_LONG) + MPI_Win_flush, passive target "
               "(lock_all held), rank 0 -> 1",
               "Time/op (us)");
        break;
    case OP_CAS:
        header("MPI_Compare_and_swap(1 MPI_LONG) + MPI_Win_flush, passive target "
               "(lock_all held), rank 0 -> 1",
               "Time/op (us)");
        break;
    case OP_LOCK:
        header("MPI_Win_lock(EXCLUSIVE, 1) + MPI_Win_unlock(1), empty epoch, rank 0",
               "Time/op (us)");
        break;
    default:
        header("MPI_Win_lock(EXCLUSIVE, 1) + 8 B MPI_Put + MPI_Win_unlock(1), rank 0",
               "Time/op (us)");
        break;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        int all = op == OP_PUT || op == OP_ACC || op == OP_FOP || op == OP_CAS;
        if (all) MPI_Win_lock_all(0, c.win);
        t = timed(passive_loop, &c, MPI_COMM_NULL, &iters, &total);
        if (all) MPI_Win_unlock_all(c.win);
    }
    MPI_Barrier(MPI_COMM_WORLD); /* rank 1 waits here */
    MPI_Bcast(&total, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    if (rank == 1 && op != OP_LOCK) {
        /* Read the target memory inside an epoch on self. */
        uint64_t got;
        double sum;
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, c.win);
        memcpy(&got, base, 8);
        memcpy(&sum, base, 8);
        MPI_Win_unlock(1, c.win);
        if (op == OP_ACC) {
            if (sum != (double)total) fail("accumulated sum");
        } else if (size >= 8 && got != (uint64_t)total) {
            fail("last value put");
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        double us = t * 1e6 / (double)iters;
        if (op == OP_ACC)
            printf("%-10ld%18.4f%19.3f\n", size, us, 1.0 / us);
        else
            printf("%-10ld%18.4f\n", op == OP_LOCK ? 0 : size, us);
        fflush(stdout);
    }
    MPI_Win_free(&c.win);
    free(c.src);
}

/* ---- every rank to rank 0: fop_all / acc_all --------------------------------------- */

struct contended {
    enum op op;
    MPI_Win win;
    long last; /* fop_all: the last value this rank fetched */
};

static double contended_loop(void *vctx, long first, long n)
{
    struct contended *c = vctx;
    double one = 1.0, t0 = MPI_Wtime();
    long i, add = 1, old = -1;
    for (i = first; i < first + n; i++) {
        if (c->op == OP_FOP_ALL) {
            MPI_Fetch_and_op(&add, &old, MPI_LONG, 0, 0, MPI_SUM, c->win);
            MPI_Win_flush(0, c->win);
            if (old < c->last) fail("fetched values go back");
            c->last = old + 1;
        } else {
            MPI_Accumulate(&one, 1, MPI_DOUBLE, 0, 8 * rank, 1, MPI_DOUBLE, MPI_SUM, c->win);
            if ((i + 1) % ACC_FLUSH_EVERY == 0) MPI_Win_flush(0, c->win);
        }
    }
    MPI_Win_flush(0, c->win);
    return MPI_Wtime() - t0;
}

static void contended_case(enum op op)
{
    struct contended c = {op, MPI_WIN_NULL, 0};
    char *base = NULL;
    long iters = 0, total = 0;
    double t;
    c.win = win_alloc(MIN_WIN, MPI_COMM_WORLD, 0, &base);
    if (c.win == MPI_WIN_NULL) unsupported("MPI_Win_allocate failed");
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, c.win);
    memset(base, 0, MIN_WIN);
    MPI_Win_unlock(rank, c.win);
    if (op == OP_FOP_ALL)
        header("MPI_Fetch_and_op(MPI_SUM, 1 MPI_LONG) + MPI_Win_flush from every rank to one "
               "counter on rank 0 (lock_all)",
               "Time/op (us)");
    else
        header("MPI_Accumulate(MPI_SUM, 1 MPI_DOUBLE) from every rank to its own element on "
               "rank 0 (lock_all, flush every 100)",
               "Time/op (us)");
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, c.win);
    t = timed(contended_loop, &c, MPI_COMM_WORLD, &iters, &total);
    MPI_Win_unlock_all(c.win);
    t = slowest(t);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, c.win);
        if (op == OP_FOP_ALL) {
            long v;
            memcpy(&v, base, 8);
            if (v != total * nranks) fail("counter total");
        } else {
            for (int r = 0; r < nranks; r++) {
                double v;
                memcpy(&v, base + 8 * r, 8);
                if (v != (double)total) fail("accumulated sums");
            }
        }
        MPI_Win_unlock(0, c.win);
        printf("%-10d%18.4f\n", 8, t * 1e6 / (double)iters);
        fflush(stdout);
    }
    MPI_Win_free(&c.win);
}

/* ---- active target: fence / fence_put ---------------------------------------------- */

struct fence {
    enum op op;
    MPI_Win win;
    uint64_t v;
};

static double fence_loop(void *vctx, long first, long n)
{
    struct fence *c = vctx;
    int next = (rank + 1) % nranks;
    double t0 = MPI_Wtime();
    long i;
    for (i = first; i < first + n; i++) {
        if (c->op == OP_FENCE_PUT) {
            c->v = (uint64_t)i + 1;
            MPI_Put(&c->v, 8, MPI_BYTE, next, 0, 8, MPI_BYTE, c->win);
        }
        MPI_Win_fence(0, c->win);
    }
    return MPI_Wtime() - t0;
}

static void fence_case(enum op op)
{
    struct fence c;
    char *base = NULL;
    long iters, total;
    uint64_t got;
    double t;

    c.op = op;
    c.win = win_alloc(MIN_WIN, MPI_COMM_WORLD, 0, &base);
    if (c.win == MPI_WIN_NULL) unsupported("MPI_Win_allocate failed");
    memset(base, 0, MIN_WIN);
    header(op == OP_FENCE ? "MPI_Win_fence, no operations (slowest rank)"
                          : "8 B MPI_Put to the next rank + MPI_Win_fence (slowest rank)",
           "Time/op (us)");
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_fence(MPI_MODE_NOPRECEDE, c.win);
    t = timed(fence_loop, &c, MPI_COMM_WORLD, &iters, &total);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, c.win);
    memcpy(&got, base, 8);
    if (got != (op == OP_FENCE_PUT ? (uint64_t)total : 0)) fail("value put before a fence");
    t = slowest(t);
    if (rank == 0) {
        printf("%-10d%18.4f\n", op == OP_FENCE ? 0 : 8, t * 1e6 / (double)iters);
        fflush(stdout);
    }
    MPI_Win_free(&c.win);
}

/* ---- get, put and accumulate bandwidth --------------------------------------------- */

enum bw_kind { BW_GET, BW_PUT, BW_ACC, BW_GETACC };

/* Per kind: the header's title and the time column's name. */
static const struct {
    const char *title, *column;
} BW_NAMES[] = {
    [BW_GET] = {"MPI_Get bandwidth, rank 0 reads rank 1", "Time/get (us)"},
    [BW_PUT] = {"MPI_Put bandwidth, rank 0 writes rank 1", "Time/put (us)"},
    [BW_ACC] = {"MPI_Accumulate(MPI_SUM, MPI_DOUBLE) bandwidth, rank 0 adds to rank 1",
                "Time/acc (us)"},
    [BW_GETACC] = {"MPI_Get_accumulate(MPI_SUM, MPI_DOUBLE) bandwidth, rank 0 adds to rank 1 "
                   "and fetches", "Time/getacc (us)"},
};

struct bw {
    enum bw_kind kind;
    MPI_Win win;
    char *dst; /* the local buffer: got into, or put (accumulated) from */
    char *res; /* fetched into (BW_GETACC) */
    long size;
    int window;
};

static double bw_loop(void *vctx, long first, long n)
{
    struct bw *c = vctx;
    int bytes = (int)c->size, doubles = (int)(c->size / 8);
    double t0 = MPI_Wtime();
    long i;
    int j;
    (void)first;
    for (i = 0; i < n; i++) {
        for (j = 0; j < c->window; j++) {
            switch (c->kind) {
            case BW_GET:
                MPI_Get(c->dst, bytes, MPI_BYTE, 1, 0, bytes, MPI_BYTE, c->win);
                break;
            case BW_PUT:
                MPI_Put(c->dst, bytes, MPI_BYTE, 1, 0, bytes, MPI_BYTE, c->win);
                break;
            case BW_ACC:
                MPI_Accumulate(c->dst, doubles, MPI_DOUBLE, 1, 0, doubles, MPI_DOUBLE, MPI_SUM,
                               c->win);
                break;
            case BW_GETACC:
                MPI_Get_accumulate(c->dst, doubles, MPI_DOUBLE, c->res, doubles, MPI_DOUBLE, 1, 0,
                                   doubles, MPI_DOUBLE, MPI_SUM, c->win);
                break;
            }
        }
        MPI_Win_flush(1, c->win);
    }
    return MPI_Wtime() - t0;
}

/* Checks at rank 1, after size index k of `kind` ran `calls` calls, what its window holds. */
static void bw_check_target(const struct bw *c, const char *base, int k, double calls)
{
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, c->win);
    if (c->kind == BW_PUT) {
        if (base[0] != (char)(k + 3) || base[c->size - 1] != (char)((c->size - 1) * 5 + k + 3))
            fail("bytes put");
    } else {
        const double *sum = (const double *)base;
        if (sum[0] != calls || sum[c->size / 8 - 1] != calls) fail("sums accumulated");
    }
    MPI_Win_unlock(1, c->win);
}

static void bw_case(const long *sizes, int nsizes, int window, enum bw_kind kind)
{
    struct bw c;
    long max = 0, j;
    char *base = NULL;
    int k, accumulates = kind == BW_ACC || kind == BW_GETACC;

    for (k = 0; k < nsizes; k++)
        if (sizes[k] > max) max = sizes[k];
    c.kind = kind;
    c.window = window;
    c.win = win_alloc(max < MIN_WIN ? MIN_WIN : max, MPI_COMM_WORLD, 0, &base);
    if (c.win == MPI_WIN_NULL) unsupported("MPI_Win_allocate failed");
    c.dst = bench_alloc(max, 0);
    c.res = kind == BW_GETACC ? bench_alloc(max, 0) : NULL;
    if (!c.dst || (kind == BW_GETACC && !c.res)) MPI_Abort(MPI_COMM_WORLD, 3);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, c.win);
    for (j = 0; j < max; j++) base[j] = (char)(j * 7 + rank);
    MPI_Win_unlock(rank, c.win);
    if (rank == 0) {
        printf("# hympi-bench RMA: %s (lock_all held, %d calls + MPI_Win_flush per iteration), "
               "%d ranks\n", BW_NAMES[kind].title, window, nranks);
        printf("# Size      Bandwidth (GB/s)     %s\n", BW_NAMES[kind].column);
        fflush(stdout);
    }
    for (k = 0; k < nsizes; k++) {
        long iters = 0, total = 0;
        double t = 0, calls = 0;
        c.size = sizes[k];
        if (accumulates && rank == 1) {
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, c.win);
            memset(base, 0, (size_t)c.size);
            MPI_Win_unlock(1, c.win);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            if (accumulates)
                for (j = 0; j < c.size / 8; j++) ((double *)c.dst)[j] = 1.0;
            else if (kind == BW_PUT)
                for (j = 0; j < c.size; j++) c.dst[j] = (char)(j * 5 + k + 3);
            else
                memset(c.dst, 0, (size_t)c.size);
            MPI_Win_lock_all(0, c.win);
            t = timed(bw_loop, &c, MPI_COMM_NULL, &iters, &total);
            MPI_Win_unlock_all(c.win);
            calls = (double)total * (double)window;
            if (kind == BW_GET &&
                (c.dst[0] != (char)1 || c.dst[c.size - 1] != (char)((c.size - 1) * 7 + 1)))
                fail("bytes got");
            if (kind == BW_GETACC) {
                /* The last iteration's calls fetched the sums of the calls before each; they
                 * all wrote the one result buffer, in an order MPI leaves open. */
                double last = calls - 1.0, lo = last - window + 1;
                const double *r = (const double *)c.res;
                if (r[0] < lo || r[0] > last || r[c.size / 8 - 1] < lo ||
                    r[c.size / 8 - 1] > last)
                    fail("values fetched");
            }
            printf("%-10ld%18.3f%18.3f\n", c.size,
                   (double)c.size * (double)window * (double)iters / t / 1e9,
                   t * 1e6 / ((double)window * (double)iters));
            fflush(stdout);
        }
        if (kind != BW_GET) {
            MPI_Bcast(&calls, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
            if (rank == 1) bw_check_target(&c, base, k, calls);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&c.win);
    free(c.dst);
    free(c.res);
}

/* ---- halo exchange -------------------------------------------------------------------- */

struct halo {
    enum op op;
    MPI_Comm node;
    MPI_Win win;
    int me, left, right;
    long n;               /* doubles per side */
    double *mine;         /* own boundaries: [parity][left, right] (halo_shm) or [left, right] */
    double *lbase, *rbase; /* neighbours' window segments (halo_shm) */
    double *hl, *hr;      /* private halo buffers */
};

/* Element 0 of boundary `side` (0 left, 1 right) that rank r writes at iteration it;
 * element j is that + j. */
static inline double hval(long it, int side, int r)
{
    return (double)((it * 2 + side) * 64 + (r & 63)) * 2097152.0;
}

static void fill(double *b, long n, double v)
{
    long j;
    for (j = 0; j < n; j++) b[j] = v + (double)j;
}

static void check_halo(const double *h, long n, double v)
{
    if (h[0] != v || h[n - 1] != v + (double)(n - 1)) fail("halo contents");
}

static double halo_loop(void *vctx, long first, long n)
{
    struct halo *c = vctx;
    size_t bytes = (size_t)c->n * sizeof(double);
    double t0 = MPI_Wtime();
    long it;
    for (it = first; it < first + n; it++) {
        if (c->op == OP_HALO_SHM) {
            long p = (it & 1) * 2 * c->n;
            fill(c->mine + p, c->n, hval(it, 0, c->me));
            fill(c->mine + p + c->n, c->n, hval(it, 1, c->me));
            MPI_Win_sync(c->win);
            MPI_Barrier(c->node);
            MPI_Win_sync(c->win);
            memcpy(c->hl, c->lbase + p + c->n, bytes); /* left neighbour's right boundary */
            memcpy(c->hr, c->rbase + p, bytes);        /* right neighbour's left boundary */
        } else {
            fill(c->mine, c->n, hval(it, 0, c->me));
            fill(c->mine + c->n, c->n, hval(it, 1, c->me));
            MPI_Sendrecv(c->mine + c->n, (int)c->n, MPI_DOUBLE, c->right, 1, c->hl, (int)c->n,
                         MPI_DOUBLE, c->left, 1, c->node, MPI_STATUS_IGNORE);
            MPI_Sendrecv(c->mine, (int)c->n, MPI_DOUBLE, c->left, 2, c->hr, (int)c->n,
                         MPI_DOUBLE, c->right, 2, c->node, MPI_STATUS_IGNORE);
        }
        check_halo(c->hl, c->n, hval(it, 1, c->left));
        check_halo(c->hr, c->n, hval(it, 0, c->right));
    }
    return MPI_Wtime() - t0;
}

static void halo_case(enum op op, long size)
{
    struct halo c;
    int np;
    long iters, total;
    double t;

    if (size % 8 != 0 || size / 8 > 2097152) {
        if (rank == 0) fprintf(stderr, "halo size must be a multiple of 8 B, at most 16 MiB\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    c.op = op;
    c.n = size / 8;
    c.win = MPI_WIN_NULL;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &c.node);
    MPI_Comm_rank(c.node, &c.me);
    MPI_Comm_size(c.node, &np);
    if (op == OP_HALO_SHM) {
        int all = 0, ok = np == nranks;
        MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
        if (!all) unsupported("the ranks do not share one node (MPI_COMM_TYPE_SHARED)");
    }
    c.left = (c.me + np - 1) % np;
    c.right = (c.me + 1) % np;
    c.hl = (double *)bench_alloc(size, 0);
    c.hr = (double *)bench_alloc(size, 0);
    if (!c.hl || !c.hr) MPI_Abort(MPI_COMM_WORLD, 3);
    if (op == OP_HALO_SHM) {
        MPI_Aint qsize;
        int qdisp;
        c.win = win_alloc((MPI_Aint)(4 * size), c.node, 1, &c.mine);
        if (c.win == MPI_WIN_NULL) unsupported("MPI_Win_allocate_shared failed");
        MPI_Win_shared_query(c.win, c.left, &qsize, &qdisp, &c.lbase);
        MPI_Win_shared_query(c.win, c.right, &qsize, &qdisp, &c.rbase);
        memset(c.mine, 0, (size_t)(4 * size));
    } else {
        c.mine = (double *)bench_alloc(2 * size, 0);
        if (!c.mine) MPI_Abort(MPI_COMM_WORLD, 3);
    }
    if (rank == 0) {
        printf("# hympi-bench RMA: 1-D ring halo exchange, %ld B of doubles per side, %s, "
               "%d ranks (slowest rank)\n", size,
               op == OP_HALO_SHM ? "MPI_Win_allocate_shared load/store + MPI_Win_sync + "
                                   "MPI_Barrier"
                                 : "2 x MPI_Sendrecv", nranks);
        printf("# Size      Time/iter (us)\n");
        fflush(stdout);
    }
    if (op == OP_HALO_SHM) MPI_Win_lock_all(MPI_MODE_NOCHECK, c.win);
    MPI_Barrier(MPI_COMM_WORLD);
    t = timed(halo_loop, &c, MPI_COMM_WORLD, &iters, &total);
    if (op == OP_HALO_SHM) MPI_Win_unlock_all(c.win);
    t = slowest(t);
    if (rank == 0) {
        printf("%-10ld%18.3f\n", size, t * 1e6 / (double)iters);
        fflush(stdout);
    }
    if (op == OP_HALO_SHM)
        MPI_Win_free(&c.win);
    else
        free(c.mine);
    free(c.hl);
    free(c.hr);
    MPI_Comm_free(&c.node);
}

int main(int argc, char **argv)
{
    long sizes[BENCH_MAX_SIZES];
    int nsizes = 0, window = 16, c, k, ci;
    const int ncases = (int)(sizeof(CASES) / sizeof(CASES[0]));
    const char *opname = "put";
    enum op op;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    while ((c = getopt(argc, argv, "o:s:t:i:x:w:g:h")) != -1) {
        switch (c) {
        case 'o': opname = optarg; break;
        case 's': {
            char *copy = strdup(optarg), *save = NULL, *tok;
            for (tok = strtok_r(copy, ",", &save); tok && nsizes < BENCH_MAX_SIZES;
                 tok = strtok_r(NULL, ",", &save))
                sizes[nsizes++] = atol(tok);
            free(copy);
            break;
        }
        case 't': budget = atof(optarg); break;
        case 'i': opt_iters = atol(optarg); break;
        case 'x': opt_skip = atol(optarg); break;
        case 'w': window = atoi(optarg); break;
        case 'g':
            if (win_info == MPI_INFO_NULL) MPI_Info_create(&win_info);
            MPI_Info_set(win_info, "mpi_accumulate_granularity", optarg);
            break;
        default:
            if (rank == 0)
                fprintf(stderr, "usage: %s [-o put|acc|fence|fence_put|lock|lock_put|get|put_bw|acc_bw|getacc_bw|"
                                "halo_shm|halo_sendrecv] [-s sizes] [-t seconds] [-i iters] "
                                "[-x skip] [-w gets per flush]\n", argv[0]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    for (ci = 0; ci < ncases; ci++)
        if (strcmp(CASES[ci].name, opname) == 0) break;
    if (ci == ncases) {
        if (rank == 0) fprintf(stderr, "unknown case %s\n", opname);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (nranks < 2) {
        if (rank == 0) fprintf(stderr, "this benchmark needs at least 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (window < 1 || budget <= 0 || opt_iters == 0 || opt_iters < -1 || opt_skip < -1) {
        if (rank == 0) fprintf(stderr, "bad -w, -t, -i or -x\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (k = 0; k < nsizes; k++)
        if (sizes[k] < 1 || sizes[k] > (1L << 30)) {
            if (rank == 0) fprintf(stderr, "bad size %ld\n", sizes[k]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    op = CASES[ci].op;
    switch (op) {
    case OP_PUT:
    case OP_ACC:
    case OP_FOP:
    case OP_CAS:
    case OP_LOCK:
    case OP_LOCK_PUT:
        passive_case(op, op == OP_PUT && nsizes ? sizes[0] : 8);
        break;
    case OP_FENCE:
    case OP_FENCE_PUT:
        fence_case(op);
        break;
    case OP_GET:
    case OP_PUT_BW:
    case OP_ACC_BW:
    case OP_GETACC_BW:
        if (!nsizes) {
            sizes[nsizes++] = 64L * 1024;
            sizes[nsizes++] = 1024L * 1024;
            sizes[nsizes++] = 4L * 1024 * 1024;
        }
        bw_case(sizes, nsizes, window,
                op == OP_PUT_BW      ? BW_PUT
                : op == OP_ACC_BW    ? BW_ACC
                : op == OP_GETACC_BW ? BW_GETACC
                                     : BW_GET);
        break;
    case OP_FOP_ALL:
    case OP_ACC_ALL:
        contended_case(op);
        break;
    default:
        halo_case(op, nsizes ? sizes[0] : 64L * 1024);
        break;
    }
    MPI_Finalize();
    return 0;
}
