/* mpit: the MPI tool information interface (MPI-4.1 section 15.3), checked generically so
 * that it holds for any conforming MPI, plus hympi's own variables under HYMPI.
 *
 * MPI_T_init_thread before MPI_Init; MPI_T calls before MPI_T_init_thread, after the last
 * MPI_T_finalize -> MPI_T_ERR_NOT_INITIALIZED; nesting of init/finalize.  Every control
 * variable, performance variable, category, enumeration and event source is enumerated
 * (before MPI_Init and again after it): every info call, the string protocol (lengths with
 * NULL buffers and 0 lengths, exact buffers, truncation to n-1 characters plus NUL, NULL
 * length ignored), get_index round trips, every control variable read (strings
 * NUL-terminated within count, guards untouched), constants not writable; a performance
 * variable session allocates, reads, starts/stops and resets every variable (continuous ->
 * MPI_T_ERR_PVAR_NO_STARTSTOP, read-only -> MPI_T_ERR_PVAR_NO_WRITE, MPI_T_PVAR_ALL_HANDLES);
 * error codes for bad indices, names, handles, sessions and NULL outputs.  Under hympi: the
 * HYMPI_* variables exist, read their environment value (the test lines set
 * HYMPI_EAGER_MAX, HYMPI_THREAD_MODEL) or default, the thread model is an enumeration, the
 * categories group them, counters are monotonic, the event source ticks with MPI_Wtime's
 * clock, handles are invalid after the last MPI_T_finalize.  After MPI_Finalize the
 * interface still initializes and lists the same variables. */
#include "mtest.h"

#define T_OK(rc, what) CHECK((rc) == MPI_SUCCESS, "%s: %s returned %d", when, (what), (rc))
#define T_ERR(rc, want, what)                                                                \
    CHECK((rc) == (want), "%s: %s returned %d, expected %s (%d)", when, (what), (rc), #want, \
          (want))

#ifdef MPICH_VERSION
/* MPICH 4.0.2 returns the copied length plus one (n), not the string's length plus one, when
 * it truncates a string (MPI-4.1 section 15.3.3). */
#define TRUNC_LEN_OK(got, full, n) ((got) == (full) || (got) == (n))
#else
#define TRUNC_LEN_OK(got, full, n) ((got) == (full))
#endif

static int is_hympi = 0;

static int valid_verbosity(int v)
{
    return v == MPI_T_VERBOSITY_USER_BASIC || v == MPI_T_VERBOSITY_USER_DETAIL ||
           v == MPI_T_VERBOSITY_USER_ALL || v == MPI_T_VERBOSITY_TUNER_BASIC ||
           v == MPI_T_VERBOSITY_TUNER_DETAIL || v == MPI_T_VERBOSITY_TUNER_ALL ||
           v == MPI_T_VERBOSITY_MPIDEV_BASIC || v == MPI_T_VERBOSITY_MPIDEV_DETAIL ||
           v == MPI_T_VERBOSITY_MPIDEV_ALL;
}

static int valid_bind(int b)
{
    return b == MPI_T_BIND_NO_OBJECT || b == MPI_T_BIND_MPI_COMM || b == MPI_T_BIND_MPI_DATATYPE ||
           b == MPI_T_BIND_MPI_ERRHANDLER || b == MPI_T_BIND_MPI_FILE ||
           b == MPI_T_BIND_MPI_GROUP || b == MPI_T_BIND_MPI_OP || b == MPI_T_BIND_MPI_REQUEST ||
           b == MPI_T_BIND_MPI_WIN || b == MPI_T_BIND_MPI_MESSAGE || b == MPI_T_BIND_MPI_INFO
#ifndef MPICH_VERSION /* MPICH 4.0.2's mpi.h lacks MPI_T_BIND_MPI_SESSION (MPI-4.0) */
           || b == MPI_T_BIND_MPI_SESSION
#endif
        ;
}

static int valid_scope(int s)
{
    return s == MPI_T_SCOPE_CONSTANT || s == MPI_T_SCOPE_READONLY || s == MPI_T_SCOPE_LOCAL ||
           s == MPI_T_SCOPE_GROUP || s == MPI_T_SCOPE_GROUP_EQ || s == MPI_T_SCOPE_ALL ||
           s == MPI_T_SCOPE_ALL_EQ;
}

static int valid_class(int c)
{
    return c == MPI_T_PVAR_CLASS_STATE || c == MPI_T_PVAR_CLASS_LEVEL ||
           c == MPI_T_PVAR_CLASS_SIZE || c == MPI_T_PVAR_CLASS_PERCENTAGE ||
           c == MPI_T_PVAR_CLASS_HIGHWATERMARK || c == MPI_T_PVAR_CLASS_LOWWATERMARK ||
           c == MPI_T_PVAR_CLASS_COUNTER || c == MPI_T_PVAR_CLASS_AGGREGATE ||
           c == MPI_T_PVAR_CLASS_TIMER || c == MPI_T_PVAR_CLASS_GENERIC;
}

/* Size of one element of a tool-interface datatype (Table 15.x), 0 if not allowed. */
static size_t type_size(MPI_Datatype t)
{
    if (t == MPI_CHAR)
        return 1;
    if (t == MPI_INT || t == MPI_UNSIGNED || t == MPI_INT32_T || t == MPI_UINT32_T)
        return 4;
    if (t == MPI_UNSIGNED_LONG || t == MPI_UNSIGNED_LONG_LONG || t == MPI_INT64_T ||
        t == MPI_UINT64_T || t == MPI_COUNT || t == MPI_DOUBLE)
        return 8;
    return 0;
}

/* The string protocol of one string of an info call.  `get(buf, len)` calls the info function
 * returning only this string.  Returns the full string in out (size outsz) and its length
 * plus one. */
typedef int (*get_string_fn)(int index, char *buf, int *len);

