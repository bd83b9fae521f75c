/* procnull: MPI_PROC_NULL as source or destination of every point-to-point call.
 *
 * Sends of every mode (MPI_Bsend without any attached buffer) return at once; receives,
 * probes and matched receives complete at once with source MPI_PROC_NULL, tag MPI_ANY_TAG,
 * count 0 (MPI_Get_count and MPI_Get_elements) and leave the buffer untouched (MPI-4.0
 * section 3.11); MPI_Iprobe / MPI_Improbe give flag true; MPI_Mprobe gives
 * MPI_MESSAGE_NO_PROC, and MPI_Mrecv / MPI_Imrecv on it give the same status and set the
 * message to MPI_MESSAGE_NULL; persistent requests with MPI_PROC_NULL start and complete.
 * (MPICH 4.0.2 deviates for nonblocking receives: see LAX_NONBLOCKING_PROC_NULL.) */
#include "mtest.h"

/* MPICH 4.0.2 (Debian, ch4:ucx) completes a nonblocking or persistent receive from
 * MPI_PROC_NULL with source 0 / tag 0 (MPI_Irecv) or source MPI_ANY_SOURCE (persistent),
 * against MPI-4.0 section 3.11: for MPICH 4.0.x those statuses are checked for count only. */
#if defined(MPICH_NUMVERSION) && MPICH_NUMVERSION < 40100000
#define LAX_NONBLOCKING_PROC_NULL 1
#else
#define LAX_NONBLOCKING_PROC_NULL 0
#endif

static void check_status(const MPI_Status *st, const char *what, int nonblocking)
{
    int count = -1, elems = -1;
    MPI_Get_count(st, MPI_INT, &count);
    MPI_Get_elements(st, MPI_INT, &elems);
    if (!(nonblocking && LAX_NONBLOCKING_PROC_NULL)) {
        CHECK(st->MPI_SOURCE == MPI_PROC_NULL, "%s: source %d", what, st->MPI_SOURCE);
        CHECK(st->MPI_TAG == MPI_ANY_TAG, "%s: tag %d", what, st->MPI_TAG);
    }
    CHECK(count == 0, "%s: count %d", what, count);
    CHECK(elems == 0, "%s: elements %d", what, elems);
}

