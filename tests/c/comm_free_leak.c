/* comm_free_leak: communicators are really freed.
 *
 * 100 warm-up MPI_Comm_dup/MPI_Comm_free cycles (and 20 split/free) and one message ring,
 * then VmRSS (from /proc/self/status) is
 * read, then 10000 dup/free cycles of WORLD (every 1000th dup is used for a message, so
 * the communicator is not left unused) and 2000 MPI_Comm_split (parity)/MPI_Comm_free
 * cycles, then VmRSS again: the growth must stay under 2 MiB on every process (a leak of a
 * few hundred bytes per communicator would show).  Rank 0 prints the numbers on a line
 * "MTEST_INFO: ...".  A fresh dup after the cycles still works (membership ring).
 * MTEST_LEAK_DUPS / MTEST_LEAK_SPLITS override the cycle counts.
 *
 * Time budget: an MPI that busy-polls takes milliseconds per collective call when there
 * are more processes than cores (MPICH 4.0 at 3 ranks on 2 cores: ~11 ms per dup), so
 * each phase stops early, at a multiple of 10 cycles, once it has run for
 * MTEST_LEAK_BUDGET seconds (default 4, a third of it for the splits; rank 0 decides and tells the others by messages
 * so that all make the same collective calls).  The INFO line gives the cycles done. */
#include "mtest.h"
#include "mtest_comm.h"

static long vmrss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "VmRSS:", 6) == 0) {
            kib = atol(line + 6);
            break;
        }
    fclose(f);
    return kib;
}

/* Every 10 cycles: rank 0 says whether to go on (elapsed < budget), by messages. */
static int go_on(long i, double t0, double budget)
{
    if (i % 10 != 0 || i == 0)
        return 1;
    int go = 1;
    if (mtest_rank == 0) {
        go = MPI_Wtime() - t0 < budget;
        for (int r = 1; r < mtest_size; r++)
            MPI_Send(&go, 1, MPI_INT, r, 4, MPI_COMM_WORLD);
    } else {
        MPI_Recv(&go, 1, MPI_INT, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    return go;
}

static long env_or(const char *name, long dflt)
{
    const char *s = getenv(name);
    return s && *s ? atol(s) : dflt;
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    int size = mtest_size, rank = mtest_rank, rc;
    long ndup = env_or("MTEST_LEAK_DUPS", 10000), nsplit = env_or("MTEST_LEAK_SPLITS", 2000);
    double budget = (double)env_or("MTEST_LEAK_BUDGET", 4);
    MPI_Comm c;

    for (int i = 0; i < 100; i++) {
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        MPI_Comm_free(&c);
        if (i % 5 == 0) {
            MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &c);
            MPI_Comm_free(&c);
        }
    }
    /* The same ring on WORLD once: a first message between two processes may set up
     * transport state for the pair (a network connection and its buffers), which is not a
     * per-communicator cost. */
    {
        int out = rank, in = -1, right = (rank + 1) % size, left = (rank + size - 1) % size;
        MPI_Sendrecv(&out, 1, MPI_INT, right, 3, &in, 1, MPI_INT, left, 3, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        CHECK(in == left, "warm-up ring got %d, expected %d", in, left);
    }
    long before = vmrss_kib();
    double t0 = MPI_Wtime();
    int bad = 0;
    long i;
    for (i = 0; i < ndup && go_on(i, t0, budget); i++) {
        c = MPI_COMM_NULL;
        rc = MPI_Comm_dup(MPI_COMM_WORLD, &c);
        if (rc != MPI_SUCCESS || c == MPI_COMM_NULL) {
            bad++;
            continue;
        }
        if (i % 1000 == 999) {
            int out = rank, in = -1, right = (rank + 1) % size, left = (rank + size - 1) % size;
            MPI_Sendrecv(&out, 1, MPI_INT, right, 3, &in, 1, MPI_INT, left, 3, c, MPI_STATUS_IGNORE);
            CHECK(in == left, "dup %ld: ring got %d, expected %d", i, in, left);
        }
        rc = MPI_Comm_free(&c);
        if (rc != MPI_SUCCESS || c != MPI_COMM_NULL)
            bad++;
    }
    CHECK(bad == 0, "%d dup/free cycles failed", bad);
    ndup = i;
    double t1 = MPI_Wtime();
    bad = 0;
    for (i = 0; i < nsplit && go_on(i, t1, budget / 3); i++) {
        c = MPI_COMM_NULL;
        rc = MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &c);
        if (rc != MPI_SUCCESS || c == MPI_COMM_NULL) {
            bad++;
            continue;
        }
        rc = MPI_Comm_free(&c);
        if (rc != MPI_SUCCESS || c != MPI_COMM_NULL)
            bad++;
    }
    CHECK(bad == 0, "%d split/free cycles failed", bad);
    nsplit = i;
    double t2 = MPI_Wtime();
    long after = vmrss_kib();

    if (before >= 0 && after >= 0) {
        CHECK(after - before <= 2048, "VmRSS grew by %ld KiB (%ld -> %ld) over %ld dups and %ld splits",
              after - before, before, after, ndup, nsplit);
    } else if (rank == 0) {
        printf("MTEST_INFO: no VmRSS in /proc/self/status: memory not checked\n");
    }
    if (rank == 0)
        printf("MTEST_INFO: rank 0 VmRSS %ld KiB -> %ld KiB (%+ld KiB) after %ld dup/free (%.2f us each) "
               "and %ld split/free (%.2f us each)\n",
               before, after, after - before, ndup, ndup ? (t1 - t0) * 1e6 / ndup : 0.0, nsplit,
               nsplit ? (t2 - t1) * 1e6 / nsplit : 0.0);

    /* A fresh dup still works. */
    int all[64];
    for (int i = 0; i < size && i < 64; i++)
        all[i] = i;
    c = MPI_COMM_NULL;
    rc = MPI_Comm_dup(MPI_COMM_WORLD, &c);
    CHECK_RC(rc, "MPI_Comm_dup after the cycles");
    MTest_Check_members(c, all, size, "dup after the cycles");
    MTest_Free_comm(&c, "MPI_Comm_free");
    return MTest_Finalize(0);
}
