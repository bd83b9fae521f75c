/* steal: large receives while another thread of the receiving process waits inside MPI
 * (hympi copies such receives in chunks that waiting threads take: stealing-aware waits).
 * Even ranks send, odd ranks receive (a single rank talks to itself). On a receiving rank,
 * thread A receives NMSG messages of sizes from 64 KiB to 4 MiB (blocking and nonblocking,
 * one truncated) and checks every byte; thread B meanwhile waits in MPI_Recv for the
 * sender's "done" message on another tag (sent after the last message completed), so it sits
 * in a waiting loop the whole time. Runs with any MPI; under hympi, HYMPI_STEAL=0
 * in the testlist runs the same program without stealing. */
#include "mtest.h"
#include <pthread.h>

#define NMSG 12

static MPI_Comm dup_comm;
static int peer;
static int errs_b;

static size_t msg_len(int i)
{
    static const size_t lens[] = {65536, 100000, 262144, 1 << 20, 4 << 20, 3000017};
    return lens[i % 6];
}

static void *waiter(void *arg)
{
    (void)arg;
    int done = 0;
    MPI_Recv(&done, 1, MPI_INT, peer, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (done != 4242)
        errs_b++;
    return NULL;
}

int main(int argc, char **argv)
{
    int provided, errs = 0;
    MTest_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE) {
        MTest_Skip("MPI_THREAD_MULTIPLE not provided");
        return MTest_Finalize(0);
    }
    MPI_Comm_dup(MPI_COMM_WORLD, &dup_comm);
    int rank = mtest_rank, size = mtest_size;
    int sender = rank % 2 == 0;
    peer = sender ? (rank + 1 < size ? rank + 1 : rank) : rank - 1;
    int also_receiver = sender && peer == rank; /* odd size: the last rank talks to itself */
    size_t maxlen = 4 << 20;
    char *buf = malloc(maxlen), *sbuf = malloc(maxlen);

    pthread_t th;
    if (!sender || also_receiver)
        pthread_create(&th, NULL, waiter, NULL);

    MPI_Request sreqs[NMSG];
    int nsend = 0;
    if (sender) {
        for (int i = 0; i < NMSG; i++) {
            size_t n = msg_len(i);
            /* Each message has its own buffer region content: fill, send, wait. */
            MTest_Fill_bytes(sbuf, n, (uint64_t)rank * 1000 + (uint64_t)i);
            if (also_receiver) {
                MPI_Isend(sbuf, (int)n, MPI_BYTE, peer, i, MPI_COMM_WORLD, &sreqs[nsend++]);
                MPI_Status st;
                memset(buf, 0, n);
                MPI_Recv(buf, (int)maxlen, MPI_BYTE, peer, i, MPI_COMM_WORLD, &st);
                MPI_Wait(&sreqs[--nsend], MPI_STATUS_IGNORE);
                long bad = MTest_Verify_bytes(buf, n, (uint64_t)rank * 1000 + (uint64_t)i);
                CHECK(bad < 0, "self message %d: byte %ld differs", i, bad);
            } else {
                MPI_Send(sbuf, (int)n, MPI_BYTE, peer, i, MPI_COMM_WORLD);
            }
        }
        int done = 4242;
        MPI_Send(&done, 1, MPI_INT, peer, 99, MPI_COMM_WORLD);
    }
    if (!sender) {
        for (int i = 0; i < NMSG; i++) {
            size_t n = msg_len(i);
            MPI_Status st;
            memset(buf, 0, maxlen);
            if (i == 7) {
                /* Truncated: room for half the message. */
                int rc;
                MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
                rc = MPI_Recv(buf, (int)(n / 2), MPI_BYTE, peer, i, MPI_COMM_WORLD, &st);
                CHECK_CLASS(rc, MPI_ERR_TRUNCATE, "truncated large receive");
                MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
                continue;
            }
            if (i % 2) {
                MPI_Request r;
                MPI_Irecv(buf, (int)maxlen, MPI_BYTE, peer, i, MPI_COMM_WORLD, &r);
                MPI_Wait(&r, &st);
            } else {
                MPI_Recv(buf, (int)maxlen, MPI_BYTE, peer, i, MPI_COMM_WORLD, &st);
            }
            int count = -1;
            MPI_Get_count(&st, MPI_BYTE, &count);
            CHECK(count == (int)n, "message %d: count %d, expected %zu", i, count, n);
            CHECK(st.MPI_SOURCE == peer && st.MPI_TAG == i, "message %d: status %d/%d", i,
                  st.MPI_SOURCE, st.MPI_TAG);
            long bad = MTest_Verify_bytes(buf, n, (uint64_t)peer * 1000 + (uint64_t)i);
            CHECK(bad < 0, "message %d (%zu bytes): byte %ld differs", i, n, bad);
        }
    }
    MPI_Barrier(dup_comm);
    if (!sender || also_receiver) {
        pthread_join(th, NULL);
        errs += errs_b;
    }
    MPI_Comm_free(&dup_comm);
    free(buf);
    free(sbuf);
    return MTest_Finalize(errs);
}
