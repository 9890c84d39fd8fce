/* nd_wrap and nd_data: the program's memory as nd arrays, nd's memory
 * handed to the program. A wrap is a buffer whose memory in one memory
 * space is borrowed (graph/buffer.h, nd_buffer_borrow): the scheduler and
 * the backends use it like any buffer's memory, the graph layer never
 * releases it, and `drop` (here) gives it back. An nd_data access is an
 * entry in a small table: while one is open on a buffer, writes into it
 * are refused, and the array is kept alive. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "frontend/interop.h"

/* ------------------------------------------------------------- memories */

/* The device ordinal the CUDA backend runs on: the first of ND_DEVICES
 * (backends/cuda/backend.c's pick_device), else 0. */
static int backend_device(void) {
    const char *d = nd_rt.cfg.devices;
    return d && *d ? atoi(d) : 0;
}

static const char *memory_name(char *buf, size_t cap, nd_memory where) {
    if (where.kind == ND_MEM_HOST) snprintf(buf, cap, "host memory");
    else snprintf(buf, cap, "CUDA device %d memory", where.device);
    return buf;
}

/* nd's memory index (common/memory.h) of `where`, or -1 with the error set. */
static int memory_index(const char *fn, nd_memory where) {
    if (where.kind == ND_MEM_HOST) return ND_MEMORY_HOST;
    if (where.kind != ND_MEM_CUDA) {
        nd_error_set(ND_ERR_ARG, "%s: where.kind = %d is not a memory kind (use ND_HOST_MEMORY or "
                     "ND_CUDA_MEMORY(device))", fn, (int)where.kind);
        return -1;
    }
    if (nd_runtime_memory() == ND_MEMORY_HOST) {
        nd_error_set(ND_ERR_UNSUPPORTED, "%s: CUDA device %d memory cannot be used by the %s backend, "
                     "which computes in host memory (start nd with ND_BACKEND=cuda, or use host memory)",
                     fn, where.device, nd_backend_name());
        return -1;
    }
    if (where.device != backend_device()) {
        nd_error_set(ND_ERR_UNSUPPORTED, "%s: CUDA device %d memory: nd runs on device %d only (set "
                     "ND_DEVICES=%d, or copy the data to device %d)", fn, where.device, backend_device(),
                     where.device, backend_device());
        return -1;
    }
    return nd_runtime_memory();
}

/* ------------------------------------------------------------- nd_wrap */

typedef struct wrap_borrow {
    nd_buffer_borrow base;
    void (*release)(void *ctx);
    void *ctx;
    int staged; /* host memory on a device backend: listed in `staged_wraps` */
} wrap_borrow;

/* Wrapped host buffers whose values the device backend stages: nd_sync
 * copies their new values home. Few; a plain array. */
static nd_buffer **staged_wraps;
static uint32_t n_staged, cap_staged;

/* Copies b's latest value into the program's host memory if it is only
 * elsewhere (a device computed it). */
static nd_status settle_home(nd_buffer *b) {
    if (!b->valid || (b->valid & (1u << ND_MEMORY_HOST)) || b->error != ND_OK || nd_runtime_memory() < 0) return ND_OK;
    return nd_scheduler_make_valid(&nd_rt.sched, b, ND_MEMORY_HOST);
}

static void drop_wrap(nd_buffer *b) {
    wrap_borrow *w = (wrap_borrow *)b->borrow;
    if (w->staged) {
        /* Its handles are gone but a flush wrote it: the value still
         * belongs in the program's memory. */
        if (settle_home(b) != ND_OK)
            nd_logf(1, "nd: the last value of a wrapped host array could not be copied back: %s", nd_last_error());
        for (uint32_t i = 0; i < n_staged; i++)
            if (staged_wraps[i] == b) {
                staged_wraps[i] = staged_wraps[--n_staged];
                break;
            }
    }
    void (*release)(void *) = w->release;
    void *ctx = w->ctx;
    free(w);
    if (release) release(ctx);
}

/* Whether two distinct indices of (shape, strides) reach one element:
 * sorted by |stride|, each axis must step over everything the smaller ones
 * span. (Exact for the layouts programs make; a layout that interleaves
 * axes without overlapping is refused too.) */
