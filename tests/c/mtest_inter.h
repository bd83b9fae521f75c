/* mtest_inter.h: intercommunicators of several shapes for the intercommunicator collective
 * tests (include after mtest.h).
 *
 * MTest_Inter_make(shape, &inter, &color) splits MPI_COMM_WORLD into two groups and joins
 * them with MPI_Intercomm_create; color (0 or 1) tells the caller's group.  Shapes (at
 * least 2 processes):
 *   0  even / odd world ranks (sizes ceil(n/2) and floor(n/2))
 *   1  world rank 0 alone / everybody else (1 and n-1)
 *   2  everybody but the last / the last world rank (n-1 and 1), leaders the last local
 *      ranks of their groups
 *   3  first ceil(n/2) / the rest, in blocks
 * Returns 0 (and MPI_COMM_NULL) when the shape needs more processes. */
#ifndef MTEST_INTER_H_INCLUDED
#define MTEST_INTER_H_INCLUDED

#include "mtest.h"

#define MTEST_INTER_SHAPES 4
#define MTEST_TAG_INTER 32020

MTEST_FN int MTest_Inter_color(int shape, int wrank, int n)
{
    switch (shape) {
    case 0: return wrank % 2;
    case 1: return wrank == 0 ? 0 : 1;
    case 2: return wrank == n - 1 ? 1 : 0;
    default: return wrank < (n + 1) / 2 ? 0 : 1;
    }
}

MTEST_FN const char *MTest_Inter_name(int shape)
{
    static const char *names[] = {"even/odd", "one/rest", "rest/one (last leaders)",
                                  "halves"};
    return names[shape];
}

MTEST_FN int MTest_Inter_make(int shape, MPI_Comm *inter, int *color)
{
    int n = mtest_size, me = mtest_rank;
    *inter = MPI_COMM_NULL;
    if (n < 2)
        return 0;
    *color = MTest_Inter_color(shape, me, n);
    /* World ranks of each group, in order. */
    int first[2] = {-1, -1}, last[2] = {-1, -1};
    for (int r = 0; r < n; r++) {
        int c = MTest_Inter_color(shape, r, n);
        if (first[c] < 0)
            first[c] = r;
        last[c] = r;
    }
    MPI_Comm local;
    int rc = MPI_Comm_split(MPI_COMM_WORLD, *color, me, &local);
    CHECK_RC(rc, "MPI_Comm_split");
    int lsize;
    MPI_Comm_size(local, &lsize);
    int use_last = shape == 2;
    int lleader = use_last ? lsize - 1 : 0;
    int rleader = use_last ? last[1 - *color] : first[1 - *color];
    rc = MPI_Intercomm_create(local, lleader, MPI_COMM_WORLD, rleader, MTEST_TAG_INTER, inter);
    CHECK_RC(rc, "MPI_Intercomm_create");
    MPI_Comm_free(&local);
    MPI_Comm_set_errhandler(*inter, MPI_ERRORS_RETURN);
    return 1;
}

#endif
