/* rma_acc_large: large contiguous accumulates into shared window memory (MPI_Win_allocate),
 * from every rank at once to one target and from one rank while the others wait in the
 * fence, in MPI_SUM on doubles and MPI_MAX on ints; then MPI_Get_accumulate the same two
 * ways (every rank's fetched values must be a serial order's prefixes, element by element),
 * and both again into MPI_Win_create memory, with a strided origin. Checks every element.
 * On hympi these accumulates (4 MiB, above HYMPI_STEAL_ACC_MIN) are cut into chunks that
 * the ranks waiting in MPI reduce too, writing fetched values back to the origin, so this
 * checks that no chunk is lost, reduced or fetched twice, or torn between concurrent
 * accumulates. */
#include "mtest.h"

#define N (512 * 1024) /* doubles: 4 MiB */
#define NI (2 * N)       /* ints: 4 MiB */

/* Every rank adds its bit (1 << rank) to all NI ints of `target`'s window at once with
 * MPI_Get_accumulate; each rank's fetched values, element by element, must be the bits of
 * the ranks that came before it in one serial order: gathered at the target, sorted by
 * their number of bits, they hold 0, 1, ..., size-1 bits, each inside the next, never the
 * fetching rank's own. */
static void getacc_all(MPI_Win win, int *mem, int rank, int size, int target, const char *what)
{
    int *src = malloc(NI * sizeof(int)), *res = malloc(NI * sizeof(int));
    for (int i = 0; i < NI; i++) {
        src[i] = 1 << rank;
        res[i] = -1;
    }
    if (rank == target)
        for (int i = 0; i < NI; i++) mem[i] = 0;
    MPI_Win_fence(0, win);
    MPI_Get_accumulate(src, NI, MPI_INT, res, NI, MPI_INT, target, 0, NI, MPI_INT, MPI_SUM,
                       win);
    MPI_Win_fence(0, win);
    int *all = rank == target ? malloc((size_t)NI * size * sizeof(int)) : NULL;
    MPI_Gather(res, NI, MPI_INT, all, NI, MPI_INT, target, MPI_COMM_WORLD);
    if (rank == target) {
        int bad = 0;
        for (int i = 0; i < NI && bad < 5; i++) {
            int chain = 0; /* bits of the prefix of length k */
            for (int k = 0; k < size; k++) {
                int found = -1;
                for (int r = 0; r < size; r++) {
                    int v = all[(size_t)r * NI + i];
                    if (__builtin_popcount((unsigned)v) == k && (v & chain) == chain &&
                        !(v & (1 << r)))
                        found = r;
                }
                if (found < 0) {
                    bad++;
                    CHECK(0, "%s: element %d: no rank fetched a prefix of %d bits", what, i, k);
                    break;
                }
                chain = all[(size_t)found * NI + i] | (1 << found);
            }
            if (mem[i] != (1 << size) - 1) {
                bad++;
                CHECK(0, "%s: element %d is %d, expected %d", what, i, mem[i], (1 << size) - 1);
            }
        }
        free(all);
    }
    free(src);
    free(res);
}

/* Rank 0 alone: MPI_Get_accumulate of a strided origin (every other double of a 2N
 * array) into `target`'s window, whose doubles hold 1 + i * 0.25; the fetched values must
 * be exactly those, the window their sums with the origin. */
static void getacc_one(MPI_Win win, double *mem, int rank, int target, const char *what)
{
    MPI_Datatype every_other;
    MPI_Type_vector(N, 1, 2, MPI_DOUBLE, &every_other);
    MPI_Type_commit(&every_other);
    double *src = malloc(2 * N * sizeof(double)), *res = malloc(N * sizeof(double));
    for (int i = 0; i < 2 * N; i++) src[i] = (i % 2) ? -7.0 : (double)(i / 2) * 2.0;
    for (int i = 0; i < N; i++) res[i] = -1.0;
    if (rank == target)
        for (int i = 0; i < N; i++) mem[i] = 1.0 + (double)i * 0.25;
    MPI_Win_fence(0, win);
    if (rank == 0)
        MPI_Get_accumulate(src, 1, every_other, res, N, MPI_DOUBLE, target, 0, N, MPI_DOUBLE,
                           MPI_SUM, win);
    MPI_Win_fence(0, win);
    int bad = 0;
    if (rank == 0)
        for (int i = 0; i < N && bad < 5; i++)
            if (res[i] != 1.0 + (double)i * 0.25) {
                bad++;
                CHECK(0, "%s: fetched element %d is %.2f, expected %.2f", what, i, res[i],
                      1.0 + (double)i * 0.25);
            }
    if (rank == target)
        for (int i = 0; i < N && bad < 5; i++)
            if (mem[i] != 1.0 + (double)i * 2.25) {
                bad++;
                CHECK(0, "%s: element %d is %.2f, expected %.2f", what, i, mem[i],
                      1.0 + (double)i * 2.25);
            }
    MPI_Type_free(&every_other);
    free(src);
    free(res);
}

