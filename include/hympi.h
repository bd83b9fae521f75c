/* hympi.h: hympi's C extensions (prefix MPIX_).
 *
 * Include it instead of, or after, <mpi.h>. Everything here is a static inline function built on
 * standard MPI calls, so a program using it also builds and runs on any other MPI (MPICH,
 * Open MPI): the hints are standard info keys or hympi_* keys that other libraries ignore.
 *
 * Contents:
 *   - MPIX_HINT_* flags and MPIX_Info_region_hints(): an info object carrying the MPI-4
 *     communicator assertions (and hympi's per-thread hint), for MPI_Comm_set_info or
 *     MPI_Comm_dup_with_info.
 *   - MPIX_Omp_thread_comm() (only when compiled with OpenMP, i.e. _OPENMP is defined): one
 *     duplicate of a communicator per OpenMP thread, created collectively by a team.
 *
 *   - Built against hympi (HYMPI defined by its mpi.h), the functions implemented inside the
 *     library, declared in hympi_mpix.h: MPIX_Comm_create_endpoints (several ranks per
 *     process, one per thread, each on its own VCI) and MPICH's thread communicators
 *     (MPIX_Threadcomm_init/start/finish/free). Test `#ifdef HYMPI` before using them if the
 *     code must also build on other MPI libraries.
 *
 * The header compiles as C99 and as C++ (C++11 and later), with or without OpenMP.
 */
#ifndef HYMPI_H
#define HYMPI_H

#include <mpi.h>
#include <stdlib.h>

#ifdef HYMPI
#include "hympi_mpix.h"
#endif

#ifdef _OPENMP
#include <omp.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * Communicator hints
 * ------------------------------------------------------------------------------------------- */

/* The program never receives with MPI_ANY_SOURCE on the communicator
 * (info key "mpi_assert_no_any_source" = "true"). */
#define MPIX_HINT_NO_ANY_SOURCE 0x1
/* The program never receives with MPI_ANY_TAG on the communicator
 * (info key "mpi_assert_no_any_tag" = "true"). */
#define MPIX_HINT_NO_ANY_TAG 0x2
/* The program does not rely on MPI's non-overtaking order between messages with the same
 * source, tag and communicator (info key "mpi_assert_allow_overtaking" = "true"). */
#define MPIX_HINT_ALLOW_OVERTAKING 0x4
/* Every receive posts exactly the size of the message that matches it
 * (info key "mpi_assert_exact_length" = "true"). */
#define MPIX_HINT_EXACT_LENGTH 0x8
/* Each process uses the communicator from one thread only (hympi's key
 * "hympi_per_thread_comm" = "true"; other MPI libraries ignore it). */
#define MPIX_HINT_PER_THREAD 0x10
/* Every flag above. */
#define MPIX_HINT_ALL 0x1f

/* Builds in *info a new info object holding "true" for the key of each flag set in `flags`
 * (an OR of MPIX_HINT_*). The caller frees it with MPI_Info_free. Returns MPI_SUCCESS; an
 * error code of class MPI_ERR_ARG when `info` is NULL or `flags` holds an unknown bit (then
 * *info is untouched); or the error code of the MPI_Info call that failed (then no info object
 * is left allocated and *info is MPI_INFO_NULL). flags == 0 gives an empty info object. */
