#include "emulate_harness.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backends/cuda/cuda_loader.h"
#include "common/error.h"

#ifndef ND_EMU_SHIM
#error "build with -DND_EMU_SHIM='\"/path/to/emulate_shim.h\"'"
#endif

/* The host build: -ffp-contract=off so that __f*_rn stay unfused as on the
 * device. */
#define EMU_GXX "g++ -std=c++17 -O1 -ffp-contract=off -fno-strict-aliasing -w -shared -fPIC"

const char *emu_shim(void) { return access(ND_EMU_SHIM, R_OK) == 0 ? ND_EMU_SHIM : NULL; }

static uint64_t fnv1a(uint64_t h, const void *p, size_t n) {
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 0x100000001b3ull;
    return h;
}

/* ND_EMU_CACHE's file for what hashes to h (NULL without a cache): a
 * check with the same inputs later in the run (the sanitised suites after
 * the release ones) reads it instead of doing the same work again. */
static const char *cache_file(char *buf, size_t size, const char *kind, uint64_t h) {
    const char *cache = getenv("ND_EMU_CACHE");
    if (!cache || !*cache) return NULL;
    snprintf(buf, size, "%s/%s-%016llx", cache, kind, (unsigned long long)h);
    return buf;
}

int emu_nvrtc_compiles(const char *src, const char *name, const char *inc) {
    if (nd_cuda_load_nvrtc() != ND_OK) {
        printf("NVRTC: %s\n", nd_last_error());
        return 0;
    }
    /* --Ofast-compile=max: the check is that the source compiles (front
     * end and ptxas, for sm_90), not how fast its code runs. On a 2-core
     * VM small_solve_check (28 compiles of unrolled solves) took 108 s
     * without it, 38 s with it. Toolkits before 12.8 lack the option: then
     * the same check without it. */
    const char *opts[5] = {"--gpu-architecture=sm_90", "--std=c++17", "--device-as-default-execution-space"};
    int n_base = 3;
    if (inc && inc[0]) opts[n_base++] = inc;
    opts[n_base] = "--Ofast-compile=max"; /* passed unless refused; not part of the cache's key */
    static int fast_refused;
    int major = 0, minor = 0;
    nvrtcVersion(&major, &minor);
    uint64_t h = 0xcbf29ce484222325ull;
    h = fnv1a(h, &major, sizeof major);
    h = fnv1a(h, &minor, sizeof minor);
    for (int i = 0; i < n_base; i++) h = fnv1a(h, opts[i], strlen(opts[i]) + 1);
    h = fnv1a(h, src, strlen(src));
    char buf[1100];
    const char *passed = cache_file(buf, sizeof buf, "nvrtc", h); /* only a pass is kept */
    if (passed && access(passed, F_OK) == 0) return 1;
    nvrtcProgram prog;
    if (nvrtcCreateProgram(&prog, src, name, 0, NULL, NULL) != NVRTC_SUCCESS) return 0;
    nvrtcResult r = nvrtcCompileProgram(prog, fast_refused ? n_base : n_base + 1, opts);
    if (r == NVRTC_ERROR_INVALID_OPTION && !fast_refused) {
        fast_refused = 1;
        r = nvrtcCompileProgram(prog, n_base, opts);
    }
    if (r != NVRTC_SUCCESS) {
        size_t n = 0;
        nvrtcGetProgramLogSize(prog, &n);
        char *log = malloc(n + 1);
        if (log && nvrtcGetProgramLog(prog, log) == NVRTC_SUCCESS) {
            log[n] = 0;
            printf("NVRTC error in %s:\n%.4000s\n", name, log);
        }
        free(log);
    }
    nvrtcDestroyProgram(&prog);
    FILE *f = r == NVRTC_SUCCESS && passed ? fopen(passed, "w") : NULL;
    if (f) fclose(f);
    return r == NVRTC_SUCCESS;
}

/* The shim's text folded into h (a shim changed within a cache's life
 * makes other objects). */
static uint64_t hash_shim(uint64_t h) {
    FILE *f = fopen(ND_EMU_SHIM, "rb");
    if (!f) return h;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) h = fnv1a(h, buf, n);
    fclose(f);
    return h;
}

