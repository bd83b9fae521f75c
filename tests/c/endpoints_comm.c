/* endpoints_comm: communicator constructors on endpoint communicators (hympi extension).
 * Process p creates 1 + p % 3 endpoints (MTEST_EP_MAX caps it), each driven by its own
 * thread, which then:
 *  - duplicates its endpoint (MPI_Comm_dup): same rank and size, attributes copied, traffic
 *    kept apart from the parent's (same tag on both), ring and Allreduce on the duplicate;
 *  - splits the duplicate by rank parity with reversed keys: sizes, ranks, order (Allgather
 *    of old ranks), ring and Allreduce; splits that again (nested);
 *  - splits with MPI_UNDEFINED on rank 0 (MPI_COMM_NULL there, size - 1 elsewhere);
 *  - MPI_Comm_split_type(MPI_COMM_TYPE_SHARED): the endpoints of the processes on this
 *    node (as MPI_COMM_WORLD's shared split says; virtual nodes make several), same order;
 *  - MPI_Comm_dup_with_info keeps the hints given;
 *  - MPI_Comm_idup and MPI_Comm_group on an endpoint are refused
 *    (MPI_ERR_UNSUPPORTED_OPERATION);
 *  - frees everything; the whole runs twice (context ids come back).
 * hympi only (other MPIs skip). */
#include "mtest.h"
#include <pthread.h>

#ifdef HYMPI
#include "hympi_mpix.h"

static int total, first_of_mine, ep_max = 3, keyval = MPI_KEYVAL_INVALID;
/* Endpoints of this node's processes: all of them, and those ranked before ours. */
static int node_total, node_before;

struct thr {
    int k;
    MPI_Comm comm;
    int errs;
};

#define TFAIL(t, ...)                                                                          \
    do {                                                                                       \
        if ((t)->errs++ < 10) {                                                                \
            printf("[%d] endpoint %d: ", mtest_rank, (t)->k);                                  \
            printf(__VA_ARGS__);                                                               \
            printf("\n");                                                                      \
            fflush(stdout);                                                                    \
        }                                                                                      \
    } while (0)

/* Ring Sendrecv and an Allreduce of the ranks on `c`, whose rank and size must be `rank` and
 * `size`. */
static void exercise(struct thr *t, MPI_Comm c, int rank, int size, const char *what)
{
    int r = -1, n = -1;
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &n);
    if (r != rank || n != size) {
        TFAIL(t, "%s: rank %d size %d, expected %d of %d", what, r, n, rank, size);
        return;
    }
    int right = (rank + 1) % size, left = (rank + size - 1) % size, got = -1;
    MPI_Sendrecv(&rank, 1, MPI_INT, right, 3, &got, 1, MPI_INT, left, 3, c, MPI_STATUS_IGNORE);
    if (got != left)
        TFAIL(t, "%s: ring got %d from %d", what, got, left);
    long sum = 0, me = rank;
    MPI_Allreduce(&me, &sum, 1, MPI_LONG, MPI_SUM, c);
    if (sum != (long)size * (size - 1) / 2)
        TFAIL(t, "%s: allreduce %ld", what, sum);
}

