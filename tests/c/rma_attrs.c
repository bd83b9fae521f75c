/* rma_attrs: window attributes (caching), info hints and the big-count one-sided calls.
 *
 *  - MPI_Win_create_keyval with MPI_WIN_NULL_COPY_FN and a delete callback (arguments
 *    checked: window, keyval, value, extra_state); MPI_Win_set_attr / MPI_Win_get_attr;
 *    overwriting calls delete on the old value; MPI_Win_delete_attr calls it and get then
 *    gives flag 0; MPI_Win_free_keyval while attached (handle -> MPI_KEYVAL_INVALID);
 *    MPI_Win_free calls delete once for each attached attribute, with its value; a second
 *    keyval with MPI_WIN_NULL_DELETE_FN.
 *  - Info: a window created with no_locks=true, accumulate_ordering=none,
 *    accumulate_ops=same_op, same_size=true, same_disp_unit=true works with fences
 *    (put + accumulate ring); MPI_Win_get_info returns an info object (can be freed; the
 *    keys it reports have legal values); MPI_Win_set_info with accumulate_ordering=rar,raw
 *    and get again; MPI_Win_get_info of a window made with MPI_INFO_NULL.
 *  - MPI-4.0 (skipped before): MPI_Win_allocate_c, MPI_Win_create_c, MPI_Put_c, MPI_Get_c,
 *    MPI_Accumulate_c with small counts in a fence ring, MPI_Win_shared_query_c. */
#include "mtest.h"

static int me, np, right, left;

static int del_calls, del_bad;
static void *del_last_val;
static int extra_state_obj;
static MPI_Win expect_win;
static int expect_key;

static int del_fn(MPI_Win win, int keyval, void *val, void *extra)
{
    del_calls++;
    del_last_val = val;
    if (win != expect_win || extra != &extra_state_obj ||
        (expect_key != MPI_KEYVAL_INVALID && keyval != expect_key))
        del_bad++;
    return MPI_SUCCESS;
}

static void attributes(void)
{
    int rc, key = MPI_KEYVAL_INVALID, key2 = MPI_KEYVAL_INVALID, flag = -1, buf[4];
    static int v1, v2, v3, w2;
    MPI_Win w;
    rc = MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w);
    CHECK_RC(rc, "MPI_Win_create");
    rc = MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, del_fn, &key, &extra_state_obj);
    CHECK(rc == MPI_SUCCESS && key != MPI_KEYVAL_INVALID, "MPI_Win_create_keyval");
    rc = MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, &key2, NULL);
    CHECK(rc == MPI_SUCCESS && key2 != MPI_KEYVAL_INVALID && key2 != key,
          "MPI_Win_create_keyval (second)");
    expect_win = w;
    expect_key = key;

    void *got = NULL;
    rc = MPI_Win_get_attr(w, key, &got, &flag);
    CHECK(rc == MPI_SUCCESS && flag == 0, "get_attr before set: flag %d", flag);
    rc = MPI_Win_set_attr(w, key, &v1);
    CHECK_RC(rc, "MPI_Win_set_attr");
    rc = MPI_Win_set_attr(w, key2, &w2);
    CHECK_RC(rc, "MPI_Win_set_attr (second keyval)");
    flag = 0;
    rc = MPI_Win_get_attr(w, key, &got, &flag);
    CHECK(rc == MPI_SUCCESS && flag == 1 && got == &v1, "get_attr: flag %d, value %s", flag,
          got == &v1 ? "right" : "wrong");
    CHECK(del_calls == 0, "delete called %d times before any delete", del_calls);

    /* overwrite: delete on the old value */
    rc = MPI_Win_set_attr(w, key, &v2);
    CHECK_RC(rc, "MPI_Win_set_attr (overwrite)");
    CHECK(del_calls == 1 && del_last_val == &v1, "overwrite: %d delete calls, value %s",
          del_calls, del_last_val == &v1 ? "old" : "not the old one");
    flag = 0;
    MPI_Win_get_attr(w, key, &got, &flag);
    CHECK(flag == 1 && got == &v2, "get_attr after overwrite");

    /* delete */
    rc = MPI_Win_delete_attr(w, key);
    CHECK_RC(rc, "MPI_Win_delete_attr");
    CHECK(del_calls == 2 && del_last_val == &v2, "delete_attr: %d delete calls", del_calls);
    flag = -1;
    rc = MPI_Win_get_attr(w, key, &got, &flag);
    CHECK(rc == MPI_SUCCESS && flag == 0, "get_attr after delete: flag %d", flag);

    /* set again, free the keyval while attached, free the window */
    rc = MPI_Win_set_attr(w, key, &v3);
    CHECK_RC(rc, "MPI_Win_set_attr (again)");
    rc = MPI_Win_free_keyval(&key);
    CHECK(rc == MPI_SUCCESS && key == MPI_KEYVAL_INVALID, "MPI_Win_free_keyval: key %d", key);
    flag = 0;
    rc = MPI_Win_get_attr(w, key2, &got, &flag);
    CHECK(rc == MPI_SUCCESS && flag == 1 && got == &w2, "second keyval's attribute");
    expect_key = MPI_KEYVAL_INVALID; /* the freed keyval's value is not ours to compare */
    rc = MPI_Win_free(&w);
    CHECK(rc == MPI_SUCCESS && w == MPI_WIN_NULL, "MPI_Win_free");
    CHECK(del_calls == 3 && del_last_val == &v3, "MPI_Win_free: %d delete calls in all (3 "
          "expected), last value %s", del_calls, del_last_val == &v3 ? "right" : "wrong");
    CHECK(del_bad == 0, "delete callback got wrong arguments %d times", del_bad);
    rc = MPI_Win_free_keyval(&key2);
    CHECK(rc == MPI_SUCCESS && key2 == MPI_KEYVAL_INVALID, "MPI_Win_free_keyval (second)");
}

