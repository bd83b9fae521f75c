/* info_errors: error classes of the info functions (MPI_ERRORS_RETURN on WORLD and SELF).
 *
 * Keys longer than allowed, empty or NULL: MPI_ERR_INFO_KEY. Values longer than allowed:
 * MPI_ERR_INFO_VALUE. Deleting a missing key: MPI_ERR_INFO_NOKEY. get_nthkey out of range and
 * negative lengths: MPI_ERR_ARG. MPI_INFO_NULL and freed objects: MPI_ERR_INFO (MPICH 4.0
 * answers MPI_ERR_ARG there; accepted under MPICH only). */
#include "mtest.h"

#ifdef MPICH_VERSION
#define INFO_NULL_OK(rc) (MTest_Class(rc) == MPI_ERR_INFO || MTest_Class(rc) == MPI_ERR_ARG)
#else
#define INFO_NULL_OK(rc) (MTest_Class(rc) == MPI_ERR_INFO)
#endif
#define CHECK_INFO_NULL(rc, what) \
    CHECK((rc) != MPI_SUCCESS && INFO_NULL_OK(rc), "%s: expected MPI_ERR_INFO, got %s", (what), \
          (rc) == MPI_SUCCESS ? "MPI_SUCCESS" : MTest_Describe(rc))

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    MTest_Errors_return_all();
    int rc, n, flag, len;
    char key[MPI_MAX_INFO_KEY + 8], val[MPI_MAX_INFO_VAL + 8];
    MPI_Info info, null = MPI_INFO_NULL;

    MPI_Info_create(&info);
    MPI_Info_set(info, "a", "b");

    memset(key, 'k', sizeof key);
    key[MPI_MAX_INFO_KEY + 1] = 0;
    rc = MPI_Info_set(info, key, "v");
    CHECK_CLASS(rc, MPI_ERR_INFO_KEY, "MPI_Info_set(key of MPI_MAX_INFO_KEY + 1 characters)");
    rc = MPI_Info_get_string(info, key, &len, val, &flag);
    CHECK_CLASS(rc, MPI_ERR_INFO_KEY, "MPI_Info_get_string(over-long key)");
    rc = MPI_Info_delete(info, key);
    CHECK_CLASS(rc, MPI_ERR_INFO_KEY, "MPI_Info_delete(over-long key)");
    rc = MPI_Info_set(info, "", "v");
    CHECK_CLASS(rc, MPI_ERR_INFO_KEY, "MPI_Info_set(empty key)");
    rc = MPI_Info_set(info, NULL, "v");
    CHECK_CLASS(rc, MPI_ERR_INFO_KEY, "MPI_Info_set(NULL key)");

    memset(val, 'v', sizeof val);
    val[MPI_MAX_INFO_VAL + 1] = 0;
    rc = MPI_Info_set(info, "k", val);
    CHECK_CLASS(rc, MPI_ERR_INFO_VALUE, "MPI_Info_set(value of MPI_MAX_INFO_VAL + 1 characters)");

    rc = MPI_Info_delete(info, "nokey");
    CHECK_CLASS(rc, MPI_ERR_INFO_NOKEY, "MPI_Info_delete(missing key)");

    MPI_Info_get_nkeys(info, &n);
    rc = MPI_Info_get_nthkey(info, n, key);
    CHECK_CLASS(rc, MPI_ERR_ARG, "MPI_Info_get_nthkey(n = nkeys)");
    rc = MPI_Info_get_nthkey(info, -1, key);
    CHECK_CLASS(rc, MPI_ERR_ARG, "MPI_Info_get_nthkey(-1)");
    rc = MPI_Info_get(info, "a", -1, val, &flag);
    CHECK_CLASS(rc, MPI_ERR_ARG, "MPI_Info_get(valuelen -1)");
    len = -1;
    rc = MPI_Info_get_string(info, "a", &len, val, &flag);
    CHECK_CLASS(rc, MPI_ERR_ARG, "MPI_Info_get_string(buflen -1)");

    rc = MPI_Info_get_nkeys(MPI_INFO_NULL, &n);
    CHECK_INFO_NULL(rc, "MPI_Info_get_nkeys(MPI_INFO_NULL)");
    rc = MPI_Info_set(MPI_INFO_NULL, "a", "b");
    CHECK_INFO_NULL(rc, "MPI_Info_set(MPI_INFO_NULL)");
    rc = MPI_Info_dup(MPI_INFO_NULL, &null);
    CHECK_INFO_NULL(rc, "MPI_Info_dup(MPI_INFO_NULL)");
    null = MPI_INFO_NULL;
    rc = MPI_Info_free(&null);
    CHECK_INFO_NULL(rc, "MPI_Info_free(MPI_INFO_NULL)");
    len = 10;
    rc = MPI_Info_get_string(MPI_INFO_NULL, "a", &len, val, &flag);
    CHECK_INFO_NULL(rc, "MPI_Info_get_string(MPI_INFO_NULL)");

#ifndef MPICH_VERSION
    /* A freed object (MPICH does not check stale handles). */
    MPI_Info stale = info;
    MPI_Info_free(&info);
    rc = MPI_Info_get_nkeys(stale, &n);
    CHECK_CLASS(rc, MPI_ERR_INFO, "MPI_Info_get_nkeys(freed info)");
#else
    MPI_Info_free(&info);
#endif
    return MTest_Finalize(0);
}
