/* errhandler: communicator error handlers.
 *
 *  - The default handler of MPI_COMM_WORLD and MPI_COMM_SELF is MPI_ERRORS_ARE_FATAL
 *    (MPI_Comm_get_errhandler; the handle it returns is freed with MPI_Errhandler_free, as
 *    the standard asks of every handle it returns, predefined or not).
 *  - MPI_ERRORS_RETURN: set, read back, erroneous calls return their code.
 *  - User handlers: MPI_Comm_create_errhandler, MPI_Comm_set_errhandler,
 *    MPI_Comm_get_errhandler (gives the handler set), the handler is called exactly once per
 *    error with the communicator and the code the call then returns; MPI_Comm_call_errhandler
 *    calls it with the code given and returns MPI_SUCCESS; MPI_Errhandler_free sets the
 *    handle to MPI_ERRHANDLER_NULL but a communicator still using the handler keeps it
 *    working; a second handler replaces the first.
 *  - Errors on MPI_COMM_SELF go to MPI_COMM_SELF's handler, not to MPI_COMM_WORLD's, and
 *    the other way round.
 *  - MPI_Comm_call_errhandler on a communicator with MPI_ERRORS_RETURN returns MPI_SUCCESS
 *    (MPI-4.0 section 9.3.4: it returns MPI_SUCCESS when the handler was called and
 *    returned).
 * MPI_ERRORS_ARE_FATAL and MPI_ERRORS_ABORT taking effect are in errhandler_fatal.c and
 * errhandler_abort.c. */
#include "mtest.h"

static int ncalls[2];
static MPI_Comm last_comm[2];
static int last_code[2];

static void handler0(MPI_Comm *comm, int *code, ...)
{
    ncalls[0]++;
    last_comm[0] = *comm;
    last_code[0] = *code;
}

static void handler1(MPI_Comm *comm, int *code, ...)
{
    ncalls[1]++;
    last_comm[1] = *comm;
    last_code[1] = *code;
}

static void reset(void)
{
    ncalls[0] = ncalls[1] = 0;
    last_code[0] = last_code[1] = -1;
    last_comm[0] = last_comm[1] = MPI_COMM_NULL;
}

static int bad_send(MPI_Comm comm)
{
    int x = 0, size;
    MPI_Comm_size(comm, &size);
    return MPI_Send(&x, 1, MPI_INT, size + 3, 0, comm);
}

