// halo_cxx: the 3D 7-point stencil of halo_thread_comm.c, written with hympi's C++ API.
//
// The problem, the decomposition and the checksum are halo_common.h's, in C++ form in
// halo_common.hpp; the printed checksum equals that of halo_legacy and halo_thread_comm.
// As in halo_thread_comm.c, under MPI_THREAD_MULTIPLE every OpenMP thread exchanges its own part
// of the halo on its own communicator, at the same time as the other threads:
//
//  - hympi::omp::thread_comm gives thread t of every rank the t-th duplicate of the Cartesian
//    communicator, with the hints of hympi::region_hints (no wildcards, exact lengths,
//    overtaking allowed, one thread per communicator);
//  - thread t owns the x planes [i0, i1) of the block: it exchanges the y and z faces of its
//    slab and part t of the two x faces (cut by rows of y, alike on both sides of a boundary);
//  - each face part is a subarray datatype (hympi::datatype, freed by its destructor) laid over
//    the field's std::vector: comm::isend/irecv(field, layout, rank, tag) check that the layout
//    lies inside the vector and MPI packs and unpacks; hympi::waitall completes the 12 requests;
//  - tags are direction + 6 * (iteration parity): overtaking is allowed, and a thread is never
//    two iterations ahead of its neighbour.
//
// Errors are exceptions (hympi::error, with the MPI error class); one escaping a parallel region
// reaches std::terminate, where hympi's environment prints it and aborts the whole job.
//
// Build and run: hympicxx -std=c++17 -O2 -fopenmp halo_cxx.cpp -o halo_cxx
//                OMP_NUM_THREADS=2 hympiexec -n 2 ./halo_cxx [NX NY NZ ITERS]
// (or through CMake: target_link_libraries(halo_cxx PRIVATE hympi::cxx OpenMP::OpenMP_CXX)).
#include "halo_common.hpp"

#include <omp.h>

namespace {

/// One face part of a thread: the box [b, e) of local indices, as a datatype over the field.
/// An empty box (a slab thinner than the team) is a zero-count message of doubles, so that the
/// two sides of every boundary still post matching pairs.
struct face {
    hympi::datatype layout;
    bool empty = true;
};

face make_face(const halo::grid &g, const std::array<int, 3> &b, const std::array<int, 3> &e) {
    face f;
    std::vector<int> sub(3), start(3);
    for (int d = 0; d < 3; ++d) {
        sub[static_cast<std::size_t>(d)] = e[static_cast<std::size_t>(d)] - b[static_cast<std::size_t>(d)];
        start[static_cast<std::size_t>(d)] = b[static_cast<std::size_t>(d)];
        if (sub[static_cast<std::size_t>(d)] <= 0)
            return f;
    }
    f.layout = hympi::datatype::subarray(g.extents(), sub, start, hympi::datatype::of<double>()).commit();
    f.empty = false;
    return f;
}

/// A thread's part of the halo: for each of the 6 directions s (2d: low side of axis d, 2d+1:
/// high side) the interior box it sends and the ghost box it receives.
struct part {
    std::array<face, 6> send, recv;

