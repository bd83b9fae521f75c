/* io_external32: the "external32" data representation.
 *
 *  - MPI_File_set_view with datarep "external32", etype = filetype = MPI_INT, then
 *    MPI_DOUBLE, then MPI_SHORT (at byte displacements after each other): each rank writes a
 *    slice with MPI_File_write_at_all; MPI_File_get_view returns "external32";
 *    MPI_File_get_type_extent gives the external32 sizes (MPI_INT 4, MPI_DOUBLE 8,
 *    MPI_SHORT 2, MPI_CHAR 1).
 *  - Rank 0 reads the file with the default ("native", byte) view: every value is stored as
 *    its big-endian encoding (two's complement integers, IEEE 754 doubles including -0.0,
 *    a subnormal, 1e300), computed here independently of the host byte order.
 *  - Reopened, read back through external32 views with MPI_File_read_at_all: the original
 *    values (bit for bit).
 *  - An interleaved external32 view (MPI_INT resized to n ints, disp 4r bytes): each rank
 *    writes 10 ints through its individual pointer from a strided memory type (every other
 *    int of a buffer); the file holds the big-endian ints in rank-interleaved order.
 *  - The same data written through a "native" view are in host byte order (control: on a
 *    little-endian host the two files differ, so the byte check can fail).
 * An MPI without external32 (MPI_ERR_UNSUPPORTED_DATAREP from the first set_view) skips
 * with MTEST_SKIP; MPICH 4.0.2's ROMIO supports it. */
#include "mtest_io.h"

static int me, np;

#define NI 16
#define ND 8
#define NS 6

static const int ivals[NI] = {0, 1, -1, 0x7fffffff, (int)0x80000000u, 0x01020304, -123456789,
                              42, 0x00ff00ff, -2, 1000000, -65536, 0x7f, 0x80, 0x12345678,
                              -0x12345678};
static const short svals[NS] = {0, 1, -1, 0x1234, -32768, 32767};
static double dvals[ND];

static void be32(unsigned char *p, uint32_t u)
{
    p[0] = (unsigned char)(u >> 24);
    p[1] = (unsigned char)(u >> 16);
    p[2] = (unsigned char)(u >> 8);
    p[3] = (unsigned char)u;
}
static void be64(unsigned char *p, uint64_t u)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(u >> (56 - 8 * i));
}
static void be16(unsigned char *p, uint16_t u)
{
    p[0] = (unsigned char)(u >> 8);
    p[1] = (unsigned char)u;
}

/* Slice [lo, hi) of n items for this rank. */
static void slice(int n, int *lo, int *hi)
{
    *lo = n * me / np;
    *hi = n * (me + 1) / np;
}

static int set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype t, const char *rep)
{
    int rc = MPI_File_set_view(fh, disp, t, t, rep, MPI_INFO_NULL);
    return rc;
}

static void extent_is(MPI_File fh, MPI_Datatype t, MPI_Aint want, const char *name)
{
    MPI_Aint e = -1;
    int rc = MPI_File_get_type_extent(fh, t, &e);
    CHECK(rc == MPI_SUCCESS && e == want,
          "MPI_File_get_type_extent(%s) with an external32 view: %ld, expected %ld", name,
          (long)e, (long)want);
}

static void datarep_is(MPI_File fh, const char *want)
{
    MPI_Offset d;
    MPI_Datatype et, ft;
    char rep[MPI_MAX_DATAREP_STRING + 1];
    rep[0] = 0;
    int rc = MPI_File_get_view(fh, &d, &et, &ft, rep);
    CHECK(rc == MPI_SUCCESS && strcmp(rep, want) == 0, "MPI_File_get_view datarep \"%.20s\", "
          "expected \"%s\"", rep, want);
}

static const MPI_Offset OFF_D = NI * 4, OFF_S = NI * 4 + ND * 8, SIZE = NI * 4 + ND * 8 + NS * 2;

