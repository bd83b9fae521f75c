/*
 * MPI-IO data representations: what converting to and from a file representation costs
 * against "native", for the predefined representation external32 and for user
 * representations registered with MPI_Register_datarep.
 *
 * Every rank writes and then reads its own contiguous region of the file with one
 * MPI_File_write_at_all / MPI_File_read_at_all (offset 0 of its view) of -s bytes of native
 * data (default 16 MiB), through a view with etype = filetype = the row's type and the row's
 * representation.  Rows (in this order; -o LIST runs a subset):
 *
 *   native           MPI_INT, "native": no conversion (the reference).
 *   external32       MPI_INT, "external32": 4-byte big-endian, the same size (a byte swap).
 *   user_be32        MPI_INT, "user_be32", registered here: 4-byte big-endian, extent
 *                    function 4; the conversion functions byte-swap a contiguous MPI_INT
 *                    buffer item by item, honouring position and count (in items).
 *   user_be64        MPI_INT, "user_be64", registered here: 8-byte big-endian sign-extended,
 *                    extent function 8, so the file holds 2 x S bytes per rank (a
 *                    representation that changes sizes).
 *   external32_long  MPI_LONG, "external32": S bytes of native 8-byte longs per rank, 4 bytes
 *                    each in the file (S / 2 per rank) as the standard's external32 sizes them.
 *
 * The view's displacement of rank r is r x items x E, E = MPI_File_get_type_extent of the
 * row's type after a first MPI_File_set_view in the representation (so the regions follow
 * one another whatever size the library gives the type in the file).
 *
 * Bandwidth = native bytes of all ranks (ranks x S, whatever the file size) / the slowest
 * rank's time of the one call, MB = 10^6 B.  Each value is the median of -r reps (default 5)
 * after -x warm-up reps (default 1); min and max are over the reps.  Every rep opens the file
 * anew and sets the view (not timed) and starts after an MPI_Barrier.  Page cache only: no
 * MPI_File_sync / fsync; reads hit the page cache (the file was just written).  Write reps
 * create a new file (rank 0 unlink(2)s it between them).
 *
 * Checks (not timed): after every timed or warm-up read the buffer (poisoned before the read)
 * must equal what was written, else "io_datarep: rank R: check failed: ..." and MPI_Abort
 * (exit status 4).  Informational, on rank 0 after the writes: the file size and the raw
 * bytes of the first items of every rank's region (pread(2)) against the layout the row
 * should give; a difference prints "# note: ROW: ..." (MPICH's external32 MPI_LONG is 8 bytes
 * in the file, for instance) and the row is still timed.
 *
 * Refusals: MPI_ERRORS_RETURN is set on MPI_FILE_NULL (MPI_Register_datarep raises its errors
 * there; files opened inherit it).  A representation whose MPI_Register_datarep failed, or an
 * MPI_File_set_view that fails on any rank, gives the row "n/a" and a line
 * "# n/a: ROW: CALL: <error string>"; the run goes on with the next row.  Any other MPI-IO
 * error prints the error string and aborts (exit status 5).
 *
 * Files: $HYMPI_BENCH_DIR (default /tmp)/hympi-io-datarep-<pid of rank 0>.dat, deleted at the
 * end (and between rows).  Rank 0 reads it with POSIX calls (the layout check).
 *
 * Options: -s BYTES per rank (a positive multiple of 8, at most 1 GiB), -r REPS, -x WARMUP,
 * -o ROW,ROW,... (default: all five).
 */
#include "bench_mpi.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/stat.h>

#define NCHECK 1024 /* items per rank region compared raw by the layout check */

static int rank, nranks;
static int reps = 5, warm = 1;
static char path[4096];

/* ---- helpers --------------------------------------------------------------------- */

static void remove_file(void)
{
    if (path[0]) unlink(path); /* best effort; ENOENT when already gone */
}

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "io_datarep: rank %d: check failed: ", rank);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    remove_file();
    MPI_Abort(MPI_COMM_WORLD, 4);
    exit(4);
}

