/* object_names.c: names of null and predefined handles, as MPI codes and mpi4py expect:
 * MPI_Comm_get_name(MPI_COMM_NULL) is "MPI_COMM_NULL" (MPI-4.1); predefined datatypes have their
 * standard names and can be renamed (and renamed back); MPI_COMM_WORLD can be renamed. */
#include "mtest.h"

static void type_name(MPI_Datatype t, char *out)
{
    int len = -1;
    CHECK_RC(MPI_Type_get_name(t, out, &len), "MPI_Type_get_name");
    CHECK(len == (int)strlen(out), "resultlen %d for '%s'", len, out);
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
#if MPI_VERSION > 4 || (MPI_VERSION == 4 && MPI_SUBVERSION >= 1)
    /* Names of null handles are MPI-4.1. */
    CHECK_RC(MPI_Comm_get_name(MPI_COMM_NULL, name, &len), "MPI_Comm_get_name(MPI_COMM_NULL)");
    CHECK(strcmp(name, "MPI_COMM_NULL") == 0 && len == 13, "MPI_COMM_NULL is named '%s' (%d)",
          name, len);
    type_name(MPI_DATATYPE_NULL, name);
    CHECK(strcmp(name, "MPI_DATATYPE_NULL") == 0, "MPI_DATATYPE_NULL is named '%s'", name);
#endif
    MPI_Comm_get_name(MPI_COMM_WORLD, name, &len);
    CHECK(strcmp(name, "MPI_COMM_WORLD") == 0, "MPI_COMM_WORLD is named '%s'", name);
    CHECK_RC(MPI_Comm_set_name(MPI_COMM_WORLD, "everyone"), "MPI_Comm_set_name(WORLD)");
    MPI_Comm_get_name(MPI_COMM_WORLD, name, &len);
    CHECK(strcmp(name, "everyone") == 0, "renamed MPI_COMM_WORLD is '%s'", name);

    type_name(MPI_DOUBLE, name);
    CHECK(strcmp(name, "MPI_DOUBLE") == 0, "MPI_DOUBLE is named '%s'", name);
    CHECK_RC(MPI_Type_set_name(MPI_DOUBLE, "my double"), "MPI_Type_set_name(MPI_DOUBLE)");
    type_name(MPI_DOUBLE, name);
    CHECK(strcmp(name, "my double") == 0, "renamed MPI_DOUBLE is '%s'", name);
    type_name(MPI_INT, name);
    CHECK(strcmp(name, "MPI_INT") == 0, "renaming MPI_DOUBLE renamed MPI_INT: '%s'", name);
    CHECK_RC(MPI_Type_set_name(MPI_DOUBLE, "MPI_DOUBLE"), "MPI_Type_set_name back");
    type_name(MPI_DOUBLE, name);
    CHECK(strcmp(name, "MPI_DOUBLE") == 0, "MPI_DOUBLE renamed back is '%s'", name);
    /* The predefined type still works under any name. */
    double x = 1.5, y = 0;
    MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    CHECK(y == 1.5 * mtest_size, "sum %g", y);
    return MTest_Finalize(mtest_errors);
}
