/*
 * 3D 7-point-stencil halo exchange mini-app, point-to-point only.
 *
 * A G^3 grid of doubles (Dirichlet boundary: zero outside the grid) is split
 * into px * py * pz boxes, one per rank (-d 3, the default: P's prime
 * factors are dealt to the smallest dimension, so 2 ranks = 2x1x1 and 4 =
 * 2x2x1; -d 1: P x 1 x 1 slabs).  Each iteration exchanges the six faces
 * with the neighbours (faces packed into contiguous buffers by hand, 6
 * MPI_Irecv + 6 MPI_Isend + MPI_Waitall, no derived datatypes) and applies
 *     u'(c) = 0.4 u(c) + 0.1 * (sum of the 6 neighbours of c).
 *
 * Reported: time per iteration (slowest rank, after a warm-up) and a
 * checksum, the sum of the final grid (each rank sums its box in a fixed
 * order, rank 0 adds the partial sums in rank order after receiving them
 * with MPI_Recv).  The arithmetic does not depend on the MPI library, so the
 * checksum must be bit-identical across libraries for the same rank count
 * and decomposition; the runner checks that.
 *
 * Options: -g G grid edge (default 64), -i N timed iterations (default
 * 200), -x N warm-up iterations (default 10), -d 1|3 decomposition.
 */
#include "bench_mpi.h"

#define TAG_SYNC 100
#define TAG_RESULT 101

struct box {
    int n[3];         /* interior extent per dimension */
    int neigh[3][2];  /* neighbour rank, low / high side, or -1 at the boundary */
    long stride[3];   /* index strides of the ghosted array */
    double *u, *unew; /* (n+2)^3 arrays with one ghost layer */
    double *sbuf[6], *rbuf[6];
};

static long idx(const struct box *b, const int c[3])
{
    return c[0] * b->stride[0] + c[1] * b->stride[1] + c[2] * b->stride[2];
}

/* Copy the face of dimension d at plane p to (pack) or from (unpack) buf. */
static void face_copy(struct box *b, int d, int p, double *buf, int pack)
{
    int d1 = (d + 1) % 3, d2 = (d + 2) % 3, c[3];
    long m = 0;
    c[d] = p;
    for (c[d1] = 1; c[d1] <= b->n[d1]; c[d1]++)
        for (c[d2] = 1; c[d2] <= b->n[d2]; c[d2]++, m++) {
            if (pack)
                buf[m] = b->u[idx(b, c)];
            else
                b->u[idx(b, c)] = buf[m];
        }
}

static void exchange(struct box *b)
{
    MPI_Request req[12];
    int nreq = 0, d, s;
    for (d = 0; d < 3; d++) {
        int count = b->n[(d + 1) % 3] * b->n[(d + 2) % 3];
        for (s = 0; s < 2; s++) {
            int f = 2 * d + s;
            if (b->neigh[d][s] < 0) continue;
            /* the neighbour on side s sends its face of side 1 - s */
            MPI_Irecv(b->rbuf[f], count, MPI_DOUBLE, b->neigh[d][s], 2 * d + 1 - s,
                      MPI_COMM_WORLD, &req[nreq++]);
        }
    }
    for (d = 0; d < 3; d++) {
        int count = b->n[(d + 1) % 3] * b->n[(d + 2) % 3];
        for (s = 0; s < 2; s++) {
            int f = 2 * d + s;
            if (b->neigh[d][s] < 0) continue;
            face_copy(b, d, s ? b->n[d] : 1, b->sbuf[f], 1);
            MPI_Isend(b->sbuf[f], count, MPI_DOUBLE, b->neigh[d][s], f, MPI_COMM_WORLD,
                      &req[nreq++]);
        }
    }
    MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE);
    for (d = 0; d < 3; d++)
        for (s = 0; s < 2; s++)
            if (b->neigh[d][s] >= 0) face_copy(b, d, s ? b->n[d] + 1 : 0, b->rbuf[2 * d + s], 0);
}

static void stencil(struct box *b)
{
    long sx = b->stride[0], sy = b->stride[1];
    int i, j, k;
    double *t;
    for (i = 1; i <= b->n[0]; i++)
        for (j = 1; j <= b->n[1]; j++)
            for (k = 1; k <= b->n[2]; k++) {
                long c = i * sx + j * sy + k;
                b->unew[c] = 0.4 * b->u[c] + 0.1 * (b->u[c - sx] + b->u[c + sx] + b->u[c - sy] +
                                                    b->u[c + sy] + b->u[c - 1] + b->u[c + 1]);
            }
    t = b->u;
    b->u = b->unew;
    b->unew = t;
}

