/* part_basic.c: MPI-4 partitioned point-to-point communication.
 *
 * Every rank sends to its right neighbour and receives from its left one (a ring; at one
 * rank, to itself).  Covers: equal and unequal partitionings (receive partitions covered by
 * several send partitions and parts of one), several rounds with MPI_Start, MPI_Startall of
 * several requests matched in the order of their init calls, MPI_Parrived polling (and its
 * value before any MPI_Pready), MPI_Pready_range / MPI_Pready_list, partitions large enough
 * for rendezvous, a derived datatype on the send side, MPI_PROC_NULL, MPI_Request_get_status,
 * and the error classes of misuse under MPI_ERRORS_RETURN. */
#include "mtest.h"
#include "mtest_inter.h"

static int right, left;

static int val(int round, int src, int i)
{
    return round * 1000003 + src * 7919 + i;
}

/* One transfer: sp send partitions of sc ints, rp receive partitions of rc ints (sp * sc ==
 * rp * rc), nrounds rounds; partitions are marked ready in a scrambled order and the receiver
 * polls MPI_Parrived, checking each partition's data as soon as it has arrived. */
static void transfer(int sp, int sc, int rp, int rc, int nrounds, int tag)
{
    int total = sp * sc, rc_;
    int *sbuf = calloc(total ? total : 1, sizeof(int));
    int *rbuf = calloc(total ? total : 1, sizeof(int));
    int *seen = calloc(rp ? rp : 1, sizeof(int));
    MPI_Request req[2];
    rc_ = MPI_Psend_init(sbuf, sp, sc, MPI_INT, right, tag, MPI_COMM_WORLD, MPI_INFO_NULL, &req[0]);
    CHECK_RC(rc_, "MPI_Psend_init");
    rc_ = MPI_Precv_init(rbuf, rp, rc, MPI_INT, left, tag, MPI_COMM_WORLD, MPI_INFO_NULL, &req[1]);
    CHECK_RC(rc_, "MPI_Precv_init");
    for (int round = 0; round < nrounds; round++) {
        for (int i = 0; i < total; i++) {
            sbuf[i] = val(round, mtest_rank, i);
            rbuf[i] = -1;
        }
        memset(seen, 0, sizeof(int) * (rp ? rp : 1));
        CHECK_RC(MPI_Start(&req[1]), "MPI_Start(recv)");
        CHECK_RC(MPI_Start(&req[0]), "MPI_Start(send)");
        /* Nobody has marked a partition ready yet: nothing can have arrived. */
        if (rp > 0) {
            int flag = -1;
            CHECK_RC(MPI_Parrived(req[1], rp - 1, &flag), "MPI_Parrived");
            CHECK(flag == 0, "partition arrived before any MPI_Pready (round %d)", round);
            CHECK_RC(MPI_Request_get_status(req[1], &flag, MPI_STATUS_IGNORE), "get_status");
            CHECK(flag == 0, "receive complete before any MPI_Pready (round %d)", round);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        /* Odd partitions first (one by one, backwards), then the even ones by a list. */
        for (int i = sp - 1; i >= 0; i--)
            if (i % 2)
                CHECK_RC(MPI_Pready(i, req[0]), "MPI_Pready");
        int *list = malloc(sizeof(int) * (sp ? sp : 1)), n = 0;
        for (int i = 0; i < sp; i += 2)
            list[n++] = i;
        CHECK_RC(MPI_Pready_list(n, list, req[0]), "MPI_Pready_list");
        free(list);
        int left_to_see = rp;
        long polls = 0;
        while (left_to_see > 0 && polls < 100000000L) {
            for (int j = 0; j < rp; j++) {
                int flag = 0;
                if (seen[j])
                    continue;
                polls++;
                CHECK_RC(MPI_Parrived(req[1], j, &flag), "MPI_Parrived");
                if (!flag)
                    continue;
                seen[j] = 1;
                left_to_see--;
                for (int k = j * rc; k < (j + 1) * rc; k++)
                    if (!CHECK(rbuf[k] == val(round, left, k),
                               "round %d partition %d: element %d is %d, expected %d", round,
                               j, k, rbuf[k], val(round, left, k)))
                        break;
            }
        }
        CHECK(left_to_see == 0, "partitions never arrived");
        MPI_Status st[2];
        CHECK_RC(MPI_Waitall(2, req, st), "MPI_Waitall");
        CHECK(st[1].MPI_SOURCE == left && st[1].MPI_TAG == tag, "status source %d tag %d",
              st[1].MPI_SOURCE, st[1].MPI_TAG);
        int cnt = -1;
        MPI_Get_count(&st[1], MPI_INT, &cnt);
        CHECK(cnt == total, "received count %d, expected %d", cnt, total);
        CHECK(req[0] != MPI_REQUEST_NULL && req[1] != MPI_REQUEST_NULL,
              "partitioned requests are persistent");
        /* Inactive: MPI_Parrived says true (MPI-4.1; MPICH 4.0 follows MPI-4.0, which did
         * not allow an inactive request here, and aborts). */
#ifndef MPICH_VERSION
        if (rp > 0) {
            int flag = 0;
            CHECK_RC(MPI_Parrived(req[1], 0, &flag), "MPI_Parrived(inactive)");
            CHECK(flag == 1, "MPI_Parrived on an inactive request gave false");
        }
#endif
        MPI_Barrier(MPI_COMM_WORLD); /* rbuf is reset for the next round */
    }
    CHECK_RC(MPI_Request_free(&req[0]), "MPI_Request_free(send)");
    CHECK_RC(MPI_Request_free(&req[1]), "MPI_Request_free(recv)");
    CHECK(req[0] == MPI_REQUEST_NULL, "freed request not null");
    free(sbuf);
    free(rbuf);
    free(seen);
}

/* Two partitioned sends with the same tag, started together with MPI_Startall: they match
 * the receives in the order of the init calls. */
static void init_order(void)
{
    enum { P = 4, C = 5 };
    int a[P * C], b[P * C], ra[P * C], rb[P * C];
    MPI_Request r[4];
    for (int i = 0; i < P * C; i++) {
        a[i] = val(1, mtest_rank, i);
        b[i] = val(2, mtest_rank, i);
        ra[i] = rb[i] = -1;
    }
    MPI_Psend_init(a, P, C, MPI_INT, right, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]);
    MPI_Psend_init(b, P, C, MPI_INT, right, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]);
    MPI_Precv_init(ra, 2, 2 * C, MPI_INT, left, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &r[2]);
    MPI_Precv_init(rb, 1, P * C, MPI_INT, left, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &r[3]);
    CHECK_RC(MPI_Startall(4, r), "MPI_Startall");
    /* The second request first: data must still land by init order. */
    CHECK_RC(MPI_Pready_range(0, P - 1, r[1]), "MPI_Pready_range");
    CHECK_RC(MPI_Pready_range(0, P - 1, r[0]), "MPI_Pready_range");
    CHECK_RC(MPI_Waitall(4, r, MPI_STATUSES_IGNORE), "MPI_Waitall");
    for (int i = 0; i < P * C; i++) {
        if (!CHECK(ra[i] == val(1, left, i) && rb[i] == val(2, left, i),
                   "init order: element %d got %d/%d", i, ra[i], rb[i]))
            break;
    }
    for (int i = 0; i < 4; i++)
        MPI_Request_free(&r[i]);
}

