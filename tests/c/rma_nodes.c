/* rma_nodes: one-sided communication whose ranks may sit on different nodes (run in network
 * mode, `-ppn 1` / `-ppn 2`, and on one node).  What the other rma_* programs leave out:
 *
 *  - Exclusive locks exclude: every rank does a non-atomic read-modify-write (MPI_Get,
 *    flush, +1, MPI_Put) of a counter on rank 0 and on the last rank 100 times, each under
 *    MPI_Win_lock(MPI_LOCK_EXCLUSIVE); the totals are exactly size*100.  Shared locks of
 *    several ranks are held at once (each reads while all others hold theirs: a barrier
 *    inside the epoch).
 *  - A target makes progress while it blocks in another call: rank 0 waits in MPI_Recv for a
 *    message the last rank sends only after it locked rank 0, put to it, fetched from it and
 *    unlocked; rank 0 then sees the data.
 *  - Large transfers: 4 MiB MPI_Put and MPI_Get to the right neighbour, the target side a
 *    strided vector (every other double), checked element by element; an MPI_Accumulate of
 *    1 MiB of doubles from every rank to rank 0 (sum checked).
 *  - MPI_Win_allocate_shared on MPI_COMM_WORLD: succeeds when all ranks share a node, and
 *    fails with MPI_ERR_RMA_SHARED when they do not (the MPI_COMM_TYPE_SHARED split tells).
 *  - PSCW where each rank exposes to its left neighbour and accesses its right one (the
 *    pairs cross nodes in network mode), five rounds, with MPI_Win_test polling. */
#include "mtest.h"
#include <stdlib.h>
#include <string.h>

static int me, np;

static void exclusive_counter(void)
{
    int *base, rc;
    MPI_Win w;
    rc = MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                          &w);
    CHECK_RC(rc, "MPI_Win_allocate");
    base[0] = base[1] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    int targets[2] = {0, np - 1};
    for (int i = 0; i < 100; i++) {
        for (int k = 0; k < 2; k++) {
            int t = targets[k], v = -1;
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, w);
            MPI_Get(&v, 1, MPI_INT, t, k, 1, MPI_INT, w);
            MPI_Win_flush(t, w);
            v++;
            MPI_Put(&v, 1, MPI_INT, t, k, 1, MPI_INT, w);
            MPI_Win_unlock(t, w);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0)
        CHECK(base[0] == np * 100, "counter on rank 0: %d, expected %d", base[0], np * 100);
    if (me == np - 1)
        CHECK(base[1] == np * 100, "counter on the last rank: %d, expected %d", base[1],
              np * 100);
    /* Shared locks: all ranks hold rank 0's at once. */
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, w);
    MPI_Barrier(MPI_COMM_WORLD);
    int v = -1;
    MPI_Get(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, w);
    MPI_Win_unlock(0, w);
    CHECK(v == np * 100, "shared-lock read: %d", v);
    MPI_Win_free(&w);
}

static void target_progress(void)
{
    int *base, rc;
    MPI_Win w;
    rc = MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                          &w);
    CHECK_RC(rc, "MPI_Win_allocate");
    for (int i = 0; i < 4; i++)
        base[i] = 10 + i;
    MPI_Barrier(MPI_COMM_WORLD);
    if (np > 1 && me == np - 1) {
        int vals[2] = {77, 88}, got = -1, one = 1, old = -1;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, w);
        MPI_Put(vals, 2, MPI_INT, 0, 0, 2, MPI_INT, w);
        MPI_Get(&got, 1, MPI_INT, 0, 3, 1, MPI_INT, w);
        MPI_Fetch_and_op(&one, &old, MPI_INT, 0, 2, MPI_SUM, w);
        MPI_Win_unlock(0, w);
        CHECK(got == 13, "get while the target blocks in MPI_Recv: %d", got);
        CHECK(old == 12, "fetch_and_op while the target blocks in MPI_Recv: %d", old);
        MPI_Send(&got, 1, MPI_INT, 0, 5, MPI_COMM_WORLD);
    } else if (np > 1 && me == 0) {
        int x;
        MPI_Recv(&x, 1, MPI_INT, np - 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, w);
        CHECK(base[0] == 77 && base[1] == 88 && base[2] == 13,
              "rank 0 after the put: %d %d %d", base[0], base[1], base[2]);
        MPI_Win_unlock(0, w);
    }
    MPI_Win_free(&w);
}

