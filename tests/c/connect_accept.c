/* connect_accept: MPI_Open_port, MPI_Comm_accept, MPI_Comm_connect, MPI_Close_port and
 * MPI_Comm_disconnect (MPI-5.0 §11.10) between the two halves of MPI_COMM_WORLD, each
 * half acting as its own group (the standard's client/server pattern, with the port name
 * passed through MPI_COMM_WORLD):
 *   - the intercommunicator's shape (MPI_Comm_test_inter, local and remote sizes, ranks);
 *   - point-to-point between every local rank and every remote rank, both ways, eager and
 *     large (1 MiB) messages;
 *   - intercommunicator collectives (MPI_Bcast from the accepting root, MPI_Allreduce);
 *   - MPI_Intercomm_merge (the accepting group first with high = 0 there), a collective on
 *     the merged communicator, then MPI_Comm_disconnect of both;
 *   - a second connection with the roots elsewhere than rank 0 (the last rank of each
 *     half, on a port of its own), then MPI_Close_port of both ports;
 *   - a third one through the name service: MPI_Publish_name (twice: MPI_ERR_SERVICE),
 *     MPI_Lookup_name, MPI_Unpublish_name (twice: MPI_ERR_SERVICE), after which the lookup
 *     gives MPI_ERR_NAME;
 *   - errors under MPI_ERRORS_RETURN: MPI_Comm_connect to a string that is no port and to
 *     a port already closed give MPI_ERR_PORT; MPI_Comm_accept on a closed port and
 *     MPI_Publish_name of it too; MPI_Lookup_name of a name never published: MPI_ERR_NAME.
 * At 1 rank the program only checks the errors that need no partner.
 * Other MPIs: skipped. Debian's MPICH 4.0 (ch4:ucx: "not supported with ucx netmod") and
 * Open MPI 4.1 ("runtime environment does not support accept/connect") cannot connect
 * processes on this machine, so these programs have no differential run; the same calls
 * between separately launched jobs are checked by tests/dynamic/run. */
#include "mtest.h"
#include <unistd.h>

#define BIG (1 << 20)

static int is_hympi;

/* Exchanges messages between every local rank and every remote rank of intercomm `ic`. */
static void check_traffic(MPI_Comm ic, int tagbase)
{
    int lrank, lsize, rsize;
    MPI_Comm_rank(ic, &lrank);
    MPI_Comm_size(ic, &lsize);
    MPI_Comm_remote_size(ic, &rsize);
    for (int r = 0; r < rsize; r++) {
        int out = 1000 * lrank + r, in = -1;
        MPI_Status st;
        int rc = MPI_Sendrecv(&out, 1, MPI_INT, r, tagbase, &in, 1, MPI_INT, r, tagbase, ic, &st);
        CHECK_RC(rc, "MPI_Sendrecv on the intercommunicator");
        CHECK(in == 1000 * r + lrank, "from remote rank %d got %d, expected %d", r, in,
              1000 * r + lrank);
        CHECK(st.MPI_SOURCE == r && st.MPI_TAG == tagbase, "status source %d tag %d",
              st.MPI_SOURCE, st.MPI_TAG);
    }
    /* A large message each way with the remote rank of the same number (if any). */
    if (lrank < rsize) {
        unsigned char *a = malloc(BIG), *b = malloc(BIG);
        MTest_Fill_bytes(a, BIG, 77 + lrank);
        MPI_Request rq[2];
        MPI_Irecv(b, BIG, MPI_BYTE, lrank, tagbase + 1, ic, &rq[0]);
        MPI_Isend(a, BIG, MPI_BYTE, lrank, tagbase + 1, ic, &rq[1]);
        int rc = MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        CHECK_RC(rc, "large messages on the intercommunicator");
        long bad = MTest_Verify_bytes(b, BIG, 77 + lrank);
        CHECK(bad < 0, "large message wrong at byte %ld", bad);
        free(a);
        free(b);
    }
}

/* Checks the shape of intercomm `ic` joining this half (size `mine`) with the other
 * (size `theirs`). */
