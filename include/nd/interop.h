/*
 * nd/interop.h — Using nd inside an existing C/CUDA program: wrapping the
 * program's memory without a copy, handing nd's memory out, DLPack.
 * Part of nd.h: include <nd.h>, not this file.
 *
 * Memory rule (for nd_wrap, nd_data and DLPack alike): nd works on memory
 * it borrows or lends asynchronously, like every nd operation. The
 * program may touch a wrapped buffer again once nd_sync() returned (every
 * operation recorded before it has run and, on the CUDA backend, the
 * values of wrapped host memory were copied back into it), or between
 * nd_data() and nd_data_done() on an array viewing it. Outside those
 * windows the memory belongs to nd: a write by the program may be lost or
 * seen half way, as with any memory a library is working on.
 */
#ifndef ND_INTEROP_H
#define ND_INTEROP_H

#include "dlpack.h"
#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Wraps memory the program owns as an nd array, without copying: nd reads
 * and writes `ptr` in place. `where` says whose memory it is: host memory
 * (ND_HOST_MEMORY) or CUDA device memory (ND_CUDA_MEMORY(k), the device the
 * CUDA backend runs on). `strides` are in elements, like nd_strides and
 * DLPack (NumPy's byte strides divided by the item size), may be negative
 * (ptr is then the address of element [0, ..., 0], as in NumPy) and NULL
 * means row-major contiguous. The result is an ordinary array: views,
 * lazy ops, nd_assign into it (written in place) and fusion work as usual.
 *
 * Where the work runs: on the CPU backend host memory is used directly. On
 * the CUDA backend a device pointer is used directly (no copy); a host
 * pointer is staged as nd_from_host's memory is: its span (from its lowest
 * to its highest element) is copied to the device when first read there,
 * and the new value is copied back into the program's memory at the next
 * nd_sync (or nd_data in host memory) after an op wrote it. Elements
 * between the array's strided elements are copied along and written back
 * unchanged.
 *
 * release(ctx) (optional: NULL means the program frees the memory itself,
 * after nd_sync and once it freed the last handle) is called exactly once,
 * on the thread that makes nd drop its last reference: the nd_free of the
 * last handle (views included) if no recorded work needs the memory any
 * more, else at the end of the flush that runs that work; or nd_shutdown.
 * nd never frees, pools or reallocates a wrapped pointer. A handle used
 * after that is rejected (a freed handle: ND_ERR_ARG; after nd_shutdown:
 * ND_ERR_STATE). A write recorded into a wrapped array is never dropped as
 * dead work, even if the program frees the handle before nd_sync.
 *
 * Errors (each message names nd_wrap): ptr NULL or not aligned to the
 * dtype's size (ND_ERR_ARG); bad dtype (ND_ERR_DTYPE); bad ndim or shape
 * (as nd_from_host); strides whose elements overlap (two indices reach one
 * element: use nd_broadcast_to on a wrap of the distinct elements for a
 * read-only broadcast, ND_ERR_ARG); device memory on the CPU backend, or
 * on a device the CUDA backend does not run on (ND_ERR_UNSUPPORTED). On
 * error release is not called: the memory stays the program's. */
ND_API nd_array *nd_wrap(void *ptr, nd_memory where, nd_dtype dtype, int ndim, const int64_t *shape,
                         const int64_t *strides, void (*release)(void *ctx), void *ctx);

/* How a program uses the pointer nd_data returns. (The names differ from
 * the plan's internal access bits, which are not public.) */
typedef enum {
    ND_DATA_READ = 1,      /* the program only reads */
    ND_DATA_READ_WRITE = 3 /* the program may write: nd's later ops see it */
} nd_access;

