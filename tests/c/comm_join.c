/* comm_join: MPI_Comm_join (MPI-5.0 §11.10.5) over TCP sockets on the loopback: world ranks
 * 2k and 2k+1 connect a socket (the even rank listens, tells the odd one the port through
 * MPI_COMM_WORLD) and join over it:
 *   - the result is an intercommunicator of one process on each side;
 *   - messages both ways, a large one too, and an intercommunicator MPI_Allreduce;
 *   - MPI_Intercomm_merge, then MPI_Comm_disconnect;
 *   - a second join over the same socket (the socket stays usable after a join).
 * Every rank also checks that a join over a socket whose other end closed fails (returns an
 * error under MPI_ERRORS_RETURN instead of waiting).
 * Other MPIs: skipped, as connect_accept.c explains. */
#include "mtest.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#define BIG (1 << 20)

/* A connected socket between this rank and `peer` (the lower rank listens). */
static int connect_pair(int peer)
{
    int fd = -1;
    if (mtest_rank < peer) {
        int ls = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {0};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof a;
        CHECK(bind(ls, (struct sockaddr *)&a, sizeof a) == 0, "bind");
        CHECK(listen(ls, 1) == 0, "listen");
        getsockname(ls, (struct sockaddr *)&a, &len);
        int port = ntohs(a.sin_port);
        MPI_Send(&port, 1, MPI_INT, peer, 7, MPI_COMM_WORLD);
        fd = accept(ls, NULL, NULL);
        close(ls);
    } else {
        int port = 0;
        MPI_Recv(&port, 1, MPI_INT, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        fd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {0};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a.sin_port = htons(port);
        CHECK(connect(fd, (struct sockaddr *)&a, sizeof a) == 0, "connect");
    }
    CHECK(fd >= 0, "no socket");
    return fd;
}

/* Checks intercommunicator `ic` from a join with world rank `peer`. */
static void check_joined(MPI_Comm ic, int peer)
{
    int flag = 0, ls = -1, rs = -1, r = -1;
    MPI_Comm_test_inter(ic, &flag);
    MPI_Comm_size(ic, &ls);
    MPI_Comm_remote_size(ic, &rs);
    MPI_Comm_rank(ic, &r);
    CHECK(flag && ls == 1 && rs == 1 && r == 0, "inter %d sizes %d/%d rank %d", flag, ls, rs, r);
    int out = mtest_rank, in = -1;
    int rc = MPI_Sendrecv(&out, 1, MPI_INT, 0, 3, &in, 1, MPI_INT, 0, 3, ic, MPI_STATUS_IGNORE);
    CHECK(rc == MPI_SUCCESS && in == peer, "got %d from the joined process (world %d)", in, peer);
    unsigned char *a = malloc(BIG), *b = malloc(BIG);
    MTest_Fill_bytes(a, BIG, 1000 + mtest_rank);
    rc = MPI_Sendrecv(a, BIG, MPI_BYTE, 0, 4, b, BIG, MPI_BYTE, 0, 4, ic, MPI_STATUS_IGNORE);
    CHECK_RC(rc, "a large message over the joined communicator");
    long bad = MTest_Verify_bytes(b, BIG, 1000 + peer);
    CHECK(bad < 0, "large message wrong at byte %ld", bad);
    free(a);
    free(b);
    int sum = -1;
    rc = MPI_Allreduce(&out, &sum, 1, MPI_INT, MPI_SUM, ic);
    CHECK(rc == MPI_SUCCESS && sum == peer, "intercommunicator allreduce %d", sum);
    MPI_Comm merged;
    rc = MPI_Intercomm_merge(ic, mtest_rank > peer, &merged);
    CHECK_RC(rc, "MPI_Intercomm_merge");
    if (rc == MPI_SUCCESS) {
        int mr = -1, total = -1;
        MPI_Comm_rank(merged, &mr);
        CHECK(mr == (mtest_rank > peer), "merged rank %d", mr);
        MPI_Allreduce(&out, &total, 1, MPI_INT, MPI_SUM, merged);
        CHECK(total == mtest_rank + peer, "merged allreduce %d", total);
        MPI_Comm_disconnect(&merged);
    }
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(lib, &len);
    if (!strstr(lib, "hympi")) {
        MTest_Skip("MPI_Comm_join is not usable with this MPI here");
        return MTest_Finalize(0);
    }
    MTest_Errors_return_all();

    /* A socket whose other end is closed: the join fails. */
    {
        int sv[2];
        CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "socketpair");
        close(sv[1]);
        MPI_Comm ic = MPI_COMM_NULL;
        int rc = MPI_Comm_join(sv[0], &ic);
        CHECK(rc != MPI_SUCCESS, "MPI_Comm_join over a closed socket succeeded");
        CHECK(ic == MPI_COMM_NULL, "a failed join gave a communicator");
        close(sv[0]);
    }

    int peer = mtest_rank ^ 1;
    if (peer < mtest_size) {
        int fd = connect_pair(peer);
        for (int round = 0; round < 2; round++) {
            MPI_Comm ic = MPI_COMM_NULL;
            int rc = MPI_Comm_join(fd, &ic);
            CHECK_RC(rc, "MPI_Comm_join");
            if (rc == MPI_SUCCESS) {
                check_joined(ic, peer);
                rc = MPI_Comm_disconnect(&ic);
                CHECK_RC(rc, "MPI_Comm_disconnect");
            }
        }
        close(fd);
    }
    return MTest_Finalize(0);
}
