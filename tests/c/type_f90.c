/* type_f90.c: MPI_Type_create_f90_real / _complex / _integer (the Fortran 90 parameterized
 * types, usable from C): the type matching SELECTED_REAL_KIND(p, r) / SELECTED_INT_KIND(r)
 * has that kind's size, reports MPI_COMBINER_F90_* with its parameters, is the same handle
 * for the same parameters, carries data and reductions, and (hympi) is rejected by
 * MPI_Type_free;
 * parameters no kind meets give an error. */
#include "mtest.h"

static void check_type(MPI_Datatype t, int size, int combiner, int p, int r, const char *what)
{
    int sz = -1, ni = -1, na = -1, nd = -1, comb = -1;
    MPI_Type_size(t, &sz);
    CHECK(sz == size, "%s: size %d, expected %d", what, sz, size);
    CHECK_RC(MPI_Type_get_envelope(t, &ni, &na, &nd, &comb), "MPI_Type_get_envelope");
    CHECK(comb == combiner, "%s: combiner %d, expected %d", what, comb, combiner);
    int want_ni = combiner == MPI_COMBINER_F90_INTEGER ? 1 : 2;
    CHECK(ni == want_ni && na == 0 && nd == 0, "%s: envelope %d/%d/%d", what, ni, na, nd);
    if (ni == want_ni && na == 0 && nd == 0) {
        int ints[2] = {-9, -9};
        MPI_Aint a[1];
        MPI_Datatype d[1];
        CHECK_RC(MPI_Type_get_contents(t, 2, 0, 0, ints, a, d), "MPI_Type_get_contents");
        if (combiner == MPI_COMBINER_F90_INTEGER)
            CHECK(ints[0] == r, "%s: contents r %d, expected %d", what, ints[0], r);
        else
            CHECK(ints[0] == p && ints[1] == r, "%s: contents (%d, %d), expected (%d, %d)", what,
                  ints[0], ints[1], p, r);
    }
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Datatype t, t2;

    CHECK_RC(MPI_Type_create_f90_real(6, 30, &t), "f90_real(6, 30)");
    check_type(t, 4, MPI_COMBINER_F90_REAL, 6, 30, "real(6, 30)");
    CHECK_RC(MPI_Type_create_f90_real(6, 30, &t2), "f90_real(6, 30) again");
    CHECK(t == t2, "the same parameters gave two handles");
    CHECK_RC(MPI_Type_create_f90_real(12, MPI_UNDEFINED, &t), "f90_real(12, UNDEFINED)");
    check_type(t, 8, MPI_COMBINER_F90_REAL, 12, MPI_UNDEFINED, "real(12, -)");
    MPI_Datatype dbl = t;
    CHECK_RC(MPI_Type_create_f90_real(MPI_UNDEFINED, 300, &t), "f90_real(UNDEFINED, 300)");
    check_type(t, 8, MPI_COMBINER_F90_REAL, MPI_UNDEFINED, 300, "real(-, 300)");
    CHECK_RC(MPI_Type_create_f90_complex(15, 307, &t), "f90_complex(15, 307)");
    check_type(t, 16, MPI_COMBINER_F90_COMPLEX, 15, 307, "complex(15, 307)");
    CHECK_RC(MPI_Type_create_f90_complex(5, MPI_UNDEFINED, &t), "f90_complex(5, UNDEFINED)");
    check_type(t, 8, MPI_COMBINER_F90_COMPLEX, 5, MPI_UNDEFINED, "complex(5, -)");
    static const int ranges[] = {2, 4, 9, 18}, sizes[] = {1, 2, 4, 8};
    MPI_Datatype i4 = MPI_DATATYPE_NULL;
    for (int i = 0; i < 4; i++) {
        char what[32];
        snprintf(what, sizeof what, "integer(%d)", ranges[i]);
        CHECK_RC(MPI_Type_create_f90_integer(ranges[i], &t), what);
        check_type(t, sizes[i], MPI_COMBINER_F90_INTEGER, MPI_UNDEFINED, ranges[i], what);
        if (ranges[i] == 9)
            i4 = t;
    }

    /* Data and a reduction through the parameterized types. */
    double x = mtest_rank + 0.5, sum = 0;
    CHECK_RC(MPI_Allreduce(&x, &sum, 1, dbl, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce(real)");
    double want = mtest_size * (mtest_size - 1) / 2.0 + 0.5 * mtest_size;
    CHECK(sum == want, "sum %g, expected %g", sum, want);
    int v = mtest_rank == 0 ? 4242 : 0;
    CHECK_RC(MPI_Bcast(&v, 1, i4, 0, MPI_COMM_WORLD), "MPI_Bcast(integer)");
    CHECK(v == 4242, "broadcast %d", v);

    /* Not freeable; no kind for too much precision or range. */
#ifdef HYMPI
    /* Freeing a predefined type is erroneous; hympi detects it (MPICH 4.0 lets it pass). */
    t2 = dbl;
    CHECK(MPI_Type_free(&t2) != MPI_SUCCESS, "MPI_Type_free freed a parameterized type");
#endif
    CHECK(MPI_Type_create_f90_real(40, 10, &t) != MPI_SUCCESS, "f90_real(40, 10) succeeded");
    CHECK(MPI_Type_create_f90_real(6, 10000, &t) != MPI_SUCCESS, "f90_real(6, 10000) succeeded");
    CHECK(MPI_Type_create_f90_integer(40, &t) != MPI_SUCCESS, "f90_integer(40) succeeded");
    return MTest_Finalize(mtest_errors);
}