static int check_string(const char *when, const char *what, int index, get_string_fn get,
                        char *out, size_t outsz)
{
    char buf[4096];
    int len = 0;
    int rc = get(index, NULL, &len); /* NULL buffer: length only */
    T_OK(rc, what);
    if (!CHECK(len >= 1 && (size_t)len <= sizeof buf, "%s: %s %d: length %d", when, what, index,
               len))
        return 0;
    int full = len;
    int l2 = 0;
    memset(buf, 'x', sizeof buf);
    rc = get(index, buf, &l2); /* length 0: nothing written */
    T_OK(rc, what);
    CHECK(l2 == full && buf[0] == 'x', "%s: %s %d: with length 0 got %d (want %d), buf[0] %d",
          when, what, index, l2, full, buf[0]);
    rc = get(index, buf, NULL); /* NULL length: ignored */
    T_OK(rc, what);
    CHECK(buf[0] == 'x', "%s: %s %d: NULL length wrote the buffer", when, what, index);
    l2 = full;
    rc = get(index, buf, &l2); /* exact buffer */
    T_OK(rc, what);
    CHECK(l2 == full && buf[full - 1] == 0 && (int)strlen(buf) == full - 1 && buf[full] == 'x',
          "%s: %s %d: exact buffer: len %d want %d, strlen %d", when, what, index, l2, full,
          (int)strnlen(buf, sizeof buf));
    snprintf(out, outsz, "%s", buf);
    if (full >= 3) { /* truncated to n - 1 characters plus NUL */
        int n = full / 2 + 1;
        char tb[4096];
        memset(tb, 'y', sizeof tb);
        l2 = n;
        rc = get(index, tb, &l2);
        T_OK(rc, what);
        CHECK(tb[n - 1] == 0 && tb[n] == 'y' && strncmp(tb, buf, (size_t)(n - 1)) == 0 &&
                  TRUNC_LEN_OK(l2, full, n),
              "%s: %s %d: truncated to %d: len %d (full %d), tb[n-1] %d tb[n] %d", when, what,
              index, n, l2, full, tb[n - 1], tb[n]);
    }
    return full;
}

static int cvar_name(int i, char *b, int *l)
{
    int verb, bind, scope;
    MPI_Datatype dt;
    MPI_T_enum e;
    int dl = 0;
    return MPI_T_cvar_get_info(i, b, l, &verb, &dt, &e, NULL, &dl, &bind, &scope);
}
static int cvar_desc(int i, char *b, int *l)
{
    int verb, bind, scope;
    MPI_Datatype dt;
    MPI_T_enum e;
    int nl = 0;
    return MPI_T_cvar_get_info(i, NULL, &nl, &verb, &dt, &e, b, l, &bind, &scope);
}
static int pvar_name(int i, char *b, int *l)
{
    int verb, cls, bind, ro, cont, at, dl = 0;
    MPI_Datatype dt;
    MPI_T_enum e;
    return MPI_T_pvar_get_info(i, b, l, &verb, &cls, &dt, &e, NULL, &dl, &bind, &ro, &cont, &at);
}
static int pvar_desc(int i, char *b, int *l)
{
    int verb, cls, bind, ro, cont, at, nl = 0;
    MPI_Datatype dt;
    MPI_T_enum e;
    return MPI_T_pvar_get_info(i, NULL, &nl, &verb, &cls, &dt, &e, b, l, &bind, &ro, &cont, &at);
}
static int cat_name(int i, char *b, int *l)
{
    int nc, np, ncat, dl = 0;
    return MPI_T_category_get_info(i, b, l, NULL, &dl, &nc, &np, &ncat);
}
static int cat_desc(int i, char *b, int *l)
{
    int nc, np, ncat, nl = 0;
    return MPI_T_category_get_info(i, NULL, &nl, b, l, &nc, &np, &ncat);
}
static int source_name(int i, char *b, int *l)
{
    int dl = 0;
    MPI_T_source_order o;
    MPI_Count tps, mt;
    return MPI_T_source_get_info(i, b, l, NULL, &dl, &o, &tps, &mt, NULL);
}
static int source_desc(int i, char *b, int *l)
{
    int nl = 0;
    MPI_T_source_order o;
    MPI_Count tps, mt;
    return MPI_T_source_get_info(i, NULL, &nl, b, l, &o, &tps, &mt, NULL);
}

static MPI_T_enum cur_enum;
static int enum_name(int i, char *b, int *l)
{
    int num;
    (void)i;
    return MPI_T_enum_get_info(cur_enum, &num, b, l);
}
static int item_name(int i, char *b, int *l)
{
    int v;
    return MPI_T_enum_get_item(cur_enum, i, &v, b, l);
}

/* Checks an enumeration; returns its number of items. */
static int check_enum(const char *when, MPI_T_enum e)
{
    char name[4096];
    int num = -1, len = 0;
    cur_enum = e;
    int rc = MPI_T_enum_get_info(e, &num, NULL, &len);
    T_OK(rc, "MPI_T_enum_get_info");
    CHECK(num >= 1, "%s: enumeration with %d items", when, num);
    check_string(when, "enum name", 0, enum_name, name, sizeof name);
    for (int k = 0; k < num; k++) {
        char iname[4096];
        int v = 0;
        len = 0;
        rc = MPI_T_enum_get_item(e, k, &v, NULL, &len);
        T_OK(rc, "MPI_T_enum_get_item");
        check_string(when, "enum item name", k, item_name, iname, sizeof iname);
    }
    rc = MPI_T_enum_get_item(e, num, &num, NULL, &len);
    CHECK(rc == MPI_T_ERR_INVALID_INDEX || rc == MPI_T_ERR_INVALID_ITEM,
          "%s: MPI_T_enum_get_item past the end returned %d", when, rc);
    return num;
}

/* The name of the item of enumeration e with value v, or "" */
static const char *enum_item_of(MPI_T_enum e, int v)
{
    static char name[256];
    int num = 0, len = 0;
    name[0] = 0;
    if (MPI_T_enum_get_info(e, &num, NULL, &len) != MPI_SUCCESS)
        return name;
    for (int k = 0; k < num; k++) {
        int iv;
        len = sizeof name;
        if (MPI_T_enum_get_item(e, k, &iv, name, &len) == MPI_SUCCESS && iv == v)
            return name;
    }
    name[0] = 0;
    return name;
}

