/*
 * MPI-IO bandwidth and latency.  -o selects the case; rank 0 prints OSU-style tables
 * ("# Size  <column> ..." then one row per size):
 *
 *   coll3d    collective I/O of a 3D block-decomposed array of doubles: each rank owns an
 *             N^3 block (-n LIST, default 64,128) of a global array laid out by the
 *             MPI_Dims_create grid (2 ranks: 2x1x1, 4: 2x2x1), C order.  The file view is
 *             MPI_Type_create_subarray of the global array (MPI_File_set_view, "native");
 *             MPI_File_write_all / MPI_File_read_all of the whole block in one call.
 *             Size = bytes per rank (N^3 x 8).
 *   strided   independent strided writes: each rank writes blocks of -b doubles (default
 *             64) with a stride of nranks blocks (view: MPI_Type_vector, displacement
 *             rank x block, so the ranks' blocks interleave), -s bytes per rank (default
 *             4 MiB) in one MPI_File_write (no _all).  Size = bytes per rank.
 *   ordered   MPI_File_write_ordered of -s byte records (default 1 KiB), -i calls per rank
 *             (default 1000); microseconds per call (slowest rank's time / calls), and
 *             the aggregate MB/s.  Size = record bytes.
 *   ceiling   the single-stream bandwidth of the same file system, no MPI in the timed
 *             part: rank 0 alone writes and reads nranks x N^3 doubles (the global array
 *             of coll3d, -n default 128) with POSIX pwrite / pread of 4 MiB chunks (as
 *             dd does); the other ranks sleep meanwhile (MPI_Iprobe + 1 ms nanosleep, so
 *             they leave the CPUs to it).  Size = total bytes.
 *
 * Bandwidth = global bytes / the slowest rank's time of the one call (rank 0's time for
 * ceiling), MB = 10^6 B; the column "With close" adds MPI_File_close (close(2)) to that
 * time, so a library that defers its writes to the close is visible.  Each value is the
 * median of -r reps (default 5) after -x warm-up reps (default 1); Min and Max are over
 * the reps.  Every rep opens the file anew (not timed) and starts after an MPI_Barrier.
 * Writes go to the page cache only: no MPI_File_sync / fsync (a write is done when the
 * data is in the kernel), and reads hit the page cache (the file was just written).
 * Write reps create a new file: the file is deleted between them (unlink(2) by rank 0,
 * not MPI_File_delete, so the timed calls are all the library needs).
 *
 * -d write|read|both (coll3d and ceiling, default both) selects the direction; with both
 * there are two tables, "# write" then "# read".  Reads time an existing file: with -d
 * read it is written once first (not timed).
 *
 * Checks (not timed): every element written is its own index in the file (as a double),
 * so after the writes rank 0 reads the whole file with pread(2) and checks file[i] == i
 * and the file size; coll3d and strided also read the data back once through their view
 * (MPI_File_read_all / MPI_File_read) and compare it with what was written; ceiling
 * compares what pread returned.  A mismatch prints "io: rank R: check failed: ..." and
 * aborts (non-zero exit status).
 *
 * Files: $HYMPI_BENCH_DIR (default /tmp)/hympi-io-<pid of rank 0>.dat, deleted at the end.
 * The file-system path must be visible to rank 0 with POSIX calls (the checks read it).
 *
 * MPI-IO errors (the default file error handler returns them) print the error string and
 * abort; MPI_ERR_UNSUPPORTED_OPERATION (a library without MPI-IO, or without the call)
 * prints "# unsupported: <call>: <message>" and exits 0 without a row.
 *
 * Options: -o coll3d|strided|ordered|ceiling (default coll3d), -n LIST edges, -d DIR,
 * -r REPS, -x WARMUP, -s BYTES, -b DOUBLES per strided block, -i CALLS (ordered).
 */
#include "bench_mpi.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <time.h>

enum op { OP_COLL3D, OP_STRIDED, OP_ORDERED, OP_CEILING };
enum { DIR_WRITE = 1, DIR_READ = 2, DIR_BOTH = 3 };
enum kind { K_WRITE_ALL, K_READ_ALL, K_WRITE, K_READ, K_ORDERED };

#define MAX_EDGES 16
#define CHUNK (4L * 1024 * 1024) /* pwrite/pread chunk, and the check's read size */
#define TAG_WAKE 77

