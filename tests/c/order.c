/* order: non-overtaking (MPI-4.0 section 3.5).  Messages from one sender to one receiver
 * that a receive could both match arrive in the order sent, whatever their sizes (0 B to
 * 1 MiB mixed, so eager and rendezvous paths interleave) and send modes (MPI_Send,
 * MPI_Isend, MPI_Ssend, MPI_Issend, MPI_Bsend mixed in one stream):
 *
 *  1. blocking receives of the tag, one by one;
 *  2. all receives pre-posted, then MPI_Waitall: receive i gets message i;
 *  3. receives with MPI_ANY_TAG and MPI_ANY_SOURCE;
 *  4. two tags interleaved by the sender, all of tag B received before any of tag A: each
 *     stream in its own order;
 *  5. every rank sends a stream to rank 0, which receives with MPI_ANY_SOURCE: per source
 *     in order.
 * Each message carries its sequence number (messages under 8 bytes are identified by their
 * size, which follows a known pattern). */
#include "mtest.h"

enum { M = 120 };

static int size_of(int i)
{
    static const int pattern[] = {8, 1 << 20, 0, 65536, 3, 200000, 16, 0, 1000, 5, 300000, 12};
    return pattern[i % 12];
}

static unsigned char *make(int i, int stream)
{
    int n = size_of(i);
    unsigned char *b = malloc(n + 8);
    MTest_Fill_bytes(b, n, (uint64_t)stream * 100000 + i);
    if (n >= 8) {
        int32_t hdr[2] = {i, stream};
        memcpy(b, hdr, 8);
    }
    return b;
}

/* Check message i of stream got in r with status st. */
static void verify(const unsigned char *r, const MPI_Status *st, int i, int stream, const char *what)
{
    int count = -1;
    MPI_Get_count(st, MPI_BYTE, &count);
    int n = size_of(i);
    if (!CHECK(count == n, "%s: message %d of stream %d has %d B, want %d (out of order?)", what, i, stream, count, n))
        return;
    if (n >= 8) {
        int32_t hdr[2];
        memcpy(hdr, r, 8);
        if (!CHECK(hdr[0] == i && hdr[1] == stream, "%s: got message %d of stream %d, want %d of %d", what, hdr[0], hdr[1], i, stream))
            return;
    }
    unsigned char *want = make(i, stream);
    CHECK(memcmp(want, r, n) == 0, "%s: message %d of stream %d corrupted", what, i, stream);
    free(want);
}

