/* Buffers: the storage behind arrays. Arrays are views of buffers. A buffer
 * is written by pending graph nodes (its producer, then region stores); each
 * write makes a new version. Readers name the version they read, so the
 * scheduler can order writes after reads (WAR) and writes after writes (WAW),
 * and can tell when a fused kernel would read a version that no longer
 * exists at the point it runs.
 *
 * A buffer may hold copies in several memories (0 = host, 1.. = devices);
 * `valid` says which hold the current materialised version, so reading a
 * result twice copies it once. */
#ifndef ND_GRAPH_BUFFER_H
#define ND_GRAPH_BUFFER_H

#include <stddef.h>
#include <stdint.h>

#include "common/freelist.h"
#include "common/memory.h"
#include "nd.h"

/* A buffer (or twin) split in row blocks over several devices
 * (scheduler/partition.c), kept after the flush that split it: per device
 * one piece holding rows [p0, p0 + pn) of `rows` rows of `row_bytes`
 * (the rows the device owns and ghost rows around them). The planner sets
 * the layout and `valid` when it submits a plan (the flush before has run
 * by then); the executor allocates `mem` on first use through the
 * backend's alloc_piece (backends/backend.h). Memory is kept while the
 * buffer lives (a later split of another layout reallocates it). */
typedef struct nd_buffer_pieces {
    /* The pieces hold the buffer's value as of `version` (a twin's: what
     * the twin holds): every owned row; ghost rows may hold an older one. */
    uint8_t valid;
    /* ... and the whole memory does not (a reader gathers first). */
    uint8_t whole_stale;
    /* ... and the ghost rows hold it too (no halo before reading them:
     * a matmul's replica of a small B is all ghost rows). */
    uint8_t ghosts_fresh;
    uint32_t version;
    int32_t n_dev;
    size_t row_bytes;
    int64_t rows;
    int64_t p0[ND_MAX_PIECES], pn[ND_MAX_PIECES];
    void *mem[ND_MAX_PIECES];
    size_t mem_bytes[ND_MAX_PIECES];
    int32_t mem_memory[ND_MAX_PIECES];
} nd_buffer_pieces;

/* A buffer's twin: memory of the buffer's size that a chain of in-place
 * region stores (a recorded stencil loop) alternates with
 * (scheduler/store_chains.c). It outlives the flush, so that the chain's
 * continuation in the next flush finds the elements outside the region
 * already there and copies nothing. The planner sets the fields below on
 * the recording thread; the executor allocates `mem` on first use. */
typedef struct nd_buffer_twin {
    void *mem;         /* NULL until a plan binds it (a block of the
                          scheduler's pool of temporaries) */
    int32_t mem_memory; /* where mem is */
    size_t mem_bytes;   /* its size (at least the buffer's) */
    /* When valid, mem holds the buffer's elements outside the region
     * (offset + sum_k i_k * strides[k], 0 <= i_k < shape[k]) as they are in
     * `version`; of use while that version is the buffer's materialised
     * one (nd_buffer_twin_at). */
    int valid;
    uint32_t version;
    int ndim;
    int64_t offset;
    int64_t shape[ND_MAX_DIMS], strides[ND_MAX_DIMS];
    /* The twin split over several devices (NULL until a plan splits it);
     * while its `valid`, the twin's value is there (mem may be stale). */
    nd_buffer_pieces *pieces;
} nd_buffer_twin;

/* Why a buffer's value could not be produced: the status, the cause
 * ("cpu backend: out of host memory allocating 128 MiB for ...") and the
 * recording function of the value that failed (static). Shared by every
 * buffer one failure hit (reference counted, atomically: the executor
 * thread sets failures, the recording thread frees buffers). */
typedef struct nd_failure {
    int refs; /* < 0: static, never freed */
    nd_status status;
    const char *cause;
} nd_failure;

/* A record of `status` with `cause` copied; never NULL (without memory for
 * it, a static record that says so). The caller holds one reference. */
nd_failure *nd_failure_new(nd_status status, const char *cause);
void nd_failure_ref(nd_failure *f);
void nd_failure_unref(nd_failure *f);

