/* client_corners: corner cases real clients (mpi4py's suite, rsmpi's examples) exercise.
 *
 *  - MPI_Comm_disconnect of a duplicate of MPI_COMM_WORLD, of a split and of an
 *    intercommunicator (two halves; at one process only the first two): the handle becomes
 *    MPI_COMM_NULL, and communication on a new duplicate still works after it;
 *    MPI_Comm_disconnect of MPI_COMM_NULL and of MPI_COMM_WORLD fails with MPI_ERR_COMM
 *    (MPI_ERRORS_RETURN on WORLD and SELF; MPICH 4.0.2 disconnects WORLD and then fails an
 *    assertion in MPI_Finalize, so that call is left out there).
 *  - MPI_Get_accumulate and MPI_Accumulate of 0 MPI_BYTEs with MPI_SUM inside a fence epoch
 *    succeed (nothing to combine; mpi4py probes support this way), while 1 MPI_BYTE with
 *    MPI_SUM fails with MPI_ERR_OP (MPI_SUM is not defined on MPI_BYTE) under
 *    MPI_ERRORS_RETURN on the window (MPICH 4.0.2 sums the bytes: relaxed there, noted).
 *    Left out (noted) where MPI_Win_create is unsupported (hympi's windows across nodes).
 *  - MPI_Win_get_name(MPI_WIN_NULL) gives "MPI_WIN_NULL" (as MPI_Comm_get_name does for
 *    MPI_COMM_NULL; MPICH 4.0.2 fails it with MPI_ERR_WIN: relaxed there, noted).
 *  - MPI-4.1: MPI_Get_hw_resource_info gives a new info object (freed with MPI_Info_free);
 *    hympi fills mpi_hw_resource_types with hwloc levels, and its hympi_hw_pu_count is at
 *    least the CPUs this process may run on. Skipped before MPI 4.1 (MPICH 4.0.2).
 *  - MPI-5.0 ABI: MPI_Abi_get_fortran_info gives MPI_INFO_NULL or an info with
 *    mpi_integer_size (skipped without MPI_ABI_VERSION). */
#define _GNU_SOURCE
#include "mtest.h"
#include <sched.h>