static void sys_fail(const char *what)
{
    fprintf(stderr, "io_datarep: rank %d: %s %s: %s\n", rank, what, path, strerror(errno));
    remove_file();
    MPI_Abort(MPI_COMM_WORLD, 5);
    exit(5);
}

static void err_string(int rc, char *msg)
{
    int len = 0;
    if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS) len = 0;
    msg[len < MPI_MAX_ERROR_STRING ? len : MPI_MAX_ERROR_STRING - 1] = 0;
    for (; *msg; msg++)
        if (*msg == '\n') *msg = ' '; /* one line per message (MPICH's error stacks) */
}

static void io_check(int rc, const char *row, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING];
    int cls = rc;
    if (rc == MPI_SUCCESS) return;
    MPI_Error_class(rc, &cls);
    err_string(rc, msg);
    fprintf(stderr, "io_datarep: rank %d: %s: %s failed: %s (error class %d)\n", rank, row,
            what, msg, cls);
    remove_file();
    MPI_Abort(MPI_COMM_WORLD, 5);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* ---- byte order ------------------------------------------------------------------ */

static inline uint32_t to_be32(uint32_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return __builtin_bswap32(v);
#else
    return v;
#endif
}

static inline uint64_t to_be64(uint64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return __builtin_bswap64(v);
#else
    return v;
#endif
}

/* ---- the user representations ---------------------------------------------------- */

/* user_be32: MPI_INT as 4-byte big-endian.  userbuf is a contiguous MPI_INT buffer; the
 * count items from item `position` of it are converted (to filebuf, or from filebuf). */
static int be32_write(void *userbuf, MPI_Datatype datatype, int count, void *filebuf,
                      MPI_Offset position, void *extra_state)
{
    const char *u = (const char *)userbuf + position * 4;
    char *f = (char *)filebuf;
    int i;
    (void)extra_state;
    if (datatype != MPI_INT) return MPI_ERR_CONVERSION;
    for (i = 0; i < count; i++) {
        uint32_t v;
        memcpy(&v, u + (size_t)i * 4, 4);
        v = to_be32(v);
        memcpy(f + (size_t)i * 4, &v, 4);
    }
    return MPI_SUCCESS;
}

static int be32_read(void *userbuf, MPI_Datatype datatype, int count, void *filebuf,
                     MPI_Offset position, void *extra_state)
{
    char *u = (char *)userbuf + position * 4;
    const char *f = (const char *)filebuf;
    int i;
    (void)extra_state;
    if (datatype != MPI_INT) return MPI_ERR_CONVERSION;
    for (i = 0; i < count; i++) {
        uint32_t v;
        memcpy(&v, f + (size_t)i * 4, 4);
        v = to_be32(v);
        memcpy(u + (size_t)i * 4, &v, 4);
    }
    return MPI_SUCCESS;
}

/* user_be64: MPI_INT as 8-byte big-endian two's complement, sign-extended. */
static int be64_write(void *userbuf, MPI_Datatype datatype, int count, void *filebuf,
                      MPI_Offset position, void *extra_state)
{
    const char *u = (const char *)userbuf + position * 4;
    char *f = (char *)filebuf;
    int i;
    (void)extra_state;
    if (datatype != MPI_INT) return MPI_ERR_CONVERSION;
    for (i = 0; i < count; i++) {
        int32_t v;
        uint64_t w;
        memcpy(&v, u + (size_t)i * 4, 4);
        w = to_be64((uint64_t)(int64_t)v);
        memcpy(f + (size_t)i * 8, &w, 8);
    }
    return MPI_SUCCESS;
}

static int be64_read(void *userbuf, MPI_Datatype datatype, int count, void *filebuf,
                     MPI_Offset position, void *extra_state)
{
    char *u = (char *)userbuf + position * 4;
    const char *f = (const char *)filebuf;
    int i;
    (void)extra_state;
    if (datatype != MPI_INT) return MPI_ERR_CONVERSION;
    for (i = 0; i < count; i++) {
        uint64_t w;
        int32_t v;
        memcpy(&w, f + (size_t)i * 8, 8);
        v = (int32_t)(uint32_t)to_be64(w); /* the low 32 bits (the value was sign-extended) */
        memcpy(u + (size_t)i * 4, &v, 4);
    }
    return MPI_SUCCESS;
}

