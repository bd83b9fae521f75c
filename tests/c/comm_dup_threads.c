/* comm_dup_threads: blocking MPI_Comm_dup from several threads at once.
 *
 * Under MPI_THREAD_MULTIPLE, two threads per rank each dup their own duplicate of
 * MPI_COMM_WORLD in a loop (the standard allows concurrent collective calls on distinct
 * communicators), while between iterations each thread takes an application lock and dups
 * MPI_COMM_SELF.  Each new communicator is checked with an Allreduce so that its context
 * really works, then freed.  Must finish without a hang (the runner's timeout catches one). */
#include "mtest.h"
#include <pthread.h>

#define NTHREADS 2

static int iterations = 300;
static pthread_mutex_t app_lock = PTHREAD_MUTEX_INITIALIZER;
static MPI_Comm parent[NTHREADS];
static int thread_errs[NTHREADS];

static void *dup_loop(void *arg)
{
    int t = (int)(intptr_t)arg;
    int errs = 0;
    for (int i = 0; i < iterations; i++) {
        MPI_Comm c;
        if (MPI_Comm_dup(parent[t], &c) != MPI_SUCCESS) {
            errs++;
            continue;
        }
        int one = 1, sum = 0;
        MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c);
        if (sum != mtest_size) {
            errs++;
            printf("[%d] thread %d iteration %d: Allreduce on the dup gave %d, want %d\n",
                   mtest_rank, t, i, sum, mtest_size);
        }
        MPI_Comm_free(&c);

        pthread_mutex_lock(&app_lock);
        MPI_Comm self_dup;
        if (MPI_Comm_dup(MPI_COMM_SELF, &self_dup) != MPI_SUCCESS) {
            errs++;
        } else {
            int n = 0;
            MPI_Comm_size(self_dup, &n);
            if (n != 1)
                errs++;
            MPI_Comm_free(&self_dup);
        }
        pthread_mutex_unlock(&app_lock);
    }
    thread_errs[t] = errs;
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = 0;
    MTest_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    const char *env = getenv("MTEST_DUP_THREADS_ITER");
    if (env)
        iterations = atoi(env);
    if (provided < MPI_THREAD_MULTIPLE) {
        MTest_Skip("MPI_THREAD_MULTIPLE not provided");
        return MTest_Finalize(0);
    }
    int errs = 0;
    for (int t = 0; t < NTHREADS; t++)
        MPI_Comm_dup(MPI_COMM_WORLD, &parent[t]);
    pthread_t th[NTHREADS];
    for (int t = 0; t < NTHREADS; t++)
        pthread_create(&th[t], NULL, dup_loop, (void *)(intptr_t)t);
    for (int t = 0; t < NTHREADS; t++) {
        pthread_join(th[t], NULL);
        errs += thread_errs[t];
    }
    for (int t = 0; t < NTHREADS; t++)
        MPI_Comm_free(&parent[t]);
    return MTest_Finalize(errs);
}
