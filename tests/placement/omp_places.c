/* Where a rank of hympiexec runs, as the rank itself sees it (tests/placement/run).
 *
 * Each rank prints one line:
 *   rank R cpus LIST threads T places P omp_env NUM|- after LIST2
 * LIST: the CPUs of the affinity mask the rank was started with (sched_getaffinity),
 * comma-separated; T: omp_get_max_threads(); P: omp_get_num_places(); NUM: the
 * OMP_NUM_THREADS value, or "-" when unset; LIST2: the main thread's mask after MPI_Init
 * (under a launcher that binds nothing, hympi binds the rank to its domain there).
 * Then every thread of a parallel region checks that it runs on a CPU of that mask and, when
 * there are places, that its place number is one of them; a violation prints
 *   rank R thread-check FAIL ...
 * (nothing is printed otherwise).
 *
 * The mask is read from .preinit_array, before any shared library's initialiser: when
 * OMP_PROC_BIND is set, libgomp's initialiser binds the initial thread to the first place, so
 * sched_getaffinity in main() would see that one place instead of the rank's domain. The
 * main thread's mask in main() must still be a subset of the start mask (checked as well). */
#define _GNU_SOURCE
#include <mpi.h>
#include <omp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The affinity mask at process start (see above); start_ok = 0 when it could not be read. */
static cpu_set_t start_set;
static int start_ok;

static void read_start_mask(void) {
    CPU_ZERO(&start_set);
    start_ok = sched_getaffinity(0, sizeof start_set, &start_set) == 0;
}

__attribute__((section(".preinit_array"), used)) static void (*const preinit_read_mask)(void) =
    read_start_mask;

int main(int argc, char **argv) {
    int provided, rank;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);

    cpu_set_t set = start_set, now;
    CPU_ZERO(&now);
    if (!start_ok || sched_getaffinity(0, sizeof now, &now) != 0) {
        printf("rank %d thread-check FAIL sched_getaffinity failed\n", rank);
        CPU_ZERO(&set);
    } else {
        for (int c = 0; c < CPU_SETSIZE; c++) {
            if (CPU_ISSET(c, &now) && !CPU_ISSET(c, &set))
                printf("rank %d thread-check FAIL main thread may run on CPU %d, outside its "
                       "start mask\n", rank, c);
        }
    }
    char list[8 * CPU_SETSIZE] = "";
    size_t len = 0;
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (CPU_ISSET(c, &set))
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%d", len ? "," : "", c);
    }
    char after[8 * CPU_SETSIZE] = "";
    size_t alen = 0;
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (CPU_ISSET(c, &now))
            alen += (size_t)snprintf(after + alen, sizeof after - alen, "%s%d", alen ? "," : "", c);
    }
    int threads = omp_get_max_threads();
    int places = omp_get_num_places();
    const char *env = getenv("OMP_NUM_THREADS");
    printf("rank %d cpus %s threads %d places %d omp_env %s after %s\n", rank, len ? list : "-",
           threads, places, env ? env : "-", alen ? after : "-");
    fflush(stdout);

#pragma omp parallel
    {
        int tid = omp_get_thread_num();
        int cpu = sched_getcpu();
        if (cpu < 0 || cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &set) ||
            (!getenv("OMP_PLACES") && !CPU_ISSET(cpu, &now))) {
#pragma omp critical
            printf("rank %d thread-check FAIL thread %d runs on CPU %d, outside cpus %s\n", rank,
                   tid, cpu, list);
        }
        if (places > 0) {
            int place = omp_get_place_num();
            if (place < 0 || place >= places) {
#pragma omp critical
                printf("rank %d thread-check FAIL thread %d at place %d of %d\n", rank, tid,
                       place, places);
            }
        }
    }
    fflush(stdout);
    MPI_Finalize();
    return 0;
}