static int be32_extent(MPI_Datatype datatype, MPI_Aint *extent, void *extra_state)
{
    (void)extra_state;
    if (datatype != MPI_INT) return MPI_ERR_TYPE;
    *extent = 4;
    return MPI_SUCCESS;
}

static int be64_extent(MPI_Datatype datatype, MPI_Aint *extent, void *extra_state)
{
    (void)extra_state;
    if (datatype != MPI_INT) return MPI_ERR_TYPE;
    *extent = 8;
    return MPI_SUCCESS;
}

/* ---- rows ------------------------------------------------------------------------ */

enum layout { L_NATIVE, L_BE32, L_BE64 }; /* what a file item should hold */

struct row {
    const char *name;   /* row label */
    const char *rep;    /* datarep string */
    MPI_Datatype type;  /* etype = filetype = memory type */
    const char *tname;
    int tsize;          /* native bytes per item */
    int fsize;          /* bytes per item the representation should give in the file */
    enum layout layout;
    int reg_failed;     /* MPI_Register_datarep failed on some rank (user rows) */
    char reg_msg[MPI_MAX_ERROR_STRING];
};

#define NROWS 5
static struct row rows[NROWS];

static void init_rows(void)
{
    struct row r[NROWS] = {
        {"native", "native", MPI_INT, "MPI_INT", 4, 4, L_NATIVE, 0, ""},
        {"external32", "external32", MPI_INT, "MPI_INT", 4, 4, L_BE32, 0, ""},
        {"user_be32", "user_be32", MPI_INT, "MPI_INT", 4, 4, L_BE32, 0, ""},
        {"user_be64", "user_be64", MPI_INT, "MPI_INT", 4, 8, L_BE64, 0, ""},
        {"external32_long", "external32", MPI_LONG, "MPI_LONG", (int)sizeof(long), 4, L_BE32,
         0, ""},
    };
    memcpy(rows, r, sizeof r);
}

/* The value of item i of rank r: a hash, so that signs and all bytes vary.  It fits 32 bits,
 * so the MPI_LONG row's values survive external32's 4-byte longs. */
static int32_t value(long i)
{
    return (int32_t)((uint32_t)((unsigned long)rank * 0x9e3779b9UL + (unsigned long)i) *
                     2654435761u);
}

static int32_t value_of(int r, long i)
{
    return (int32_t)((uint32_t)((unsigned long)r * 0x9e3779b9UL + (unsigned long)i) *
                     2654435761u);
}

static void fill(const struct row *w, void *buf, long n)
{
    long i;
    if (w->type == MPI_LONG)
        for (i = 0; i < n; i++) ((long *)buf)[i] = (long)value(i);
    else
        for (i = 0; i < n; i++) ((int *)buf)[i] = (int)value(i);
}

static void check_buf(const struct row *w, const void *buf, long n, int rep)
{
    long i;
    if (w->type == MPI_LONG) {
        for (i = 0; i < n; i++)
            if (((const long *)buf)[i] != (long)value(i))
                fail("%s: read rep %d: element %ld is %ld, expected %ld", w->name, rep, i,
                     ((const long *)buf)[i], (long)value(i));
    } else {
        for (i = 0; i < n; i++)
            if (((const int *)buf)[i] != (int)value(i))
                fail("%s: read rep %d: element %ld is %d, expected %d", w->name, rep, i,
                     ((const int *)buf)[i], (int)value(i));
    }
}

/* Rank 0, informational: the file size and the first items of every rank's region as the
 * row's layout says, given the extent E the library reported.  Returns the note, or NULL. */
