/* The JIT's kernel cache (cpu_jit.h): one entry per kernel in memory, keyed
 * without its extents (jit_key: every length shares one compiled kernel);
 * shared objects on disk under <cache dir>/cpu/, named by a hash of the
 * generated source, the compiler (its resolved path, size and time) and
 * the CPU (model and feature flags: kernels are built with -march=native).
 * The compiler writes a temporary file that is renamed into place, so
 * readers, other processes included, never load a partial object. Compiles
 * run one at a time on a background thread (or on the caller with
 * ND_CPU_JIT=sync); shutting down stops a compile in progress. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <uv.h>

#include "backends/cpu/cpu_jit.h"
#include "common/alloc.h"
#include "common/dirs.h"
#include "common/dtype.h"
#include "common/api_guard.h"
#include "common/compile_count.h"
#include "common/env.h"
#include "common/error.h"
#include "common/hash.h"
#include "common/thread_name.h"

extern char **environ;

/* -std=c11 and -ffp-contract=off: no fused multiply-adds (the interpreter
 * has none, and ND_IR_EXACT ops must have none); -fno-math-errno and
 * -fno-trapping-math let sqrt and selects vectorise without changing a
 * result. Never -ffast-math: NaN, infinities and rounding must stay. */
static const char *const cc_flags[] = {"-std=c11", "-O3", "-march=native", "-fPIC", "-shared",
                                       "-fno-math-errno", "-fno-trapping-math",
                                       "-ffp-contract=off", "-w"};
#define N_FLAGS (sizeof cc_flags / sizeof cc_flags[0])
/* User loops' tile functions are built with the same flags (cpu_ufunc.c),
 * so the interpreter and the JIT compute the same bits. */
const char *const *const nd_cpu_jit_cc_flags = cc_flags;
const int nd_cpu_jit_n_cc_flags = (int)N_FLAGS;
#define MAX_CC_WORDS 16
#define BUCKETS 256
#define DEFAULT_MIN_POINTS ((int64_t)1 << 16)

enum { E_PENDING, E_READY, E_FAILED };

typedef struct entry {
    uint64_t hash;
    int state;
    /* what the kernel looked like, checked on every hit (a hash collision
     * must not run the wrong code) */
    int n_insts, n_loads, n_stores, ndim;
    char name[64];
    nd_cpu_jit_fn fn;
    void *dl;
    nd_cpu_jit_helper *helpers;
    size_t scratch_bytes;
    struct entry *next;
} entry;

typedef struct job {
    entry *e;
    uint64_t key;
    char *src;
    size_t len;
    struct job *next;
} job;

struct nd_cpu_jit {
    int sync;           /* compile on the caller */
    int64_t min_points; /* smallest iteration space compiled */
    char dir[1024];     /* <cache dir>/cpu */
    char cc[512];       /* ND_CC or "cc", split in place into cc_argv */
    char *cc_argv[MAX_CC_WORDS];
    int cc_words;
    int ready;          /* identity computed and directory made (1), or failed (-1) */
    uint64_t ident;
    unsigned seq;       /* temporary file names */
    uv_mutex_t mu;
    uv_cond_t cv;
    /* under mu: */
    int disabled;
    int stop;
    pid_t child; /* compiler running now, not yet reaped */
    int have_thread;
    uv_thread_t thread;
    job *head, *tail;
    entry *buckets[BUCKETS];
};

static atomic_llong n_compiled, n_loaded, n_failed, n_launches;
static atomic_int failure_logged;

void nd_cpu_jit_get_counts(nd_cpu_jit_counts *out) {
    out->compiled = atomic_load(&n_compiled);
    out->loaded = atomic_load(&n_loaded);
    out->failed = atomic_load(&n_failed);
    out->launches = atomic_load(&n_launches);
}

/* The first failure of a process is a warning, later ones debug output. */
static int failure_level(void) { return atomic_exchange(&failure_logged, 1) ? 3 : 1; }

