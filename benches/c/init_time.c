/*
 * Startup and shutdown cost: how long MPI_Init and MPI_Finalize take on every rank
 * (standalone; run by benches/init-time on 1, 2, 4 and 8 ranks).
 *
 * Each rank reads CLOCK_MONOTONIC just before MPI_Init and just after it returns
 * (MPI_Wtime cannot be read before MPI_Init; CLOCK_MONOTONIC is one clock for all the
 * processes of a machine, so the stamps of different ranks compare).  No barrier: one
 * MPI_Reduce (MPI_MAX, on negated values for minima) brings to rank 0
 *   - Init max / min: the slowest and the fastest rank's MPI_Init duration;
 *   - Init span: from the first rank's entry into MPI_Init to the last rank's return;
 *   - Launch->Init: from the launch (-t, the CLOCK_MONOTONIC time at which the caller
 *     started the launcher) to the last rank's entry into MPI_Init: the launcher's and
 *     the loader's share, before MPI_Init ("-" without -t).
 * Then rank 0 broadcasts the name of a small shared file (created in /dev/shm, else
 * /tmp), every rank maps it, times its own MPI_Finalize and stores the duration in its
 * slot once MPI_Finalize has returned (no MPI is left to send it with); rank 0 waits for
 * every slot (up to 10 s, polling every 100 us) and reports the max.  The broadcast also
 * lines the ranks up before MPI_Finalize, so that a rank does not count in its
 * MPI_Finalize the wait for rank 0 to finish the reduction.
 * Options: -t NS (launch time, CLOCK_MONOTONIC nanoseconds).  Output (OSU-style, one row,
 * printed by rank 0 after MPI_Finalize; the size column is the number of ranks, times in
 * milliseconds, "-" where unknown):
 *     # Size   Init max (ms)   Init min (ms)   Init span (ms)   Launch->Init (ms)   Finalize max (ms)
 */
#include "bench_mpi.h"

#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <time.h>

#define FINALIZE_WAIT_NS 10000000000LL /* rank 0 waits this long for the other slots */

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Maps the finalize file (nranks slots of 64 bits); NULL on failure. */
static uint64_t *map_slots(int fd, int nranks)
{
    void *p = mmap(NULL, sizeof(uint64_t) * (size_t)nranks, PROT_READ | PROT_WRITE,
                   MAP_SHARED, fd, 0);
    return p == MAP_FAILED ? NULL : p;
}

int main(int argc, char **argv)
{
    int rank, nranks, c, r;
    int64_t t0, t1, t2, t3, launch = -1;
    int64_t mine[5], all[5];
    char name[256] = "";
    uint64_t *slots = NULL;
    double fin_ms = -1;

    t0 = now_ns();
    MPI_Init(&argc, &argv);
    t1 = now_ns();

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    while ((c = getopt(argc, argv, "t:h")) != -1) {
        if (c == 't') launch = strtoll(optarg, NULL, 10);
        else {
            if (rank == 0) fprintf(stderr, "usage: %s [-t launch_ns]\n", argv[0]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }

    mine[0] = t1 - t0;                       /* max: slowest MPI_Init */
    mine[1] = -(t1 - t0);                    /* max of negated: fastest MPI_Init */
    mine[2] = t1;                            /* max: last return from MPI_Init */
    mine[3] = -t0;                           /* max of negated: first entry into MPI_Init */
    mine[4] = launch >= 0 ? t0 - launch : -1; /* max: last entry, from the launch */
    MPI_Reduce(mine, all, 5, MPI_INT64_T, MPI_MAX, 0, MPI_COMM_WORLD);

    if (rank == 0) {
        const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
        int fd;
        snprintf(name, sizeof name, "%s/hympi-init-time-XXXXXX", dir);
        fd = mkstemp(name);
        if (fd < 0 || ftruncate(fd, (off_t)(sizeof(uint64_t) * (size_t)nranks)) != 0 ||
            !(slots = map_slots(fd, nranks))) {
            fprintf(stderr, "init_time: no finalize file in %s, Finalize not timed\n", dir);
            if (fd >= 0) unlink(name);
            name[0] = '\0';
        }
        if (fd >= 0) close(fd);
    }
    MPI_Bcast(name, (int)sizeof name, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank != 0 && name[0]) {
        int fd = open(name, O_RDWR);
        if (fd >= 0) {
            slots = map_slots(fd, nranks);
            close(fd);
        }
    }

    t2 = now_ns();
    MPI_Finalize();
    t3 = now_ns();

    if (slots) __atomic_store_n(&slots[rank], (uint64_t)(t3 - t2) + 1, __ATOMIC_RELEASE);
    if (rank != 0) {
        if (slots) munmap(slots, sizeof(uint64_t) * (size_t)nranks);
        return 0;
    }

    if (slots) {
        int64_t deadline = now_ns() + FINALIZE_WAIT_NS;
        uint64_t mx = 0;
        for (r = 0; r < nranks;) {
            uint64_t v = __atomic_load_n(&slots[r], __ATOMIC_ACQUIRE);
            if (v) {
                if (v - 1 > mx) mx = v - 1;
                r++;
                continue;
            }
            if (now_ns() > deadline) break;
            struct timespec pause = {0, 100000};
            nanosleep(&pause, NULL);
        }
        if (r == nranks) fin_ms = (double)mx / 1e6;
        else fprintf(stderr, "init_time: %d of %d ranks did not report their MPI_Finalize time\n",
                     nranks - r, nranks);
        munmap(slots, sizeof(uint64_t) * (size_t)nranks);
        unlink(name);
    }

    {
        char launch_s[32] = "-", fin_s[32] = "-";
        if (all[4] >= 0) snprintf(launch_s, sizeof launch_s, "%.3f", (double)all[4] / 1e6);
        if (fin_ms >= 0) snprintf(fin_s, sizeof fin_s, "%.3f", fin_ms);
        printf("# hympi-bench MPI_Init / MPI_Finalize time (CLOCK_MONOTONIC, %d ranks)\n", nranks);
        printf("# Size%20s%20s%20s%20s%20s\n", "Init max (ms)", "Init min (ms)",
               "Init span (ms)", "Launch->Init (ms)", "Finalize max (ms)");
        printf("%-6d%20.3f%20.3f%20.3f%20s%20s\n", nranks, (double)all[0] / 1e6,
               (double)-all[1] / 1e6, (double)(all[2] + all[3]) / 1e6, launch_s, fin_s);
        fflush(stdout);
    }
    return 0;
}
