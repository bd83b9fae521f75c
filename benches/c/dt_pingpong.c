/*
 * Ping-pong of one face of a 256^3 grid of doubles between ranks 0 and 1, sent and received
 * with the same subarray type (argv[1]: xy, xz or yz; 512 KiB each way): rank 0 sends its
 * face at index 1, rank 1 receives into its face at index 0 and sends back its face at index 1.
 * Reports one-way bandwidth (face bytes / half round trip).
 */
#include "dt_faces.h"

int main(int argc, char **argv)
{
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const char *face = argc > 1 ? argv[1] : "xz";
    long iters = argc > 2 ? atol(argv[2]) : 200;
    MPI_Datatype snd = dt_face(face, 1), rcv = dt_face(face, 0);
    if (snd == MPI_DATATYPE_NULL)
        MPI_Abort(MPI_COMM_WORLD, 2);
    double *g = dt_grid();
    int size;
    MPI_Type_size(snd, &size);
    double t0 = 0;
    int peer = 1 - rank;
    for (long i = 0; i < iters + 10; i++) {
        if (i == 10)
            t0 = MPI_Wtime();
        if (rank == 0) {
            MPI_Send(g, 1, snd, peer, 1, MPI_COMM_WORLD);
            MPI_Recv(g, 1, rcv, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(g, 1, rcv, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(g, 1, snd, peer, 1, MPI_COMM_WORLD);
        }
    }
    double el = MPI_Wtime() - t0;
    if (rank == 0) {
        /* face 0 now holds what rank 1 sent: its face 1 values */
        MPI_Datatype f0 = rcv;
        int pos = 0;
        char *tmp = malloc(size);
        MPI_Pack(g, 1, f0, tmp, size, &pos, MPI_COMM_WORLD);
        double check = 0;
        for (int i = 0; i < size / 8; i++)
            check += ((double *)tmp)[i];
        free(tmp);
        printf("# hympi-bench ping-pong of the %s face of a 256^3 double grid (subarray types)\n", face);
        printf("# Size          Bandwidth (GB/s)    Latency (us)    Checksum\n");
        printf("%-10d%18.3f%16.1f%12.0f\n", size, (double)size * 2 * iters / el / 1e9,
               el * 1e6 / (2.0 * iters), check);
    }
    free(g);
    MPI_Type_free(&snd);
    MPI_Type_free(&rcv);
    MPI_Finalize();
    return 0;
}
