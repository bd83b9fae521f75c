/* coll_nonblocking: several nonblocking collectives outstanding at once on two
 * communicators.
 *
 * On a dup of WORLD and on a reversed copy of WORLD (MPI_Comm_split with key -rank), every
 * process starts back-to-back MPI_Ibarrier, MPI_Ibcast, MPI_Iallreduce (SUM),
 * MPI_Iallgather and MPI_Ialltoall on the first communicator, then the same five on the
 * second (same order everywhere, as the standard requires), then:
 *   - progresses them with an MPI_Test loop over the pending requests, "computing"
 *     between tests (buffers are not looked at before completion), and checks the results;
 *   - does it again, completing them with MPI_Waitany until MPI_UNDEFINED (each index
 *     exactly once, the request set to MPI_REQUEST_NULL);
 * with small (3 ints per process) and larger (5000 ints per process) data, and a round
 * where the Iallreduce uses MPI_IN_PLACE.  A loop that does not finish in 60 s counts as a
 * failure (no progress) instead of hanging. */
#include "mtest.h"

#define NOPS 5
#define NREQ (2 * NOPS)

struct ops {
    MPI_Comm comm;
    int rank, size, root;
    int count;
    int *bcast;
    int *ar_in, *ar_out;
    int *ag_in, *ag_out;
    int *a2a_in, *a2a_out;
};

/* World rank of process r of the communicator (WORLD order or reversed). */
static int world_of(int reversed, int r)
{
    return reversed ? mtest_size - 1 - r : r;
}

static int val(int tag, int wsrc, int wdst, int i)
{
    return tag * 100000 + wsrc * 1000 + wdst * 37 + i;
}

static void setup(struct ops *o, MPI_Comm comm, int count, int tag, int reversed)
{
    o->comm = comm;
    MPI_Comm_rank(comm, &o->rank);
    MPI_Comm_size(comm, &o->size);
    o->root = 1 % o->size;
    o->count = count;
    int n = count, p = o->size;
    o->bcast = malloc(n * sizeof(int));
    o->ar_in = malloc(n * sizeof(int));
    o->ar_out = malloc(n * sizeof(int));
    o->ag_in = malloc(n * sizeof(int));
    o->ag_out = malloc((size_t)n * p * sizeof(int));
    o->a2a_in = malloc((size_t)n * p * sizeof(int));
    o->a2a_out = malloc((size_t)n * p * sizeof(int));
    for (int i = 0; i < n; i++) {
        o->bcast[i] = o->rank == o->root ? val(tag, mtest_rank, 0, i) : -1;
        o->ar_in[i] = val(tag, mtest_rank, 0, i);
        o->ar_out[i] = -1;
        o->ag_in[i] = val(tag + 1, mtest_rank, 0, i);
    }
    for (int j = 0; j < n * p; j++) {
        o->ag_out[j] = -1;
        o->a2a_out[j] = -1;
    }
    for (int d = 0; d < p; d++)
        for (int i = 0; i < n; i++)
            o->a2a_in[d * n + i] = val(tag + 2, mtest_rank, world_of(reversed, d), i);
}

static void start(struct ops *o, MPI_Request *req, int in_place)
{
    int n = o->count, rc;
    rc = MPI_Ibarrier(o->comm, &req[0]);
    CHECK_RC(rc, "MPI_Ibarrier");
    rc = MPI_Ibcast(o->bcast, n, MPI_INT, o->root, o->comm, &req[1]);
    CHECK_RC(rc, "MPI_Ibcast");
    if (in_place) {
        memcpy(o->ar_out, o->ar_in, n * sizeof(int));
        rc = MPI_Iallreduce(MPI_IN_PLACE, o->ar_out, n, MPI_INT, MPI_SUM, o->comm, &req[2]);
    } else {
        rc = MPI_Iallreduce(o->ar_in, o->ar_out, n, MPI_INT, MPI_SUM, o->comm, &req[2]);
    }
    CHECK_RC(rc, "MPI_Iallreduce");
    rc = MPI_Iallgather(o->ag_in, n, MPI_INT, o->ag_out, n, MPI_INT, o->comm, &req[3]);
    CHECK_RC(rc, "MPI_Iallgather");
    rc = MPI_Ialltoall(o->a2a_in, n, MPI_INT, o->a2a_out, n, MPI_INT, o->comm, &req[4]);
    CHECK_RC(rc, "MPI_Ialltoall");
}

