#include "common/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/api_guard.h"
#include "common/callsite.h"

/* The last error is per thread (nd.h: "The last error is per thread"), so it
 * lives in thread-local storage rather than the runtime struct. */
static _Thread_local nd_status last_status;
static _Thread_local char last_message[1024];

/* The log level is process-wide and set once by nd_init from the resolved
 * ND_LOG; it is kept here because the common layer cannot see the runtime. */
static int log_level;

/* nd_set_error_handler's; written and read under the API lock. */
static nd_error_handler error_handler;
static void *error_handler_ctx;

nd_status nd_error_set(nd_status code, const char *fmt, ...) {
    /* Formatted apart first: an argument may be the last message itself
     * (a message passed on with "%s"). */
    char msg[sizeof last_message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* Deep code (a backend, the graph layer) does not know which public
     * call it runs under; the API guard does, so a message that does not
     * start with a function's name gets the outermost public call's:
     * "nd_sync: cpu backend: out of host memory allocating ...". */
    const char *fn = nd_api_current();
    const char *file = nd_api_site_file();
    size_t fl = fn ? strlen(fn) : 0;
    if (fn && file && strncmp(msg, fn, fl) == 0 && msg[fl] == ':')
        /* "nd_add: shapes ..." -> "nd_add (heat.c:42): shapes ..." */
        snprintf(last_message, sizeof last_message, "%.200s (%.200s:%d)%.600s", fn, nd_site_basename(file),
                 nd_api_site_line(), msg + fl);
    else if (fn && file && strncmp(msg, "nd_", 3) != 0)
        snprintf(last_message, sizeof last_message, "%.200s (%.200s:%d): %.600s", fn, nd_site_basename(file),
                 nd_api_site_line(), msg);
    else if (fn && strncmp(msg, "nd_", 3) != 0)
        snprintf(last_message, sizeof last_message, "%.200s: %.800s", fn, msg);
    else
        memcpy(last_message, msg, sizeof msg);
    last_status = code;
    nd_api_tls.err_gen++;
    /* the outermost call reports it as it returns (nd_error_report) */
    if (nd_api_tls.depth > 0) nd_api_tls.err_new++;
    return code;
}

void nd_error_report(void) {
    nd_api_tls.err_new = 0;
    if (last_status == ND_OK) return; /* cleared again within the call */
    if (log_level >= 1) fprintf(stderr, "nd error: %s: %s\n", nd_status_name(last_status), last_message);
    /* The handler runs inside the failing call, under the API lock: calls
     * it makes nest in that call, and their errors are not reported again
     * (the report happens only when the outermost call ends). */
    if (error_handler)
        error_handler(last_status, last_message, nd_api_site_file(), nd_api_site_file() ? nd_api_site_line() : 0,
                      error_handler_ctx);
}

void nd_set_error_handler(nd_error_handler fn, void *ctx) {
    ND_API_GUARD();
    error_handler = fn;
    error_handler_ctx = fn ? ctx : NULL;
}

void nd_error_null_input(const char *func, const char *arg) {
    if (last_status != ND_OK) return;
    nd_error_set(ND_ERR_ARG,
                 "%s: argument '%s' is NULL (pass an array returned by an nd_ function; a NULL "
                 "usually means an earlier call failed, see nd_last_error)",
                 func, arg);
}

const char *nd_format_shape(char *buf, size_t cap, int ndim, const int64_t *shape) {
    size_t n = 0;
    if (cap == 0) return buf;
    buf[0] = '\0';
    n += (size_t)snprintf(buf + n, cap - n, "(");
    for (int i = 0; i < ndim && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, i ? ",%lld" : "%lld", (long long)shape[i]);
    if (n < cap && ndim == 1) n += (size_t)snprintf(buf + n, cap - n, ",");
    if (n < cap) snprintf(buf + n, cap - n, ")");
    return buf;
}

double nd_log_clock_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

void nd_logf(int level, const char *fmt, ...) {
    if (level > log_level) return;
    static const char *names[] = {"", "warning", "info", "debug"};
    va_list ap;
    va_start(ap, fmt);
    /* Debug lines carry a monotonic time stamp (ms, any origin), so a run
     * with ND_LOG=3 reads as a timeline of flushes, launches and waits. */
    if (level >= 3) fprintf(stderr, "nd debug %.3f: ", nd_log_clock_us() * 1e-3);
    else fprintf(stderr, "nd %s: ", names[level < 0 ? 0 : level > 3 ? 3 : level]);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

void nd_log_set_level(int level) { log_level = level; }
int nd_log_enabled(int level) { return log_level >= level; }

nd_status nd_last_status(void) {
    ND_API_UNLOCKED(); /* per thread */
    return last_status;
}

const char *nd_last_error(void) {
    ND_API_UNLOCKED(); /* per thread */
    return last_status == ND_OK ? "" : last_message;
}

void nd_error_save(nd_error_saved *out) {
    _Static_assert(sizeof out->message == sizeof last_message, "nd_error_saved holds a whole message");
    out->status = last_status;
    out->gen = nd_api_tls.err_gen;
    memcpy(out->message, last_message, sizeof out->message);
}

void nd_error_restore(const nd_error_saved *saved) {
    last_status = saved->status;
    /* what failed in between is not reported: nd_error_set counted it in
     * err_new too when inside a call, as it is at the restore (save and
     * restore pair up within one function) */
    if (nd_api_tls.depth > 0) nd_api_tls.err_new -= nd_api_tls.err_gen - saved->gen;
    nd_api_tls.err_gen = saved->gen;
    memcpy(last_message, saved->message, sizeof last_message);
}

void nd_clear_error(void) {
    ND_API_UNLOCKED(); /* per thread */
    last_status = ND_OK;
    last_message[0] = '\0';
}

const char *nd_status_name(nd_status s) {
    ND_API_UNLOCKED(); /* constant */
    static const char *names[] = {"ND_OK",           "ND_ERR_ARG",        "ND_ERR_SHAPE",
                                  "ND_ERR_DTYPE",    "ND_ERR_INDEX",      "ND_ERR_OOM",
                                  "ND_ERR_BACKEND",  "ND_ERR_COMPILE",    "ND_ERR_IO",
                                  "ND_ERR_STATE",    "ND_ERR_UNSUPPORTED", "ND_ERR_LINALG"};
    return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "?";
}
