/* Compile-and-link check of the generated include/mpi.h against libhympi.a.
 *
 * Built twice by tests/abi/check-header.sh: as C99 (gcc -std=c99 -Wall -Wextra -pedantic -Werror)
 * and as C++17 (g++ -std=c++17 -Wall -Werror). It checks that
 *  - the header is valid, warning-free C99 and C++17;
 *  - a sample of functions from every chapter has exactly the standard's C binding: each one is
 *    assigned to a pointer whose type is spelled out here a second time, so a wrong parameter
 *    type or a missing `const` is a compile error in C++ and a -Werror warning in C;
 *  - MPI_x and PMPI_x both link from the static library;
 *  - a sample of the MPI-5.0 ABI values (compile time where C allows it, run time for handles).
 */
#include <mpi.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#if defined(__cplusplus)
#define HC_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#elif defined(__GNUC__)
#define HC_STATIC_ASSERT(cond, msg) __extension__ _Static_assert(cond, msg)
#else
#define HC_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

/* ---- types ---- */
HC_STATIC_ASSERT(sizeof(MPI_Status) == 32, "MPI_Status is 8 ints");
HC_STATIC_ASSERT(offsetof(MPI_Status, MPI_SOURCE) == 0, "MPI_SOURCE first");
HC_STATIC_ASSERT(offsetof(MPI_Status, MPI_TAG) == 4, "MPI_TAG second");
HC_STATIC_ASSERT(offsetof(MPI_Status, MPI_ERROR) == 8, "MPI_ERROR third");
HC_STATIC_ASSERT(sizeof(MPI_Aint) == sizeof(void *), "MPI_Aint is intptr_t");
HC_STATIC_ASSERT(sizeof(MPI_Offset) == 8, "MPI_Offset is int64_t");
HC_STATIC_ASSERT(sizeof(MPI_Count) == 8, "MPI_Count is int64_t");
HC_STATIC_ASSERT(sizeof(MPI_Comm) == sizeof(void *), "handles are pointer-sized");
HC_STATIC_ASSERT(sizeof(MPI_Datatype) == sizeof(void *), "handles are pointer-sized");
HC_STATIC_ASSERT(sizeof(MPI_T_cb_safety) == sizeof(int), "MPI_T_cb_safety is int-sized");