/* The info object from MPI_Win_get_info: the keys it has carry legal values. */
static void check_info(MPI_Info info, const char *what)
{
    int nkeys = -1, rc;
    CHECK(info != MPI_INFO_NULL, "%s: MPI_Win_get_info gave MPI_INFO_NULL", what);
    if (info == MPI_INFO_NULL)
        return;
    rc = MPI_Info_get_nkeys(info, &nkeys);
    CHECK(rc == MPI_SUCCESS && nkeys >= 0, "%s: MPI_Info_get_nkeys", what);
    static const char *bools[] = {"no_locks", "same_size", "same_disp_unit"};
    char val[MPI_MAX_INFO_VAL + 1];
    int flag;
    for (int k = 0; k < 3; k++) {
        flag = 0;
        MPI_Info_get(info, bools[k], MPI_MAX_INFO_VAL, val, &flag);
        if (flag)
            CHECK(strcmp(val, "true") == 0 || strcmp(val, "false") == 0, "%s: %s = '%s'", what,
                  bools[k], val);
    }
    flag = 0;
    MPI_Info_get(info, "accumulate_ops", MPI_MAX_INFO_VAL, val, &flag);
    if (flag)
        CHECK(strcmp(val, "same_op") == 0 || strcmp(val, "same_op_no_op") == 0,
              "%s: accumulate_ops = '%s'", what, val);
    flag = 0;
    MPI_Info_get(info, "accumulate_ordering", MPI_MAX_INFO_VAL, val, &flag);
    if (flag) {
        int ok = strcmp(val, "none") == 0;
        if (!ok) {
            char tmp[MPI_MAX_INFO_VAL + 1], *save = NULL;
            strcpy(tmp, val);
            ok = 1;
            for (char *t = strtok_r(tmp, ",", &save); t; t = strtok_r(NULL, ",", &save))
                if (strcmp(t, "rar") && strcmp(t, "raw") && strcmp(t, "war") && strcmp(t, "waw"))
                    ok = 0;
        }
        CHECK(ok, "%s: accumulate_ordering = '%s'", what, val);
    }
}

