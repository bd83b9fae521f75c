/* Types and constants of the MPI-5.0 standard ABI (ABI version 1.0).
 *
 * This fragment is the first half of include/mpi.h; build.rs appends the function prototypes
 * generated from functions.txt and parses every `#define NAME VALUE` line below into Rust
 * constants (src/abi/consts.rs in OUT_DIR), so C and Rust always agree on the values. */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MPI_VERSION 5
#define MPI_SUBVERSION 0
#define MPI_ABI_VERSION 1
#define MPI_ABI_SUBVERSION 0

/* hympi identifies itself so that portable code can test for it. */
#define HYMPI 1
#define HYMPI_VERSION_MAJOR 0
#define HYMPI_VERSION_MINOR 1

/* ---- integer types ---- */
typedef intptr_t MPI_Aint;
typedef int64_t MPI_Offset;
typedef int64_t MPI_Count;
typedef int MPI_Fint;

/* ---- status: 8 ints ---- */
typedef struct MPI_Status {
    int MPI_SOURCE;
    int MPI_TAG;
    int MPI_ERROR;
    int MPI_internal[5];
} MPI_Status;

/* ---- handles: pointers to incomplete structs ---- */
typedef struct MPI_ABI_Comm *MPI_Comm;
typedef struct MPI_ABI_Datatype *MPI_Datatype;
typedef struct MPI_ABI_Errhandler *MPI_Errhandler;
typedef struct MPI_ABI_File *MPI_File;
typedef struct MPI_ABI_Group *MPI_Group;
typedef struct MPI_ABI_Info *MPI_Info;
typedef struct MPI_ABI_Message *MPI_Message;
typedef struct MPI_ABI_Op *MPI_Op;
typedef struct MPI_ABI_Request *MPI_Request;
typedef struct MPI_ABI_Session *MPI_Session;
typedef struct MPI_ABI_Win *MPI_Win;
typedef struct MPI_ABI_T_enum *MPI_T_enum;
typedef struct MPI_ABI_T_cvar_handle *MPI_T_cvar_handle;
typedef struct MPI_ABI_T_pvar_handle *MPI_T_pvar_handle;
typedef struct MPI_ABI_T_pvar_session *MPI_T_pvar_session;
typedef struct MPI_ABI_T_event_instance *MPI_T_event_instance;
typedef struct MPI_ABI_T_event_registration *MPI_T_event_registration;

/* ---- predefined handles ---- */
#define MPI_OP_NULL ((MPI_Op)0x00000020)
#define MPI_SUM ((MPI_Op)0x00000021)
#define MPI_MIN ((MPI_Op)0x00000022)
#define MPI_MAX ((MPI_Op)0x00000023)
#define MPI_PROD ((MPI_Op)0x00000024)
#define MPI_BAND ((MPI_Op)0x00000028)
#define MPI_BOR ((MPI_Op)0x00000029)
#define MPI_BXOR ((MPI_Op)0x0000002a)
#define MPI_LAND ((MPI_Op)0x00000030)
#define MPI_LOR ((MPI_Op)0x00000031)
#define MPI_LXOR ((MPI_Op)0x00000032)
#define MPI_MINLOC ((MPI_Op)0x00000038)
#define MPI_MAXLOC ((MPI_Op)0x00000039)
#define MPI_REPLACE ((MPI_Op)0x0000003c)
#define MPI_NO_OP ((MPI_Op)0x0000003d)

#define MPI_COMM_NULL ((MPI_Comm)0x00000100)
#define MPI_COMM_WORLD ((MPI_Comm)0x00000101)
#define MPI_COMM_SELF ((MPI_Comm)0x00000102)
#define MPI_GROUP_NULL ((MPI_Group)0x00000108)
#define MPI_GROUP_EMPTY ((MPI_Group)0x00000109)
#define MPI_WIN_NULL ((MPI_Win)0x00000110)
#define MPI_FILE_NULL ((MPI_File)0x00000118)
#define MPI_SESSION_NULL ((MPI_Session)0x00000120)
#define MPI_MESSAGE_NULL ((MPI_Message)0x00000128)
#define MPI_MESSAGE_NO_PROC ((MPI_Message)0x00000129)
#define MPI_INFO_NULL ((MPI_Info)0x00000130)
#define MPI_INFO_ENV ((MPI_Info)0x00000131)
#define MPI_ERRHANDLER_NULL ((MPI_Errhandler)0x00000140)
#define MPI_ERRORS_ARE_FATAL ((MPI_Errhandler)0x00000141)
#define MPI_ERRORS_ABORT ((MPI_Errhandler)0x00000142)
#define MPI_ERRORS_RETURN ((MPI_Errhandler)0x00000143)
#define MPI_REQUEST_NULL ((MPI_Request)0x00000180)