/* ---- integer constants ---- */
HC_STATIC_ASSERT(MPI_VERSION == 5 && MPI_SUBVERSION == 0, "MPI 5.0");
HC_STATIC_ASSERT(MPI_ABI_VERSION == 1 && MPI_ABI_SUBVERSION == 0, "ABI 1.0");
HC_STATIC_ASSERT(MPI_SUCCESS == 0, "error class");
HC_STATIC_ASSERT(MPI_ERR_IN_STATUS == 19, "error class");
HC_STATIC_ASSERT(MPI_ERR_ACCESS == 20, "error class");
HC_STATIC_ASSERT(MPI_ERR_SIZE == 52, "error class");
HC_STATIC_ASSERT(MPI_ERR_UNSUPPORTED_OPERATION == 55, "error class");
HC_STATIC_ASSERT(MPI_ERR_WIN == 56, "error class");
HC_STATIC_ASSERT(MPI_ERR_SESSION == 60, "error class");
HC_STATIC_ASSERT(MPI_ERR_ERRHANDLER == 61, "error class");
HC_STATIC_ASSERT(MPI_ERR_ABI == 62, "error class");
HC_STATIC_ASSERT(MPI_T_ERR_CANNOT_INIT == 1001, "tool error class");
HC_STATIC_ASSERT(MPI_T_ERR_PVAR_NO_ATOMIC == 1018, "tool error class");
HC_STATIC_ASSERT(MPI_ERR_LASTCODE == 0x3fff, "last code");
HC_STATIC_ASSERT(MPI_ANY_SOURCE == -1 && MPI_ANY_TAG == -2, "wildcards");
HC_STATIC_ASSERT(MPI_PROC_NULL == -3 && MPI_ROOT == -4, "rank sentinels");
HC_STATIC_ASSERT(MPI_UNDEFINED == -32766, "undefined");
HC_STATIC_ASSERT(MPI_THREAD_SINGLE == 0 && MPI_THREAD_FUNNELED == 1024, "threads");
HC_STATIC_ASSERT(MPI_THREAD_SERIALIZED == 2048 && MPI_THREAD_MULTIPLE == 4096, "threads");
HC_STATIC_ASSERT(MPI_MAX_ERROR_STRING == 512 && MPI_MAX_PROCESSOR_NAME == 256, "string maxima");
HC_STATIC_ASSERT(MPI_MAX_INFO_KEY == 256 && MPI_MAX_INFO_VAL == 1024, "string maxima");
HC_STATIC_ASSERT(MPI_MAX_LIBRARY_VERSION_STRING == 8192 && MPI_MAX_PSET_NAME_LEN == 1024, "string maxima");
HC_STATIC_ASSERT(MPI_BSEND_OVERHEAD == 512, "bsend overhead");
HC_STATIC_ASSERT(MPI_MODE_RDWR == 32 && MPI_MODE_NOSUCCEED == 16384, "modes");
HC_STATIC_ASSERT(MPI_ORDER_C == 12 && MPI_ORDER_FORTRAN == 15, "order");
HC_STATIC_ASSERT(MPI_DISTRIBUTE_DFLT_DARG == 19, "distribution");
HC_STATIC_ASSERT(MPI_COMBINER_NAMED == 101 && MPI_COMBINER_F90_INTEGER == 115, "combiners");
HC_STATIC_ASSERT(MPI_COMBINER_VALUE_INDEX == 117, "combiners");
HC_STATIC_ASSERT(MPI_TYPECLASS_REAL == 193, "typeclass");
HC_STATIC_ASSERT(MPI_IDENT == 201 && MPI_UNEQUAL == 204, "comparisons");
HC_STATIC_ASSERT(MPI_CART == 211 && MPI_DIST_GRAPH == 213, "topologies");
HC_STATIC_ASSERT(MPI_COMM_TYPE_SHARED == 221 && MPI_COMM_TYPE_RESOURCE_GUIDED == 224, "split types");
HC_STATIC_ASSERT(MPI_LOCK_EXCLUSIVE == 301 && MPI_LOCK_SHARED == 302, "lock types");
HC_STATIC_ASSERT(MPI_WIN_FLAVOR_SHARED == 314 && MPI_WIN_SEPARATE == 322, "windows");
HC_STATIC_ASSERT(MPI_SEEK_CUR == 401 && MPI_SEEK_SET == 403, "seek");
HC_STATIC_ASSERT(MPI_KEYVAL_INVALID == 0 && MPI_TAG_UB == 501, "attribute keys");
HC_STATIC_ASSERT(MPI_APPNUM == 505 && MPI_UNIVERSE_SIZE == 507, "attribute keys");
HC_STATIC_ASSERT(MPI_WIN_BASE == 601 && MPI_WIN_MODEL == 605, "window attribute keys");
HC_STATIC_ASSERT(MPI_F_STATUS_SIZE == 8 && MPI_F_ERROR == 2, "Fortran status");
HC_STATIC_ASSERT(MPI_T_VERBOSITY_USER_BASIC == 0x09 && MPI_T_VERBOSITY_MPIDEV_ALL == 0x24, "verbosity");
HC_STATIC_ASSERT(MPI_T_BIND_MPI_SESSION == 12 && MPI_T_SCOPE_ALL_EQ == 7, "tool bindings");
HC_STATIC_ASSERT(MPI_T_PVAR_CLASS_GENERIC == 10 && MPI_T_SOURCE_UNORDERED == 2, "tool classes");
HC_STATIC_ASSERT(MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE == 0x3f, "callback safety");

/* ---- signatures: one typed pointer per sampled function, for MPI_ and PMPI_ ----
 * (external linkage, so that neither compiler calls them unused) */
