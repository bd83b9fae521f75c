/* status: MPI_Get_count, MPI_Get_elements, MPI_Status_set_elements, MPI_Status_set_cancelled,
 * MPI_Test_cancelled.
 *
 * A message of 7 bytes received as MPI_BYTE: MPI_Get_count with MPI_CHAR is 7, with MPI_INT
 * or MPI_SHORT MPI_UNDEFINED (7 is not a multiple of the size), MPI_Get_elements with MPI_INT
 * MPI_UNDEFINED too; 24 bytes: 6 ints, 3 doubles, 12 shorts.  A zero-byte message: 0 for
 * every type.  MPI_Status_set_elements(MPI_INT, 5) makes MPI_Get_count(MPI_INT) = 5,
 * MPI_Get_elements(MPI_INT) = 5, MPI_Get_count(MPI_BYTE) = 20, MPI_Get_count(MPI_DOUBLE)
 * MPI_UNDEFINED; it overrides the count of a real receive's status and leaves source and tag
 * alone.  MPI_Status_set_cancelled(1 / 0) is what MPI_Test_cancelled returns.
 * Pair types: 3 MPI_DOUBLE_INT and one more double (44 bytes) give MPI_Get_count
 * MPI_UNDEFINED and MPI_Get_elements 7 (MPI-4.0 section 5.1.11: the elements of a partial
 * item count) -- checked only outside MPICH 4.0 (crashes) and Open MPI 4.1 (counts pairs as
 * one element). */
#include "mtest.h"

static void recv_bytes(int n, MPI_Status *st)
{
    unsigned char s[64], r[64];
    memset(s, 9, sizeof s);
    MPI_Request req;
    MPI_Irecv(r, 64, MPI_BYTE, 0, 1, MPI_COMM_SELF, &req);
    MPI_Send(s, n, MPI_BYTE, 0, 1, MPI_COMM_SELF);
    MPI_Wait(&req, st);
}

static int count_of(const MPI_Status *st, MPI_Datatype t)
{
    int c = -12345;
    int rc = MPI_Get_count(st, t, &c);
    CHECK_RC(rc, "MPI_Get_count");
    return c;
}