static int num_cvars_seen = -1, num_pvars_seen = -1, num_cats_seen = -1;

static void check_cvars(const char *when, int after_init)
{
    int num = -1;
    int rc = MPI_T_cvar_get_num(&num);
    T_OK(rc, "MPI_T_cvar_get_num");
    CHECK(num >= 0, "%s: %d cvars", when, num);
    if (num_cvars_seen >= 0)
        CHECK(num >= num_cvars_seen, "%s: %d cvars, %d before", when, num, num_cvars_seen);
    num_cvars_seen = num;
    int found_eager = 0;
    for (int i = 0; i < num; i++) {
        char name[4096], desc[4096];
        int verb = -1, bind = -1, scope = -1, nl = 0, dl = 0;
        MPI_Datatype dt = MPI_DATATYPE_NULL;
        MPI_T_enum e = MPI_T_ENUM_NULL;
        rc = MPI_T_cvar_get_info(i, NULL, &nl, &verb, &dt, &e, NULL, &dl, &bind, &scope);
        if (!T_OK(rc, "MPI_T_cvar_get_info"))
            continue;
        if (check_string(when, "cvar name", i, cvar_name, name, sizeof name) == 0)
            continue;
        check_string(when, "cvar desc", i, cvar_desc, desc, sizeof desc);
        CHECK(valid_verbosity(verb), "%s: cvar %s verbosity %d", when, name, verb);
        CHECK(valid_bind(bind), "%s: cvar %s bind %d", when, name, bind);
        CHECK(valid_scope(scope), "%s: cvar %s scope %d", when, name, scope);
        size_t esz = type_size(dt);
        CHECK(esz != 0, "%s: cvar %s has a datatype outside the MPI_T table", when, name);
        int idx = -1;
        rc = MPI_T_cvar_get_index(name, &idx);
        T_OK(rc, "MPI_T_cvar_get_index");
        CHECK(idx == i, "%s: cvar %s: index %d, get_index gives %d", when, name, i, idx);
        if (e != MPI_T_ENUM_NULL) {
            CHECK(dt == MPI_INT, "%s: cvar %s with an enumeration is not MPI_INT", when, name);
            check_enum(when, e);
        }
        /* Read it. */
        MPI_Comm comm = MPI_COMM_WORLD;
        void *obj = NULL;
        if (bind == MPI_T_BIND_MPI_COMM && after_init)
            obj = &comm;
        else if (bind != MPI_T_BIND_NO_OBJECT)
            continue;
        MPI_T_cvar_handle h = MPI_T_CVAR_HANDLE_NULL;
        int count = -1;
        rc = MPI_T_cvar_handle_alloc(i, obj, &h, &count);
        if (!T_OK(rc, "MPI_T_cvar_handle_alloc"))
            continue;
        CHECK(count >= 0 && count < 1 << 20, "%s: cvar %s count %d", when, name, count);
        size_t bytes = esz * (size_t)(count > 0 ? count : 0);
        unsigned char *buf = malloc(bytes + 64);
        memset(buf, 0xa5, bytes + 64);
        rc = MPI_T_cvar_read(h, buf);
        T_OK(rc, "MPI_T_cvar_read");
        long k;
        for (k = 0; k < 64 && buf[bytes + k] == 0xa5; k++)
            ;
        CHECK(k == 64, "%s: cvar %s: read wrote past count %d", when, name, count);
        if (dt == MPI_CHAR && count > 0)
            CHECK(memchr(buf, 0, (size_t)count) != NULL, "%s: cvar %s: string not terminated",
                  when, name);
        if (scope == MPI_T_SCOPE_CONSTANT) {
            rc = MPI_T_cvar_write(h, buf);
            T_ERR(rc, MPI_T_ERR_CVAR_SET_NEVER, "MPI_T_cvar_write of a constant");
        }
        if (is_hympi) {
            /* The value is the environment's, else the default. */
            const char *env = getenv(name);
            if (dt == MPI_CHAR && env)
                CHECK(strcmp((char *)buf, env) == 0, "%s: %s reads \"%s\", environment \"%s\"",
                      when, name, (char *)buf, env);
            if (dt == MPI_INT && e == MPI_T_ENUM_NULL && env)
                CHECK(*(int *)buf == atoi(env), "%s: %s reads %d, environment %s", when, name,
                      *(int *)buf, env);
            if (e != MPI_T_ENUM_NULL) {
                const char *item = enum_item_of(e, *(int *)buf);
                CHECK(item[0] != 0, "%s: %s reads %d, not an item", when, name, *(int *)buf);
                if (env)
                    CHECK(strcmp(item, env) == 0, "%s: %s reads %s, environment %s", when, name,
                          item, env);
                else
                    CHECK(strcmp(item, "vci") == 0, "%s: %s reads %s, default vci", when, name,
                          item);
            }
            if (strcmp(name, "HYMPI_EAGER_MAX") == 0) {
                found_eager = 1;
                CHECK(dt == MPI_INT && count == 1 && scope == MPI_T_SCOPE_CONSTANT &&
                          bind == MPI_T_BIND_NO_OBJECT,
                      "%s: HYMPI_EAGER_MAX: datatype, count %d, scope %d, bind %d", when, count,
                      scope, bind);
                int want = getenv(name) ? atoi(getenv(name)) : 16320;
                CHECK(*(int *)buf == want, "%s: HYMPI_EAGER_MAX reads %d, want %d", when,
                      *(int *)buf, want);
            }
            if (strcmp(name, "HYMPI_SHM_CELLS") == 0 && !getenv(name))
                CHECK(*(int *)buf == 64, "%s: HYMPI_SHM_CELLS reads %d, default 64", when,
                      *(int *)buf);
        }
        free(buf);
        MPI_T_cvar_handle h2 = h;
        rc = MPI_T_cvar_handle_free(&h);
        T_OK(rc, "MPI_T_cvar_handle_free");
        CHECK(h == MPI_T_CVAR_HANDLE_NULL, "%s: handle not set to MPI_T_CVAR_HANDLE_NULL", when);
#ifdef HYMPI
        int dummy[4];
        rc = MPI_T_cvar_read(h2, dummy);
        T_ERR(rc, MPI_T_ERR_INVALID_HANDLE, "MPI_T_cvar_read of a freed handle");
#else
        (void)h2;
#endif
    }
    if (is_hympi)
        CHECK(found_eager, "%s: no cvar HYMPI_EAGER_MAX", when);

    /* Errors. */
    char nb[64];
    int nl = sizeof nb, idx = 0, verb, bind, scope, dl = 0, count;
    MPI_Datatype dt;
    MPI_T_enum e;
    rc = MPI_T_cvar_get_info(-1, nb, &nl, &verb, &dt, &e, NULL, &dl, &bind, &scope);
    T_ERR(rc, MPI_T_ERR_INVALID_INDEX, "MPI_T_cvar_get_info(-1)");
    rc = MPI_T_cvar_get_info(num, nb, &nl, &verb, &dt, &e, NULL, &dl, &bind, &scope);
    T_ERR(rc, MPI_T_ERR_INVALID_INDEX, "MPI_T_cvar_get_info(num)");
    rc = MPI_T_cvar_get_index("mtest_no_such_cvar", &idx);
    T_ERR(rc, MPI_T_ERR_INVALID_NAME, "MPI_T_cvar_get_index(unknown)");
    MPI_T_cvar_handle h;
    rc = MPI_T_cvar_handle_alloc(num, NULL, &h, &count);
    T_ERR(rc, MPI_T_ERR_INVALID_INDEX, "MPI_T_cvar_handle_alloc(num)");
    rc = MPI_T_cvar_read(MPI_T_CVAR_HANDLE_NULL, nb);
    T_ERR(rc, MPI_T_ERR_INVALID_HANDLE, "MPI_T_cvar_read(MPI_T_CVAR_HANDLE_NULL)");
    h = MPI_T_CVAR_HANDLE_NULL;
    rc = MPI_T_cvar_handle_free(&h);
    T_ERR(rc, MPI_T_ERR_INVALID_HANDLE, "MPI_T_cvar_handle_free(MPI_T_CVAR_HANDLE_NULL)");
    rc = MPI_T_cvar_get_num(NULL);
    T_ERR(rc, MPI_T_ERR_INVALID, "MPI_T_cvar_get_num(NULL)");
    rc = MPI_T_cvar_get_index(NULL, &idx);
    T_ERR(rc, MPI_T_ERR_INVALID, "MPI_T_cvar_get_index(NULL name)");
}

