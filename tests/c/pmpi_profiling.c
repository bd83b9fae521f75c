/* pmpi_profiling: the profiling interface (MPI-5.0, chapter 15).
 *
 * The program defines its own MPI_Init, MPI_Send, MPI_Recv, MPI_Isend, MPI_Wait,
 * MPI_Allreduce, MPI_Barrier, MPI_Comm_rank and MPI_Wtime, as a profiling tool does: each
 * counts its calls and forwards to the PMPI_ name.  It must link (the library's own MPI_
 * names give way) and every call the program makes by the MPI_ name must reach the wrapper
 * once, with arguments and results (an int, a double) passed through.  Functions it does
 * not wrap (MPI_Comm_size, MPI_Sendrecv, the variadic MPI_Pcontrol) still work, and PMPI_
 * calls bypass the wrappers.  Rank r sends r+1 to rank r+1 around a ring, blocking and
 * nonblocking, then all ranks sum. */
#include "mtest.h"

static int n_init, n_send, n_recv, n_isend, n_wait, n_allreduce, n_barrier, n_rank, n_wtime;

int MPI_Init(int *argc, char ***argv)
{
    n_init++;
    return PMPI_Init(argc, argv);
}

int MPI_Send(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    n_send++;
    return PMPI_Send(buf, count, dt, dest, tag, comm);
}

int MPI_Recv(void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm,
             MPI_Status *status)
{
    n_recv++;
    return PMPI_Recv(buf, count, dt, src, tag, comm, status);
}

int MPI_Isend(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
              MPI_Request *request)
{
    n_isend++;
    return PMPI_Isend(buf, count, dt, dest, tag, comm, request);
}

int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    n_wait++;
    return PMPI_Wait(request, status);
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
                  MPI_Comm comm)
{
    n_allreduce++;
    return PMPI_Allreduce(sendbuf, recvbuf, count, dt, op, comm);
}

int MPI_Barrier(MPI_Comm comm)
{
    n_barrier++;
    return PMPI_Barrier(comm);
}

int MPI_Comm_rank(MPI_Comm comm, int *rank)
{
    n_rank++;
    return PMPI_Comm_rank(comm, rank);
}

double MPI_Wtime(void)
{
    n_wtime++;
    return PMPI_Wtime();
}