#define MPI_DATATYPE_NULL ((MPI_Datatype)0x00000200)
#define MPI_AINT ((MPI_Datatype)0x00000201)
#define MPI_COUNT ((MPI_Datatype)0x00000202)
#define MPI_OFFSET ((MPI_Datatype)0x00000203)
#define MPI_PACKED ((MPI_Datatype)0x00000207)
#define MPI_SHORT ((MPI_Datatype)0x00000208)
#define MPI_INT ((MPI_Datatype)0x00000209)
#define MPI_LONG ((MPI_Datatype)0x0000020a)
#define MPI_LONG_LONG ((MPI_Datatype)0x0000020b)
#define MPI_LONG_LONG_INT MPI_LONG_LONG
#define MPI_UNSIGNED_SHORT ((MPI_Datatype)0x0000020c)
#define MPI_UNSIGNED ((MPI_Datatype)0x0000020d)
#define MPI_UNSIGNED_LONG ((MPI_Datatype)0x0000020e)
#define MPI_UNSIGNED_LONG_LONG ((MPI_Datatype)0x0000020f)
#define MPI_FLOAT ((MPI_Datatype)0x00000210)
#define MPI_C_FLOAT_COMPLEX ((MPI_Datatype)0x00000212)
#define MPI_C_COMPLEX MPI_C_FLOAT_COMPLEX
#define MPI_CXX_FLOAT_COMPLEX ((MPI_Datatype)0x00000213)
#define MPI_DOUBLE ((MPI_Datatype)0x00000214)
#define MPI_C_DOUBLE_COMPLEX ((MPI_Datatype)0x00000216)
#define MPI_CXX_DOUBLE_COMPLEX ((MPI_Datatype)0x00000217)
#define MPI_LOGICAL ((MPI_Datatype)0x00000218)
#define MPI_INTEGER ((MPI_Datatype)0x00000219)
#define MPI_REAL ((MPI_Datatype)0x0000021a)
#define MPI_COMPLEX ((MPI_Datatype)0x0000021b)
#define MPI_DOUBLE_PRECISION ((MPI_Datatype)0x0000021c)
#define MPI_DOUBLE_COMPLEX ((MPI_Datatype)0x0000021d)
#define MPI_CHARACTER ((MPI_Datatype)0x0000021e)
#define MPI_LONG_DOUBLE ((MPI_Datatype)0x00000220)
#define MPI_C_LONG_DOUBLE_COMPLEX ((MPI_Datatype)0x00000224)
#define MPI_CXX_LONG_DOUBLE_COMPLEX ((MPI_Datatype)0x00000225)
#define MPI_FLOAT_INT ((MPI_Datatype)0x00000228)
#define MPI_DOUBLE_INT ((MPI_Datatype)0x00000229)
#define MPI_LONG_INT ((MPI_Datatype)0x0000022a)
#define MPI_2INT ((MPI_Datatype)0x0000022b)
#define MPI_SHORT_INT ((MPI_Datatype)0x0000022c)
#define MPI_LONG_DOUBLE_INT ((MPI_Datatype)0x0000022d)
#define MPI_2REAL ((MPI_Datatype)0x00000230)
#define MPI_2DOUBLE_PRECISION ((MPI_Datatype)0x00000231)
#define MPI_2INTEGER ((MPI_Datatype)0x00000232)
#define MPI_C_BOOL ((MPI_Datatype)0x00000238)
#define MPI_CXX_BOOL ((MPI_Datatype)0x00000239)
#define MPI_WCHAR ((MPI_Datatype)0x0000023c)
#define MPI_INT8_T ((MPI_Datatype)0x00000240)
#define MPI_UINT8_T ((MPI_Datatype)0x00000241)
#define MPI_CHAR ((MPI_Datatype)0x00000243)
#define MPI_SIGNED_CHAR ((MPI_Datatype)0x00000244)
#define MPI_UNSIGNED_CHAR ((MPI_Datatype)0x00000245)
#define MPI_BYTE ((MPI_Datatype)0x00000247)
#define MPI_INT16_T ((MPI_Datatype)0x00000248)
#define MPI_UINT16_T ((MPI_Datatype)0x00000249)
#define MPI_INT32_T ((MPI_Datatype)0x00000250)
#define MPI_UINT32_T ((MPI_Datatype)0x00000251)
#define MPI_INT64_T ((MPI_Datatype)0x00000258)
#define MPI_UINT64_T ((MPI_Datatype)0x00000259)
/* optional Fortran datatypes */
#define MPI_LOGICAL1 ((MPI_Datatype)0x000002c0)
#define MPI_INTEGER1 ((MPI_Datatype)0x000002c1)
#define MPI_LOGICAL2 ((MPI_Datatype)0x000002c8)
#define MPI_INTEGER2 ((MPI_Datatype)0x000002c9)
#define MPI_REAL2 ((MPI_Datatype)0x000002ca)
#define MPI_LOGICAL4 ((MPI_Datatype)0x000002d0)
#define MPI_INTEGER4 ((MPI_Datatype)0x000002d1)
#define MPI_REAL4 ((MPI_Datatype)0x000002d2)
#define MPI_COMPLEX4 ((MPI_Datatype)0x000002d3)
#define MPI_LOGICAL8 ((MPI_Datatype)0x000002d8)
#define MPI_INTEGER8 ((MPI_Datatype)0x000002d9)
#define MPI_REAL8 ((MPI_Datatype)0x000002da)
#define MPI_COMPLEX8 ((MPI_Datatype)0x000002db)
#define MPI_LOGICAL16 ((MPI_Datatype)0x000002e0)
#define MPI_INTEGER16 ((MPI_Datatype)0x000002e1)
#define MPI_REAL16 ((MPI_Datatype)0x000002e2)
#define MPI_COMPLEX16 ((MPI_Datatype)0x000002e3)
#define MPI_COMPLEX32 ((MPI_Datatype)0x000002eb)

