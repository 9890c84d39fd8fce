/* User loops on the CPU backend (backend.h's prepare_ufunc): the loop's
 * function and a tile function over it are compiled with the system C
 * compiler ($ND_CC, default cc; the JIT's flags) into
 * <cache dir>/cpu/u-<key>.so, loaded with dlopen, and the tile function is
 * registered with the loop (common/ufunc_loop.h) for the interpreter's
 * ND_IR_UFUNC instructions. Unlike the JIT, which falls back to the
 * interpreter, a user loop has no other implementation: no compiler, or a
 * body that does not compile, is nd_ufunc_define's error. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backends/cpu/cpu_internal.h"
#include "backends/cpu/cpu_jit.h"
#include "common/alloc.h"
#include "common/dirs.h"
#include "common/error.h"
#include "common/fault.h"
#include "common/hash.h"
#include "common/strbuf.h"

#define MAX_WORDS 16

/* The loop's function, then nd_ufunc_tile over contiguous arrays (bool
 * stored as one byte, 0 or 1, passed as a C bool). */
static void tile_source(nd_strbuf *sb, const nd_ufunc_loop *l) {
    char nm[ND_UFUNC_FN_NAME];
    nd_ufunc_fn_name(nm, sizeof nm, l);
    nd_ufunc_emit_types(sb);
    nd_ufunc_emit_fn(sb, l, "static inline");
    const char *rt = l->ret == ND_BOOL ? "uint8_t" : nd_ufunc_type_name((nd_dtype)l->ret);
    nd_strbuf_printf(sb, "#line 1 \"nd_ufunc_tile\"\n"
                         "void nd_ufunc_tile(int64_t n, void *out, const void *const *in);\n"
                         "void nd_ufunc_tile(int64_t n, void *out, const void *const *in) {\n"
                         "    %s *o = (%s *)out;\n", rt, rt);
    for (int k = 0; k < l->nargs; k++) {
        const char *t = l->args[k] == ND_BOOL ? "uint8_t" : nd_ufunc_type_name((nd_dtype)l->args[k]);
        nd_strbuf_printf(sb, "    const %s *a%d = (const %s *)in[%d];\n", t, k, t, k);
    }
    nd_strbuf_printf(sb, "    for (int64_t i = 0; i < n; i++) o[i] = (%s)%s(", rt, nm);
    for (int k = 0; k < l->nargs; k++)
        nd_strbuf_printf(sb, l->args[k] == ND_BOOL ? "%s(a%d[i] != 0)" : "%sa%d[i]", k ? ", " : "", k);
    nd_strbuf_printf(sb, ");\n}\n");
}

/* Runs argv with stdin from /dev/null and stdout+stderr into log.
 * Returns the exit status, -1 when it did not run (errno set). */
