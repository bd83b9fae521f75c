/*
 * MPI_Pack throughput of one face of a 256^3 grid of doubles described by a subarray type
 * (argv[1]: xy, xz or yz; 512 KiB of data each). Repeats the pack for at least 0.5 s after a
 * warm-up; reports packed bytes per second. Singleton.
 */
#include "dt_faces.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    const char *face = argc > 1 ? argv[1] : "xz";
    MPI_Datatype t = dt_face(face, 5);
    if (t == MPI_DATATYPE_NULL) {
        fprintf(stderr, "unknown face %s\n", face);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    double *g = dt_grid();
    int size;
    MPI_Pack_size(1, t, MPI_COMM_WORLD, &size);
    char *out = malloc(size);
    long iters = 0;
    double t0 = 0, el = 0;
    for (int warm = 0; warm < 20; warm++) {
        int pos = 0;
        MPI_Pack(g, 1, t, out, size, &pos, MPI_COMM_WORLD);
    }
    t0 = MPI_Wtime();
    do {
        for (int k = 0; k < 10; k++) {
            int pos = 0;
            MPI_Pack(g, 1, t, out, size, &pos, MPI_COMM_WORLD);
        }
        iters += 10;
        el = MPI_Wtime() - t0;
    } while (el < 0.5);
    double check = 0;
    for (int i = 0; i < size / 8; i++)
        check += ((double *)out)[i];
    printf("# hympi-bench MPI_Pack of the %s face of a 256^3 double grid\n", face);
    printf("# Size          Bandwidth (GB/s)    Checksum\n");
    printf("%-10d%18.3f%14.0f\n", size, (double)size * iters / el / 1e9, check);
    free(out);
    free(g);
    MPI_Type_free(&t);
    MPI_Finalize();
    return 0;
}
