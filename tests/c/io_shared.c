/* io_shared: the shared file pointer.
 *
 * Records are REC ints {rank, seq, rank*100000 + seq*100 + i, ...}; the view has the record
 * type (MPI_Type_contiguous(REC, MPI_INT)) as etype and filetype, so positions count
 * records.
 *  - A new file's shared pointer is 0.  Each rank writes K records through the shared
 *    pointer, alternately MPI_File_write_shared and MPI_File_iwrite_shared + MPI_Wait
 *    (MPI_Get_count 1 each); afterwards the shared pointer is n*K everywhere, the file holds
 *    n*K*REC ints, every record is intact, each (rank, seq) appears exactly once, and each
 *    rank's records appear in its seq order (its accesses were sequential).
 *  - MPI_File_write_ordered: rank r writes r+1 records, then one more record each: the file
 *    is byte-exact rank 0's, rank 1's, ... records, then the extra ones in rank order; the
 *    shared pointer is at the end after each call.
 *  - MPI_File_seek_shared (collective) to 0 with SEEK_SET: MPI_File_get_position_shared
 *    is 0; MPI_File_read_ordered gives each rank back its own records in order, the pointer
 *    then at the end of that part; SEEK_END 0 / -n and SEEK_CUR +k move as the model says;
 *    read_ordered of one record from there gives each rank its extra record.
 *  - MPI_File_read_shared from 0 by every rank until it returns 0 records: together the
 *    ranks read every record of the file exactly once (gathered to rank 0). */
#include "mtest_io.h"

static int me, np;

#define REC 8
#define K 20

static void make_rec(int *r, int rank, int seq)
{
    r[0] = rank;
    r[1] = seq;
    for (int i = 2; i < REC; i++)
        r[i] = rank * 100000 + seq * 100 + i;
}

/* A record is intact: returns its (rank, seq) in *rank, *seq, or 0 if damaged. */
static int rec_ok(const int *r, int *rank, int *seq)
{
    int t[REC];
    if (r[0] < 0 || r[0] >= np || r[1] < 0)
        return 0;
    make_rec(t, r[0], r[1]);
    if (memcmp(t, r, sizeof t) != 0)
        return 0;
    *rank = r[0];
    *seq = r[1];
    return 1;
}

/* Collective: between two barriers, so that no rank moves the pointer while another
 * looks at it. */
static void shared_pos_is(MPI_File fh, MPI_Offset want, const char *what)
{
    MPI_Offset p = -1;
    MPI_Barrier(MPI_COMM_WORLD);
    int rc = MPI_File_get_position_shared(fh, &p);
    CHECK(rc == MPI_SUCCESS && p == want,
          "%s: MPI_File_get_position_shared %lld, expected %lld", what, (long long)p,
          (long long)want);
    MPI_Barrier(MPI_COMM_WORLD);
}

static MPI_Datatype rt;

static void open_view(const char *path, int amode, MPI_File *fh)
{
    *fh = MPI_FILE_NULL;
    int rc = MPI_File_open(MPI_COMM_WORLD, path, amode, MPI_INFO_NULL, fh);
    CHECK(rc == MPI_SUCCESS, "MPI_File_open(%s) returned %s", path, MTest_Describe(rc));
    if (rc != MPI_SUCCESS)
        return;
    rc = MPI_File_set_view(*fh, 0, rt, rt, "native", MPI_INFO_NULL);
    CHECK_RC(rc, "MPI_File_set_view (record etype)");
}

