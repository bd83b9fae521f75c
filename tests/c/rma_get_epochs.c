/* rma_get_epochs: an MPI_Get returns the data of its own epoch, even when the target
 * changes its window memory in the very next epoch.
 *
 * Rank 0 (origin) and the last rank (target; on another node in network mode). Per round and
 * size (from 16 KiB up to 2 MiB, the sizes of every protocol a large answer takes):
 *  1. the target fills its window with the round's pattern under its own exclusive lock;
 *  2. the origin takes an exclusive lock on the target (a one-element get and a flush make
 *     sure it holds it) and tells the target so;
 *  3. the target asks for an exclusive lock on itself, which it gets once the origin
 *     released its own, and then overwrites the window;
 *  4. the origin gets the window (contiguous, and into a strided origin type), releases the
 *     lock, and checks that it read the round's pattern, not the overwrite.
 * The other ranks only join the window and the barriers.  A window server that answered a get
 * from its memory after it let the next epoch in would return the overwrite. */
#include "mtest.h"
#include <stdlib.h>
#include <string.h>

#define ROUNDS 6
#define MAXBYTES (2 * 1024 * 1024)

static unsigned char pattern(int round, int size_idx, long k)
{
    return (unsigned char)(round * 17 + size_idx * 5 + k * 3 + (k >> 12));
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    int target = mtest_size - 1;
    unsigned char *base;
    MPI_Win win;
    MPI_Win_allocate(MAXBYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    const long sizes[] = {16 * 1024, 64 * 1024, 200 * 1024, MAXBYTES};
    const int nsizes = (int)(sizeof sizes / sizeof sizes[0]);
    /* Twice the bytes: the strided origin type spreads them over every other byte. */
    unsigned char *got = malloc(2 * MAXBYTES);
    CHECK(got != NULL, "out of memory");

    for (int round = 0; round < ROUNDS; round++) {
        for (int si = 0; si < nsizes; si++) {
            long n = sizes[si];
            int strided = (round % 2) == 1;
            if (mtest_rank == target) {
                MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win);
                for (long k = 0; k < n; k++)
                    base[k] = pattern(round, si, k);
                MPI_Win_unlock(target, win);
            }
            MPI_Barrier(MPI_COMM_WORLD);
            if (mtest_rank == 0 && target != 0) {
                unsigned char first = 0;
                MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win);
                MPI_Get(&first, 1, MPI_BYTE, target, 0, 1, MPI_BYTE, win);
                MPI_Win_flush(target, win);
                MPI_Send(NULL, 0, MPI_BYTE, target, 7, MPI_COMM_WORLD);
                memset(got, 0, 2 * (size_t)n);
                MPI_Datatype every_other;
                MPI_Type_vector((int)n, 1, 2, MPI_BYTE, &every_other);
                MPI_Type_commit(&every_other);
                if (strided)
                    MPI_Get(got, 1, every_other, target, 0, (int)n, MPI_BYTE, win);
                else
                    MPI_Get(got, (int)n, MPI_BYTE, target, 0, (int)n, MPI_BYTE, win);
                MPI_Win_unlock(target, win);
                MPI_Type_free(&every_other);
                long bad = 0, first_bad = -1;
                for (long k = 0; k < n; k++) {
                    unsigned char v = strided ? got[2 * k] : got[k];
                    if (v != pattern(round, si, k)) {
                        if (first_bad < 0)
                            first_bad = k;
                        bad++;
                    }
                }
                CHECK(first == pattern(round, si, 0), "round %d: the first element read %d",
                      round, first);
                CHECK(bad == 0,
                      "round %d, %ld bytes%s: %ld bytes are not the epoch's data (first at %ld)",
                      round, n, strided ? " (strided origin)" : "", bad, first_bad);
            } else if (mtest_rank == target && target != 0) {
                MPI_Recv(NULL, 0, MPI_BYTE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win);
                memset(base, 0xEE, (size_t)n);
                MPI_Win_unlock(target, win);
            }
            MPI_Barrier(MPI_COMM_WORLD);
        }
    }
    free(got);
    MPI_Win_free(&win);
    return MTest_Finalize(0);
}