/* tool information interface handles */
#define MPI_T_ENUM_NULL ((MPI_T_enum)0x00000000)
#define MPI_T_CVAR_HANDLE_NULL ((MPI_T_cvar_handle)0x00000000)
#define MPI_T_PVAR_HANDLE_NULL ((MPI_T_pvar_handle)0x00000000)
#define MPI_T_PVAR_ALL_HANDLES ((MPI_T_pvar_handle)0x00000001)
#define MPI_T_PVAR_SESSION_NULL ((MPI_T_pvar_session)0x00000000)

/* ---- special values ---- */
#define MPI_ANY_SOURCE (-1)
#define MPI_ANY_TAG (-2)
#define MPI_PROC_NULL (-3)
#define MPI_ROOT (-4)
#define MPI_UNDEFINED (-32766)

#define MPI_BOTTOM ((void *)0)
#define MPI_IN_PLACE ((void *)1)
#define MPI_BUFFER_AUTOMATIC ((void *)2)
#define MPI_STATUS_IGNORE ((MPI_Status *)0)
#define MPI_STATUSES_IGNORE ((MPI_Status *)0)
#define MPI_ARGV_NULL ((char **)0)
#define MPI_ARGVS_NULL ((char ***)0)
#define MPI_ERRCODES_IGNORE ((int *)0)
#define MPI_UNWEIGHTED ((int *)10)
#define MPI_WEIGHTS_EMPTY ((int *)11)
#define MPI_BSEND_OVERHEAD 512

#define MPI_THREAD_SINGLE 0
#define MPI_THREAD_FUNNELED 1024
#define MPI_THREAD_SERIALIZED 2048
#define MPI_THREAD_MULTIPLE 4096

#define MPI_MAX_DATAREP_STRING 128
#define MPI_MAX_ERROR_STRING 512
#define MPI_MAX_INFO_KEY 256
#define MPI_MAX_INFO_VAL 1024
#define MPI_MAX_LIBRARY_VERSION_STRING 8192
#define MPI_MAX_OBJECT_NAME 128
#define MPI_MAX_PORT_NAME 1024
#define MPI_MAX_PROCESSOR_NAME 256
#define MPI_MAX_STRINGTAG_LEN 1024
#define MPI_MAX_PSET_NAME_LEN 1024