static const char *check_layout(const struct row *w, long n, MPI_Aint ext, char *note,
                                size_t cap)
{
    struct stat st;
    unsigned char raw[NCHECK * 8];
    long k = n < NCHECK ? n : NCHECK, i;
    int fd = open(path, O_RDONLY), r;
    long want_size = (long)nranks * n * w->fsize;
    if (fd < 0) sys_fail("open");
    if (fstat(fd, &st) != 0) sys_fail("fstat");
    note[0] = 0;
    if (ext != w->fsize)
        snprintf(note, cap, "MPI_File_get_type_extent(%s) is %ld in the file, the "
                 "representation's size is %d; ", w->tname, (long)ext, w->fsize);
    if ((long)st.st_size != want_size)
        snprintf(note + strlen(note), cap - strlen(note), "file size %ld B, expected %ld B; ",
                 (long)st.st_size, want_size);
    for (r = 0; r < nranks; r++) {
        off_t off = (off_t)r * n * ext;
        ssize_t got = pread(fd, raw, (size_t)(k * w->fsize), off);
        if (got != k * w->fsize) {
            snprintf(note + strlen(note), cap - strlen(note),
                     "short pread of rank %d's region (%ld B of %ld); ", r, (long)got,
                     k * w->fsize);
            break;
        }
        for (i = 0; i < k; i++) {
            int32_t v = value_of(r, i);
            unsigned char want[8];
            if (w->layout == L_NATIVE) {
                memcpy(want, &v, 4);
            } else if (w->layout == L_BE32) {
                uint32_t b = to_be32((uint32_t)v);
                memcpy(want, &b, 4);
            } else {
                uint64_t b = to_be64((uint64_t)(int64_t)v);
                memcpy(want, &b, 8);
            }
            if (memcmp(raw + i * w->fsize, want, (size_t)w->fsize) != 0) {
                snprintf(note + strlen(note), cap - strlen(note),
                         "rank %d's item %ld at byte %ld of its region is not the %d-byte %s "
                         "encoding; ", r, i, i * (long)w->fsize, w->fsize,
                         w->layout == L_NATIVE ? "native" : "big-endian");
                r = nranks;
                break;
            }
        }
    }
    close(fd);
    if (!note[0]) return NULL;
    note[strlen(note) - 2] = 0; /* the last "; " */
    return note;
}

/* ---- one row --------------------------------------------------------------------- */

struct result {
    int na;
    long file_bytes; /* per rank: items x extent */
    double w_med, w_min, w_max, r_med, r_min, r_max;
};

static void file_open(const struct row *w, int write, MPI_File *fh)
{
    io_check(MPI_File_open(MPI_COMM_WORLD, path,
                           write ? MPI_MODE_CREATE | MPI_MODE_WRONLY : MPI_MODE_RDONLY,
                           MPI_INFO_NULL, fh),
             w->name, "MPI_File_open");
}

/* Every rank: rc of a collective step.  True if it failed on any rank; msg (every rank) then
 * gets the error string of the lowest rank where it failed (strings, not codes, travel:
 * an error code may only mean something in the process that made it). */
static int failed_anywhere(int rc, char *msg)
{
    struct { int key, rank; } in, out;
    in.key = rc != MPI_SUCCESS ? 0 : 1;
    in.rank = rank;
    MPI_Allreduce(&in, &out, 1, MPI_2INT, MPI_MINLOC, MPI_COMM_WORLD);
    if (out.key != 0) return 0;
    if (rank == out.rank) err_string(rc, msg);
    MPI_Bcast(msg, MPI_MAX_ERROR_STRING, MPI_CHAR, out.rank, MPI_COMM_WORLD);
    return 1;
}

static void stats(double bytes, double *t, double *med, double *mn, double *mx)
{
    int r;
    for (r = 0; r < reps; r++) t[r] = bytes / t[r] / 1e6;
    *med = median(t, reps);
    *mn = t[0];
    *mx = t[reps - 1];
}

static void report_na(const struct row *w, const char *call, const char *msg)
{
    if (rank == 0) {
        printf("# n/a: %s: %s: %s\n", w->name, call, msg);
        fflush(stdout);
    }
}

static struct result run_row(const struct row *w, long bytes)
{
    struct result res;
    long n = bytes / w->tsize;
    char *wbuf, *rbuf;
    double *t = malloc(sizeof(double) * (size_t)(reps + warm));
    double global = (double)bytes * nranks;
    MPI_Aint ext = 0;
    MPI_Offset disp;
    MPI_File fh;
    char msg[MPI_MAX_ERROR_STRING];
    int rc, r;