static void expect_handler(MPI_Errhandler comm_eh, MPI_Comm comm, const char *what)
{
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    int rc = MPI_Comm_get_errhandler(comm, &eh);
    CHECK_RC(rc, "MPI_Comm_get_errhandler");
    CHECK(eh == comm_eh, "%s: MPI_Comm_get_errhandler gave another handler", what);
    rc = MPI_Errhandler_free(&eh);
    CHECK_RC(rc, "MPI_Errhandler_free of the handle from MPI_Comm_get_errhandler");
    CHECK(eh == MPI_ERRHANDLER_NULL, "%s: MPI_Errhandler_free did not set MPI_ERRHANDLER_NULL", what);
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    int rc;

    /* Defaults. */
    expect_handler(MPI_ERRORS_ARE_FATAL, MPI_COMM_WORLD, "default on WORLD");
    expect_handler(MPI_ERRORS_ARE_FATAL, MPI_COMM_SELF, "default on SELF");

    /* MPI_ERRORS_RETURN. */
    rc = MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK_RC(rc, "MPI_Comm_set_errhandler(WORLD, MPI_ERRORS_RETURN)");
    expect_handler(MPI_ERRORS_RETURN, MPI_COMM_WORLD, "ERRORS_RETURN on WORLD");
    expect_handler(MPI_ERRORS_ARE_FATAL, MPI_COMM_SELF, "SELF after setting WORLD");
    rc = bad_send(MPI_COMM_WORLD);
    CHECK_CLASS(rc, MPI_ERR_RANK, "send to a bad rank with MPI_ERRORS_RETURN");
    rc = MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_OTHER);
    CHECK_RC(rc, "MPI_Comm_call_errhandler with MPI_ERRORS_RETURN");

    /* A user handler on WORLD. */
    MPI_Errhandler eh0 = MPI_ERRHANDLER_NULL, eh1 = MPI_ERRHANDLER_NULL;
    rc = MPI_Comm_create_errhandler(handler0, &eh0);
    CHECK_RC(rc, "MPI_Comm_create_errhandler");
    CHECK(eh0 != MPI_ERRHANDLER_NULL, "MPI_Comm_create_errhandler gave MPI_ERRHANDLER_NULL");
    rc = MPI_Comm_create_errhandler(handler1, &eh1);
    CHECK_RC(rc, "MPI_Comm_create_errhandler");
    CHECK(eh1 != eh0, "two handlers created with the same handle");
    rc = MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh0);
    CHECK_RC(rc, "MPI_Comm_set_errhandler(WORLD, user)");
    expect_handler(eh0, MPI_COMM_WORLD, "user handler on WORLD");

    reset();
    rc = bad_send(MPI_COMM_WORLD);
    CHECK_CLASS(rc, MPI_ERR_RANK, "send to a bad rank with a user handler");
    CHECK(ncalls[0] == 1, "the handler was called %d times for one error", ncalls[0]);
    CHECK(last_comm[0] == MPI_COMM_WORLD, "the handler got another communicator than WORLD");
    CHECK(last_code[0] == rc, "the handler got code %d, the call returned %d", last_code[0], rc);
    CHECK(ncalls[1] == 0, "the other handler was called");

    /* Errors of another kind, each one call. */
    reset();
    int x = 0;
    rc = MPI_Send(&x, 1, MPI_INT, 0, -5, MPI_COMM_WORLD);
    CHECK_CLASS(rc, MPI_ERR_TAG, "send with tag -5");
    CHECK(ncalls[0] == 1 && last_code[0] == rc, "tag error: %d calls, code %d (returned %d)", ncalls[0], last_code[0], rc);
    reset();
    rc = MPI_Recv(&x, -1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK_CLASS(rc, MPI_ERR_COUNT, "recv with count -1");
    CHECK(ncalls[0] == 1 && last_code[0] == rc, "count error: %d calls, code %d (returned %d)", ncalls[0], last_code[0], rc);

    /* MPI_Comm_call_errhandler. */
    reset();
    rc = MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_OTHER);
    CHECK_RC(rc, "MPI_Comm_call_errhandler");
    CHECK(ncalls[0] == 1, "MPI_Comm_call_errhandler called the handler %d times", ncalls[0]);
    CHECK(last_code[0] == MPI_ERR_OTHER, "MPI_Comm_call_errhandler passed code %d", last_code[0]);
    CHECK(last_comm[0] == MPI_COMM_WORLD, "MPI_Comm_call_errhandler passed another communicator");
    reset();
    rc = MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_TRUNCATE);
    CHECK(ncalls[0] == 1 && last_code[0] == MPI_ERR_TRUNCATE, "call_errhandler(MPI_ERR_TRUNCATE): %d calls, code %d", ncalls[0], last_code[0]);

    /* A user handler on SELF, distinct from WORLD's. */
    rc = MPI_Comm_set_errhandler(MPI_COMM_SELF, eh1);
    CHECK_RC(rc, "MPI_Comm_set_errhandler(SELF, user)");
    expect_handler(eh1, MPI_COMM_SELF, "user handler on SELF");
    expect_handler(eh0, MPI_COMM_WORLD, "WORLD after setting SELF");
    reset();
    rc = bad_send(MPI_COMM_SELF);
    CHECK_CLASS(rc, MPI_ERR_RANK, "send to rank 1+ on MPI_COMM_SELF");
    CHECK(ncalls[1] == 1 && last_comm[1] == MPI_COMM_SELF && last_code[1] == rc,
          "SELF error: SELF handler %d calls (comm is SELF: %d), code %d (returned %d)", ncalls[1],
          last_comm[1] == MPI_COMM_SELF, last_code[1], rc);
    CHECK(ncalls[0] == 0, "an error on SELF called WORLD's handler");
    reset();
    rc = bad_send(MPI_COMM_WORLD);
    CHECK(ncalls[0] == 1 && ncalls[1] == 0, "WORLD error: WORLD handler %d calls, SELF handler %d", ncalls[0], ncalls[1]);
    reset();
    rc = MPI_Comm_call_errhandler(MPI_COMM_SELF, MPI_ERR_ARG);
    CHECK_RC(rc, "MPI_Comm_call_errhandler(SELF)");
    CHECK(ncalls[1] == 1 && last_code[1] == MPI_ERR_ARG && last_comm[1] == MPI_COMM_SELF,
          "MPI_Comm_call_errhandler(SELF): %d calls, code %d", ncalls[1], last_code[1]);

    /* Free both handles while the communicators still use them. */
    rc = MPI_Errhandler_free(&eh0);
    CHECK_RC(rc, "MPI_Errhandler_free");
    CHECK(eh0 == MPI_ERRHANDLER_NULL, "MPI_Errhandler_free did not set MPI_ERRHANDLER_NULL");
    rc = MPI_Errhandler_free(&eh1);
    CHECK_RC(rc, "MPI_Errhandler_free");
    reset();
    rc = bad_send(MPI_COMM_WORLD);
    CHECK_CLASS(rc, MPI_ERR_RANK, "send to a bad rank after freeing the handle");
    CHECK(ncalls[0] == 1 && last_code[0] == rc, "freed-but-attached handler: %d calls", ncalls[0]);
    reset();
    rc = bad_send(MPI_COMM_SELF);
    CHECK(ncalls[1] == 1 && last_code[1] == rc, "freed-but-attached SELF handler: %d calls", ncalls[1]);

    /* Replace WORLD's handler by a new one, then restore MPI_ERRORS_RETURN. */
    MPI_Errhandler eh2;
    MPI_Comm_create_errhandler(handler1, &eh2);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh2);
    MPI_Errhandler_free(&eh2);
    reset();
    bad_send(MPI_COMM_WORLD);
    CHECK(ncalls[0] == 0 && ncalls[1] == 1 && last_comm[1] == MPI_COMM_WORLD, "after replacing: handler0 %d calls, handler1 %d", ncalls[0], ncalls[1]);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    reset();
    rc = bad_send(MPI_COMM_WORLD);
    CHECK_CLASS(rc, MPI_ERR_RANK, "send to a bad rank, back to MPI_ERRORS_RETURN");
    CHECK(ncalls[0] == 0 && ncalls[1] == 0, "a user handler was called after MPI_ERRORS_RETURN was set back");

    /* Errors that leave the communicator usable: a normal exchange still works. */
    int partner = MTest_Partner();
    if (partner >= 0) {
        int out = mtest_rank, in = -1;
        rc = MPI_Sendrecv(&out, 1, MPI_INT, partner, 3, &in, 1, MPI_INT, partner, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK_RC(rc, "MPI_Sendrecv after errors");
        CHECK(in == partner, "got %d from %d", in, partner);
    }
    return MTest_Finalize(0);
}
