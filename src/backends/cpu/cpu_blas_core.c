/* Which kernels OpenBLAS runs (cpu_internal.h's nd_cpu_blas_core_*).
 *
 * An OpenBLAS built with DYNAMIC_ARCH picks its kernels once, when it
 * loads, from the CPU's model number. A release older than the CPU does not
 * know the model and falls back to its 'Prescott' (SSE3) kernels: on the
 * 16-core H200 hosts Debian's 0.3.21 then ran sgemm at 220 GFLOP/s where its
 * own SkylakeX kernels run 1200 (and NumPy's newer OpenBLAS, which decides
 * from the CPU's features, 990). Setting OPENBLAS_CORETYPE before the
 * program starts fixes it, but nothing tells a user to.
 *
 * So when OpenBLAS fell back to pre-AVX2 kernels on a CPU with AVX2 and
 * FMA, and the user did not name a core (OPENBLAS_CORETYPE unset), nd asks
 * it to choose again with the core the CPU's features call for: SkylakeX
 * with AVX-512 (F, CD, BW, DQ, VL: what those kernels use; AMD's Zen 4 runs
 * them too), else Zen on AMD and Haswell on others. OpenBLAS exports the
 * two functions that make that choice (gotoblas_dynamic_quit/_init, which
 * read OPENBLAS_CORETYPE); nd calls them once, at the CPU backend's start,
 * before any BLAS call of nd's. The variable is set only around that call.
 * A user who names a core, even Prescott, keeps it. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <uv.h>

#include "backends/cpu/cpu_internal.h"
#include "common/error.h"

/* OpenBLAS cores whose kernels use AVX2 or wider: any other on an AVX2 CPU
 * is a fallback. */
static const char *const wide_cores[] = {"haswell", "zen", "skylakex", "cooperlake", "sapphirerapids",
                                         "excavator"};

static int is_wide_core(const char *core) {
    for (size_t i = 0; i < sizeof wide_cores / sizeof *wide_cores; i++)
        if (strcasestr(core, wide_cores[i])) return 1;
    return 0;
}

const char *nd_cpu_blas_core_better(const char *core, nd_cpu_blas_features f) {
    if (!core || is_wide_core(core) || !f.avx2_fma) return NULL;
    if (f.avx512) return "SkylakeX";
    return f.amd ? "Zen" : "Haswell";
}

nd_cpu_blas_features nd_cpu_blas_features_here(void) {
    nd_cpu_blas_features f = {0};
#if defined(__x86_64__) && defined(__GNUC__)
    /* libgcc's checks include the OS's support (XCR0) for the wider registers */
    __builtin_cpu_init();
    f.avx2_fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    f.avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
               __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
               __builtin_cpu_supports("avx512vl");
    f.amd = __builtin_cpu_is("amd");
#endif
    return f;
}

int nd_cpu_blas_core_switch(const char *core) {
    void (*quit)(void), (*init)(void);
    *(void **)&quit = nd_cpu_blas_symbol("gotoblas_dynamic_quit");
    *(void **)&init = nd_cpu_blas_symbol("gotoblas_dynamic_init");
    const char *before = nd_cpu_blas_corename();
    if (!quit || !init || !before) return -1; /* not OpenBLAS, or one built for a single core */
    const char *user = getenv("OPENBLAS_CORETYPE");
    char *saved = user ? strdup(user) : NULL;
    if (user && !saved) return -1;
    setenv("OPENBLAS_CORETYPE", core, 1);
    quit();
    init(); /* an unknown name falls back to OpenBLAS's own detection */
    if (saved) setenv("OPENBLAS_CORETYPE", saved, 1);
    else unsetenv("OPENBLAS_CORETYPE");
    free(saved);
    const char *after = nd_cpu_blas_corename();
    return after && strcasestr(after, core) ? 0 : -1;
}

int nd_cpu_blas_core_fix(void) {
    const char *user = getenv("OPENBLAS_CORETYPE");
    if (user && *user) return 0; /* the user's choice */
    const char *core = nd_cpu_blas_corename();
    const char *better = nd_cpu_blas_core_better(core, nd_cpu_blas_features_here());
    if (!better) return 0;
    char was[64];
    snprintf(was, sizeof was, "%s", core);
    int switched = nd_cpu_blas_core_switch(better) == 0;
    if (switched)
        nd_logf(2, "cpu backend: OpenBLAS chose its '%s' kernels (it does not know this CPU's model); "
                "switched to '%s', which the CPU's features allow", was, better);
    else /* the first matmul warns (cpu_backend.c) */
        nd_logf(2, "cpu backend: OpenBLAS uses its '%s' kernels and could not be switched to '%s'", was,
                better);
    return switched ? 1 : -1;
}

static void core_init_once(void) { (void)nd_cpu_blas_core_fix(); }

void nd_cpu_blas_core_init(void) {
    static uv_once_t once = UV_ONCE_INIT;
    uv_once(&once, core_init_once);
}
