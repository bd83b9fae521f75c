/* The three faces of a 256^3 grid of doubles (C order, x fastest) as subarray types. */
#ifndef HYMPI_DT_FACES_H
#define HYMPI_DT_FACES_H
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DT_N 256

/* face: "xy" (z fixed: one 512 KiB block), "xz" (y fixed: 256 blocks of 2 KiB),
 * "yz" (x fixed: 65536 single doubles). Returns MPI_DATATYPE_NULL for an unknown name. */
static inline MPI_Datatype dt_face(const char *face, int at)
{
    int sizes[3] = {DT_N, DT_N, DT_N}, sub[3] = {DT_N, DT_N, DT_N}, st[3] = {0, 0, 0};
    int d = !strcmp(face, "xy") ? 0 : !strcmp(face, "xz") ? 1 : !strcmp(face, "yz") ? 2 : -1;
    MPI_Datatype t;
    if (d < 0)
        return MPI_DATATYPE_NULL;
    sub[d] = 1;
    st[d] = at;
    MPI_Type_create_subarray(3, sizes, sub, st, MPI_ORDER_C, MPI_DOUBLE, &t);
    MPI_Type_commit(&t);
    return t;
}

static inline double *dt_grid(void)
{
    size_t n = (size_t)DT_N * DT_N * DT_N;
    double *g = malloc(n * sizeof(double));
    if (!g)
        MPI_Abort(MPI_COMM_WORLD, 3);
    for (size_t i = 0; i < n; i++)
        g[i] = (double)(i % 1000);
    return g;
}
#endif
