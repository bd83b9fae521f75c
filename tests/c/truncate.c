/* truncate: a message longer than the receive buffer (MPI-4.0 section 3.2.4), with
 * MPI_ERRORS_RETURN, for eager-size (64 B into 32 B, 100 B into 0 B) and large (1 MiB into
 * 512 KiB, 4 MiB into 1 B) messages:
 *
 *  - MPI_Recv, MPI_Wait, MPI_Test (when it says complete), MPI_Waitany, MPI_Mrecv and
 *    MPI_Sendrecv return an error of class MPI_ERR_TRUNCATE; the status holds the source and
 *    tag; its MPI_ERROR field is not modified (section 3.2.5: only the multiple-completion
 *    calls set it, and only when they return MPI_ERR_IN_STATUS);
 *  - MPI_Waitall, MPI_Testall and MPI_Waitsome return MPI_ERR_IN_STATUS, the truncated
 *    receive's status has MPI_ERROR of class MPI_ERR_TRUNCATE and the other one MPI_SUCCESS
 *    or MPI_ERR_PENDING (then its request is still active and completes later);
 *  - nothing is written past the receive buffer;
 *  - the sender's call succeeds (the error is the receiver's);
 *  - the pair keeps working: a normal message after each truncation arrives intact.
 *  - order: a too-long message followed by a fitting one with the same tag, both arrived
 *    before MPI_Recv is called, gives MPI_ERR_TRUNCATE for the first; the second is not
 *    taken in its place and arrives intact with the next receive.
 * Between the two ranks of a pair and, alone, to self on MPI_COMM_SELF. */
#include "mtest.h"

#define GUARD 64
static int partner, peer, sender, receiver;
static MPI_Comm comm;

enum { WAYS = 9 };
static const char *ways[WAYS] = {"MPI_Recv", "MPI_Irecv+MPI_Wait", "MPI_Irecv+MPI_Test", "MPI_Irecv+MPI_Waitany",
                                 "MPI_Mprobe+MPI_Mrecv", "MPI_Sendrecv", "MPI_Irecv+MPI_Waitall",
                                 "MPI_Irecv+MPI_Testall", "MPI_Irecv+MPI_Waitsome"};

