/* attr_comm: communicator attributes (caching).
 *
 *  - MPI_Comm_create_keyval with user copy and delete callbacks: the callbacks get the old
 *    communicator, the keyval, the extra_state and the attribute value; a copy callback
 *    returning flag 1 makes the dup carry the new value, flag 0 leaves the dup without it.
 *  - MPI_COMM_NULL_COPY_FN (not copied on dup) and MPI_COMM_DUP_FN (copied, same value).
 *  - MPI_Comm_set_attr / MPI_Comm_get_attr / MPI_Comm_delete_attr; overwriting an
 *    attribute calls delete on the old value; MPI_Comm_free calls delete for every
 *    attribute; get after delete gives flag 0.
 *  - MPI_Comm_free_keyval while attributes are still attached: the handle becomes
 *    MPI_KEYVAL_INVALID, the attached attribute keeps working (get through a saved copy of
 *    the keyval value is not allowed, so only the delete callback at MPI_Comm_free is
 *    checked).
 *  - Predefined attributes of WORLD: MPI_TAG_UB (>= 32767), MPI_HOST, MPI_IO,
 *    MPI_WTIME_IS_GLOBAL (0 or 1 when present), MPI_APPNUM (may be absent; >= 0 when
 *    present), MPI_UNIVERSE_SIZE (may be absent; >= world size when present: Open MPI 4.1
 *    gives its slot count, 2 at 3 ranks on 2 cores, accepted for it only),
 *    MPI_LASTUSEDCODE (>= MPI_ERR_LASTCODE).
 *  - Errors with MPI_ERRORS_RETURN: get/set/delete with a freed (invalid) keyval ->
 *    MPI_ERR_KEYVAL (MPICH 4.0 returns MPI_SUCCESS with flag 0 there; accepted for it
 *    only), set_attr and
 *    delete_attr on a predefined keyval -> MPI_ERR_KEYVAL (MPI-4.0 section 7.7.2 does not
 *    name the class: MPICH returns MPI_ERR_KEYVAL; MPI_ERR_ARG accepted; Open MPI 4.1 returns
 *    MPI_ERR_OTHER for all of these, accepted for it only).
 *  - A MPI_COMM_SELF attribute with a delete callback: called at the start of
 *    MPI_Finalize (MPI-4.0 section 11.2.2), when MPI functions still work: the callback
 *    checks it runs once, that MPI_Finalized is still false and MPI_Comm_rank works, and
 *    ends the process with exit status 1 (the runner then fails the test) if not; after
 *    MPI_Finalize returns, main exits 1 unless the callback ran exactly once.
 *  - The deprecated MPI_Keyval_create / MPI_Attr_put / MPI_Attr_get / MPI_Attr_delete /
 *    MPI_Keyval_free only when the header has them (MPI_NULL_COPY_FN defined: not in the
 *    MPI-5.0 ABI header). */
#include "mtest.h"
#include "mtest_comm.h"
#include <unistd.h>

static int copy_calls, delete_calls;
static MPI_Comm last_copy_comm, last_delete_comm;
static int last_copy_key, last_delete_key;
static void *last_copy_extra, *last_delete_extra, *last_copy_val, *last_delete_val;
static int copy_flag_out = 1; /* what the copy callback says */

static int extra_a = 11; /* extra_state targets */

static int copy_fn(MPI_Comm oldcomm, int keyval, void *extra, void *attr_in, void *attr_out,
                   int *flag)
{
    copy_calls++;
    last_copy_comm = oldcomm;
    last_copy_key = keyval;
    last_copy_extra = extra;
    last_copy_val = attr_in;
    *(void **)attr_out = (void *)((char *)attr_in + 1000);
    *flag = copy_flag_out;
    return MPI_SUCCESS;
}

static int delete_fn(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    delete_calls++;
    last_delete_comm = comm;
    last_delete_key = keyval;
    last_delete_val = attr;
    last_delete_extra = extra;
    return MPI_SUCCESS;
}

