/* group_ops: every MPI_Group_* function on groups derived from MPI_COMM_WORLD.
 *
 * Comm_group of WORLD and SELF; size, rank (MPI_UNDEFINED for non-members); incl/excl and
 * range_incl/range_excl (positive and negative strides, a stride that overshoots `last`);
 * union/intersection/difference keep the standard's order (group1 first, then group2's
 * extra members in group2's order); translate_ranks maps MPI_PROC_NULL to MPI_PROC_NULL and
 * non-members to MPI_UNDEFINED; compare gives MPI_IDENT/MPI_SIMILAR/MPI_UNEQUAL; empty results
 * compare MPI_IDENT to MPI_GROUP_EMPTY; Group_free sets the handle to MPI_GROUP_NULL and
 * MPI_GROUP_EMPTY may be freed like any group a call returned. */
#include "mtest.h"

/* The world ranks (ranks in `ref`) of the members of g, in order. */
static void members(MPI_Group g, MPI_Group ref, int *out, int *n)
{
    MPI_Group_size(g, n);
    int *r = malloc(sizeof(int) * (*n + 1));
    for (int i = 0; i < *n; i++)
        r[i] = i;
    MPI_Group_translate_ranks(g, *n, r, ref, out);
    free(r);
}

/* g has exactly the world ranks want[0..n), in that order. */
static void expect(MPI_Group g, MPI_Group world, const int *want, int n, const char *what)
{
    int got[64], m = -1;
    members(g, world, got, &m);
    if (!CHECK(m == n, "%s: size %d, expected %d", what, m, n))
        return;
    for (int i = 0; i < n; i++)
        CHECK(got[i] == want[i], "%s: member %d is world rank %d, expected %d", what, i, got[i], want[i]);
    int cmp = -1;
    if (n == 0) {
        MPI_Group_compare(g, MPI_GROUP_EMPTY, &cmp);
        CHECK(cmp == MPI_IDENT, "%s: empty result does not compare MPI_IDENT to MPI_GROUP_EMPTY", what);
    }
}

