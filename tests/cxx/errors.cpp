/* errors: failing calls throw hympi::error with the right error class, code and
 * MPI_Error_string message; a pending request is cancelled (not waited for forever) when an
 * exception unwinds its scope; wrapped communicators return errors instead of aborting. */
#include "cxxtest.hpp"

#include <stdexcept>
#include <vector>

int main(int argc, char **argv) {
    hympi::environment env(argc, argv);
    hympi::comm world = hympi::comm::world();
    const int r = world.rank(), n = world.size();

    // Destination out of range: MPI_ERR_RANK, with the code's class and message.
    try {
        world.send(1, n, 0);
        cxxtest::fail(__FILE__, __LINE__, "send to rank size() throws");
    } catch (const hympi::error &e) {
        CHECK_EQ(e.error_class(), MPI_ERR_RANK);
        int cls = -1;
        MPI_Error_class(e.code(), &cls);
        CHECK_EQ(cls, e.error_class());
        char buf[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(e.code(), buf, &len);
        CHECK(e.message() == std::string(buf, static_cast<std::size_t>(len)));
        CHECK(std::string(e.what()).find("MPI_Send") != std::string::npos);
        CHECK(std::string(e.what()).find(e.message()) != std::string::npos);
    }
    // Also through a dup (the errhandler is inherited and set again) and a raw-comm view.
    {
        hympi::comm d = world.dup();
        CHECK_THROWS_CLASS(d.send(1.0, -7, 0), MPI_ERR_RANK);
        MPI_Comm raw;
        MPI_Comm_dup(MPI_COMM_WORLD, &raw);
        MPI_Comm_set_errhandler(raw, MPI_ERRORS_ARE_FATAL);
        {
            hympi::comm v = raw; // the view sets MPI_ERRORS_RETURN
            CHECK_THROWS_CLASS(v.send(1, n + 3, 0), MPI_ERR_RANK);
        }
        MPI_Comm_free(&raw);
    }
    CHECK_THROWS_CLASS(world.send(1, 0, -5), MPI_ERR_TAG);
    {
        int x = 0;
        CHECK_THROWS_CLASS(world.bcast(x, n), MPI_ERR_ROOT);
        CHECK_THROWS_CLASS(world.recv(x, MPI_ANY_SOURCE, -9), MPI_ERR_TAG);
    }
    // Truncation: 4 ints into room for 2.
    {
        std::vector<int> out{1, 2, 3, 4}, in(2);
        hympi::request s = world.isend(out, r, 11);
        CHECK_THROWS_CLASS(world.recv(in, r, 11), MPI_ERR_TRUNCATE);
        s.wait();
    }
    // Errors tied to no communicator.
    CHECK_THROWS_CLASS(hympi::datatype::contiguous(-1, MPI_INT), MPI_ERR_COUNT);
    CHECK_THROWS_CLASS(hympi::datatype::indexed({1, 2}, {0}, MPI_INT), MPI_ERR_ARG);
    // A null communicator.
    {
        hympi::comm null;
        CHECK_THROWS_CLASS(null.size(), MPI_ERR_COMM);
    }
    // Buffer checks of the typed collectives.
    {
        std::array<int, 1> small{};
        std::vector<int> in(2, r);
        CHECK_THROWS_CLASS(world.allgather(in, small), MPI_ERR_BUFFER);
        std::vector<int> odd(static_cast<std::size_t>(n) + 1);
        std::vector<int> out;
        if (n > 1)
            CHECK_THROWS_CLASS(world.alltoall(odd, out), MPI_ERR_COUNT);
    }

    // An exception leaving a scope with a pending receive that will never match: the request's
    // destructor cancels it, so this neither hangs nor leaks the request.
    bool caught = false;
    try {
        std::vector<int> buf(4);
        hympi::request pending = world.irecv(buf, MPI_ANY_SOURCE, 999);
        CHECK(pending.active());
        CHECK(!pending.test().has_value());
        throw std::runtime_error("leaving the scope");
    } catch (const std::runtime_error &) {
        caught = true;
    }
    CHECK(caught);
    // Outside unwinding the destructor waits: the send to self completes.
    {
        std::vector<int> buf(3), data{7, 8, 9};
        {
            hympi::request rr = world.irecv(buf, r, 5);
            world.send(data, r, 5);
        }
        CHECK(buf == data);
    }
    // An explicit cancel.
    {
        int x = 0;
        hympi::request rr = world.irecv(x, MPI_ANY_SOURCE, 998);
        rr.cancel();
        hympi::status st = rr.wait();
        CHECK(st.cancelled());
        CHECK(!rr.active());
    }

    world.barrier();
    cxxtest::finish();
    return 0;
}
