/* test_statuses: what MPI_Test does with one request (MPI-4.0 section 3.7.3), with
 * MPI_ERRORS_RETURN, with a status and with MPI_STATUS_IGNORE:
 *
 *  - a complete receive to self: flag true, source, tag and count in the status, MPI_ERROR
 *    not modified (MPICH 4.0 writes MPI_SUCCESS there, which is accepted), the request
 *    freed, the data delivered;
 *  - a send to self whose receive was posted (complete at once): flag true, the request
 *    freed, a status that is not cancelled (the standard leaves a send's source and tag
 *    undefined: hympi writes the empty status, MPICH 4.0 leaves them);
 *  - MPI_REQUEST_NULL: flag true, an empty status;
 *  - a receive nothing matches yet: flag false and the request unchanged, then, after the
 *    matching send, flag true with its status;
 *  - a receive from the previous rank (ring) on MPI_COMM_WORLD, polled until it completes:
 *    its source, tag and count;
 *  - a truncated receive: MPI_ERR_TRUNCATE returned, flag true, the request freed;
 *  - a persistent receive: flag true with the status once the message arrived, the request
 *    kept (inactive); MPI_Test on it again: flag true and an empty status;
 *  - flag NULL on a complete receive: an error of class MPI_ERR_ARG, the request left as it
 *    was (MPI_Wait then completes it).
 * MTEST_THREAD_LEVEL=multiple initializes with MPI_THREAD_MULTIPLE (the lock-based paths). */
#include "mtest.h"

#define POISON (-77)

static void poison(MPI_Status *st)
{
    MTest_Poison_status(st);
    st->MPI_ERROR = POISON;
}

static int count_of(const MPI_Status *st)
{
    int c = -1;
    MPI_Get_count(st, MPI_INT, &c);
    return c;
}

static int is_empty(const MPI_Status *st)
{
    return st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG && count_of(st) == 0;
}

/* MPI_Test until it reports completion (at most `limit` calls); the last return code. */
static int test_until_done(MPI_Request *r, MPI_Status *st, int *flag, long limit)
{
    int rc = MPI_SUCCESS;
    *flag = 0;
    for (long i = 0; i < limit && !*flag; i++)
        rc = MPI_Test(r, flag, st);
    return rc;
}

