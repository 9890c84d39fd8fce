/* NVRTC compilation and the two-level kernel cache. In memory: a hash map
 * from the kernel's key to the loaded library and its kernels. On disk
 * (under cfg->cache_dir, default ~/.cache/nd): one CUBIN per kernel, named
 * by its key (the IR hash, or a shape-generic kernel's hash without its extent),
 * architecture, NVRTC version and codegen version, with a checked
 * header so a truncated or corrupt file is recompiled rather than loaded.
 * Files are written to a temporary name, fsync'd and renamed, so readers
 * (other processes included) never see a partial file. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nvrtc.h>
#include <uv.h>

#include "backends/cuda/cuda_internal.h"
#include "common/alloc.h"
#include "common/compile_count.h"
#include "common/dirs.h"
#include "common/api_guard.h"
#include "common/hash.h"

#define KC_MAGIC "NDCUBIN1"
#define KC_BUCKETS 1024

typedef struct {
    char magic[8];
    uint32_t codegen_version;
    uint32_t arch;
    uint64_t key;
    uint64_t length;
    uint64_t checksum;
} kc_header;

typedef struct kc_entry {
    uint64_t key;
    int is_source; /* a fixed source (get_source), not a generated kernel */
    nd_cuda_kentry e;
    struct kc_entry *next;
} kc_entry;

struct nd_cuda_kcache {
    int arch, sm_count;
    int nvrtc_major, nvrtc_minor;
    int disk; /* 0 after the directory proved unusable */
    uint64_t text_hash; /* of the text pasted into every kernel (prelude, element functions) */
    char dir[1024];
    pthread_mutex_t lock;
    kc_entry *buckets[KC_BUCKETS];
};

static nd_status nvrtc_fail(nvrtcResult r, const char *what) {
    return nd_error_set(ND_ERR_COMPILE, "cuda: %s failed: %s", what, nvrtcGetErrorString(r));
}

nd_status nd_cuda_kcache_create(const char *cache_dir, int arch, int sm_count, nd_cuda_kcache **out) {
    *out = NULL;
    nd_cuda_kcache *c = nd_calloc(1, sizeof *c);
    if (!c) return nd_error_set(ND_ERR_OOM, "cuda: out of host memory creating the kernel cache");
    c->arch = arch;
    c->sm_count = sm_count;
    /* A kernel compiled before an op's element function or a prelude
     * helper changed must never be reused: their text joins every key. */
    c->text_hash = nd_hash_bytes(ND_HASH_SEED, nd_element_fns_source, strlen(nd_element_fns_source));
    c->text_hash = nd_hash_bytes(c->text_hash, nd_cuda_prelude_text(), strlen(nd_cuda_prelude_text()));
    nvrtcResult r = nvrtcVersion(&c->nvrtc_major, &c->nvrtc_minor);
    if (r != NVRTC_SUCCESS) {
        free(c);
        return nvrtc_fail(r, "nvrtcVersion");
    }
    if (pthread_mutex_init(&c->lock, NULL) != 0) {
        free(c);
        return nd_error_set(ND_ERR_BACKEND, "cuda: could not create the kernel cache lock");
    }
    const char *home = getenv("HOME");
    if (cache_dir && *cache_dir) snprintf(c->dir, sizeof c->dir, "%s", cache_dir);
    else if (home && *home) snprintf(c->dir, sizeof c->dir, "%s/.cache/nd", home);
    c->disk = c->dir[0] != 0;
    if (c->disk && nd_make_dirs(c->dir) != 0) {
        nd_logf(1, "kernel cache directory '%s' cannot be created (%s); caching kernels in memory only",
                c->dir, strerror(errno));
        c->disk = 0;
    }
    *out = c;
    return ND_OK;
}

