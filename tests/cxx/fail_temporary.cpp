/* fail_temporary: must NOT compile. The buffer of a nonblocking call must outlive the request,
 * so a temporary (other than a hympi::view) is rejected at compile time; so is a temporary
 * vector as the output of a receive. tests/cxx/run checks the compiler's message. */
#include <hympi.hpp>

#include <vector>

int main() {
    hympi::environment env;
    hympi::comm world = hympi::comm::world();
#if defined(FAIL_RECV)
    world.recv(std::vector<int>(4), 0, 0);
#else
    hympi::request r = world.isend(std::vector<int>(4, 1), 0, 0);
#endif
    return 0;
}
