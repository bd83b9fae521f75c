/* errclass: MPI_Error_class and MPI_Error_string.
 *
 * Every standard error class defined by mpi.h is its own class (MPI-4.0 section 9.4: the
 * classes are a subset of the codes) and at most MPI_ERR_LASTCODE; MPI_Error_string gives
 * each a non-empty, NUL-terminated string whose length is resultlen and less than
 * MPI_MAX_ERROR_STRING.  Codes returned by failing calls map to the expected class and have
 * a string too.  MPI_SUCCESS is class MPI_SUCCESS. */
#include "mtest.h"

struct cls { int value; const char *name; };

#define C(x) {x, #x}
static const struct cls classes[] = {
    C(MPI_SUCCESS), C(MPI_ERR_BUFFER), C(MPI_ERR_COUNT), C(MPI_ERR_TYPE), C(MPI_ERR_TAG),
    C(MPI_ERR_COMM), C(MPI_ERR_RANK), C(MPI_ERR_REQUEST), C(MPI_ERR_ROOT), C(MPI_ERR_GROUP),
    C(MPI_ERR_OP), C(MPI_ERR_TOPOLOGY), C(MPI_ERR_DIMS), C(MPI_ERR_ARG), C(MPI_ERR_UNKNOWN),
    C(MPI_ERR_TRUNCATE), C(MPI_ERR_OTHER), C(MPI_ERR_INTERN), C(MPI_ERR_PENDING),
    C(MPI_ERR_IN_STATUS),
#ifdef MPI_ERR_ACCESS
    C(MPI_ERR_ACCESS),
#endif
#ifdef MPI_ERR_AMODE
    C(MPI_ERR_AMODE),
#endif
#ifdef MPI_ERR_ASSERT
    C(MPI_ERR_ASSERT),
#endif
#ifdef MPI_ERR_BAD_FILE
    C(MPI_ERR_BAD_FILE),
#endif
#ifdef MPI_ERR_BASE
    C(MPI_ERR_BASE),
#endif
#ifdef MPI_ERR_CONVERSION
    C(MPI_ERR_CONVERSION),
#endif
#ifdef MPI_ERR_DISP
    C(MPI_ERR_DISP),
#endif
#ifdef MPI_ERR_DUP_DATAREP
    C(MPI_ERR_DUP_DATAREP),
#endif
#ifdef MPI_ERR_FILE_EXISTS
    C(MPI_ERR_FILE_EXISTS),
#endif
#ifdef MPI_ERR_FILE_IN_USE
    C(MPI_ERR_FILE_IN_USE),
#endif
#ifdef MPI_ERR_FILE
    C(MPI_ERR_FILE),
#endif
#ifdef MPI_ERR_INFO_KEY
    C(MPI_ERR_INFO_KEY),
#endif
#ifdef MPI_ERR_INFO_NOKEY
    C(MPI_ERR_INFO_NOKEY),
#endif
#ifdef MPI_ERR_INFO_VALUE
    C(MPI_ERR_INFO_VALUE),
#endif
#ifdef MPI_ERR_INFO
    C(MPI_ERR_INFO),
#endif
#ifdef MPI_ERR_IO
    C(MPI_ERR_IO),
#endif
#ifdef MPI_ERR_KEYVAL
    C(MPI_ERR_KEYVAL),
#endif
#ifdef MPI_ERR_LOCKTYPE
    C(MPI_ERR_LOCKTYPE),
#endif
#ifdef MPI_ERR_NAME
    C(MPI_ERR_NAME),
#endif
#ifdef MPI_ERR_NO_MEM
    C(MPI_ERR_NO_MEM),
#endif
#ifdef MPI_ERR_NOT_SAME
    C(MPI_ERR_NOT_SAME),
#endif
#ifdef MPI_ERR_NO_SPACE
    C(MPI_ERR_NO_SPACE),
#endif
#ifdef MPI_ERR_NO_SUCH_FILE
    C(MPI_ERR_NO_SUCH_FILE),
#endif
#ifdef MPI_ERR_PORT
    C(MPI_ERR_PORT),
#endif
#ifdef MPI_ERR_PROC_ABORTED
    C(MPI_ERR_PROC_ABORTED),
#endif
#ifdef MPI_ERR_QUOTA
    C(MPI_ERR_QUOTA),
#endif
#ifdef MPI_ERR_READ_ONLY
    C(MPI_ERR_READ_ONLY),
#endif
#ifdef MPI_ERR_RMA_ATTACH
    C(MPI_ERR_RMA_ATTACH),
#endif
#ifdef MPI_ERR_RMA_CONFLICT
    C(MPI_ERR_RMA_CONFLICT),
#endif
#ifdef MPI_ERR_RMA_RANGE
    C(MPI_ERR_RMA_RANGE),
#endif
#ifdef MPI_ERR_RMA_SHARED
    C(MPI_ERR_RMA_SHARED),
#endif
#ifdef MPI_ERR_RMA_SYNC
    C(MPI_ERR_RMA_SYNC),
#endif
#ifdef MPI_ERR_RMA_FLAVOR
    C(MPI_ERR_RMA_FLAVOR),
#endif
#ifdef MPI_ERR_SERVICE
    C(MPI_ERR_SERVICE),
#endif
#ifdef MPI_ERR_SESSION
    C(MPI_ERR_SESSION),
#endif
#ifdef MPI_ERR_SIZE
    C(MPI_ERR_SIZE),
#endif
#ifdef MPI_ERR_SPAWN
    C(MPI_ERR_SPAWN),
#endif
#ifdef MPI_ERR_UNSUPPORTED_DATAREP
    C(MPI_ERR_UNSUPPORTED_DATAREP),
#endif
#ifdef MPI_ERR_UNSUPPORTED_OPERATION
    C(MPI_ERR_UNSUPPORTED_OPERATION),
#endif
#ifdef MPI_ERR_VALUE_TOO_LARGE
    C(MPI_ERR_VALUE_TOO_LARGE),
#endif
#ifdef MPI_ERR_WIN
    C(MPI_ERR_WIN),
#endif
#ifdef MPI_ERR_ERRHANDLER
    C(MPI_ERR_ERRHANDLER),
#endif
};
#undef C