static int strides_overlap(int ndim, const int64_t *shape, const int64_t *strides) {
    int64_t s[ND_MAX_DIMS], n[ND_MAX_DIMS];
    int k = 0;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] == 0) return 0;
        if (shape[i] == 1) continue;
        s[k] = strides[i] < 0 ? -strides[i] : strides[i];
        n[k++] = shape[i];
    }
    for (int i = 1; i < k; i++)
        for (int j = i; j > 0 && s[j] < s[j - 1]; j--) {
            int64_t t = s[j]; s[j] = s[j - 1]; s[j - 1] = t;
            t = n[j]; n[j] = n[j - 1]; n[j - 1] = t;
        }
    int64_t span = 1; /* elements the smaller axes reach, from the lowest */
    for (int i = 0; i < k; i++) {
        if (s[i] < span) return 1;
        span = s[i] * (n[i] - 1) + span;
    }
    return 0;
}

nd_array *nd_fe_wrap(const char *fn, void *ptr, nd_memory where, nd_dtype dtype, int ndim, const int64_t *shape,
                     const int64_t *strides, void (*release)(void *ctx), void *ctx, int readonly) {
    if (nd_runtime_ensure() != ND_OK) return NULL;
    size_t nbytes;
    if (nd_fe_check_shape(fn, ndim, shape, dtype, &nbytes)) return NULL; /* checks the dtype first */
    size_t item = nd_dtype_size(dtype);
    if (!ptr) {
        nd_error_set(ND_ERR_ARG, "%s: ptr is NULL (pass the address of element [0, ..., 0] of the "
                     "program's %s array)", fn, nd_dtype_name(dtype));
        return NULL;
    }
    if ((uintptr_t)ptr % item) {
        nd_error_set(ND_ERR_ARG, "%s: ptr %p is not aligned to the %zu bytes of a %s element (nd reads "
                     "elements whole; pass an aligned pointer, or nd_from_host a copy)",
                     fn, ptr, item, nd_dtype_name(dtype));
        return NULL;
    }
    int m = memory_index(fn, where);
    if (m < 0) return NULL;
    int64_t st[ND_MAX_DIMS];
    if (strides) memcpy(st, strides, (size_t)ndim * sizeof *st);
    else nd_contiguous_strides(ndim, shape, st);
    int64_t n = nd_shape_size(ndim, shape);
    /* The span the elements cover, from the lowest (lo <= 0) to the
     * highest element offset. */
    int64_t lo = 0, hi = 0;
    for (int k = 0; k < ndim && n > 0; k++) {
        int64_t reach;
        if (__builtin_mul_overflow(st[k], shape[k] - 1, &reach) || reach > INT64_MAX / 2 / (int64_t)item ||
            reach < -(INT64_MAX / 2 / (int64_t)item)) {
            char s1[200];
            nd_error_set(ND_ERR_ARG, "%s: stride %lld of axis %d of shape %s reaches beyond any memory "
                         "(strides are in elements, not bytes)", fn, (long long)st[k], k,
                         nd_format_shape(s1, sizeof s1, ndim, shape));
            return NULL;
        }
        if (reach < 0) lo += reach;
        else hi += reach;
    }
    if (!readonly && strides_overlap(ndim, shape, st)) {
        char s1[200], s2[200];
        nd_error_set(ND_ERR_ARG, "%s: strides %s (in elements) of shape %s overlap: two indices reach "
                     "one element, which a writable array cannot have (wrap the distinct elements and "
                     "nd_broadcast_to them for a read-only view)", fn,
                     nd_format_shape(s2, sizeof s2, ndim, st), nd_format_shape(s1, sizeof s1, ndim, shape));
        return NULL;
    }
    wrap_borrow *w = nd_malloc(sizeof *w);
    nd_buffer *b = w ? nd_buffer_new(dtype, n > 0 ? (size_t)(hi - lo + 1) * item : 0) : NULL;
    if (!b) {
        free(w);
        nd_error_set(ND_ERR_OOM, "%s: out of host memory for the array's descriptor", fn);
        return NULL;
    }
    int staged = m == ND_MEMORY_HOST && nd_runtime_memory() != ND_MEMORY_HOST;
    if (staged && !nd_grow((void **)&staged_wraps, &cap_staged, n_staged + 1, sizeof *staged_wraps)) {
        free(w);
        nd_buffer_unref(b);
        nd_error_set(ND_ERR_OOM, "%s: out of host memory for the list of wrapped arrays", fn);
        return NULL;
    }
    *w = (wrap_borrow){{m, drop_wrap}, release, ctx, staged};
    b->mem[m] = (char *)ptr + lo * (int64_t)item;
    b->valid = 1u << m;
    b->borrow = &w->base;
    if (staged) staged_wraps[n_staged++] = b;
    nd_array *a = nd_array_new_view(b, dtype, ndim, shape, st, -lo);
    if (!a) w->release = NULL; /* a failed wrap leaves the memory the program's */
    nd_buffer_unref(b);        /* the handle holds the buffer now */
    if (!a) return NULL;
    a->readonly = (uint8_t)readonly;
    return nd_runtime_track(a);
}

