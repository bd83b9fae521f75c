/* zerobyte: zero-byte messages in every send mode and with the nonblocking calls: they match
 * by source and tag like any other message, complete with count 0 (MPI_Get_count and
 * MPI_Get_elements) and leave the receive buffer untouched; a zero-count message into a
 * receive buffer of any size; zero-byte messages interleaved with data messages on one tag
 * keep their order; a NULL buffer with count 0 is accepted (a zero-length buffer needs no
 * storage). */
#include "mtest.h"

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    int partner = MTest_Partner();
    MPI_Comm comm = partner >= 0 ? MPI_COMM_WORLD : MPI_COMM_SELF;
    int peer = partner >= 0 ? partner : 0;
    /* Without a partner the rank talks to itself on SELF, with nonblocking sends only. */
    int first = partner < 0 || mtest_rank < partner;
    int rc, count, elems;
    MPI_Status st;
    char bsendbuf[8 * (MPI_BSEND_OVERHEAD + 8)];
    MPI_Buffer_attach(bsendbuf, sizeof bsendbuf);

    /* Every mode: the receiver first posts a receive of 16 ints (0x77), then handshakes;
     * the sender sends 0 elements of MPI_INT in mode k, tag 20+k. */
    const char *modes[8] = {"MPI_Send", "MPI_Ssend", "MPI_Rsend", "MPI_Bsend", "MPI_Isend", "MPI_Issend", "MPI_Irsend", "MPI_Ibsend"};
    for (int k = 0; k < 8; k++) {
        int rbuf[16], dummy = 0;
        memset(rbuf, 0x77, sizeof rbuf);
        MPI_Request rreq, sreq;
        for (int role = 0; role < 2; role++) {
            /* role 0: lower rank sends; role 1: upper rank sends.  Alone: both roles. */
            int sending = partner < 0 ? 1 : ((role == 0) == first);
            int receiving = partner < 0 ? 1 : !sending;
            if (receiving) {
                memset(rbuf, 0x77, sizeof rbuf);
                MPI_Irecv(rbuf, 16, MPI_INT, peer, 20 + k, comm, &rreq);
                if (partner >= 0)
                    MPI_Send(&dummy, 0, MPI_INT, peer, 99, comm); /* "posted" */
            }
            if (sending) {
                if (partner >= 0)
                    MPI_Recv(&dummy, 0, MPI_INT, peer, 99, comm, MPI_STATUS_IGNORE);
                void *sb = &dummy;
                switch (partner < 0 && k < 4 ? k + 4 : k) { /* alone: only nonblocking sends */
                case 0: rc = MPI_Send(sb, 0, MPI_INT, peer, 20 + k, comm); break;
                case 1: rc = MPI_Ssend(sb, 0, MPI_INT, peer, 20 + k, comm); break;
                case 2: rc = MPI_Rsend(sb, 0, MPI_INT, peer, 20 + k, comm); break;
                case 3: rc = MPI_Bsend(sb, 0, MPI_INT, peer, 20 + k, comm); break;
                case 4: rc = MPI_Isend(sb, 0, MPI_INT, peer, 20 + k, comm, &sreq); break;
                case 5: rc = MPI_Issend(sb, 0, MPI_INT, peer, 20 + k, comm, &sreq); break;
                case 6: rc = MPI_Irsend(sb, 0, MPI_INT, peer, 20 + k, comm, &sreq); break;
                default: rc = MPI_Ibsend(sb, 0, MPI_INT, peer, 20 + k, comm, &sreq); break;
                }
                CHECK_RC(rc, modes[k]);
            }
            if (receiving) {
                MTest_Poison_status(&st);
                rc = MPI_Wait(&rreq, &st);
                CHECK_RC(rc, "MPI_Wait on a zero-byte receive");
                MPI_Get_count(&st, MPI_INT, &count);
                MPI_Get_elements(&st, MPI_INT, &elems);
                CHECK(count == 0 && elems == 0, "%s of 0 B: count %d elements %d", modes[k], count, elems);
                CHECK(st.MPI_SOURCE == peer && st.MPI_TAG == 20 + k, "%s of 0 B: source %d tag %d", modes[k], st.MPI_SOURCE, st.MPI_TAG);
                CHECK(MTest_Check_const(rbuf, sizeof rbuf, 0x77) < 0, "%s of 0 B wrote the receive buffer", modes[k]);
            }
            if (sending && (k >= 4 || partner < 0))
                MPI_Wait(&sreq, MPI_STATUS_IGNORE);
            if (partner < 0)
                break;
        }
    }

    /* Zero-byte and data messages interleaved on one tag keep their order; receive with
     * a buffer bigger than any of them.  A NULL buffer with count 0 on both sides. */
    enum { M = 30 };
    int payload[M][4];
    MPI_Request reqs[M];
    for (int i = 0; i < M; i++) {
        for (int j = 0; j < 4; j++)
            payload[i][j] = i * 10 + j;
        int n = (i % 3 == 0) ? 4 : 0;
        rc = MPI_Isend(n ? payload[i] : NULL, n, MPI_INT, peer, 50, comm, &reqs[i]);
        CHECK_RC(rc, "MPI_Isend (interleaved)");
    }
    for (int i = 0; i < M; i++) {
        int r[8];
        memset(r, 0x55, sizeof r);
        int n = (i % 3 == 0) ? 4 : 0;
        rc = MPI_Recv(r, 8, MPI_INT, peer, 50, comm, &st);
        CHECK_RC(rc, "MPI_Recv (interleaved)");
        MPI_Get_count(&st, MPI_INT, &count);
        if (!CHECK(count == n, "interleaved message %d: count %d, want %d (out of order?)", i, count, n))
            continue;
        if (n)
            CHECK(r[0] == i * 10 && r[3] == i * 10 + 3, "interleaved message %d: data %d..%d", i, r[0], r[3]);
        CHECK(MTest_Check_const(r + n, (8 - n) * sizeof(int), 0x55) < 0, "interleaved message %d wrote past its end", i);
    }
    MPI_Waitall(M, reqs, MPI_STATUSES_IGNORE);
    {
        MPI_Request r;
        rc = MPI_Irecv(NULL, 0, MPI_BYTE, peer, 51, comm, &r);
        CHECK_RC(rc, "MPI_Irecv(NULL, 0)");
        rc = MPI_Send(NULL, 0, MPI_BYTE, peer, 51, comm);
        CHECK_RC(rc, "MPI_Send(NULL, 0)");
        rc = MPI_Wait(&r, &st);
        CHECK_RC(rc, "MPI_Wait");
        MPI_Get_count(&st, MPI_BYTE, &count);
        CHECK(count == 0 && st.MPI_SOURCE == peer && st.MPI_TAG == 51, "NULL 0-byte message: count %d source %d tag %d", count, st.MPI_SOURCE, st.MPI_TAG);
    }
    void *b;
    int bsize;
    MPI_Buffer_detach(&b, &bsize);
    return MTest_Finalize(0);
}
