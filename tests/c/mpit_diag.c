/* mpit_diag: hympi's statistics as MPI_T performance variables (the counters HYMPI_STATS=1
 * prints: an element per VCI and one for the slow path, 65 in all; the collective choices
 * one), read through handles allocated before the traffic: a handle on one of them turns
 * counting on, and each element reads its growth since allocation.
 *
 * Each rank sends 10 eager messages of 100 bytes to the next rank and one of 1 MiB
 * (rendezvous), and 5 of 8 bytes to itself; then 3 allreduces. The counters must have grown
 * at least by that much (internal traffic may add more): messages and bytes sent and
 * received by protocol (node or network, whichever carried them), self messages, waits,
 * collective algorithm choices; and they never decrease. With another MPI (no such
 * variables) the program skips. */
#include "mtest.h"

#define EAGER_N 10
#define EAGER_BYTES 100
#define BIG (1 << 20)

enum {
    SENT_EAGER_SHM, SENT_EAGER_NET, SENT_EAGER_SHM_B, SENT_EAGER_NET_B,
    RECV_EAGER_SHM, RECV_EAGER_NET,
    SENT_RNDV_SHM, SENT_RNDV_NET, SENT_RNDV_SHM_B, SENT_RNDV_NET_B,
    RECV_RNDV_SHM, RECV_RNDV_NET,
    SENT_SELF, RECV_SELF, COLL, NVARS
};
static const char *names[NVARS] = {
    "sent_msgs_shm_eager", "sent_msgs_net_eager", "sent_bytes_shm_eager", "sent_bytes_net_eager",
    "recv_msgs_shm_eager", "recv_msgs_net_eager",
    "sent_msgs_shm_rendezvous", "sent_msgs_net_rendezvous", "sent_bytes_shm_rendezvous",
    "sent_bytes_net_rendezvous", "recv_msgs_shm_rendezvous", "recv_msgs_net_rendezvous",
    "sent_msgs_self", "recv_msgs_self", "coll_algorithm_choices",
};

static MPI_T_pvar_session session;
static MPI_T_pvar_handle handles[NVARS];
static int counts[NVARS];

#define MAX_COUNT 1024

/* Reads every variable, each as the sum of its elements; checks that a read writes exactly
 * `count` elements. */
static void read_all(unsigned long long *v)
{
    static unsigned long long buf[MAX_COUNT + 1];
    for (int i = 0; i < NVARS; i++) {
        buf[counts[i]] = 0xfeedfacecafef00dULL;
        int rc = MPI_T_pvar_read(session, handles[i], buf);
        CHECK(rc == MPI_SUCCESS, "MPI_T_pvar_read(%s) returned %d", names[i], rc);
        CHECK(buf[counts[i]] == 0xfeedfacecafef00dULL, "%s: read wrote past its count %d",
              names[i], counts[i]);
        v[i] = 0;
        for (int k = 0; k < counts[i]; k++)
            v[i] += buf[k];
    }
}