nd_array *nd_wrap(void *ptr, nd_memory where, nd_dtype dtype, int ndim, const int64_t *shape,
                  const int64_t *strides, void (*release)(void *ctx), void *ctx) {
    ND_API_GUARD();
    return nd_fe_wrap("nd_wrap", ptr, where, dtype, ndim, shape, strides, release, ctx, ND_WRITABLE);
}

nd_status nd_fe_interop_after_sync(void) {
    nd_status first = ND_OK;
    for (uint32_t i = 0; i < n_staged; i++) {
        nd_buffer *b = staged_wraps[i];
        if (b->n_writers || b->dead) continue;
        nd_status st = settle_home(b);
        if (st != ND_OK && first == ND_OK) first = st;
        /* From here on the program may write its memory (the documented
         * rule): the device's copy is no longer known to match, so the
         * next use stages the host's again. */
        if (st == ND_OK && b->error == ND_OK && (b->valid & (1u << ND_MEMORY_HOST)))
            b->valid = 1u << ND_MEMORY_HOST;
    }
    return first;
}

/* ------------------------------------------------------------- nd_data */

typedef struct {
    nd_array *a;
    const void *owner;
    uint8_t mode;
} data_access;

static data_access *accesses;
static uint32_t n_accesses, cap_accesses;

/* The open accesses to buffer b: how many, and whether one writes. */
static uint32_t accesses_of(const nd_buffer *b, int *writing) {
    uint32_t count = 0;
    *writing = 0;
    for (uint32_t i = 0; i < n_accesses; i++)
        if (accesses[i].a->buf == b) {
            count++;
            if (accesses[i].mode == ND_DATA_READ_WRITE) *writing = 1;
        }
    return count;
}

nd_status nd_fe_data_check_write(const char *fn, const nd_buffer *b) {
    if (n_accesses == 0) return ND_OK;
    int writing;
    uint32_t open = accesses_of(b, &writing);
    if (!open) return ND_OK;
    return nd_error_set(ND_ERR_STATE, "%s: dst's memory is handed out by nd_data (%u access%s open, %s): a "
                        "write recorded now would race with the program (call nd_data_done first, or "
                        "release the DLPack export)", fn, open, open == 1 ? "" : "es",
                        writing ? "read-write" : "read-only");
}

