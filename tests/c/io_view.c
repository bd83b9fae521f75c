/* io_view: file views, individual file pointers, noncontiguous access in file and memory.
 *
 * Every file is checked afterwards byte-exact against a model computed here, by rank 0 with
 * a view-less read (default view, MPI_COMM_SELF), and read back through the views.
 *  - Default view after open: disp 0, etype and filetype MPI_BYTE, "native".
 *  - Interleaved vector view (etype MPI_INT, filetype MPI_Type_vector(6, 4, 4n) resized to
 *    24n ints, disp 4r ints: rank r owns blocks r, r+n, ...): MPI_File_write in pieces of
 *    3, 5 and 16 ints (across block boundaries), MPI_File_get_position,
 *    MPI_File_get_byte_offset (model: disp + block arithmetic), MPI_File_seek with
 *    SEEK_SET, SEEK_CUR (negative) and SEEK_END (end of file in the view = 24 etypes;
 *    -1 reads the last int), MPI_File_read at the end gives 0; then the same view with
 *    MPI_File_write_all / MPI_File_read_all (new values, two calls).
 *  - Indexed filetype (blocks 1, 3, 2 at 0, 2, 7 ints; extent 9), a region per rank,
 *    file prefilled with a sentinel: MPI_File_write_at / read_at through the view; the holes
 *    keep the sentinel.
 *  - Resized filetype (2 ints, extent 2n+1 ints, disp 2r ints): ranks interleave, the last
 *    int of each tile belongs to nobody and keeps the sentinel.
 *  - Subarray filetype (global 4 x 3n ints, rank r owns columns 3r..3r+2, MPI_ORDER_C):
 *    MPI_File_write_all / read_at.
 *  - Noncontiguous memory (MPI_Type_vector(K, 1, 3, MPI_INT)) with a contiguous view:
 *    the file gets every third int; reading back writes only the typemap (gaps keep their
 *    sentinel); MPI_Get_count / MPI_Get_elements in the memory type.
 *  - MPI_File_get_view returns the disp, "native", the predefined etype as is, and derived
 *    filetypes as new committed handles with the same typemap (size, extent, true extent,
 *    and MPI_Pack of two items gives the same bytes as the original), freed only when their
 *    combiner is not MPI_COMBINER_NAMED.  MPI_File_set_view resets the file pointer to 0. */
#include "mtest_io.h"

static int me, np;

#define B 4  /* ints per block of the interleaved view */
#define M 24 /* ints per rank in the interleaved view */

static void open_ok(const char *path, int amode, MPI_File *fh)
{
    *fh = MPI_FILE_NULL;
    int rc = MPI_File_open(MPI_COMM_WORLD, path, amode, MPI_INFO_NULL, fh);
    CHECK(rc == MPI_SUCCESS, "MPI_File_open(%s) returned %s", path, MTest_Describe(rc));
}

static void sync_barrier_sync(MPI_File fh)
{
    CHECK_RC(MPI_File_sync(fh), "MPI_File_sync");
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(MPI_File_sync(fh), "MPI_File_sync");
}

/* The returned type t stands for the original o: predefined -> the same handle; derived ->
 * same typemap.  Frees t when derived. */
