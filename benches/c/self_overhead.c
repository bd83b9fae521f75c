/*
 * Software-overhead kernel: on MPI_COMM_SELF, N iterations of
 *     MPI_Irecv(8 B) + MPI_Isend(8 B) + MPI_Waitall(2)
 * to self.  Usage: self_overhead [N] [single|funneled|serialized|multiple]
 * [ignore|statuses|wait|test] (defaults 1000000, single, ignore): the completion
 * is MPI_Waitall with MPI_STATUSES_IGNORE, MPI_Waitall with an array of
 * statuses, MPI_Wait on each request with a status, or MPI_Test on each
 * request with a status (until it reports completion).  Thread level is requested with
 * MPI_Init_thread.  Run as a singleton (no launcher).
 *
 * Natively it reports the time per iteration in ns.  Under
 *     valgrind --tool=callgrind
 * it is run twice with different N (e.g. 1000 and 11000); the difference
 * of the two instruction totals divided by the difference of N is the
 * instruction count per iteration (init/finalize cost cancels out).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *level_name(int l)
{
    if (l == MPI_THREAD_SINGLE) return "single";
    if (l == MPI_THREAD_FUNNELED) return "funneled";
    if (l == MPI_THREAD_SERIALIZED) return "serialized";
    if (l == MPI_THREAD_MULTIPLE) return "multiple";
    return "unknown";
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    const char *lvl = argc > 2 ? argv[2] : "single";
    const char *completion = argc > 3 ? argv[3] : "ignore";
    MPI_Status st[2];
    int mode;
    int required, provided = -1;
    char sbuf[8], rbuf[8];
    MPI_Request req[2];
    double t0, t1;
    long i;

    if (!strcmp(lvl, "single")) required = MPI_THREAD_SINGLE;
    else if (!strcmp(lvl, "funneled")) required = MPI_THREAD_FUNNELED;
    else if (!strcmp(lvl, "serialized")) required = MPI_THREAD_SERIALIZED;
    else if (!strcmp(lvl, "multiple")) required = MPI_THREAD_MULTIPLE;
    else {
        fprintf(stderr, "usage: %s [N] [single|funneled|serialized|multiple]\n", argv[0]);
        return 2;
    }
    if (!strcmp(completion, "ignore")) mode = 0;
    else if (!strcmp(completion, "statuses")) mode = 1;
    else if (!strcmp(completion, "wait")) mode = 2;
    else if (!strcmp(completion, "test")) mode = 3;
    else {
        fprintf(stderr, "usage: %s [N] [LEVEL] [ignore|statuses|wait|test]\n", argv[0]);
        return 2;
    }
    if (n < 0) n = 0;
    memset(sbuf, 1, sizeof sbuf);
    memset(rbuf, 0, sizeof rbuf);

    MPI_Init_thread(&argc, &argv, required, &provided);
    t0 = MPI_Wtime();
    for (i = 0; i < n; i++) {
        MPI_Irecv(rbuf, 8, MPI_BYTE, 0, 0, MPI_COMM_SELF, &req[0]);
        MPI_Isend(sbuf, 8, MPI_BYTE, 0, 0, MPI_COMM_SELF, &req[1]);
        if (mode == 0)
            MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
        else if (mode == 1)
            MPI_Waitall(2, req, st);
        else if (mode == 2) {
            MPI_Wait(&req[0], &st[0]);
            MPI_Wait(&req[1], &st[1]);
        } else {
            int done = 0;
            while (!done)
                MPI_Test(&req[0], &done, &st[0]);
            done = 0;
            while (!done)
                MPI_Test(&req[1], &done, &st[1]);
        }
    }
    if (n > 0 && mode != 0 && (st[0].MPI_SOURCE != 0 || st[0].MPI_TAG != 0)) {
        fprintf(stderr, "self_overhead: wrong receive status\n");
        MPI_Abort(MPI_COMM_SELF, 1);
    }
    t1 = MPI_Wtime();
    if (n > 0 && rbuf[0] != 1) {
        fprintf(stderr, "self_overhead: receive buffer not filled\n");
        MPI_Abort(MPI_COMM_SELF, 1);
    }
    printf("# hympi-bench self_overhead iterations %ld required %s provided %s completion %s\n",
           n, level_name(required), level_name(provided), completion);
    printf("# Size      Time per iteration (ns)\n");
    printf("%-10d%18.2f\n", 8, n > 0 ? (t1 - t0) * 1e9 / (double)n : 0.0);
    MPI_Finalize();
    return 0;
}
