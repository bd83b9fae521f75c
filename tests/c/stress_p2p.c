/* stress_p2p: many messages of random sizes and tags between all ranks, with wildcard
 * receives mixed in, checked for loss, duplication, corruption and misordering.
 *
 *   stress_p2p [total_messages [seed]]      (default 100000 messages, seed 12345)
 *
 * The run is cut into rounds of 1000 messages (over all ranks).  In each round every rank
 * sends its share to random destinations (itself included) with random tags (0..15) and
 * random sizes: 90% up to 1 KiB, 9% up to 64 KiB, 1% up to 4 MiB (about 24 KB on average,
 * 2.4 GB for 100000 messages), with MPI_Isend or MPI_Issend.  Every rank knows every
 * rank's plan (it is generated from the seed, the round and the sender), so it posts
 * exactly one receive per message coming to it in the round, with patterns
 * (source, tag), (source, MPI_ANY_TAG), (MPI_ANY_SOURCE, tag) or (MPI_ANY_SOURCE,
 * MPI_ANY_TAG).  Wildcards go by whole groups so that the set of receives is safe whatever
 * the matching order: for every receive R, the receives whose patterns share a stream with
 * R are no more than the messages R can match (then no receive can starve; checked).
 *
 * Each message starts with a header: magic, sender, receiver, tag, sequence number in its
 * (sender, receiver, tag) stream, size, and a checksum of the payload.  The receiver checks
 * the status against the header and the pattern, the count, the checksum, and -- MPI's
 * non-overtaking rule -- that in the order the receives were posted, each stream's sequence
 * numbers are exactly the next ones expected (so none lost, duplicated or overtaken).
 * A round ends with a barrier made of point-to-point messages (wildcard receives of one
 * round must not take the next round's messages), whose receives are posted before the
 * round's own.
 * Rounds are completed with MPI_Waitall, MPI_Waitany, MPI_Waitsome, MPI_Testsome or
 * MPI_Testany/MPI_Test polling in turn; some rounds post the sends before the receives. */
#include "mtest.h"

#define NT 16          /* tags 0..NT-1 */
#define ROUND 1000     /* messages per round over all ranks */
#define MAGIC 0x5eadbeefu
#define ANY (-1)

typedef struct {
    uint32_t magic;
    int32_t sender, receiver, tag;
    uint32_t seq, size;
    uint64_t checksum;
} header_t; /* 32 bytes */

typedef struct { int dest, tag, size, issend; } plan_t;

static uint64_t seed0 = 12345;
static int size, rank;

static uint64_t mix(uint64_t a, uint64_t b)
{
    uint64_t s = a * 0x9e3779b97f4a7c15ULL ^ (b + 0x632be59bd9b4e019ULL);
    return MTest_Rand64(&s);
}

/* The messages `sender` sends in round k. */
static int plan_of(int k, int sender, int nmsg, plan_t *p)
{
    uint64_t st = mix(mix(seed0, (uint64_t)k), (uint64_t)sender + 1000);
    for (int j = 0; j < nmsg; j++) {
        p[j].dest = (int)MTest_Rand_below(&st, size);
        p[j].tag = (int)MTest_Rand_below(&st, NT);
        uint64_t c = MTest_Rand_below(&st, 1000), n;
        if (c < 900)
            n = MTest_Rand_below(&st, 1025);
        else if (c < 990)
            n = MTest_Rand_below(&st, 65537);
        else
            n = MTest_Rand_below(&st, (4 << 20) + 1);
        if (n < sizeof(header_t))
            n = sizeof(header_t);
        p[j].size = (int)n;
        p[j].issend = MTest_Rand_below(&st, 10) == 0;
    }
    return nmsg;
}

