/* Placeholder until the CUDA backend lands: reports it is not built. */
#include "backends/backend.h"
#include "common/error.h"

nd_status nd_cuda_backend_create(const nd_backend_config *cfg, nd_backend **out) {
    (void)cfg;
    *out = NULL;
    return nd_error_set(ND_ERR_UNSUPPORTED, "nd_init: the CUDA backend is not built in this nd (configure with -Dcuda=enabled)");
}
