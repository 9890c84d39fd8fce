/* Placeholder until the CUDA backend lands: reports it is not built. */
#include <stdio.h>

#include "backends/backend.h"
#include "backends/devices.h"
#include "common/error.h"

nd_status nd_cuda_backend_supports(const nd_backend_config *cfg) {
    (void)cfg;
    return nd_error_set(ND_ERR_UNSUPPORTED, "nd_init: the CUDA backend is not built in this nd (configure with -Dcuda=enabled)");
}

nd_status nd_cuda_backend_create(const nd_backend_config *cfg, nd_backend **out) {
    *out = NULL;
    return nd_cuda_backend_supports(cfg);
}

/* Device queries (backends/devices.h): no CUDA in this build. */
int nd_cuda_device_count(char *why, size_t cap) {
    snprintf(why, cap, "the CUDA backend is not built in this nd (configure with -Dcuda=enabled)");
    return 0;
}

nd_status nd_cuda_device_props(int device, nd_device_info *out) {
    (void)out;
    return nd_error_set(ND_ERR_UNSUPPORTED, "no CUDA device %d: the CUDA backend is not built in this nd", device);
}
