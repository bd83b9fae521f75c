/* invalid_args: erroneous arguments with MPI_ERRORS_RETURN on MPI_COMM_WORLD and
 * MPI_COMM_SELF (an invalid communicator's error goes to WORLD in MPI-3, SELF in MPI-4),
 * each must return an error of the right class (MPI_Error_class):
 *
 *  - bad rank (size, -5, MPI_ANY_SOURCE as a destination, rank 1 on MPI_COMM_SELF) ->
 *    MPI_ERR_RANK;
 *  - bad tag (-5, MPI_ANY_TAG on a send) -> MPI_ERR_TAG;
 *  - negative count -> MPI_ERR_COUNT;
 *  - MPI_DATATYPE_NULL -> MPI_ERR_TYPE;
 *  - MPI_COMM_NULL -> MPI_ERR_COMM;
 * for every send mode, blocking and nonblocking and persistent, receives, MPI_Sendrecv(_replace),
 * probes and matched probes; MPI_Start / MPI_Startall / MPI_Request_free / MPI_Cancel of
 * MPI_REQUEST_NULL and MPI_Start of a non-persistent request -> MPI_ERR_REQUEST;
 * MPI_Mrecv / MPI_Imrecv of MPI_MESSAGE_NULL -> MPI_ERR_REQUEST (MPICH; Open MPI 4.1 raises
 * that one as fatal whatever the handlers, so it is skipped there, like the probes on
 * MPI_COMM_NULL); MPI_Get_count / MPI_Get_elements / MPI_Type_size /
 * MPI_Status_set_elements with MPI_DATATYPE_NULL -> MPI_ERR_TYPE; negative counts to
 * MPI_Waitall / MPI_Testany -> MPI_ERR_COUNT or MPI_ERR_ARG (MPICH says COUNT, Open MPI ARG;
 * the standard names neither); a NULL output pointer to MPI_Comm_rank, an invalid error
 * handler, a negative MPI_Buffer_attach size -> MPI_ERR_ARG.
 * The erroneous calls send nothing (a probe afterwards finds no message) and the
 * communicators keep working. */
#include "mtest.h"

static int x[4], y[4];

/* A barrier from point-to-point messages: arrivals tagged `tag` to rank 0, releases tagged
 * `tag + 1` back. */
