/* info_basic: every MPI_Info_* function on user info objects.
 *
 * create/set/get_nkeys/get_nthkey (insertion order, a replaced value keeps its place),
 * get_string (buflen in/out: on return the size needed including the NUL; a short buffer
 * gets a truncated, NUL-terminated value; buflen 0 leaves the buffer alone; a missing key
 * sets flag = 0 and leaves buflen and the buffer alone), the deprecated get (valuelen
 * characters plus NUL) and get_valuelen, delete, dup (independent copy, same order), free
 * (handle becomes MPI_INFO_NULL); keys and values at the longest accepted length. */
#include "mtest.h"

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    int rc, n = -1, flag = -1, len;
    char key[MPI_MAX_INFO_KEY + 1], val[MPI_MAX_INFO_VAL + 1];
    MPI_Info info, dup;

    rc = MPI_Info_create(&info);
    CHECK_RC(rc, "MPI_Info_create");
    MPI_Info_get_nkeys(info, &n);
    CHECK(n == 0, "new info has %d keys", n);

    CHECK_RC(MPI_Info_set(info, "alpha", "1"), "set alpha");
    CHECK_RC(MPI_Info_set(info, "beta", "hello world"), "set beta");
    CHECK_RC(MPI_Info_set(info, "gamma", ""), "set gamma (empty value)");
    CHECK_RC(MPI_Info_set(info, "alpha", "one"), "set alpha again");
    MPI_Info_get_nkeys(info, &n);
    CHECK(n == 3, "nkeys %d, expected 3", n);
    const char *order[3] = {"alpha", "beta", "gamma"};
    for (int i = 0; i < 3 && i < n; i++) {
        rc = MPI_Info_get_nthkey(info, i, key);
        CHECK_RC(rc, "MPI_Info_get_nthkey");
        CHECK(strcmp(key, order[i]) == 0, "key %d is '%s', expected '%s'", i, key, order[i]);
    }

    /* get_string: full buffer. */
    len = sizeof val;
    rc = MPI_Info_get_string(info, "beta", &len, val, &flag);
    CHECK_RC(rc, "MPI_Info_get_string(beta)");
    CHECK(flag == 1, "flag %d", flag);
    CHECK(strcmp(val, "hello world") == 0, "value '%s'", val);
    CHECK(len == 12, "buflen on return %d, expected 12 (11 characters + NUL)", len);
    /* Exactly fitting buffer. */
    len = 12;
    memset(val, 'z', sizeof val);
    rc = MPI_Info_get_string(info, "beta", &len, val, &flag);
    CHECK_RC(rc, "MPI_Info_get_string(beta, buflen 12)");
    CHECK(strcmp(val, "hello world") == 0 && len == 12, "value '%s', buflen %d", val, len);
    /* Truncation: 5 bytes hold 4 characters and the NUL. */
    len = 5;
    memset(val, 'z', sizeof val);
    rc = MPI_Info_get_string(info, "beta", &len, val, &flag);
    CHECK_RC(rc, "MPI_Info_get_string(beta, buflen 5)");
    CHECK(flag == 1, "flag %d", flag);
    CHECK(memcmp(val, "hell", 5) == 0, "truncated value '%.5s', expected 'hell'", val);
    CHECK(val[5] == 'z', "get_string wrote past buflen");
    CHECK(len == 12, "buflen on return %d, expected 12", len);
    /* buflen 0: size query, buffer untouched. */
    len = 0;
    memset(val, 'z', sizeof val);
    rc = MPI_Info_get_string(info, "beta", &len, val, &flag);
    CHECK_RC(rc, "MPI_Info_get_string(beta, buflen 0)");
    CHECK(flag == 1 && len == 12, "flag %d, buflen %d", flag, len);
    CHECK(val[0] == 'z', "buffer changed with buflen 0");
    /* Empty value. */
    len = sizeof val;
    rc = MPI_Info_get_string(info, "gamma", &len, val, &flag);
    CHECK_RC(rc, "MPI_Info_get_string(gamma)");
    CHECK(flag == 1 && val[0] == 0 && len == 1, "empty value: flag %d, '%s', buflen %d", flag, val, len);
    /* Missing key. */
    len = 7;
    strcpy(val, "keep");
    rc = MPI_Info_get_string(info, "delta", &len, val, &flag);
    CHECK_RC(rc, "MPI_Info_get_string(delta)");
    CHECK(flag == 0, "missing key: flag %d", flag);
    CHECK(len == 7 && strcmp(val, "keep") == 0, "missing key changed buflen (%d) or value ('%s')", len, val);

    /* Deprecated get / get_valuelen. */
    memset(val, 'z', sizeof val);
    rc = MPI_Info_get(info, "alpha", MPI_MAX_INFO_VAL, val, &flag);
    CHECK_RC(rc, "MPI_Info_get(alpha)");
    CHECK(flag == 1 && strcmp(val, "one") == 0, "get(alpha): flag %d, '%s'", flag, val);
    memset(val, 'z', sizeof val);
#ifdef MPICH_VERSION
    MTest_Errors_return_all();
#endif
    rc = MPI_Info_get(info, "beta", 3, val, &flag);
