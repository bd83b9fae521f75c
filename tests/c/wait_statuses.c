/* wait_statuses: the statuses that MPI_Wait and MPI_Waitall write (MPI-4.0 sections 3.7.3,
 * 3.7.5), for arrays whose requests complete in every order of "complete already" and "not
 * yet", with MPI_ERRORS_RETURN:
 *
 *  - MPI_Waitall over [complete receive, receive that completes later, null request,
 *    complete send]: every status holds its source, tag and count; the null request's and
 *    the send's are empty (MPI_ANY_SOURCE, MPI_ANY_TAG, count 0); MPI_ERROR is not
 *    modified on success (section 3.2.5: only with MPI_ERR_IN_STATUS; MPICH 4.0 writes
 *    MPI_SUCCESS there, which is accepted); every request reads MPI_REQUEST_NULL after;
 *  - MPI_Waitall over [complete receive, truncated receive]: MPI_ERR_IN_STATUS, the first
 *    status MPI_SUCCESS in MPI_ERROR with its source and tag, the second MPI_ERR_TRUNCATE;
 *  - MPI_Waitall over [complete receive, complete receive, truncated receive, complete
 *    receive]: MPI_ERR_IN_STATUS, MPI_SUCCESS in every status but the truncated one (or
 *    MPI_ERR_PENDING with its request still active, as the standard allows);
 *  - MPI_Wait on a complete receive, on a null request and on a send: source, tag, count,
 *    MPI_ERROR untouched;
 * Each case to self on MPI_COMM_SELF and, where the receive completes later, from the next
 * rank (ring) on MPI_COMM_WORLD.  MTEST_THREAD_LEVEL=multiple initializes with
 * MPI_THREAD_MULTIPLE (the lock-based paths). */
#include "mtest.h"

#define POISON (-77)

static void poison(MPI_Status *st, int n)
{
    for (int i = 0; i < n; i++) {
        MTest_Poison_status(&st[i]);
        st[i].MPI_ERROR = POISON;
    }
}

static int count_of(const MPI_Status *st, MPI_Datatype dt)
{
    int c = -1;
    MPI_Get_count(st, dt, &c);
    return c;
}

static void check_empty(const MPI_Status *st, const char *what)
{
    CHECK(st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG,
                  "%s: empty status has source %d tag %d", what, st->MPI_SOURCE, st->MPI_TAG);
    CHECK(count_of(st, MPI_INT) == 0, "%s: empty status count %d", what, count_of(st, MPI_INT));
}

