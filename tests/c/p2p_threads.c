/* p2p_threads: point-to-point from several threads at once (MPI_THREAD_MULTIPLE): nothing
 * lost, duplicated, corrupted or reordered against MPI's non-overtaking rule.
 *
 * 4 threads per process, concurrently:
 *  A. own communicators: thread t has a duplicate of MPI_COMM_WORLD and one of
 *     MPI_COMM_SELF. On the world duplicate it streams NMSG messages of pseudo-random size
 *     (0 .. 64 KiB, so eager and rendezvous mix) to the right neighbour while receiving the
 *     left neighbour's stream with MPI_ANY_TAG in windows of Irecv/Isend/Waitall; every message
 *     carries (sender, thread, sequence) and a checksummed body; sequences must arrive in
 *     order. On the self duplicate it sends itself windows of Isend before or after the
 *     matching Irecv (unexpected and posted paths), in order.
 *  B. shared MPI_COMM_WORLD: thread t sends to every rank with tag 100 + t and receives with
 *     MPI_ANY_SOURCE and tag 100 + t; per source, sequences must arrive in order.
 * Skips when MPI_THREAD_MULTIPLE is not provided. Threads count their own failures. */
#include "mtest.h"
#include <pthread.h>

#define NTHREADS 4
#define WIN 8
static int NMSG = 400; /* MTEST_P2P_THREADS_MSGS overrides */

struct thr {
    int id;
    MPI_Comm world, self;
    int errs;
};

#define TFAIL(t, ...)                                                                          \
    do {                                                                                       \
        if ((t)->errs++ < 10) {                                                                \
            printf("[%d] thread %d: ", mtest_rank, (t)->id);                                   \
            printf(__VA_ARGS__);                                                               \
            printf("\n");                                                                      \
            fflush(stdout);                                                                    \
        }                                                                                      \
    } while (0)

/* Size of message `seq` from (src, thread). */
static int msg_size(int src, int thr, int seq)
{
    uint64_t s = (uint64_t)src * 1000003u + (uint64_t)thr * 7919u + (uint64_t)seq * 104729u;
    uint64_t r = MTest_Rand64(&s);
    switch (r % 4) {
    case 0: return 0;
    case 1: return 12 + (int)((r >> 8) % 64);
    case 2: return 256 + (int)((r >> 8) % 4096);
    default: return 16 + (int)((r >> 8) % 65536);
    }
}

static uint64_t seed_of(int src, int thr, int seq)
{
    return ((uint64_t)src << 40) ^ ((uint64_t)thr << 32) ^ (uint64_t)seq;
}

/* Message layout: int header[3] = {src, thread, seq}, then the body bytes. */
static void fill(char *buf, int src, int thr, int seq)
{
    int h[3] = {src, thr, seq}, n = msg_size(src, thr, seq);
    memcpy(buf, h, sizeof h);
    MTest_Fill_bytes(buf + sizeof h, (size_t)n, seed_of(src, thr, seq));
}

static void check(struct thr *t, const char *buf, const MPI_Status *st, int src, int thr,
                  int seq, const char *what)
{
    int h[3], count, n = msg_size(src, thr, seq);
    memcpy(h, buf, sizeof h);
    MPI_Get_count(st, MPI_BYTE, &count);
    if (h[0] != src || h[1] != thr || h[2] != seq) {
        TFAIL(t, "%s: got (%d,%d,%d), expected (%d,%d,%d)", what, h[0], h[1], h[2], src, thr,
              seq);
        return;
    }
    if (count != (int)(3 * sizeof(int)) + n)
        TFAIL(t, "%s: seq %d count %d, expected %d", what, seq, count, (int)(3 * sizeof(int)) + n);
    else if (MTest_Verify_bytes(buf + 3 * sizeof(int), (size_t)n, seed_of(src, thr, seq)) != -1)
        TFAIL(t, "%s: seq %d body corrupted", what, seq);
}

#define MAXMSG (3 * (int)sizeof(int) + 16 + 65536)

