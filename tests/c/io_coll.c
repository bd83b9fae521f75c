/* io_coll: collective I/O on a 3-D block decomposition, split collectives, nonblocking I/O.
 *
 * The global array is G^3 doubles (G = 24) with value v(i,j,k) = variant*1e6 + i*G*G + j*G
 * + k; MPI_Dims_create splits the n ranks into px*py*pz blocks (uneven when n does not
 * divide 24, e.g. 5,5,5,5,4 at 5 ranks).
 *  - Each rank sets a subarray view (MPI_Type_create_subarray, MPI_ORDER_C) of its block and
 *    MPI_File_write_all's it from a local array with a one-cell halo (memory type: a
 *    subarray of the padded array; MPI_Get_count 1, MPI_Get_elements = block size).  Then
 *    every rank reads slabs along the last axis (a different decomposition) with
 *    MPI_File_read_all and checks every value; rank 0 also checks the whole file view-less.
 *  - Split collectives: MPI_File_write_all_begin/end through slabs along the middle axis,
 *    read back by blocks with MPI_File_read_all_begin/end; MPI_File_write_at_all_begin/end
 *    and MPI_File_read_at_all_begin/end of 1000-double chunks (a rank reads its right
 *    neighbour's chunk).
 *  - Nonblocking: MPI_File_iwrite_at (three chunks, MPI_Waitall) and MPI_File_iread_at (the
 *    neighbour's chunks, MPI_Test loops); MPI_File_iwrite (two requests through the
 *    individual pointer, which moves at the start: the second lands after the first) and
 *    MPI_File_iread (MPI_Test loop); MPI_File_iwrite_all by blocks (MPI_Test loop) and
 *    MPI_File_iread_all by slabs (MPI_Wait); two MPI_File_iwrite_at_all outstanding at once
 *    (MPI_Waitall) and MPI_File_iread_at_all (MPI_Test loop).  MPI_Get_count on every
 *    status; the files are checked byte-exact by rank 0 against the model. */
#include "mtest_io.h"

static int me, np;

#define G 24
#define CH 1000 /* doubles per chunk */

static int dims[3], coords[3];

static double v(int variant, int i, int j, int k)
{
    return variant * 1e6 + (double)i * G * G + (double)j * G + k;
}

/* Part c of G split in p (uneven: the first G%p parts one larger). */
static void part(int p, int c, int *start, int *size)
{
    int b = G / p, r = G % p;
    *start = c * b + (c < r ? c : r);
    *size = b + (c < r ? 1 : 0);
}

typedef struct {
    int start[3], size[3];
    MPI_Datatype ftype; /* subarray of the global array */
} Piece;

static void make_piece(Piece *pc, const int start[3], const int size[3])
{
    int gs[3] = {G, G, G};
    memcpy(pc->start, start, sizeof pc->start);
    memcpy(pc->size, size, sizeof pc->size);
    MPI_Type_create_subarray(3, gs, pc->size, pc->start, MPI_ORDER_C, MPI_DOUBLE, &pc->ftype);
    MPI_Type_commit(&pc->ftype);
}

static int piece_n(const Piece *pc)
{
    return pc->size[0] * pc->size[1] * pc->size[2];
}

/* This rank's block of the 3-D decomposition. */
static void block_piece(Piece *pc)
{
    int st[3], sz[3];
    for (int d = 0; d < 3; d++)
        part(dims[d], coords[d], &st[d], &sz[d]);
    make_piece(pc, st, sz);
}

/* This rank's slab along axis a. */
static void slab_piece(Piece *pc, int a)
{
    int st[3] = {0, 0, 0}, sz[3] = {G, G, G};
    part(np, me, &st[a], &sz[a]);
    make_piece(pc, st, sz);
}

static void fill(const Piece *pc, int variant, double *buf)
{
    int n = 0;
    for (int i = 0; i < pc->size[0]; i++)
        for (int j = 0; j < pc->size[1]; j++)
            for (int k = 0; k < pc->size[2]; k++)
                buf[n++] = v(variant, pc->start[0] + i, pc->start[1] + j, pc->start[2] + k);
}

