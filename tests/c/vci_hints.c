/* vci_hints: MPICH's communicator VCI hints ("vci", "receiver_vci", "sender_vci",
 * "inherit_vci") are accepted, kept by MPI_Comm_get_info, and traffic stays correct when a
 * hint moves a communicator to another VCI, including messages that were already waiting
 * (posted receives and unexpected messages move with it). Any MPI must pass: others may
 * ignore the keys (then MPI_Comm_get_info need not return them). */
#include "mtest.h"

static int is_hympi(void)
{
#ifdef HYMPI
    return 1;
#else
    return 0;
#endif
}

static void check_key(MPI_Comm c, const char *key, const char *want)
{
    MPI_Info used;
    char val[64] = "";
    int flag = 0, len = sizeof val;
    MPI_Comm_get_info(c, &used);
    MPI_Info_get_string(used, key, &len, val, &flag);
    if (is_hympi())
        CHECK(flag && strcmp(val, want) == 0, "get_info %s: flag %d value '%s', want '%s'", key,
              flag, val, want);
    MPI_Info_free(&used);
}

/* A ring exchange, a self message through the fast paths, and wildcard receives on c. */
static void traffic(MPI_Comm c, int tag)
{
    int rank, size, got = -1;
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Sendrecv(&rank, 1, MPI_INT, right, tag, &got, 1, MPI_INT, left, tag, c,
                 MPI_STATUS_IGNORE);
    CHECK(got == left, "ring tag %d: got %d, want %d", tag, got, left);
    MPI_Request r[2];
    int in = -1, v = rank * 10 + tag;
    MPI_Irecv(&in, 1, MPI_INT, rank, tag, c, &r[0]);
    MPI_Isend(&v, 1, MPI_INT, rank, tag, c, &r[1]);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    CHECK(in == v, "self tag %d: got %d, want %d", tag, in, v);
    if (rank != 0) {
        MPI_Send(&rank, 1, MPI_INT, 0, tag + 1, c);
    } else {
        int seen = 0;
        for (int i = 1; i < size; i++) {
            MPI_Status st;
            MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, tag + 1, c, &st);
            CHECK(got == st.MPI_SOURCE, "wildcard tag %d: %d from %d", tag, got, st.MPI_SOURCE);
            seen |= 1 << got;
        }
        CHECK(seen == ((1 << size) - 2), "wildcard tag %d: sources %#x", tag, seen);
    }
}

int main(int argc, char **argv)
{
    int provided;
    MTest_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    int rank = mtest_rank, size = mtest_size;
    MPI_Info info;
    MPI_Comm a, b;

    MPI_Info_create(&info);
    MPI_Info_set(info, "vci", "3");
    MPI_Info_set(info, "sender_vci", "2");
    MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &a);
    MPI_Info_free(&info);
    check_key(a, "vci", "3");
    check_key(a, "sender_vci", "2");
    traffic(a, 10);

    /* Messages waiting on a when its VCI changes: a posted receive (from the left) and an
     * unexpected message (from the right, sent before this rank sets the hint). */
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    int posted = -1, early = -1, v1 = rank, v2 = rank + 100;
    MPI_Request pr, er;
    MPI_Irecv(&posted, 1, MPI_INT, left, 20, a, &pr);
    MPI_Isend(&v2, 1, MPI_INT, left, 21, a, &er); /* lands unexpected at the left neighbour */
    MPI_Barrier(MPI_COMM_WORLD);            /* every early message is on its way */
    MPI_Info_create(&info);
    MPI_Info_set(info, "receiver_vci", "1");
    MPI_Comm_set_info(a, info);
    MPI_Info_free(&info);
    check_key(a, "receiver_vci", "1");
    MPI_Send(&v1, 1, MPI_INT, right, 20, a);
    MPI_Wait(&pr, MPI_STATUS_IGNORE);
    MPI_Recv(&early, 1, MPI_INT, right, 21, a, MPI_STATUS_IGNORE);
    MPI_Wait(&er, MPI_STATUS_IGNORE);
    CHECK(posted == left, "posted receive across set_info: %d, want %d", posted, left);
    CHECK(early == right + 100, "early message across set_info: %d, want %d", early,
          right + 100);
    traffic(a, 30);

    MPI_Info_create(&info);
    MPI_Info_set(info, "inherit_vci", "true");
    MPI_Comm_dup_with_info(a, info, &b);
    MPI_Info_free(&info);
    check_key(b, "inherit_vci", "true");
    traffic(b, 40);
    traffic(a, 50);

    MPI_Comm_free(&b);
    MPI_Comm_free(&a);
    return MTest_Finalize(0);
}