/* ------------------------------------------------------------- settings */

nd_status nd_cpu_jit_create(const char *cache_dir, nd_cpu_jit **out) {
    *out = NULL;
    /* ND_CPU_JIT: 0 interprets every kernel, 1 compiles in the background,
     * sync compiles before the first launch. */
    int mode = 1, set;
    if (nd_env_choice(ND_ENV_CPU_JIT, &mode, &set)) return ND_ERR_ARG;
    if (set && mode == 0) return ND_OK;
    const int sync = set && mode == 2;
    int64_t min_points = DEFAULT_MIN_POINTS;
    if (nd_env_int64(ND_ENV_CPU_JIT_MIN, &min_points, &set)) return ND_ERR_ARG;
    const char *cc = getenv("ND_CC");
    if (!cc || !*cc) cc = "cc";
    nd_cpu_jit *j = nd_calloc(1, sizeof *j);
    if (!j) return nd_error_set(ND_ERR_OOM, "nd_init: out of memory for the cpu jit");
    if (uv_mutex_init(&j->mu) != 0) {
        free(j);
        return nd_error_set(ND_ERR_BACKEND, "nd_init: could not create the cpu jit lock");
    }
    if (uv_cond_init(&j->cv) != 0) {
        uv_mutex_destroy(&j->mu);
        free(j);
        return nd_error_set(ND_ERR_BACKEND, "nd_init: could not create the cpu jit lock");
    }
    j->sync = sync;
    j->min_points = min_points;
    const char *home = getenv("HOME");
    if (cache_dir && *cache_dir) snprintf(j->dir, sizeof j->dir, "%s/cpu", cache_dir);
    else snprintf(j->dir, sizeof j->dir, "%s/.cache/nd/cpu", home && *home ? home : ".");
    snprintf(j->cc, sizeof j->cc, "%s", cc);
    char *save = NULL;
    for (char *t = strtok_r(j->cc, " \t", &save); t && j->cc_words < MAX_CC_WORDS;
         t = strtok_r(NULL, " \t", &save))
        j->cc_argv[j->cc_words++] = t;
    if (j->cc_words == 0) j->disabled = 1;
    *out = j;
    return ND_OK;
}

/* ------------------------------------------------------------- identity */

/* The compiler's file, as exec would find it; 0 when found. */
static int find_compiler(const char *name, char *path, size_t cap) {
    if (strchr(name, '/')) return realpath(name, path) && access(path, X_OK) == 0 ? 0 : -1;
    const char *env = getenv("PATH");
    char dirs[4096];
    snprintf(dirs, sizeof dirs, "%s", env && *env ? env : "/usr/local/bin:/usr/bin:/bin");
    char *save = NULL;
    for (char *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        char cand[2048], real[PATH_MAX];
        snprintf(cand, sizeof cand, "%s/%s", *d ? d : ".", name);
        if (access(cand, X_OK) == 0 && realpath(cand, real) && strlen(real) < cap) {
            strcpy(path, real);
            return 0;
        }
    }
    return -1;
}

/* The CPU's model and feature flags (Linux); empty elsewhere. */
static uint64_t cpu_identity(uint64_t h) {
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return h;
    char line[8192];
    int seen = 0;
    while (seen < 2 && fgets(line, sizeof line, f))
        if (strncmp(line, "model name", 10) == 0 || strncmp(line, "flags", 5) == 0) {
            h = nd_hash_bytes(h, line, strlen(line));
            seen++;
        }
    fclose(f);
    return h;
}