int main(int argc, char **argv)
{
    int rank, size, rc;
    MTest_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MTest_Errors_return_all();

    /* MPI_Comm_disconnect. */
    {
        MPI_Comm d, s, inter = MPI_COMM_NULL, none = MPI_COMM_NULL;
        MPI_Comm_dup(MPI_COMM_WORLD, &d);
        rc = MPI_Comm_disconnect(&d);
        CHECK(rc == MPI_SUCCESS && d == MPI_COMM_NULL, "MPI_Comm_disconnect (dup) rc %d", rc);
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &s);
        if (size > 1) {
            /* The halves by parity, leaders world ranks 0 and 1. */
            rc = MPI_Intercomm_create(s, 0, MPI_COMM_WORLD, 1 - rank % 2, 77, &inter);
            CHECK_RC(rc, "MPI_Intercomm_create");
            int rsize = 0;
            MPI_Comm_remote_size(inter, &rsize);
            CHECK(rsize == size / 2 + (rank % 2 ? size % 2 : 0), "remote size %d", rsize);
            rc = MPI_Comm_disconnect(&inter);
            CHECK(rc == MPI_SUCCESS && inter == MPI_COMM_NULL,
                  "MPI_Comm_disconnect (intercommunicator) rc %d", rc);
        }
        rc = MPI_Comm_disconnect(&s);
        CHECK(rc == MPI_SUCCESS && s == MPI_COMM_NULL, "MPI_Comm_disconnect (split) rc %d", rc);
        rc = MPI_Comm_disconnect(&none);
        CHECK_CLASS(rc, MPI_ERR_COMM, "MPI_Comm_disconnect(MPI_COMM_NULL)");
#ifndef MPICH_VERSION /* MPICH 4.0.2 disconnects WORLD, then fails an assertion in Finalize */
        MPI_Comm w = MPI_COMM_WORLD;
        rc = MPI_Comm_disconnect(&w);
        CHECK_CLASS(rc, MPI_ERR_COMM, "MPI_Comm_disconnect(MPI_COMM_WORLD)");
#endif
        /* Still usable afterwards. */
        MPI_Comm_dup(MPI_COMM_WORLD, &d);
        int v = rank + 1, sum = 0;
        MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, d);
        CHECK(sum == size * (size + 1) / 2, "allreduce after disconnects gave %d", sum);
        MPI_Comm_free(&d);
    }

    /* Zero-count accumulates with an op the type does not support. */
    {
        MPI_Win win;
        unsigned char base[8] = {0}, o = 1, r = 0;
        rc = MPI_Win_create(base, sizeof base, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
        if (rc != MPI_SUCCESS && MTest_Class(rc) == MPI_ERR_UNSUPPORTED_OPERATION) {
            /* hympi's windows do not span nodes yet (network mode). */
            if (rank == 0)
                printf("MTEST_NOTE: MPI_Win_create: unsupported here; accumulates not checked\n");
            goto no_window;
        }
        CHECK_RC(rc, "MPI_Win_create");
        MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
        MPI_Win_fence(0, win);
        rc = MPI_Get_accumulate(&o, 0, MPI_BYTE, &r, 0, MPI_BYTE, rank, 0, 0, MPI_BYTE, MPI_SUM,
                                win);
        CHECK_RC(rc, "MPI_Get_accumulate of 0 MPI_BYTEs with MPI_SUM");
        rc = MPI_Accumulate(&o, 0, MPI_BYTE, rank, 0, 0, MPI_BYTE, MPI_SUM, win);
        CHECK_RC(rc, "MPI_Accumulate of 0 MPI_BYTEs with MPI_SUM");
        rc = MPI_Accumulate(&o, 1, MPI_BYTE, rank, 0, 1, MPI_BYTE, MPI_SUM, win);
#ifdef MPICH_VERSION /* MPICH 4.0.2 sums the bytes */
        if (rc == MPI_SUCCESS && rank == 0)
            printf("MTEST_NOTE: MPI_SUM on MPI_BYTE accepted\n");
        MPI_Win_fence(0, win);
#else
        CHECK_CLASS(rc, MPI_ERR_OP, "MPI_Accumulate of 1 MPI_BYTE with MPI_SUM");
        MPI_Win_fence(0, win);
        CHECK(base[0] == 0, "a refused accumulate changed the window (%d)", base[0]);
#endif
        MPI_Win_free(&win);
    }
no_window:

    /* The null window's name. */
    {
        char name[MPI_MAX_OBJECT_NAME];
        int len = -1;
        rc = MPI_Win_get_name(MPI_WIN_NULL, name, &len);
#ifdef MPICH_VERSION
        if (rc != MPI_SUCCESS) {
            if (rank == 0)
                printf("MTEST_NOTE: MPI_Win_get_name(MPI_WIN_NULL) failed (class %d)\n",
                       MTest_Class(rc));
        } else
#endif
        {
            CHECK(rc == MPI_SUCCESS && strcmp(name, "MPI_WIN_NULL") == 0 &&
                      len == (int)strlen("MPI_WIN_NULL"),
                  "MPI_Win_get_name(MPI_WIN_NULL) rc %d", rc);
        }
    }

#if MPI_VERSION > 4 || (MPI_VERSION == 4 && MPI_SUBVERSION >= 1)
    {
        MPI_Info hw = MPI_INFO_NULL;
        rc = MPI_Get_hw_resource_info(&hw);
        CHECK(rc == MPI_SUCCESS && hw != MPI_INFO_NULL, "MPI_Get_hw_resource_info rc %d", rc);
        if (rc == MPI_SUCCESS && hw != MPI_INFO_NULL) {
            int nkeys = -1;
            MPI_Info_get_nkeys(hw, &nkeys);
            CHECK(nkeys >= 0, "MPI_Info_get_nkeys of the hardware info");
#ifdef HYMPI_VERSION_MAJOR
            char v[MPI_MAX_INFO_VAL];
            int len = sizeof v, flag = 0;
            MPI_Info_get_string(hw, "mpi_hw_resource_types", &len, v, &flag);
            CHECK(flag && strstr(v, "hwloc://Package") != NULL, "mpi_hw_resource_types: %s",
                  flag ? v : "(missing)");
            len = sizeof v;
            MPI_Info_get_string(hw, "hympi_hw_pu_count", &len, v, &flag);
            cpu_set_t cs;
            CPU_ZERO(&cs);
            sched_getaffinity(0, sizeof cs, &cs);
            CHECK(flag && atoi(v) >= CPU_COUNT(&cs), "hympi_hw_pu_count %s, %d CPUs usable",
                  flag ? v : "(missing)", CPU_COUNT(&cs));
#endif
            MPI_Info_free(&hw);
        }
    }
#endif

#ifdef MPI_ABI_VERSION
    {
        MPI_Info f = MPI_INFO_NULL;
        rc = MPI_Abi_get_fortran_info(&f);
        CHECK_RC(rc, "MPI_Abi_get_fortran_info");
        if (rc == MPI_SUCCESS && f != MPI_INFO_NULL) {
            char v[MPI_MAX_INFO_VAL];
            int len = sizeof v, flag = 0;
            MPI_Info_get_string(f, "mpi_integer_size", &len, v, &flag);
            CHECK(flag, "the Fortran info has no mpi_integer_size");
            MPI_Info_free(&f);
        }
    }
#endif

    return MTest_Finalize(0);
}