/* Memory a buffer borrows from the program (nd_wrap, nd_from_dlpack):
 * mem[memory] is the program's pointer, never released through the memory
 * hooks nor pooled. When the buffer gives its memory up (last reference,
 * or nd_buffer_release_all) `drop` is called once, before the buffer's
 * other copies are released (so it can copy the value home from one of
 * them), and must free the borrow; the graph layer then forgets it. */
struct nd_buffer;
typedef struct nd_buffer_borrow {
    int32_t memory;
    void (*drop)(struct nd_buffer *b);
} nd_buffer_borrow;

typedef struct nd_buffer {
    int64_t refs;    /* arrays + pending node references; freed at 0 */
    int64_t handles; /* nd_array handles viewing it: "can a user reach it?" */
    size_t nbytes;
    nd_dtype dtype;
    /* Its memory was released by nd_shutdown: handles that outlived the
     * runtime keep the descriptor (nd_free releases it) but every op
     * rejects them (frontend, nd_fe_arg). */
    uint8_t dead;
    /* The program named it (nd_set_name): its name is in common/names.h's
     * table under its address, which it leaves when freed. */
    uint8_t named;
    void *mem[ND_MAX_MEMORIES]; /* allocation per memory, NULL if none */
    uint32_t valid;             /* bit m: mem[m] holds the materialised version */
    uint32_t version;           /* latest recorded version */
    /* Pending writers, oldest first: writer k made version
     * (version - n_writers + 1 + k). Versions <= version - n_writers are
     * materialised (or the buffer was never written: nd_empty). */
    uint32_t n_writers, cap_writers;
    uint32_t *writers; /* node indices in the pending graph */
    /* Most buffers are written once or twice per flush: those writers live
     * here, so recording an op needs no allocation for them. */
    uint32_t inline_writers[2];
    /* Host storage for values of at most 16 bytes (weak scalars): making
     * one then allocates nothing. nd_buffer_use_inline_host points mem[0]
     * here; it is never released through the memory hooks. */
    _Alignas(16) unsigned char inline_host[16];
    nd_status error;   /* a device error prevented the current value */
    /* Why (NULL when error is ND_OK), and the recording function of the
     * value that failed (static). Set by nd_buffer_fail; a later flush
     * that writes the whole buffer clears them (mark_produced). */
    nd_failure *failure;
    const char *failed_label;
    nd_buffer_twin *twin; /* NULL until a store chain keeps one */
    nd_buffer_borrow *borrow; /* NULL unless its memory is the program's */
    /* Scheduler scratch, valid while stamp == the current flush's stamp. */
    uint64_t stamp;
    int32_t slot;
    /* Every buffer not dead is on one list, so nd_shutdown can release the
     * memory of those that handles still reach (nd_buffer_release_all). */
    struct nd_buffer *live_prev, *live_next;
    /* Its value split over several devices (NULL until a plan splits it):
     * nd_buffer_in_pieces. */
    nd_buffer_pieces *pieces;
} nd_buffer;

/* Whether the program can see b's latest version: through a handle, or
 * because the memory is the program's own (a write into a wrapped array
 * is never dead work, even once its handles are gone). */
static inline int nd_buffer_visible(const nd_buffer *b) { return b->handles > 0 || b->borrow != NULL; }

/* b's twin if it holds the elements outside its region as of `version`
 * (the region and the memory are the caller's to check), else NULL. Read
 * on the planning thread, after the plan that wrote the twin has run. */
static inline const nd_buffer_twin *nd_buffer_twin_at(const nd_buffer *b, uint32_t version) {
    const nd_buffer_twin *t = b->twin;
    return t && t->valid && (t->mem || (t->pieces && t->pieces->valid)) && t->version == version ? t : NULL;
}

/* b's pieces if they hold its materialised version, else NULL. */
static inline const nd_buffer_pieces *nd_buffer_pieces_at(const nd_buffer *b) {
    const nd_buffer_pieces *p = b->pieces;
    return p && p->valid && p->version == b->version - b->n_writers ? p : NULL;
}