static void check_pvars(const char *when, int after_init)
{
    int num = -1;
    int rc = MPI_T_pvar_get_num(&num);
    T_OK(rc, "MPI_T_pvar_get_num");
    CHECK(num >= 0, "%s: %d pvars", when, num);
    if (num_pvars_seen >= 0)
        CHECK(num >= num_pvars_seen, "%s: %d pvars, %d before", when, num, num_pvars_seen);
    num_pvars_seen = num;
    MPI_T_pvar_session session = MPI_T_PVAR_SESSION_NULL, other = MPI_T_PVAR_SESSION_NULL;
    rc = MPI_T_pvar_session_create(&session);
    T_OK(rc, "MPI_T_pvar_session_create");
    rc = MPI_T_pvar_session_create(&other);
    T_OK(rc, "MPI_T_pvar_session_create");
    CHECK(session != MPI_T_PVAR_SESSION_NULL && other != session, "%s: sessions", when);
    int counters = 0, found_vcis = 0;
    for (int i = 0; i < num; i++) {
        char name[4096], desc[4096];
        int verb = -1, cls = -1, bind = -1, ro = -1, cont = -1, at = -1, nl = 0, dl = 0;
        MPI_Datatype dt = MPI_DATATYPE_NULL;
        MPI_T_enum e = MPI_T_ENUM_NULL;
        rc = MPI_T_pvar_get_info(i, NULL, &nl, &verb, &cls, &dt, &e, NULL, &dl, &bind, &ro,
                                 &cont, &at);
        if (!T_OK(rc, "MPI_T_pvar_get_info"))
            continue;
        if (check_string(when, "pvar name", i, pvar_name, name, sizeof name) == 0)
            continue;
        check_string(when, "pvar desc", i, pvar_desc, desc, sizeof desc);
        CHECK(valid_verbosity(verb), "%s: pvar %s verbosity %d", when, name, verb);
        CHECK(valid_class(cls), "%s: pvar %s class %d", when, name, cls);
        CHECK(valid_bind(bind), "%s: pvar %s bind %d", when, name, bind);
        CHECK((ro == 0 || ro == 1) && (cont == 0 || cont == 1) && (at == 0 || at == 1),
              "%s: pvar %s readonly %d continuous %d atomic %d", when, name, ro, cont, at);
        size_t esz = type_size(dt);
        CHECK(esz != 0, "%s: pvar %s has a datatype outside the MPI_T table", when, name);
        if (e != MPI_T_ENUM_NULL)
            check_enum(when, e);
        int idx = -1;
        rc = MPI_T_pvar_get_index(name, cls, &idx);
        T_OK(rc, "MPI_T_pvar_get_index");
        CHECK(idx == i, "%s: pvar %s: index %d, get_index gives %d", when, name, i, idx);

        MPI_Comm comm = MPI_COMM_WORLD;
        void *obj = NULL;
        if (bind == MPI_T_BIND_MPI_COMM && after_init)
            obj = &comm;
        else if (bind != MPI_T_BIND_NO_OBJECT)
            continue;
        MPI_T_pvar_handle h = MPI_T_PVAR_HANDLE_NULL;
        int count = -1;
        rc = MPI_T_pvar_handle_alloc(session, i, obj, &h, &count);
        if (!T_OK(rc, "MPI_T_pvar_handle_alloc"))
            continue;
        CHECK(count >= 1 && count < 1 << 20, "%s: pvar %s count %d", when, name, count);
        if (count < 1 || count >= 1 << 20)
            continue;
        size_t bytes = esz * (size_t)count;
        unsigned char *buf = malloc(bytes + 64), *buf2 = malloc(bytes + 64);
        memset(buf, 0xa5, bytes + 64);
        if (!cont) {
            rc = MPI_T_pvar_start(session, h);
            T_OK(rc, "MPI_T_pvar_start");
        }
        rc = MPI_T_pvar_read(session, h, buf);
        T_OK(rc, "MPI_T_pvar_read");
        long k;
        for (k = 0; k < 64 && buf[bytes + k] == 0xa5; k++)
            ;
        CHECK(k == 64, "%s: pvar %s: read wrote past count %d", when, name, count);
        if (cont) {
            rc = MPI_T_pvar_start(session, h);
            T_ERR(rc, MPI_T_ERR_PVAR_NO_STARTSTOP, "MPI_T_pvar_start of a continuous pvar");
            rc = MPI_T_pvar_stop(session, h);
            T_ERR(rc, MPI_T_ERR_PVAR_NO_STARTSTOP, "MPI_T_pvar_stop of a continuous pvar");
        } else {
            rc = MPI_T_pvar_stop(session, h);
            T_OK(rc, "MPI_T_pvar_stop");
        }
        if (ro) {
            rc = MPI_T_pvar_write(session, h, buf);
            T_ERR(rc, MPI_T_ERR_PVAR_NO_WRITE, "MPI_T_pvar_write of a readonly pvar");
            rc = MPI_T_pvar_reset(session, h);
            T_ERR(rc, MPI_T_ERR_PVAR_NO_WRITE, "MPI_T_pvar_reset of a readonly pvar");
            rc = MPI_T_pvar_readreset(session, h, buf2);
            T_ERR(rc, MPI_T_ERR_PVAR_NO_WRITE, "MPI_T_pvar_readreset of a readonly pvar");
        }
        if (cls == MPI_T_PVAR_CLASS_COUNTER && dt == MPI_UNSIGNED_LONG_LONG && count == 1) {
            /* Counters do not go backwards. */
            rc = MPI_T_pvar_read(session, h, buf2);
            T_OK(rc, "MPI_T_pvar_read");
            unsigned long long a, b;
            memcpy(&a, buf, 8);
            memcpy(&b, buf2, 8);
            CHECK(b >= a, "%s: counter %s went from %llu to %llu", when, name, a, b);
            counters++;
        }
        if (is_hympi && strcmp(name, "vci_count") == 0) {
            unsigned long long v;
            memcpy(&v, buf, 8);
            found_vcis = 1;
            CHECK(cls == MPI_T_PVAR_CLASS_SIZE && ro && cont &&
                      (after_init ? v >= 1 : v == 0),
                  "%s: vci_count class %d reads %llu", when, cls, v);
        }
        /* A handle of another session is not valid here. */
        rc = MPI_T_pvar_read(other, h, buf2);
        T_ERR(rc, MPI_T_ERR_INVALID_HANDLE, "MPI_T_pvar_read in another session");
        free(buf);
        free(buf2);
        rc = MPI_T_pvar_handle_free(session, &h);
        T_OK(rc, "MPI_T_pvar_handle_free");
        CHECK(h == MPI_T_PVAR_HANDLE_NULL, "%s: handle not set to MPI_T_PVAR_HANDLE_NULL", when);
    }
    if (is_hympi)
        CHECK(found_vcis && counters >= 3, "%s: vci_count %d, %d counters", when, found_vcis,
              counters);
    /* A handle left allocated is freed with its session. */
    if (num > 0) {
        MPI_T_pvar_handle h;
        int count;
        rc = MPI_T_pvar_handle_alloc(other, 0, NULL, &h, &count);
        (void)rc;
    }
    rc = MPI_T_pvar_start(session, MPI_T_PVAR_ALL_HANDLES);
    T_OK(rc, "MPI_T_pvar_start(MPI_T_PVAR_ALL_HANDLES)");
    rc = MPI_T_pvar_stop(session, MPI_T_PVAR_ALL_HANDLES);
    T_OK(rc, "MPI_T_pvar_stop(MPI_T_PVAR_ALL_HANDLES)");

    /* Errors. */
    char nb[64];
    unsigned long long v[8];
    int nl = sizeof nb, idx, verb, cls, bind, ro, cont, at, dl = 0, count;
    MPI_Datatype dt;
    MPI_T_enum e;
    MPI_T_pvar_handle h;
    rc = MPI_T_pvar_get_info(-1, nb, &nl, &verb, &cls, &dt, &e, NULL, &dl, &bind, &ro, &cont,
                             &at);
    T_ERR(rc, MPI_T_ERR_INVALID_INDEX, "MPI_T_pvar_get_info(-1)");
#ifndef MPICH_VERSION /* MPICH 4.0.2 crashes (NULL dereference) */
    rc = MPI_T_pvar_get_info(num, nb, &nl, &verb, &cls, &dt, &e, NULL, &dl, &bind, &ro, &cont,
                             &at);
    T_ERR(rc, MPI_T_ERR_INVALID_INDEX, "MPI_T_pvar_get_info(num)");
#endif
    rc = MPI_T_pvar_get_index("mtest_no_such_pvar", MPI_T_PVAR_CLASS_COUNTER, &idx);
    T_ERR(rc, MPI_T_ERR_INVALID_NAME, "MPI_T_pvar_get_index(unknown)");
#ifndef MPICH_VERSION /* MPICH 4.0.2 crashes (NULL dereference) */
    rc = MPI_T_pvar_handle_alloc(session, num, NULL, &h, &count);
    T_ERR(rc, MPI_T_ERR_INVALID_INDEX, "MPI_T_pvar_handle_alloc(num)");
#endif
    rc = MPI_T_pvar_read(session, MPI_T_PVAR_HANDLE_NULL, v);
    T_ERR(rc, MPI_T_ERR_INVALID_HANDLE, "MPI_T_pvar_read(MPI_T_PVAR_HANDLE_NULL)");
    /* MPI_T_PVAR_ALL_HANDLES is only for start, stop and reset; the standard names no class
     * for its misuse (MPICH: MPI_T_ERR_INVALID). */
    rc = MPI_T_pvar_read(session, MPI_T_PVAR_ALL_HANDLES, v);
    CHECK(rc == MPI_T_ERR_INVALID_HANDLE || rc == MPI_T_ERR_INVALID,
          "%s: MPI_T_pvar_read(MPI_T_PVAR_ALL_HANDLES) returned %d", when, rc);
    rc = MPI_T_pvar_read(MPI_T_PVAR_SESSION_NULL, MPI_T_PVAR_HANDLE_NULL, v);
    T_ERR(rc, MPI_T_ERR_INVALID_SESSION, "MPI_T_pvar_read(MPI_T_PVAR_SESSION_NULL)");
    rc = MPI_T_pvar_get_num(NULL);
    T_ERR(rc, MPI_T_ERR_INVALID, "MPI_T_pvar_get_num(NULL)");

    rc = MPI_T_pvar_session_free(&session);
    T_OK(rc, "MPI_T_pvar_session_free");
    CHECK(session == MPI_T_PVAR_SESSION_NULL, "%s: session not set to NULL", when);
    rc = MPI_T_pvar_session_free(&other);
    T_OK(rc, "MPI_T_pvar_session_free (with a handle left)");
    rc = MPI_T_pvar_session_free(&other);
    T_ERR(rc, MPI_T_ERR_INVALID_SESSION, "MPI_T_pvar_session_free(MPI_T_PVAR_SESSION_NULL)");
}

