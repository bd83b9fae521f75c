/* vci_spread: communicators created with the MPI-4 assertions mpi_assert_no_any_tag and/or
 * mpi_assert_no_any_source (MPI_Comm_dup_with_info; MPI_Comm_dup of such a communicator keeps
 * them), which hympi spreads over its VCIs by tag and/or source:
 *   - T threads share each communicator; thread t exchanges messages of random sizes (0 B to
 *     96 KiB: eager and rendezvous) with thread t of the neighbouring ranks under tag t:
 *     everything arrives once, whole, in order, with the right status;
 *   - the wildcards the assertions leave allowed: MPI_ANY_TAG where only sources are
 *     asserted (messages of different tags from one source keep their order), MPI_ANY_SOURCE
 *     where only tags are (every rank's message arrives once);
 *   - MPI_Probe / MPI_Iprobe with a named source and tag, cancel of a posted receive, a
 *     persistent receive started repeatedly, messages sent right after the communicator's
 *     creation (they may arrive before the receiver created it);
 *   - under hympi only (another MPI may accept it): a receive or probe with a wildcard the
 *     communicator asserted away fails with MPI_ERR_RANK or MPI_ERR_TAG.
 * Needs MPI_THREAD_MULTIPLE (skips otherwise). */
#include "mtest.h"
#include <pthread.h>

#define NTHREADS 4
#define ROUNDS 120
#define MAXMSG (96 * 1024)

enum { C_TAG, C_SRC, C_BOTH, C_DUP, NCOMMS };
static const char *cname[NCOMMS] = {"no_any_tag", "no_any_source", "both", "dup of no_any_tag"};
static MPI_Comm comms[NCOMMS];
static int left, right;

static int is_hympi(void)
{
#ifdef HYMPI
    return 1;
#else
    return 0;
#endif
}

/* Size of message i of thread t from rank `from` on communicator c (both sides agree). */
static int msg_size(int from, int t, int i, int c)
{
    uint64_t s = ((uint64_t)from << 40) ^ ((uint64_t)t << 32) ^ ((uint64_t)c << 24) ^ (uint64_t)i;
    uint64_t r = MTest_Rand64(&s);
    switch (r % 5) {
    case 0: return 0;
    case 1: return 8;
    case 2: return (int)((r >> 8) % 2000);
    case 3: return 70000 + (int)((r >> 8) % (MAXMSG - 70000));
    default: return 64;
    }
}

static uint64_t seed_of(int from, int t, int i, int c)
{
    return 0x5eed0000ULL + ((uint64_t)from << 32) + ((uint64_t)c << 24) + ((uint64_t)t << 16) +
           (uint64_t)i;
}

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    char *sbuf = malloc(MAXMSG), *rbuf = malloc(MAXMSG);
    for (int c = 0; c < NCOMMS; c++) {
        for (int i = 0; i < ROUNDS; i++) {
            int ssize = msg_size(mtest_rank, t, i, c), rsize = msg_size(left, t, i, c);
            MTest_Fill_bytes(sbuf, (size_t)ssize, seed_of(mtest_rank, t, i, c));
            memset(rbuf, 0xee, MAXMSG);
            MPI_Request req[2];
            MPI_Status st[2];
            int rc = MPI_Irecv(rbuf, MAXMSG, MPI_BYTE, left, t, comms[c], &req[0]);
            CHECK_RC(rc, "MPI_Irecv");
            rc = MPI_Isend(sbuf, ssize, MPI_BYTE, right, t, comms[c], &req[1]);
            CHECK_RC(rc, "MPI_Isend");
            rc = MPI_Waitall(2, req, st);
            CHECK_RC(rc, "MPI_Waitall");
            int n = -1;
            MPI_Get_count(&st[0], MPI_BYTE, &n);
            if (!CHECK(st[0].MPI_SOURCE == left && st[0].MPI_TAG == t && n == rsize,
                       "%s thread %d round %d: source %d tag %d count %d, expected %d %d %d",
                       cname[c], t, i, st[0].MPI_SOURCE, st[0].MPI_TAG, n, left, t, rsize))
                break;
            long bad = MTest_Verify_bytes(rbuf, (size_t)rsize, seed_of(left, t, i, c));
            if (!CHECK(bad < 0, "%s thread %d round %d: byte %ld of %d differs", cname[c], t, i,
                       bad, rsize))
                break;
        }
    }
    free(sbuf);
    free(rbuf);
    return NULL;
}

