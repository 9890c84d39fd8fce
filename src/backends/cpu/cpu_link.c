/* The CPU backend's test link (ND_RANK_LINK=1; docs/internals.md "Several
 * processes"): backend.h's rank_link_* and rank_xfer, carried over MPI
 * (the runtime's nd_rank_wire: dist.h's send, receive and broadcast), so
 * that CPU ranks under mpirun take the executor's link path, which GPU
 * ranks take over NCCL (cuda/rank_link.c) and CI has no GPU to run: every
 * transfer goes over rank_xfer, a failed step takes part with no memory,
 * and the plan waits for the link before the ranks agree. What that path
 * relies on in NCCL is kept:
 *
 * - a send, or a broadcast from this rank, returns before its bytes left
 *   (NCCL's is enqueued on the stream): its bytes are copied and sent
 *   before this rank's next receive (or broadcast from another rank), or
 *   in rank_link_wait. A plan ends with the last rank's gathered rows, a
 *   broadcast from it, so a plan that did not wait for its link leaves
 *   the others in that broadcast while the last rank is in the ranks'
 *   agreement: the test hangs or fails rather than pass. The order of the
 *   transfers is the plan's either way, so the deadlock argument (every
 *   transfer in the plan's step order) still holds.
 * - a transfer goes in parts of PART bytes, both ends alike; PART is small
 *   here so that the test's transfers take several.
 * - a rank taking part without memory sends zeros from, and receives
 *   into, two blocks made when the link opened; a send that cannot get
 *   memory for its copy goes at once instead.
 *
 * A receive is done when rank_xfer returns: the CPU's next step reads it
 * at once (on a GPU the stream orders that). Each send costs a copy, so
 * this link is for tests only.
 *
 * The link's own lane (backend.h's rank_lane_*) is kept as a GPU's link
 * stream would run it, as late as it may: a transfer queued there
 * (ND_RANK_LINK_SIDE) and the marks after it are made in order only when
 * the steps' lane waits for such a mark, or the lanes join, or the plan
 * waits. So a receive whose rows a step reads without waiting for it
 * leaves that step the old rows, and a send reads its rows only then,
 * after what later steps wrote into them: a wait that
 * scheduler/rank_lanes.c misses changes the test's result. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backends/cpu/cpu_internal.h"
#include "common/alloc.h"
#include "common/error.h"
#include "common/fault.h"

#define PART ((size_t)4096)

/* The id rank 0 makes (rank_link_id): a tag, its process and a time, so
 * that an id that did not come from rank 0 this time shows. */
static const char id_tag[] = "nd-cpu-test-link"; /* its first 16 bytes */
typedef struct {
    char tag[16];
    uint64_t pid, ns;
} link_id_bytes;
_Static_assert(sizeof(link_id_bytes) <= ND_RANK_LINK_ID_BYTES, "the test link's id fits backend.h's");

/* A send or a broadcast from this rank not made yet: `bytes` of data to
 * `peer` (zeros when data is NULL). */
typedef struct pending {
    struct pending *next;
    int op;
    int32_t peer;
    size_t bytes;
    unsigned char *data; /* in the same block, after the struct */
} pending;

/* A transfer on the link's lane, not made yet, or (op < 0) a mark. */
typedef struct side_op {
    struct side_op *next;
    int op;
    int32_t peer, mark;
    unsigned char *mem;
    size_t bytes;
} side_op;

typedef struct nd_cpu_link {
    nd_rank_wire wire;
    int32_t rank, ranks;
    pending *head, *tail;
    side_op *side_head, *side_tail;
    unsigned char zeros[PART], sink[PART];
} nd_cpu_link;

static nd_cpu_link *link_of(nd_backend *be) { return ((nd_cpu_state *)be->impl)->link; }

/* In parts of PART; mem NULL: from the zeros, into the sink. */
static nd_status parts(nd_cpu_link *L, int op, unsigned char *mem, size_t bytes, int32_t peer) {
    nd_status s = ND_OK;
    for (size_t at = 0; at < bytes; at += PART) {
        size_t n = bytes - at < PART ? bytes - at : PART;
        nd_status r;
        switch (op) {
        case ND_RANK_LINK_SEND: r = L->wire.send(mem ? mem + at : L->zeros, n, peer); break;
        case ND_RANK_LINK_RECV: r = L->wire.recv(mem ? mem + at : L->sink, n, peer); break;
        default: /* the root sends its bytes (or zeros); elsewhere mem NULL drops them */
            r = L->wire.bcast(mem ? mem + at : peer == L->rank ? L->zeros : L->sink, n, peer);
            break;
        }
        if (s == ND_OK) s = r;
    }
    return s;
}