static int rank, nranks;
static int reps = 5, warm = 1;
static char path[4096];
static MPI_Comm fcomm; /* MPI_COMM_WORLD's duplicate with MPI_ERRORS_RETURN, for opens */

static void remove_file(void)
{
    if (path[0]) unlink(path); /* best effort; ENOENT when already gone */
}

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "io: rank %d: check failed: ", rank);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    remove_file();
    MPI_Abort(MPI_COMM_WORLD, 4);
    exit(4);
}

static void io_check(int rc, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0, cls = rc;
    if (rc == MPI_SUCCESS) return;
    MPI_Error_class(rc, &cls);
    if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS) len = 0;
    msg[len < MPI_MAX_ERROR_STRING ? len : MPI_MAX_ERROR_STRING - 1] = 0;
    if (cls == MPI_ERR_UNSUPPORTED_OPERATION) {
        if (rank == 0) {
            printf("# unsupported: %s: %s\n", what, msg);
            fflush(stdout);
            remove_file();
        }
        MPI_Finalize();
        exit(0);
    }
    fprintf(stderr, "io: rank %d: %s failed: %s (error class %d)\n", rank, what, msg, cls);
    remove_file();
    MPI_Abort(MPI_COMM_WORLD, 5);
}

static void sys_fail(const char *what)
{
    fprintf(stderr, "io: rank %d: %s %s: %s\n", rank, what, path, strerror(errno));
    remove_file();
    MPI_Abort(MPI_COMM_WORLD, 5);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

struct stat3 {
    long size;
    double med, min, max, med2; /* med2: the median of the second series (with close) */
};

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Rank 0: per-rep times (seconds) -> MB/s statistics of `bytes` per rep. */
static struct stat3 bw_stats(long size, double bytes, const double *t, const double *t2)
{
    struct stat3 s;
    double *v = malloc(sizeof(double) * (size_t)reps);
    int r;
    s.size = size;
    for (r = 0; r < reps; r++) v[r] = bytes / t[r] / 1e6;
    s.med = median(v, reps);
    s.min = v[0];
    s.max = v[reps - 1];
    for (r = 0; r < reps; r++) v[r] = bytes / t2[r] / 1e6;
    s.med2 = median(v, reps);
    free(v);
    return s;
}

static void print_bw(const char *title, const struct stat3 *s, int n)
{
    int k;
    if (rank != 0) return;
    printf("# %s\n", title);
    printf("# Size      Bandwidth (MB/s)    Min (MB/s)    Max (MB/s)    With close (MB/s)\n");
    for (k = 0; k < n; k++)
        printf("%-10ld%18.1f%14.1f%14.1f%21.1f\n", s[k].size, s[k].med, s[k].min, s[k].max,
               s[k].med2);
    fflush(stdout);
}

/* Delete the file between write reps: nobody has it open, and nobody opens it before
 * it is gone. */
static void delete_between(void)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0 && unlink(path) != 0) sys_fail("unlink");
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- checks ---------------------------------------------------------------------- */

/* The file holds exactly n doubles and file[i] == i (read with pread, by the caller). */
static void check_file(long n)
{
    struct stat st;
    double *buf = (double *)bench_alloc(CHUNK, 0);
    long i = 0;
    int fd = open(path, O_RDONLY);
    if (!buf) MPI_Abort(MPI_COMM_WORLD, 3);
    if (fd < 0) sys_fail("open");
    if (fstat(fd, &st) != 0) sys_fail("fstat");
    if ((long)st.st_size != n * 8)
        fail("file size %ld B, expected %ld B", (long)st.st_size, n * 8);
    while (i < n) {
        long want = n - i < CHUNK / 8 ? n - i : CHUNK / 8, j;
        ssize_t got = pread(fd, buf, (size_t)want * 8, (off_t)i * 8);
        if (got < 0) sys_fail("pread");
        if (got != want * 8)
            fail("short pread at file element %ld: %ld B of %ld", i, (long)got, want * 8);
        for (j = 0; j < want; j++)
            if (buf[j] != (double)(i + j))
                fail("file element %ld is %.17g, expected %ld", i + j, buf[j], i + j);
        i += want;
    }
    close(fd);
    free(buf);
}

