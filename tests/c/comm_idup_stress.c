/* comm_idup_stress: many MPI_Comm_idup outstanding at once, completed by one MPI_Waitall.
 *
 *  - N idups of MPI_COMM_WORLD outstanding together (N = 10, 32, 64), one Waitall.
 *  - idups interleaved over three parents (WORLD, two dups), in the same order everywhere.
 *  - idups mixed with point-to-point (Isend/Irecv on the parents) and nonblocking
 *    collectives (Ibarrier, Iallreduce) in flight, all completed by one Waitall.
 *  - With MPI_THREAD_MULTIPLE: 3 threads each run idups of their own parent concurrently.
 *
 * Every new communicator is then checked: congruent to its parent, and isolated (a message
 * sent on each new communicator with the communicator's index as payload arrives on that
 * communicator only; an Allreduce on each gives the size).  The whole sequence is repeated
 * MTEST_IDUP_REPS times (default 5); a hang is caught by the runner's timeout. */
#include "mtest.h"
#include <pthread.h>

#define MAXN 64
#define NTHREADS 3

/* Checks communicators c[0..n-1], made from parents p[0..n-1]; frees them. Returns errors. */
static int check_and_free(MPI_Comm *c, MPI_Comm *p, int n, const char *what)
{
    int errs = 0, rank, size, result;
    MPI_Request rq[2 * MAXN];
    int in[MAXN], out[MAXN];
    for (int i = 0; i < n; i++) {
        if (c[i] == MPI_COMM_NULL) {
            errs++;
            printf("[%d] %s: communicator %d is MPI_COMM_NULL\n", mtest_rank, what, i);
            return errs;
        }
        MPI_Comm_compare(p[i], c[i], &result);
        if (result != MPI_CONGRUENT) {
            errs++;
            printf("[%d] %s: communicator %d compares %d to its parent\n", mtest_rank, what, i,
                   result);
        }
    }
    MPI_Comm_rank(c[0], &rank);
    MPI_Comm_size(c[0], &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    /* Receives on every communicator first, with a wildcard tag, then the sends in reverse
     * order: a message of communicator i arriving on communicator j shows a shared context. */
    for (int i = 0; i < n; i++) {
        in[i] = -1;
        MPI_Irecv(&in[i], 1, MPI_INT, left, MPI_ANY_TAG, c[i], &rq[i]);
    }
    for (int i = n - 1; i >= 0; i--) {
        out[i] = 1000 * i + rank;
        MPI_Isend(&out[i], 1, MPI_INT, right, 7, c[i], &rq[n + (n - 1 - i)]);
    }
    MPI_Waitall(2 * n, rq, MPI_STATUSES_IGNORE);
    for (int i = 0; i < n; i++) {
        if (in[i] != 1000 * i + left) {
            errs++;
            printf("[%d] %s: communicator %d received %d, expected %d\n", mtest_rank, what, i,
                   in[i], 1000 * i + left);
        }
        int one = 1, sum = 0;
        MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c[i]);
        if (sum != size) {
            errs++;
            printf("[%d] %s: Allreduce on communicator %d gave %d\n", mtest_rank, what, i, sum);
        }
        MPI_Comm_free(&c[i]);
    }
    return errs;
}

static int idup_many(int n)
{
    MPI_Comm c[MAXN], p[MAXN];
    MPI_Request r[MAXN];
    for (int i = 0; i < n; i++) {
        p[i] = MPI_COMM_WORLD;
        int rc = MPI_Comm_idup(MPI_COMM_WORLD, &c[i], &r[i]);
        CHECK_RC(rc, "MPI_Comm_idup");
    }
    int rc = MPI_Waitall(n, r, MPI_STATUSES_IGNORE);
    CHECK_RC(rc, "MPI_Waitall(idups)");
    return check_and_free(c, p, n, "idup of WORLD");
}