/* The transfers not made yet, in order. */
static nd_status flush(nd_cpu_link *L) {
    nd_status s = ND_OK;
    while (L->head) {
        pending *p = L->head;
        L->head = p->next;
        nd_status r = parts(L, p->op, p->data, p->bytes, p->peer);
        if (s == ND_OK) s = r;
        free(p);
    }
    L->tail = NULL;
    return s;
}

static nd_status link_probe(nd_backend *be) {
    (void)be;
    return ND_OK;
}

static nd_status link_id(nd_backend *be, void *id, size_t bytes) {
    (void)be;
    if (bytes < sizeof(link_id_bytes))
        return nd_error_set(ND_ERR_ARG, "nd_init: the CPU test link's id needs %zu bytes, not %zu",
                            sizeof(link_id_bytes), bytes);
    link_id_bytes u;
    memset(&u, 0, sizeof u);
    memcpy(u.tag, id_tag, sizeof u.tag);
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    u.pid = (uint64_t)getpid();
    u.ns = (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
    memcpy(id, &u, sizeof u);
    return ND_OK;
}

static void link_close(nd_backend *be) {
    nd_cpu_state *st = be->impl;
    nd_cpu_link *L = st->link;
    if (!L) return;
    st->link = NULL;
    /* After a plan's wait nothing is left; a plan that failed to wait
     * leaves its peers waiting already. */
    while (L->head) {
        pending *p = L->head;
        L->head = p->next;
        free(p);
    }
    while (L->side_head) {
        side_op *q = L->side_head;
        L->side_head = q->next;
        free(q);
    }
    free(L);
}

/* Checks the id the runtime carried from rank 0: rank 0 broadcasts its
 * own copy once more, over the link's MPI, and every rank compares (every
 * rank does it, whatever failed here, since the others wait in it). */
static nd_status link_open(nd_backend *be, const void *id, size_t id_bytes, int32_t ranks, int32_t rank) {
    nd_cpu_state *st = be->impl;
    const nd_rank_wire *wire = st->link_wire;
    link_close(be);
    link_id_bytes mine, rank0;
    memset(&mine, 0, sizeof mine);
    if (id_bytes >= sizeof mine) memcpy(&mine, id, sizeof mine);
    rank0 = mine;
    nd_status s = wire->bcast(&rank0, sizeof rank0, 0);
    if (s != ND_OK) return s;
    if (memcmp(mine.tag, id_tag, sizeof mine.tag) || memcmp(&mine, &rank0, sizeof mine))
        return nd_error_set(ND_ERR_STATE, "nd_init: MPI rank %d of %d was given another id for the CPU test link "
                            "than rank 0 made (the id's broadcast is wrong)", (int)rank, (int)ranks);
    nd_cpu_link *L = nd_calloc(1, sizeof *L);
    if (!L) return nd_error_set(ND_ERR_OOM, "nd_init: out of host memory for the CPU test link");
    L->wire = *wire;
    L->rank = rank;
    L->ranks = ranks;
    st->link = L;
    return ND_OK;
}

/* One transfer made now (on the steps' lane, or the link's when its turn
 * comes): a send waits in `pending`, a receive goes at once. */
static nd_status move(nd_cpu_link *L, int op, unsigned char *p, size_t bytes, int32_t peer) {
    if (op == ND_RANK_LINK_SEND || (op == ND_RANK_LINK_BCAST && peer == L->rank)) {
        pending *q = nd_malloc(sizeof *q + (p ? bytes : 0));
        if (!q) {
            nd_status r = flush(L);
            nd_status r2 = parts(L, op, p, bytes, peer);
            return r != ND_OK ? r : r2;
        }
        q->next = NULL;
        q->op = op;
        q->peer = peer;
        q->bytes = bytes;
        q->data = p ? (unsigned char *)(q + 1) : NULL;
        if (p) memcpy(q->data, p, bytes);
        if (L->tail)
            L->tail->next = q;
        else
            L->head = q;
        L->tail = q;
        return ND_OK;
    }
    nd_status r = flush(L);
    nd_status r2 = parts(L, op, p, bytes, peer);
    return r != ND_OK ? r : r2;
}

/* The link's lane, in order, up to and with mark `mark` (-1: all of it);
 * nothing when that mark is not queued (a join made it already). */
static nd_status run_side(nd_cpu_link *L, int32_t mark) {
    if (mark >= 0) {
        const side_op *q = L->side_head;
        while (q && !(q->op < 0 && q->mark == mark)) q = q->next;
        if (!q) return ND_OK;
    }
    nd_status s = ND_OK;
    while (L->side_head) {
        side_op *q = L->side_head;
        L->side_head = q->next;
        int done = q->op < 0 && q->mark == mark;
        nd_status r = q->op < 0 ? ND_OK : move(L, q->op, q->mem, q->bytes, q->peer);
        if (s == ND_OK) s = r;
        free(q);
        if (done) break;
    }
    if (!L->side_head) L->side_tail = NULL;
    return s;
}

static int queue_side(nd_cpu_link *L, int op, unsigned char *mem, size_t bytes, int32_t peer, int32_t mark) {
    side_op *q = nd_malloc(sizeof *q);
    if (!q) return 0;
    *q = (side_op){NULL, op, peer, mark, mem, bytes};
    if (L->side_tail)
        L->side_tail->next = q;
    else
        L->side_head = q;
    L->side_tail = q;
    return 1;
}

static nd_status link_xfer(nd_backend *be, int op, void *mem, int memory, size_t bytes, int32_t peer) {
    nd_cpu_link *L = link_of(be);
    if (!L) return nd_error_set(ND_ERR_STATE, "nd_sync: a transfer between MPI ranks over the CPU test link, "
                                "but it is not open");
    nd_status s = ND_OK;
    if (nd_fault_hit(ND_FAULT_BACKEND_CALL)) s = nd_fault_backend_error("cpu", "rank_xfer");
    if (s == ND_OK && memory != ND_MEMORY_HOST)
        s = nd_error_set(ND_ERR_ARG, "cpu backend: a transfer of memory %d over the test link (only host, 0)",
                         memory);
    /* The peers wait in this transfer whatever failed here. */
    unsigned char *p = s == ND_OK ? mem : NULL;
    const int side = (op & ND_RANK_LINK_SIDE) != 0;
    op &= ~ND_RANK_LINK_SIDE;
    if (side && queue_side(L, op, p, bytes, peer, -1)) return s;
    /* On the steps' lane (or no memory to queue it): after the link's. */
    nd_status r = run_side(L, -1);
    nd_status r2 = move(L, op, p, bytes, peer);
    if (s == ND_OK) s = r;
    return s != ND_OK ? s : r2;
}

static nd_status lane_mark(nd_backend *be, int lane, int32_t mark) {
    nd_cpu_link *L = link_of(be);
    /* The steps' lane has run everything when its mark is made. Without
     * memory for the mark, the link's lane runs now (earlier than need be). */
    if (!L || lane != ND_RANK_LANE_LINK || queue_side(L, -1, NULL, 0, 0, mark)) return ND_OK;
    return run_side(L, -1);
}

static nd_status lane_wait(nd_backend *be, int lane, int32_t mark) {
    nd_cpu_link *L = link_of(be);
    /* The link's lane waits for nothing: the steps' marks are made. */
    return L && lane == ND_RANK_LANE_STEPS ? run_side(L, mark) : ND_OK;
}

static nd_status lane_join(nd_backend *be) {
    nd_cpu_link *L = link_of(be);
    return L ? run_side(L, -1) : ND_OK;
}

static nd_status link_wait(nd_backend *be) {
    nd_cpu_link *L = link_of(be);
    if (!L) return ND_OK;
    nd_status s = run_side(L, -1);
    nd_status r = flush(L);
    return s != ND_OK ? s : r;
}

void nd_cpu_link_install(nd_backend *be, const nd_rank_wire *wire) {
    ((nd_cpu_state *)be->impl)->link_wire = wire;
    be->rank_link_host = 1;
    be->rank_link_probe = link_probe;
    be->rank_link_id = link_id;
    be->rank_link_open = link_open;
    be->rank_link_close = link_close;
    be->rank_xfer = link_xfer;
    be->rank_link_wait = link_wait;
    be->rank_lane_mark = lane_mark;
    be->rank_lane_wait = lane_wait;
    be->rank_lane_join = lane_join;
}

void nd_cpu_link_destroy(nd_backend *be) { link_close(be); }
