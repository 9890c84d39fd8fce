/* Loading the CUDA libraries at run time (cuda_loader.h says why). */
#define ND_CUDA_LOADER_NO_REDIRECT
#include "backends/cuda/cuda_loader.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"

#define ND_STR_(x) #x
#define ND_STR(x) ND_STR_(x) /* after expansion: "cublasCreate_v2" */

nd_cuda_api_table nd_cuda_api;

/* nd_cuda_load opens the first N_CORE_LIBS; the others load on first use. */
enum { LIB_CUDART, LIB_NVRTC, LIB_CUBLAS, N_CORE_LIBS, LIB_CUSOLVER = N_CORE_LIBS, LIB_CUFFT, N_LIBS };

/* The sonames of the major versions nd was compiled against (the
 * declarations the table is typed from): NVRTC follows the toolkit's
 * major version, cuBLAS has its own. */
static char sonames[N_LIBS][32];
static void *handles[N_LIBS];

static void name_libraries(void) {
    snprintf(sonames[LIB_CUDART], sizeof sonames[0], "libcudart.so.%d", CUDART_VERSION / 1000);
    snprintf(sonames[LIB_NVRTC], sizeof sonames[0], "libnvrtc.so.%d", CUDART_VERSION / 1000);
    snprintf(sonames[LIB_CUBLAS], sizeof sonames[0], "libcublas.so.%d", CUBLAS_VER_MAJOR);
    snprintf(sonames[LIB_CUSOLVER], sizeof sonames[0], "libcusolver.so.%d", CUSOLVER_VER_MAJOR);
    snprintf(sonames[LIB_CUFFT], sizeof sonames[0], "libcufft.so.%d", CUFFT_VER_MAJOR);
}

/* Opens library `lib`; NULL with `why` filled when it is nowhere. */
static void *open_library(int lib, char *why, size_t cap) {
    const char *dir = getenv("ND_CUDA_LIB_DIR");
    char path[4096];
    if (dir && *dir) {
        snprintf(path, sizeof path, "%s/%s", dir, sonames[lib]);
        void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!h) snprintf(why, cap, "%s (ND_CUDA_LIB_DIR='%s': %s)", sonames[lib], dir, dlerror());
        return h;
    }
    void *h = dlopen(sonames[lib], RTLD_NOW | RTLD_LOCAL);
    if (h) return h;
    snprintf(why, cap, "%s (%s", sonames[lib], dlerror());
#ifdef ND_CUDA_LIB_DIR_BUILT
    snprintf(path, sizeof path, "%s/%s", ND_CUDA_LIB_DIR_BUILT, sonames[lib]);
    h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h) return h;
    snprintf(why + strlen(why), cap - strlen(why), "; nor in %s", ND_CUDA_LIB_DIR_BUILT);
#endif
    snprintf(why + strlen(why), cap - strlen(why), ")");
    return NULL;
}

/* Each library loads once (its own pthread_once), with its outcome kept. */
static nd_status load_status[N_LIBS];
static char load_message[N_LIBS][1024];
static pthread_once_t load_once[N_LIBS] = {PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT,
                                           PTHREAD_ONCE_INIT, PTHREAD_ONCE_INIT};
static pthread_once_t names_once = PTHREAD_ONCE_INIT;

/* One function into the table: dlsym returns an object pointer, which C
 * converts to a function pointer only through memcpy. */
static int resolve(int lib, const char *symbol, void *field, size_t size) {
    void *p = dlsym(handles[lib], symbol);
    if (!p) {
        snprintf(load_message[lib], sizeof load_message[lib],
                 "the CUDA backend needs %s from %s, which lacks it (%.600s): install the CUDA %d libraries",
                 symbol, sonames[lib], dlerror(), CUDART_VERSION / 1000);
        load_status[lib] = ND_ERR_UNSUPPORTED;
        return -1;
    }
    memcpy(field, &p, size);
    return 0;
}

/* The symbol is the name after the toolkit headers' renames
 * (cublasCreate is cublasCreate_v2), the field the name as written. */
#define RESOLVE(lib, symbol, field) \
    if (resolve(lib, symbol, &nd_cuda_api.field, sizeof nd_cuda_api.field)) return;
#define RESOLVE_CUDART(name) RESOLVE(LIB_CUDART, ND_STR(name), p_##name)
#define RESOLVE_NVRTC(name) RESOLVE(LIB_NVRTC, ND_STR(name), p_##name)
#define RESOLVE_CUBLAS(name) RESOLVE(LIB_CUBLAS, ND_STR(name), p_##name)
#define RESOLVE_CUSOLVER(name) RESOLVE(LIB_CUSOLVER, ND_STR(name), p_##name)
#define RESOLVE_CUFFT(name) RESOLVE(LIB_CUFFT, ND_STR(name), p_##name)

static int open_one(int lib) {
    pthread_once(&names_once, name_libraries);
    char why[1024];
    handles[lib] = open_library(lib, why, sizeof why);
    if (handles[lib]) return 0;
    snprintf(load_message[lib], sizeof load_message[lib],
             "the CUDA backend cannot load %.700s: install the CUDA %d runtime libraries (cudart, "
             "NVRTC, cuBLAS; cuSOLVER for nd_linalg_*, cuFFT for nd_fft_*), add their folder to LD_LIBRARY_PATH, or set ND_CUDA_LIB_DIR",
             why, CUDART_VERSION / 1000);
    load_status[lib] = ND_ERR_UNSUPPORTED;
    return -1;
}

