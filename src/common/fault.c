/* Fault injection (fault.h). The counters are atomic: points are passed on
 * the recording thread, the executor thread and the CPU backend's workers. */
#include "common/fault.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__GLIBC__)
#include <execinfo.h>
#endif

#include "common/error.h"

int nd_fault_active;

static int64_t counts[ND_FAULT_NUM_KINDS];
static int64_t failed;
static int armed_kind = -1; /* -1: count only */
static int64_t armed_n;
static int armed_persistent;
static int from_env; /* ND_FAULT armed it: report at shutdown */

static const char *const kind_names[ND_FAULT_NUM_KINDS] = {"host_alloc", "device_alloc", "compile",
                                                           "backend_call"};
static int trace;    /* ND_FAULT_TRACE=1 at arming: each failed point prints its call stack */

/* The call stack of a failed point on stderr: which allocation or call a
 * sweep's wrong run failed, where the sweep itself cannot say (a run on a
 * machine without a debugger). Addresses resolve with addr2line against
 * the binary (or libnd) the frame names. */
static void print_stack(nd_fault_kind kind, int64_t c) {
    fprintf(stderr, "nd fault: %s point %lld failed (injected); its call stack:\n", kind_names[kind], (long long)c);
#if defined(__GLIBC__)
    void *frames[32];
    int n = backtrace(frames, 32);
    backtrace_symbols_fd(frames, n, 2);
#else
    fprintf(stderr, "  (no backtrace on this C library)\n");
#endif
}

const char *nd_fault_kind_name(nd_fault_kind kind) {
    return (unsigned)kind < ND_FAULT_NUM_KINDS ? kind_names[kind] : "?";
}

int nd_fault_hit_slow(nd_fault_kind kind) {
    int64_t c = __atomic_add_fetch(&counts[kind], 1, __ATOMIC_RELAXED);
    if ((int)kind != __atomic_load_n(&armed_kind, __ATOMIC_RELAXED)) return 0;
    int64_t n = __atomic_load_n(&armed_n, __ATOMIC_RELAXED);
    if (c == n || (__atomic_load_n(&armed_persistent, __ATOMIC_RELAXED) && c > n)) {
        __atomic_add_fetch(&failed, 1, __ATOMIC_RELAXED);
        if (__atomic_load_n(&trace, __ATOMIC_RELAXED)) print_stack(kind, c);
        return 1;
    }
    return 0;
}

nd_status nd_fault_backend_error(const char *backend, const char *call) {
    return nd_error_set(ND_ERR_BACKEND, "%s backend: %s failed (injected fault)", backend, call);
}

void nd_fault_arm(nd_fault_kind kind, int64_t n, int persistent) {
    __atomic_store_n(&nd_fault_active, 0, __ATOMIC_SEQ_CST);
    for (int k = 0; k < ND_FAULT_NUM_KINDS; k++) __atomic_store_n(&counts[k], 0, __ATOMIC_RELAXED);
    __atomic_store_n(&failed, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&armed_kind, n > 0 ? (int)kind : -1, __ATOMIC_RELAXED);
    __atomic_store_n(&armed_n, n, __ATOMIC_RELAXED);
    __atomic_store_n(&armed_persistent, persistent, __ATOMIC_RELAXED);
    const char *t = getenv("ND_FAULT_TRACE");
    __atomic_store_n(&trace, t && *t && strcmp(t, "0") != 0, __ATOMIC_RELAXED);
    __atomic_store_n(&nd_fault_active, 1, __ATOMIC_SEQ_CST);
}

void nd_fault_disarm(void) {
    __atomic_store_n(&nd_fault_active, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&armed_kind, -1, __ATOMIC_RELAXED);
}

int64_t nd_fault_count(nd_fault_kind kind) {
    return (unsigned)kind < ND_FAULT_NUM_KINDS ? __atomic_load_n(&counts[kind], __ATOMIC_RELAXED) : 0;
}

int64_t nd_fault_failed(void) { return __atomic_load_n(&failed, __ATOMIC_RELAXED); }

nd_status nd_fault_from_env(void) {
    const char *s = getenv("ND_FAULT");
    if (!s || !*s || from_env) return ND_OK; /* a restart keeps counting */
    if (!strcmp(s, "count")) {
        from_env = 1;
        nd_fault_arm(ND_FAULT_HOST_ALLOC, 0, 0);
        return ND_OK;
    }
    for (int k = 0; k < ND_FAULT_NUM_KINDS; k++) {
        size_t len = strlen(kind_names[k]);
        if (strncmp(s, kind_names[k], len) || s[len] != ':') continue;
        char *end = NULL;
        long long n = strtoll(s + len + 1, &end, 10);
        int persistent = end && *end == '+';
        if (persistent) end++;
        if (end == s + len + 1 || *end || n < 1) break;
        from_env = 1;
        nd_fault_arm((nd_fault_kind)k, n, persistent);
        return ND_OK;
    }
    return nd_error_set(ND_ERR_ARG, "nd_init: environment variable ND_FAULT='%s' is not 'count' or "
                        "KIND:N or KIND:N+ with KIND one of host_alloc, device_alloc, compile, "
                        "backend_call and N >= 1 (a testing aid: unset it)", s);
}

void nd_fault_report_at_shutdown(void) {
    if (!from_env) return;
    fprintf(stderr, "nd fault points: host_alloc=%lld device_alloc=%lld compile=%lld "
            "backend_call=%lld failed=%lld\n",
            (long long)nd_fault_count(ND_FAULT_HOST_ALLOC), (long long)nd_fault_count(ND_FAULT_DEVICE_ALLOC),
            (long long)nd_fault_count(ND_FAULT_COMPILE), (long long)nd_fault_count(ND_FAULT_BACKEND_CALL),
            (long long)nd_fault_failed());
}
