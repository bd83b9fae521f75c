/* hympi demo: a real MPI job on several ranks and threads.
 *
 * 1. Ping-pong between rank pairs (0<->1, 2<->3, ...): one-way latency and bandwidth over
 *    message sizes, next to single-core memcpy, the ceiling of any copy on this machine.
 * 2. Threads: every rank runs T threads under MPI_THREAD_MULTIPLE; thread t of each rank
 *    exchanges checksummed messages with thread t of the next and previous rank (tag = t),
 *    and the job reports the aggregate message rate and that every checksum matched.
 *
 * Build and run: hympicc -O2 -pthread demo.c -o demo && hympiexec -n 4 ./demo [threads]
 */
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

static double memcpy_gbps(size_t n) {
    char *a = malloc(n), *b = malloc(n);
    memset(a, 1, n);
    memset(b, 2, n);
    int reps = (int)(2e9 / n) + 1;
    double t = MPI_Wtime();
    for (int i = 0; i < reps; i++) {
        memcpy(b, a, n);
        __asm__ __volatile__("" : : "r"(b) : "memory"); /* keep the copy */
    }
    t = MPI_Wtime() - t;
    free(a);
    free(b);
    return (double)n * reps / t / 1e9;
}

static void pingpong(void) {
    static const size_t sizes[] = {0, 8, 1024, 16384, 65536, 1 << 20, 4 << 20};
    int peer = rank ^ 1;
    int active = peer < size;
    char *buf = malloc(4 << 20);
    memset(buf, 0, 4 << 20);
    if (rank == 0) {
        printf("== ping-pong between rank pairs (%d pair%s) ==\n", size / 2, size / 2 == 1 ? "" : "s");
        printf("%10s %14s %14s %16s\n", "bytes", "latency (us)", "bandwidth GB/s", "memcpy GB/s");
    }
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t n = sizes[k];
        int iters = n <= 65536 ? 20000 : 400;
        double t = 0;
        if (active) {
            for (int i = -iters / 10; i < iters; i++) {
                if (i == 0) t = MPI_Wtime();
                if (rank < peer) {
                    MPI_Send(buf, (int)n, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
                    MPI_Recv(buf, (int)n, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                } else {
                    MPI_Recv(buf, (int)n, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    MPI_Send(buf, (int)n, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
                }
            }
            t = (MPI_Wtime() - t) / iters / 2;
        }
        if (rank == 0) {
            double mc = n >= 1024 ? memcpy_gbps(n) : 0;
            if (n >= 1024)
                printf("%10zu %14.3f %14.2f %16.2f\n", n, t * 1e6, n / t / 1e9, mc);
            else
                printf("%10zu %14.3f %14s %16s\n", n, t * 1e6, "-", "-");
            fflush(stdout);
        }
    }
    free(buf);
}

struct thread_arg {
    int t, nthreads, msgs;
    long bad;
};

static uint64_t checksum(const uint64_t *v, int n) {
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < n; i++) h = (h ^ v[i]) * 1099511628211ull;
    return h;
}

static void *exchange(void *p) {
    struct thread_arg *a = p;
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    enum { N = 16 };
    uint64_t out[N + 1], in[N + 1];
    for (int m = 0; m < a->msgs; m++) {
        for (int i = 0; i < N; i++) out[i] = ((uint64_t)rank << 48) ^ ((uint64_t)a->t << 32) ^ (uint64_t)(m * 31 + i);
        out[N] = checksum(out, N);
        MPI_Request r[2];
        MPI_Irecv(in, N + 1, MPI_UINT64_T, prev, a->t, MPI_COMM_WORLD, &r[0]);
        MPI_Isend(out, N + 1, MPI_UINT64_T, next, a->t, MPI_COMM_WORLD, &r[1]);
        MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        uint64_t expect0 = ((uint64_t)prev << 48) ^ ((uint64_t)a->t << 32) ^ (uint64_t)(m * 31);
        if (in[N] != checksum(in, N) || in[0] != expect0) a->bad++;
    }
    return NULL;
}

static void threads(int nthreads) {
    int msgs = 20000;
    struct thread_arg args[64];
    pthread_t th[64];
    MPI_Sendrecv(NULL, 0, MPI_BYTE, (rank + 1) % size, 99, NULL, 0, MPI_BYTE, (rank + size - 1) % size, 99,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    double t = MPI_Wtime();
    for (int i = 0; i < nthreads; i++) {
        args[i] = (struct thread_arg){i, nthreads, msgs, 0};
        pthread_create(&th[i], NULL, exchange, &args[i]);
    }
    long bad = 0;
    for (int i = 0; i < nthreads; i++) {
        pthread_join(th[i], NULL);
        bad += args[i].bad;
    }
    t = MPI_Wtime() - t;
    /* Gather per-rank results at rank 0 with point-to-point messages. */
    double rate = msgs * nthreads / t;
    if (rank == 0) {
        double total = rate;
        long totbad = bad;
        for (int r = 1; r < size; r++) {
            double rr;
            long rb;
            MPI_Recv(&rr, 1, MPI_DOUBLE, r, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Recv(&rb, 1, MPI_LONG, r, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            total += rr;
            totbad += rb;
        }
        printf("\n== %d ranks x %d threads, MPI_THREAD_MULTIPLE ring exchange (136-byte messages) ==\n", size, nthreads);
        printf("messages sent: %ld, checksum mismatches: %ld, aggregate rate: %.2f M msg/s\n",
               (long)msgs * nthreads * size, totbad, total / 1e6);
    } else {
        MPI_Send(&rate, 1, MPI_DOUBLE, 0, 7, MPI_COMM_WORLD);
        MPI_Send(&bad, 1, MPI_LONG, 0, 8, MPI_COMM_WORLD);
    }
}

int main(int argc, char **argv) {
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int nthreads = argc > 1 ? atoi(argv[1]) : 2;
    if (nthreads < 1 || nthreads > 64) nthreads = 2;
    if (rank == 0) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(lib, &len);
        printf("%s\n%d ranks, thread level %s\n\n", lib, size,
               provided == MPI_THREAD_MULTIPLE ? "MPI_THREAD_MULTIPLE" : "lower than requested");
    }
    if (size >= 2) pingpong();
    threads(nthreads);
    MPI_Finalize();
    return 0;
}
