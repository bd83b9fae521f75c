/* io_basic: opening, closing, deleting files and the basic explicit-offset data access.
 *
 *  - MPI_File_open on MPI_COMM_WORLD with every access mode combination the standard allows
 *    (RDONLY / WRONLY / RDWR with CREATE, EXCL, APPEND, DELETE_ON_CLOSE, UNIQUE_OPEN):
 *    success, MPI_File_get_amode returns exactly the mode, MPI_File_close sets
 *    MPI_FILE_NULL, the file exists afterwards (POSIX access) except with DELETE_ON_CLOSE
 *    (it exists while open); APPEND puts the individual and the shared file pointer at the
 *    end (40 bytes) and a write through the individual pointer lands there.
 *  - MPI_File_delete of an existing file: gone afterwards.
 *  - Files on MPI_COMM_SELF, one per rank (CREATE|EXCL), written, read, deleted.
 *  - MPI_File_get_group is MPI_IDENT to the group of the communicator (WORLD, SELF, WORLD
 *    reversed by MPI_Comm_split; the latter only MPI_SIMILAR to WORLD's at 2+ ranks).
 *  - MPI_File_get_size / set_size (grow, shrink; data below the new size kept; a read
 *    across the new end is short) / preallocate (grows, never shrinks, keeps data); the
 *    size agrees with POSIX stat on rank 0.
 *  - MPI_File_get_info: every key readable (MPI_Info_get_nthkey, get_valuelen, MPI_Info_get
 *    with exactly valuelen + 1 bytes), a new object each time; hints passed at open and by
 *    MPI_File_set_info are kept or ignored (a made-up key, if reported, has our value; a
 *    reserved size hint, if reported, is a positive number).
 *  - MPI_File_get_atomicity is 0 by default; set_atomicity 1 / 0 read back.
 *  - Data: MPI_File_write_at with MPI_INT (100 ints per rank) and MPI_File_write_at_all with a
 *    contiguous derived type (5 ints, 12 per rank); MPI_File_sync + barrier + sync; every
 *    rank reads the whole file with read_at_all, rank 0 also byte by byte with read_at:
 *    byte-exact against a model; reads back with the derived type; MPI_Get_count /
 *    MPI_Get_elements of every status (bytes, ints, derived items).
 *  - Visibility after sync-barrier-sync: each rank rewrites its block and reads its right
 *    neighbour's new block.
 *  - Reads at and past the end of file: short counts (2 of 10 ints, 0), a partial derived
 *    item (MPI_Get_count MPI_UNDEFINED, MPI_Get_elements 7), collective reads at the end.
 *  - Zero-count reads and writes (also past the end: the size does not change), a
 *    collective write where odd ranks write nothing, MPI_STATUS_IGNORE.
 *  - MPI_File_get_type_extent with the native representation: MPI_INT, MPI_DOUBLE, the
 *    contiguous type, a vector (48 bytes), a resized type (32 bytes). */
#include "mtest_io.h"

static int me, np;

#define NA 100 /* ints per rank in region A */
#define KB 12  /* derived items per rank in region B */
#define CT 5   /* ints per derived item */

static int vA(int r, int i)
{
    return (r + 1) * 100000 + i;
}
static int vB(int r, int i)
{
    return -((r + 1) * 100000 + i * 3 + 1);
}

static void open_ok(MPI_Comm comm, const char *path, int amode, MPI_File *fh, const char *what)
{
    *fh = MPI_FILE_NULL;
    int rc = MPI_File_open(comm, path, amode, MPI_INFO_NULL, fh);
    CHECK(rc == MPI_SUCCESS, "MPI_File_open(%s) returned %s", what, MTest_Describe(rc));
}

static void close_ok(MPI_File *fh, const char *what)
{
    if (*fh == MPI_FILE_NULL)
        return;
    int rc = MPI_File_close(fh);
    CHECK(rc == MPI_SUCCESS, "MPI_File_close (%s) returned %s", what, MTest_Describe(rc));
    CHECK(*fh == MPI_FILE_NULL, "MPI_File_close (%s) did not set MPI_FILE_NULL", what);
}

