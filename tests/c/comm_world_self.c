/* comm_world_self: MPI_Comm_rank / MPI_Comm_size on MPI_COMM_WORLD and MPI_COMM_SELF.
 * WORLD: 0 <= rank < size, every rank held by exactly one process (checked by sending each
 * rank to rank 0), the size agrees everywhere.  SELF: size 1, rank 0.  MPI_COMM_NULL is an
 * invalid communicator: MPI_ERR_COMM.  A process started by the launcher (not spawned) has
 * no parent: MPI_Comm_get_parent gives MPI_COMM_NULL. */
#include "mtest.h"

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    int rank = -1, size = -1, rc;

    rc = MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK_RC(rc, "MPI_Comm_size(WORLD)");
    rc = MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    CHECK_RC(rc, "MPI_Comm_rank(WORLD)");
    CHECK(size >= 1, "WORLD size %d", size);
    CHECK(rank >= 0 && rank < size, "WORLD rank %d of %d", rank, size);

    int srank = -1, ssize = -1;
    rc = MPI_Comm_size(MPI_COMM_SELF, &ssize);
    CHECK_RC(rc, "MPI_Comm_size(SELF)");
    rc = MPI_Comm_rank(MPI_COMM_SELF, &srank);
    CHECK_RC(rc, "MPI_Comm_rank(SELF)");
    CHECK(ssize == 1, "SELF size %d", ssize);
    CHECK(srank == 0, "SELF rank %d", srank);

    /* Every rank is held once; the size is the same everywhere. */
    if (rank == 0) {
        char *seen = calloc(size, 1);
        seen[0] = 1;
        for (int i = 1; i < size; i++) {
            int msg[2];
            MPI_Status st;
            MPI_Recv(msg, 2, MPI_INT, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &st);
            CHECK(msg[0] == st.MPI_SOURCE, "rank %d says it is %d", st.MPI_SOURCE, msg[0]);
            CHECK(msg[1] == size, "rank %d says the size is %d, rank 0 says %d", msg[0], msg[1], size);
            if (CHECK(msg[0] > 0 && msg[0] < size, "rank %d out of range", msg[0])) {
                CHECK(!seen[msg[0]], "rank %d held twice", msg[0]);
                seen[msg[0]] = 1;
            }
        }
        free(seen);
    } else {
        int msg[2] = {rank, size};
        MPI_Send(msg, 2, MPI_INT, 0, 1, MPI_COMM_WORLD);
    }

    /* The size the launcher was asked for, when the runner tells it. */
    const char *np = getenv("MTEST_NP");
    if (np)
        CHECK(size == atoi(np), "size %d, launched with -n %s", size, np);

    /* MPI_COMM_NULL. */
    MTest_Errors_return_all();
    int x = -5;
    rc = MPI_Comm_rank(MPI_COMM_NULL, &x);
    CHECK_CLASS(rc, MPI_ERR_COMM, "MPI_Comm_rank(MPI_COMM_NULL)");
    rc = MPI_Comm_size(MPI_COMM_NULL, &x);
    CHECK_CLASS(rc, MPI_ERR_COMM, "MPI_Comm_size(MPI_COMM_NULL)");
    MPI_Comm parent = MPI_COMM_SELF;
    rc = MPI_Comm_get_parent(&parent);
    CHECK_RC(rc, "MPI_Comm_get_parent");
    CHECK(parent == MPI_COMM_NULL, "MPI_Comm_get_parent of a launched process is not MPI_COMM_NULL");
    return MTest_Finalize(0);
}