/* ---- error classes ---- */
#define MPI_SUCCESS 0
#define MPI_ERR_BUFFER 1
#define MPI_ERR_COUNT 2
#define MPI_ERR_TYPE 3
#define MPI_ERR_TAG 4
#define MPI_ERR_COMM 5
#define MPI_ERR_RANK 6
#define MPI_ERR_REQUEST 7
#define MPI_ERR_ROOT 8
#define MPI_ERR_GROUP 9
#define MPI_ERR_OP 10
#define MPI_ERR_TOPOLOGY 11
#define MPI_ERR_DIMS 12
#define MPI_ERR_ARG 13
#define MPI_ERR_UNKNOWN 14
#define MPI_ERR_TRUNCATE 15
#define MPI_ERR_OTHER 16
#define MPI_ERR_INTERN 17
#define MPI_ERR_PENDING 18
#define MPI_ERR_IN_STATUS 19
#define MPI_ERR_ACCESS 20
#define MPI_ERR_AMODE 21
#define MPI_ERR_ASSERT 22
#define MPI_ERR_BAD_FILE 23
#define MPI_ERR_BASE 24
#define MPI_ERR_CONVERSION 25
#define MPI_ERR_DISP 26
#define MPI_ERR_DUP_DATAREP 27
#define MPI_ERR_FILE_EXISTS 28
#define MPI_ERR_FILE_IN_USE 29
#define MPI_ERR_FILE 30
#define MPI_ERR_INFO_KEY 31
#define MPI_ERR_INFO_NOKEY 32
#define MPI_ERR_INFO_VALUE 33
#define MPI_ERR_INFO 34
#define MPI_ERR_IO 35
#define MPI_ERR_KEYVAL 36
#define MPI_ERR_LOCKTYPE 37
#define MPI_ERR_NAME 38
#define MPI_ERR_NO_MEM 39
#define MPI_ERR_NOT_SAME 40
#define MPI_ERR_NO_SPACE 41
#define MPI_ERR_NO_SUCH_FILE 42
#define MPI_ERR_PORT 43
#define MPI_ERR_QUOTA 44
#define MPI_ERR_READ_ONLY 45
#define MPI_ERR_RMA_ATTACH 46
#define MPI_ERR_RMA_CONFLICT 47
#define MPI_ERR_RMA_RANGE 48
#define MPI_ERR_RMA_SHARED 49
#define MPI_ERR_RMA_SYNC 50
#define MPI_ERR_SERVICE 51
#define MPI_ERR_SIZE 52
#define MPI_ERR_SPAWN 53
#define MPI_ERR_UNSUPPORTED_DATAREP 54
#define MPI_ERR_UNSUPPORTED_OPERATION 55
#define MPI_ERR_WIN 56
#define MPI_ERR_RMA_FLAVOR 57
#define MPI_ERR_PROC_ABORTED 58
#define MPI_ERR_VALUE_TOO_LARGE 59
#define MPI_ERR_SESSION 60
#define MPI_ERR_ERRHANDLER 61
#define MPI_ERR_ABI 62
/* tool information interface error classes */
#define MPI_T_ERR_CANNOT_INIT 1001
#define MPI_T_ERR_NOT_ACCESSIBLE 1002
#define MPI_T_ERR_NOT_INITIALIZED 1003
#define MPI_T_ERR_NOT_SUPPORTED 1004
#define MPI_T_ERR_MEMORY 1005
#define MPI_T_ERR_INVALID 1006
#define MPI_T_ERR_INVALID_INDEX 1007
#define MPI_T_ERR_INVALID_ITEM 1008
#define MPI_T_ERR_INVALID_SESSION 1009
#define MPI_T_ERR_INVALID_HANDLE 1010
#define MPI_T_ERR_INVALID_NAME 1011
#define MPI_T_ERR_OUT_OF_HANDLES 1012
#define MPI_T_ERR_OUT_OF_SESSIONS 1013
#define MPI_T_ERR_CVAR_SET_NOT_NOW 1014
#define MPI_T_ERR_CVAR_SET_NEVER 1015
#define MPI_T_ERR_PVAR_NO_WRITE 1016
#define MPI_T_ERR_PVAR_NO_STARTSTOP 1017
#define MPI_T_ERR_PVAR_NO_ATOMIC 1018
#define MPI_ERR_LASTCODE 0x3fff