static void check_categories(const char *when)
{
    int num = -1, ncv = 0, npv = 0;
    int rc = MPI_T_category_get_num(&num);
    T_OK(rc, "MPI_T_category_get_num");
    CHECK(num >= 0, "%s: %d categories", when, num);
    if (num_cats_seen >= 0)
        CHECK(num >= num_cats_seen, "%s: %d categories, %d before", when, num, num_cats_seen);
    num_cats_seen = num;
    MPI_T_cvar_get_num(&ncv);
    MPI_T_pvar_get_num(&npv);
    int stamp1 = -1, stamp2 = -2;
    rc = MPI_T_category_changed(&stamp1);
    T_OK(rc, "MPI_T_category_changed");
    int found = 0;
    for (int i = 0; i < num; i++) {
        char name[4096], desc[4096];
        int nc = -1, np = -1, ncat = -1, nl = 0, dl = 0;
        rc = MPI_T_category_get_info(i, NULL, &nl, NULL, &dl, &nc, &np, &ncat);
        if (!T_OK(rc, "MPI_T_category_get_info"))
            continue;
        if (check_string(when, "category name", i, cat_name, name, sizeof name) == 0)
            continue;
        check_string(when, "category desc", i, cat_desc, desc, sizeof desc);
        CHECK(nc >= 0 && np >= 0 && ncat >= 0, "%s: category %s: %d %d %d", when, name, nc, np,
              ncat);
        int idx = -1;
        rc = MPI_T_category_get_index(name, &idx);
        T_OK(rc, "MPI_T_category_get_index");
        CHECK(idx == i, "%s: category %s: index %d, get_index gives %d", when, name, i, idx);
        int n = nc + np + ncat + 1;
        int *ix = malloc(sizeof(int) * (size_t)(n + 1));
        for (int k = 0; k <= n; k++)
            ix[k] = -7;
        rc = MPI_T_category_get_cvars(i, nc, ix);
        T_OK(rc, "MPI_T_category_get_cvars");
        for (int k = 0; k < nc; k++)
            CHECK(ix[k] >= 0 && ix[k] < ncv, "%s: category %s: cvar %d", when, name, ix[k]);
        CHECK(ix[nc] == -7, "%s: category %s: get_cvars wrote past len", when, name);
        if (is_hympi && strcmp(name, "transport") == 0) {
            int eager = -1;
            MPI_T_cvar_get_index("HYMPI_EAGER_MAX", &eager);
            int in = 0;
            for (int k = 0; k < nc; k++)
                in |= ix[k] == eager;
            CHECK(in, "%s: HYMPI_EAGER_MAX not in category transport", when);
            found++;
        }
        if (is_hympi && (strcmp(name, "threads") == 0 || strcmp(name, "stealing") == 0 ||
                         strcmp(name, "collectives") == 0))
            found++;
        for (int k = 0; k <= n; k++)
            ix[k] = -7;
        rc = MPI_T_category_get_pvars(i, np, ix);
        T_OK(rc, "MPI_T_category_get_pvars");
        for (int k = 0; k < np; k++)
            CHECK(ix[k] >= 0 && ix[k] < npv, "%s: category %s: pvar %d", when, name, ix[k]);
        CHECK(ix[np] == -7, "%s: category %s: get_pvars wrote past len", when, name);
        for (int k = 0; k <= n; k++)
            ix[k] = -7;
        rc = MPI_T_category_get_categories(i, ncat, ix);
        T_OK(rc, "MPI_T_category_get_categories");
        for (int k = 0; k < ncat; k++)
            CHECK(ix[k] >= 0 && ix[k] < num && ix[k] != i, "%s: category %s: subcategory %d",
                  when, name, ix[k]);
        CHECK(ix[ncat] == -7, "%s: category %s: get_categories wrote past len", when, name);
        /* A shorter len returns a prefix. */
        if (nc >= 2) {
            int two[3] = {-7, -7, -7};
            rc = MPI_T_category_get_cvars(i, 1, two);
            T_OK(rc, "MPI_T_category_get_cvars(len 1)");
            CHECK(two[0] >= 0 && two[1] == -7, "%s: category %s: len 1 gave %d %d", when, name,
                  two[0], two[1]);
        }
        int ne = -1;
        rc = MPI_T_category_get_num_events(i, &ne);
        T_OK(rc, "MPI_T_category_get_num_events");
        CHECK(ne >= 0, "%s: category %s: %d events", when, name, ne);
        if (ne >= 0) {
            int *ev = malloc(sizeof(int) * (size_t)(ne + 1));
            ev[ne] = -7;
            rc = MPI_T_category_get_events(i, ne, ev);
            T_OK(rc, "MPI_T_category_get_events");
            CHECK(ev[ne] == -7, "%s: category %s: get_events wrote past len", when, name);
            free(ev);
        }
        free(ix);
    }
    if (is_hympi)
        CHECK(found == 4, "%s: hympi's four categories: found %d", when, found);
    rc = MPI_T_category_changed(&stamp2);
    T_OK(rc, "MPI_T_category_changed");
    CHECK(stamp1 == stamp2, "%s: categories changed (%d -> %d) while nothing happened", when,
          stamp1, stamp2);

    char nb[64];
    int nl = sizeof nb, dl = 0, nc, np, ncat, idx, ix[4];
    rc = MPI_T_category_get_info(-1, nb, &nl, NULL, &dl, &nc, &np, &ncat);
    T_ERR(rc, MPI_T_ERR_INVALID_INDEX, "MPI_T_category_get_info(-1)");
    rc = MPI_T_category_get_info(num, nb, &nl, NULL, &dl, &nc, &np, &ncat);
    T_ERR(rc, MPI_T_ERR_INVALID_INDEX, "MPI_T_category_get_info(num)");
    rc = MPI_T_category_get_index("mtest_no_such_category", &idx);
    T_ERR(rc, MPI_T_ERR_INVALID_NAME, "MPI_T_category_get_index(unknown)");
    rc = MPI_T_category_get_cvars(num, 4, ix);
    T_ERR(rc, MPI_T_ERR_INVALID_INDEX, "MPI_T_category_get_cvars(num)");
    rc = MPI_T_category_get_pvars(-1, 4, ix);
    T_ERR(rc, MPI_T_ERR_INVALID_INDEX, "MPI_T_category_get_pvars(-1)");
    rc = MPI_T_category_get_categories(num, 4, ix);
    T_ERR(rc, MPI_T_ERR_INVALID_INDEX, "MPI_T_category_get_categories(num)");
    rc = MPI_T_category_get_num_events(num, &idx);
    T_ERR(rc, MPI_T_ERR_INVALID_INDEX, "MPI_T_category_get_num_events(num)");
    rc = MPI_T_category_get_num(NULL);
    T_ERR(rc, MPI_T_ERR_INVALID, "MPI_T_category_get_num(NULL)");
}