/* Large partitions (rendezvous) with a receive partition spanning two send partitions. */
static void large(void)
{
    enum { SP = 4, SC = 40000 };
    double *s = malloc(sizeof(double) * SP * SC), *d = malloc(sizeof(double) * SP * SC);
    MPI_Request r[2];
    for (int i = 0; i < SP * SC; i++) {
        s[i] = mtest_rank * 1e6 + i;
        d[i] = -1;
    }
    MPI_Precv_init(d, SP / 2, 2 * SC, MPI_DOUBLE, left, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]);
    MPI_Psend_init(s, SP, SC, MPI_DOUBLE, right, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]);
    for (int round = 0; round < 2; round++) {
        MPI_Startall(2, r);
        for (int i = 0; i < SP; i++)
            MPI_Pready(i, r[0]);
        CHECK_RC(MPI_Waitall(2, r, MPI_STATUSES_IGNORE), "MPI_Waitall(large)");
        for (int i = 0; i < SP * SC; i++)
            if (!CHECK(d[i] == left * 1e6 + i, "large: element %d is %g", i, d[i]))
                break;
        for (int i = 0; i < SP * SC; i++)
            d[i] = -1;
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Request_free(&r[0]);
    MPI_Request_free(&r[1]);
    free(s);
    free(d);
}

