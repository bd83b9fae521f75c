/* attr_mpi1.c: the MPI-1 attribute interface, deprecated since MPI-2.0 but still in MPI-5.0
 * (MPI_Keyval_create/_free, MPI_Attr_put/_get/_delete, MPI_NULL_COPY_FN, MPI_DUP_FN,
 * MPI_NULL_DELETE_FN, MPI_Copy_function, MPI_Delete_function), as legacy codes use it:
 * values survive MPI_Comm_dup through the copy callback (or are dropped by
 * MPI_NULL_COPY_FN), the delete callback runs on replacement, deletion and MPI_Comm_free,
 * the predefined attributes read through MPI_Attr_get, and the new-style calls see the same
 * keyvals. */
#include "mtest.h"

static int copies, deletes;

static int my_copy(MPI_Comm oldcomm, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)oldcomm, (void)keyval;
    CHECK(extra == (void *)&copies, "copy callback got extra_state %p", extra);
    copies++;
    *(void **)out = (char *)in + 1; /* the copy is the value plus one */
    *flag = 1;
    return MPI_SUCCESS;
}

static int my_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)comm, (void)keyval, (void)val, (void)extra;
    deletes++;
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    MPI_Copy_function *cf = my_copy;
    MPI_Delete_function *df = my_delete;
    int kv = MPI_KEYVAL_INVALID, kv_dup, kv_null, flag = -1;
    void *val;
    CHECK_RC(MPI_Keyval_create(cf, df, &kv, &copies), "MPI_Keyval_create");
    CHECK_RC(MPI_Keyval_create(MPI_DUP_FN, MPI_NULL_DELETE_FN, &kv_dup, NULL),
             "MPI_Keyval_create(MPI_DUP_FN)");
    CHECK_RC(MPI_Keyval_create(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, &kv_null, NULL),
             "MPI_Keyval_create(MPI_NULL_COPY_FN)");
    CHECK(kv != MPI_KEYVAL_INVALID, "keyval not set");

    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    CHECK_RC(MPI_Attr_get(c, kv, &val, &flag), "MPI_Attr_get (unset)");
    CHECK(flag == 0, "an unset attribute is found");
    CHECK_RC(MPI_Attr_put(c, kv, (void *)(size_t)100), "MPI_Attr_put");
    CHECK_RC(MPI_Attr_put(c, kv_dup, (void *)(size_t)200), "MPI_Attr_put(dup)");
    CHECK_RC(MPI_Attr_put(c, kv_null, (void *)(size_t)300), "MPI_Attr_put(null)");
    CHECK_RC(MPI_Attr_get(c, kv, &val, &flag), "MPI_Attr_get");
    CHECK(flag && val == (void *)(size_t)100, "got flag %d value %p, expected 100", flag,
          val);
    /* The MPI-2 call sees the same attribute. */
    CHECK_RC(MPI_Comm_get_attr(c, kv, &val, &flag), "MPI_Comm_get_attr");
    CHECK(flag && val == (void *)(size_t)100, "MPI_Comm_get_attr sees %p", val);
    /* Replacing runs the delete callback on the old value. */
    CHECK_RC(MPI_Attr_put(c, kv, (void *)(size_t)101), "MPI_Attr_put (replace)");
    CHECK(deletes == 1, "%d delete callbacks after a replacement, expected 1", deletes);

    MPI_Comm d;
    CHECK_RC(MPI_Comm_dup(c, &d), "MPI_Comm_dup");
    CHECK(copies == 1, "%d copy callbacks, expected 1", copies);
    MPI_Attr_get(d, kv, &val, &flag);
    CHECK(flag && val == (void *)(size_t)102, "copied value %p (flag %d), expected 102", val,
          flag);
    MPI_Attr_get(d, kv_dup, &val, &flag);
    CHECK(flag && val == (void *)(size_t)200, "MPI_DUP_FN copy %p (flag %d), expected 200", val,
          flag);
    MPI_Attr_get(d, kv_null, &val, &flag);
    CHECK(flag == 0, "MPI_NULL_COPY_FN attribute was copied");

    CHECK_RC(MPI_Attr_delete(d, kv), "MPI_Attr_delete");
    CHECK(deletes == 2, "%d delete callbacks after MPI_Attr_delete, expected 2", deletes);
    MPI_Attr_get(d, kv, &val, &flag);
    CHECK(flag == 0, "a deleted attribute is found");
    MPI_Comm_free(&d);
    CHECK(deletes == 2, "MPI_Comm_free ran a callback for a deleted attribute");
    MPI_Comm_free(&c);
    CHECK(deletes == 3, "%d delete callbacks after MPI_Comm_free, expected 3", deletes);

    /* Predefined attributes. */
    int *tag_ub = NULL;
    CHECK_RC(MPI_Attr_get(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag), "MPI_Attr_get(TAG_UB)");
    CHECK(flag && tag_ub && *tag_ub >= 32767, "MPI_TAG_UB: flag %d value %d", flag,
          tag_ub ? *tag_ub : -1);

    CHECK_RC(MPI_Keyval_free(&kv), "MPI_Keyval_free");
    CHECK(kv == MPI_KEYVAL_INVALID, "MPI_Keyval_free did not reset the keyval");
    MPI_Keyval_free(&kv_dup);
    MPI_Keyval_free(&kv_null);

    /* Errors: a freed keyval, a predefined one. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int bad = kv_dup;
    CHECK_CLASS(MPI_Attr_put(MPI_COMM_WORLD, MPI_TAG_UB, NULL), MPI_ERR_KEYVAL,
                "MPI_Attr_put(MPI_TAG_UB)");
    CHECK(MPI_Keyval_free(&bad) != MPI_SUCCESS, "MPI_Keyval_free(MPI_KEYVAL_INVALID) succeeded");
    return MTest_Finalize(mtest_errors);
}
