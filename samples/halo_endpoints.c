/* halo_endpoints: 3D 7-point stencil after migration to per-thread endpoints (hympi).
 *
 * The same problem and the same per-thread exchange as halo_thread_comm.c, but instead of one
 * duplicate communicator per thread, MPIX_Comm_create_endpoints (hympi_mpix.h) makes every
 * OpenMP thread a rank of its own in one communicator: thread t of Cartesian rank q is
 * endpoint rank q * T + t (T threads on every rank). Each endpoint has its own context id,
 * matching queues and VCI inside hympi, so the threads' messages never meet in a shared queue
 * or lock on the fast paths, and no hints are needed to say so.
 *
 *  - Thread t owns the x planes [i0, i1) of the block (its slab) and exchanges the y and z
 *    faces of its slab and part t of the two x faces, with endpoint t of each neighbour.
 *  - Tags are direction + 6 * (iteration parity), as in halo_thread_comm.c.
 *
 * Build and run: hympicc -O2 -fopenmp halo_endpoints.c -o halo_endpoints
 *                OMP_NUM_THREADS=2 hympiexec -n 2 ./halo_endpoints [NX NY NZ ITERS]
 */
#include "halo_common.h"
#include <hympi.h>

#ifndef HYMPI
#error "halo_endpoints needs hympi (MPIX_Comm_create_endpoints)"
#endif

/* One face part: the box [b0, e0) x [b1, e1) x [b2, e2) of local indices. */
typedef struct {
    int b[3], e[3];
} box_t;

static size_t box_size(const box_t *x)
{
    size_t s = 1;
    for (int d = 0; d < 3; d++)
        s *= (size_t)(x->e[d] - x->b[d]);
    return s;
}

static void pack(const halo_t *h, const double *u, const box_t *x, double *buf)
{
    for (int i = x->b[0]; i < x->e[0]; i++)
        for (int j = x->b[1]; j < x->e[1]; j++)
            for (int k = x->b[2]; k < x->e[2]; k++)
                *buf++ = u[HALO_IDX(h, i, j, k)];
}

static void unpack(const halo_t *h, double *u, const box_t *x, const double *buf)
{
    for (int i = x->b[0]; i < x->e[0]; i++)
        for (int j = x->b[1]; j < x->e[1]; j++)
            for (int k = x->b[2]; k < x->e[2]; k++)
                u[HALO_IDX(h, i, j, k)] = *buf++;
}

/* A thread's part of the halo: for each of the 6 directions (2d: low side of axis d, 2d+1: high
 * side) the interior box it sends and the ghost box it receives, with their buffers. */
typedef struct {
    box_t send[6], recv[6];
    double *sbuf[6], *rbuf[6];
    int count[6];
} part_t;

static void part_init(const halo_t *h, int t, int nthreads, part_t *p)
{
    int i0, i1, n1, o1;
    halo_slab(h, t, nthreads, &i0, &i1);
    halo_block(h->n[1], nthreads, t, &n1, &o1); /* rows of y: part t of the x faces */
    for (int s = 0; s < 6; s++) {
        int d = s / 2, high = s % 2;
        box_t x;
        /* The span of the part on every axis: slab on x, rows [1+o1, 1+o1+n1) on y for the x
         * faces, the whole interior otherwise. */
        x.b[0] = i0, x.e[0] = i1;
        x.b[1] = 1, x.e[1] = h->n[1] + 1;
        x.b[2] = 1, x.e[2] = h->n[2] + 1;
        if (d == 0) {
            x.b[1] = 1 + o1, x.e[1] = 1 + o1 + n1;
        }
        /* Axis d is one plane thick: the first/last interior plane, or the ghost beyond it. */
        p->send[s] = x;
        p->recv[s] = x;
        p->send[s].b[d] = high ? h->n[d] : 1;
        p->recv[s].b[d] = high ? h->n[d] + 1 : 0;
        p->send[s].e[d] = p->send[s].b[d] + 1;
        p->recv[s].e[d] = p->recv[s].b[d] + 1;
        p->count[s] = (int)box_size(&p->send[s]);
        p->sbuf[s] = malloc(((size_t)p->count[s] + 1) * sizeof(double));
        p->rbuf[s] = malloc(((size_t)p->count[s] + 1) * sizeof(double));
    }
}