static void verify(struct ops *o, int tag, int reversed, const char *what)
{
    int n = o->count, p = o->size, bad = 0;
    int wroot = world_of(reversed, o->root);
    for (int i = 0; i < n && bad < 3; i++)
        if (!CHECK(o->bcast[i] == val(tag, wroot, 0, i), "%s: Ibcast [%d] = %d, want %d", what,
                   i, o->bcast[i], val(tag, wroot, 0, i)))
            bad++;
    for (int i = 0; i < n && bad < 6; i++) {
        int want = 0;
        for (int r = 0; r < p; r++)
            want += val(tag, r, 0, i);
        if (!CHECK(o->ar_out[i] == want, "%s: Iallreduce [%d] = %d, want %d", what, i,
                   o->ar_out[i], want))
            bad++;
    }
    for (int r = 0; r < p && bad < 9; r++)
        for (int i = 0; i < n && bad < 9; i++) {
            int want = val(tag + 1, world_of(reversed, r), 0, i);
            if (!CHECK(o->ag_out[r * n + i] == want, "%s: Iallgather block %d [%d] = %d, want %d",
                       what, r, i, o->ag_out[r * n + i], want))
                bad++;
        }
    for (int r = 0; r < p && bad < 12; r++)
        for (int i = 0; i < n && bad < 12; i++) {
            int want = val(tag + 2, world_of(reversed, r), mtest_rank, i);
            if (!CHECK(o->a2a_out[r * n + i] == want, "%s: Ialltoall block %d [%d] = %d, want %d",
                       what, r, i, o->a2a_out[r * n + i], want))
                bad++;
        }
}

static void release(struct ops *o)
{
    free(o->bcast);
    free(o->ar_in);
    free(o->ar_out);
    free(o->ag_in);
    free(o->ag_out);
    free(o->a2a_in);
    free(o->a2a_out);
}

static volatile double sink;

static void compute(void)
{
    double x = 1.0;
    for (int i = 0; i < 2000; i++)
        x = x * 1.0000001 + 0.5;
    sink = x;
}

static void round_test(MPI_Comm a, MPI_Comm b, int count, int tag, int in_place, int waitany)
{
    struct ops oa, ob;
    setup(&oa, a, count, tag, 0);
    setup(&ob, b, count, tag + 10, 1);
    MPI_Request req[NREQ];
    start(&oa, req, in_place);
    start(&ob, req + NOPS, in_place);
    char what[2][96];
    snprintf(what[0], sizeof what[0], "count %d%s, %s, dup of WORLD", count,
             in_place ? " in place" : "", waitany ? "Waitany" : "Test loop");
    snprintf(what[1], sizeof what[1], "count %d%s, %s, reversed WORLD", count,
             in_place ? " in place" : "", waitany ? "Waitany" : "Test loop");
    double t0 = MPI_Wtime();
    if (!waitany) {
        int pending = NREQ;
        long tests = 0;
        while (pending > 0) {
            for (int i = 0; i < NREQ; i++) {
                if (req[i] == MPI_REQUEST_NULL)
                    continue;
                int flag = 0;
                int rc = MPI_Test(&req[i], &flag, MPI_STATUS_IGNORE);
                tests++;
                if (!CHECK_RC(rc, "MPI_Test")) {
                    req[i] = MPI_REQUEST_NULL;
                    pending--;
                    continue;
                }
                if (flag) {
                    CHECK(req[i] == MPI_REQUEST_NULL, "completed request %d not freed by MPI_Test",
                          i);
                    req[i] = MPI_REQUEST_NULL;
                    pending--;
                }
                compute();
            }
            if (pending > 0 && MPI_Wtime() - t0 > 60) {
                CHECK(0, "%s: %d requests still pending after 60 s (%ld MPI_Test calls)", what[0],
                      pending, tests);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }
    } else {
        int seen[NREQ] = {0};
        for (int k = 0; k <= NREQ; k++) {
            int idx = -5;
            int rc = MPI_Waitany(NREQ, req, &idx, MPI_STATUS_IGNORE);
            if (!CHECK_RC(rc, "MPI_Waitany"))
                break;
            if (k == NREQ) {
                CHECK(idx == MPI_UNDEFINED, "MPI_Waitany with all requests null gave index %d",
                      idx);
                break;
            }
            if (!CHECK(idx >= 0 && idx < NREQ, "MPI_Waitany index %d", idx))
                break;
            CHECK(!seen[idx], "MPI_Waitany returned index %d twice", idx);
            seen[idx] = 1;
            CHECK(req[idx] == MPI_REQUEST_NULL, "MPI_Waitany left request %d non-null", idx);
            compute();
        }
    }
    verify(&oa, tag, 0, what[0]);
    verify(&ob, tag + 10, 1, what[1]);
    release(&oa);
    release(&ob);
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    MPI_Comm a, b;
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    MPI_Comm_split(MPI_COMM_WORLD, 0, -mtest_rank, &b);
    int r;
    MPI_Comm_rank(b, &r);
    CHECK(r == mtest_size - 1 - mtest_rank, "reversed split: rank %d, want %d", r,
          mtest_size - 1 - mtest_rank);
    static const int counts[] = {3, 5000};
    int tag = 1;
    for (int c = 0; c < 2; c++)
        for (int waitany = 0; waitany < 2; waitany++)
            for (int in_place = 0; in_place < 2; in_place++) {
                round_test(a, b, counts[c], tag, in_place, waitany);
                tag += 20;
            }
    MPI_Comm_free(&a);
    MPI_Comm_free(&b);
    return MTest_Finalize(0);
}
