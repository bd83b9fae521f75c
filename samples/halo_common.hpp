// halo_common.hpp: the problem of halo_common.h, for the C++ sample halo_cxx.cpp, written with
// hympi's C++ API (include/hympi.hpp).
//
// The same 3D 7-point Jacobi stencil on an NX x NY x NZ grid with zero values outside the
// domain, the same decomposition (dims_create + a non-periodic Cartesian communicator, block
// distribution per axis, one ghost layer, x slowest), the same sweep expression summed in the
// same order, and the same checksum (the field gathered on rank 0 and summed in global index
// order). So halo_cxx prints, bit for bit, the checksum of halo_legacy and halo_thread_comm for
// the same arguments, whatever the number of ranks and threads and whatever the MPI library.
//
// Arguments: [NX NY NZ ITERS], default 128 96 80 100.
#ifndef HALO_COMMON_HPP
#define HALO_COMMON_HPP

#include <hympi.hpp>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace halo {

/// Block distribution: part c of p parts of N points is {count, offset}.
inline std::pair<int, int> block(int N, int p, int c) {
    const int b = N / p, r = N % p;
    return {b + (c < r), c * b + std::min(c, r)};
}

/// Deterministic initial value at global point (gi, gj, gk).
inline double init_value(int gi, int gj, int gk) { return static_cast<double>((gi * 31 + gj * 17 + gk * 7) % 97) / 97.0; }

/// The rank's block of the grid: its Cartesian communicator, extents, neighbours and the two
/// fields (current and next), each (n0+2) x (n1+2) x (n2+2) with zero ghosts.
struct grid {
    std::array<int, 3> global{}; ///< NX, NY, NZ
    int iters = 0;
    hympi::comm cart; ///< non-periodic 3D Cartesian communicator over all ranks
    int rank = 0, size = 0;
    std::vector<int> dims, coords;
    std::array<int, 3> n{};      ///< interior points of this rank per axis
    std::array<int, 3> off{};    ///< global index of this rank's first interior point per axis
    std::array<int, 3> lo{}, hi{}; ///< neighbour ranks per axis (hympi::proc_null at the edge)
    std::size_t stride_i = 0, stride_j = 0; ///< array strides of x and y; z is contiguous
    std::vector<double> u, v;

    /// Parses the arguments, builds the Cartesian communicator and both fields. A grid smaller
    /// than the process grid ends the job (MPI_Abort, code 2).
    grid(const hympi::comm &world, int argc, char **argv) {
        global = {argc > 1 ? std::atoi(argv[1]) : 128, argc > 2 ? std::atoi(argv[2]) : 96,
                  argc > 3 ? std::atoi(argv[3]) : 80};
        iters = argc > 4 ? std::atoi(argv[4]) : 100;
        dims = hympi::dims_create(world.size(), 3);
        cart = world.cart_create(dims); // not periodic, no reordering
        rank = cart.rank();
        size = cart.size();
        coords = cart.cart_coords();
        for (int d = 0; d < 3; ++d) {
            if (global[d] < dims[d] || iters < 0) {
                if (rank == 0)
                    std::fprintf(stderr, "grid %dx%dx%d too small for %dx%dx%d ranks\n", global[0], global[1],
                                 global[2], dims[0], dims[1], dims[2]);
                world.abort(2);
            }
            std::tie(n[d], off[d]) = block(global[d], dims[d], coords[d]);
            std::tie(lo[d], hi[d]) = cart.cart_shift(d, 1);
        }
        stride_j = static_cast<std::size_t>(n[2]) + 2;
        stride_i = stride_j * (static_cast<std::size_t>(n[1]) + 2);
        u.assign(stride_i * (static_cast<std::size_t>(n[0]) + 2), 0.0);
        v.assign(u.size(), 0.0);
        for (int i = 1; i <= n[0]; ++i)
            for (int j = 1; j <= n[1]; ++j)
                for (int k = 1; k <= n[2]; ++k)
                    u[idx(i, j, k)] = init_value(off[0] + i - 1, off[1] + j - 1, off[2] + k - 1);
    }

    /// Index of local point (i, j, k), ghosts at 0 and n+1.
    std::size_t idx(int i, int j, int k) const {
        return static_cast<std::size_t>(i) * stride_i + static_cast<std::size_t>(j) * stride_j + static_cast<std::size_t>(k);
    }

    /// The local array extents with ghosts, {n0+2, n1+2, n2+2} (for subarray datatypes).
    std::vector<int> extents() const { return {n[0] + 2, n[1] + 2, n[2] + 2}; }

