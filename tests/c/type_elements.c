/* type_elements: MPI_Get_count / MPI_Get_elements (and _x, _c) with derived types on whole and
 * partial messages: a receive of 3 struct {int; double; int[2]} (24-byte extent) gets whole
 * elements followed by a type-matching prefix of the next one (sent with a struct type of the
 * same signature); the partial element's basic elements are counted and MPI_Get_count is
 * MPI_UNDEFINED.  Also a vector of ints receiving fewer ints than its size. */
#include "mtest.h"
#include <string.h>

static int partner;

/* Sends n ints (or, with stype, n elements of stype from sbuf) and receives rcount of t. */
static void send_recv(const void *sbuf, int n, MPI_Datatype stype, MPI_Datatype t, void *rbuf,
                      int rcount, MPI_Status *st)
{
    if (partner >= mtest_size) {
        MPI_Request r;
        MPI_Isend(sbuf, n, stype, 0, 3, MPI_COMM_SELF, &r);
        MPI_Recv(rbuf, rcount, t, 0, 3, MPI_COMM_SELF, st);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    } else if (mtest_rank % 2 == 0) {
        MPI_Send(sbuf, n, stype, partner, 3, MPI_COMM_WORLD);
    } else {
        MPI_Recv(rbuf, rcount, t, partner, 3, MPI_COMM_WORLD, st);
    }
}

static int receiving(void)
{
    return partner >= mtest_size || mtest_rank % 2 == 1;
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    partner = mtest_rank ^ 1;
    /* struct: int at 0, double at 8, 2 ints at 16: size 4 + 8 + 8 = 20 bytes, 4 basic elements */
    int bl[3] = {1, 1, 2};
    MPI_Aint dp[3] = {0, 8, 16};
    MPI_Datatype ty[3] = {MPI_INT, MPI_DOUBLE, MPI_INT}, s;
    MPI_Type_create_struct(3, bl, dp, ty, &s);
    MPI_Type_commit(&s);
    char rbuf[24 * 4];
    static char sbuf[24 * 4];
    /* whole elements, then 0..3 basic elements of the next (a type-matching prefix) */
    struct {
        int whole, extra;
    } cases[] = {{3, 0}, {1, 0}, {1, 1}, {1, 2}, {1, 3}, {0, 2}, {0, 0}, {2, 3}};
    for (int c = 0; c < 8; c++) {
        int sbl[4] = {cases[c].whole, 1, 1, 2};
        MPI_Aint sdp[4] = {0, 24 * cases[c].whole, 24 * cases[c].whole + 8, 24 * cases[c].whole + 16};
        MPI_Datatype sty[4] = {s, MPI_INT, MPI_DOUBLE, MPI_INT}, stype;
        MPI_Type_create_struct(1 + cases[c].extra, sbl, sdp, sty, &stype);
        MPI_Type_commit(&stype);
        MPI_Status st;
        send_recv(sbuf, 1, stype, s, rbuf, 3, &st);
        MPI_Type_free(&stype);
        if (!receiving())
            continue;
        /* extra 3 completes the next element */
        int want_cnt = cases[c].extra == 3 ? cases[c].whole + 1
                       : cases[c].extra ? MPI_UNDEFINED : cases[c].whole;
        int want_el = cases[c].whole * 4 + (cases[c].extra == 3 ? 4 : cases[c].extra);
        int cnt = -5, el = -5;
        MPI_Count elx = -5, elc = -5, cntc = -5;
        MPI_Get_count(&st, s, &cnt);
        MPI_Get_elements(&st, s, &el);
        MPI_Get_elements_x(&st, s, &elx);
        MPI_Get_elements_c(&st, s, &elc);
        MPI_Get_count_c(&st, s, &cntc);
        CHECK(cnt == want_cnt, "case %d: MPI_Get_count %d, want %d", c, cnt, want_cnt);
        CHECK(el == want_el, "case %d: MPI_Get_elements %d, want %d", c, el, want_el);
        CHECK(elx == el && elc == el && cntc == cnt, "case %d: _x/_c forms differ", c);
    }
    /* vector of 4 blocks of 3 ints: 12 basic elements; receive 7 ints */
    MPI_Datatype v;
    MPI_Type_vector(4, 3, 5, MPI_INT, &v);
    MPI_Type_commit(&v);
    int vb[64];
    memset(vb, 0, sizeof vb);
    MPI_Status st;
    static int data[64];
    for (int i = 0; i < 64; i++)
        data[i] = i;
    send_recv(data, 7, MPI_INT, v, vb, 2, &st);
    if (receiving()) {
        int cnt = -5, el = -5;
        MPI_Get_count(&st, v, &cnt);
        MPI_Get_elements(&st, v, &el);
        CHECK(cnt == MPI_UNDEFINED && el == 7, "vector partial: count %d elements %d", cnt, el);
        CHECK(vb[0] == 0 && vb[2] == 2 && vb[5] == 3 && vb[10] == 6 && vb[11] == 0 && vb[3] == 0,
              "vector partial: data placed wrong");
#ifndef MPICH_VERSION
        /* Status_set_elements round trip (MPICH 4.0.2 takes the count as whole elements) */
        MPI_Status_set_elements(&st, v, 24);
        MPI_Get_elements(&st, v, &el);
        CHECK(el == 24, "after MPI_Status_set_elements(24): elements %d", el);
#endif
    }
    MPI_Type_free(&v);
    MPI_Type_free(&s);
    return MTest_Finalize(0);
}