void nd_cuda_kcache_destroy(nd_cuda_kcache *c) {
    if (!c) return;
    for (int b = 0; b < KC_BUCKETS; b++) {
        kc_entry *e = c->buckets[b];
        while (e) {
            kc_entry *next = e->next;
            if (e->e.lib) cudaLibraryUnload(e->e.lib);
            free(e);
            e = next;
        }
    }
    pthread_mutex_destroy(&c->lock);
    free(c);
}

static kc_entry *lookup(nd_cuda_kcache *c, uint64_t key, int is_source) {
    for (kc_entry *e = c->buckets[key % KC_BUCKETS]; e; e = e->next)
        if (e->key == key && e->is_source == is_source) return e;
    return NULL;
}

/* Where a failed source goes: the cache dir if usable, else the temp dir. */
static void save_failed(const nd_cuda_kcache *c, const char *what, const char *src, const char *log, char *path,
                        size_t cap) {
    const char *dir = c && c->disk ? c->dir : (getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    snprintf(path, cap, "%s/failed-%s.cu", dir, what);
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(path, cap, "(could not save the source under %s: %s)", dir, strerror(errno));
        return;
    }
    fputs(src, f);
    if (log) {
        fputs("\n/* NVRTC log:\n", f);
        fputs(log, f);
        fputs("\n*/\n", f);
    }
    fclose(f);
}

/* The generated kernels include cuRAND's Philox (curand_philox4x32_x.h),
 * which NVRTC finds only on an include path: the first directory holding
 * it of $ND_CUDA_INCLUDE, $CUDA_PATH/include, $CUDA_HOME/include, the
 * include directory beside the NVRTC library in use, the toolkit's at
 * build time and /usr/local/cuda/include. Found once; "" when none. */
static char include_option[1100];
static pthread_once_t include_once = PTHREAD_ONCE_INIT;

/* Sets include_option to prefix + suffix when that holds the header. */
static int try_include(const char *prefix, const char *suffix) {
    char path[1100];
    if (!prefix) return 0;
    int n = snprintf(path, sizeof path, "%s%s/curand_philox4x32_x.h", prefix, suffix);
    if (n < 0 || (size_t)n >= sizeof path || access(path, R_OK) != 0) return 0;
    n = snprintf(include_option, sizeof include_option, "-I%s%s", prefix, suffix);
    if (n < 0 || (size_t)n >= sizeof include_option) include_option[0] = 0;
    return include_option[0] != 0;
}

static void find_include(void) {
    if (try_include(getenv("ND_CUDA_INCLUDE"), "") || try_include(getenv("CUDA_PATH"), "/include") ||
        try_include(getenv("CUDA_HOME"), "/include"))
        return;
    Dl_info info;
    if (dladdr((void *)nvrtcVersion, &info) && info.dli_fname) {
        /* .../lib64/libnvrtc.so.N -> .../include */
        char lib[1024];
        int n = snprintf(lib, sizeof lib, "%s", info.dli_fname);
        char *slash = n > 0 && (size_t)n < sizeof lib ? strrchr(lib, '/') : NULL;
        if (slash) {
            *slash = 0;
            if (try_include(lib, "/../include")) return;
        }
    }
#ifdef ND_CUDA_INCLUDE_DIR
    if (try_include(ND_CUDA_INCLUDE_DIR, "")) return;
#endif
    try_include("/usr/local/cuda", "/include");
}

const char *nd_cuda_include_option(void) {
    pthread_once(&include_once, find_include);
    return include_option;
}