static int elements_of(const MPI_Status *st, MPI_Datatype t)
{
    int c = -12345;
    int rc = MPI_Get_elements(st, t, &c);
    CHECK_RC(rc, "MPI_Get_elements");
    return c;
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    MPI_Status st;
    int c, flag;

    recv_bytes(7, &st);
    CHECK((c = count_of(&st, MPI_BYTE)) == 7, "7 B as MPI_BYTE: %d", c);
    CHECK((c = count_of(&st, MPI_CHAR)) == 7, "7 B as MPI_CHAR: %d", c);
    CHECK((c = count_of(&st, MPI_INT)) == MPI_UNDEFINED, "7 B as MPI_INT: %d, want MPI_UNDEFINED", c);
    CHECK((c = count_of(&st, MPI_SHORT)) == MPI_UNDEFINED, "7 B as MPI_SHORT: %d, want MPI_UNDEFINED", c);
    CHECK((c = elements_of(&st, MPI_INT)) == MPI_UNDEFINED, "7 B, elements of MPI_INT: %d, want MPI_UNDEFINED", c);
    CHECK((c = elements_of(&st, MPI_BYTE)) == 7, "7 B, elements of MPI_BYTE: %d", c);

    recv_bytes(24, &st);
    CHECK((c = count_of(&st, MPI_INT)) == 6, "24 B as MPI_INT: %d", c);
    CHECK((c = count_of(&st, MPI_DOUBLE)) == 3, "24 B as MPI_DOUBLE: %d", c);
    CHECK((c = count_of(&st, MPI_SHORT)) == 12, "24 B as MPI_SHORT: %d", c);
    CHECK((c = elements_of(&st, MPI_DOUBLE)) == 3, "24 B, elements of MPI_DOUBLE: %d", c);
    CHECK((c = count_of(&st, MPI_C_DOUBLE_COMPLEX)) == MPI_UNDEFINED, "24 B as MPI_C_DOUBLE_COMPLEX: %d", c);

    recv_bytes(0, &st);
    CHECK(count_of(&st, MPI_INT) == 0 && count_of(&st, MPI_DOUBLE) == 0 && count_of(&st, MPI_BYTE) == 0,
          "0 B: counts not 0");
    CHECK(elements_of(&st, MPI_INT) == 0, "0 B: elements not 0");

#if !(defined(MPICH_NUMVERSION) && MPICH_NUMVERSION < 40100000) && !defined(OPEN_MPI)
    recv_bytes(3 * (int)(sizeof(double) + sizeof(int)) + (int)sizeof(double), &st);
    CHECK((c = count_of(&st, MPI_DOUBLE_INT)) == MPI_UNDEFINED, "3.5 MPI_DOUBLE_INT: count %d, want MPI_UNDEFINED", c);
    CHECK((c = elements_of(&st, MPI_DOUBLE_INT)) == 7, "3.5 MPI_DOUBLE_INT: elements %d, want 7", c);
    recv_bytes(2 * (int)(sizeof(double) + sizeof(int)), &st);
    CHECK((c = count_of(&st, MPI_DOUBLE_INT)) == 2 && elements_of(&st, MPI_DOUBLE_INT) == 4, "2 MPI_DOUBLE_INT: count %d", c);
#endif

    /* MPI_Status_set_elements on a real status. */
    recv_bytes(7, &st);
    int src = st.MPI_SOURCE, tag = st.MPI_TAG;
    int rc = MPI_Status_set_elements(&st, MPI_INT, 5);
    CHECK_RC(rc, "MPI_Status_set_elements");
    CHECK((c = count_of(&st, MPI_INT)) == 5, "after set_elements(MPI_INT, 5): count %d", c);
    CHECK((c = elements_of(&st, MPI_INT)) == 5, "after set_elements(MPI_INT, 5): elements %d", c);
    CHECK((c = count_of(&st, MPI_BYTE)) == 5 * (int)sizeof(int), "after set_elements(MPI_INT, 5): bytes %d", c);
    CHECK((c = count_of(&st, MPI_DOUBLE)) == MPI_UNDEFINED, "after set_elements(MPI_INT, 5): count of MPI_DOUBLE %d", c);
    CHECK(st.MPI_SOURCE == src && st.MPI_TAG == tag, "MPI_Status_set_elements changed source or tag");
    rc = MPI_Status_set_elements(&st, MPI_DOUBLE, 0);
    CHECK(rc == MPI_SUCCESS && count_of(&st, MPI_DOUBLE) == 0 && count_of(&st, MPI_BYTE) == 0, "set_elements(MPI_DOUBLE, 0)");
    rc = MPI_Status_set_elements(&st, MPI_BYTE, 1000000);
    CHECK(rc == MPI_SUCCESS && count_of(&st, MPI_BYTE) == 1000000 && count_of(&st, MPI_INT) == 250000,
          "set_elements(MPI_BYTE, 1000000): count %d", count_of(&st, MPI_BYTE));

    /* On a status made by hand. */
    MPI_Status mine;
    memset(&mine, 0, sizeof mine);
    mine.MPI_SOURCE = 3;
    mine.MPI_TAG = 4;
    MPI_Status_set_elements(&mine, MPI_SHORT, 9);
    CHECK(count_of(&mine, MPI_SHORT) == 9 && count_of(&mine, MPI_BYTE) == 9 * (int)sizeof(short), "hand-made status: count");
    MPI_Status_set_cancelled(&mine, 0);
    CHECK(count_of(&mine, MPI_SHORT) == 9, "set_cancelled changed the count");

    /* MPI_Status_set_cancelled. */
    for (int v = 1; v >= 0; v--) {
        rc = MPI_Status_set_cancelled(&st, v);
        CHECK_RC(rc, "MPI_Status_set_cancelled");
        flag = -1;
        rc = MPI_Test_cancelled(&st, &flag);
        CHECK(rc == MPI_SUCCESS && flag == v, "set_cancelled(%d): MPI_Test_cancelled gave %d", v, flag);
    }
    recv_bytes(3, &st);
    MPI_Test_cancelled(&st, &flag);
    CHECK(flag == 0, "a completed receive's status says cancelled");
    return MTest_Finalize(0);
}