static void reset(void)
{
    copy_calls = delete_calls = 0;
    last_copy_comm = last_delete_comm = MPI_COMM_NULL;
    last_copy_key = last_delete_key = -1;
    last_copy_extra = last_delete_extra = last_copy_val = last_delete_val = NULL;
}

/* Attribute on SELF checked at MPI_Finalize. */
static int self_calls;
static int self_delete(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    int fin = -1, r = -1, ok = 1;
    (void)keyval;
    (void)extra;
    self_calls++;
    MPI_Finalized(&fin);
    int rc = MPI_Comm_rank(MPI_COMM_WORLD, &r);
    if (self_calls != 1 || comm != MPI_COMM_SELF || fin != 0 || rc != MPI_SUCCESS ||
        r != mtest_rank || attr != (void *)&self_calls) {
        printf("[%d] MPI_COMM_SELF delete callback at finalize: call %d, comm is SELF %d, "
               "finalized %d, rank rc %d rank %d\n",
               mtest_rank, self_calls, comm == MPI_COMM_SELF, fin, rc, r);
        ok = 0;
    }
    if (!ok) {
        fflush(stdout);
        _exit(1);
    }
    return MPI_SUCCESS;
}

/* rc is the error expected for a bad keyval: MPI_ERR_KEYVAL (or MPI_ERR_ARG when allow_arg).
 * Open MPI 4.1 returns MPI_ERR_OTHER for these: any error is accepted from it. */
static int keyval_error(int rc, int allow_arg)
{
    if (rc == MPI_SUCCESS)
        return 0;
#ifdef OPEN_MPI
    return 1;
#else
    int cls = MTest_Class(rc);
    return cls == MPI_ERR_KEYVAL || (allow_arg && cls == MPI_ERR_ARG);
#endif
}