/* ---- Fortran status array size and reserved index values (C only) ---- */
#define MPI_F_STATUS_SIZE 8
#define MPI_F_SOURCE 0
#define MPI_F_TAG 1
#define MPI_F_ERROR 2

/* ---- mode constants (powers of two, to be or-ed) ---- */
#define MPI_MODE_APPEND 1
#define MPI_MODE_CREATE 2
#define MPI_MODE_DELETE_ON_CLOSE 4
#define MPI_MODE_EXCL 8
#define MPI_MODE_RDONLY 16
#define MPI_MODE_RDWR 32
#define MPI_MODE_SEQUENTIAL 64
#define MPI_MODE_UNIQUE_OPEN 128
#define MPI_MODE_WRONLY 256
#define MPI_MODE_NOCHECK 1024
#define MPI_MODE_NOPRECEDE 2048
#define MPI_MODE_NOPUT 4096
#define MPI_MODE_NOSTORE 8192
#define MPI_MODE_NOSUCCEED 16384

/* ---- array datatype order and distribution ---- */
#define MPI_ORDER_C 12
#define MPI_ORDER_FORTRAN 15
#define MPI_DISTRIBUTE_NONE 16
#define MPI_DISTRIBUTE_BLOCK 17
#define MPI_DISTRIBUTE_CYCLIC 18
#define MPI_DISTRIBUTE_DFLT_DARG 19

/* ---- datatype decoding (combiners) ---- */
#define MPI_COMBINER_NAMED 101
#define MPI_COMBINER_DUP 102
#define MPI_COMBINER_CONTIGUOUS 103
#define MPI_COMBINER_VECTOR 104
#define MPI_COMBINER_HVECTOR 105
#define MPI_COMBINER_INDEXED 106
#define MPI_COMBINER_HINDEXED 107
#define MPI_COMBINER_INDEXED_BLOCK 108
#define MPI_COMBINER_HINDEXED_BLOCK 109
#define MPI_COMBINER_STRUCT 110
#define MPI_COMBINER_SUBARRAY 111
#define MPI_COMBINER_DARRAY 112
#define MPI_COMBINER_F90_REAL 113
#define MPI_COMBINER_F90_COMPLEX 114
#define MPI_COMBINER_F90_INTEGER 115
#define MPI_COMBINER_RESIZED 116
#define MPI_COMBINER_VALUE_INDEX 117

/* ---- Fortran datatype matching ---- */
#define MPI_TYPECLASS_INTEGER 192
#define MPI_TYPECLASS_REAL 193
#define MPI_TYPECLASS_COMPLEX 194

/* ---- results of communicator and group comparisons ---- */
#define MPI_IDENT 201
#define MPI_CONGRUENT 202
#define MPI_SIMILAR 203
#define MPI_UNEQUAL 204

/* ---- topologies ---- */
#define MPI_CART 211
#define MPI_GRAPH 212
#define MPI_DIST_GRAPH 213

/* ---- communicator split types ---- */
#define MPI_COMM_TYPE_SHARED 221
#define MPI_COMM_TYPE_HW_UNGUIDED 222
#define MPI_COMM_TYPE_HW_GUIDED 223
#define MPI_COMM_TYPE_RESOURCE_GUIDED 224

/* ---- windows: lock types, create flavors, memory models ---- */
#define MPI_LOCK_EXCLUSIVE 301
#define MPI_LOCK_SHARED 302
#define MPI_WIN_FLAVOR_CREATE 311
#define MPI_WIN_FLAVOR_ALLOCATE 312
#define MPI_WIN_FLAVOR_DYNAMIC 313
#define MPI_WIN_FLAVOR_SHARED 314
#define MPI_WIN_UNIFIED 321
#define MPI_WIN_SEPARATE 322

/* ---- file positioning and file operations ---- */
#define MPI_SEEK_CUR 401
#define MPI_SEEK_END 402
#define MPI_SEEK_SET 403
#define MPI_DISPLACEMENT_CURRENT ((MPI_Offset)-1)