static void check_events_and_sources(const char *when, int after_init)
{
    int num = -1;
    int rc = MPI_T_event_get_num(&num);
    T_OK(rc, "MPI_T_event_get_num");
    CHECK(num >= 0, "%s: %d event types", when, num);
    if (is_hympi)
        CHECK(num == 0, "%s: hympi exposes %d event types", when, num);
    char nb[64];
    int nl = sizeof nb, dl = 0, verb, nel = 0, bind, idx;
    MPI_T_enum e;
    MPI_Info info = MPI_INFO_NULL;
    rc = MPI_T_event_get_info(num, nb, &nl, &verb, NULL, NULL, &nel, &e, &info, NULL, &dl,
                              &bind);
    T_ERR(rc, MPI_T_ERR_INVALID_INDEX, "MPI_T_event_get_info(num)");
    rc = MPI_T_event_get_index("mtest_no_such_event", &idx);
    T_ERR(rc, MPI_T_ERR_INVALID_NAME, "MPI_T_event_get_index(unknown)");
    MPI_T_event_registration reg;
    rc = MPI_T_event_handle_alloc(num, NULL, MPI_INFO_NULL, &reg);
    T_ERR(rc, MPI_T_ERR_INVALID_INDEX, "MPI_T_event_handle_alloc(num)");

    int ns = -1;
    rc = MPI_T_source_get_num(&ns);
    T_OK(rc, "MPI_T_source_get_num");
    CHECK(ns >= 0, "%s: %d sources", when, ns);
    if (is_hympi)
        CHECK(ns == 1, "%s: hympi has %d sources", when, ns);
    for (int i = 0; i < ns; i++) {
        char name[4096], desc[4096];
        MPI_T_source_order order = -1;
        MPI_Count tps = -1, maxt = -1, t1 = -1, t2 = -1;
        info = MPI_INFO_NULL;
        nl = 0;
        dl = 0;
        rc = MPI_T_source_get_info(i, NULL, &nl, NULL, &dl, &order, &tps, &maxt, &info);
        if (!T_OK(rc, "MPI_T_source_get_info"))
            continue;
        if (after_init && info != MPI_INFO_NULL)
            MPI_Info_free(&info);
        check_string(when, "source name", i, source_name, name, sizeof name);
        check_string(when, "source desc", i, source_desc, desc, sizeof desc);
        CHECK(order == MPI_T_SOURCE_ORDERED || order == MPI_T_SOURCE_UNORDERED,
              "%s: source %s ordering %d", when, name, order);
        CHECK(tps > 0 && maxt > 0, "%s: source %s: %lld ticks/s, max %lld", when, name,
              (long long)tps, (long long)maxt);
        rc = MPI_T_source_get_timestamp(i, &t1);
        T_OK(rc, "MPI_T_source_get_timestamp");
        rc = MPI_T_source_get_timestamp(i, &t2);
        T_OK(rc, "MPI_T_source_get_timestamp");
        if (order == MPI_T_SOURCE_ORDERED)
            CHECK(t2 >= t1, "%s: source %s: timestamps %lld then %lld", when, name,
                  (long long)t1, (long long)t2);
        if (is_hympi && after_init) {
            /* The clock of MPI_Wtime. */
            double w = MPI_Wtime();
            double s = (double)t2 / (double)tps;
            CHECK(order == MPI_T_SOURCE_ORDERED && s <= w + 1e-3 && w - s < 1.0,
                  "%s: source time %.6f s, MPI_Wtime %.6f s", when, s, w);
        }
    }
    MPI_Count t;
    rc = MPI_T_source_get_timestamp(ns, &t);
    T_ERR(rc, MPI_T_ERR_INVALID_INDEX, "MPI_T_source_get_timestamp(num)");
    nl = 0;
    dl = 0;
    MPI_T_source_order order;
    MPI_Count tps, maxt;
    rc = MPI_T_source_get_info(-1, NULL, &nl, NULL, &dl, &order, &tps, &maxt, &info);
#ifdef MPICH_VERSION /* MPICH 4.0.2: MPI_T_ERR_INVALID */
    CHECK(rc != MPI_SUCCESS, "%s: MPI_T_source_get_info(-1) succeeded", when);
#else
    T_ERR(rc, MPI_T_ERR_INVALID_INDEX, "MPI_T_source_get_info(-1)");
#endif
}

