/* type_large: noncontiguous messages larger than 1 MiB between two ranks (rank ^ 1), in every
 * combination of layouts: vector of 2 KiB blocks, vector of single doubles, subarray, and
 * contiguous, as sender and receiver (type signatures match: all doubles).  Each case is run
 * with the receive posted first and with the message arriving unexpected, and some truncated
 * (MPI_ERR_TRUNCATE; the buffer contents are then unspecified, and holes must stay intact
 * only when not truncated).  Run again with HYMPI_CMA=0 (streamed
 * copies) by the testlist. */
#include "mtest.h"
#include <string.h>

#define NELEM (196608) /* doubles per message: 1.5 MiB */

static int partner;

enum { CONTIG, VBLOCK, VSINGLE, SUBARR, NKIND };
static const char *kname[] = {"contiguous", "vector of 2 KiB blocks", "vector of doubles", "subarray"};

/* A type of NELEM doubles (count 1) with its map: map[i] = index of the i-th double. */
static MPI_Datatype make(int kind, long *map, long *span)
{
    MPI_Datatype t;
    long n = 0;
    switch (kind) {
    case CONTIG:
        MPI_Type_contiguous(NELEM, MPI_DOUBLE, &t);
        for (long i = 0; i < NELEM; i++)
            map[n++] = i;
        *span = NELEM;
        break;
    case VBLOCK: /* 768 blocks of 256 doubles, stride 300 */
        MPI_Type_vector(NELEM / 256, 256, 300, MPI_DOUBLE, &t);
        for (long b = 0; b < NELEM / 256; b++)
            for (long j = 0; j < 256; j++)
                map[n++] = b * 300 + j;
        *span = (NELEM / 256) * 300;
        break;
    case VSINGLE: /* every third double */
        MPI_Type_vector(NELEM, 1, 3, MPI_DOUBLE, &t);
        for (long i = 0; i < NELEM; i++)
            map[n++] = 3 * i;
        *span = 3L * NELEM;
        break;
    default: { /* 96 x 2048 box of a 100 x 2050 array, offset (2, 1) */
        int sizes[2] = {100, 2050}, sub[2] = {96, 2048}, st[2] = {2, 1};
        MPI_Type_create_subarray(2, sizes, sub, st, MPI_ORDER_C, MPI_DOUBLE, &t);
        for (long y = 0; y < 96; y++)
            for (long x = 0; x < 2048; x++)
                map[n++] = (y + 2) * 2050 + x + 1;
        *span = 100L * 2050;
    }
    }
    MPI_Type_commit(&t);
    return t;
}

static long smap[NELEM], rmap[NELEM];

static void run(int sk, int rk, int unexpected, int truncate)
{
    long sspan, rspan;
    MPI_Datatype st = make(sk, smap, &sspan), rt = make(rk, rmap, &rspan);
    double *buf = calloc(sspan > rspan ? sspan : rspan, sizeof(double));
    char what[160];
    snprintf(what, sizeof what, "%s -> %s%s%s", kname[sk], kname[rk], unexpected ? " (unexpected)" : "",
             truncate ? " (truncated)" : "");
    int sender = mtest_rank % 2 == 0;
    int scount = truncate ? 2 : 1; /* two elements into room for one */
    if (sender) {
        double *big = buf;
        if (truncate) { /* a second element: its own buffer span */
            free(buf);
            MPI_Aint lb, ext;
            MPI_Type_get_extent(st, &lb, &ext);
            big = calloc(ext / 8 * 2, sizeof(double));
            buf = big;
        }
        MPI_Aint lb, ext;
        MPI_Type_get_extent(st, &lb, &ext);
        for (int e = 0; e < scount; e++)
            for (long i = 0; i < NELEM; i++)
                big[e * (ext / 8) + smap[i]] = e * NELEM + i + 0.5;
        MPI_Request r;
        MPI_Isend(big, scount, st, partner, 1, MPI_COMM_WORLD, &r);
        if (unexpected)
            MPI_Send(NULL, 0, MPI_INT, partner, 2, MPI_COMM_WORLD);
        int rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
        CHECK_RC(rc, what);
    } else {
        for (long i = 0; i < rspan; i++)
            buf[i] = -1;
        if (unexpected)
            MPI_Recv(NULL, 0, MPI_INT, partner, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Status s;
        int rc = MPI_Recv(buf, 1, rt, partner, 1, MPI_COMM_WORLD, &s);
        if (truncate)
            CHECK_CLASS(rc, MPI_ERR_TRUNCATE, what);
        else
            CHECK_RC(rc, what);
        /* After truncation the buffer contents are not specified (MPICH delivers nothing). */
        int bad = truncate ? 3 : 0;
        for (long i = 0; i < NELEM && bad < 3; i++)
            if (buf[rmap[i]] != i + 0.5)
                bad += !CHECK(0, "%s: double %ld is %g, want %g", what, i, buf[rmap[i]], i + 0.5);
        /* holes untouched */
        long k = 0;
        for (long i = 0; i < rspan && bad < 3 && !truncate; i++) {
            if (k < NELEM && rmap[k] == i) {
                k++;
                continue;
            }
            if (buf[i] != -1)
                bad += !CHECK(0, "%s: hole %ld written", what, i);
        }
        int cnt = -1;
        MPI_Get_count(&s, MPI_DOUBLE, &cnt);
        CHECK(truncate || cnt == NELEM, "%s: received %d doubles", what, cnt);
    }
    free(buf);
    MPI_Type_free(&st);
    MPI_Type_free(&rt);
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    MTest_Errors_return_all();
    partner = mtest_rank ^ 1;
    if (partner < mtest_size) {
        for (int sk = 0; sk < NKIND; sk++)
            for (int rk = 0; rk < NKIND; rk++) {
                if (sk == CONTIG && rk == CONTIG)
                    continue;
                run(sk, rk, 0, 0);
                run(sk, rk, 1, 0);
            }
        run(VBLOCK, VSINGLE, 0, 1);
        run(VSINGLE, SUBARR, 1, 1);
        run(SUBARR, CONTIG, 0, 1);
    }
    return MTest_Finalize(0);
}
