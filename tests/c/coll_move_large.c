/* coll_move_large: MPI_Scatter, MPI_Gather, MPI_Alltoall and MPI_Allgather with blocks
 * larger than a shared-memory collective area, where hympi's on-node path copies straight
 * between the processes (throttled reads and writes, pairwise and ring-source reads).
 *
 * - block sizes around and well above the area (odd counts included), every root;
 * - MPI_IN_PLACE at the root (Scatter, Gather) and everywhere (Alltoall, Allgather);
 * - layouts that differ between ranks for the same type signature: odd ranks use a strided
 *   vector of ints (every other int, extent resized to the stride), even ranks plain ints;
 * - back-to-back calls with rotating roots and no barrier in between, each rank
 *   overwriting its buffers as soon as a call returns: a peer still copying from them
 *   would see the next round's values;
 * - WORLD, a duplicate, and a split (odd/even ranks) communicator.
 * Every receive buffer carries a guard past the data that must stay untouched.
 */
#include "mtest.h"

#define GUARD 16
#define GUARD_VAL (-777)

static int value(int from, int to, long i, int round)
{
    return from * 1000003 + to * 7919 + (int)i * 31 + round * 17 + 1;
}

/* The layout of a rank's blocks: plain ints (stride 1) or every other int (stride 2). */
typedef struct {
    MPI_Datatype type; /* one block: n ints */
    int stride;
} layout_t;

static layout_t make_layout(int strided, long n)
{
    layout_t l;
    l.stride = strided ? 2 : 1;
    if (strided) {
        MPI_Datatype v;
        MPI_Type_vector((int)n, 1, 2, MPI_INT, &v);
        MPI_Type_create_resized(v, 0, (MPI_Aint)(2 * n * sizeof(int)), &l.type);
        MPI_Type_free(&v);
    } else {
        MPI_Type_contiguous((int)n, MPI_INT, &l.type);
    }
    MPI_Type_commit(&l.type);
    return l;
}

/* Index of element i of block b. */
static long at(const layout_t *l, long n, int b, long i)
{
    return (long)b * n * l->stride + i * l->stride;
}

static int *alloc_blocks(const layout_t *l, long n, int nblocks)
{
    long len = (long)nblocks * n * l->stride + GUARD;
    int *buf = malloc(sizeof(int) * (size_t)len);
    for (long i = 0; i < len; i++) buf[i] = GUARD_VAL;
    return buf;
}

static int guard_ok(const int *buf, const layout_t *l, long n, int nblocks, const char *what)
{
    long start = (long)nblocks * n * l->stride;
    for (long i = 0; i < GUARD; i++)
        if (buf[start + i] != GUARD_VAL) {
            CHECK(0, "%s: guard word %ld overwritten", what, i);
            return 0;
        }
    /* The holes between strided elements stay untouched too. */
    if (l->stride == 2)
        for (long i = 1; i < start; i += 2)
            if (buf[i] != GUARD_VAL) {
                CHECK(0, "%s: hole %ld overwritten", what, i);
                return 0;
            }
    return 1;
}

static void check_block(const int *buf, const layout_t *l, long n, int b, int from, int to,
                        int round, const char *what)
{
    for (long i = 0; i < n; i++) {
        int want = value(from, to, i, round);
        if (buf[at(l, n, b, i)] != want) {
            CHECK(0, "%s: round %d block %d element %ld = %d, want %d (from %d to %d)", what,
                  round, b, i, buf[at(l, n, b, i)], want, from, to);
            return;
        }
    }
}

