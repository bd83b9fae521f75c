/* wtime: MPI_Wtime is monotonic (within one process) and measures elapsed seconds;
 * MPI_Wtick is the clock resolution in seconds: positive and at most 10 ms. */
#include "mtest.h"

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    double tick = MPI_Wtick();
    CHECK(tick > 0.0 && tick <= 0.01, "MPI_Wtick %g", tick);

    double t0 = MPI_Wtime(), prev = t0;
    for (int i = 0; i < 100000; i++) {
        double t = MPI_Wtime();
        if (!CHECK(t >= prev, "MPI_Wtime went backwards: %.9f then %.9f", prev, t))
            break;
        prev = t;
    }
    double a = MPI_Wtime();
    MTest_Sleep_ms(200);
    double b = MPI_Wtime();
    /* Slept 200 ms: the clock must show at least that (minus one tick), and not absurdly more. */
    CHECK(b - a >= 0.2 - tick - 1e-6, "200 ms sleep measured as %.6f s", b - a);
    CHECK(b - a < 30.0, "200 ms sleep measured as %.6f s", b - a);
    /* Sub-millisecond resolution in practice: two reads around a short busy loop differ. */
    double c = MPI_Wtime(), d;
    do {
        d = MPI_Wtime();
    } while (d == c && d - c < 1.0);
    CHECK(d > c && d - c < 0.01, "the clock did not advance by less than 10 ms: %.9f", d - c);
    return MTest_Finalize(0);
}