int main(int argc, char **argv)
{
    int errs = 0, rank, size;
    MTest_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int target = size - 1;
    double *mem;
    MPI_Win win;
    MPI_Win_allocate(rank == target ? N * sizeof(double) : 0, sizeof(double), MPI_INFO_NULL,
                     MPI_COMM_WORLD, &mem, &win);
    double *src = malloc(N * sizeof(double));
    for (int i = 0; i < N; i++) src[i] = (double)(rank + 1) + (double)i * 0.5;
    if (rank == target)
        for (int i = 0; i < N; i++) mem[i] = 1.0;

    /* Every rank adds its array 3 times, all at once. */
    MPI_Win_fence(0, win);
    for (int k = 0; k < 3; k++)
        MPI_Accumulate(src, N, MPI_DOUBLE, target, 0, N, MPI_DOUBLE, MPI_SUM, win);
    MPI_Win_fence(0, win);
    if (rank == target) {
        double ranks_sum = (double)size * (size + 1) / 2.0;
        int bad = 0;
        for (int i = 0; i < N && bad < 5; i++) {
            double want = 1.0 + 3.0 * (ranks_sum + (double)size * (double)i * 0.5);
            if (mem[i] != want) {
                bad++;
                CHECK(0, "element %d is %.1f, expected %.1f", i, mem[i], want);
            }
        }
    }

    /* One rank accumulates while the others wait in the fence; then a second pass on a
     * part of the window at an offset. */
    MPI_Win_fence(0, win);
    if (rank == 0) {
        MPI_Accumulate(src, N, MPI_DOUBLE, target, 0, N, MPI_DOUBLE, MPI_REPLACE, win);
        MPI_Accumulate(src, N / 2, MPI_DOUBLE, target, N / 4, N / 2, MPI_DOUBLE, MPI_SUM, win);
    }
    MPI_Win_fence(0, win);
    if (rank == target) {
        int bad = 0;
        for (int i = 0; i < N && bad < 5; i++) {
            double want = 1.0 + (double)i * 0.5; /* rank 0's array replaced everything */
            if (i >= N / 4 && i < 3 * N / 4) want += 1.0 + (double)(i - N / 4) * 0.5;
            if (mem[i] != want) {
                bad++;
                CHECK(0, "second pass: element %d is %.1f, expected %.1f", i, mem[i], want);
            }
        }
    }
    MPI_Win_free(&win);
    free(src);

    /* MPI_Get_accumulate, into MPI_Win_allocate memory, then MPI_Win_create memory. */
    int *imem;
    MPI_Win_allocate(rank == target ? NI * sizeof(int) : 0, sizeof(int), MPI_INFO_NULL,
                     MPI_COMM_WORLD, &imem, &win);
    getacc_all(win, imem, rank, size, target, "allocate, all at once");
    MPI_Win_free(&win);
    MPI_Win_allocate(rank == target ? N * sizeof(double) : 0, sizeof(double), MPI_INFO_NULL,
                     MPI_COMM_WORLD, &mem, &win);
    getacc_one(win, mem, rank, target, "allocate, one origin");
    MPI_Win_free(&win);

    void *own = malloc(NI * sizeof(int));
    MPI_Win_create(own, rank == target ? NI * sizeof(int) : 0, sizeof(int), MPI_INFO_NULL,
                   MPI_COMM_WORLD, &win);
    getacc_all(win, own, rank, size, target, "create, all at once");
    MPI_Win_free(&win);
    MPI_Win_create(own, rank == target ? N * sizeof(double) : 0, sizeof(double),
                   MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    getacc_one(win, own, rank, target, "create, one origin");
    MPI_Win_free(&win);
    free(own);
    return MTest_Finalize(errs);
}