int main(int argc, char **argv)
{
    int errs = 0, rank, size, rc;
    const char *level = getenv("MTEST_THREAD_LEVEL");
    if (level && !strcmp(level, "multiple")) {
        int provided;
        MTest_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    } else {
        MTest_Init(&argc, &argv);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;

    /* Complete, later, null, send. */
    for (int iter = 0; iter < 3; iter++) {
        int a[3] = {0}, b[5] = {0}, out[3] = {1, 2, 3}, later[5] = {4, 5, 6, 7, 8};
        MPI_Request r[4];
        MPI_Status st[4];
        poison(st, 4);
        MPI_Irecv(a, 3, MPI_INT, 0, 11, MPI_COMM_SELF, &r[0]);
        MPI_Irecv(b, 5, MPI_INT, prev, 12 + iter, MPI_COMM_WORLD, &r[1]);
        r[2] = MPI_REQUEST_NULL;
        MPI_Isend(out, 2, MPI_INT, 0, 11, MPI_COMM_SELF, &r[3]);
        /* The receive from `prev` arrives only once everyone got here. */
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Send(later, 4, MPI_INT, next, 12 + iter, MPI_COMM_WORLD);
        rc = MPI_Waitall(4, r, st);
        CHECK_RC(rc, "MPI_Waitall(complete, later, null, send)");
        CHECK(st[0].MPI_SOURCE == 0 && st[0].MPI_TAG == 11 && count_of(&st[0], MPI_INT) == 2,
                      "complete receive: source %d tag %d count %d", st[0].MPI_SOURCE, st[0].MPI_TAG,
                      count_of(&st[0], MPI_INT));
        CHECK(st[1].MPI_SOURCE == prev && st[1].MPI_TAG == 12 + iter && count_of(&st[1], MPI_INT) == 4,
                      "later receive: source %d tag %d count %d", st[1].MPI_SOURCE, st[1].MPI_TAG,
                      count_of(&st[1], MPI_INT));
        check_empty(&st[2], "null request");
        for (int i = 0; i < 4; i++) {
            CHECK(r[i] == MPI_REQUEST_NULL, "request %d not freed", i);
            CHECK(st[i].MPI_ERROR == POISON || st[i].MPI_ERROR == MPI_SUCCESS,
                          "status %d: MPI_ERROR set to %d on success", i, st[i].MPI_ERROR);
        }
        CHECK(a[0] == 1 && a[1] == 2 && a[2] == 0, "complete receive data %d %d %d", a[0], a[1], a[2]);
        CHECK(b[0] == 4 && b[3] == 7 && b[4] == 0, "later receive data %d %d %d", b[0], b[3], b[4]);
    }

    /* A complete prefix, then a truncated receive (and, in the longer array, more after). */
    for (int len = 2; len <= 4; len += 2) {
        int bufs[4][2], out[4] = {9, 9, 9, 9};
        MPI_Request r[4];
        MPI_Status st[4];
        int bad = len == 2 ? 1 : 2;
        const char *what = len == 2 ? "MPI_Waitall(complete, truncated)" : "MPI_Waitall(complete x2, truncated, complete)";
        poison(st, 4);
        for (int i = 0; i < len; i++)
            MPI_Irecv(bufs[i], i == bad ? 1 : 2, MPI_INT, 0, 20 + i, MPI_COMM_SELF, &r[i]);
        for (int i = 0; i < len; i++)
            MPI_Send(out, 2, MPI_INT, 0, 20 + i, MPI_COMM_SELF);
        rc = MPI_Waitall(len, r, st);
        CHECK_CLASS(rc, MPI_ERR_IN_STATUS, what);
        if (MTest_Class(rc) == MPI_ERR_IN_STATUS) {
            for (int i = 0; i < len; i++) {
                if (i == bad) {
                    CHECK(MTest_Class(st[i].MPI_ERROR) == MPI_ERR_TRUNCATE, "%s: status %d MPI_ERROR %s",
                                  what, i, MTest_Describe(st[i].MPI_ERROR));
                    CHECK(st[i].MPI_TAG == 20 + i, "%s: truncated status tag %d", what, st[i].MPI_TAG);
                    continue;
                }
                if (st[i].MPI_ERROR != MPI_SUCCESS && MTest_Class(st[i].MPI_ERROR) == MPI_ERR_PENDING) {
                    CHECK(r[i] != MPI_REQUEST_NULL, "%s: pending request %d was freed", what, i);
                    rc = MPI_Wait(&r[i], &st[i]);
                    CHECK_RC(rc, "MPI_Wait on a pending receive");
                } else {
                    CHECK(st[i].MPI_ERROR == MPI_SUCCESS, "%s: status %d MPI_ERROR %s", what, i,
                                  MTest_Describe(st[i].MPI_ERROR));
                }
                CHECK(st[i].MPI_SOURCE == 0 && st[i].MPI_TAG == 20 + i && count_of(&st[i], MPI_INT) == 2,
                              "%s: status %d source %d tag %d count %d", what, i, st[i].MPI_SOURCE, st[i].MPI_TAG,
                              count_of(&st[i], MPI_INT));
                CHECK(bufs[i][0] == 9 && bufs[i][1] == 9, "%s: receive %d data", what, i);
            }
            for (int i = 0; i < len; i++)
                CHECK(r[i] == MPI_REQUEST_NULL, "%s: request %d not freed", what, i);
        } else {
            for (int i = 0; i < len; i++)
                if (r[i] != MPI_REQUEST_NULL)
                    MPI_Wait(&r[i], MPI_STATUS_IGNORE);
        }
    }

    /* MPI_Wait: complete receive, null request, send. */
    {
        int x = 0, y = 5;
        MPI_Request r = MPI_REQUEST_NULL, s;
        MPI_Status st;
        MTest_Poison_status(&st);
        st.MPI_ERROR = POISON;
        rc = MPI_Wait(&r, &st);
        CHECK_RC(rc, "MPI_Wait(MPI_REQUEST_NULL)");
        check_empty(&st, "MPI_Wait(MPI_REQUEST_NULL)");
        MPI_Irecv(&x, 1, MPI_INT, 0, 31, MPI_COMM_SELF, &r);
        MPI_Isend(&y, 1, MPI_INT, 0, 31, MPI_COMM_SELF, &s);
        MTest_Poison_status(&st);
        st.MPI_ERROR = POISON;
        rc = MPI_Wait(&s, &st);
        CHECK_RC(rc, "MPI_Wait(send)");
        CHECK(s == MPI_REQUEST_NULL, "MPI_Wait(send): request not freed");
        MTest_Poison_status(&st);
        st.MPI_ERROR = POISON;
        rc = MPI_Wait(&r, &st);
        CHECK_RC(rc, "MPI_Wait(receive)");
        CHECK(r == MPI_REQUEST_NULL, "MPI_Wait(receive): request not freed");
        CHECK(st.MPI_SOURCE == 0 && st.MPI_TAG == 31 && count_of(&st, MPI_INT) == 1 && x == 5,
                      "MPI_Wait(receive): source %d tag %d count %d data %d", st.MPI_SOURCE, st.MPI_TAG,
                      count_of(&st, MPI_INT), x);
        CHECK(st.MPI_ERROR == POISON, "MPI_Wait(receive): MPI_ERROR set to %d", st.MPI_ERROR);
    }

    return MTest_Finalize(errs);
}