static void info_hints(void)
{
    int rc, *m = NULL;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "no_locks", "true");
    MPI_Info_set(info, "accumulate_ordering", "none");
    MPI_Info_set(info, "accumulate_ops", "same_op");
    MPI_Info_set(info, "same_size", "true");
    MPI_Info_set(info, "same_disp_unit", "true");
    MPI_Win w;
    rc = MPI_Win_allocate(4 * sizeof(int), sizeof(int), info, MPI_COMM_WORLD, &m, &w);
    CHECK_RC(rc, "MPI_Win_allocate with hints");
    MPI_Info_free(&info);

    /* The window works under its hints (fences only, one op per location). */
    m[0] = m[1] = -1;
    m[2] = m[3] = 0;
    int pv = 40 + me, one[2] = {1, 2};
    MPI_Win_fence(0, w);
    rc = MPI_Put(&pv, 1, MPI_INT, right, 0, 1, MPI_INT, w);
    CHECK_RC(rc, "MPI_Put");
    for (int t = 0; t < np; t++) {
        rc = MPI_Accumulate(one, 2, MPI_INT, t, 2, 2, MPI_INT, MPI_SUM, w);
        CHECK_RC(rc, "MPI_Accumulate");
    }
    MPI_Win_fence(0, w);
    CHECK(m[0] == 40 + left && m[1] == -1, "put under hints: %d %d", m[0], m[1]);
    CHECK(m[2] == np && m[3] == 2 * np, "accumulate under hints: %d %d", m[2], m[3]);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, w);

    MPI_Info got = MPI_INFO_NULL;
    rc = MPI_Win_get_info(w, &got);
    CHECK_RC(rc, "MPI_Win_get_info");
    check_info(got, "hints at creation");
    if (got != MPI_INFO_NULL) {
        rc = MPI_Info_free(&got);
        CHECK(rc == MPI_SUCCESS && got == MPI_INFO_NULL, "MPI_Info_free of the window's info");
    }

    MPI_Info_create(&info);
    MPI_Info_set(info, "accumulate_ordering", "rar,raw");
    rc = MPI_Win_set_info(w, info);
    CHECK_RC(rc, "MPI_Win_set_info");
    MPI_Info_free(&info);
    got = MPI_INFO_NULL;
    rc = MPI_Win_get_info(w, &got);
    CHECK_RC(rc, "MPI_Win_get_info (after set_info)");
    check_info(got, "after set_info");
    if (got != MPI_INFO_NULL)
        MPI_Info_free(&got);
    MPI_Win_free(&w);

    /* No hints. */
    int buf[2];
    rc = MPI_Win_create(buf, sizeof buf, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w);
    CHECK_RC(rc, "MPI_Win_create");
    got = MPI_INFO_NULL;
    rc = MPI_Win_get_info(w, &got);
    CHECK_RC(rc, "MPI_Win_get_info (no hints)");
    check_info(got, "no hints");
    if (got != MPI_INFO_NULL) {
        rc = MPI_Info_free(&got);
        CHECK_RC(rc, "MPI_Info_free");
    }
    MPI_Win_free(&w);
}

