/* persistent: persistent requests, MPI_Send_init / MPI_Ssend_init / MPI_Bsend_init /
 * MPI_Rsend_init / MPI_Recv_init, started with MPI_Start and MPI_Startall and restarted 40
 * times with new data in the same buffers, alternating direction, small (64 B) and large
 * (1 MiB) messages.  Each round the receiver starts its receives and then handshakes (so
 * the ready-mode send is legal); the data of every round is checked.  After completion a
 * persistent request is inactive, not freed: MPI_Wait / MPI_Test on it return at once with
 * an empty status.  MPI_Request_free frees the inactive requests.  Persistent requests to
 * self on MPI_COMM_SELF too.
 *
 * Open MPI 4.1.4 fails restarts of MPI_Bsend_init requests (wrong data, hangs): with Open
 * MPI the buffered request is recreated every round instead of restarted. */
#include "mtest.h"

enum { KINDS = 4, ROUNDS = 40 };
static const char *kind_names[KINDS] = {"Send_init", "Ssend_init", "Bsend_init", "Rsend_init"};

static void make_send(int k, void *buf, int n, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    int rc;
    switch (k) {
    case 0: rc = MPI_Send_init(buf, n, MPI_BYTE, dest, tag, comm, req); break;
    case 1: rc = MPI_Ssend_init(buf, n, MPI_BYTE, dest, tag, comm, req); break;
    case 2: rc = MPI_Bsend_init(buf, n, MPI_BYTE, dest, tag, comm, req); break;
    default: rc = MPI_Rsend_init(buf, n, MPI_BYTE, dest, tag, comm, req); break;
    }
    CHECK_RC(rc, kind_names[k]);
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    int partner = MTest_Partner();
    int rc, dummy = 0, count, flag;
    MPI_Status st;
    static const int sizes[] = {64, 1 << 20};

    int bsize = 2 * KINDS * ((1 << 20) + MPI_BSEND_OVERHEAD);
    char *bbuf = malloc(bsize);
    MPI_Buffer_attach(bbuf, bsize);

    if (partner >= 0) {
        int a = mtest_rank < partner;
        for (int si = 0; si < 2; si++) {
            int n = sizes[si];
            unsigned char *sbuf[KINDS], *rbuf[KINDS];
            MPI_Request sreq[KINDS], rreq[KINDS];
            for (int k = 0; k < KINDS; k++) {
                sbuf[k] = malloc(n);
                rbuf[k] = malloc(n);
                make_send(k, sbuf[k], n, partner, 10 + k, MPI_COMM_WORLD, &sreq[k]);
                rc = MPI_Recv_init(rbuf[k], n, MPI_BYTE, k == 3 ? MPI_ANY_SOURCE : partner, 10 + k, MPI_COMM_WORLD, &rreq[k]);
                CHECK_RC(rc, "MPI_Recv_init");
            }
            for (int r = 0; r < ROUNDS; r++) {
                int sending = (r % 2 == 0) == a;
                if (sending) {
                    MPI_Recv(&dummy, 0, MPI_INT, partner, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    for (int k = 0; k < KINDS; k++)
                        MTest_Fill_bytes(sbuf[k], n, (uint64_t)r * 1000 + k * 10 + si);
#ifdef OPEN_MPI
                    /* Open MPI 4.1.4 mishandles a restarted MPI_Bsend_init request: the second
                     * start of a 1 MiB one delivers zeros, the third of a 64 KiB one hangs.
                     * There the buffered request is made anew for every round. */
                    if (r >= 2) {
                        MPI_Request_free(&sreq[2]);
                        make_send(2, sbuf[2], n, partner, 12, MPI_COMM_WORLD, &sreq[2]);
                    }
#endif
                    if (r % 3 == 0) {
                        rc = MPI_Startall(KINDS, sreq);
                        CHECK_RC(rc, "MPI_Startall (sends)");
                    } else {
                        for (int k = 0; k < KINDS; k++) {
                            rc = MPI_Start(&sreq[k]);
                            CHECK_RC(rc, "MPI_Start (send)");
                        }
                    }
                    rc = MPI_Waitall(KINDS, sreq, MPI_STATUSES_IGNORE);
                    CHECK_RC(rc, "MPI_Waitall (persistent sends)");
                } else {
                    for (int k = 0; k < KINDS; k++)
                        memset(rbuf[k], 0, n);
                    if (r % 2) {
                        rc = MPI_Startall(KINDS, rreq);
                        CHECK_RC(rc, "MPI_Startall (receives)");
                    } else {
                        for (int k = 0; k < KINDS; k++) {
                            rc = MPI_Start(&rreq[k]);
                            CHECK_RC(rc, "MPI_Start (receive)");
                        }
                    }
                    MPI_Send(&dummy, 0, MPI_INT, partner, 1, MPI_COMM_WORLD);
                    MPI_Status sts[KINDS];
                    rc = MPI_Waitall(KINDS, rreq, sts);
                    CHECK_RC(rc, "MPI_Waitall (persistent receives)");
                    for (int k = 0; k < KINDS; k++) {
                        MPI_Get_count(&sts[k], MPI_BYTE, &count);
                        CHECK(count == n && sts[k].MPI_SOURCE == partner && sts[k].MPI_TAG == 10 + k,
                              "round %d %s: count %d source %d tag %d", r, kind_names[k], count, sts[k].MPI_SOURCE, sts[k].MPI_TAG);
                        CHECK(MTest_Verify_bytes(rbuf[k], n, (uint64_t)r * 1000 + k * 10 + si) < 0,
                              "round %d %s of %d B: data of another round or corrupted", r, kind_names[k], n);
                    }
                }
                for (int k = 0; k < KINDS; k++)
                    CHECK(sreq[k] != MPI_REQUEST_NULL && rreq[k] != MPI_REQUEST_NULL, "a persistent request was freed by completion");
            }
            /* Inactive requests: Wait and Test return at once with an empty status. */
            MTest_Poison_status(&st);
            rc = MPI_Wait(&rreq[0], &st);
            CHECK(rc == MPI_SUCCESS && MTest_Is_empty_status(&st), "MPI_Wait on an inactive persistent request: rc %d, source %d tag %d",
                  rc, st.MPI_SOURCE, st.MPI_TAG);
            CHECK(rreq[0] != MPI_REQUEST_NULL, "MPI_Wait freed an inactive persistent request");
            flag = 0;
            MTest_Poison_status(&st);
            rc = MPI_Test(&sreq[1], &flag, &st);
            CHECK(rc == MPI_SUCCESS && flag && MTest_Is_empty_status(&st), "MPI_Test on an inactive persistent request: flag %d, source %d tag %d",
                  flag, st.MPI_SOURCE, st.MPI_TAG);
            for (int k = 0; k < KINDS; k++) {
                rc = MPI_Request_free(&sreq[k]);
                CHECK(rc == MPI_SUCCESS && sreq[k] == MPI_REQUEST_NULL, "MPI_Request_free of an inactive send request");
                rc = MPI_Request_free(&rreq[k]);
                CHECK(rc == MPI_SUCCESS && rreq[k] == MPI_REQUEST_NULL, "MPI_Request_free of an inactive receive request");
                free(sbuf[k]);
                free(rbuf[k]);
            }
        }
    }

    /* Self on SELF: a persistent receive and a persistent send (standard and buffered modes),
     * restarted with new data. */
    {
        double s[100], r[100];
        MPI_Request q[3];
        MPI_Recv_init(r, 100, MPI_DOUBLE, 0, 3, MPI_COMM_SELF, &q[0]);
        MPI_Send_init(s, 100, MPI_DOUBLE, 0, 3, MPI_COMM_SELF, &q[1]);
        MPI_Bsend_init(s, 100, MPI_DOUBLE, 0, 4, MPI_COMM_SELF, &q[2]);
        for (int round = 0; round < 20; round++) {
            for (int k = 0; k < 100; k++)
                s[k] = round * 1000 + k;
            rc = MPI_Startall(2, q);
            CHECK_RC(rc, "MPI_Startall (self)");
            rc = MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
            CHECK_RC(rc, "MPI_Waitall (self)");
            CHECK(r[0] == round * 1000 && r[99] == round * 1000 + 99, "self round %d: got %g", round, r[0]);
            MPI_Start(&q[2]);
            MPI_Wait(&q[2], MPI_STATUS_IGNORE);
            memset(s, 0, sizeof s); /* buffered: the send buffer is free again */
            MPI_Recv(r, 100, MPI_DOUBLE, 0, 4, MPI_COMM_SELF, MPI_STATUS_IGNORE);
            CHECK(r[5] == round * 1000 + 5, "buffered persistent self send, round %d: got %g", round, r[5]);
        }
        for (int k = 0; k < 3; k++)
            MPI_Request_free(&q[k]);
    }
    void *p;
    int ps;
    MPI_Buffer_detach(&p, &ps);
    free(bbuf);
    return MTest_Finalize(0);
}
