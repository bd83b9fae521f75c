/*
 * The network transport's C side: opens a libfabric RDM endpoint and wraps the calls that
 * libfabric defines as static inline functions in its headers (fi_domain, fi_endpoint,
 * fi_tsend, fi_cq_read, ...), which Rust cannot call. Every libfabric structure stays here:
 * the Rust side (src/transport/ofi/ffi.rs) sees one opaque handle and plain integers.
 *
 * libfabric itself is loaded with dlopen("libfabric.so.1") on first use, so programs linked
 * with libhympi need no -lfabric, and single-node jobs run where libfabric is not installed.
 * Only five functions are real symbols (fi_getinfo, fi_freeinfo, fi_dupinfo, fi_fabric,
 * fi_strerror); everything else goes through the operation tables of the objects they open.
 *
 * Built with -DHYMPI_HAVE_OFI when libfabric's headers were found at build time; without it
 * every entry point reports that hympi was built without libfabric.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/types.h>

/* One completion, as the Rust side reads it. */
struct hympi_ofi_cqe {
    void *ctx;     /* the operation's context (a struct fi_context owned by the caller) */
    uint64_t flags;/* FI_SEND / FI_RECV ... */
    uint64_t len;  /* bytes received (receives) */
    uint64_t tag;  /* tag of the message received */
    int64_t err;   /* 0, or the positive libfabric error of a failed operation */
};

#ifdef HYMPI_HAVE_OFI
#include <dlfcn.h>
#include <pthread.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

struct hympi_ofi {
    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av *av;
    struct fid_cq *cq;
    struct fid_ep *ep;
    char prov[64];
};

static struct {
    int state; /* 0 not tried, 1 loaded, -1 failed (set once, under pthread_once) */
    int (*getinfo)(uint32_t, const char *, const char *, uint64_t, const struct fi_info *,
                   struct fi_info **);
    void (*freeinfo)(struct fi_info *);
    struct fi_info *(*dupinfo)(const struct fi_info *);
    int (*fabric)(struct fi_fabric_attr *, struct fid_fabric **, void *);
    const char *(*strerror)(int);
    char why[256];
} L;

/* Loads libfabric (once, through pthread_once). */
static void load_once(void) {
    void *h = dlopen("libfabric.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(L.why, sizeof L.why, "cannot load libfabric.so.1: %s", dlerror());
        L.state = -1;
        return;
    }
    L.getinfo = dlsym(h, "fi_getinfo");
    L.freeinfo = dlsym(h, "fi_freeinfo");
    L.dupinfo = dlsym(h, "fi_dupinfo");
    L.fabric = dlsym(h, "fi_fabric");
    L.strerror = dlsym(h, "fi_strerror");
    if (!L.getinfo || !L.freeinfo || !L.dupinfo || !L.fabric || !L.strerror) {
        snprintf(L.why, sizeof L.why, "libfabric.so.1 lacks fi_getinfo/fi_fabric/...");
        L.state = -1;
        return;
    }
    L.state = 1;
}

/* Loads libfabric on first use: 0, or -1 with the reason in L.why. */
static int load(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, load_once);
    return L.state > 0 ? 0 : -1;
}

static void say(char *err, size_t errlen, const char *what, int rc) {
    snprintf(err, errlen, "%s: %s (%d)", what, L.strerror ? L.strerror(-rc) : "?", rc);
}

void hympi_ofi_close(struct hympi_ofi *o) {
    if (!o)
        return;
    if (o->ep)
        fi_close(&o->ep->fid);
    if (o->av)
        fi_close(&o->av->fid);
    if (o->cq)
        fi_close(&o->cq->fid);
    if (o->domain)
        fi_close(&o->domain->fid);
    if (o->fabric)
        fi_close(&o->fabric->fid);
    if (o->info)
        L.freeinfo(o->info);
    free(o);
}

/* Opens an RDM endpoint with tagged messages on provider `prov` (NULL: libfabric's choice,
 * which FI_PROVIDER narrows), bound to source address `src` (NULL: the provider's default),
 * with its completion queue and address vector. 0, or -1 with a message in `err`. */