static void check_same_type(MPI_Datatype t, MPI_Datatype o, const char *what)
{
    int ni, na, nd, comb = -1, ocomb = -1;
    MPI_Type_get_envelope(o, &ni, &na, &nd, &ocomb);
    int rc = MPI_Type_get_envelope(t, &ni, &na, &nd, &comb);
    if (!CHECK(rc == MPI_SUCCESS, "%s: MPI_Type_get_envelope of the returned type failed", what))
        return;
    if (ocomb == MPI_COMBINER_NAMED) {
        CHECK(t == o, "%s: predefined type not returned as is", what);
        CHECK(comb == MPI_COMBINER_NAMED, "%s: returned predefined type has combiner %d", what,
              comb);
        return;
    }
    CHECK(comb != MPI_COMBINER_NAMED, "%s: derived type returned as a named one", what);
    int s1 = -1, s2 = -2;
    MPI_Aint lb1, ex1, lb2, ex2, tlb1, tex1, tlb2, tex2;
    MPI_Type_size(o, &s1);
    MPI_Type_size(t, &s2);
    MPI_Type_get_extent(o, &lb1, &ex1);
    MPI_Type_get_extent(t, &lb2, &ex2);
    MPI_Type_get_true_extent(o, &tlb1, &tex1);
    MPI_Type_get_true_extent(t, &tlb2, &tex2);
    CHECK(s1 == s2 && lb1 == lb2 && ex1 == ex2 && tlb1 == tlb2 && tex1 == tex2,
          "%s: returned type: size %d lb %ld extent %ld true %ld/%ld, original: size %d lb %ld "
          "extent %ld true %ld/%ld", what, s2, (long)lb2, (long)ex2, (long)tlb2, (long)tex2, s1,
          (long)lb1, (long)ex1, (long)tlb1, (long)tex1);
    if (s1 == s2 && lb1 == lb2 && ex1 == ex2 && lb1 >= 0 && ex1 > 0) {
        /* Same typemap: packing two items from the same memory gives the same bytes.  The
         * returned type must be committed already (no MPI_Type_commit here). */
        size_t span = (size_t)(lb1 + 2 * ex1);
        unsigned char *src = malloc(span);
        for (size_t i = 0; i < span; i++)
            src[i] = (unsigned char)(i * 7 + 3);
        int psz = 0;
        MPI_Pack_size(2, o, MPI_COMM_SELF, &psz);
        unsigned char *p1 = calloc(1, (size_t)psz + 1), *p2 = calloc(1, (size_t)psz + 1);
        int pos1 = 0, pos2 = 0;
        MPI_Pack(src, 2, o, p1, psz, &pos1, MPI_COMM_SELF);
        rc = MPI_Pack(src, 2, t, p2, psz, &pos2, MPI_COMM_SELF);
        CHECK(rc == MPI_SUCCESS && pos1 == pos2, "%s: MPI_Pack with the returned type: rc %d, "
              "%d bytes vs %d", what, rc, pos2, pos1);
        if (rc == MPI_SUCCESS && pos1 == pos2)
            IO_SAME(p2, p1, (size_t)pos1, "typemap of the returned filetype (packed bytes)");
        free(src);
        free(p1);
        free(p2);
    }
    if (comb != MPI_COMBINER_NAMED)
        MPI_Type_free(&t);
}

static void check_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype ftype,
                       const char *what)
{
    MPI_Offset d = -1;
    MPI_Datatype et = MPI_DATATYPE_NULL, ft = MPI_DATATYPE_NULL;
    char rep[MPI_MAX_DATAREP_STRING + 1];
    memset(rep, 'x', sizeof rep);
    rep[MPI_MAX_DATAREP_STRING] = 0;
    int rc = MPI_File_get_view(fh, &d, &et, &ft, rep);
    if (!CHECK(rc == MPI_SUCCESS, "%s: MPI_File_get_view returned %s", what, MTest_Describe(rc)))
        return;
    CHECK(d == disp, "%s: get_view disp %lld, expected %lld", what, (long long)d,
          (long long)disp);
    CHECK(strcmp(rep, "native") == 0, "%s: get_view datarep \"%.20s\"", what, rep);
    char w[200];
    snprintf(w, sizeof w, "%s (etype)", what);
    check_same_type(et, etype, w);
    snprintf(w, sizeof w, "%s (filetype)", what);
    check_same_type(ft, ftype, w);
}

static void pos_is(MPI_File fh, MPI_Offset want, const char *what)
{
    MPI_Offset p = -1;
    int rc = MPI_File_get_position(fh, &p);
    CHECK(rc == MPI_SUCCESS && p == want, "%s: MPI_File_get_position %lld, expected %lld", what,
          (long long)p, (long long)want);
}

static void byte_offset_is(MPI_File fh, MPI_Offset off, MPI_Offset want, const char *what)
{
    MPI_Offset b = -1;
    int rc = MPI_File_get_byte_offset(fh, off, &b);
    CHECK(rc == MPI_SUCCESS && b == want,
          "%s: MPI_File_get_byte_offset(%lld) = %lld, expected %lld", what, (long long)off,
          (long long)b, (long long)want);
}

