/* comm_create: MPI_Comm_create, MPI_Comm_create_group, MPI_Comm_create_from_group.
 *
 *  - MPI_Comm_create (collective over the parent) with the first half of WORLD (rounded
 *    up), the odd ranks (empty at one process: everyone gets MPI_COMM_NULL), WORLD reversed
 *    (MPI_Group_incl with ranks n-1..0: the new ranks follow the group's order), the whole
 *    group (a new context: MPI_CONGRUENT to WORLD), MPI_GROUP_EMPTY, and a parent that is
 *    itself a dup; non-members get MPI_COMM_NULL.
 *  - MPI_Comm_create with disjoint groups on different processes (evens pass the group of
 *    evens, odds the group of odds; allowed for intracommunicators since MPI-2.2).
 *  - MPI_Comm_create_group (collective over the group only): evens and odds at once with
 *    different tags, a reversed group, and of a sub-communicator; a process outside the
 *    group (MPI_GROUP_EMPTY, or the other parity's group) gets MPI_COMM_NULL from a local
 *    call.
 *  - MPI_Comm_create_from_group (MPI-4.0; only when MPI_VERSION >= 4) from the group of
 *    WORLD and of its evens, stringtag "org.hympi.test", with MPI_ERRORS_RETURN: the
 *    result has the members of the group in group order and that error handler.
 * Members are checked by messages on the new communicators (mtest_comm.h). */
#include "mtest.h"
#include "mtest_comm.h"

#define MAXP 64

/* Group of the world ranks list[0..n-1] (in that order). */
static MPI_Group group_of(MPI_Group world_group, const int *list, int n)
{
    MPI_Group g = MPI_GROUP_NULL;
    int rc = MPI_Group_incl(world_group, n, list, &g);
    CHECK_RC(rc, "MPI_Group_incl");
    return g;
}

static int index_of(const int *list, int n, int r)
{
    for (int i = 0; i < n; i++)
        if (list[i] == r)
            return i;
    return -1;
}