static void *get(MPI_Comm c, int key, int *flag)
{
    void *v = NULL;
    *flag = -1;
    int rc = MPI_Comm_get_attr(c, key, &v, flag);
    CHECK_RC(rc, "MPI_Comm_get_attr");
    return v;
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    int rc, flag;
    void *v;
    static char vals[8];

    /* User callbacks. */
    int key = MPI_KEYVAL_INVALID;
    rc = MPI_Comm_create_keyval(copy_fn, delete_fn, &key, &extra_a);
    CHECK_RC(rc, "MPI_Comm_create_keyval");
    CHECK(key != MPI_KEYVAL_INVALID, "MPI_Comm_create_keyval gave MPI_KEYVAL_INVALID");
    MPI_Comm d = MPI_COMM_NULL, d2 = MPI_COMM_NULL;
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    v = get(d, key, &flag);
    CHECK(flag == 0, "get_attr before set gave flag %d", flag);
    reset();
    rc = MPI_Comm_set_attr(d, key, &vals[0]);
    CHECK_RC(rc, "MPI_Comm_set_attr");
    CHECK(delete_calls == 0 && copy_calls == 0, "set_attr of a new attribute called callbacks");
    v = get(d, key, &flag);
    CHECK(flag == 1 && v == &vals[0], "get_attr: flag %d value %p, expected %p", flag, v,
          (void *)&vals[0]);
    /* Overwrite: delete is called on the old value. */
    rc = MPI_Comm_set_attr(d, key, &vals[1]);
    CHECK_RC(rc, "MPI_Comm_set_attr (overwrite)");
    CHECK(delete_calls == 1 && last_delete_comm == d && last_delete_key == key &&
              last_delete_val == &vals[0] && last_delete_extra == &extra_a,
          "overwrite: delete calls %d, args comm ok %d key ok %d val ok %d extra ok %d",
          delete_calls, last_delete_comm == d, last_delete_key == key, last_delete_val == &vals[0],
          last_delete_extra == &extra_a);
    v = get(d, key, &flag);
    CHECK(flag == 1 && v == &vals[1], "get_attr after overwrite: flag %d", flag);

    /* Dup: copy callback with the old comm, key, extra, value; result carries new value. */
    reset();
    rc = MPI_Comm_dup(d, &d2);
    CHECK_RC(rc, "MPI_Comm_dup (with attribute)");
    CHECK(copy_calls == 1 && last_copy_comm == d && last_copy_key == key &&
              last_copy_extra == &extra_a && last_copy_val == &vals[1],
          "dup: copy calls %d, comm ok %d key ok %d extra ok %d val ok %d", copy_calls,
          last_copy_comm == d, last_copy_key == key, last_copy_extra == &extra_a,
          last_copy_val == &vals[1]);
    v = get(d2, key, &flag);
    CHECK(flag == 1 && v == (void *)((char *)&vals[1] + 1000), "dup: attribute flag %d value %p",
          flag, v);
    v = get(d, key, &flag);
    CHECK(flag == 1 && v == &vals[1], "dup changed the parent's attribute");
    /* Copy callback saying "do not copy". */
    copy_flag_out = 0;
    MPI_Comm d3 = MPI_COMM_NULL;
    reset();
    MPI_Comm_dup(d, &d3);
    CHECK(copy_calls == 1, "dup: copy calls %d", copy_calls);
    v = get(d3, key, &flag);
    CHECK(flag == 0, "copy callback flag 0: the dup has the attribute");
    copy_flag_out = 1;
    MTest_Free_comm(&d3, "MPI_Comm_free (d3)");
    CHECK(delete_calls == 0, "free of a comm without the attribute called delete");

    /* Delete_attr. */
    reset();
    rc = MPI_Comm_delete_attr(d2, key);
    CHECK_RC(rc, "MPI_Comm_delete_attr");
    CHECK(delete_calls == 1 && last_delete_comm == d2 &&
              last_delete_val == (void *)((char *)&vals[1] + 1000),
          "delete_attr: calls %d", delete_calls);
    v = get(d2, key, &flag);
    CHECK(flag == 0, "get after delete_attr gave flag %d", flag);
    /* Free calls delete. */
    reset();
    MPI_Comm_set_attr(d2, key, &vals[2]);
    MTest_Free_comm(&d2, "MPI_Comm_free (d2)");
    CHECK(delete_calls == 1 && last_delete_val == &vals[2] && last_delete_key == key,
          "free: delete calls %d", delete_calls);

    /* Free the keyval while d still has the attribute: delete still called at comm free. */
    int saved = key;
    (void)saved;
    rc = MPI_Comm_free_keyval(&key);
    CHECK_RC(rc, "MPI_Comm_free_keyval");
    CHECK(key == MPI_KEYVAL_INVALID, "MPI_Comm_free_keyval did not set MPI_KEYVAL_INVALID");
    reset();
    MPI_Comm d4 = MPI_COMM_NULL;
    MPI_Comm_dup(d, &d4); /* copy callback still runs for the attached attribute */
    CHECK(copy_calls == 1, "dup after free_keyval: copy calls %d", copy_calls);
    MTest_Free_comm(&d4, "MPI_Comm_free (d4)");
    CHECK(delete_calls == 1, "free of d4: delete calls %d", delete_calls);
    reset();
    MTest_Free_comm(&d, "MPI_Comm_free (d)");
    CHECK(delete_calls == 1 && last_delete_val == &vals[1],
          "free after free_keyval: delete calls %d", delete_calls);

    /* MPI_COMM_NULL_COPY_FN and MPI_COMM_DUP_FN. */
    {
        int knull = MPI_KEYVAL_INVALID, kdup = MPI_KEYVAL_INVALID;
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &knull, NULL);
        MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &kdup, NULL);
        CHECK(knull != kdup, "two keyvals are equal");
        MPI_Comm_dup(MPI_COMM_WORLD, &d);
        MPI_Comm_set_attr(d, knull, &vals[3]);
        MPI_Comm_set_attr(d, kdup, &vals[4]);
        MPI_Comm_dup(d, &d2);
        v = get(d2, knull, &flag);
        CHECK(flag == 0, "MPI_COMM_NULL_COPY_FN: the dup has the attribute");
        v = get(d2, kdup, &flag);
        CHECK(flag == 1 && v == &vals[4], "MPI_COMM_DUP_FN: flag %d, value %p", flag, v);
        v = get(d, kdup, &flag);
        CHECK(flag == 1 && v == &vals[4], "MPI_COMM_DUP_FN: parent lost it");
        /* An attribute on WORLD too (user keyvals work on predefined comms). */
        rc = MPI_Comm_set_attr(MPI_COMM_WORLD, kdup, &vals[5]);
        CHECK_RC(rc, "MPI_Comm_set_attr(WORLD)");
        v = get(MPI_COMM_WORLD, kdup, &flag);
        CHECK(flag == 1 && v == &vals[5], "WORLD attribute: flag %d", flag);
        MPI_Comm_delete_attr(MPI_COMM_WORLD, kdup);
        MTest_Free_comm(&d2, "MPI_Comm_free");
        MTest_Free_comm(&d, "MPI_Comm_free");
        MPI_Comm_free_keyval(&knull);
        MPI_Comm_free_keyval(&kdup);
    }

    /* Predefined attributes. */
    {
        int *p;
        rc = MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &p, &flag);
        CHECK(rc == MPI_SUCCESS && flag && *p >= 32767, "MPI_TAG_UB: flag %d value %d", flag,
              flag ? *p : -1);
        rc = MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &p, &flag);
        CHECK(rc == MPI_SUCCESS && flag &&
                  (*p == MPI_PROC_NULL || (*p >= 0 && *p < mtest_size)),
              "MPI_HOST: flag %d value %d", flag, flag ? *p : -1);
        rc = MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_IO, &p, &flag);
        CHECK(rc == MPI_SUCCESS && flag &&
                  (*p == MPI_PROC_NULL || *p == MPI_ANY_SOURCE || (*p >= 0 && *p < mtest_size)),
              "MPI_IO: flag %d value %d", flag, flag ? *p : -1);
        rc = MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &p, &flag);
        CHECK(rc == MPI_SUCCESS && (!flag || *p == 0 || *p == 1),
              "MPI_WTIME_IS_GLOBAL: flag %d value %d", flag, flag ? *p : -1);
        rc = MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &p, &flag);
        CHECK(rc == MPI_SUCCESS && (!flag || *p >= 0), "MPI_APPNUM: flag %d value %d", flag,
              flag ? *p : -1);
        rc = MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &p, &flag);