int hympi_ofi_open(const char *prov, const char *src, struct hympi_ofi **out, char *err,
                   size_t errlen) {
    *out = NULL;
    if (load()) {
        snprintf(err, errlen, "%s", L.why);
        return -1;
    }
    struct fi_info *hints = L.dupinfo(NULL);
    if (!hints) {
        snprintf(err, errlen, "fi_allocinfo failed");
        return -1;
    }
    hints->caps = FI_TAGGED;
    hints->mode = FI_CONTEXT;
    hints->ep_attr->type = FI_EP_RDM;
    hints->domain_attr->threading = FI_THREAD_DOMAIN;
    hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    hints->tx_attr->msg_order = FI_ORDER_SAS;
    hints->rx_attr->msg_order = FI_ORDER_SAS;
    if (prov && *prov)
        hints->fabric_attr->prov_name = strdup(prov);
    struct fi_info *info = NULL;
    int rc = L.getinfo(FI_VERSION(1, 9), src, NULL, src ? FI_SOURCE : 0, hints, &info);
    L.freeinfo(hints);
    if (rc || !info) {
        char what[160];
        snprintf(what, sizeof what, "no libfabric provider '%s' with RDM tagged messages%s%s",
                 prov && *prov ? prov : "(any)", src ? " at " : "", src ? src : "");
        say(err, errlen, what, rc ? rc : -FI_ENODATA);
        return -1;
    }
    struct hympi_ofi *o = calloc(1, sizeof *o);
    if (!o) {
        L.freeinfo(info);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    o->info = info;
    snprintf(o->prov, sizeof o->prov, "%s", info->fabric_attr->prov_name);
    if ((rc = L.fabric(info->fabric_attr, &o->fabric, NULL))) {
        say(err, errlen, "fi_fabric", rc);
        goto fail;
    }
    if ((rc = fi_domain(o->fabric, info, &o->domain, NULL))) {
        say(err, errlen, "fi_domain", rc);
        goto fail;
    }
    struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_TAGGED, .wait_obj = FI_WAIT_NONE};
    if ((rc = fi_cq_open(o->domain, &cq_attr, &o->cq, NULL))) {
        say(err, errlen, "fi_cq_open", rc);
        goto fail;
    }
    struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
    if ((rc = fi_av_open(o->domain, &av_attr, &o->av, NULL))) {
        say(err, errlen, "fi_av_open", rc);
        goto fail;
    }
    if ((rc = fi_endpoint(o->domain, info, &o->ep, NULL))) {
        say(err, errlen, "fi_endpoint", rc);
        goto fail;
    }
    if ((rc = fi_ep_bind(o->ep, &o->cq->fid, FI_TRANSMIT | FI_RECV))) {
        say(err, errlen, "fi_ep_bind(cq)", rc);
        goto fail;
    }
    if ((rc = fi_ep_bind(o->ep, &o->av->fid, 0))) {
        say(err, errlen, "fi_ep_bind(av)", rc);
        goto fail;
    }
    if ((rc = fi_enable(o->ep))) {
        say(err, errlen, "fi_enable", rc);
        goto fail;
    }
    *out = o;
    return 0;
fail:
    hympi_ofi_close(o);
    return -1;
}

/* The provider actually opened ("tcp;ofi_rxm", "sockets", ...). */
const char *hympi_ofi_provider(const struct hympi_ofi *o) { return o->prov; }

/* Largest message the provider carries in one operation. */
uint64_t hympi_ofi_max_msg(const struct hympi_ofi *o) { return o->info->ep_attr->max_msg_size; }

/* This endpoint's address (*len in: capacity, out: length). 0 or a negative error. */
int hympi_ofi_getname(struct hympi_ofi *o, void *addr, size_t *len) {
    return fi_getname(&o->ep->fid, addr, len);
}

/* Inserts `count` addresses of `len` bytes each, packed at `addrs`; their fi_addr_t values go
 * to `out`. The number inserted, or a negative error. */
int hympi_ofi_insert(struct hympi_ofi *o, const void *addrs, size_t len, size_t count,
                     uint64_t *out) {
    (void)len;
    return fi_av_insert(o->av, addrs, count, (fi_addr_t *)out, 0, NULL);
}

/* Posts a tagged send of `len` bytes at `buf` to `dest`; `ctx` points to a struct fi_context
 * the caller keeps until the completion. 0, -FI_EAGAIN (poll, then retry) or an error. */
ssize_t hympi_ofi_tsend(struct hympi_ofi *o, const void *buf, size_t len, uint64_t dest,
                        uint64_t tag, void *ctx) {
    return fi_tsend(o->ep, buf, len, NULL, dest, tag, ctx);
}

/* Sends `len` bytes at `buf` to `dest` as a tagged inject: the provider copies them before
 * it returns, and the send produces no completion. 0, -FI_EAGAIN (poll, then retry) or an
 * error. Only up to `hympi_ofi_inject_max` bytes. */
ssize_t hympi_ofi_tinject(struct hympi_ofi *o, const void *buf, size_t len, uint64_t dest,
                          uint64_t tag) {
    return fi_tinject(o->ep, buf, len, dest, tag);
}

