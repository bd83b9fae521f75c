/* bsend_buffers: the MPI-4.1 buffered-mode additions (skipped where MPI < 4.1).
 *
 *  - Communicator buffers: MPI_Comm_attach_buffer on MPI_COMM_WORLD serves MPI_Bsend on
 *    WORLD ahead of the process buffer (a message too large for the process buffer fits);
 *    MPI_COMM_SELF still uses the process buffer; MPI_Comm_detach_buffer gives back the
 *    address and size; a second attach to the same communicator fails with MPI_ERR_BUFFER;
 *    MPI_COMM_NULL fails with MPI_ERR_COMM.
 *  - MPI_BUFFER_AUTOMATIC (process and communicator): buffered sends of 0 B .. 1 MiB with no
 *    size given, 8 in flight to a receiver held back by a handshake; the send buffer is
 *    reused at once; detach gives back MPI_BUFFER_AUTOMATIC.
 *  - MPI_Buffer_flush / MPI_Comm_flush_buffer: with a buffer that holds one 1 MiB message,
 *    a second one fits only after the flush, which returns once the receiver (told to go
 *    before the flush) took the first.  MPI_Buffer_iflush / MPI_Comm_iflush_buffer: a
 *    request that completes once the receiver took the messages; with nothing in flight
 *    it is complete at once.
 *  - A communicator freed with its buffer attached and a message in flight: the message
 *    still arrives. */
#include "mtest.h"

#if MPI_VERSION > 4 || (MPI_VERSION == 4 && MPI_SUBVERSION >= 1)
#define HAVE_MPI_4_1 1
#endif

#ifdef HAVE_MPI_4_1
enum { BIG = 1 << 20, K = 8 };

/* Rank `a` sends K buffered messages of sizes 0 B .. 1 MiB on `comm` (its buffer: whatever
 * is attached), the receiver takes them after a handshake. */
static void automatic_round(MPI_Comm comm, int partner, int a, int seed)
{
    static const int sizes[K] = {0, 1, 100, 4000, 65536, 300000, BIG, 7};
    int rc, dummy = 0, count;
    MPI_Status st;
    if (a) {
        unsigned char *s = malloc(BIG);
        for (int k = 0; k < K; k++) {
            MTest_Fill_bytes(s, sizes[k], seed + k);
            rc = MPI_Bsend(s, sizes[k], MPI_BYTE, partner, 20 + k, comm);
            CHECK_RC(rc, "MPI_Bsend into an automatic buffer");
            memset(s, 0xee, sizes[k]); /* reuse at once */
        }
        MPI_Send(&dummy, 0, MPI_INT, partner, 1, comm); /* go */
        free(s);
    } else {
        unsigned char *r = malloc(BIG);
        MPI_Recv(&dummy, 0, MPI_INT, partner, 1, comm, MPI_STATUS_IGNORE);
        for (int k = K - 1; k >= 0; k--) {
            rc = MPI_Recv(r, BIG, MPI_BYTE, partner, 20 + k, comm, &st);
            CHECK_RC(rc, "MPI_Recv of an automatically buffered message");
            MPI_Get_count(&st, MPI_BYTE, &count);
            CHECK(count == sizes[k], "automatic buffer: count %d, want %d", count, sizes[k]);
            CHECK(MTest_Verify_bytes(r, sizes[k], seed + k) < 0, "automatic buffer: message %d corrupted", k);
        }
        free(r);
    }
}

/* A buffer with room for one BIG message: the second one fits only once the first has been
 * taken by the receiver, which a flush waits for.  mode 0: MPI_Buffer_flush on the process
 * buffer; 1: MPI_Comm_flush_buffer on WORLD's buffer; 2 and 3: the nonblocking forms. */
