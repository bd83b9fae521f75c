/* comm_dup: MPI_Comm_dup, MPI_Comm_dup_with_info, MPI_Comm_compare, MPI_Comm_free,
 * MPI_Comm_set_name / MPI_Comm_get_name.
 *
 *  - A dup of MPI_COMM_WORLD, of MPI_COMM_SELF and of a dup has the same size, rank and
 *    members (checked by messages on the dup) and is a new handle.
 *  - MPI_Comm_compare: MPI_IDENT for the same handle, MPI_CONGRUENT for a dup (same group,
 *    new context), MPI_SIMILAR for the same processes in another order (split with reversed
 *    keys), MPI_UNEQUAL otherwise (a part of WORLD; SELF and WORLD at more than one rank).
 *  - A dup is a separate communication context: a wildcard receive posted on the parent
 *    does not match a message sent on the dup (the receive on the dup gets it, the parent's
 *    receive is still pending and is later satisfied by a message on the parent); a pending
 *    wildcard receive can be cancelled.
 *  - A dup inherits the error handler of its parent (MPI-4.0 section 7.4.2).
 *  - MPI_Comm_dup_with_info (a hint and MPI_INFO_NULL), MPI_Comm_get_info on the result.
 *  - MPI_Comm_free sets the handle to MPI_COMM_NULL.
 *  - Names: "MPI_COMM_WORLD" and "MPI_COMM_SELF" by default, a new communicator has the
 *    empty name, set/get round trip, a dup does not take its parent's name (section 7.8:
 *    names are not propagated by MPI_COMM_DUP), renaming WORLD. */
#include "mtest.h"
#include "mtest_comm.h"

static void check_compare(MPI_Comm a, MPI_Comm b, int expected, const char *what)
{
    int result = -1;
    int rc = MPI_Comm_compare(a, b, &result);
    CHECK_RC(rc, "MPI_Comm_compare");
    CHECK(result == expected, "MPI_Comm_compare(%s) gave %d, expected %d", what, result, expected);
}

static void check_name(MPI_Comm comm, const char *expected, const char *what)
{
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    memset(name, 'x', sizeof name);
    int rc = MPI_Comm_get_name(comm, name, &len);
    CHECK_RC(rc, "MPI_Comm_get_name");
    name[MPI_MAX_OBJECT_NAME - 1] = 0;
    CHECK(strcmp(name, expected) == 0, "%s: name '%s', expected '%s'", what, name, expected);
    CHECK(len == (int)strlen(expected), "%s: resultlen %d, expected %d", what, len,
          (int)strlen(expected));
}

