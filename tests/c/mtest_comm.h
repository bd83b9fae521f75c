/* mtest_comm.h: helpers of the communicator tests (include after mtest.h).
 *
 * The membership of a new communicator is checked with point-to-point messages on that
 * communicator only (no collectives): every member sends its MPI_COMM_WORLD rank around a
 * ring (to rank r+1, from rank r-1) and to rank 0, which checks the whole list.  The list
 * of expected members (world ranks in the order of the new communicator's ranks) is
 * computed by every process from the rules of the call that made the communicator. */
#ifndef MTEST_COMM_H_INCLUDED
#define MTEST_COMM_H_INCLUDED

#include "mtest.h"

#define MTEST_TAG_RING 32010
#define MTEST_TAG_GATHER 32011

/* World rank of the calling process. */
MTEST_FN int MTest_World_rank(void)
{
    int r = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

/* Check that comm (an intracommunicator) has exactly the members expected[0..n-1] (world
 * ranks, in rank order), by messages on comm.  Every member of comm must call it with the
 * same list.  Returns 1 when every check this process made passed. */
MTEST_FN int MTest_Check_members(MPI_Comm comm, const int *expected, int n, const char *what)
{
    int size = -1, rank = -1, wrank = MTest_World_rank(), ok = 1;
    int before = mtest_errors;
    if (!CHECK(comm != MPI_COMM_NULL, "%s: communicator is MPI_COMM_NULL", what))
        return 0;
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &rank);
    if (!CHECK(size == n, "%s: size %d, expected %d", what, size, n))
        return 0; /* the members would not agree on a ring: do not communicate */
    CHECK(rank >= 0 && rank < n && expected[rank] == wrank,
          "%s: world rank %d has rank %d (expected the world rank there to be %d)", what, wrank,
          rank, (rank >= 0 && rank < n) ? expected[rank] : -1);
    if (rank < 0 || rank >= n)
        return 0;

    /* Ring: my world rank to the right, the left neighbour's from the left. */
    int right = (rank + 1) % n, left = (rank + n - 1) % n, in = -1;
    MPI_Status st;
    int rc = MPI_Sendrecv(&wrank, 1, MPI_INT, right, MTEST_TAG_RING, &in, 1, MPI_INT, left,
                          MTEST_TAG_RING, comm, &st);
    CHECK_RC(rc, "MPI_Sendrecv (membership ring)");
    CHECK(in == expected[left], "%s: ring: rank %d got world rank %d from rank %d, expected %d",
          what, rank, in, left, expected[left]);
    CHECK(st.MPI_SOURCE == left, "%s: ring: status source %d, expected %d", what, st.MPI_SOURCE,
          left);

    /* Gather at rank 0, any order: the status source says who sent it. */
    if (rank == 0) {
        for (int k = 1; k < n; k++) {
            rc = MPI_Recv(&in, 1, MPI_INT, MPI_ANY_SOURCE, MTEST_TAG_GATHER, comm, &st);
            CHECK_RC(rc, "MPI_Recv (membership gather)");
            CHECK(st.MPI_SOURCE > 0 && st.MPI_SOURCE < n && in == expected[st.MPI_SOURCE],
                  "%s: gather: rank %d says it is world rank %d", what, st.MPI_SOURCE, in);
        }
    } else {
        rc = MPI_Send(&wrank, 1, MPI_INT, 0, MTEST_TAG_GATHER, comm);
        CHECK_RC(rc, "MPI_Send (membership gather)");
    }
    ok = mtest_errors == before;
    return ok;
}

/* Members of the part of a split that the calling process lands in: the parent has n
 * processes (parent[i] = world rank of parent rank i), parent rank i passes color[i] and
 * key[i]; the part of color mycolor holds the i with that color ordered by (key, i).
 * Writes the world ranks to out (n entries of room) and returns their number. */
MTEST_FN int MTest_Split_members(int n, const int *parent, const int *color, const int *key,
                                 int mycolor, int *out)
{
    int idx[1024], m = 0;
    for (int i = 0; i < n && m < 1024; i++)
        if (color[i] == mycolor)
            idx[m++] = i;
    /* insertion sort by (key, parent rank) */
    for (int a = 1; a < m; a++) {
        int v = idx[a], b = a - 1;
        while (b >= 0 && (key[idx[b]] > key[v] || (key[idx[b]] == key[v] && idx[b] > v))) {
            idx[b + 1] = idx[b];
            b--;
        }
        idx[b + 1] = v;
    }
    for (int a = 0; a < m; a++)
        out[a] = parent[idx[a]];
    return m;
}

/* Free a communicator and check that the handle became MPI_COMM_NULL. */
MTEST_FN void MTest_Free_comm(MPI_Comm *comm, const char *what)
{
    if (*comm == MPI_COMM_NULL)
        return;
    int rc = MPI_Comm_free(comm);
    CHECK_RC(rc, what);
    CHECK(*comm == MPI_COMM_NULL, "%s: MPI_Comm_free did not set MPI_COMM_NULL", what);
}

#endif /* MTEST_COMM_H_INCLUDED */
