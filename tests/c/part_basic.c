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
    CHECK_CLASS(MPI_Pready(2, s), MPI_ERR_ARG, "MPI_Pready(out of range)");
    CHECK_CLASS(MPI_Pready(0, r), MPI_ERR_REQUEST, "MPI_Pready(receive request)");
    CHECK_CLASS(MPI_Parrived(r, 5, &flag), MPI_ERR_ARG, "MPI_Parrived(out of range)");
    CHECK_CLASS(MPI_Parrived(s, 0, &flag), MPI_ERR_REQUEST, "MPI_Parrived(send request)");
#endif
    CHECK_RC(MPI_Pready_range(0, 1, s), "MPI_Pready_range");
#ifndef MPICH_VERSION
    CHECK_CLASS(MPI_Pready(1, s), MPI_ERR_ARG, "MPI_Pready(already ready)");
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
    CHECK_CLASS(MPI_Precv_init(b, 2, 4, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, MPI_INFO_NULL,
                               &tmp),
                MPI_ERR_RANK, "MPI_Precv_init(MPI_ANY_SOURCE)");
    CHECK_CLASS(MPI_Precv_init(b, 2, 4, MPI_INT, left, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_INFO_NULL,
                               &tmp),
                MPI_ERR_TAG, "MPI_Precv_init(MPI_ANY_TAG)");
    CHECK_CLASS(MPI_Psend_init(b, -1, 4, MPI_INT, right, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &tmp),
                MPI_ERR_ARG, "MPI_Psend_init(partitions -1)");
#endif
    CHECK(tmp == MPI_REQUEST_NULL, "a failed init wrote a request");
    MPI_Request_free(&s);
    MPI_Request_free(&r);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
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
    return MTest_Finalize(0);
}