#if MPI_VERSION >= 4
static void bigcount(void)
{
    int rc, *a = NULL, *c = malloc(8 * sizeof(int));
    MPI_Win wa, wc;
    rc = MPI_Win_allocate_c(8 * sizeof(int), (MPI_Aint)sizeof(int), MPI_INFO_NULL,
                            MPI_COMM_WORLD, &a, &wa);
    CHECK_RC(rc, "MPI_Win_allocate_c");
    rc = MPI_Win_create_c(c, 8 * sizeof(int), (MPI_Aint)sizeof(int), MPI_INFO_NULL,
                          MPI_COMM_WORLD, &wc);
    CHECK_RC(rc, "MPI_Win_create_c");
    int *unitp = NULL, flag = 0;
    MPI_Win_get_attr(wc, MPI_WIN_DISP_UNIT, &unitp, &flag);
    CHECK(flag && unitp && *unitp == (int)sizeof(int), "MPI_Win_create_c: disp_unit");
    for (int i = 0; i < 8; i++)
        a[i] = c[i] = -1;
    int src[3] = {100 * me + 1, 100 * me + 2, 100 * me + 3}, g[3] = {-5, -5, -5}, acc[2] = {me, 1};
    MPI_Win_fence(0, wa);
    MPI_Win_fence(0, wc);
    rc = MPI_Put_c(src, 3, MPI_INT, right, 1, 3, MPI_INT, wa);
    CHECK_RC(rc, "MPI_Put_c");
    rc = MPI_Put_c(src, 2, MPI_INT, right, 5, 2, MPI_INT, wc);
    CHECK_RC(rc, "MPI_Put_c (created window)");
    MPI_Win_fence(0, wa);
    MPI_Win_fence(0, wc);
    rc = MPI_Get_c(g, 3, MPI_INT, left, 1, 3, MPI_INT, wa);
    CHECK_RC(rc, "MPI_Get_c");
    rc = MPI_Accumulate_c(acc, 2, MPI_INT, right, 0, 2, MPI_INT, MPI_SUM, wc);
    CHECK_RC(rc, "MPI_Accumulate_c");
    MPI_Win_fence(MPI_MODE_NOSUCCEED, wa);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, wc);
    for (int i = 0; i < 8; i++) {
        int wa_want = (i >= 1 && i <= 3) ? 100 * left + i : -1;
        CHECK(a[i] == wa_want, "MPI_Put_c: [%d] = %d, expected %d", i, a[i], wa_want);
    }
    /* g: what the left neighbour got from its left: rank left-1's values */
    int ll = (left + np - 1) % np;
    for (int i = 0; i < 3; i++)
        CHECK(g[i] == 100 * ll + i + 1, "MPI_Get_c: [%d] = %d, expected %d", i, g[i],
              100 * ll + i + 1);
    CHECK(c[0] == -1 + left && c[1] == 0, "MPI_Accumulate_c: %d %d", c[0], c[1]);
    CHECK(c[5] == 100 * left + 1 && c[6] == 100 * left + 2 && c[4] == -1 && c[7] == -1,
          "MPI_Put_c (created window): %d %d %d %d", c[4], c[5], c[6], c[7]);
    MPI_Win_free(&wa);
    MPI_Win_free(&wc);
    free(c);

    /* MPI_Win_shared_query_c on a shared window of one process */
    int *s = NULL;
    MPI_Win ws;
    rc = MPI_Win_allocate_shared_c(12, 4, MPI_INFO_NULL, MPI_COMM_SELF, &s, &ws);
    CHECK_RC(rc, "MPI_Win_allocate_shared_c");
    MPI_Aint sz = -1, du = -1;
    void *p = NULL;
    rc = MPI_Win_shared_query_c(ws, 0, &sz, &du, &p);
    CHECK(rc == MPI_SUCCESS && sz == 12 && du == 4 && p == s,
          "MPI_Win_shared_query_c: size %ld disp_unit %ld", (long)sz, (long)du);
    MPI_Win_free(&ws);
}
#endif

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
#ifdef OPEN_MPI
    if (mtest_size == 1) { /* no one-sided component for a single process in Open MPI 4.1 here */
        MTest_Skip("Open MPI 4.1: MPI_Win_create on one process fails with MPI_ERR_WIN");
        return MTest_Finalize(0);
    }
#endif
    me = mtest_rank;
    np = mtest_size;
    right = (me + 1) % np;
    left = (me + np - 1) % np;
    attributes();
    info_hints();
#if MPI_VERSION >= 4
    bigcount();
#else
    MTest_Skip("MPI_Win_allocate_c and the other _c calls are MPI-4.0");
#endif
    return MTest_Finalize(0);
}
