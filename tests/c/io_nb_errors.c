/* io_nb_errors: errors of nonblocking file accesses go to the file's error handler.
 *
 * MPI_COMM_WORLD keeps MPI_ERRORS_ARE_FATAL throughout: an error raised on the wrong object
 * (the communicator the file was opened on, or a duplicate of it) ends the program.
 *  - A user handler on the file (MPI_File_create_errhandler): a nonblocking write that
 *    fails (a write beyond the process's file-size limit: RLIMIT_FSIZE set low, SIGXFSZ
 *    ignored, so the write fails with EFBIG) calls the handler once, with the file and the
 *    code the call returns, whether the library reports it from MPI_File_iwrite_at itself
 *    or from MPI_Wait; its class is the one the blocking MPI_File_write_at gives for the same
 *    write (an I/O class, not MPI_SUCCESS).
 *  - MPI_ERRORS_RETURN on the file: MPI_File_iwrite_at of a good and of a failing write,
 *    then MPI_Waitall: MPI_ERR_IN_STATUS, the good request's MPI_ERROR is MPI_SUCCESS and
 *    the failing one's has the class of the blocking write (or the failure came from the
 *    iwrite call itself); MPI_Test reports the failure the same way.
 *  - The good writes are in the file (read back).
 * Each rank uses its own file on MPI_COMM_SELF, so the checks run at any rank count.
 * Reference MPIs: MPICH 4.0.2 (ROMIO's nonblocking writes are POSIX AIO) waits forever in
 * MPI_Wait for the failed write, and Open MPI 4.1 crashes in it: under them only the
 * blocking write and the good nonblocking write are checked (an MTEST_NOTE line says so);
 * Open MPI 4.1 also returns MPI_SUCCESS from the failed blocking write (noted). */
#include "mtest_io.h"
#include <signal.h>
#include <sys/resource.h>

static int handler_calls = 0;
static int handler_code = MPI_SUCCESS;
static MPI_File handler_file = MPI_FILE_NULL;

static void on_file_error(MPI_File *fh, int *code, ...)
{
    handler_calls++;
    handler_code = *code;
    handler_file = *fh;
}

#define LIMIT (1 << 20)
#define FAR ((MPI_Offset)4 << 20)

