/* alloc_mem: MPI_Alloc_mem / MPI_Free_mem for sizes 0 B .. 8 MiB.  The memory is writable,
 * distinct allocations do not overlap, and it works as a send and receive buffer.  A size of
 * 0 is valid (the standard does not say what the pointer is; it must be freeable).  A
 * negative size is an error (MPI_ERR_ARG with MPICH; Open MPI and MPICH both return an
 * error) -- checked only to be an error, since the class is not fixed by the standard. */
#include "mtest.h"

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    MTest_Errors_return_all();
    static const MPI_Aint sizes[] = {1, 7, 8, 64, 4096, 65536, 1 << 20, 8 << 20};
    enum { NS = sizeof sizes / sizeof sizes[0] };
    void *p[NS];
    int rc;
    for (int i = 0; i < NS; i++) {
        p[i] = NULL;
        rc = MPI_Alloc_mem(sizes[i], MPI_INFO_NULL, &p[i]);
        if (CHECK_RC(rc, "MPI_Alloc_mem") && CHECK(p[i] != NULL, "MPI_Alloc_mem(%ld) gave NULL", (long)sizes[i]))
            MTest_Fill_bytes(p[i], sizes[i], 1000 + i);
    }
    for (int i = 0; i < NS; i++)
        if (p[i])
            CHECK(MTest_Verify_bytes(p[i], sizes[i], 1000 + i) < 0, "allocation %d (%ld B) was overwritten", i, (long)sizes[i]);

    /* Alloc_mem memory as communication buffers: a self exchange of 1 MiB on MPI_COMM_SELF. */
    void *rb = NULL;
    rc = MPI_Alloc_mem(1 << 20, MPI_INFO_NULL, &rb);
    if (CHECK_RC(rc, "MPI_Alloc_mem(1 MiB)") && p[6]) {
        MPI_Request req;
        MPI_Irecv(rb, 1 << 20, MPI_BYTE, 0, 3, MPI_COMM_SELF, &req);
        MPI_Send(p[6], 1 << 20, MPI_BYTE, 0, 3, MPI_COMM_SELF);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        CHECK(MTest_Verify_bytes(rb, 1 << 20, 1006) < 0, "1 MiB self exchange through MPI_Alloc_mem buffers corrupted");
        rc = MPI_Free_mem(rb);
        CHECK_RC(rc, "MPI_Free_mem");
    }
    /* ... and between ranks. */
    int partner = MTest_Partner();
    if (partner >= 0 && p[5]) {
        void *r = NULL;
        MPI_Alloc_mem(65536, MPI_INFO_NULL, &r);
        MPI_Sendrecv(p[5], 65536, MPI_BYTE, partner, 4, r, 65536, MPI_BYTE, partner, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(MTest_Verify_bytes(r, 65536, 1005) < 0, "exchange through MPI_Alloc_mem buffers corrupted");
        MPI_Free_mem(r);
    }
    for (int i = 0; i < NS; i++)
        if (p[i]) {
            rc = MPI_Free_mem(p[i]);
            CHECK_RC(rc, "MPI_Free_mem");
        }

    /* Size 0. */
    void *z = (void *)0x1;
    rc = MPI_Alloc_mem(0, MPI_INFO_NULL, &z);
    CHECK_RC(rc, "MPI_Alloc_mem(0)");
    if (rc == MPI_SUCCESS) {
        rc = MPI_Free_mem(z);
        CHECK_RC(rc, "MPI_Free_mem of a 0-byte allocation");
    }

    /* Many small allocations, freed in another order. */
    void *many[256];
    for (int i = 0; i < 256; i++) {
        many[i] = NULL;
        MPI_Alloc_mem(16 + i, MPI_INFO_NULL, &many[i]);
        if (many[i])
            memset(many[i], i, 16 + i);
    }
    for (int i = 0; i < 256; i++)
        if (many[i])
            CHECK(MTest_Check_const(many[i], 16 + i, (unsigned char)i) < 0, "small allocation %d overwritten", i);
    for (int i = 255; i >= 0; i -= 2)
        if (many[i]) MPI_Free_mem(many[i]);
    for (int i = 0; i < 256; i += 2)
        if (many[i]) MPI_Free_mem(many[i]);

    /* Negative size: an error. */
    void *n = NULL;
    rc = MPI_Alloc_mem(-1, MPI_INFO_NULL, &n);
    CHECK(rc != MPI_SUCCESS, "MPI_Alloc_mem(-1) succeeded");
    if (rc != MPI_SUCCESS)
        CHECK(MTest_Class(rc) > MPI_SUCCESS, "MPI_Alloc_mem(-1) returned an invalid code %d", rc);
    return MTest_Finalize(0);
}
