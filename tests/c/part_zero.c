/* part_zero.c: partitioned transfers whose partitions carry no data (count 0).
 *
 * A zero-size partition still arrives only when its sender marks it ready: MPI_Parrived must
 * stay false after MPI_Start until the matching MPI_Pready, and the receive round must not
 * complete before the sender has marked every partition ready.  Pairs (0,1), (2,3), ... each
 * run the check; with an odd size the last rank sends to itself.  Orderings are forced by
 * ordinary messages so that nothing depends on timing: the receiver observes "not arrived"
 * before it lets the sender start, and observes partition 1 not arrived while it is
 * provably not yet ready.  Also covers equal and unequal partition counts and several
 * rounds. */
#include "mtest.h"

enum { GO_TAG = 100, P0_TAG = 101, ACK_TAG = 102 };

/* Spins on MPI_Parrived until partition i has arrived. */
static void wait_arrived(MPI_Request req, int i)
{
    int flag = 0;
    while (!flag)
        CHECK_RC(MPI_Parrived(req, i, &flag), "MPI_Parrived");
}

static void sender(int peer, int sp, int tag, int rounds)
{
    MPI_Request req;
    int dummy = 0;
    CHECK_RC(MPI_Psend_init(&dummy, sp, 0, MPI_INT, peer, tag, MPI_COMM_WORLD, MPI_INFO_NULL,
                            &req),
             "MPI_Psend_init");
    for (int r = 0; r < rounds; r++) {
        MPI_Recv(NULL, 0, MPI_INT, peer, GO_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK_RC(MPI_Start(&req), "MPI_Start(send)");
        CHECK_RC(MPI_Pready(0, req), "MPI_Pready(0)");
        MPI_Send(NULL, 0, MPI_INT, peer, P0_TAG, MPI_COMM_WORLD);
        MPI_Recv(NULL, 0, MPI_INT, peer, ACK_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (sp > 1)
            CHECK_RC(MPI_Pready_range(1, sp - 1, req), "MPI_Pready_range");
        CHECK_RC(MPI_Wait(&req, MPI_STATUS_IGNORE), "MPI_Wait(send)");
    }
    CHECK_RC(MPI_Request_free(&req), "MPI_Request_free(send)");
}

static void receiver(int peer, int sp, int rp, int tag, int rounds)
{
    MPI_Request req;
    int dummy = 0, flag;
    CHECK_RC(MPI_Precv_init(&dummy, rp, 0, MPI_INT, peer, tag, MPI_COMM_WORLD, MPI_INFO_NULL,
                            &req),
             "MPI_Precv_init");
    for (int r = 0; r < rounds; r++) {
        CHECK_RC(MPI_Start(&req), "MPI_Start(recv)");
        /* The sender has not even started this round. */
        for (int i = 0; i < rp; i++) {
            flag = -1;
            CHECK_RC(MPI_Parrived(req, i, &flag), "MPI_Parrived");
            CHECK(flag == 0, "round %d: zero-size partition %d of %d arrived before MPI_Pready",
                  r, i, rp);
        }
        flag = -1;
        CHECK_RC(MPI_Test(&req, &flag, MPI_STATUS_IGNORE), "MPI_Test");
        CHECK(flag == 0, "round %d: zero-size receive complete before the sender started", r);
        MPI_Send(NULL, 0, MPI_INT, peer, GO_TAG, MPI_COMM_WORLD);
        /* Sender partition 0 is ready, the others are not (the sender waits for our ack). */
        MPI_Recv(NULL, 0, MPI_INT, peer, P0_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (sp == rp && sp > 1) {
            /* Partition 0 may or may not have arrived yet (an implementation may move the
             * data only once every partition is ready); partition 1 cannot have. */
            flag = -1;
            CHECK_RC(MPI_Parrived(req, 0, &flag), "MPI_Parrived(0)");
            flag = -1;
            CHECK_RC(MPI_Parrived(req, 1, &flag), "MPI_Parrived(1)");
            CHECK(flag == 0, "round %d: partition 1 arrived before its MPI_Pready", r);
        }
        if (sp > 1) {
            flag = -1;
            CHECK_RC(MPI_Test(&req, &flag, MPI_STATUS_IGNORE), "MPI_Test");
            CHECK(flag == 0, "round %d: receive complete with sender partitions not ready", r);
        }
        MPI_Send(NULL, 0, MPI_INT, peer, ACK_TAG, MPI_COMM_WORLD);
        for (int i = 0; i < rp; i++)
            wait_arrived(req, i);
        MPI_Status st;
        CHECK_RC(MPI_Wait(&req, &st), "MPI_Wait(recv)");
        int count = -1;
        MPI_Get_count(&st, MPI_INT, &count);
        CHECK(count == 0, "round %d: received count %d, expected 0", r, count);
        CHECK(st.MPI_SOURCE == peer, "round %d: source %d, expected %d", r, st.MPI_SOURCE, peer);
    }
    CHECK_RC(MPI_Request_free(&req), "MPI_Request_free(recv)");
}

/* Runs one configuration between sender rank s and receiver rank d (s == d at odd sizes). */
static void pair(int s, int d, int sp, int rp, int tag)
{
    if (s == d) {
        /* Self: both requests on one rank; check the first half of the rule only. */
        MPI_Request rq[2];
        int dummy[2] = {0, 0}, flag = -1;
        CHECK_RC(MPI_Precv_init(&dummy[0], rp, 0, MPI_INT, s, tag, MPI_COMM_WORLD, MPI_INFO_NULL,
                                &rq[0]),
                 "MPI_Precv_init(self)");
        CHECK_RC(MPI_Psend_init(&dummy[1], sp, 0, MPI_INT, s, tag, MPI_COMM_WORLD, MPI_INFO_NULL,
                                &rq[1]),
                 "MPI_Psend_init(self)");
        CHECK_RC(MPI_Startall(2, rq), "MPI_Startall(self)");
        for (int i = 0; i < rp; i++) {
            CHECK_RC(MPI_Parrived(rq[0], i, &flag), "MPI_Parrived(self)");
            CHECK(flag == 0, "self: partition %d arrived before any MPI_Pready", i);
        }
        CHECK_RC(MPI_Pready_range(0, sp - 1, rq[1]), "MPI_Pready_range(self)");
        CHECK_RC(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE), "MPI_Waitall(self)");
        MPI_Request_free(&rq[0]);
        MPI_Request_free(&rq[1]);
        return;
    }
    if (mtest_rank == s)
        sender(d, sp, tag, 3);
    else if (mtest_rank == d)
        receiver(s, sp, rp, tag, 3);
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    int base = mtest_rank - mtest_rank % 2;
    int s = base, d = base + 1 < mtest_size ? base + 1 : base;
    static const int shapes[][2] = {{1, 1}, {4, 4}, {8, 8}, {4, 2}, {2, 4}, {3, 5}};
    for (unsigned k = 0; k < sizeof shapes / sizeof shapes[0]; k++)
        pair(s, d, shapes[k][0], shapes[k][1], 7 + (int)k);
    return MTest_Finalize(mtest_errors);
}