/* Messages of tags 5, 3, 9, 3 from each rank to its right neighbour, received there with
 * MPI_ANY_TAG on the source-asserted communicator: they keep the order they were sent in. */
static void any_tag_keeps_order(void)
{
    const int tags[4] = {5, 3, 9, 3};
    int vals[4], got = -1;
    MPI_Request req[4];
    for (int k = 0; k < 4; k++) {
        vals[k] = 100 * mtest_rank + k;
        MPI_Isend(&vals[k], 1, MPI_INT, right, tags[k], comms[C_SRC], &req[k]);
    }
    for (int k = 0; k < 4; k++) {
        MPI_Status st;
        int rc = MPI_Recv(&got, 1, MPI_INT, left, MPI_ANY_TAG, comms[C_SRC], &st);
        CHECK_RC(rc, "MPI_Recv(MPI_ANY_TAG)");
        CHECK(got == 100 * left + k && st.MPI_TAG == tags[k],
              "MPI_ANY_TAG receive %d: value %d tag %d, expected %d %d", k, got, st.MPI_TAG,
              100 * left + k, tags[k]);
    }
    MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
}

/* Every rank sends its rank to rank 0 under tag 7 on the tag-asserted communicator; rank 0
 * receives them with MPI_ANY_SOURCE. */
static void any_source_gets_all(void)
{
    int me = mtest_rank;
    MPI_Request r;
    MPI_Isend(&me, 1, MPI_INT, 0, 7, comms[C_TAG], &r);
    if (mtest_rank == 0) {
        int seen[64] = {0};
        for (int k = 0; k < mtest_size; k++) {
            int v = -1;
            MPI_Status st;
            int rc = MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 7, comms[C_TAG], &st);
            CHECK_RC(rc, "MPI_Recv(MPI_ANY_SOURCE)");
            if (CHECK(v >= 0 && v < mtest_size && v < 64 && v == st.MPI_SOURCE,
                      "MPI_ANY_SOURCE receive: value %d from %d", v, st.MPI_SOURCE))
                seen[v]++;
        }
        for (int k = 0; k < mtest_size && k < 64; k++)
            CHECK(seen[k] == 1, "rank %d's message arrived %d times", k, seen[k]);
    }
    MPI_Wait(&r, MPI_STATUS_IGNORE);
}

static void probe_cancel_persistent(MPI_Comm c, const char *name)
{
    /* Probe and Iprobe name the source and tag. */
    int v = mtest_rank, got = -1, flag = 0;
    MPI_Request r;
    MPI_Status st;
    MPI_Isend(&v, 1, MPI_INT, right, 11, c, &r);
    int rc = MPI_Probe(left, 11, c, &st);
    CHECK_RC(rc, "MPI_Probe");
    CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 11, "%s: MPI_Probe status %d %d", name,
          st.MPI_SOURCE, st.MPI_TAG);
    MPI_Recv(&got, 1, MPI_INT, left, 11, c, MPI_STATUS_IGNORE);
    CHECK(got == left, "%s: probed message holds %d, expected %d", name, got, left);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Isend(&v, 1, MPI_INT, right, 13, c, &r);
    while (!flag) {
        rc = MPI_Iprobe(left, 13, c, &flag, &st);
        CHECK_RC(rc, "MPI_Iprobe");
        if (rc != MPI_SUCCESS)
            break;
    }
    MPI_Recv(&got, 1, MPI_INT, left, 13, c, MPI_STATUS_IGNORE);
    MPI_Wait(&r, MPI_STATUS_IGNORE);

    /* A receive nobody matches is cancelled. */
    rc = MPI_Irecv(&got, 1, MPI_INT, left, 99, c, &r);
    CHECK_RC(rc, "MPI_Irecv(tag 99)");
    MPI_Cancel(&r);
    MPI_Wait(&r, &st);
    int cancelled = 0;
    MPI_Test_cancelled(&st, &cancelled);
    CHECK(cancelled, "%s: the posted receive was not cancelled", name);

    /* A persistent receive and send, started 10 times. */
    int in = -1, out = 0;
    MPI_Request pr[2];
    MPI_Recv_init(&in, 1, MPI_INT, left, 12, c, &pr[0]);
    MPI_Send_init(&out, 1, MPI_INT, right, 12, c, &pr[1]);
    for (int k = 0; k < 10; k++) {
        out = 1000 * mtest_rank + k;
        MPI_Startall(2, pr);
        MPI_Waitall(2, pr, MPI_STATUSES_IGNORE);
        CHECK(in == 1000 * left + k, "%s: persistent round %d got %d", name, k, in);
    }
    MPI_Request_free(&pr[0]);
    MPI_Request_free(&pr[1]);
}