static void run(MPI_Comm comm, const char *name)
{
    static const long counts[] = {1000, 2049, 5000, 65537, 262144};
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++) {
        long n = counts[ci];
        layout_t l = make_layout(rank % 2, n);
        char what[128];
        int rounds = n > 100000 ? 1 : size;
        for (int round = 0; round < rounds; round++) {
            int root = (round + (int)ci) % size;
            int in_place = (round % 2) == 1;
            /* Scatter: block b of the root goes to rank b. */
            {
                int *sbuf = alloc_blocks(&l, n, size), *rbuf = alloc_blocks(&l, n, 1);
                if (rank == root)
                    for (int b = 0; b < size; b++)
                        for (long i = 0; i < n; i++) sbuf[at(&l, n, b, i)] = value(root, b, i, round);
                if (rank == root && in_place)
                    MPI_Scatter(sbuf, 1, l.type, MPI_IN_PLACE, 1, l.type, root, comm);
                else
                    MPI_Scatter(sbuf, 1, l.type, rbuf, 1, l.type, root, comm);
                snprintf(what, sizeof what, "%s Scatter n %ld root %d%s", name, n, root,
                         rank == root && in_place ? " in place" : "");
                if (rank == root && in_place) {
                    check_block(sbuf, &l, n, rank, root, rank, round, what);
                    guard_ok(sbuf, &l, n, size, what);
                } else {
                    check_block(rbuf, &l, n, 0, root, rank, round, what);
                    guard_ok(rbuf, &l, n, 1, what);
                }
                /* Overwrite at once: a reader still copying would see this. */
                for (long i = 0; i < (long)size * n * l.stride; i++) sbuf[i] = -1;
                free(sbuf);
                free(rbuf);
            }
            /* Gather: rank b's block lands in block b of the root. */
            {
                int *sbuf = alloc_blocks(&l, n, 1), *rbuf = alloc_blocks(&l, n, size);
                int *own = (rank == root && in_place) ? rbuf : sbuf;
                long base = (rank == root && in_place) ? at(&l, n, rank, 0) : 0;
                for (long i = 0; i < n; i++) own[base + i * l.stride] = value(rank, root, i, round);
                if (rank == root && in_place)
                    MPI_Gather(MPI_IN_PLACE, 1, l.type, rbuf, 1, l.type, root, comm);
                else
                    MPI_Gather(sbuf, 1, l.type, rbuf, 1, l.type, root, comm);
                for (long i = 0; i < n; i++) sbuf[i * l.stride] = -2;
                snprintf(what, sizeof what, "%s Gather n %ld root %d%s", name, n, root,
                         rank == root && in_place ? " in place" : "");
                if (rank == root) {
                    for (int b = 0; b < size; b++) check_block(rbuf, &l, n, b, b, root, round, what);
                    guard_ok(rbuf, &l, n, size, what);
                }
                free(sbuf);
                free(rbuf);
            }
            /* Alltoall: block b of rank r goes to block r of rank b. */
            {
                int *sbuf = alloc_blocks(&l, n, size), *rbuf = alloc_blocks(&l, n, size);
                int *src = in_place ? rbuf : sbuf;
                for (int b = 0; b < size; b++)
                    for (long i = 0; i < n; i++) src[at(&l, n, b, i)] = value(rank, b, i, round);
                if (in_place)
                    MPI_Alltoall(MPI_IN_PLACE, 1, l.type, rbuf, 1, l.type, comm);
                else
                    MPI_Alltoall(sbuf, 1, l.type, rbuf, 1, l.type, comm);
                if (!in_place)
                    for (long i = 0; i < (long)size * n * l.stride; i++) sbuf[i] = -3;
                snprintf(what, sizeof what, "%s Alltoall n %ld%s", name, n, in_place ? " in place" : "");
                for (int b = 0; b < size; b++) check_block(rbuf, &l, n, b, b, rank, round, what);
                guard_ok(rbuf, &l, n, size, what);
                free(sbuf);
                free(rbuf);
            }
            /* Allgather: rank b's block lands in block b everywhere. */
            {
                int *sbuf = alloc_blocks(&l, n, 1), *rbuf = alloc_blocks(&l, n, size);
                int *own = in_place ? rbuf : sbuf;
                long base = in_place ? at(&l, n, rank, 0) : 0;
                for (long i = 0; i < n; i++) own[base + i * l.stride] = value(rank, 0, i, round);
                if (in_place)
                    MPI_Allgather(MPI_IN_PLACE, 1, l.type, rbuf, 1, l.type, comm);
                else
                    MPI_Allgather(sbuf, 1, l.type, rbuf, 1, l.type, comm);
                for (long i = 0; i < n; i++) sbuf[i * l.stride] = -4;
                snprintf(what, sizeof what, "%s Allgather n %ld%s", name, n, in_place ? " in place" : "");
                for (int b = 0; b < size; b++) check_block(rbuf, &l, n, b, b, 0, round, what);
                guard_ok(rbuf, &l, n, size, what);
                free(sbuf);
                free(rbuf);
            }
        }
        MPI_Type_free(&l.type);
    }
}

int main(int argc, char **argv)
{
    MPI_Comm dup, half;
    int rank;
    MTest_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    run(MPI_COMM_WORLD, "world");
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    run(dup, "dup");
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
    run(half, "half");
    MPI_Comm_free(&dup);
    MPI_Comm_free(&half);
    return MTest_Finalize(0);
}
