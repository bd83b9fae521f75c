/* rma_acc_large: large contiguous accumulates into shared window memory (MPI_Win_allocate),
 * from every rank at once to one target and from one rank while the others wait in the
 * fence, in MPI_SUM on doubles and MPI_MAX on ints; checks every element. On hympi these
 * accumulates (4 MiB, above HYMPI_STEAL_ACC_MIN) are cut into chunks that the ranks waiting
 * in MPI reduce too, so this checks that no chunk is lost, reduced twice or torn between
 * concurrent accumulates. */
#include "mtest.h"

#define N (512 * 1024) /* doubles: 4 MiB */

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
    return MTest_Finalize(errs);
}