static void flush_round(int mode, int partner, int a)
{
    int rc, dummy = 0, count;
    MPI_Status st;
    int bsize = BIG + MPI_BSEND_OVERHEAD;
    if (a) {
        char *bbuf = malloc(bsize);
        unsigned char *s = malloc(BIG);
        if (mode % 2 == 0)
            rc = MPI_Buffer_attach(bbuf, bsize);
        else
            rc = MPI_Comm_attach_buffer(MPI_COMM_WORLD, bbuf, bsize);
        CHECK_RC(rc, "attach for the flush round");
        MTest_Fill_bytes(s, BIG, 100 + mode);
        rc = MPI_Bsend(s, BIG, MPI_BYTE, partner, 30, MPI_COMM_WORLD);
        CHECK_RC(rc, "first MPI_Bsend of the flush round");
        MPI_Send(&dummy, 0, MPI_INT, partner, 1, MPI_COMM_WORLD); /* go */
        if (mode == 0) {
            rc = MPI_Buffer_flush();
            CHECK_RC(rc, "MPI_Buffer_flush");
        } else if (mode == 1) {
            rc = MPI_Comm_flush_buffer(MPI_COMM_WORLD);
            CHECK_RC(rc, "MPI_Comm_flush_buffer");
        } else {
            MPI_Request req = MPI_REQUEST_NULL;
            if (mode == 2)
                rc = MPI_Buffer_iflush(&req);
            else
                rc = MPI_Comm_iflush_buffer(MPI_COMM_WORLD, &req);
            CHECK_RC(rc, "nonblocking flush");
            int flag = 0;
            while (!flag) {
                rc = MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
                CHECK_RC(rc, "MPI_Test on the flush request");
                if (rc != MPI_SUCCESS)
                    break;
            }
            CHECK(req == MPI_REQUEST_NULL, "completed flush request not freed");
        }
        MTest_Fill_bytes(s, BIG, 200 + mode);
        rc = MPI_Bsend(s, BIG, MPI_BYTE, partner, 31, MPI_COMM_WORLD);
        CHECK_RC(rc, "second MPI_Bsend after the flush (the first must be gone)");
        void *p = NULL;
        int psize = -1;
        if (mode % 2 == 0)
            rc = MPI_Buffer_detach(&p, &psize);
        else
            rc = MPI_Comm_detach_buffer(MPI_COMM_WORLD, &p, &psize);
        CHECK(rc == MPI_SUCCESS && p == bbuf && psize == bsize, "detach after the flush round: rc %d, %p/%d", rc, p, psize);
        free(bbuf);
        free(s);
    } else {
        unsigned char *r = malloc(BIG);
        MPI_Recv(&dummy, 0, MPI_INT, partner, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int t = 30; t <= 31; t++) {
            rc = MPI_Recv(r, BIG, MPI_BYTE, partner, t, MPI_COMM_WORLD, &st);
            CHECK_RC(rc, "MPI_Recv in the flush round");
            MPI_Get_count(&st, MPI_BYTE, &count);
            CHECK(count == BIG && MTest_Verify_bytes(r, BIG, (t == 30 ? 100 : 200) + mode) < 0,
                  "flush round %d: message %d wrong (count %d)", mode, t, count);
        }
        free(r);
    }
}
#endif

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
#ifndef HAVE_MPI_4_1
    MTest_Skip("MPI_Comm_attach_buffer and the flush calls are MPI-4.1");
    return MTest_Finalize(0);
