/* request_get_status_multi: MPI-4.1's MPI_Request_get_status_any / _all / _some on requests
 * that completed successfully: the flag, index and counts are right, the requests stay
 * active (a later MPI_Waitall frees them), and each status reports the message with an
 * MPI_ERROR of MPI_SUCCESS, never a stale value. */
#include "mtest.h"

#define N 3
#define STALE (-4242)

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    int errs = 0;
#if MPI_VERSION > 4 || (MPI_VERSION == 4 && MPI_SUBVERSION >= 1)
    int me = 0; /* rank in MPI_COMM_SELF */
    int out[N], in[N];
    MPI_Request rq[2 * N];
    for (int i = 0; i < N; i++) {
        out[i] = 100 + i;
        MPI_Irecv(&in[i], 1, MPI_INT, me, 7 + i, MPI_COMM_SELF, &rq[i]);
    }
    for (int i = 0; i < N; i++)
        MPI_Isend(&out[i], 1, MPI_INT, me, 7 + i, MPI_COMM_SELF, &rq[N + i]);
    /* Wait until all are complete without freeing them. */
    int flag = 0;
    MPI_Status sts[2 * N];
    while (!flag)
        MPI_Request_get_status_all(2 * N, rq, &flag, MPI_STATUSES_IGNORE);

    MPI_Status st;
    int index = -1;
    st.MPI_ERROR = STALE;
    CHECK_RC(MPI_Request_get_status_any(N, rq, &index, &flag, &st), "get_status_any");
    CHECK(flag && index >= 0 && index < N, "any: flag %d index %d", flag, index);
    CHECK(st.MPI_ERROR == MPI_SUCCESS, "any: MPI_ERROR %d", st.MPI_ERROR);
    CHECK(st.MPI_TAG == 7 + index, "any: tag %d, want %d", st.MPI_TAG, 7 + index);

    for (int i = 0; i < 2 * N; i++)
        sts[i].MPI_ERROR = STALE;
    CHECK_RC(MPI_Request_get_status_all(2 * N, rq, &flag, sts), "get_status_all");
    CHECK(flag, "all: flag 0");
    for (int i = 0; i < N; i++) {
        CHECK(sts[i].MPI_TAG == 7 + i, "all: tag[%d] %d", i, sts[i].MPI_TAG);
        CHECK(sts[i].MPI_SOURCE == 0, "all: source[%d] %d", i, sts[i].MPI_SOURCE);
    }
    for (int i = 0; i < 2 * N; i++)
        CHECK(sts[i].MPI_ERROR == MPI_SUCCESS || sts[i].MPI_ERROR == STALE,
              "all: MPI_ERROR[%d] %d", i, sts[i].MPI_ERROR);

    int outcount = -1, idx[2 * N];
    for (int i = 0; i < 2 * N; i++)
        sts[i].MPI_ERROR = STALE;
    CHECK_RC(MPI_Request_get_status_some(2 * N, rq, &outcount, idx, sts), "get_status_some");
    CHECK(outcount == 2 * N, "some: outcount %d", outcount);
    for (int k = 0; k < outcount && k < 2 * N; k++)
        CHECK(sts[k].MPI_ERROR == MPI_SUCCESS || sts[k].MPI_ERROR == STALE,
              "some: MPI_ERROR[%d] %d", k, sts[k].MPI_ERROR);

    CHECK_RC(MPI_Waitall(2 * N, rq, MPI_STATUSES_IGNORE), "Waitall");
    /* Only null requests: flag set, index MPI_UNDEFINED, the empty status, MPI_ERROR too. */
    st.MPI_ERROR = STALE;
    st.MPI_SOURCE = st.MPI_TAG = 12345;
    CHECK_RC(MPI_Request_get_status_any(2 * N, rq, &index, &flag, &st), "get_status_any(null)");
    CHECK(flag && index == MPI_UNDEFINED, "any(null): flag %d index %d", flag, index);
    CHECK(st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG,
          "any(null): source %d tag %d", st.MPI_SOURCE, st.MPI_TAG);
    CHECK(st.MPI_ERROR == MPI_SUCCESS, "any(null): MPI_ERROR %d", st.MPI_ERROR);
    for (int i = 0; i < N; i++)
        CHECK(in[i] == 100 + i, "in[%d] = %d", i, in[i]);
#else
    MTest_Skip("MPI_Request_get_status_any and friends are MPI-4.1");
#endif
    return MTest_Finalize(errs);
}