static inline int MPIX_Info_region_hints(MPI_Info *info, int flags)
{
    static const struct {
        int flag;
        const char *key;
    } keys[] = {
        {MPIX_HINT_NO_ANY_SOURCE, "mpi_assert_no_any_source"},
        {MPIX_HINT_NO_ANY_TAG, "mpi_assert_no_any_tag"},
        {MPIX_HINT_ALLOW_OVERTAKING, "mpi_assert_allow_overtaking"},
        {MPIX_HINT_EXACT_LENGTH, "mpi_assert_exact_length"},
        {MPIX_HINT_PER_THREAD, "hympi_per_thread_comm"},
    };
    MPI_Info made;
    int err;
    size_t i;

    if (info == NULL || (flags & ~MPIX_HINT_ALL) != 0)
        return MPI_ERR_ARG;
    err = MPI_Info_create(&made);
    if (err != MPI_SUCCESS)
        return err;
    for (i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        if ((flags & keys[i].flag) == 0)
            continue;
        err = MPI_Info_set(made, keys[i].key, "true");
        if (err != MPI_SUCCESS) {
            MPI_Info_free(&made);
            *info = MPI_INFO_NULL;
            return err;
        }
    }
    *info = made;
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------------------------------------
 * OpenMP helpers (compiled only with OpenMP)
 * ------------------------------------------------------------------------------------------- */
#ifdef _OPENMP

/* Shared state of one MPIX_Omp_thread_comm call, passed from thread to thread. */
struct MPIX_Omp_thread_comm_state_ {
    int err;
    int nthreads;
    MPI_Comm *comms;
};

/* Gives each thread of the calling OpenMP team its own duplicate of `comm`.
 *
 * Call it from every thread of the team, inside `#pragma omp parallel` (it contains OpenMP
 * worksharing and barrier constructs, so all threads must reach it, like a barrier), on every
 * process of `comm`. The team's master thread (thread 0) makes one MPI_Comm_dup of `comm` per
 * thread in thread-number order, so the i-th duplicate of every process pairs with the i-th of
 * the others: thread t of each process receives in *thread_comm the communicator that thread t
 * of every other process received. When `hints` is not MPI_INFO_NULL it is set on each
 * duplicate with MPI_Comm_set_info (see MPIX_Info_region_hints). After the final barrier every
 * thread owns its communicator; free it with MPI_Comm_free (from its thread under
 * MPI_THREAD_MULTIPLE, or one thread after another otherwise).
 *
 * Requirements: all processes use the same team size (checked with an MPI_Allreduce on `comm`;
 * a mismatch returns MPI_ERR_ARG on every process and creates nothing); the MPI calls are made
 * by the team's master thread, so the thread level must allow it (MPI_THREAD_FUNNELED when the
 * team is the outermost one, otherwise MPI_THREAD_SERIALIZED or MULTIPLE); no other thread may
 * use `comm` during the call. Not for concurrent calls from several teams on one `comm`.
 *
 * thread_comm must point to storage private to the calling thread (never NULL).
 *
 * Returns MPI_SUCCESS, or on every thread the same error code (then *thread_comm is
 * MPI_COMM_NULL and every duplicate already made has been freed). Errors of the MPI calls
 * themselves go first to `comm`'s error handler (fatal by default). */
static inline int MPIX_Omp_thread_comm(MPI_Comm comm, MPI_Info hints, MPI_Comm *thread_comm)
{
    struct MPIX_Omp_thread_comm_state_ *st = NULL;
    int me = omp_get_thread_num();
    int err;

    /* One thread allocates the shared state; copyprivate hands the pointer to the others and
     * ends with a barrier. */
#pragma omp single copyprivate(st)
    {
        st = (struct MPIX_Omp_thread_comm_state_ *)calloc(1, sizeof *st);
        if (st != NULL) {
            st->nthreads = omp_get_num_threads();
            st->comms = (MPI_Comm *)calloc((size_t)st->nthreads, sizeof(MPI_Comm));
            if (st->comms == NULL) {
                free(st);
                st = NULL;
            }
        }
    }
    /* An allocation failure is known to every thread here (st is NULL on all of them). It is
     * not communicated to the other processes; MPI_ERR_NO_MEM is local. */
    if (st == NULL) {
        *thread_comm = MPI_COMM_NULL;
        return MPI_ERR_NO_MEM;
    }

#pragma omp master
    {
        int range[2], agreed[2], i;
        /* Same team size everywhere: max(n) and max(-n) give the largest and the smallest. */
        range[0] = st->nthreads;
        range[1] = -st->nthreads;
        st->err = MPI_Allreduce(range, agreed, 2, MPI_INT, MPI_MAX, comm);
        if (st->err == MPI_SUCCESS && agreed[0] != -agreed[1])
            st->err = MPI_ERR_ARG;
        for (i = 0; st->err == MPI_SUCCESS && i < st->nthreads; i++) {
            st->err = MPI_Comm_dup(comm, &st->comms[i]);
            if (st->err == MPI_SUCCESS && hints != MPI_INFO_NULL) {
                st->err = MPI_Comm_set_info(st->comms[i], hints);
                if (st->err != MPI_SUCCESS)
                    MPI_Comm_free(&st->comms[i]);
            }
            if (st->err != MPI_SUCCESS) {
                while (i-- > 0)
                    MPI_Comm_free(&st->comms[i]);
            }
        }
    }
#pragma omp barrier

    err = st->err;
    *thread_comm = err == MPI_SUCCESS ? st->comms[me] : MPI_COMM_NULL;

    /* Everybody has read its slot: one thread frees the state (the single ends with a
     * barrier, so no thread leaves before the state is gone and a next call may start). */
#pragma omp barrier
#pragma omp single
    {
        free(st->comms);
        free(st);
    }
    return err;
}

#endif /* _OPENMP */

#ifdef __cplusplus
}
#endif

#endif /* HYMPI_H */