/* Resolves the compiler and makes the cache directory, once. */
static int ensure_ready(nd_cpu_jit *j) {
    if (j->ready) return j->ready > 0;
    j->ready = -1;
    char path[PATH_MAX];
    struct stat sb;
    if (find_compiler(j->cc_argv[0], path, sizeof path) != 0 || stat(path, &sb) != 0) {
        nd_logf(1, "cpu jit: no C compiler '%s' (set ND_CC, or ND_CPU_JIT=0 to silence this); "
                "kernels stay interpreted", j->cc_argv[0]);
        return 0;
    }
    if (nd_make_dirs(j->dir) != 0) {
        nd_logf(1, "cpu jit: cannot create the cache directory %s (%s); kernels stay interpreted",
                j->dir, strerror(errno));
        return 0;
    }
    uint64_t h = nd_hash_u64(ND_HASH_SEED, ND_CPU_JIT_CODEGEN_VERSION);
    /* the pasted element functions and conversions: a kernel built before
     * an op's definition changed is never reused */
    h = nd_hash_bytes(h, nd_element_fns_source, strlen(nd_element_fns_source));
    h = nd_hash_bytes(h, nd_cpu_scalar_source, strlen(nd_cpu_scalar_source));
    h = nd_hash_bytes(h, path, strlen(path));
    h = nd_hash_u64(h, (uint64_t)sb.st_size);
    h = nd_hash_u64(h, (uint64_t)sb.st_mtime);
    for (int w = 0; w < j->cc_words; w++) h = nd_hash_bytes(h, j->cc_argv[w], strlen(j->cc_argv[w]) + 1);
    for (size_t f = 0; f < N_FLAGS; f++) h = nd_hash_bytes(h, cc_flags[f], strlen(cc_flags[f]) + 1);
    j->ident = cpu_identity(h);
    j->ready = 1;
    return 1;
}

/* --------------------------------------------------------------- entries */

static entry *lookup(nd_cpu_jit *j, uint64_t hash) {
    for (entry *e = j->buckets[hash % BUCKETS]; e; e = e->next)
        if (e->hash == hash) return e;
    return NULL;
}

static int same_shape(const entry *e, const cpu_prep *p) {
    return e->n_insts == p->n_insts && e->n_loads == p->n_loads && e->n_stores == p->n_stores &&
           e->ndim == p->ndim;
}

static uint64_t hash_prepared(uint64_t h, const cpu_access *a, int ndim) {
    h = nd_hash_u64(h, (uint64_t)a->off);
    for (int d = 0; d < ndim; d++) h = nd_hash_u64(h, (uint64_t)a->st[d]);
    return h;
}

/* An entry's key: the kernel without its extents, and what preparing it
 * made of them (its axes, strides and offsets after coalescing, and
 * whether its outputs stream), which with the kernel decide the source.
 * So a kernel whose length depends on data (a[mask] * 2 + 1) compiles
 * once; the extents are the compiled function's argument. */
static uint64_t jit_key(const nd_kernel *k, const cpu_prep *p) {
    uint64_t h = nd_hash_u64(nd_kernel_hash_shapeless(k), (uint64_t)p->ndim << 1 | (p->stream_stores != 0));
    for (int i = 0; i < p->n_loads; i++) h = hash_prepared(h, &p->loads[i], p->ndim);
    for (int i = 0; i < p->n_indices; i++) h = hash_prepared(h, &p->indices[i], p->ndim);
    for (int i = 0; i < p->n_stores; i++) h = hash_prepared(h, &p->stores[i].at, p->ndim);
    return h ? h : 1;
}

static void set_state(nd_cpu_jit *j, entry *e, int state) {
    uv_mutex_lock(&j->mu);
    e->state = state;
    uv_mutex_unlock(&j->mu);
}

static void so_path(const nd_cpu_jit *j, uint64_t key, char *path, size_t cap) {
    snprintf(path, cap, "%s/k-%016" PRIx64 ".so", j->dir, key);
}

