/* async_progress: with asynchronous progress on (hympi: HYMPI_ASYNC_PROGRESS=1; MPICH:
 * MPIR_CVAR_ASYNC_PROGRESS=1), communication advances while the application makes no MPI
 * call. Pairs (even sender, odd receiver): the receiver posts MPI_Irecv of 2 MiB, the sender
 * MPI_Isend; then both stay out of MPI: the receiver watches the last bytes of its buffer
 * (volatile reads) until they hold the sender's data, for at most 20 s, and only then calls
 * MPI_Wait. Skips when neither variable is set (without a progress thread the data need not
 * arrive before MPI_Wait). */
#include "mtest.h"
#include <unistd.h>

#define LEN (2 << 20)

int main(int argc, char **argv)
{
    int provided, errs = 0;
    MTest_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    const char *h = getenv("HYMPI_ASYNC_PROGRESS"), *m = getenv("MPIR_CVAR_ASYNC_PROGRESS");
    if (!((h && atoi(h)) || (m && atoi(m)))) {
        MTest_Skip("asynchronous progress not requested");
        return MTest_Finalize(0);
    }
    int rank = mtest_rank, paired = rank < mtest_size - mtest_size % 2;
    int peer = rank % 2 ? rank - 1 : rank + 1;
    unsigned char *buf = malloc(LEN);
    if (paired) {
        MPI_Request r;
        if (rank % 2 == 0) {
            memset(buf, 0xA5, LEN);
            MPI_Isend(buf, LEN, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &r);
            /* Out of MPI long enough for the receiver to see the data. */
            int go = 0;
            MPI_Request g;
            MPI_Irecv(&go, 1, MPI_INT, peer, 2, MPI_COMM_WORLD, &g);
            MPI_Wait(&g, MPI_STATUS_IGNORE);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        } else {
            memset(buf, 0, LEN);
            MPI_Irecv(buf, LEN, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &r);
            volatile unsigned char *tail = buf + LEN - 8;
            int seen = 0;
            for (int ms = 0; ms < 20000 && !seen; ms++) {
                seen = 1;
                for (int i = 0; i < 8; i++)
                    seen &= tail[i] == 0xA5;
                if (!seen)
                    usleep(1000);
            }
            CHECK(seen, "the message did not arrive while the receiver stayed out of MPI");
            int go = 1;
            MPI_Send(&go, 1, MPI_INT, peer, 2, MPI_COMM_WORLD);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
            CHECK(MTest_Check_const(buf, LEN, 0xA5) < 0, "data wrong after MPI_Wait");
        }
    }
    free(buf);
    return MTest_Finalize(errs);
}
