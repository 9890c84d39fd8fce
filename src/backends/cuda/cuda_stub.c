/* Placeholder until the CUDA backend lands: reports it is not built. */
#include "backends/backend.h"
#include "common/error.h"

nd_status nd_cuda_backend_supports(const nd_backend_config *cfg) {
    (void)cfg;
    return nd_error_set(ND_ERR_UNSUPPORTED, "nd_init: the CUDA backend is not built in this nd (configure with -Dcuda=enabled)");
}

nd_status nd_cuda_backend_create(const nd_backend_config *cfg, nd_backend **out) {
    *out = NULL;
    return nd_cuda_backend_supports(cfg);
}
