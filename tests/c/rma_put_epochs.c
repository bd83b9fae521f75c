/* rma_put_epochs: the data of an MPI_Put is in the target's window when the synchronization
 * that completes the put returns, for every synchronization kind and buffer shape, and a
 * large put the target refuses leaves nothing behind.
 *
 * Rank 0 (origin) and the last rank (target; on another node in network mode).  Per round
 * and size (16 KiB up to 2 MiB, the sizes at which a put's data travels apart from its
 * request, through each protocol of the transport), the target clears its window, the
 * origin puts the round's pattern and completes it, and the target checks its memory:
 *  - exclusive lock: MPI_Win_lock, MPI_Put, MPI_Win_unlock, then a message to the target,
 *    which reads its window at once under its own exclusive lock;
 *  - fence: MPI_Win_fence, MPI_Put, MPI_Win_fence, and the target reads;
 *  - PSCW: the target posts to the origin and waits; the origin starts, puts, completes;
 *  - flush: under MPI_Win_lock_all, MPI_Put, MPI_Win_flush, then the origin reads the same
 *    target range back with MPI_Get (the flush made the put complete at the target).
 * Each put follows a one-byte put past the checked range in the same epoch.
 * The origin buffer is contiguous, strided (an MPI_Type_vector over every other byte), or
 * the target side is strided (the put lands in every other byte of the window).
 * Then, on a dynamic window, a 128 KiB put to a 64 KiB attached region must fail with
 * MPI_ERR_RMA_RANGE (MPI_ERRORS_RETURN) and a correct large put right after it must land
 * (the refusal only on hympi: the standard makes such a put erroneous without requiring
 * its detection, and MPICH 4.0 writes past the region).
 * The other ranks only join the windows and the collective calls. */
#include "mtest.h"
#include <stdlib.h>
#include <string.h>

#define MAXBYTES (2 * 1024 * 1024)
#define NSYNC 4
#define NSHAPE 3

static unsigned char pattern(int round, int size_idx, long k)
{
    return (unsigned char)(round * 17 + size_idx * 5 + k * 3 + (k >> 12) + 1);
}

enum shape { CONTIG, STRIDED_ORIGIN, STRIDED_TARGET };
static const char *SYNC_NAME[NSYNC] = {"lock", "fence", "pscw", "flush"};
static const char *SHAPE_NAME[NSHAPE] = {"contiguous", "strided origin", "strided target"};

/* Puts a marker byte past the checked range (so that the large put is not the epoch's
 * first operation, which a library may treat apart), then n bytes of `src` (laid out as
 * `shape` says) to the target's window start. */
static void put(const unsigned char *src, long n, enum shape shape, int target, MPI_Win win,
                MPI_Datatype every_other)
{
    static const unsigned char marker = 0x5A;
    MPI_Put(&marker, 1, MPI_BYTE, target, 2 * MAXBYTES, 1, MPI_BYTE, win);
    if (shape == CONTIG)
        MPI_Put(src, (int)n, MPI_BYTE, target, 0, (int)n, MPI_BYTE, win);
    else if (shape == STRIDED_ORIGIN)
        MPI_Put(src, 1, every_other, target, 0, (int)n, MPI_BYTE, win);
    else
        MPI_Put(src, (int)n, MPI_BYTE, target, 0, 1, every_other, win);
}

/* Counts the bytes of the target's window (`mem`) that do not hold the round's pattern. */
static long check(const unsigned char *mem, long n, enum shape shape, int round, int si,
                  long *first_bad)
{
    long bad = 0;
    *first_bad = -1;
    for (long k = 0; k < n; k++) {
        unsigned char v = shape == STRIDED_TARGET ? mem[2 * k] : mem[k];
        if (v != pattern(round, si, k)) {
            if (*first_bad < 0)
                *first_bad = k;
            bad++;
        }
    }
    return bad;
}

