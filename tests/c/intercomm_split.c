/* intercomm_split: MPI_Comm_split and MPI_Comm_create on intercommunicators (MPI-4.1 §7.4.2),
 * on the four intercommunicator shapes of mtest_inter.h:
 *   - MPI_Comm_split with one color on both sides (a key that reverses group 0's order) and
 *     one that only group 1's last rank has: the first joins the local ranks (ordered by key,
 *     then old rank) with the remote ranks of that color, the second gives MPI_COMM_NULL;
 *     checked through sizes, ranks, point-to-point traffic between every local rank
 *     and the remote ranks it maps to, and an intercommunicator MPI_Allreduce (the sum of
 *     the remote group's world ranks);
 *   - MPI_Comm_split where one group passes MPI_UNDEFINED everywhere: MPI_COMM_NULL for all;
 *   - MPI_Comm_create with each group naming its own ranks but the first: MPI_COMM_NULL for
 *     all when a side's group is empty.
 * (The differential runs stay with these cases: with two colors on both sides at once
 * MPICH 4.0.2 loses messages on the results, and Open MPI 4.1.4 hangs on an
 * MPI_Comm_create whose groups list the ranks in reverse order; hympi passes both.) */
#include "mtest.h"
#include "mtest_inter.h"

#define MAXP 64

/* World ranks of group g (0 or 1) of shape `shape`, ascending: the group's local order. */
static int group_of(int shape, int g, int n, int *out)
{
    int k = 0;
    for (int r = 0; r < n; r++)
        if (MTest_Inter_color(shape, r, n) == g)
            out[k++] = r;
    return k;
}

/* Members of a split of a group (world ranks `w`, local order) with colors `col` and keys
 * `key`: those of color c, ordered by (key, local rank). */
static int chosen(const int *w, const int *col, const int *key, int n, int c, int *out)
{
    int idx[MAXP], k = 0;
    for (int i = 0; i < n; i++)
        if (col[i] == c)
            idx[k++] = i;
    for (int a = 1; a < k; a++) /* insertion sort, stable on local rank */
        for (int b = a; b > 0 && key[idx[b - 1]] > key[idx[b]]; b--) {
            int t = idx[b];
            idx[b] = idx[b - 1];
            idx[b - 1] = t;
        }
    for (int i = 0; i < k; i++)
        out[i] = w[idx[i]];
    return k;
}

/* Checks intercommunicator `nc` against the expected local (L, nl) and remote (R, nr) world
 * ranks; this process is world rank `me`. */
static int check_inter(MPI_Comm nc, const int *L, int nl, const int *R, int nr, const char *what)
{
    int errs = 0, flag = 0, size = -1, rsize = -1, rank = -1, want = -1;
    for (int i = 0; i < nl; i++)
        if (L[i] == mtest_rank)
            want = i;
    MPI_Comm_test_inter(nc, &flag);
    if (!CHECK(flag, "%s: the result is not an intercommunicator", what))
        return 0;
    MPI_Comm_size(nc, &size);
    MPI_Comm_remote_size(nc, &rsize);
    MPI_Comm_rank(nc, &rank);
    if (!CHECK(size == nl && rsize == nr && rank == want,
               "%s: size %d remote %d rank %d, expected %d %d %d", what, size, rsize, rank, nl,
               nr, want))
        return 0;
    /* Local rank i sends its world rank to remote rank i % nr; so this rank hears from the
     * remote ranks j with j % nl == rank. */
    MPI_Request req[MAXP + 1];
    int got[MAXP], from[MAXP], k = 0;
    for (int j = 0; j < nr; j++)
        if (j % nl == rank) {
            from[k] = j;
            got[k] = -1;
            MPI_Irecv(&got[k], 1, MPI_INT, j, 7, nc, &req[k]);
            k++;
        }
    int mine = mtest_rank;
    MPI_Isend(&mine, 1, MPI_INT, rank % nr, 7, nc, &req[k]);
    int rc = MPI_Waitall(k + 1, req, MPI_STATUSES_IGNORE);
    CHECK_RC(rc, "MPI_Waitall");
    for (int i = 0; i < k; i++)
        CHECK(got[i] == R[from[i]], "%s: remote rank %d sent %d, expected world rank %d",
                      what, from[i], got[i], R[from[i]]);
    int sum = -1, want_sum = 0;
    for (int j = 0; j < nr; j++)
        want_sum += R[j];
    rc = MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, nc);
    CHECK_RC(rc, "MPI_Allreduce");
    CHECK(sum == want_sum, "%s: MPI_Allreduce gave %d, expected %d", what, sum, want_sum);
    return errs;
}