/* A strided derived type on the send side, plain ints on the receive side. */
static void derived(void)
{
    enum { P = 3, C = 4, N = P * C };
    int dst[2 * N];
    MPI_Datatype vec;
    MPI_Type_vector(2, 1, 3, MPI_INT, &vec); /* ints 0 and 3 of each element */
    MPI_Datatype vr;
    MPI_Type_create_resized(vec, 0, 6 * sizeof(int), &vr);
    MPI_Type_commit(&vr);
    int elems = N / 2; /* elements of vr: 2 ints each, 6 ints of extent */
    int *s = malloc(sizeof(int) * 6 * elems);
    for (int i = 0; i < 6 * elems; i++)
        s[i] = -7;
    for (int e = 0; e < elems; e++) {
        s[6 * e] = val(3, mtest_rank, 2 * e);
        s[6 * e + 3] = val(3, mtest_rank, 2 * e + 1);
    }
    for (int i = 0; i < 2 * N; i++)
        dst[i] = -1;
    MPI_Request r[2];
    /* 2 send partitions of elems/2 vr elements; 4 receive partitions of N/4 ints. */
    CHECK_RC(MPI_Psend_init(s, 2, elems / 2, vr, right, 11, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]),
             "MPI_Psend_init(derived)");
    CHECK_RC(MPI_Precv_init(dst, 4, N / 4, MPI_INT, left, 11, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]),
             "MPI_Precv_init");
    MPI_Startall(2, r);
    MPI_Pready(1, r[0]);
    MPI_Pready(0, r[0]);
    CHECK_RC(MPI_Waitall(2, r, MPI_STATUSES_IGNORE), "MPI_Waitall(derived)");
    for (int i = 0; i < N; i++)
        if (!CHECK(dst[i] == val(3, left, i), "derived: element %d is %d", i, dst[i]))
            break;
    CHECK(dst[N] == -1, "received past the message");
    MPI_Request_free(&r[0]);
    MPI_Request_free(&r[1]);
    MPI_Type_free(&vr);
    MPI_Type_free(&vec);
    free(s);
}

static void proc_null(void)
{
    int b[8] = {0}, flag = 0;
    MPI_Request r[2];
    MPI_Status st;
    MPI_Psend_init(b, 2, 4, MPI_INT, MPI_PROC_NULL, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]);
    MPI_Precv_init(b, 2, 4, MPI_INT, MPI_PROC_NULL, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]);
    for (int round = 0; round < 2; round++) {
        CHECK_RC(MPI_Startall(2, r), "MPI_Startall(PROC_NULL)");
        CHECK_RC(MPI_Pready_range(0, 1, r[0]), "MPI_Pready_range(PROC_NULL)");
        CHECK_RC(MPI_Parrived(r[1], 1, &flag), "MPI_Parrived(PROC_NULL)");
        CHECK(flag == 1, "MPI_Parrived from MPI_PROC_NULL gave false");
        CHECK_RC(MPI_Wait(&r[0], MPI_STATUS_IGNORE), "MPI_Wait(PROC_NULL send)");
        CHECK_RC(MPI_Wait(&r[1], &st), "MPI_Wait(PROC_NULL recv)");
        CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "PROC_NULL receive: source %d", st.MPI_SOURCE);
    }
    MPI_Request_free(&r[0]);
    MPI_Request_free(&r[1]);
}