static void send_stream(int dest, int tag, int stream, int mixed_modes)
{
    unsigned char *bufs[M];
    MPI_Request reqs[M];
    for (int i = 0; i < M; i++) {
        bufs[i] = make(i, stream);
        reqs[i] = MPI_REQUEST_NULL;
        int n = size_of(i);
        int mode = mixed_modes ? i % 5 : 1;
        int rc;
        switch (mode) {
        case 0: rc = MPI_Send(bufs[i], n, MPI_BYTE, dest, tag, MPI_COMM_WORLD); break;
        case 1: rc = MPI_Isend(bufs[i], n, MPI_BYTE, dest, tag, MPI_COMM_WORLD, &reqs[i]); break;
        case 2: rc = MPI_Ssend(bufs[i], n, MPI_BYTE, dest, tag, MPI_COMM_WORLD); break;
        case 3: rc = MPI_Issend(bufs[i], n, MPI_BYTE, dest, tag, MPI_COMM_WORLD, &reqs[i]); break;
        default: rc = MPI_Bsend(bufs[i], n, MPI_BYTE, dest, tag, MPI_COMM_WORLD); break;
        }
        CHECK_RC(rc, "send");
    }
    MPI_Waitall(M, reqs, MPI_STATUSES_IGNORE);
    for (int i = 0; i < M; i++)
        free(bufs[i]);
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    int partner = MTest_Partner();
    MPI_Status st;
    int maxn = 1 << 20;
    /* Room for the buffered sends of a stream (one in five of M). */
    int bsize = (M / 5 + 1) * (maxn + MPI_BSEND_OVERHEAD);
    void *bbuf = malloc(bsize);
    MPI_Buffer_attach(bbuf, bsize);

    if (partner >= 0) {
        int a = mtest_rank < partner;
        /* 1-3. */
        for (int variant = 1; variant <= 3; variant++) {
            int tag = 10 + variant;
            if (a) {
                send_stream(partner, tag, variant, 1);
            } else if (variant == 2) {
                unsigned char *r[M];
                MPI_Request reqs[M];
                MPI_Status sts[M];
                for (int i = 0; i < M; i++) {
                    r[i] = malloc(maxn);
                    MPI_Irecv(r[i], maxn, MPI_BYTE, partner, tag, MPI_COMM_WORLD, &reqs[i]);
                }
                MPI_Waitall(M, reqs, sts);
                for (int i = 0; i < M; i++) {
                    verify(r[i], &sts[i], i, variant, "pre-posted");
                    free(r[i]);
                }
            } else {
                unsigned char *r = malloc(maxn);
                for (int i = 0; i < M; i++) {
                    if (variant == 1)
                        MPI_Recv(r, maxn, MPI_BYTE, partner, tag, MPI_COMM_WORLD, &st);
                    else /* only the partner sends to this rank now */
                        MPI_Recv(r, maxn, MPI_BYTE, i % 2 ? MPI_ANY_SOURCE : partner, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
                    CHECK(st.MPI_SOURCE == partner && st.MPI_TAG == tag, "source %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
                    verify(r, &st, i, variant, variant == 1 ? "blocking" : "wildcard");
                }
                free(r);
            }
            /* Keep the variants apart: the wildcard receives of 3 must not see stream 4. */
            int dummy = 0;
            if (a)
                MPI_Recv(&dummy, 0, MPI_INT, partner, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            else
                MPI_Send(&dummy, 0, MPI_INT, partner, 1, MPI_COMM_WORLD);
        }
        /* 4. Two tags interleaved; receive all of B first. */
        if (a) {
            unsigned char *bufs[2 * M];
            MPI_Request reqs[2 * M];
            for (int i = 0; i < M; i++)
                for (int t = 0; t < 2; t++) {
                    bufs[2 * i + t] = make(i, 40 + t);
                    MPI_Isend(bufs[2 * i + t], size_of(i), MPI_BYTE, partner, 40 + t, MPI_COMM_WORLD, &reqs[2 * i + t]);
                }
            MPI_Waitall(2 * M, reqs, MPI_STATUSES_IGNORE);
            for (int i = 0; i < 2 * M; i++)
                free(bufs[i]);
        } else {
            unsigned char *r = malloc(maxn);
            for (int t = 1; t >= 0; t--)
                for (int i = 0; i < M; i++) {
                    MPI_Recv(r, maxn, MPI_BYTE, partner, 40 + t, MPI_COMM_WORLD, &st);
                    verify(r, &st, i, 40 + t, "two tags");
                }
            free(r);
        }
    }

    /* 5. All ranks to rank 0 (rank 0 to itself too), received with MPI_ANY_SOURCE. */
    {
        unsigned char *bufs[M];
        MPI_Request reqs[M];
        for (int i = 0; i < M; i++) {
            bufs[i] = make(i, 1000 + mtest_rank);
            MPI_Isend(bufs[i], size_of(i), MPI_BYTE, 0, 50, MPI_COMM_WORLD, &reqs[i]);
        }
        if (mtest_rank == 0) {
            int *next = calloc(mtest_size, sizeof(int));
            unsigned char *r = malloc(maxn);
            for (int k = 0; k < M * mtest_size; k++) {
                MPI_Recv(r, maxn, MPI_BYTE, MPI_ANY_SOURCE, 50, MPI_COMM_WORLD, &st);
                int s = st.MPI_SOURCE;
                if (!CHECK(s >= 0 && s < mtest_size && next[s] < M, "source %d", s))
                    continue;
                verify(r, &st, next[s], 1000 + s, "many senders");
                next[s]++;
            }
            free(r);
            free(next);
        }
        MPI_Waitall(M, reqs, MPI_STATUSES_IGNORE);
        for (int i = 0; i < M; i++)
            free(bufs[i]);
    }
    void *p;
    int ps;
    MPI_Buffer_detach(&p, &ps);
    free(bbuf);
    return MTest_Finalize(0);
}
