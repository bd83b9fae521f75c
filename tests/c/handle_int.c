/* handle_int: the MPI-5.0 ABI's integer conversions (MPI_<Handle>_toint / _fromint) round trip
 * predefined handles and user objects: a duplicated communicator, a committed derived
 * datatype, a user op, a group, an info object, an error handler, a pending request, a window and a file; a
 * freed object converts back to its null handle. hympi only (MPI-5.0 ABI functions; other
 * libraries skip). */
#include "mtest.h"
#include <stdio.h>
#include <unistd.h>

#ifdef HYMPI
static void noop_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)in, (void)inout, (void)len, (void)dt;
}

static void noop_handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm, (void)code;
}
#endif

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
#ifndef HYMPI
    MTest_Skip("MPI_<Handle>_toint/_fromint are MPI-5.0 ABI functions");
    return MTest_Finalize(0);
#else
    MPI_Comm dup;
    MPI_Datatype vec;
    MPI_Op op;
    MPI_Group g;
    MPI_Info info;
    MPI_Errhandler eh;
    MPI_Request req;
    int buf = 0;

    CHECK(MPI_Comm_fromint(MPI_Comm_toint(MPI_COMM_WORLD)) == MPI_COMM_WORLD, "world");
    CHECK(MPI_Type_fromint(MPI_Type_toint(MPI_DOUBLE)) == MPI_DOUBLE, "MPI_DOUBLE");
    CHECK(MPI_Op_fromint(MPI_Op_toint(MPI_SUM)) == MPI_SUM, "MPI_SUM");

    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Type_vector(3, 2, 4, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    MPI_Op_create(noop_op, 1, &op);
    MPI_Comm_group(MPI_COMM_WORLD, &g);
    MPI_Info_create(&info);
    MPI_Comm_create_errhandler(noop_handler, &eh);
    MPI_Irecv(&buf, 1, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_SELF, &req);

    CHECK(MPI_Comm_fromint(MPI_Comm_toint(dup)) == dup, "user communicator");
    CHECK(MPI_Type_fromint(MPI_Type_toint(vec)) == vec, "user datatype");
    CHECK(MPI_Op_fromint(MPI_Op_toint(op)) == op, "user op");
    CHECK(MPI_Group_fromint(MPI_Group_toint(g)) == g, "group");
    CHECK(MPI_Info_fromint(MPI_Info_toint(info)) == info, "info");
    CHECK(MPI_Errhandler_fromint(MPI_Errhandler_toint(eh)) == eh, "error handler");
    CHECK(MPI_Request_fromint(MPI_Request_toint(req)) == req, "request");

    /* Windows and files convert too, and a closed one converts back to the null handle. */
    MPI_Win win;
    int wbuf[4];
    MPI_Win_create(wbuf, sizeof wbuf, sizeof(int), MPI_INFO_NULL, MPI_COMM_SELF, &win);
    CHECK(MPI_Win_fromint(MPI_Win_toint(win)) == win, "window");
    int iwin = MPI_Win_toint(win);
    MPI_Win_free(&win);
    CHECK(MPI_Win_fromint(iwin) == MPI_WIN_NULL, "freed window");
    char path[64];
    snprintf(path, sizeof path, "/tmp/hympi-handle-int-%d", (int)getpid());
    MPI_File fh;
    if (MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                      MPI_INFO_NULL, &fh) == MPI_SUCCESS) {
        CHECK(MPI_File_fromint(MPI_File_toint(fh)) == fh, "file");
        int ifh = MPI_File_toint(fh);
        MPI_File_close(&fh);
        CHECK(MPI_File_fromint(ifh) == MPI_FILE_NULL, "closed file");
    } else {
        CHECK(0, "MPI_File_open(%s) failed", path);
    }

    /* The integer form of a freed object converts to the null handle. */
    int ivec = MPI_Type_toint(vec), iop = MPI_Op_toint(op), icomm = MPI_Comm_toint(dup);
    MPI_Type_free(&vec);
    MPI_Op_free(&op);
    MPI_Comm_free(&dup);
    CHECK(MPI_Type_fromint(ivec) == MPI_DATATYPE_NULL, "freed datatype");
    CHECK(MPI_Op_fromint(iop) == MPI_OP_NULL, "freed op");
    CHECK(MPI_Comm_fromint(icomm) == MPI_COMM_NULL, "freed communicator");

    int v = 5;
    MPI_Send(&v, 1, MPI_INT, 0, 7, MPI_COMM_SELF);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Group_free(&g);
    MPI_Info_free(&info);
    MPI_Errhandler_free(&eh);
    return MTest_Finalize(0);
#endif
}