static void t_amodes(void)
{
    char a[MTEST_IO_PATH_MAX], b[MTEST_IO_PATH_MAX], c[MTEST_IO_PATH_MAX], d[MTEST_IO_PATH_MAX];
    MTest_Io_path(a, "amode_a");
    MTest_Io_path(b, "amode_b");
    MTest_Io_path(c, "amode_c");
    MTest_Io_path(d, "amode_d");
    struct {
        const char *path;
        int amode;
        const char *name;
    } cases[] = {
        {a, MPI_MODE_CREATE | MPI_MODE_WRONLY, "CREATE|WRONLY (new)"},
        {a, MPI_MODE_RDONLY, "RDONLY"},
        {a, MPI_MODE_WRONLY, "WRONLY"},
        {a, MPI_MODE_RDWR, "RDWR"},
        {a, MPI_MODE_RDWR | MPI_MODE_CREATE, "RDWR|CREATE (existing)"},
        {b, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_EXCL, "RDWR|CREATE|EXCL (new)"},
        {a, MPI_MODE_RDWR | MPI_MODE_UNIQUE_OPEN, "RDWR|UNIQUE_OPEN"},
        {a, MPI_MODE_RDONLY | MPI_MODE_UNIQUE_OPEN, "RDONLY|UNIQUE_OPEN"},
        {c, MPI_MODE_WRONLY | MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_UNIQUE_OPEN,
         "WRONLY|CREATE|EXCL|UNIQUE_OPEN (new)"},
        {a, MPI_MODE_RDONLY | MPI_MODE_APPEND, "RDONLY|APPEND"},
        {a, MPI_MODE_WRONLY | MPI_MODE_APPEND | MPI_MODE_UNIQUE_OPEN, "WRONLY|APPEND|UNIQUE_OPEN"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        MPI_File fh;
        open_ok(MPI_COMM_WORLD, cases[i].path, cases[i].amode, &fh, cases[i].name);
        if (fh == MPI_FILE_NULL)
            continue;
        int am = -1;
        int rc = MPI_File_get_amode(fh, &am);
        CHECK(rc == MPI_SUCCESS && am == cases[i].amode,
              "MPI_File_get_amode after open %s: 0x%x, expected 0x%x", cases[i].name, am,
              cases[i].amode);
        close_ok(&fh, cases[i].name);
        MPI_Barrier(MPI_COMM_WORLD);
        if (me == 0)
            CHECK(MTest_Io_exists(cases[i].path), "%s missing after open %s and close",
                  cases[i].path, cases[i].name);
    }

    /* APPEND: both file pointers start at the end (40 bytes; default view: bytes). */
    unsigned char pat[48];
    for (int i = 0; i < 48; i++)
        pat[i] = (unsigned char)(0x30 + i);
    MPI_File fh;
    open_ok(MPI_COMM_WORLD, a, MPI_MODE_RDWR, &fh, "RDWR");
    if (me == 0) {
        MPI_Status st;
        int rc = MPI_File_write_at(fh, 0, pat, 40, MPI_BYTE, &st);
        CHECK_RC(rc, "MPI_File_write_at 40 bytes");
        CHECK_COUNT(&st, MPI_BYTE, 40, "write_at 40 bytes");
    }
    close_ok(&fh, "RDWR");
    open_ok(MPI_COMM_WORLD, a, MPI_MODE_WRONLY | MPI_MODE_APPEND, &fh, "WRONLY|APPEND");
    MPI_Offset pos = -1, spos = -1;
    int rc = MPI_File_get_position(fh, &pos);
    CHECK(rc == MPI_SUCCESS && pos == 40, "APPEND: individual file pointer at %lld, expected 40",
          (long long)pos);
    rc = MPI_File_get_position_shared(fh, &spos);
    CHECK(rc == MPI_SUCCESS && spos == 40, "APPEND: shared file pointer at %lld, expected 40",
          (long long)spos);
    if (me == 0) {
        MPI_Status st;
        rc = MPI_File_write(fh, pat + 40, 8, MPI_BYTE, &st);
        CHECK_RC(rc, "MPI_File_write (APPEND)");
        CHECK_COUNT(&st, MPI_BYTE, 8, "write after APPEND open");
        rc = MPI_File_get_position(fh, &pos);
        CHECK(rc == MPI_SUCCESS && pos == 48, "APPEND: pointer after writing 8 bytes at %lld, "
              "expected 48", (long long)pos);
    }
    close_ok(&fh, "WRONLY|APPEND");
    if (me == 0) {
        MPI_Offset n;
        unsigned char *got = MTest_Io_slurp(a, &n);
        if (got && CHECK(n == 48, "file after APPEND write has %lld bytes, expected 48",
                         (long long)n))
            IO_SAME(got, pat, 48, "file after APPEND write");
        free(got);
    }

    /* DELETE_ON_CLOSE: exists while open, gone after close. */
    open_ok(MPI_COMM_WORLD, d, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_DELETE_ON_CLOSE, &fh,
            "RDWR|CREATE|DELETE_ON_CLOSE");
    if (fh != MPI_FILE_NULL) {
        int am = -1;
        MPI_File_get_amode(fh, &am);
        CHECK(am == (MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_DELETE_ON_CLOSE),
              "MPI_File_get_amode with DELETE_ON_CLOSE: 0x%x", am);
        if (me == 0)
            MPI_File_write_at(fh, 0, pat, 16, MPI_BYTE, MPI_STATUS_IGNORE);
        MPI_Barrier(MPI_COMM_WORLD);
        if (me == 0)
            CHECK(MTest_Io_exists(d), "DELETE_ON_CLOSE file missing while open");
        close_ok(&fh, "DELETE_ON_CLOSE");
        MPI_Barrier(MPI_COMM_WORLD);
        if (me == 0)
            CHECK(!MTest_Io_exists(d), "DELETE_ON_CLOSE file still there after close");
    }
    /* DELETE_ON_CLOSE on an existing file opened read-only. */
    open_ok(MPI_COMM_WORLD, b, MPI_MODE_RDONLY | MPI_MODE_DELETE_ON_CLOSE, &fh,
            "RDONLY|DELETE_ON_CLOSE");
    close_ok(&fh, "RDONLY|DELETE_ON_CLOSE");
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0)
        CHECK(!MTest_Io_exists(b), "RDONLY|DELETE_ON_CLOSE file still there after close");

    /* MPI_File_delete. */
    if (me == 0) {
        rc = MPI_File_delete(c, MPI_INFO_NULL);
        CHECK_RC(rc, "MPI_File_delete");
        CHECK(!MTest_Io_exists(c), "file still there after MPI_File_delete");
        rc = MPI_File_delete(a, MPI_INFO_NULL);
        CHECK_RC(rc, "MPI_File_delete");
        CHECK(!MTest_Io_exists(a), "file still there after MPI_File_delete");
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void group_is(MPI_File fh, MPI_Comm comm, const char *what)
{
    MPI_Group fg = MPI_GROUP_NULL, cg;
    int rc = MPI_File_get_group(fh, &fg), res = -1;
    CHECK_RC(rc, "MPI_File_get_group");
    if (rc != MPI_SUCCESS)
        return;
    MPI_Comm_group(comm, &cg);
    MPI_Group_compare(fg, cg, &res);
    CHECK(res == MPI_IDENT, "%s: file group vs communicator group: %d, expected MPI_IDENT",
          what, res);
    MPI_Group_free(&cg);
    if (comm != MPI_COMM_WORLD && comm != MPI_COMM_SELF) {
        MPI_Comm_group(MPI_COMM_WORLD, &cg);
        MPI_Group_compare(fg, cg, &res);
        CHECK(res == (np > 1 ? MPI_SIMILAR : MPI_IDENT),
              "%s: file group vs WORLD group: %d, expected %s", what, res,
              np > 1 ? "MPI_SIMILAR" : "MPI_IDENT");
        MPI_Group_free(&cg);
    }
    MPI_Group_free(&fg);
}

static void t_self_and_groups(void)
{
    char p[MTEST_IO_PATH_MAX], name[64];
    snprintf(name, sizeof name, "self.%d", me);
    MTest_Io_path(p, name);
    MPI_File fh;
    open_ok(MPI_COMM_SELF, p, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_EXCL, &fh,
            "own file on MPI_COMM_SELF");
    if (fh != MPI_FILE_NULL) {
        group_is(fh, MPI_COMM_SELF, "MPI_COMM_SELF file");
        int w[16], r[16];
        MPI_Status st;
        for (int i = 0; i < 16; i++)
            w[i] = me * 1000 + i;
        int rc = MPI_File_write_at(fh, 8, w, 16, MPI_INT, &st);
        CHECK_RC(rc, "MPI_File_write_at (SELF)");
        CHECK_COUNT(&st, MPI_INT, 16, "write_at on SELF");
        memset(r, 0, sizeof r);
        rc = MPI_File_read_at(fh, 8, r, 16, MPI_INT, &st);
        CHECK_RC(rc, "MPI_File_read_at (SELF)");
        CHECK_COUNT(&st, MPI_INT, 16, "read_at on SELF");
        IO_SAME(r, w, sizeof w, "SELF file read back");
        MPI_Offset sz = -1;
        MPI_File_get_size(fh, &sz);
        CHECK(sz == 8 + 16 * (MPI_Offset)sizeof(int), "SELF file size %lld", (long long)sz);
        close_ok(&fh, "SELF file");
        rc = MPI_File_delete(p, MPI_INFO_NULL);
        CHECK_RC(rc, "MPI_File_delete (own file)");
        CHECK(!MTest_Io_exists(p), "own file still there after MPI_File_delete");
    }

    char g[MTEST_IO_PATH_MAX];
    MTest_Io_path(g, "group");
    open_ok(MPI_COMM_WORLD, g, MPI_MODE_RDWR | MPI_MODE_CREATE, &fh, "group file on WORLD");
    if (fh != MPI_FILE_NULL) {
        group_is(fh, MPI_COMM_WORLD, "WORLD file");
        close_ok(&fh, "group file");
    }
    MPI_Comm rev;
    MPI_Comm_split(MPI_COMM_WORLD, 0, np - 1 - me, &rev);
    open_ok(rev, g, MPI_MODE_RDWR, &fh, "group file on reversed WORLD");
    if (fh != MPI_FILE_NULL) {
        group_is(fh, rev, "reversed-WORLD file");
        close_ok(&fh, "group file (reversed)");
    }
    MPI_Comm_free(&rev);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0)
        CHECK_RC(MPI_File_delete(g, MPI_INFO_NULL), "MPI_File_delete (group file)");
}

static void size_is(MPI_File fh, const char *path, MPI_Offset want, const char *what)
{
    MPI_Offset sz = -1;
    int rc = MPI_File_get_size(fh, &sz);
    CHECK(rc == MPI_SUCCESS && sz == want, "%s: MPI_File_get_size %lld, expected %lld", what,
          (long long)sz, (long long)want);
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) {
        struct stat sb;
        CHECK(stat(path, &sb) == 0 && sb.st_size == want, "%s: stat size %lld, expected %lld",
              what, (long long)sb.st_size, (long long)want);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void t_sizes(void)
{
    char p[MTEST_IO_PATH_MAX];
    MTest_Io_path(p, "sizes");
    MPI_File fh;
    open_ok(MPI_COMM_WORLD, p, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_EXCL, &fh, "sizes");
    if (fh == MPI_FILE_NULL)
        return;
    size_is(fh, p, 0, "new file");
    CHECK_RC(MPI_File_set_size(fh, 1000), "MPI_File_set_size(1000)");
    size_is(fh, p, 1000, "set_size(1000)");
    unsigned char pat[100], got[100];
    for (int i = 0; i < 100; i++)
        pat[i] = (unsigned char)(200 - i);
    if (me == 0)
        CHECK_RC(MPI_File_write_at(fh, 0, pat, 100, MPI_BYTE, MPI_STATUS_IGNORE),
                 "MPI_File_write_at 100 bytes");
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    size_is(fh, p, 1000, "after writing 100 bytes at 0");
    CHECK_RC(MPI_File_set_size(fh, 60), "MPI_File_set_size(60) (shrink)");
    size_is(fh, p, 60, "set_size(60)");
    MPI_Status st;
    memset(got, 0, sizeof got);
    int rc = MPI_File_read_at(fh, 0, got, 60, MPI_BYTE, &st);
    CHECK_RC(rc, "MPI_File_read_at after shrink");
    CHECK_COUNT(&st, MPI_BYTE, 60, "read_at of the 60 bytes left");
    IO_SAME(got, pat, 60, "data below the new size after shrinking");
    rc = MPI_File_read_at(fh, 50, got, 20, MPI_BYTE, &st);
    CHECK_RC(rc, "MPI_File_read_at across the new end");
    CHECK_COUNT(&st, MPI_BYTE, 10, "read_at of 20 bytes at 50 of a 60-byte file");

    CHECK_RC(MPI_File_preallocate(fh, 30), "MPI_File_preallocate(30)");
    size_is(fh, p, 60, "preallocate(30) of a 60-byte file (never shrinks)");
    CHECK_RC(MPI_File_preallocate(fh, 60), "MPI_File_preallocate(60)");
    size_is(fh, p, 60, "preallocate(60) of a 60-byte file");
    CHECK_RC(MPI_File_preallocate(fh, 5000), "MPI_File_preallocate(5000)");
    size_is(fh, p, 5000, "preallocate(5000)");
    memset(got, 0, sizeof got);
    rc = MPI_File_read_at(fh, 0, got, 60, MPI_BYTE, &st);
    CHECK_RC(rc, "MPI_File_read_at after preallocate");
    IO_SAME(got, pat, 60, "data written before preallocate");
    CHECK_RC(MPI_File_set_size(fh, 0), "MPI_File_set_size(0)");
    size_is(fh, p, 0, "set_size(0)");
    rc = MPI_File_read_at(fh, 0, got, 10, MPI_BYTE, &st);
    CHECK_RC(rc, "MPI_File_read_at of an empty file");
    CHECK_COUNT(&st, MPI_BYTE, 0, "read_at of an empty file");
    close_ok(&fh, "sizes");
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0)
        CHECK_RC(MPI_File_delete(p, MPI_INFO_NULL), "MPI_File_delete (sizes)");
}

#define MYKEY "hympi_io_basic_key"
#define MYVAL "value-42"

/* Every key of info_used readable; our made-up key, if there, has our value; a reserved
 * size hint, if there, is a positive number. */
static void check_info_used(MPI_File fh, const char *what)
{
    MPI_Info used = MPI_INFO_NULL;
    int rc = MPI_File_get_info(fh, &used);
    CHECK(rc == MPI_SUCCESS && used != MPI_INFO_NULL, "%s: MPI_File_get_info returned %s", what,
          MTest_Describe(rc));
    if (rc != MPI_SUCCESS || used == MPI_INFO_NULL)
        return;
    int nkeys = -1;
    rc = MPI_Info_get_nkeys(used, &nkeys);
    CHECK(rc == MPI_SUCCESS && nkeys >= 0, "%s: MPI_Info_get_nkeys: %d", what, nkeys);
    for (int k = 0; k < nkeys; k++) {
        char key[MPI_MAX_INFO_KEY + 1];
        int vlen = -1, flag = 0;
        rc = MPI_Info_get_nthkey(used, k, key);
        if (!CHECK(rc == MPI_SUCCESS, "%s: MPI_Info_get_nthkey(%d)", what, k))
            continue;
        rc = MPI_Info_get_valuelen(used, key, &vlen, &flag);
        if (!CHECK(rc == MPI_SUCCESS && flag && vlen >= 0 && vlen <= MPI_MAX_INFO_VAL,
                   "%s: MPI_Info_get_valuelen(%s): flag %d len %d", what, key, flag, vlen))
            continue;
        char *val = malloc((size_t)vlen + 2);
        memset(val, 'x', (size_t)vlen + 2);
        flag = 0;
        rc = MPI_Info_get(used, key, vlen + 1, val, &flag);
        CHECK(rc == MPI_SUCCESS && flag && val[vlen] == 0 && (int)strlen(val) == vlen,
              "%s: MPI_Info_get(%s) with valuelen+1 bytes: flag %d, strlen %d, valuelen %d", what,
              key, flag, (int)strnlen(val, (size_t)vlen + 1), vlen);
        if (strcmp(key, MYKEY) == 0)
            CHECK(strcmp(val, MYVAL) == 0, "%s: our hint %s reported as \"%s\"", what, key, val);
        if (strcmp(key, "cb_buffer_size") == 0 || strcmp(key, "ind_rd_buffer_size") == 0) {
            char *end = NULL;
            long v = strtol(val, &end, 10);
            CHECK(end && *end == 0 && v > 0, "%s: size hint %s = \"%s\"", what, key, val);
        }
        free(val);
    }
    /* A new object each time: changing it does not change the next one. */
    MPI_Info_set(used, "hympi_io_basic_scratch", "1");
    MPI_Info again = MPI_INFO_NULL;
    rc = MPI_File_get_info(fh, &again);
    if (rc == MPI_SUCCESS && again != MPI_INFO_NULL) {
        char v[8];
        int flag = 1;
        MPI_Info_get(again, "hympi_io_basic_scratch", (int)sizeof v - 1, v, &flag);
        CHECK(!flag, "%s: MPI_File_get_info returned the object changed by the caller", what);
        MPI_Info_free(&again);
    }
    MPI_Info_free(&used);
    CHECK(used == MPI_INFO_NULL, "MPI_Info_free did not set MPI_INFO_NULL");
}

static void t_info_atomicity(void)
{
    char p[MTEST_IO_PATH_MAX];
    MTest_Io_path(p, "info");
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, MYKEY, MYVAL);
    MPI_Info_set(info, "cb_buffer_size", "65536");
    MPI_Info_set(info, "access_style", "write_mostly,random");
    MPI_File fh = MPI_FILE_NULL;
    int rc = MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDWR | MPI_MODE_CREATE, info, &fh);
    CHECK_RC(rc, "MPI_File_open with hints");
    MPI_Info_free(&info);
    if (fh == MPI_FILE_NULL)
        return;
    check_info_used(fh, "hints at open");

    MPI_Info_create(&info);
    MPI_Info_set(info, MYKEY, MYVAL);
    MPI_Info_set(info, "ind_rd_buffer_size", "131072");
    MPI_Info_set(info, "access_style", "read_mostly");
    rc = MPI_File_set_info(fh, info);
    CHECK_RC(rc, "MPI_File_set_info");
    MPI_Info_free(&info);
    check_info_used(fh, "hints after set_info");
    rc = MPI_File_set_info(fh, MPI_INFO_NULL);
    CHECK_RC(rc, "MPI_File_set_info(MPI_INFO_NULL)");
    check_info_used(fh, "after set_info(MPI_INFO_NULL)");

    int flag = -1;
    rc = MPI_File_get_atomicity(fh, &flag);
    CHECK(rc == MPI_SUCCESS && flag == 0, "default atomicity %d, expected 0", flag);
    rc = MPI_File_set_atomicity(fh, 1);
    CHECK_RC(rc, "MPI_File_set_atomicity(1)");
    flag = -1;
    MPI_File_get_atomicity(fh, &flag);
    CHECK(flag == 1, "atomicity after set_atomicity(1): %d", flag);
    rc = MPI_File_set_atomicity(fh, 0);
    CHECK_RC(rc, "MPI_File_set_atomicity(0)");
    flag = -1;
    MPI_File_get_atomicity(fh, &flag);
    CHECK(flag == 0, "atomicity after set_atomicity(0): %d", flag);
    close_ok(&fh, "info");

    /* A file opened with MPI_INFO_NULL. */
    open_ok(MPI_COMM_WORLD, p, MPI_MODE_RDONLY, &fh, "RDONLY without hints");
    if (fh != MPI_FILE_NULL) {
        check_info_used(fh, "no hints");
        close_ok(&fh, "info (RDONLY)");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0)
        CHECK_RC(MPI_File_delete(p, MPI_INFO_NULL), "MPI_File_delete (info)");
}

