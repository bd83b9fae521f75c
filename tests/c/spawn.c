/* spawn: MPI_Comm_spawn, MPI_Comm_spawn_multiple and MPI_Comm_get_parent (MPI-5.0 §11.8). The parents (all ranks of
 * MPI_COMM_WORLD) spawn 3 copies of this program with arguments, root the last rank:
 *   - MPI_Comm_spawn gives an intercommunicator with the parents as local group and the 3
 *     children as remote group; every error code is MPI_SUCCESS;
 *   - in the children: MPI_Comm_get_parent is that intercommunicator (the parents' size as
 *     remote size), their own MPI_COMM_WORLD has 3 ranks, the arguments arrived in order
 *     (one of them with a space), MPI_APPNUM is 0;
 *   - messages between every parent and every child, a 1 MiB one too; an intercommunicator
 *     MPI_Bcast from the parents' root and MPI_Allreduce; MPI_Intercomm_merge (parents
 *     first) with an allreduce; MPI_Comm_disconnect, after which the children's
 *     MPI_Comm_get_parent is MPI_COMM_NULL; the children report their error count to the
 *     parents before;
 *   - MPI_Comm_spawn_multiple of two commands (2 + 1 processes, root rank 0): one
 *     MPI_COMM_WORLD of 3 with MPI_APPNUM 0, 0, 1 and each command's arguments;
 *   - a spawn of 1 child from MPI_COMM_SELF of rank 0 (a nested job of its own), with
 *     info wdir;
 *   - errors under MPI_ERRORS_RETURN: spawning a program that does not exist, a program that
 *     ends without calling MPI_Init, and maxprocs 0 give MPI_ERR_SPAWN with the error code
 *     set, and MPI_COMM_NULL.
 * In a process that was not spawned, MPI_Comm_get_parent is MPI_COMM_NULL.
 * Other MPIs: skipped, as connect_accept.c explains (Debian's MPICH with ch4:ucx and Open
 * MPI 4.1 without its PMIx server cannot spawn here). */
#include "mtest.h"
#include <unistd.h>

#define BIG (1 << 20)
#define NCHILD 3

/* Traffic and collectives on intercommunicator `ic`; `parents` tells the side. */
static void exercise(MPI_Comm ic, int parents)
{
    int lrank, lsize, rsize;
    MPI_Comm_rank(ic, &lrank);
    MPI_Comm_size(ic, &lsize);
    MPI_Comm_remote_size(ic, &rsize);
    for (int r = 0; r < rsize; r++) {
        int out = 100 * parents + 10 * lrank + r, in = -1;
        MPI_Sendrecv(&out, 1, MPI_INT, r, 1, &in, 1, MPI_INT, r, 1, ic, MPI_STATUS_IGNORE);
        CHECK(in == 100 * !parents + 10 * r + lrank, "from remote rank %d got %d", r, in);
    }
    if (lrank < rsize) {
        unsigned char *a = malloc(BIG), *b = malloc(BIG);
        MTest_Fill_bytes(a, BIG, 5 + 2 * lrank + parents);
        MPI_Sendrecv(a, BIG, MPI_BYTE, lrank, 2, b, BIG, MPI_BYTE, lrank, 2, ic, MPI_STATUS_IGNORE);
        long bad = MTest_Verify_bytes(b, BIG, 5 + 2 * lrank + !parents);
        CHECK(bad < 0, "large message wrong at byte %ld", bad);
        free(a);
        free(b);
    }
    int v = parents ? 99 : -1;
    if (parents)
        MPI_Bcast(&v, 1, MPI_INT, lrank == lsize - 1 ? MPI_ROOT : MPI_PROC_NULL, ic);
    else
        MPI_Bcast(&v, 1, MPI_INT, rsize - 1, ic);
    CHECK(v == 99, "broadcast gave %d", v);
    int one = lrank + 1, sum = -1;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, ic);
    CHECK(sum == rsize * (rsize + 1) / 2, "intercommunicator allreduce %d", sum);
    MPI_Comm merged;
    MPI_Intercomm_merge(ic, !parents, &merged);
    int mr = -1, ms = -1, all = -1;
    MPI_Comm_rank(merged, &mr);
    MPI_Comm_size(merged, &ms);
    CHECK(ms == lsize + rsize && mr == (parents ? lrank : rsize + lrank), "merged %d of %d", mr,
          ms);
    MPI_Allreduce(&mr, &all, 1, MPI_INT, MPI_SUM, merged);
    CHECK(all == ms * (ms - 1) / 2, "merged allreduce %d", all);
    MPI_Comm_free(&merged);
}