/* Whether b's materialised value is only in its pieces: a reader of the
 * whole array gathers it first (nd_scheduler_make_valid). b->valid is 0
 * then, which elsewhere means "never written". */
static inline int nd_buffer_in_pieces(const nd_buffer *b) {
    const nd_buffer_pieces *p = nd_buffer_pieces_at(b);
    return p && p->whole_stale;
}

/* Buffers not dead, newest first (buffer.c; API lock: buffers are made
 * and dropped on user threads only), and the free list descriptors are
 * recycled through (nd_buffer_memory_hooks' buffers, or NULL). Read by
 * nd_buffer_new, inline. */
extern struct nd_buffer *nd_buffer_live_head __attribute__((visibility("hidden")));
extern struct nd_freelist *nd_buffer_descriptors __attribute__((visibility("hidden")));
/* nd_buffer_new without its descriptor: NULL + ND_ERR_OOM. */
struct nd_buffer *nd_buffer_oom(void) __attribute__((visibility("hidden")));

/* A buffer of `nbytes` with no memory yet (allocated when first used).
 * refs = 1 (the caller's). NULL + ND_ERR_OOM error on failure. Inline:
 * every recorded op makes one, and as a call it cost a tenth of the op. */
static inline __attribute__((always_inline)) nd_buffer *nd_buffer_new(nd_dtype dtype, size_t nbytes) {
    nd_buffer *b = nd_freelist_take(nd_buffer_descriptors, sizeof *b);
    if (__builtin_expect(!b, 0)) return nd_buffer_oom();
    /* Field by field, not memset or a compound literal: GCC makes those a
     * `rep stos`, whose start-up (~13 ns) was a fifth of recording an op.
     * inline_writers and inline_host are read only after being written. */
    _Static_assert(sizeof(void *) != 8 || sizeof(nd_buffer) == 192,
                   "a new nd_buffer field: initialise it here");
    b->refs = 1;
    b->handles = 0;
    b->nbytes = nbytes;
    b->dtype = dtype;
    b->dead = 0;
    b->named = 0;
    for (int m = 0; m < ND_MAX_MEMORIES; m++) b->mem[m] = NULL;
    b->valid = 0;
    b->version = 0;
    b->n_writers = 0;
    b->cap_writers = 2;
    b->writers = b->inline_writers;
    b->error = ND_OK;
    b->failure = NULL;
    b->failed_label = NULL;
    b->twin = NULL;
    b->borrow = NULL;
    b->stamp = 0;
    b->slot = -1;
    b->live_prev = NULL;
    b->pieces = NULL;
    nd_buffer *head = nd_buffer_live_head;
    b->live_next = head;
    if (head) head->live_prev = b;
    nd_buffer_live_head = b;
    return b;
}
/* References are taken and dropped on the recording thread only (the
 * executor thread never does: nd_scheduler_finish runs on the submitting
 * thread), so they are plain counts; a flush of thousands of nodes takes
 * several per node. */
static inline void nd_buffer_ref(nd_buffer *b) { b->refs++; }
/* Drops a reference; at 0 frees every memory copy through the runtime's
 * memory release hook and the struct (nd_buffer_free). Inline: a flush
 * drops several references per node, and most of them are not the last. */
void nd_buffer_free(nd_buffer *b);
static inline void nd_buffer_unref(nd_buffer *b) {
    if (b && --b->refs <= 0) nd_buffer_free(b);
}
/* What a buffer may hold besides its descriptor (memory, a borrow, a
 * twin, pieces, a grown writer list, a failure, a name), released. */
void nd_buffer_release_held(nd_buffer *b) __attribute__((visibility("hidden")));
/* nd_buffer_free's body, inline where the last reference is known to go
 * (graph.h's nd_graph_drop_dead_fast: a value freed as soon as it was
 * recorded, which never had memory nor anything else). */
