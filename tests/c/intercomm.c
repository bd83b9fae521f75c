/* intercomm: intercommunicators.
 *
 * WORLD is split by parity (the "evens" and the "odds"; needs 2 processes: at 1 process
 * only the intracommunicator checks run).  Then:
 *  - MPI_Intercomm_create with local leader 0, remote leader the lowest world rank of the
 *    other parity, MPI_COMM_WORLD as peer communicator; a second one with the last local
 *    rank and the highest remote world rank as leaders and another tag;
 *  - MPI_Comm_test_inter (true; false for WORLD and the parts), MPI_Comm_size/rank (local
 *    group), MPI_Comm_remote_size, MPI_Comm_group / MPI_Comm_remote_group (content checked
 *    with MPI_Group_translate_ranks to WORLD's group);
 *  - point-to-point across: each process sends to remote rank (rank % remote size);
 *    receives from MPI_ANY_SOURCE see a remote rank in the status, and the payload (the
 *    sender's world rank) matches it;
 *  - MPI_Intercomm_merge with high = 0 on the evens and 1 on the odds (evens first), and
 *    the other way round (odds first); the order is checked by a ring on the result;
 *  - MPI_Comm_dup of an intercommunicator (still inter, same remote size, MPI_CONGRUENT
 *    to its parent, MPI_IDENT to itself, messages across work), MPI_Comm_compare of the two
 *    intercommunicators of the same groups (MPI_CONGRUENT);
 *  - MPI_Intercomm_create_from_groups (MPI-4.0; only when MPI_VERSION >= 4). */
#include "mtest.h"
#include "mtest_comm.h"

#define MAXP 64

static int color, lsize, rsize;

/* World rank of rank i of the group of parity c. */
static int wr(int c, int i)
{
    return c + 2 * i;
}

static void check_inter(MPI_Comm inter, const char *what)
{
    int flag = -1, s = -1, r = -1, rs = -1, rc;
    rc = MPI_Comm_test_inter(inter, &flag);
    CHECK(rc == MPI_SUCCESS && flag, "%s: MPI_Comm_test_inter gave %d", what, flag);
    MPI_Comm_size(inter, &s);
    MPI_Comm_rank(inter, &r);
    rc = MPI_Comm_remote_size(inter, &rs);
    CHECK_RC(rc, "MPI_Comm_remote_size");
    CHECK(s == lsize && r == mtest_rank / 2 && rs == rsize,
          "%s: size %d rank %d remote size %d, expected %d %d %d", what, s, r, rs, lsize,
          mtest_rank / 2, rsize);

    /* Groups, translated to WORLD. */
    MPI_Group wg, lg, rg;
    int idx[MAXP], out[MAXP];
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    rc = MPI_Comm_group(inter, &lg);
    CHECK_RC(rc, "MPI_Comm_group (intercommunicator)");
    rc = MPI_Comm_remote_group(inter, &rg);
    CHECK_RC(rc, "MPI_Comm_remote_group");
    int gs = -1;
    MPI_Group_size(lg, &gs);
    CHECK(gs == lsize, "%s: local group size %d", what, gs);
    MPI_Group_size(rg, &gs);
    CHECK(gs == rsize, "%s: remote group size %d", what, gs);
    for (int i = 0; i < MAXP; i++)
        idx[i] = i;
    MPI_Group_translate_ranks(lg, lsize, idx, wg, out);
    for (int i = 0; i < lsize; i++)
        CHECK(out[i] == wr(color, i), "%s: local group rank %d is world %d, expected %d", what, i,
              out[i], wr(color, i));
    MPI_Group_translate_ranks(rg, rsize, idx, wg, out);
    for (int i = 0; i < rsize; i++)
        CHECK(out[i] == wr(1 - color, i), "%s: remote group rank %d is world %d, expected %d", what,
              i, out[i], wr(1 - color, i));
    MPI_Group_free(&lg);
    MPI_Group_free(&rg);
    MPI_Group_free(&wg);
}

/* Each process sends its world rank to remote rank (rank % rsize); receives from any. */
static void across(MPI_Comm inter, int tag, const char *what)
{
    int rank = mtest_rank / 2, out = mtest_rank, rc;
    MPI_Request sreq;
    rc = MPI_Isend(&out, 1, MPI_INT, rank % rsize, tag, inter, &sreq);
    CHECK_RC(rc, "MPI_Isend (across)");
    int expect = 0;
    for (int r = 0; r < rsize; r++)
        if (r % lsize == rank)
            expect++;
    for (int k = 0; k < expect; k++) {
        int in = -1;
        MPI_Status st;
        rc = MPI_Recv(&in, 1, MPI_INT, MPI_ANY_SOURCE, tag, inter, &st);
        CHECK_RC(rc, "MPI_Recv (across)");
        CHECK(st.MPI_SOURCE >= 0 && st.MPI_SOURCE < rsize && st.MPI_SOURCE % lsize == rank &&
                  in == wr(1 - color, st.MPI_SOURCE),
              "%s: got world %d from remote rank %d", what, in, st.MPI_SOURCE);
    }
    MPI_Wait(&sreq, MPI_STATUS_IGNORE);
}