static int child_main(int argc, char **argv, MPI_Comm parent)
{
    int size, appnum = -1, flag = 0, *attr;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int nested = argc > 2 && strcmp(argv[2], "nested") == 0;
    int multi = argc > 3 && strcmp(argv[2], "multi") == 0;
    CHECK(size == (nested ? 1 : NCHILD), "children's world has %d ranks", size);
    if (!nested && !multi)
        CHECK(argc == 4 && strcmp(argv[2], "two words") == 0 && strcmp(argv[3], "3") == 0,
              "arguments (argc %d)", argc);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &attr, &flag);
    if (flag)
        appnum = *attr;
    /* MPI_Comm_spawn_multiple: ranks 0-1 run command "A" (MPI_APPNUM 0), rank 2 "B" (1). */
    int want_app = multi ? strcmp(argv[3], "B") == 0 : 0;
    CHECK(flag && appnum == want_app, "MPI_APPNUM %d (flag %d), expected %d", appnum, flag,
          want_app);
    if (multi)
        CHECK((mtest_rank == 2) == want_app, "rank %d runs command %s", mtest_rank, argv[3]);
    int inter = 0;
    MPI_Comm_test_inter(parent, &inter);
    CHECK(inter, "the parent communicator is not an intercommunicator");
    exercise(parent, 0);
    /* The parents' root collects the children's error counts. */
    int errs = mtest_errors, total = 0;
    MPI_Reduce(&errs, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (mtest_rank == 0)
        MPI_Send(&total, 1, MPI_INT, 0, 3, parent);
    MPI_Comm_disconnect(&parent);
    MPI_Comm again;
    MPI_Comm_get_parent(&again);
    CHECK(again == MPI_COMM_NULL, "MPI_Comm_get_parent after MPI_Comm_disconnect");
    MPI_Finalize();
    return 0;
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(lib, &len);
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL)
        return child_main(argc, argv, parent);
    if (!strstr(lib, "hympi")) {
        MTest_Skip("MPI_Comm_spawn is not usable with this MPI here");
        return MTest_Finalize(0);
    }
    MTest_Errors_return_all();
    int root = mtest_size - 1;

    /* Spawn NCHILD copies of this program. */
    char *args[] = {"child", "two words", "3", NULL};
    int codes[NCHILD] = {-1, -1, -1};
    MPI_Comm ic = MPI_COMM_NULL;
    int rc = MPI_Comm_spawn(argv[0], args, NCHILD, MPI_INFO_NULL, root, MPI_COMM_WORLD, &ic, codes);
    CHECK_RC(rc, "MPI_Comm_spawn");
    for (int i = 0; i < NCHILD; i++)
        CHECK(codes[i] == MPI_SUCCESS, "error code %d is %d", i, codes[i]);
    if (rc == MPI_SUCCESS) {
        int rsize = -1;
        MPI_Comm_remote_size(ic, &rsize);
        CHECK(rsize == NCHILD, "remote size %d", rsize);
        exercise(ic, 1);
        if (mtest_rank == 0) {
            int child_errs = -1;
            MPI_Recv(&child_errs, 1, MPI_INT, 0, 3, ic, MPI_STATUS_IGNORE);
            CHECK(child_errs == 0, "the children found %d errors", child_errs);
        }
        rc = MPI_Comm_disconnect(&ic);
        CHECK_RC(rc, "MPI_Comm_disconnect");
    }

    /* MPI_Comm_spawn_multiple: two commands (2 + 1 processes) in one MPI_COMM_WORLD. */
    {
        char *a_args[] = {"child", "multi", "A", NULL}, *b_args[] = {"child", "multi", "B", NULL};
        char *cmds[2] = {argv[0], argv[0]};
        char **argvs[2] = {a_args, b_args};
        int nprocs[2] = {2, 1}, mcodes[NCHILD] = {-1, -1, -1};
        MPI_Info infos[2] = {MPI_INFO_NULL, MPI_INFO_NULL};
        rc = MPI_Comm_spawn_multiple(2, cmds, argvs, nprocs, infos, 0, MPI_COMM_WORLD, &ic, mcodes);
        CHECK_RC(rc, "MPI_Comm_spawn_multiple");
        for (int i = 0; i < NCHILD; i++)
            CHECK(mcodes[i] == MPI_SUCCESS, "spawn_multiple error code %d is %d", i, mcodes[i]);
        if (rc == MPI_SUCCESS) {
            exercise(ic, 1);
            if (mtest_rank == 0) {
                int child_errs = -1;
                MPI_Recv(&child_errs, 1, MPI_INT, 0, 3, ic, MPI_STATUS_IGNORE);
                CHECK(child_errs == 0, "the spawn_multiple children found %d errors", child_errs);
            }
            MPI_Comm_disconnect(&ic);
        }
    }

    /* A nested job of one child from rank 0 alone, with info wdir (the current directory). */
    if (mtest_rank == 0) {
        char *nargs[] = {"child", "nested", NULL}, cwd[4096];
        MPI_Info info;
        MPI_Info_create(&info);
        if (getcwd(cwd, sizeof cwd))
            MPI_Info_set(info, "wdir", cwd);
        rc = MPI_Comm_spawn(argv[0], nargs, 1, info, 0, MPI_COMM_SELF, &ic, MPI_ERRCODES_IGNORE);
        CHECK_RC(rc, "MPI_Comm_spawn from MPI_COMM_SELF");
        MPI_Info_free(&info);
        if (rc == MPI_SUCCESS) {
            exercise(ic, 1);
            int child_errs = -1;
            MPI_Recv(&child_errs, 1, MPI_INT, 0, 3, ic, MPI_STATUS_IGNORE);
            CHECK(child_errs == 0, "the nested child found %d errors", child_errs);
            MPI_Comm_disconnect(&ic);
        }
    }

    /* Errors. */
    struct {
        const char *cmd;
        int n;
        const char *what;
    } bad[] = {
        {"./no-such-program-to-spawn", 2, "a program that does not exist"},
        {"/bin/true", 2, "a program that never calls MPI_Init"},
        {argv[0], 0, "maxprocs 0"},
    };
    for (int k = 0; k < 3; k++) {
        int c[2] = {-1, -1};
        ic = MPI_COMM_NULL;
        rc = MPI_Comm_spawn(bad[k].cmd, args, bad[k].n, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &ic, c);
        CHECK_CLASS(rc, MPI_ERR_SPAWN, bad[k].what);
        CHECK(ic == MPI_COMM_NULL, "%s: a communicator was returned", bad[k].what);
        if (mtest_rank == 0 && bad[k].n > 0)
            CHECK(c[0] == MPI_ERR_SPAWN && c[1] == MPI_ERR_SPAWN, "%s: error codes %d %d",
                  bad[k].what, c[0], c[1]);
    }
    return MTest_Finalize(0);
}
