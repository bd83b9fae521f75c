/* p2p: typed point-to-point with datatypes deduced from the element type: values, std::vector,
 * std::array, C arrays, hympi::view, pointer + count, complex and pair types; isend/irecv with
 * request_set (waitall, waitany, testall), sendrecv, probe/iprobe, recv_vector of messages of
 * unknown length, status fields and counts. */
#include "cxxtest.hpp"

#include <array>
#include <complex>
#include <vector>

int main(int argc, char **argv) {
    hympi::environment env(argc, argv);
    hympi::comm world = hympi::comm::world();
    const int r = world.rank(), n = world.size();
    const int right = (r + 1) % n, left = (r + n - 1) % n;

    // Values of several types around the ring (nonblocking receive first, so 1 rank works).
    {
        double d = -1;
        std::complex<double> z;
        std::pair<double, int> p;
        hympi::request_set rs;
        rs.add(world.irecv(d, left, 1));
        rs.add(world.irecv(z, left, 2));
        rs.add(world.irecv(p, left, 3));
        world.send(r + 0.25, right, 1);
        world.send(std::complex<double>(r, -r), right, 2);
        world.send(std::make_pair(r * 1.5, r), right, 3);
        std::vector<hympi::status> st = rs.waitall();
        CHECK(!rs.active());
        CHECK(d == left + 0.25);
        CHECK(z == std::complex<double>(left, -left));
        CHECK(p.first == left * 1.5 && p.second == left);
        CHECK_EQ(st.size(), std::size_t{3});
        CHECK_EQ(st[0].source(), left);
        CHECK_EQ(st[1].tag(), 2);
        CHECK(st[2].count<std::pair<double, int>>() == 1);
    }
    // Containers: vector, array, C array, view, pointer + count.
    {
        std::vector<int> v(100), vin(100);
        for (int i = 0; i < 100; ++i)
            v[static_cast<std::size_t>(i)] = r * 1000 + i;
        std::array<float, 4> a{1.0f * r, 2.0f, 3.0f, 4.0f}, ain{};
        long c[3] = {r, 2L * r, 3L * r}, cin[3] = {};
        std::vector<short> big(20, static_cast<short>(r)), part(5);
        unsigned raw[2] = {static_cast<unsigned>(r), 7u}, rawin[2] = {};

        hympi::request_set rs;
        rs.add(world.irecv(vin, left, 10));
        rs.add(world.irecv(ain, left, 11));
        rs.add(world.irecv(cin, left, 12));
        rs.add(world.irecv(hympi::view<short>(part), left, 13)); // a temporary view is fine
        rs.add(world.irecv(rawin, left, 14));
        world.send(v, right, 10);
        world.send(a, right, 11);
        world.send(c, right, 12);
        world.send(hympi::view<const short>(big).subview(5, 5), right, 13);
        world.send(raw, 2, right, 14);
        // waitany until all are done, each index once
        std::vector<int> seen(5, 0);
        while (auto done = rs.waitany())
            seen[done->index]++;
        CHECK(seen == std::vector<int>(5, 1));
        for (int i = 0; i < 100; ++i)
            CHECK_EQ(vin[static_cast<std::size_t>(i)], left * 1000 + i);
        CHECK(ain[0] == 1.0f * left && ain[3] == 4.0f);
        CHECK(cin[0] == left && cin[2] == 3L * left);
        CHECK(part == std::vector<short>(5, static_cast<short>(left)));
        CHECK(rawin[0] == static_cast<unsigned>(left) && rawin[1] == 7u);
    }
    // Blocking send/recv between pairs; recv into a pointer + count, status count.
    if (n > 1) {
        std::vector<double> buf(8);
        if (r % 2 == 0 && r + 1 < n) {
            std::vector<double> out{1, 2, 3};
            world.send(out, r + 1, 20);
            hympi::status st = world.recv(buf.data(), 8, r + 1, 21);
            CHECK_EQ(st.count<double>(), 2);
            CHECK(buf[0] == 4 && buf[1] == 5);
        } else if (r % 2 == 1) {
            hympi::status st = world.recv(buf, r - 1, 20);
            CHECK_EQ(st.count<double>(), 3);
            CHECK_EQ(st.source(), r - 1);
            CHECK_EQ(st.tag(), 20);
            CHECK(buf[2] == 3);
            world.ssend(std::array<double, 2>{4, 5}, r - 1, 21);
        }
    }
    // sendrecv around the ring; recv_value.
    {
        std::vector<int> out(3, r), in(3, -1);
        hympi::status st = world.sendrecv(out, right, 30, in, left, 30);
        CHECK(in == std::vector<int>(3, left));
        CHECK_EQ(st.source(), left);
        const int three_r = r * 3;
        hympi::request s = world.isend(three_r, right, 31);
        CHECK_EQ(world.recv_value<int>(left, 31), left * 3);
        s.wait();
        CHECK(!s.active());
    }
    // Messages of unknown length: every rank sends r+1 ints to rank 0 (probe, recv_vector).
    {
        std::vector<long long> mine(static_cast<std::size_t>(r) + 1, r);
        hympi::request s = world.isend(mine, 0, 40);
        if (r == 0) {
            std::vector<int> got(static_cast<std::size_t>(n), 0);
            for (int i = 0; i < n; ++i) {
                hympi::status pst = world.probe(hympi::any_source, 40);
                CHECK_EQ(pst.count<long long>(), pst.source() + 1);
                hympi::status st;
                std::vector<long long> v = world.recv_vector<long long>(MPI_ANY_SOURCE, 40, &st);
                CHECK_EQ(v.size(), static_cast<std::size_t>(st.source()) + 1);
                CHECK(v == std::vector<long long>(v.size(), st.source()));
                got[static_cast<std::size_t>(st.source())]++;
            }
            CHECK(got == std::vector<int>(static_cast<std::size_t>(n), 1));
        }
        s.wait();
    }
    // iprobe and test: nothing there, then a message to self.
    {
        CHECK(!world.iprobe(MPI_ANY_SOURCE, 50).has_value());
        int x = 0;
        hympi::request rr = world.irecv(x, r, 50);
        CHECK(!rr.test().has_value());
        hympi::request_set rs;
        rs.add(std::move(rr));
        CHECK(!rs.testany().has_value());
        CHECK(!rs.testall().has_value());
        world.send(99, r, 50); // the receive is posted
        std::optional<std::vector<hympi::status>> all;
        while (!(all = rs.testall()))
            ;
        CHECK_EQ(x, 99);
        CHECK_EQ((*all)[0].source(), r);
        CHECK(!rs.waitany().has_value()); // nothing active
        const int five = 5;
        hympi::request s5 = world.isend(five, r, 51); // a blocking send to self may wait for the receive
        std::optional<hympi::status> st;
        while (!(st = world.iprobe(r, 51)))
            ;
        CHECK_EQ(st->count<int>(), 1);
        CHECK_EQ(world.recv_value<int>(r, 51), 5);
        s5.wait();
    }
    // Class template argument deduction of views.
    {
        std::vector<int> src(6, r), dst(6, -1);
        const std::vector<int> &csrc = src;
        hympi::view whole(dst);          // view<int>
        hympi::view ro(csrc);            // view<const int>
        hympi::view part(dst.data() + 2, 2);
        static_assert(std::is_same_v<decltype(whole), hympi::view<int>>);
        static_assert(std::is_same_v<decltype(ro), hympi::view<const int>>);
        hympi::request rr = world.irecv(part, left, 56);
        world.send(ro.subview(0, 2), right, 56);
        rr.wait();
        CHECK(dst[1] == -1 && dst[2] == left && dst[3] == left && dst[4] == -1);
        CHECK_EQ(whole.size(), std::size_t{6});
    }
    // Strings: a std::string is a buffer of chars (resized by recv_vector-like receives).
    {
        std::string msg = "rank " + std::to_string(r), got(msg.size() + 4, '?');
        hympi::request rr = world.irecv(got, left, 55);
        world.send(msg, right, 55);
        hympi::status st = rr.wait();
        got.resize(static_cast<std::size_t>(st.count<char>()));
        CHECK(got == "rank " + std::to_string(left));
    }
    // Zero-length and MPI_PROC_NULL.
    {
        std::vector<int> empty, in;
        world.send(empty, hympi::proc_null, 0);
        hympi::status st = world.recv(in, MPI_PROC_NULL, 0);
        CHECK_EQ(st.source(), MPI_PROC_NULL);
        CHECK_EQ(st.count<int>(), 0);
    }
    // Many messages in flight between neighbours, kept in a request_set.
    {
        const int k = 200;
        std::vector<int> in(k, -1);
        hympi::request_set rs;
        for (int i = 0; i < k; ++i)
            rs.add(world.irecv(hympi::view<int>(&in[static_cast<std::size_t>(i)], 1), left, 60));
        std::vector<int> out(k);
        for (int i = 0; i < k; ++i) {
            out[static_cast<std::size_t>(i)] = r * k + i;
            rs.add(world.isend(hympi::view<const int>(&out[static_cast<std::size_t>(i)], 1), right, 60));
        }
        rs.waitall();
        for (int i = 0; i < k; ++i) // non-overtaking: in order
            CHECK_EQ(in[static_cast<std::size_t>(i)], left * k + i);
    }

    world.barrier();
    cxxtest::finish();
    return 0;
}
