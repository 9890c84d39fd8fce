/*
 * nd/devices.h — The machine's GPUs and the program's CUDA stream: device
 * and memory queries, and ordering nd's work with the program's own on one
 * stream without waiting on the host.
 * Part of nd.h: include <nd.h>, not this file.
 */
#ifndef ND_DEVICES_H
#define ND_DEVICES_H

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ devices */

/* The number of CUDA devices the driver reports (CUDA_VISIBLE_DEVICES
 * applies). 0, and no error, when there is none: no GPU, no driver, or an
 * nd built without the CUDA backend (nd_get_device_info(0, ...) then says
 * which; so does ND_LOG=2 once the runtime runs). Does not start the
 * runtime (no nd_init needed) and creates no CUDA context. */
ND_API int nd_device_count(void);

/* What nd_get_device_info reports about one device. */
typedef struct {
    size_t struct_size;        /* set by nd_get_device_info: bytes it filled */
    int device;                /* the CUDA ordinal asked for */
    char name[256];            /* "NVIDIA H100 80GB HBM3" */
    int compute_major;         /* compute capability: 9 and 0 for sm_90 */
    int compute_minor;
    int multiprocessors;       /* streaming multiprocessors */
    uint64_t total_memory;     /* bytes of device memory */
    uint64_t free_memory;      /* bytes free on the device now, every process counted */
    int used_by_nd;            /* 1: nd's running CUDA backend computes on this device */
    uint64_t nd_bytes_in_use;  /* bytes of nd's live allocations on it (arrays,
                                  temporaries, reduction scratch); 0 unless used_by_nd */
    uint64_t nd_bytes_reserved;/* bytes nd's memory pool holds from the driver on it,
                                  freed blocks it keeps for reuse included (>= in use
                                  when the device has memory pools); 0 unless used_by_nd */
    int nd_logical_devices;    /* how many of nd's logical devices (ND_DEVICES entries)
                                  run on this GPU: 1 for ND_DEVICES=0, 2 on GPU 0 for
                                  "0,0"; 0 unless used_by_nd */
} nd_device_info;

/* Fills *out for CUDA device `device` (0 <= device < nd_device_count()).
 * A macro passing sizeof *out to nd_get_device_info_sized, so a program
 * built against an older, smaller nd_device_info gets its fields and
 * nothing past them (as nd_get_stats). Does not start the runtime; when it
 * runs on this device, the nd_* fields give its use. Reading free memory
 * creates the device's primary CUDA context if nothing has (about 0.3 s
 * and some device memory the first time, as any CUDA runtime call).
 * Errors (*out is not written): out NULL or
 * out_size smaller than struct_size (ND_ERR_ARG); no CUDA device at all
 * (ND_ERR_UNSUPPORTED, with the reason: no driver, nd built without
 * CUDA); device out of range (ND_ERR_ARG naming the valid range); the
 * driver failing (ND_ERR_BACKEND). */
ND_API nd_status nd_get_device_info_sized(int device, nd_device_info *out, size_t out_size);
#define nd_get_device_info(device, out) nd_get_device_info_sized((device), (out), sizeof *(out))

/* --------------------------------------------------- the program's stream
 *
 * nd runs its work on a stream of its own. A program that has a stream of
 * its own (a cudaStream_t) hands it to nd with nd_config.cuda_stream (set
 * struct_size: ND_CONFIG_INIT) or nd_set_cuda_stream, and then nd's work
 * and the program's are ordered as if both ran on the program's stream,
 * through CUDA events, with no host wait and no device-wide sync:
 *
 *  - nd -> after the program: every piece of work nd enqueues (a flush, a
 *    copy, a memory release) first makes nd's stream wait for what the
 *    program had queued on its stream by then, so an op runs after every
 *    kernel the program queued on the stream before recording it.
 *  - the program -> after nd: nd_stream_sync_point() makes the program's
 *    stream wait for every op recorded before the call; the program's
 *    next kernel on that stream runs after them, and nd's next work after
 *    that kernel. (nd_sync does too, by waiting on the host.)
 *
 *      my_kernel_a<<<g, b, 0, s>>>(...);   // before nd's ops
 *      nd_array *y = nd_exp(x);            // runs after my_kernel_a
 *      nd_stream_sync_point();             // s waits for y
 *      my_kernel_b<<<g, b, 0, s>>>(...);   // runs after y
 *      nd_array *z = nd_add(y, w);         // runs after my_kernel_b
 *
 * nd's CUDA graphs keep working: the waits are enqueued outside them. A
 * stream handed over at the start (nd_config.cuda_stream, or
 * nd_set_cuda_stream before the runtime runs) with no ND_DEVICES list
 * starts nd on the stream's device, the one the program chose (under
 * mpirun too: the program's choice, not one GPU per local rank). The
 * stream must belong to the device nd runs on, stay alive while it is set
 * (until nd_set_cuda_stream(NULL), another stream, or nd_shutdown) and not
 * be capturing a CUDA graph when nd enqueues work (that work fails with
 * ND_ERR_STATE). cudaStreamLegacy (the NULL stream's legacy form) works;
 * cudaStreamPerThread does not (it names another stream in nd's executor
 * thread): pass the stream itself. nd_sync waits for nd's work, which may
 * include the program's kernels nd's work waits for. ND_PROFILE and
 * ND_TRACE make every flush wait on the host, as always. */

/* Hands nd the program's stream (a cudaStream_t), or NULL to stop; starts
 * the runtime with the defaults when it is not running (use nd_init with
 * nd_config.cuda_stream for other settings). Changing the stream (or
 * setting NULL) is first a sync point on the old one: its later work runs
 * after every op recorded before. Errors: a stream on the CPU backend
 * (ND_ERR_UNSUPPORTED: it has no streams; NULL is fine there),
 * cudaStreamPerThread or a stream nd cannot use (another device's, a
 * destroyed one: ND_ERR_ARG naming the stream and the driver's reason); on
 * error the stream in use does not change. */
ND_API nd_status nd_set_cuda_stream(void *stream);
/* The program's stream set now, or NULL (none, or not running). */
ND_API void *nd_get_cuda_stream(void);

/* A sync point on the program's stream: submits every op recorded so far
 * (returning once it is enqueued on the device, not run) and makes the
 * program's stream wait for it. The program may then queue kernels on its
 * stream that read what those ops wrote (e.g. through nd_data's pointer),
 * and nd's later ops run after those kernels. Never waits for the device.
 * Without a stream set (and on the CPU backend) it is nd_flush, whose
 * errors it returns: a flush's errors (also a deferred one, see nd_flush),
 * and the driver's if the wait cannot be enqueued (ND_ERR_BACKEND; the
 * stream was destroyed while set?). */
ND_API nd_status nd_stream_sync_point(void);

#ifdef __cplusplus
}
#endif
#endif /* ND_DEVICES_H */
