/* abi_info: MPI_Abi_get_version and MPI_Abi_get_info (the MPI-5.0 standard ABI; skipped
 * where the header does not define MPI_ABI_VERSION).
 *
 *  - the version is 1.0;
 *  - MPI_Abi_get_info gives a new info object (freeable) whose mpi_aint_size,
 *    mpi_count_size and mpi_offset_size are sizeof(MPI_Aint), sizeof(MPI_Count) and
 *    sizeof(MPI_Offset);
 *  - a NULL info pointer fails (MPI_ERRORS_RETURN on MPI_COMM_SELF). */
#include "mtest.h"

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
#ifndef MPI_ABI_VERSION
    MTest_Skip("no MPI-5.0 standard ABI in this mpi.h");
    return MTest_Finalize(0);
#else
    MTest_Errors_return_all();
    int major = -1, minor = -1, rc;
    rc = MPI_Abi_get_version(&major, &minor);
    CHECK_RC(rc, "MPI_Abi_get_version");
    CHECK(major == 1 && minor == 0, "ABI version %d.%d", major, minor);
    MPI_Info info = MPI_INFO_NULL;
    rc = MPI_Abi_get_info(&info);
    CHECK_RC(rc, "MPI_Abi_get_info");
    struct {
        const char *key;
        int want;
    } keys[] = {{"mpi_aint_size", (int)sizeof(MPI_Aint)},
                {"mpi_count_size", (int)sizeof(MPI_Count)},
                {"mpi_offset_size", (int)sizeof(MPI_Offset)}};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        char value[MPI_MAX_INFO_VAL];
        int buflen = sizeof value, flag = 0;
        rc = MPI_Info_get_string(info, keys[i].key, &buflen, value, &flag);
        CHECK_RC(rc, "MPI_Info_get_string");
        CHECK(flag && atoi(value) == keys[i].want, "%s: flag %d value '%s', want %d", keys[i].key, flag,
              flag ? value : "", keys[i].want);
    }
    rc = MPI_Info_free(&info);
    CHECK_RC(rc, "MPI_Info_free of the ABI info");
    rc = MPI_Abi_get_info(NULL);
    CHECK(rc != MPI_SUCCESS, "MPI_Abi_get_info(NULL) succeeded");
    return MTest_Finalize(0);
#endif
}
