/* The backend table (registry.h). */
#include "backends/registry.h"

#include <strings.h>

#include "common/error.h"

static nd_status cpu_supports(const nd_backend_config *cfg) {
    (void)cfg;
    return ND_OK; /* always built, runs anywhere */
}

/* In auto's order: a GPU when there is one, else the CPU. */
static const nd_backend_entry BACKENDS[] = {
    {"cuda", "gpu", "CUDA", ND_BACKEND_CUDA, nd_cuda_backend_supports, nd_cuda_backend_create},
    {"cpu", NULL, "CPU", ND_BACKEND_CPU, cpu_supports, nd_cpu_backend_create},
};
enum { N_BACKENDS = sizeof BACKENDS / sizeof BACKENDS[0] };

const nd_backend_entry *nd_backend_registry(int *count) {
    *count = N_BACKENDS;
    return BACKENDS;
}

const nd_backend_entry *nd_backend_by_name(const char *name) {
    for (int i = 0; i < N_BACKENDS; i++)
        if (!strcasecmp(name, BACKENDS[i].name) || (BACKENDS[i].alias && !strcasecmp(name, BACKENDS[i].alias)))
            return &BACKENDS[i];
    return NULL;
}

const nd_backend_entry *nd_backend_by_kind(nd_backend_kind kind) {
    for (int i = 0; i < N_BACKENDS; i++)
        if (BACKENDS[i].kind == kind) return &BACKENDS[i];
    return NULL;
}

nd_status nd_backend_open(nd_backend_kind kind, const nd_backend_config *cfg, nd_backend **out) {
    *out = NULL;
    if (kind != ND_BACKEND_AUTO) {
        const nd_backend_entry *e = nd_backend_by_kind(kind);
        if (!e) return nd_error_set(ND_ERR_ARG, "nd_init: backend %d is not built in this nd", (int)kind);
        return e->create(cfg, out);
    }
    nd_status st = ND_ERR_UNSUPPORTED;
    for (int i = 0; i < N_BACKENDS; i++) {
        const nd_backend_entry *e = &BACKENDS[i];
        int last = i == N_BACKENDS - 1;
        nd_error_saved before;
        nd_error_save(&before);
        st = e->supports(cfg);
        if (st == ND_OK) st = e->create(cfg, out);
        if (st == ND_OK || st == ND_ERR_ARG || last) return st; /* ARG: a bad setting, not a missing device */
        /* Unavailable is the normal case for auto: forget that error, and
         * only that one (the program's own earlier error stays). */
        nd_logf(2, "%s backend unavailable (%s); using the %s backend", e->label, nd_last_error(),
                BACKENDS[i + 1].label);
        nd_error_restore(&before);
        *out = NULL;
    }
    return st;
}
