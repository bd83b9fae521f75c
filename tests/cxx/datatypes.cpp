/* datatypes: datatype_of for arithmetic, complex, pair and byte types (sizes and extents
 * match the C++ types); derived datatypes (contiguous, vector, indexed, struct, resized, dup)
 * carry the right data around a ring; every owned datatype is freed exactly once (counted by
 * an attribute delete callback) and views of predefined types are never freed; a user type
 * made sendable by specializing hympi::type_traits. */
#include "cxxtest.hpp"

#include <complex>
#include <cstddef>
#include <vector>

static int types_freed = 0;
static int count_free(MPI_Datatype, int, void *, void *) {
    ++types_freed;
    return MPI_SUCCESS;
}
static int kv = MPI_KEYVAL_INVALID;
static void mark(MPI_Datatype t) { MPI_Type_set_attr(t, kv, nullptr); }

struct particle {
    int id;
    double pos[3];
    char tag;
};

// A user type made sendable: a committed struct datatype, made once and freed by MPI_Finalize.
template <> struct hympi::type_traits<particle> {
    static constexpr bool available = true;
    static MPI_Datatype get() {
        static MPI_Datatype t = hympi::datatype::create_struct(
                                    {1, 3, 1}, {offsetof(particle, id), offsetof(particle, pos), offsetof(particle, tag)},
                                    {MPI_INT, MPI_DOUBLE, MPI_CHAR})
                                    .resized(0, sizeof(particle))
                                    .commit()
                                    .free_at_finalize();
        return t;
    }
};

template <class T> static void check_size(int line) {
    int size = 0;
    MPI_Aint lb = 0, extent = 0;
    MPI_Type_size(hympi::datatype_of<T>(), &size);
    MPI_Type_get_extent(hympi::datatype_of<T>(), &lb, &extent);
    if (static_cast<std::size_t>(extent) != sizeof(T) || static_cast<std::size_t>(size) > sizeof(T))
        cxxtest::fail(__FILE__, line, "datatype_of<T> matches sizeof(T)",
                      "size " + std::to_string(size) + " extent " + std::to_string(extent) + " sizeof " +
                          std::to_string(sizeof(T)));
}