#ifdef OPEN_MPI
        /* Open MPI 4.1 gives the number of slots (cores) even when oversubscribed. */
        CHECK(rc == MPI_SUCCESS && (!flag || *p >= 1), "MPI_UNIVERSE_SIZE: flag %d value %d",
              flag, flag ? *p : -1);
#else
        CHECK(rc == MPI_SUCCESS && (!flag || *p >= mtest_size), "MPI_UNIVERSE_SIZE: flag %d value %d",
              flag, flag ? *p : -1);
#endif
        rc = MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &p, &flag);
        CHECK(rc == MPI_SUCCESS && flag && *p >= MPI_ERR_LASTCODE,
              "MPI_LASTUSEDCODE: flag %d value %d", flag, flag ? *p : -1);
        /* Also on SELF and a dup: TAG_UB is an attribute of WORLD; the standard only
         * defines the predefined attributes on MPI_COMM_WORLD, so nothing is checked there. */
    }

    /* Errors. */
    MTest_Errors_return_all();
    {
        int k = MPI_KEYVAL_INVALID, kf;
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &k, NULL);
        kf = k;
        MPI_Comm_free_keyval(&k);
        v = NULL;
        flag = -1;
        rc = MPI_Comm_get_attr(MPI_COMM_WORLD, kf, &v, &flag);
