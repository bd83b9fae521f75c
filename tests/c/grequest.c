/* grequest: generalized requests (MPI_Grequest_start, MPI_Grequest_complete; MPI-4.1
 * section 13.2).
 *
 * Every rank works alone (on MPI_COMM_SELF for its ordinary requests):
 * - a request completed by a second thread while the main thread is in MPI_Wait, and in
 *   MPI_Waitall with an ordinary self Isend/Irecv (MPI_THREAD_MULTIPLE; skipped without it);
 * - MPI_Test is false (no callback runs) until MPI_Grequest_complete, then true;
 * - MPI_Waitall, MPI_Waitany and MPI_Testsome mixing generalized and ordinary requests: only
 *   completed generalized requests are returned, each status filled by its query_fn;
 * - query_fn sets source and tag (MPI_Status_set_source/tag, MPI-4.1; guarded) and the count
 *   (MPI_Status_set_elements); it gets a valid status under MPI_STATUS(ES)_IGNORE;
 * - query_fn runs once per completing call and before free_fn, which runs exactly once with
 *   the request's extra_state;
 * - query_fn returning MPI_ERR_OTHER: MPI_Waitall returns MPI_ERR_IN_STATUS with that error
 *   in its status (MPI_SUCCESS in the others, or MPI_ERR_PENDING with the request left
 *   active, which the standard allows and MPICH 4.0.2 does), MPI_Wait returns it
 *   (MPI_ERRORS_RETURN); the request is freed either way;
 * - MPI_Cancel calls cancel_fn with complete = 0 before and 1 after MPI_Grequest_complete;
 * - MPI_Request_get_status calls query_fn (each time) without freeing once complete, and
 *   nothing before;
 * - MPI_Request_free before completion: free_fn runs in MPI_Grequest_complete (called on a
 *   copy of the handle), query_fn never; after completion: free_fn runs in MPI_Request_free
 *   (MPICH 4.0.2 runs it in MPI_Request_free in both cases: relaxed there);
 * - MPI_Grequest_complete(MPI_REQUEST_NULL) is MPI_ERR_REQUEST.
 * Under MPI < 4.1 only the count set by query_fn is checked, not source and tag. */
#include "mtest.h"
#include <pthread.h>
#include <sched.h>

#define MTEST_MPI_4_1 (MPI_VERSION > 4 || (MPI_VERSION == 4 && MPI_SUBVERSION >= 1))
#define MAGIC 0x6772657

typedef struct {
    int magic;
    int source, tag, count; /* what query_fn sets */
    int query_rc;           /* what query_fn returns */
    int cancelled;          /* set by cancel_fn, reported by query_fn */
    int query_calls, free_calls, cancel_calls, last_complete;
    int query_seq, free_seq; /* order of the last calls */
    int null_status;         /* query_fn got a NULL status */
} greq_t;

static int seq = 0;

static int query_fn(void *extra, MPI_Status *status)
{
    greq_t *g = extra;
    CHECK(g->magic == MAGIC, "query_fn got a wrong extra_state");
    g->query_calls++;
    g->query_seq = ++seq;
    if (!status) {
        g->null_status++;
        return g->query_rc;
    }
#if MTEST_MPI_4_1
    MPI_Status_set_source(status, g->source);
    MPI_Status_set_tag(status, g->tag);
#else
    status->MPI_SOURCE = g->source;
    status->MPI_TAG = g->tag;
#endif
    MPI_Status_set_elements(status, MPI_INT, g->count);
    MPI_Status_set_cancelled(status, g->cancelled);
    return g->query_rc;
}

static int free_fn(void *extra)
{
    greq_t *g = extra;
    CHECK(g->magic == MAGIC, "free_fn got a wrong extra_state");
    g->free_calls++;
    g->free_seq = ++seq;
    return MPI_SUCCESS;
}

static int cancel_fn(void *extra, int complete)
{
    greq_t *g = extra;
    CHECK(g->magic == MAGIC, "cancel_fn got a wrong extra_state");
    g->cancel_calls++;
    g->last_complete = complete;
    if (!complete)
        g->cancelled = 1;
    return MPI_SUCCESS;
}

static void greq_init(greq_t *g, int id)
{
    memset(g, 0, sizeof *g);
    g->magic = MAGIC;
    g->source = 100 + id;
    g->tag = 200 + id;
    g->count = 3 + id;
}

