/* halo_legacy: 3D 7-point stencil, the classic hybrid way (before migration).
 *
 * MPI_THREAD_FUNNELED: OpenMP threads compute, and only the master thread talks to MPI. Each
 * iteration the master exchanges the six faces of the rank's block with its Cartesian
 * neighbours (MPI_Irecv/MPI_Isend of subarray datatypes straight from and into the field, one
 * MPI_Waitall) while the other threads wait at a barrier; then every thread sweeps its slab.
 * The problem, the sweep and the checksum are in halo_common.h; halo_thread_comm.c is the same
 * program after migration to per-thread communicators (see docs/migration.md).
 *
 * Build and run: hympicc -O2 -fopenmp halo_legacy.c -o halo_legacy
 *                OMP_NUM_THREADS=2 hympiexec -n 2 ./halo_legacy [NX NY NZ ITERS]
 */
#include "halo_common.h"
#include <omp.h>

/* Datatypes of the faces of axis d: send_lo/hi select the first/last interior plane,
 * recv_lo/hi the ghost planes next to them; every other axis spans the interior. */
typedef struct {
    MPI_Datatype send_lo, send_hi, recv_lo, recv_hi;
} face_types_t;

static MPI_Datatype face_type(const halo_t *h, int d, int plane)
{
    int sizes[3], sub[3], start[3];
    MPI_Datatype t;
    for (int e = 0; e < 3; e++) {
        sizes[e] = h->n[e] + 2;
        sub[e] = e == d ? 1 : h->n[e];
        start[e] = e == d ? plane : 1;
    }
    MPI_Type_create_subarray(3, sizes, sub, start, MPI_ORDER_C, MPI_DOUBLE, &t);
    MPI_Type_commit(&t);
    return t;
}

/* The face exchange of array u: all 12 messages in flight, then one wait. A message sent
 * towards the low neighbour of axis d has tag 2d, towards the high one 2d+1. */
static void exchange(const halo_t *h, const face_types_t ft[3], double *u)
{
    MPI_Request req[12];
    int r = 0;
    for (int d = 0; d < 3; d++) {
        MPI_Irecv(u, 1, ft[d].recv_lo, h->lo[d], 2 * d + 1, h->cart, &req[r++]);
        MPI_Irecv(u, 1, ft[d].recv_hi, h->hi[d], 2 * d, h->cart, &req[r++]);
    }
    for (int d = 0; d < 3; d++) {
        MPI_Isend(u, 1, ft[d].send_lo, h->lo[d], 2 * d, h->cart, &req[r++]);
        MPI_Isend(u, 1, ft[d].send_hi, h->hi[d], 2 * d + 1, h->cart, &req[r++]);
    }
    MPI_Waitall(r, req, MPI_STATUSES_IGNORE);
}

int main(int argc, char **argv)
{
    int provided, nthreads = 1;
    halo_t h;
    face_types_t ft[3];
    double *stamp;

    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    if (provided < MPI_THREAD_FUNNELED) {
        fprintf(stderr, "MPI_THREAD_FUNNELED not provided\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    halo_setup(&h, argc, argv);
    stamp = malloc(((size_t)h.iters + 1) * sizeof(double));
    for (int d = 0; d < 3; d++) {
        ft[d].send_lo = face_type(&h, d, 1);
        ft[d].send_hi = face_type(&h, d, h.n[d]);
        ft[d].recv_lo = face_type(&h, d, 0);
        ft[d].recv_hi = face_type(&h, d, h.n[d] + 1);
    }

#pragma omp parallel
    {
        int t = omp_get_thread_num(), i0, i1;
        double *u = h.u, *v = h.v, *tmp;
        halo_slab(&h, t, omp_get_num_threads(), &i0, &i1);
#pragma omp master
        {
            nthreads = omp_get_num_threads();
            MPI_Barrier(h.cart);
            stamp[0] = MPI_Wtime();
        }
#pragma omp barrier
        for (int it = 0; it < h.iters; it++) {
#pragma omp master
            exchange(&h, ft, u);
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
            h.u = u; /* the newest field, for the checksum */
            h.v = v;
        }
    }

    double sum = halo_checksum(&h, h.u);
    halo_report(&h, "halo_legacy", nthreads, stamp, sum);
    free(stamp);
    for (int d = 0; d < 3; d++) {
        MPI_Type_free(&ft[d].send_lo);
        MPI_Type_free(&ft[d].send_hi);
        MPI_Type_free(&ft[d].recv_lo);
        MPI_Type_free(&ft[d].recv_hi);
    }
    halo_free(&h);
    MPI_Finalize();
    return 0;
}
