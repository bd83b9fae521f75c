/* bigcount: the MPI-4.0 large-count ("_c") point-to-point functions.
 *
 * Every _c send and receive function with MPI_Count counts: MPI_Send_c / MPI_Recv_c,
 * MPI_Isend_c / MPI_Irecv_c, MPI_Ssend_c, MPI_Issend_c, MPI_Rsend_c, MPI_Irsend_c (receives
 * posted first, then a handshake), MPI_Bsend_c / MPI_Ibsend_c with MPI_Buffer_attach_c /
 * MPI_Buffer_detach_c, MPI_Sendrecv_c, MPI_Sendrecv_replace_c, MPI_Mrecv_c / MPI_Imrecv_c,
 * the persistent MPI_Send_init_c / MPI_Ssend_init_c / MPI_Bsend_init_c / MPI_Rsend_init_c /
 * MPI_Recv_init_c, and MPI_Type_size_c, MPI_Get_count_c, MPI_Get_elements_c,
 * MPI_Status_set_elements_c, with 0 B .. 2 MiB messages to the partner or to self.
 * Counts beyond int: MPI_Status_set_elements_c of 3e9 bytes gives MPI_Get_count_c 3e9 and
 * MPI_Get_count / MPI_Get_elements MPI_UNDEFINED (the int versions cannot say it).
 * With MTEST_BIGCOUNT_HUGE=1 (a separate testlist entry, ~4.3 GB of memory), one real
 * message of 2^31 + 9 bytes goes from the lower rank of a pair to the upper one (or to self
 * on MPI_COMM_SELF).
 *
 * Skipped (MTEST_SKIP) with an MPI older than 4.0 (Open MPI 4.1).  MPICH 4.0.2 lacks
 * MPI_Status_set_elements_c (it has the MPI-3 MPI_Status_set_elements_x, used instead). */
#include "mtest.h"

#if MPI_VERSION >= 4

#if defined(MPICH_NUMVERSION) && MPICH_NUMVERSION < 40100000
#define SET_ELEMENTS_C MPI_Status_set_elements_x
#else
#define SET_ELEMENTS_C MPI_Status_set_elements_c
#endif

static int partner, peer, lower;
static MPI_Comm comm;

enum { NMODES = 13 };
static const char *mode_names[NMODES] = {
    "MPI_Send_c", "MPI_Isend_c", "MPI_Ssend_c", "MPI_Issend_c", "MPI_Rsend_c", "MPI_Irsend_c",
    "MPI_Bsend_c", "MPI_Ibsend_c", "MPI_Send_init_c", "MPI_Ssend_init_c", "MPI_Bsend_init_c",
    "MPI_Rsend_init_c", "MPI_Sendrecv_c"};