static void one(int way, int msg, int buf, uint64_t seed)
{
    int tag = 30 + way, dummy = 0, rc;
    unsigned char *s = malloc(msg + 1), *r = malloc(buf + GUARD);
    MTest_Fill_bytes(s, msg, seed);
    memset(r, 0xe7, buf + GUARD);
    char what[128];
    snprintf(what, sizeof what, "%s of %d B into %d B", ways[way], msg, buf);

    /* The receiver posts first when the way needs a request; the sender then sends. */
    MPI_Request rq[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Request sreq = MPI_REQUEST_NULL;
    int extra = 0, extra_in = -1;
    if (receiver && way != 0 && way != 4 && way != 5) {
        rc = MPI_Irecv(r, buf, MPI_BYTE, peer, tag, comm, &rq[0]);
        CHECK_RC(rc, "MPI_Irecv");
        if (way >= 6) /* a second, fine receive in the same array */
            MPI_Irecv(&extra_in, 1, MPI_INT, peer, 90, comm, &rq[1]);
    }
    if (sender && way != 5) {
        if (partner >= 0) {
            rc = MPI_Send(s, msg, MPI_BYTE, peer, tag, comm);
            CHECK(rc == MPI_SUCCESS, "%s: the sender's MPI_Send failed: %s", what, MTest_Describe(rc));
            if (way >= 6)
                MPI_Send(&extra, 1, MPI_INT, peer, 90, comm);
        } else {
            MPI_Isend(s, msg, MPI_BYTE, peer, tag, comm, &sreq);
            if (way >= 6)
                MPI_Send(&extra, 1, MPI_INT, peer, 90, comm); /* its receive is posted */
        }
    }
    if (receiver) {
        MPI_Status st, sts[2];
        MTest_Poison_status(&st);
        MTest_Poison_status(&sts[0]);
        MTest_Poison_status(&sts[1]);
        int single = 1, flag = 0, idx = -1, outcount = -1, indices[2];
        switch (way) {
        case 0: rc = MPI_Recv(r, buf, MPI_BYTE, peer, tag, comm, &st); break;
        case 1: rc = MPI_Wait(&rq[0], &st); break;
        case 2:
            do {
                rc = MPI_Test(&rq[0], &flag, &st);
            } while (!flag && rc == MPI_SUCCESS);
            break;
        case 3:
            rc = MPI_Waitany(1, rq, &idx, &st);
            CHECK(idx == 0, "%s: index %d", what, idx);
            break;
        case 4: {
            MPI_Message m;
            MPI_Mprobe(peer, tag, comm, &m, &st);
            int c = -1;
            MPI_Get_count(&st, MPI_BYTE, &c);
            CHECK(c == msg, "%s: the probe says %d B", what, c);
            MTest_Poison_status(&st);
            rc = MPI_Mrecv(r, buf, MPI_BYTE, &m, &st);
            break;
        }
        case 5: {
            /* Both sides call MPI_Sendrecv: the sender's receive half gets a short fine
             * message, the receiver's receive half is truncated.  Alone: the message to
             * self is truncated. */
            if (partner >= 0)
                rc = MPI_Sendrecv(&dummy, 0, MPI_BYTE, peer, tag, r, buf, MPI_BYTE, peer, tag, comm, &st);
            else
                rc = MPI_Sendrecv(s, msg, MPI_BYTE, peer, tag, r, buf, MPI_BYTE, peer, tag, comm, &st);
            break;
        }
        case 6: single = 0; rc = MPI_Waitall(2, rq, sts); break;
        case 7:
            single = 0;
            do {
                rc = MPI_Testall(2, rq, &flag, sts);
            } while (!flag && rc == MPI_SUCCESS);
            break;
        default: {
            single = 0;
            /* Waitsome until the truncated one is reported. */
            int got0 = 0;
            rc = MPI_SUCCESS;
            while (!got0 && rc == MPI_SUCCESS) {
                MPI_Status tmp[2];
                MTest_Poison_status(&tmp[0]);
                MTest_Poison_status(&tmp[1]);
                rc = MPI_Waitsome(2, rq, &outcount, indices, tmp);
                if (outcount == MPI_UNDEFINED)
                    break;
                for (int k = 0; k < outcount; k++) {
                    sts[indices[k]] = tmp[k];
                    if (indices[k] == 0)
                        got0 = 1;
                }
            }
            if (rq[1] != MPI_REQUEST_NULL) /* the fine one, if still pending */
                MPI_Wait(&rq[1], &sts[1]);
            break;
        }
        }
        if (single) {
            CHECK_CLASS(rc, MPI_ERR_TRUNCATE, what);
            CHECK(st.MPI_SOURCE == peer && st.MPI_TAG == tag, "%s: status source %d tag %d", what, st.MPI_SOURCE, st.MPI_TAG);
            CHECK(st.MPI_ERROR == -77, "%s: a single-completion call set status.MPI_ERROR to %d", what, st.MPI_ERROR);
        } else {
            CHECK_CLASS(rc, MPI_ERR_IN_STATUS, what);
            CHECK(MTest_Class(sts[0].MPI_ERROR) == MPI_ERR_TRUNCATE, "%s: truncated status MPI_ERROR %s", what,
                  MTest_Describe(sts[0].MPI_ERROR));
            CHECK(sts[0].MPI_SOURCE == peer && sts[0].MPI_TAG == tag, "%s: status source %d tag %d", what,
                  sts[0].MPI_SOURCE, sts[0].MPI_TAG);
            /* The fine receive: completed (MPI_SUCCESS, request freed) or, as the standard
             * allows, neither failed nor completed (MPI_ERR_PENDING, request still active:
             * MPICH does that).  With MPI_Waitsome it may have come in an earlier call. */
            if (way != 8) {
                int e = sts[1].MPI_ERROR;
                if (e != MPI_SUCCESS && MTest_Class(e) == MPI_ERR_PENDING) {
                    CHECK(rq[1] != MPI_REQUEST_NULL, "%s: the pending receive's request was freed", what);
                    rc = MPI_Wait(&rq[1], MPI_STATUS_IGNORE);
                    CHECK_RC(rc, "MPI_Wait on the pending receive");
                } else {
                    CHECK(e == MPI_SUCCESS, "%s: the fine receive's MPI_ERROR is %s", what, MTest_Describe(e));
                }
            }
            CHECK(extra_in == 0, "%s: the fine receive got %d", what, extra_in);
            CHECK(rq[0] == MPI_REQUEST_NULL && rq[1] == MPI_REQUEST_NULL, "%s: requests not freed", what);
        }
        CHECK(MTest_Check_const(r + buf, GUARD, 0xe7) < 0, "%s: wrote past the receive buffer", what);
    } else if (way == 5) {
        unsigned char tiny[4];
        rc = MPI_Sendrecv(s, msg, MPI_BYTE, peer, tag, tiny, 4, MPI_BYTE, peer, tag, comm, MPI_STATUS_IGNORE);
        CHECK(rc == MPI_SUCCESS, "%s: the sender's MPI_Sendrecv failed: %s", what, MTest_Describe(rc));
    }
    if (sreq != MPI_REQUEST_NULL) {
        rc = MPI_Wait(&sreq, MPI_STATUS_IGNORE);
        CHECK(rc == MPI_SUCCESS, "%s: the self send failed: %s", what, MTest_Describe(rc));
    }

    /* The pair still works. */
    int v = 1234, w = 0;
    if (partner >= 0) {
        if (sender)
            MPI_Send(&v, 1, MPI_INT, peer, 91, comm);
        else {
            MPI_Recv(&w, 1, MPI_INT, peer, 91, comm, MPI_STATUS_IGNORE);
            CHECK(w == 1234, "%s: the next message got %d", what, w);
        }
    } else {
        MPI_Sendrecv(&v, 1, MPI_INT, 0, 91, &w, 1, MPI_INT, 0, 91, comm, MPI_STATUS_IGNORE);
        CHECK(w == 1234, "%s: the next self message got %d", what, w);
    }
    free(s);
    free(r);
}

/* The order check: 64 B then 8 B with one tag; the receive of 8 B must get the first. */
static void overtake(void)
{
    unsigned char big[64], small[8], r[8];
    MPI_Status st;
    int rc, count = -1;
    memset(big, 'A', sizeof big);
    memset(small, 'B', sizeof small);
    MPI_Request sreq[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    if (sender) {
        MPI_Isend(big, 64, MPI_BYTE, peer, 95, comm, &sreq[0]);
        MPI_Isend(small, 8, MPI_BYTE, peer, 95, comm, &sreq[1]);
    }
    if (receiver) {
        MTest_Sleep_ms(100); /* both have arrived before the receive starts */
        memset(r, 0, sizeof r);
        rc = MPI_Recv(r, 8, MPI_BYTE, peer, 95, comm, &st);
        CHECK_CLASS(rc, MPI_ERR_TRUNCATE, "receive of 8 B with 64 B then 8 B waiting");
        rc = MPI_Recv(r, 8, MPI_BYTE, peer, 95, comm, &st);
        CHECK_RC(rc, "receive of the 8 B message after the truncated one");
        MPI_Get_count(&st, MPI_BYTE, &count);
        CHECK(count == 8 && r[0] == 'B' && r[7] == 'B', "the second receive got count %d, byte '%c' (the 8 B message overtook the 64 B one?)", count, r[0]);
    }
    MPI_Waitall(2, sreq, MPI_STATUSES_IGNORE);
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    MTest_Errors_return_all();
    partner = MTest_Partner();
    comm = partner >= 0 ? MPI_COMM_WORLD : MPI_COMM_SELF;
    peer = partner >= 0 ? partner : 0;
    sender = partner < 0 || mtest_rank < partner;
    receiver = partner < 0 || mtest_rank > partner;
    static const int cases[][2] = {{64, 32}, {100, 0}, {1 << 20, 1 << 19}, {4 << 20, 1}};
    int ncases = 4;
    uint64_t seed = 1;
#ifdef OPEN_MPI
    /* Open MPI 4.1.4 corrupts memory on truncation: a large message (1 MiB into 512 KiB)
     * is written past the receive buffer (heap corruption, "Read -1 ... errno = 14"), and
     * self-messages either report success or crash.  Only eager-size truncation between
     * two processes is checked there. */
    ncases = 2;
    if (partner < 0) {
        MTest_Skip("Open MPI 4.1 crashes on self-message truncation");
        ncases = 0;
    }
#endif
    for (int c = 0; c < ncases; c++)
        for (int way = 0; way < WAYS; way++)
            one(way, cases[c][0], cases[c][1], seed++);
    if (ncases > 0)
        overtake();
    return MTest_Finalize(0);
}
