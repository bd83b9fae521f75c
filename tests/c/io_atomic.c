/* io_atomic: atomic mode (MPI_File_set_atomicity(fh, 1)) under concurrent overlapping access.
 *
 *  - MPI_File_get_atomicity is 1 after MPI_File_set_atomicity(fh, 1).
 *  - Contiguous: the region is 64 KiB (16384 ints), first filled with a start value; then
 *    every rank, ITER times, writes the whole region filled with its own value
 *    (MPI_File_write_at) and reads it back (MPI_File_read_at): in atomic mode each read
 *    sees the region before or after each write, so it must hold one value only (the start
 *    value or some rank's), never a mix.  ITER = 500 rounds (or 3 s) per phase: with
 *    atomicity 0, MPICH on a local ext4 file shows mixed data within a few hundred.
 *    At the end (after a barrier) every rank reads the same single value.
 *  - Noncontiguous: the same through a view whose filetype is a vector of 64 blocks of 128
 *    ints with stride 256 (32 KiB of data in a 64 KiB span) on a file prefilled with a
 *    sentinel: every read through the view is one value, and afterwards the holes still
 *    hold the sentinel (checked by rank 0 with a view-less read).
 * Runs at 1 rank too (trivially); meant for 2 to 4 ranks, more than the cores make the
 * accesses overlap in time. */
#include "mtest_io.h"

static int me, np;

#define NINT 16384 /* 64 KiB */
#define ITER 500   /* rounds per phase */
#define BUDGET 3.0 /* seconds per phase: a slow MPI stops early */
#define START 0x55aa55aa
#define SENT (-99)

static int val(int r)
{
    return 0x10000 * (r + 1) + 0x5a;
}

/* The buffer holds one value, which is START or a rank's; returns it, or a failure. */
static int uniform(const int *b, int n, const char *what, int iter)
{
    int v = b[0];
    int ok = v == START;
    for (int r = 0; r < np; r++)
        ok |= v == val(r);
    if (!CHECK(ok, "%s, iteration %d: [0] = 0x%x is nobody's value", what, iter, v))
        return -1;
    for (int i = 1; i < n; i++)
        if (b[i] != v) {
            CHECK(0, "%s, iteration %d: mixed data: [0] = 0x%x but [%d] = 0x%x", what, iter, v,
                  i, b[i]);
            return -1;
        }
    return v;
}

static void agree(int v, const char *what)
{
    int *all = malloc(np * sizeof(int));
    MPI_Allgather(&v, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < np; r++)
        if (!CHECK(all[r] == all[0] && all[0] != START && all[0] != -1,
                   "%s: rank %d reads 0x%x at the end, rank 0 0x%x", what, r, all[r], all[0]))
            break;
    free(all);
}

static void t_contiguous(void)
{
    char p[MTEST_IO_PATH_MAX];
    MTest_Io_path(p, "contig");
    MPI_File fh = MPI_FILE_NULL;
    int rc = MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_EXCL,
                           MPI_INFO_NULL, &fh);
    CHECK_RC(rc, "MPI_File_open");
    if (rc != MPI_SUCCESS)
        return;
    rc = MPI_File_set_atomicity(fh, 1);
    CHECK_RC(rc, "MPI_File_set_atomicity(1)");
    int flag = -1;
    MPI_File_get_atomicity(fh, &flag);
    CHECK(flag == 1, "MPI_File_get_atomicity after set 1: %d", flag);

    int *w = malloc(NINT * sizeof(int)), *r = malloc(NINT * sizeof(int));
    MPI_Status st;
    if (me == 0) {
        for (int i = 0; i < NINT; i++)
            w[i] = START;
        rc = MPI_File_write_at(fh, 0, w, NINT, MPI_INT, &st);
        CHECK_RC(rc, "MPI_File_write_at (start value)");
    }
    MPI_Barrier(MPI_COMM_WORLD); /* atomic mode: visible to all once the write returned */
    for (int i = 0; i < NINT; i++)
        w[i] = val(me);
    double t0 = MPI_Wtime();
    for (int it = 0; it < ITER && MPI_Wtime() - t0 < BUDGET; it++) {
        rc = MPI_File_write_at(fh, 0, w, NINT, MPI_INT, &st);
        CHECK_RC(rc, "MPI_File_write_at (atomic)");
        CHECK_COUNT(&st, MPI_INT, NINT, "atomic write of 64 KiB");
        memset(r, 0, NINT * sizeof(int));
        rc = MPI_File_read_at(fh, 0, r, NINT, MPI_INT, &st);
        CHECK_RC(rc, "MPI_File_read_at (atomic)");
        CHECK_COUNT(&st, MPI_INT, NINT, "atomic read of 64 KiB");
        if (uniform(r, NINT, "contiguous read", it) < 0)
            break;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    memset(r, 0, NINT * sizeof(int));
    rc = MPI_File_read_at(fh, 0, r, NINT, MPI_INT, &st);
    CHECK_RC(rc, "MPI_File_read_at (final)");
    agree(uniform(r, NINT, "final contiguous read", ITER), "contiguous");
    MPI_File_close(&fh);
    free(w);
    free(r);
}