static void part_free(part_t *p)
{
    for (int s = 0; s < 6; s++) {
        free(p->sbuf[s]);
        free(p->rbuf[s]);
    }
}

/* Endpoint rank of thread t of the neighbour in direction s (2d: low side of axis d, 2d+1:
 * high side), T threads per rank. */
static int neighbour(const halo_t *h, int s, int t, int T)
{
    int q = s % 2 ? h->hi[s / 2] : h->lo[s / 2];
    return q == MPI_PROC_NULL ? MPI_PROC_NULL : q * T + t;
}

/* Thread t's exchange on its endpoint ep at iteration it. A message travelling in direction s
 * has tag s + 6 * (it % 2); the one arriving from direction s travelled in s ^ 1. */
static void exchange(const halo_t *h, part_t *p, MPI_Comm ep, int t, int T, double *u, int it)
{
    MPI_Request req[12];
    int parity = 6 * (it % 2);
    for (int s = 0; s < 6; s++)
        MPI_Irecv(p->rbuf[s], p->count[s], MPI_DOUBLE, neighbour(h, s, t, T), (s ^ 1) + parity, ep,
                  &req[s]);
    for (int s = 0; s < 6; s++) {
        int nb = neighbour(h, s, t, T);
        if (nb != MPI_PROC_NULL)
            pack(h, u, &p->send[s], p->sbuf[s]);
        MPI_Isend(p->sbuf[s], p->count[s], MPI_DOUBLE, nb, s + parity, ep, &req[6 + s]);
    }
    MPI_Waitall(12, req, MPI_STATUSES_IGNORE);
    for (int s = 0; s < 6; s++)
        if (neighbour(h, s, t, T) != MPI_PROC_NULL)
            unpack(h, u, &p->recv[s], p->rbuf[s]);
}

int main(int argc, char **argv)
{
    int provided, nthreads;
    halo_t h;
    double *stamp;
    MPI_Comm *eps;

    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE) {
        fprintf(stderr, "MPI_THREAD_MULTIPLE not provided\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    halo_setup(&h, argc, argv);
    stamp = malloc(((size_t)h.iters + 1) * sizeof(double));
    nthreads = omp_get_max_threads();
    {
        /* Every rank must run the same number of threads: endpoint ranks are q * T + t. */
        int lo = nthreads, hi = nthreads;
        MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_INT, MPI_MIN, h.cart);
        MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_INT, MPI_MAX, h.cart);
        if (lo != hi) {
            if (h.rank == 0)
                fprintf(stderr, "halo_endpoints: set the same OMP_NUM_THREADS on every rank\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    eps = malloc((size_t)nthreads * sizeof(MPI_Comm));
    /* Collective over the Cartesian communicator: nthreads endpoints on every rank. */
    MPIX_Comm_create_endpoints(h.cart, nthreads, MPI_INFO_NULL, eps);

#pragma omp parallel num_threads(nthreads)
    {
        int t = omp_get_thread_num(), i0, i1;
        double *u = h.u, *v = h.v, *tmp;
        part_t p;
        halo_slab(&h, t, nthreads, &i0, &i1);
        part_init(&h, t, nthreads, &p);
#pragma omp barrier
#pragma omp master
        {
            MPI_Barrier(h.cart);
            stamp[0] = MPI_Wtime();
        }
#pragma omp barrier
        for (int it = 0; it < h.iters; it++) {
            exchange(&h, &p, eps[t], t, nthreads, u, it); /* every thread, its own endpoint */
#pragma omp barrier
            halo_sweep(&h, u, v, i0, i1);
#pragma omp barrier
            tmp = u;
            u = v;
            v = tmp;
#pragma omp master
            stamp[it + 1] = MPI_Wtime();
        }
#pragma omp master
        {
            h.u = u;
            h.v = v;
        }
        part_free(&p);
        MPI_Comm_free(&eps[t]);
    }
    free(eps);

    double sum = halo_checksum(&h, h.u);
    halo_report(&h, "halo_endpoints", nthreads, stamp, sum);
    free(stamp);
    halo_free(&h);
    MPI_Finalize();
    return 0;
}
