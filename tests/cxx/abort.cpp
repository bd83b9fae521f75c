/* abort: an exception that escapes main while the environment lives is printed and the whole
 * job is aborted (MPI_Abort), even when only the last rank throws and the others wait in a
 * barrier. tests/cxx/run expects a non-zero exit and the printed exception. */
#include "cxxtest.hpp"

int main(int argc, char **argv) {
    hympi::environment env(argc, argv);
    hympi::comm world = hympi::comm::world();
    if (world.rank() == world.size() - 1) {
        std::printf("MTEST_ABORTING: sending to rank %d\n", world.size());
        std::fflush(stdout);
        world.send(42, world.size(), 0); // throws hympi::error (MPI_ERR_RANK), never caught
    }
    world.barrier(); // the other ranks wait here until the job is aborted
    cxxtest::finish();
    return 0;
}
