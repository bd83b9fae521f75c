/* split_resource.c: MPI_Comm_split_type with MPI_COMM_TYPE_RESOURCE_GUIDED (MPI-4.1), led
 * by the process set name in info key "mpi_pset_name" (mpi://WORLD: everyone together;
 * mpi://SELF: each process alone; an unknown name: MPI_COMM_NULL), or else by
 * "mpi_hw_resource_type" as MPI_COMM_TYPE_HW_GUIDED. */
#include "mtest.h"

#if MPI_VERSION > 4 || (MPI_VERSION == 4 && MPI_SUBVERSION >= 1)
static MPI_Comm split(MPI_Comm parent, const char *key, const char *value)
{
    MPI_Info info;
    MPI_Comm c = MPI_COMM_NULL;
    MPI_Info_create(&info);
    MPI_Info_set(info, key, value);
    CHECK_RC(MPI_Comm_split_type(parent, MPI_COMM_TYPE_RESOURCE_GUIDED, 0, info, &c), value);
    MPI_Info_free(&info);
    return c;
}
#endif

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
#if MPI_VERSION > 4 || (MPI_VERSION == 4 && MPI_SUBVERSION >= 1)
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int size = -1, rank = -1;
    MPI_Comm c = split(MPI_COMM_WORLD, "mpi_pset_name", "mpi://WORLD");
    CHECK(c != MPI_COMM_NULL, "mpi://WORLD gave MPI_COMM_NULL");
    if (c != MPI_COMM_NULL) {
        MPI_Comm_size(c, &size);
        MPI_Comm_rank(c, &rank);
        CHECK(size == mtest_size && rank == mtest_rank, "mpi://WORLD: rank %d of %d", rank,
              size);
        MPI_Comm_free(&c);
    }
    c = split(MPI_COMM_WORLD, "mpi_pset_name", "mpi://SELF");
    CHECK(c != MPI_COMM_NULL, "mpi://SELF gave MPI_COMM_NULL");
    if (c != MPI_COMM_NULL) {
        MPI_Comm_size(c, &size);
        CHECK(size == 1, "mpi://SELF: size %d", size);
        MPI_Comm_free(&c);
    }
    c = split(MPI_COMM_WORLD, "mpi_pset_name", "mpi://no-such-set");
    CHECK(c == MPI_COMM_NULL, "an unknown process set gave a communicator");
    if (c != MPI_COMM_NULL)
        MPI_Comm_free(&c);
    /* A process set within a smaller parent: the parent's processes only. */
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, mtest_rank % 2, mtest_rank, &half);
    c = split(half, "mpi_pset_name", "mpi://WORLD");
    if (c != MPI_COMM_NULL) {
        int hs;
        MPI_Comm_size(half, &hs);
        MPI_Comm_size(c, &size);
        CHECK(size == hs, "mpi://WORLD in a half: size %d, the half has %d", size, hs);
        MPI_Comm_free(&c);
    }
    MPI_Comm_free(&half);
    /* The hardware form: everyone on this machine shares its memory. */
    c = split(MPI_COMM_WORLD, "mpi_hw_resource_type", "mpi_shared_memory");
    CHECK(c != MPI_COMM_NULL, "mpi_shared_memory gave MPI_COMM_NULL");
    if (c != MPI_COMM_NULL) {
        MPI_Comm shm;
        int s2;
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shm);
        MPI_Comm_size(c, &size);
        MPI_Comm_size(shm, &s2);
        CHECK(size == s2, "resource-guided shared memory: size %d, MPI_COMM_TYPE_SHARED %d",
              size, s2);
        MPI_Comm_free(&shm);
        MPI_Comm_free(&c);
    }
#else
    MTest_Skip("MPI_COMM_TYPE_RESOURCE_GUIDED is MPI-4.1");
#endif
    return MTest_Finalize(mtest_errors);
}
