/* halo_ref: serial reference for the halo samples, written independently of them.
 *
 * Plain global arrays with a zero border, the same Jacobi update in the same summation order,
 * the same initial values and the same checksum order (global index order). Its checksum must
 * equal, bit for bit, the one every halo sample prints for the same arguments.
 *
 * Usage: halo_ref NX NY NZ ITERS    prints "checksum <%.17g>"
 */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: halo_ref NX NY NZ ITERS\n");
        return 2;
    }
    long X = atol(argv[1]), Y = atol(argv[2]), Z = atol(argv[3]), iters = atol(argv[4]);
    long PX = X + 2, PY = Y + 2, PZ = Z + 2; /* padded with a zero border */
    double *a = calloc((size_t)(PX * PY * PZ), sizeof(double));
    double *b = calloc((size_t)(PX * PY * PZ), sizeof(double));
#define AT(p, x, y, z) (p)[((x) * PY + (y)) * PZ + (z)]
    for (long x = 0; x < X; x++)
        for (long y = 0; y < Y; y++)
            for (long z = 0; z < Z; z++)
                AT(a, x + 1, y + 1, z + 1) = (double)((x * 31 + y * 17 + z * 7) % 97) / 97.0;
    for (long it = 0; it < iters; it++) {
        for (long x = 1; x <= X; x++)
            for (long y = 1; y <= Y; y++)
                for (long z = 1; z <= Z; z++) {
                    double s = AT(a, x - 1, y, z);
                    s += AT(a, x + 1, y, z);
                    s += AT(a, x, y - 1, z);
                    s += AT(a, x, y + 1, z);
                    s += AT(a, x, y, z - 1);
                    s += AT(a, x, y, z + 1);
                    AT(b, x, y, z) = 0.4 * AT(a, x, y, z) + 0.1 * s;
                }
        double *t = a;
        a = b;
        b = t;
    }
    double sum = 0;
    for (long x = 1; x <= X; x++)
        for (long y = 1; y <= Y; y++)
            for (long z = 1; z <= Z; z++)
                sum += AT(a, x, y, z);
    printf("checksum %.17g\n", sum);
    free(a);
    free(b);
    return 0;
}
