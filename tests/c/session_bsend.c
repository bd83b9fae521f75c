/* session_bsend: MPI-4.1 session buffers for buffered-mode sends (skipped where MPI < 4.1).
 *
 *  - Without any buffer, MPI_Bsend of a non-empty message on a session communicator fails
 *    with MPI_ERR_BUFFER (the communicator's handler is MPI_ERRORS_RETURN).
 *  - MPI_Session_attach_buffer: buffered sends on a communicator made from the session's
 *    mpi://WORLD group, and on a duplicate of it, go through the session's buffer (a ring:
 *    every rank sends M messages to the next and receives M from the previous, after a
 *    handshake, so the messages sit in the buffer); a second attach fails with
 *    MPI_ERR_BUFFER; a communicator buffer still comes first (a message too large for the
 *    session buffer fits in it).
 *  - MPI_Session_flush_buffer and MPI_Session_iflush_buffer complete once the messages were
 *    taken; MPI_Session_detach_buffer gives back the address and size attached.
 *  - A second session's buffer does not serve the first session's communicators. */
#include "mtest_session.h"

#if MTEST_SESSIONS && (MPI_VERSION > 4 || (MPI_VERSION == 4 && MPI_SUBVERSION >= 1))
enum { M = 6, LEN = 1000 };

/* Every rank sends M buffered messages of LEN ints to the next rank of `comm`, then lets
 * it go; the next rank receives them after the go (so they wait in the buffer). */
static void ring(MPI_Comm comm, int seed, const char *what)
{
    int rank, size, rc, go = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int *s = malloc(LEN * sizeof(int)), *r = malloc(LEN * sizeof(int));
    for (int k = 0; k < M; k++) {
        for (int i = 0; i < LEN; i++)
            s[i] = seed + rank * 100000 + k * 1000 + i;
        rc = MPI_Bsend(s, LEN, MPI_INT, next, 10 + k, comm);
        CHECK(rc == MPI_SUCCESS, "%s: MPI_Bsend %d failed (rc %d)", what, k, rc);
        memset(s, 0xee, LEN * sizeof(int)); /* reuse at once */
    }
    MPI_Send(&go, 1, MPI_INT, next, 1, comm);
    MPI_Recv(&go, 1, MPI_INT, prev, 1, comm, MPI_STATUS_IGNORE);
    for (int k = 0; k < M; k++) {
        rc = MPI_Recv(r, LEN, MPI_INT, prev, 10 + k, comm, MPI_STATUS_IGNORE);
        CHECK(rc == MPI_SUCCESS, "%s: MPI_Recv %d failed (rc %d)", what, k, rc);
        int bad = 0;
        for (int i = 0; i < LEN; i++)
            bad += r[i] != seed + prev * 100000 + k * 1000 + i;
        CHECK(bad == 0, "%s: message %d from %d has %d wrong ints", what, k, prev, bad);
    }
    free(s);
    free(r);
}