/* ---- predefined attribute keys ---- */
#define MPI_KEYVAL_INVALID 0
#define MPI_TAG_UB 501
#define MPI_IO 502
#define MPI_HOST 503
#define MPI_WTIME_IS_GLOBAL 504
#define MPI_APPNUM 505
#define MPI_LASTUSEDCODE 506
#define MPI_UNIVERSE_SIZE 507
#define MPI_WIN_BASE 601
#define MPI_WIN_DISP_UNIT 602
#define MPI_WIN_SIZE 603
#define MPI_WIN_CREATE_FLAVOR 604
#define MPI_WIN_MODEL 605

/* ---- tool information interface ---- */
/* The ABI header declares these two as enumerations; they are ints here so that build.rs
 * turns their values into Rust constants (same size, same calling convention). */
typedef int MPI_T_cb_safety;
typedef int MPI_T_source_order;

#define MPI_T_VERBOSITY_USER_BASIC 0x09
#define MPI_T_VERBOSITY_USER_DETAIL 0x0a
#define MPI_T_VERBOSITY_USER_ALL 0x0c
#define MPI_T_VERBOSITY_TUNER_BASIC 0x11
#define MPI_T_VERBOSITY_TUNER_DETAIL 0x12
#define MPI_T_VERBOSITY_TUNER_ALL 0x14
#define MPI_T_VERBOSITY_MPIDEV_BASIC 0x21
#define MPI_T_VERBOSITY_MPIDEV_DETAIL 0x22
#define MPI_T_VERBOSITY_MPIDEV_ALL 0x24

#define MPI_T_BIND_NO_OBJECT 1
#define MPI_T_BIND_MPI_COMM 2
#define MPI_T_BIND_MPI_DATATYPE 3
#define MPI_T_BIND_MPI_ERRHANDLER 4
#define MPI_T_BIND_MPI_FILE 5
#define MPI_T_BIND_MPI_GROUP 6
#define MPI_T_BIND_MPI_OP 7
#define MPI_T_BIND_MPI_REQUEST 8
#define MPI_T_BIND_MPI_WIN 9
#define MPI_T_BIND_MPI_MESSAGE 10
#define MPI_T_BIND_MPI_INFO 11
#define MPI_T_BIND_MPI_SESSION 12

#define MPI_T_SCOPE_CONSTANT 1
#define MPI_T_SCOPE_READONLY 2
#define MPI_T_SCOPE_LOCAL 3
#define MPI_T_SCOPE_GROUP 4
#define MPI_T_SCOPE_GROUP_EQ 5
#define MPI_T_SCOPE_ALL 6
#define MPI_T_SCOPE_ALL_EQ 7

#define MPI_T_PVAR_CLASS_STATE 1
#define MPI_T_PVAR_CLASS_LEVEL 2
#define MPI_T_PVAR_CLASS_SIZE 3
#define MPI_T_PVAR_CLASS_PERCENTAGE 4
#define MPI_T_PVAR_CLASS_HIGHWATERMARK 5
#define MPI_T_PVAR_CLASS_LOWWATERMARK 6
#define MPI_T_PVAR_CLASS_COUNTER 7
#define MPI_T_PVAR_CLASS_AGGREGATE 8
#define MPI_T_PVAR_CLASS_TIMER 9
#define MPI_T_PVAR_CLASS_GENERIC 10

#define MPI_T_SOURCE_ORDERED 1
#define MPI_T_SOURCE_UNORDERED 2

#define MPI_T_CB_REQUIRE_NONE 0x00
#define MPI_T_CB_REQUIRE_MPI_RESTRICTED 0x03
#define MPI_T_CB_REQUIRE_THREAD_SAFE 0x0f
#define MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE 0x3f