static MPI_Request start(greq_t *g)
{
    MPI_Request r = MPI_REQUEST_NULL;
    int rc = MPI_Grequest_start(query_fn, free_fn, cancel_fn, g, &r);
    CHECK_RC(rc, "MPI_Grequest_start");
    CHECK(r != MPI_REQUEST_NULL, "MPI_Grequest_start gave MPI_REQUEST_NULL");
    return r;
}

static void complete(MPI_Request r)
{
    int rc = MPI_Grequest_complete(r);
    CHECK_RC(rc, "MPI_Grequest_complete");
}

/* The status query_fn of g filled (source and tag only under MPI >= 4.1). */
static void check_status(const MPI_Status *st, const greq_t *g, const char *what)
{
    int count = -1;
    MPI_Get_count(st, MPI_INT, &count);
    CHECK(count == g->count, "%s: count %d, query_fn set %d", what, count, g->count);
#if MTEST_MPI_4_1
    CHECK(st->MPI_SOURCE == g->source && st->MPI_TAG == g->tag,
          "%s: source/tag %d/%d, query_fn set %d/%d", what, st->MPI_SOURCE, st->MPI_TAG,
          g->source, g->tag);
#endif
}

/* Completed and freed by a wait or test: query_fn once, then free_fn once. */
static void check_freed(const greq_t *g, const char *what)
{
    CHECK(g->query_calls == 1, "%s: query_fn called %d times", what, g->query_calls);
    CHECK(g->free_calls == 1, "%s: free_fn called %d times", what, g->free_calls);
    CHECK(g->query_seq < g->free_seq, "%s: free_fn ran before query_fn", what);
    CHECK(g->null_status == 0, "%s: query_fn got a NULL status", what);
}

/* ---- completion by another thread ---- */

typedef struct {
    MPI_Request req;
    int delay_ms;
    int rc;
} completer_t;

static void *completer(void *arg)
{
    completer_t *c = arg;
    MTest_Sleep_ms(c->delay_ms);
    c->rc = MPI_Grequest_complete(c->req);
    return NULL;
}

static void threaded(void)
{
    greq_t g;
    MPI_Status st;
    pthread_t th;
    completer_t c;

    /* MPI_Wait blocks until the other thread completes the request. */
    greq_init(&g, 1);
    c.req = start(&g);
    c.delay_ms = 100;
    c.rc = -1;
    MPI_Request req = c.req;
    pthread_create(&th, NULL, completer, &c);
    MTest_Poison_status(&st);
    double t0 = MPI_Wtime();
    int rc = MPI_Wait(&req, &st);
    double dt = MPI_Wtime() - t0;
    pthread_join(th, NULL);
    CHECK_RC(rc, "MPI_Wait on a request completed by another thread");
    CHECK_RC(c.rc, "MPI_Grequest_complete in another thread");
    CHECK(req == MPI_REQUEST_NULL, "MPI_Wait did not free the generalized request");
    CHECK(dt > 0.05, "MPI_Wait returned after %.3f s, before MPI_Grequest_complete", dt);
    check_status(&st, &g, "threaded MPI_Wait");
    check_freed(&g, "threaded MPI_Wait");

    /* MPI_Waitall with an ordinary self exchange and a request completed meanwhile. */
    {
        int x = 42, y = 0;
        MPI_Request reqs[3];
        MPI_Status sts[3];
        greq_init(&g, 2);
        c.req = start(&g);
        c.delay_ms = 50;
        c.rc = -1;
        reqs[0] = c.req;
        MPI_Irecv(&y, 1, MPI_INT, 0, 5, MPI_COMM_SELF, &reqs[1]);
        MPI_Isend(&x, 1, MPI_INT, 0, 5, MPI_COMM_SELF, &reqs[2]);
        pthread_create(&th, NULL, completer, &c);
        rc = MPI_Waitall(3, reqs, sts);
        pthread_join(th, NULL);
        CHECK_RC(rc, "threaded MPI_Waitall");
        CHECK_RC(c.rc, "MPI_Grequest_complete in another thread");
        CHECK(reqs[0] == MPI_REQUEST_NULL && reqs[1] == MPI_REQUEST_NULL &&
                  reqs[2] == MPI_REQUEST_NULL,
              "MPI_Waitall left a request");
        CHECK(y == 42, "self message gave %d", y);
        check_status(&sts[0], &g, "threaded MPI_Waitall");
        check_freed(&g, "threaded MPI_Waitall");
    }
}