    part(const halo::grid &g, int t, int nthreads) {
        const auto [i0, i1] = g.slab(t, nthreads);
        const auto [n1, o1] = halo::block(g.n[1], nthreads, t); // rows of y: part t of the x faces
        for (int s = 0; s < 6; ++s) {
            const int d = s / 2;
            const bool high = s % 2;
            // Slab on x, rows [1+o1, 1+o1+n1) on y for the x faces, the whole interior otherwise.
            std::array<int, 3> b{i0, 1, 1}, e{i1, g.n[1] + 1, g.n[2] + 1};
            if (d == 0) {
                b[1] = 1 + o1;
                e[1] = 1 + o1 + n1;
            }
            // Axis d is one plane thick: the first/last interior plane, or the ghost beyond it.
            std::array<int, 3> sb = b, se = e, rb = b, re = e;
            sb[static_cast<std::size_t>(d)] = high ? g.n[static_cast<std::size_t>(d)] : 1;
            rb[static_cast<std::size_t>(d)] = high ? g.n[static_cast<std::size_t>(d)] + 1 : 0;
            se[static_cast<std::size_t>(d)] = sb[static_cast<std::size_t>(d)] + 1;
            re[static_cast<std::size_t>(d)] = rb[static_cast<std::size_t>(d)] + 1;
            send[static_cast<std::size_t>(s)] = make_face(g, sb, se);
            recv[static_cast<std::size_t>(s)] = make_face(g, rb, re);
        }
    }
};

/// Neighbour rank in direction s.
int neighbour(const halo::grid &g, int s) { return s % 2 ? g.hi[static_cast<std::size_t>(s / 2)] : g.lo[static_cast<std::size_t>(s / 2)]; }

/// This thread's exchange on its communicator tc at iteration it: the message travelling in
/// direction s has tag s + 6 * (it % 2); the one arriving from direction s travelled in s ^ 1.
void exchange(const halo::grid &g, const part &p, const hympi::comm &tc, std::vector<double> &u, int it,
              std::vector<hympi::request> &reqs) {
    const int parity = 6 * (it % 2);
    reqs.clear();
    for (int s = 0; s < 6; ++s) {
        const face &f = p.recv[static_cast<std::size_t>(s)];
        const int src = neighbour(g, s), tag = (s ^ 1) + parity;
        reqs.push_back(f.empty ? tc.irecv(u.data(), 0, MPI_DOUBLE, src, tag) : tc.irecv(u, f.layout, src, tag));
    }
    for (int s = 0; s < 6; ++s) {
        const face &f = p.send[static_cast<std::size_t>(s)];
        const int dst = neighbour(g, s), tag = s + parity;
        reqs.push_back(f.empty ? tc.isend(u.data(), 0, MPI_DOUBLE, dst, tag) : tc.isend(u, f.layout, dst, tag));
    }
    hympi::waitall(reqs);
}

} // namespace

int main(int argc, char **argv) {
    hympi::environment env(argc, argv, hympi::thread_level::multiple);
    if (env.provided() != hympi::thread_level::multiple) {
        std::fprintf(stderr, "MPI_THREAD_MULTIPLE not provided\n");
        hympi::environment::abort(1);
    }
    hympi::comm world = hympi::comm::world();
    halo::grid g(world, argc, argv);
    std::vector<double> stamp(static_cast<std::size_t>(g.iters) + 1);

    // Every rank must run teams of the same size: thread t talks to thread t of its neighbours.
    const int nthreads = omp_get_max_threads();
    if (g.cart.allreduce(nthreads, hympi::min()) != g.cart.allreduce(nthreads, hympi::max())) {
        if (g.rank == 0)
            std::fprintf(stderr, "halo_cxx: OMP_NUM_THREADS differs between ranks\n");
        world.abort(1);
    }
    using hympi::hint;
    const hympi::info hints = hympi::region_hints(hint::no_any_source | hint::no_any_tag | hint::exact_length |
                                                  hint::allow_overtaking | hint::per_thread);

#pragma omp parallel num_threads(nthreads)
    {
        const int t = omp_get_thread_num();
        hympi::comm tc = hympi::omp::thread_comm(g.cart, hints);
        const part p(g, t, nthreads);
        const auto [i0, i1] = g.slab(t, nthreads);
        std::vector<double> *u = &g.u, *v = &g.v;
        std::vector<hympi::request> reqs;
        reqs.reserve(12);
#pragma omp barrier
#pragma omp master
        {
            g.cart.barrier();
            stamp[0] = hympi::environment::wtime();
        }
#pragma omp barrier
        for (int it = 0; it < g.iters; ++it) {
            exchange(g, p, tc, *u, it, reqs); // every thread at once, on its own communicator
#pragma omp barrier
            g.sweep(u->data(), v->data(), i0, i1);
#pragma omp barrier
            std::swap(u, v);
#pragma omp master
            stamp[static_cast<std::size_t>(it) + 1] = hympi::environment::wtime();
        }
    } // tc and the face datatypes are freed here, by each thread

    // Every thread swapped alike: after an odd number of sweeps the newest field is v.
    const std::vector<double> &newest = g.iters % 2 ? g.v : g.u;
    const double sum = g.checksum(newest);
    g.report("halo_cxx", nthreads, stamp, sum);
    return 0;
}
