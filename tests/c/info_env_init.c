/* info_env_init.c: MPI_Info_create_env gives the same information before MPI_Init as after
 * it (MPI-4.0: it may be called at any time and returns the same keys and values as
 * MPI_INFO_ENV), and after MPI_Init its contents match MPI_INFO_ENV's.  "maxprocs", when
 * present, is the number of processes started (MPI_COMM_WORLD's size). */
#include "mtest.h"

static void dump(MPI_Info info, char keys[][MPI_MAX_INFO_KEY + 1], char vals[][256], int *n)
{
    MPI_Info_get_nkeys(info, n);
    for (int i = 0; i < *n && i < 32; i++) {
        int len = 255, flag = 0;
        MPI_Info_get_nthkey(info, i, keys[i]);
        MPI_Info_get_string(info, keys[i], &len, vals[i], &flag);
        if (!flag)
            vals[i][0] = '\0';
    }
}

/* Every key of (ak, av) is in (bk, bv) with the same value. */
static void subset(const char *what, char ak[][MPI_MAX_INFO_KEY + 1], char av[][256], int an,
                   char bk[][MPI_MAX_INFO_KEY + 1], char bv[][256], int bn)
{
    for (int i = 0; i < an; i++) {
        int found = 0;
        for (int j = 0; j < bn; j++)
            if (!strcmp(ak[i], bk[j])) {
                found = 1;
                CHECK(!strcmp(av[i], bv[j]), "%s: key %s is \"%s\" in one, \"%s\" in the other",
                      what, ak[i], av[i], bv[j]);
            }
        CHECK(found, "%s: key \"%s\" (\"%s\") missing from the other", what, ak[i], av[i]);
    }
}

static char k0[32][MPI_MAX_INFO_KEY + 1], v0[32][256], k1[32][MPI_MAX_INFO_KEY + 1],
    v1[32][256], k2[32][MPI_MAX_INFO_KEY + 1], v2[32][256];

int main(int argc, char **argv)
{
    MPI_Info before, after;
    int n0, n1, n2;
    int rc0 = MPI_Info_create_env(argc, argv, &before);
    if (rc0 == MPI_SUCCESS)
        dump(before, k0, v0, &n0);
    MTest_Init(&argc, &argv);
    CHECK_RC(rc0, "MPI_Info_create_env before MPI_Init");
    CHECK_RC(MPI_Info_create_env(argc, argv, &after), "MPI_Info_create_env after MPI_Init");
    dump(after, k1, v1, &n1);
    dump(MPI_INFO_ENV, k2, v2, &n2);
    if (rc0 == MPI_SUCCESS) {
        CHECK(n0 == n1, "MPI_Info_create_env has %d keys before MPI_Init, %d after", n0, n1);
        subset("before vs after", k0, v0, n0, k1, v1, n1);
        subset("after vs before", k1, v1, n1, k0, v0, n0);
        MPI_Info_free(&before);
    }
    CHECK(n1 == n2, "MPI_Info_create_env has %d keys, MPI_INFO_ENV %d", n1, n2);
    subset("create_env vs MPI_INFO_ENV", k1, v1, n1, k2, v2, n2);
    subset("MPI_INFO_ENV vs create_env", k2, v2, n2, k1, v1, n1);
    for (int i = 0; i < n1; i++) {
        if (!strcmp(k1[i], "maxprocs"))
            CHECK(atoi(v1[i]) == mtest_size, "maxprocs is %s, the job has %d processes", v1[i],
                  mtest_size);
        if (mtest_rank == 0 && getenv("INFO_ENV_VERBOSE"))
            printf("%s = %s\n", k1[i], v1[i]);
    }
    MPI_Info_free(&after);
    return MTest_Finalize(mtest_errors);
}
