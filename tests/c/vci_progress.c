/* vci_progress: the deadlock cases of per-VCI progress (VCI paper): an operation whose
 * completion needs progress on a VCI no thread is waiting on must still finish.
 *
 * Pairs of ranks (r, r+1); communicators A and B are duplicates of MPI_COMM_WORLD (different
 * context ids, so different VCIs under MPI_THREAD_MULTIPLE with several VCIs).
 *  1. Synchronous send: the receiver posts MPI_Irecv on A and then blocks in MPI_Recv on B;
 *     the sender does MPI_Ssend on A (its completion needs the receiver to match and
 *     acknowledge on A's VCI) and only then sends on B.
 *  2. Rendezvous: the same with a 1 MiB MPI_Send on A (the receiver must copy on A's VCI
 *     while waiting on B).
 *  3. Threads: on the receiver, thread 1 waits on A for a message that the sender sends only
 *     after thread 0's exchange on B completed, and thread 0's exchange needs nothing from A.
 * Any MPI must pass; hympi runs it with several VCIs. */
#include "mtest.h"
#include <pthread.h>

#define BIG (1 << 20)

static MPI_Comm A, B;
static int peer, errs_t;

static void *wait_on_a(void *arg)
{
    (void)arg;
    int v = -1;
    MPI_Recv(&v, 1, MPI_INT, peer, 30, A, MPI_STATUS_IGNORE);
    if (v != 30)
        errs_t++;
    return NULL;
}

int main(int argc, char **argv)
{
    int provided, errs = 0;
    MTest_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE || mtest_size < 2) {
        MTest_Skip(mtest_size < 2 ? "needs 2 ranks" : "MPI_THREAD_MULTIPLE not provided");
        return MTest_Finalize(0);
    }
    MPI_Comm_dup(MPI_COMM_WORLD, &A);
    MPI_Comm_dup(MPI_COMM_WORLD, &B);
    int rank = mtest_rank, paired = rank < mtest_size - mtest_size % 2;
    int sender = rank % 2 == 0;
    peer = sender ? rank + 1 : rank - 1;
    char *big = malloc(BIG);
    if (paired) {
        int v = -1, one = 1;
        /* 1. Ssend on A, completion needs the receiver's progress on A while it waits on B. */
        if (sender) {
            MPI_Ssend(&one, 1, MPI_INT, peer, 10, A);
            MPI_Send(&one, 1, MPI_INT, peer, 11, B);
        } else {
            MPI_Request r;
            MPI_Irecv(&v, 1, MPI_INT, peer, 10, A, &r);
            int w = -1;
            MPI_Recv(&w, 1, MPI_INT, peer, 11, B, MPI_STATUS_IGNORE);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
            CHECK(v == 1 && w == 1, "case 1: got %d %d", v, w);
        }
        /* 2. Rendezvous on A while the receiver waits on B. */
        if (sender) {
            MTest_Fill_bytes(big, BIG, 77);
            MPI_Send(big, BIG, MPI_BYTE, peer, 20, A);
            MPI_Send(&one, 1, MPI_INT, peer, 21, B);
        } else {
            MPI_Request r;
            memset(big, 0, BIG);
            MPI_Irecv(big, BIG, MPI_BYTE, peer, 20, A, &r);
            int w = -1;
            MPI_Recv(&w, 1, MPI_INT, peer, 21, B, MPI_STATUS_IGNORE);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
            CHECK(MTest_Verify_bytes(big, BIG, 77) < 0 && w == 1, "case 2: data or flag wrong");
        }
        /* 3. A thread waits on A for a message sent after an exchange on B. */
        if (sender) {
            int x = -1;
            MPI_Sendrecv(&one, 1, MPI_INT, peer, 31, &x, 1, MPI_INT, peer, 31, B,
                         MPI_STATUS_IGNORE);
            CHECK(x == 1, "case 3: exchange on B gave %d", x);
            int t = 30;
            MPI_Send(&t, 1, MPI_INT, peer, 30, A);
        } else {
            pthread_t th;
            pthread_create(&th, NULL, wait_on_a, NULL);
            int x = -1;
            MPI_Sendrecv(&one, 1, MPI_INT, peer, 31, &x, 1, MPI_INT, peer, 31, B,
                         MPI_STATUS_IGNORE);
            CHECK(x == 1, "case 3: exchange on B gave %d", x);
            pthread_join(th, NULL);
            errs += errs_t;
        }
    }
    free(big);
    MPI_Comm_free(&A);
    MPI_Comm_free(&B);
    return MTest_Finalize(errs);
}