static void t_strided(void)
{
    enum { NBLK = 64, BLK = 128, STRIDE = 256, NDATA = NBLK * BLK, SPAN = NBLK * STRIDE };
    char p[MTEST_IO_PATH_MAX];
    MTest_Io_path(p, "strided");
    MPI_File fh = MPI_FILE_NULL;
    int rc = MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_EXCL,
                           MPI_INFO_NULL, &fh);
    CHECK_RC(rc, "MPI_File_open");
    if (rc != MPI_SUCCESS)
        return;
    rc = MPI_File_set_atomicity(fh, 1);
    CHECK_RC(rc, "MPI_File_set_atomicity(1)");
    int *w = malloc(SPAN * sizeof(int)), *r = malloc(SPAN * sizeof(int));
    MPI_Status st;
    if (me == 0) {
        for (int i = 0; i < SPAN; i++)
            w[i] = (i % STRIDE) < BLK ? START : SENT;
        rc = MPI_File_write_at(fh, 0, w, SPAN, MPI_INT, &st);
        CHECK_RC(rc, "MPI_File_write_at (start value and sentinel)");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Datatype vec;
    MPI_Type_vector(NBLK, BLK, STRIDE, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    rc = MPI_File_set_view(fh, 0, MPI_INT, vec, "native", MPI_INFO_NULL);
    CHECK_RC(rc, "MPI_File_set_view (strided)");
    for (int i = 0; i < NDATA; i++)
        w[i] = val(me);
    double t0 = MPI_Wtime();
    for (int it = 0; it < ITER && MPI_Wtime() - t0 < BUDGET; it++) {
        rc = MPI_File_write_at(fh, 0, w, NDATA, MPI_INT, &st);
        CHECK_RC(rc, "MPI_File_write_at (atomic, strided view)");
        CHECK_COUNT(&st, MPI_INT, NDATA, "atomic strided write");
        memset(r, 0, NDATA * sizeof(int));
        rc = MPI_File_read_at(fh, 0, r, NDATA, MPI_INT, &st);
        CHECK_RC(rc, "MPI_File_read_at (atomic, strided view)");
        CHECK_COUNT(&st, MPI_INT, NDATA, "atomic strided read");
        if (uniform(r, NDATA, "strided read", it) < 0)
            break;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    memset(r, 0, NDATA * sizeof(int));
    rc = MPI_File_read_at(fh, 0, r, NDATA, MPI_INT, &st);
    CHECK_RC(rc, "MPI_File_read_at (final, strided view)");
    int last = uniform(r, NDATA, "final strided read", ITER);
    agree(last, "strided");
    MPI_File_close(&fh);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0 && last != -1) {
        MPI_Offset n;
        int *got = (int *)MTest_Io_slurp(p, &n);
        for (int i = 0; i < SPAN; i++)
            w[i] = (i % STRIDE) < BLK ? last : SENT;
        if (got && CHECK(n == (MPI_Offset)SPAN * (MPI_Offset)sizeof(int),
                         "strided file has %lld bytes, expected %lld", (long long)n,
                         (long long)SPAN * (long long)sizeof(int)))
            IO_SAME(got, w, (size_t)n, "strided file (holes keep the sentinel)");
        free(got);
    }
    MPI_Type_free(&vec);
    free(w);
    free(r);
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    me = mtest_rank;
    np = mtest_size;
    MTest_Io_dir("atomic");
    t_contiguous();
    t_strided();
    MTest_Io_cleanup();
    return MTest_Finalize(0);
}