int main(int argc, char **argv)
{
    int provided, index, count, rc;
    MTest_Init(&argc, &argv);
    rc = MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    CHECK(rc == MPI_SUCCESS, "MPI_T_init_thread returned %d", rc);
    if (MPI_T_pvar_get_index(names[0], MPI_T_PVAR_CLASS_COUNTER, &index) != MPI_SUCCESS) {
        MPI_T_finalize();
        MTest_Skip("no hympi statistics variables (another MPI)");
        return MTest_Finalize(0);
    }
    rc = MPI_T_pvar_session_create(&session);
    CHECK(rc == MPI_SUCCESS, "MPI_T_pvar_session_create returned %d", rc);
    for (int i = 0; i < NVARS; i++) {
        rc = MPI_T_pvar_get_index(names[i], MPI_T_PVAR_CLASS_COUNTER, &index);
        if (!CHECK(rc == MPI_SUCCESS, "no counter %s (%d)", names[i], rc))
            return MTest_Finalize(1);
        rc = MPI_T_pvar_handle_alloc(session, index, NULL, &handles[i], &count);
        CHECK(rc == MPI_SUCCESS && count >= 1 && count <= MAX_COUNT,
              "handle_alloc(%s): rc %d, count %d", names[i], rc, count);
        counts[i] = count >= 1 && count <= MAX_COUNT ? count : 1;
        /* Per-VCI counters: an element per VCI and the slow path's; the choices: one. */
        CHECK(i == COLL ? count == 1 : count > 1, "%s: count %d", names[i], count);
    }
    unsigned long long before[NVARS], after[NVARS], later[NVARS];
    read_all(before);
    for (int i = 0; i < NVARS; i++)
        CHECK(before[i] == 0, "%s reads %llu right after its handle's allocation", names[i],
              before[i]);

    int next = (mtest_rank + 1) % mtest_size, prev = (mtest_rank + mtest_size - 1) % mtest_size;
    char *big_out = malloc(BIG), *big_in = malloc(BIG);
    char small_out[EAGER_BYTES], small_in[EAGER_BYTES];
    memset(big_out, mtest_rank + 1, BIG);
    memset(small_out, mtest_rank + 7, sizeof small_out);
    if (mtest_size > 1) {
        for (int i = 0; i < EAGER_N; i++)
            MPI_Sendrecv(small_out, EAGER_BYTES, MPI_BYTE, next, i, small_in, EAGER_BYTES,
                         MPI_BYTE, prev, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Sendrecv(big_out, BIG, MPI_BYTE, next, 99, big_in, BIG, MPI_BYTE, prev, 99,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(big_in[BIG - 1] == (char)(prev + 1), "1 MiB message: wrong data");
    }
    for (int i = 0; i < 5; i++) {
        double x = i, y = -1;
        MPI_Sendrecv(&x, 1, MPI_DOUBLE, mtest_rank, 5, &y, 1, MPI_DOUBLE, mtest_rank, 5,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(y == x, "self message %d: got %g", i, y);
    }
    for (int i = 0; i < 3; i++) {
        int one = 1, sum = 0;
        MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        CHECK(sum == mtest_size, "allreduce: %d", sum);
    }
    read_all(after);

    if (mtest_size > 1) {
        unsigned long long sent = after[SENT_EAGER_SHM] + after[SENT_EAGER_NET];
        unsigned long long sent_b = after[SENT_EAGER_SHM_B] + after[SENT_EAGER_NET_B];
        unsigned long long recvd = after[RECV_EAGER_SHM] + after[RECV_EAGER_NET];
        CHECK(sent >= EAGER_N, "eager messages sent: %llu, want >= %d", sent, EAGER_N);
        CHECK(sent_b >= EAGER_N * EAGER_BYTES, "eager bytes sent: %llu", sent_b);
        CHECK(recvd >= EAGER_N, "eager messages received: %llu", recvd);
        unsigned long long rs = after[SENT_RNDV_SHM] + after[SENT_RNDV_NET];
        unsigned long long rs_b = after[SENT_RNDV_SHM_B] + after[SENT_RNDV_NET_B];
        unsigned long long rr = after[RECV_RNDV_SHM] + after[RECV_RNDV_NET];
        CHECK(rs >= 1 && rs_b >= BIG, "rendezvous sent: %llu messages, %llu bytes", rs, rs_b);
        CHECK(rr >= 1, "rendezvous received: %llu", rr);
        CHECK(after[COLL] >= 3, "collective choices: %llu, want >= 3", after[COLL]);
    }
    CHECK(after[SENT_SELF] >= 5 && after[RECV_SELF] >= 5, "self messages: %llu sent, %llu received",
          after[SENT_SELF], after[RECV_SELF]);

    MPI_Barrier(MPI_COMM_WORLD);
    read_all(later);
    for (int i = 0; i < NVARS; i++)
        CHECK(later[i] >= after[i], "%s decreased: %llu then %llu", names[i], after[i],
              later[i]);
    for (int i = 0; i < NVARS; i++)
        MPI_T_pvar_handle_free(session, &handles[i]);
    MPI_T_pvar_session_free(&session);
    MPI_T_finalize();
    free(big_out);
    free(big_in);
    return MTest_Finalize(0);
}