/* Hands a pointer to a's elements out, without a copy when its value is
 * already in `where`: runs what a depends on (like nd_to_host), makes a's
 * buffer valid in `where` (one copy from the memory it is in, counted in
 * nd_stats.bytes_copied, when it is not) and returns the address of
 * element [0, ..., 0] in the array's own layout: the strides are
 * nd_strides(a), in elements (row-major for arrays nd made, any layout
 * for views and wraps). Use nd_copy first for a contiguous copy of a view.
 * A 0-size array gives a non-NULL pointer that must not be dereferenced.
 *
 * The access lasts until nd_data_done(a), which every nd_data needs once
 * (they nest: several reads of one array at once are fine). Meanwhile nd
 * holds a reference to a (nd_free(a) does not end the access) and records
 * no write into a's buffer: nd_assign/nd_fill into a or any view of its
 * memory fail with ND_ERR_STATE naming nd_data. ND_DATA_READ_WRITE makes
 * `where` the only valid copy (copies in other memories are forgotten) and
 * gives the buffer a new version, so every later op, and nd_to_host, sees
 * what the program wrote; read-write needs a writable array (not a
 * broadcast view or a weak scalar: ND_ERR_ARG) and is exclusive (ND_ERR_STATE
 * while another access to the buffer is open). Ops may be recorded reading
 * a during the access; they run at the next flush and then read what the
 * program has written by then, so finish writing before nd_sync/nd_flush.
 *
 * Errors name nd_data: NULL or freed a, an invalid `where` or `mode`
 * (ND_ERR_ARG), device memory on the CPU backend (ND_ERR_UNSUPPORTED), a
 * failed value (as nd_to_host), out of memory for the copy. */
ND_API void *nd_data(nd_array *a, nd_memory where, nd_access mode);
/* Ends the access of the last nd_data(a) (read-write ones first). Without
 * an open access to a: ND_ERR_STATE ("nd_data_done: ... no nd_data to
 * end"), nothing changes. */
ND_API nd_status nd_data_done(nd_array *a);

/* Exports a as a DLPack 1.x tensor without copying: an nd_data(a, where,
 * mode) access that the consumer ends by calling the tensor's deleter
 * (once, from any thread; nd's lock is taken). ND_DATA_READ sets
 * DLPACK_FLAG_BITMASK_READ_ONLY (the consumer must not write); so does a
 * read-only a (a broadcast view). The tensor's device is kDLCPU for host
 * memory and kDLCUDA with the device ordinal for device memory, its
 * strides are a's (in elements, always given), byte_offset 0, data the
 * address of element [0, ..., 0]. Every nd dtype has a DLPack code (bool
 * is kDLBool with 8 bits, bfloat16 kDLBfloat). Returns NULL with the
 * error set (as nd_data's, naming nd_to_dlpack). */
ND_API DLManagedTensorVersioned *nd_to_dlpack(nd_array *a, nd_memory where, nd_access mode);

/* Imports a DLPack 1.x tensor without copying (as nd_wrap of its
 * data + byte_offset, shape and strides, NULL strides meaning row-major):
 * on success nd owns `t` and calls t->deleter(t) once when it no longer
 * references the memory (see nd_wrap's release). A tensor flagged
 * DLPACK_FLAG_BITMASK_READ_ONLY gives a read-only array (nd_assign into it
 * fails; it may have overlapping strides). kDLCPU and kDLCUDAHost are host
 * memory, kDLCUDA device memory of the device the CUDA backend runs on.
 * On failure NULL is returned and t is left untouched: the caller still
 * owns it and calls its deleter. Errors name nd_from_dlpack: NULL t, a
 * major version other than 1 (ND_ERR_UNSUPPORTED); a dtype nd cannot hold
 * (complex, float8/6/4, opaque, lanes > 1, an integer width nd lacks:
 * ND_ERR_DTYPE); another device type (ND_ERR_UNSUPPORTED); and nd_wrap's
 * errors. */
ND_API nd_array *nd_from_dlpack(DLManagedTensorVersioned *t);

#ifdef __cplusplus
}
#endif
#endif /* ND_INTEROP_H */