nd_status nd_cuda_nvrtc_compile(const char *src, const char *what, int arch, const char *save_dir, void **cubin,
                                size_t *cubin_len) {
    *cubin = NULL;
    *cubin_len = 0;
    nvrtcProgram prog;
    char fname[160];
    snprintf(fname, sizeof fname, "%s.cu", what);
    nvrtcResult r = nvrtcCreateProgram(&prog, src, fname, 0, NULL, NULL);
    if (r != NVRTC_SUCCESS) return nvrtc_fail(r, "nvrtcCreateProgram");
    char archopt[48];
    snprintf(archopt, sizeof archopt, "--gpu-architecture=sm_%d", arch);
    /* FMA contraction stays on (NVRTC's default): float results agree with
     * the CPU within rounding, and instructions flagged ND_IR_EXACT (the
     * random-number transforms) use _rn intrinsics, which never contract. */
    const char *inc = nd_cuda_include_option();
    const char *opts[] = {archopt, "--std=c++17", "-lineinfo", "--device-as-default-execution-space", inc};
    r = nvrtcCompileProgram(prog, (int)(sizeof opts / sizeof opts[0]) - (inc[0] ? 0 : 1), opts);
    if (r != NVRTC_SUCCESS) {
        size_t log_len = 0;
        char *log = NULL;
        if (nvrtcGetProgramLogSize(prog, &log_len) == NVRTC_SUCCESS && log_len > 0 && (log = nd_malloc(log_len + 1))) {
            if (nvrtcGetProgramLog(prog, log) != NVRTC_SUCCESS) log[0] = 0;
            log[log_len] = 0;
        }
        char path[1200];
        nd_cuda_kcache tmp_c;
        memset(&tmp_c, 0, sizeof tmp_c);
        if (save_dir && *save_dir) {
            snprintf(tmp_c.dir, sizeof tmp_c.dir, "%s", save_dir);
            tmp_c.disk = 1;
        }
        save_failed(&tmp_c, what, src, log, path, sizeof path);
        nvrtcDestroyProgram(&prog);
        /* The first line of the log usually names the error. */
        char first[400] = "";
        if (log) {
            snprintf(first, sizeof first, "%s", log);
            char *nl = strchr(first, '\n');
            if (nl) *nl = 0;
        }
        free(log);
        return nd_error_set(ND_ERR_COMPILE, "cuda: NVRTC could not compile kernel '%s' for sm_%d (%s): %s; source and log saved to %s",
                            what, arch, nvrtcGetErrorString(r), first, path);
    }
    size_t n = 0;
    r = nvrtcGetCUBINSize(prog, &n);
    if (r != NVRTC_SUCCESS) {
        nvrtcDestroyProgram(&prog);
        return nvrtc_fail(r, "nvrtcGetCUBINSize");
    }
    void *bin = nd_malloc(n ? n : 1);
    if (!bin) {
        nvrtcDestroyProgram(&prog);
        return nd_error_set(ND_ERR_OOM, "cuda: out of host memory for a %zu-byte CUBIN", n);
    }
    r = nvrtcGetCUBIN(prog, bin);
    nvrtcDestroyProgram(&prog);
    if (r != NVRTC_SUCCESS) {
        free(bin);
        return nvrtc_fail(r, "nvrtcGetCUBIN");
    }
    *cubin = bin;
    *cubin_len = n;
    return ND_OK;
}

static void file_path(const nd_cuda_kcache *c, uint64_t key, int is_source, char *path, size_t cap) {
    snprintf(path, cap, "%s/%s-%016" PRIx64 "-sm%d-nvrtc%d.%d-cg%u.cubin", c->dir, is_source ? "src" : "k", key,
             c->arch, c->nvrtc_major, c->nvrtc_minor, ND_CUDA_CODEGEN_VERSION);
}

/* A valid cached CUBIN for key, or NULL (missing, truncated or corrupt). */
static void *disk_read(const nd_cuda_kcache *c, uint64_t key, int is_source, size_t *len) {
    if (!c->disk) return NULL;
    char path[1200];
    file_path(c, key, is_source, path, sizeof path);
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    kc_header h;
    void *bin = NULL;
    if (fread(&h, sizeof h, 1, f) == 1 && memcmp(h.magic, KC_MAGIC, 8) == 0 &&
        h.codegen_version == ND_CUDA_CODEGEN_VERSION && h.arch == (uint32_t)c->arch && h.key == key &&
        h.length > 0 && h.length < ((uint64_t)1 << 31) && (bin = nd_malloc((size_t)h.length))) {
        if (fread(bin, 1, (size_t)h.length, f) != h.length ||
            nd_hash_bytes(ND_HASH_SEED, bin, (size_t)h.length) != h.checksum || fgetc(f) != EOF) {
            free(bin);
            bin = NULL;
        }
    }
    fclose(f);
    if (!bin) nd_logf(2, "kernel cache file %s is invalid; recompiling", path);
    else *len = (size_t)h.length;
    return bin;
}