static void errors(void)
{
    int b[8] = {0}, flag, rc;
    MPI_Request s, r, tmp;
    MTest_Errors_return_all();
    MPI_Psend_init(b, 2, 4, MPI_INT, right, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &s);
    MPI_Precv_init(b, 2, 4, MPI_INT, left, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
    /* Pready before MPI_Start. */
    rc = MPI_Pready(0, s);
    CHECK(rc != MPI_SUCCESS, "MPI_Pready on an inactive request succeeded");
    MPI_Startall(1, &r);
    MPI_Start(&s);
    rc = MPI_Pready(2, s);
    CHECK(rc != MPI_SUCCESS, "MPI_Pready of partition 2 of 2 succeeded");
    rc = MPI_Pready(-1, s);
    CHECK(rc != MPI_SUCCESS, "MPI_Pready of partition -1 succeeded");
    rc = MPI_Pready_range(0, 5, s);
    CHECK(rc != MPI_SUCCESS, "MPI_Pready_range(0, 5) of 2 partitions succeeded");
    rc = MPI_Pready(0, r);
    CHECK(rc != MPI_SUCCESS, "MPI_Pready on a receive request succeeded");
    rc = MPI_Parrived(s, 0, &flag);
    CHECK(rc != MPI_SUCCESS, "MPI_Parrived on a send request succeeded");
    rc = MPI_Parrived(r, 2, &flag);
    CHECK(rc != MPI_SUCCESS, "MPI_Parrived of partition 2 of 2 succeeded");
#ifndef MPICH_VERSION
    /* hympi's classes (MPICH's differ or abort for some of these). */
    rc = MPI_Pready(2, s);
    CHECK_CLASS(rc, MPI_ERR_ARG, "MPI_Pready(out of range)");
    rc = MPI_Pready(0, r);
    CHECK_CLASS(rc, MPI_ERR_REQUEST, "MPI_Pready(receive request)");
    rc = MPI_Parrived(r, 5, &flag);
    CHECK_CLASS(rc, MPI_ERR_ARG, "MPI_Parrived(out of range)");
    rc = MPI_Parrived(s, 0, &flag);
    CHECK_CLASS(rc, MPI_ERR_REQUEST, "MPI_Parrived(send request)");
#endif
    CHECK_RC(MPI_Pready_range(0, 1, s), "MPI_Pready_range");
#ifndef MPICH_VERSION
    rc = MPI_Pready(1, s);
    CHECK_CLASS(rc, MPI_ERR_ARG, "MPI_Pready(already ready)");
#endif
    CHECK_RC(MPI_Wait(&s, MPI_STATUS_IGNORE), "MPI_Wait(send)");
    CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE), "MPI_Wait(recv)");
    rc = MPI_Pready(0, s);
    CHECK(rc != MPI_SUCCESS, "MPI_Pready on a completed (inactive) request succeeded");
    /* Wildcards and bad arguments at init. */
    tmp = MPI_REQUEST_NULL;
    rc = MPI_Precv_init(b, 2, 4, MPI_INT, right, -5, MPI_COMM_WORLD, MPI_INFO_NULL, &tmp);
    CHECK(rc != MPI_SUCCESS, "MPI_Precv_init with tag -5 succeeded");
    rc = MPI_Psend_init(b, 2, 4, MPI_INT, mtest_size, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &tmp);
    CHECK(rc != MPI_SUCCESS, "MPI_Psend_init to rank %d succeeded", mtest_size);
    rc = MPI_Psend_init(b, 2, -4, MPI_INT, right, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &tmp);
    CHECK(rc != MPI_SUCCESS, "MPI_Psend_init with count -4 succeeded");
    rc = MPI_Psend_init(b, 2, 4, MPI_INT, right, 5, MPI_COMM_NULL, MPI_INFO_NULL, &tmp);
    CHECK(rc != MPI_SUCCESS, "MPI_Psend_init on MPI_COMM_NULL succeeded");
#ifndef MPICH_VERSION
    rc = MPI_Precv_init(b, 2, 4, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, MPI_INFO_NULL,
                               &tmp);
    CHECK_CLASS(rc, MPI_ERR_RANK, "MPI_Precv_init(MPI_ANY_SOURCE)");
    rc = MPI_Precv_init(b, 2, 4, MPI_INT, left, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_INFO_NULL,
                               &tmp);
    CHECK_CLASS(rc, MPI_ERR_TAG, "MPI_Precv_init(MPI_ANY_TAG)");
    rc = MPI_Psend_init(b, -1, 4, MPI_INT, right, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &tmp);
    CHECK_CLASS(rc, MPI_ERR_ARG, "MPI_Psend_init(partitions -1)");
#endif
    CHECK(tmp == MPI_REQUEST_NULL, "a failed init wrote a request");
    MPI_Request_free(&s);
    MPI_Request_free(&r);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
}

/* Partitioned traffic is invisible to wildcard receives, and two communicators with the same
 * tag do not mix. */
