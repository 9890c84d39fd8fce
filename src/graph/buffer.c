#include "graph/buffer.h"
#include "common/alloc.h"

#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/freelist.h"
#include "common/names.h"

/* Set once by the runtime when it starts a backend: buffers release their
 * memory through it, so the graph layer needs no backend of its own. */
static nd_buffer_memory_hooks memory_hooks;
/* Buffers not dead, newest first, and the descriptors' free list
 * (buffer.h, read by the inline nd_buffer_new). */
nd_buffer *nd_buffer_live_head;
struct nd_freelist *nd_buffer_descriptors;

struct nd_freelist *nd_buffer_arrays_list;

void nd_buffer_set_memory_hooks(const nd_buffer_memory_hooks *hooks) {
    if (hooks)
        memory_hooks = *hooks;
    else
        memset(&memory_hooks, 0, sizeof memory_hooks);
    nd_buffer_arrays_list = memory_hooks.arrays;
    nd_buffer_descriptors = memory_hooks.buffers;
}

nd_buffer *nd_buffer_oom(void) {
    nd_error_set(ND_ERR_OOM, "out of host memory for a buffer descriptor");
    return NULL;
}

int nd_buffer_use_inline_host(nd_buffer *b) {
    if (b->nbytes > sizeof b->inline_host) return 0;
    b->mem[ND_MEMORY_HOST] = b->inline_host;
    return 1;
}

/* Gives a borrowed memory back (drop) and forgets it, so the loops that
 * release the buffer's own copies skip it. */
static void drop_borrow(nd_buffer *b) {
    if (!b->borrow) return;
    int32_t m = b->borrow->memory;
    b->borrow->drop(b);
    b->borrow = NULL;
    b->mem[m] = NULL;
}

static void release_pieces(nd_buffer_pieces **pp) {
    nd_buffer_pieces *p = *pp;
    if (!p) return;
    for (int d = 0; d < ND_MAX_PIECES; d++) {
        if (!p->mem[d]) continue;
        if (memory_hooks.release_piece)
            memory_hooks.release_piece(memory_hooks.ctx, p->mem_memory[d], d, p->mem[d], p->mem_bytes[d]);
        else if (memory_hooks.release)
            memory_hooks.release(memory_hooks.ctx, p->mem_memory[d], p->mem[d], p->mem_bytes[d]);
        else if (p->mem_memory[d] == ND_MEMORY_HOST)
            free(p->mem[d]);
    }
    free(p);
    *pp = NULL;
}

static void release_twin(nd_buffer *b) {
    nd_buffer_twin *t = b->twin;
    release_pieces(&t->pieces);
    void (*release)(void *, int, void *, size_t) =
        memory_hooks.release_twin ? memory_hooks.release_twin : memory_hooks.release;
    if (t->mem && release)
        release(memory_hooks.ctx, t->mem_memory, t->mem, t->mem_bytes);
    else if (t->mem && t->mem_memory == ND_MEMORY_HOST)
        free(t->mem); /* as the buffer's own memory */
    free(t);
    b->twin = NULL;
}

/* What a buffer may hold besides its descriptor: memory, a borrow, a twin,
 * pieces, a grown writer list, a failure, a name. */
__attribute__((noinline)) void nd_buffer_release_held(nd_buffer *b) {
    drop_borrow(b);
    for (int m = 0; m < ND_MAX_MEMORIES; m++) {
        if (!b->mem[m] || b->mem[m] == (void *)b->inline_host) continue;
        if (memory_hooks.release)
            memory_hooks.release(memory_hooks.ctx, m, b->mem[m], b->nbytes);
        else if (m == ND_MEMORY_HOST)
            free(b->mem[m]); /* runtime already gone: host memory is plain */
    }
    if (b->twin) release_twin(b);
    if (b->pieces) release_pieces(&b->pieces);
    if (b->writers != b->inline_writers) free(b->writers);
    if (b->failure) nd_buffer_clear_failure(b);
    if (b->named) nd_name_forget(b);
}

void nd_buffer_free(nd_buffer *b) { nd_buffer_free_inline(b); }

int64_t nd_buffer_release_all(void) {
    int64_t n = 0;
    for (nd_buffer *b = nd_buffer_live_head, *next; b; b = next, n++) {
        next = b->live_next;
        drop_borrow(b);
        for (int m = 0; m < ND_MAX_MEMORIES; m++) {
            if (!b->mem[m] || b->mem[m] == (void *)b->inline_host) {
                b->mem[m] = NULL;
                continue;
            }
            if (memory_hooks.release)
                memory_hooks.release(memory_hooks.ctx, m, b->mem[m], b->nbytes);
            else if (m == ND_MEMORY_HOST)
                free(b->mem[m]);
            b->mem[m] = NULL;
        }
        if (b->twin) release_twin(b);
        release_pieces(&b->pieces);
        b->valid = 0;
        b->n_writers = 0;
        b->dead = 1;
        b->live_prev = b->live_next = NULL;
    }
    nd_buffer_live_head = NULL;
    return n;
}