int main(int argc, char **argv)
{
    /* MTest_Init calls MPI_Init: the wrapper's. */
    MTest_Init(&argc, &argv);
    int init_calls = n_init;
    int size = mtest_size, rank = -1, rc;
    int base_send = n_send, base_recv = n_recv, base_rank = n_rank;

    rc = MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    CHECK_RC(rc, "MPI_Comm_rank");
    CHECK(rank == mtest_rank, "wrapped MPI_Comm_rank gave %d, want %d", rank, mtest_rank);
    CHECK(n_rank == base_rank + 1, "MPI_Comm_rank wrapper ran %d times, want 1", n_rank - base_rank);

    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int got = -1, out = rank + 1;
    MPI_Status st;
    if (size == 1) {
        /* A blocking send to oneself needs a posted receive (or buffering): the other side
         * of each goes through PMPI_ names, which no wrapper counts. */
        MPI_Request r;
        rc = PMPI_Irecv(&got, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, &r);
        CHECK_RC(rc, "PMPI_Irecv");
        rc = MPI_Send(&out, 1, MPI_INT, 0, 5, MPI_COMM_WORLD);
        CHECK_RC(rc, "MPI_Send");
        rc = PMPI_Wait(&r, MPI_STATUS_IGNORE);
        CHECK_RC(rc, "PMPI_Wait");
        rc = PMPI_Isend(&out, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, &r);
        CHECK_RC(rc, "PMPI_Isend");
        rc = MPI_Recv(&got, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, &st);
        CHECK_RC(rc, "MPI_Recv");
        rc = PMPI_Wait(&r, MPI_STATUS_IGNORE);
        CHECK_RC(rc, "PMPI_Wait");
    } else if (rank % 2 == 0) {
        rc = MPI_Send(&out, 1, MPI_INT, next, 5, MPI_COMM_WORLD);
        CHECK_RC(rc, "MPI_Send");
        rc = MPI_Recv(&got, 1, MPI_INT, prev, 5, MPI_COMM_WORLD, &st);
        CHECK_RC(rc, "MPI_Recv");
    } else {
        rc = MPI_Recv(&got, 1, MPI_INT, prev, 5, MPI_COMM_WORLD, &st);
        CHECK_RC(rc, "MPI_Recv");
        rc = MPI_Send(&out, 1, MPI_INT, next, 5, MPI_COMM_WORLD);
        CHECK_RC(rc, "MPI_Send");
    }
    CHECK(got == prev + 1, "ring value %d, want %d", got, prev + 1);
    CHECK(st.MPI_SOURCE == prev && st.MPI_TAG == 5, "status (%d, %d)", st.MPI_SOURCE, st.MPI_TAG);
    CHECK(n_send == base_send + 1, "MPI_Send wrapper ran %d times, want 1", n_send - base_send);
    CHECK(n_recv == base_recv + 1, "MPI_Recv wrapper ran %d times, want 1", n_recv - base_recv);

    /* Nonblocking ring: MPI_Isend and MPI_Wait wrapped, MPI_Irecv not. */
    MPI_Request rq, sq;
    got = -1;
    rc = MPI_Irecv(&got, 1, MPI_INT, prev, 6, MPI_COMM_WORLD, &rq);
    CHECK_RC(rc, "MPI_Irecv");
    rc = MPI_Isend(&out, 1, MPI_INT, next, 6, MPI_COMM_WORLD, &sq);
    CHECK_RC(rc, "MPI_Isend");
    rc = MPI_Wait(&sq, MPI_STATUS_IGNORE);
    CHECK_RC(rc, "MPI_Wait(send)");
    rc = MPI_Wait(&rq, &st);
    CHECK_RC(rc, "MPI_Wait(recv)");
    CHECK(got == prev + 1, "nonblocking ring value %d, want %d", got, prev + 1);
    CHECK(n_isend == 1 && n_wait == 2, "MPI_Isend / MPI_Wait wrappers ran %d / %d times, want 1 / 2",
          n_isend, n_wait);

    /* Unwrapped calls go to the library, wrapped collectives to the wrappers. */
    int sum = 0, sz = -1;
    rc = MPI_Comm_size(MPI_COMM_WORLD, &sz);
    CHECK_RC(rc, "MPI_Comm_size");
    CHECK(sz == size, "MPI_Comm_size %d, want %d", sz, size);
    rc = MPI_Sendrecv(&out, 1, MPI_INT, next, 7, &got, 1, MPI_INT, prev, 7, MPI_COMM_WORLD, &st);
    CHECK_RC(rc, "MPI_Sendrecv");
    CHECK(got == prev + 1, "sendrecv value %d, want %d", got, prev + 1);
    rc = MPI_Allreduce(&out, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK_RC(rc, "MPI_Allreduce");
    CHECK(sum == size * (size + 1) / 2, "sum %d, want %d", sum, size * (size + 1) / 2);
    rc = MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(rc, "MPI_Barrier");
    CHECK(n_allreduce == 1 && n_barrier == 1, "MPI_Allreduce / MPI_Barrier wrappers ran %d / %d times",
          n_allreduce, n_barrier);
    rc = MPI_Pcontrol(1);
    CHECK_RC(rc, "MPI_Pcontrol");

    /* A double result passes through the wrapper. */
    double t0 = MPI_Wtime(), t1 = PMPI_Wtime();
    CHECK(n_wtime == 1, "MPI_Wtime wrapper ran %d times, want 1", n_wtime);
    CHECK(t1 >= t0 && t1 - t0 < 60.0, "MPI_Wtime %g then PMPI_Wtime %g", t0, t1);

    CHECK(init_calls == 1, "MPI_Init wrapper ran %d times, want 1", init_calls);
    MTest_Finalize(mtest_errors);
    return 0;
}