static void barrier(int tag)
{
    int dummy = 0;
    if (mtest_rank == 0) {
        for (int k = 1; k < mtest_size; k++)
            MPI_Recv(&dummy, 0, MPI_INT, k, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int k = 1; k < mtest_size; k++)
            MPI_Send(&dummy, 0, MPI_INT, k, tag + 1, MPI_COMM_WORLD);
    } else {
        MPI_Send(&dummy, 0, MPI_INT, 0, tag, MPI_COMM_WORLD);
        MPI_Recv(&dummy, 0, MPI_INT, 0, tag + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
}

#define TAG_BARRIER1 7
#define TAG_BARRIER2 17

#define E(cls, call) CHECK_CLASS((call), cls, #call)

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    MTest_Errors_return_all();
    int size = mtest_size, me = mtest_rank, flag;
    MPI_Comm W = MPI_COMM_WORLD;
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_Status st;
    MPI_Message m = MPI_MESSAGE_NULL;
    char bb[4096];
    MPI_Buffer_attach(bb, sizeof bb);

    /* Ranks. */
    int bad_ranks[3] = {size, -5, MPI_ANY_SOURCE};
    for (int k = 0; k < 3; k++) {
        int d = bad_ranks[k];
        E(MPI_ERR_RANK, MPI_Send(x, 1, MPI_INT, d, 0, W));
        E(MPI_ERR_RANK, MPI_Ssend(x, 1, MPI_INT, d, 0, W));
        E(MPI_ERR_RANK, MPI_Rsend(x, 1, MPI_INT, d, 0, W));
        E(MPI_ERR_RANK, MPI_Bsend(x, 1, MPI_INT, d, 0, W));
        E(MPI_ERR_RANK, MPI_Isend(x, 1, MPI_INT, d, 0, W, &r));
        E(MPI_ERR_RANK, MPI_Issend(x, 1, MPI_INT, d, 0, W, &r));
        E(MPI_ERR_RANK, MPI_Irsend(x, 1, MPI_INT, d, 0, W, &r));
        E(MPI_ERR_RANK, MPI_Ibsend(x, 1, MPI_INT, d, 0, W, &r));
        E(MPI_ERR_RANK, MPI_Send_init(x, 1, MPI_INT, d, 0, W, &r));
        E(MPI_ERR_RANK, MPI_Ssend_init(x, 1, MPI_INT, d, 0, W, &r));
        E(MPI_ERR_RANK, MPI_Bsend_init(x, 1, MPI_INT, d, 0, W, &r));
        E(MPI_ERR_RANK, MPI_Rsend_init(x, 1, MPI_INT, d, 0, W, &r));
        E(MPI_ERR_RANK, MPI_Sendrecv(x, 1, MPI_INT, d, 0, y, 1, MPI_INT, me, 0, W, &st));
        E(MPI_ERR_RANK, MPI_Sendrecv_replace(x, 1, MPI_INT, d, 0, me, 0, W, &st));
        if (d != MPI_ANY_SOURCE) {
            E(MPI_ERR_RANK, MPI_Recv(y, 1, MPI_INT, d, 0, W, &st));
            E(MPI_ERR_RANK, MPI_Irecv(y, 1, MPI_INT, d, 0, W, &r));
            E(MPI_ERR_RANK, MPI_Recv_init(y, 1, MPI_INT, d, 0, W, &r));
            E(MPI_ERR_RANK, MPI_Sendrecv(x, 1, MPI_INT, me, 0, y, 1, MPI_INT, d, 0, W, &st));
            E(MPI_ERR_RANK, MPI_Probe(d, 0, W, &st));
            E(MPI_ERR_RANK, MPI_Iprobe(d, 0, W, &flag, &st));
            E(MPI_ERR_RANK, MPI_Mprobe(d, 0, W, &m, &st));
            E(MPI_ERR_RANK, MPI_Improbe(d, 0, W, &flag, &m, &st));
        }
    }
    E(MPI_ERR_RANK, MPI_Send(x, 1, MPI_INT, 1, 0, MPI_COMM_SELF));
    E(MPI_ERR_RANK, MPI_Irecv(y, 1, MPI_INT, 1, 0, MPI_COMM_SELF, &r));

    /* Tags. */
    int bad_tags[2] = {-5, MPI_ANY_TAG};
    for (int k = 0; k < 2; k++) {
        int t = bad_tags[k];
        E(MPI_ERR_TAG, MPI_Send(x, 1, MPI_INT, me, t, W));
        E(MPI_ERR_TAG, MPI_Ssend(x, 1, MPI_INT, me, t, W));
        E(MPI_ERR_TAG, MPI_Rsend(x, 1, MPI_INT, me, t, W));
        E(MPI_ERR_TAG, MPI_Bsend(x, 1, MPI_INT, me, t, W));
        E(MPI_ERR_TAG, MPI_Isend(x, 1, MPI_INT, me, t, W, &r));
        E(MPI_ERR_TAG, MPI_Issend(x, 1, MPI_INT, me, t, W, &r));
        E(MPI_ERR_TAG, MPI_Irsend(x, 1, MPI_INT, me, t, W, &r));
        E(MPI_ERR_TAG, MPI_Ibsend(x, 1, MPI_INT, me, t, W, &r));
        E(MPI_ERR_TAG, MPI_Send_init(x, 1, MPI_INT, me, t, W, &r));
        E(MPI_ERR_TAG, MPI_Rsend_init(x, 1, MPI_INT, me, t, W, &r));
        E(MPI_ERR_TAG, MPI_Sendrecv(x, 1, MPI_INT, me, t, y, 1, MPI_INT, me, 0, W, &st));
        E(MPI_ERR_TAG, MPI_Sendrecv_replace(x, 1, MPI_INT, me, t, me, 0, W, &st));
        if (t != MPI_ANY_TAG) {
            E(MPI_ERR_TAG, MPI_Recv(y, 1, MPI_INT, me, t, W, &st));
            E(MPI_ERR_TAG, MPI_Irecv(y, 1, MPI_INT, me, t, W, &r));
            E(MPI_ERR_TAG, MPI_Recv_init(y, 1, MPI_INT, me, t, W, &r));
            E(MPI_ERR_TAG, MPI_Probe(me, t, W, &st));
            E(MPI_ERR_TAG, MPI_Iprobe(me, t, W, &flag, &st));
            E(MPI_ERR_TAG, MPI_Improbe(me, t, W, &flag, &m, &st));
            E(MPI_ERR_TAG, MPI_Sendrecv(x, 1, MPI_INT, me, 0, y, 1, MPI_INT, me, t, W, &st));
        }
    }

    /* Counts. */
    E(MPI_ERR_COUNT, MPI_Send(x, -1, MPI_INT, me, 0, W));
    E(MPI_ERR_COUNT, MPI_Ssend(x, -1, MPI_INT, me, 0, W));
    E(MPI_ERR_COUNT, MPI_Bsend(x, -1, MPI_INT, me, 0, W));
    E(MPI_ERR_COUNT, MPI_Rsend(x, -1, MPI_INT, me, 0, W));
    E(MPI_ERR_COUNT, MPI_Isend(x, -3, MPI_INT, me, 0, W, &r));
    E(MPI_ERR_COUNT, MPI_Irecv(y, -1, MPI_INT, me, 0, W, &r));
    E(MPI_ERR_COUNT, MPI_Recv(y, -1, MPI_INT, me, 0, W, &st));
    E(MPI_ERR_COUNT, MPI_Send_init(x, -1, MPI_INT, me, 0, W, &r));
    E(MPI_ERR_COUNT, MPI_Recv_init(y, -1, MPI_INT, me, 0, W, &r));
    E(MPI_ERR_COUNT, MPI_Sendrecv(x, -1, MPI_INT, me, 0, y, 1, MPI_INT, me, 0, W, &st));
    E(MPI_ERR_COUNT, MPI_Sendrecv_replace(x, -1, MPI_INT, me, 0, me, 0, W, &st));
    E(MPI_ERR_COUNT, MPI_Status_set_elements(&st, MPI_INT, -1));

    /* Datatypes. */
    MPI_Datatype N = MPI_DATATYPE_NULL;
    E(MPI_ERR_TYPE, MPI_Send(x, 1, N, me, 0, W));
    E(MPI_ERR_TYPE, MPI_Isend(x, 1, N, me, 0, W, &r));
    E(MPI_ERR_TYPE, MPI_Bsend(x, 1, N, me, 0, W));
    E(MPI_ERR_TYPE, MPI_Recv(y, 1, N, me, 0, W, &st));
    E(MPI_ERR_TYPE, MPI_Irecv(y, 1, N, me, 0, W, &r));
    E(MPI_ERR_TYPE, MPI_Send_init(x, 1, N, me, 0, W, &r));
    E(MPI_ERR_TYPE, MPI_Recv_init(y, 1, N, me, 0, W, &r));
    E(MPI_ERR_TYPE, MPI_Sendrecv(x, 1, MPI_INT, me, 0, y, 1, N, me, 0, W, &st));
    E(MPI_ERR_TYPE, MPI_Sendrecv_replace(x, 1, N, me, 0, me, 0, W, &st));
    E(MPI_ERR_TYPE, MPI_Get_count(&st, N, &flag));
    E(MPI_ERR_TYPE, MPI_Get_elements(&st, N, &flag));
    E(MPI_ERR_TYPE, MPI_Type_size(N, &flag));
    E(MPI_ERR_TYPE, MPI_Status_set_elements(&st, N, 1));

    /* Communicators. */
    MPI_Comm C = MPI_COMM_NULL;
    E(MPI_ERR_COMM, MPI_Send(x, 1, MPI_INT, 0, 0, C));
    E(MPI_ERR_COMM, MPI_Ssend(x, 1, MPI_INT, 0, 0, C));
    E(MPI_ERR_COMM, MPI_Isend(x, 1, MPI_INT, 0, 0, C, &r));
    E(MPI_ERR_COMM, MPI_Recv(y, 1, MPI_INT, 0, 0, C, &st));
    E(MPI_ERR_COMM, MPI_Irecv(y, 1, MPI_INT, 0, 0, C, &r));
    E(MPI_ERR_COMM, MPI_Send_init(x, 1, MPI_INT, 0, 0, C, &r));
    E(MPI_ERR_COMM, MPI_Recv_init(y, 1, MPI_INT, 0, 0, C, &r));
    E(MPI_ERR_COMM, MPI_Sendrecv(x, 1, MPI_INT, 0, 0, y, 1, MPI_INT, 0, 0, C, &st));
#ifndef OPEN_MPI
    /* Open MPI 4.1 raises these on MPI_COMM_NULL's own handler (fatal). */
    E(MPI_ERR_COMM, MPI_Probe(0, 0, C, &st));
    E(MPI_ERR_COMM, MPI_Iprobe(0, 0, C, &flag, &st));
    E(MPI_ERR_COMM, MPI_Mprobe(0, 0, C, &m, &st));
    E(MPI_ERR_COMM, MPI_Improbe(0, 0, C, &flag, &m, &st));
#endif
    E(MPI_ERR_COMM, MPI_Comm_size(C, &flag));
    E(MPI_ERR_COMM, MPI_Comm_set_errhandler(C, MPI_ERRORS_RETURN));
    MPI_Errhandler eh;
    E(MPI_ERR_COMM, MPI_Comm_get_errhandler(C, &eh));
    E(MPI_ERR_COMM, MPI_Comm_call_errhandler(C, MPI_ERR_OTHER));

    /* Requests. */
    r = MPI_REQUEST_NULL;
    E(MPI_ERR_REQUEST, MPI_Start(&r));
    MPI_Request rs[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    E(MPI_ERR_REQUEST, MPI_Startall(2, rs));
    E(MPI_ERR_REQUEST, MPI_Request_free(&r));
    E(MPI_ERR_REQUEST, MPI_Cancel(&r));
    {
        MPI_Request s;
        MPI_Isend(x, 1, MPI_INT, 0, 99, MPI_COMM_SELF, &s);
        E(MPI_ERR_REQUEST, MPI_Start(&s));
        MPI_Recv(y, 1, MPI_INT, 0, 99, MPI_COMM_SELF, MPI_STATUS_IGNORE);
        MPI_Wait(&s, MPI_STATUS_IGNORE);
    }
#ifndef OPEN_MPI
    m = MPI_MESSAGE_NULL;
    E(MPI_ERR_REQUEST, MPI_Mrecv(y, 1, MPI_INT, &m, &st));
    E(MPI_ERR_REQUEST, MPI_Imrecv(y, 1, MPI_INT, &m, &r));
#endif
    int rc = MPI_Waitall(-1, rs, MPI_STATUSES_IGNORE);
    CHECK(rc != MPI_SUCCESS && (MTest_Class(rc) == MPI_ERR_COUNT || MTest_Class(rc) == MPI_ERR_ARG),
          "MPI_Waitall(-1): %s", rc == MPI_SUCCESS ? "success" : MTest_Describe(rc));
    rc = MPI_Testany(-1, rs, &flag, &flag, &st);
    CHECK(rc != MPI_SUCCESS && (MTest_Class(rc) == MPI_ERR_COUNT || MTest_Class(rc) == MPI_ERR_ARG),
          "MPI_Testany(-1): %s", rc == MPI_SUCCESS ? "success" : MTest_Describe(rc));

    /* Arguments. */
    E(MPI_ERR_ARG, MPI_Comm_rank(W, NULL));
    E(MPI_ERR_ARG, MPI_Comm_set_errhandler(W, MPI_ERRHANDLER_NULL));
    void *p;
    int ps;
    MPI_Buffer_detach(&p, &ps);
    E(MPI_ERR_ARG, MPI_Buffer_attach(bb, -1));

    /* Nothing was sent by the erroneous calls (those with valid ranks all target self):
     * after a barrier-like round trip through rank 0, no message is waiting. */
    barrier(TAG_BARRIER1);
    flag = 1;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, W, &flag, &st);
    /* Rank 0 may already see another rank's arrival at the next barrier: it released that
     * rank, which may have run ahead. Nothing else may be waiting. */
    CHECK(flag == 0 || (me == 0 && st.MPI_TAG == TAG_BARRIER2),
          "a message (source %d tag %d) is waiting after the erroneous calls", st.MPI_SOURCE, st.MPI_TAG);
    flag = 1;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF, &flag, &st);
    CHECK(flag == 0, "a message is waiting on SELF after the erroneous calls");

    barrier(TAG_BARRIER2); /* so that the ring's messages come after every rank's probes */

    /* Still working. */
    int v = me + 1, w = 0;
    rc = MPI_Sendrecv(&v, 1, MPI_INT, (me + 1) % size, 9, &w, 1, MPI_INT, (me + size - 1) % size, 9, W, &st);
    CHECK(rc == MPI_SUCCESS && w == (me + size - 1) % size + 1, "ring after errors: rc %d got %d", rc, w);
    return MTest_Finalize(0);
}