int main(void)
{
    MPI_Session s, s2;
    MPI_Group g;
    MPI_Comm comm, dup;
    int rc, size, x = 7;

    rc = MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s);
    CHECK_RC(rc, "MPI_Session_init");
    MTest_Session_set_rank(s);
    MPI_Group_from_session_pset(s, "mpi://WORLD", &g);
    rc = MPI_Comm_create_from_group(g, "org.hympi.test.session_bsend", MPI_INFO_NULL,
                                    MPI_ERRORS_RETURN, &comm);
    CHECK_RC(rc, "MPI_Comm_create_from_group");
    MPI_Group_free(&g);
    MPI_Comm_size(comm, &size);

    /* No buffer anywhere: MPI_ERR_BUFFER. */
    rc = MPI_Bsend(&x, 1, MPI_INT, 0, 99, comm);
    {
        int cls = MPI_SUCCESS;
        if (rc != MPI_SUCCESS)
            MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_BUFFER, "MPI_Bsend without a buffer: class %d, want MPI_ERR_BUFFER",
              cls);
    }

    /* A session buffer serves the session's communicators and their duplicates. */
    int bufsize = M * (LEN * (int)sizeof(int) + MPI_BSEND_OVERHEAD);
    char *buf = malloc(bufsize);
    rc = MPI_Session_attach_buffer(s, buf, bufsize);
    CHECK_RC(rc, "MPI_Session_attach_buffer");
    char *other = malloc(64);
    rc = MPI_Session_attach_buffer(s, other, 64);
    {
        int cls = MPI_SUCCESS;
        if (rc != MPI_SUCCESS)
            MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_BUFFER, "second MPI_Session_attach_buffer: class %d, want "
              "MPI_ERR_BUFFER", cls);
    }
    ring(comm, 1, "session buffer");
    MPI_Comm_dup(comm, &dup);
    ring(dup, 2, "session buffer, duplicate communicator");

    /* A communicator buffer comes first: a message larger than the session buffer fits. */
    {
        int big = 4 * LEN * M;
        int cbsize = big * (int)sizeof(int) + MPI_BSEND_OVERHEAD;
        char *cb = malloc(cbsize);
        int *data = calloc(big, sizeof(int));
        int rank;
        MPI_Comm_rank(dup, &rank);
        rc = MPI_Comm_attach_buffer(dup, cb, cbsize);
        CHECK_RC(rc, "MPI_Comm_attach_buffer");
        for (int i = 0; i < big; i++)
            data[i] = i ^ rank;
        rc = MPI_Bsend(data, big, MPI_INT, (rank + 1) % size, 5, dup);
        CHECK_RC(rc, "MPI_Bsend larger than the session buffer through the communicator's");
        int prev = (rank + size - 1) % size;
        rc = MPI_Recv(data, big, MPI_INT, prev, 5, dup, MPI_STATUS_IGNORE);
        CHECK_RC(rc, "MPI_Recv of the large buffered message");
        int bad = 0;
        for (int i = 0; i < big; i++)
            bad += data[i] != (i ^ prev);
        CHECK(bad == 0, "large buffered message: %d wrong ints", bad);
        void *addr;
        int sz;
        rc = MPI_Comm_detach_buffer(dup, &addr, &sz);
        CHECK_RC(rc, "MPI_Comm_detach_buffer");
        free(cb);
        free(data);
    }
    MPI_Comm_free(&dup);

    /* Flush, blocking and nonblocking. */
    {
        int rank, go = 0;
        MPI_Comm_rank(comm, &rank);
        int next = (rank + 1) % size, prev = (rank + size - 1) % size;
        int *msg = calloc(LEN, sizeof(int));
        for (int mode = 0; mode < 2; mode++) {
            rc = MPI_Bsend(msg, LEN, MPI_INT, next, 30 + mode, comm);
            CHECK_RC(rc, "MPI_Bsend before a flush");
            /* The receiver is told to go before the flush: the flush cannot hang. */
            MPI_Send(&go, 1, MPI_INT, next, 2, comm);
            MPI_Recv(&go, 1, MPI_INT, prev, 2, comm, MPI_STATUS_IGNORE);
            MPI_Request req;
            if (mode == 0) {
                /* Post the receive first so the flush on the other side completes. */
                MPI_Irecv(msg, LEN, MPI_INT, prev, 30, comm, &req);
                rc = MPI_Session_flush_buffer(s);
                CHECK_RC(rc, "MPI_Session_flush_buffer");
                MPI_Wait(&req, MPI_STATUS_IGNORE);
            } else {
                MPI_Request f;
                MPI_Irecv(msg, LEN, MPI_INT, prev, 31, comm, &req);
                rc = MPI_Session_iflush_buffer(s, &f);
                CHECK_RC(rc, "MPI_Session_iflush_buffer");
                MPI_Wait(&req, MPI_STATUS_IGNORE);
                rc = MPI_Wait(&f, MPI_STATUS_IGNORE);
                CHECK_RC(rc, "MPI_Wait on the flush request");
            }
        }
        free(msg);
    }

    /* Another session's buffer does not serve this session's communicators. */
    rc = MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s2);
    CHECK_RC(rc, "second MPI_Session_init");
    void *addr;
    int sz;
    rc = MPI_Session_detach_buffer(s, &addr, &sz);
    CHECK_RC(rc, "MPI_Session_detach_buffer");
    CHECK(addr == buf && sz == bufsize, "detach gave (%p, %d), attached (%p, %d)", addr, sz,
          (void *)buf, bufsize);
    rc = MPI_Session_attach_buffer(s2, buf, bufsize);
    CHECK_RC(rc, "MPI_Session_attach_buffer on the second session");
    rc = MPI_Bsend(&x, 1, MPI_INT, 0, 98, comm);
    {
        int cls = MPI_SUCCESS;
        if (rc != MPI_SUCCESS)
            MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_BUFFER, "MPI_Bsend with only another session's buffer: class %d, "
              "want MPI_ERR_BUFFER", cls);
    }
    rc = MPI_Session_detach_buffer(s2, &addr, &sz);
    CHECK_RC(rc, "MPI_Session_detach_buffer on the second session");
    rc = MPI_Session_finalize(&s2);
    CHECK_RC(rc, "MPI_Session_finalize of the second session");
    free(buf);
    free(other);

    int fails = MTest_Session_report(comm);
    MPI_Comm_free(&comm);
    rc = MPI_Session_finalize(&s);
    CHECK_RC(rc, "MPI_Session_finalize");
    (void)fails;
    return MTest_Session_exit_code();
}
#elif MTEST_SESSIONS
int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    MTest_Skip("session buffers are MPI-4.1");
    return MTest_Finalize(0);
}
#endif
