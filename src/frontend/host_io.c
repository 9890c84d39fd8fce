/* Host reads and writes: nd_from_host copies at once into host memory from
 * the backend (pinned on CUDA), nd_to_host runs what the array needs and
 * copies the view out row-major. */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <uv.h>

#include "frontend/frontend.h"

/* nd_from_host copies from this size on are split over threads: one core's
 * memcpy moves around 10 GB/s at best, a fraction of what a server's memory
 * (and the page faults of a fresh destination) allow with several, so the
 * 16 GiB import of the suite's h2d_sum took seconds on one thread. Smaller
 * copies are one memcpy: starting threads costs tens of microseconds. */
#define ND_COPY_PARALLEL_MIN ((size_t)64 << 20)
#define ND_COPY_MAX_THREADS 16             /* more add little: memory bandwidth is the limit */
#define ND_COPY_MIN_PART ((size_t)4 << 20) /* no thread gets less */
#define ND_COPY_ALIGN 64                   /* parts start on a cache line of dst */

typedef struct {
    unsigned char *dst;
    const unsigned char *src;
    size_t bytes;
} copy_part;

static void copy_part_run(void *arg) {
    copy_part *p = arg;
    memcpy(p->dst, p->src, p->bytes);
}

/* Threads for a copy: the cores this process may use (ND_NUM_THREADS caps
 * them, as it caps the CPU backend's workers), at most ND_COPY_MAX_THREADS
 * and one per ND_COPY_MIN_PART. */
static int copy_threads(size_t bytes) {
    size_t n = uv_available_parallelism();
    if (nd_rt.cfg.num_threads > 0 && (size_t)nd_rt.cfg.num_threads < n) n = (size_t)nd_rt.cfg.num_threads;
    if (n > ND_COPY_MAX_THREADS) n = ND_COPY_MAX_THREADS;
    if (n > bytes / ND_COPY_MIN_PART) n = bytes / ND_COPY_MIN_PART;
    return n < 1 ? 1 : (int)n;
}

/* memcpy, over several threads for large copies. Each part starts on a
 * ND_COPY_ALIGN boundary of dst, so no two threads write one cache line;
 * the calling thread copies the last part, and a thread that cannot be
 * started has its part copied here too. */
static void copy_parallel(void *dst, const void *src, size_t bytes) {
    int n = bytes >= ND_COPY_PARALLEL_MIN ? copy_threads(bytes) : 1;
    if (n <= 1) {
        memcpy(dst, src, bytes);
        return;
    }
    copy_part parts[ND_COPY_MAX_THREADS];
    uv_thread_t tids[ND_COPY_MAX_THREADS];
    int started[ND_COPY_MAX_THREADS] = {0};
    uintptr_t base = (uintptr_t)dst;
    size_t lo = 0, step = bytes / (size_t)n;
    for (int t = 0; t < n; t++) {
        size_t hi = bytes;
        if (t < n - 1) {
            hi = (((base + step * (size_t)(t + 1)) & ~(uintptr_t)(ND_COPY_ALIGN - 1)) - base);
            if (hi < lo) hi = lo;
        }
        parts[t] = (copy_part){(unsigned char *)dst + lo, (const unsigned char *)src + lo, hi - lo};
        lo = hi;
    }
    for (int t = 0; t < n - 1; t++) started[t] = uv_thread_create(&tids[t], copy_part_run, &parts[t]) == 0;
    for (int t = 0; t < n; t++)
        if (!started[t]) copy_part_run(&parts[t]);
    for (int t = 0; t < n - 1; t++)
        if (started[t]) uv_thread_join(&tids[t]);
}

