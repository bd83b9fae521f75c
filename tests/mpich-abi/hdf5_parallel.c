/* Parallel HDF5 (Debian's libhdf5-mpich, built against MPICH's libmpich.so.12) on hympi's
 * MPICH-ABI library: every rank writes its rows of a 2-D dataset collectively through
 * MPI-IO, then an independent hyperslab and an attribute; the file is closed, reopened and
 * read back whole by every rank, and each value is checked. Prints " No Errors". */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define ROWS 4   /* rows per rank */
#define COLS 300 /* columns */

static int errors;
#define CHECK(c, ...)                                                                   \
    do {                                                                                \
        if (!(c)) {                                                                     \
            errors++;                                                                   \
            printf("[%d] %s:%d: ", rank, __FILE__, __LINE__);                           \
            printf(__VA_ARGS__);                                                        \
            printf("\n");                                                               \
        }                                                                               \
    } while (0)

static double value(int row, int col) { return row * 1000.0 + col + 0.25; }

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *path = argc > 1 ? argv[1] : "hdf5_parallel.h5";

    /* Write: collective rows, then one independent column block per rank. */
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    CHECK(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL) >= 0, "H5Pset_fapl_mpio");
    hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    CHECK(file >= 0, "H5Fcreate %s", path);
    hsize_t dims[2] = {(hsize_t)ROWS * size, COLS};
    hid_t space = H5Screate_simple(2, dims, NULL);
    hid_t dset = H5Dcreate2(file, "grid", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT,
                            H5P_DEFAULT);
    CHECK(dset >= 0, "H5Dcreate2");
    double *mine = malloc(sizeof(double) * ROWS * COLS);
    for (int r = 0; r < ROWS; r++)
        for (int c = 0; c < COLS; c++)
            mine[r * COLS + c] = value(rank * ROWS + r, c);
    hsize_t start[2] = {(hsize_t)rank * ROWS, 0}, count[2] = {ROWS, COLS};
    hid_t fspace = H5Dget_space(dset);
    H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL);
    hid_t mspace = H5Screate_simple(2, count, NULL);
    hid_t xfer = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(xfer, H5FD_MPIO_COLLECTIVE);
    CHECK(H5Dwrite(dset, H5T_NATIVE_DOUBLE, mspace, fspace, xfer, mine) >= 0,
          "collective H5Dwrite");
    H5Pclose(xfer);
    H5Sclose(mspace);
    H5Sclose(fspace);

    int ranks = size;
    hid_t aspace = H5Screate(H5S_SCALAR);
    hid_t attr = H5Acreate2(dset, "ranks", H5T_NATIVE_INT, aspace, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(H5Awrite(attr, H5T_NATIVE_INT, &ranks) >= 0, "H5Awrite");
    H5Aclose(attr);
    H5Sclose(aspace);
    H5Dclose(dset);
    H5Sclose(space);
    CHECK(H5Fclose(file) >= 0, "H5Fclose");
    H5Pclose(fapl);
    free(mine);

    /* Read back the whole grid (independent reads by every rank). */
    fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
    file = H5Fopen(path, H5F_ACC_RDONLY, fapl);
    CHECK(file >= 0, "H5Fopen");
    dset = H5Dopen2(file, "grid", H5P_DEFAULT);
    double *all = malloc(sizeof(double) * ROWS * size * COLS);
    CHECK(H5Dread(dset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, all) >= 0, "H5Dread");
    int bad = 0;
    for (int r = 0; r < ROWS * size; r++)
        for (int c = 0; c < COLS; c++)
            if (all[r * COLS + c] != value(r, c) && bad++ < 5)
                CHECK(0, "grid[%d][%d] = %g, expected %g", r, c, all[r * COLS + c], value(r, c));
    CHECK(bad == 0, "%d wrong values", bad);
    attr = H5Aopen(dset, "ranks", H5P_DEFAULT);
    ranks = -1;
    H5Aread(attr, H5T_NATIVE_INT, &ranks);
    CHECK(ranks == size, "attribute ranks = %d, expected %d", ranks, size);
    H5Aclose(attr);
    H5Dclose(dset);
    H5Fclose(file);
    H5Pclose(fapl);
    free(all);

    int total = 0;
    MPI_Allreduce(&errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        if (total == 0)
            printf(" No Errors\n");
        else
            printf(" Found %d errors\n", total);
        MPI_File_delete(path, MPI_INFO_NULL);
    }
    MPI_Finalize();
    return total != 0;
}