    memset(&res, 0, sizeof res);
    if (w->reg_failed) {
        /* Registration failed on some rank: every rank knows (checked at registration). */
        report_na(w, "MPI_Register_datarep", w->reg_msg);
        res.na = 1;
        free(t);
        return res;
    }
    /* Probe: the representation accepted?  Its extent of the type. */
    file_open(w, 1, &fh);
    rc = MPI_File_set_view(fh, 0, w->type, w->type, w->rep, MPI_INFO_NULL);
    if (failed_anywhere(rc, msg)) {
        MPI_File_close(&fh);
        report_na(w, "MPI_File_set_view", msg);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) remove_file();
        res.na = 1;
        free(t);
        return res;
    }
    io_check(MPI_File_get_type_extent(fh, w->type, &ext), w->name, "MPI_File_get_type_extent");
    io_check(MPI_File_close(&fh), w->name, "MPI_File_close");
    disp = (MPI_Offset)rank * n * ext;
    res.file_bytes = n * (long)ext;

    wbuf = bench_alloc(bytes, 0);
    rbuf = bench_alloc(bytes, 0);
    if (!wbuf || !rbuf) MPI_Abort(MPI_COMM_WORLD, 3);
    fill(w, wbuf, n);

    /* Writes: a new file every rep. */
    for (r = 0; r < warm + reps; r++) {
        double t0, mine, max = 0.0;
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0 && unlink(path) != 0 && errno != ENOENT) sys_fail("unlink");
        MPI_Barrier(MPI_COMM_WORLD);
        file_open(w, 1, &fh);
        io_check(MPI_File_set_view(fh, disp, w->type, w->type, w->rep, MPI_INFO_NULL), w->name,
                 "MPI_File_set_view");
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        rc = MPI_File_write_at_all(fh, 0, wbuf, (int)n, w->type, MPI_STATUS_IGNORE);
        mine = MPI_Wtime() - t0;
        io_check(rc, w->name, "MPI_File_write_at_all");
        io_check(MPI_File_close(&fh), w->name, "MPI_File_close");
        MPI_Reduce(&mine, &max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (r >= warm) t[r - warm] = max;
    }
    if (rank == 0) stats(global, t, &res.w_med, &res.w_min, &res.w_max);

    /* The file's layout (informational). */
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        char note[1024];
        if (check_layout(w, n, ext, note, sizeof note)) {
            printf("# note: %s: %s\n", w->name, note);
            fflush(stdout);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* Reads of the file just written, each checked. */
    for (r = 0; r < warm + reps; r++) {
        double t0, mine, max = 0.0;
        MPI_Status st;
        int cnt = -1;
        memset(rbuf, 0xa5, (size_t)bytes);
        file_open(w, 0, &fh);
        io_check(MPI_File_set_view(fh, disp, w->type, w->type, w->rep, MPI_INFO_NULL), w->name,
                 "MPI_File_set_view");
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        rc = MPI_File_read_at_all(fh, 0, rbuf, (int)n, w->type, &st);
        mine = MPI_Wtime() - t0;
        io_check(rc, w->name, "MPI_File_read_at_all");
        io_check(MPI_File_close(&fh), w->name, "MPI_File_close");
        MPI_Get_count(&st, w->type, &cnt);
        if (cnt != n && rank == 0 && r == 0) {
            printf("# note: %s: MPI_Get_count of the read is %d, %ld items were read\n", w->name,
                   cnt, n);
            fflush(stdout);
        }
        check_buf(w, rbuf, n, r);
        MPI_Reduce(&mine, &max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (r >= warm) t[r - warm] = max;
    }
    if (rank == 0) stats(global, t, &res.r_med, &res.r_min, &res.r_max);

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) remove_file();
    free(wbuf);
    free(rbuf);
    free(t);
    return res;
}

/* ---- main ------------------------------------------------------------------------ */