/* Loads the shared object at path into e; 1 when e is ready. */
static int load(nd_cpu_jit *j, entry *e, const char *path) {
    void *dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!dl) return 0;
    void *fn = dlsym(dl, "nd_jit_kernel");
    if (!fn) {
        dlclose(dl);
        return 0;
    }
    uv_mutex_lock(&j->mu);
    e->dl = dl;
    e->fn = (nd_cpu_jit_fn)fn;
    e->state = E_READY;
    uv_mutex_unlock(&j->mu);
    atomic_fetch_add(&n_loaded, 1);
    return 1;
}

/* ------------------------------------------------------------- compiling */

/* The environment with TMPDIR=tmp: the compiler's own temporary files go
 * to our private directory, which is removed whatever happens. */
static char **child_env(const char *tmp_assign) {
    size_t n = 0;
    while (environ[n]) n++;
    char **env = nd_malloc((n + 2) * sizeof *env);
    if (!env) return NULL;
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "TMPDIR=", 7) != 0) env[m++] = environ[i];
    env[m++] = (char *)tmp_assign;
    env[m] = NULL;
    return env;
}

/* Runs the compiler in directory `work` on work/k.c; output goes to
 * work/k.log. Returns the exit status, or -1 when it could not be started or
 * was stopped. */
static int run_compiler(nd_cpu_jit *j, const char *work) {
    char src[1300], obj[1300], log[1300], tmp[1300];
    snprintf(src, sizeof src, "%s/k.c", work);
    snprintf(obj, sizeof obj, "%s/k.so", work);
    snprintf(log, sizeof log, "%s/k.log", work);
    snprintf(tmp, sizeof tmp, "TMPDIR=%s", work);
    char *argv[MAX_CC_WORDS + N_FLAGS + 6];
    int n = 0;
    for (int w = 0; w < j->cc_words; w++) argv[n++] = j->cc_argv[w];
    for (size_t f = 0; f < N_FLAGS; f++) argv[n++] = (char *)cc_flags[f];
    argv[n++] = "-o";
    argv[n++] = obj;
    argv[n++] = src;
    argv[n++] = "-lm";
    argv[n] = NULL;
    char **env = child_env(tmp);
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    if (!env || posix_spawn_file_actions_init(&fa) != 0) {
        free(env);
        return -1;
    }
    if (posix_spawnattr_init(&at) != 0) {
        posix_spawn_file_actions_destroy(&fa);
        free(env);
        return -1;
    }
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    /* Its own process group, so that destroy stops the driver and the
     * passes it runs; no blocked signals. */
    sigset_t none;
    sigemptyset(&none);
    posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK);
    posix_spawnattr_setpgroup(&at, 0);
    posix_spawnattr_setsigmask(&at, &none);
    pid_t pid;
    uv_mutex_lock(&j->mu);
    int rc = j->stop ? -1 : posix_spawnp(&pid, argv[0], &fa, &at, argv, env);
    if (rc == 0) j->child = pid;
    uv_mutex_unlock(&j->mu);
    posix_spawnattr_destroy(&at);
    posix_spawn_file_actions_destroy(&fa);
    free(env);
    if (rc != 0) return -1;
    /* Wait without reaping, so the pid (and process group) cannot be reused
     * while destroy may still signal it; then forget it and reap. */
    siginfo_t info;
    while (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT) != 0 && errno == EINTR) {
    }
    uv_mutex_lock(&j->mu);
    j->child = 0;
    uv_mutex_unlock(&j->mu);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int write_file(const char *path, const char *text, size_t len) {
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    int ok = fwrite(text, 1, len, f) == len;
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* Removes directory `dir` and the files in it. */
static void remove_work(const char *dir) {
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char path[1600];
        while ((e = readdir(d)))
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
                snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
                unlink(path);
            }
        closedir(d);
    }
    rmdir(dir);
}

/* Compiles src into the cache file for key and loads it into e. Everything
 * temporary lives in a private directory, the object is renamed into place. */