/* MPI_Comm_create(parent, group of list) and check on members / non-members. */
static void create_and_check(MPI_Comm parent, MPI_Group world_group, const int *list, int n,
                             const char *what)
{
    MPI_Group g = group_of(world_group, list, n);
    MPI_Comm c = MPI_COMM_NULL;
    int rc = MPI_Comm_create(parent, g, &c);
    CHECK_RC(rc, "MPI_Comm_create");
    if (index_of(list, n, mtest_rank) >= 0) {
        MTest_Check_members(c, list, n, what);
        MTest_Free_comm(&c, "MPI_Comm_free");
    } else {
        CHECK(c == MPI_COMM_NULL, "%s: a non-member did not get MPI_COMM_NULL", what);
    }
    MPI_Group_free(&g);
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    int size = mtest_size, rank = mtest_rank, rc;
    int list[MAXP], n, mine[MAXP], nmine;
    if (size > MAXP) {
        printf("at most %d ranks\n", MAXP);
        return MTest_Finalize(1);
    }
    MPI_Group wg = MPI_GROUP_NULL;
    rc = MPI_Comm_group(MPI_COMM_WORLD, &wg);
    CHECK_RC(rc, "MPI_Comm_group(WORLD)");

    /* First half, rounded up. */
    n = (size + 1) / 2;
    for (int i = 0; i < n; i++)
        list[i] = i;
    create_and_check(MPI_COMM_WORLD, wg, list, n, "first half");

    /* Odd ranks (none at one process). */
    n = 0;
    for (int i = 1; i < size; i += 2)
        list[n++] = i;
    create_and_check(MPI_COMM_WORLD, wg, list, n, "odd ranks");

    /* Reversed. */
    for (int i = 0; i < size; i++)
        list[i] = size - 1 - i;
    create_and_check(MPI_COMM_WORLD, wg, list, size, "reversed");

    /* The whole group: CONGRUENT. */
    {
        MPI_Comm c = MPI_COMM_NULL;
        int result = -1;
        for (int i = 0; i < size; i++)
            list[i] = i;
        rc = MPI_Comm_create(MPI_COMM_WORLD, wg, &c);
        CHECK_RC(rc, "MPI_Comm_create (whole group)");
        MTest_Check_members(c, list, size, "whole group");
        MPI_Comm_compare(MPI_COMM_WORLD, c, &result);
        CHECK(result == MPI_CONGRUENT, "whole group: compare with WORLD gave %d", result);
        MTest_Free_comm(&c, "MPI_Comm_free (whole group)");
    }

    /* MPI_GROUP_EMPTY. */
    {
        MPI_Comm c = MPI_COMM_WORLD;
        rc = MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_EMPTY, &c);
        CHECK_RC(rc, "MPI_Comm_create (MPI_GROUP_EMPTY)");
        CHECK(c == MPI_COMM_NULL, "MPI_GROUP_EMPTY did not give MPI_COMM_NULL");
    }

    /* From a dup, last rank first then the evens. */
    {
        MPI_Comm d = MPI_COMM_NULL;
        MPI_Comm_dup(MPI_COMM_WORLD, &d);
        n = 0;
        list[n++] = size - 1;
        for (int i = 0; i < size - 1; i += 2)
            list[n++] = i;
        create_and_check(d, wg, list, n, "from a dup");
        MTest_Free_comm(&d, "MPI_Comm_free (dup)");
    }

    /* Disjoint groups: each process passes the group of its parity. */
    nmine = 0;
    for (int i = rank % 2; i < size; i += 2)
        mine[nmine++] = i;
    create_and_check(MPI_COMM_WORLD, wg, mine, nmine, "disjoint parity groups");

    /* MPI_Comm_create_group: only members call it; evens with tag 7, odds with tag 8. */
    {
        MPI_Group g = group_of(wg, mine, nmine);
        MPI_Comm c = MPI_COMM_NULL;
        rc = MPI_Comm_create_group(MPI_COMM_WORLD, g, rank % 2 ? 8 : 7, &c);
        CHECK_RC(rc, "MPI_Comm_create_group (parity)");
        MTest_Check_members(c, mine, nmine, "create_group parity");
        MPI_Group_free(&g);

        /* A process outside the group makes a local call that gives MPI_COMM_NULL: the
         * empty group, and the other parity's group (rsmpi's split example does this). */
        MPI_Comm none = MPI_COMM_WORLD;
        rc = MPI_Comm_create_group(MPI_COMM_WORLD, MPI_GROUP_EMPTY, 5, &none);
        CHECK(rc == MPI_SUCCESS && none == MPI_COMM_NULL,
              "MPI_Comm_create_group (empty group) gave rc %d and not MPI_COMM_NULL", rc);
        if (size > 1) {
            int other[MAXP], nother = 0;
            for (int r = 1 - rank % 2; r < size; r += 2)
                other[nother++] = r;
            g = group_of(wg, other, nother);
            none = MPI_COMM_WORLD;
            rc = MPI_Comm_create_group(MPI_COMM_WORLD, g, 6, &none);
            CHECK(rc == MPI_SUCCESS && none == MPI_COMM_NULL,
                  "MPI_Comm_create_group (a group without the caller) gave rc %d and not "
                  "MPI_COMM_NULL", rc);
            MPI_Group_free(&g);
        }

        /* Of the new communicator: its members reversed (world ranks), tag 0. */
        int rev[MAXP];
        for (int i = 0; i < nmine; i++)
            rev[i] = mine[nmine - 1 - i];
        g = group_of(wg, rev, nmine);
        MPI_Comm c2 = MPI_COMM_NULL;
        rc = MPI_Comm_create_group(c, g, 0, &c2);
        CHECK_RC(rc, "MPI_Comm_create_group (of a subcommunicator)");
        MTest_Check_members(c2, rev, nmine, "create_group reversed, of a subcommunicator");
        MPI_Group_free(&g);
        MTest_Free_comm(&c2, "MPI_Comm_free");
        MTest_Free_comm(&c, "MPI_Comm_free");

        /* Only the first three of WORLD call, with a large tag; the others skip it. */
        if (rank < 3) {
            n = size < 3 ? size : 3;
            for (int i = 0; i < n; i++)
                list[i] = i;
            g = group_of(wg, list, n);
            rc = MPI_Comm_create_group(MPI_COMM_WORLD, g, 32000, &c);
            CHECK_RC(rc, "MPI_Comm_create_group (first three)");
            MTest_Check_members(c, list, n, "create_group first three");
            MPI_Group_free(&g);
            MTest_Free_comm(&c, "MPI_Comm_free");
        }
    }

#if MPI_VERSION >= 4
    /* MPI_Comm_create_from_group. */
    {
        MPI_Comm c = MPI_COMM_NULL;
        MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
        for (int i = 0; i < size; i++)
            list[i] = i;
        rc = MPI_Comm_create_from_group(wg, "org.hympi.test", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c);
        CHECK_RC(rc, "MPI_Comm_create_from_group (WORLD's group)");
        if (rc == MPI_SUCCESS) {
            MTest_Check_members(c, list, size, "create_from_group of WORLD's group");
            MPI_Comm_get_errhandler(c, &eh);
            CHECK(eh == MPI_ERRORS_RETURN, "create_from_group: error handler not MPI_ERRORS_RETURN");
            MPI_Errhandler_free(&eh);
            int x = 0;
            rc = MPI_Send(&x, 1, MPI_INT, size + 1, 0, c);
            CHECK_CLASS(rc, MPI_ERR_RANK, "send to a bad rank on the create_from_group result");
            MTest_Free_comm(&c, "MPI_Comm_free");
        }
        /* Parity groups, distinct string tags. */
        MPI_Group g = group_of(wg, mine, nmine);
        rc = MPI_Comm_create_from_group(g, rank % 2 ? "org.hympi.test.odd" : "org.hympi.test.even",
                                        MPI_INFO_NULL, MPI_ERRORS_RETURN, &c);
        CHECK_RC(rc, "MPI_Comm_create_from_group (parity)");
        if (rc == MPI_SUCCESS) {
            MTest_Check_members(c, mine, nmine, "create_from_group parity");
            MTest_Free_comm(&c, "MPI_Comm_free");
        }
        MPI_Group_free(&g);
    }
#endif

    MPI_Group_free(&wg);
    CHECK(wg == MPI_GROUP_NULL, "MPI_Group_free did not set MPI_GROUP_NULL");
    return MTest_Finalize(0);
}