static void verify(const Piece *pc, int variant, const double *buf, const char *what)
{
    int n = 0, bad = 0;
    for (int i = 0; i < pc->size[0]; i++)
        for (int j = 0; j < pc->size[1]; j++)
            for (int k = 0; k < pc->size[2]; k++, n++) {
                int gi = pc->start[0] + i, gj = pc->start[1] + j, gk = pc->start[2] + k;
                double want = v(variant, gi, gj, gk);
                if (buf[n] != want && bad++ == 0)
                    CHECK(0, "%s: (%d,%d,%d) is %.1f, expected %.1f", what, gi, gj, gk, buf[n],
                          want);
            }
    CHECK(bad == 0, "%s: %d of %d values wrong", what, bad, n);
}

/* Hints from the command line (`key=value` arguments), to run the same checks with other
 * collective-buffering settings (small cb_buffer_size: many two-phase rounds; cb_nodes). */
static MPI_Info hints = MPI_INFO_NULL;

static void open_ok(const char *path, MPI_File *fh)
{
    *fh = MPI_FILE_NULL;
    int rc = MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_EXCL,
                           hints, fh);
    CHECK(rc == MPI_SUCCESS, "MPI_File_open(%s) returned %s", path, MTest_Describe(rc));
}

static void set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype ft)
{
    int rc = MPI_File_set_view(fh, disp, MPI_DOUBLE, ft, "native", MPI_INFO_NULL);
    CHECK_RC(rc, "MPI_File_set_view");
}

static void sync_barrier_sync(MPI_File fh)
{
    CHECK_RC(MPI_File_sync(fh), "MPI_File_sync");
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(MPI_File_sync(fh), "MPI_File_sync");
}