static void isolation(void)
{
    enum { P = 4, C = 64 };
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    int a[P * C], b[P * C], ra[P * C], rb[P * C], user = -1, flag = 0;
    for (int i = 0; i < P * C; i++) {
        a[i] = val(4, mtest_rank, i);
        b[i] = val(5, mtest_rank, i);
        ra[i] = rb[i] = -1;
    }
    MPI_Request w, r[4];
    MPI_Irecv(&user, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, dup, &w);
    MPI_Psend_init(a, P, C, MPI_INT, right, 5, dup, MPI_INFO_NULL, &r[0]);
    MPI_Psend_init(b, P, C, MPI_INT, right, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]);
    MPI_Precv_init(rb, P, C, MPI_INT, left, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &r[3]);
    MPI_Precv_init(ra, 2 * P, C / 2, MPI_INT, left, 5, dup, MPI_INFO_NULL, &r[2]);
    MPI_Startall(4, r);
    MPI_Pready_range(0, P - 1, r[0]);
    MPI_Pready_range(0, P - 1, r[1]);
    CHECK_RC(MPI_Waitall(4, r, MPI_STATUSES_IGNORE), "MPI_Waitall(isolation)");
    for (int i = 0; i < P * C; i++)
        if (!CHECK(ra[i] == val(4, left, i) && rb[i] == val(5, left, i),
                   "isolation: element %d got %d/%d", i, ra[i], rb[i]))
            break;
    MPI_Test(&w, &flag, MPI_STATUS_IGNORE);
    CHECK(flag == 0, "a wildcard receive matched partitioned traffic");
    MPI_Barrier(MPI_COMM_WORLD); /* nobody sends the user message before every rank tested */
    int mine = 1000 + mtest_rank;
    MPI_Send(&mine, 1, MPI_INT, right, 99, dup);
    MPI_Status st;
    MPI_Wait(&w, &st);
    CHECK(user == 1000 + left && st.MPI_TAG == 99, "wildcard receive got %d tag %d", user,
          st.MPI_TAG);
    for (int i = 0; i < 4; i++)
        MPI_Request_free(&r[i]);
    MPI_Comm_free(&dup);
}

/* Between the two groups of an intercommunicator: local rank i of each group exchanges with
 * remote rank i. */
static void inter(void)
{
    MPI_Comm ic;
    int color, rsize, lrank;
    if (!MTest_Inter_make(0, &ic, &color))
        return;
    MPI_Comm_remote_size(ic, &rsize);
    MPI_Comm_rank(ic, &lrank);
    if (lrank < rsize) {
        enum { P = 3, C = 100 };
        int s[P * C], d[P * C];
        MPI_Request r[2];
        for (int i = 0; i < P * C; i++) {
            s[i] = val(6 + color, lrank, i);
            d[i] = -1;
        }
        MPI_Psend_init(s, P, C, MPI_INT, lrank, 1, ic, MPI_INFO_NULL, &r[0]);
        MPI_Precv_init(d, 5, P * C / 5, MPI_INT, lrank, 1, ic, MPI_INFO_NULL, &r[1]);
        for (int round = 0; round < 2; round++) {
            MPI_Startall(2, r);
            MPI_Pready_range(0, P - 1, r[0]);
            CHECK_RC(MPI_Waitall(2, r, MPI_STATUSES_IGNORE), "MPI_Waitall(inter)");
            for (int i = 0; i < P * C; i++)
                if (!CHECK(d[i] == val(7 - color, lrank, i), "inter: element %d is %d", i, d[i]))
                    break;
        }
        MPI_Request_free(&r[0]);
        MPI_Request_free(&r[1]);
    }
    MPI_Comm_free(&ic);
}

/* A predefined pair type (holes inside each element) on both sides, and a large strided
 * receive (rendezvous into a noncontiguous buffer). */