uint32_t nd_buffer_add_writer(nd_buffer *b, uint32_t node_index) {
    if (b->n_writers == b->cap_writers) {
        uint32_t cap = b->cap_writers * 2;
        uint32_t *w = b->writers == b->inline_writers ? nd_malloc(cap * sizeof *w)
                                                       : nd_realloc(b->writers, cap * sizeof *w);
        if (!w) return UINT32_MAX;
        if (b->writers == b->inline_writers) memcpy(w, b->inline_writers, sizeof b->inline_writers);
        b->writers = w;
        b->cap_writers = cap;
    }
    b->writers[b->n_writers++] = node_index;
    /* Version 0 is the buffer as created (uninitialised or host data); every
     * write makes the next one. */
    return ++b->version;
}

uint32_t nd_buffer_next_write_after(const nd_buffer *b, uint32_t version) {
    int64_t first = (int64_t)b->version - (int64_t)b->n_writers + 1;
    int64_t k = (int64_t)version + 1 - first;
    if (k < 0) k = 0;
    if (k >= (int64_t)b->n_writers) return UINT32_MAX;
    return b->writers[k];
}


/* ------------------------------------------------------------ failures */

static int64_t n_failed_buffers;

/* Without memory for a record: one per status, static. */
static nd_failure static_failures[] = {
    {-1, ND_OK, "no error"},
    {-1, ND_ERR_ARG, "a bad argument (no host memory was left to keep the details)"},
    {-1, ND_ERR_SHAPE, "a shape error (no host memory was left to keep the details)"},
    {-1, ND_ERR_DTYPE, "a dtype error (no host memory was left to keep the details)"},
    {-1, ND_ERR_INDEX, "an index error (no host memory was left to keep the details)"},
    {-1, ND_ERR_OOM, "out of memory (no host memory was left to keep the details)"},
    {-1, ND_ERR_BACKEND, "the backend failed (no host memory was left to keep the details)"},
    {-1, ND_ERR_COMPILE, "a kernel failed to compile (no host memory was left to keep the details)"},
    {-1, ND_ERR_IO, "an I/O error (no host memory was left to keep the details)"},
    {-1, ND_ERR_STATE, "an internal state error (no host memory was left to keep the details)"},
    {-1, ND_ERR_UNSUPPORTED, "an unsupported operation (no host memory was left to keep the details)"},
    {-1, ND_ERR_LINALG, "a linear algebra error (no host memory was left to keep the details)"},
};

nd_failure *nd_failure_new(nd_status status, const char *cause) {
    size_t len = cause ? strlen(cause) : 0;
    nd_failure *f = len ? nd_malloc(sizeof *f + len + 1) : NULL;
    if (!f) {
        unsigned i = (unsigned)status < sizeof static_failures / sizeof static_failures[0] ? (unsigned)status
                                                                                            : ND_ERR_STATE;
        return &static_failures[i];
    }
    char *text = (char *)(f + 1);
    memcpy(text, cause, len + 1);
    f->refs = 1;
    f->status = status;
    f->cause = text;
    return f;
}

void nd_failure_ref(nd_failure *f) {
    if (f && f->refs >= 0) __atomic_add_fetch(&f->refs, 1, __ATOMIC_RELAXED);
}

void nd_failure_unref(nd_failure *f) {
    if (f && f->refs >= 0 && __atomic_sub_fetch(&f->refs, 1, __ATOMIC_ACQ_REL) == 0) free(f);
}

void nd_buffer_fail(nd_buffer *b, nd_failure *f, const char *label) {
    nd_failure_ref(f);
    if (b->failure) nd_failure_unref(b->failure);
    else __atomic_add_fetch(&n_failed_buffers, 1, __ATOMIC_RELAXED);
    b->failure = f;
    b->error = f->status;
    b->failed_label = label;
}

void nd_buffer_clear_failure(nd_buffer *b) {
    if (b->failure) {
        nd_failure_unref(b->failure);
        __atomic_sub_fetch(&n_failed_buffers, 1, __ATOMIC_RELAXED);
    }
    b->failure = NULL;
    b->error = ND_OK;
    b->failed_label = NULL;
}

uint64_t nd_buffers_twin_bytes(void) {
    uint64_t n = 0;
    for (const nd_buffer *b = nd_buffer_live_head; b; b = b->live_next) {
        const nd_buffer_twin *t = b->twin;
        if (!t) continue;
        if (t->mem) n += t->mem_bytes;
        /* a split twin's pieces (a stencil over a split grid) */
        for (int d = 0; t->pieces && d < ND_MAX_PIECES; d++)
            if (t->pieces->mem[d]) n += t->pieces->mem_bytes[d];
    }
    return n;
}

int64_t nd_buffers_failed(void) { return __atomic_load_n(&n_failed_buffers, __ATOMIC_RELAXED); }