/* Rank 0: the file equals the model (n ints). */
static void file_is(const char *path, const int *model, int n, const char *what)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) {
        MPI_Offset sz;
        unsigned char *got = MTest_Io_slurp(path, &sz);
        if (got && CHECK(sz == (MPI_Offset)n * (MPI_Offset)sizeof(int),
                         "%s: file has %lld bytes, expected %lld", what, (long long)sz,
                         (long long)n * (long long)sizeof(int)))
            IO_SAME(got, model, (size_t)n * sizeof(int), what);
        free(got);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static int v1(int r, int k)
{
    return (r + 1) * 1000 + k;
}
static int v2(int r, int k)
{
    return -((r + 1) * 1000 + k) * 3;
}

/* File int index of etype k of rank r in the interleaved view. */
static int interleaved_index(int r, int k)
{
    return (k / B) * np * B + r * B + k % B;
}

static void t_interleaved(void)
{
    char p[MTEST_IO_PATH_MAX];
    MTest_Io_path(p, "interleaved");
    MPI_File fh;
    open_ok(p, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_EXCL, &fh);
    if (fh == MPI_FILE_NULL)
        return;
    check_view(fh, 0, MPI_BYTE, MPI_BYTE, "default view");

    MPI_Datatype vec, ftype;
    MPI_Type_vector(M / B, B, np * B, MPI_INT, &vec);
    MPI_Type_create_resized(vec, 0, (MPI_Aint)M * np * sizeof(int), &ftype);
    MPI_Type_commit(&ftype);
    const MPI_Offset disp = (MPI_Offset)me * B * sizeof(int);
    int rc = MPI_File_set_view(fh, disp, MPI_INT, ftype, "native", MPI_INFO_NULL);
    CHECK_RC(rc, "MPI_File_set_view (interleaved vector)");
    check_view(fh, disp, MPI_INT, ftype, "interleaved view");
    pos_is(fh, 0, "after set_view");

    int w[M], r[M];
    for (int k = 0; k < M; k++)
        w[k] = v1(me, k);
    const int pieces[3] = {3, 5, 16};
    int done = 0;
    for (int i = 0; i < 3; i++) {
        MPI_Status st;
        MTest_Poison_status(&st);
        rc = MPI_File_write(fh, w + done, pieces[i], MPI_INT, &st);
        CHECK_RC(rc, "MPI_File_write (interleaved view)");
        CHECK_COUNT(&st, MPI_INT, pieces[i], "MPI_File_write piece");
        done += pieces[i];
        pos_is(fh, done, "after a write piece");
    }
    byte_offset_is(fh, 0, disp, "interleaved");
    byte_offset_is(fh, 5, (MPI_Offset)interleaved_index(me, 5) * sizeof(int), "interleaved");
    byte_offset_is(fh, B, (MPI_Offset)interleaved_index(me, B) * sizeof(int), "interleaved");
    byte_offset_is(fh, M - 1, (MPI_Offset)interleaved_index(me, M - 1) * sizeof(int),
                   "interleaved");
    byte_offset_is(fh, M, (MPI_Offset)interleaved_index(me, M) * sizeof(int), "interleaved");
    sync_barrier_sync(fh);

    /* Seeks and reads through the view. */
    MPI_Status st;
    int x[4];
    rc = MPI_File_seek(fh, 0, MPI_SEEK_SET);
    CHECK_RC(rc, "MPI_File_seek(0, SEEK_SET)");
    pos_is(fh, 0, "seek(0, SEEK_SET)");
    rc = MPI_File_read(fh, x, 3, MPI_INT, &st);
    CHECK(rc == MPI_SUCCESS && x[0] == v1(me, 0) && x[1] == v1(me, 1) && x[2] == v1(me, 2),
          "read of 3 after SEEK_SET 0: %d %d %d", x[0], x[1], x[2]);
    CHECK_COUNT(&st, MPI_INT, 3, "MPI_File_read of 3");
    rc = MPI_File_seek(fh, 5, MPI_SEEK_SET);
    CHECK_RC(rc, "MPI_File_seek(5, SEEK_SET)");
    rc = MPI_File_read(fh, x, 2, MPI_INT, &st);
    CHECK(rc == MPI_SUCCESS && x[0] == v1(me, 5) && x[1] == v1(me, 6),
          "read of 2 after SEEK_SET 5: %d %d", x[0], x[1]);
    pos_is(fh, 7, "after reading 2 at 5");
    rc = MPI_File_seek(fh, -4, MPI_SEEK_CUR);
    CHECK_RC(rc, "MPI_File_seek(-4, SEEK_CUR)");
    pos_is(fh, 3, "seek(-4, SEEK_CUR) from 7");
    rc = MPI_File_read(fh, x, 1, MPI_INT, &st);
    CHECK(rc == MPI_SUCCESS && x[0] == v1(me, 3), "read after SEEK_CUR: %d, expected %d", x[0],
          v1(me, 3));
    rc = MPI_File_seek(fh, 0, MPI_SEEK_END);
    CHECK_RC(rc, "MPI_File_seek(0, SEEK_END)");
    pos_is(fh, M, "seek(0, SEEK_END)");
    rc = MPI_File_read(fh, x, 2, MPI_INT, &st);
    CHECK_RC(rc, "MPI_File_read at the end");
    CHECK_COUNT_EOF(&st, MPI_INT, 0, 2, "MPI_File_read at the end of file");
    rc = MPI_File_seek(fh, -1, MPI_SEEK_END);
    CHECK_RC(rc, "MPI_File_seek(-1, SEEK_END)");
    pos_is(fh, M - 1, "seek(-1, SEEK_END)");
    rc = MPI_File_read(fh, x, 2, MPI_INT, &st);
    CHECK(rc == MPI_SUCCESS && x[0] == v1(me, M - 1), "read after SEEK_END -1: %d, expected %d",
          x[0], v1(me, M - 1));
    CHECK_COUNT_EOF(&st, MPI_INT, 1, 2, "MPI_File_read of 2 with one left");
    rc = MPI_File_seek(fh, 0, MPI_SEEK_SET);
    memset(r, 0, sizeof r);
    rc = MPI_File_read(fh, r, M, MPI_INT, &st);
    CHECK_RC(rc, "MPI_File_read (all)");
    CHECK_COUNT(&st, MPI_INT, M, "MPI_File_read of all");
    IO_SAME(r, w, sizeof w, "own data read back through the interleaved view");

    int *model = malloc((size_t)np * M * sizeof(int));
    for (int q = 0; q < np; q++)
        for (int k = 0; k < M; k++)
            model[interleaved_index(q, k)] = v1(q, k);
    MPI_File_sync(fh);
    file_is(p, model, np * M, "interleaved file written by MPI_File_write");

    /* Collective write_all / read_all with the same view, new values. */
    for (int k = 0; k < M; k++)
        w[k] = v2(me, k);
    rc = MPI_File_seek(fh, 0, MPI_SEEK_SET);
    MTest_Poison_status(&st);
    rc = MPI_File_write_all(fh, w, 10, MPI_INT, &st);
    CHECK_RC(rc, "MPI_File_write_all (interleaved)");
    CHECK_COUNT(&st, MPI_INT, 10, "MPI_File_write_all of 10");
    rc = MPI_File_write_all(fh, w + 10, M - 10, MPI_INT, &st);
    CHECK_RC(rc, "MPI_File_write_all (interleaved)");
    CHECK_COUNT(&st, MPI_INT, M - 10, "MPI_File_write_all of the rest");
    pos_is(fh, M, "after write_all");
    sync_barrier_sync(fh);
    rc = MPI_File_seek(fh, 0, MPI_SEEK_SET);
    memset(r, 0, sizeof r);
    MTest_Poison_status(&st);
    rc = MPI_File_read_all(fh, r, M, MPI_INT, &st);
    CHECK_RC(rc, "MPI_File_read_all (interleaved)");
    CHECK_COUNT(&st, MPI_INT, M, "MPI_File_read_all");
    IO_SAME(r, w, sizeof w, "own data read back by read_all");
    /* Re-setting the view resets the pointer. */
    rc = MPI_File_set_view(fh, disp, MPI_INT, ftype, "native", MPI_INFO_NULL);
    pos_is(fh, 0, "after set_view again");
    for (int q = 0; q < np; q++)
        for (int k = 0; k < M; k++)
            model[interleaved_index(q, k)] = v2(q, k);
    rc = MPI_File_close(&fh);
    CHECK_RC(rc, "MPI_File_close");
    file_is(p, model, np * M, "interleaved file written by MPI_File_write_all");
    free(model);
    MPI_Type_free(&vec);
    MPI_Type_free(&ftype);
}

static int sentinel(int f)
{
    return -(f + 1);
}

static void t_indexed(void)
{
    char p[MTEST_IO_PATH_MAX];
    MTest_Io_path(p, "indexed");
    MPI_File fh;
    open_ok(p, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_EXCL, &fh);
    if (fh == MPI_FILE_NULL)
        return;
    enum { TILES = 3, EXT = 9, PER = 6, REG = TILES * EXT };
    const int bl[3] = {1, 3, 2}, dp[3] = {0, 2, 7};
    const int map[PER] = {0, 2, 3, 4, 7, 8}; /* ints of a tile in the typemap */
    int pre[REG];
    for (int i = 0; i < REG; i++)
        pre[i] = sentinel(me * REG + i);
    int rc = MPI_File_write_at(fh, (MPI_Offset)me * REG * sizeof(int), pre, REG, MPI_INT,
                               MPI_STATUS_IGNORE);
    CHECK_RC(rc, "prefill write_at");

    MPI_Datatype idx;
    MPI_Type_indexed(3, bl, dp, MPI_INT, &idx);
    MPI_Type_commit(&idx);
    const MPI_Offset disp = (MPI_Offset)me * REG * sizeof(int);
    rc = MPI_File_set_view(fh, disp, MPI_INT, idx, "native", MPI_INFO_NULL);
    CHECK_RC(rc, "MPI_File_set_view (indexed)");
    check_view(fh, disp, MPI_INT, idx, "indexed view");
    int w[TILES * PER], r[TILES * PER];
    for (int k = 0; k < TILES * PER; k++)
        w[k] = v1(me, k) + 500;
    MPI_Status st;
    rc = MPI_File_write_at(fh, 0, w, TILES * PER, MPI_INT, &st);
    CHECK_RC(rc, "MPI_File_write_at (indexed view)");
    CHECK_COUNT(&st, MPI_INT, TILES * PER, "write_at through the indexed view");
    byte_offset_is(fh, 7, disp + (EXT + map[1]) * (MPI_Offset)sizeof(int), "indexed");
    byte_offset_is(fh, 17, disp + (2 * EXT + map[5]) * (MPI_Offset)sizeof(int), "indexed");
    memset(r, 0, sizeof r);
    rc = MPI_File_read_at(fh, 0, r, TILES * PER, MPI_INT, &st);
    CHECK_RC(rc, "MPI_File_read_at (indexed view)");
    IO_SAME(r, w, sizeof w, "own data read back through the indexed view");
    rc = MPI_File_read_at(fh, 4, r, 3, MPI_INT, &st);
    CHECK(rc == MPI_SUCCESS && r[0] == w[4] && r[1] == w[5] && r[2] == w[6],
          "read_at(4, 3) through the indexed view: %d %d %d", r[0], r[1], r[2]);

    int *model = malloc((size_t)np * REG * sizeof(int));
    for (int q = 0; q < np; q++)
        for (int i = 0; i < REG; i++) {
            int f = q * REG + i, t = i / EXT, in = i % EXT, k = -1;
            for (int j = 0; j < PER; j++)
                if (map[j] == in)
                    k = j;
            model[f] = k < 0 ? sentinel(f) : v1(q, t * PER + k) + 500;
        }
    rc = MPI_File_close(&fh);
    CHECK_RC(rc, "MPI_File_close");
    file_is(p, model, np * REG, "file written through the indexed view (holes keep the sentinel)");
    free(model);
    MPI_Type_free(&idx);
}

static void t_resized(void)
{
    char p[MTEST_IO_PATH_MAX];
    MTest_Io_path(p, "resized");
    MPI_File fh;
    open_ok(p, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_EXCL, &fh);
    if (fh == MPI_FILE_NULL)
        return;
    const int ext = 2 * np + 1, tiles = 5, n = tiles * ext;
    int *pre = malloc((size_t)n * sizeof(int));
    for (int i = 0; i < n; i++)
        pre[i] = sentinel(i);
    int rc;
    if (me == 0) {
        rc = MPI_File_write_at(fh, 0, pre, n, MPI_INT, MPI_STATUS_IGNORE);
        CHECK_RC(rc, "prefill write_at");
    }
    sync_barrier_sync(fh);

    MPI_Datatype two, rsz;
    MPI_Type_contiguous(2, MPI_INT, &two);
    MPI_Type_create_resized(two, 0, (MPI_Aint)ext * sizeof(int), &rsz);
    MPI_Type_commit(&rsz);
    const MPI_Offset disp = (MPI_Offset)me * 2 * sizeof(int);
    rc = MPI_File_set_view(fh, disp, MPI_INT, rsz, "native", MPI_INFO_NULL);
    CHECK_RC(rc, "MPI_File_set_view (resized)");
    check_view(fh, disp, MPI_INT, rsz, "resized view");
    int w[10], r[10];
    for (int k = 0; k < 2 * tiles; k++)
        w[k] = v2(me, k) - 7;
    MPI_Status st;
    rc = MPI_File_write(fh, w, 2 * tiles, MPI_INT, &st);
    CHECK_RC(rc, "MPI_File_write (resized view)");
    CHECK_COUNT(&st, MPI_INT, 2 * tiles, "write through the resized view");
    pos_is(fh, 2 * tiles, "after the write through the resized view");
    byte_offset_is(fh, 3, disp + (MPI_Offset)(ext + 1) * sizeof(int), "resized");
    rc = MPI_File_seek(fh, 0, MPI_SEEK_SET);
    memset(r, 0, sizeof r);
    rc = MPI_File_read(fh, r, 2 * tiles, MPI_INT, &st);
    CHECK_RC(rc, "MPI_File_read (resized view)");
    IO_SAME(r, w, 2 * tiles * sizeof(int), "own data read back through the resized view");

    for (int q = 0; q < np; q++)
        for (int k = 0; k < 2 * tiles; k++)
            pre[(k / 2) * ext + 2 * q + k % 2] = v2(q, k) - 7;
    rc = MPI_File_close(&fh);
    CHECK_RC(rc, "MPI_File_close");
    file_is(p, pre, n, "file written through the resized view (last int of a tile untouched)");
    free(pre);
    MPI_Type_free(&two);
    MPI_Type_free(&rsz);
}

static void t_subarray(void)
{
    char p[MTEST_IO_PATH_MAX];
    MTest_Io_path(p, "subarray");
    MPI_File fh;
    open_ok(p, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_EXCL, &fh);
    if (fh == MPI_FILE_NULL)
        return;
    const int rows = 4, cols = 3 * np;
    int sizes[2] = {rows, cols}, sub[2] = {rows, 3}, starts[2] = {0, 3 * me};
    MPI_Datatype sa;
    MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C, MPI_INT, &sa);
    MPI_Type_commit(&sa);
    int rc = MPI_File_set_view(fh, 0, MPI_INT, sa, "native", MPI_INFO_NULL);
    CHECK_RC(rc, "MPI_File_set_view (subarray)");
    check_view(fh, 0, MPI_INT, sa, "subarray view");
    int w[12], r[12];
    for (int k = 0; k < 12; k++)
        w[k] = v1(me, k) * 11;
    MPI_Status st;
    MTest_Poison_status(&st);
    rc = MPI_File_write_all(fh, w, 12, MPI_INT, &st);
    CHECK_RC(rc, "MPI_File_write_all (subarray view)");
    CHECK_COUNT(&st, MPI_INT, 12, "write_all through the subarray view");
    byte_offset_is(fh, 4, (MPI_Offset)(1 * cols + 3 * me + 1) * sizeof(int), "subarray");
    memset(r, 0, sizeof r);
    rc = MPI_File_read_at(fh, 0, r, 12, MPI_INT, &st);
    CHECK_RC(rc, "MPI_File_read_at (subarray view)");
    IO_SAME(r, w, sizeof w, "own block read back through the subarray view");
    int *model = malloc((size_t)rows * cols * sizeof(int));
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++)
            model[i * cols + j] = v1(j / 3, i * 3 + j % 3) * 11;
    rc = MPI_File_close(&fh);
    CHECK_RC(rc, "MPI_File_close");
    file_is(p, model, rows * cols, "file written through the subarray view");
    free(model);
    MPI_Type_free(&sa);
}