static void check_shape(MPI_Comm ic, int mine, int theirs, int myrank)
{
    int flag = 0, lsize = -1, rsize = -1, rank = -1;
    MPI_Comm_test_inter(ic, &flag);
    CHECK(flag, "MPI_Comm_test_inter: not an intercommunicator");
    MPI_Comm_size(ic, &lsize);
    MPI_Comm_remote_size(ic, &rsize);
    MPI_Comm_rank(ic, &rank);
    CHECK(lsize == mine && rsize == theirs, "sizes local %d remote %d, expected %d and %d",
          lsize, rsize, mine, theirs);
    CHECK(rank == myrank, "rank %d in the intercommunicator, %d in the half", rank, myrank);
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(lib, &len);
    is_hympi = strstr(lib, "hympi") != NULL;
    if (!is_hympi) {
        MTest_Skip("MPI_Comm_connect/accept are not usable with this MPI here");
        return MTest_Finalize(0);
    }
    MTest_Errors_return_all();

    /* Errors needing no partner. */
    {
        MPI_Comm ic = MPI_COMM_NULL;
        int rc = MPI_Comm_connect("no such port", MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic);
        CHECK_CLASS(rc, MPI_ERR_PORT, "MPI_Comm_connect to a string that is no port");
        {
            char port[MPI_MAX_PORT_NAME];
            rc = MPI_Open_port(MPI_INFO_NULL, port);
            CHECK_RC(rc, "MPI_Open_port");
            rc = MPI_Close_port(port);
            CHECK_RC(rc, "MPI_Close_port");
            rc = MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic);
            CHECK_CLASS(rc, MPI_ERR_PORT, "MPI_Comm_accept on a closed port");
            rc = MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &ic);
            CHECK_CLASS(rc, MPI_ERR_PORT, "MPI_Comm_connect to a closed port");
            rc = MPI_Publish_name("connect_accept-closed", MPI_INFO_NULL, port);
            CHECK_CLASS(rc, MPI_ERR_PORT, "MPI_Publish_name of a closed port");
            char found[MPI_MAX_PORT_NAME];
            rc = MPI_Lookup_name("connect_accept-never-published", MPI_INFO_NULL, found);
            CHECK_CLASS(rc, MPI_ERR_NAME, "MPI_Lookup_name of a name never published");
        }
    }
    if (mtest_size < 2)
        return MTest_Finalize(0);

    /* Half 0 (world ranks below size/2, at least one) accepts, half 1 connects. */
    int nacc = mtest_size / 2, side = mtest_rank >= nacc;
    int mine = side ? mtest_size - nacc : nacc, theirs = mtest_size - mine;
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, side, mtest_rank, &half);
    int hrank;
    MPI_Comm_rank(half, &hrank);
    MPI_Comm_set_errhandler(half, MPI_ERRORS_RETURN);
    char port[MPI_MAX_PORT_NAME] = "";

    /* First connection: roots are rank 0 of each half (world ranks 0 and nacc). */
    if (mtest_rank == 0) {
        int rc = MPI_Open_port(MPI_INFO_NULL, port);
        CHECK_RC(rc, "MPI_Open_port");
        MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, nacc, 1, MPI_COMM_WORLD);
    } else if (mtest_rank == nacc) {
        MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Comm ic = MPI_COMM_NULL;
    int rc = side ? MPI_Comm_connect(port, MPI_INFO_NULL, 0, half, &ic)
                  : MPI_Comm_accept(port, MPI_INFO_NULL, 0, half, &ic);
    CHECK_RC(rc, side ? "MPI_Comm_connect" : "MPI_Comm_accept");
    if (rc == MPI_SUCCESS) {
        check_shape(ic, mine, theirs, hrank);
        check_traffic(ic, 5);
        /* Intercommunicator collectives. */
        int v = side ? -1 : 4242;
        if (side)
            rc = MPI_Bcast(&v, 1, MPI_INT, 0, ic);
        else
            rc = MPI_Bcast(&v, 1, MPI_INT, hrank == 0 ? MPI_ROOT : MPI_PROC_NULL, ic);
        CHECK_RC(rc, "MPI_Bcast on the intercommunicator");
        if (side)
            CHECK(v == 4242, "broadcast value %d", v);
        int w = mtest_rank + 1, sum = -1;
        rc = MPI_Allreduce(&w, &sum, 1, MPI_INT, MPI_SUM, ic);
        CHECK_RC(rc, "MPI_Allreduce on the intercommunicator");
        /* The remote group's world ranks + 1, summed. */
        int lo = side ? 0 : nacc, hi = side ? nacc : mtest_size, want = 0;
        for (int r = lo; r < hi; r++)
            want += r + 1;
        CHECK(sum == want, "intercommunicator allreduce gave %d, expected %d", sum, want);
        /* Merge: the accepting half first. */
        MPI_Comm merged;
        rc = MPI_Intercomm_merge(ic, side, &merged);
        CHECK_RC(rc, "MPI_Intercomm_merge");
        if (rc == MPI_SUCCESS) {
            int mr = -1, ms = -1;
            MPI_Comm_rank(merged, &mr);
            MPI_Comm_size(merged, &ms);
            CHECK(ms == mtest_size && mr == mtest_rank, "merged rank %d of %d, world %d of %d",
                  mr, ms, mtest_rank, mtest_size);
            int all = 0;
            rc = MPI_Allreduce(&mr, &all, 1, MPI_INT, MPI_SUM, merged);
            CHECK(rc == MPI_SUCCESS && all == ms * (ms - 1) / 2, "merged allreduce %d", all);
            rc = MPI_Comm_disconnect(&merged);
            CHECK_RC(rc, "MPI_Comm_disconnect of the merged communicator");
        }
        rc = MPI_Comm_disconnect(&ic);
        CHECK_RC(rc, "MPI_Comm_disconnect");
        CHECK(ic == MPI_COMM_NULL, "the handle is MPI_COMM_NULL after MPI_Comm_disconnect");
    }

    /* Second connection, roots at the last rank of each half: that rank of the accepting
     * half opens a port of its own. */
    char port2[MPI_MAX_PORT_NAME] = "";
    if (mtest_rank == nacc - 1) {
        rc = MPI_Open_port(MPI_INFO_NULL, port2);
        CHECK_RC(rc, "MPI_Open_port (second)");
        MPI_Send(port2, MPI_MAX_PORT_NAME, MPI_CHAR, mtest_size - 1, 4, MPI_COMM_WORLD);
    }
    if (mtest_rank == mtest_size - 1)
        MPI_Recv(port2, MPI_MAX_PORT_NAME, MPI_CHAR, nacc - 1, 4, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    rc = side ? MPI_Comm_connect(port2, MPI_INFO_NULL, mine - 1, half, &ic)
              : MPI_Comm_accept(port2, MPI_INFO_NULL, mine - 1, half, &ic);
    CHECK_RC(rc, "second connection (roots at the last ranks)");
    if (rc == MPI_SUCCESS) {
        check_shape(ic, mine, theirs, hrank);
        check_traffic(ic, 9);
        rc = MPI_Comm_disconnect(&ic);
        CHECK_RC(rc, "MPI_Comm_disconnect (second)");
    }

    /* Third connection through the name service: half 0's root publishes port2 under a
     * name of this run, half 1's root looks it up. */
    int token = (int)getpid();
    MPI_Bcast(&token, 1, MPI_INT, 0, MPI_COMM_WORLD);
    char service[64], found[MPI_MAX_PORT_NAME] = "";
    snprintf(service, sizeof service, "connect_accept-%d", token);
    if (mtest_rank == nacc - 1) {
        CHECK_RC(MPI_Publish_name(service, MPI_INFO_NULL, port2), "MPI_Publish_name");
        rc = MPI_Publish_name(service, MPI_INFO_NULL, port2);
        CHECK_CLASS(rc, MPI_ERR_SERVICE, "MPI_Publish_name of a name already published");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (mtest_rank == mtest_size - 1) {
        rc = MPI_Lookup_name(service, MPI_INFO_NULL, found);
        CHECK_RC(rc, "MPI_Lookup_name");
        CHECK(strcmp(found, port2) == 0, "looked up %s, published %s", found, port2);
    }
    rc = side ? MPI_Comm_connect(found, MPI_INFO_NULL, mine - 1, half, &ic)
              : MPI_Comm_accept(port2, MPI_INFO_NULL, mine - 1, half, &ic);
    CHECK_RC(rc, "third connection (through the name service)");
    if (rc == MPI_SUCCESS) {
        check_shape(ic, mine, theirs, hrank);
        MPI_Comm_disconnect(&ic);
    }
    if (mtest_rank == nacc - 1) {
        CHECK_RC(MPI_Unpublish_name(service, MPI_INFO_NULL, port2), "MPI_Unpublish_name");
        rc = MPI_Unpublish_name(service, MPI_INFO_NULL, port2);
        CHECK_CLASS(rc, MPI_ERR_SERVICE, "MPI_Unpublish_name of a name not published");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    rc = MPI_Lookup_name(service, MPI_INFO_NULL, found);
    CHECK_CLASS(rc, MPI_ERR_NAME, "MPI_Lookup_name after MPI_Unpublish_name");
    if (mtest_rank == nacc - 1)
        CHECK_RC(MPI_Close_port(port2), "MPI_Close_port (second)");
    if (mtest_rank == 0)
        CHECK_RC(MPI_Close_port(port), "MPI_Close_port");
    MPI_Comm_free(&half);
    return MTest_Finalize(0);
}
