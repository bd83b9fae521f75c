// The C++ side of the consumer: <hympi.hpp> must compile as C++17 through hympi::cxx, and
// the program must link and run with the C interface underneath.
#include <hympi.hpp>
#include <mpi.h>
#include <cstdio>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0, sum = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    const bool ok = sum == size * (size - 1) / 2 && __cplusplus >= 201703L;
    if (rank == 0 && ok)
        std::printf(" No Errors\n");
    MPI_Finalize();
    return ok ? 0 : 1;
}
