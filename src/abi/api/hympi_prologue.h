/* MPICH-compatible streams (MPIX_Stream_*): a serial execution context with a VCI of its
 * own inside hympi. */
typedef struct MPIX_ABI_Stream *MPIX_Stream;
#define MPIX_STREAM_NULL ((MPIX_Stream)0)
