/* group_errors: error classes of the group functions (MPI_ERRORS_RETURN on WORLD and SELF).
 *
 * MPI_GROUP_NULL or a freed handle: MPI_ERR_GROUP. Ranks out of range in incl/excl and
 * translate_ranks: MPI_ERR_RANK. Negative counts: MPI_ERR_ARG. Invalid range triplets (zero
 * stride, stride leading away from `last`, first or reached rank out of range, a rank named
 * twice): MPI_ERR_ARG (the class MPICH uses). Freeing MPI_GROUP_NULL: MPI_ERR_GROUP. */
#include "mtest.h"

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    MTest_Errors_return_all();
    int size = mtest_size, rc, x;
    MPI_Group world, g = MPI_GROUP_NULL, freed;

    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Comm_group(MPI_COMM_WORLD, &freed);
    MPI_Group keep = freed;
    MPI_Group_free(&freed);
    freed = keep;

    rc = MPI_Group_size(MPI_GROUP_NULL, &x);
    CHECK_CLASS(rc, MPI_ERR_GROUP, "MPI_Group_size(MPI_GROUP_NULL)");
    rc = MPI_Group_rank(MPI_GROUP_NULL, &x);
    CHECK_CLASS(rc, MPI_ERR_GROUP, "MPI_Group_rank(MPI_GROUP_NULL)");
    rc = MPI_Group_compare(world, MPI_GROUP_NULL, &x);
    CHECK_CLASS(rc, MPI_ERR_GROUP, "MPI_Group_compare(world, MPI_GROUP_NULL)");
    rc = MPI_Group_union(MPI_GROUP_NULL, world, &g);
    CHECK_CLASS(rc, MPI_ERR_GROUP, "MPI_Group_union(MPI_GROUP_NULL, world)");
    rc = MPI_Group_intersection(world, MPI_GROUP_NULL, &g);
    CHECK_CLASS(rc, MPI_ERR_GROUP, "MPI_Group_intersection(world, MPI_GROUP_NULL)");
    rc = MPI_Group_difference(MPI_GROUP_NULL, world, &g);
    CHECK_CLASS(rc, MPI_ERR_GROUP, "MPI_Group_difference(MPI_GROUP_NULL, world)");
    int zero = 0, out = 0;
    rc = MPI_Group_translate_ranks(MPI_GROUP_NULL, 1, &zero, world, &out);
    CHECK_CLASS(rc, MPI_ERR_GROUP, "MPI_Group_translate_ranks(MPI_GROUP_NULL, ...)");
    rc = MPI_Group_incl(MPI_GROUP_NULL, 1, &zero, &g);
    CHECK_CLASS(rc, MPI_ERR_GROUP, "MPI_Group_incl(MPI_GROUP_NULL)");
    g = MPI_GROUP_NULL;
    rc = MPI_Group_free(&g);
    CHECK_CLASS(rc, MPI_ERR_GROUP, "MPI_Group_free(MPI_GROUP_NULL)");
#ifndef MPICH_VERSION
    /* MPICH does not check freed handles (it may even crash): hympi catches them. */
    rc = MPI_Group_size(freed, &x);
    CHECK_CLASS(rc, MPI_ERR_GROUP, "MPI_Group_size(freed group)");
#endif

    /* Ranks out of range. */
    int bad = size;
    rc = MPI_Group_incl(world, 1, &bad, &g);
    CHECK_CLASS(rc, MPI_ERR_RANK, "MPI_Group_incl(rank = size)");
    bad = -1;
    rc = MPI_Group_excl(world, 1, &bad, &g);
    CHECK_CLASS(rc, MPI_ERR_RANK, "MPI_Group_excl(rank = -1)");
    int two[2] = {0, size};
    rc = MPI_Group_translate_ranks(world, 2, two, world, two);
    CHECK_CLASS(rc, MPI_ERR_RANK, "MPI_Group_translate_ranks(rank = size)");
    rc = MPI_Group_translate_ranks(world, -1, &zero, world, &out);
    CHECK_CLASS(rc, MPI_ERR_ARG, "MPI_Group_translate_ranks(n = -1)");
    rc = MPI_Group_incl(world, -1, &zero, &g);
    CHECK_CLASS(rc, MPI_ERR_ARG, "MPI_Group_incl(n = -1)");

    /* Range triplets. */
    int r[2][3];
    r[0][0] = 0; r[0][1] = 0; r[0][2] = 0;
    rc = MPI_Group_range_incl(world, 1, r, &g);
    CHECK_CLASS(rc, MPI_ERR_ARG, "MPI_Group_range_incl(stride 0)");
    rc = MPI_Group_range_excl(world, 1, r, &g);
    CHECK_CLASS(rc, MPI_ERR_ARG, "MPI_Group_range_excl(stride 0)");
    r[0][0] = size; r[0][1] = size; r[0][2] = 1;
    rc = MPI_Group_range_incl(world, 1, r, &g);
    CHECK_CLASS(rc, MPI_ERR_ARG, "MPI_Group_range_incl(first = size)");
    r[0][0] = 0; r[0][1] = size; r[0][2] = 1;
    rc = MPI_Group_range_incl(world, 1, r, &g);
    CHECK_CLASS(rc, MPI_ERR_ARG, "MPI_Group_range_incl(last = size, reached)");
    if (size >= 2) {
        r[0][0] = 1; r[0][1] = 0; r[0][2] = 1;
        rc = MPI_Group_range_incl(world, 1, r, &g);
        CHECK_CLASS(rc, MPI_ERR_ARG, "MPI_Group_range_incl(1, 0, +1)");
        r[0][0] = 0; r[0][1] = 1; r[0][2] = -1;
        rc = MPI_Group_range_incl(world, 1, r, &g);
        CHECK_CLASS(rc, MPI_ERR_ARG, "MPI_Group_range_incl(0, 1, -1)");
    }
    r[0][0] = 0; r[0][1] = 0; r[0][2] = 1;
    r[1][0] = 0; r[1][1] = 0; r[1][2] = 1;
    rc = MPI_Group_range_incl(world, 2, r, &g);
    CHECK_CLASS(rc, MPI_ERR_ARG, "MPI_Group_range_incl(rank 0 twice)");
    rc = MPI_Group_range_excl(world, 2, r, &g);
    CHECK_CLASS(rc, MPI_ERR_ARG, "MPI_Group_range_excl(rank 0 twice)");
    rc = MPI_Group_range_incl(world, -1, r, &g);
    CHECK_CLASS(rc, MPI_ERR_ARG, "MPI_Group_range_incl(n = -1)");
    /* A stride that jumps past `last` only reaches `first`: valid. */
    r[0][0] = 0; r[0][1] = size + 5; r[0][2] = size + 10;
    rc = MPI_Group_range_incl(world, 1, r, &g);
    if (CHECK_RC(rc, "MPI_Group_range_incl(0, size+5, size+10)")) {
        MPI_Group_size(g, &x);
        CHECK(x == 1, "range_incl(0, size+5, size+10) has %d members", x);
        MPI_Group_free(&g);
    }

    /* The world group is still fine after all this. */
    MPI_Group_size(world, &x);
    CHECK(x == size, "world group size %d", x);
    MPI_Group_free(&world);
    return MTest_Finalize(0);
}
