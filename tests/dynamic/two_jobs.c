/* two_jobs: MPI_Comm_accept / MPI_Comm_connect between two jobs launched apart (the
 * standard's client/server example, MPI-5.0 §11.10.4). Run by tests/dynamic/run.
 *
 *   two_jobs server FILE   rank 0 opens a port and writes its name to FILE; the job accepts
 *   two_jobs client FILE   rank 0 reads the name from FILE (waiting for it); the job connects
 *   two_jobs pserver NAME, two_jobs pclient NAME: the same, the port published under
 *                          service NAME (MPI_Publish_name, MPI_Lookup_name)
 *
 * Both sides then check, on the intercommunicator: sizes; a message between every pair of
 * processes of the two jobs, and a large one (1 MiB) with the process of the same rank;
 * MPI_Bcast from the server's rank 0 and MPI_Allreduce; MPI_Intercomm_merge (server first)
 * with an allreduce on it and an MPI_Comm_split of it into two halves (new context ids
 * agreed across the jobs) with an allreduce on each; then MPI_Comm_disconnect. Each job's
 * rank 0 prints " No Errors" or the count of failed checks. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BIG (1 << 20)

static int errs, rank;

#define CHECK(c, ...)                                      \
    do {                                                   \
        if (!(c)) {                                        \
            errs++;                                        \
            printf("[%d] check failed: %s: ", rank, #c);   \
            printf(__VA_ARGS__);                           \
            printf("\n");                                  \
            fflush(stdout);                                \
        }                                                  \
    } while (0)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc < 3) {
        fprintf(stderr, "usage: two_jobs server|client FILE\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* "pserver"/"pclient": the port goes through the name service, FILE is the service. */
    int named = argv[1][0] == 'p';
    int server = strcmp(argv[1] + named, "server") == 0, size;
    const char *file = argv[2];
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char port[MPI_MAX_PORT_NAME] = "";
    MPI_Comm ic;
    if (server) {
        if (rank == 0 && named) {
            MPI_Open_port(MPI_INFO_NULL, port);
            MPI_Publish_name(file, MPI_INFO_NULL, port);
        } else if (rank == 0) {
            MPI_Open_port(MPI_INFO_NULL, port);
            char tmp[4096];
            snprintf(tmp, sizeof tmp, "%s.tmp", file);
            FILE *f = fopen(tmp, "w");
            fprintf(f, "%s\n", port);
            fclose(f);
            rename(tmp, file);
        }
        MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic);
    } else {
        if (rank == 0 && named) {
            /* Until the server has published it. */
            MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
            MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
            while (MPI_Lookup_name(file, MPI_INFO_NULL, port) != MPI_SUCCESS)
                usleep(10000);
            MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
        } else if (rank == 0) {
            FILE *f;
            while (!(f = fopen(file, "r")))
                usleep(10000);
            if (!fgets(port, sizeof port, f))
                port[0] = 0;
            fclose(f);
            port[strcspn(port, "\n")] = 0;
        }
        MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic);
    }
    int rsize = -1, lsize = -1;
    MPI_Comm_size(ic, &lsize);
    MPI_Comm_remote_size(ic, &rsize);
    CHECK(lsize == size, "local size %d", lsize);
    /* Every pair: this rank's number and side, answered by the other's. */
    for (int r = 0; r < rsize; r++) {
        int out = 1000 * server + 10 * rank + r, in = -1;
        MPI_Sendrecv(&out, 1, MPI_INT, r, 1, &in, 1, MPI_INT, r, 1, ic, MPI_STATUS_IGNORE);
        CHECK(in == 1000 * !server + 10 * r + rank, "from remote rank %d got %d", r, in);
    }
    if (rank < rsize) {
        unsigned char *a = malloc(BIG), *b = malloc(BIG);
        for (int i = 0; i < BIG; i++)
            a[i] = (unsigned char)(i * 7 + rank + 3 * server);
        MPI_Sendrecv(a, BIG, MPI_BYTE, rank, 2, b, BIG, MPI_BYTE, rank, 2, ic, MPI_STATUS_IGNORE);
        int bad = -1;
        for (int i = 0; i < BIG && bad < 0; i++)
            if (b[i] != (unsigned char)(i * 7 + rank + 3 * !server))
                bad = i;
        CHECK(bad < 0, "large message wrong at byte %d", bad);
        free(a);
        free(b);
    }
    int v = server ? 777 : -1;
    if (server)
        MPI_Bcast(&v, 1, MPI_INT, rank == 0 ? MPI_ROOT : MPI_PROC_NULL, ic);
    else
        MPI_Bcast(&v, 1, MPI_INT, 0, ic);
    CHECK(v == 777, "broadcast gave %d", v);
    int one = rank + 1, sum = -1;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, ic);
    CHECK(sum == rsize * (rsize + 1) / 2, "intercommunicator allreduce %d", sum);
    MPI_Comm merged, halfc;
    MPI_Intercomm_merge(ic, !server, &merged);
    int mr = -1, ms = -1, all = -1;
    MPI_Comm_rank(merged, &mr);
    MPI_Comm_size(merged, &ms);
    CHECK(ms == lsize + rsize, "merged size %d", ms);
    CHECK(mr == (server ? rank : rsize + rank), "merged rank %d", mr);
    MPI_Allreduce(&mr, &all, 1, MPI_INT, MPI_SUM, merged);
    CHECK(all == ms * (ms - 1) / 2, "merged allreduce %d", all);
    MPI_Comm_split(merged, mr % 2, mr, &halfc);
    int hs = -1, hsum = -1;
    MPI_Comm_size(halfc, &hs);
    MPI_Allreduce(&mr, &hsum, 1, MPI_INT, MPI_SUM, halfc);
    int want = 0, cnt = 0;
    for (int i = mr % 2; i < ms; i += 2) {
        want += i;
        cnt++;
    }
    CHECK(hs == cnt && hsum == want, "half size %d sum %d, expected %d and %d", hs, hsum, cnt, want);
    MPI_Comm_free(&halfc);
    MPI_Comm_free(&merged);
    MPI_Comm_disconnect(&ic);
    if (server && rank == 0) {
        if (named)
            MPI_Unpublish_name(file, MPI_INFO_NULL, port);
        MPI_Close_port(port);
    }
    int total = 0;
    MPI_Reduce(&errs, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        if (total == 0)
            printf(" No Errors\n");
        else
            printf(" Found %d errors\n", total);
    }
    MPI_Finalize();
    return errs != 0;
}