static void t_memtype(void)
{
    char p[MTEST_IO_PATH_MAX];
    MTest_Io_path(p, "memtype");
    MPI_File fh;
    open_ok(p, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_EXCL, &fh);
    if (fh == MPI_FILE_NULL)
        return;
    enum { K = 50 };
    MPI_Datatype mt;
    MPI_Type_vector(K, 1, 3, MPI_INT, &mt);
    MPI_Type_commit(&mt);
    int mem[3 * K], back[3 * K], want[3 * K];
    for (int i = 0; i < 3 * K; i++)
        mem[i] = (i % 3 == 0) ? v1(me, i / 3) : 77777;
    const MPI_Offset disp = (MPI_Offset)me * K * sizeof(int);
    int rc = MPI_File_set_view(fh, disp, MPI_INT, MPI_INT, "native", MPI_INFO_NULL);
    CHECK_RC(rc, "MPI_File_set_view (contiguous)");
    check_view(fh, disp, MPI_INT, MPI_INT, "contiguous view");
    MPI_Status st;
    MTest_Poison_status(&st);
    rc = MPI_File_write(fh, mem, 1, mt, &st);
    CHECK_RC(rc, "MPI_File_write of a vector memory type");
    CHECK_COUNT(&st, mt, 1, "write of one vector item");
    int e = -1;
    MPI_Get_elements(&st, mt, &e);
    CHECK(e == K, "write of one vector item: MPI_Get_elements %d, expected %d", e, K);
    pos_is(fh, K, "after writing one vector item of K ints");
    rc = MPI_File_seek(fh, 0, MPI_SEEK_SET);
    for (int i = 0; i < 3 * K; i++) {
        back[i] = -5;
        want[i] = (i % 3 == 0) ? v1(me, i / 3) : -5;
    }
    rc = MPI_File_read(fh, back, 1, mt, &st);
    CHECK_RC(rc, "MPI_File_read into a vector memory type");
    CHECK_COUNT(&st, mt, 1, "read of one vector item");
    IO_SAME(back, want, sizeof back, "vector read back (gaps keep their sentinel)");
    /* One item from the middle of the own region: the next rank's first K/2 ints follow;
     * the last rank gets half an item (partial count). */
    sync_barrier_sync(fh);
    rc = MPI_File_seek(fh, K / 2, MPI_SEEK_SET);
    for (int i = 0; i < 3 * K; i++) {
        back[i] = -5;
        want[i] = -5;
    }
    for (int i = 0; i < K; i++) {
        int k = K / 2 + i, q = me + k / K;
        if (q < np)
            want[3 * i] = v1(q, k % K);
    }
    rc = MPI_File_read(fh, back, 1, mt, &st);
    CHECK_RC(rc, "MPI_File_read of a vector item across the end of the own region");
    if (me == np - 1) {
        CHECK_COUNT_EOF(&st, mt, MPI_UNDEFINED, 1, "read of one vector item with K/2 ints "
                        "left");
        MPI_Get_elements(&st, mt, &e);
        CHECK(e == K / 2 || (MTEST_IO_MPICH && e == K), "half item: MPI_Get_elements %d, "
              "expected %d", e, K / 2);
        IO_SAME(back, want, (3 * (K / 2) - 2) * sizeof(int), "half vector item at the end");
    } else {
        CHECK_COUNT(&st, mt, 1, "read of one vector item across into the next rank's region");
        IO_SAME(back, want, sizeof back, "vector item across into the next rank's region");
    }
    int *model = malloc((size_t)np * K * sizeof(int));
    for (int q = 0; q < np; q++)
        for (int k = 0; k < K; k++)
            model[q * K + k] = v1(q, k);
    rc = MPI_File_close(&fh);
    CHECK_RC(rc, "MPI_File_close");
    file_is(p, model, np * K, "file written from a vector memory type");
    free(model);
    MPI_Type_free(&mt);
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    me = mtest_rank;
    np = mtest_size;
    MTest_Io_dir("view");
    t_interleaved();
    t_indexed();
    t_resized();
    t_subarray();
    t_memtype();
    MTest_Io_cleanup();
    return MTest_Finalize(0);
}