static void large(void)
{
    const int n = 512 * 1024; /* doubles in 4 MiB */
    double *mem;
    int rc;
    MPI_Win w;
    rc = MPI_Win_allocate(2 * (MPI_Aint)n * sizeof(double), sizeof(double), MPI_INFO_NULL,
                          MPI_COMM_WORLD, &mem, &w);
    CHECK_RC(rc, "MPI_Win_allocate (8 MiB)");
    for (int i = 0; i < 2 * n; i++)
        mem[i] = -1.0;
    double *src = malloc(n * sizeof(double)), *back = malloc(n * sizeof(double));
    for (int i = 0; i < n; i++)
        src[i] = me * 1e6 + i;
    MPI_Datatype every_other;
    MPI_Type_vector(n, 1, 2, MPI_DOUBLE, &every_other);
    MPI_Type_commit(&every_other);
    int right = (me + 1) % np, left = (me + np - 1) % np;
    MPI_Win_fence(0, w);
    MPI_Put(src, n, MPI_DOUBLE, right, 0, 1, every_other, w);
    MPI_Win_fence(0, w);
    int bad = 0;
    for (int i = 0; i < n && bad < 5; i++) {
        if (mem[2 * i] != left * 1e6 + i || mem[2 * i + 1] != -1.0) {
            CHECK(0, "strided put: element %d is %g/%g", i, mem[2 * i], mem[2 * i + 1]);
            bad++;
        }
    }
    MPI_Get(back, n, MPI_DOUBLE, right, 0, 1, every_other, w);
    MPI_Win_fence(0, w);
    for (int i = 0; i < n && bad < 10; i++) {
        if (back[i] != me * 1e6 + i) {
            CHECK(0, "strided get: element %d is %g", i, back[i]);
            bad++;
        }
    }
    /* 1 MiB accumulate from everyone to rank 0's second half. */
    const int m = 128 * 1024;
    if (me == 0)
        for (int i = 0; i < m; i++)
            mem[n + i] = 0.0;
    MPI_Win_fence(0, w);
    for (int i = 0; i < m; i++)
        src[i] = (double)(me + 1) * (i % 7);
    MPI_Accumulate(src, m, MPI_DOUBLE, 0, n, m, MPI_DOUBLE, MPI_SUM, w);
    MPI_Win_fence(0, w);
    if (me == 0) {
        double ranks = (double)np * (np + 1) / 2;
        for (int i = 0; i < m && bad < 15; i++) {
            if (mem[n + i] != ranks * (i % 7)) {
                CHECK(0, "accumulate: element %d is %g, expected %g", i, mem[n + i],
                      ranks * (i % 7));
                bad++;
            }
        }
    }
    MPI_Type_free(&every_other);
    free(src);
    free(back);
    MPI_Win_free(&w);
}

static void shared_on_world(void)
{
    MPI_Comm node;
    int nsize;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &nsize);
    MPI_Comm_free(&node);
    int *base;
    MPI_Win w;
    MTest_Errors_return(MPI_COMM_WORLD);
    int rc = MPI_Win_allocate_shared(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                                     &base, &w);
    if (nsize == np) {
        CHECK_RC(rc, "MPI_Win_allocate_shared on one node");
        if (rc == MPI_SUCCESS)
            MPI_Win_free(&w);
    } else {
        CHECK_CLASS(rc, MPI_ERR_RMA_SHARED, "MPI_Win_allocate_shared across nodes");
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void pscw(void)
{
    int *base, rc;
    MPI_Win w;
    /* 4 ints: MPICH 4.0 misplaces puts into allocate windows not a multiple of 16 bytes. */
    rc = MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                          &w);
    CHECK_RC(rc, "MPI_Win_allocate");
    *base = -1;
    int right = (me + 1) % np, left = (me + np - 1) % np;
    MPI_Group world, gl, gr;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &left, &gl);
    MPI_Group_incl(world, 1, &right, &gr);
    for (int round = 0; round < 5; round++) {
        MPI_Win_post(gl, 0, w);
        MPI_Win_start(gr, 0, w);
        int v = me * 100 + round;
        MPI_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, w);
        MPI_Win_complete(w);
        int flag = 0;
        while (!flag)
            MPI_Win_test(w, &flag);
        CHECK(*base == left * 100 + round, "PSCW round %d: %d", round, *base);
    }
    MPI_Group_free(&gl);
    MPI_Group_free(&gr);
    MPI_Group_free(&world);
    MPI_Win_free(&w);
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    exclusive_counter();
    target_progress();
    large();
    shared_on_world();
    pscw();
    return MTest_Finalize(0);
}