static void merge(MPI_Comm inter, int evens_high, const char *what)
{
    MPI_Comm m = MPI_COMM_NULL;
    int high = color == 0 ? evens_high : !evens_high;
    int rc = MPI_Intercomm_merge(inter, high, &m);
    CHECK_RC(rc, "MPI_Intercomm_merge");
    int exp[MAXP], n = 0, first = evens_high ? 1 : 0;
    for (int i = first; i < mtest_size; i += 2)
        exp[n++] = i;
    for (int i = 1 - first; i < mtest_size; i += 2)
        exp[n++] = i;
    int flag = -1;
    MPI_Comm_test_inter(m, &flag);
    CHECK(flag == 0, "%s: merged communicator is inter", what);
    MTest_Check_members(m, exp, n, what);
    MTest_Free_comm(&m, "MPI_Comm_free (merged)");
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    int size = mtest_size, rank = mtest_rank, rc, flag = -1;
    if (size > MAXP) {
        printf("at most %d ranks\n", MAXP);
        return MTest_Finalize(1);
    }
    rc = MPI_Comm_test_inter(MPI_COMM_WORLD, &flag);
    CHECK(rc == MPI_SUCCESS && flag == 0, "MPI_Comm_test_inter(WORLD) gave %d", flag);
    if (size < 2) {
        /* Nothing to make an intercommunicator of. */
        return MTest_Finalize(0);
    }
    color = rank % 2;
    lsize = color == 0 ? (size + 1) / 2 : size / 2;
    rsize = size - lsize;

    MPI_Comm local = MPI_COMM_NULL, inter = MPI_COMM_NULL, inter2 = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, color, rank, &local);
    MPI_Comm_test_inter(local, &flag);
    CHECK(flag == 0, "the parity part is inter");

    rc = MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 1 - color, 123, &inter);
    CHECK_RC(rc, "MPI_Intercomm_create");
    check_inter(inter, "intercomm");
    across(inter, 5, "across");

    /* Other leaders: the last local rank, the highest world rank of the other parity. */
    int last_other = (size - 1) % 2 == 1 - color ? size - 1 : size - 2;
    rc = MPI_Intercomm_create(local, lsize - 1, MPI_COMM_WORLD, last_other, 124, &inter2);
    CHECK_RC(rc, "MPI_Intercomm_create (other leaders)");
    check_inter(inter2, "intercomm, other leaders");
    across(inter2, 6, "across, other leaders");
    int result = -1;
    MPI_Comm_compare(inter, inter2, &result);
    CHECK(result == MPI_CONGRUENT, "compare of two intercomms of the same groups gave %d", result);

    merge(inter, 0, "merge, evens low");
    merge(inter, 1, "merge, evens high");

    /* Dup. */
    MPI_Comm d = MPI_COMM_NULL;
    rc = MPI_Comm_dup(inter, &d);
    CHECK_RC(rc, "MPI_Comm_dup (intercommunicator)");
    check_inter(d, "dup of the intercomm");
    MPI_Comm_compare(inter, d, &result);
    CHECK(result == MPI_CONGRUENT, "compare(intercomm, dup) gave %d", result);
    MPI_Comm_compare(d, d, &result);
    CHECK(result == MPI_IDENT, "compare(dup, dup) gave %d", result);
    across(d, 7, "across the dup");
    merge(d, 1, "merge of the dup, evens high");
    MTest_Free_comm(&d, "MPI_Comm_free (dup of intercomm)");
    across(inter, 8, "across after freeing the dup");

#if MPI_VERSION >= 4
    {
        MPI_Group wg, lg, rg;
        int others[MAXP], n = 0;
        MPI_Comm_group(MPI_COMM_WORLD, &wg);
        MPI_Comm_group(local, &lg);
        for (int i = 1 - color; i < size; i += 2)
            others[n++] = i;
        MPI_Group_incl(wg, n, others, &rg);
        MPI_Comm ic = MPI_COMM_NULL;
        rc = MPI_Intercomm_create_from_groups(lg, 0, rg, 0, "org.hympi.test.inter", MPI_INFO_NULL,
                                              MPI_ERRORS_RETURN, &ic);
        CHECK_RC(rc, "MPI_Intercomm_create_from_groups");
        if (rc == MPI_SUCCESS) {
            check_inter(ic, "Intercomm_create_from_groups");
            across(ic, 9, "across, from groups");
            merge(ic, 0, "merge, from groups");
            MTest_Free_comm(&ic, "MPI_Comm_free (from groups)");
        }
        MPI_Group_free(&wg);
        MPI_Group_free(&lg);
        MPI_Group_free(&rg);
    }
#endif

    MTest_Free_comm(&inter2, "MPI_Comm_free (intercomm 2)");
    MTest_Free_comm(&inter, "MPI_Comm_free (intercomm)");
    MTest_Free_comm(&local, "MPI_Comm_free (local)");
    return MTest_Finalize(0);
}
