/* errclass_threads.c: user error classes, codes and strings added, read and removed by
 * several threads at once (MPI_THREAD_MULTIPLE), 500 rounds per thread: every call returns,
 * each code keeps its class and string while it exists, and removal in the order code
 * string, code, class string, class succeeds (MPI-4.1). */
#include "mtest.h"
#include <pthread.h>

#define THREADS 4
#define ROUNDS 500

static int failures[THREADS];

static void *work(void *arg)
{
    int id = (int)(size_t)arg;
    for (int i = 0; i < ROUNDS; i++) {
        int cls, code, c2 = -1, len = 0;
        char want[64], got[MPI_MAX_ERROR_STRING];
        snprintf(want, sizeof want, "thread %d round %d", id, i);
        int rc = MPI_Add_error_class(&cls);
        rc |= MPI_Add_error_code(cls, &code);
        rc |= MPI_Add_error_string(code, want);
        rc |= MPI_Add_error_string(cls, "a class");
        rc |= MPI_Error_class(code, &c2);
        rc |= MPI_Error_string(code, got, &len);
        if (rc != MPI_SUCCESS || c2 != cls || strcmp(got, want) != 0)
            failures[id]++;
        rc = MPI_Remove_error_string(code);
        rc |= MPI_Remove_error_code(code);
        rc |= MPI_Remove_error_string(cls);
        rc |= MPI_Remove_error_class(cls);
        if (rc != MPI_SUCCESS)
            failures[id]++;
    }
    return NULL;
}

int main(int argc, char **argv)
{
#if MPI_VERSION > 4 || (MPI_VERSION == 4 && MPI_SUBVERSION >= 1)
    int provided = 0;
    MTest_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE)
        MTest_Skip("needs MPI_THREAD_MULTIPLE");
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, work, (void *)(size_t)i);
    for (int i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
        CHECK(failures[i] == 0, "thread %d: %d rounds went wrong", i, failures[i]);
    }
#else
    MTest_Init(&argc, &argv);
    MTest_Skip("MPI_Remove_error_class is MPI-4.1");
#endif
    return MTest_Finalize(mtest_errors);
}