static uint64_t checksum(const unsigned char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 0x100000001b3ULL;
        h ^= h >> 29;
    }
    for (; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

/* Receive patterns: counts by pattern kind. */
typedef struct {
    int spec[64][NT], sany[64], tany[NT], all;
    int spec_row[64], spec_col[NT], spec_total, sany_total, tany_total;
} counts_t;

static void count_add(counts_t *c, int s, int t, int d)
{
    if (s != ANY && t != ANY) {
        c->spec[s][t] += d;
        c->spec_row[s] += d;
        c->spec_col[t] += d;
        c->spec_total += d;
    } else if (s != ANY) {
        c->sany[s] += d;
        c->sany_total += d;
    } else if (t != ANY) {
        c->tany[t] += d;
        c->tany_total += d;
    } else {
        c->all += d;
    }
}

/* Receives whose pattern overlaps (s, t). */
static int overlap(const counts_t *c, int s, int t)
{
    if (s != ANY && t != ANY)
        return c->spec[s][t] + c->sany[s] + c->tany[t] + c->all;
    if (s != ANY)
        return c->spec_row[s] + c->sany[s] + c->tany_total + c->all;
    if (t != ANY)
        return c->spec_col[t] + c->sany_total + c->tany[t] + c->all;
    return c->spec_total + c->sany_total + c->tany_total + c->all;
}

/* Messages (s, t) can match, from message counts msg[s][t]. */
static int matchable(int msg[][NT], int s, int t)
{
    int n = 0;
    for (int a = 0; a < size; a++)
        for (int b = 0; b < NT; b++)
            if ((s == ANY || s == a) && (t == ANY || t == b))
                n += msg[a][b];
    return n;
}

static int safe(const counts_t *c, int msg[][NT])
{
    for (int s = -1; s < size; s++)
        for (int t = -1; t < NT; t++) {
            int present;
            if (s >= 0 && t >= 0)
                present = c->spec[s][t];
            else if (s >= 0)
                present = c->sany[s];
            else if (t >= 0)
                present = c->tany[t];
            else
                present = c->all;
            if (present && overlap(c, s, t) > matchable(msg, s, t))
                return 0;
        }
    return 1;
}

/* A barrier from point-to-point: no rank sends round k+1 messages before every rank has
 * completed round k, so wildcard receives of round k cannot take round k+1 messages.  Its
 * receives are posted at the start of the round, before the round's receives: a barrier
 * message arriving early then matches them (receives match in post order), never a
 * (MPI_ANY_SOURCE, MPI_ANY_TAG) receive of the round. */
#define TAG_ARRIVE 32002
#define TAG_RELEASE 32003
static MPI_Request barrier_reqs[64];

static void barrier_post(void)
{
    static int dummy;
    if (rank == 0) {
        for (int k = 1; k < size; k++)
            MPI_Irecv(&dummy, 0, MPI_INT, k, TAG_ARRIVE, MPI_COMM_WORLD, &barrier_reqs[k]);
    } else {
        MPI_Irecv(&dummy, 0, MPI_INT, 0, TAG_RELEASE, MPI_COMM_WORLD, &barrier_reqs[0]);
    }
}

static void barrier_finish(void)
{
    int dummy = 0;
    if (rank == 0) {
        if (size > 1)
            MPI_Waitall(size - 1, barrier_reqs + 1, MPI_STATUSES_IGNORE);
        for (int k = 1; k < size; k++)
            MPI_Send(&dummy, 0, MPI_INT, k, TAG_RELEASE, MPI_COMM_WORLD);
    } else {
        MPI_Send(&dummy, 0, MPI_INT, 0, TAG_ARRIVE, MPI_COMM_WORLD);
        MPI_Wait(&barrier_reqs[0], MPI_STATUS_IGNORE);
    }
}

typedef struct {
    int src, tag, bufsize, post;
    unsigned char *buf;
} recv_t;

int main(int argc, char **argv)
{
    MTest_Init(&argc, &argv);
    size = mtest_size;
    rank = mtest_rank;
    long total = argc > 1 ? atol(argv[1]) : 100000;
    if (argc > 2)
        seed0 = strtoull(argv[2], NULL, 10);
    if (size > 64) {
        if (rank == 0)
            printf("at most 64 ranks\n");
        return MTest_Finalize(1);
    }
    int per_rank = ROUND / size > 0 ? ROUND / size : 1;
    long rounds = (total + (long)per_rank * size - 1) / ((long)per_rank * size);
    double t0 = MPI_Wtime();

    uint32_t (*send_seq)[NT] = calloc(size, sizeof *send_seq);
    uint32_t (*recv_seq)[NT] = calloc(size, sizeof *recv_seq);
    plan_t *plans = malloc(sizeof(plan_t) * per_rank * size);
    int (*msg)[NT] = malloc(sizeof(int) * NT * 64);
    int (*maxsize)[NT] = malloc(sizeof(int) * NT * 64);
    recv_t *recvs = malloc(sizeof(recv_t) * per_rank * size);
    unsigned char **sbufs = malloc(sizeof(unsigned char *) * per_rank);
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * (per_rank * (size + 1)));
    MPI_Status *sts = malloc(sizeof(MPI_Status) * (per_rank * (size + 1)));
    int *indices = malloc(sizeof(int) * (per_rank * (size + 1)));
    /* Per-round results: post index -> (stream, seq). */
    int *got_src = malloc(sizeof(int) * per_rank * size), *got_tag = malloc(sizeof(int) * per_rank * size);
    uint32_t *got_seq = malloc(sizeof(uint32_t) * per_rank * size);
    char *got = malloc(per_rank * size);
    long nrecv_total = 0, nwild = 0;
    double bytes = 0;

    for (long k = 0; k < rounds; k++) {
        /* Plans of every sender; my incoming messages by stream. */
        memset(msg, 0, sizeof(int) * NT * 64);
        memset(maxsize, 0, sizeof(int) * NT * 64);
        int nin = 0;
        for (int s = 0; s < size; s++) {
            plan_t *p = plans + s * per_rank;
            plan_of((int)k, s, per_rank, p);
            for (int j = 0; j < per_rank; j++)
                if (p[j].dest == rank) {
                    msg[s][p[j].tag]++;
                    if (p[j].size > maxsize[s][p[j].tag])
                        maxsize[s][p[j].tag] = p[j].size;
                    recvs[nin].src = s;
                    recvs[nin].tag = p[j].tag;
                    nin++;
                }
        }
        /* Patterns: all specific, then try to widen some. */
        static counts_t c;
        memset(&c, 0, sizeof c);
        for (int i = 0; i < nin; i++)
            count_add(&c, recvs[i].src, recvs[i].tag, 1);
        /* Wildcards go by whole groups (a wildcard next to a specific receive of a stream it
         * overlaps could take that stream's message and starve the specific one):
         * per round, all specific; or some sources' receives all (source, ANY_TAG); or some
         * tags' receives all (ANY_SOURCE, tag); or every receive (ANY_SOURCE, ANY_TAG). */
        uint64_t pst = mix(mix(seed0, (uint64_t)k), 77777 + (uint64_t)rank);
        int pmode = (int)(k % 8), group_src[64], group_tag[NT];
        for (int a = 0; a < size; a++)
            group_src[a] = (pmode == 1 || pmode == 4 || pmode == 6) && MTest_Rand_below(&pst, 2);
        for (int b = 0; b < NT; b++)
            group_tag[b] = (pmode == 2 || pmode == 5) && MTest_Rand_below(&pst, 2);
        for (int i = 0; i < nin; i++) {
            int s = recvs[i].src, t = recvs[i].tag, ns = s, nt = t;
            if (pmode == 7)
                ns = nt = ANY;
            else if (group_src[s])
                nt = ANY;
            else if (group_tag[t])
                ns = ANY;
            if (ns != s || nt != t) {
                count_add(&c, s, t, -1);
                count_add(&c, ns, nt, 1);
                recvs[i].src = ns;
                recvs[i].tag = nt;
                nwild++;
            }
        }
        CHECK(safe(&c, msg), "round %ld: the receive patterns are not safe (test bug)", k);
        /* Shuffle the post order; buffer sizes: the largest message the pattern matches. */
        for (int i = nin - 1; i > 0; i--) {
            int j = (int)MTest_Rand_below(&pst, i + 1);
            recv_t tmp = recvs[i];
            recvs[i] = recvs[j];
            recvs[j] = tmp;
        }
        for (int i = 0; i < nin; i++) {
            int m = 0;
            for (int a = 0; a < size; a++)
                for (int b = 0; b < NT; b++)
                    if ((recvs[i].src == ANY || recvs[i].src == a) && (recvs[i].tag == ANY || recvs[i].tag == b) &&
                        maxsize[a][b] > m)
                        m = maxsize[a][b];
            recvs[i].bufsize = m;
            recvs[i].buf = malloc(m);
            recvs[i].post = i;
            got[i] = 0;
        }

        barrier_post();
        /* Post: receives then sends, or (every third round) sends first. */
        int nreq = 0;
        int sends_first = k % 3 == 2;
        plan_t *mine = plans + rank * per_rank;
        for (int phase = 0; phase < 2; phase++) {
            if ((phase == 0) != sends_first) {
                for (int i = 0; i < nin; i++) {
                    int rc = MPI_Irecv(recvs[i].buf, recvs[i].bufsize, MPI_BYTE, recvs[i].src == ANY ? MPI_ANY_SOURCE : recvs[i].src,
                                       recvs[i].tag == ANY ? MPI_ANY_TAG : recvs[i].tag, MPI_COMM_WORLD, &reqs[i]);
                    CHECK_RC(rc, "MPI_Irecv");
                }
            } else {
                for (int j = 0; j < per_rank; j++) {
                    plan_t *p = &mine[j];
                    unsigned char *b = malloc(p->size);
                    header_t h = {MAGIC, rank, p->dest, p->tag, send_seq[p->dest][p->tag]++, (uint32_t)p->size, 0};
                    size_t pl = p->size - sizeof h;
                    MTest_Fill_bytes(b + sizeof h, pl, mix(mix(seed0, h.seq), (uint64_t)rank * 4096 + p->dest * NT + p->tag));
                    h.checksum = checksum(b + sizeof h, pl);
                    memcpy(b, &h, sizeof h);
                    sbufs[j] = b;
                    int rc = p->issend ? MPI_Issend(b, p->size, MPI_BYTE, p->dest, p->tag, MPI_COMM_WORLD, &reqs[nin + j])
                                       : MPI_Isend(b, p->size, MPI_BYTE, p->dest, p->tag, MPI_COMM_WORLD, &reqs[nin + j]);
                    CHECK_RC(rc, "send");
                    bytes += p->size;
                }
            }
        }
        nreq = nin + per_rank;

        /* Complete, checking each receive as it completes. */
#define CHECK_RECV(i, stp)                                                                                      \
    do {                                                                                                        \
        if ((i) < nin) {                                                                                        \
            recv_t *R = &recvs[i];                                                                              \
            const MPI_Status *S = (stp);                                                                        \
            int cnt = -1;                                                                                       \
            MPI_Get_count(S, MPI_BYTE, &cnt);                                                                   \
            header_t h;                                                                                         \
            memcpy(&h, R->buf, sizeof h);                                                                       \
            int ok = CHECK(cnt >= (int)sizeof h && h.magic == MAGIC, "round %ld: receive %d: count %d, magic %x", k, i, cnt, h.magic) && \
                     CHECK(h.sender == S->MPI_SOURCE && h.tag == S->MPI_TAG && h.receiver == rank && (int)h.size == cnt,         \
                           "round %ld: header (sender %d tag %d receiver %d size %u) vs status (source %d tag %d count %d)", k,  \
                           h.sender, h.tag, h.receiver, h.size, S->MPI_SOURCE, S->MPI_TAG, cnt) &&                               \
                     CHECK((R->src == ANY || R->src == h.sender) && (R->tag == ANY || R->tag == h.tag),                         \
                           "round %ld: receive (%d, %d) got a message from %d with tag %d", k, R->src, R->tag, h.sender, h.tag) && \
                     CHECK(checksum(R->buf + sizeof h, cnt - sizeof h) == h.checksum,                                          \
                           "round %ld: message %u of stream (%d->%d, tag %d), %d B: checksum mismatch (corrupted)", k, h.seq,     \
                           h.sender, rank, h.tag, cnt);                                                                          \
            if (ok) {                                                                                           \
                got[i] = 1;                                                                                     \
                got_src[i] = h.sender;                                                                          \
                got_tag[i] = h.tag;                                                                             \
                got_seq[i] = h.seq;                                                                             \
            }                                                                                                   \
        }                                                                                                       \
    } while (0)

        int mode = (int)(k % 5);
        double tlim = MPI_Wtime() + 50;
        if (mode == 0) {
            int rc = MPI_Waitall(nreq, reqs, sts);
            CHECK_RC(rc, "MPI_Waitall");
            for (int i = 0; i < nin; i++)
                CHECK_RECV(i, &sts[i]);
        } else {
            int left = nreq;
            while (left > 0 && MPI_Wtime() < tlim) {
                if (mode == 1) {
                    int idx;
                    MPI_Status st;
                    int rc = MPI_Waitany(nreq, reqs, &idx, &st);
                    if (!CHECK(rc == MPI_SUCCESS && idx != MPI_UNDEFINED, "MPI_Waitany: rc %d idx %d", rc, idx))
                        break;
                    CHECK_RECV(idx, &st);
                    left--;
                } else if (mode == 2 || mode == 3) {
                    int out = 0;
                    int rc = mode == 2 ? MPI_Waitsome(nreq, reqs, &out, indices, sts) : MPI_Testsome(nreq, reqs, &out, indices, sts);
                    if (!CHECK(rc == MPI_SUCCESS && out != MPI_UNDEFINED, "MPI_%ssome: rc %d out %d", mode == 2 ? "Wait" : "Test", rc, out))
                        break;
                    for (int q = 0; q < out; q++)
                        CHECK_RECV(indices[q], &sts[q]);
                    left -= out;
                } else {
                    int idx, flag = 0;
                    MPI_Status st;
                    int rc = MPI_Testany(nreq, reqs, &idx, &flag, &st);
                    if (!CHECK_RC(rc, "MPI_Testany"))
                        break;
                    if (flag && idx != MPI_UNDEFINED) {
                        CHECK_RECV(idx, &st);
                        left--;
                    }
                    /* and MPI_Test on one request in turn */
                    int j = (int)(left % nreq);
                    if (reqs[j] != MPI_REQUEST_NULL) {
                        rc = MPI_Test(&reqs[j], &flag, &st);
                        if (CHECK_RC(rc, "MPI_Test") && flag) {
                            CHECK_RECV(j, &st);
                            left--;
                        }
                    }
                }
            }
            if (!CHECK(left == 0, "round %ld: %d requests did not complete within 50 s", k, left)) {
                printf("[%d] giving up\n", rank);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }

        /* Non-overtaking: per stream, in post order, the sequence numbers are the next ones. */
        int nok = 0;
        for (int i = 0; i < nin; i++) {
            if (!got[i])
                continue;
            nok++;
            uint32_t *want = &recv_seq[got_src[i]][got_tag[i]];
            CHECK(got_seq[i] == *want, "round %ld: stream (%d->%d, tag %d): receive posted %d-th got message %u, expected %u "
                                       "(lost, duplicated or out of order)", k, got_src[i], rank, got_tag[i], i, got_seq[i], *want);
            *want = got_seq[i] + 1;
        }
        CHECK(nok == nin, "round %ld: %d of %d receives verified", k, nok, nin);
        nrecv_total += nin;
        for (int i = 0; i < nin; i++)
            free(recvs[i].buf);
        for (int j = 0; j < per_rank; j++)
            free(sbufs[j]);
        barrier_finish();
        if (mtest_errors > 20) {
            printf("[%d] too many errors, stopping after round %ld\n", rank, k);
            break;
        }
    }

    /* Totals: what I received from each sender equals what it sent me. */
    long expect = 0;
    for (int s = 0; s < size; s++)
        for (int t = 0; t < NT; t++)
            expect += recv_seq[s][t];
    CHECK(expect == nrecv_total, "received %ld messages, streams account for %ld", nrecv_total, expect);
    double dt = MPI_Wtime() - t0;
    if (rank == 0)
        printf("stress_p2p: %ld rounds, %ld messages, %d ranks; rank 0 sent %.1f MB, received %ld messages (%ld wildcard receives) in %.1f s\n",
               rounds, rounds * per_rank * size, size, bytes / 1e6, nrecv_total, nwild, dt);
    free(send_seq);
    free(recv_seq);
    free(plans);
    free(msg);
    free(maxsize);
    free(recvs);
    free(sbufs);
    free(reqs);
    free(sts);
    free(indices);
    free(got_src);
    free(got_tag);
    free(got_seq);
    free(got);
    return MTest_Finalize(0);
}
