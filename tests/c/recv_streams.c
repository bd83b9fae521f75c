/* recv_streams: blocking MPI_Recv of streams from every other rank, in MPI's order, with
 * the right statuses, whatever transport carries them (node peers, other nodes in network
 * mode) and whatever the receive finds waiting.
 *
 * Every rank but 0 sends rank 0 NMSG messages with MPI_Send (sizes from empty through eager
 * to rendezvous, tags cycling, bodies seeded by sender and sequence). Rank 0 receives:
 *  1. source by source, MPI_ANY_TAG: the other senders' messages wait meanwhile;
 *  2. MPI_ANY_SOURCE / MPI_ANY_TAG: each sender's messages in its order;
 *  3. a ping-pong with each rank (receives that wait for their message);
 *  4. under MPI_ERRORS_RETURN, a message longer than the buffer (MPI_ERR_TRUNCATE; the
 *     buffer's contents are not checked: MPICH leaves them) followed by one that fits, which
 *     must still arrive. */
#include "mtest.h"

#define NMSG 300
#define MAXMSG (70 * 1024)

static int msg_size(int i)
{
    switch (i % 5) {
    case 0: return 0;
    case 1: return 8;
    case 2: return 100 + i;
    case 3: return 3000;
    default: return (i % 25 == 4) ? MAXMSG : 16;
    }
}

static unsigned char body(int from, int i, int k)
{
    return (unsigned char)(from * 31 + i * 7 + k);
}

static void send_stream(int tag_base)
{
    static unsigned char buf[MAXMSG];
    for (int i = 0; i < NMSG; i++) {
        int n = msg_size(i);
        for (int k = 0; k < n; k++)
            buf[k] = body(mtest_rank, i, k);
        MPI_Send(buf, n, MPI_BYTE, 0, tag_base + i % 7, MPI_COMM_WORLD);
    }
}

/* Checks message `i` of `from` in buf/status; returns 1 when it is right. */
static int check_msg(const unsigned char *buf, MPI_Status *st, int from, int i, int tag_base)
{
    int n = msg_size(i), count = -1, bad = 0;
    MPI_Get_count(st, MPI_BYTE, &count);
    if (!CHECK(st->MPI_SOURCE == from && st->MPI_TAG == tag_base + i % 7 && count == n,
               "message %d of %d: source %d tag %d count %d, expected %d/%d/%d", i, from,
               st->MPI_SOURCE, st->MPI_TAG, count, from, tag_base + i % 7, n))
        return 0;
    for (int k = 0; k < n; k++)
        bad += buf[k] != body(from, i, k);
    return CHECK(bad == 0, "message %d of %d: %d bytes wrong", i, from, bad);
}

int main(int argc, char **argv)
{
    static unsigned char buf[MAXMSG];
    int size;
    MTest_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* 1. Source by source. */
    if (mtest_rank != 0) {
        send_stream(0);
    } else {
        for (int from = 1; from < size; from++)
            for (int i = 0; i < NMSG; i++) {
                MPI_Status st;
                MPI_Recv(buf, MAXMSG, MPI_BYTE, from, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
                check_msg(buf, &st, from, i, 0);
            }
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* 2. Any source: each sender's messages in its order. */
    if (mtest_rank != 0) {
        send_stream(10);
    } else {
        int next[64] = {0};
        for (int j = 0; j < (size - 1) * NMSG; j++) {
            MPI_Status st;
            MPI_Recv(buf, MAXMSG, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
            int from = st.MPI_SOURCE;
            if (!CHECK(from > 0 && from < size && from < 64 && next[from] < NMSG,
                       "unexpected source %d", from))
                break;
            check_msg(buf, &st, from, next[from], 10);
            next[from]++;
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* 3. Ping-pong: receives that wait for their message. */
    for (int peer = 1; peer < size; peer++) {
        for (int i = 0; i < 200; i++) {
            int v = i * 1000 + peer, got = -1;
            MPI_Status st;
            if (mtest_rank == 0) {
                MPI_Send(&v, 1, MPI_INT, peer, 5, MPI_COMM_WORLD);
                MPI_Recv(&got, 1, MPI_INT, peer, 6, MPI_COMM_WORLD, &st);
                CHECK(got == v + 1 && st.MPI_SOURCE == peer && st.MPI_TAG == 6,
                           "pong %d from %d: %d", i, peer, got);
            } else if (mtest_rank == peer) {
                MPI_Recv(&got, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                CHECK(got == v, "ping %d: %d", i, got);
                got++;
                MPI_Send(&got, 1, MPI_INT, 0, 6, MPI_COMM_WORLD);
            }
        }
    }

    /* 4. Truncation, then the next message. */
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    if (mtest_rank != 0) {
        unsigned char big[64], small[8];
        for (int k = 0; k < 64; k++)
            big[k] = body(mtest_rank, 1000, k);
        for (int k = 0; k < 8; k++)
            small[k] = body(mtest_rank, 1001, k);
        MPI_Send(big, 64, MPI_BYTE, 0, 3, comm);
        MPI_Send(small, 8, MPI_BYTE, 0, 3, comm);
    } else {
        for (int from = 1; from < size; from++) {
            unsigned char part[16] = {0};
            MPI_Status st;
            int rc = MPI_Recv(part, 16, MPI_BYTE, from, 3, comm, &st);
            CHECK_CLASS(rc, MPI_ERR_TRUNCATE, "MPI_Recv of 64 bytes into 16");
            unsigned char small[8] = {0};
            rc = MPI_Recv(small, 8, MPI_BYTE, from, 3, comm, &st);
            int count = -1;
            MPI_Get_count(&st, MPI_BYTE, &count);
            int bad = 0;
            for (int k = 0; k < 8; k++)
                bad += small[k] != body(from, 1001, k);
            CHECK(rc == MPI_SUCCESS && count == 8 && bad == 0,
                  "message after the truncated one from %d: rc %d count %d, %d bytes wrong", from,
                  rc, count, bad);
        }
    }
    MPI_Comm_free(&comm);
    return MTest_Finalize(0);
}
