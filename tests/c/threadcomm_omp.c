/* threadcomm_omp: MPICH's thread communicators used the way MPICH documents them, inside an
 * OpenMP parallel region (hympi implements MPIX_Threadcomm_*; other libraries skip).
 * Every rank runs NT = 1 + rank % 3 threads (MTEST_TC_THREADS overrides); each thread is a
 * rank of the thread communicator and
 *  - checks rank/size (ranks of one process are distinct and contiguous);
 *  - exchanges its rank around a ring with MPI_Sendrecv;
 *  - sums ranks with MPI_Allreduce and broadcasts a value from the last rank;
 *  - sends a tagged message to every other rank and receives them with MPI_ANY_SOURCE.
 * Two parallel regions reuse the same thread communicator. */
/* mtest-cflags: -fopenmp */
#include "mtest.h"
#include <omp.h>

#ifdef HYMPI
#include "hympi_mpix.h"
#endif

int main(int argc, char **argv)
{
    int provided, errs = 0;
    MTest_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
#ifndef HYMPI
    MTest_Skip("MPIX_Threadcomm_* are not in this MPI library's release");
    return MTest_Finalize(0);
#else
    if (provided < MPI_THREAD_MULTIPLE) {
        MTest_Skip("MPI_THREAD_MULTIPLE not provided");
        return MTest_Finalize(0);
    }
    int nt = getenv("MTEST_TC_THREADS") ? atoi(getenv("MTEST_TC_THREADS")) : 1 + mtest_rank % 3;
    int total = 0, first = 0;
    MPI_Allreduce(&nt, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Exscan(&nt, &first, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (mtest_rank == 0)
        first = 0;
    MPI_Comm tc;
    CHECK_RC(MPIX_Threadcomm_init(MPI_COMM_WORLD, nt, &tc), "MPIX_Threadcomm_init");
    for (int region = 0; region < 2; region++) {
#pragma omp parallel num_threads(nt) reduction(+ : errs)
        {
            MPIX_Threadcomm_start(tc);
            int rank = -1, size = -1;
            MPI_Comm_rank(tc, &rank);
            MPI_Comm_size(tc, &size);
            if (size != total || rank < first || rank >= first + nt)
                errs++;
            int right = (rank + 1) % size, left = (rank + size - 1) % size, got = -1;
            MPI_Sendrecv(&rank, 1, MPI_INT, right, 1, &got, 1, MPI_INT, left, 1, tc,
                         MPI_STATUS_IGNORE);
            if (got != left)
                errs++;
            long sum = 0, me = rank;
            MPI_Allreduce(&me, &sum, 1, MPI_LONG, MPI_SUM, tc);
            if (sum != (long)size * (size - 1) / 2)
                errs++;
            int b = rank == size - 1 ? 77 + region : -1;
            MPI_Bcast(&b, 1, MPI_INT, size - 1, tc);
            if (b != 77 + region)
                errs++;
            MPI_Request *reqs = malloc(sizeof(MPI_Request) * (size_t)size);
            int n = 0;
            for (int d = 0; d < size; d++)
                if (d != rank)
                    MPI_Isend(&rank, 1, MPI_INT, d, 5, tc, &reqs[n++]);
            int seen = 0;
            for (int i = 0; i < size - 1; i++) {
                int v = -1;
                MPI_Status st;
                MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, 5, tc, &st);
                if (v != st.MPI_SOURCE || v == rank)
                    errs++;
                seen++;
            }
            MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
            free(reqs);
            if (seen != size - 1)
                errs++;
            MPIX_Threadcomm_finish(tc);
        }
    }
    CHECK_RC(MPIX_Threadcomm_free(&tc), "MPIX_Threadcomm_free");
    return MTest_Finalize(errs);
#endif
}