static void check_everything(const char *when, int after_init)
{
    check_cvars(when, after_init);
    check_pvars(when, after_init);
    check_categories(when);
    check_events_and_sources(when, after_init);
}

/* Every query returns MPI_T_ERR_NOT_INITIALIZED. */
static void check_not_initialized(const char *when)
{
    int n, idx;
    MPI_T_pvar_session s;
    T_ERR(MPI_T_cvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED, "MPI_T_cvar_get_num");
    T_ERR(MPI_T_pvar_get_num(&n), MPI_T_ERR_NOT_INITIALIZED, "MPI_T_pvar_get_num");
    T_ERR(MPI_T_category_get_num(&n), MPI_T_ERR_NOT_INITIALIZED, "MPI_T_category_get_num");
    T_ERR(MPI_T_cvar_get_index("HYMPI_EAGER_MAX", &idx), MPI_T_ERR_NOT_INITIALIZED,
          "MPI_T_cvar_get_index");
    T_ERR(MPI_T_pvar_session_create(&s), MPI_T_ERR_NOT_INITIALIZED,
          "MPI_T_pvar_session_create");
    T_ERR(MPI_T_source_get_num(&n), MPI_T_ERR_NOT_INITIALIZED, "MPI_T_source_get_num");
    T_ERR(MPI_T_event_get_num(&n), MPI_T_ERR_NOT_INITIALIZED, "MPI_T_event_get_num");
    T_ERR(MPI_T_category_changed(&n), MPI_T_ERR_NOT_INITIALIZED, "MPI_T_category_changed");
    T_ERR(MPI_T_finalize(), MPI_T_ERR_NOT_INITIALIZED, "MPI_T_finalize");
}

