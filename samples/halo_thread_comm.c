/* halo_thread_comm: 3D 7-point stencil after migration to per-thread communicators.
 *
 * The same problem as halo_legacy.c (halo_common.h), but under MPI_THREAD_MULTIPLE every
 * OpenMP thread exchanges its own part of the halo, on its own communicator, at the same time
 * as the other threads; no thread waits for a master to communicate for it.
 *
 *  - MPIX_Omp_thread_comm (hympi.h) gives thread t of every rank the t-th duplicate of the
 *    Cartesian communicator, so thread t only ever talks to thread t of the neighbours.
 *  - The duplicates carry hints (MPIX_Info_region_hints): no MPI_ANY_SOURCE, no MPI_ANY_TAG,
 *    exact receive lengths, overtaking allowed, one thread per communicator. They tell an MPI
 *    library it may give each communicator its own lock and queues (hympi's VCI runtime, to
 *    come) and skip wildcard matching.
 *  - Thread t owns the x planes [i0, i1) of the block (its slab). It exchanges the y and z
 *    faces of its slab, and part t of the two x faces (split by rows of y, the same split on
 *    both sides of a boundary because x neighbours have the same y extent).
 *  - Faces are packed into per-thread buffers. Tags are direction + 6 * (iteration parity):
 *    with overtaking allowed, messages of the same source and tag may arrive in any order, and
 *    a thread cannot be two iterations ahead of its neighbour, so parity keeps them apart.
 *
 * Build and run: hympicc -O2 -fopenmp halo_thread_comm.c -o halo_thread_comm
 *                OMP_NUM_THREADS=2 hympiexec -n 2 ./halo_thread_comm [NX NY NZ ITERS]
 */
#include "halo_common.h"
#include <hympi.h>

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

/* Neighbour rank in direction s (2d: low side of axis d, 2d+1: high side). */
static int neighbour(const halo_t *h, int s)
{
    return s % 2 ? h->hi[s / 2] : h->lo[s / 2];
}

/* This thread's exchange on its communicator tc at iteration it. A message travelling in
 * direction s has tag s + 6 * (it % 2); the one arriving from direction s travelled in s ^ 1. */
static void exchange(const halo_t *h, part_t *p, MPI_Comm tc, double *u, int it)
{
    MPI_Request req[12];
    int parity = 6 * (it % 2);
    for (int s = 0; s < 6; s++)
        MPI_Irecv(p->rbuf[s], p->count[s], MPI_DOUBLE, neighbour(h, s), (s ^ 1) + parity, tc,
                  &req[s]);
    for (int s = 0; s < 6; s++) {
        int nb = neighbour(h, s);
        if (nb != MPI_PROC_NULL)
            pack(h, u, &p->send[s], p->sbuf[s]);
        MPI_Isend(p->sbuf[s], p->count[s], MPI_DOUBLE, nb, s + parity, tc, &req[6 + s]);
    }
    MPI_Waitall(12, req, MPI_STATUSES_IGNORE);
    for (int s = 0; s < 6; s++)
        if (neighbour(h, s) != MPI_PROC_NULL)
            unpack(h, u, &p->recv[s], p->rbuf[s]);
}

int main(int argc, char **argv)
{
    int provided, nthreads = 1, failed = 0;
    halo_t h;
    MPI_Info hints;
    double *stamp;

    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE) {
        fprintf(stderr, "MPI_THREAD_MULTIPLE not provided\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    halo_setup(&h, argc, argv);
    stamp = malloc(((size_t)h.iters + 1) * sizeof(double));
    MPIX_Info_region_hints(&hints, MPIX_HINT_NO_ANY_SOURCE | MPIX_HINT_NO_ANY_TAG |
                                       MPIX_HINT_EXACT_LENGTH | MPIX_HINT_ALLOW_OVERTAKING |
                                       MPIX_HINT_PER_THREAD);

#pragma omp parallel reduction(+ : failed)
    {
        int t = omp_get_thread_num(), i0, i1;
        double *u = h.u, *v = h.v, *tmp;
        MPI_Comm tc;
        part_t p;
        int err = MPIX_Omp_thread_comm(h.cart, hints, &tc);
        if (err != MPI_SUCCESS) {
            failed = 1; /* same result on every thread and rank: all skip the loop */
        } else {
            halo_slab(&h, t, omp_get_num_threads(), &i0, &i1);
            part_init(&h, t, omp_get_num_threads(), &p);
#pragma omp barrier
#pragma omp master
            {
                nthreads = omp_get_num_threads();
                MPI_Barrier(h.cart);
                stamp[0] = MPI_Wtime();
            }
#pragma omp barrier
            for (int it = 0; it < h.iters; it++) {
                exchange(&h, &p, tc, u, it); /* every thread at once, on its own comm */
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
            MPI_Comm_free(&tc);
        }
    }
    MPI_Info_free(&hints);
    if (failed) {
        if (h.rank == 0)
            fprintf(stderr, "MPIX_Omp_thread_comm failed (same OMP_NUM_THREADS on every rank?)\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    double sum = halo_checksum(&h, h.u);
    halo_report(&h, "halo_thread_comm", nthreads, stamp, sum);
    free(stamp);
    halo_free(&h);
    MPI_Finalize();
    return 0;
}
