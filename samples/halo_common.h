/* halo_common.h: the problem shared by halo_legacy.c and halo_thread_comm.c.
 *
 * A 3D 7-point Jacobi stencil on a global grid of NX x NY x NZ points with zero (Dirichlet)
 * values outside the domain:
 *
 *     v(i,j,k) = 0.4 u(i,j,k) + 0.1 (u(i-1) + u(i+1) + u(j-1) + u(j+1) + u(k-1) + u(k+1))
 *
 * summed in exactly that order, with two arrays swapped after each sweep. Every new value
 * depends only on old values, computed by the same expression whatever the decomposition, so
 * the field after ITERS sweeps is bit-for-bit the same on any number of ranks and threads and
 * with either halo version. The checksum gathers the whole field on rank 0 and sums it in global
 * index order, so it too is independent of the decomposition.
 *
 * Decomposition: MPI_Dims_create + MPI_Cart_create (not periodic, no reordering) over the
 * ranks, block distribution of each axis; each local block is stored with one ghost layer,
 * x slowest (index (i * (ny+2) + j) * (nz+2) + k). Inside a rank the interior is cut into one
 * slab of x planes per OpenMP thread.
 *
 * Arguments of both programs: [NX NY NZ ITERS], default 128 96 80 100.
 */
#ifndef HALO_COMMON_H
#define HALO_COMMON_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int global[3]; /* NX, NY, NZ */
    int iters;
    MPI_Comm cart;
    int rank, size, dims[3], coords[3];
    int n[3];        /* interior points of this rank per axis */
    int off[3];      /* global index of this rank's first interior point per axis */
    int lo[3], hi[3]; /* neighbour ranks per axis (MPI_PROC_NULL at the domain's edge) */
    size_t stride_i, stride_j; /* array strides of x and y; z is contiguous */
    double *u, *v;   /* current and next field, (n0+2) x (n1+2) x (n2+2) with ghosts */
} halo_t;

/* Index of local point (i, j, k), ghosts at 0 and n+1. */
#define HALO_IDX(h, i, j, k) ((size_t)(i) * (h)->stride_i + (size_t)(j) * (h)->stride_j + (size_t)(k))

/* Block distribution: part c of p parts of N points has *n points starting at *off. */
static void halo_block(int N, int p, int c, int *n, int *off)
{
    int b = N / p, r = N % p;
    *n = b + (c < r);
    *off = c * b + (c < r ? c : r);
}

/* Deterministic initial value at global point (gi, gj, gk). */
static double halo_init_value(int gi, int gj, int gk)
{
    return (double)((gi * 31 + gj * 17 + gk * 7) % 97) / 97.0;
}

