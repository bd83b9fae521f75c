/* mtest_io.h: helpers of the MPI-IO programs (io_*.c), on top of mtest.h.
 *
 *  - MTest_Io_dir(name): rank 0 makes the per-run directory /tmp/hympi-io-<name>-<pid of
 *    rank 0> and broadcasts its name (MPI_Bcast); every file of the test lives in it.
 *    MTest_Io_path(buf, file) builds "<dir>/<file>".
 *  - MTest_Io_cleanup(): barrier, then rank 0 removes every file of the directory (also
 *    the hidden files an implementation made there, such as ROMIO's shared-file-pointer
 *    file) and the directory itself; a leftover is a failure.  It is also registered with
 *    atexit on rank 0, so that a program leaving through exit() still cleans up.
 *  - MTest_Io_slurp(path, &n): the whole file read through MPI with the default view
 *    (opened on MPI_COMM_SELF, MPI_MODE_RDONLY), for checks against a model.
 *  - IO_SAME(got, model, n, what): byte-exact comparison; one failure naming the first
 *    differing byte and the number of differing bytes.
 *  - CHECK_COUNT(status, type, expected, what): MPI_Get_count of a status;
 *    CHECK_COUNT_EOF(status, type, expected, requested, what) for reads that reach the end
 *    of file (with the MPICH relaxation described there).
 * POSIX calls (mkdir, unlink, rmdir, access) are used only around MPI, to set up, clean up
 * and observe the file system independently of the library under test. */
#ifndef MTEST_IO_H_INCLUDED
#define MTEST_IO_H_INCLUDED

#include "mtest.h"
#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#define MTEST_IO_PATH_MAX 512

static char mtest_io_dir[256];
static int mtest_io_made = 0; /* rank 0 made the directory and has not removed it yet */

/* Remove the directory and everything in it (rank 0; no MPI calls, so safe from atexit).
 * Returns 0 when nothing is left. */
MTEST_FN int MTest_Io_remove_dir(void)
{
    if (mtest_rank != 0 || !mtest_io_made)
        return 0;
    DIR *d = opendir(mtest_io_dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            char p[MTEST_IO_PATH_MAX + 256];
            snprintf(p, sizeof p, "%.255s/%.255s", mtest_io_dir, e->d_name);
            unlink(p);
        }
        closedir(d);
    }
    if (rmdir(mtest_io_dir) != 0 && errno != ENOENT)
        return -1;
    mtest_io_made = 0;
    return 0;
}

static void MTest_Io_atexit(void)
{
    MTest_Io_remove_dir();
}

/* Collective over MPI_COMM_WORLD. */
MTEST_FN void MTest_Io_dir(const char *name)
{
    memset(mtest_io_dir, 0, sizeof mtest_io_dir);
    if (mtest_rank == 0) {
        snprintf(mtest_io_dir, sizeof mtest_io_dir, "/tmp/hympi-io-%s-%ld", name,
                 (long)getpid());
        if (mkdir(mtest_io_dir, 0700) == 0) {
            mtest_io_made = 1;
            atexit(MTest_Io_atexit);
        } else {
            CHECK(0, "mkdir %s: %s", mtest_io_dir, strerror(errno));
        }
    }
    MPI_Bcast(mtest_io_dir, (int)sizeof mtest_io_dir, MPI_CHAR, 0, MPI_COMM_WORLD);
}

MTEST_FN void MTest_Io_path(char *buf, const char *file)
{
    snprintf(buf, MTEST_IO_PATH_MAX, "%.255s/%.200s", mtest_io_dir, file);
}

/* Collective over MPI_COMM_WORLD: every rank has closed its files. */
MTEST_FN void MTest_Io_cleanup(void)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (mtest_rank == 0 && mtest_io_made) {
        int rc = MTest_Io_remove_dir();
        CHECK(rc == 0, "could not remove %s: %s", mtest_io_dir, strerror(errno));
    }
}

/* Does the path exist (POSIX access, independent of the MPI library)? */
MTEST_FN int MTest_Io_exists(const char *path)
{
    return access(path, F_OK) == 0;
}

