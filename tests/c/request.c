/* request: MPI_Request_free and MPI_Request_get_status.
 *
 * MPI_Request_free of an active MPI_Isend (small and 1 MiB) and of an active started
 * persistent send sets the handle to MPI_REQUEST_NULL and the message is still delivered
 * (the receiver's reply tells the sender its buffer is free again); freeing inactive
 * persistent requests.  MPI_Request_get_status gives flag false while a receive is unmatched
 * (the sender waits for a handshake) without freeing the request, flag true with the full
 * status once complete (repeatedly), and the later MPI_Wait gives the same status and frees
 * the request; on MPI_REQUEST_NULL it gives flag true and an empty status. */
#include "mtest.h"

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    int partner = MTest_Partner();
    int rc, flag, count, dummy = 0;
    MPI_Status st;
    MPI_Request req;

    if (partner >= 0) {
        int a = mtest_rank < partner;
        static const int sizes[] = {16, 1 << 20};
        for (int i = 0; i < 2; i++) {
            int n = sizes[i];
            unsigned char *buf = malloc(n);
            for (int persistent = 0; persistent < 2; persistent++) {
                int tag = 20 + i * 2 + persistent;
                if (a) {
                    MTest_Fill_bytes(buf, n, tag);
                    if (persistent) {
                        MPI_Send_init(buf, n, MPI_BYTE, partner, tag, MPI_COMM_WORLD, &req);
                        MPI_Start(&req);
                    } else {
                        MPI_Isend(buf, n, MPI_BYTE, partner, tag, MPI_COMM_WORLD, &req);
                    }
                    rc = MPI_Request_free(&req);
                    CHECK_RC(rc, "MPI_Request_free of an active send");
                    CHECK(req == MPI_REQUEST_NULL, "MPI_Request_free did not set MPI_REQUEST_NULL");
                    /* The receiver's reply: the message arrived, the buffer may be reused. */
                    MPI_Recv(&dummy, 0, MPI_INT, partner, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                } else {
                    memset(buf, 0, n);
                    rc = MPI_Recv(buf, n, MPI_BYTE, partner, tag, MPI_COMM_WORLD, &st);
                    CHECK_RC(rc, "MPI_Recv of a message whose send request was freed");
                    MPI_Get_count(&st, MPI_BYTE, &count);
                    CHECK(count == n && MTest_Verify_bytes(buf, n, tag) < 0, "freed %s send of %d B: count %d or data wrong",
                          persistent ? "persistent" : "nonblocking", n, count);
                    MPI_Send(&dummy, 0, MPI_INT, partner, 2, MPI_COMM_WORLD);
                }
            }
            free(buf);
        }

        /* MPI_Request_get_status on an unmatched, then matched receive. */
        if (a) {
            double v[3] = {1.5, 2.5, 3.5};
            MPI_Recv(&dummy, 0, MPI_INT, partner, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(v, 3, MPI_DOUBLE, partner, 30, MPI_COMM_WORLD);
        } else {
            double v[3] = {0, 0, 0};
            MPI_Irecv(v, 3, MPI_DOUBLE, partner, 30, MPI_COMM_WORLD, &req);
            MPI_Request keep = req;
            for (int k = 0; k < 100; k++) {
                flag = -1;
                MTest_Poison_status(&st);
                rc = MPI_Request_get_status(req, &flag, &st);
                CHECK_RC(rc, "MPI_Request_get_status");
                if (!CHECK(flag == 0, "MPI_Request_get_status: an unmatched receive is complete"))
                    break;
            }
            CHECK(req == keep, "MPI_Request_get_status changed the handle");
            MPI_Send(&dummy, 0, MPI_INT, partner, 3, MPI_COMM_WORLD);
            flag = 0;
            double t0 = MPI_Wtime();
            while (!flag && MPI_Wtime() - t0 < 30)
                MPI_Request_get_status(req, &flag, &st);
            if (CHECK(flag, "MPI_Request_get_status never saw the receive complete")) {
                MPI_Get_count(&st, MPI_DOUBLE, &count);
                CHECK(st.MPI_SOURCE == partner && st.MPI_TAG == 30 && count == 3, "get_status: source %d tag %d count %d",
                      st.MPI_SOURCE, st.MPI_TAG, count);
                CHECK(req != MPI_REQUEST_NULL, "MPI_Request_get_status freed the request");
                CHECK(v[0] == 1.5 && v[2] == 3.5, "data not there when get_status said complete");
                MPI_Status st2;
                flag = 0;
                MPI_Request_get_status(req, &flag, &st2);
                CHECK(flag && st2.MPI_SOURCE == partner && st2.MPI_TAG == 30, "second get_status differs");
                MTest_Poison_status(&st2);
                rc = MPI_Wait(&req, &st2);
                MPI_Get_count(&st2, MPI_DOUBLE, &count);
                CHECK(rc == MPI_SUCCESS && st2.MPI_SOURCE == partner && st2.MPI_TAG == 30 && count == 3, "MPI_Wait after get_status: source %d tag %d count %d",
                      st2.MPI_SOURCE, st2.MPI_TAG, count);
                CHECK(req == MPI_REQUEST_NULL, "MPI_Wait did not free the request");
            }
        }
    }

    /* MPI_REQUEST_NULL. */
    flag = 0;
    MTest_Poison_status(&st);
    rc = MPI_Request_get_status(MPI_REQUEST_NULL, &flag, &st);
    CHECK(rc == MPI_SUCCESS && flag, "MPI_Request_get_status(MPI_REQUEST_NULL): rc %d flag %d", rc, flag);
    CHECK(MTest_Is_empty_status(&st), "MPI_Request_get_status(MPI_REQUEST_NULL): status not empty (source %d tag %d)", st.MPI_SOURCE, st.MPI_TAG);

    /* Inactive persistent requests, freed without ever starting; a self Isend freed while
     * active then received. */
    {
        int x = 9, y = 0;
        MPI_Request q[2];
        MPI_Send_init(&x, 1, MPI_INT, 0, 5, MPI_COMM_SELF, &q[0]);
        MPI_Recv_init(&y, 1, MPI_INT, 0, 5, MPI_COMM_SELF, &q[1]);
        for (int k = 0; k < 2; k++) {
            rc = MPI_Request_free(&q[k]);
            CHECK(rc == MPI_SUCCESS && q[k] == MPI_REQUEST_NULL, "MPI_Request_free of a never-started request");
        }
        MPI_Isend(&x, 1, MPI_INT, 0, 6, MPI_COMM_SELF, &req);
        rc = MPI_Request_free(&req);
        CHECK(rc == MPI_SUCCESS && req == MPI_REQUEST_NULL, "MPI_Request_free of an active self send");
        rc = MPI_Recv(&y, 1, MPI_INT, 0, 6, MPI_COMM_SELF, MPI_STATUS_IGNORE);
        CHECK(rc == MPI_SUCCESS && y == 9, "freed self send delivered %d", y);
    }
    return MTest_Finalize(0);
}