static void t_write_shared(void)
{
    char p[MTEST_IO_PATH_MAX];
    MTest_Io_path(p, "shared");
    MPI_File fh;
    open_view(p, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_EXCL, &fh);
    if (fh == MPI_FILE_NULL)
        return;
    shared_pos_is(fh, 0, "new file");
    for (int j = 0; j < K; j++) {
        int r[REC];
        MPI_Status st;
        make_rec(r, me, j);
        MTest_Poison_status(&st);
        int rc;
        if (j % 2 == 0) {
            rc = MPI_File_write_shared(fh, r, 1, rt, &st);
            CHECK_RC(rc, "MPI_File_write_shared");
        } else {
            MPI_Request req = MPI_REQUEST_NULL;
            rc = MPI_File_iwrite_shared(fh, r, 1, rt, &req);
            CHECK_RC(rc, "MPI_File_iwrite_shared");
            rc = MPI_Wait(&req, &st);
            CHECK_RC(rc, "MPI_Wait (iwrite_shared)");
        }
        CHECK_COUNT(&st, rt, 1, "write_shared of one record");
    }
    shared_pos_is(fh, (MPI_Offset)np * K, "after n*K shared writes");
    MPI_Offset sz = -1;
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);
    MPI_File_get_size(fh, &sz);
    CHECK(sz == (MPI_Offset)np * K * REC * (MPI_Offset)sizeof(int),
          "file size after shared writes %lld, expected %lld", (long long)sz,
          (long long)np * K * REC * (long long)sizeof(int));
    int rc = MPI_File_close(&fh);
    CHECK_RC(rc, "MPI_File_close");
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) {
        MPI_Offset n;
        int *f = (int *)MTest_Io_slurp(p, &n);
        int nrec = (int)(n / (REC * (MPI_Offset)sizeof(int)));
        CHECK(n == (MPI_Offset)np * K * REC * (MPI_Offset)sizeof(int),
              "shared-pointer file has %lld bytes, expected %lld", (long long)n,
              (long long)np * K * REC * (long long)sizeof(int));
        int *seen = calloc((size_t)np * K, sizeof(int)), *last = malloc(np * sizeof(int));
        for (int q = 0; q < np; q++)
            last[q] = -1;
        int bad = 0, dup = 0, disorder = 0;
        for (int i = 0; f && i < nrec; i++) {
            int q, s;
            if (!rec_ok(f + i * REC, &q, &s) || s >= K) {
                if (bad++ == 0)
                    CHECK(0, "record %d is damaged: {%d, %d, %d, ...}", i, f[i * REC],
                          f[i * REC + 1], f[i * REC + 2]);
                continue;
            }
            if (seen[q * K + s]++ && dup++ == 0)
                CHECK(0, "record (rank %d, seq %d) appears twice (again at %d)", q, s, i);
            if (s < last[q] && disorder++ == 0)
                CHECK(0, "rank %d's record %d comes after its record %d", q, s, last[q]);
            last[q] = s;
        }
        for (int q = 0; q < np; q++)
            for (int s = 0; s < K; s++)
                if (!seen[q * K + s]) {
                    CHECK(0, "record (rank %d, seq %d) missing", q, s);
                    q = np;
                    break;
                }
        free(seen);
        free(last);
        free(f);
    }
}

