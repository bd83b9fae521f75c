/* coll_nb_cross.c: a nonblocking collective pending across a blocking one, started on
 * different sides of it by different processes: the root starts MPI_Iallreduce and then
 * enters MPI_Barrier, the others enter the barrier first and then start the reduction (the
 * pattern of mpi4py's nonblocking agreement over MPI_Iallreduce). The standard asks for one
 * order of all collectives; MPICH and Open MPI match blocking and nonblocking collectives
 * apart, and so does hympi, so that such codes complete. Each root in turn, with the
 * reduction not complete before the others join. */
#include "mtest.h"

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    int rank = mtest_rank, size = mtest_size;
    for (int root = 0; root < size; root++) {
        int in, out = -1, flag = -1;
        MPI_Request rq;
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == root) {
            in = 0xB; /* 1011 */
            MPI_Iallreduce(&in, &out, 1, MPI_INT, MPI_BAND, MPI_COMM_WORLD, &rq);
            if (size > 1) {
                MPI_Test(&rq, &flag, MPI_STATUS_IGNORE);
                CHECK(!flag, "root %d: reduction complete before the others started it", root);
            }
            MPI_Barrier(MPI_COMM_WORLD);
        } else {
            in = 0xD; /* 1101 */
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_Iallreduce(&in, &out, 1, MPI_INT, MPI_BAND, MPI_COMM_WORLD, &rq);
        }
        if (!(rank == root && flag == 1))
            MPI_Wait(&rq, MPI_STATUS_IGNORE);
        int want = size > 1 ? 0x9 : 0xB;
        CHECK(out == want, "root %d: result %#x, expected %#x", root, out, want);
    }
    return MTest_Finalize(mtest_errors);
}