static void *run(void *arg)
{
    struct thr *t = arg;
    MPI_Comm ep = t->comm;
    int rank = -1, size = -1;
    MPI_Comm_rank(ep, &rank);
    MPI_Comm_size(ep, &size);
    if (size != total || rank != first_of_mine + t->k)
        TFAIL(t, "endpoint rank %d size %d", rank, size);

    /* Duplicate, with a copied attribute. */
    MPI_Comm_set_attr(ep, keyval, (void *)(intptr_t)(1000 + rank));
    MPI_Comm d = MPI_COMM_NULL;
    int rc = MPI_Comm_dup(ep, &d);
    if (rc != MPI_SUCCESS || d == MPI_COMM_NULL) {
        TFAIL(t, "MPI_Comm_dup: rc %d", rc);
        return NULL;
    }
    exercise(t, d, rank, size, "dup");
    void *val = NULL;
    int flag = 0;
    MPI_Comm_get_attr(d, keyval, &val, &flag);
    if (!flag || (intptr_t)val != 1000 + rank)
        TFAIL(t, "dup: attribute flag %d value %ld", flag, (long)(intptr_t)val);

    /* Same tag on parent and duplicate: each message stays on its communicator. */
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int on_d = 100 + rank, on_ep = 200 + rank, a = -1, b = -1;
    MPI_Request rq[2];
    MPI_Isend(&on_d, 1, MPI_INT, right, 7, d, &rq[0]);
    MPI_Isend(&on_ep, 1, MPI_INT, right, 7, ep, &rq[1]);
    MPI_Recv(&a, 1, MPI_INT, left, 7, ep, MPI_STATUS_IGNORE);
    MPI_Recv(&b, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, d, MPI_STATUS_IGNORE);
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    if (a != 200 + left || b != 100 + left)
        TFAIL(t, "parent/duplicate crossed: %d on the parent, %d on the duplicate", a, b);

    /* Split by parity, reversed order. */
    int color = rank % 2, same = 0, above = 0;
    for (int q = 0; q < size; q++)
        if (q % 2 == color) {
            same++;
            if (q > rank)
                above++;
        }
    MPI_Comm s = MPI_COMM_NULL;
    rc = MPI_Comm_split(d, color, size - rank, &s);
    if (rc != MPI_SUCCESS || s == MPI_COMM_NULL) {
        TFAIL(t, "MPI_Comm_split: rc %d", rc);
    } else {
        exercise(t, s, above, same, "split");
        int *old = malloc(sizeof(int) * (size_t)same);
        MPI_Allgather(&rank, 1, MPI_INT, old, 1, MPI_INT, s);
        for (int i = 0; i < same; i++) {
            int want = -1, seen = 0;
            for (int q = size - 1; q >= 0; q--)
                if (q % 2 == color && seen++ == i)
                    want = q;
            if (old[i] != want)
                TFAIL(t, "split: rank %d was old rank %d, expected %d", i, old[i], want);
        }
        free(old);
        /* Nested: halves of the split. */
        int srank = above, half = srank < same / 2;
        int nsize = half ? same / 2 : same - same / 2;
        int nrank = half ? srank : srank - same / 2;
        MPI_Comm n = MPI_COMM_NULL;
        rc = MPI_Comm_split(s, half, srank, &n);
        if (rc != MPI_SUCCESS || n == MPI_COMM_NULL)
            TFAIL(t, "nested MPI_Comm_split: rc %d", rc);
        else {
            exercise(t, n, nrank, nsize, "nested split");
            MPI_Comm_free(&n);
        }
        MPI_Comm_free(&s);
    }

    /* MPI_UNDEFINED on rank 0. */
    MPI_Comm u = MPI_COMM_NULL;
    rc = MPI_Comm_split(ep, rank == 0 ? MPI_UNDEFINED : 1, 0, &u);
    if (rc != MPI_SUCCESS)
        TFAIL(t, "split with MPI_UNDEFINED: rc %d", rc);
    else if (rank == 0 && u != MPI_COMM_NULL)
        TFAIL(t, "MPI_UNDEFINED gave a communicator");
    else if (rank != 0) {
        if (u == MPI_COMM_NULL)
            TFAIL(t, "no communicator for color 1");
        else {
            if (size > 1)
                exercise(t, u, rank - 1, size - 1, "split without rank 0");
            MPI_Comm_free(&u);
        }
    }

    /* Shared-memory split: one node. */
    MPI_Comm sh = MPI_COMM_NULL;
    rc = MPI_Comm_split_type(d, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &sh);
    if (rc != MPI_SUCCESS || sh == MPI_COMM_NULL)
        TFAIL(t, "MPI_Comm_split_type: rc %d", rc);
    else {
        exercise(t, sh, node_before + (rank - first_of_mine), node_total, "split_type shared");
        MPI_Comm_free(&sh);
    }

    /* Duplicate with hints. */
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_assert_no_any_tag", "true");
    MPI_Comm di = MPI_COMM_NULL;
    rc = MPI_Comm_dup_with_info(d, info, &di);
    MPI_Info_free(&info);
    if (rc != MPI_SUCCESS || di == MPI_COMM_NULL)
        TFAIL(t, "MPI_Comm_dup_with_info: rc %d", rc);
    else {
        exercise(t, di, rank, size, "dup_with_info");
        MPI_Info got;
        char v[MPI_MAX_INFO_VAL + 1] = "";
        int found = 0;
        MPI_Comm_get_info(di, &got);
        MPI_Info_get_string(got, "mpi_assert_no_any_tag", &(int){MPI_MAX_INFO_VAL + 1}, v,
                            &found);
        MPI_Info_free(&got);
        if (!found || strcmp(v, "true") != 0)
            TFAIL(t, "dup_with_info: hint found %d value '%s'", found, v);
        MPI_Comm_free(&di);
    }

    /* Refused. */
    MPI_Comm x = MPI_COMM_NULL;
    MPI_Request r = MPI_REQUEST_NULL;
    int cls = -1;
    rc = MPI_Comm_idup(ep, &x, &r);
    MPI_Error_class(rc, &cls);
    if (rc == MPI_SUCCESS || cls != MPI_ERR_UNSUPPORTED_OPERATION)
        TFAIL(t, "MPI_Comm_idup on an endpoint: rc %d class %d", rc, cls);
    MPI_Group g = MPI_GROUP_NULL;
    rc = MPI_Comm_group(ep, &g);
    MPI_Error_class(rc, &cls);
    if (rc == MPI_SUCCESS || cls != MPI_ERR_UNSUPPORTED_OPERATION)
        TFAIL(t, "MPI_Comm_group on an endpoint: rc %d class %d", rc, cls);

    MPI_Comm_free(&d);
    return NULL;
}
#endif