static void check_string(int code, const char *what)
{
    char s[MPI_MAX_ERROR_STRING];
    memset(s, 'x', sizeof s);
    int len = -1;
    int rc = MPI_Error_string(code, s, &len);
    if (!CHECK_RC(rc, "MPI_Error_string"))
        return;
    if (!CHECK(memchr(s, 0, sizeof s) != NULL, "%s: the string is not NUL-terminated", what))
        return;
    CHECK(len > 0 && len < MPI_MAX_ERROR_STRING, "%s: resultlen %d", what, len);
    CHECK((int)strlen(s) == len, "%s: strlen %d, resultlen %d", what, (int)strlen(s), len);
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    MTest_Errors_return_all();
    int n = sizeof classes / sizeof classes[0];
    for (int i = 0; i < n; i++) {
        int cls = -1;
        int rc = MPI_Error_class(classes[i].value, &cls);
        CHECK_RC(rc, classes[i].name);
        CHECK(cls == classes[i].value, "MPI_Error_class(%s = %d) = %d", classes[i].name, classes[i].value, cls);
        CHECK(classes[i].value <= MPI_ERR_LASTCODE, "%s = %d > MPI_ERR_LASTCODE %d", classes[i].name,
              classes[i].value, MPI_ERR_LASTCODE);
        check_string(classes[i].value, classes[i].name);
        /* Distinct classes have distinct values. */
        for (int j = 0; j < i; j++)
            CHECK(classes[j].value != classes[i].value, "%s and %s are both %d", classes[j].name,
                  classes[i].name, classes[i].value);
    }
    CHECK(MPI_SUCCESS == 0, "MPI_SUCCESS is %d", MPI_SUCCESS);

    /* Codes of real errors. */
    int x = 0;
    struct { int rc; int cls; const char *what; } real[4];
    real[0].rc = MPI_Send(&x, 1, MPI_INT, mtest_size, 0, MPI_COMM_WORLD);
    real[0].cls = MPI_ERR_RANK, real[0].what = "send to rank size";
    real[1].rc = MPI_Send(&x, 1, MPI_INT, 0, -3, MPI_COMM_WORLD);
    real[1].cls = MPI_ERR_TAG, real[1].what = "send with tag -3";
    real[2].rc = MPI_Send(&x, -1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    real[2].cls = MPI_ERR_COUNT, real[2].what = "send with count -1";
    real[3].rc = MPI_Send(&x, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD);
    real[3].cls = MPI_ERR_TYPE, real[3].what = "send with MPI_DATATYPE_NULL";
    for (int i = 0; i < 4; i++) {
        CHECK_CLASS(real[i].rc, real[i].cls, real[i].what);
        if (real[i].rc != MPI_SUCCESS)
            check_string(real[i].rc, real[i].what);
    }
    if (mtest_rank == 0)
        printf("%d classes checked; e.g. %s\n", n, MTest_Describe(real[0].rc));
    return MTest_Finalize(0);
}
