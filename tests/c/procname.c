/* procname: MPI_Get_processor_name writes a NUL-terminated name, resultlen is its length,
 * less than MPI_MAX_PROCESSOR_NAME, and the name is not empty.  The call needs nothing
 * else from the library and gives the same answer twice. */
#include "mtest.h"

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    char name[MPI_MAX_PROCESSOR_NAME], again[MPI_MAX_PROCESSOR_NAME];
    memset(name, 'x', sizeof name);
    int len = -1, len2 = -1;
    int rc = MPI_Get_processor_name(name, &len);
    CHECK_RC(rc, "MPI_Get_processor_name");
    CHECK(len > 0 && len < MPI_MAX_PROCESSOR_NAME, "resultlen %d", len);
    if (CHECK(memchr(name, 0, sizeof name) != NULL, "the name is not NUL-terminated"))
        CHECK((int)strlen(name) == len, "strlen %d != resultlen %d", (int)strlen(name), len);
    rc = MPI_Get_processor_name(again, &len2);
    CHECK_RC(rc, "MPI_Get_processor_name (again)");
    CHECK(len2 == len && strcmp(name, again) == 0, "the name changed: '%s' then '%s'", name, again);
    if (mtest_rank == 0)
        printf("processor name: %s\n", name);
    return MTest_Finalize(0);
}