int main(int argc, char **argv)
{
    int provided = 0, rc, flag, index, outcount;
    MPI_Status st;
    MPI_Request req;
    greq_t g;

    MTest_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MTest_Errors_return_all();

    if (provided == MPI_THREAD_MULTIPLE)
        threaded();
    else
        MTest_Skip("no MPI_THREAD_MULTIPLE: completion by another thread not tested");

    /* MPI_Test: false (no callback) until MPI_Grequest_complete. */
    greq_init(&g, 3);
    req = start(&g);
    for (int i = 0; i < 3; i++) {
        flag = 1;
        rc = MPI_Test(&req, &flag, &st);
        CHECK(rc == MPI_SUCCESS && !flag, "MPI_Test of an incomplete request gave flag %d", flag);
    }
    CHECK(req != MPI_REQUEST_NULL, "MPI_Test freed an incomplete request");
    CHECK(g.query_calls == 0 && g.free_calls == 0, "callbacks ran before completion");
    complete(req);
    CHECK(g.query_calls == 0 && g.free_calls == 0, "MPI_Grequest_complete ran a callback");
    MTest_Poison_status(&st);
    flag = 0;
    rc = MPI_Test(&req, &flag, &st);
    CHECK(rc == MPI_SUCCESS && flag, "MPI_Test after MPI_Grequest_complete gave flag %d", flag);
    CHECK(req == MPI_REQUEST_NULL, "MPI_Test did not free the completed request");
    check_status(&st, &g, "MPI_Test");
    check_freed(&g, "MPI_Test");

    /* MPI_Wait with MPI_STATUS_IGNORE: query_fn still runs on a valid status. */
    greq_init(&g, 4);
    req = start(&g);
    complete(req);
    rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    CHECK_RC(rc, "MPI_Wait(MPI_STATUS_IGNORE)");
    check_freed(&g, "MPI_Wait(MPI_STATUS_IGNORE)");

    /* MPI_Waitall: two generalized requests and a self exchange. */
    {
        greq_t a, b;
        int x = 7, y = 0;
        MPI_Request reqs[4];
        MPI_Status sts[4];
        greq_init(&a, 5);
        greq_init(&b, 6);
        reqs[0] = start(&a);
        MPI_Irecv(&y, 1, MPI_INT, 0, 6, MPI_COMM_SELF, &reqs[1]);
        reqs[2] = start(&b);
        MPI_Isend(&x, 1, MPI_INT, 0, 6, MPI_COMM_SELF, &reqs[3]);
        complete(reqs[2]);
        complete(reqs[0]);
        rc = MPI_Waitall(4, reqs, sts);
        CHECK_RC(rc, "MPI_Waitall");
        for (int i = 0; i < 4; i++)
            CHECK(reqs[i] == MPI_REQUEST_NULL, "MPI_Waitall left request %d", i);
        CHECK(y == 7, "self message gave %d", y);
        check_status(&sts[0], &a, "MPI_Waitall [0]");
        check_status(&sts[2], &b, "MPI_Waitall [2]");
        CHECK(sts[1].MPI_SOURCE == 0 && sts[1].MPI_TAG == 6, "receive status %d/%d",
              sts[1].MPI_SOURCE, sts[1].MPI_TAG);
        check_freed(&a, "MPI_Waitall a");
        check_freed(&b, "MPI_Waitall b");

        /* And with MPI_STATUSES_IGNORE. */
        greq_init(&a, 7);
        reqs[0] = start(&a);
        reqs[1] = MPI_REQUEST_NULL;
        complete(reqs[0]);
        rc = MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
        CHECK_RC(rc, "MPI_Waitall(MPI_STATUSES_IGNORE)");
        check_freed(&a, "MPI_Waitall(MPI_STATUSES_IGNORE)");
    }

    /* MPI_Waitany: the ordinary requests first while the generalized one is incomplete. */
    {
        greq_t a;
        int x = 8, y = 0, seen_recv = 0, seen_send = 0;
        MPI_Request reqs[3];
        greq_init(&a, 8);
        reqs[0] = start(&a);
        MPI_Irecv(&y, 1, MPI_INT, 0, 7, MPI_COMM_SELF, &reqs[1]);
        MPI_Isend(&x, 1, MPI_INT, 0, 7, MPI_COMM_SELF, &reqs[2]);
        for (int k = 0; k < 2; k++) {
            index = -1;
            rc = MPI_Waitany(3, reqs, &index, &st);
            CHECK_RC(rc, "MPI_Waitany");
            CHECK(index == 1 || index == 2, "MPI_Waitany returned index %d", index);
            seen_recv += index == 1;
            seen_send += index == 2;
        }
        CHECK(seen_recv == 1 && seen_send == 1, "MPI_Waitany: recv %d, send %d", seen_recv,
              seen_send);
        CHECK(a.query_calls == 0, "query_fn of an incomplete request ran");
        CHECK(reqs[0] != MPI_REQUEST_NULL, "MPI_Waitany freed the incomplete request");
        complete(reqs[0]);
        MTest_Poison_status(&st);
        rc = MPI_Waitany(3, reqs, &index, &st);
        CHECK(rc == MPI_SUCCESS && index == 0, "MPI_Waitany gave index %d", index);
        CHECK(reqs[0] == MPI_REQUEST_NULL, "MPI_Waitany did not free the request");
        check_status(&st, &a, "MPI_Waitany");
        check_freed(&a, "MPI_Waitany");
        rc = MPI_Waitany(3, reqs, &index, &st);
        CHECK(rc == MPI_SUCCESS && index == MPI_UNDEFINED, "MPI_Waitany of nothing gave %d",
              index);
    }

    /* MPI_Testsome: a completed and an incomplete generalized request and a self exchange. */
    {
        greq_t a, b;
        int x = 9, y = 0, got_a = 0, got_recv = 0, got_send = 0, rounds = 0;
        MPI_Request reqs[4];
        MPI_Status sts[4];
        int idx[4];
        greq_init(&a, 9);
        greq_init(&b, 10);
        reqs[0] = start(&a);
        reqs[1] = start(&b);
        MPI_Irecv(&y, 1, MPI_INT, 0, 8, MPI_COMM_SELF, &reqs[2]);
        MPI_Isend(&x, 1, MPI_INT, 0, 8, MPI_COMM_SELF, &reqs[3]);
        complete(reqs[0]);
        double t0 = MPI_Wtime();
        while (!(got_a && got_recv && got_send) && MPI_Wtime() - t0 < 30) {
            rounds++;
            outcount = -1;
            rc = MPI_Testsome(4, reqs, &outcount, idx, sts);
            CHECK_RC(rc, "MPI_Testsome");
            CHECK(outcount >= 0 && outcount <= 3, "MPI_Testsome gave outcount %d", outcount);
            for (int k = 0; k < outcount && k < 4; k++) {
                CHECK(idx[k] != 1, "MPI_Testsome returned the incomplete request");
                if (idx[k] == 0) {
                    got_a++;
                    check_status(&sts[k], &a, "MPI_Testsome");
                }
                got_recv += idx[k] == 2;
                got_send += idx[k] == 3;
            }
        }
        CHECK(got_a == 1 && got_recv == 1 && got_send == 1,
              "MPI_Testsome: completed request %d times, recv %d, send %d (%d rounds)", got_a,
              got_recv, got_send, rounds);
        check_freed(&a, "MPI_Testsome a");
        CHECK(b.query_calls == 0 && b.free_calls == 0, "callbacks of the incomplete request ran");
        rc = MPI_Testsome(4, reqs, &outcount, idx, sts);
        CHECK(rc == MPI_SUCCESS && outcount == 0, "MPI_Testsome gave %d before completion",
              outcount);
        complete(reqs[1]);
        rc = MPI_Testsome(4, reqs, &outcount, idx, sts);
        CHECK(rc == MPI_SUCCESS && outcount == 1 && idx[0] == 1,
              "MPI_Testsome after completion: outcount %d index %d", outcount, idx[0]);
        if (outcount == 1)
            check_status(&sts[0], &b, "MPI_Testsome b");
        check_freed(&b, "MPI_Testsome b");
        rc = MPI_Testsome(4, reqs, &outcount, idx, sts);
        CHECK(rc == MPI_SUCCESS && outcount == MPI_UNDEFINED,
              "MPI_Testsome of nothing gave outcount %d", outcount);
    }

    /* query_fn failing: MPI_ERR_IN_STATUS from MPI_Waitall, the error in its status. */
    {
        greq_t a, b;
        int x = 10, y = 0;
        MPI_Request reqs[4];
        MPI_Status sts[4];
        greq_init(&a, 11);
        greq_init(&b, 12);
        a.query_rc = MPI_ERR_OTHER;
        reqs[0] = start(&a);
        reqs[1] = start(&b);
        MPI_Irecv(&y, 1, MPI_INT, 0, 9, MPI_COMM_SELF, &reqs[2]);
        MPI_Isend(&x, 1, MPI_INT, 0, 9, MPI_COMM_SELF, &reqs[3]);
        complete(reqs[0]);
        complete(reqs[1]);
        for (int i = 0; i < 4; i++)
            MTest_Poison_status(&sts[i]);
        rc = MPI_Waitall(4, reqs, sts);
        CHECK_CLASS(rc, MPI_ERR_IN_STATUS, "MPI_Waitall with a failing query_fn");
        CHECK(MTest_Class(sts[0].MPI_ERROR) == MPI_ERR_OTHER,
              "the failed request's status has MPI_ERROR %d", sts[0].MPI_ERROR);
        CHECK(reqs[0] == MPI_REQUEST_NULL, "MPI_Waitall left the failed generalized request");
        /* The others completed (MPI_SUCCESS), or, as the standard allows, were left active
         * with MPI_ERR_PENDING (MPICH 4.0.2 stops at the failed one). */
        for (int i = 1; i < 4; i++) {
            if (sts[i].MPI_ERROR == MPI_ERR_PENDING) {
                CHECK(reqs[i] != MPI_REQUEST_NULL, "request %d MPI_ERR_PENDING but freed", i);
                rc = MPI_Wait(&reqs[i], i == 1 ? &sts[1] : MPI_STATUS_IGNORE);
                CHECK_RC(rc, "MPI_Wait of a request left pending by MPI_Waitall");
            } else {
                CHECK(sts[i].MPI_ERROR == MPI_SUCCESS, "request %d: status has MPI_ERROR %d", i,
                      sts[i].MPI_ERROR);
                CHECK(reqs[i] == MPI_REQUEST_NULL, "MPI_Waitall left completed request %d", i);
            }
        }
        check_status(&sts[1], &b, "good query_fn, MPI_Waitall");
        check_freed(&a, "failing query_fn, MPI_Waitall");
        check_freed(&b, "good query_fn, MPI_Waitall");
        CHECK(y == 10, "self message gave %d", y);

        /* MPI_Wait returns query_fn's error. */
        greq_init(&a, 13);
        a.query_rc = MPI_ERR_OTHER;
        req = start(&a);
        complete(req);
        rc = MPI_Wait(&req, &st);
        CHECK_CLASS(rc, MPI_ERR_OTHER, "MPI_Wait with a failing query_fn");
        CHECK(req == MPI_REQUEST_NULL, "MPI_Wait did not free the failed request");
        check_freed(&a, "failing query_fn, MPI_Wait");
    }

    /* MPI_Cancel: cancel_fn with complete = 0, then 1. */
    greq_init(&g, 14);
    req = start(&g);
    rc = MPI_Cancel(&req);
    CHECK_RC(rc, "MPI_Cancel of an incomplete generalized request");
    CHECK(g.cancel_calls == 1 && g.last_complete == 0, "cancel_fn: %d calls, complete = %d",
          g.cancel_calls, g.last_complete);
    CHECK(req != MPI_REQUEST_NULL && g.free_calls == 0 && g.query_calls == 0,
          "MPI_Cancel freed or queried the request");
    complete(req);
    rc = MPI_Cancel(&req);
    CHECK_RC(rc, "MPI_Cancel of a complete generalized request");
    CHECK(g.cancel_calls == 2 && g.last_complete == 1, "cancel_fn: %d calls, complete = %d",
          g.cancel_calls, g.last_complete);
    rc = MPI_Wait(&req, &st);
    CHECK_RC(rc, "MPI_Wait of a cancelled generalized request");
    {
        int cancelled = 0;
        MPI_Test_cancelled(&st, &cancelled);
        CHECK(cancelled, "query_fn's cancelled flag not seen by MPI_Test_cancelled");
    }
    check_freed(&g, "cancelled");
    CHECK(g.cancel_calls == 2, "cancel_fn called %d times", g.cancel_calls);

    /* MPI_Request_get_status: nothing before completion, query_fn (no free) after. */
    greq_init(&g, 15);
    req = start(&g);
    flag = 1;
    rc = MPI_Request_get_status(req, &flag, &st);
    CHECK(rc == MPI_SUCCESS && !flag, "MPI_Request_get_status before completion: flag %d", flag);
    CHECK(g.query_calls == 0, "query_fn ran before completion");
    complete(req);
    for (int i = 1; i <= 2; i++) {
        MTest_Poison_status(&st);
        flag = 0;
        rc = MPI_Request_get_status(req, &flag, &st);
        CHECK(rc == MPI_SUCCESS && flag, "MPI_Request_get_status after completion: flag %d",
              flag);
        CHECK(g.query_calls == i, "MPI_Request_get_status: query_fn called %d times, not %d",
              g.query_calls, i);
        CHECK(g.free_calls == 0, "MPI_Request_get_status ran free_fn");
        check_status(&st, &g, "MPI_Request_get_status");
    }
    flag = 0;
    rc = MPI_Request_get_status(req, &flag, MPI_STATUS_IGNORE);
    CHECK(rc == MPI_SUCCESS && flag && g.query_calls == 3 && g.null_status == 0,
          "MPI_Request_get_status(MPI_STATUS_IGNORE): flag %d, %d query calls, %d NULL", flag,
          g.query_calls, g.null_status);
    CHECK(req != MPI_REQUEST_NULL, "MPI_Request_get_status freed the request");
    rc = MPI_Wait(&req, &st);
    CHECK_RC(rc, "MPI_Wait after MPI_Request_get_status");
    CHECK(g.query_calls == 4 && g.free_calls == 1, "after MPI_Wait: %d query, %d free calls",
          g.query_calls, g.free_calls);
    check_status(&st, &g, "MPI_Wait after MPI_Request_get_status");

    /* MPI_Request_free before completion: free_fn runs in MPI_Grequest_complete. */
    greq_init(&g, 16);
    req = start(&g);
    {
        MPI_Request copy = req;
        rc = MPI_Request_free(&req);
        CHECK_RC(rc, "MPI_Request_free of an incomplete generalized request");
        CHECK(req == MPI_REQUEST_NULL, "MPI_Request_free did not set MPI_REQUEST_NULL");
#ifdef MPICH_VERSION
        /* MPICH 4.0.2 runs free_fn in MPI_Request_free already (the standard: in whichever
         * of MPI_Request_free and MPI_Grequest_complete comes last). */
        CHECK(g.free_calls <= 1, "free_fn ran %d times in MPI_Request_free", g.free_calls);
#else
        CHECK(g.free_calls == 0, "free_fn ran before MPI_Grequest_complete");
#endif
        complete(copy);
        CHECK(g.free_calls == 1 && g.query_calls == 0,
              "after MPI_Request_free + MPI_Grequest_complete: %d free, %d query calls",
              g.free_calls, g.query_calls);
    }

    /* MPI_Request_free after completion: free_fn runs in MPI_Request_free. */
    greq_init(&g, 17);
    req = start(&g);
    complete(req);
    rc = MPI_Request_free(&req);
    CHECK_RC(rc, "MPI_Request_free of a complete generalized request");
    CHECK(req == MPI_REQUEST_NULL, "MPI_Request_free did not set MPI_REQUEST_NULL");
    CHECK(g.free_calls == 1 && g.query_calls == 0,
          "MPI_Request_free after completion: %d free, %d query calls", g.free_calls,
          g.query_calls);

    /* Errors. */
    rc = MPI_Grequest_complete(MPI_REQUEST_NULL);
    CHECK_CLASS(rc, MPI_ERR_REQUEST, "MPI_Grequest_complete(MPI_REQUEST_NULL)");

    return MTest_Finalize(0);
}
