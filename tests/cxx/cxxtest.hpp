/* cxxtest.hpp: helpers of the C++ API tests (tests/cxx).
 *
 * Like the C suite (tests/c/mtest.h): each program counts failed checks, and
 * cxxtest::finish() sums the counts over MPI_COMM_WORLD with plain C MPI calls (so the verdict
 * does not depend on the interface under test); rank 0 prints exactly " No Errors" when no
 * rank failed, else " Found N errors". */
#ifndef CXXTEST_HPP_INCLUDED
#define CXXTEST_HPP_INCLUDED

#include <hympi.hpp>

#include <cstdio>
#include <cstring>
#include <string>

namespace cxxtest {

inline int errors = 0;

inline int world_rank() {
    int r = 0, init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (init && !fin)
        MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

inline void fail(const char *file, int line, const char *what, const std::string &detail = std::string()) {
    ++errors;
    if (errors <= 50) {
        std::printf("[%d] %s:%d: check failed: %s%s%s\n", world_rank(), file, line, what, detail.empty() ? "" : ": ",
                    detail.c_str());
        std::fflush(stdout);
    }
}

/// Sums the error counts of every rank; rank 0 prints the verdict. Call before the
/// environment ends.
inline void finish() {
    int total = 0;
    MPI_Reduce(&errors, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (world_rank() == 0) {
        if (total == 0)
            std::printf(" No Errors\n");
        else
            std::printf(" Found %d errors\n", total);
        std::fflush(stdout);
    }
}

} // namespace cxxtest

#define CHECK(...)                                                                                 \
    do {                                                                                           \
        if (!(__VA_ARGS__))                                                                        \
            cxxtest::fail(__FILE__, __LINE__, #__VA_ARGS__);                                       \
    } while (0)

#define CHECK_EQ(a, b)                                                                             \
    do {                                                                                           \
        auto cxxtest_a = (a);                                                                      \
        auto cxxtest_b = (b);                                                                      \
        if (!(cxxtest_a == cxxtest_b))                                                             \
            cxxtest::fail(__FILE__, __LINE__, #a " == " #b,                                        \
                          std::to_string(cxxtest_a) + " != " + std::to_string(cxxtest_b));         \
    } while (0)

/// Checks that `stmt` throws hympi::error of error class `cls`.
#define CHECK_THROWS_CLASS(stmt, cls)                                                              \
    do {                                                                                           \
        bool cxxtest_thrown = false;                                                               \
        try {                                                                                      \
            stmt;                                                                                  \
        } catch (const hympi::error &cxxtest_e) {                                                  \
            cxxtest_thrown = true;                                                                 \
            if (cxxtest_e.error_class() != (cls))                                                  \
                cxxtest::fail(__FILE__, __LINE__, #stmt " throws class " #cls,                     \
                              std::string("got: ") + cxxtest_e.what());                            \
        }                                                                                          \
        if (!cxxtest_thrown)                                                                       \
            cxxtest::fail(__FILE__, __LINE__, #stmt " throws class " #cls, "nothing thrown");      \
    } while (0)

#endif
