/* net_lanes: threads on their own communicators, with ranks on other nodes (network mode),
 * each stream of messages intact and in MPI's order whatever lane of the network transport
 * its communicator uses.
 *
 * NTHREADS threads per process, MPI_THREAD_MULTIPLE; thread t has its own duplicate of
 * MPI_COMM_WORLD (so, under hympi, its own VCI and network lane when there are enough).
 * Each thread sends NMSG messages to its right neighbour and receives its left neighbour's,
 * in windows of Irecv/Isend/Waitall with MPI_ANY_TAG; sizes mix empty, 8-byte, medium
 * (eager on the network) and 40-200 KiB messages (rendezvous, chunked and direct); every
 * body is checksummed by (sender, thread, sequence) and the tags must arrive in order.
 * A final blocking exchange with MPI_Ssend checks synchronous sends on every lane.
 *
 * Under hympi the performance variable ofi_lanes must equal MTEST_OFI_LANES when the job
 * spans nodes (some rank not in this rank's MPI_COMM_TYPE_SHARED communicator), else 1.
 * Skips without MPI_THREAD_MULTIPLE. */
#include "mtest.h"
#include <pthread.h>

#define NTHREADS 4
#define WIN 8
#define NMSG 160
#define MAXMSG (200 * 1024)

static MPI_Comm comms[NTHREADS];
static int left, right;
static int thread_errs[NTHREADS];

static int msg_size(int from, int t, int i)
{
    uint64_t s = ((uint64_t)from << 40) ^ ((uint64_t)t << 32) ^ (uint64_t)i ^ 0x1a2eULL;
    uint64_t r = MTest_Rand64(&s);
    switch (r % 6) {
    case 0: return 0;
    case 1: return 8;
    case 2: return (int)((r >> 8) % 4000);
    case 3: return 20000 + (int)((r >> 8) % 12000);
    case 4: return 40 * 1024 + (int)((r >> 8) % (MAXMSG - 40 * 1024));
    default: return 100;
    }
}

static uint64_t seed_of(int from, int t, int i)
{
    return 0x1a2e0000ULL + ((uint64_t)from << 32) + ((uint64_t)t << 16) + (uint64_t)i;
}

#define TCHECK(t, cond, ...)                                                                   \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            if (thread_errs[t]++ < 5) {                                                        \
                fprintf(stderr, "[%d] thread %d: ", mtest_rank, t);                            \
                fprintf(stderr, __VA_ARGS__);                                                  \
                fprintf(stderr, "\n");                                                         \
            }                                                                                  \
        }                                                                                      \
    } while (0)

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    char *sbuf = malloc((size_t)WIN * MAXMSG), *rbuf = malloc((size_t)WIN * MAXMSG);
    MPI_Comm c = comms[t];
    for (int base = 0; base < NMSG; base += WIN) {
        MPI_Request req[2 * WIN];
        MPI_Status st[2 * WIN];
        for (int k = 0; k < WIN; k++) {
            int i = base + k;
            MPI_Irecv(rbuf + (size_t)k * MAXMSG, MAXMSG, MPI_BYTE, left, MPI_ANY_TAG, c, &req[k]);
            int n = msg_size(mtest_rank, t, i);
            MTest_Fill_bytes(sbuf + (size_t)k * MAXMSG, (size_t)n, seed_of(mtest_rank, t, i));
            MPI_Isend(sbuf + (size_t)k * MAXMSG, n, MPI_BYTE, right, i, c, &req[WIN + k]);
        }
        int rc = MPI_Waitall(2 * WIN, req, st);
        TCHECK(t, rc == MPI_SUCCESS, "MPI_Waitall returned %d", rc);
        for (int k = 0; k < WIN; k++) {
            int i = base + k, want = msg_size(left, t, i), n = -1;
            MPI_Get_count(&st[k], MPI_BYTE, &n);
            TCHECK(t, st[k].MPI_SOURCE == left && st[k].MPI_TAG == i && n == want,
                   "message %d: source %d tag %d count %d, expected %d %d %d", i,
                   st[k].MPI_SOURCE, st[k].MPI_TAG, n, left, i, want);
            if (n == want) {
                long bad = MTest_Verify_bytes(rbuf + (size_t)k * MAXMSG, (size_t)n,
                                              seed_of(left, t, i));
                TCHECK(t, bad < 0, "message %d: byte %ld wrong", i, bad);
            }
        }
    }
    /* Synchronous sends: the acknowledgement comes back whatever lane it takes. */
    int out = mtest_rank * 100 + t, in = -1;
    MPI_Request r;
    MPI_Irecv(&in, 1, MPI_INT, left, 7, c, &r);
    MPI_Ssend(&out, 1, MPI_INT, right, 7, c);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    TCHECK(t, in == left * 100 + t, "synchronous message %d, expected %d", in, left * 100 + t);
    free(sbuf);
    free(rbuf);
    return NULL;
}

/* Under hympi: the ofi_lanes performance variable (-1 when it cannot be read). */
static long read_ofi_lanes(void)
{
    long v = -1;
#ifdef HYMPI
    int prov, idx, count;
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &prov) != MPI_SUCCESS)
        return -1;
    if (MPI_T_pvar_get_index("ofi_lanes", MPI_T_PVAR_CLASS_SIZE, &idx) == MPI_SUCCESS) {
        MPI_T_pvar_session s;
        MPI_T_pvar_handle h;
        unsigned long long x = 0;
        MPI_T_pvar_session_create(&s);
        if (MPI_T_pvar_handle_alloc(s, idx, NULL, &h, &count) == MPI_SUCCESS &&
            MPI_T_pvar_read(s, h, &x) == MPI_SUCCESS)
            v = (long)x;
        MPI_T_pvar_handle_free(s, &h);
        MPI_T_pvar_session_free(&s);
    }
    MPI_T_finalize();
#endif
    return v;
}

int main(int argc, char **argv)
{
    int provided;
    MTest_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided != MPI_THREAD_MULTIPLE) {
        MTest_Skip("MPI_THREAD_MULTIPLE not provided");
        return MTest_Finalize(0);
    }
    left = (mtest_rank + mtest_size - 1) % mtest_size;
    right = (mtest_rank + 1) % mtest_size;
    MPI_Comm node;
    int node_size;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &node_size);
    MPI_Comm_free(&node);
    int spans = 0, mine = node_size < mtest_size;
    MPI_Allreduce(&mine, &spans, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
    long lanes = read_ofi_lanes();
    if (lanes >= 0) {
        const char *e = getenv("MTEST_OFI_LANES");
        long want = spans && e ? atol(e) : 1;
        if (spans && !e)
            want = lanes; /* the default depends on the machine's CPUs */
        CHECK(lanes == want, "ofi_lanes is %ld, expected %ld (job spans nodes: %d)", lanes, want,
              spans);
    }
    for (int t = 0; t < NTHREADS; t++)
        MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);
    pthread_t th[NTHREADS];
    for (int t = 0; t < NTHREADS; t++)
        pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
    for (int t = 0; t < NTHREADS; t++)
        pthread_join(th[t], NULL);
    int errs = 0;
    for (int t = 0; t < NTHREADS; t++) {
        errs += thread_errs[t];
        MPI_Comm_free(&comms[t]);
    }
    return MTest_Finalize(errs);
}
