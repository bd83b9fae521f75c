/* comm_split_type: MPI_Comm_split_type.
 *
 * Every process learns every other's processor name (MPI_Get_processor_name, exchanged by
 * point-to-point), so that the checks hold on several nodes too: processes with the same
 * name are taken to be on the same node.
 *  - MPI_COMM_TYPE_SHARED: the members are exactly the processes of this node, ordered by
 *    key (= world rank, then reversed keys); with some processes passing MPI_UNDEFINED
 *    those get MPI_COMM_NULL and the others a communicator without them; a split of
 *    MPI_COMM_SELF has size 1.
 *  - MPI_COMM_TYPE_HW_GUIDED (MPI-4.0) with info mpi_hw_resource_type =
 *    "mpi_shared_memory": the same members as MPI_COMM_TYPE_SHARED (MPI-4.0 section 7.4.2);
 *    with "hwloc://NUMANode" and "hwloc://Package": either MPI_COMM_NULL (the process is not
 *    restricted to one such object) or a communicator whose members are all on this node,
 *    ordered by key, agree on its size, and are a subset of the parent.
 *  - MPI_COMM_TYPE_HW_UNGUIDED (MPI-4.0): MPI_COMM_NULL, or a communicator that is a strict
 *    subset of the parent (section 7.4.2: "a strict subset"), members on this node.
 *  - split_type MPI_UNDEFINED everywhere: MPI_COMM_NULL.
 * The hardware parts run with MPI_ERRORS_RETURN: an MPI that does not know a split type or
 * resource name may return an error (then that part is skipped and said so), since the
 * standard leaves the supported resource types to the implementation. */
#include "mtest.h"
#include "mtest_comm.h"

#define MAXP 64
#define TAG_NAME 40

static char names[MAXP][MPI_MAX_PROCESSOR_NAME];

static void exchange_names(void)
{
    char mine[MPI_MAX_PROCESSOR_NAME];
    int len = 0;
    memset(mine, 0, sizeof mine);
    MPI_Get_processor_name(mine, &len);
    MPI_Request reqs[2 * MAXP];
    int nr = 0;
    for (int r = 0; r < mtest_size; r++) {
        if (r == mtest_rank) {
            memcpy(names[r], mine, sizeof mine);
            continue;
        }
        MPI_Irecv(names[r], MPI_MAX_PROCESSOR_NAME, MPI_CHAR, r, TAG_NAME, MPI_COMM_WORLD, &reqs[nr++]);
        MPI_Isend(mine, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, r, TAG_NAME, MPI_COMM_WORLD, &reqs[nr++]);
    }
    MPI_Waitall(nr, reqs, MPI_STATUSES_IGNORE);
}

/* World ranks on my node, in world-rank order (reversed if rev), among those with part[r]. */
static int node_members(const int *part, int rev, int *out)
{
    int n = 0;
    for (int i = 0; i < mtest_size; i++) {
        int r = rev ? mtest_size - 1 - i : i;
        if (part[r] && strcmp(names[r], names[mtest_rank]) == 0)
            out[n++] = r;
    }
    return n;
}

/* A communicator from a hardware split whose exact members are not known in advance: every
 * member sends its world rank around the ring; each checks its neighbours are on this node
 * and ordered by key (world rank); sizes agree; it is a subset of the parent (WORLD here),
 * a strict one when strict. */