void *nd_fe_data_begin(const char *fn, nd_array *a, nd_memory where, nd_access mode, const void *owner) {
    if (nd_fe_arg(fn, "a", a)) return NULL;
    if (nd_runtime_ensure() != ND_OK) return NULL;
    if (mode != ND_DATA_READ && mode != ND_DATA_READ_WRITE) {
        nd_error_set(ND_ERR_ARG, "%s: mode %d is not an nd_access (use ND_DATA_READ or ND_DATA_READ_WRITE)", fn,
                     (int)mode);
        return NULL;
    }
    int m = memory_index(fn, where);
    if (m < 0) return NULL;
    nd_buffer *b = a->buf;
    if (mode == ND_DATA_READ_WRITE) {
        if (a->weak || a->readonly) {
            nd_error_set(ND_ERR_ARG, "%s: a is read-only (%s), so it cannot be handed out for writing (use "
                         "ND_DATA_READ, or nd_copy it)", fn,
                         a->weak || a->readonly == ND_READONLY_WEAK ? "a weak scalar or a view of one"
                         : a->readonly == ND_READONLY_BROADCAST    ? "a broadcast view: its elements alias"
                         : a->readonly == ND_READONLY_IMAG_OF_REAL ? "nd_imag of a real array: zeros of no array"
                                                                   : "a read-only DLPack import");
            return NULL;
        }
        int writing;
        uint32_t open = accesses_of(b, &writing);
        if (open) {
            nd_error_set(ND_ERR_STATE, "%s: a's memory already has %u nd_data access%s open; read-write needs "
                         "it alone (call nd_data_done on the others first)", fn, open, open == 1 ? "" : "es");
            return NULL;
        }
    } else {
        int writing;
        if (accesses_of(b, &writing) && writing) {
            nd_error_set(ND_ERR_STATE, "%s: a's memory is open read-write by another nd_data (call "
                         "nd_data_done on it first)", fn);
            return NULL;
        }
    }
    if (!nd_grow((void **)&accesses, &cap_accesses, n_accesses + 1, sizeof *accesses)) {
        nd_error_set(ND_ERR_OOM, "%s: out of host memory for the access record", fn);
        return NULL;
    }
    /* Everything recorded before must see the old value (a pending read of
     * it must not see the program's writes), and what a needs must run. */
    nd_status st;
    const int pending = b->n_writers > 0;
    if (mode == ND_DATA_READ_WRITE || pending) st = nd_runtime_sync();
    else st = (nd_runtime_wait(), ND_OK);
    (void)st; /* another array's failure is not a's: only b's counts */
    if (nd_fe_read_ready(fn, a, pending) != ND_OK) return NULL;
    if (!(b->valid & (1u << m)) && (st = nd_scheduler_make_valid(&nd_rt.sched, b, m)) != ND_OK) {
        char cause[600], what[40];
        snprintf(cause, sizeof cause, "%s", nd_last_error());
        nd_error_set(st, "%s: could not make the array valid in %s: %s (the array keeps its value)", fn,
                     memory_name(what, sizeof what, where), cause);
        return NULL;
    }
    if (mode == ND_DATA_READ_WRITE) {
        /* The program's writes are the new value: the other copies are
         * stale, and so is whatever a store chain's twin kept of the old
         * version. */
        b->valid = 1u << m;
        b->version++;
        if (b->twin) b->twin->valid = 0;
    }
    a->refs++;
    accesses[n_accesses++] = (data_access){a, owner, (uint8_t)mode};
    /* An empty array may have no memory at all: still a non-NULL pointer,
     * so NULL always means an error. */
    static _Alignas(16) unsigned char no_elements[16];
    if (!b->mem[m]) return no_elements;
    return (char *)b->mem[m] + a->offset * (int64_t)nd_dtype_size(a->dtype);
}

nd_status nd_fe_data_end(const char *fn, nd_array *a, const void *owner) {
    for (uint32_t i = n_accesses; i-- > 0;) {
        if (accesses[i].a != a || accesses[i].owner != owner) continue;
        memmove(&accesses[i], &accesses[i + 1], (n_accesses - i - 1) * sizeof *accesses);
        n_accesses--;
        nd_fe_release(a);
        return ND_OK;
    }
    if (!fn) return ND_ERR_STATE; /* a DLPack deleter after nd_shutdown ended it */
    return nd_error_set(ND_ERR_STATE, "%s: the array has no nd_data access to end (each nd_data needs one "
                        "nd_data_done; a second one, or one without nd_data, is an error)", fn);
}

void *nd_data(nd_array *a, nd_memory where, nd_access mode) {
    ND_API_GUARD();
    return nd_fe_data_begin("nd_data", a, where, mode, NULL);
}

nd_status nd_data_done(nd_array *a) {
    ND_API_GUARD();
    static const char fn[] = "nd_data_done";
    if (!a) return nd_error_set(ND_ERR_ARG, "%s: a is NULL (pass the array given to nd_data)", fn);
    /* A handle nd_free'd during the access is still live (the access holds
     * a reference); one freed for good is not in the table either way. */
    if (nd_fe_arg_handle(fn, "a", a)) return nd_last_status();
    return nd_fe_data_end(fn, a, NULL);
}

void nd_fe_interop_shutdown(void) {
    while (n_accesses > 0) nd_fe_release(accesses[--n_accesses].a);
    free(accesses);
    accesses = NULL;
    cap_accesses = 0;
}