nd_array *nd_fe_host_array(const char *fn, nd_dtype dtype, int ndim, const int64_t *shape,
                           void **data) {
    *data = NULL;
    size_t nbytes;
    if (nd_fe_check_shape(fn, ndim, shape, dtype, &nbytes)) return NULL;
    nd_buffer *b = nd_buffer_new(dtype, nbytes);
    if (!b) return NULL;
    if (nbytes > 0) {
        void *p = NULL;
        nd_status st = nd_runtime_alloc(ND_MEMORY_HOST, nbytes, &p);
        if (st != ND_OK || !p) {
            nd_buffer_unref(b);
            if (st == ND_OK)
                nd_error_set(ND_ERR_OOM, "%s: out of host memory for %zu bytes", fn, nbytes);
            return NULL;
        }
        b->mem[ND_MEMORY_HOST] = p;
        *data = p;
    }
    b->valid = 1u << ND_MEMORY_HOST;
    nd_array *a = nd_array_new_contiguous(b, dtype, ndim, shape);
    nd_buffer_unref(b);
    if (!a) *data = NULL;
    return a;
}

nd_array *nd_from_host(const void *data, nd_dtype dtype, int ndim, const int64_t *shape) {
    ND_API_GUARD();
    static const char fn[] = "nd_from_host";
    if (nd_runtime_ensure() != ND_OK) return NULL;
    size_t nbytes;
    if (nd_fe_check_shape(fn, ndim, shape, dtype, &nbytes)) return NULL;
    if (!data && nbytes > 0) {
        nd_error_set(ND_ERR_ARG, "%s: data is NULL (pass %zu bytes of %s elements)", fn, nbytes,
                     nd_dtype_name(dtype));
        return NULL;
    }
    void *p;
    nd_array *a = nd_fe_host_array(fn, dtype, ndim, shape, &p);
    if (a && nbytes > 0) copy_parallel(p, data, nbytes);
    return nd_runtime_track(a);
}

/* Row-major copy of a strided view, one element size at a time. */
static void gather(unsigned char *dst, const unsigned char *src, size_t item, int ndim,
                   const int64_t *shape, const int64_t *strides) {
    int64_t idx[ND_MAX_DIMS] = {0};
    int64_t total = nd_shape_size(ndim, shape);
    if (ndim == 0) {
        memcpy(dst, src, item);
        return;
    }
    int last = ndim - 1;
    int64_t inner = shape[last], is = strides[last] * (int64_t)item;
    for (int64_t done = 0; done < total; done += inner) {
        int64_t off = 0;
        for (int k = 0; k < last; k++) off += idx[k] * strides[k];
        const unsigned char *s = src + off * (int64_t)item;
        if (strides[last] == 1) {
            memcpy(dst, s, (size_t)inner * item);
            dst += (size_t)inner * item;
        } else {
            for (int64_t j = 0; j < inner; j++, dst += item, s += is) memcpy(dst, s, item);
        }
        for (int k = last - 1; k >= 0; k--) {
            if (++idx[k] < shape[k]) break;
            idx[k] = 0;
        }
    }
}

/* A read of at most half of a buffer of at least this many bytes, not
 * valid on the host, copies only the bytes the view spans: reading one
 * element of a large device array (nd_item of a view, a convergence check
 * on a corner) copied the whole array and kept a host copy of it. Below
 * it the whole copy is cheap and later reads of the array find it. */
#define READ_SPAN_MIN_BYTES ((size_t)1 << 20)

/* a's elements into dst through a copy of the bytes its view spans
 * (READ_SPAN_MIN_BYTES); ND_ERR_UNSUPPORTED, nothing done, where the whole
 * array is to be made valid on the host instead. */
static nd_status read_span(const char *fn, const nd_array *a, void *dst) {
    const nd_buffer *b = a->buf;
    size_t item = nd_dtype_size(a->dtype);
    int64_t lo = a->offset, hi = a->offset;
    for (int k = 0; k < a->ndim; k++) {
        int64_t reach = (a->shape[k] - 1) * a->strides[k];
        if (reach < 0) lo += reach;
        else hi += reach;
    }
    size_t span_lo = (size_t)lo * item, span_hi = (size_t)(hi + 1) * item;
    if (b->nbytes < READ_SPAN_MIN_BYTES || (span_hi - span_lo) * 2 > b->nbytes) return ND_ERR_UNSUPPORTED;
    /* tmp NULL fails the read (under mpirun after taking part in its
     * broadcasts, which the other ranks wait in). */
    unsigned char *tmp = nd_malloc(span_hi - span_lo);
    nd_status st = nd_scheduler_read_span(&nd_rt.sched, b, span_lo, span_hi, tmp);
    if (st == ND_OK)
        gather(dst, tmp + ((size_t)a->offset * item - span_lo), item, a->ndim, a->shape, a->strides);
    free(tmp);
    if (st != ND_OK && st != ND_ERR_UNSUPPORTED) {
        char cause[600];
        snprintf(cause, sizeof cause, "%s", nd_last_error());
        return nd_error_set(st, "%s: could not copy the array's elements to the host: %s", fn, cause);
    }
    return st;
}