static int t_init(const char *when)
{
    int provided = -1;
    int rc = MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    T_OK(rc, "MPI_T_init_thread");
    CHECK(provided == MPI_THREAD_SINGLE || provided == MPI_THREAD_FUNNELED ||
              provided == MPI_THREAD_SERIALIZED || provided == MPI_THREAD_MULTIPLE,
          "%s: provided %d", when, provided);
    return rc;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *when = "before MPI_T_init_thread";
    check_not_initialized(when);

    when = "before MPI_Init";
    t_init(when);
    int idx = -1;
    is_hympi = MPI_T_cvar_get_index("HYMPI_EAGER_MAX", &idx) == MPI_SUCCESS;
#ifdef HYMPI
    CHECK(is_hympi, "%s: hympi without HYMPI_EAGER_MAX", when);
#endif
    check_everything(when, 0);

    /* Nesting: a second init needs a second finalize. */
    int provided;
    T_OK(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided), "MPI_T_init_thread (nested)");
    T_OK(MPI_T_finalize(), "MPI_T_finalize (nested)");
    int n = -1;
    T_OK(MPI_T_cvar_get_num(&n), "MPI_T_cvar_get_num after a nested finalize");

    MTest_Init(&argc, &argv);
    when = "after MPI_Init";
    check_everything(when, 1);
    if (mtest_rank == 0)
        printf("%d cvars, %d pvars, %d categories\n", num_cvars_seen, num_pvars_seen,
               num_cats_seen);

    /* Handles do not survive the last MPI_T_finalize. */
    MPI_T_cvar_handle h = MPI_T_CVAR_HANDLE_NULL;
    int count;
    if (num_cvars_seen > 0)
        T_OK(MPI_T_cvar_handle_alloc(0, NULL, &h, &count), "MPI_T_cvar_handle_alloc");
    T_OK(MPI_T_finalize(), "MPI_T_finalize");
    when = "after the last MPI_T_finalize";
#ifndef MPICH_VERSION /* MPICH 4.0.2 aborts (its MPI_T mutex is destroyed) */
    check_not_initialized(when);
    {
        int buf[4096 / sizeof(int)];
        T_ERR(MPI_T_cvar_read(h, buf), MPI_T_ERR_NOT_INITIALIZED, "MPI_T_cvar_read");
    }
#endif
#ifndef MPICH_VERSION /* MPICH 4.0.2 crashes in MPI_T calls after a second initialization */
    when = "initialized again";
    t_init(when);
#ifdef HYMPI
    if (num_cvars_seen > 0) {
        int buf[4096 / sizeof(int)];
        T_ERR(MPI_T_cvar_read(h, buf), MPI_T_ERR_INVALID_HANDLE,
              "MPI_T_cvar_read of a handle from before the last MPI_T_finalize");
    }
#endif
    T_OK(MPI_T_cvar_get_num(&n), "MPI_T_cvar_get_num");
    CHECK(n == num_cvars_seen, "%s: %d cvars, %d before", when, n, num_cvars_seen);
    T_OK(MPI_T_finalize(), "MPI_T_finalize");
#endif

    int local = mtest_errors;
    int total = MTest_Sum_errors(0);
    MPI_Finalize();

    /* The interface works after MPI_Finalize too. */
    int before = mtest_errors;
#ifndef MPICH_VERSION
    when = "after MPI_Finalize";
    t_init(when);
    T_OK(MPI_T_cvar_get_num(&n), "MPI_T_cvar_get_num");
    CHECK(n == num_cvars_seen, "%s: %d cvars, %d before", when, n, num_cvars_seen);
    if (is_hympi) {
        T_OK(MPI_T_cvar_get_index("HYMPI_EAGER_MAX", &idx), "MPI_T_cvar_get_index");
        check_cvars(when, 0);
    }
    T_OK(MPI_T_finalize(), "MPI_T_finalize");
    check_not_initialized(when);
#endif
    int post = mtest_errors - before;
    if (mtest_rank == 0)
        MTest_Report(total + post);
    return local != 0 || post != 0;
}
