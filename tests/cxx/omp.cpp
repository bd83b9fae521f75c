/* omp: hympi::omp::thread_comm gives every thread of an OpenMP team its own duplicate of a
 * communicator, with the same thread number matched on every rank: each thread runs a ring
 * exchange with the same tag on its own communicator, at the same time as the other threads,
 * and checks that the message came from the same thread number of the left rank. The info
 * hints are applied, the communicators are distinct (congruent, not identical) and each is
 * freed exactly once when its thread's comm goes out of scope. Built with -fopenmp. */
#include "cxxtest.hpp"

#include <atomic>
#include <omp.h>
#include <vector>

static std::atomic<int> comms_freed{0};
// A failed check inside the parallel region (CHECK's counter is not thread-safe).
#define TCHECK(...)                                                                                \
    do {                                                                                           \
        if (!(__VA_ARGS__)) {                                                                      \
            std::printf("[%d] thread %d, round %d: %s:%d: check failed: %s\n", r, t, round, __FILE__, \
                        __LINE__, #__VA_ARGS__);                                                   \
            ++thread_errors;                                                                       \
        }                                                                                          \
    } while (0)

static int count_free(MPI_Comm, int, void *, void *) {
    ++comms_freed;
    return MPI_SUCCESS;
}

int main(int argc, char **argv) {
    hympi::environment env(argc, argv, hympi::thread_level::multiple);
    hympi::comm world = hympi::comm::world();
    const int r = world.rank(), n = world.size();
    const int right = (r + 1) % n, left = (r + n - 1) % n;
    if (env.provided() != hympi::thread_level::multiple) {
        std::printf("MTEST_SKIP: MPI_THREAD_MULTIPLE not provided\n");
        cxxtest::finish();
        return 0;
    }
    int kv = MPI_KEYVAL_INVALID;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, count_free, &kv, nullptr);

    const int nthreads = 2;
    hympi::info hints{{"mpi_assert_no_any_source", "true"},
                      {"mpi_assert_no_any_tag", "true"},
                      {"mpi_assert_allow_overtaking", "true"}};
    std::vector<MPI_Comm> handles(nthreads, MPI_COMM_NULL);
    std::atomic<int> thread_errors{0};
    for (int round = 0; round < 3; ++round) {
#pragma omp parallel num_threads(nthreads)
        {
            const int t = omp_get_thread_num();
            try {
                hympi::comm tc = round == 1 ? hympi::omp::thread_comm(world) : hympi::omp::thread_comm(world, hints);
                MPI_Comm_set_attr(tc, kv, nullptr);
                TCHECK(tc.owned() && tc.size() == n && tc.rank() == r && tc.compare(world) == MPI_CONGRUENT);
                handles[static_cast<std::size_t>(t)] = tc.native();
#pragma omp barrier
                if (t == 0 && omp_get_num_threads() == nthreads) {
                    int cmp = -1;
                    MPI_Comm_compare(handles[0], handles[1], &cmp);
                    TCHECK(cmp == MPI_CONGRUENT);
                }
#pragma omp barrier // neither communicator is freed before the comparison
                if (round != 1) {
                    hympi::info got = tc.get_info();
                    for (const char *key : {"mpi_assert_no_any_source", "mpi_assert_no_any_tag", "mpi_assert_allow_overtaking"}) {
                        std::optional<std::string> v = got.get(key);
#ifdef HYMPI
                        TCHECK(v == std::optional<std::string>("true")); // hympi keeps every mpi_assert_* hint
#else
                        TCHECK(!v || *v == "true");
#endif
                    }
                }
                // Concurrent ring on every thread's own communicator, same tag everywhere: a
                // message can only reach the same thread number on the right rank.
                for (int i = 0; i < 50; ++i) {
                    std::array<int, 3> out{r, t, i}, in{-1, -1, -1};
                    tc.sendrecv(out, right, 7, in, left, 7);
                    TCHECK(in[0] == left && in[1] == t && in[2] == i);
                }
                std::vector<long> big(5000, t * 10 + r), got(5000);
                hympi::request rq = tc.irecv(got, left, 8);
                tc.send(big, right, 8);
                rq.wait();
                TCHECK(got == std::vector<long>(5000, t * 10 + left));
                TCHECK(tc.allreduce(t + 1, std::plus<>()) == n * (t + 1));
            } catch (const std::exception &e) {
                std::printf("[%d] thread %d: %s\n", r, t, e.what());
                ++thread_errors;
            }
        }
        CHECK_EQ(comms_freed.load(), nthreads * (round + 1));
    }
    CHECK_EQ(thread_errors.load(), 0);

    // Outside a parallel region: a team of one.
    {
        hympi::comm solo = hympi::omp::thread_comm(world, hints);
        CHECK_EQ(solo.size(), n);
        CHECK_EQ(solo.compare(world), MPI_CONGRUENT);
    }

    MPI_Comm_free_keyval(&kv);
    world.barrier();
    cxxtest::finish();
    return 0;
}