/* check_file on rank 0 after every rank has closed the file.  Collective. */
static void check_layout(long n)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) check_file(n);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void check_same(const double *got, const double *want, long n, const char *what)
{
    long j;
    for (j = 0; j < n; j++)
        if (got[j] != want[j])
            fail("%s: local element %ld is %.17g, expected %.17g", what, j, got[j], want[j]);
}

/* ---- one MPI-IO call per rep ----------------------------------------------------- */

struct job {
    enum kind kind;
    MPI_Datatype ft; /* file type of the view; MPI_DATATYPE_NULL: the default view */
    MPI_Offset disp;
    double *buf;
    long count;  /* doubles per call */
    long calls;  /* K_ORDERED: calls per rank (one record each); else 1 */
};

static void file_open(int amode, MPI_File *fh)
{
    io_check(MPI_File_open(fcomm, path, amode, MPI_INFO_NULL, fh), "MPI_File_open");
}

/* One rep of j on every rank: this rank's time of the call(s), and with the close. */
static void run_once(const struct job *j, double *t_op, double *t_close)
{
    MPI_File fh;
    double t0, t1, t2;
    int rc = MPI_SUCCESS, write = j->kind != K_READ_ALL && j->kind != K_READ;
    long c;
    const char *what = "";
    file_open(write ? MPI_MODE_CREATE | MPI_MODE_WRONLY : MPI_MODE_RDONLY, &fh);
    if (j->ft != MPI_DATATYPE_NULL)
        io_check(MPI_File_set_view(fh, j->disp, MPI_DOUBLE, j->ft, "native", MPI_INFO_NULL),
                 "MPI_File_set_view");
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    switch (j->kind) {
    case K_WRITE_ALL:
        what = "MPI_File_write_all";
        rc = MPI_File_write_all(fh, j->buf, (int)j->count, MPI_DOUBLE, MPI_STATUS_IGNORE);
        break;
    case K_READ_ALL:
        what = "MPI_File_read_all";
        rc = MPI_File_read_all(fh, j->buf, (int)j->count, MPI_DOUBLE, MPI_STATUS_IGNORE);
        break;
    case K_WRITE:
        what = "MPI_File_write";
        rc = MPI_File_write(fh, j->buf, (int)j->count, MPI_DOUBLE, MPI_STATUS_IGNORE);
        break;
    case K_READ:
        what = "MPI_File_read";
        rc = MPI_File_read(fh, j->buf, (int)j->count, MPI_DOUBLE, MPI_STATUS_IGNORE);
        break;
    case K_ORDERED:
        what = "MPI_File_write_ordered";
        for (c = 0; c < j->calls && rc == MPI_SUCCESS; c++)
            rc = MPI_File_write_ordered(fh, j->buf + c * j->count, (int)j->count, MPI_DOUBLE,
                                        MPI_STATUS_IGNORE);
        break;
    }
    t1 = MPI_Wtime();
    io_check(rc, what);
    rc = MPI_File_close(&fh);
    t2 = MPI_Wtime();
    io_check(rc, "MPI_File_close");
    *t_op = t1 - t0;
    *t_close = t2 - t0;
}

/* warm + reps reps of j; rank 0 gets the slowest rank's times of the timed reps.  Write
 * jobs delete the file between reps and leave the last one. */