/* Returns 0 when external32 is not supported (skip). */
static int t_scalars(void)
{
    char p[MTEST_IO_PATH_MAX];
    MTest_Io_path(p, "scalars");
    MPI_File fh = MPI_FILE_NULL;
    int rc = MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_EXCL,
                           MPI_INFO_NULL, &fh);
    CHECK_RC(rc, "MPI_File_open");
    if (rc != MPI_SUCCESS)
        return 1;
    rc = set_view(fh, 0, MPI_INT, "external32");
    int supported = rc == MPI_SUCCESS, all_supported = 0;
    MPI_Allreduce(&supported, &all_supported, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_supported) {
        CHECK(rc == MPI_SUCCESS || MTest_Class(rc) == MPI_ERR_UNSUPPORTED_DATAREP,
              "set_view \"external32\": %s", MTest_Describe(rc));
        MPI_File_close(&fh);
        return 0;
    }
    datarep_is(fh, "external32");
    extent_is(fh, MPI_INT, 4, "MPI_INT");
    extent_is(fh, MPI_DOUBLE, 8, "MPI_DOUBLE");
    extent_is(fh, MPI_SHORT, 2, "MPI_SHORT");
    extent_is(fh, MPI_CHAR, 1, "MPI_CHAR");

    int lo, hi;
    MPI_Status st;
    slice(NI, &lo, &hi);
    rc = MPI_File_write_at_all(fh, lo, ivals + lo, hi - lo, MPI_INT, &st);
    CHECK_RC(rc, "MPI_File_write_at_all (external32 MPI_INT)");
    CHECK_COUNT(&st, MPI_INT, hi - lo, "external32 write of ints");
    rc = set_view(fh, OFF_D, MPI_DOUBLE, "external32");
    CHECK_RC(rc, "MPI_File_set_view (external32 MPI_DOUBLE)");
    slice(ND, &lo, &hi);
    rc = MPI_File_write_at_all(fh, lo, dvals + lo, hi - lo, MPI_DOUBLE, &st);
    CHECK_RC(rc, "MPI_File_write_at_all (external32 MPI_DOUBLE)");
    CHECK_COUNT(&st, MPI_DOUBLE, hi - lo, "external32 write of doubles");
    rc = set_view(fh, OFF_S, MPI_SHORT, "external32");
    CHECK_RC(rc, "MPI_File_set_view (external32 MPI_SHORT)");
    slice(NS, &lo, &hi);
    rc = MPI_File_write_at_all(fh, lo, svals + lo, hi - lo, MPI_SHORT, &st);
    CHECK_RC(rc, "MPI_File_write_at_all (external32 MPI_SHORT)");
    CHECK_COUNT(&st, MPI_SHORT, hi - lo, "external32 write of shorts");
    rc = MPI_File_close(&fh);
    CHECK_RC(rc, "MPI_File_close");

    /* The bytes: big-endian. */
    unsigned char model[SIZE];
    for (int i = 0; i < NI; i++)
        be32(model + 4 * i, (uint32_t)ivals[i]);
    for (int i = 0; i < ND; i++) {
        uint64_t u;
        memcpy(&u, &dvals[i], 8);
        be64(model + OFF_D + 8 * i, u);
    }
    for (int i = 0; i < NS; i++)
        be16(model + OFF_S + 2 * i, (uint16_t)svals[i]);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) {
        MPI_Offset n;
        unsigned char *got = MTest_Io_slurp(p, &n);
        if (got && CHECK(n == SIZE, "external32 file has %lld bytes, expected %lld",
                         (long long)n, (long long)SIZE)) {
            IO_SAME(got, model, OFF_D, "external32 ints are big-endian two's complement");
            IO_SAME(got + OFF_D, model + OFF_D, ND * 8, "external32 doubles are big-endian IEEE");
            IO_SAME(got + OFF_S, model + OFF_S, NS * 2, "external32 shorts are big-endian");
        }
        free(got);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* Read back through external32 views. */
    rc = MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    CHECK_RC(rc, "MPI_File_open RDONLY");
    if (rc != MPI_SUCCESS)
        return 1;
    int ib[NI];
    double db[ND];
    short sb[NS];
    memset(ib, 0x5a, sizeof ib);
    memset(db, 0x5a, sizeof db);
    memset(sb, 0x5a, sizeof sb);
    rc = set_view(fh, 0, MPI_INT, "external32");
    CHECK_RC(rc, "MPI_File_set_view (external32, read)");
    rc = MPI_File_read_at_all(fh, 0, ib, NI, MPI_INT, &st);
    CHECK_RC(rc, "MPI_File_read_at_all (external32 MPI_INT)");
    CHECK_COUNT(&st, MPI_INT, NI, "external32 read of ints");
    IO_SAME(ib, ivals, sizeof ib, "ints read back through external32");
    rc = set_view(fh, OFF_D, MPI_DOUBLE, "external32");
    rc = MPI_File_read_at_all(fh, 0, db, ND, MPI_DOUBLE, &st);
    CHECK_RC(rc, "MPI_File_read_at_all (external32 MPI_DOUBLE)");
    CHECK_COUNT(&st, MPI_DOUBLE, ND, "external32 read of doubles");
    IO_SAME(db, dvals, sizeof db, "doubles read back through external32");
    rc = set_view(fh, OFF_S, MPI_SHORT, "external32");
    rc = MPI_File_read_at_all(fh, 0, sb, NS, MPI_SHORT, &st);
    CHECK_RC(rc, "MPI_File_read_at_all (external32 MPI_SHORT)");
    CHECK_COUNT(&st, MPI_SHORT, NS, "external32 read of shorts");
    IO_SAME(sb, svals, sizeof sb, "shorts read back through external32");
    MPI_File_close(&fh);

    /* Control: the same ints through a native view are in host order. */
    MTest_Io_path(p, "native");
    rc = MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_EXCL,
                       MPI_INFO_NULL, &fh);
    CHECK_RC(rc, "MPI_File_open (native control)");
    if (rc == MPI_SUCCESS) {
        rc = set_view(fh, 0, MPI_INT, "native");
        slice(NI, &lo, &hi);
        rc = MPI_File_write_at_all(fh, lo, ivals + lo, hi - lo, MPI_INT, &st);
        CHECK_RC(rc, "MPI_File_write_at_all (native)");
        MPI_File_close(&fh);
        MPI_Barrier(MPI_COMM_WORLD);
        if (me == 0) {
            MPI_Offset n;
            unsigned char *got = MTest_Io_slurp(p, &n);
            if (got && CHECK(n == NI * 4, "native file has %lld bytes", (long long)n))
                IO_SAME(got, ivals, NI * 4, "native ints are in host byte order");
            free(got);
        }
    }
    return 1;
}