#define check_null_status(st, what) check_status(st, what, 0)
#define check_nb_null_status(st, what) check_status(st, what, 1)

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    int buf[8], rc;
    MPI_Status st;
    MPI_Request req;
    for (int i = 0; i < 8; i++)
        buf[i] = 1000 + i;

    /* Sends. */
    rc = MPI_Send(buf, 8, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD);
    CHECK_RC(rc, "MPI_Send to PROC_NULL");
    rc = MPI_Ssend(buf, 8, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD);
    CHECK_RC(rc, "MPI_Ssend to PROC_NULL");
    rc = MPI_Rsend(buf, 8, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD);
    CHECK_RC(rc, "MPI_Rsend to PROC_NULL");
    rc = MPI_Bsend(buf, 8, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD);
    CHECK_RC(rc, "MPI_Bsend to PROC_NULL without a buffer attached");
    rc = MPI_Send(buf, 8, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_SELF);
    CHECK_RC(rc, "MPI_Send to PROC_NULL on SELF");
    typedef int (*isend_fn)(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
    isend_fn isends[4] = {MPI_Isend, MPI_Issend, MPI_Irsend, MPI_Ibsend};
    const char *inames[4] = {"MPI_Isend", "MPI_Issend", "MPI_Irsend", "MPI_Ibsend"};
    for (int k = 0; k < 4; k++) {
        rc = isends[k](buf, 8, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &req);
        CHECK_RC(rc, inames[k]);
        int flag = 0;
        for (int spin = 0; spin < 1000000 && !flag; spin++)
            MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
        CHECK(flag, "%s to PROC_NULL never completed under MPI_Test", inames[k]);
        CHECK(req == MPI_REQUEST_NULL, "%s: request not freed by MPI_Test", inames[k]);
    }

    /* Receives. */
    MTest_Poison_status(&st);
    rc = MPI_Recv(buf, 8, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st);
    CHECK_RC(rc, "MPI_Recv from PROC_NULL");
    check_null_status(&st, "MPI_Recv");
    MTest_Poison_status(&st);
    rc = MPI_Recv(buf, 8, MPI_INT, MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_SELF, &st);
    check_null_status(&st, "MPI_Recv on SELF with ANY_TAG");
    rc = MPI_Irecv(buf, 8, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &req);
    CHECK_RC(rc, "MPI_Irecv from PROC_NULL");
    int flag = 0;
    MTest_Poison_status(&st);
    for (int spin = 0; spin < 1000000 && !flag; spin++)
        MPI_Test(&req, &flag, &st);
    if (CHECK(flag, "MPI_Irecv from PROC_NULL never completed"))
        check_nb_null_status(&st, "MPI_Irecv + MPI_Test");
    rc = MPI_Irecv(buf, 8, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &req);
    MTest_Poison_status(&st);
    MPI_Wait(&req, &st);
    check_nb_null_status(&st, "MPI_Irecv + MPI_Wait");
    for (int i = 0; i < 8; i++)
        CHECK(buf[i] == 1000 + i, "a receive from PROC_NULL wrote the buffer (element %d = %d)", i, buf[i]);

    /* Sendrecv. */
    int other[8];
    memset(other, 0x11, sizeof other);
    MTest_Poison_status(&st);
    rc = MPI_Sendrecv(buf, 8, MPI_INT, MPI_PROC_NULL, 1, other, 8, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st);
    CHECK_RC(rc, "MPI_Sendrecv with PROC_NULL");
    check_null_status(&st, "MPI_Sendrecv");
    CHECK(MTest_Check_const(other, sizeof other, 0x11) < 0, "MPI_Sendrecv from PROC_NULL wrote the buffer");
    MTest_Poison_status(&st);
    rc = MPI_Sendrecv_replace(buf, 8, MPI_INT, MPI_PROC_NULL, 1, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st);
    CHECK_RC(rc, "MPI_Sendrecv_replace with PROC_NULL");
    check_null_status(&st, "MPI_Sendrecv_replace");
    for (int i = 0; i < 8; i++)
        CHECK(buf[i] == 1000 + i, "MPI_Sendrecv_replace with PROC_NULL changed the buffer");
    /* Half-null: send to self, receive from PROC_NULL, and the other way round. */
    int me = mtest_rank, x = 42, y = -1;
    MPI_Irecv(&y, 1, MPI_INT, me, 4, MPI_COMM_WORLD, &req);
    rc = MPI_Sendrecv(&x, 1, MPI_INT, me, 4, other, 8, MPI_INT, MPI_PROC_NULL, 4, MPI_COMM_WORLD, &st);
    CHECK_RC(rc, "MPI_Sendrecv(dest self, source PROC_NULL)");
    check_null_status(&st, "MPI_Sendrecv(dest self, source PROC_NULL)");
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    CHECK(y == 42, "the half of MPI_Sendrecv to self delivered %d", y);

    /* Probes. */
    MTest_Poison_status(&st);
    rc = MPI_Probe(MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st);
    CHECK_RC(rc, "MPI_Probe(PROC_NULL)");
    check_null_status(&st, "MPI_Probe");
    flag = 0;
    MTest_Poison_status(&st);
    rc = MPI_Iprobe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
    CHECK_RC(rc, "MPI_Iprobe(PROC_NULL)");
    CHECK(flag == 1, "MPI_Iprobe(PROC_NULL) flag %d", flag);
    check_null_status(&st, "MPI_Iprobe");

    /* Matched probes. */
    MPI_Message msg = MPI_MESSAGE_NULL;
    MTest_Poison_status(&st);
    rc = MPI_Mprobe(MPI_PROC_NULL, 1, MPI_COMM_WORLD, &msg, &st);
    CHECK_RC(rc, "MPI_Mprobe(PROC_NULL)");
    CHECK(msg == MPI_MESSAGE_NO_PROC, "MPI_Mprobe(PROC_NULL) did not give MPI_MESSAGE_NO_PROC");
    check_null_status(&st, "MPI_Mprobe");
    MTest_Poison_status(&st);
    rc = MPI_Mrecv(buf, 8, MPI_INT, &msg, &st);
    CHECK_RC(rc, "MPI_Mrecv(MPI_MESSAGE_NO_PROC)");
    CHECK(msg == MPI_MESSAGE_NULL, "MPI_Mrecv did not set the message to MPI_MESSAGE_NULL");
    check_null_status(&st, "MPI_Mrecv");
    flag = 0;
    msg = MPI_MESSAGE_NULL;
    rc = MPI_Improbe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg, &st);
    CHECK_RC(rc, "MPI_Improbe(PROC_NULL)");
    CHECK(flag == 1 && msg == MPI_MESSAGE_NO_PROC, "MPI_Improbe(PROC_NULL): flag %d, NO_PROC %d", flag, msg == MPI_MESSAGE_NO_PROC);
    rc = MPI_Imrecv(buf, 8, MPI_INT, &msg, &req);
    CHECK_RC(rc, "MPI_Imrecv(MPI_MESSAGE_NO_PROC)");
    CHECK(msg == MPI_MESSAGE_NULL, "MPI_Imrecv did not set the message to MPI_MESSAGE_NULL");
    MTest_Poison_status(&st);
    MPI_Wait(&req, &st);
    check_null_status(&st, "MPI_Imrecv + MPI_Wait");
    for (int i = 0; i < 8; i++)
        CHECK(buf[i] == 1000 + i, "a matched receive from PROC_NULL wrote the buffer");

    /* Persistent requests. */
    MPI_Request preq[5];
    MPI_Send_init(buf, 8, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &preq[0]);
    MPI_Ssend_init(buf, 8, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &preq[1]);
    MPI_Bsend_init(buf, 8, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &preq[2]);
    MPI_Rsend_init(buf, 8, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &preq[3]);
    MPI_Recv_init(other, 8, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &preq[4]);
    for (int round = 0; round < 3; round++) {
        rc = MPI_Startall(5, preq);
        CHECK_RC(rc, "MPI_Startall of PROC_NULL requests");
        MPI_Status sts[5];
        for (int i = 0; i < 5; i++)
            MTest_Poison_status(&sts[i]);
        rc = MPI_Waitall(5, preq, sts);
        CHECK_RC(rc, "MPI_Waitall of PROC_NULL requests");
        check_nb_null_status(&sts[4], "persistent receive from PROC_NULL");
        for (int i = 0; i < 5; i++)
            CHECK(preq[i] != MPI_REQUEST_NULL, "persistent request %d freed by MPI_Waitall", i);
    }
    for (int i = 0; i < 5; i++) {
        rc = MPI_Request_free(&preq[i]);
        CHECK_RC(rc, "MPI_Request_free");
        CHECK(preq[i] == MPI_REQUEST_NULL, "MPI_Request_free did not set MPI_REQUEST_NULL");
    }
    return MTest_Finalize(0);
}
