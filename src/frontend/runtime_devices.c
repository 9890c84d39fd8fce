/* The runtime's part of include/nd/devices.h: device queries (asked of the
 * CUDA runtime directly, so they need no nd_init) and the program's
 * stream (handed to the backend's set_app_stream/app_stream_wait hooks,
 * backends/cuda/app_stream.c). Part of the runtime: it may reach the
 * backend (scripts/check_layers.py). */
#include <stddef.h>
#include <string.h>

#include "backends/backend.h"
#include "backends/devices.h"
#include "frontend/frontend.h"

/* ------------------------------------------------------------ devices */

int nd_device_count(void) {
    ND_API_UNLOCKED(); /* the CUDA runtime only, which is thread-safe */
    char why[256];
    int n = nd_cuda_device_count(why, sizeof why);
    if (n == 0) nd_logf(2, "nd_device_count: 0 (%s)", why);
    return n;
}

/* The bytes of nd_device_info a caller's struct_size must at least hold. */
#define INFO_FIRST offsetof(nd_device_info, device)

nd_status nd_get_device_info_sized(int device, nd_device_info *out, size_t out_size) {
    ND_API_GUARD();
    if (!out)
        return nd_error_set(ND_ERR_ARG, "nd_get_device_info: out is NULL (pass the address of an "
                            "nd_device_info)");
    if (out_size < INFO_FIRST)
        return nd_error_set(ND_ERR_ARG, "nd_get_device_info: an nd_device_info of %zu bytes cannot hold its "
                            "struct_size (%zu bytes at least; pass sizeof(nd_device_info))", out_size,
                            INFO_FIRST);
    char why[256];
    int n = nd_cuda_device_count(why, sizeof why);
    if (n == 0) return nd_error_set(ND_ERR_UNSUPPORTED, "nd_get_device_info: device %d: %s", device, why);
    if (device < 0 || device >= n)
        return nd_error_set(ND_ERR_ARG, "nd_get_device_info: device %d is out of range: this machine has %d "
                            "CUDA device%s (use 0..%d)", device, n, n == 1 ? "" : "s", n - 1);
    nd_device_info info;
    memset(&info, 0, sizeof info);
    info.device = device;
    nd_status st = nd_cuda_device_props(device, &info);
    if (st != ND_OK) return st;
    /* nd's own use, when the runtime computes on this device. */
    if (nd_rt.initialised && nd_rt.backend->device_usage) {
        int logical = 0;
        uint64_t in_use = 0, reserved = 0;
        nd_runtime_wait(); /* the executor allocates too */
        nd_rt.backend->device_usage(nd_rt.backend, device, &logical, &in_use, &reserved);
        if (logical > 0) {
            info.used_by_nd = 1;
            info.nd_logical_devices = logical;
            info.nd_bytes_in_use = in_use;
            info.nd_bytes_reserved = reserved;
        }
    }
    size_t known = out_size < sizeof info ? out_size : sizeof info;
    info.struct_size = known;
    memcpy(out, &info, known);
    /* A program built against a newer nd.h: fields this library lacks
     * read as zero. */
    if (out_size > known) memset((char *)out + known, 0, out_size - known);
    return ND_OK;
}

/* --------------------------------------------------- the program's stream */

nd_status nd_runtime_attach_stream(nd_backend *be, void *stream) {
    if (!be->set_app_stream)
        return nd_error_set(ND_ERR_UNSUPPORTED, "nd_init: nd_config.cuda_stream is set (%p) but the %s backend "
                            "has no CUDA streams (use ND_BACKEND=cuda, or leave cuda_stream NULL)", stream,
                            be->name);
    return be->set_app_stream(be, stream);
}

nd_status nd_set_cuda_stream(void *stream) {
    ND_API_GUARD();
    if (!nd_rt.initialised && stream) {
        /* Started by the stream: on its device, as nd_config.cuda_stream. */
        nd_config c = ND_CONFIG_INIT;
        c.cuda_stream = stream;
        return nd_init(&c);
    }
    nd_status st = nd_runtime_ensure();
    if (st != ND_OK) return st;
    nd_backend *be = nd_rt.backend;
    if (!be->set_app_stream) {
        if (!stream) return ND_OK;
        return nd_error_set(ND_ERR_UNSUPPORTED, "nd_set_cuda_stream: the %s backend has no CUDA streams "
                            "(stream %p): start nd with ND_BACKEND=cuda, or pass NULL", be->name, stream);
    }
    if (stream == nd_rt.cfg.cuda_stream) return ND_OK;
    /* A sync point on the old stream: what is recorded so far is enqueued
     * before the backend makes that stream wait for it. A failed flush's
     * error waits for the next nd_sync, as an automatic flush's does. */
    nd_runtime_submit_quietly();
    st = be->set_app_stream(be, stream);
    if (st == ND_OK) nd_rt.cfg.cuda_stream = stream;
    return st;
}

void *nd_get_cuda_stream(void) {
    ND_API_GUARD();
    return nd_rt.initialised ? nd_rt.cfg.cuda_stream : NULL;
}

nd_status nd_stream_sync_point(void) {
    ND_API_GUARD();
    nd_status st = nd_runtime_ensure();
    if (st != ND_OK) return st;
    st = nd_runtime_submit();
    /* The program's stream waits even after a failed flush: what did run
     * stays ordered (the failed arrays report their error when read). */
    nd_backend *be = nd_rt.backend;
    nd_status st2 = be->app_stream_wait ? be->app_stream_wait(be) : ND_OK;
    return st != ND_OK ? st : st2;
}
