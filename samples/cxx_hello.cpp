// cxx_hello: a first program with hympi's C++ API (include/hympi.hpp).
//
//   g++ -std=c++17 -fopenmp -I include samples/cxx_hello.cpp target/release/libhympi.a
//       -lhwloc -lpthread -ldl -lm -lrt -o cxx_hello
//   target/release/hympiexec -n 4 ./cxx_hello
//
// (HYMPI_CC=g++ target/release/hympicc -std=c++17 -fopenmp samples/cxx_hello.cpp -o cxx_hello
// does the same.) Without -fopenmp the per-thread part is left out.
#include <hympi.hpp>

#include <cstdio>
#include <numeric>
#include <vector>

int main(int argc, char **argv) {
    hympi::environment env(argc, argv, hympi::thread_level::multiple);
    hympi::comm world = hympi::comm::world();
    const int rank = world.rank(), size = world.size();
    std::printf("hello from rank %d of %d on %s\n", rank, size, hympi::environment::processor_name().c_str());

    // Typed collectives: the datatype (MPI_INT, MPI_DOUBLE) and the op (MPI_SUM, MPI_MAX) are
    // deduced from the C++ types and functors.
    const int sum = world.allreduce(rank, std::plus<>());
    const double top = world.allreduce(rank * 1.5, hympi::max());

    // Point-to-point around a ring with std::vector buffers; the request waits in its destructor.
    std::vector<double> out(4, rank), in(4);
    {
        hympi::request r = world.irecv(in, (rank + size - 1) % size, 0);
        world.send(out, (rank + 1) % size, 0);
    }

    // Errors are exceptions carrying the MPI error class.
    try {
        world.send(1, size, 0); // no such rank
    } catch (const hympi::error &e) {
        if (rank == 0)
            std::printf("expected error: class %d (MPI_ERR_RANK is %d)\n", e.error_class(), MPI_ERR_RANK);
    }

#ifdef _OPENMP
    // One communicator per OpenMP thread, the same thread number matched on every rank.
    int threads_ok = 0;
    if (env.provided() == hympi::thread_level::multiple) {
#pragma omp parallel num_threads(2) reduction(+ : threads_ok)
        {
            hympi::comm mine = hympi::omp::thread_comm(world, {{"mpi_assert_no_any_source", "true"}});
            threads_ok += mine.allreduce(1, std::plus<>()) == size;
        }
    }
    if (rank == 0)
        std::printf("threads with their own communicator: %d\n", threads_ok);
#endif

    if (rank == 0)
        std::printf("sum of ranks = %d, max = %.1f, received %.0f from the left\n", sum, top, in[0]);
    return sum == size * (size - 1) / 2 && in[0] == (rank + size - 1) % size ? 0 : 1;
}
