/* init_thread: MPI_Init_thread at the level named by MTEST_THREAD_LEVEL (single, funneled,
 * serialized, multiple; set by the testlist), MPI_Query_thread, MPI_Is_thread_main.
 *
 * provided must be one of the four levels and MPI_Query_thread must return it.  The standard
 * lets a library provide less than required when it cannot do better; hympi is built for
 * MPI+threads codes and supports MPI_THREAD_MULTIPLE, so this suite requires
 * provided >= required (MPICH and Open MPI meet it too).  Set MTEST_THREAD_LAX=1 to accept
 * a lower level.
 *
 * At MPI_THREAD_SERIALIZED and above, a second thread calls MPI_Is_thread_main (false
 * there) and, at MPI_THREAD_MULTIPLE, exchanges messages while the main thread does too. */
#include "mtest.h"
#include <pthread.h>

static int level_of(const char *s)
{
    if (!s || !strcmp(s, "single")) return MPI_THREAD_SINGLE;
    if (!strcmp(s, "funneled")) return MPI_THREAD_FUNNELED;
    if (!strcmp(s, "serialized")) return MPI_THREAD_SERIALIZED;
    if (!strcmp(s, "multiple")) return MPI_THREAD_MULTIPLE;
    printf("unknown MTEST_THREAD_LEVEL '%s'\n", s);
    exit(1);
}

static int thread_main_flag = -1;
static int provided = -1;

static void exchange(int tag)
{
    /* Pairs (0,1), (2,3): a few round trips with this thread's tag. */
    int partner = MTest_Partner();
    if (partner < 0)
        return;
    for (int i = 0; i < 50; i++) {
        int out = mtest_rank * 1000 + i, in = -1;
        MPI_Status st;
        MPI_Sendrecv(&out, 1, MPI_INT, partner, tag, &in, 1, MPI_INT, partner, tag, MPI_COMM_WORLD, &st);
        CHECK(in == partner * 1000 + i, "tag %d round %d: got %d", tag, i, in);
        CHECK(st.MPI_TAG == tag, "tag %d: status tag %d", tag, st.MPI_TAG);
    }
}

static void *thread_fn(void *arg)
{
    (void)arg;
    MPI_Is_thread_main(&thread_main_flag);
    if (provided == MPI_THREAD_MULTIPLE)
        exchange(11);
    return NULL;
}

int main(int argc, char **argv)
{
    int required = level_of(getenv("MTEST_THREAD_LEVEL"));
    const char *lax = getenv("MTEST_THREAD_LAX");
    MTest_Init_thread(&argc, &argv, required, &provided);

    CHECK(provided == MPI_THREAD_SINGLE || provided == MPI_THREAD_FUNNELED ||
              provided == MPI_THREAD_SERIALIZED || provided == MPI_THREAD_MULTIPLE,
          "provided %d is not a thread level", provided);
    if (!(lax && !strcmp(lax, "1")))
        CHECK(provided >= required, "required %d, provided %d", required, provided);

    int q = -1;
    int rc = MPI_Query_thread(&q);
    CHECK_RC(rc, "MPI_Query_thread");
    CHECK(q == provided, "MPI_Query_thread gave %d, MPI_Init_thread provided %d", q, provided);

    int flag = -1;
    rc = MPI_Is_thread_main(&flag);
    CHECK(rc == MPI_SUCCESS && flag == 1, "MPI_Is_thread_main in main: rc %d flag %d", rc, flag);

    if (provided >= MPI_THREAD_SERIALIZED) {
        pthread_t th;
        if (pthread_create(&th, NULL, thread_fn, NULL) == 0) {
            if (provided == MPI_THREAD_MULTIPLE)
                exchange(10);
            pthread_join(th, NULL);
            CHECK(thread_main_flag == 0, "MPI_Is_thread_main in another thread gave %d", thread_main_flag);
        } else {
            CHECK(0, "pthread_create failed");
        }
    }
    /* The main thread can always communicate. */
    exchange(12);
    return MTest_Finalize(0);
}
