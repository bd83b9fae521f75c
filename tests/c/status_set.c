/* status_set: the status setters MPI_Status_set_source, MPI_Status_set_tag,
 * MPI_Status_set_error (MPI-4.1) and MPI_Status_set_elements_x (MPI-3, deprecated).
 *
 * Each MPI-4.1 setter changes its public field only: the others, the count and the
 * cancelled flag stay; the MPI-4.1 getters (MPI_Status_get_source/tag/error) read the same
 * values back; a NULL status is MPI_ERR_ARG.  MPI_Status_set_elements_x(MPI_INT, 6) gives
 * MPI_Get_count(MPI_INT) = 6 and MPI_Get_count(MPI_BYTE) = 24 and leaves source and tag
 * alone.  The MPI-4.1 part is compiled only when MPI_VERSION.MPI_SUBVERSION >= 4.1 (not with
 * MPICH 4.0.2 or Open MPI 4.1); MPI_Status_set_elements_x exists in every MPI >= 3.0. */
#include "mtest.h"

#define MTEST_MPI_4_1 (MPI_VERSION > 4 || (MPI_VERSION == 4 && MPI_SUBVERSION >= 1))

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    MTest_Errors_return_all();
    MPI_Status st;
    int rc, count, cancelled;

#if MPI_VERSION >= 3
    /* MPI_Status_set_elements_x: the count, nothing else. */
    MTest_Poison_status(&st);
    st.MPI_SOURCE = 3;
    st.MPI_TAG = 44;
    rc = MPI_Status_set_elements_x(&st, MPI_INT, (MPI_Count)6);
    CHECK_RC(rc, "MPI_Status_set_elements_x");
    MPI_Status_set_cancelled(&st, 0);
    count = -1;
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == 6, "MPI_Get_count(MPI_INT) after set_elements_x(6) is %d", count);
    count = -1;
    MPI_Get_count(&st, MPI_BYTE, &count);
    CHECK(count == 6 * (int)sizeof(int), "MPI_Get_count(MPI_BYTE) is %d", count);
    CHECK(st.MPI_SOURCE == 3 && st.MPI_TAG == 44,
          "set_elements_x changed source/tag to %d/%d", st.MPI_SOURCE, st.MPI_TAG);
    rc = MPI_Status_set_elements_x(&st, MPI_INT, (MPI_Count)0);
    CHECK_RC(rc, "MPI_Status_set_elements_x(0)");
    count = -1;
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == 0, "MPI_Get_count after set_elements_x(0) is %d", count);
#endif

#if MTEST_MPI_4_1
    int v;
    MTest_Poison_status(&st);
    MPI_Status_set_elements(&st, MPI_INT, 5);
    MPI_Status_set_cancelled(&st, 1);

    rc = MPI_Status_set_source(&st, 7);
    CHECK_RC(rc, "MPI_Status_set_source");
    CHECK(st.MPI_SOURCE == 7, "MPI_SOURCE is %d after set_source(7)", st.MPI_SOURCE);
    CHECK(st.MPI_TAG == -77 && st.MPI_ERROR == -77, "set_source changed tag/error");

    rc = MPI_Status_set_tag(&st, 123);
    CHECK_RC(rc, "MPI_Status_set_tag");
    CHECK(st.MPI_TAG == 123, "MPI_TAG is %d after set_tag(123)", st.MPI_TAG);
    CHECK(st.MPI_SOURCE == 7 && st.MPI_ERROR == -77, "set_tag changed source/error");

    rc = MPI_Status_set_error(&st, MPI_ERR_TRUNCATE);
    CHECK_RC(rc, "MPI_Status_set_error");
    CHECK(st.MPI_ERROR == MPI_ERR_TRUNCATE, "MPI_ERROR is %d after set_error", st.MPI_ERROR);
    CHECK(st.MPI_SOURCE == 7 && st.MPI_TAG == 123, "set_error changed source/tag");

    /* Special values are stored as given. */
    MPI_Status_set_source(&st, MPI_ANY_SOURCE);
    CHECK(st.MPI_SOURCE == MPI_ANY_SOURCE, "set_source(MPI_ANY_SOURCE) gave %d", st.MPI_SOURCE);
    MPI_Status_set_source(&st, MPI_PROC_NULL);
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "set_source(MPI_PROC_NULL) gave %d", st.MPI_SOURCE);
    MPI_Status_set_tag(&st, MPI_ANY_TAG);
    CHECK(st.MPI_TAG == MPI_ANY_TAG, "set_tag(MPI_ANY_TAG) gave %d", st.MPI_TAG);
    MPI_Status_set_error(&st, MPI_SUCCESS);
    CHECK(st.MPI_ERROR == MPI_SUCCESS, "set_error(MPI_SUCCESS) gave %d", st.MPI_ERROR);
    MPI_Status_set_source(&st, 7);
    MPI_Status_set_tag(&st, 123);
    MPI_Status_set_error(&st, MPI_ERR_TRUNCATE);

    /* The hidden fields stay: count and cancelled flag. */
    count = -1;
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == 5, "the setters changed the count: %d", count);
    cancelled = 0;
    MPI_Test_cancelled(&st, &cancelled);
    CHECK(cancelled, "the setters cleared the cancelled flag");

    /* The getters read them back. */
    v = -1;
    rc = MPI_Status_get_source(&st, &v);
    CHECK(rc == MPI_SUCCESS && v == 7, "MPI_Status_get_source gave %d", v);
    v = -1;
    rc = MPI_Status_get_tag(&st, &v);
    CHECK(rc == MPI_SUCCESS && v == 123, "MPI_Status_get_tag gave %d", v);
    v = -1;
    rc = MPI_Status_get_error(&st, &v);
    CHECK(rc == MPI_SUCCESS && v == MPI_ERR_TRUNCATE, "MPI_Status_get_error gave %d", v);

    /* A NULL status is an error. */
    rc = MPI_Status_set_source(NULL, 1);
    CHECK_CLASS(rc, MPI_ERR_ARG, "MPI_Status_set_source(NULL)");
    rc = MPI_Status_set_tag(NULL, 1);
    CHECK_CLASS(rc, MPI_ERR_ARG, "MPI_Status_set_tag(NULL)");
    rc = MPI_Status_set_error(NULL, MPI_SUCCESS);
    CHECK_CLASS(rc, MPI_ERR_ARG, "MPI_Status_set_error(NULL)");
#else
    (void)cancelled;
#endif

    return MTest_Finalize(0);
}