int main(int argc, char **argv)
{
    int me, vals[4] = {11, 22, 33, 44}, back[4] = {0, 0, 0, 0};
    char path[MTEST_IO_PATH_MAX], name[64];
    MPI_File fh;
    MPI_Errhandler eh;
    MPI_Request req[2];
    MPI_Status st[2];
    struct rlimit rl;
    int rc, blocking_class, flag = 0;

    MTest_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MTest_Io_dir("nb_errors");
    snprintf(name, sizeof name, "f%d", me);
    MTest_Io_path(path, name);

    /* Writes past 1 MiB fail with EFBIG instead of killing the process. */
    signal(SIGXFSZ, SIG_IGN);
    getrlimit(RLIMIT_FSIZE, &rl);
    rl.rlim_cur = LIMIT;
    CHECK(setrlimit(RLIMIT_FSIZE, &rl) == 0, "setrlimit(RLIMIT_FSIZE) failed");

    rc = MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    CHECK_RC(rc, "MPI_File_open");

    /* The blocking write's class, with the default MPI_ERRORS_RETURN on the file. */
    rc = MPI_File_write_at(fh, FAR, vals, 4, MPI_INT, MPI_STATUS_IGNORE);
#ifdef OPEN_MPI
    /* Open MPI 4.1 prints the EFBIG and returns MPI_SUCCESS. */
    if (rc == MPI_SUCCESS && me == 0)
        printf("MTEST_NOTE: a failed write returned MPI_SUCCESS\n");
#else
    CHECK(rc != MPI_SUCCESS, "a write beyond RLIMIT_FSIZE succeeded");
#endif
    blocking_class = MTest_Class(rc);

#if defined(MPICH_VERSION) || defined(OPEN_MPI)
    const int failing_nb = 0;
    if (me == 0)
        printf("MTEST_NOTE: failing nonblocking writes not checked under this MPI (it hangs "
               "or crashes in them)\n");
#else
    const int failing_nb = 1;
#endif

    /* A user handler on the file. */
    MPI_File_create_errhandler(on_file_error, &eh);
    if (failing_nb) {
    MPI_File_set_errhandler(fh, eh);
    rc = MPI_File_iwrite_at(fh, FAR, vals, 4, MPI_INT, &req[0]);
    if (rc == MPI_SUCCESS) {
        rc = MPI_Wait(&req[0], &st[0]);
        CHECK(rc != MPI_SUCCESS, "MPI_Wait of a failing nonblocking write succeeded");
    }
    CHECK(handler_calls == 1, "the file's handler was called %d times (expected 1)",
          handler_calls);
    CHECK(handler_file == fh, "the file's handler got another file");
    CHECK(handler_code == rc, "the handler got code %d, the call returned %d", handler_code, rc);
    CHECK(MTest_Class(rc) == blocking_class, "nonblocking write failed with %s, blocking with %s",
          MTest_Class_name(MTest_Class(rc)), MTest_Class_name(blocking_class));
    }
    MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN);
    MPI_Errhandler_free(&eh);

    /* MPI_ERRORS_RETURN: one good and one failing write, completed together. */
    rc = MPI_File_iwrite_at(fh, 0, vals, 4, MPI_INT, &req[0]);
    CHECK_RC(rc, "MPI_File_iwrite_at (good)");
    st[0].MPI_ERROR = st[1].MPI_ERROR = -1;
    rc = failing_nb ? MPI_File_iwrite_at(fh, FAR, vals, 4, MPI_INT, &req[1]) : MPI_SUCCESS;
    if (!failing_nb) {
        rc = MPI_Wait(&req[0], MPI_STATUS_IGNORE);
        CHECK_RC(rc, "MPI_Wait (good write)");
    } else if (rc == MPI_SUCCESS) {
        rc = MPI_Waitall(2, req, st);
        CHECK(MTest_Class(rc) == MPI_ERR_IN_STATUS, "MPI_Waitall returned %s (expected "
              "MPI_ERR_IN_STATUS)", MTest_Describe(rc));
        CHECK(st[0].MPI_ERROR == MPI_SUCCESS, "the good write's MPI_ERROR is %d",
              st[0].MPI_ERROR);
        CHECK(MTest_Class(st[1].MPI_ERROR) == blocking_class,
              "the failing write's MPI_ERROR is %s", MTest_Describe(st[1].MPI_ERROR));
    } else {
        CHECK(MTest_Class(rc) == blocking_class, "MPI_File_iwrite_at failed with %s",
              MTest_Describe(rc));
        rc = MPI_Wait(&req[0], MPI_STATUS_IGNORE);
        CHECK_RC(rc, "MPI_Wait (good write)");
    }

    /* MPI_Test reports it too. */
    rc = failing_nb ? MPI_File_iwrite_at(fh, FAR, vals, 4, MPI_INT, &req[0]) : MPI_SUCCESS;
    if (!failing_nb) {
    } else if (rc == MPI_SUCCESS) {
        for (int i = 0; i < 1000000 && !flag && rc == MPI_SUCCESS; i++)
            rc = MPI_Test(&req[0], &flag, MPI_STATUS_IGNORE);
        CHECK(MTest_Class(rc) == blocking_class, "MPI_Test of a failing write returned %s",
              MTest_Describe(rc));
    } else {
        CHECK(MTest_Class(rc) == blocking_class, "MPI_File_iwrite_at failed with %s",
              MTest_Describe(rc));
    }

    /* The good write landed. */
    rc = MPI_File_read_at(fh, 0, back, 4, MPI_INT, MPI_STATUS_IGNORE);
    CHECK_RC(rc, "MPI_File_read_at");
    for (int i = 0; i < 4; i++)
        CHECK(back[i] == vals[i], "int %d reads %d (expected %d)", i, back[i], vals[i]);

    MPI_File_close(&fh);
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_FSIZE, &rl);
    MTest_Io_cleanup();
    return MTest_Finalize(0);
}