/* Every rank reports to rank 0, which then releases them all. */
static void all_sync(int rank, int nranks)
{
    char d = 0;
    int r;
    if (rank == 0) {
        for (r = 1; r < nranks; r++)
            MPI_Recv(&d, 0, MPI_BYTE, r, TAG_SYNC, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (r = 1; r < nranks; r++) MPI_Send(&d, 0, MPI_BYTE, r, TAG_SYNC, MPI_COMM_WORLD);
    } else {
        MPI_Send(&d, 0, MPI_BYTE, 0, TAG_SYNC, MPI_COMM_WORLD);
        MPI_Recv(&d, 0, MPI_BYTE, 0, TAG_SYNC, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
}

/* px*py*pz = nranks: prime factors, largest first, to the smallest dimension. */
static void decompose(int nranks, int ndims, int dims[3])
{
    int rest = nranks, f, factors[32], nf = 0, k, d;
    dims[0] = dims[1] = dims[2] = 1;
    if (ndims == 1) {
        dims[0] = nranks;
        return;
    }
    for (f = 2; rest > 1; f++)
        while (rest % f == 0) {
            factors[nf++] = f;
            rest /= f;
        }
    for (k = nf - 1; k >= 0; k--) {
        int small = 0;
        for (d = 1; d < 3; d++)
            if (dims[d] < dims[small]) small = d;
        dims[small] *= factors[k];
    }
}

/* Box of rank in a G^3 grid split dims[0] x dims[1] x dims[2]; u initialised. */
static void setup(struct box *b, int rank, const int dims[3], int g)
{
    int coord[3], lo[3], d, c[3];
    long total;
    coord[2] = rank % dims[2];
    coord[1] = (rank / dims[2]) % dims[1];
    coord[0] = rank / (dims[2] * dims[1]);
    for (d = 0; d < 3; d++) {
        int step = d == 0 ? dims[1] * dims[2] : d == 1 ? dims[2] : 1;
        lo[d] = (int)((long)coord[d] * g / dims[d]);
        b->n[d] = (int)((long)(coord[d] + 1) * g / dims[d]) - lo[d];
        b->neigh[d][0] = coord[d] > 0 ? rank - step : -1;
        b->neigh[d][1] = coord[d] < dims[d] - 1 ? rank + step : -1;
    }
    b->stride[2] = 1;
    b->stride[1] = b->n[2] + 2;
    b->stride[0] = (long)(b->n[1] + 2) * (b->n[2] + 2);
    total = (long)(b->n[0] + 2) * b->stride[0];
    b->u = calloc((size_t)total, sizeof(double));
    b->unew = calloc((size_t)total, sizeof(double));
    if (!b->u || !b->unew) MPI_Abort(MPI_COMM_WORLD, 3);
    for (d = 0; d < 6; d++) {
        size_t face = (size_t)b->n[(d / 2 + 1) % 3] * (size_t)b->n[(d / 2 + 2) % 3];
        b->sbuf[d] = malloc(face * sizeof(double));
        b->rbuf[d] = malloc(face * sizeof(double));
        if (!b->sbuf[d] || !b->rbuf[d]) MPI_Abort(MPI_COMM_WORLD, 3);
    }
    /* deterministic pattern of the global coordinates */
    for (c[0] = 1; c[0] <= b->n[0]; c[0]++)
        for (c[1] = 1; c[1] <= b->n[1]; c[1]++)
            for (c[2] = 1; c[2] <= b->n[2]; c[2]++) {
                long gx = lo[0] + c[0] - 1, gy = lo[1] + c[1] - 1, gz = lo[2] + c[2] - 1;
                b->u[idx(b, c)] = (double)((gx * 7 + gy * 13 + gz * 29) % 101) / 101.0;
            }
}

static double box_sum(const struct box *b)
{
    double s = 0.0;
    int c[3];
    for (c[0] = 1; c[0] <= b->n[0]; c[0]++)
        for (c[1] = 1; c[1] <= b->n[1]; c[1]++)
            for (c[2] = 1; c[2] <= b->n[2]; c[2]++) s += b->u[idx(b, c)];
    return s;
}

int main(int argc, char **argv)
{
    int rank, nranks, g = 64, ndims = 3, dims[3], opt, d, r;
    long iters = 200, skip = 10, i;
    struct box b;
    double t0, res[2];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    while ((opt = getopt(argc, argv, "g:i:x:d:")) != -1) {
        switch (opt) {
        case 'g': g = atoi(optarg); break;
        case 'i': iters = atol(optarg); break;
        case 'x': skip = atol(optarg); break;
        case 'd': ndims = atoi(optarg); break;
        default:
            if (rank == 0) fprintf(stderr, "usage: %s [-g G] [-i iters] [-x skip] [-d 1|3]\n", argv[0]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    decompose(nranks, ndims, dims);
    if ((ndims != 1 && ndims != 3) || iters < 1 || skip < 0 || g < dims[0] || g < dims[1] ||
        g < dims[2]) {
        if (rank == 0) fprintf(stderr, "bad options: -d 1|3, iters >= 1, G >= ranks per dimension\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    setup(&b, rank, dims, g);
    if (rank == 0) {
        printf("# hympi-bench 3D halo exchange (7-point stencil, %d^3 grid, %dx%dx%d ranks, %ld "
               "iterations)\n", g, dims[0], dims[1], dims[2], iters);
        printf("# Size          Time/iter (us)        Checksum\n");
        fflush(stdout);
    }
    for (i = 0; i < skip; i++) {
        exchange(&b);
        stencil(&b);
    }
    all_sync(rank, nranks);
    t0 = MPI_Wtime();
    for (i = 0; i < iters; i++) {
        exchange(&b);
        stencil(&b);
    }
    res[0] = MPI_Wtime() - t0;
    res[1] = box_sum(&b);
    if (rank == 0) {
        double tmax = res[0], sum = res[1];
        for (r = 1; r < nranks; r++) {
            MPI_Recv(res, 2, MPI_DOUBLE, r, TAG_RESULT, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (res[0] > tmax) tmax = res[0];
            sum += res[1];
        }
        printf("%-10d%18.2f%28.17e\n", g, tmax * 1e6 / (double)iters, sum);
        fflush(stdout);
    } else {
        MPI_Send(res, 2, MPI_DOUBLE, 0, TAG_RESULT, MPI_COMM_WORLD);
    }
    for (d = 0; d < 6; d++) {
        free(b.sbuf[d]);
        free(b.rbuf[d]);
    }
    free(b.u);
    free(b.unew);
    MPI_Finalize();
    return 0;
}