static void staged(void)
{
    enum { N = 12 };
    struct { double d; int i; } s[N], d[N];
    MPI_Request r[2];
    for (int i = 0; i < N; i++) {
        s[i].d = mtest_rank + i * 0.5;
        s[i].i = val(8, mtest_rank, i);
        d[i].d = -1;
        d[i].i = -1;
    }
    MPI_Psend_init(s, 3, N / 3, MPI_DOUBLE_INT, right, 12, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]);
    MPI_Precv_init(d, 2, N / 2, MPI_DOUBLE_INT, left, 12, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]);
    MPI_Startall(2, r);
    MPI_Pready_range(0, 2, r[0]);
    int flag = 0;
    while (!flag)
        MPI_Parrived(r[1], 0, &flag);
    for (int i = 0; i < N / 2; i++) /* partition 0 is readable once MPI_Parrived says so */
        if (!CHECK(d[i].d == left + i * 0.5 && d[i].i == val(8, left, i),
                   "pair partition 0: element %d is %g/%d", i, d[i].d, d[i].i))
            break;
    CHECK_RC(MPI_Waitall(2, r, MPI_STATUSES_IGNORE), "MPI_Waitall(pair)");
    for (int i = 0; i < N; i++)
        if (!CHECK(d[i].d == left + i * 0.5 && d[i].i == val(8, left, i),
                   "pair: element %d is %g/%d", i, d[i].d, d[i].i))
            break;
    MPI_Request_free(&r[0]);
    MPI_Request_free(&r[1]);

    enum { M = 50000 };
    int *src = malloc(sizeof(int) * M), *dst = malloc(sizeof(int) * 2 * M);
    MPI_Datatype every2;
    MPI_Type_vector(M / 4, 1, 2, MPI_INT, &every2); /* M / 4 ints, every second one */
    MPI_Type_commit(&every2);
    for (int i = 0; i < M; i++)
        src[i] = val(9, mtest_rank, i);
    for (int i = 0; i < 2 * M; i++)
        dst[i] = -1;
    MPI_Aint lb, ext;
    MPI_Type_get_extent(every2, &lb, &ext);
    /* Receive: 4 partitions of one every2 each; the type's extent ends at its last int, so
     * element k starts k * ext bytes in. */
    MPI_Psend_init(src, 5, M / 5, MPI_INT, right, 13, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]);
    MPI_Precv_init(dst, 4, 1, every2, left, 13, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]);
    MPI_Startall(2, r);
    MPI_Pready_range(0, 4, r[0]);
    CHECK_RC(MPI_Waitall(2, r, MPI_STATUSES_IGNORE), "MPI_Waitall(strided)");
    int per = M / 4, stride_el = (int)(ext / sizeof(int));
    for (int p = 0; p < 4; p++) {
        for (int k = 0; k < per; k++) {
            int at = p * stride_el + 2 * k, want = val(9, left, p * per + k);
            if (!CHECK(dst[at] == want, "strided: partition %d int %d is %d, expected %d", p, k,
                       dst[at], want))
                goto out;
            if (k + 1 < per && !CHECK(dst[at + 1] == -1, "strided: hole %d written", at + 1))
                goto out;
        }
    }
out:
    MPI_Request_free(&r[0]);
    MPI_Request_free(&r[1]);
    MPI_Type_free(&every2);
    free(src);
    free(dst);
}

#ifndef MPICH_VERSION
/* hympi's behaviour on erroneous programs MPICH handles differently. */
static void hympi_errors(void)
{
    int s[40], d[20], rc;
    MPI_Request r[2];
    MTest_Errors_return_all();
    for (int i = 0; i < 40; i++)
        s[i] = val(10, mtest_rank, i);
    /* A receive smaller than the message: the part that fits arrives, then MPI_ERR_TRUNCATE. */
    MPI_Psend_init(s, 4, 10, MPI_INT, right, 14, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]);
    MPI_Precv_init(d, 2, 10, MPI_INT, left, 14, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]);
    MPI_Startall(2, r);
    /* Freeing or cancelling an active partitioned request is erroneous. */
    rc = MPI_Cancel(&r[1]);
    CHECK_CLASS(rc, MPI_ERR_REQUEST, "MPI_Cancel(active partitioned)");
    MPI_Request keep = r[0];
    rc = MPI_Request_free(&keep);
    CHECK_CLASS(rc, MPI_ERR_REQUEST, "MPI_Request_free(active)");
    MPI_Pready_range(0, 3, r[0]);
    CHECK_RC(MPI_Wait(&r[0], MPI_STATUS_IGNORE), "MPI_Wait(longer send)");
    MPI_Status st;
    rc = MPI_Wait(&r[1], &st);
    CHECK_CLASS(rc, MPI_ERR_TRUNCATE, "MPI_Wait(short partitioned receive)");
    for (int i = 0; i < 20; i++)
        if (!CHECK(d[i] == val(10, left, i), "truncated: element %d is %d", i, d[i]))
            break;
    MPI_Request_free(&r[0]);
    MPI_Request_free(&r[1]);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
}
#endif

/* Random partitionings (the same on every rank), K pairs of requests live at once with
 * distinct tags, partitions marked ready in random order interleaved across requests,
 * completion by MPI_Waitany. */