/* Context isolation between parent and child (both have the same group). */
static void check_isolation(MPI_Comm parent, MPI_Comm child, const char *what)
{
    int rank, size;
    MPI_Comm_rank(parent, &rank);
    MPI_Comm_size(parent, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int pbuf = -1, cbuf = -1, out = 1000 + rank, flag = -1;
    MPI_Request preq, sreq;
    MPI_Status st;

    int rc = MPI_Irecv(&pbuf, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, parent, &preq);
    CHECK_RC(rc, "MPI_Irecv on the parent");
    rc = MPI_Isend(&out, 1, MPI_INT, right, 5, child, &sreq);
    CHECK_RC(rc, "MPI_Isend on the child");
    /* If the parent's wildcard receive took the message, this receive would hang. */
    rc = MPI_Recv(&cbuf, 1, MPI_INT, MPI_ANY_SOURCE, 5, child, &st);
    CHECK_RC(rc, "MPI_Recv on the child");
    CHECK(cbuf == 1000 + left && st.MPI_SOURCE == left && st.MPI_TAG == 5,
          "%s: child got %d from %d tag %d", what, cbuf, st.MPI_SOURCE, st.MPI_TAG);
    MPI_Wait(&sreq, MPI_STATUS_IGNORE);
    /* Only the left neighbour sends to this process on the parent, and only after this
     * process said (below) that it looked: the receive must still be pending. */
    rc = MPI_Test(&preq, &flag, &st);
    CHECK(rc == MPI_SUCCESS && flag == 0, "%s: the parent's wildcard receive completed (got %d)",
          what, pbuf);
    if (flag)
        return;
    int ok = 1, okin = 0;
    rc = MPI_Isend(&ok, 1, MPI_INT, left, 8, child, &sreq);
    CHECK_RC(rc, "MPI_Isend (handshake)");
    MPI_Recv(&okin, 1, MPI_INT, right, 8, child, MPI_STATUS_IGNORE);
    MPI_Wait(&sreq, MPI_STATUS_IGNORE);

    /* Now satisfy it with a message on the parent. */
    out = 2000 + rank;
    rc = MPI_Isend(&out, 1, MPI_INT, right, 6, parent, &sreq);
    CHECK_RC(rc, "MPI_Isend on the parent");
    rc = MPI_Wait(&preq, &st);
    CHECK_RC(rc, "MPI_Wait on the parent's receive");
    CHECK(pbuf == 2000 + left && st.MPI_SOURCE == left && st.MPI_TAG == 6,
          "%s: parent got %d from %d tag %d", what, pbuf, st.MPI_SOURCE, st.MPI_TAG);
    MPI_Wait(&sreq, MPI_STATUS_IGNORE);

    /* A pending receive from any source on the child, cancelled (a tag nobody sends, so
     * that a faster process's next messages cannot match it). */
    cbuf = -1;
    rc = MPI_Irecv(&cbuf, 1, MPI_INT, MPI_ANY_SOURCE, 77, child, &preq);
    CHECK_RC(rc, "MPI_Irecv on the child");
    rc = MPI_Cancel(&preq);
    CHECK_RC(rc, "MPI_Cancel");
    rc = MPI_Wait(&preq, &st);
    CHECK_RC(rc, "MPI_Wait on the cancelled receive");
    MPI_Test_cancelled(&st, &flag);
    CHECK(flag == 1 && cbuf == -1, "%s: cancelled receive: cancelled %d buffer %d", what, flag,
          cbuf);
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    int size = mtest_size, rank = mtest_rank, rc, s = -1, r = -1;
    int all[64], rev[64], self[1] = {rank};
    for (int i = 0; i < size; i++) {
        all[i] = i;
        rev[i] = size - 1 - i;
    }

    /* Dup of WORLD. */
    MPI_Comm dup = MPI_COMM_NULL, dup2 = MPI_COMM_NULL;
    rc = MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    CHECK_RC(rc, "MPI_Comm_dup(WORLD)");
    CHECK(dup != MPI_COMM_NULL && dup != MPI_COMM_WORLD, "dup of WORLD is not a new handle");
    MPI_Comm_size(dup, &s);
    MPI_Comm_rank(dup, &r);
    CHECK(s == size && r == rank, "dup of WORLD: size %d rank %d", s, r);
    MTest_Check_members(dup, all, size, "dup of WORLD");
    check_compare(MPI_COMM_WORLD, dup, MPI_CONGRUENT, "WORLD, dup");
    check_compare(dup, MPI_COMM_WORLD, MPI_CONGRUENT, "dup, WORLD");
    check_compare(dup, dup, MPI_IDENT, "dup, dup");
    check_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, MPI_IDENT, "WORLD, WORLD");
    check_compare(MPI_COMM_SELF, MPI_COMM_SELF, MPI_IDENT, "SELF, SELF");

    /* Dup of a dup. */
    rc = MPI_Comm_dup(dup, &dup2);
    CHECK_RC(rc, "MPI_Comm_dup(dup)");
    CHECK(dup2 != dup && dup2 != MPI_COMM_WORLD, "dup of a dup is not a new handle");
    MTest_Check_members(dup2, all, size, "dup of a dup");
    check_compare(dup, dup2, MPI_CONGRUENT, "dup, dup of dup");
    check_isolation(dup, dup2, "dup / dup of dup");
    check_isolation(dup2, dup, "dup of dup / dup");

    /* Dup of SELF. */
    MPI_Comm sdup = MPI_COMM_NULL;
    rc = MPI_Comm_dup(MPI_COMM_SELF, &sdup);
    CHECK_RC(rc, "MPI_Comm_dup(SELF)");
    MPI_Comm_size(sdup, &s);
    MPI_Comm_rank(sdup, &r);
    CHECK(s == 1 && r == 0, "dup of SELF: size %d rank %d", s, r);
    MTest_Check_members(sdup, self, 1, "dup of SELF");
    check_compare(MPI_COMM_SELF, sdup, MPI_CONGRUENT, "SELF, dup of SELF");
    check_isolation(MPI_COMM_SELF, sdup, "SELF / dup of SELF");
    /* SELF and WORLD: one process in both at size 1, so the same group. */
    check_compare(MPI_COMM_SELF, MPI_COMM_WORLD, size == 1 ? MPI_CONGRUENT : MPI_UNEQUAL,
                  "SELF, WORLD");

    /* Same processes, reversed order: SIMILAR (CONGRUENT at one process). */
    MPI_Comm rcomm = MPI_COMM_NULL;
    rc = MPI_Comm_split(MPI_COMM_WORLD, 0, size - 1 - rank, &rcomm);
    CHECK_RC(rc, "MPI_Comm_split (reversed keys)");
    MTest_Check_members(rcomm, rev, size, "reversed WORLD");
    check_compare(MPI_COMM_WORLD, rcomm, size == 1 ? MPI_CONGRUENT : MPI_SIMILAR,
                  "WORLD, reversed WORLD");
    check_compare(rcomm, dup, size == 1 ? MPI_CONGRUENT : MPI_SIMILAR, "reversed WORLD, dup");

    /* A part of WORLD: UNEQUAL (at size 1 the part is everything). */
    MPI_Comm half = MPI_COMM_NULL;
    rc = MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    CHECK_RC(rc, "MPI_Comm_split (parity)");
    check_compare(MPI_COMM_WORLD, half, size == 1 ? MPI_CONGRUENT : MPI_UNEQUAL,
                  "WORLD, parity part");
    check_compare(MPI_COMM_SELF, half,
                  (size == 1 || (size == 2) || (size == 3 && rank == 1)) ? MPI_CONGRUENT
                                                                          : MPI_UNEQUAL,
                  "SELF, parity part");

    /* The error handler is inherited. */
    {
        MPI_Comm d3 = MPI_COMM_NULL;
        MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
        MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
        rc = MPI_Comm_dup(dup, &d3);
        CHECK_RC(rc, "MPI_Comm_dup (errhandler)");
        MPI_Comm_get_errhandler(d3, &eh);
        CHECK(eh == MPI_ERRORS_RETURN, "a dup did not inherit MPI_ERRORS_RETURN");
        MPI_Errhandler_free(&eh);
        int x = 0;
        rc = MPI_Send(&x, 1, MPI_INT, size + 2, 0, d3);
        CHECK_CLASS(rc, MPI_ERR_RANK, "send to a bad rank on the dup");
        MTest_Free_comm(&d3, "MPI_Comm_free (errhandler dup)");
    }

    /* MPI_Comm_dup_with_info. */
    {
        MPI_Info info, got = MPI_INFO_NULL;
        MPI_Comm di = MPI_COMM_NULL, dn = MPI_COMM_NULL;
        MPI_Info_create(&info);
        MPI_Info_set(info, "mpi_assert_no_any_tag", "false");
        rc = MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &di);
        CHECK_RC(rc, "MPI_Comm_dup_with_info");
        MPI_Info_free(&info);
        MTest_Check_members(di, all, size, "dup_with_info of WORLD");
        check_compare(MPI_COMM_WORLD, di, MPI_CONGRUENT, "WORLD, dup_with_info");
        check_isolation(MPI_COMM_WORLD, di, "WORLD / dup_with_info");
        rc = MPI_Comm_get_info(di, &got);
        CHECK_RC(rc, "MPI_Comm_get_info");
        CHECK(got != MPI_INFO_NULL, "MPI_Comm_get_info gave MPI_INFO_NULL");
        if (got != MPI_INFO_NULL)
            MPI_Info_free(&got);
        rc = MPI_Comm_dup_with_info(dup2, MPI_INFO_NULL, &dn);
        CHECK_RC(rc, "MPI_Comm_dup_with_info(MPI_INFO_NULL)");
        MTest_Check_members(dn, all, size, "dup_with_info(MPI_INFO_NULL) of a dup");
        check_compare(dn, dup2, MPI_CONGRUENT, "dup_with_info, its parent");
        MTest_Free_comm(&di, "MPI_Comm_free (dup_with_info)");
        MTest_Free_comm(&dn, "MPI_Comm_free (dup_with_info NULL)");
    }

    /* Names. */
    check_name(MPI_COMM_WORLD, "MPI_COMM_WORLD", "WORLD");
    check_name(MPI_COMM_SELF, "MPI_COMM_SELF", "SELF");
    check_name(dup, "", "a dup of WORLD");
    check_name(sdup, "", "a dup of SELF");
    check_name(half, "", "a split of WORLD");
    rc = MPI_Comm_set_name(dup, "hympi test dup");
    CHECK_RC(rc, "MPI_Comm_set_name");
    check_name(dup, "hympi test dup", "after set_name");
    rc = MPI_Comm_set_name(dup, "renamed");
    CHECK_RC(rc, "MPI_Comm_set_name (again)");
    check_name(dup, "renamed", "after a second set_name");
    {
        MPI_Comm d4 = MPI_COMM_NULL;
        MPI_Comm_dup(dup, &d4);
        check_name(d4, "", "a dup of a named communicator");
        MTest_Free_comm(&d4, "MPI_Comm_free (named dup)");
    }
    rc = MPI_Comm_set_name(MPI_COMM_WORLD, "world renamed");
    CHECK_RC(rc, "MPI_Comm_set_name(WORLD)");
    check_name(MPI_COMM_WORLD, "world renamed", "renamed WORLD");
    MPI_Comm_set_name(MPI_COMM_WORLD, "MPI_COMM_WORLD");
    check_name(MPI_COMM_WORLD, "MPI_COMM_WORLD", "WORLD renamed back");

    /* Free: handles become MPI_COMM_NULL; the parents still work. */
    MTest_Free_comm(&dup2, "MPI_Comm_free (dup of dup)");
    MTest_Check_members(dup, all, size, "dup after its child was freed");
    MTest_Free_comm(&dup, "MPI_Comm_free (dup)");
    MTest_Free_comm(&sdup, "MPI_Comm_free (dup of SELF)");
    MTest_Free_comm(&rcomm, "MPI_Comm_free (reversed)");
    MTest_Free_comm(&half, "MPI_Comm_free (parity)");
    MTest_Check_members(MPI_COMM_WORLD, all, size, "WORLD at the end");

    return MTest_Finalize(0);
}