/* Rank 0: the file is the whole array of the variant. */
static void file_is_cube(const char *path, int variant, const char *what)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) {
        MPI_Offset n;
        double *got = (double *)MTest_Io_slurp(path, &n);
        Piece all;
        int st[3] = {0, 0, 0}, sz[3] = {G, G, G};
        make_piece(&all, st, sz);
        if (got && CHECK(n == (MPI_Offset)G * G * G * (MPI_Offset)sizeof(double),
                         "%s: file has %lld bytes, expected %lld", what, (long long)n,
                         (long long)G * G * G * (long long)sizeof(double)))
            verify(&all, variant, got, what);
        MPI_Type_free(&all.ftype);
        free(got);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Rank 0: the file is chunk q of every rank, value chunk_val(variant, q, i). */
static double chunk_val(int variant, int q, int i)
{
    return variant * 1e6 + q * 10000 + i + 0.5;
}
static void file_is_chunks(const char *path, int variant, int nchunks, const char *what)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) {
        MPI_Offset n;
        double *got = (double *)MTest_Io_slurp(path, &n);
        size_t total = (size_t)nchunks * CH;
        double *model = malloc(total * sizeof(double));
        for (int q = 0; q < nchunks; q++)
            for (int i = 0; i < CH; i++)
                model[(size_t)q * CH + i] = chunk_val(variant, q, i);
        if (got && CHECK(n == (MPI_Offset)(total * sizeof(double)),
                         "%s: file has %lld bytes, expected %lld", what, (long long)n,
                         (long long)(total * sizeof(double))))
            IO_SAME(got, model, total * sizeof(double), what);
        free(model);
        free(got);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* MPI_Test until done (bounded: 30 s, then MPI_Wait and a failure). */
static void test_loop(MPI_Request *req, MPI_Status *st, const char *what)
{
    int flag = 0, tests = 0;
    double t0 = MPI_Wtime();
    while (!flag) {
        int rc = MPI_Test(req, &flag, st);
        if (!CHECK(rc == MPI_SUCCESS, "%s: MPI_Test returned %s", what, MTest_Describe(rc)))
            return;
        tests++;
        if (!flag && MPI_Wtime() - t0 > 30) {
            CHECK(0, "%s: not complete after %d MPI_Test calls in 30 s", what, tests);
            MPI_Wait(req, st);
            return;
        }
    }
    CHECK(*req == MPI_REQUEST_NULL, "%s: MPI_Test did not free the request", what);
}

static void t_cube(void)
{
    char p[MTEST_IO_PATH_MAX];
    MTest_Io_path(p, "cube");
    MPI_File fh;
    open_ok(p, &fh);
    if (fh == MPI_FILE_NULL)
        return;
    Piece blk, slab;
    block_piece(&blk);
    slab_piece(&slab, 2);

    /* Local block with a one-cell halo; the memory type picks the interior. */
    int ps[3], pi[3] = {1, 1, 1};
    for (int d = 0; d < 3; d++)
        ps[d] = blk.size[d] + 2;
    MPI_Datatype mt;
    MPI_Type_create_subarray(3, ps, blk.size, pi, MPI_ORDER_C, MPI_DOUBLE, &mt);
    MPI_Type_commit(&mt);
    size_t padded = (size_t)ps[0] * ps[1] * ps[2];
    double *loc = malloc(padded * sizeof(double));
    for (size_t x = 0; x < padded; x++)
        loc[x] = -1.0; /* halo: must not reach the file */
    for (int i = 0; i < blk.size[0]; i++)
        for (int j = 0; j < blk.size[1]; j++)
            for (int k = 0; k < blk.size[2]; k++)
                loc[((size_t)(i + 1) * ps[1] + (j + 1)) * ps[2] + (k + 1)] =
                    v(0, blk.start[0] + i, blk.start[1] + j, blk.start[2] + k);

    set_view(fh, 0, blk.ftype);
    MPI_Status st;
    MTest_Poison_status(&st);
    int rc = MPI_File_write_all(fh, loc, 1, mt, &st);
    CHECK_RC(rc, "MPI_File_write_all (3-D block from a halo array)");
    CHECK_COUNT(&st, mt, 1, "write_all of one halo-array item");
    int e = -1;
    MPI_Get_elements(&st, mt, &e);
    CHECK(e == piece_n(&blk), "write_all: MPI_Get_elements %d, expected %d", e, piece_n(&blk));
    sync_barrier_sync(fh);

    /* Another decomposition: slabs along the last axis. */
    set_view(fh, 0, slab.ftype);
    double *buf = malloc((size_t)piece_n(&slab) * sizeof(double));
    for (int x = 0; x < piece_n(&slab); x++)
        buf[x] = -2.0;
    MTest_Poison_status(&st);
    rc = MPI_File_read_all(fh, buf, piece_n(&slab), MPI_DOUBLE, &st);
    CHECK_RC(rc, "MPI_File_read_all (slabs along the last axis)");
    CHECK_COUNT(&st, MPI_DOUBLE, piece_n(&slab), "read_all of a slab");
    verify(&slab, 0, buf, "slab read back by read_all");
    rc = MPI_File_close(&fh);
    CHECK_RC(rc, "MPI_File_close");
    file_is_cube(p, 0, "cube written by blocks");
    free(buf);
    free(loc);
    MPI_Type_free(&mt);
    MPI_Type_free(&blk.ftype);
    MPI_Type_free(&slab.ftype);
}

static void t_split(void)
{
    char p[MTEST_IO_PATH_MAX];
    MTest_Io_path(p, "split");
    MPI_File fh;
    open_ok(p, &fh);
    if (fh == MPI_FILE_NULL)
        return;
    Piece blk, slab;
    block_piece(&blk);
    slab_piece(&slab, 1);
    double *w = malloc((size_t)piece_n(&slab) * sizeof(double));
    double *r = malloc((size_t)piece_n(&blk) * sizeof(double));
    fill(&slab, 3, w);
    set_view(fh, 0, slab.ftype);
    MPI_Status st;
    int rc = MPI_File_write_all_begin(fh, w, piece_n(&slab), MPI_DOUBLE);
    CHECK_RC(rc, "MPI_File_write_all_begin");
    MTest_Poison_status(&st);
    rc = MPI_File_write_all_end(fh, w, &st);
    CHECK_RC(rc, "MPI_File_write_all_end");
    CHECK_COUNT(&st, MPI_DOUBLE, piece_n(&slab), "write_all_end");
    sync_barrier_sync(fh);
    set_view(fh, 0, blk.ftype);
    for (int x = 0; x < piece_n(&blk); x++)
        r[x] = -2.0;
    rc = MPI_File_read_all_begin(fh, r, piece_n(&blk), MPI_DOUBLE);
    CHECK_RC(rc, "MPI_File_read_all_begin");
    MTest_Poison_status(&st);
    rc = MPI_File_read_all_end(fh, r, &st);
    CHECK_RC(rc, "MPI_File_read_all_end");
    CHECK_COUNT(&st, MPI_DOUBLE, piece_n(&blk), "read_all_end");
    verify(&blk, 3, r, "block read by read_all_begin/end");
    rc = MPI_File_close(&fh);
    CHECK_RC(rc, "MPI_File_close");
    file_is_cube(p, 3, "cube written by write_all_begin/end");
    free(w);
    free(r);
    MPI_Type_free(&blk.ftype);
    MPI_Type_free(&slab.ftype);

    /* Explicit offsets. */
    MTest_Io_path(p, "split_at");
    open_ok(p, &fh);
    if (fh == MPI_FILE_NULL)
        return;
    set_view(fh, 0, MPI_DOUBLE);
    double c[CH], back[CH], want[CH];
    int nb = (me + 1) % np;
    for (int i = 0; i < CH; i++) {
        c[i] = chunk_val(4, me, i);
        want[i] = chunk_val(4, nb, i);
        back[i] = -2.0;
    }
    rc = MPI_File_write_at_all_begin(fh, (MPI_Offset)me * CH, c, CH, MPI_DOUBLE);
    CHECK_RC(rc, "MPI_File_write_at_all_begin");
    MTest_Poison_status(&st);
    rc = MPI_File_write_at_all_end(fh, c, &st);
    CHECK_RC(rc, "MPI_File_write_at_all_end");
    CHECK_COUNT(&st, MPI_DOUBLE, CH, "write_at_all_end");
    sync_barrier_sync(fh);
    rc = MPI_File_read_at_all_begin(fh, (MPI_Offset)nb * CH, back, CH, MPI_DOUBLE);
    CHECK_RC(rc, "MPI_File_read_at_all_begin");
    MTest_Poison_status(&st);
    rc = MPI_File_read_at_all_end(fh, back, &st);
    CHECK_RC(rc, "MPI_File_read_at_all_end");
    CHECK_COUNT(&st, MPI_DOUBLE, CH, "read_at_all_end");
    IO_SAME(back, want, sizeof back, "neighbour's chunk by read_at_all_begin/end");
    rc = MPI_File_close(&fh);
    CHECK_RC(rc, "MPI_File_close");
    file_is_chunks(p, 4, np, "file written by write_at_all_begin/end");
}

static void t_nonblocking(void)
{
    char p[MTEST_IO_PATH_MAX];
    MPI_File fh;
    MPI_Status sts[3];
    MPI_Request req[3];
    int nb = (me + 1) % np, rc;

    /* iwrite_at: three chunks (rank r owns chunks 3r..3r+2); iread_at the neighbour's. */
    MTest_Io_path(p, "nb_at");
    open_ok(p, &fh);
    if (fh == MPI_FILE_NULL)
        return;
    set_view(fh, 0, MPI_DOUBLE);
    double *w = malloc(3 * CH * sizeof(double)), *r = malloc(3 * CH * sizeof(double));
    for (int c = 0; c < 3; c++)
        for (int i = 0; i < CH; i++)
            w[c * CH + i] = chunk_val(5, 3 * me + c, i);
    for (int c = 0; c < 3; c++) {
        rc = MPI_File_iwrite_at(fh, (MPI_Offset)(3 * me + c) * CH, w + c * CH, CH, MPI_DOUBLE,
                                &req[c]);
        CHECK_RC(rc, "MPI_File_iwrite_at");
    }
    for (int c = 0; c < 3; c++)
        MTest_Poison_status(&sts[c]);
    rc = MPI_Waitall(3, req, sts);
    CHECK_RC(rc, "MPI_Waitall (iwrite_at)");
    for (int c = 0; c < 3; c++)
        CHECK_COUNT(&sts[c], MPI_DOUBLE, CH, "iwrite_at chunk");
    sync_barrier_sync(fh);
    for (int x = 0; x < 3 * CH; x++)
        r[x] = -2.0;
    for (int c = 0; c < 3; c++) {
        rc = MPI_File_iread_at(fh, (MPI_Offset)(3 * nb + c) * CH, r + c * CH, CH, MPI_DOUBLE,
                               &req[c]);
        CHECK_RC(rc, "MPI_File_iread_at");
    }
    for (int c = 2; c >= 0; c--) {
        MTest_Poison_status(&sts[c]);
        test_loop(&req[c], &sts[c], "iread_at");
        CHECK_COUNT(&sts[c], MPI_DOUBLE, CH, "iread_at chunk");
        for (int i = 0; i < CH; i++)
            if (!CHECK(r[c * CH + i] == chunk_val(5, 3 * nb + c, i),
                       "iread_at: chunk %d [%d] = %.1f, expected %.1f", 3 * nb + c, i,
                       r[c * CH + i], chunk_val(5, 3 * nb + c, i)))
                break;
    }
    rc = MPI_File_close(&fh);
    CHECK_RC(rc, "MPI_File_close");
    file_is_chunks(p, 5, 3 * np, "file written by iwrite_at");

    /* iwrite / iread through the individual file pointer (rank r owns chunks 2r, 2r+1). */
    MTest_Io_path(p, "nb_fp");
    open_ok(p, &fh);
    if (fh == MPI_FILE_NULL)
        return;
    set_view(fh, (MPI_Offset)2 * me * CH * sizeof(double), MPI_DOUBLE);
    for (int c = 0; c < 2; c++)
        for (int i = 0; i < CH; i++)
            w[c * CH + i] = chunk_val(6, 2 * me + c, i);
    rc = MPI_File_iwrite(fh, w, CH, MPI_DOUBLE, &req[0]);
    CHECK_RC(rc, "MPI_File_iwrite");
    rc = MPI_File_iwrite(fh, w + CH, CH, MPI_DOUBLE, &req[1]);
    CHECK_RC(rc, "MPI_File_iwrite");
    MPI_Offset pos = -1;
    MPI_File_get_position(fh, &pos);
    CHECK(pos == 2 * CH, "individual pointer after starting two iwrites: %lld, expected %d",
          (long long)pos, 2 * CH);
    for (int c = 0; c < 2; c++) {
        MTest_Poison_status(&sts[c]);
        rc = MPI_Wait(&req[c], &sts[c]);
        CHECK_RC(rc, "MPI_Wait (iwrite)");
        CHECK_COUNT(&sts[c], MPI_DOUBLE, CH, "iwrite");
    }
    rc = MPI_File_seek(fh, 0, MPI_SEEK_SET);
    for (int x = 0; x < 2 * CH; x++)
        r[x] = -2.0;
    rc = MPI_File_iread(fh, r, 2 * CH, MPI_DOUBLE, &req[0]);
    CHECK_RC(rc, "MPI_File_iread");
    MTest_Poison_status(&sts[0]);
    test_loop(&req[0], &sts[0], "iread");
    CHECK_COUNT(&sts[0], MPI_DOUBLE, 2 * CH, "iread");
    IO_SAME(r, w, 2 * CH * sizeof(double), "own chunks by iread");
    rc = MPI_File_close(&fh);
    CHECK_RC(rc, "MPI_File_close");
    file_is_chunks(p, 6, 2 * np, "file written by two iwrites each");

    /* iwrite_all by blocks, iread_all by slabs along the first axis. */
    MTest_Io_path(p, "nb_coll");
    open_ok(p, &fh);
    if (fh == MPI_FILE_NULL)
        return;
    Piece blk, slab;
    block_piece(&blk);
    slab_piece(&slab, 0);
    double *bw = malloc((size_t)piece_n(&blk) * sizeof(double));
    double *sr = malloc((size_t)piece_n(&slab) * sizeof(double));
    fill(&blk, 7, bw);
    set_view(fh, 0, blk.ftype);
    rc = MPI_File_iwrite_all(fh, bw, piece_n(&blk), MPI_DOUBLE, &req[0]);
    CHECK_RC(rc, "MPI_File_iwrite_all");
    MTest_Poison_status(&sts[0]);
    test_loop(&req[0], &sts[0], "iwrite_all");
    CHECK_COUNT(&sts[0], MPI_DOUBLE, piece_n(&blk), "iwrite_all");
    sync_barrier_sync(fh);
    set_view(fh, 0, slab.ftype);
    for (int x = 0; x < piece_n(&slab); x++)
        sr[x] = -2.0;
    rc = MPI_File_iread_all(fh, sr, piece_n(&slab), MPI_DOUBLE, &req[0]);
    CHECK_RC(rc, "MPI_File_iread_all");
    MTest_Poison_status(&sts[0]);
    rc = MPI_Wait(&req[0], &sts[0]);
    CHECK_RC(rc, "MPI_Wait (iread_all)");
    CHECK_COUNT(&sts[0], MPI_DOUBLE, piece_n(&slab), "iread_all");
    verify(&slab, 7, sr, "slab read by iread_all");
    rc = MPI_File_close(&fh);
    CHECK_RC(rc, "MPI_File_close");
    file_is_cube(p, 7, "cube written by iwrite_all");
    free(bw);
    free(sr);
    MPI_Type_free(&blk.ftype);
    MPI_Type_free(&slab.ftype);

    /* Two iwrite_at_all outstanding (chunks r and n + r), iread_at_all of the neighbour's. */
    MTest_Io_path(p, "nb_at_all");
    open_ok(p, &fh);
    if (fh == MPI_FILE_NULL)
        return;
    set_view(fh, 0, MPI_DOUBLE);
    for (int i = 0; i < CH; i++) {
        w[i] = chunk_val(8, me, i);
        w[CH + i] = chunk_val(8, np + me, i);
    }
    rc = MPI_File_iwrite_at_all(fh, (MPI_Offset)me * CH, w, CH, MPI_DOUBLE, &req[0]);
    CHECK_RC(rc, "MPI_File_iwrite_at_all (first)");
    rc = MPI_File_iwrite_at_all(fh, (MPI_Offset)(np + me) * CH, w + CH, CH, MPI_DOUBLE, &req[1]);
    CHECK_RC(rc, "MPI_File_iwrite_at_all (second)");
    MTest_Poison_status(&sts[0]);
    MTest_Poison_status(&sts[1]);
    rc = MPI_Waitall(2, req, sts);
    CHECK_RC(rc, "MPI_Waitall (iwrite_at_all)");
    CHECK_COUNT(&sts[0], MPI_DOUBLE, CH, "first iwrite_at_all");
    CHECK_COUNT(&sts[1], MPI_DOUBLE, CH, "second iwrite_at_all");
    sync_barrier_sync(fh);
    for (int x = 0; x < CH; x++)
        r[x] = -2.0;
    rc = MPI_File_iread_at_all(fh, (MPI_Offset)(np + nb) * CH, r, CH, MPI_DOUBLE, &req[0]);
    CHECK_RC(rc, "MPI_File_iread_at_all");
    MTest_Poison_status(&sts[0]);
    test_loop(&req[0], &sts[0], "iread_at_all");
    CHECK_COUNT(&sts[0], MPI_DOUBLE, CH, "iread_at_all");
    for (int i = 0; i < CH; i++)
        if (!CHECK(r[i] == chunk_val(8, np + nb, i), "iread_at_all [%d] = %.1f, expected %.1f",
                   i, r[i], chunk_val(8, np + nb, i)))
            break;
    rc = MPI_File_close(&fh);
    CHECK_RC(rc, "MPI_File_close");
    file_is_chunks(p, 8, 2 * np, "file written by two outstanding iwrite_at_all");
    free(w);
    free(r);
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    me = mtest_rank;
    np = mtest_size;
    MPI_Dims_create(np, 3, dims);
    coords[0] = me / (dims[1] * dims[2]);
    coords[1] = (me / dims[2]) % dims[1];
    coords[2] = me % dims[2];
    for (int a = 1; a < argc; a++) {
        char key[64], *eq = strchr(argv[a], '=');
        if (!eq || eq - argv[a] >= (long)sizeof key)
            continue;
        memcpy(key, argv[a], (size_t)(eq - argv[a]));
        key[eq - argv[a]] = 0;
        if (hints == MPI_INFO_NULL)
            MPI_Info_create(&hints);
        MPI_Info_set(hints, key, eq + 1);
    }
    MTest_Io_dir("coll");
    t_cube();
    t_split();
    t_nonblocking();
    MTest_Io_cleanup();
    if (hints != MPI_INFO_NULL)
        MPI_Info_free(&hints);
    return MTest_Finalize(0);
}