static void do_send(int mode, const void *buf, MPI_Count n, int tag)
{
    MPI_Request r = MPI_REQUEST_NULL;
    int rc;
    switch (mode) {
    case 0: rc = MPI_Send_c(buf, n, MPI_BYTE, peer, tag, comm); break;
    case 1: rc = MPI_Isend_c(buf, n, MPI_BYTE, peer, tag, comm, &r); break;
    case 2: rc = MPI_Ssend_c(buf, n, MPI_BYTE, peer, tag, comm); break;
    case 3: rc = MPI_Issend_c(buf, n, MPI_BYTE, peer, tag, comm, &r); break;
    case 4: rc = MPI_Rsend_c(buf, n, MPI_BYTE, peer, tag, comm); break;
    case 5: rc = MPI_Irsend_c(buf, n, MPI_BYTE, peer, tag, comm, &r); break;
    case 6: rc = MPI_Bsend_c(buf, n, MPI_BYTE, peer, tag, comm); break;
    case 7: rc = MPI_Ibsend_c(buf, n, MPI_BYTE, peer, tag, comm, &r); break;
    case 8: rc = MPI_Send_init_c(buf, n, MPI_BYTE, peer, tag, comm, &r); break;
    case 9: rc = MPI_Ssend_init_c(buf, n, MPI_BYTE, peer, tag, comm, &r); break;
    case 10: rc = MPI_Bsend_init_c(buf, n, MPI_BYTE, peer, tag, comm, &r); break;
    default: rc = MPI_Rsend_init_c(buf, n, MPI_BYTE, peer, tag, comm, &r); break;
    }
    CHECK_RC(rc, mode_names[mode]);
    if (mode >= 8) {
        rc = MPI_Start(&r);
        CHECK_RC(rc, "MPI_Start");
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        MPI_Request_free(&r);
    } else if (r != MPI_REQUEST_NULL) {
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
}

static void check_recv(const MPI_Status *st, const unsigned char *r, MPI_Count n, uint64_t seed, const char *what)
{
    MPI_Count c = -1, e = -1;
    MPI_Get_count_c(st, MPI_BYTE, &c);
    MPI_Get_elements_c(st, MPI_BYTE, &e);
    CHECK(c == n && e == n, "%s of %lld B: MPI_Get_count_c %lld, MPI_Get_elements_c %lld", what, (long long)n, (long long)c, (long long)e);
    CHECK(st->MPI_SOURCE == peer, "%s: source %d, want %d", what, st->MPI_SOURCE, peer);
    CHECK(MTest_Verify_bytes(r, n, seed) < 0, "%s of %lld B corrupted", what, (long long)n);
}

/* One message of n bytes in mode `mode` from the sender to the receiver (both roles when
 * alone), received with a _c receive chosen by `how`. */
static void transfer(int mode, MPI_Count n, int how, uint64_t seed)
{
    int tag = 100 + mode;
    int dummy = 0;
    unsigned char *s = malloc(n + 1), *r = malloc(n + 1);
    MPI_Status st;
    int sender = partner < 0 || lower, receiver = partner < 0 || !lower;
    MTest_Fill_bytes(s, n, seed);
    memset(r, 0, n + 1);
    if (mode == 12) { /* Sendrecv_c / Sendrecv_replace_c: both sides at once */
        MTest_Fill_bytes(s, n, seed + (partner < 0 ? 0 : mtest_rank));
        uint64_t from = seed + (partner < 0 ? 0 : peer);
        int rc = MPI_Sendrecv_c(s, n, MPI_BYTE, peer, tag, r, n, MPI_BYTE, peer, tag, comm, &st);
        CHECK_RC(rc, "MPI_Sendrecv_c");
        check_recv(&st, r, n, from, "MPI_Sendrecv_c");
        rc = MPI_Sendrecv_replace_c(s, n, MPI_BYTE, peer, tag, peer, tag, comm, &st);
        CHECK_RC(rc, "MPI_Sendrecv_replace_c");
        check_recv(&st, s, n, from, "MPI_Sendrecv_replace_c");
        free(s);
        free(r);
        return;
    }
    MPI_Request rreq = MPI_REQUEST_NULL;
    int ready = mode == 4 || mode == 5 || mode == 11;
    int nonblocking_only = partner < 0; /* alone: the receive is always posted first */
    if (receiver && (ready || nonblocking_only || how == 1 || how == 3)) {
        int rc = how == 3 ? MPI_Recv_init_c(r, n, MPI_BYTE, peer, tag, comm, &rreq)
                          : MPI_Irecv_c(r, n, MPI_BYTE, peer, tag, comm, &rreq);
        CHECK_RC(rc, how == 3 ? "MPI_Recv_init_c" : "MPI_Irecv_c");
        if (how == 3)
            MPI_Start(&rreq);
        if (partner >= 0)
            MPI_Send(&dummy, 0, MPI_INT, peer, 1, comm);
    }
    if (sender) {
        if (partner >= 0 && (ready || how == 1 || how == 3))
            MPI_Recv(&dummy, 0, MPI_INT, peer, 1, comm, MPI_STATUS_IGNORE);
        if (partner < 0 && (mode == 2 || mode == 4 || mode == 0 || mode == 6))
            mode = mode + 1; /* alone: the nonblocking variant of a blocking send */
        do_send(mode, s, n, tag);
    }
    if (receiver) {
        int rc;
        const char *what;
        if (rreq != MPI_REQUEST_NULL) {
            rc = MPI_Wait(&rreq, &st);
            what = how == 3 ? "MPI_Recv_init_c" : "MPI_Irecv_c";
            if (how == 3)
                MPI_Request_free(&rreq);
        } else if (how == 0) {
            rc = MPI_Recv_c(r, n, MPI_BYTE, peer, tag, comm, &st);
            what = "MPI_Recv_c";
        } else {
            MPI_Message m;
            MPI_Mprobe(peer, tag, comm, &m, &st);
            MPI_Count c = -1;
            MPI_Get_count_c(&st, MPI_BYTE, &c);
            CHECK(c == n, "MPI_Mprobe then MPI_Get_count_c: %lld", (long long)c);
            if (n % 2) {
                rc = MPI_Mrecv_c(r, n, MPI_BYTE, &m, &st);
                what = "MPI_Mrecv_c";
            } else {
                MPI_Request q;
                rc = MPI_Imrecv_c(r, n, MPI_BYTE, &m, &q);
                CHECK_RC(rc, "MPI_Imrecv_c");
                rc = MPI_Wait(&q, &st);
                what = "MPI_Imrecv_c";
            }
        }
        CHECK_RC(rc, what);
        check_recv(&st, r, n, seed, what);
    }
    free(s);
    free(r);
}

static void huge(void)
{
    MPI_Count n = ((MPI_Count)1 << 31) + 9;
    int sender = partner < 0 || lower, receiver = partner < 0 || !lower;
    unsigned char *s = sender ? malloc(n) : NULL, *r = receiver ? malloc(n) : NULL;
    if ((sender && !s) || (receiver && !r)) {
        CHECK(0, "cannot allocate 2 GiB for the huge message");
        return;
    }
    MPI_Request rq = MPI_REQUEST_NULL;
    MPI_Status st;
    if (receiver)
        MPI_Irecv_c(r, n, MPI_BYTE, peer, 7, comm, &rq);
    if (sender) {
        MTest_Fill_bytes(s, n, 4242);
        int rc = MPI_Send_c(s, n, MPI_BYTE, peer, 7, comm);
        CHECK_RC(rc, "MPI_Send_c of 2^31+9 B");
    }
    if (receiver) {
        int rc = MPI_Wait(&rq, &st);
        CHECK_RC(rc, "MPI_Wait on MPI_Irecv_c of 2^31+9 B");
        check_recv(&st, r, n, 4242, "huge message");
        int ci = 0;
        MPI_Get_count(&st, MPI_BYTE, &ci);
        CHECK(ci == MPI_UNDEFINED, "MPI_Get_count of a 2^31+9 B message: %d, want MPI_UNDEFINED", ci);
        printf("[%d] received a message of %lld bytes\n", mtest_rank, (long long)n);
    }
    free(s);
    free(r);
}
#endif

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
#if MPI_VERSION >= 4
    partner = MTest_Partner();
    comm = partner >= 0 ? MPI_COMM_WORLD : MPI_COMM_SELF;
    peer = partner >= 0 ? partner : 0;
    lower = partner >= 0 && mtest_rank < partner;

    MPI_Count bsize = 4 * ((2 << 20) + MPI_BSEND_OVERHEAD);
    void *bbuf = malloc(bsize);
    int rc = MPI_Buffer_attach_c(bbuf, bsize);
    CHECK_RC(rc, "MPI_Buffer_attach_c");

    static const MPI_Count sizes[] = {0, 1, 1000, 65537, 2 << 20};
    uint64_t seed = 1;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        for (int mode = 0; mode < NMODES; mode++)
            transfer(mode, sizes[i], (int)((mode + i) % 4), seed++);

    void *p = NULL;
    MPI_Count psize = -1;
    rc = MPI_Buffer_detach_c(&p, &psize);
    CHECK(rc == MPI_SUCCESS && p == bbuf && psize == bsize, "MPI_Buffer_detach_c: rc %d %p/%lld", rc, p, (long long)psize);
    free(bbuf);

    /* Sizes. */
    MPI_Count ts = -1;
    rc = MPI_Type_size_c(MPI_DOUBLE, &ts);
    CHECK(rc == MPI_SUCCESS && ts == (MPI_Count)sizeof(double), "MPI_Type_size_c(MPI_DOUBLE) = %lld", (long long)ts);
    rc = MPI_Type_size_c(MPI_DOUBLE_INT, &ts);
    CHECK(rc == MPI_SUCCESS && ts == (MPI_Count)(sizeof(double) + sizeof(int)), "MPI_Type_size_c(MPI_DOUBLE_INT) = %lld", (long long)ts);

    /* Counts beyond int. */
    MPI_Status st;
    memset(&st, 0, sizeof st);
    MPI_Count big = 3000000000LL, c = -1;
    rc = SET_ELEMENTS_C(&st, MPI_BYTE, big);
    CHECK_RC(rc, "MPI_Status_set_elements_c");
    MPI_Get_count_c(&st, MPI_BYTE, &c);
    CHECK(c == big, "MPI_Get_count_c after set_elements_c(3e9): %lld", (long long)c);
    MPI_Get_elements_c(&st, MPI_BYTE, &c);
    CHECK(c == big, "MPI_Get_elements_c after set_elements_c(3e9): %lld", (long long)c);
    int ci = 0;
    MPI_Get_count(&st, MPI_BYTE, &ci);
    CHECK(ci == MPI_UNDEFINED, "MPI_Get_count of 3e9 bytes: %d, want MPI_UNDEFINED", ci);
    ci = 0;
    MPI_Get_elements(&st, MPI_BYTE, &ci);
    CHECK(ci == MPI_UNDEFINED, "MPI_Get_elements of 3e9 bytes: %d, want MPI_UNDEFINED", ci);
    SET_ELEMENTS_C(&st, MPI_INT, big);
    MPI_Get_count_c(&st, MPI_BYTE, &c);
    CHECK(c == big * (MPI_Count)sizeof(int), "set_elements_c(MPI_INT, 3e9): bytes %lld", (long long)c);
    MPI_Get_count_c(&st, MPI_INT, &c);
    CHECK(c == big, "set_elements_c(MPI_INT, 3e9): count %lld", (long long)c);
    SET_ELEMENTS_C(&st, MPI_INT, 7);
    MPI_Get_count(&st, MPI_INT, &ci);
    MPI_Get_count_c(&st, MPI_SHORT, &c);
    CHECK(ci == 7 && c == 14, "set_elements_c(MPI_INT, 7): count %d, shorts %lld", ci, (long long)c);

    const char *h = getenv("MTEST_BIGCOUNT_HUGE");
    if (h && !strcmp(h, "1"))
        huge();
#else
    MTest_Skip("the _c functions are MPI-4.0");
#endif
    return MTest_Finalize(0);
}
