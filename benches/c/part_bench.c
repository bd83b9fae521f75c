/* part_bench.c: partitioned send vs one MPI_Send of the same data (2 ranks, OpenMP).
 *
 * Rank 0 has T threads (OMP_NUM_THREADS, default 4) that each "compute" a slice of the
 * message (a wait of i * STAGGER microseconds for thread i, so the slices become ready
 * one after another) and then:
 *   part: mark their partition ready with MPI_Pready (MPI_Psend_init, T partitions);
 *   send: after all threads finished, the main thread sends everything with one MPI_Send.
 * Rank 1 receives (MPI_Precv_init with T partitions / MPI_Recv) and records when the data is
 * complete.  Reported: the median over ITERS iterations of the time from the moment the last
 * slice was ready at rank 0 to the completion at rank 1 (CLOCK_MONOTONIC, one clock for both
 * processes on one node).  Partitioned transfer moves the early slices while the late ones
 * are still computed, so only the last slice remains at the end.
 *
 * Build: mpicc -O2 -fopenmp part_bench.c -o part_bench; run with 2 ranks. */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { ITERS = 100, STAGGER_US = 500 };

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* "Computes" for us microseconds by sleeping, so that the waiting threads leave the cores to
 * the transfer (the development machine has 2 cores for 2 processes and T threads). */
static void compute_us(double us)
{
    if (us <= 0)
        return;
    struct timespec d = {(time_t)(us / 1e6), (long)((us - (time_t)(us / 1e6) * 1e6) * 1e3)};
    nanosleep(&d, NULL);
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, n, sizeof(double), cmp);
    return v[n / 2];
}

int main(int argc, char **argv)
{
    int provided, rank, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2 || provided < MPI_THREAD_MULTIPLE) {
        if (rank == 0)
            printf("part_bench needs 2 ranks and MPI_THREAD_MULTIPLE\n");
        MPI_Finalize();
        return 1;
    }
    int nt = omp_get_max_threads();
    const size_t sizes[] = {64 << 10, 1 << 20, 8 << 20};
    if (rank == 0)
        printf("# %d threads, slices ready %d us apart, %d iterations, median us from the last "
               "slice ready to receive complete (and minimum)\n#  bytes     part     send part-min send-min\n",
               nt, STAGGER_US, ITERS);
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
        size_t bytes = sizes[si] / nt * nt;
        size_t per = bytes / nt;
        char *buf = malloc(bytes);
        memset(buf, 1, bytes);
        double ready[ITERS], done[ITERS], res[4];
        for (int mode = 0; mode < 2; mode++) {
            MPI_Request req = MPI_REQUEST_NULL;
            if (mode == 0) {
                if (rank == 0)
                    MPI_Psend_init(buf, nt, (int)per, MPI_BYTE, 1, 0, MPI_COMM_WORLD,
                                   MPI_INFO_NULL, &req);
                else
                    MPI_Precv_init(buf, nt, (int)per, MPI_BYTE, 0, 0, MPI_COMM_WORLD,
                                   MPI_INFO_NULL, &req);
            }
            for (int it = -3; it < ITERS; it++) {
                MPI_Barrier(MPI_COMM_WORLD);
                double t_ready = 0, t_done = 0;
                if (rank == 0) {
                    if (mode == 0)
                        MPI_Start(&req);
#pragma omp parallel num_threads(nt) reduction(max : t_ready)
                    {
                        int t = omp_get_thread_num();
                        compute_us((double)t * STAGGER_US);
                        memset(buf + t * per, it & 0xff, per);
                        t_ready = now(); /* this slice is ready */
                        if (mode == 0)
                            MPI_Pready(t, req);
                    }
                    if (mode == 0)
                        MPI_Wait(&req, MPI_STATUS_IGNORE);
                    else
                        MPI_Send(buf, (int)bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
                } else {
                    if (mode == 0) {
                        MPI_Start(&req);
                        MPI_Wait(&req, MPI_STATUS_IGNORE);
                    } else {
                        MPI_Recv(buf, (int)bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD,
                                 MPI_STATUS_IGNORE);
                    }
                    t_done = now();
                    if ((unsigned char)buf[bytes - 1] != (unsigned char)(it & 0xff))
                        printf("bad data\n");
                }
                if (it >= 0) {
                    ready[it] = t_ready;
                    done[it] = t_done;
                }
            }
            if (mode == 0)
                MPI_Request_free(&req);
            if (rank == 0) {
                MPI_Send(ready, ITERS, MPI_DOUBLE, 1, 1, MPI_COMM_WORLD);
            } else {
                double r0[ITERS], lat[ITERS];
                MPI_Recv(r0, ITERS, MPI_DOUBLE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                for (int i = 0; i < ITERS; i++)
                    lat[i] = (done[i] - r0[i]) * 1e6;
                res[mode] = median(lat, ITERS); /* sorts lat */
                res[2 + mode] = lat[0];
            }
        }
        if (rank == 1)
            MPI_Send(res, 4, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD);
        else {
            MPI_Recv(res, 4, MPI_DOUBLE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            printf("%8zu %8.1f %8.1f %8.1f %8.1f\n", bytes, res[0], res[1], res[2], res[3]);
        }
        free(buf);
    }
    MPI_Finalize();
    return 0;
}