/* Parses the arguments, builds the Cartesian communicator and both arrays (ghosts zero). */
static void halo_setup(halo_t *h, int argc, char **argv)
{
    int periods[3] = {0, 0, 0};
    memset(h, 0, sizeof *h);
    h->global[0] = argc > 1 ? atoi(argv[1]) : 128;
    h->global[1] = argc > 2 ? atoi(argv[2]) : 96;
    h->global[2] = argc > 3 ? atoi(argv[3]) : 80;
    h->iters = argc > 4 ? atoi(argv[4]) : 100;
    MPI_Comm_size(MPI_COMM_WORLD, &h->size);
    MPI_Dims_create(h->size, 3, h->dims);
    MPI_Cart_create(MPI_COMM_WORLD, 3, h->dims, periods, 0, &h->cart);
    MPI_Comm_rank(h->cart, &h->rank);
    MPI_Cart_coords(h->cart, h->rank, 3, h->coords);
    for (int d = 0; d < 3; d++) {
        if (h->global[d] < h->dims[d] || h->iters < 0) {
            if (h->rank == 0)
                fprintf(stderr, "grid %dx%dx%d too small for %dx%dx%d ranks\n", h->global[0],
                        h->global[1], h->global[2], h->dims[0], h->dims[1], h->dims[2]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        halo_block(h->global[d], h->dims[d], h->coords[d], &h->n[d], &h->off[d]);
        MPI_Cart_shift(h->cart, d, 1, &h->lo[d], &h->hi[d]);
    }
    h->stride_j = (size_t)h->n[2] + 2;
    h->stride_i = h->stride_j * ((size_t)h->n[1] + 2);
    size_t total = h->stride_i * ((size_t)h->n[0] + 2);
    h->u = calloc(total, sizeof(double));
    h->v = calloc(total, sizeof(double));
    if (h->u == NULL || h->v == NULL) {
        fprintf(stderr, "rank %d: out of memory\n", h->rank);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int i = 1; i <= h->n[0]; i++)
        for (int j = 1; j <= h->n[1]; j++)
            for (int k = 1; k <= h->n[2]; k++)
                h->u[HALO_IDX(h, i, j, k)] = halo_init_value(
                    h->off[0] + i - 1, h->off[1] + j - 1, h->off[2] + k - 1);
}

/* Planes [*i0, *i1) of the x axis (1-based interior indices) form slab t of nthreads. */
static void halo_slab(const halo_t *h, int t, int nthreads, int *i0, int *i1)
{
    int n, off;
    halo_block(h->n[0], nthreads, t, &n, &off);
    *i0 = 1 + off;
    *i1 = 1 + off + n;
}

/* One Jacobi sweep of planes [i0, i1): reads u (interior and ghosts), writes v's interior. */
static void halo_sweep(const halo_t *h, const double *restrict u, double *restrict v, int i0,
                       int i1)
{
    const size_t si = h->stride_i, sj = h->stride_j;
    for (int i = i0; i < i1; i++)
        for (int j = 1; j <= h->n[1]; j++) {
            const double *c = u + HALO_IDX(h, i, j, 0);
            double *out = v + HALO_IDX(h, i, j, 0);
            for (int k = 1; k <= h->n[2]; k++)
                out[k] = 0.4 * c[k] +
                         0.1 * (((((c[k - si] + c[k + si]) + c[k - sj]) + c[k + sj]) + c[k - 1]) +
                                c[k + 1]);
        }
}

/* Sum of the whole field u, in global index order, on rank 0 of h->cart (0 elsewhere). */
static double halo_checksum(const halo_t *h, const double *u)
{
    int count = h->n[0] * h->n[1] * h->n[2];
    double *mine = malloc(((size_t)count + 1) * sizeof(double)), *all = NULL, sum = 0;
    int *counts = NULL, *displs = NULL;
    size_t m = 0;
    for (int i = 1; i <= h->n[0]; i++)
        for (int j = 1; j <= h->n[1]; j++)
            for (int k = 1; k <= h->n[2]; k++)
                mine[m++] = u[HALO_IDX(h, i, j, k)];
    if (h->rank == 0) {
        counts = malloc(h->size * sizeof(int));
        displs = malloc(h->size * sizeof(int));
    }
    MPI_Gather(&count, 1, MPI_INT, counts, 1, MPI_INT, 0, h->cart);
    if (h->rank == 0) {
        size_t total = 0;
        for (int r = 0; r < h->size; r++) {
            displs[r] = (int)total;
            total += (size_t)counts[r];
        }
        all = malloc(total * sizeof(double));
    }
    MPI_Gatherv(mine, count, MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, 0, h->cart);
    if (h->rank == 0) {
        const size_t gy = (size_t)h->global[1], gz = (size_t)h->global[2];
        double *field = malloc((size_t)h->global[0] * gy * gz * sizeof(double));
        for (int r = 0; r < h->size; r++) {
            int c[3], n[3], off[3];
            MPI_Cart_coords(h->cart, r, 3, c);
            for (int d = 0; d < 3; d++)
                halo_block(h->global[d], h->dims[d], c[d], &n[d], &off[d]);
            const double *src = all + displs[r];
            for (int i = 0; i < n[0]; i++)
                for (int j = 0; j < n[1]; j++)
                    for (int k = 0; k < n[2]; k++)
                        field[((size_t)(off[0] + i) * gy + (size_t)(off[1] + j)) * gz +
                              (size_t)(off[2] + k)] = *src++;
        }
        for (size_t p = 0; p < (size_t)h->global[0] * gy * gz; p++)
            sum += field[p];
        free(field);
        free(all);
        free(counts);
        free(displs);
    }
    free(mine);
    return sum;
}

static int halo_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Prints the run's figures on rank 0: grid, layout, time per iteration, checksum.
 * `stamp` holds ITERS + 1 MPI_Wtime values of this rank: the start, then the end of each
 * iteration. The time per iteration is the slowest rank's total divided by ITERS; the median
 * and best iteration take, for each iteration, the slowest rank's duration (on a machine shared
 * with other work the best iteration is the one least disturbed by it). */
static void halo_report(const halo_t *h, const char *name, int nthreads, const double *stamp,
                        double checksum)
{
    int n = h->iters;
    double *d = malloc(((size_t)n + 1) * sizeof(double));
    double *slowest = malloc(((size_t)n + 1) * sizeof(double));
    double total = stamp[n] - stamp[0], total_max = 0;
    for (int it = 0; it < n; it++)
        d[it] = stamp[it + 1] - stamp[it];
    MPI_Reduce(&total, &total_max, 1, MPI_DOUBLE, MPI_MAX, 0, h->cart);
    MPI_Reduce(d, slowest, n, MPI_DOUBLE, MPI_MAX, 0, h->cart);
    if (h->rank == 0) {
        printf("%s: grid %dx%dx%d, %d ranks (%dx%dx%d) x %d threads, %d iterations\n", name,
               h->global[0], h->global[1], h->global[2], h->size, h->dims[0], h->dims[1],
               h->dims[2], nthreads, n);
        if (n > 0) {
            qsort(slowest, (size_t)n, sizeof(double), halo_cmp_double);
            printf("time per iteration: %.3f us (median %.3f us, best %.3f us)\n",
                   total_max / n * 1e6, slowest[(n - 1) / 2] * 1e6, slowest[0] * 1e6);
        }
        printf("checksum %.17g\n", checksum);
    }
    free(d);
    free(slowest);
}

static void halo_free(halo_t *h)
{
    free(h->u);
    free(h->v);
    MPI_Comm_free(&h->cart);
}

#endif /* HALO_COMMON_H */