static void disk_write(nd_cuda_kcache *c, uint64_t key, int is_source, const void *bin, size_t len) {
    if (!c->disk) return;
    char path[1200], tmp[1300];
    file_path(c, key, is_source, path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    kc_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, KC_MAGIC, 8);
    h.codegen_version = ND_CUDA_CODEGEN_VERSION;
    h.arch = (uint32_t)c->arch;
    h.key = key;
    h.length = len;
    h.checksum = nd_hash_bytes(ND_HASH_SEED, bin, len);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int ok = fd >= 0;
    if (ok) ok = write(fd, &h, sizeof h) == (ssize_t)sizeof h && write(fd, bin, len) == (ssize_t)len;
    if (ok) ok = fsync(fd) == 0;
    if (fd >= 0 && close(fd) != 0) ok = 0;
    if (ok) ok = rename(tmp, path) == 0;
    if (!ok) {
        nd_logf(1, "cannot write kernel cache file %s (%s); caching kernels in memory only", path,
                strerror(errno));
        unlink(tmp);
        c->disk = 0;
    }
}

static nd_status get_kernel(cudaLibrary_t lib, const char *name, cudaKernel_t *out) {
    cudaError_t e = cudaLibraryGetKernel(out, lib, name);
    if (e != cudaSuccess) {
        char what[200];
        snprintf(what, sizeof what, "cudaLibraryGetKernel(%s)", name);
        return nd_cuda_fail(e, what);
    }
    /* Load it onto the device now. With CUDA's lazy loading the first
     * launch would load it, and that waits for work already in flight: a
     * plan's first kernels would not start until its host->device copies
     * finished (seen on the H100: no copy/compute overlap on a first run). */
    struct cudaFuncAttributes attr;
    e = cudaFuncGetAttributes(&attr, (const void *)*out);
    if (e != cudaSuccess) {
        char what[200];
        snprintf(what, sizeof what, "cudaFuncGetAttributes(%s)", name);
        return nd_cuda_fail(e, what);
    }
    return ND_OK;
}

/* ND_CUDA_SOURCE_DIR=dir: every kernel compiled is also written to
 * dir/<entry name>.cu, for reading what the code generator made (a kernel
 * found in the disk cache is not compiled, so point ND_CACHE_DIR at an empty
 * directory to see them all). Best effort: a failed write is logged. */
static void save_source(const char *what, const char *src) {
    const char *dir = getenv("ND_CUDA_SOURCE_DIR");
    if (!dir || !*dir) return;
    char path[1200];
    snprintf(path, sizeof path, "%s/%s.cu", dir, what);
    FILE *f = fopen(path, "w");
    if (!f || fputs(src, f) < 0) nd_logf(1, "cannot write kernel source %s (%s)", path, strerror(errno));
    if (f) fclose(f);
}

/* src, or k's generated source when src is NULL, compiled by NVRTC for
 * arch. Reads no cache state, so any thread may call it (the prefetch's
 * compile threads do); fail_dir: where a failed source goes. */
static nd_status compile_source(const char *what, const char *src, const nd_kernel *k, const nd_cuda_kinfo *info,
                                int arch, const char *fail_dir, void **bin, size_t *len) {
    char *gen = NULL;
    if (!src) {
        nd_status s = nd_cuda_codegen(k, info, &gen);
        if (s) return s;
        src = gen;
    }
    save_source(what, src);
    nd_status s = nd_cuda_nvrtc_compile(src, what, arch, fail_dir, bin, len);
    free(gen);
    return s;
}

