/* numpy.fft's transforms (common/lib_fft.h) on CUDA, through cuFFT
 * (loaded on first use: nd_cuda_load_cufft).
 *
 * Plans are cached for the process by (device, kind, precision, the
 * transformed lengths, batch): the operands are packed, so that is the
 * whole layout. A plan is made when its step is prepared (the workspace
 * query, outside any CUDA graph capture), with automatic allocation off:
 * its work area is part of the routine's workspace, nd's own device
 * memory, set with cufftSetWorkArea on every run together with the step's
 * stream. So a run only enqueues cuFFT's kernels, which a CUDA graph
 * captures like nd's own, and no plan creation or allocation ever happens
 * in the replayed work.
 *
 * C2R: cuFFT overwrites the input of a complex-to-real transform, and
 * NumPy ignores the imaginary parts of the first and (even n) the middle
 * element, which cuFFT does not promise. The run copies the input into
 * the workspace, zeroes those parts there (cudaMemset2DAsync, one column
 * per row) and transforms the copy. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cuda/cuda_internal.h"
#include "backends/cuda/lib_fft.h"
#include "common/alloc.h"
#include "common/error.h"
#include "common/lib_fft.h"

typedef struct fft_plan {
    int dev, kind, f64, rank;
    long long n[ND_LIB_FFT_MAX_RANK], batch;
    cufftHandle handle;
    size_t work; /* bytes */
    struct fft_plan *next;
} fft_plan;

/* The cache, and the lock that also serialises binding a plan to a stream
 * and a work area with its launch (a plan may be shared by two steps). */
static pthread_mutex_t plans_lock = PTHREAD_MUTEX_INITIALIZER;
static fft_plan *plans;

static int fft_failed(cufftResult r, const char *what) {
    nd_error_set(r == CUFFT_ALLOC_FAILED ? ND_ERR_OOM : ND_ERR_BACKEND, "cuda: cuFFT %s failed (status %d)", what,
                 (int)r);
    return ND_CUDA_LIB_ND_ERROR;
}

/* The geometry of a call: the real-side lengths of the rank axes and the
 * batch. */
static int geometry(const nd_user_desc *u, const nd_kernel_arg *args, fft_plan *key) {
    const nd_kernel_arg *in = &args[0], *out = &args[1];
    memset(key, 0, sizeof *key);
    key->kind = (int)u->lib_args.v[ND_LIB_FFT_KIND].i;
    key->rank = (int)u->lib_args.v[ND_LIB_FFT_RANK].i;
    nd_dtype real = key->kind == ND_LIB_FFT_C2R ? (nd_dtype)out->dtype : (nd_dtype)in->dtype;
    if (real == ND_FLOAT64 || real == ND_COMPLEX128) key->f64 = 1;
    else if (real != ND_FLOAT32 && real != ND_COMPLEX64) return (int)cudaErrorNotSupported;
    if (key->rank < 1 || key->rank > ND_LIB_FFT_MAX_RANK || out->ndim < key->rank) return (int)cudaErrorNotSupported;
    const nd_kernel_arg *real_side = key->kind == ND_LIB_FFT_C2R ? out : in;
    for (int k = 0; k < key->rank; k++) key->n[k] = real_side->shape[real_side->ndim - key->rank + k];
    key->batch = 1;
    for (int d = 0; d < out->ndim - key->rank; d++) key->batch *= out->shape[d];
    int e = (int)cudaGetDevice(&key->dev);
    return e;
}

static cufftType type_of(const fft_plan *p) {
    switch (p->kind) {
    case ND_LIB_FFT_R2C: return p->f64 ? CUFFT_D2Z : CUFFT_R2C;
    case ND_LIB_FFT_C2R: return p->f64 ? CUFFT_Z2D : CUFFT_C2R;
    default: return p->f64 ? CUFFT_Z2Z : CUFFT_C2C;
    }
}

/* The cached plan for key, made when missing. Called with the lock held. */
static int plan_for(const fft_plan *key, fft_plan **out) {
    for (fft_plan *p = plans; p; p = p->next)
        if (p->dev == key->dev && p->kind == key->kind && p->f64 == key->f64 && p->rank == key->rank &&
            p->batch == key->batch && !memcmp(p->n, key->n, sizeof p->n)) {
            *out = p;
            return 0;
        }
    fft_plan *p = nd_malloc(sizeof *p);
    if (!p) {
        nd_error_set(ND_ERR_OOM, "cuda: out of host memory for a cuFFT plan");
        return ND_CUDA_LIB_ND_ERROR;
    }
    *p = *key;
    cufftResult r = cufftCreate(&p->handle);
    if (r != CUFFT_SUCCESS) {
        free(p);
        return fft_failed(r, "cufftCreate");
    }
    r = cufftSetAutoAllocation(p->handle, 0);
    if (r == CUFFT_SUCCESS)
        r = cufftMakePlanMany64(p->handle, p->rank, p->n, NULL, 1, 0, NULL, 1, 0, type_of(p), p->batch, &p->work);
    if (r != CUFFT_SUCCESS) {
        cufftDestroy(p->handle);
        free(p);
        return fft_failed(r, "plan creation (cufftMakePlanMany64)");
    }
    p->next = plans;
    plans = p;
    *out = p;
    return 0;
}