static void phase_a(struct thr *t)
{
    int size, rank, right, left, seq, k;
    char *sb = malloc((size_t)WIN * MAXMSG), *rb = malloc((size_t)WIN * MAXMSG);
    MPI_Request req[2 * WIN];
    MPI_Status st[2 * WIN];
    MPI_Comm_size(t->world, &size);
    MPI_Comm_rank(t->world, &rank);
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    for (seq = 0; seq < NMSG; seq += WIN) {
        for (k = 0; k < WIN; k++)
            MPI_Irecv(rb + (size_t)k * MAXMSG, MAXMSG, MPI_BYTE, left, MPI_ANY_TAG, t->world,
                      &req[k]);
        for (k = 0; k < WIN; k++) {
            fill(sb + (size_t)k * MAXMSG, rank, t->id, seq + k);
            MPI_Isend(sb + (size_t)k * MAXMSG, 3 * (int)sizeof(int) + msg_size(rank, t->id, seq + k),
                      MPI_BYTE, right, (seq + k) % 32, t->world, &req[WIN + k]);
        }
        MPI_Waitall(2 * WIN, req, st);
        for (k = 0; k < WIN; k++)
            check(t, rb + (size_t)k * MAXMSG, &st[k], left, t->id, seq + k, "world dup");
    }
    /* Self: windows alternately posted-first and unexpected-first. */
    for (seq = 0; seq < NMSG; seq += WIN) {
        int posted_first = (seq / WIN) % 2;
        if (posted_first)
            for (k = 0; k < WIN; k++)
                MPI_Irecv(rb + (size_t)k * MAXMSG, MAXMSG, MPI_BYTE, 0, MPI_ANY_TAG, t->self,
                          &req[k]);
        for (k = 0; k < WIN; k++) {
            fill(sb + (size_t)k * MAXMSG, mtest_rank, t->id, seq + k);
            MPI_Isend(sb + (size_t)k * MAXMSG,
                      3 * (int)sizeof(int) + msg_size(mtest_rank, t->id, seq + k), MPI_BYTE, 0, k,
                      t->self, &req[WIN + k]);
        }
        if (!posted_first)
            for (k = 0; k < WIN; k++)
                MPI_Irecv(rb + (size_t)k * MAXMSG, MAXMSG, MPI_BYTE, 0, MPI_ANY_TAG, t->self,
                          &req[k]);
        MPI_Waitall(2 * WIN, req, st);
        for (k = 0; k < WIN; k++) {
            check(t, rb + (size_t)k * MAXMSG, &st[k], mtest_rank, t->id, seq + k, "self dup");
            if (st[k].MPI_TAG != k) TFAIL(t, "self dup: tag %d, expected %d", st[k].MPI_TAG, k);
        }
    }
    free(sb);
    free(rb);
}

static void phase_b(struct thr *t)
{
    int size, rank, dst, i, n = NMSG / 8;
    int *next = calloc((size_t)mtest_size, sizeof(int));
    int *out, in[3];
    MPI_Request *sreq;
    MPI_Status st;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    sreq = malloc(sizeof(MPI_Request) * (size_t)size * (size_t)n);
    out = malloc(3 * sizeof(int) * (size_t)size * (size_t)n);
    /* All sends start before any receive: a standard send may wait for its receive. */
    for (i = 0; i < n; i++)
        for (dst = 0; dst < size; dst++) {
            int *o = out + 3 * (i * size + dst);
            o[0] = rank;
            o[1] = t->id;
            o[2] = i;
            MPI_Isend(o, 3, MPI_INT, dst, 100 + t->id, MPI_COMM_WORLD, &sreq[i * size + dst]);
        }
    for (i = 0; i < n * size; i++) {
        MPI_Recv(in, 3, MPI_INT, MPI_ANY_SOURCE, 100 + t->id, MPI_COMM_WORLD, &st);
        if (st.MPI_SOURCE < 0 || st.MPI_SOURCE >= size || in[0] != st.MPI_SOURCE ||
            in[1] != t->id) {
            TFAIL(t, "shared world: bad message (%d,%d,%d) from %d", in[0], in[1], in[2],
                  st.MPI_SOURCE);
            continue;
        }
        if (in[2] != next[st.MPI_SOURCE])
            TFAIL(t, "shared world: from %d seq %d, expected %d", st.MPI_SOURCE, in[2],
                  next[st.MPI_SOURCE]);
        next[st.MPI_SOURCE] = in[2] + 1;
    }
    MPI_Waitall(n * size, sreq, MPI_STATUSES_IGNORE);
    free(out);
    free(sreq);
    free(next);
}

static void *run(void *arg)
{
    struct thr *t = arg;
    phase_a(t);
    phase_b(t);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided, i, errs = 0;
    struct thr th[NTHREADS];
    pthread_t tid[NTHREADS];
    const char *env = getenv("MTEST_P2P_THREADS_MSGS");

    if (env && atoi(env) >= WIN) NMSG = atoi(env) / WIN * WIN;
    MTest_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE) {
        MTest_Skip("MPI_THREAD_MULTIPLE not provided");
        return MTest_Finalize(0);
    }
    for (i = 0; i < NTHREADS; i++) {
        th[i].id = i;
        th[i].errs = 0;
        MPI_Comm_dup(MPI_COMM_WORLD, &th[i].world);
        MPI_Comm_dup(MPI_COMM_SELF, &th[i].self);
    }
    for (i = 0; i < NTHREADS; i++) pthread_create(&tid[i], NULL, run, &th[i]);
    for (i = 0; i < NTHREADS; i++) {
        pthread_join(tid[i], NULL);
        errs += th[i].errs;
        MPI_Comm_free(&th[i].world);
        MPI_Comm_free(&th[i].self);
    }
    return MTest_Finalize(errs);
}