static void load_cudart(void) {
    if (open_one(LIB_CUDART) == 0) { ND_CUDART_FNS(RESOLVE_CUDART) }
}
static void load_nvrtc(void) {
    if (open_one(LIB_NVRTC) == 0) { ND_NVRTC_FNS(RESOLVE_NVRTC) }
}
static void load_cublas(void) {
    if (open_one(LIB_CUBLAS) == 0) { ND_CUBLAS_FNS(RESOLVE_CUBLAS) }
}
/* An optional function: NULL when the library lacks it. */
#define RESOLVE_CUSOLVER_OPTIONAL(name)                                         \
    {                                                                           \
        void *p_ = dlsym(handles[LIB_CUSOLVER], ND_STR(name));                  \
        memcpy(&nd_cuda_api.p_##name, &p_, sizeof nd_cuda_api.p_##name);       \
    }
static void load_cusolver(void) {
    if (open_one(LIB_CUSOLVER) == 0) {
        ND_CUSOLVER_FNS(RESOLVE_CUSOLVER)
        ND_CUSOLVER_OPTIONAL_FNS(RESOLVE_CUSOLVER_OPTIONAL)
    }
}
static void load_cufft(void) {
    if (open_one(LIB_CUFFT) == 0) { ND_CUFFT_FNS(RESOLVE_CUFFT) }
}
#undef RESOLVE

static nd_status load(int lib) {
    static void (*const loaders[N_LIBS])(void) = {load_cudart, load_nvrtc, load_cublas, load_cusolver, load_cufft};
    if (pthread_once(&load_once[lib], loaders[lib]) != 0)
        return nd_error_set(ND_ERR_UNSUPPORTED, "the CUDA backend could not start its loader");
    if (load_status[lib] != ND_OK) return nd_error_set(load_status[lib], "%s", load_message[lib]);
    return ND_OK;
}

/* The libraries stay loaded until the process ends: unloading cudart
 * while the driver still holds its state is unsafe, and nd_init after
 * nd_shutdown then costs nothing. */
nd_status nd_cuda_load(void) {
    for (int lib = 0; lib < N_CORE_LIBS; lib++)
        if (load(lib) != ND_OK) return ND_ERR_UNSUPPORTED;
    return ND_OK;
}

nd_status nd_cuda_load_nvrtc(void) { return load(LIB_NVRTC); }

nd_status nd_cuda_load_cusolver(void) { return load(LIB_CUSOLVER); }

nd_status nd_cuda_load_cufft(void) { return load(LIB_CUFFT); }

/* ------------------------------------------------------------ the plugin */

nd_cuda_prims_table nd_cuda_prims;
static nd_status prims_status;
static char prims_message[1200];
static pthread_once_t prims_once = PTHREAD_ONCE_INIT;
static void *prims_handle;

static void *open_prims(const char *path, char *why, size_t cap) {
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) snprintf(why + strlen(why), cap - strlen(why), "%s%.300s", *why ? "; " : "", dlerror());
    return h;
}

static void load_prims(void) {
    char why[900] = "", path[4096];
    Dl_info self;
    /* Installed: beside libnd. */
    if (dladdr((void *)nd_cuda_load_prims, &self) && self.dli_fname) {
        const char *slash = strrchr(self.dli_fname, '/');
        if (slash) {
            snprintf(path, sizeof path, "%.*s/libnd_cuda_prims.so", (int)(slash - self.dli_fname), self.dli_fname);
            prims_handle = open_prims(path, why, sizeof why);
        }
    }
    /* A program linked with the static libnd: the dynamic loader's search
     * (LD_LIBRARY_PATH, the program's run path, the cache). */
    if (!prims_handle) prims_handle = open_prims("libnd_cuda_prims.so", why, sizeof why);
#ifdef ND_CUDA_PRIMS_BUILT
    if (!prims_handle) prims_handle = open_prims(ND_CUDA_PRIMS_BUILT, why, sizeof why);
#endif
    if (!prims_handle) {
        prims_status = ND_ERR_UNSUPPORTED;
        snprintf(prims_message, sizeof prims_message,
                 "the CUDA backend's sorts, scans and other library routines need libnd_cuda_prims.so, which %s "
                 "(%s)", *why ? "could not be loaded" : "this build of nd does not have (nvcc was not found when it "
                 "was built: install the CUDA toolkit and rebuild)", *why ? why : "not built");
        return;
    }
#define RESOLVE_PRIMS(name)                                                                                   \
    {                                                                                                         \
        void *p = dlsym(prims_handle, #name);                                                                 \
        if (!p) {                                                                                             \
            prims_status = ND_ERR_UNSUPPORTED;                                                                \
            snprintf(prims_message, sizeof prims_message, "libnd_cuda_prims.so lacks %s: it is from another " \
                     "version of nd (reinstall nd)", #name);                                                  \
            return;                                                                                           \
        }                                                                                                     \
        memcpy(&nd_cuda_prims.p_##name, &p, sizeof p);                                                        \
    }
    ND_PRIMS_FNS(RESOLVE_PRIMS)
#undef RESOLVE_PRIMS
    if (nd_cuda_prims.p_ndp_abi() != NDP_ABI) {
        prims_status = ND_ERR_UNSUPPORTED;
        snprintf(prims_message, sizeof prims_message, "libnd_cuda_prims.so has interface %d, this libnd needs %d "
                 "(reinstall nd)", nd_cuda_prims.p_ndp_abi(), NDP_ABI);
    }
}

nd_status nd_cuda_load_prims(void) {
    if (pthread_once(&prims_once, load_prims) != 0)
        return nd_error_set(ND_ERR_UNSUPPORTED, "the CUDA backend could not start its loader");
    if (prims_status != ND_OK) return nd_error_set(prims_status, "%s", prims_message);
    return ND_OK;
}
