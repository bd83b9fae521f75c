/* coll_bcast_large: MPI_Bcast of messages larger than a shared-memory collective area,
 * where hympi's on-node broadcast copies directly between the ranks' address spaces.
 *
 * - byte counts around the area's capacity and a few larger ones, odd counts included
 *   (the two-rank copy splits the data in halves), from every root;
 * - back-to-back broadcasts with rotating roots and no barrier in between, the root
 *   overwriting its buffer as soon as each call returns: a receiver still copying from it
 *   would see the next value;
 * - small and large broadcasts and an allreduce interleaved on one communicator;
 * - layouts that differ between ranks for the same type signature (a strided vector on
 *   some ranks, contiguous ints on the others);
 * - a split communicator (odd/even ranks) and a duplicate of WORLD.
 * Receive buffers carry a guard past the data that must stay untouched.
 */
#include "mtest.h"
#include <stdint.h>

#define GUARD 64
#define GUARD_VAL 0x5a

static unsigned char pattern(int root, long count, long i, int round)
{
    return (unsigned char)(root * 131 + count * 7 + i * 13 + round * 29 + (i >> 8));
}

static void fill(unsigned char *buf, long count, int root, int round, int am_root)
{
    for (long i = 0; i < count + GUARD; i++)
        buf[i] = (am_root && i < count) ? pattern(root, count, i, round) : GUARD_VAL;
}

static int check(const unsigned char *buf, long count, int root, int round, const char *what)
{
    int bad = 0;
    for (long i = 0; i < count && bad < 3; i++)
        if (buf[i] != pattern(root, count, i, round)) {
            CHECK(0, "%s: root %d count %ld round %d: buf[%ld] = %d, want %d", what, root,
                  count, round, i, buf[i], pattern(root, count, i, round));
            bad++;
        }
    for (long i = count; i < count + GUARD && bad < 3; i++)
        if (buf[i] != GUARD_VAL) {
            CHECK(0, "%s: root %d count %ld: guard byte %ld overwritten", what, root, count, i);
            bad++;
        }
    return bad == 0;
}

static void test_counts(MPI_Comm comm, const char *name)
{
    static const long counts[] = {8175, 8176, 8177, 8192, 16383, 65536, 65537, 262147, 1048576};
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    unsigned char *buf = malloc(1048576 + GUARD);
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        for (int root = 0; root < size; root++) {
            fill(buf, counts[c], root, 0, rank == root);
            CHECK_RC(MPI_Bcast(buf, (int)counts[c], MPI_BYTE, root, comm), "MPI_Bcast");
            check(buf, counts[c], root, 0, name);
        }
    }
    free(buf);
}

/* Rotating roots, no barrier; the root reuses its buffer at once. */
static void test_back_to_back(void)
{
    const long count = 70001;
    unsigned char *buf = malloc(count + GUARD);
    int small[4];
    for (int round = 0; round < 200; round++) {
        int root = round % mtest_size;
        fill(buf, count, root, round, mtest_rank == root);
        CHECK_RC(MPI_Bcast(buf, (int)count, MPI_BYTE, root, MPI_COMM_WORLD), "MPI_Bcast");
        if (mtest_rank == root)
            memset(buf, 0xee, count); /* reuse: a late reader would copy this */
        else if (!check(buf, count, root, round, "back-to-back"))
            break;
        if (round % 3 == 0) {
            for (int i = 0; i < 4; i++)
                small[i] = mtest_rank == root ? round * 4 + i : -1;
            CHECK_RC(MPI_Bcast(small, 4, MPI_INT, root, MPI_COMM_WORLD), "small MPI_Bcast");
            for (int i = 0; i < 4; i++)
                CHECK(small[i] == round * 4 + i, "small bcast round %d: %d", round, small[i]);
        }
        if (round % 7 == 0) {
            int one = 1, sum = 0;
            CHECK_RC(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
                     "MPI_Allreduce");
            CHECK(sum == mtest_size, "allreduce round %d: %d", round, sum);
        }
    }
    free(buf);
}

/* The same signature (n ints) as a strided vector on the ranks of one parity, as
 * contiguous ints on the others; both parities take the root's role. */
static void test_layouts(void)
{
    const int n = 20000;
    MPI_Datatype vec;
    MPI_Type_vector(n, 1, 3, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    int *buf = malloc(sizeof(int) * 3 * n);
    for (int root = 0; root < mtest_size; root++) {
        int strided = (mtest_rank % 2) == (root % 2 == 0 ? 1 : 0);
        for (int i = 0; i < 3 * n; i++)
            buf[i] = -7;
        if (mtest_rank == root)
            for (int i = 0; i < n; i++)
                buf[strided ? 3 * i : i] = root * 100000 + i;
        int rc = strided ? MPI_Bcast(buf, 1, vec, root, MPI_COMM_WORLD)
                         : MPI_Bcast(buf, n, MPI_INT, root, MPI_COMM_WORLD);
        CHECK_RC(rc, "MPI_Bcast (mixed layouts)");
        int bad = 0;
        for (int i = 0; i < n && bad < 3; i++) {
            int got = buf[strided ? 3 * i : i];
            if (!CHECK(got == root * 100000 + i, "layouts root %d (%s): element %d = %d", root,
                       strided ? "vector" : "contiguous", i, got))
                bad++;
        }
        if (strided)
            for (int i = 0; i < n && bad < 3; i++)
                if (!CHECK(buf[3 * i + 1] == -7 && buf[3 * i + 2] == -7,
                           "layouts root %d: a gap of the vector was written", root))
                    bad++;
    }
    free(buf);
    MPI_Type_free(&vec);
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    test_counts(MPI_COMM_WORLD, "WORLD");
    test_back_to_back();
    test_layouts();
    MPI_Comm half, dup;
    MPI_Comm_split(MPI_COMM_WORLD, mtest_rank % 2, mtest_rank, &half);
    test_counts(half, "split");
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    test_counts(dup, "dup");
    MPI_Comm_free(&half);
    MPI_Comm_free(&dup);
    return MTest_Finalize(mtest_errors);
}