    /// Planes [first, second) of the x axis (1-based interior indices): slab t of nthreads.
    std::pair<int, int> slab(int t, int nthreads) const {
        auto [cnt, o] = block(n[0], nthreads, t);
        return {1 + o, 1 + o + cnt};
    }

    /// One Jacobi sweep of planes [i0, i1): reads `in` (interior and ghosts), writes `out`'s
    /// interior. The expression and its order of summation are those of halo_common.h.
    void sweep(const double *__restrict__ in, double *__restrict__ out, int i0, int i1) const {
        const std::size_t si = stride_i, sj = stride_j;
        for (int i = i0; i < i1; ++i)
            for (int j = 1; j <= n[1]; ++j) {
                const double *c = in + idx(i, j, 0);
                double *o = out + idx(i, j, 0);
                for (int k = 1; k <= n[2]; ++k)
                    o[k] = 0.4 * c[k] +
                           0.1 * (((((c[k - si] + c[k + si]) + c[k - sj]) + c[k + sj]) + c[k - 1]) + c[k + 1]);
            }
    }

    /// Sum of the whole field `f`, in global index order, on rank 0 (0 elsewhere).
    double checksum(const std::vector<double> &f) const {
        std::vector<double> mine;
        mine.reserve(static_cast<std::size_t>(n[0]) * static_cast<std::size_t>(n[1]) * static_cast<std::size_t>(n[2]));
        for (int i = 1; i <= n[0]; ++i)
            for (int j = 1; j <= n[1]; ++j)
                for (int k = 1; k <= n[2]; ++k)
                    mine.push_back(f[idx(i, j, k)]);
        const std::vector<int> counts = cart.gather(static_cast<int>(mine.size()), 0);
        std::vector<double> all;
        cart.gatherv(mine, all, counts, 0);
        if (rank != 0)
            return 0.0;
        const std::size_t gy = static_cast<std::size_t>(global[1]), gz = static_cast<std::size_t>(global[2]);
        std::vector<double> field(static_cast<std::size_t>(global[0]) * gy * gz);
        const double *src = all.data();
        for (int r = 0; r < size; ++r) {
            const std::vector<int> c = cart.cart_coords(r);
            std::array<int, 3> bn{}, bo{};
            for (int d = 0; d < 3; ++d)
                std::tie(bn[d], bo[d]) = block(global[d], dims[d], c[d]);
            for (int i = 0; i < bn[0]; ++i)
                for (int j = 0; j < bn[1]; ++j)
                    for (int k = 0; k < bn[2]; ++k)
                        field[(static_cast<std::size_t>(bo[0] + i) * gy + static_cast<std::size_t>(bo[1] + j)) * gz +
                              static_cast<std::size_t>(bo[2] + k)] = *src++;
        }
        double sum = 0;
        for (double x : field)
            sum += x;
        return sum;
    }

    /// Prints the run's figures on rank 0 in the format of halo_common.h's halo_report: grid,
    /// layout, time per iteration (slowest rank's total / ITERS; median and best iteration of
    /// the per-iteration slowest rank), checksum. `stamp` holds ITERS + 1 wall-clock times.
    void report(const char *name, int nthreads, const std::vector<double> &stamp, double sum) const {
        const int it = iters;
        std::vector<double> d(static_cast<std::size_t>(it)), slowest;
        for (int k = 0; k < it; ++k)
            d[static_cast<std::size_t>(k)] = stamp[static_cast<std::size_t>(k) + 1] - stamp[static_cast<std::size_t>(k)];
        const double total_max = cart.reduce(stamp[static_cast<std::size_t>(it)] - stamp[0], hympi::max(), 0);
        cart.reduce(d, slowest, hympi::max(), 0);
        if (rank != 0)
            return;
        std::printf("%s: grid %dx%dx%d, %d ranks (%dx%dx%d) x %d threads, %d iterations\n", name, global[0], global[1],
                    global[2], size, dims[0], dims[1], dims[2], nthreads, it);
        if (it > 0) {
            std::sort(slowest.begin(), slowest.end());
            std::printf("time per iteration: %.3f us (median %.3f us, best %.3f us)\n", total_max / it * 1e6,
                        slowest[static_cast<std::size_t>(it - 1) / 2] * 1e6, slowest[0] * 1e6);
        }
        std::printf("checksum %.17g\n", sum);
    }
};

} // namespace halo

#endif // HALO_COMMON_HPP