/* The whole file through MPI (default view, MPI_COMM_SELF); NULL on failure (counted).
 * The buffer has at least one byte; free() it. */
MTEST_FN unsigned char *MTest_Io_slurp(const char *path, MPI_Offset *n)
{
    MPI_File fh;
    MPI_Status st;
    MPI_Offset size = -1;
    *n = 0;
    int rc = MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    if (!CHECK(rc == MPI_SUCCESS, "slurp: MPI_File_open(%s) returned %s", path,
               MTest_Describe(rc)))
        return NULL;
    rc = MPI_File_get_size(fh, &size);
    CHECK_RC(rc, "slurp: MPI_File_get_size");
    unsigned char *buf = malloc(size > 0 ? (size_t)size : 1);
    MPI_Offset done = 0;
    while (rc == MPI_SUCCESS && done < size) {
        int want = size - done > (1 << 30) ? (1 << 30) : (int)(size - done), got = -1;
        rc = MPI_File_read_at(fh, done, buf + done, want, MPI_BYTE, &st);
        CHECK_RC(rc, "slurp: MPI_File_read_at");
        MPI_Get_count(&st, MPI_BYTE, &got);
        if (!CHECK(got > 0, "slurp: read_at at %lld of %lld bytes got %d bytes", (long long)done,
                   (long long)size, got))
            break;
        done += got;
    }
    MPI_File_close(&fh);
    *n = done;
    return buf;
}

/* Byte-exact comparison against a model; one failure with the first difference. */
MTEST_FN int MTest_Io_same(const void *got, const void *model, size_t n, const char *what,
                           const char *file, int line)
{
    const unsigned char *g = got, *m = model;
    size_t first = (size_t)-1, diff = 0;
    for (size_t i = 0; i < n; i++)
        if (g[i] != m[i]) {
            if (first == (size_t)-1)
                first = i;
            diff++;
        }
    if (diff == 0)
        return 1;
    MTest_Fail(file, line, "bytes equal the model",
               "%s: %zu of %zu bytes differ, first at byte %zu: got 0x%02x, expected 0x%02x",
               what, diff, n, first, g[first], m[first]);
    return 0;
}
#define IO_SAME(got, model, n, what) MTest_Io_same((got), (model), (n), (what), __FILE__, __LINE__)

/* MPI_Get_count(status, type) == expected. */
#define CHECK_COUNT(st, type, expected, what)                                                  \
    do {                                                                                       \
        int cnt_ = -12345;                                                                     \
        int crc_ = MPI_Get_count((st), (type), &cnt_);                                         \
        CHECK(crc_ == MPI_SUCCESS && cnt_ == (expected),                                       \
              "%s: MPI_Get_count gives %d, expected %d", (what), cnt_, (int)(expected));        \
    } while (0)

/* Reference MPI relaxations are compiled in for MPICH only (hympi's mpi.h defines HYMPI). */
#if defined(MPICH_VERSION) && !defined(HYMPI)
#define MTEST_IO_MPICH 1
#else
#define MTEST_IO_MPICH 0
#endif

/* MPI_Get_count of a read that reached the end of file: the items that were there
 * (expected; MPI_UNDEFINED for a partial item).  MPICH 4.0.2 (ROMIO) reports the requested
 * count instead for collective reads done by two-phase I/O and for noncontiguous reads
 * (datatype with holes in memory or in the file): accepted there, and only that value. */
#define CHECK_COUNT_EOF(st, type, expected, requested, what)                                   \
    do {                                                                                       \
        int cnt_ = -12345;                                                                     \
        int crc_ = MPI_Get_count((st), (type), &cnt_);                                         \
        if (MTEST_IO_MPICH && cnt_ == (requested) && cnt_ != (expected))                       \
            break;                                                                             \
        CHECK(crc_ == MPI_SUCCESS && cnt_ == (expected),                                       \
              "%s: MPI_Get_count gives %d, expected %d", (what), cnt_, (int)(expected));        \
    } while (0)

#endif /* MTEST_IO_H_INCLUDED */