int main(int argc, char **argv) {
    hympi::environment env(argc, argv);
    hympi::comm world = hympi::comm::world();
    const int r = world.rank(), n = world.size();
    const int right = (r + 1) % n, left = (r + n - 1) % n;
    MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, count_free, &kv, nullptr);

    // Predefined mappings.
    CHECK(hympi::datatype_of<int>() == MPI_INT);
    CHECK(hympi::datatype_of<const double>() == MPI_DOUBLE);
    CHECK(hympi::datatype_of<unsigned long long>() == MPI_UNSIGNED_LONG_LONG);
    CHECK(hympi::datatype_of<bool>() == MPI_CXX_BOOL);
    CHECK(hympi::datatype_of<std::byte>() == MPI_BYTE);
    CHECK(hympi::datatype_of<std::complex<double>>() == MPI_CXX_DOUBLE_COMPLEX);
    CHECK(hympi::datatype_of<std::pair<double, int>>() == MPI_DOUBLE_INT);
    CHECK(hympi::datatype_of<std::pair<int, int>>() == MPI_2INT);
    CHECK(hympi::datatype_of<hympi::value_index<float>>() == MPI_FLOAT_INT);
    CHECK(hympi::datatype_of<hympi::value_index<long double>>() == MPI_LONG_DOUBLE_INT);
    check_size<char>(__LINE__);
    check_size<signed char>(__LINE__);
    check_size<unsigned char>(__LINE__);
    check_size<wchar_t>(__LINE__);
    check_size<char16_t>(__LINE__);
    check_size<char32_t>(__LINE__);
    check_size<short>(__LINE__);
    check_size<unsigned short>(__LINE__);
    check_size<int>(__LINE__);
    check_size<unsigned>(__LINE__);
    check_size<long>(__LINE__);
    check_size<unsigned long>(__LINE__);
    check_size<long long>(__LINE__);
    check_size<unsigned long long>(__LINE__);
    check_size<float>(__LINE__);
    check_size<double>(__LINE__);
    check_size<long double>(__LINE__);
    check_size<bool>(__LINE__);
    check_size<std::byte>(__LINE__);
    check_size<std::complex<float>>(__LINE__);
    check_size<std::complex<double>>(__LINE__);
    check_size<std::complex<long double>>(__LINE__);
    check_size<std::pair<float, int>>(__LINE__);
    check_size<std::pair<double, int>>(__LINE__);
    check_size<std::pair<long, int>>(__LINE__);
    check_size<std::pair<int, int>>(__LINE__);
    check_size<std::pair<short, int>>(__LINE__);
    check_size<std::pair<long double, int>>(__LINE__);
    check_size<hympi::value_index<double>>(__LINE__);
    static_assert(!hympi::has_datatype_v<particle *>);
    static_assert(!hympi::has_datatype_v<std::string>);

    {
        // A view of a predefined type frees nothing.
        hympi::datatype v = hympi::datatype::of<int>();
        CHECK(!v.owned());
        CHECK_EQ(v.size(), static_cast<int>(sizeof(int)));
    }

    // Derived types, each sent around the ring and freed by RAII.
    {
        hympi::datatype three = hympi::datatype::contiguous(3, MPI_INT).commit();
        mark(three);
        CHECK(three.owned());
        CHECK_EQ(three.size(), 3 * static_cast<int>(sizeof(int)));
        std::vector<int> out{r, r + 1, r + 2, r + 3, r + 4, r + 5}, in(6, -1);
        hympi::request rr = world.irecv(in, left, 1);
        world.send(out.data(), 2, three, right, 1);
        rr.wait();
        for (int i = 0; i < 6; ++i)
            CHECK_EQ(in[static_cast<std::size_t>(i)], left + i);
    }
    CHECK_EQ(types_freed, 1);
    {
        // Column 1 of a 4x3 row-major matrix.
        hympi::datatype column = hympi::datatype::vector(4, 1, 3, MPI_DOUBLE);
        column.commit();
        mark(column);
        CHECK_EQ(column.size(), 4 * static_cast<int>(sizeof(double)));
        CHECK_EQ(column.extent().second, static_cast<MPI_Aint>(10 * sizeof(double)));
        std::vector<double> m(12);
        for (int i = 0; i < 12; ++i)
            m[static_cast<std::size_t>(i)] = 100.0 * r + i;
        std::vector<double> col(4);
        hympi::request rr = world.irecv(col, left, 2);
        world.send(m.data() + 1, 1, column, right, 2);
        rr.wait();
        for (int i = 0; i < 4; ++i)
            CHECK(col[static_cast<std::size_t>(i)] == 100.0 * left + 3 * i + 1);

        // Indexed: elements 0, 1 and 4; received into the same layout.
        hympi::datatype idx = hympi::datatype::indexed({2, 1}, {0, 4}, MPI_INT).commit();
        mark(idx);
        hympi::datatype idx2 = idx.dup();
        mark(idx2);
        std::vector<int> src{r, r + 10, -1, -1, r + 40}, dst(5, -7);
        hympi::request ri = world.irecv(dst, left, 3);
        world.send(src.data(), 1, idx2, right, 3);
        ri.wait();
        CHECK(dst[0] == left && dst[1] == left + 10 && dst[2] == left + 40 && dst[3] == -7);
        // Received through the indexed type: gaps keep their old values.
        std::vector<int> packed{r, r + 1, r + 2}, spread(5, -3);
        hympi::request rj = world.isend(packed, right, 4);
        world.recv(spread.data(), 1, idx, left, 4);
        rj.wait();
        CHECK(spread[0] == left && spread[1] == left + 1 && spread[2] == -3 && spread[3] == -3 &&
              spread[4] == left + 2);

        // Moves keep one owner.
        hympi::datatype moved = std::move(idx2);
        CHECK(idx2.is_null());
        CHECK(moved.owned());
        CHECK_EQ(types_freed, 1);
    }
    CHECK_EQ(types_freed, 4);
    {
        // Struct with resized extent, through type_traits: typed sends of particles.
        static_assert(hympi::has_datatype_v<particle>);
        std::vector<particle> out(3), in(3);
        for (int i = 0; i < 3; ++i)
            out[static_cast<std::size_t>(i)] = particle{r * 10 + i, {r + 0.5, 1.0 * i, -1.0}, static_cast<char>('a' + i)};
        hympi::request rr = world.irecv(in, left, 5);
        world.send(out, right, 5);
        rr.wait();
        for (int i = 0; i < 3; ++i) {
            const particle &p = in[static_cast<std::size_t>(i)];
            CHECK(p.id == left * 10 + i && p.pos[0] == left + 0.5 && p.pos[1] == 1.0 * i && p.pos[2] == -1.0 &&
                  p.tag == 'a' + i);
        }
        particle one = world.allreduce(out[0], [](const particle &a, const particle &b) {
            particle c = a;
            c.id = a.id + b.id;
            return c;
        });
        CHECK_EQ(one.id, 10 * n * (n - 1) / 2);
        // Explicit free.
        hympi::datatype t = hympi::datatype::contiguous(2, MPI_INT);
        mark(t);
        t.free();
        CHECK(t.is_null());
        CHECK_EQ(types_freed, 5);
        MPI_Datatype raw;
        {
            hympi::datatype u = hympi::datatype::contiguous(2, MPI_INT);
            raw = u.release();
        }
        CHECK_EQ(MPI_Type_free(&raw), MPI_SUCCESS);
    }

    // at_finalize: runs at the start of MPI_Finalize, while MPI still works (checked by
    // freeing a type then), in reverse order of registration.
    {
        hympi::datatype late = hympi::datatype::contiguous(5, MPI_INT);
        MPI_Datatype h = late.free_at_finalize();
        CHECK(!late.owned());
        static int order = 0;
        hympi::at_finalize([] { order = order * 10 + 1; });
        hympi::at_finalize([h] {
            int size = 0;
            if (MPI_Type_size(h, &size) != MPI_SUCCESS || size != 5 * static_cast<int>(sizeof(int)) || order != 0) {
                std::printf("at_finalize: MPI unusable or wrong order\n");
                order = -1000;
            }
            order = order * 10 + 2;
        });
        std::atexit([] {
            if (order != 21) {
                std::printf("at_finalize: hooks ran as %d, expected 21\n", order);
                std::fflush(stdout);
                std::_Exit(1); // after " No Errors": the exit status fails the test
            }
        });
    }

    MPI_Type_free_keyval(&kv);
    world.barrier();
    cxxtest::finish();
    return 0;
}
