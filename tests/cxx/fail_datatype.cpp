/* fail_datatype: must NOT compile. A type without an MPI datatype is rejected at compile time
 * by datatype_of's static_assert, also when it reaches it through a typed call.
 * tests/cxx/run checks that the compiler fails with the static_assert's message. */
#include <hympi.hpp>

struct not_an_mpi_type {
    int a;
    double b;
};

static_assert(!hympi::has_datatype_v<not_an_mpi_type>, "no datatype for a plain struct");
static_assert(hympi::has_datatype_v<int> && hympi::has_datatype_v<std::pair<double, int>>, "");

int main() {
    hympi::environment env;
#ifdef FAIL_VIA_SEND
    hympi::comm::world().send(not_an_mpi_type{1, 2.0}, 0, 0);
#else
    MPI_Datatype t = hympi::datatype_of<not_an_mpi_type>();
    (void)t;
#endif
    return 0;
}
