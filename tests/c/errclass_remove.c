/* errclass_remove: MPI-4.1's MPI_Remove_error_class / _code / _string after sequences of
 * MPI_Add_error_class / _code / _string: every call returns, removed codes and classes are
 * no longer valid, MPI_LASTUSEDCODE follows, and removing a class that still has codes, or a
 * code or class that still has a string, fails. */
#include "mtest.h"

static int last_used(void)
{
    int *v = NULL, flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &v, &flag);
    return flag ? *v : -1;
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    int errs = 0;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
#if MPI_VERSION > 4 || (MPI_VERSION == 4 && MPI_SUBVERSION >= 1)
    for (int round = 0; round < 3; round++) {
        int cls, code1, code2, rc, len, c;
        char s[MPI_MAX_ERROR_STRING];
        CHECK_RC(MPI_Add_error_class(&cls), "call");
        CHECK_RC(MPI_Add_error_code(cls, &code1), "call");
        CHECK_RC(MPI_Add_error_code(cls, &code2), "call");
        CHECK_RC(MPI_Add_error_string(cls, "my class"), "call");
        CHECK_RC(MPI_Add_error_string(code1, "my code 1"), "call");
        CHECK_RC(MPI_Add_error_string(code2, "my code 2"), "call");
        CHECK(last_used() >= code2, "MPI_LASTUSEDCODE %d < %d", last_used(), code2);
        MPI_Error_class(code1, &c);
        CHECK(c == cls, "class of code1 %d, want %d", c, cls);
        /* A class with codes cannot go. */
        rc = MPI_Remove_error_class(cls);
        CHECK(rc != MPI_SUCCESS, "removing a class that still has codes succeeded");
        CHECK_RC(MPI_Remove_error_string(code1), "call");
        MPI_Error_string(code1, s, &len);
        CHECK(strcmp(s, "my code 1") != 0, "string of code1 still '%s'", s);
        /* A code (or class) with a string cannot go before its string (MPI-4.1). */
        rc = MPI_Remove_error_code(code2);
        CHECK(rc != MPI_SUCCESS, "removing a code that still has a string succeeded");
        MPI_Error_class(code2, &c);
        CHECK(c == cls, "code2 lost its class after a refused removal: %d", c);
        CHECK_RC(MPI_Remove_error_string(code2), "call");
        CHECK_RC(MPI_Remove_error_code(code2), "call");
        rc = MPI_Remove_error_code(code2);
        CHECK(rc != MPI_SUCCESS, "removing code2 twice succeeded");
        CHECK_RC(MPI_Remove_error_code(code1), "call");
        rc = MPI_Remove_error_class(cls);
        CHECK(rc != MPI_SUCCESS, "removing a class that still has a string succeeded");
        CHECK_RC(MPI_Remove_error_string(cls), "call");
        CHECK_RC(MPI_Remove_error_class(cls), "call");
        rc = MPI_Add_error_code(cls, &code1);
        CHECK(rc != MPI_SUCCESS, "adding a code to a removed class succeeded");
        CHECK(last_used() < cls, "MPI_LASTUSEDCODE %d still covers removed class %d", last_used(), cls);
    }
#else
    MTest_Skip("MPI_Remove_error_class and friends are MPI-4.1");
#endif
    return MTest_Finalize(errs);
}
