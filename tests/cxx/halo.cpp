/* halo: what a halo exchange needs from the C++ API. dims_create and cart_create/cart_shift/
 * cart_coords/cart_rank against the C calls; datatype::subarray (size, true extent); isend/irecv
 * of a subarray layout over a std::vector with hympi::waitall over a vector of requests, on a
 * periodic 1D ring and on a 2D grid, checking every ghost and that nothing else was written;
 * layouts reaching outside the container throw MPI_ERR_BUFFER; region_hints sets exactly the
 * keys of its flags and rejects unknown ones. */
#include "cxxtest.hpp"

#include <vector>

int main(int argc, char **argv) {
    hympi::environment env(argc, argv);
    hympi::comm world = hympi::comm::world();
    const int n = world.size();

    // dims_create agrees with MPI_Dims_create, and keeps given entries.
    {
        std::vector<int> d = hympi::dims_create(n, 3);
        int c[3] = {0, 0, 0};
        MPI_Dims_create(n, 3, c);
        CHECK_EQ(d.size(), std::size_t{3});
        CHECK(d[0] == c[0] && d[1] == c[1] && d[2] == c[2]);
        CHECK_EQ(d[0] * d[1] * d[2], n);
        std::vector<int> fixed = hympi::dims_create(n, std::vector<int>{n, 0});
        CHECK(fixed[0] == n && fixed[1] == 1);
        CHECK_THROWS_CLASS(hympi::dims_create(n, -1), MPI_ERR_DIMS);
    }

    // A periodic ring: shift, coords, rank; a 2D non-periodic grid: MPI_PROC_NULL at edges.
    {
        hympi::comm ring = world.cart_create({n}, {true});
        CHECK(ring.owned());
        CHECK_EQ(ring.cart_dims(), 1);
        CHECK_EQ(ring.size(), n);
        auto [left, right] = ring.cart_shift(0, 1);
        CHECK_EQ(left, (ring.rank() + n - 1) % n);
        CHECK_EQ(right, (ring.rank() + 1) % n);
        CHECK_EQ(ring.cart_coords()[0], ring.rank());
        CHECK_EQ(ring.cart_rank({ring.rank()}), ring.rank());
        CHECK_THROWS_CLASS(ring.cart_rank({0, 0}), MPI_ERR_ARG);

        std::vector<int> dims = hympi::dims_create(n, 2);
        hympi::comm grid = world.cart_create(dims);
        std::vector<int> me = grid.cart_coords();
        for (int d = 0; d < 2; ++d) {
            auto [lo, hi] = grid.cart_shift(d);
            int clo = -5, chi = -5;
            MPI_Cart_shift(grid, d, 1, &clo, &chi);
            CHECK(lo == clo && hi == chi);
            CHECK_EQ(lo == hympi::proc_null, me[static_cast<std::size_t>(d)] == 0);
            CHECK_EQ(hi == hympi::proc_null, me[static_cast<std::size_t>(d)] == dims[static_cast<std::size_t>(d)] - 1);
        }
        CHECK_THROWS_CLASS(world.cart_create({n, 1}, {true}), MPI_ERR_ARG);
    }

    // Subarray types: size and true extent.
    {
        hympi::datatype t = hympi::datatype::subarray({4, 5, 6}, {1, 3, 4}, {2, 1, 1}, hympi::datatype::of<double>()).commit();
        CHECK_EQ(t.size(), static_cast<int>(3 * 4 * sizeof(double)));
        auto [lb, ext] = t.extent();
        CHECK(lb == 0 && ext == static_cast<MPI_Aint>(4 * 5 * 6 * sizeof(double)));
        auto [tlb, text] = t.true_extent();
        CHECK_EQ(tlb, static_cast<MPI_Aint>(((2 * 5 + 1) * 6 + 1) * sizeof(double)));
        CHECK_EQ(text, static_cast<MPI_Aint>(((2 * 6) + 4) * sizeof(double)));
        CHECK_THROWS_CLASS(hympi::datatype::subarray({4, 5}, {1}, {0, 0}, hympi::datatype::of<double>()), MPI_ERR_ARG);
    }

    // Halo exchange on the periodic ring: rows of a (rows+2) x cols field with ghost rows 0 and
    // rows+1; row 1 goes left, row `rows` goes right.
    {
        const int rows = 3, cols = 5;
        hympi::comm ring = world.cart_create({n}, {true});
        auto [left, right] = ring.cart_shift(0);
        const int me = ring.rank();
        auto row = [&](int i) {
            return hympi::datatype::subarray({rows + 2, cols}, {1, cols}, {i, 0}, hympi::datatype::of<int>()).commit();
        };
        hympi::datatype send_lo = row(1), send_hi = row(rows), recv_lo = row(0), recv_hi = row(rows + 1);
        std::vector<int> u(static_cast<std::size_t>((rows + 2) * cols), -1);
        for (int i = 1; i <= rows; ++i)
            for (int j = 0; j < cols; ++j)
                u[static_cast<std::size_t>(i * cols + j)] = me * 1000 + i * 10 + j;
        std::vector<hympi::request> reqs;
        for (int rep = 0; rep < 3; ++rep) { // the vector is cleared and reused
            reqs.clear();
            reqs.push_back(ring.irecv(u, recv_lo, left, 1));
            reqs.push_back(ring.irecv(u, recv_hi, right, 0));
            reqs.push_back(ring.isend(u, send_lo, left, 0));
            reqs.push_back(ring.isend(u, send_hi, right, 1));
            hympi::waitall(reqs);
            for (const auto &q : reqs)
                CHECK(!q.active());
        }
        int bad = 0;
        for (int j = 0; j < cols; ++j) {
            bad += u[static_cast<std::size_t>(j)] != left * 1000 + rows * 10 + j;
            bad += u[static_cast<std::size_t>((rows + 1) * cols + j)] != right * 1000 + 10 + j;
            for (int i = 1; i <= rows; ++i)
                bad += u[static_cast<std::size_t>(i * cols + j)] != me * 1000 + i * 10 + j;
        }
        CHECK_EQ(bad, 0);

        // Blocking send/recv of a layout (a self message via the ring's own rank).
        std::vector<int> copy(u.size(), -7);
        hympi::request rq = ring.irecv(copy, recv_lo, me, 9);
        ring.send(u, send_lo, me, 9);
        rq.wait();
        for (int j = 0; j < cols; ++j)
            CHECK_EQ(copy[static_cast<std::size_t>(j)], u[static_cast<std::size_t>(cols + j)]);
        CHECK_EQ(copy[static_cast<std::size_t>(cols)], -7);
        std::vector<int> small(static_cast<std::size_t>(2 * cols));
        CHECK_THROWS_CLASS(ring.send(small, send_hi, me, 9), MPI_ERR_BUFFER);
        CHECK_THROWS_CLASS(ring.irecv(small, recv_hi, me, 9), MPI_ERR_BUFFER);
        CHECK_THROWS_CLASS(ring.isend(small, send_hi, me, 9), MPI_ERR_BUFFER);
        // A layout inside the first two rows fits a two-row container.
        {
            hympi::request ok = ring.irecv(small, recv_lo, me, 8);
            ring.send(small, send_lo, me, 8);
        }
        // Many requests (more than the on-stack batch of waitall).
        std::vector<int> vals(40), got(40, -1);
        reqs.clear();
        for (int i = 0; i < 40; ++i) {
            vals[static_cast<std::size_t>(i)] = me * 100 + i;
            reqs.push_back(ring.irecv(&got[static_cast<std::size_t>(i)], 1, MPI_INT, left, 100 + i));
        }
        for (int i = 0; i < 40; ++i)
            reqs.push_back(ring.isend(&vals[static_cast<std::size_t>(i)], 1, MPI_INT, right, 100 + i));
        hympi::waitall(reqs);
        for (int i = 0; i < 40; ++i)
            CHECK_EQ(got[static_cast<std::size_t>(i)], left * 100 + i);
    }

    // region_hints: exactly the keys of the flags.
    {
        using hympi::hint;
        hympi::info all = hympi::region_hints(hint::no_any_source | hint::no_any_tag | hint::allow_overtaking |
                                              hint::exact_length | hint::per_thread);
        CHECK_EQ(all.nkeys(), 5);
        CHECK(all.get("mpi_assert_no_any_source") == std::string("true"));
        CHECK(all.get("mpi_assert_exact_length") == std::string("true"));
        CHECK(all.get("hympi_per_thread_comm") == std::string("true"));
        hympi::info some = hympi::region_hints(hint::no_any_tag);
        CHECK_EQ(some.nkeys(), 1);
        CHECK(some.get("mpi_assert_no_any_tag") == std::string("true"));
        CHECK(!some.get("mpi_assert_no_any_source"));
        CHECK_EQ(hympi::region_hints(hint::none).nkeys(), 0);
        CHECK_THROWS_CLASS(hympi::region_hints(static_cast<hint>(0x40)), MPI_ERR_ARG);
        hympi::comm c = world.dup(hympi::region_hints(hint::no_any_source | hint::no_any_tag));
        CHECK_EQ(c.allreduce(1, std::plus<>()), n);
    }

    cxxtest::finish();
    return 0;
}