static inline __attribute__((always_inline)) void nd_buffer_free_inline(nd_buffer *b) {
    if (!b->dead) {
        if (b->live_prev) b->live_prev->live_next = b->live_next;
        else nd_buffer_live_head = b->live_next;
        if (b->live_next) b->live_next->live_prev = b->live_prev;
    }
    /* Most buffers freed while recording never had memory nor anything
     * else (a value dead before any flush): one test for all of it, where
     * a test each was a third of the release. */
    _Static_assert(ND_MAX_MEMORIES == 4, "the test below names every memory");
    const uintptr_t held = (uintptr_t)b->mem[0] | (uintptr_t)b->mem[1] | (uintptr_t)b->mem[2] |
                           (uintptr_t)b->mem[3] | (uintptr_t)b->borrow | (uintptr_t)b->twin |
                           (uintptr_t)b->pieces | (uintptr_t)b->failure | (uintptr_t)b->named |
                           ((uintptr_t)b->writers ^ (uintptr_t)b->inline_writers);
    if (__builtin_expect(held != 0, 0)) nd_buffer_release_held(b);
    nd_freelist_give(nd_buffer_descriptors, b);
}
/* Points mem[host] at the buffer's own inline storage (nbytes <= 16);
 * returns 0 when the buffer is too large for it. */
int nd_buffer_use_inline_host(nd_buffer *b);
/* Records that pending node `node_index` writes a new version; returns it. */
uint32_t nd_buffer_add_writer(nd_buffer *b, uint32_t node_index);
/* Pending writer node index of version v, or -1 if v is materialised. */
static inline int64_t nd_buffer_writer_of(const nd_buffer *b, uint32_t version) {
    int64_t first = (int64_t)b->version - (int64_t)b->n_writers + 1;
    if ((int64_t)version < first) return -1;
    return b->writers[version - first];
}
/* Index of the first pending write after version v (the end of v's
 * lifetime in record order), or UINT32_MAX if v is the latest version. */
uint32_t nd_buffer_next_write_after(const nd_buffer *b, uint32_t version);
/* Marks b's current value as not produced: `f` (a reference is taken) and
 * the recording function `label` of the value that failed. */
void nd_buffer_fail(nd_buffer *b, nd_failure *f, const char *label);
/* b's value is produced: forgets any failure. */
void nd_buffer_clear_failure(nd_buffer *b);
/* How many live buffers carry a failure (the planner skips looking for
 * failed inputs while there are none). */
int64_t nd_buffers_failed(void);
/* The bytes of every live buffer's twin memory (nd_stats). */
uint64_t nd_buffers_twin_bytes(void);
/* After a flush: every pending version is materialised (or dropped). */
static inline void nd_buffer_clear_writers(nd_buffer *b) { b->n_writers = 0; }

/* Where buffer memory comes from: set by the runtime to the active backend,
 * so that the graph layer never calls a backend itself; and the runtime's
 * free lists that buffer descriptors and array handles are recycled
 * through (NULL: plain malloc/free). */
typedef struct {
    void (*release)(void *ctx, int memory, void *ptr, size_t nbytes);
    /* A twin's memory, which came from the scheduler's pool of
     * temporaries and goes back there (NULL: `release`). */
    void (*release_twin)(void *ctx, int memory, void *ptr, size_t nbytes);
    /* A piece of a split array on logical device `device` (NULL:
     * `release`). */
    void (*release_piece)(void *ctx, int memory, int device, void *ptr, size_t nbytes);
    void *ctx;
    struct nd_freelist *buffers;
    struct nd_freelist *arrays;
} nd_buffer_memory_hooks;
void nd_buffer_set_memory_hooks(const nd_buffer_memory_hooks *hooks);
/* For nd_shutdown, with the backend still there and no flush pending:
 * releases the memory (and twin) of every buffer still alive and marks it
 * dead; the descriptors stay for the handles that reach them and go when
 * their last reference does. Returns how many there were. */
int64_t nd_buffer_release_all(void);
/* The free list for nd_array handles (array.c), or NULL: the hooks' arrays,
 * read directly (every handle made and freed reads it; a call cost more
 * than the read). */
extern struct nd_freelist *nd_buffer_arrays_list __attribute__((visibility("hidden")));
static inline struct nd_freelist *nd_buffer_hooks_arrays(void) { return nd_buffer_arrays_list; }

#endif