/* Largest send the provider takes as an inject. */
uint64_t hympi_ofi_inject_max(const struct hympi_ofi *o) {
    return o->info->tx_attr->inject_size;
}

/* Posts a tagged receive into `buf` from any source, matching `tag` outside `ignore`. */
ssize_t hympi_ofi_trecv(struct hympi_ofi *o, void *buf, size_t len, uint64_t tag,
                        uint64_t ignore, void *ctx) {
    return fi_trecv(o->ep, buf, len, NULL, FI_ADDR_UNSPEC, tag, ignore, ctx);
}

/* Reads up to `n` completions into `out` (progressing the provider): how many, 0 when none,
 * or a negative error. A failed operation comes back as one entry with `err` set and its
 * provider's explanation in `msg`. */
ssize_t hympi_ofi_poll(struct hympi_ofi *o, struct hympi_ofi_cqe *out, size_t n, char *msg,
                       size_t msglen) {
    struct fi_cq_tagged_entry e[32];
    if (n > 32)
        n = 32;
    ssize_t r = fi_cq_read(o->cq, e, n);
    if (r > 0) {
        for (ssize_t i = 0; i < r; i++) {
            out[i].ctx = e[i].op_context;
            out[i].flags = e[i].flags;
            out[i].len = e[i].len;
            out[i].tag = e[i].tag;
            out[i].err = 0;
        }
        return r;
    }
    if (r == -FI_EAGAIN)
        return 0;
    if (r == -FI_EAVAIL) {
        struct fi_cq_err_entry ee;
        memset(&ee, 0, sizeof ee);
        ssize_t q = fi_cq_readerr(o->cq, &ee, 0);
        if (q < 0)
            return q;
        out[0].ctx = ee.op_context;
        out[0].flags = ee.flags;
        out[0].len = ee.len;
        out[0].tag = ee.tag;
        out[0].err = ee.err ? ee.err : FI_EOTHER;
        snprintf(msg, msglen, "%s", fi_cq_strerror(o->cq, ee.prov_errno, ee.err_data, NULL, 0));
        return 1;
    }
    return r;
}

/* libfabric's text for error `err` (positive). */
const char *hympi_ofi_strerror(int err) { return L.strerror ? L.strerror(err) : "libfabric"; }

#else /* !HYMPI_HAVE_OFI */

struct hympi_ofi;

int hympi_ofi_open(const char *prov, const char *src, struct hympi_ofi **out, char *err,
                   size_t errlen) {
    (void)prov;
    (void)src;
    *out = NULL;
    snprintf(err, errlen, "hympi was built without libfabric's headers (install libfabric-dev "
                          "and rebuild)");
    return -1;
}
void hympi_ofi_close(struct hympi_ofi *o) { (void)o; }
const char *hympi_ofi_provider(const struct hympi_ofi *o) { (void)o; return ""; }
uint64_t hympi_ofi_max_msg(const struct hympi_ofi *o) { (void)o; return 0; }
int hympi_ofi_getname(struct hympi_ofi *o, void *addr, size_t *len) {
    (void)o; (void)addr; (void)len;
    return -38;
}
int hympi_ofi_insert(struct hympi_ofi *o, const void *addrs, size_t len, size_t count,
                     uint64_t *out) {
    (void)o; (void)addrs; (void)len; (void)count; (void)out;
    return -38;
}
ssize_t hympi_ofi_tsend(struct hympi_ofi *o, const void *buf, size_t len, uint64_t dest,
                        uint64_t tag, void *ctx) {
    (void)o; (void)buf; (void)len; (void)dest; (void)tag; (void)ctx;
    return -38;
}
ssize_t hympi_ofi_tinject(struct hympi_ofi *o, const void *buf, size_t len, uint64_t dest,
                          uint64_t tag) {
    (void)o; (void)buf; (void)len; (void)dest; (void)tag;
    return -38;
}
uint64_t hympi_ofi_inject_max(const struct hympi_ofi *o) { (void)o; return 0; }
ssize_t hympi_ofi_trecv(struct hympi_ofi *o, void *buf, size_t len, uint64_t tag,
                        uint64_t ignore, void *ctx) {
    (void)o; (void)buf; (void)len; (void)tag; (void)ignore; (void)ctx;
    return -38;
}
ssize_t hympi_ofi_poll(struct hympi_ofi *o, struct hympi_ofi_cqe *out, size_t n, char *msg,
                       size_t msglen) {
    (void)o; (void)out; (void)n; (void)msg; (void)msglen;
    return -38;
}
const char *hympi_ofi_strerror(int err) { (void)err; return "built without libfabric"; }

#endif
