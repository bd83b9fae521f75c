/* coll: typed collectives with datatypes and ops deduced from C++ types and functors:
 * bcast, reduce, allreduce (std::plus, std::multiplies, hympi::max/min, logical and bitwise
 * functors mapped to predefined ops; lambdas, stateful and non-commutative functors as user
 * ops), maxloc/minloc on pairs, scan, gather/scatter/allgather/alltoall and their v forms,
 * barrier, and the nonblocking ibarrier/ibcast/iallreduce. Every result is compared with a
 * value computed locally from the ranks. */
#include "cxxtest.hpp"

#include <array>
#include <complex>
#include <numeric>
#include <vector>

// A 2x2 integer matrix, sent as 4 ints: product is associative but not commutative.
struct mat2 {
    long long a, b, c, d;
};
template <> struct hympi::type_traits<mat2> {
    static constexpr bool available = true;
    static MPI_Datatype get() {
        static MPI_Datatype t = hympi::datatype::contiguous(4, MPI_LONG_LONG).commit().free_at_finalize();
        return t;
    }
};
static mat2 mul(const mat2 &x, const mat2 &y) {
    return mat2{x.a * y.a + x.b * y.c, x.a * y.b + x.b * y.d, x.c * y.a + x.d * y.c, x.c * y.b + x.d * y.d};
}
static bool same(const mat2 &x, const mat2 &y) { return x.a == y.a && x.b == y.b && x.c == y.c && x.d == y.d; }
static mat2 mat_of(int r) { return mat2{1, r + 1, r % 3, 2}; }

// A stateful functor: sum modulo m.
struct sum_mod {
    long m;
    long operator()(long x, long y) const { return (x + y) % m; }
};