static void build(nd_cpu_jit *j, entry *e, uint64_t key, const char *src, size_t len) {
    char work[1200], path[1300], final[1300];
    uv_mutex_lock(&j->mu);
    unsigned seq = j->seq++;
    uv_mutex_unlock(&j->mu);
    snprintf(work, sizeof work, "%s/tmp-%016" PRIx64 "-%ld-%u", j->dir, key, (long)getpid(), seq);
    so_path(j, key, final, sizeof final);
    int rc = -1;
    uint64_t t0 = uv_hrtime();
    snprintf(path, sizeof path, "%s/k.c", work);
    if (mkdir(work, 0700) == 0 && write_file(path, src, len) == 0) rc = run_compiler(j, work);
    snprintf(path, sizeof path, "%s/k.so", work);
    if (rc == 0 && rename(path, final) == 0 && load(j, e, final)) {
        atomic_fetch_add(&n_compiled, 1);
        nd_compile_count_add();
        remove_work(work);
        nd_logf(3, "cpu jit: compiled kernel '%s' in %.0f ms into %s", e->name,
                1e-6 * (double)(uv_hrtime() - t0), final);
        return;
    }
    set_state(j, e, E_FAILED);
    uv_mutex_lock(&j->mu);
    int stopping = j->stop;
    uv_mutex_unlock(&j->mu);
    if (!stopping) {
        atomic_fetch_add(&n_failed, 1);
        char kept_c[1300], kept_l[1300];
        snprintf(kept_c, sizeof kept_c, "%s/failed-%016" PRIx64 ".c", j->dir, key);
        snprintf(kept_l, sizeof kept_l, "%s/failed-%016" PRIx64 ".log", j->dir, key);
        snprintf(path, sizeof path, "%s/k.c", work);
        rename(path, kept_c);
        snprintf(path, sizeof path, "%s/k.log", work);
        rename(path, kept_l);
        nd_logf(failure_level(), "cpu jit: '%s' could not compile kernel '%s' (%s %d); it "
                "stays interpreted (source and compiler output: %s, %s)", j->cc_argv[0],
                e->name, rc < 0 ? "not run or killed" : "exit status", rc, kept_c, kept_l);
    }
    remove_work(work);
}

static void compile_main(void *arg) {
    nd_cpu_jit *j = (nd_cpu_jit *)arg;
    nd_api_forbid(); /* nd's own thread: never takes the API lock */
    nd_thread_set_name("nd-jit");
    /* The compiler is a bonus for later launches (the interpreter runs the
     * kernel meanwhile): it runs at the lowest priority, so that it does not
     * take a core from the kernels and BLAS calls running now: on two
     * cores, one busy process beside a two-thread sgemm slowed it 1.8x at
     * nice 0 and 1.2x at nice 19. */
    (void)nd_thread_set_background();
    uv_mutex_lock(&j->mu);
    for (;;) {
        while (!j->stop && !j->head) uv_cond_wait(&j->cv, &j->mu);
        if (j->stop) break;
        job *jb = j->head;
        j->head = jb->next;
        if (!j->head) j->tail = NULL;
        uv_mutex_unlock(&j->mu);
        build(j, jb->e, jb->key, jb->src, jb->len);
        free(jb->src);
        free(jb);
        uv_mutex_lock(&j->mu);
    }
    uv_mutex_unlock(&j->mu);
}

/* Queues a compile (takes src); 0 when it could not be queued. */
static int enqueue(nd_cpu_jit *j, entry *e, uint64_t key, char *src, size_t len) {
    job *jb = nd_malloc(sizeof *jb);
    if (!jb) return 0;
    *jb = (job){e, key, src, len, NULL};
    uv_mutex_lock(&j->mu);
    int ok = !j->stop;
    if (ok && !j->have_thread) ok = j->have_thread = uv_thread_create(&j->thread, compile_main, j) == 0;
    if (ok) {
        if (j->tail) j->tail->next = jb;
        else j->head = jb;
        j->tail = jb;
        uv_cond_signal(&j->cv);
    }
    uv_mutex_unlock(&j->mu);
    if (!ok) free(jb);
    return ok;
}