/* nd_to_host, for `fn` (nd_to_host, nd_item): errors name the caller. */
static nd_status to_host(const char *fn, nd_array *a, void *dst, size_t dst_bytes) {
    if (nd_fe_arg(fn, "a", a)) return nd_last_status();
    nd_status st = nd_runtime_ensure();
    if (st != ND_OK) return st;
    int64_t n = nd_shape_size(a->ndim, a->shape);
    size_t item = nd_dtype_size(a->dtype), need = (size_t)n * item;
    if (!dst)
        return nd_error_set(ND_ERR_ARG, "%s: dst is NULL (pass a buffer of at least %zu bytes)",
                            fn, need);
    if (dst_bytes < need)
        return nd_error_set(ND_ERR_ARG, "%s: dst_bytes = %zu is too small for %lld %s elements "
                            "(pass at least %zu bytes)",
                            fn, dst_bytes, (long long)n, nd_dtype_name(a->dtype), need);
    nd_buffer *b = a->buf;
    /* An error elsewhere in the flush does not spoil this array: only its
     * own buffer's failure counts (the flush marks every value it could
     * not compute, and those computed from them). */
    const int pending = b->n_writers > 0;
    if (pending) (void)nd_runtime_sync_read(b);
    else nd_runtime_wait(); /* a flush on the executor thread may be writing it */
    if ((st = nd_fe_read_ready(fn, a, pending)) != ND_OK) return st;
    if (n == 0) return ND_OK;
    if (b->valid == 0 && !nd_buffer_in_pieces(b)) {
        /* Never written (nd_empty): reads as zeros rather than garbage. */
        memset(dst, 0, need);
        return ND_OK;
    }
    if (!(b->valid & (1u << ND_MEMORY_HOST))) {
        st = read_span(fn, a, dst);
        if (st != ND_ERR_UNSUPPORTED) return st;
        st = nd_scheduler_make_valid(&nd_rt.sched, b, ND_MEMORY_HOST);
        if (st != ND_OK) {
            char cause[600], s1[200];
            snprintf(cause, sizeof cause, "%s", nd_last_error());
            return nd_error_set(st, "%s: could not copy the array %s %s to the host: %s (the array keeps its "
                                "value; free arrays you no longer need and read it again)",
                                fn, nd_format_shape(s1, sizeof s1, a->ndim, a->shape), nd_dtype_name(a->dtype),
                                cause);
        }
    }
    const unsigned char *base = (const unsigned char *)b->mem[ND_MEMORY_HOST];
    if (!base)
        return nd_error_set(ND_ERR_STATE, "%s: the array's buffer has no host copy (internal "
                            "error; please report)", fn);
    gather(dst, base + a->offset * (int64_t)item, item, a->ndim, a->shape, a->strides);
    return ND_OK;
}

nd_status nd_to_host(nd_array *a, void *dst, size_t dst_bytes) {
    ND_API_GUARD();
    return to_host("nd_to_host", a, dst, dst_bytes);
}

/* "128 MiB", "512 GiB", "24 bytes". */
static const char *human_bytes(char *buf, size_t cap, size_t n) {
    static const char *units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    double v = (double)n;
    while (v >= 1024 && u < 4) v /= 1024, u++;
    if (u == 0) snprintf(buf, cap, "%zu bytes", n);
    else snprintf(buf, cap, v == (double)(int64_t)v ? "%.0f %s" : "%.1f %s", v, units[u]);
    return buf;
}