/* The shim (and, where inc names CUDA's headers, the Philox header the
 * generator's random kernels include) precompiled at the second compile
 * in one process and workdir (emulate_check's 211 kernels; a test of
 * test_ops compiles one): parsing them was ~0.3 of g++'s ~0.67 s a
 * kernel, and emulate_check took 182 s with it against 255 without on a
 * 2-core VM. Returns the header a source includes first; g++ takes the
 * .gch beside it when its flags match, else reads the header itself (the
 * same text either way). */
static const char *pch_header(const char *workdir, const char *inc) {
    static char made_for[1400], seen[1400], header[1200];
    char key[1400];
    snprintf(key, sizeof key, "%s|%s", workdir, inc);
    if (strcmp(key, made_for) == 0) return header;
    if (strcmp(key, seen) != 0) {
        snprintf(seen, sizeof seen, "%s", key);
        return ND_EMU_SHIM;
    }
    snprintf(header, sizeof header, "%s/emu_pch.h", workdir);
    FILE *f = fopen(header, "w");
    if (!f || fprintf(f, "#include \"%s\"\n%s", ND_EMU_SHIM,
                      inc[0] ? "#include <curand_philox4x32_x.h>\n" : "") < 0 || fclose(f))
        return ND_EMU_SHIM;
    char tmp[1300], cmd[4000];
    snprintf(tmp, sizeof tmp, "%s.gch.%ld.tmp", header, (long)getpid());
    snprintf(cmd, sizeof cmd, EMU_GXX " %s -x c++-header -o '%s' '%s'", inc, tmp, header);
    if (system(cmd) != 0) {
        remove(tmp);
        return ND_EMU_SHIM;
    }
    char gch[1300];
    snprintf(gch, sizeof gch, "%s.gch", header);
    if (rename(tmp, gch) != 0) return ND_EMU_SHIM;
    snprintf(made_for, sizeof made_for, "%s", key);
    return header;
}

void *emu_build(const char *text, const char *workdir, const char *stem, const char *inc) {
    if (!inc) inc = "";
    char path[1200], so[1200], tmp[1300];
    snprintf(path, sizeof path, "%s/%s.cpp", workdir, stem);
    uint64_t h = 0xcbf29ce484222325ull;
    h = fnv1a(h, EMU_GXX, sizeof EMU_GXX);
    h = fnv1a(h, inc, strlen(inc) + 1);
    h = hash_shim(h);
    h = fnv1a(h, text, strlen(text));
    char buf[1100];
    const char *cached = cache_file(buf, sizeof buf, "gxx", h);
    if (cached)
        snprintf(so, sizeof so, "%s.so", cached);
    else
        snprintf(so, sizeof so, "%s/%s.so", workdir, stem);
    if (!cached || access(so, R_OK) != 0) {
        FILE *f = fopen(path, "w");
        if (!f || fprintf(f, "#include \"%s\"\n%s\n", pch_header(workdir, inc), text) < 0 || fclose(f)) {
            printf("cannot write %s\n", path);
            return NULL;
        }
        /* Compiled under another name and renamed: a reader of the cache
         * never opens half an object. */
        snprintf(tmp, sizeof tmp, "%s.%ld.tmp", so, (long)getpid());
        size_t len = strlen(EMU_GXX) + strlen(inc) + strlen(tmp) + strlen(path) + 32;
        char *cmd = malloc(len);
        if (!cmd) return NULL;
        snprintf(cmd, len, EMU_GXX " %s -o '%s' '%s' -lpthread", inc, tmp, path);
        int rc = system(cmd);
        free(cmd);
        if (rc != 0 || rename(tmp, so) != 0) {
            printf("g++ failed for %s\n", path);
            remove(tmp);
            return NULL;
        }
    }
    void *handle = dlopen(so, RTLD_NOW | RTLD_LOCAL);
    if (!handle) printf("dlopen: %s\n", dlerror());
    return handle;
}

unsigned emu_grid_for(int64_t work) {
    int64_t g = (work + 255) / 256, cap = 4 * 32;
    if (g > cap) g = cap;
    return g < 1 ? 1u : (unsigned)g;
}