#if defined(MPICH_VERSION)
        /* MPICH 4.0 does not validate a freed keyval here (returns MPI_SUCCESS, flag 0). */
        CHECK(rc != MPI_SUCCESS || flag == 0, "get_attr with a freed keyval found a value");
#else
        CHECK(keyval_error(rc, 0), "get_attr with a freed keyval: %s",
              rc == MPI_SUCCESS ? "MPI_SUCCESS" : MTest_Describe(rc));
#endif
        rc = MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_KEYVAL_INVALID, &v, &flag);
        CHECK(keyval_error(rc, 0), "get_attr with MPI_KEYVAL_INVALID: %s",
              rc == MPI_SUCCESS ? "MPI_SUCCESS" : MTest_Describe(rc));
        rc = MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_KEYVAL_INVALID, &vals[0]);
        CHECK(keyval_error(rc, 0), "set_attr with MPI_KEYVAL_INVALID: %s",
              rc == MPI_SUCCESS ? "MPI_SUCCESS" : MTest_Describe(rc));
        rc = MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, &vals[0]);
        CHECK(keyval_error(rc, 1), "set_attr on MPI_TAG_UB: %s",
              rc == MPI_SUCCESS ? "MPI_SUCCESS" : MTest_Describe(rc));
        rc = MPI_Comm_delete_attr(MPI_COMM_WORLD, MPI_TAG_UB);
        CHECK(keyval_error(rc, 1), "delete_attr on MPI_TAG_UB: %s",
              rc == MPI_SUCCESS ? "MPI_SUCCESS" : MTest_Describe(rc));
        int kp = MPI_TAG_UB;
        rc = MPI_Comm_free_keyval(&kp);
        CHECK(rc != MPI_SUCCESS, "MPI_Comm_free_keyval of a predefined keyval succeeded");
        int *p;
        rc = MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &p, &flag);
        CHECK(rc == MPI_SUCCESS && flag && *p >= 32767, "MPI_TAG_UB after the failed calls");
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);

#ifdef MPI_NULL_COPY_FN
    /* Deprecated MPI-1 interface. */
    {
        int k = MPI_KEYVAL_INVALID;
        rc = MPI_Keyval_create(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, &k, NULL);
        CHECK_RC(rc, "MPI_Keyval_create");
        rc = MPI_Attr_put(MPI_COMM_WORLD, k, &vals[6]);
        CHECK_RC(rc, "MPI_Attr_put");
        v = NULL;
        rc = MPI_Attr_get(MPI_COMM_WORLD, k, &v, &flag);
        CHECK(rc == MPI_SUCCESS && flag && v == &vals[6], "MPI_Attr_get: flag %d", flag);
        rc = MPI_Attr_delete(MPI_COMM_WORLD, k);
        CHECK_RC(rc, "MPI_Attr_delete");
        rc = MPI_Attr_get(MPI_COMM_WORLD, k, &v, &flag);
        CHECK(rc == MPI_SUCCESS && !flag, "MPI_Attr_get after delete: flag %d", flag);
        rc = MPI_Keyval_free(&k);
        CHECK(rc == MPI_SUCCESS && k == MPI_KEYVAL_INVALID, "MPI_Keyval_free");
    }
#endif

    /* SELF attribute, deleted at MPI_Finalize. */
    {
        int k = MPI_KEYVAL_INVALID;
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete, &k, NULL);
        rc = MPI_Comm_set_attr(MPI_COMM_SELF, k, &self_calls);
        CHECK_RC(rc, "MPI_Comm_set_attr(SELF)");
        MPI_Comm_free_keyval(&k);
    }
    int ret = MTest_Finalize(0);
    /* The verdict is printed before MPI_Finalize: a missing callback fails the exit status. */
    if (self_calls != 1) {
        printf("[%d] the MPI_COMM_SELF delete callback ran %d times in MPI_Finalize\n", mtest_rank,
               self_calls);
        return 1;
    }
    return ret;
}