static int test_split(int shape, MPI_Comm inter, int g)
{
    int n = mtest_size, errs = 0;
    int w[2][MAXP], nw[2], col[2][MAXP], key[2][MAXP];
    char what[96];
    for (int s = 0; s < 2; s++) {
        nw[s] = group_of(shape, s, n, w[s]);
        for (int i = 0; i < nw[s]; i++) {
            /* One color on both sides, and the last rank of group 1 (when it has more
             * than one) alone in a color the other side lacks. */
            col[s][i] = s == 1 && i == nw[s] - 1 && nw[s] > 1 ? 5 : 3;
            key[s][i] = s == 0 ? -i : i;
        }
    }
    int lrank = -1;
    for (int i = 0; i < nw[g]; i++)
        if (w[g][i] == mtest_rank)
            lrank = i;
    MPI_Comm nc = MPI_COMM_NULL;
    int rc = MPI_Comm_split(inter, col[g][lrank], key[g][lrank], &nc);
    CHECK_RC(rc, "MPI_Comm_split(intercomm)");
    int L[MAXP], R[MAXP];
    int nl = chosen(w[g], col[g], key[g], nw[g], col[g][lrank], L);
    int nr = chosen(w[1 - g], col[1 - g], key[1 - g], nw[1 - g], col[g][lrank], R);
    snprintf(what, sizeof what, "split %s color %d", MTest_Inter_name(shape), col[g][lrank]);
    if (nr == 0) {
        CHECK(nc == MPI_COMM_NULL, "%s: no remote rank has the color, expected MPI_COMM_NULL",
                      what);
    } else {
        CHECK(nc != MPI_COMM_NULL, "%s: got MPI_COMM_NULL", what);
        if (nc != MPI_COMM_NULL)
            errs += check_inter(nc, L, nl, R, nr, what);
    }
    if (nc != MPI_COMM_NULL)
        MPI_Comm_free(&nc);

    /* Group 1 opts out entirely: nobody gets a communicator. */
    nc = MPI_COMM_WORLD;
    rc = MPI_Comm_split(inter, g == 1 ? MPI_UNDEFINED : 0, 0, &nc);
    CHECK_RC(rc, "MPI_Comm_split(intercomm, MPI_UNDEFINED)");
    CHECK(nc == MPI_COMM_NULL, "split %s with group 1 undefined: expected MPI_COMM_NULL",
                  MTest_Inter_name(shape));
    if (nc != MPI_COMM_NULL && nc != MPI_COMM_WORLD)
        MPI_Comm_free(&nc);
    return errs;
}

static int test_create(int shape, MPI_Comm inter, int g)
{
    int n = mtest_size, errs = 0;
    int w[2][MAXP], nw[2];
    for (int s = 0; s < 2; s++)
        nw[s] = group_of(shape, s, n, w[s]);
    /* Each side: its local ranks 1..size-1. */
    MPI_Group lg, sub;
    MPI_Comm_group(inter, &lg);
    int lsize = nw[g];
    if (lsize > 1) {
        int range[1][3] = {{1, lsize - 1, 1}};
        MPI_Group_range_incl(lg, 1, range, &sub);
    } else {
        sub = MPI_GROUP_EMPTY;
    }
    MPI_Comm nc = MPI_COMM_WORLD;
    int rc = MPI_Comm_create(inter, sub, &nc);
    CHECK_RC(rc, "MPI_Comm_create(intercomm)");
    int L[MAXP], R[MAXP], nl = 0, nr = 0, in = 0;
    for (int i = 1; i < nw[g]; i++) {
        L[nl++] = w[g][i];
        in |= w[g][i] == mtest_rank;
    }
    for (int i = 1; i < nw[1 - g]; i++)
        R[nr++] = w[1 - g][i];
    char what[96];
    snprintf(what, sizeof what, "create %s", MTest_Inter_name(shape));
    if (!in || nr == 0) {
        CHECK(nc == MPI_COMM_NULL, "%s: expected MPI_COMM_NULL", what);
    } else {
        CHECK(nc != MPI_COMM_NULL && nc != MPI_COMM_WORLD, "%s: no communicator", what);
        if (nc != MPI_COMM_NULL && nc != MPI_COMM_WORLD)
            errs += check_inter(nc, L, nl, R, nr, what);
    }
    if (nc != MPI_COMM_NULL && nc != MPI_COMM_WORLD)
        MPI_Comm_free(&nc);
    if (sub != MPI_GROUP_EMPTY)
        MPI_Group_free(&sub);
    MPI_Group_free(&lg);
    return errs;
}

int main(int argc, char **argv)
{
    int errs = 0;
    MTest_Init(&argc, &argv);
    if (mtest_size < 2 || mtest_size > MAXP) {
        MTest_Skip("needs 2 to 64 processes");
        return MTest_Finalize(0);
    }
    for (int shape = 0; shape < MTEST_INTER_SHAPES; shape++) {
        MPI_Comm inter;
        int g;
        if (!MTest_Inter_make(shape, &inter, &g))
            continue;
        errs += test_split(shape, inter, g);
        errs += test_create(shape, inter, g);
        MPI_Comm_free(&inter);
    }
    return MTest_Finalize(errs);
}