#define CHECK_FN(ret, name, params)           \
    ret(*p_##name) params = MPI_##name;       \
    ret(*pp_##name) params = PMPI_##name;

/* Point-to-Point Communication */
CHECK_FN(int, Send, (const void *, int, MPI_Datatype, int, int, MPI_Comm))
CHECK_FN(int, Send_c, (const void *, MPI_Count, MPI_Datatype, int, int, MPI_Comm))
CHECK_FN(int, Recv, (void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Status *))
CHECK_FN(int, Get_count_c, (const MPI_Status *, MPI_Datatype, MPI_Count *))
CHECK_FN(int, Waitall, (int, MPI_Request[], MPI_Status[]))
CHECK_FN(int, Request_get_status_any, (int, const MPI_Request[], int *, int *, MPI_Status *))
CHECK_FN(int, Isendrecv_replace, (void *, int, MPI_Datatype, int, int, int, int, MPI_Comm, MPI_Request *))
CHECK_FN(int, Buffer_detach_c, (void *, MPI_Count *))
CHECK_FN(int, Session_iflush_buffer, (MPI_Session, MPI_Request *))
CHECK_FN(int, Status_get_source, (const MPI_Status *, int *))
/* Partitioned Point-to-Point Communication */
CHECK_FN(int, Psend_init_c, (const void *, int, MPI_Count, MPI_Datatype, int, int, MPI_Comm, MPI_Info, MPI_Request *))
CHECK_FN(int, Pready_list, (int, const int[], MPI_Request))
CHECK_FN(int, Parrived, (MPI_Request, int, int *))
/* Datatypes */
CHECK_FN(int, Type_contiguous_c, (MPI_Count, MPI_Datatype, MPI_Datatype *))
CHECK_FN(int, Type_create_struct, (int, const int[], const MPI_Aint[], const MPI_Datatype[], MPI_Datatype *))
CHECK_FN(MPI_Aint, Aint_add, (MPI_Aint, MPI_Aint))
CHECK_FN(int, Pack_c, (const void *, MPI_Count, MPI_Datatype, void *, MPI_Count, MPI_Count *, MPI_Comm))
CHECK_FN(int, Type_get_contents_c,
         (MPI_Datatype, MPI_Count, MPI_Count, MPI_Count, MPI_Count, int[], MPI_Aint[], MPI_Count[], MPI_Datatype[]))
/* Collective Communication */
CHECK_FN(int, Bcast_c, (void *, MPI_Count, MPI_Datatype, int, MPI_Comm))
CHECK_FN(int, Alltoallw_init_c,
         (const void *, const MPI_Count[], const MPI_Aint[], const MPI_Datatype[], void *, const MPI_Count[],
          const MPI_Aint[], const MPI_Datatype[], MPI_Comm, MPI_Info, MPI_Request *))
CHECK_FN(int, Iallreduce, (const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm, MPI_Request *))
CHECK_FN(int, Op_create_c, (MPI_User_function_c *, int, MPI_Op *))
CHECK_FN(int, Type_get_value_index, (MPI_Datatype, MPI_Datatype, MPI_Datatype *))
/* Groups, Contexts, Communicators, and Caching */
CHECK_FN(int, Comm_rank, (MPI_Comm, int *))
CHECK_FN(int, Group_range_incl, (MPI_Group, int, int[][3], MPI_Group *))
CHECK_FN(int, Comm_create_from_group, (MPI_Group, const char *, MPI_Info, MPI_Errhandler, MPI_Comm *))
CHECK_FN(int, Comm_idup_with_info, (MPI_Comm, MPI_Info, MPI_Comm *, MPI_Request *))
CHECK_FN(int, Comm_create_keyval, (MPI_Comm_copy_attr_function *, MPI_Comm_delete_attr_function *, int *, void *))
/* Process Topologies */
CHECK_FN(int, Cart_create, (MPI_Comm, int, const int[], const int[], int, MPI_Comm *))
CHECK_FN(int, Dist_graph_create_adjacent,
         (MPI_Comm, int, const int[], const int[], int, const int[], const int[], MPI_Info, int, MPI_Comm *))
CHECK_FN(int, Neighbor_alltoallw_c,
         (const void *, const MPI_Count[], const MPI_Aint[], const MPI_Datatype[], void *, const MPI_Count[],
          const MPI_Aint[], const MPI_Datatype[], MPI_Comm))
/* MPI Environmental Management */
CHECK_FN(double, Wtime, (void))
CHECK_FN(int, Get_library_version, (char *, int *))
CHECK_FN(int, Session_create_errhandler, (MPI_Session_errhandler_function *, MPI_Errhandler *))
CHECK_FN(int, Remove_error_class, (int))
/* The Info Object */
CHECK_FN(int, Info_get_string, (MPI_Info, const char *, int *, char *, int *))
CHECK_FN(int, Info_create_env, (int, char *[], MPI_Info *))
/* Process Initialization, Creation, and Management */
CHECK_FN(int, Init, (int *, char ***))
CHECK_FN(int, Session_get_nth_pset, (MPI_Session, MPI_Info, int, int *, char *))
CHECK_FN(int, Comm_spawn_multiple,
         (int, char *[], char **[], const int[], const MPI_Info[], int, MPI_Comm, MPI_Comm *, int[]))
/* One-Sided Communications */
CHECK_FN(int, Win_allocate_shared_c, (MPI_Aint, MPI_Aint, MPI_Info, MPI_Comm, void *, MPI_Win *))
CHECK_FN(int, Compare_and_swap, (const void *, const void *, void *, MPI_Datatype, int, MPI_Aint, MPI_Win))
CHECK_FN(int, Rget_accumulate_c,
         (const void *, MPI_Count, MPI_Datatype, void *, MPI_Count, MPI_Datatype, int, MPI_Aint, MPI_Count,
          MPI_Datatype, MPI_Op, MPI_Win, MPI_Request *))
/* External Interfaces */
CHECK_FN(int, Grequest_start,
         (MPI_Grequest_query_function *, MPI_Grequest_free_function *, MPI_Grequest_cancel_function *, void *,
          MPI_Request *))
CHECK_FN(int, Status_set_elements_c, (MPI_Status *, MPI_Datatype, MPI_Count))
/* I/O */
CHECK_FN(int, File_open, (MPI_Comm, const char *, int, MPI_Info, MPI_File *))
CHECK_FN(int, File_iwrite_at_all_c, (MPI_File, MPI_Offset, const void *, MPI_Count, MPI_Datatype, MPI_Request *))
CHECK_FN(int, File_read_ordered_end, (MPI_File, void *, MPI_Status *))
CHECK_FN(int, Register_datarep_c,
         (const char *, MPI_Datarep_conversion_function_c *, MPI_Datarep_conversion_function_c *,
          MPI_Datarep_extent_function *, void *))
/* Tool Support */
CHECK_FN(int, Pcontrol, (const int, ...))
CHECK_FN(int, T_init_thread, (int, int *))
CHECK_FN(int, T_event_register_callback,
         (MPI_T_event_registration, MPI_T_cb_safety, MPI_Info, void *, MPI_T_event_cb_function *))
CHECK_FN(int, T_event_handle_free, (MPI_T_event_registration, void *, MPI_T_event_free_cb_function *))
CHECK_FN(int, T_source_get_info,
         (int, char *, int *, char *, int *, MPI_T_source_order *, MPI_Count *, MPI_Count *, MPI_Info *))
CHECK_FN(int, T_pvar_readreset, (MPI_T_pvar_session, MPI_T_pvar_handle, void *))
/* Deprecated Functions */
CHECK_FN(int, Info_get_valuelen, (MPI_Info, const char *, int *, int *))
CHECK_FN(int, Type_size_x, (MPI_Datatype, MPI_Count *))
/* Language Bindings */
CHECK_FN(int, Type_create_f90_real, (int, int, MPI_Datatype *))
/* Application Binary Interface (ABI) */
CHECK_FN(int, Abi_get_version, (int *, int *))
CHECK_FN(int, Abi_get_fortran_booleans, (int, void *, void *, int *))
CHECK_FN(int, Comm_toint, (MPI_Comm))
CHECK_FN(MPI_Comm, Comm_fromint, (int))
CHECK_FN(int, Type_toint, (MPI_Datatype))
CHECK_FN(MPI_Win, Win_fromint, (int))

typedef void (*any_fn)(void);
#define FN(name) (any_fn) MPI_##name, (any_fn) PMPI_##name
static const any_fn sampled[] = {
    FN(Send), FN(Send_c), FN(Recv), FN(Get_count_c), FN(Waitall), FN(Request_get_status_any),
    FN(Isendrecv_replace), FN(Buffer_detach_c), FN(Session_iflush_buffer), FN(Status_get_source),
    FN(Psend_init_c), FN(Pready_list), FN(Parrived), FN(Type_contiguous_c), FN(Type_create_struct),
    FN(Aint_add), FN(Pack_c), FN(Type_get_contents_c), FN(Bcast_c), FN(Alltoallw_init_c), FN(Iallreduce),
    FN(Op_create_c), FN(Type_get_value_index), FN(Comm_rank), FN(Group_range_incl), FN(Comm_create_from_group),
    FN(Comm_idup_with_info), FN(Comm_create_keyval), FN(Cart_create), FN(Dist_graph_create_adjacent),
    FN(Neighbor_alltoallw_c), FN(Wtime), FN(Get_library_version), FN(Session_create_errhandler),
    FN(Remove_error_class), FN(Info_get_string), FN(Info_create_env), FN(Init), FN(Session_get_nth_pset),
    FN(Comm_spawn_multiple), FN(Win_allocate_shared_c), FN(Compare_and_swap), FN(Rget_accumulate_c),
    FN(Grequest_start), FN(Status_set_elements_c), FN(File_open), FN(File_iwrite_at_all_c),
    FN(File_read_ordered_end), FN(Register_datarep_c), FN(Pcontrol), FN(T_init_thread),
    FN(T_event_register_callback), FN(T_event_handle_free), FN(T_source_get_info), FN(T_pvar_readreset),
    FN(Info_get_valuelen), FN(Type_size_x), FN(Type_create_f90_real), FN(Abi_get_version),
    FN(Abi_get_fortran_booleans), FN(Comm_toint), FN(Comm_fromint), FN(Type_toint), FN(Win_fromint),
};

/* ---- predefined callbacks and pointer constants must have the callback types ---- */
static MPI_Comm_copy_attr_function *const comm_dup_fn = MPI_COMM_DUP_FN;
static MPI_Comm_delete_attr_function *const comm_null_delete_fn = MPI_COMM_NULL_DELETE_FN;
static MPI_Type_copy_attr_function *const type_null_copy_fn = MPI_TYPE_NULL_COPY_FN;
static MPI_Win_delete_attr_function *const win_null_delete_fn = MPI_WIN_NULL_DELETE_FN;
static MPI_Datarep_conversion_function *const conversion_fn_null = MPI_CONVERSION_FN_NULL;
static MPI_Datarep_conversion_function_c *const conversion_fn_null_c = MPI_CONVERSION_FN_NULL_C;

static int failures;

#define CHECK(cond)                                                   \
    do {                                                              \
        if (!(cond)) {                                                \
            fprintf(stderr, "%s:%d: FAILED: %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                               \
        }                                                             \
    } while (0)

#define HANDLE_IS(handle, value) CHECK((intptr_t)(handle) == (intptr_t)(value))

int main(void)
{
    size_t i;
    int major = -1, minor = -1, rc;
    MPI_Status status;
    int *unweighted = MPI_UNWEIGHTED;
    char **argv_null = MPI_ARGV_NULL;
    char ***argvs_null = MPI_ARGVS_NULL;
    MPI_Offset displacement_current = MPI_DISPLACEMENT_CURRENT;

    /* predefined handles: the ABI's exact values */
    CHECK(MPI_COMM_WORLD == (MPI_Comm)0x101);
    HANDLE_IS(MPI_COMM_NULL, 0x100);
    HANDLE_IS(MPI_COMM_SELF, 0x102);
    HANDLE_IS(MPI_GROUP_EMPTY, 0x109);
    HANDLE_IS(MPI_WIN_NULL, 0x110);
    HANDLE_IS(MPI_FILE_NULL, 0x118);
    HANDLE_IS(MPI_SESSION_NULL, 0x120);
    HANDLE_IS(MPI_MESSAGE_NO_PROC, 0x129);
    HANDLE_IS(MPI_INFO_ENV, 0x131);
    HANDLE_IS(MPI_ERRORS_ARE_FATAL, 0x141);
    HANDLE_IS(MPI_ERRORS_ABORT, 0x142);
    HANDLE_IS(MPI_ERRORS_RETURN, 0x143);
    HANDLE_IS(MPI_REQUEST_NULL, 0x180);
    HANDLE_IS(MPI_OP_NULL, 0x20);
    HANDLE_IS(MPI_SUM, 0x21);
    HANDLE_IS(MPI_MAXLOC, 0x39);
    HANDLE_IS(MPI_NO_OP, 0x3d);
    HANDLE_IS(MPI_DATATYPE_NULL, 0x200);
    HANDLE_IS(MPI_INT, 0x209);
    HANDLE_IS(MPI_DOUBLE, 0x214);
    HANDLE_IS(MPI_CXX_BOOL, 0x239);
    HANDLE_IS(MPI_C_LONG_DOUBLE_COMPLEX, 0x224);
    HANDLE_IS(MPI_CHARACTER, 0x21e);
    HANDLE_IS(MPI_2INTEGER, 0x232);
    HANDLE_IS(MPI_BYTE, 0x247);
    HANDLE_IS(MPI_UINT64_T, 0x259);
    HANDLE_IS(MPI_COMPLEX32, 0x2eb);
    CHECK(MPI_LONG_LONG_INT == MPI_LONG_LONG);
    CHECK(MPI_C_COMPLEX == MPI_C_FLOAT_COMPLEX);
    HANDLE_IS(MPI_T_PVAR_ALL_HANDLES, 1);
    CHECK(MPI_T_ENUM_NULL == (MPI_T_enum)0);

    /* pointer constants */
    CHECK(MPI_BOTTOM == (void *)0);
    HANDLE_IS(MPI_IN_PLACE, 1);
    HANDLE_IS(MPI_BUFFER_AUTOMATIC, 2);
    CHECK(MPI_STATUS_IGNORE == (MPI_Status *)0 && MPI_STATUSES_IGNORE == (MPI_Status *)0);
    CHECK(MPI_ERRCODES_IGNORE == (int *)0);
    CHECK(argv_null == (char **)0 && argvs_null == (char ***)0);
    HANDLE_IS(unweighted, 10);
    HANDLE_IS(MPI_WEIGHTS_EMPTY, 11);
    CHECK(displacement_current == -1);
    HANDLE_IS(comm_dup_fn, 1);
    CHECK(comm_null_delete_fn == 0 && type_null_copy_fn == 0 && win_null_delete_fn == 0);
    CHECK(conversion_fn_null == 0 && conversion_fn_null_c == 0);

    /* every sampled MPI_x and PMPI_x resolved at link time */
    for (i = 0; i < sizeof sampled / sizeof sampled[0]; i++)
        CHECK(sampled[i] != 0);

    /* a call through the library: implemented or not, the answer is well-formed */
    rc = MPI_Abi_get_version(&major, &minor);
    CHECK(rc == MPI_SUCCESS ? (major == 1 && minor == 0) : rc == MPI_ERR_UNSUPPORTED_OPERATION);
    status.MPI_SOURCE = 3;
    status.MPI_TAG = 4;
    status.MPI_ERROR = MPI_SUCCESS;
    CHECK(status.MPI_SOURCE + status.MPI_TAG == 7);

    if (failures) {
        fprintf(stderr, "header_check: %d check(s) failed\n", failures);
        return 1;
    }
    printf("header_check: %d functions linked, all checks passed\n", (int)(sizeof sampled / sizeof sampled[0]));
    return 0;
}