/* A binary NVRTC just made for key: counted (nd_stats.kernels_compiled),
 * written to disk, logged. */
static void keep_compiled(nd_cuda_kcache *c, uint64_t key, int is_source, const char *what, const void *bin,
                          size_t len) {
    nd_compile_count_add();
    disk_write(c, key, is_source, bin, len);
    nd_logf(3, "compiled kernel %s for sm_%d (%zu bytes)", what, c->arch, len);
}

/* Binary for key from disk, else from NVRTC (and then saved). */
static nd_status obtain_cubin(nd_cuda_kcache *c, uint64_t key, int is_source, const char *what, const char *src_or_null,
                              const nd_kernel *k, const nd_cuda_kinfo *info, void **bin, size_t *len) {
    /* An injected failed compile (common/fault.h) counts every kernel
     * obtained, from disk or NVRTC, so a sweep sees the same points
     * whatever the disk cache holds. */
    if (nd_fault_hit(ND_FAULT_COMPILE)) {
        *bin = NULL;
        *len = 0;
        return nd_error_set(ND_ERR_COMPILE, "cuda: NVRTC failed to compile kernel %s (injected fault)", what);
    }
    *bin = disk_read(c, key, is_source, len);
    if (*bin) return ND_OK;
    nd_status s = compile_source(what, src_or_null, k, info, c->arch, c->disk ? c->dir : NULL, bin, len);
    if (s) return s;
    keep_compiled(c, key, is_source, what, *bin, *len);
    return ND_OK;
}

static nd_status load(const void *bin, const char *what, cudaLibrary_t *lib) {
    cudaError_t e = cudaLibraryLoadData(lib, bin, NULL, NULL, 0, NULL, NULL, 0);
    if (e != cudaSuccess) {
        char msg[200];
        snprintf(msg, sizeof msg, "cudaLibraryLoadData(%s)", what);
        return nd_cuda_fail(e, msg);
    }
    return ND_OK;
}

static nd_status insert_new(uint64_t key, int is_source, kc_entry **out) {
    kc_entry *e = nd_calloc(1, sizeof *e);
    if (!e) return nd_error_set(ND_ERR_OOM, "cuda: out of host memory for a kernel cache entry");
    e->key = key;
    e->is_source = is_source;
    *out = e;
    return ND_OK;
}

static void link_entry(nd_cuda_kcache *c, kc_entry *e) {
    e->next = c->buckets[e->key % KC_BUCKETS];
    c->buckets[e->key % KC_BUCKETS] = e;
}

/* The key of generated kernel k, and whether it gets the vector variant. */
static uint64_t kernel_key(const nd_cuda_kcache *c, const nd_kernel *k, int *want_vec) {
    /* The name is not part of the IR hash but is baked into the entry
     * points' names, so it joins the key. A shape-generic kernel's key
     * leaves its extent out (nd_cuda_kernel_key): one entry serves every
     * length of its class. */
    uint64_t key = nd_hash_bytes(nd_cuda_kernel_key(k) ^ c->text_hash, k->name, strnlen(k->name, sizeof k->name));
    /* The vector variant only where a launch of k would take it
     * (nd_cuda_vec_fills, as nd_cuda_issue_kernel decides):
     * it holds `vec` copies of the body, and a long fused chain compiles
     * five times slower with it (a 200-node chain of small_ops through
     * NVRTC on the 2-core VM: 20.7 s against 3.7 s without,
     * bench/results/2026-12-01-session23.md). A
     * shape-generic kernel launched at both kinds of length has an entry
     * of each kind, one key apart. */
    *want_vec = nd_cuda_vec_fills(k->shape[0], nd_cuda_vec_width(k), c->sm_count);
    return *want_vec ? key : nd_hash_u64(key, 0x5ca1a7ull);
}