static void dynamic_refusal(int target)
{
    MPI_Win win;
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    const long region = 64 * 1024, big = 2 * region;
    unsigned char *mem = NULL;
    MPI_Aint at = 0;
    if (mtest_rank == target) {
        mem = calloc((size_t)region, 1);
        CHECK(mem != NULL, "out of memory");
        MPI_Win_attach(win, mem, region);
        MPI_Get_address(mem, &at);
    }
    MPI_Bcast(&at, 1, MPI_AINT, target, MPI_COMM_WORLD);
    if (mtest_rank == 0 && target != 0) {
        unsigned char *src = malloc((size_t)big);
        CHECK(src != NULL, "out of memory");
        for (long k = 0; k < big; k++)
            src[k] = pattern(9, 9, k);
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int len = 0, rc;
        MPI_Get_library_version(lib, &len);
        MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win);
        if (strstr(lib, "hympi") != NULL) {
            rc = MPI_Put(src, (int)big, MPI_BYTE, target, at, (int)big, MPI_BYTE, win);
            int rc2 = MPI_Win_flush(target, win);
            int cls = MPI_SUCCESS;
            MPI_Error_class(rc != MPI_SUCCESS ? rc : rc2, &cls);
            CHECK(cls == MPI_ERR_RMA_RANGE,
                  "a put beyond the attached region gave class %d (put %d, flush %d)", cls, rc,
                  rc2);
        }
        rc = MPI_Put(src, (int)region, MPI_BYTE, target, at, (int)region, MPI_BYTE, win);
        CHECK(rc == MPI_SUCCESS, "a put inside the attached region failed (%d)", rc);
        rc = MPI_Win_unlock(target, win);
        CHECK(rc == MPI_SUCCESS, "the unlock after a refused put failed (%d)", rc);
        free(src);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (mtest_rank == target && target != 0) {
        long bad = 0, first_bad = -1;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win);
        bad = check(mem, region, CONTIG, 9, 9, &first_bad);
        MPI_Win_unlock(target, win);
        CHECK(bad == 0, "dynamic window: %ld bytes of the put are missing (first at %ld)", bad,
              first_bad);
        MPI_Win_detach(win, mem);
    }
    MPI_Win_free(&win);
    free(mem);
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    int target = mtest_size - 1;
    unsigned char *base;
    MPI_Win win;
    /* Twice the bytes: the strided target type spreads them over every other byte. */
    MPI_Win_allocate(2 * MAXBYTES + 64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    const long sizes[] = {16 * 1024, 64 * 1024, 200 * 1024, MAXBYTES};
    const int nsizes = (int)(sizeof sizes / sizeof sizes[0]);
    unsigned char *src = malloc(2 * MAXBYTES), *back = malloc(2 * MAXBYTES);
    CHECK(src != NULL && back != NULL, "out of memory");
    MPI_Group world, origin_group, target_group;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int zero = 0;
    MPI_Group_incl(world, 1, &zero, &origin_group);
    MPI_Group_incl(world, 1, &target, &target_group);
    int origin = mtest_rank == 0 && target != 0, serving = mtest_rank == target && target != 0;

    for (int round = 0; round < NSYNC * NSHAPE; round++) {
        int sync = round % NSYNC;
        enum shape shape = (enum shape)((round / NSYNC) % NSHAPE);
        for (int si = 0; si < nsizes; si++) {
            long n = sizes[si];
            MPI_Datatype every_other;
            MPI_Type_vector((int)n, 1, 2, MPI_BYTE, &every_other);
            MPI_Type_commit(&every_other);
            if (mtest_rank == target) {
                MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win);
                memset(base, 0, 2 * (size_t)n);
                MPI_Win_unlock(target, win);
            }
            if (origin)
                for (long k = 0; k < n; k++) {
                    if (shape == STRIDED_ORIGIN) {
                        src[2 * k] = pattern(round, si, k);
                        src[2 * k + 1] = 0xEE;
                    } else {
                        src[k] = pattern(round, si, k);
                    }
                }
            MPI_Barrier(MPI_COMM_WORLD);
            int check_at_target = 1;
            if (sync == 0) {
                if (origin) {
                    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win);
                    put(src, n, shape, target, win, every_other);
                    MPI_Win_unlock(target, win);
                    MPI_Send(NULL, 0, MPI_BYTE, target, 7, MPI_COMM_WORLD);
                } else if (serving) {
                    MPI_Recv(NULL, 0, MPI_BYTE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                }
            } else if (sync == 1) {
                MPI_Win_fence(0, win);
                if (origin)
                    put(src, n, shape, target, win, every_other);
                MPI_Win_fence(0, win);
            } else if (sync == 2) {
                if (origin) {
                    MPI_Win_start(target_group, 0, win);
                    put(src, n, shape, target, win, every_other);
                    MPI_Win_complete(win);
                } else if (serving) {
                    MPI_Win_post(origin_group, 0, win);
                    MPI_Win_wait(win);
                }
            } else {
                check_at_target = 0;
                if (origin) {
                    long span = shape == STRIDED_TARGET ? 2 * n : n, bad, first_bad;
                    memset(back, 0, (size_t)span);
                    MPI_Win_lock_all(0, win);
                    put(src, n, shape, target, win, every_other);
                    MPI_Win_flush(target, win);
                    MPI_Get(back, (int)span, MPI_BYTE, target, 0, (int)span, MPI_BYTE, win);
                    MPI_Win_unlock_all(win);
                    bad = check(back, n, shape, round, si, &first_bad);
                    CHECK(bad == 0,
                          "%s, %s, %ld bytes: %ld bytes read back after the flush are not "
                          "the put's (first at %ld)",
                          SYNC_NAME[sync], SHAPE_NAME[shape], n, bad, first_bad);
                }
            }
            if (serving && check_at_target) {
                long bad, first_bad;
                MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win);
                bad = check(base, n, shape, round, si, &first_bad);
                MPI_Win_unlock(target, win);
                CHECK(bad == 0,
                      "%s, %s, %ld bytes: %ld bytes of the window are not the put's (first "
                      "at %ld)",
                      SYNC_NAME[sync], SHAPE_NAME[shape], n, bad, first_bad);
            }
            MPI_Type_free(&every_other);
            MPI_Barrier(MPI_COMM_WORLD);
        }
    }
    MPI_Group_free(&origin_group);
    MPI_Group_free(&target_group);
    MPI_Group_free(&world);
    free(src);
    free(back);
    MPI_Win_free(&win);
    dynamic_refusal(target);
    return MTest_Finalize(0);
}