static int run(char *const *argv, const char *log) {
    posix_spawn_file_actions_t fa;
    if (posix_spawn_file_actions_init(&fa) != 0) return -1;
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    extern char **environ;
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        errno = rc;
        return -1;
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* The compiler's output, trimmed for a message. */
static void read_log(const char *path, char *out, size_t cap) {
    out[0] = 0;
    FILE *f = fopen(path, "r");
    if (!f) return;
    size_t n = fread(out, 1, cap - 1, f);
    fclose(f);
    out[n] = 0;
    while (n && (out[n - 1] == '\n' || out[n - 1] == ' ')) out[--n] = 0;
}

static nd_status load(const char *fn, const nd_ufunc_loop *l, const char *so) {
    void *dl = dlopen(so, RTLD_NOW | RTLD_LOCAL);
    void *f = dl ? dlsym(dl, "nd_ufunc_tile") : NULL;
    if (!f) {
        const char *why = dlerror();
        if (dl) dlclose(dl);
        return nd_error_set(ND_ERR_COMPILE, "%s: could not load the compiled '%s' (%s): %s", fn,
                            l->name, so, why ? why : "no nd_ufunc_tile");
    }
    /* kept loaded for the process: kernels may call it until the end */
    nd_ufunc_loop_set_tile(l->id, (nd_ufunc_tile_fn)f);
    return ND_OK;
}

nd_status nd_cpu_prepare_ufunc(nd_backend *be, const char *fn, const nd_ufunc_loop *l) {
    nd_cpu_state *st = (nd_cpu_state *)be->impl;
    if (nd_ufunc_loop_tile(l->id)) return ND_OK; /* defined before */
    if (nd_fault_hit(ND_FAULT_COMPILE))
        return nd_error_set(ND_ERR_COMPILE, "%s: '%s' could not be compiled (injected fault)", fn, l->name);
    const char *env = getenv("ND_CC");
    char cc[512];
    snprintf(cc, sizeof cc, "%s", env && *env ? env : "cc");
    char *argv[MAX_WORDS + 24];
    int n = 0;
    char *save = NULL;
    for (char *t = strtok_r(cc, " \t", &save); t && n < MAX_WORDS; t = strtok_r(NULL, " \t", &save))
        argv[n++] = t;
    if (n == 0)
        return nd_error_set(ND_ERR_UNSUPPORTED, "%s: ND_CC is blank: user functions on the cpu backend "
                            "are compiled with the system C compiler (set ND_CC to one, e.g. cc)", fn);
    nd_strbuf src = {0};
    tile_source(&src, l);
    if (src.failed) return nd_error_set(ND_ERR_OOM, "%s: out of host memory compiling '%s'", fn, l->name);
    uint64_t key = nd_hash_bytes(ND_HASH_SEED, src.buf, src.len);
    key = nd_hash_bytes(key, env && *env ? env : "cc", strlen(env && *env ? env : "cc"));
    for (int f = 0; f < nd_cpu_jit_n_cc_flags; f++)
        key = nd_hash_bytes(key, nd_cpu_jit_cc_flags[f], strlen(nd_cpu_jit_cc_flags[f]) + 1);
    char so[1200], tmp_so[1300], c_path[1300], log[1300];
    snprintf(so, sizeof so, "%s/u-%016" PRIx64 ".so", st->ufunc_dir, key);
    if (access(so, R_OK) == 0 && load(fn, l, so) == ND_OK) {
        nd_strbuf_free(&src);
        return ND_OK;
    }
    if (nd_make_dirs(st->ufunc_dir) != 0) {
        nd_strbuf_free(&src);
        return nd_error_set(ND_ERR_IO, "%s: cannot create the cache directory %s (%s) for '%s' "
                            "(set ND_CACHE_DIR or nd_config.cache_dir to a writable one)",
                            fn, st->ufunc_dir, strerror(errno), l->name);
    }
    static atomic_uint seq;
    unsigned q = atomic_fetch_add(&seq, 1);
    snprintf(c_path, sizeof c_path, "%s/tmpu-%016" PRIx64 "-%ld-%u.c", st->ufunc_dir, key, (long)getpid(), q);
    snprintf(tmp_so, sizeof tmp_so, "%s/tmpu-%016" PRIx64 "-%ld-%u.so", st->ufunc_dir, key, (long)getpid(), q);
    snprintf(log, sizeof log, "%s/tmpu-%016" PRIx64 "-%ld-%u.log", st->ufunc_dir, key, (long)getpid(), q);
    FILE *f = fopen(c_path, "w");
    int wrote = f && fwrite(src.buf, 1, src.len, f) == src.len;
    if (f && fclose(f) != 0) wrote = 0;
    nd_strbuf_free(&src);
    if (!wrote) {
        unlink(c_path);
        return nd_error_set(ND_ERR_IO, "%s: cannot write %s for '%s' (%s)", fn, c_path, l->name,
                            strerror(errno));
    }
    for (int i = 0; i < nd_cpu_jit_n_cc_flags; i++) argv[n++] = (char *)nd_cpu_jit_cc_flags[i];
    argv[n++] = "-o";
    argv[n++] = tmp_so;
    argv[n++] = c_path;
    argv[n++] = "-lm";
    argv[n] = NULL;
    int rc = run(argv, log);
    nd_status s = ND_OK;
    if (rc < 0) {
        s = nd_error_set(ND_ERR_UNSUPPORTED, "%s: no C compiler '%s' (%s): on the cpu backend user "
                         "functions are compiled with the system C compiler; install one or set "
                         "ND_CC", fn, argv[0], strerror(errno));
    } else if (rc != 0) {
        char out[3000];
        read_log(log, out, sizeof out);
        s = nd_error_set(ND_ERR_COMPILE, "%s: '%s' does not compile (%s; lines are the body's, line 1 "
                         "its first):\n%s", fn, l->name, argv[0], out);
    } else if (rename(tmp_so, so) != 0) {
        s = nd_error_set(ND_ERR_IO, "%s: cannot place %s (%s)", fn, so, strerror(errno));
    } else {
        s = load(fn, l, so);
    }
    unlink(c_path);
    unlink(log);
    unlink(tmp_so);
    return s;
}