int main(int argc, char **argv)
{
    int provided, errs = 0;
    MTest_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
#ifndef HYMPI
    MTest_Skip("MPIX_Comm_create_endpoints is a hympi extension");
    return MTest_Finalize(0);
#else
    if (provided < MPI_THREAD_MULTIPLE) {
        MTest_Skip("MPI_THREAD_MULTIPLE not provided");
        return MTest_Finalize(0);
    }
    if (getenv("MTEST_EP_MAX"))
        ep_max = atoi(getenv("MTEST_EP_MAX"));
    MTest_Errors_return(MPI_COMM_WORLD);
    int mine = 1 + mtest_rank % ep_max;
    int *counts = malloc(sizeof(int) * (size_t)mtest_size);
    MPI_Allgather(&mine, 1, MPI_INT, counts, 1, MPI_INT, MPI_COMM_WORLD);
    /* Each process's node, named by its lowest world rank. */
    MPI_Comm node;
    int lowest, *node_of = malloc(sizeof(int) * (size_t)mtest_size);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Allreduce(&mtest_rank, &lowest, 1, MPI_INT, MPI_MIN, node);
    MPI_Comm_free(&node);
    MPI_Allgather(&lowest, 1, MPI_INT, node_of, 1, MPI_INT, MPI_COMM_WORLD);
    total = node_total = node_before = 0;
    for (int p = 0; p < mtest_size; p++) {
        if (p == mtest_rank)
            first_of_mine = total;
        total += counts[p];
        if (node_of[p] == lowest) {
            if (p < mtest_rank)
                node_before += counts[p];
            node_total += counts[p];
        }
    }
    free(counts);
    free(node_of);
    MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &keyval, NULL);

    for (int round = 0; round < 2; round++) {
        MPI_Comm eps[8];
        int rc = MPIX_Comm_create_endpoints(MPI_COMM_WORLD, mine, MPI_INFO_NULL, eps);
        CHECK_RC(rc, "MPIX_Comm_create_endpoints");
        if (rc != MPI_SUCCESS)
            break;
        for (int k = 0; k < mine; k++)
            MPI_Comm_set_errhandler(eps[k], MPI_ERRORS_RETURN);
        pthread_t th[8];
        struct thr t[8];
        for (int k = 0; k < mine; k++) {
            t[k].k = k;
            t[k].comm = eps[k];
            t[k].errs = 0;
            pthread_create(&th[k], NULL, run, &t[k]);
        }
        for (int k = 0; k < mine; k++) {
            pthread_join(th[k], NULL);
            errs += t[k].errs;
        }
        for (int k = 0; k < mine; k++)
            CHECK_RC(MPI_Comm_free(&eps[k]), "MPI_Comm_free(endpoint)");
    }
    MPI_Comm_free_keyval(&keyval);
    return MTest_Finalize(errs);
#endif
}