/* The geometry of generated kernel k as its entry holds it. */
static nd_status kernel_geometry(const nd_kernel *k, int want_vec, nd_cuda_kinfo *info) {
    nd_status s = nd_cuda_kernel_info(k, info);
    if (!s && !want_vec) info->vec = info->vec_group = 0;
    return s;
}

/* e's library from its CUBIN, and its entry points. */
static nd_status entry_from_cubin(kc_entry *e, const void *bin) {
    nd_status s = load(bin, e->e.info.name, &e->e.lib);
    if (!s) s = get_kernel(e->e.lib, e->e.info.name, &e->e.main);
    if (!s && e->e.info.vec) s = get_kernel(e->e.lib, e->e.info.name_vec, &e->e.vec);
    if (!s && (e->e.info.splits > 1 || e->e.info.persist)) s = get_kernel(e->e.lib, e->e.info.name_pass2, &e->e.pass2);
    if (s && e->e.lib) { /* an entry point missing: the library goes too */
        cudaLibraryUnload(e->e.lib);
        e->e.lib = NULL;
    }
    return s;
}

nd_status nd_cuda_kcache_get(nd_cuda_kcache *c, const nd_kernel *k, const nd_cuda_kentry **out) {
    int want_vec;
    const uint64_t key = kernel_key(c, k, &want_vec);
    pthread_mutex_lock(&c->lock);
    kc_entry *e = lookup(c, key, 0);
    if (e) {
        *out = &e->e;
        pthread_mutex_unlock(&c->lock);
        return ND_OK;
    }
    nd_status s = insert_new(key, 0, &e);
    void *bin = NULL;
    size_t len = 0;
    if (!s) s = kernel_geometry(k, want_vec, &e->e.info);
    if (!s) s = obtain_cubin(c, key, 0, e->e.info.name, NULL, k, &e->e.info, &bin, &len);
    if (!s) s = entry_from_cubin(e, bin);
    free(bin);
    if (s) {
        free(e); /* (entry_from_cubin unloaded its library) */
        pthread_mutex_unlock(&c->lock);
        return s;
    }
    link_entry(c, e);
    *out = &e->e;
    pthread_mutex_unlock(&c->lock);
    return ND_OK;
}

/* ---------------------------------------------- compiles on several threads */

/* At most this many compiles at once: NVRTC takes a few hundred MB for a
 * long fused kernel. */
#define KC_MAX_COMPILERS 8

typedef struct {
    const nd_kernel *k;
    uint64_t key;
    nd_cuda_kinfo info;
    void *bin;
    size_t len;
} kc_job;

typedef struct {
    kc_job *jobs;
    int n_jobs;
    int next; /* the next job to take (atomic) */
    int arch;
    const char *fail_dir; /* where a failed source goes (nd_cuda_nvrtc_compile) */
} kc_batch;

/* Takes jobs until none is left: generates each kernel's source and
 * compiles it. A job that fails keeps bin NULL; its error, recorded on
 * this thread, is dropped (nd_cuda_kcache_get meets it again). Never
 * enters the public API. */
static void *compile_jobs(void *arg) {
    kc_batch *b = arg;
    for (;;) {
        const int i = __atomic_fetch_add(&b->next, 1, __ATOMIC_RELAXED);
        if (i >= b->n_jobs) return NULL;
        kc_job *j = &b->jobs[i];
        if (compile_source(j->info.name, NULL, j->k, &j->info, b->arch, b->fail_dir, &j->bin, &j->len) != ND_OK)
            j->bin = NULL;
    }
}

static void *compile_thread(void *arg) {
    nd_api_forbid(); /* its caller waits for it, maybe holding the API lock */
    return compile_jobs(arg);
}

