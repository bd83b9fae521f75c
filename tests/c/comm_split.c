/* comm_split: MPI_Comm_split.
 *
 * Every case computes the expected members (world ranks in new-rank order: by key, ties by
 * rank in the parent) and checks them by messages on the new communicator (ring and
 * gather, mtest_comm.h):
 *  - by parity, key = rank;
 *  - by rank % 3 with key = -rank (reversed order);
 *  - one color, equal keys (order of the parent);
 *  - one color, key = rank % 2 (ties broken by parent rank: evens, then odds);
 *  - MPI_UNDEFINED on some ranks: those get MPI_COMM_NULL;
 *  - all ranks MPI_UNDEFINED;
 *  - nested: a split of the parity split, by its own ranks' parity, reversed;
 *  - a split of MPI_COMM_SELF (color 0 and MPI_UNDEFINED);
 *  - several results alive at once keep working (traffic on each after all were made);
 *  - a negative color other than MPI_UNDEFINED is erroneous (not tested: the standard
 *    makes it erroneous but names no error class). */
#include "mtest.h"
#include "mtest_comm.h"

#define MAXP 64

static int world[MAXP];

/* Split parent (whose members are the world ranks pm[0..n-1]) with color[]/key[] indexed by
 * parent rank; check the result of the calling process (parent rank prank). */
static MPI_Comm split_and_check(MPI_Comm parent, const int *pm, int n, const int *color,
                                const int *key, const char *what)
{
    int prank = -1;
    MPI_Comm_rank(parent, &prank);
    MPI_Comm nc = MPI_COMM_NULL;
    int rc = MPI_Comm_split(parent, color[prank], key[prank], &nc);
    CHECK_RC(rc, "MPI_Comm_split");
    if (color[prank] == MPI_UNDEFINED) {
        CHECK(nc == MPI_COMM_NULL, "%s: MPI_UNDEFINED did not give MPI_COMM_NULL", what);
        return MPI_COMM_NULL;
    }
    int exp[MAXP];
    int m = MTest_Split_members(n, pm, color, key, color[prank], exp);
    MTest_Check_members(nc, exp, m, what);
    return nc;
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    int size = mtest_size, rank = mtest_rank;
    int color[MAXP], key[MAXP];
    if (size > MAXP) {
        printf("at most %d ranks\n", MAXP);
        return MTest_Finalize(1);
    }
    for (int i = 0; i < size; i++)
        world[i] = i;

    /* Parity. */
    for (int i = 0; i < size; i++) {
        color[i] = i % 2;
        key[i] = i;
    }
    MPI_Comm par = split_and_check(MPI_COMM_WORLD, world, size, color, key, "parity");

    /* rank % 3, reversed. */
    for (int i = 0; i < size; i++) {
        color[i] = i % 3;
        key[i] = -i;
    }
    MPI_Comm mod3 = split_and_check(MPI_COMM_WORLD, world, size, color, key, "rank%3 reversed");

    /* Equal keys. */
    for (int i = 0; i < size; i++) {
        color[i] = 7;
        key[i] = 0;
    }
    MPI_Comm same = split_and_check(MPI_COMM_WORLD, world, size, color, key, "equal keys");

    /* Ties broken by parent rank. */
    for (int i = 0; i < size; i++) {
        color[i] = 0;
        key[i] = i % 2;
    }
    MPI_Comm ties = split_and_check(MPI_COMM_WORLD, world, size, color, key, "key rank%2");

    /* Large and negative keys. */
    for (int i = 0; i < size; i++) {
        color[i] = 1000000 + (i % 2);
        key[i] = (i % 2) ? -2000000000 + i : 2000000000 - i;
    }
    MPI_Comm big = split_and_check(MPI_COMM_WORLD, world, size, color, key, "large keys");

    /* MPI_UNDEFINED on rank 0 and every rank % 4 == 3. */
    for (int i = 0; i < size; i++) {
        color[i] = (i == 0 || i % 4 == 3) ? MPI_UNDEFINED : 3;
        key[i] = size - i;
    }
    MPI_Comm undef = split_and_check(MPI_COMM_WORLD, world, size, color, key, "some undefined");

    /* Everyone MPI_UNDEFINED. */
    for (int i = 0; i < size; i++) {
        color[i] = MPI_UNDEFINED;
        key[i] = i;
    }
    split_and_check(MPI_COMM_WORLD, world, size, color, key, "all undefined");

    /* Nested: split the parity communicator by its own ranks' parity, reversed. */
    {
        int pm[MAXP], n = 0;
        for (int i = 0; i < size; i++)
            if (i % 2 == rank % 2)
                pm[n++] = i;
        int c2[MAXP], k2[MAXP];
        for (int i = 0; i < n; i++) {
            c2[i] = i % 2;
            k2[i] = n - i;
        }
        MPI_Comm nested = split_and_check(par, pm, n, c2, k2, "split of the parity split");
        /* And once more: all of it, keyed to restore the order. */
        int pm2[MAXP], n2 = 0, c3[MAXP], k3[MAXP];
        int prank = -1;
        MPI_Comm_rank(par, &prank);
        n2 = MTest_Split_members(n, pm, c2, k2, c2[prank], pm2);
        for (int i = 0; i < n2; i++) {
            c3[i] = 0;
            k3[i] = pm2[i];
        }
        MPI_Comm nested2 = split_and_check(nested, pm2, n2, c3, k3, "split of a split of a split");
        MTest_Free_comm(&nested2, "MPI_Comm_free (nested2)");
        MTest_Free_comm(&nested, "MPI_Comm_free (nested)");
    }

    /* SELF. */
    {
        int me[1] = {rank}, c = 0, k = 0;
        MPI_Comm s = split_and_check(MPI_COMM_SELF, me, 1, &c, &k, "split of SELF");
        MTest_Free_comm(&s, "MPI_Comm_free (split of SELF)");
        c = MPI_UNDEFINED;
        split_and_check(MPI_COMM_SELF, me, 1, &c, &k, "split of SELF, undefined");
    }

    /* All results still work, in another order than they were made. */
    {
        int exp[MAXP], m;
        for (int i = 0; i < size; i++) {
            color[i] = 0;
            key[i] = i % 2;
        }
        m = MTest_Split_members(size, world, color, key, 0, exp);
        MTest_Check_members(ties, exp, m, "key rank%2, later");
        for (int i = 0; i < size; i++) {
            color[i] = i % 2;
            key[i] = i;
        }
        m = MTest_Split_members(size, world, color, key, rank % 2, exp);
        MTest_Check_members(par, exp, m, "parity, later");
        MTest_Check_members(same, world, size, "equal keys, later");
    }

    MTest_Free_comm(&par, "MPI_Comm_free (parity)");
    MTest_Free_comm(&mod3, "MPI_Comm_free (mod3)");
    MTest_Free_comm(&same, "MPI_Comm_free (same)");
    MTest_Free_comm(&ties, "MPI_Comm_free (ties)");
    MTest_Free_comm(&big, "MPI_Comm_free (big)");
    MTest_Free_comm(&undef, "MPI_Comm_free (undef)");
    return MTest_Finalize(0);
}