/* First launch of a kernel: generate, then load from disk, compile now
 * (sync) or queue. Returns 1 when e is ready. */
static int start(nd_cpu_jit *j, entry *e, const nd_kernel *k, const cpu_prep *p) {
    nd_cpu_jit_source s;
    if (nd_cpu_jit_codegen(k, p, &s) != 0) {
        nd_logf(3, "cpu jit: kernel '%s' has no generator (reduction or random draws); "
                "interpreted", k->name);
        set_state(j, e, E_FAILED);
        return 0;
    }
    if (!ensure_ready(j)) {
        nd_cpu_jit_source_free(&s);
        uv_mutex_lock(&j->mu);
        j->disabled = 1;
        e->state = E_FAILED;
        uv_mutex_unlock(&j->mu);
        return 0;
    }
    e->helpers = s.helpers;
    e->scratch_bytes = s.scratch_bytes;
    s.helpers = NULL;
    uint64_t key = nd_hash_bytes(j->ident, s.src, s.len);
    if (nd_fault_hit(ND_FAULT_COMPILE)) {
        /* An injected failed compile (common/fault.h): interpreted, as a real one. */
        nd_logf(3, "cpu jit: kernel '%s' fails to compile (injected fault); interpreted", k->name);
        set_state(j, e, E_FAILED);
        nd_cpu_jit_source_free(&s);
        return 0;
    }
    char path[1300];
    so_path(j, key, path, sizeof path);
    if (load(j, e, path)) {
        nd_cpu_jit_source_free(&s);
        return 1;
    }
    if (j->sync) {
        build(j, e, key, s.src, s.len);
        nd_cpu_jit_source_free(&s);
        return e->state == E_READY;
    }
    if (!enqueue(j, e, key, s.src, s.len)) {
        set_state(j, e, E_FAILED);
        nd_cpu_jit_source_free(&s);
    }
    return 0;
}

/* The bytes [lo, hi) from slot s's address that kernel k's accesses of it
 * reach (a gathered load: anywhere its indexed axes reach too); 0 when no
 * access uses s. Every extent of k is at least 1 (slots_alias). */
static int slot_span(const nd_kernel *k, int32_t s, int64_t *lo, int64_t *hi) {
    int seen = 0;
    for (int32_t j = 0, n = k->n_loads + k->n_stores; j < n; j++) {
        const nd_ir_access *a = nd_kernel_access(k, j);
        if (a->slot != s) continue;
        int64_t e_lo, e_hi, item = (int64_t)nd_dtype_size((nd_dtype)a->dtype);
        nd_access_byte_span(k->ndim, k->shape, a, &e_lo, &e_hi);
        e_hi += 1;
        for (int32_t g = 0; j < k->n_loads && g < k->n_gathers; g++) {
            if (k->gathers[g].load != j) continue;
            for (int32_t q = 0; q < k->gathers[g].n_axes && q < ND_IR_GATHER_MAX_AXES; q++) {
                int64_t r = k->gathers[g].stride[q] * (k->gathers[g].size[q] > 0 ? k->gathers[g].size[q] - 1 : 0);
                if (r < 0) e_lo += r * item;
                else e_hi += r * item;
            }
        }
        if (!seen || e_lo < *lo) *lo = e_lo;
        if (!seen || e_hi > *hi) *hi = e_hi;
        seen = 1;
    }
    return seen;
}

/* Distinct slots whose reached bytes overlap, one of them written: the
 * compiled code assumes written slots alias nothing else. By address
 * ranges, not equal addresses: a slot's address is its buffer's plus the
 * step's offset (scheduler/kernel_rebase.h), so two slots of one buffer
 * may start apart and still meet. */