static void asserted_wildcards_fail(void)
{
    int x = 0, flag = 0, rc;
    MPI_Request r;
    MPI_Status st;
    rc = MPI_Irecv(&x, 1, MPI_INT, left, MPI_ANY_TAG, comms[C_TAG], &r);
    CHECK_CLASS(rc, MPI_ERR_TAG, "MPI_Irecv(MPI_ANY_TAG) with mpi_assert_no_any_tag");
    rc = MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 0, comms[C_SRC], &st);
    CHECK_CLASS(rc, MPI_ERR_RANK, "MPI_Recv(MPI_ANY_SOURCE) with mpi_assert_no_any_source");
    rc = MPI_Iprobe(MPI_ANY_SOURCE, 0, comms[C_BOTH], &flag, &st);
    CHECK_CLASS(rc, MPI_ERR_RANK, "MPI_Iprobe(MPI_ANY_SOURCE) with both assertions");
    rc = MPI_Iprobe(left, MPI_ANY_TAG, comms[C_DUP], &flag, &st);
    CHECK_CLASS(rc, MPI_ERR_TAG, "MPI_Iprobe(MPI_ANY_TAG) on a duplicate");
}

static MPI_Comm make(const char *k1, const char *k2)
{
    MPI_Info info;
    MPI_Comm c;
    MPI_Info_create(&info);
    MPI_Info_set(info, k1, "true");
    if (k2)
        MPI_Info_set(info, k2, "true");
    int rc = MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &c);
    CHECK_RC(rc, "MPI_Comm_dup_with_info");
    MPI_Info_free(&info);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    return c;
}

int main(int argc, char **argv)
{
    int provided;
    MTest_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE || mtest_size > 64) {
        MTest_Skip("needs MPI_THREAD_MULTIPLE and at most 64 processes");
        return MTest_Finalize(0);
    }
    left = (mtest_rank + mtest_size - 1) % mtest_size;
    right = (mtest_rank + 1) % mtest_size;
    comms[C_TAG] = make("mpi_assert_no_any_tag", NULL);
    /* Sent before the right neighbour may have created the next communicator. */
    int early = 42 + mtest_rank, got = -1;
    MPI_Request er;
    comms[C_SRC] = make("mpi_assert_no_any_source", NULL);
    MPI_Isend(&early, 1, MPI_INT, right, 3, comms[C_SRC], &er);
    comms[C_BOTH] = make("mpi_assert_no_any_source", "mpi_assert_no_any_tag");
    MPI_Comm_dup(comms[C_TAG], &comms[C_DUP]);
    MPI_Comm_set_errhandler(comms[C_DUP], MPI_ERRORS_RETURN);
    MPI_Recv(&got, 1, MPI_INT, left, 3, comms[C_SRC], MPI_STATUS_IGNORE);
    CHECK(got == 42 + left, "early message: got %d, expected %d", got, 42 + left);
    MPI_Wait(&er, MPI_STATUS_IGNORE);

    pthread_t th[NTHREADS];
    for (int t = 0; t < NTHREADS; t++)
        pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
    for (int t = 0; t < NTHREADS; t++)
        pthread_join(th[t], NULL);

    any_tag_keeps_order();
    any_source_gets_all();
    for (int c = 0; c < NCOMMS; c++)
        probe_cancel_persistent(comms[c], cname[c]);
    if (is_hympi())
        asserted_wildcards_fail();
    MPI_Barrier(MPI_COMM_WORLD);
    for (int c = 0; c < NCOMMS; c++)
        MPI_Comm_free(&comms[c]);
    return MTest_Finalize(0);
}