static void t_ordered(void)
{
    char p[MTEST_IO_PATH_MAX];
    MTest_Io_path(p, "ordered");
    MPI_File fh;
    open_view(p, MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_EXCL, &fh);
    if (fh == MPI_FILE_NULL)
        return;
    const int T = np * (np + 1) / 2; /* records of the first ordered write */
    int *mine = malloc((size_t)(me + 1) * REC * sizeof(int));
    for (int j = 0; j <= me; j++)
        make_rec(mine + j * REC, me, j);
    int extra[REC];
    make_rec(extra, me, 100);
    MPI_Status st;
    MTest_Poison_status(&st);
    int rc = MPI_File_write_ordered(fh, mine, me + 1, rt, &st);
    CHECK_RC(rc, "MPI_File_write_ordered");
    CHECK_COUNT(&st, rt, me + 1, "write_ordered of rank+1 records");
    shared_pos_is(fh, T, "after write_ordered");
    MTest_Poison_status(&st);
    rc = MPI_File_write_ordered(fh, extra, 1, rt, &st);
    CHECK_RC(rc, "MPI_File_write_ordered (one record each)");
    CHECK_COUNT(&st, rt, 1, "write_ordered of one record");
    shared_pos_is(fh, T + np, "after the second write_ordered");
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_sync(fh);

    /* The model: rank order, then the extra records in rank order. */
    int *model = malloc((size_t)(T + np) * REC * sizeof(int));
    int at = 0;
    for (int q = 0; q < np; q++)
        for (int j = 0; j <= q; j++)
            make_rec(model + (at++) * REC, q, j);
    for (int q = 0; q < np; q++)
        make_rec(model + (at++) * REC, q, 100);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) {
        MPI_Offset n;
        unsigned char *f = MTest_Io_slurp(p, &n);
        if (f && CHECK(n == (MPI_Offset)(T + np) * REC * (MPI_Offset)sizeof(int),
                       "write_ordered file has %lld bytes, expected %lld", (long long)n,
                       (long long)(T + np) * REC * (long long)sizeof(int)))
            IO_SAME(f, model, (size_t)(T + np) * REC * sizeof(int),
                    "file written by MPI_File_write_ordered (rank order)");
        free(f);
    }

    /* Back to 0 and read in order. */
    rc = MPI_File_seek_shared(fh, 0, MPI_SEEK_SET);
    CHECK_RC(rc, "MPI_File_seek_shared(0, SEEK_SET)");
    shared_pos_is(fh, 0, "after seek_shared(0, SEEK_SET)");
    int *back = malloc((size_t)(me + 1) * REC * sizeof(int));
    memset(back, 0, (size_t)(me + 1) * REC * sizeof(int));
    MTest_Poison_status(&st);
    rc = MPI_File_read_ordered(fh, back, me + 1, rt, &st);
    CHECK_RC(rc, "MPI_File_read_ordered");
    CHECK_COUNT(&st, rt, me + 1, "read_ordered of rank+1 records");
    IO_SAME(back, mine, (size_t)(me + 1) * REC * sizeof(int), "own records by read_ordered");
    shared_pos_is(fh, T, "after read_ordered");

    rc = MPI_File_seek_shared(fh, 0, MPI_SEEK_END);
    CHECK_RC(rc, "MPI_File_seek_shared(0, SEEK_END)");
    shared_pos_is(fh, T + np, "after seek_shared(0, SEEK_END)");
    rc = MPI_File_seek_shared(fh, -np, MPI_SEEK_END);
    CHECK_RC(rc, "MPI_File_seek_shared(-n, SEEK_END)");
    shared_pos_is(fh, T, "after seek_shared(-n, SEEK_END)");
    rc = MPI_File_seek_shared(fh, -T, MPI_SEEK_CUR);
    CHECK_RC(rc, "MPI_File_seek_shared(-T, SEEK_CUR)");
    shared_pos_is(fh, 0, "after seek_shared(-T, SEEK_CUR)");
    rc = MPI_File_seek_shared(fh, T, MPI_SEEK_CUR);
    CHECK_RC(rc, "MPI_File_seek_shared(T, SEEK_CUR)");
    shared_pos_is(fh, T, "after seek_shared(T, SEEK_CUR)");
    int one[REC];
    memset(one, 0, sizeof one);
    rc = MPI_File_read_ordered(fh, one, 1, rt, &st);
    CHECK_RC(rc, "MPI_File_read_ordered (one record)");
    CHECK_COUNT(&st, rt, 1, "read_ordered of one record");
    IO_SAME(one, extra, sizeof one, "own extra record by read_ordered after the seeks");
    shared_pos_is(fh, T + np, "after the last read_ordered");

    /* read_shared from 0 until the end: every record read exactly once by someone. */
    rc = MPI_File_seek_shared(fh, 0, MPI_SEEK_SET);
    CHECK_RC(rc, "MPI_File_seek_shared(0, SEEK_SET)");
    int cap = T + np, got = 0;
    int *rd = malloc((size_t)cap * REC * sizeof(int));
    for (;;) {
        int r[REC], c = -1;
        rc = MPI_File_read_shared(fh, r, 1, rt, &st);
        if (!CHECK(rc == MPI_SUCCESS, "MPI_File_read_shared returned %s", MTest_Describe(rc)))
            break;
        MPI_Get_count(&st, rt, &c);
        if (c == 0)
            break;
        if (!CHECK(c == 1 && got < cap, "MPI_File_read_shared: count %d after %d records", c,
                   got))
            break;
        memcpy(rd + got * REC, r, sizeof r);
        got++;
    }
    int *counts = malloc(np * sizeof(int)), *displs = malloc(np * sizeof(int));
    int mycount = got * REC;
    MPI_Gather(&mycount, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    int *all = NULL, tot = 0;
    if (me == 0) {
        for (int q = 0; q < np; q++) {
            displs[q] = tot;
            tot += counts[q];
        }
        all = malloc((size_t)(tot + 1) * sizeof(int));
    }
    MPI_Gatherv(rd, mycount, MPI_INT, all, counts, displs, MPI_INT, 0, MPI_COMM_WORLD);
    if (me == 0) {
        CHECK(tot == (T + np) * REC, "read_shared: %d records read in all, expected %d",
              tot / REC, T + np);
        int *seen = calloc((size_t)T + np, sizeof(int));
        for (int i = 0; i < tot / REC; i++) {
            int k = -1;
            for (int m = 0; m < T + np; m++)
                if (memcmp(all + i * REC, model + m * REC, REC * sizeof(int)) == 0)
                    k = m;
            if (!CHECK(k >= 0 && !seen[k], "read_shared: record %d read (%d, %d) is %s", i,
                       all[i * REC], all[i * REC + 1], k < 0 ? "not in the file" : "a duplicate"))
                break;
            seen[k] = 1;
        }
        free(seen);
        free(all);
    }
    rc = MPI_File_close(&fh);
    CHECK_RC(rc, "MPI_File_close");
    free(counts);
    free(displs);
    free(rd);
    free(back);
    free(model);
    free(mine);
}

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    me = mtest_rank;
    np = mtest_size;
    MTest_Io_dir("shared");
    MPI_Type_contiguous(REC, MPI_INT, &rt);
    MPI_Type_commit(&rt);
    t_write_shared();
    t_ordered();
    MPI_Type_free(&rt);
    MTest_Io_cleanup();
    return MTest_Finalize(0);
}