static void random_mix(void)
{
    enum { K = 3, ITER = 25 };
    uint64_t seed = 12345;
    for (int it = 0; it < ITER; it++) {
        int sp[K], sc[K], rp[K], total[K];
        int *sb[K], *rb[K];
        MPI_Request r[2 * K];
        for (int k = 0; k < K; k++) {
            sp[k] = 1 + (int)MTest_Rand_below(&seed, 9);
            sc[k] = 1 + (int)MTest_Rand_below(&seed, 3000);
            total[k] = sp[k] * sc[k];
            do
                rp[k] = 1 + (int)MTest_Rand_below(&seed, 12);
            while (total[k] % rp[k]);
            sb[k] = malloc(sizeof(int) * total[k]);
            rb[k] = malloc(sizeof(int) * total[k]);
            for (int i = 0; i < total[k]; i++) {
                sb[k][i] = val(it, mtest_rank, i) ^ k;
                rb[k][i] = -1;
            }
            MPI_Psend_init(sb[k], sp[k], sc[k], MPI_INT, right, 20 + k, MPI_COMM_WORLD,
                           MPI_INFO_NULL, &r[k]);
            MPI_Precv_init(rb[k], rp[k], total[k] / rp[k], MPI_INT, left, 20 + k,
                           MPI_COMM_WORLD, MPI_INFO_NULL, &r[K + k]);
        }
        MPI_Startall(2 * K, r);
        /* Every (request, partition) once, in a random order. */
        int n = 0, order[K * 9][2];
        for (int k = 0; k < K; k++)
            for (int i = 0; i < sp[k]; i++) {
                order[n][0] = k;
                order[n][1] = i;
                n++;
            }
        uint64_t local = seed ^ (uint64_t)(mtest_rank + 1);
        for (int i = n - 1; i > 0; i--) {
            int j = (int)MTest_Rand_below(&local, i + 1), a = order[i][0], b = order[i][1];
            order[i][0] = order[j][0];
            order[i][1] = order[j][1];
            order[j][0] = a;
            order[j][1] = b;
        }
        for (int i = 0; i < n; i++)
            CHECK_RC(MPI_Pready(order[i][1], r[order[i][0]]), "MPI_Pready(random)");
        for (int done = 0; done < 2 * K; done++) {
            int idx = -1;
            CHECK_RC(MPI_Waitany(2 * K, r, &idx, MPI_STATUS_IGNORE), "MPI_Waitany");
            /* Persistent: the handle stays; keep it out of the next Waitany by swapping in
             * a null request. */
            if (idx >= 0 && idx < 2 * K) {
                MPI_Request_free(&r[idx]);
                r[idx] = MPI_REQUEST_NULL;
            }
        }
        for (int k = 0; k < K; k++) {
            for (int i = 0; i < total[k]; i++)
                if (!CHECK(rb[k][i] == (val(it, left, i) ^ k),
                           "random %d request %d (%dx%d -> %d): element %d is %d", it, k, sp[k],
                           sc[k], rp[k], i, rb[k][i]))
                    break;
            free(sb[k]);
            free(rb[k]);
        }
    }
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    right = (mtest_rank + 1) % mtest_size;
    left = (mtest_rank + mtest_size - 1) % mtest_size;
    transfer(8, 16, 8, 16, 3, 1);    /* equal */
    transfer(4, 30, 6, 20, 2, 2);    /* receive partitions inside and across send ones */
    transfer(3, 40, 8, 15, 2, 2);    /* boundaries that never line up; same tag again */
    transfer(1, 100, 10, 10, 2, 3);  /* one send partition, many receive ones */
    transfer(10, 10, 1, 100, 2, 3);  /* many send partitions, one receive one */
#ifndef MPICH_VERSION
    /* No partitions at all (MPI-4.1 allows 0; MPICH 4.0 requires a positive number). */
    transfer(0, 10, 0, 10, 2, 4);
#endif
    init_order();
    large();
    derived();
#ifndef MPICH_VERSION
    proc_null(); /* MPICH 4.0's MPI_Psend_init to MPI_PROC_NULL crashes (tests/c/README.md) */
#endif
    errors();
    isolation();
    random_mix();
    inter();
    staged();
#ifndef MPICH_VERSION
    hympi_errors();
#endif
    return MTest_Finalize(0);
}