static int slots_alias(const nd_kernel *k, void *const *slots) {
    for (int d = 0; d < k->ndim; d++)
        if (k->shape[d] <= 0) return 0; /* nothing runs: nothing to alias */
    for (int s = 0; s < k->n_stores; s++) {
        int w = k->stores[s].at.slot;
        int64_t wlo, whi;
        if (!slot_span(k, w, &wlo, &whi)) continue;
        intptr_t w0 = (intptr_t)slots[w] + (intptr_t)wlo, w1 = (intptr_t)slots[w] + (intptr_t)whi;
        for (int o = 0; o < k->n_slots; o++) {
            int64_t olo, ohi;
            if (o == w || !slot_span(k, o, &olo, &ohi)) continue;
            intptr_t o0 = (intptr_t)slots[o] + (intptr_t)olo, o1 = (intptr_t)slots[o] + (intptr_t)ohi;
            if (o0 < w1 && w0 < o1) return 1;
        }
    }
    return 0;
}

int nd_cpu_jit_find(nd_cpu_jit *j, const nd_kernel *k, const cpu_prep *p, void *const *slots,
                    nd_cpu_jit_kernel *out) {
    if (!j || p->has_reduce || p->total < j->min_points || k->hash == 0 || slots_alias(k, slots))
        return 0;
    uv_mutex_lock(&j->mu);
    if (j->disabled) {
        uv_mutex_unlock(&j->mu);
        return 0;
    }
    uint64_t key = jit_key(k, p);
    entry *e = lookup(j, key);
    int fresh = 0;
    if (!e && (e = nd_calloc(1, sizeof *e))) {
        fresh = 1;
        e->hash = key;
        e->state = E_PENDING;
        e->n_insts = p->n_insts;
        e->n_loads = p->n_loads;
        e->n_stores = p->n_stores;
        e->ndim = p->ndim;
        snprintf(e->name, sizeof e->name, "%s", k->name);
        e->next = j->buckets[key % BUCKETS];
        j->buckets[key % BUCKETS] = e;
    }
    int ready = e && e->state == E_READY;
    uv_mutex_unlock(&j->mu);
    if (fresh) ready = start(j, e, k, p);
    if (!ready || !same_shape(e, p)) return 0;
    out->fn = e->fn;
    out->helpers = e->helpers;
    out->scratch_bytes = e->scratch_bytes;
    atomic_fetch_add(&n_launches, 1);
    return 1;
}

void nd_cpu_jit_params(const cpu_prep *p, uint64_t *params) {
    int q = 0;
    for (int j = 0; j < p->n_insts; j++) {
        const cpu_inst *pi = &p->insts[j];
        if (pi->kind != PI_PARAM) continue;
        params[q] = 0;
        nd_cpu_cast_fn(pi->cdtype, pi->dtype)(&params[q], &pi->param, NULL, NULL, 1);
        q++;
    }
    /* a kernel that gathers reads its bad-index record's address next */
    for (int j = 0; j < p->n_insts; j++)
        if (p->insts[j].kind == PI_GATHER) {
            params[q] = (uint64_t)(uintptr_t)p->bad;
            break;
        }
}

void nd_cpu_jit_destroy(nd_cpu_jit *j) {
    if (!j) return;
    uv_mutex_lock(&j->mu);
    j->stop = 1;
    if (j->child > 0) kill(-j->child, SIGKILL); /* its temporaries are in its own dir */
    uv_cond_broadcast(&j->cv);
    uv_mutex_unlock(&j->mu);
    if (j->have_thread) uv_thread_join(&j->thread);
    for (job *jb = j->head, *next; jb; jb = next) {
        next = jb->next;
        free(jb->src);
        free(jb);
    }
    for (int b = 0; b < BUCKETS; b++)
        for (entry *e = j->buckets[b], *next; e; e = next) {
            next = e->next;
            if (e->dl) dlclose(e->dl);
            free(e->helpers);
            free(e);
        }
    uv_cond_destroy(&j->cv);
    uv_mutex_destroy(&j->mu);
    free(j);
}
