/* allreduce: checks MPI_Allreduce sums against their closed forms.
 *
 * 1. On MPI_COMM_WORLD: rank r contributes r + i at index i of a vector of n ints and doubles;
 *    the sum at index i must be size*(size-1)/2 + size*i, exactly.
 * 2. With OpenMP (MPI_THREAD_MULTIPLE): every thread gets its own communicator from
 *    MPIX_Omp_thread_comm and runs its own Allreduce at the same time as the other threads;
 *    thread t of rank r contributes (t+1)*(r+1), so the sum is (t+1)*size*(size+1)/2.
 *
 * Build and run: hympicc -O2 -fopenmp allreduce.c -o allreduce && hympiexec -n 2 ./allreduce
 */
#include <hympi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int provided, rank, size, errors = 0;
    const int n = 100000;

    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    int *ia = malloc(n * sizeof *ia), *ib = malloc(n * sizeof *ib);
    double *da = malloc(n * sizeof *da), *db = malloc(n * sizeof *db);
    for (int i = 0; i < n; i++) {
        ia[i] = rank + i;
        da[i] = rank + i;
    }
    MPI_Allreduce(ia, ib, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(da, db, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < n; i++) {
        long want = (long)size * (size - 1) / 2 + (long)size * i;
        errors += ib[i] != want || db[i] != (double)want;
    }
    if (rank == 0)
        printf("allreduce of %d ints and doubles on %d ranks: %d errors\n", n, size, errors);

#ifdef _OPENMP
    if (provided == MPI_THREAD_MULTIPLE) {
        MPI_Info hints;
        int thread_errors = 0, nthreads = 0;
        MPIX_Info_region_hints(&hints, MPIX_HINT_NO_ANY_SOURCE | MPIX_HINT_NO_ANY_TAG |
                                           MPIX_HINT_PER_THREAD);
#pragma omp parallel reduction(+ : thread_errors, nthreads)
        {
            MPI_Comm tc;
            int t = omp_get_thread_num();
            if (MPIX_Omp_thread_comm(MPI_COMM_WORLD, hints, &tc) != MPI_SUCCESS) {
                thread_errors++;
            } else {
                long mine = (long)(t + 1) * (rank + 1), sum = 0;
                for (int rep = 0; rep < 100; rep++) {
                    MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, tc);
                    thread_errors += sum != (long)(t + 1) * size * (size + 1) / 2;
                }
                MPI_Comm_free(&tc);
            }
            nthreads++;
        }
        MPI_Info_free(&hints);
        if (rank == 0)
            printf("per-thread allreduce on %d threads x %d ranks: %d errors\n", nthreads, size,
                   thread_errors);
        errors += thread_errors;
    }
#endif

    MPI_Allreduce(MPI_IN_PLACE, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("allreduce: %s\n", errors ? "FAILED" : "OK");
    free(ia);
    free(ib);
    free(da);
    free(db);
    MPI_Finalize();
    return errors != 0;
}
