/* rma_cas_widths: MPI_Compare_and_swap on every element width (1, 2, 4 and 8 bytes: MPI_BYTE,
 * MPI_UNSIGNED_CHAR, MPI_SHORT, MPI_INT, MPI_LONG, MPI_INT64_T), at aligned and odd byte
 * addresses, on an MPI_Win_allocate window with mpi_accumulate_granularity = 8 (hympi: one
 * atomic instruction where aligned) and on one without the hint (a per-target lock), in one
 * MPI_Win_lock_all epoch, from a single-threaded process (hympi's shortest path).
 *  - Ring: each rank swaps into its right neighbour a value that matches the slot's initial
 *    contents and one that does not: the fetched old values are the initial contents, the
 *    matching slot holds the new value afterwards, the other one is unchanged, and no byte
 *    next to a slot is touched.
 *  - Counter: every rank increments one 8-byte and one 2-byte counter at an odd address on
 *    rank 0 by compare-and-swap retry loops (guess, swap, retry with the fetched value):
 *    the totals count every increment exactly once.
 * Runs at 1-4 ranks; passes on MPICH 4.0 (1-4 ranks). Open MPI 4.1.4 passes at 1 rank and
 * crashes at 2 and 3 (a segfault in its vader BTL under osc/rdma's compare-and-swap). */
#include "mtest.h"
#include <stdint.h>
#include <string.h>

#define WIN_BYTES 512
#define ROUNDS 200
#define STRIDE 48     /* bytes per width: four slots */
#define OFF_CNT8 400  /* int64_t counter (aligned) */
#define OFF_CNT2 411  /* short counter at an odd address */

struct width {
    MPI_Datatype type;
    const char *name;
    int size;
};

static int me, np;

/* The initial byte at offset `off` of rank `r`'s window. */
static unsigned char init_byte(int r, int off)
{
    return (unsigned char)(r * 31 + off * 7 + 1);
}

static void run(const char *what, MPI_Info info)
{
    struct width widths[] = {
        {MPI_BYTE, "MPI_BYTE", 1},   {MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", 1},
        {MPI_SHORT, "MPI_SHORT", 2}, {MPI_INT, "MPI_INT", 4},
        {MPI_LONG, "MPI_LONG", 8},   {MPI_INT64_T, "MPI_INT64_T", 8},
    };
    int nw = (int)(sizeof widths / sizeof widths[0]);
    unsigned char *base;
    MPI_Win win;
    CHECK_RC(MPI_Win_allocate(WIN_BYTES, 1, info, MPI_COMM_WORLD, &base, &win), "allocate");
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, me, 0, win);
    for (int off = 0; off < WIN_BYTES; off++) base[off] = init_byte(me, off);
    memset(base + OFF_CNT8, 0, 8);
    memset(base + OFF_CNT2, 0, 2);
    MPI_Win_unlock(me, win);
    MPI_Barrier(MPI_COMM_WORLD);

    int right = (me + 1) % np;
    /* Slots of width k: 48k (aligned) and 48k + 9 (odd) matching, 48k + 24 (aligned) and
     * 48k + 33 (odd) not matching. */
    unsigned char fetched[6][4][8];
    CHECK_RC(MPI_Win_lock_all(0, win), "lock_all");
    for (int k = 0; k < nw; k++) {
        int n = widths[k].size;
        int offs[4] = {STRIDE * k, STRIDE * k + 9, STRIDE * k + 24, STRIDE * k + 33};
        for (int s = 0; s < 4; s++) {
            unsigned char newv[8], cmp[8];
            for (int b = 0; b < n; b++) {
                newv[b] = (unsigned char)(0xA0 + me + b);
                /* Slots 0 and 1 match the target's initial bytes; 2 and 3 differ in the
                 * last byte. */
                cmp[b] = init_byte(right, offs[s] + b);
            }
            if (s >= 2) cmp[n - 1] ^= 0x55;
            memset(fetched[k][s], 0xEE, 8);
            CHECK_RC(MPI_Compare_and_swap(newv, cmp, fetched[k][s], widths[k].type, right,
                                          offs[s], win),
                     "compare_and_swap");
        }
    }
    CHECK_RC(MPI_Win_flush_all(win), "flush_all");

    /* Counters on rank 0 by retry loops. */
    int64_t guess8 = 0;
    short guess2 = 0;
    for (int i = 0; i < ROUNDS; i++) {
        for (;;) {
            int64_t next = guess8 + 1, old;
            MPI_Compare_and_swap(&next, &guess8, &old, MPI_INT64_T, 0, OFF_CNT8, win);
            MPI_Win_flush(0, win);
            if (old == guess8) {
                guess8 = next;
                break;
            }
            guess8 = old;
        }
        for (;;) {
            short next = (short)(guess2 + 1), old;
            MPI_Compare_and_swap(&next, &guess2, &old, MPI_SHORT, 0, OFF_CNT2, win);
            MPI_Win_flush(0, win);
            if (old == guess2) {
                guess2 = next;
                break;
            }
            guess2 = old;
        }
    }
    CHECK_RC(MPI_Win_unlock_all(win), "unlock_all");
    MPI_Barrier(MPI_COMM_WORLD);

    /* What this rank fetched from its right neighbour: the initial bytes, all of them. */
    for (int k = 0; k < nw; k++) {
        int n = widths[k].size;
        int offs[4] = {STRIDE * k, STRIDE * k + 9, STRIDE * k + 24, STRIDE * k + 33};
        for (int s = 0; s < 4; s++)
            for (int b = 0; b < 8; b++) {
                unsigned char want = b < n ? init_byte(right, offs[s] + b) : 0xEE;
                CHECK(fetched[k][s][b] == want, "%s: %s slot %d fetched byte %d is 0x%02x, not 0x%02x",
                      what, widths[k].name, s, b, fetched[k][s][b], want);
            }
    }
    /* What the left neighbour left in this rank's window. */
    int left = (me + np - 1) % np;
    unsigned char expect[WIN_BYTES];
    for (int off = 0; off < WIN_BYTES; off++) expect[off] = init_byte(me, off);
    for (int k = 0; k < nw; k++) {
        int n = widths[k].size;
        int offs[2] = {STRIDE * k, STRIDE * k + 9};
        for (int s = 0; s < 2; s++)
            for (int b = 0; b < n; b++) expect[offs[s] + b] = (unsigned char)(0xA0 + left + b);
    }
    MPI_Win_lock(MPI_LOCK_SHARED, me, 0, win);
    for (int off = 0; off < STRIDE * nw; off++)
        if (!CHECK(base[off] == expect[off], "%s: byte %d is 0x%02x, not 0x%02x", what, off,
                   base[off], expect[off]))
            break;
    if (me == 0) {
        int64_t c8;
        short c2;
        memcpy(&c8, base + OFF_CNT8, 8);
        memcpy(&c2, base + OFF_CNT2, 2);
        CHECK(c8 == (int64_t)np * ROUNDS, "%s: 8-byte counter is %lld, not %d", what,
              (long long)c8, np * ROUNDS);
        CHECK(c2 == np * ROUNDS, "%s: odd 2-byte counter is %d, not %d", what, c2, np * ROUNDS);
    }
    MPI_Win_unlock(me, win);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(MPI_Win_free(&win), "free");
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);

    MPI_Info fine;
    MPI_Info_create(&fine);
    MPI_Info_set(fine, "mpi_accumulate_granularity", "8");
    run("granularity 8", fine);
    MPI_Info_free(&fine);
    run("no hint", MPI_INFO_NULL);
    return MTest_Finalize(0);
}