#else
    MTest_Errors_return_all();
    int partner = MTest_Partner();
    int rc, count;
    MPI_Status st;
    void *p;
    int psize;
    char msg[3000], r[3000];
    memset(msg, 7, sizeof msg);

    /* Communicator buffer ahead of the process buffer, alone (self messages). */
    {
        int small = 100 + MPI_BSEND_OVERHEAD, large = 3000 + MPI_BSEND_OVERHEAD;
        char *pb = malloc(small), *cb = malloc(large), *other = malloc(large);
        rc = MPI_Buffer_attach(pb, small);
        CHECK_RC(rc, "MPI_Buffer_attach");
        rc = MPI_Comm_attach_buffer(MPI_COMM_WORLD, cb, large);
        CHECK_RC(rc, "MPI_Comm_attach_buffer");
        rc = MPI_Comm_attach_buffer(MPI_COMM_WORLD, other, large);
        CHECK_CLASS(rc, MPI_ERR_BUFFER, "a second MPI_Comm_attach_buffer on WORLD");
        rc = MPI_Comm_attach_buffer(MPI_COMM_NULL, other, large);
        CHECK_CLASS(rc, MPI_ERR_COMM, "MPI_Comm_attach_buffer on MPI_COMM_NULL");
        rc = MPI_Bsend(msg, 3000, MPI_BYTE, mtest_rank, 5, MPI_COMM_WORLD);
        CHECK_RC(rc, "MPI_Bsend of 3000 B on WORLD (its 3000 B buffer)");
        rc = MPI_Bsend(msg, 3000, MPI_BYTE, 0, 5, MPI_COMM_SELF);
        CHECK_CLASS(rc, MPI_ERR_BUFFER, "MPI_Bsend of 3000 B on SELF (the 100 B process buffer)");
        rc = MPI_Bsend(msg, 100, MPI_BYTE, 0, 6, MPI_COMM_SELF);
        CHECK_RC(rc, "MPI_Bsend of 100 B on SELF");
        rc = MPI_Recv(r, 3000, MPI_BYTE, mtest_rank, 5, MPI_COMM_WORLD, &st);
        CHECK_RC(rc, "MPI_Recv on WORLD");
        MPI_Get_count(&st, MPI_BYTE, &count);
        CHECK(count == 3000 && r[2999] == 7, "communicator-buffered message: count %d", count);
        rc = MPI_Recv(r, 3000, MPI_BYTE, 0, 6, MPI_COMM_SELF, &st);
        CHECK_RC(rc, "MPI_Recv on SELF");
        MPI_Get_count(&st, MPI_BYTE, &count);
        CHECK(count == 100, "process-buffered message: count %d", count);
        p = NULL;
        psize = -1;
        rc = MPI_Comm_detach_buffer(MPI_COMM_WORLD, &p, &psize);
        CHECK(rc == MPI_SUCCESS && p == cb && psize == large, "MPI_Comm_detach_buffer: rc %d, %p/%d", rc, p, psize);
        /* Detached: WORLD falls back to the process buffer. */
        rc = MPI_Bsend(msg, 3000, MPI_BYTE, mtest_rank, 5, MPI_COMM_WORLD);
        CHECK_CLASS(rc, MPI_ERR_BUFFER, "MPI_Bsend of 3000 B on WORLD after its buffer was detached");
        MPI_Count csize = -1;
        rc = MPI_Comm_attach_buffer_c(MPI_COMM_WORLD, cb, (MPI_Count)large);
        CHECK_RC(rc, "MPI_Comm_attach_buffer_c");
        rc = MPI_Comm_detach_buffer_c(MPI_COMM_WORLD, &p, &csize);
        CHECK(rc == MPI_SUCCESS && p == cb && csize == large, "MPI_Comm_detach_buffer_c: rc %d, %p/%lld", rc, p, (long long)csize);
        rc = MPI_Buffer_detach(&p, &psize);
        CHECK(rc == MPI_SUCCESS && p == pb && psize == small, "MPI_Buffer_detach: rc %d, %p/%d", rc, p, psize);
        free(pb);
        free(cb);
        free(other);
    }

    /* Nonblocking flush with nothing in flight: complete at once. */
    {
        MPI_Request req = MPI_REQUEST_NULL;
        rc = MPI_Buffer_iflush(&req);
        CHECK_RC(rc, "MPI_Buffer_iflush with nothing buffered");
        rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
        CHECK_RC(rc, "MPI_Wait on an idle flush");
        rc = MPI_Buffer_flush();
        CHECK_RC(rc, "MPI_Buffer_flush with nothing buffered");
        rc = MPI_Comm_flush_buffer(MPI_COMM_SELF);
        CHECK_RC(rc, "MPI_Comm_flush_buffer with no buffer attached");
    }

    /* MPI_BUFFER_AUTOMATIC, alone: self messages. */
    rc = MPI_Buffer_attach(MPI_BUFFER_AUTOMATIC, 0);
    CHECK_RC(rc, "MPI_Buffer_attach(MPI_BUFFER_AUTOMATIC)");
    for (int k = 0; k < 4; k++) {
        rc = MPI_Bsend(msg, 3000, MPI_BYTE, 0, 40 + k, MPI_COMM_SELF);
        CHECK_RC(rc, "MPI_Bsend to self into the automatic buffer");
    }
    for (int k = 0; k < 4; k++) {
        rc = MPI_Recv(r, 3000, MPI_BYTE, 0, 40 + k, MPI_COMM_SELF, &st);
        CHECK_RC(rc, "MPI_Recv of an automatically buffered self message");
    }
    rc = MPI_Buffer_detach(&p, &psize);
    CHECK(rc == MPI_SUCCESS && p == MPI_BUFFER_AUTOMATIC, "MPI_Buffer_detach of the automatic buffer: rc %d, %p", rc, p);

    MPI_Comm dup; /* collective: every rank */
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    if (partner < 0)
        MPI_Comm_free(&dup);
    if (partner >= 0) {
        int a = mtest_rank < partner;
        /* Automatic buffers, process and communicator scope. */
        if (a) {
            rc = MPI_Buffer_attach(MPI_BUFFER_AUTOMATIC, 0);
            CHECK_RC(rc, "MPI_Buffer_attach(MPI_BUFFER_AUTOMATIC)");
        }
        automatic_round(MPI_COMM_WORLD, partner, a, 1);
        if (a) {
            rc = MPI_Buffer_detach(&p, &psize);
            CHECK(rc == MPI_SUCCESS && p == MPI_BUFFER_AUTOMATIC, "MPI_Buffer_detach (automatic): rc %d, %p", rc, p);
            rc = MPI_Comm_attach_buffer(MPI_COMM_WORLD, MPI_BUFFER_AUTOMATIC, 0);
            CHECK_RC(rc, "MPI_Comm_attach_buffer(MPI_BUFFER_AUTOMATIC)");
        }
        automatic_round(MPI_COMM_WORLD, partner, a, 50);
        if (a) {
            rc = MPI_Comm_detach_buffer(MPI_COMM_WORLD, &p, &psize);
            CHECK(rc == MPI_SUCCESS && p == MPI_BUFFER_AUTOMATIC, "MPI_Comm_detach_buffer (automatic): rc %d, %p", rc, p);
        }
        for (int mode = 0; mode < 4; mode++)
            flush_round(mode, partner, a);

        /* A communicator freed with its buffer attached and a message in flight. */
        if (a) {
            int bsize = BIG + MPI_BSEND_OVERHEAD;
            char *bbuf = malloc(bsize);
            unsigned char *s = malloc(BIG);
            MTest_Fill_bytes(s, BIG, 77);
            rc = MPI_Comm_attach_buffer(dup, bbuf, bsize);
            CHECK_RC(rc, "MPI_Comm_attach_buffer on a duplicate");
            rc = MPI_Bsend(s, BIG, MPI_BYTE, partner, 9, dup);
            CHECK_RC(rc, "MPI_Bsend on the duplicate");
            MPI_Comm_free(&dup);
            int dummy = 0;
            MPI_Send(&dummy, 0, MPI_INT, partner, 2, MPI_COMM_WORLD);
            /* The message leaves the (implicitly detached) buffer once received. */
            MPI_Recv(&dummy, 0, MPI_INT, partner, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            free(bbuf);
            free(s);
        } else {
            unsigned char *rb = malloc(BIG);
            int dummy = 0;
            MPI_Recv(&dummy, 0, MPI_INT, partner, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            rc = MPI_Recv(rb, BIG, MPI_BYTE, partner, 9, dup, &st);
            CHECK_RC(rc, "MPI_Recv from a sender that freed its communicator");
            MPI_Get_count(&st, MPI_BYTE, &count);
            CHECK(count == BIG && MTest_Verify_bytes(rb, BIG, 77) < 0, "message from the freed communicator's buffer wrong (count %d)", count);
            MPI_Send(&dummy, 0, MPI_INT, partner, 3, MPI_COMM_WORLD);
            MPI_Comm_free(&dup);
            free(rb);
        }
    }
    return MTest_Finalize(0);
#endif
}