nd_status nd_fe_read_ready(const char *fn, const nd_array *a, int pending) {
    const nd_buffer *b = a->buf;
    if (b->error != ND_OK) return nd_fe_report_failure(fn, a);
    if (pending && b->valid == 0 && !nd_buffer_in_pieces(b) && b->nbytes > 0)
        return nd_error_set(ND_ERR_STATE, "%s: the flush left the array's value nowhere (internal error; "
                            "please report)", fn);
    return ND_OK;
}

nd_status nd_fe_report_failure(const char *fn, const nd_array *a) {
    const nd_buffer *b = a->buf;
    char s1[200], size[32];
    human_bytes(size, sizeof size, b->nbytes);
    const char *cause = b->failure ? b->failure->cause : "an earlier error";
    const char *how = b->error == ND_ERR_OOM ? " (free arrays you no longer need, or process smaller blocks; "
                                               "then compute it again)"
                                             : " (compute it again)";
    const char *by = b->failed_label ? b->failed_label : "an operation";
    nd_format_shape(s1, sizeof s1, a->ndim, a->shape);
    if ((size_t)nd_shape_size(a->ndim, a->shape) * nd_dtype_size(a->dtype) >= b->nbytes)
        return nd_error_set(b->error, "%s: array %s %s of %s computed by %s could not be computed: %s%s", fn, s1,
                            nd_dtype_name(a->dtype), size, by, cause, how);
    return nd_error_set(b->error, "%s: array %s %s (a view of %s computed by %s) could not be computed: %s%s", fn,
                        s1, nd_dtype_name(a->dtype), size, by, cause, how);
}

double nd_item(nd_array *a) {
    ND_API_GUARD();
    static const char fn[] = "nd_item";
    if (nd_fe_arg(fn, "a", a)) return NAN;
    int64_t n = nd_shape_size(a->ndim, a->shape);
    if (n != 1) {
        char s[200];
        nd_error_set(ND_ERR_SHAPE, "%s: the array has shape %s and %lld elements; nd_item needs "
                     "exactly one (use nd_view to pick one element)",
                     fn, nd_format_shape(s, sizeof s, a->ndim, a->shape), (long long)n);
        return NAN;
    }
    if (a->weak == ND_WEAK_FLOAT) return a->weak_value.f;
    if (a->weak == ND_WEAK_INT) return (double)a->weak_value.i;
    if (nd_dtype_is_complex(a->dtype)) {
        nd_error_set(ND_ERR_DTYPE, "%s: the array is %s and a double holds one part (use "
                     "nd_item_complex, or nd_real/nd_imag first)", fn, nd_dtype_name(a->dtype));
        return NAN;
    }
    unsigned char tmp[8];
    if (to_host(fn, a, tmp, sizeof tmp) != ND_OK) return NAN;
    return nd_load_double(tmp, a->dtype);
}

nd_status nd_item_complex(nd_array *a, double *re, double *im) {
    ND_API_GUARD();
    static const char fn[] = "nd_item_complex";
    if (re) *re = NAN;
    if (im) *im = NAN;
    if (!re || !im)
        return nd_error_set(ND_ERR_ARG, "%s: re or im is NULL (pass two doubles to fill)", fn);
    if (nd_fe_arg(fn, "a", a)) return nd_last_status();
    int64_t n = nd_shape_size(a->ndim, a->shape);
    if (n != 1) {
        char s[200];
        return nd_error_set(ND_ERR_SHAPE, "%s: the array has shape %s and %lld elements; it needs "
                            "exactly one (use nd_view to pick one element)",
                            fn, nd_format_shape(s, sizeof s, a->ndim, a->shape), (long long)n);
    }
    if (a->weak) {
        *re = a->weak == ND_WEAK_FLOAT ? a->weak_value.f : (double)a->weak_value.i;
        *im = 0;
        return ND_OK;
    }
    unsigned char tmp[16];
    nd_status st = to_host(fn, a, tmp, nd_dtype_size(a->dtype));
    if (st != ND_OK) return st;
    nd_load_complex(tmp, a->dtype, re, im); /* a real dtype: imaginary part 0 */
    return ND_OK;
}
