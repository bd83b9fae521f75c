/* info_env: MPI_INFO_ENV, MPI_Info_create_env, and info objects before MPI_Init and after
 * MPI_Finalize (MPI-4.1 section 11.4.1 lets the info functions run at any time).
 *
 * MPI_INFO_ENV holds only keys the standard names (command, argv, maxprocs, soft, host, arch,
 * wdir, file, thread_level), each with a value; unknown ones are absent. When present,
 * "command" names this program, "argv" lists the arguments after it, "maxprocs" is the world
 * size. MPI_Info_create_env(argc, argv) gives a new,
 * freeable object built the same way; MPI_Info_dup(MPI_INFO_ENV) too. Under hympi, command,
 * argv and maxprocs must be there, before MPI_Init as well. */
#include "mtest.h"

static const char *allowed[] = {"command", "argv", "maxprocs", "soft", "host",
                                "arch", "wdir", "file", "thread_level"};

static int has(MPI_Info info, const char *key, char *val)
{
    int flag = 0, len = MPI_MAX_INFO_VAL + 1;
    MPI_Info_get_string(info, key, &len, val, &flag);
    return flag;
}

static void check_env(MPI_Info info, const char *what, int argc, char **argv, int inited)
{
    int n = -1;
    char key[MPI_MAX_INFO_KEY + 1], val[MPI_MAX_INFO_VAL + 1];
    int rc = MPI_Info_get_nkeys(info, &n);
    CHECK_RC(rc, what);
    for (int i = 0; i < n; i++) {
        MPI_Info_get_nthkey(info, i, key);
        int ok = 0;
        for (size_t j = 0; j < sizeof allowed / sizeof *allowed; j++)
            ok |= strcmp(key, allowed[j]) == 0;
        CHECK(ok, "%s: key '%s' is not one the standard lists", what, key);
        CHECK(has(info, key, val), "%s: key '%s' listed but not found", what, key);
    }
    if (has(info, "command", val)) {
        const char *base = strrchr(argv[0], '/');
        base = base ? base + 1 : argv[0];
        CHECK(strstr(val, base) != NULL, "%s: command '%s' does not name '%s'", what, val, base);
    }
    if (has(info, "argv", val) && argc > 1)
        CHECK(strstr(val, argv[1]) != NULL, "%s: argv '%s' lacks '%s'", what, val, argv[1]);
    if (inited && has(info, "maxprocs", val))
        CHECK(atoi(val) == mtest_size, "%s: maxprocs %s, size %d", what, val, mtest_size);
#ifdef HYMPI
    CHECK(has(info, "command", val), "%s: no command", what);
    if (argc > 1) {
        CHECK(has(info, "argv", val), "%s: no argv", what);
        CHECK(strcmp(val, "alpha beta") == 0, "%s: argv '%s', expected 'alpha beta'", what, val);
    }
    /* Known before MPI_Init too (the launcher's process count). */
    CHECK(has(info, "maxprocs", val), "%s: no maxprocs", what);
#endif
}

int main(int argc, char **argv)
{
    /* Before MPI_Init. */
    MPI_Info early, env0;
    int rc = MPI_Info_create(&early), flag = 0;
    char val[MPI_MAX_INFO_VAL + 1];
    int pre = rc == MPI_SUCCESS;
    if (pre) {
        pre &= MPI_Info_set(early, "made", "before init") == MPI_SUCCESS;
        pre &= MPI_Info_create_env(argc, argv, &env0) == MPI_SUCCESS;
    }

    MTest_Init(&argc, &argv);
    CHECK(pre, "info functions failed before MPI_Init");
    if (pre) {
        MPI_Info_get(early, "made", MPI_MAX_INFO_VAL, val, &flag);
        CHECK(flag && strcmp(val, "before init") == 0, "object made before init: flag %d '%s'", flag, val);
        MPI_Info_free(&early);
        check_env(env0, "create_env before init", argc, argv, 0);
        MPI_Info_free(&env0);
    }

    check_env(MPI_INFO_ENV, "MPI_INFO_ENV", argc, argv, 1);

    MPI_Info env;
    rc = MPI_Info_create_env(argc, argv, &env);
    CHECK_RC(rc, "MPI_Info_create_env");
    check_env(env, "MPI_Info_create_env", argc, argv, 1);
    rc = MPI_Info_free(&env);
    CHECK_RC(rc, "MPI_Info_free(create_env result)");

    MPI_Info d;
    rc = MPI_Info_dup(MPI_INFO_ENV, &d);
    CHECK_RC(rc, "MPI_Info_dup(MPI_INFO_ENV)");
    int n1 = -1, n2 = -2;
    MPI_Info_get_nkeys(MPI_INFO_ENV, &n1);
    MPI_Info_get_nkeys(d, &n2);
    CHECK(n1 == n2, "dup of MPI_INFO_ENV has %d keys, MPI_INFO_ENV %d", n2, n1);
    MPI_Info_free(&d);

    rc = MPI_Info_create_env(0, NULL, &env);
    CHECK_RC(rc, "MPI_Info_create_env(0, NULL)");
    MPI_Info_free(&env);

    int errs = MTest_Sum_errors(0);
    MPI_Finalize();

    /* After MPI_Finalize. */
    MPI_Info late;
    int post = MPI_Info_create(&late) == MPI_SUCCESS;
    if (post) {
        post &= MPI_Info_set(late, "k", "after") == MPI_SUCCESS;
        flag = 0;
        post &= MPI_Info_get(late, "k", MPI_MAX_INFO_VAL, val, &flag) == MPI_SUCCESS;
        post &= flag && strcmp(val, "after") == 0;
        post &= MPI_Info_free(&late) == MPI_SUCCESS;
    }
    if (!post) {
        printf("[%d] info functions failed after MPI_Finalize\n", mtest_rank);
        errs++;
    }
    /* Rank 0 reports for everyone, counting its own post-finalize result. */
    if (mtest_rank == 0) {
        if (errs == 0)
            printf(" No Errors\n");
        else
            printf(" Found %d errors\n", errs);
    }
    return errs != 0;
}