static void run_reps(const struct job *j, double *t, double *t2)
{
    int r, write = j->kind != K_READ_ALL && j->kind != K_READ;
    for (r = 0; r < warm + reps; r++) {
        double mine[2], max[2] = {0.0, 0.0};
        if (write && r > 0) delete_between();
        run_once(j, &mine[0], &mine[1]);
        MPI_Reduce(mine, max, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (r >= warm) {
            t[r - warm] = max[0];
            t2[r - warm] = max[1];
        }
    }
}

/* One untimed read of j into a poisoned buffer, compared with want. */
static void check_read_back(struct job j, const double *want, const char *what)
{
    double t_op, t_close;
    long n = j.count * j.calls;
    j.buf = (double *)bench_alloc(n * 8, 0xff); /* NaNs: never equal to anything */
    if (!j.buf) MPI_Abort(MPI_COMM_WORLD, 3);
    run_once(&j, &t_op, &t_close);
    check_same(j.buf, want, n, what);
    free(j.buf);
}

/* ---- coll3d ---------------------------------------------------------------------- */

static void coll3d(const int *edges, int nedges, int dir)
{
    int dims[3] = {0, 0, 0}, co[3], k;
    struct stat3 sw[MAX_EDGES], sr[MAX_EDGES];
    double *t = malloc(sizeof(double) * (size_t)reps), *t2 = malloc(sizeof(double) * (size_t)reps);
    char title[512];

    MPI_Dims_create(nranks, 3, dims);
    co[0] = rank / (dims[1] * dims[2]);
    co[1] = rank / dims[2] % dims[1];
    co[2] = rank % dims[2];
    if (rank == 0) {
        printf("# hympi-bench MPI-IO coll3d: MPI_File_write_all / MPI_File_read_all of an N^3 "
               "block of doubles per rank through an MPI_Type_create_subarray view of the "
               "global array, %d ranks, grid %dx%dx%d\n", nranks, dims[0], dims[1], dims[2]);
        printf("# page cache only (no MPI_File_sync); file deleted between write reps; median "
               "of %d reps after %d warm-up; MB/s = global bytes / slowest rank's time / 1e6\n",
               reps, warm);
        printf("# file %s\n", path);
        fflush(stdout);
    }
    for (k = 0; k < nedges; k++) {
        int n = edges[k], gs[3], ls[3], st[3], d;
        long cnt = (long)n * n * n, i, jj, kk, m = 0;
        double *wbuf = (double *)bench_alloc(cnt * 8, 0), *rbuf = (double *)bench_alloc(cnt * 8, 0);
        double global = (double)cnt * 8.0 * nranks;
        struct job wj, rj;
        MPI_Datatype ft;

        if (!wbuf || !rbuf) MPI_Abort(MPI_COMM_WORLD, 3);
        for (d = 0; d < 3; d++) {
            gs[d] = dims[d] * n;
            ls[d] = n;
            st[d] = co[d] * n;
        }
        for (i = 0; i < n; i++)
            for (jj = 0; jj < n; jj++)
                for (kk = 0; kk < n; kk++)
                    wbuf[m++] = (double)(((st[0] + i) * gs[1] + st[1] + jj) * (long)gs[2] +
                                         st[2] + kk);
        MPI_Type_create_subarray(3, gs, ls, st, MPI_ORDER_C, MPI_DOUBLE, &ft);
        MPI_Type_commit(&ft);
        wj.kind = K_WRITE_ALL;
        wj.ft = ft;
        wj.disp = 0;
        wj.buf = wbuf;
        wj.count = cnt;
        wj.calls = 1;
        rj = wj;
        rj.kind = K_READ_ALL;
        rj.buf = rbuf;

        if (dir & DIR_WRITE) {
            run_reps(&wj, t, t2);
            if (rank == 0) sw[k] = bw_stats(cnt * 8, global, t, t2);
        } else {
            double a, b;
            run_once(&wj, &a, &b);
        }
        check_layout(cnt * nranks);
        check_read_back(rj, wbuf, "MPI_File_read_all");
        if (dir & DIR_READ) {
            run_reps(&rj, t, t2);
            check_same(rbuf, wbuf, cnt, "MPI_File_read_all (timed)");
            if (rank == 0) sr[k] = bw_stats(cnt * 8, global, t, t2);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) remove_file();
        MPI_Type_free(&ft);
        free(wbuf);
        free(rbuf);
    }
    if (dir & DIR_WRITE) {
        snprintf(title, sizeof title, "write: MPI_File_write_all, %d ranks", nranks);
        print_bw(title, sw, nedges);
    }
    if (dir & DIR_READ) {
        snprintf(title, sizeof title, "read: MPI_File_read_all, %d ranks", nranks);
        print_bw(title, sr, nedges);
    }
    free(t);
    free(t2);
}

/* ---- strided --------------------------------------------------------------------- */

static void strided(long bytes, long block)
{
    long count = bytes / 8 / block, j;
    double *wbuf = (double *)bench_alloc(bytes, 0);
    double *t = malloc(sizeof(double) * (size_t)reps), *t2 = malloc(sizeof(double) * (size_t)reps);
    MPI_Datatype vec, ft;
    struct job wj, rj;
    struct stat3 s;

    if (!wbuf) MPI_Abort(MPI_COMM_WORLD, 3);
    for (j = 0; j < count * block; j++)
        wbuf[j] = (double)((j / block * nranks + rank) * block + j % block);
    /* count blocks, nranks blocks apart; resized to the whole interleaved region so the
     * view would tile correctly. */
    MPI_Type_vector((int)count, (int)block, (int)(block * nranks), MPI_DOUBLE, &vec);
    MPI_Type_create_resized(vec, 0, (MPI_Aint)(count * nranks * block * 8), &ft);
    MPI_Type_commit(&ft);
    MPI_Type_free(&vec);
    if (rank == 0) {
        printf("# hympi-bench MPI-IO strided: independent MPI_File_write of %ld B per rank as "
               "%ld blocks of %ld doubles, %d ranks interleaved (MPI_Type_vector view, "
               "displacement rank x block)\n", bytes, count, block, nranks);
        printf("# page cache only (no MPI_File_sync); file deleted between reps; median of %d "
               "reps after %d warm-up; MB/s = global bytes / slowest rank's time / 1e6\n",
               reps, warm);
        printf("# file %s\n", path);
        fflush(stdout);
    }
    wj.kind = K_WRITE;
    wj.ft = ft;
    wj.disp = (MPI_Offset)(rank * block * 8);
    wj.buf = wbuf;
    wj.count = count * block;
    wj.calls = 1;
    run_reps(&wj, t, t2);
    check_layout(count * block * nranks);
    rj = wj;
    rj.kind = K_READ;
    check_read_back(rj, wbuf, "MPI_File_read through the strided view");
    if (rank == 0) {
        s = bw_stats(bytes, (double)bytes * nranks, t, t2);
        print_bw("write: MPI_File_write (independent)", &s, 1);
        remove_file();
    }
    MPI_Type_free(&ft);
    free(wbuf);
    free(t);
    free(t2);
}

/* ---- ordered --------------------------------------------------------------------- */

static void ordered(long rec, long calls)
{
    long per = rec / 8, c, j;
    double *wbuf = (double *)bench_alloc(calls * rec, 0);
    double *t = malloc(sizeof(double) * (size_t)reps), *t2 = malloc(sizeof(double) * (size_t)reps);
    struct job wj;
    int r;

    if (!wbuf) MPI_Abort(MPI_COMM_WORLD, 3);
    /* Call c of rank r is record c * nranks + r of the file. */
    for (c = 0; c < calls; c++)
        for (j = 0; j < per; j++) wbuf[c * per + j] = (double)((c * nranks + rank) * per + j);
    if (rank == 0) {
        printf("# hympi-bench MPI-IO ordered: MPI_File_write_ordered of %ld B records, %ld "
               "calls per rank, %d ranks (default view)\n", rec, calls, nranks);
        printf("# page cache only (no MPI_File_sync); file deleted between reps; median of %d "
               "reps after %d warm-up; time per call = slowest rank's time / calls\n",
               reps, warm);
        printf("# file %s\n", path);
        fflush(stdout);
    }
    wj.kind = K_ORDERED;
    wj.ft = MPI_DATATYPE_NULL;
    wj.disp = 0;
    wj.buf = wbuf;
    wj.count = per;
    wj.calls = calls;
    run_reps(&wj, t, t2);
    check_layout(calls * per * nranks);
    if (rank == 0) {
        double *us = malloc(sizeof(double) * (size_t)reps), med, bw;
        for (r = 0; r < reps; r++) us[r] = t[r] * 1e6 / (double)calls;
        med = median(us, reps);
        bw = (double)rec * (double)calls * nranks / (med * 1e-6 * (double)calls) / 1e6;
        printf("# Size      Time/call (us)    Min (us)    Max (us)    Bandwidth (MB/s)\n");
        printf("%-10ld%16.2f%12.2f%12.2f%20.1f\n", rec, med, us[0], us[reps - 1], bw);
        fflush(stdout);
        free(us);
        remove_file();
    }
    free(wbuf);
    free(t);
    free(t2);
}

/* ---- ceiling --------------------------------------------------------------------- */

/* Ranks other than 0: sleep until rank 0 says it is done (no busy polling). */
static void idle_until_woken(void)
{
    struct timespec ts = {0, 1000000};
    int flag = 0;
    char dummy;
    while (!flag) {
        MPI_Iprobe(0, TAG_WAKE, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        if (!flag) nanosleep(&ts, NULL);
    }
    MPI_Recv(&dummy, 0, MPI_BYTE, 0, TAG_WAKE, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static void wake_others(void)
{
    char dummy = 0;
    int r;
    for (r = 1; r < nranks; r++) MPI_Send(&dummy, 0, MPI_BYTE, r, TAG_WAKE, MPI_COMM_WORLD);
}

/* One pass of pwrite (write) or pread over buf; returns the time of the loop and in
 * *t_close the time with close(2).  The file is created anew for a write. */
static double posix_pass(char *buf, long bytes, int write, double *t_close)
{
    long off;
    double t0, t1;
    int fd = write ? open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644) : open(path, O_RDONLY);
    if (fd < 0) sys_fail("open");
    t0 = MPI_Wtime();
    for (off = 0; off < bytes;) {
        long n = bytes - off < CHUNK ? bytes - off : CHUNK;
        ssize_t got = write ? pwrite(fd, buf + off, (size_t)n, (off_t)off)
                            : pread(fd, buf + off, (size_t)n, (off_t)off);
        if (got < 0) {
            if (errno == EINTR) continue;
            sys_fail(write ? "pwrite" : "pread");
        }
        if (got == 0) fail("unexpected end of %s at byte %ld", path, off);
        off += got;
    }
    t1 = MPI_Wtime();
    if (close(fd) != 0) sys_fail("close");
    *t_close = MPI_Wtime() - t0;
    return t1 - t0;
}

static void ceiling(const int *edges, int nedges, int dir)
{
    struct stat3 sw[MAX_EDGES], sr[MAX_EDGES];
    double *t = malloc(sizeof(double) * (size_t)reps), *t2 = malloc(sizeof(double) * (size_t)reps);
    char title[512];
    int k, r;

    if (rank == 0) {
        printf("# hympi-bench MPI-IO ceiling: rank 0 alone writes / reads nranks x N^3 doubles "
               "(coll3d's global array) with pwrite / pread of %ld B chunks, no MPI, %d ranks "
               "(the others sleep)\n", CHUNK, nranks);
        printf("# page cache only (no fsync); file deleted between write reps; median of %d "
               "reps after %d warm-up; MB/s = bytes / time / 1e6\n", reps, warm);
        printf("# file %s\n", path);
        fflush(stdout);
    }
    for (k = 0; k < nedges; k++) {
        long n = edges[k], cnt = n * n * n * nranks, i;
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank != 0) {
            idle_until_woken();
            continue;
        }
        {
            double *wbuf = (double *)bench_alloc(cnt * 8, 0);
            double *rbuf = (double *)bench_alloc(cnt * 8, 0);
            double a, b;
            if (!wbuf || !rbuf) MPI_Abort(MPI_COMM_WORLD, 3);
            for (i = 0; i < cnt; i++) wbuf[i] = (double)i;
            if (dir & DIR_WRITE) {
                for (r = 0; r < warm + reps; r++) {
                    if (r > 0 && unlink(path) != 0) sys_fail("unlink");
                    a = posix_pass((char *)wbuf, cnt * 8, 1, &b);
                    if (r >= warm) {
                        t[r - warm] = a;
                        t2[r - warm] = b;
                    }
                }
                sw[k] = bw_stats(cnt * 8, (double)cnt * 8, t, t2);
            } else {
                posix_pass((char *)wbuf, cnt * 8, 1, &b);
            }
            check_file(cnt);
            if (dir & DIR_READ) {
                for (r = 0; r < warm + reps; r++) {
                    a = posix_pass((char *)rbuf, cnt * 8, 0, &b);
                    if (r >= warm) {
                        t[r - warm] = a;
                        t2[r - warm] = b;
                    }
                }
                sr[k] = bw_stats(cnt * 8, (double)cnt * 8, t, t2);
            } else {
                posix_pass((char *)rbuf, cnt * 8, 0, &b);
            }
            check_same(rbuf, wbuf, cnt, "pread");
            remove_file();
            free(wbuf);
            free(rbuf);
            wake_others();
        }
    }
    if (dir & DIR_WRITE) {
        snprintf(title, sizeof title, "write: pwrite by rank 0 alone, %d ranks' bytes", nranks);
        print_bw(title, sw, nedges);
    }
    if (dir & DIR_READ) {
        snprintf(title, sizeof title, "read: pread by rank 0 alone, %d ranks' bytes", nranks);
        print_bw(title, sr, nedges);
    }
    free(t);
    free(t2);
}

/* ---- main ------------------------------------------------------------------------ */

static void usage_exit(const char *prog, const char *why)
{
    if (rank == 0) {
        if (why) fprintf(stderr, "%s\n", why);
        fprintf(stderr, "usage: %s [-o coll3d|strided|ordered|ceiling] [-n edges] "
                        "[-d write|read|both] [-r reps] [-x warm-up] [-s bytes] "
                        "[-b doubles per block] [-i calls]\n", prog);
    }
    MPI_Abort(MPI_COMM_WORLD, 2);
}

int main(int argc, char **argv)
{
    const char *opname = "coll3d", *dirname = "both", *base;
    int edges[MAX_EDGES], nedges = 0, c, dir = DIR_BOTH;
    long bytes = -1, block = 64, calls = 1000;
    enum op op = OP_COLL3D;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    while ((c = getopt(argc, argv, "o:n:d:r:x:s:b:i:h")) != -1) {
        switch (c) {
        case 'o': opname = optarg; break;
        case 'n': {
            char *copy = strdup(optarg), *save = NULL, *tok;
            for (tok = strtok_r(copy, ",", &save); tok && nedges < MAX_EDGES;
                 tok = strtok_r(NULL, ",", &save))
                edges[nedges++] = atoi(tok);
            free(copy);
            break;
        }
        case 'd': dirname = optarg; break;
        case 'r': reps = atoi(optarg); break;
        case 'x': warm = atoi(optarg); break;
        case 's': bytes = atol(optarg); break;
        case 'b': block = atol(optarg); break;
        case 'i': calls = atol(optarg); break;
        default: usage_exit(argv[0], NULL);
        }
    }
    if (strcmp(opname, "coll3d") == 0) op = OP_COLL3D;
    else if (strcmp(opname, "strided") == 0) op = OP_STRIDED;
    else if (strcmp(opname, "ordered") == 0) op = OP_ORDERED;
    else if (strcmp(opname, "ceiling") == 0) op = OP_CEILING;
    else usage_exit(argv[0], "unknown case");
    if (strcmp(dirname, "write") == 0) dir = DIR_WRITE;
    else if (strcmp(dirname, "read") == 0) dir = DIR_READ;
    else if (strcmp(dirname, "both") == 0) dir = DIR_BOTH;
    else usage_exit(argv[0], "-d must be write, read or both");
    if (reps < 1 || warm < 0) usage_exit(argv[0], "need -r >= 1 and -x >= 0");
    if (!nedges) {
        if (op == OP_COLL3D) edges[nedges++] = 64;
        edges[nedges++] = 128;
    }
    for (c = 0; c < nedges; c++)
        if (edges[c] < 1 || edges[c] > 1024) usage_exit(argv[0], "edges must be in 1..1024");
    if (bytes < 0) bytes = op == OP_ORDERED ? 1024 : 4L * 1024 * 1024;
    if (op == OP_STRIDED && (block < 1 || bytes < block * 8 || bytes % (block * 8) != 0 ||
                             bytes > (1L << 30) || bytes * nranks > (1L << 31) - 1))
        usage_exit(argv[0], "-s must be a positive multiple of 8 x -b, at most 1 GiB, and "
                            "all ranks' bytes below 2 GiB");
    if (op == OP_ORDERED && (bytes < 8 || bytes % 8 != 0 || calls < 1 ||
                             bytes * calls > (1L << 30)))
        usage_exit(argv[0], "-s must be a positive multiple of 8, -i positive, -s x -i <= 1 GiB");

    /* The file name: rank 0's pid, under $HYMPI_BENCH_DIR (rank 0's environment). */
    if (rank == 0) {
        base = getenv("HYMPI_BENCH_DIR");
        if (!base || !*base) base = "/tmp";
        snprintf(path, sizeof path, "%s/hympi-io-%ld.dat", base, (long)getpid());
    }
    MPI_Bcast(path, (int)sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
    MPI_Comm_dup(MPI_COMM_WORLD, &fcomm);
    MPI_Comm_set_errhandler(fcomm, MPI_ERRORS_RETURN);

    switch (op) {
    case OP_COLL3D: coll3d(edges, nedges, dir); break;
    case OP_STRIDED: strided(bytes, block); break;
    case OP_ORDERED: ordered(bytes, calls); break;
    case OP_CEILING: ceiling(edges, nedges, dir); break;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) remove_file();
    MPI_Comm_free(&fcomm);
    MPI_Finalize();
    return 0;
}