static void release(MPI_Group *g)
{
    int rc = MPI_Group_free(g);
    CHECK_RC(rc, "MPI_Group_free");
    CHECK(*g == MPI_GROUP_NULL, "MPI_Group_free did not set the handle to MPI_GROUP_NULL");
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    int rank = mtest_rank, size = mtest_size, rc, x, cmp;
    int want[64];
    MPI_Group world, self, g, h, u;

    rc = MPI_Comm_group(MPI_COMM_WORLD, &world);
    CHECK_RC(rc, "MPI_Comm_group(WORLD)");
    MPI_Group_size(world, &x);
    CHECK(x == size, "world group size %d, expected %d", x, size);
    MPI_Group_rank(world, &x);
    CHECK(x == rank, "world group rank %d, expected %d", x, rank);

    rc = MPI_Comm_group(MPI_COMM_SELF, &self);
    CHECK_RC(rc, "MPI_Comm_group(SELF)");
    MPI_Group_size(self, &x);
    CHECK(x == 1, "self group size %d", x);
    MPI_Group_rank(self, &x);
    CHECK(x == 0, "self group rank %d", x);
    int zero = 0, t = -1;
    MPI_Group_translate_ranks(self, 1, &zero, world, &t);
    CHECK(t == rank, "self's rank 0 is world rank %d, expected %d", t, rank);

    /* A second Comm_group of the same communicator is identical. */
    MPI_Comm_group(MPI_COMM_WORLD, &g);
    MPI_Group_compare(world, g, &cmp);
    CHECK(cmp == MPI_IDENT, "two groups of WORLD compare %d, expected MPI_IDENT", cmp);
    release(&g);

    /* EMPTY. */
    MPI_Group_size(MPI_GROUP_EMPTY, &x);
    CHECK(x == 0, "MPI_GROUP_EMPTY size %d", x);
    MPI_Group_rank(MPI_GROUP_EMPTY, &x);
    CHECK(x == MPI_UNDEFINED, "rank in MPI_GROUP_EMPTY is %d, expected MPI_UNDEFINED", x);

    /* incl: the world in reverse order. */
    int rev[64];
    for (int i = 0; i < size; i++)
        rev[i] = size - 1 - i;
    rc = MPI_Group_incl(world, size, rev, &g);
    CHECK_RC(rc, "MPI_Group_incl(reverse)");
    expect(g, world, rev, size, "incl(reverse)");
    MPI_Group_rank(g, &x);
    CHECK(x == size - 1 - rank, "rank in the reversed group %d, expected %d", x, size - 1 - rank);
    MPI_Group_compare(world, g, &cmp);
    CHECK(cmp == (size == 1 ? MPI_IDENT : MPI_SIMILAR), "world vs reversed: %d", cmp);
    /* range_incl with a negative stride gives the same group. */
    int rr[1][3] = {{size - 1, 0, -1}};
    rc = MPI_Group_range_incl(world, 1, rr, &h);
    CHECK_RC(rc, "MPI_Group_range_incl(size-1, 0, -1)");
    MPI_Group_compare(g, h, &cmp);
    CHECK(cmp == MPI_IDENT, "range_incl(reverse) vs incl(reverse): %d", cmp);
    release(&h);
    release(&g);

    /* incl of nothing is empty; excl of nothing is the same group. */
    rc = MPI_Group_incl(world, 0, NULL, &g);
    CHECK_RC(rc, "MPI_Group_incl(n=0)");
    expect(g, world, want, 0, "incl(n=0)");
    release(&g);
    rc = MPI_Group_excl(world, 0, NULL, &g);
    CHECK_RC(rc, "MPI_Group_excl(n=0)");
    MPI_Group_compare(world, g, &cmp);
    CHECK(cmp == MPI_IDENT, "excl(n=0) vs world: %d", cmp);
    release(&g);

    /* Even ranks by range, odd ranks by excluding them. */
    int ne = 0, no = 0, evens[64], odds[64];
    for (int i = 0; i < size; i++) {
        if (i % 2 == 0)
            evens[ne++] = i;
        else
            odds[no++] = i;
    }
    int re[1][3] = {{0, size - 1, 2}}; /* last may be odd: the stride stops before it */
    rc = MPI_Group_range_incl(world, 1, re, &g);
    CHECK_RC(rc, "MPI_Group_range_incl(evens)");
    expect(g, world, evens, ne, "range_incl(evens)");
    rc = MPI_Group_range_excl(world, 1, re, &h);
    CHECK_RC(rc, "MPI_Group_range_excl(evens)");
    expect(h, world, odds, no, "range_excl(evens)");
    MPI_Group_rank(g, &x);
    CHECK(x == (rank % 2 == 0 ? rank / 2 : MPI_UNDEFINED), "rank in evens: %d", x);
    MPI_Group_rank(h, &x);
    CHECK(x == (rank % 2 == 1 ? rank / 2 : MPI_UNDEFINED), "rank in odds: %d", x);

    /* Set operations. evens ∪ odds = evens then odds; odds ∪ world = odds then evens. */
    int eo[64], n = 0;
    for (int i = 0; i < ne; i++)
        eo[n++] = evens[i];
    for (int i = 0; i < no; i++)
        eo[n++] = odds[i];
    rc = MPI_Group_union(g, h, &u);
    CHECK_RC(rc, "MPI_Group_union(evens, odds)");
    expect(u, world, eo, size, "union(evens, odds)");
    MPI_Group_compare(u, world, &cmp);
    CHECK(cmp == (size <= 2 ? MPI_IDENT : MPI_SIMILAR), "union(evens, odds) vs world: %d", cmp);
    release(&u);
    n = 0;
    for (int i = 0; i < no; i++)
        want[n++] = odds[i];
    for (int i = 0; i < ne; i++)
        want[n++] = evens[i];
    rc = MPI_Group_union(h, world, &u);
    CHECK_RC(rc, "MPI_Group_union(odds, world)");
    expect(u, world, want, size, "union(odds, world)");
    release(&u);
    rc = MPI_Group_intersection(g, h, &u);
    CHECK_RC(rc, "MPI_Group_intersection(evens, odds)");
    expect(u, world, want, 0, "intersection(evens, odds)");
    release(&u);
    /* intersection keeps group1's order. */
    MPI_Group rg;
    MPI_Group_incl(world, size, rev, &rg);
    rc = MPI_Group_intersection(rg, g, &u);
    CHECK_RC(rc, "MPI_Group_intersection(reverse, evens)");
    for (int i = 0; i < ne; i++)
        want[i] = evens[ne - 1 - i];
    expect(u, world, want, ne, "intersection(reverse, evens)");
    release(&u);
    rc = MPI_Group_difference(rg, g, &u);
    CHECK_RC(rc, "MPI_Group_difference(reverse, evens)");
    for (int i = 0; i < no; i++)
        want[i] = odds[no - 1 - i];
    expect(u, world, want, no, "difference(reverse, evens)");
    release(&u);
    rc = MPI_Group_difference(world, world, &u);
    CHECK_RC(rc, "MPI_Group_difference(world, world)");
    expect(u, world, want, 0, "difference(world, world)");
    release(&u);
    rc = MPI_Group_union(MPI_GROUP_EMPTY, world, &u);
    CHECK_RC(rc, "MPI_Group_union(EMPTY, world)");
    MPI_Group_compare(u, world, &cmp);
    CHECK(cmp == MPI_IDENT, "union(EMPTY, world) vs world: %d", cmp);
    release(&u);
    MPI_Group_compare(g, h, &cmp);
    CHECK(cmp == (size == 1 ? MPI_UNEQUAL : MPI_UNEQUAL), "evens vs odds: %d", cmp);

    /* translate_ranks: world -> evens, with PROC_NULL. */
    int in[66], outr[66];
    for (int i = 0; i < size; i++)
        in[i] = i;
    in[size] = MPI_PROC_NULL;
    rc = MPI_Group_translate_ranks(world, size + 1, in, g, outr);
    CHECK_RC(rc, "MPI_Group_translate_ranks(world -> evens)");
    for (int i = 0; i < size; i++)
        CHECK(outr[i] == (i % 2 == 0 ? i / 2 : MPI_UNDEFINED), "translate %d -> %d", i, outr[i]);
    CHECK(outr[size] == MPI_PROC_NULL, "translate MPI_PROC_NULL -> %d", outr[size]);
    rc = MPI_Group_translate_ranks(world, 0, NULL, g, NULL);
    CHECK_RC(rc, "MPI_Group_translate_ranks(n=0)");
    /* Into the empty group everything is undefined. */
    rc = MPI_Group_translate_ranks(world, size, in, MPI_GROUP_EMPTY, outr);
    CHECK_RC(rc, "MPI_Group_translate_ranks(world -> EMPTY)");
    for (int i = 0; i < size; i++)
        CHECK(outr[i] == MPI_UNDEFINED, "translate %d into EMPTY -> %d", i, outr[i]);

    /* Several ranges at once, excl of a list. */
    if (size >= 3) {
        int two[2][3] = {{size - 1, size - 1, 1}, {0, 1, 1}};
        rc = MPI_Group_range_incl(world, 2, two, &u);
        CHECK_RC(rc, "MPI_Group_range_incl(two ranges)");
        int w3[3] = {size - 1, 0, 1};
        expect(u, world, w3, 3, "range_incl(two ranges)");
        release(&u);
        int ex[2] = {1, 0};
        rc = MPI_Group_excl(world, 2, ex, &u);
        CHECK_RC(rc, "MPI_Group_excl({1, 0})");
        for (int i = 2; i < size; i++)
            want[i - 2] = i;
        expect(u, world, want, size - 2, "excl({1, 0})");
        release(&u);
    }

    /* Freeing MPI_GROUP_EMPTY returned by a call is allowed. */
    rc = MPI_Group_incl(world, 0, NULL, &u);
    CHECK_RC(rc, "MPI_Group_incl(n=0)");
    release(&u);

    release(&rg);
    release(&g);
    release(&h);
    release(&self);
    release(&world);
    return MTest_Finalize(0);
}