static void check_hw_comm(MPI_Comm c, int strict, const char *what)
{
    int size = -1, rank = -1, wrank = mtest_rank;
    MPI_Comm_size(c, &size);
    MPI_Comm_rank(c, &rank);
    CHECK(size >= 1 && size <= mtest_size, "%s: size %d (parent %d)", what, size, mtest_size);
    if (strict)
        CHECK(size < mtest_size, "%s: size %d is not a strict subset of %d", what, size,
              mtest_size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out[2] = {wrank, size}, in[2] = {-1, -1};
    int rc = MPI_Sendrecv(out, 2, MPI_INT, right, 41, in, 2, MPI_INT, left, 41, c, MPI_STATUS_IGNORE);
    CHECK_RC(rc, "MPI_Sendrecv (hw ring)");
    CHECK(in[1] == size, "%s: left neighbour says size %d, mine %d", what, in[1], size);
    CHECK(in[0] >= 0 && in[0] < mtest_size && strcmp(names[in[0]], names[wrank]) == 0,
          "%s: neighbour world rank %d is not on this node", what, in[0]);
    if (size > 1)
        CHECK(rank == 0 ? in[0] > wrank : in[0] < wrank,
              "%s: not ordered by key: rank %d (world %d) has left neighbour world %d", what, rank,
              wrank, in[0]);
}

#if MPI_VERSION >= 4
/* One MPI_COMM_TYPE_HW_GUIDED split with the given resource type. */
static void hw_guided(const char *type, int *shared_members, int nshared)
{
    MPI_Info info;
    MPI_Comm c = MPI_COMM_NULL;
    char what[128];
    snprintf(what, sizeof what, "HW_GUIDED %s", type);
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_hw_resource_type", type);
    int rc = MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, mtest_rank, info, &c);
    MPI_Info_free(&info);
    if (rc != MPI_SUCCESS) {
        if (mtest_rank == 0)
            printf("MTEST_INFO: %s not supported (%s)\n", what, MTest_Describe(rc));
        return;
    }
    if (shared_members) {
        /* "mpi_shared_memory" is defined as MPI_COMM_TYPE_SHARED. */
        MTest_Check_members(c, shared_members, nshared, what);
    } else if (c != MPI_COMM_NULL) {
        check_hw_comm(c, 0, what);
    } else if (mtest_rank == 0) {
        printf("MTEST_INFO: %s gave MPI_COMM_NULL\n", what);
    }
    if (c != MPI_COMM_NULL) {
        /* The info of the result may say the type: if it does, it is the one asked for. */
        MPI_Info got = MPI_INFO_NULL;
        char val[256];
        int flag = 0;
        if (MPI_Comm_get_info(c, &got) == MPI_SUCCESS && got != MPI_INFO_NULL) {
            MPI_Info_get(got, "mpi_hw_resource_type", sizeof val - 1, val, &flag);
            if (flag)
                CHECK(strcmp(val, type) == 0, "%s: info of the result says type '%s'", what, val);
            MPI_Info_free(&got);
        }
        MTest_Free_comm(&c, "MPI_Comm_free (hw guided)");
    }
}
#endif

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    int size = mtest_size, rank = mtest_rank, rc;
    if (size > MAXP) {
        printf("at most %d ranks\n", MAXP);
        return MTest_Finalize(1);
    }
    exchange_names();
    int all[MAXP], evens[MAXP], exp[MAXP], n;
    for (int i = 0; i < size; i++) {
        all[i] = 1;
        evens[i] = i % 2 == 0;
    }

    /* SHARED, key = rank, then reversed keys. */
    MPI_Comm c = MPI_COMM_NULL;
    rc = MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &c);
    CHECK_RC(rc, "MPI_Comm_split_type(SHARED)");
    int shared[MAXP], nshared = node_members(all, 0, shared);
    MTest_Check_members(c, shared, nshared, "SHARED");
    MTest_Free_comm(&c, "MPI_Comm_free (SHARED)");

    rc = MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, -rank, MPI_INFO_NULL, &c);
    CHECK_RC(rc, "MPI_Comm_split_type(SHARED, reversed)");
    n = node_members(all, 1, exp);
    MTest_Check_members(c, exp, n, "SHARED reversed");
    MTest_Free_comm(&c, "MPI_Comm_free (SHARED reversed)");

    /* SHARED on evens, MPI_UNDEFINED on odds. */
    rc = MPI_Comm_split_type(MPI_COMM_WORLD, rank % 2 ? MPI_UNDEFINED : MPI_COMM_TYPE_SHARED, 0,
                             MPI_INFO_NULL, &c);
    CHECK_RC(rc, "MPI_Comm_split_type(SHARED / MPI_UNDEFINED)");
    if (rank % 2) {
        CHECK(c == MPI_COMM_NULL, "MPI_UNDEFINED split type did not give MPI_COMM_NULL");
    } else {
        n = node_members(evens, 0, exp);
        MTest_Check_members(c, exp, n, "SHARED on evens");
        MTest_Free_comm(&c, "MPI_Comm_free (SHARED evens)");
    }

    /* MPI_UNDEFINED everywhere. */
    rc = MPI_Comm_split_type(MPI_COMM_WORLD, MPI_UNDEFINED, 0, MPI_INFO_NULL, &c);
    CHECK_RC(rc, "MPI_Comm_split_type(MPI_UNDEFINED)");
    CHECK(c == MPI_COMM_NULL, "MPI_UNDEFINED split type did not give MPI_COMM_NULL");

    /* SHARED of SELF and of a dup. */
    rc = MPI_Comm_split_type(MPI_COMM_SELF, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &c);
    CHECK_RC(rc, "MPI_Comm_split_type(SELF, SHARED)");
    {
        int me[1] = {rank};
        MTest_Check_members(c, me, 1, "SHARED of SELF");
        MTest_Free_comm(&c, "MPI_Comm_free (SHARED of SELF)");
    }

    /* Hardware-guided and unguided splits. */
    MTest_Errors_return(MPI_COMM_WORLD);
#if MPI_VERSION >= 4
    hw_guided("mpi_shared_memory", shared, nshared);
    hw_guided("hwloc://NUMANode", NULL, 0);
    hw_guided("hwloc://Package", NULL, 0);

    c = MPI_COMM_NULL;
    MPI_Info uinfo;
    MPI_Info_create(&uinfo);
    rc = MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, rank, uinfo, &c);
    if (rc != MPI_SUCCESS) {
        if (rank == 0)
            printf("MTEST_INFO: HW_UNGUIDED not supported (%s)\n", MTest_Describe(rc));
    } else if (c != MPI_COMM_NULL) {
        CHECK(size > 1, "HW_UNGUIDED at one process must give MPI_COMM_NULL (no strict subset)");
        check_hw_comm(c, 1, "HW_UNGUIDED");
        /* The info argument is INOUT: it names the resource type of the new communicator. */
        char rtype[MPI_MAX_INFO_VAL + 1];
        int rlen = MPI_MAX_INFO_VAL, rflag = 0;
        MPI_Info_get_string(uinfo, "mpi_hw_resource_type", &rlen, rtype, &rflag);
        CHECK(rflag && rtype[0], "HW_UNGUIDED did not set mpi_hw_resource_type in its info");
        MTest_Free_comm(&c, "MPI_Comm_free (HW_UNGUIDED)");
    } else if (rank == 0) {
        printf("MTEST_INFO: HW_UNGUIDED gave MPI_COMM_NULL\n");
    }
    MPI_Info_free(&uinfo);
#else
    if (rank == 0)
        printf("MTEST_INFO: MPI_VERSION %d: no MPI_COMM_TYPE_HW_GUIDED/UNGUIDED\n", MPI_VERSION);
#endif
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    return MTest_Finalize(0);
}
