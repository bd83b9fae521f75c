/* hello: every OpenMP thread of every rank says hello.
 *
 * Asks for MPI_THREAD_MULTIPLE, and each thread calls MPI itself (MPI_Comm_rank,
 * MPI_Get_processor_name) before printing. Rank 0 then prints the total count, gathered with
 * MPI_Reduce, and the job fails if any rank did not get MPI_THREAD_MULTIPLE.
 *
 * Build and run: hympicc -O2 -fopenmp hello.c -o hello && OMP_NUM_THREADS=2 hympiexec -n 2 ./hello
 */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int provided, rank, size, said = 0, total = 0;

    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (provided < MPI_THREAD_MULTIPLE) {
        fprintf(stderr, "rank %d: MPI_THREAD_MULTIPLE not provided (got %d)\n", rank, provided);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

#pragma omp parallel reduction(+ : said)
    {
        char name[MPI_MAX_PROCESSOR_NAME];
        int len, r;
        MPI_Comm_rank(MPI_COMM_WORLD, &r); /* MPI from every thread */
        MPI_Get_processor_name(name, &len);
        printf("hello from rank %d of %d, thread %d of %d, on %s\n", r, size,
               omp_get_thread_num(), omp_get_num_threads(), name);
        said += 1;
    }
    fflush(stdout);

    MPI_Reduce(&said, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%d hellos from %d ranks\n", total, size);
    MPI_Finalize();
    return 0;
}
