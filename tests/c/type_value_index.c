/* type_value_index: MPI_Type_get_value_index (MPI-4.1; skipped where MPI < 4.1).
 *
 *  - every pair the standard names gives its predefined pair type (MPI_FLOAT_INT ...
 *    MPI_2INTEGER), which MPI_MINLOC then reduces (MPI_Reduce_local);
 *  - other pairs of valid types (MPI_FLOAT with MPI_FLOAT, MPI_INT with MPI_LONG, a derived
 *    type) give MPI_DATATYPE_NULL without an error;
 *  - MPI_DATATYPE_NULL as value or index type fails with MPI_ERR_TYPE (MPI_ERRORS_RETURN). */
#include "mtest.h"

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
#if !(MPI_VERSION > 4 || (MPI_VERSION == 4 && MPI_SUBVERSION >= 1))
    MTest_Skip("MPI_Type_get_value_index is MPI-4.1");
    return MTest_Finalize(0);
#else
    MTest_Errors_return_all();
    struct {
        MPI_Datatype value, index, pair;
        const char *name;
    } cases[] = {
        {MPI_FLOAT, MPI_INT, MPI_FLOAT_INT, "MPI_FLOAT_INT"},
        {MPI_DOUBLE, MPI_INT, MPI_DOUBLE_INT, "MPI_DOUBLE_INT"},
        {MPI_LONG, MPI_INT, MPI_LONG_INT, "MPI_LONG_INT"},
        {MPI_INT, MPI_INT, MPI_2INT, "MPI_2INT"},
        {MPI_SHORT, MPI_INT, MPI_SHORT_INT, "MPI_SHORT_INT"},
        {MPI_LONG_DOUBLE, MPI_INT, MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT"},
        {MPI_REAL, MPI_REAL, MPI_2REAL, "MPI_2REAL"},
        {MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, MPI_2DOUBLE_PRECISION, "MPI_2DOUBLE_PRECISION"},
        {MPI_INTEGER, MPI_INTEGER, MPI_2INTEGER, "MPI_2INTEGER"},
    };
    int rc;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        MPI_Datatype t = MPI_DATATYPE_NULL;
        rc = MPI_Type_get_value_index(cases[i].value, cases[i].index, &t);
        CHECK_RC(rc, "MPI_Type_get_value_index");
        CHECK(t == cases[i].pair, "pair %s: got another type", cases[i].name);
    }

    /* The pair type works with MPI_MINLOC. */
    MPI_Datatype di;
    rc = MPI_Type_get_value_index(MPI_DOUBLE, MPI_INT, &di);
    CHECK_RC(rc, "MPI_Type_get_value_index(MPI_DOUBLE, MPI_INT)");
    struct {
        double v;
        int i;
    } in[2] = {{1.5, 7}, {-2.0, 3}}, inout[2] = {{0.5, 9}, {-2.0, 1}};
    rc = MPI_Reduce_local(in, inout, 2, di, MPI_MINLOC);
    CHECK_RC(rc, "MPI_Reduce_local with the pair type");
    CHECK(inout[0].v == 0.5 && inout[0].i == 9 && inout[1].v == -2.0 && inout[1].i == 1,
          "MINLOC on the pair type: (%g,%d) (%g,%d)", inout[0].v, inout[0].i, inout[1].v, inout[1].i);

    /* Pairs without a predefined type. */
    MPI_Datatype vec, t;
    MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
    MPI_Datatype none[][2] = {{MPI_FLOAT, MPI_FLOAT}, {MPI_INT, MPI_LONG}, {MPI_CHAR, MPI_INT}, {vec, MPI_INT}, {MPI_DOUBLE, vec}};
    for (size_t i = 0; i < sizeof none / sizeof none[0]; i++) {
        t = MPI_INT;
        rc = MPI_Type_get_value_index(none[i][0], none[i][1], &t);
        CHECK_RC(rc, "MPI_Type_get_value_index of a pair without a predefined type");
        CHECK(t == MPI_DATATYPE_NULL, "pair %d without a predefined type: not MPI_DATATYPE_NULL", (int)i);
    }
    MPI_Type_free(&vec);

    /* Errors. */
    rc = MPI_Type_get_value_index(MPI_DATATYPE_NULL, MPI_INT, &t);
    CHECK_CLASS(rc, MPI_ERR_TYPE, "MPI_Type_get_value_index(MPI_DATATYPE_NULL, MPI_INT)");
    rc = MPI_Type_get_value_index(MPI_FLOAT, MPI_DATATYPE_NULL, &t);
    CHECK_CLASS(rc, MPI_ERR_TYPE, "MPI_Type_get_value_index(MPI_FLOAT, MPI_DATATYPE_NULL)");
    return MTest_Finalize(0);
#endif
}