static int idup_parents(void)
{
    MPI_Comm a, b, c[30], p[30];
    MPI_Request r[30];
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    MPI_Comm_dup(MPI_COMM_WORLD, &b);
    MPI_Comm parents[3] = {MPI_COMM_WORLD, a, b};
    for (int i = 0; i < 30; i++) {
        p[i] = parents[(i * 7) % 3];
        MPI_Comm_idup(p[i], &c[i], &r[i]);
    }
    MPI_Waitall(30, r, MPI_STATUSES_IGNORE);
    int errs = check_and_free(c, p, 30, "idup of three parents");
    MPI_Comm_free(&a);
    MPI_Comm_free(&b);
    return errs;
}

static int idup_mixed(void)
{
    enum { N = 16 };
    MPI_Comm c[N], p[N];
    MPI_Request r[4 * N];
    int nr = 0, errs = 0, in[N], out[N], sum[N], one = 1;
    int size = mtest_size, rank = mtest_rank;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int i = 0; i < N; i++) {
        p[i] = MPI_COMM_WORLD;
        in[i] = -1;
        out[i] = 100 + i;
        MPI_Irecv(&in[i], 1, MPI_INT, left, i, MPI_COMM_WORLD, &r[nr++]);
        MPI_Comm_idup(MPI_COMM_WORLD, &c[i], &r[nr++]);
        if (i % 2)
            MPI_Ibarrier(MPI_COMM_WORLD, &r[nr++]);
        else
            MPI_Iallreduce(&one, &sum[i], 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r[nr++]);
        MPI_Isend(&out[i], 1, MPI_INT, right, i, MPI_COMM_WORLD, &r[nr++]);
    }
    int rc = MPI_Waitall(nr, r, MPI_STATUSES_IGNORE);
    CHECK_RC(rc, "MPI_Waitall(mixed)");
    for (int i = 0; i < N; i++) {
        if (in[i] != 100 + i) {
            errs++;
            printf("[%d] mixed: message %d carried %d\n", mtest_rank, i, in[i]);
        }
        if (i % 2 == 0 && sum[i] != size) {
            errs++;
            printf("[%d] mixed: Iallreduce %d gave %d\n", mtest_rank, i, sum[i]);
        }
    }
    return errs + check_and_free(c, p, N, "idup mixed with traffic");
}

struct thr {
    MPI_Comm parent;
    int errs;
};

static void *thread_idups(void *arg)
{
    struct thr *t = arg;
    enum { N = 12 };
    MPI_Comm c[N], p[N];
    MPI_Request r[N];
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < N; i++) {
            p[i] = t->parent;
            MPI_Comm_idup(t->parent, &c[i], &r[i]);
        }
        if (MPI_Waitall(N, r, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
            t->errs++;
        t->errs += check_and_free(c, p, N, "threaded idup");
    }
    return NULL;
}

static int idup_threads(void)
{
    struct thr t[NTHREADS];
    pthread_t th[NTHREADS];
    for (int i = 0; i < NTHREADS; i++) {
        MPI_Comm_dup(MPI_COMM_WORLD, &t[i].parent);
        t[i].errs = 0;
    }
    for (int i = 0; i < NTHREADS; i++)
        pthread_create(&th[i], NULL, thread_idups, &t[i]);
    int errs = 0;
    for (int i = 0; i < NTHREADS; i++) {
        pthread_join(th[i], NULL);
        errs += t[i].errs;
        MPI_Comm_free(&t[i].parent);
    }
    return errs;
}

int main(int argc, char **argv)
{
    int provided;
    MTest_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    const char *e = getenv("MTEST_IDUP_REPS");
    int reps = e ? atoi(e) : 5;
    for (int rep = 0; rep < reps; rep++) {
        mtest_errors += idup_many(10);
        mtest_errors += idup_many(32);
        mtest_errors += idup_many(MAXN);
        mtest_errors += idup_parents();
        mtest_errors += idup_mixed();
        if (provided == MPI_THREAD_MULTIPLE)
            mtest_errors += idup_threads();
    }
    return MTest_Finalize(0);
}