int main(int argc, char **argv) {
    hympi::environment env(argc, argv);
    hympi::comm world = hympi::comm::world();
    const int r = world.rank(), n = world.size();
    const std::size_t un = static_cast<std::size_t>(n);

    world.barrier();

    // bcast of a vector from the last rank, and of a value.
    {
        std::vector<double> v(5, -1.0);
        if (r == n - 1)
            std::iota(v.begin(), v.end(), 0.5);
        world.bcast(v, n - 1);
        CHECK(v == std::vector<double>({0.5, 1.5, 2.5, 3.5, 4.5}));
        std::complex<float> z = r == 0 ? std::complex<float>(3, 4) : std::complex<float>();
        world.bcast(z, 0);
        CHECK(z == std::complex<float>(3, 4));
    }
    // reduce to each root in turn.
    for (int root = 0; root < n; ++root) {
        std::vector<int> in{r, 2 * r, 1};
        std::vector<int> out;
        world.reduce(in, out, std::plus<>(), root);
        if (r == root)
            CHECK(out == std::vector<int>({n * (n - 1) / 2, n * (n - 1), n}));
        long prod = world.reduce(static_cast<long>(r + 1), std::multiplies<long>(), root);
        if (r == root) {
            long f = 1;
            for (int i = 1; i <= n; ++i)
                f *= i;
            CHECK_EQ(prod, f);
        }
    }
    // allreduce with functors mapped to predefined ops.
    {
        CHECK_EQ(world.allreduce(r + 1, std::plus<>()), n * (n + 1) / 2);
        CHECK(world.allreduce(1.5 * r, hympi::max()) == 1.5 * (n - 1));
        CHECK_EQ(world.allreduce(static_cast<short>(r + 3), hympi::min()), static_cast<short>(3));
        CHECK_EQ(world.allreduce(r != 0 || n == 1, std::logical_and<>()), n == 1);
        CHECK_EQ(world.allreduce(r == n - 1, std::logical_or<>()), true);
        CHECK_EQ(world.allreduce(1u << r, std::bit_or<>()), (1u << n) - 1);
        CHECK_EQ(world.allreduce(0xffu, std::bit_and<unsigned>()), 0xffu);
        CHECK_EQ(world.allreduce(1, std::bit_xor<>()), n % 2);
        CHECK_EQ(world.allreduce(r == 0, hympi::logical_xor()), true);
        std::complex<double> zs = world.allreduce(std::complex<double>(r, 1), std::plus<>());
        CHECK(zs == std::complex<double>(n * (n - 1) / 2.0, n));
        std::array<float, 3> a{1.0f, static_cast<float>(r), -static_cast<float>(r)};
        std::array<float, 3> as = world.allreduce(a, std::plus<>());
        CHECK(as[0] == static_cast<float>(n) && as[1] == n * (n - 1) / 2.0f && as[2] == -n * (n - 1) / 2.0f);
        std::vector<unsigned long long> big(1000, static_cast<unsigned long long>(r) + 1), bigout;
        world.allreduce(big, bigout, std::plus<>());
        CHECK(bigout == std::vector<unsigned long long>(1000, static_cast<unsigned long long>(n) * (n + 1) / 2));
        std::vector<int> inplace(4, r);
        world.allreduce_in_place(inplace, hympi::max());
        CHECK(inplace == std::vector<int>(4, n - 1));
        CHECK_EQ(world.allreduce(r, MPI_SUM), n * (n - 1) / 2); // a raw MPI_Op
        hympi::op sum = MPI_SUM;
        CHECK_EQ(world.allreduce(r, sum), n * (n - 1) / 2);
    }
    // User ops: a type MPI cannot reduce (char), a lambda, a stateful functor, a
    // non-commutative op in rank order.
    {
        CHECK_EQ(world.allreduce(static_cast<char>(1), std::plus<>()), static_cast<char>(n));
        int sq = world.allreduce(r, [](int x, int y) { return x * x + y * y == 0 ? 0 : (x > y ? x : y); });
        CHECK_EQ(sq, n - 1);
        long m = world.allreduce(static_cast<long>(r) * 1000 + 7, sum_mod{13});
        long expect = 0;
        for (int i = 0; i < n; ++i)
            expect = (expect + static_cast<long>(i) * 1000 + 7) % 13;
        CHECK_EQ(m, expect);
        hympi::op prod = hympi::op::create<mat2>([](const mat2 &x, const mat2 &y) { return mul(x, y); }, false);
        CHECK(!prod.commutative());
        mat2 want = mat_of(0);
        for (int i = 1; i < n; ++i)
            want = mul(want, mat_of(i));
        mat2 got = world.allreduce(mat_of(r), prod);
        CHECK(same(got, want));
        std::vector<mat2> mv(3, mat_of(r)), mout;
        world.reduce(mv, mout, prod, 0);
        if (r == 0)
            CHECK(same(mout[2], want));
        // scan with the same op: the product of ranks 0..r in order.
        mat2 prefix{};
        world.scan(mat_of(r), prefix, prod);
        mat2 wp = mat_of(0);
        for (int i = 1; i <= r; ++i)
            wp = mul(wp, mat_of(i));
        CHECK(same(prefix, wp));
    }
    // maxloc / minloc on pairs: value (r * 7) % n... ties resolved to the lowest index.
    {
        std::pair<double, int> mx = world.allreduce(std::make_pair(static_cast<double>((r * 7) % (n + 1)), r), hympi::maxloc());
        std::pair<double, int> want{-1, -1};
        for (int i = 0; i < n; ++i)
            if ((i * 7) % (n + 1) > want.first)
                want = {static_cast<double>((i * 7) % (n + 1)), i};
        CHECK(mx == want);
        hympi::value_index<int> mn = world.allreduce(hympi::value_index<int>{r % 2, r}, hympi::minloc());
        CHECK(mn.value == 0 && mn.index == 0);
        hympi::value_index<int> mx2 = world.allreduce(hympi::value_index<int>{n > 1 ? r % 2 : 1, r}, hympi::maxloc());
        CHECK(mx2.value == 1 && mx2.index == (n > 1 ? 1 : 0));
        long s = 0;
        world.scan(static_cast<long>(r + 1), s, std::plus<>());
        CHECK_EQ(s, static_cast<long>(r + 1) * (r + 2) / 2);
        std::vector<long> ex(2, -1);
        world.exscan(std::vector<long>{r + 1, 1}, ex, std::plus<>());
        if (r > 0)
            CHECK(ex == std::vector<long>({static_cast<long>(r) * (r + 1) / 2, r}));
        std::string word = r == 0 ? "broadcast" : std::string(9, ' ');
        world.bcast(word, 0);
        CHECK(word == "broadcast");
    }
    // gather / scatter / allgather / alltoall.
    {
        std::array<int, 2> mine{r, -r};
        std::vector<int> g = world.gather(mine, n - 1);
        if (r == n - 1) {
            CHECK_EQ(g.size(), 2 * un);
            for (int i = 0; i < n; ++i)
                CHECK(g[2 * static_cast<std::size_t>(i)] == i && g[2 * static_cast<std::size_t>(i) + 1] == -i);
        } else {
            CHECK(g.empty());
        }
        std::vector<double> all;
        if (r == 0)
            for (int i = 0; i < 3 * n; ++i)
                all.push_back(i * 0.5);
        std::vector<double> part(3);
        world.scatter(all, part, 0);
        CHECK(part == std::vector<double>({3 * r * 0.5, (3 * r + 1) * 0.5, (3 * r + 2) * 0.5}));
        std::vector<long> ag = world.allgather(static_cast<long>(r * r));
        CHECK_EQ(ag.size(), un);
        for (int i = 0; i < n; ++i)
            CHECK_EQ(ag[static_cast<std::size_t>(i)], static_cast<long>(i * i));
        std::vector<int> to(2 * un), from;
        for (int i = 0; i < n; ++i) {
            to[2 * static_cast<std::size_t>(i)] = r * 100 + i;
            to[2 * static_cast<std::size_t>(i) + 1] = -(r * 100 + i);
        }
        world.alltoall(to, from);
        CHECK_EQ(from.size(), 2 * un);
        for (int i = 0; i < n; ++i)
            CHECK(from[2 * static_cast<std::size_t>(i)] == i * 100 + r && from[2 * static_cast<std::size_t>(i) + 1] == -(i * 100 + r));
    }
    // v forms: rank i contributes i+1 elements.
    {
        std::vector<int> counts(un);
        for (int i = 0; i < n; ++i)
            counts[static_cast<std::size_t>(i)] = i + 1;
        std::vector<int> mine(static_cast<std::size_t>(r) + 1, r);
        std::vector<int> expect;
        for (int i = 0; i < n; ++i)
            expect.insert(expect.end(), static_cast<std::size_t>(i) + 1, i);
        std::vector<int> gv;
        world.gatherv(mine, gv, counts, 0);
        if (r == 0)
            CHECK(gv == expect);
        std::vector<int> sv;
        world.scatterv(expect, counts, sv, n - 1);
        CHECK(sv == mine);
        std::vector<int> agv;
        std::vector<int> got_counts = world.allgatherv(mine, agv);
        CHECK(agv == expect);
        CHECK(got_counts == counts);
        // alltoallv: rank r sends j+1 copies of r*10+j to rank j... receives r+1 from each.
        std::vector<int> sc(un), sendbuf;
        for (int j = 0; j < n; ++j) {
            sc[static_cast<std::size_t>(j)] = j + 1;
            sendbuf.insert(sendbuf.end(), static_cast<std::size_t>(j) + 1, r * 10 + j);
        }
        std::vector<int> recvbuf;
        std::vector<int> rc = world.alltoallv(sendbuf, sc, recvbuf);
        CHECK(rc == std::vector<int>(un, r + 1));
        std::vector<int> want;
        for (int i = 0; i < n; ++i)
            want.insert(want.end(), static_cast<std::size_t>(r) + 1, i * 10 + r);
        CHECK(recvbuf == want);
    }
    // Nonblocking: ibarrier, ibcast, iallreduce (predefined and user op kept alive by the request).
    {
        hympi::request b = world.ibarrier();
        b.wait();
        std::vector<int> v(10, r == 0 ? 42 : 0);
        hympi::request rb = world.ibcast(v, 0);
        std::vector<double> in(6, r + 1.0), out;
        hympi::request ra = world.iallreduce(in, out, std::plus<>());
        std::vector<long> lin(4, static_cast<long>(r) * 1000 + 7), lout;
        hympi::request ru = world.iallreduce(lin, lout, sum_mod{13});
        hympi::request_set rs;
        rs.add(std::move(rb));
        rs.add(std::move(ra));
        rs.add(std::move(ru));
        rs.waitall();
        CHECK(v == std::vector<int>(10, 42));
        CHECK(out == std::vector<double>(6, n * (n + 1) / 2.0));
        long expect = 0;
        for (int i = 0; i < n; ++i)
            expect = (expect + static_cast<long>(i) * 1000 + 7) % 13;
        CHECK(lout == std::vector<long>(4, expect));
        // Completed by the destructor: the user op outlives the call that made it.
        std::vector<int> x(3, r), y;
        {
            hympi::request rq = world.iallreduce(x, y, [](int p, int q) { return p + q + 1; });
        }
        CHECK(y == std::vector<int>(3, n * (n - 1) / 2 + n - 1));
    }
    // A split communicator works the same.
    {
        hympi::comm half = world.split(r % 2, r);
        int s = half.allreduce(r, std::plus<>());
        int want = 0;
        for (int i = r % 2; i < n; i += 2)
            want += i;
        CHECK_EQ(s, want);
    }

    world.barrier();
    cxxtest::finish();
    return 0;
}
