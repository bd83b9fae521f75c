/* part_omp.c: partitioned communication driven by OpenMP threads (MPI_THREAD_MULTIPLE).
 *
 * Every rank sends to its right neighbour and receives from its left one.  In each round the
 * threads of a `parallel for` fill their send partitions and call MPI_Pready concurrently,
 * while other threads wait for their receive partitions with MPI_Parrived and check them; the
 * receive side uses a different partitioning.  The main thread completes both requests. */
/* mtest-cflags: -fopenmp */
#include "mtest.h"
#include <omp.h>

enum { SP = 16, SC = 1500, RP = 24, RC = SP * SC / RP, ROUNDS = 4, NT = 4 };

static int val(int round, int src, int i)
{
    return round * 1000003 + src * 7919 + i;
}

int main(int argc, char **argv)
{
    int provided, errs = 0;
    MTest_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE) {
        MTest_Skip("MPI_THREAD_MULTIPLE not provided");
        return MTest_Finalize(0);
    }
    int right = (mtest_rank + 1) % mtest_size, left = (mtest_rank + mtest_size - 1) % mtest_size;
    int *sbuf = calloc(SP * SC, sizeof(int)), *rbuf = calloc(SP * SC, sizeof(int));
    MPI_Request req[2];
    CHECK_RC(MPI_Precv_init(rbuf, RP, RC, MPI_INT, left, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &req[1]),
             "MPI_Precv_init");
    CHECK_RC(MPI_Psend_init(sbuf, SP, SC, MPI_INT, right, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &req[0]),
             "MPI_Psend_init");
    for (int round = 0; round < ROUNDS; round++) {
        for (int i = 0; i < SP * SC; i++)
            rbuf[i] = -1;
        CHECK_RC(MPI_Startall(2, req), "MPI_Startall");
        int bad = 0;
        /* Send partitions, one per iteration, marked ready concurrently. */
#pragma omp parallel for num_threads(NT) schedule(dynamic, 1) reduction(+ : bad)
        for (int p = 0; p < SP; p++) {
            for (int k = p * SC; k < (p + 1) * SC; k++)
                sbuf[k] = val(round, mtest_rank, k);
            if (MPI_Pready(p, req[0]) != MPI_SUCCESS)
                bad++;
        }
        CHECK(bad == 0, "round %d: %d MPI_Pready calls failed", round, bad);
        /* Receive partitions, each waited for by some thread. */
        int wrong = 0;
#pragma omp parallel for num_threads(NT) schedule(dynamic, 1) reduction(+ : wrong, bad)
        for (int p = 0; p < RP; p++) {
            int flag = 0;
            long spins = 0;
            while (!flag && spins++ < 200000000L)
                if (MPI_Parrived(req[1], p, &flag) != MPI_SUCCESS) {
                    bad++;
                    break;
                }
            if (!flag) {
                bad++;
                continue;
            }
            for (int k = p * RC; k < (p + 1) * RC; k++)
                if (rbuf[k] != val(round, left, k)) {
                    wrong++;
                    break;
                }
        }
        CHECK(bad == 0, "round %d: %d receive partitions failed to arrive", round, bad);
        CHECK(wrong == 0, "round %d: %d receive partitions hold wrong data", round, wrong);
        MPI_Status st[2];
        CHECK_RC(MPI_Waitall(2, req, st), "MPI_Waitall");
        int cnt = -1;
        MPI_Get_count(&st[1], MPI_INT, &cnt);
        CHECK(cnt == SP * SC, "round %d: received %d ints", round, cnt);
        /* The next round overwrites sbuf: the sender's completion allows that, but rbuf is
         * also reset, which needs the receivers done with this round. */
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Request_free(&req[0]);
    MPI_Request_free(&req[1]);
    free(sbuf);
    free(rbuf);
    return MTest_Finalize(errs);
}