int main(int argc, char **argv)
{
    int errs = 0, rank, size, rc, flag;
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

    for (int ignore = 0; ignore < 2; ignore++) {
        MPI_Status st;
        MPI_Status *stp = ignore ? MPI_STATUS_IGNORE : &st;
        const char *how = ignore ? "MPI_STATUS_IGNORE" : "a status";

        /* Complete receive, then the send it matched. */
        for (int iter = 0; iter < 3; iter++) {
            int x[2] = {0, 0}, y[2] = {5 + iter, 6};
            MPI_Request r, s;
            MPI_Irecv(x, 2, MPI_INT, 0, 31, MPI_COMM_SELF, &r);
            MPI_Isend(y, 1, MPI_INT, 0, 31, MPI_COMM_SELF, &s);
            poison(&st);
            flag = -1;
            rc = MPI_Test(&s, &flag, stp);
            CHECK_RC(rc, "MPI_Test(send)");
            CHECK(flag == 1 && s == MPI_REQUEST_NULL, "MPI_Test(send) with %s: flag %d, request %s", how,
                  flag, s == MPI_REQUEST_NULL ? "freed" : "kept");
            if (!ignore) {
                int cancelled = -1;
                MPI_Test_cancelled(&st, &cancelled);
                CHECK(cancelled == 0, "MPI_Test(send): status says cancelled (%d)", cancelled);
            }
            poison(&st);
            flag = -1;
            rc = MPI_Test(&r, &flag, stp);
            CHECK_RC(rc, "MPI_Test(receive)");
            CHECK(flag == 1 && r == MPI_REQUEST_NULL, "MPI_Test(receive) with %s: flag %d, request %s",
                  how, flag, r == MPI_REQUEST_NULL ? "freed" : "kept");
            CHECK(x[0] == 5 + iter && x[1] == 0, "MPI_Test(receive): data %d %d", x[0], x[1]);
            if (!ignore) {
                CHECK(st.MPI_SOURCE == 0 && st.MPI_TAG == 31 && count_of(&st) == 1,
                      "MPI_Test(receive): source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG,
                      count_of(&st));
                CHECK(st.MPI_ERROR == POISON || st.MPI_ERROR == MPI_SUCCESS,
                      "MPI_Test(receive): MPI_ERROR set to %d on success", st.MPI_ERROR);
            }
        }

        /* The null request. */
        {
            MPI_Request r = MPI_REQUEST_NULL;
            poison(&st);
            flag = -1;
            rc = MPI_Test(&r, &flag, stp);
            CHECK_RC(rc, "MPI_Test(MPI_REQUEST_NULL)");
            CHECK(flag == 1, "MPI_Test(MPI_REQUEST_NULL) with %s: flag %d", how, flag);
            CHECK(ignore || is_empty(&st), "MPI_Test(MPI_REQUEST_NULL): status not empty");
        }

        /* Not yet matched, then matched. */
        {
            int x = 0, y = 17;
            MPI_Request r, before;
            MPI_Irecv(&x, 1, MPI_INT, 0, 41, MPI_COMM_SELF, &r);
            before = r;
            flag = -1;
            rc = MPI_Test(&r, &flag, stp);
            CHECK_RC(rc, "MPI_Test(unmatched receive)");
            CHECK(flag == 0 && r == before, "MPI_Test(unmatched receive) with %s: flag %d, request %s",
                  how, flag, r == before ? "kept" : "changed");
            MPI_Send(&y, 1, MPI_INT, 0, 41, MPI_COMM_SELF);
            poison(&st);
            rc = MPI_Test(&r, &flag, stp);
            CHECK_RC(rc, "MPI_Test(matched receive)");
            CHECK(flag == 1 && r == MPI_REQUEST_NULL && x == 17,
                  "MPI_Test(matched receive) with %s: flag %d, data %d", how, flag, x);
            CHECK(ignore || (st.MPI_SOURCE == 0 && st.MPI_TAG == 41 && count_of(&st) == 1),
                  "MPI_Test(matched receive): source %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
        }

        /* From the previous rank, polled. */
        {
            int in[4] = {0}, out[3] = {rank, 2, 3};
            MPI_Request r;
            MPI_Irecv(in, 4, MPI_INT, prev, 51, MPI_COMM_WORLD, &r);
            MPI_Send(out, 3, MPI_INT, next, 51, MPI_COMM_WORLD);
            poison(&st);
            rc = test_until_done(&r, stp, &flag, 100000000L);
            CHECK_RC(rc, "MPI_Test(receive from prev)");
            CHECK(flag == 1 && r == MPI_REQUEST_NULL && in[0] == prev && in[3] == 0,
                  "MPI_Test(receive from prev) with %s: flag %d, data %d", how, flag, in[0]);
            CHECK(ignore || (st.MPI_SOURCE == prev && st.MPI_TAG == 51 && count_of(&st) == 3),
                  "MPI_Test(receive from prev): source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG,
                  count_of(&st));
        }

        /* Truncated. */
        {
            int x = 0, y[2] = {7, 8};
            MPI_Request r;
            MPI_Irecv(&x, 1, MPI_INT, 0, 61, MPI_COMM_SELF, &r);
            MPI_Send(y, 2, MPI_INT, 0, 61, MPI_COMM_SELF);
            poison(&st);
            flag = -1;
            rc = MPI_Test(&r, &flag, stp);
            CHECK_CLASS(rc, MPI_ERR_TRUNCATE, "MPI_Test(truncated receive)");
            CHECK(flag == 1 && r == MPI_REQUEST_NULL, "MPI_Test(truncated receive) with %s: flag %d", how,
                  flag);
        }

        /* Persistent. */
        {
            int x = 0, y = 23;
            MPI_Request r;
            MPI_Recv_init(&x, 1, MPI_INT, 0, 71, MPI_COMM_SELF, &r);
            for (int round = 0; round < 2; round++) {
                MPI_Start(&r);
                MPI_Send(&y, 1, MPI_INT, 0, 71, MPI_COMM_SELF);
                poison(&st);
                rc = test_until_done(&r, stp, &flag, 1000000L);
                CHECK_RC(rc, "MPI_Test(persistent receive)");
                CHECK(flag == 1 && r != MPI_REQUEST_NULL && x == 23,
                      "MPI_Test(persistent receive) with %s: flag %d, data %d", how, flag, x);
                CHECK(ignore || (st.MPI_SOURCE == 0 && st.MPI_TAG == 71),
                      "MPI_Test(persistent receive): source %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
                poison(&st);
                flag = -1;
                rc = MPI_Test(&r, &flag, stp);
                CHECK_RC(rc, "MPI_Test(inactive persistent receive)");
                CHECK(flag == 1 && r != MPI_REQUEST_NULL, "MPI_Test(inactive persistent) with %s: flag %d",
                      how, flag);
                CHECK(ignore || is_empty(&st), "MPI_Test(inactive persistent): status not empty");
            }
            MPI_Request_free(&r);
        }

        /* flag NULL: an error, and the request left alone. */
        {
            int x = 0, y = 29;
            MPI_Request r, before;
            MPI_Irecv(&x, 1, MPI_INT, 0, 81, MPI_COMM_SELF, &r);
            MPI_Send(&y, 1, MPI_INT, 0, 81, MPI_COMM_SELF);
            before = r;
            rc = MPI_Test(&r, NULL, stp);
            CHECK_CLASS(rc, MPI_ERR_ARG, "MPI_Test(flag NULL)");
            CHECK(r == before, "MPI_Test(flag NULL) with %s changed the request", how);
            rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
            CHECK_RC(rc, "MPI_Wait after MPI_Test(flag NULL)");
            CHECK(x == 29, "MPI_Wait after MPI_Test(flag NULL): data %d", x);
        }
    }

    return MTest_Finalize(errs);
}
