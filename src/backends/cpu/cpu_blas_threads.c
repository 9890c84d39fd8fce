/* The BLAS library's thread count (cpu_internal.h's nd_cpu_blas_threads_*),
 * set through whichever of the known controls the process has, found at
 * run time with dlsym: nd links against any BLAS, and one without a control
 * (reference BLAS, a single-threaded build) simply has nothing to set.
 *
 * Why nd sets it: a threaded BLAS starts one thread per core when it loads.
 * nd's pool has ND_NUM_THREADS workers; a matmul runs on the executor's
 * thread while those workers sleep, so it gets as many threads as the pool
 * has: ND_NUM_THREADS=4 then means 4 threads computing, not 4 plus one per
 * core. The library's own variable (OPENBLAS_NUM_THREADS, ...) still
 * decides where neither ND_NUM_THREADS nor nd_config.num_threads is set. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_DEFAULT, RTLD_NOLOAD, dladdr */
#endif
#include <cblas.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "backends/cpu/cpu_internal.h"
#include "common/error.h"

/* name, setter, getter, the library's own variable, whether the count is a
 * 64-bit integer (BLIS's dim_t) rather than an int */
#define ND_BLAS_THREAD_CONTROLS(X)                                                                         \
    X("OpenBLAS", "openblas_set_num_threads", "openblas_get_num_threads", "OPENBLAS_NUM_THREADS", 0)      \
    X("BLIS", "bli_thread_set_num_threads", "bli_thread_get_num_threads", "BLIS_NUM_THREADS", 1)          \
    X("MKL", "MKL_Set_Num_Threads", "MKL_Get_Max_Threads", "MKL_NUM_THREADS", 0)

typedef struct {
    const char *name, *set, *get, *env;
    int wide;
} blas_control;

#define ROW(name, set, get, env, wide) {name, set, get, env, wide},
static const blas_control controls[] = {ND_BLAS_THREAD_CONTROLS(ROW)};
#undef ROW
#define COUNT(name, set, get, env, wide) +1
_Static_assert(sizeof controls / sizeof controls[0] == 0 ND_BLAS_THREAD_CONTROLS(COUNT),
               "one row per BLAS thread control");
#undef COUNT

/* What dlsym found, once per process (the count it sets is the BLAS's,
 * which is per process too). */
static struct {
    const blas_control *c;
    void *set, *get;
    char *(*corename)(void), *(*config)(void); /* OpenBLAS's diagnostics */
} found;
static uv_once_t found_once = UV_ONCE_INIT;

/* The library that gives nd its sgemm first: when libnd was opened with
 * RTLD_LOCAL (Python's ctypes does), its BLAS is not in the global scope
 * RTLD_DEFAULT searches. */
static void *blas_handle;

static void *lookup(const char *name) {
    void *p = blas_handle ? dlsym(blas_handle, name) : NULL;
    return p ? p : dlsym(RTLD_DEFAULT, name);
}

static void find_control(void) {
    Dl_info info;
    if (dladdr((void *)cblas_sgemm, &info) && info.dli_fname)
        blas_handle = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD); /* kept: it is loaded anyway */
    for (size_t i = 0; i < sizeof controls / sizeof controls[0]; i++) {
        void *set = lookup(controls[i].set);
        if (!set) continue;
        found.c = &controls[i];
        found.set = set;
        found.get = lookup(controls[i].get);
        break;
    }
    *(void **)&found.corename = lookup("openblas_get_corename");
    *(void **)&found.config = lookup("openblas_get_config");
}

static void set_raw(int n) {
    if (found.c->wide) ((void (*)(int64_t))found.set)((int64_t)n);
    else ((void (*)(int))found.set)(n);
}

const char *nd_cpu_blas_name(void) {
    uv_once(&found_once, find_control);
    return found.c ? found.c->name : NULL;
}

int nd_cpu_blas_threads_get(void) {
    uv_once(&found_once, find_control);
    if (!found.c || !found.get) return -1;
    return found.c->wide ? (int)((int64_t(*)(void))found.get)() : ((int (*)(void))found.get)();
}

int nd_cpu_blas_threads_set(int n) {
    uv_once(&found_once, find_control);
    if (!found.c || n < 1) return -1;
    int before = nd_cpu_blas_threads_get();
    if (before != n) set_raw(n);
    return before;
}

void nd_cpu_blas_threads_init(int explicit_count, int threads) {
    uv_once(&found_once, find_control);
    if (!found.c) {
        nd_logf(2, "cpu backend: the BLAS has no thread control nd knows (OpenBLAS, BLIS, MKL); "
                "its thread count is its own");
        return;
    }
    nd_cpu_blas_core_init();
    const char *own = getenv(found.c->env);
    int own_set = own && *own;
    if (explicit_count || !own_set) set_raw(threads);
    /* Which kernels OpenBLAS picked for this CPU (an old OpenBLAS may not
     * know a new CPU and fall back to slower ones) and its thread count:
     * what to look at first when a matmul is slower than NumPy's. */
    const char *core = found.corename ? found.corename() : NULL;
    const char *config = found.config ? found.config() : NULL;
    nd_logf(2, "cpu backend: %s%s%s, %d threads (nd: %d%s%s%s)", config ? config : found.c->name,
            core ? ", core " : "", core ? core : "", nd_cpu_blas_threads_get(), threads,
            !own_set ? "" : explicit_count ? "; overrides " : "; set by ", own_set ? found.c->env : "",
            own_set && explicit_count ? " (nd's count is explicit)" : "");
}

void *nd_cpu_blas_symbol(const char *name) {
    uv_once(&found_once, find_control);
    return lookup(name);
}

const char *nd_cpu_blas_corename(void) {
    uv_once(&found_once, find_control);
    return found.corename ? found.corename() : NULL;
}
