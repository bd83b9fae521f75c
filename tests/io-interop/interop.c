/* interop: a file written by one MPI implementation is read by another. `interop write PATH`
 * writes, collectively through an interleaved view, 1000 ints per rank (rank r owns blocks r,
 * r + n, ... of 10 ints) followed by an external32 section of doubles; `interop read PATH`
 * reads both back with the same view on any rank count that divides the data the same way
 * and checks every value. Prints " No Errors" on rank 0 when every check passed. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PER_RANK 1000
#define BLOCK 10
#define NDBL 64

static int value(int rank, int k) { return rank * 100000 + k; }

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, np, errs = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (argc < 3 || (strcmp(argv[1], "write") && strcmp(argv[1], "read"))) {
        if (me == 0)
            fprintf(stderr, "usage: interop write|read PATH\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int writing = !strcmp(argv[1], "write");
    MPI_File fh;
    int amode = writing ? MPI_MODE_CREATE | MPI_MODE_WRONLY : MPI_MODE_RDONLY;
    if (MPI_File_open(MPI_COMM_WORLD, argv[2], amode, MPI_INFO_NULL, &fh) != MPI_SUCCESS) {
        fprintf(stderr, "rank %d: cannot open %s\n", me, argv[2]);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Datatype blocks;
    MPI_Type_vector(PER_RANK / BLOCK, BLOCK, BLOCK * np, MPI_INT, &blocks);
    MPI_Type_commit(&blocks);
    MPI_File_set_view(fh, (MPI_Offset)me * BLOCK * sizeof(int), MPI_INT, blocks, "native",
                      MPI_INFO_NULL);
    int *buf = malloc(PER_RANK * sizeof(int));
    MPI_Status st;
    if (writing) {
        for (int k = 0; k < PER_RANK; k++)
            buf[k] = value(me, k);
        MPI_File_write_all(fh, buf, PER_RANK, MPI_INT, &st);
    } else {
        memset(buf, 0, PER_RANK * sizeof(int));
        MPI_File_read_all(fh, buf, PER_RANK, MPI_INT, &st);
        for (int k = 0; k < PER_RANK; k++)
            if (buf[k] != value(me, k) && errs++ < 5)
                printf("rank %d: int %d is %d, expected %d\n", me, k, buf[k], value(me, k));
    }
    /* The external32 section after the ints: rank r's doubles at its own offset. */
    MPI_Offset base = (MPI_Offset)np * PER_RANK * sizeof(int);
    MPI_File_set_view(fh, base, MPI_DOUBLE, MPI_DOUBLE, "external32", MPI_INFO_NULL);
    double d[NDBL];
    if (writing) {
        for (int k = 0; k < NDBL; k++)
            d[k] = me + k / 8.0;
        MPI_File_write_at_all(fh, (MPI_Offset)me * NDBL, d, NDBL, MPI_DOUBLE, &st);
    } else {
        memset(d, 0, sizeof d);
        MPI_File_read_at_all(fh, (MPI_Offset)me * NDBL, d, NDBL, MPI_DOUBLE, &st);
        for (int k = 0; k < NDBL; k++)
            if (d[k] != me + k / 8.0 && errs++ < 10)
                printf("rank %d: double %d is %g, expected %g\n", me, k, d[k], me + k / 8.0);
    }
    MPI_File_close(&fh);
    MPI_Type_free(&blocks);
    free(buf);
    int all = 0;
    MPI_Reduce(&errs, &all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (me == 0) {
        if (all)
            printf(" Found %d errors\n", all);
        else
            printf(" No Errors\n");
    }
    MPI_Finalize();
    return all != 0;
}