void nd_cuda_kcache_prefetch(nd_cuda_kcache *c, const nd_kernel *const *ks, int n) {
    /* Injected faults count every kernel obtained, in order (obtain_cubin):
     * a sweep's points must not depend on threads. */
    if (n < 2 || __atomic_load_n(&nd_fault_active, __ATOMIC_RELAXED)) return;
    kc_job *jobs = calloc((size_t)n, sizeof *jobs);
    if (!jobs) return;
    int m = 0;
    pthread_mutex_lock(&c->lock);
    for (int i = 0; i < n; i++) {
        int want_vec, dup = 0;
        const uint64_t key = kernel_key(c, ks[i], &want_vec);
        for (int j = 0; j < m && !dup; j++) dup = jobs[j].key == key;
        if (dup || lookup(c, key, 0)) continue;
        if (c->disk) { /* on disk: loading it is quick, nd_cuda_kcache_get does */
            char path[1200];
            file_path(c, key, 0, path, sizeof path);
            if (access(path, R_OK) == 0) continue;
        }
        if (kernel_geometry(ks[i], want_vec, &jobs[m].info) != ND_OK) continue;
        jobs[m].k = ks[i];
        jobs[m].key = key;
        m++;
    }
    kc_batch b = {jobs, m, 0, c->arch, c->disk ? c->dir : NULL};
    pthread_mutex_unlock(&c->lock);
    if (m < 2) { /* one compile: nothing to overlap */
        free(jobs);
        return;
    }
    (void)nd_cuda_include_option(); /* found once, before the threads */
    const double t0 = nd_log_clock_us();
    const unsigned cores = uv_available_parallelism(); /* this process's CPUs (affinity) */
    int helpers = cores > KC_MAX_COMPILERS ? KC_MAX_COMPILERS : (int)(cores ? cores : 1);
    if (helpers > m) helpers = m;
    helpers--; /* this thread compiles too */
    pthread_t tid[KC_MAX_COMPILERS];
    int started = 0;
    while (started < helpers && pthread_create(&tid[started], NULL, compile_thread, &b) == 0) started++;
    (void)compile_jobs(&b);
    for (int t = 0; t < started; t++) pthread_join(tid[t], NULL);
    const double t1 = nd_log_clock_us();
    int added = 0;
    pthread_mutex_lock(&c->lock);
    for (int i = 0; i < m; i++) {
        kc_job *j = &jobs[i];
        if (!j->bin) continue;
        keep_compiled(c, j->key, 0, j->info.name, j->bin, j->len);
        kc_entry *e = NULL;
        if (!lookup(c, j->key, 0) && insert_new(j->key, 0, &e) == ND_OK) {
            e->e.info = j->info;
            if (entry_from_cubin(e, j->bin) == ND_OK) {
                link_entry(c, e);
                added++;
            } else {
                free(e);
            }
        }
        free(j->bin);
    }
    pthread_mutex_unlock(&c->lock);
    nd_logf(2, "compiled %d of a plan's %d new kernels on %d threads in %.1f ms", added, m, started + 1,
            (t1 - t0) / 1000);
    free(jobs);
}

nd_status nd_cuda_kcache_get_source(nd_cuda_kcache *c, uint64_t key, const char *what, const char *src,
                                    cudaLibrary_t *out) {
    key = nd_hash_bytes(key, src, strlen(src));
    pthread_mutex_lock(&c->lock);
    kc_entry *e = lookup(c, key, 1);
    if (e) {
        *out = e->e.lib;
        pthread_mutex_unlock(&c->lock);
        return ND_OK;
    }
    void *bin = NULL;
    size_t len = 0;
    nd_status s = insert_new(key, 1, &e);
    if (!s) s = obtain_cubin(c, key, 1, what, src, NULL, NULL, &bin, &len);
    if (!s) s = load(bin, what, &e->e.lib);
    free(bin);
    if (s) {
        free(e);
        pthread_mutex_unlock(&c->lock);
        return s;
    }
    link_entry(c, e);
    *out = e->e.lib;
    pthread_mutex_unlock(&c->lock);
    return ND_OK;
}