static size_t up(size_t b) { return (b + 255) & ~(size_t)255; }

/* C2R's copy of the input, before cuFFT's work area. */
static size_t copy_bytes(const fft_plan *p, const nd_kernel_arg *in) {
    return p->kind == ND_LIB_FFT_C2R ? up((size_t)in->size * nd_dtype_size((nd_dtype)in->dtype)) : 0;
}

int nd_cuda_fft_workspace(const nd_user_desc *u, const nd_kernel_arg *args, size_t *bytes) {
    if (nd_cuda_load_cufft() != ND_OK) return ND_CUDA_LIB_ND_ERROR;
    fft_plan key, *p;
    int e = geometry(u, args, &key);
    if (e) return e;
    *bytes = 0;
    if (args[1].size == 0) return 0;
    pthread_mutex_lock(&plans_lock);
    e = plan_for(&key, &p);
    if (!e) *bytes = copy_bytes(p, &args[0]) + p->work;
    pthread_mutex_unlock(&plans_lock);
    return e;
}

int nd_cuda_fft_run(const nd_user_desc *u, const nd_kernel_arg *args, void *ws, size_t ws_bytes, cudaStream_t s) {
    const nd_kernel_arg *in = &args[0], *out = &args[1];
    fft_plan key, *p;
    int e = geometry(u, args, &key);
    if (e || out->size == 0) return e;
    pthread_mutex_lock(&plans_lock);
    e = plan_for(&key, &p);
    size_t copy = e ? 0 : copy_bytes(p, in);
    if (!e && ws_bytes < copy + p->work) e = (int)cudaErrorInvalidValue; /* prepared for another geometry */
    cufftResult r = CUFFT_SUCCESS;
    if (!e) r = cufftSetStream(p->handle, s);
    if (!e && r == CUFFT_SUCCESS) r = cufftSetWorkArea(p->handle, (char *)ws + copy);
    if (!e && r != CUFFT_SUCCESS) e = fft_failed(r, "binding the stream and work area");
    void *src = in->data;
    if (!e && p->kind == ND_LIB_FFT_C2R) {
        /* the copy cuFFT may overwrite, with Im x[0] and (even n) Im x[n/2] zeroed */
        size_t es = nd_dtype_size((nd_dtype)in->dtype), part = es / 2;
        int64_t m = in->shape[in->ndim - 1], rows = m ? in->size / m : 0;
        e = (int)cudaMemcpyAsync(ws, in->data, (size_t)in->size * es, cudaMemcpyDeviceToDevice, s);
        if (!e) e = (int)cudaMemset2DAsync((char *)ws + part, (size_t)m * es, 0, part, (size_t)rows, s);
        if (!e && p->n[0] % 2 == 0 && p->n[0] / 2 < m)
            e = (int)cudaMemset2DAsync((char *)ws + (size_t)(p->n[0] / 2) * es + part, (size_t)m * es, 0, part,
                                       (size_t)rows, s);
        src = ws;
    }
    if (!e) {
        int fwd = u->lib_args.v[ND_LIB_FFT_SIGN].i < 0;
        switch (type_of(p)) {
        case CUFFT_C2C:
            r = cufftExecC2C(p->handle, src, out->data, fwd ? CUFFT_FORWARD : CUFFT_INVERSE);
            break;
        case CUFFT_Z2Z:
            r = cufftExecZ2Z(p->handle, src, out->data, fwd ? CUFFT_FORWARD : CUFFT_INVERSE);
            break;
        case CUFFT_R2C: r = cufftExecR2C(p->handle, src, out->data); break;
        case CUFFT_D2Z: r = cufftExecD2Z(p->handle, src, out->data); break;
        case CUFFT_C2R: r = cufftExecC2R(p->handle, src, out->data); break;
        case CUFFT_Z2D: r = cufftExecZ2D(p->handle, src, out->data); break;
        }
        if (r != CUFFT_SUCCESS) e = fft_failed(r, "exec");
    }
    pthread_mutex_unlock(&plans_lock);
    return e;
}
