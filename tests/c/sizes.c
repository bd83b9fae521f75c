/* sizes: message sizes from 0 B to 8 MiB -- every power of two and its neighbours (2^k - 1,
 * 2^k, 2^k + 1) and a few other limits (472, 16320 and each + 1), so both sides of every eager / rendezvous / pipelining threshold an
 * implementation may have are crossed -- in both directions between the partners (to self
 * on MPI_COMM_SELF when alone), alternating MPI_Send/MPI_Recv and MPI_Isend/MPI_Irecv, into a
 * receive buffer larger than the message (MPI_Get_count is the message size and the rest
 * of the buffer is untouched), and some as MPI_INT / MPI_DOUBLE elements. */
#include "mtest.h"

#define GUARD 32

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    int partner = MTest_Partner();
    MPI_Comm comm = partner >= 0 ? MPI_COMM_WORLD : MPI_COMM_SELF;
    int peer = partner >= 0 ? partner : 0;
    int me = partner >= 0 ? mtest_rank : 0;
    int maxn = 8 << 20;
    unsigned char *s = malloc(maxn + 1), *r = malloc(maxn + 1 + GUARD);
    /* The sizes, ascending and without repeats: the powers of two and their neighbours, and
     * limits that are not powers of two in some implementations (hympi: a fastbox's 472 B,
     * a shared-memory cell's 16320 B), on both sides. */
    static const int limits[] = {472, 16320};
    int list[100], nlist = 0;
    for (int k = 0; k <= 23; k++) {
        for (int l = 0; l < (int)(sizeof limits / sizeof *limits); l++)
            if (limits[l] < (1 << k) - 1 && (nlist == 0 || limits[l] > list[nlist - 1])) {
                list[nlist++] = limits[l];
                list[nlist++] = limits[l] + 1;
            }
        for (long n = (1L << k) - 1; n <= (1L << k) + 1; n++)
            if (n >= 0 && n <= maxn && (nlist == 0 || n > list[nlist - 1]))
                list[nlist++] = (int)n;
    }
    int nsizes = 0;
    for (int li = 0; li < nlist; li++) {
        long n = list[li];
        nsizes++;
        int nn = (int)n;
        int blocking = nsizes % 2;
        MPI_Datatype type = MPI_BYTE;
        int esize = 1;
        if (nn % 8 == 0 && nsizes % 3 == 0) {
            type = MPI_DOUBLE;
            esize = 8;
        } else if (nn % 4 == 0 && nsizes % 3 == 1) {
            type = MPI_INT;
            esize = 4;
        }
        int cnt = nn / esize;
        for (int dir = 0; dir < 2; dir++) {
            int sending = partner < 0 || ((dir == 0) == (mtest_rank < partner));
            int receiving = partner < 0 || !sending;
            uint64_t seed = (uint64_t)n * 7 + dir + (uint64_t)me * 0;
            MPI_Request rq = MPI_REQUEST_NULL, sq = MPI_REQUEST_NULL;
            MPI_Status st;
            if (sending)
                MTest_Fill_bytes(s, nn, seed);
            if (receiving) {
                memset(r, 0x99, nn + GUARD);
                if (!blocking || partner < 0)
                    MPI_Irecv(r, cnt + GUARD / esize, type, peer, 3, comm, &rq);
            }
            if (sending) {
                int rc = (blocking && partner >= 0) ? MPI_Send(s, cnt, type, peer, 3, comm)
                                                    : MPI_Isend(s, cnt, type, peer, 3, comm, &sq);
                CHECK_RC(rc, "send");
            }
            if (receiving) {
                int rc = rq != MPI_REQUEST_NULL ? MPI_Wait(&rq, &st)
                                                : MPI_Recv(r, cnt + GUARD / esize, type, peer, 3, comm, &st);
                CHECK_RC(rc, "receive");
                int count = -1;
                MPI_Get_count(&st, type, &count);
                CHECK(count == cnt && st.MPI_SOURCE == peer, "%d B: count %d (want %d) source %d", nn, count, cnt, st.MPI_SOURCE);
                long bad = MTest_Verify_bytes(r, nn, seed);
                CHECK(bad < 0, "%d B (%s): first wrong byte at %ld", nn, blocking ? "blocking" : "nonblocking", bad);
                CHECK(MTest_Check_const(r + nn, GUARD, 0x99) < 0, "%d B: written past the message", nn);
            }
            if (sq != MPI_REQUEST_NULL)
                MPI_Wait(&sq, MPI_STATUS_IGNORE);
            if (partner < 0)
                break;
        }
    }
    if (mtest_rank == 0)
        printf("%d sizes from 0 B to %d B\n", nsizes, maxn);
    free(s);
    free(r);
    return MTest_Finalize(0);
}