static void check_elements(MPI_Status *st, MPI_Datatype t, int want, const char *what)
{
    int e = -12345;
    int rc = MPI_Get_elements(st, t, &e);
    CHECK(rc == MPI_SUCCESS && e == want, "%s: MPI_Get_elements gives %d, expected %d", what, e,
          want);
}

static void t_data(void)
{
    char p[MTEST_IO_PATH_MAX];
    MTest_Io_path(p, "data");
    MPI_File fh;
    open_ok(MPI_COMM_WORLD, p, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_EXCL, &fh, "data");
    if (fh == MPI_FILE_NULL)
        return;
    MPI_Datatype ct;
    MPI_Type_contiguous(CT, MPI_INT, &ct);
    MPI_Type_commit(&ct);

    const int total = np * NA + np * KB * CT; /* ints in the file */
    const MPI_Offset baseB = (MPI_Offset)np * NA * sizeof(int);
    const MPI_Offset fsize = (MPI_Offset)total * sizeof(int);
    int *model = malloc(total * sizeof(int));
    for (int r = 0; r < np; r++) {
        for (int i = 0; i < NA; i++)
            model[r * NA + i] = vA(r, i);
        for (int i = 0; i < KB * CT; i++)
            model[np * NA + r * KB * CT + i] = vB(r, i);
    }

    /* Region A: independent write_at of MPI_INT. */
    int a[NA], b[KB * CT];
    for (int i = 0; i < NA; i++)
        a[i] = vA(me, i);
    for (int i = 0; i < KB * CT; i++)
        b[i] = vB(me, i);
    MPI_Status st;
    MTest_Poison_status(&st);
    int rc = MPI_File_write_at(fh, (MPI_Offset)me * NA * sizeof(int), a, NA, MPI_INT, &st);
    CHECK_RC(rc, "MPI_File_write_at (MPI_INT)");
    CHECK_COUNT(&st, MPI_INT, NA, "write_at MPI_INT");
    CHECK_COUNT(&st, MPI_BYTE, NA * (int)sizeof(int), "write_at MPI_INT, count in bytes");
    check_elements(&st, MPI_INT, NA, "write_at MPI_INT");

    /* Region B: collective write_at_all of the contiguous type. */
    MTest_Poison_status(&st);
    rc = MPI_File_write_at_all(fh, baseB + (MPI_Offset)me * KB * CT * sizeof(int), b, KB, ct,
                               &st);
    CHECK_RC(rc, "MPI_File_write_at_all (contiguous type)");
    CHECK_COUNT(&st, ct, KB, "write_at_all of the contiguous type");
    check_elements(&st, ct, KB * CT, "write_at_all of the contiguous type");

    /* Make every rank's data visible to every rank. */
    rc = MPI_File_sync(fh);
    CHECK_RC(rc, "MPI_File_sync");
    MPI_Barrier(MPI_COMM_WORLD);
    rc = MPI_File_sync(fh);
    CHECK_RC(rc, "MPI_File_sync");

    MPI_Offset sz = -1;
    MPI_File_get_size(fh, &sz);
    CHECK(sz == fsize, "size after the writes: %lld, expected %lld", (long long)sz,
          (long long)fsize);

    /* Everyone reads everything, collectively. */
    int *all = malloc(total * sizeof(int));
    memset(all, 0xee, total * sizeof(int));
    MTest_Poison_status(&st);
    rc = MPI_File_read_at_all(fh, 0, all, total, MPI_INT, &st);
    CHECK_RC(rc, "MPI_File_read_at_all (whole file)");
    CHECK_COUNT(&st, MPI_INT, total, "read_at_all of the whole file");
    IO_SAME(all, model, total * sizeof(int), "whole file read by read_at_all");

    /* Rank 0: byte by byte (independent, 1..97-byte pieces). */
    if (me == 0) {
        unsigned char *bytes = malloc(fsize);
        memset(bytes, 0xee, fsize);
        MPI_Offset off = 0;
        int piece = 1;
        while (off < fsize) {
            int want = (int)(fsize - off < piece ? fsize - off : piece), got = -1;
            rc = MPI_File_read_at(fh, off, bytes + off, want, MPI_BYTE, &st);
            MPI_Get_count(&st, MPI_BYTE, &got);
            if (!CHECK(rc == MPI_SUCCESS && got == want, "read_at of %d bytes at %lld: rc %d, "
                       "count %d", want, (long long)off, rc, got))
                break;
            off += want;
            piece = piece % 97 + 13;
        }
        IO_SAME(bytes, model, fsize, "whole file read in byte pieces by rank 0");
        free(bytes);
    }
    MPI_Barrier(MPI_COMM_WORLD); /* everyone has read region A before it is rewritten */

    /* Derived type read back (neighbour's block, independent). */
    int nb = (me + 1) % np, rb[KB * CT];
    memset(rb, 0, sizeof rb);
    MTest_Poison_status(&st);
    rc = MPI_File_read_at(fh, baseB + (MPI_Offset)nb * KB * CT * sizeof(int), rb, KB, ct, &st);
    CHECK_RC(rc, "MPI_File_read_at (contiguous type)");
    CHECK_COUNT(&st, ct, KB, "read_at of the contiguous type");
    IO_SAME(rb, model + np * NA + nb * KB * CT, sizeof rb, "neighbour's region B via read_at");

    /* Sync-barrier-sync visibility: rewrite own block A, read the neighbour's new one. */
    for (int i = 0; i < NA; i++)
        a[i] = -vA(me, i) * 7;
    rc = MPI_File_write_at(fh, (MPI_Offset)me * NA * sizeof(int), a, NA, MPI_INT,
                           MPI_STATUS_IGNORE);
    CHECK_RC(rc, "MPI_File_write_at with MPI_STATUS_IGNORE");
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    int ra[NA], ma[NA];
    for (int i = 0; i < NA; i++) {
        ma[i] = -vA(nb, i) * 7;
        model[nb * NA + i] = ma[i];
    }
    for (int r = 0; r < np; r++)
        for (int i = 0; i < NA; i++)
            model[r * NA + i] = -vA(r, i) * 7;
    rc = MPI_File_read_at(fh, (MPI_Offset)nb * NA * sizeof(int), ra, NA, MPI_INT,
                          MPI_STATUS_IGNORE);
    CHECK_RC(rc, "MPI_File_read_at with MPI_STATUS_IGNORE");
    IO_SAME(ra, ma, sizeof ra, "neighbour's rewritten block after sync-barrier-sync");

    /* Short reads at the end of the file. */
    int r10[10];
    MTest_Poison_status(&st);
    rc = MPI_File_read_at(fh, fsize - 2 * sizeof(int), r10, 10, MPI_INT, &st);
    CHECK_RC(rc, "MPI_File_read_at across the end");
    CHECK_COUNT(&st, MPI_INT, 2, "read_at of 10 ints with 2 left");
    check_elements(&st, MPI_INT, 2, "read_at of 10 ints with 2 left");
    IO_SAME(r10, model + total - 2, 2 * sizeof(int), "the last 2 ints");
    MTest_Poison_status(&st);
    rc = MPI_File_read_at(fh, fsize, r10, 10, MPI_INT, &st);
    CHECK_RC(rc, "MPI_File_read_at at the end");
    CHECK_COUNT(&st, MPI_INT, 0, "read_at at the end of file");
    MTest_Poison_status(&st);
    rc = MPI_File_read_at(fh, fsize + 1000, r10, 10, MPI_INT, &st);
    CHECK_RC(rc, "MPI_File_read_at past the end");
    CHECK_COUNT(&st, MPI_INT, 0, "read_at 1000 bytes past the end of file");
    int r2ct[2 * CT];
    MTest_Poison_status(&st);
    rc = MPI_File_read_at(fh, fsize - 7 * sizeof(int), r2ct, 2, ct, &st);
    CHECK_RC(rc, "MPI_File_read_at of 2 derived items with 7 ints left");
    CHECK_COUNT(&st, ct, MPI_UNDEFINED, "read_at of 2 derived items with 7 ints left");
    check_elements(&st, ct, 7, "read_at of 2 derived items with 7 ints left");
    IO_SAME(r2ct, model + total - 7, 7 * sizeof(int), "the last 7 ints as a partial item");
    /* Collective: rank r reads 3 ints starting r ints before the end. */
    MTest_Poison_status(&st);
    int left = me < 3 ? me : 3;
    rc = MPI_File_read_at_all(fh, fsize - (MPI_Offset)me * sizeof(int), r10, 3, MPI_INT, &st);
    CHECK_RC(rc, "MPI_File_read_at_all at the end");
    CHECK_COUNT_EOF(&st, MPI_INT, left, 3, "read_at_all of 3 ints starting rank ints before "
                    "the end");
    IO_SAME(r10, model + total - me, left * sizeof(int), "the last ints by read_at_all");

    /* Zero counts. */
    MTest_Poison_status(&st);
    rc = MPI_File_write_at(fh, 0, a, 0, MPI_INT, &st);
    CHECK_RC(rc, "MPI_File_write_at count 0");
    CHECK_COUNT(&st, MPI_INT, 0, "write_at count 0");
    MTest_Poison_status(&st);
    rc = MPI_File_write_at(fh, fsize + 4096, a, 0, MPI_INT, &st);
    CHECK_RC(rc, "MPI_File_write_at count 0 past the end");
    CHECK_COUNT(&st, MPI_INT, 0, "write_at count 0 past the end");
    MTest_Poison_status(&st);
    rc = MPI_File_read_at(fh, 0, r10, 0, MPI_INT, &st);
    CHECK_RC(rc, "MPI_File_read_at count 0");
    CHECK_COUNT(&st, MPI_INT, 0, "read_at count 0");
    MTest_Poison_status(&st);
    rc = MPI_File_write_at(fh, 0, a, 0, ct, &st);
    CHECK_RC(rc, "MPI_File_write_at count 0 of the derived type");
    CHECK_COUNT(&st, ct, 0, "write_at count 0 of the derived type");
    /* Collective where odd ranks write nothing and even ones rewrite their own A block. */
    int cnt = (me % 2) ? 0 : NA;
    MTest_Poison_status(&st);
    rc = MPI_File_write_at_all(fh, (MPI_Offset)me * NA * sizeof(int), a, cnt, MPI_INT, &st);
    CHECK_RC(rc, "MPI_File_write_at_all (odd ranks count 0)");
    CHECK_COUNT(&st, MPI_INT, cnt, "write_at_all with odd ranks writing nothing");
    MTest_Poison_status(&st);
    rc = MPI_File_read_at_all(fh, 0, r10, (me % 2) ? 0 : 10, MPI_INT, &st);
    CHECK_RC(rc, "MPI_File_read_at_all (odd ranks count 0)");
    CHECK_COUNT(&st, MPI_INT, (me % 2) ? 0 : 10, "read_at_all with odd ranks reading nothing");
    rc = MPI_File_write_at_all(fh, 0, a, 0, MPI_INT, MPI_STATUS_IGNORE);
    CHECK_RC(rc, "MPI_File_write_at_all count 0 everywhere, MPI_STATUS_IGNORE");
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    sz = -1;
    MPI_File_get_size(fh, &sz);
    CHECK(sz == fsize, "size after zero-count writes: %lld, expected %lld", (long long)sz,
          (long long)fsize);
    memset(all, 0xee, total * sizeof(int));
    rc = MPI_File_read_at_all(fh, 0, all, total, MPI_INT, MPI_STATUS_IGNORE);
    CHECK_RC(rc, "MPI_File_read_at_all with MPI_STATUS_IGNORE");
    IO_SAME(all, model, total * sizeof(int), "whole file at the end");

    /* MPI_File_get_type_extent (native). */
    MPI_Datatype vec, rsz;
    MPI_Type_vector(3, 2, 5, MPI_INT, &vec);
    MPI_Type_create_resized(ct, 0, 32, &rsz);
    /* Committed, though the standard does not ask for it here: MPICH 4.0.2 returns
     * MPI_ERR_TYPE for an uncommitted datatype. */
    MPI_Type_commit(&vec);
    MPI_Type_commit(&rsz);
    struct {
        MPI_Datatype t;
        MPI_Aint ext;
        const char *name;
    } ext[] = {
        {MPI_INT, sizeof(int), "MPI_INT"},
        {MPI_DOUBLE, sizeof(double), "MPI_DOUBLE"},
        {MPI_CHAR, 1, "MPI_CHAR"},
        {ct, CT * sizeof(int), "contiguous(5, MPI_INT)"},
        {vec, 12 * sizeof(int), "vector(3, 2, 5, MPI_INT)"},
        {rsz, 32, "resized(contiguous(5), 0, 32)"},
    };
    for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
        MPI_Aint e = -1;
        rc = MPI_File_get_type_extent(fh, ext[i].t, &e);
        CHECK(rc == MPI_SUCCESS && e == ext[i].ext,
              "MPI_File_get_type_extent(%s) native: %ld, expected %ld (rc %d)", ext[i].name,
              (long)e, (long)ext[i].ext, rc);
    }
    MPI_Type_free(&vec);
    MPI_Type_free(&rsz);

    close_ok(&fh, "data");
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) {
        MPI_Offset n;
        unsigned char *got = MTest_Io_slurp(p, &n);
        if (got && CHECK(n == fsize, "file size after close %lld", (long long)n))
            IO_SAME(got, model, fsize, "file after close, read again by rank 0");
        free(got);
        CHECK_RC(MPI_File_delete(p, MPI_INFO_NULL), "MPI_File_delete (data)");
        CHECK(!MTest_Io_exists(p), "data file still there after MPI_File_delete");
    }
    MPI_Type_free(&ct);
    free(all);
    free(model);
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    me = mtest_rank;
    np = mtest_size;
    MTest_Io_dir("basic");
    t_amodes();
    t_self_and_groups();
    t_sizes();
    t_info_atomicity();
    t_data();
    MTest_Io_cleanup();
    return MTest_Finalize(0);
}