static void usage_exit(const char *prog, const char *why)
{
    if (rank == 0) {
        if (why) fprintf(stderr, "%s\n", why);
        fprintf(stderr, "usage: %s [-s bytes per rank] [-r reps] [-x warm-up] [-o row,row,...]\n"
                        "rows: native, external32, user_be32, user_be64, external32_long\n",
                prog);
    }
    MPI_Abort(MPI_COMM_WORLD, 2);
    exit(2);
}

int main(int argc, char **argv)
{
    long bytes = 16L * 1024 * 1024;
    const char *only = NULL, *base;
    int c, k, want[NROWS];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    init_rows();
    while ((c = getopt(argc, argv, "s:r:x:o:h")) != -1) {
        switch (c) {
        case 's': bytes = atol(optarg); break;
        case 'r': reps = atoi(optarg); break;
        case 'x': warm = atoi(optarg); break;
        case 'o': only = optarg; break;
        default: usage_exit(argv[0], NULL);
        }
    }
    if (reps < 1 || warm < 0) usage_exit(argv[0], "need -r >= 1 and -x >= 0");
    if (bytes < 8 || bytes % 8 != 0 || bytes > (1L << 30))
        usage_exit(argv[0], "-s must be a positive multiple of 8, at most 1 GiB");
    for (k = 0; k < NROWS; k++) want[k] = only == NULL;
    if (only) {
        char *copy = strdup(only), *save = NULL, *tok;
        for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            for (k = 0; k < NROWS && strcmp(tok, rows[k].name) != 0; k++)
                ;
            if (k == NROWS) usage_exit(argv[0], "unknown row");
            want[k] = 1;
        }
        free(copy);
    }

    if (rank == 0) {
        base = getenv("HYMPI_BENCH_DIR");
        if (!base || !*base) base = "/tmp";
        snprintf(path, sizeof path, "%s/hympi-io-datarep-%ld.dat", base, (long)getpid());
    }
    MPI_Bcast(path, (int)sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);

    /* Errors of MPI_Register_datarep and of every file opened later come back as codes. */
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    for (k = 0; k < NROWS; k++) {
        int rc = MPI_SUCCESS;
        if (strcmp(rows[k].name, "user_be32") == 0)
            rc = MPI_Register_datarep("user_be32", be32_read, be32_write, be32_extent, NULL);
        else if (strcmp(rows[k].name, "user_be64") == 0)
            rc = MPI_Register_datarep("user_be64", be64_read, be64_write, be64_extent, NULL);
        rows[k].reg_failed = failed_anywhere(rc, rows[k].reg_msg);
    }

    if (rank == 0) {
        printf("# hympi-bench io_datarep: MPI_File_write_at_all / MPI_File_read_at_all of %ld B "
               "of native data per rank in one call, each rank its own contiguous region, view "
               "etype = filetype = the row's type in the row's data representation, %d ranks\n",
               bytes, nranks);
        printf("# page cache only (no MPI_File_sync); file deleted between write reps; median "
               "of %d reps after %d warm-up; MB/s = native bytes of all ranks / slowest rank's "
               "time / 1e6\n", reps, warm);
        printf("# file %s\n", path);
        printf("# Datarep           Type       File B/rank   Write (MB/s)   Read (MB/s)   "
               "Write min   Write max    Read min    Read max\n");
        fflush(stdout);
    }
    for (k = 0; k < NROWS; k++) {
        struct result res;
        if (!want[k]) continue;
        res = run_row(&rows[k], bytes);
        if (rank != 0) continue;
        if (res.na)
            printf("%-19s %-10s %11s %14s %13s %11s %11s %11s %11s\n", rows[k].name,
                   rows[k].tname, "-", "n/a", "n/a", "-", "-", "-", "-");
        else
            printf("%-19s %-10s %11ld %14.1f %13.1f %11.1f %11.1f %11.1f %11.1f\n",
                   rows[k].name, rows[k].tname, res.file_bytes, res.w_med, res.r_med, res.w_min,
                   res.w_max, res.r_min, res.r_max);
        fflush(stdout);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) remove_file();
    MPI_Finalize();
    return 0;
}