#ifndef MPICH_VERSION
    /* MPICH 4.0 reports MPI_ERR_INFO_VALUE on truncation (the standard says truncate). */
    CHECK_RC(rc, "MPI_Info_get(beta, valuelen 3)");
#endif
    CHECK(flag == 1 && memcmp(val, "hel", 4) == 0, "get(beta, 3): flag %d, '%.4s'", flag, val);
    CHECK(val[4] == 'z', "MPI_Info_get wrote past valuelen + 1");
    flag = -1;
    strcpy(val, "keep");
    rc = MPI_Info_get(info, "delta", MPI_MAX_INFO_VAL, val, &flag);
    CHECK_RC(rc, "MPI_Info_get(delta)");
    CHECK(flag == 0 && strcmp(val, "keep") == 0, "get(missing): flag %d, '%s'", flag, val);
    rc = MPI_Info_get_valuelen(info, "beta", &len, &flag);
    CHECK_RC(rc, "MPI_Info_get_valuelen(beta)");
    CHECK(flag == 1 && len == 11, "valuelen(beta): flag %d, %d", flag, len);
    len = 99;
    rc = MPI_Info_get_valuelen(info, "delta", &len, &flag);
    CHECK_RC(rc, "MPI_Info_get_valuelen(delta)");
    CHECK(flag == 0, "valuelen(missing): flag %d", flag);

    /* dup: same contents and order, independent afterwards. */
    rc = MPI_Info_dup(info, &dup);
    CHECK_RC(rc, "MPI_Info_dup");
    MPI_Info_get_nkeys(dup, &n);
    CHECK(n == 3, "dup has %d keys", n);
    for (int i = 0; i < 3 && i < n; i++) {
        MPI_Info_get_nthkey(dup, i, key);
        CHECK(strcmp(key, order[i]) == 0, "dup key %d is '%s'", i, key);
    }
    MPI_Info_set(dup, "alpha", "changed");
    MPI_Info_get(info, "alpha", MPI_MAX_INFO_VAL, val, &flag);
    CHECK(strcmp(val, "one") == 0, "changing the dup changed the original: '%s'", val);

    /* delete: the later keys move down. */
    rc = MPI_Info_delete(info, "alpha");
    CHECK_RC(rc, "MPI_Info_delete(alpha)");
    MPI_Info_get_nkeys(info, &n);
    CHECK(n == 2, "after delete: %d keys", n);
    MPI_Info_get_nthkey(info, 0, key);
    CHECK(strcmp(key, "beta") == 0, "after delete key 0 is '%s'", key);
    MPI_Info_get(info, "alpha", MPI_MAX_INFO_VAL, val, &flag);
    CHECK(flag == 0, "deleted key still found");
    MPI_Info_get_nkeys(dup, &n);
    CHECK(n == 3, "deleting from the original changed the dup (%d keys)", n);

    /* Longest accepted key and value (MPI_MAX_INFO_KEY - 1 and MPI_MAX_INFO_VAL - 1
     * characters, which every implementation accepts). */
    memset(key, 'k', sizeof key);
    key[MPI_MAX_INFO_KEY - 1] = 0;
    memset(val, 'v', sizeof val);
    val[MPI_MAX_INFO_VAL - 1] = 0;
    rc = MPI_Info_set(info, key, val);
    CHECK_RC(rc, "MPI_Info_set(longest key and value)");
    char back[MPI_MAX_INFO_VAL + 1];
    len = sizeof back;
    rc = MPI_Info_get_string(info, key, &len, back, &flag);
    CHECK_RC(rc, "MPI_Info_get_string(longest)");
    CHECK(flag == 1 && strcmp(back, val) == 0 && len == MPI_MAX_INFO_VAL, "longest: flag %d, buflen %d", flag, len);
    char k2[MPI_MAX_INFO_KEY + 1];
    MPI_Info_get_nthkey(info, 2, k2);
    CHECK(strcmp(k2, key) == 0, "longest key not returned intact by get_nthkey");

    /* free. */
    rc = MPI_Info_free(&dup);
    CHECK_RC(rc, "MPI_Info_free(dup)");
    CHECK(dup == MPI_INFO_NULL, "MPI_Info_free did not set MPI_INFO_NULL");
    rc = MPI_Info_free(&info);
    CHECK_RC(rc, "MPI_Info_free(info)");
    CHECK(info == MPI_INFO_NULL, "MPI_Info_free did not set MPI_INFO_NULL");

    /* Many objects at once, freed in another order. */
    MPI_Info many[50];
    for (int i = 0; i < 50; i++) {
        char v[16];
        snprintf(v, sizeof v, "%d", i);
        MPI_Info_create(&many[i]);
        MPI_Info_set(many[i], "i", v);
    }
    for (int i = 0; i < 50; i += 2)
        MPI_Info_free(&many[i]);
    for (int i = 1; i < 50; i += 2) {
        char v[16];
        MPI_Info_get(many[i], "i", 15, v, &flag);
        CHECK(flag == 1 && atoi(v) == i, "info %d holds '%s'", i, v);
        MPI_Info_free(&many[i]);
    }
    return MTest_Finalize(0);
}