static void t_interleaved(void)
{
    char p[MTEST_IO_PATH_MAX];
    MTest_Io_path(p, "interleaved");
    MPI_File fh = MPI_FILE_NULL;
    int rc = MPI_File_open(MPI_COMM_WORLD, p, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_EXCL,
                           MPI_INFO_NULL, &fh);
    CHECK_RC(rc, "MPI_File_open");
    if (rc != MPI_SUCCESS)
        return;
    enum { M = 10 };
    MPI_Datatype ft, mt;
    MPI_Type_create_resized(MPI_INT, 0, (MPI_Aint)np * 4, &ft);
    MPI_Type_commit(&ft);
    MPI_Type_vector(M, 1, 2, MPI_INT, &mt);
    MPI_Type_commit(&mt);
    rc = MPI_File_set_view(fh, (MPI_Offset)me * 4, MPI_INT, ft, "external32", MPI_INFO_NULL);
    CHECK_RC(rc, "MPI_File_set_view (external32, interleaved)");
    int mem[2 * M];
    for (int i = 0; i < 2 * M; i++)
        mem[i] = (i % 2) ? -777 : (int)(0x01000000u * (unsigned)(me + 1)) + 0x010203 * (i / 2) - i;
    MPI_Status st;
    rc = MPI_File_write(fh, mem, 1, mt, &st);
    CHECK_RC(rc, "MPI_File_write (external32, strided memory)");
    CHECK_COUNT(&st, mt, 1, "external32 write of one strided item");
    MPI_File_close(&fh);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) {
        unsigned char *model = malloc((size_t)np * M * 4);
        for (int q = 0; q < np; q++)
            for (int k = 0; k < M; k++)
                be32(model + 4 * (k * np + q),
                     (uint32_t)((int)(0x01000000u * (unsigned)(q + 1)) + 0x010203 * k - 2 * k));
        MPI_Offset n;
        unsigned char *got = MTest_Io_slurp(p, &n);
        if (got && CHECK(n == (MPI_Offset)np * M * 4, "interleaved external32 file has %lld "
                         "bytes, expected %d", (long long)n, np * M * 4))
            IO_SAME(got, model, (size_t)np * M * 4,
                    "interleaved external32 file (big-endian, rank-interleaved)");
        free(got);
        free(model);
    }
    MPI_Type_free(&ft);
    MPI_Type_free(&mt);
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    me = mtest_rank;
    np = mtest_size;
    double sub;
    uint64_t one = 1;
    memcpy(&sub, &one, 8); /* smallest subnormal */
    const double d[ND] = {0.0, -0.0, 1.0, -2.5, 1e300, -1e-300, 3.141592653589793, sub};
    memcpy(dvals, d, sizeof d);
    MTest_Io_dir("external32");
    if (t_scalars())
        t_interleaved();
    else
        MTest_Skip("external32 data representation not supported (MPI_ERR_UNSUPPORTED_DATAREP)");
    MTest_Io_cleanup();
    return MTest_Finalize(0);
}