/* ---- callback function types ---- */
typedef void MPI_User_function(void *invec, void *inoutvec, int *len, MPI_Datatype *datatype);
typedef void MPI_User_function_c(void *invec, void *inoutvec, MPI_Count *len, MPI_Datatype *datatype);
typedef void MPI_Comm_errhandler_function(MPI_Comm *comm, int *error_code, ...);
typedef void MPI_Win_errhandler_function(MPI_Win *win, int *error_code, ...);
typedef void MPI_File_errhandler_function(MPI_File *file, int *error_code, ...);
typedef void MPI_Session_errhandler_function(MPI_Session *session, int *error_code, ...);
typedef int MPI_Grequest_query_function(void *extra_state, MPI_Status *status);
typedef int MPI_Grequest_free_function(void *extra_state);
typedef int MPI_Grequest_cancel_function(void *extra_state, int complete);
typedef int MPI_Comm_copy_attr_function(MPI_Comm oldcomm, int comm_keyval, void *extra_state, void *attribute_val_in, void *attribute_val_out, int *flag);
typedef int MPI_Comm_delete_attr_function(MPI_Comm comm, int comm_keyval, void *attribute_val, void *extra_state);
/* the MPI-1 attribute callbacks (deprecated since MPI-2.0), used by MPI_Keyval_create */
typedef int MPI_Copy_function(MPI_Comm oldcomm, int comm_keyval, void *extra_state, void *attribute_val_in, void *attribute_val_out, int *flag);
typedef int MPI_Delete_function(MPI_Comm comm, int comm_keyval, void *attribute_val, void *extra_state);
typedef int MPI_Type_copy_attr_function(MPI_Datatype oldtype, int type_keyval, void *extra_state, void *attribute_val_in, void *attribute_val_out, int *flag);
typedef int MPI_Type_delete_attr_function(MPI_Datatype datatype, int type_keyval, void *attribute_val, void *extra_state);
typedef int MPI_Win_copy_attr_function(MPI_Win oldwin, int win_keyval, void *extra_state, void *attribute_val_in, void *attribute_val_out, int *flag);
typedef int MPI_Win_delete_attr_function(MPI_Win win, int win_keyval, void *attribute_val, void *extra_state);
typedef int MPI_Datarep_extent_function(MPI_Datatype datatype, MPI_Aint *extent, void *extra_state);
typedef int MPI_Datarep_conversion_function(void *userbuf, MPI_Datatype datatype, int count, void *filebuf, MPI_Offset position, void *extra_state);
typedef int MPI_Datarep_conversion_function_c(void *userbuf, MPI_Datatype datatype, MPI_Count count, void *filebuf, MPI_Offset position, void *extra_state);
typedef void MPI_T_event_cb_function(MPI_T_event_instance event_instance, MPI_T_event_registration event_registration, MPI_T_cb_safety cb_safety, void *user_data);
typedef void MPI_T_event_free_cb_function(MPI_T_event_registration event_registration, MPI_T_cb_safety cb_safety, void *user_data);
typedef void MPI_T_event_dropped_cb_function(MPI_Count count, MPI_T_event_registration event_registration, int source_index, MPI_T_cb_safety cb_safety, void *user_data);

/* the pre-MPI-4 spellings of the error-handler function types, kept by the ABI header */
typedef MPI_Comm_errhandler_function MPI_Comm_errhandler_fn;
typedef MPI_File_errhandler_function MPI_File_errhandler_fn;
typedef MPI_Win_errhandler_function MPI_Win_errhandler_fn;
typedef MPI_Session_errhandler_function MPI_Session_errhandler_fn;

/* ---- predefined callback functions ---- */
#define MPI_NULL_COPY_FN ((MPI_Copy_function *)0x0)
#define MPI_DUP_FN ((MPI_Copy_function *)0x1)
#define MPI_NULL_DELETE_FN ((MPI_Delete_function *)0x0)
#define MPI_COMM_NULL_COPY_FN ((MPI_Comm_copy_attr_function *)0x0)
#define MPI_COMM_DUP_FN ((MPI_Comm_copy_attr_function *)0x1)
#define MPI_COMM_NULL_DELETE_FN ((MPI_Comm_delete_attr_function *)0x0)
#define MPI_TYPE_NULL_COPY_FN ((MPI_Type_copy_attr_function *)0x0)
#define MPI_TYPE_DUP_FN ((MPI_Type_copy_attr_function *)0x1)
#define MPI_TYPE_NULL_DELETE_FN ((MPI_Type_delete_attr_function *)0x0)
#define MPI_WIN_NULL_COPY_FN ((MPI_Win_copy_attr_function *)0x0)
#define MPI_WIN_DUP_FN ((MPI_Win_copy_attr_function *)0x1)
#define MPI_WIN_NULL_DELETE_FN ((MPI_Win_delete_attr_function *)0x0)
#define MPI_CONVERSION_FN_NULL ((MPI_Datarep_conversion_function *)0x0)
#define MPI_CONVERSION_FN_NULL_C ((MPI_Datarep_conversion_function_c *)0x0)
