/* Errors that say where: call sites in messages (this file is compiled
 * with -DND_DEBUG_CALLSITES, so every nd call below passes its line), the
 * error handler (nd_set_error_handler), ND_LOG=1's line per failure,
 * nd_shutdown's report of handles still alive, and the test `callsites`'s
 * partner: calls through (nd_add) skip the macro and carry no site.
 *
 * Expected messages are written out whole; LINE_OF marks the line whose
 * number they carry. */
#include "common.h"
#include "common/fault.h"

#include <pthread.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef ND_DEBUG_CALLSITES
#error "test_callsites.c must be compiled with -DND_DEBUG_CALLSITES (tests/meson.build)"
#endif

#define BROADCAST_FIX "(each dimension must match or be 1; reshape or view one operand)"

static char expect[1024];
#define EXPECT(...) snprintf(expect, sizeof expect, __VA_ARGS__)

/* ---------------------------------------------------------- the handler */

typedef struct {
    int calls;
    nd_status status;
    char message[1024];
    char file[256];
    int line;
    pthread_t thread;
    int nested_calls; /* nd calls the handler made */
    int call_nd;      /* make a failing nd call from the handler */
} heard;

static void on_error(nd_status st, const char *message, const char *file, int line, void *ctx) {
    heard *h = ctx;
    h->calls++;
    h->status = st;
    snprintf(h->message, sizeof h->message, "%s", message);
    snprintf(h->file, sizeof h->file, "%s", file ? file : "(null)");
    h->line = line;
    h->thread = pthread_self();
    cr_expect_str_eq(nd_last_error(), message, "the handler sees the thread's last error");
    if (h->call_nd) {
        h->nested_calls++;
        cr_expect_null(nd_reshape(NULL, ND_SHAPE(2)), "a failing nd call inside the handler");
    }
}

NDT_TEST(callsites, message_names_the_line) {
    nd_scope_begin(); /* releases the chain's inner nd_mul below */
    nd_array *a = nd_zeros(ND_FLOAT32, ND_SHAPE(3, 4));
    nd_array *b = nd_zeros(ND_FLOAT32, ND_SHAPE(5));
    int line = __LINE__; nd_array *c = nd_add(a, b);
    cr_assert_null(c);
    EXPECT("nd_add (test_callsites.c:%d): shapes (3,4) and (5,) cannot be broadcast together " BROADCAST_FIX, line);
    cr_expect_str_eq(nd_last_error(), expect);
    cr_expect_eq(nd_last_status(), ND_ERR_SHAPE);
    /* In a chain, the call that failed: its arguments (other wrapped
     * calls) record their own sites first. */
    nd_clear_error();
    nd_array *ok = nd_mul(a, a);
    line = __LINE__; nd_array *d = nd_sub(nd_mul(a, a),
                                          nd_add(a, b));
    cr_assert_null(d);
    EXPECT("nd_add (test_callsites.c:%d): shapes (3,4) and (5,) cannot be broadcast together " BROADCAST_FIX,
           line + 1);
    cr_expect_str_eq(nd_last_error(), expect, "the inner nd_add on the next line failed");
    /* Without the macro (the function's name in parentheses) no site. */
    nd_clear_error();
    cr_assert_null((nd_add)(a, b));
    cr_expect_str_eq(nd_last_error(), "nd_add: shapes (3,4) and (5,) cannot be broadcast together " BROADCAST_FIX);
    /* A deep message (no nd_ prefix) gets the function and the site. */
    nd_clear_error();
    line = __LINE__; cr_expect_eq(nd_to_host(a, NULL, 0), ND_ERR_ARG);
    EXPECT("nd_to_host (test_callsites.c:%d): dst is NULL (pass a buffer of at least 48 bytes)", line);
    cr_expect_str_eq(nd_last_error(), expect);
    nd_clear_error();
    nd_free(ok);
    nd_free(a);
    nd_free(b);
    nd_scope_end();
}

NDT_TEST(callsites, variadic_and_void_functions) {
    nd_array *a = nd_arange(0, 6, 1, ND_INT32);
    int line = __LINE__; cr_expect_null(nd_viewf(a, "%d", 9));
    EXPECT("nd_viewf (test_callsites.c:%d)", line);
    cr_expect(strncmp(nd_last_error(), expect, strlen(expect)) == 0, "got '%s'", nd_last_error());
    nd_clear_error();
    nd_free(a);
    line = __LINE__; nd_free(a); /* a second nd_free: void, and still named */
    EXPECT("nd_free (test_callsites.c:%d)", line);
    cr_expect(strncmp(nd_last_error(), expect, strlen(expect)) == 0, "got '%s'", nd_last_error());
    nd_clear_error();
}

NDT_TEST(callsites, handler_hears_each_failure_once) {
    heard h = {0};
    nd_set_error_handler(on_error, &h);
    nd_array *a = nd_zeros(ND_FLOAT64, ND_SHAPE(2, 3));
    cr_expect_eq(h.calls, 0, "no failure, no call");
    int line = __LINE__; cr_expect_null(nd_sum(a, 5));
    cr_expect_eq(h.calls, 1);
    cr_expect_eq(h.status, ND_ERR_ARG);
    cr_expect_str_eq(h.message, nd_last_error());
    cr_expect(strstr(h.file, "test_callsites.c") != NULL, "file '%s'", h.file);
    cr_expect_eq(h.line, line);
    cr_expect(pthread_equal(h.thread, pthread_self()));
    EXPECT("nd_sum (test_callsites.c:%d): ", line);
    cr_expect(strncmp(h.message, expect, strlen(expect)) == 0, "got '%s'", h.message);
    /* A NULL input that passes the error on reports nothing more. */
    cr_expect_null(nd_exp(NULL));
    cr_expect_eq(h.calls, 1, "the chain's NULL is the same failure");
    /* A call without a site: file NULL, line 0. */
    nd_clear_error();
    cr_expect_null((nd_sum)(a, 7));
    cr_expect_eq(h.calls, 2);
    cr_expect_str_eq(h.file, "(null)");
    cr_expect_eq(h.line, 0);
    /* nd calls inside the handler run; their failures are not reported. */
    nd_clear_error();
    h.call_nd = 1;
    cr_expect_null(nd_sum(a, 9));
    cr_expect_eq(h.calls, 3);
    cr_expect_eq(h.nested_calls, 1);
    h.call_nd = 0;
    /* Removed: no more calls. */
    nd_set_error_handler(NULL, &h);
    nd_clear_error();
    cr_expect_null(nd_sum(a, 11));
    cr_expect_eq(h.calls, 3);
    nd_clear_error();
    nd_free(a);
}

/* A failure found at flush time (here the flush's first allocation fails,
 * on the executor thread) names the recording line of the value that
 * failed, and the handler hears of it on the user's thread. */
NDT_TEST(callsites, flush_failure_names_the_recording_call) {
    heard h = {0};
    nd_array *a = nd_ones(ND_FLOAT32, ND_SHAPE(3, 4));
    nd_array *b = nd_ones(ND_FLOAT32, ND_SHAPE(4));
    cr_assert_eq(nd_sync(), ND_OK);
    nd_set_error_handler(on_error, &h);
    nd_fault_arm(ND_FAULT_DEVICE_ALLOC, 1, 1);
    int rec = __LINE__; nd_array *c = nd_add(a, b);
    cr_assert_not_null(c);
    int sync = __LINE__; nd_status st = nd_sync();
    nd_fault_disarm();
    cr_expect_eq(st, ND_ERR_OOM, "%s", nd_last_error());
    EXPECT("for the value of nd_add (test_callsites.c:%d)", rec);
    if (ndt_one_device("which value the first allocation is for: split, a's pieces are gathered first (its whole "
                       "memory, an array of an earlier flush)"))
        cr_expect(strstr(nd_last_error(), expect) != NULL, "got '%s'", nd_last_error());
    EXPECT("nd_sync (test_callsites.c:%d): ", sync);
    cr_expect(strncmp(nd_last_error(), expect, strlen(expect)) == 0, "got '%s'", nd_last_error());
    cr_expect_eq(h.calls, 1, "one report for the nd_sync that returned it");
    cr_expect(pthread_equal(h.thread, pthread_self()), "reported on the caller's thread");
    cr_expect_eq(h.line, sync);
    nd_clear_error();
    float out[12];
    int read = __LINE__; cr_expect_eq(nd_to_host(c, out, sizeof out), ND_ERR_OOM);
    EXPECT("nd_to_host (test_callsites.c:%d): array (3,4) float32 of 48 bytes computed by nd_add "
           "(test_callsites.c:%d) could not be computed: ", read, rec);
    cr_expect(strncmp(nd_last_error(), expect, strlen(expect)) == 0, "got '%s'", nd_last_error());
    cr_expect_eq(h.calls, 2);
    /* nd_item reports as nd_item (it reads through nd_to_host). */
    nd_clear_error();
    nd_array *s = nd_view(c, "1, 2");
    read = __LINE__; double v = nd_item(s);
    cr_expect(isnan(v));
    EXPECT("nd_item (test_callsites.c:%d): array () float32 (a view of 48 bytes computed by nd_add "
           "(test_callsites.c:%d)) could not be computed: ", read, rec);
    cr_expect(strncmp(nd_last_error(), expect, strlen(expect)) == 0, "got '%s'\nwant '%s'", nd_last_error(),
              expect);
    nd_set_error_handler(NULL, NULL);
    nd_clear_error();
    nd_free(s);
    nd_free(c);
    nd_free(a);
    nd_free(b);
}

/* nd_item names itself without call sites too. */
NDT_TEST(callsites, item_reports_as_item) {
    nd_array *a = nd_ones(ND_FLOAT32, ND_SHAPE(2));
    cr_expect(isnan((nd_item)(a)));
    cr_expect_str_eq(nd_last_error(), "nd_item: the array has shape (2,) and 2 elements; nd_item needs exactly "
                                      "one (use nd_view to pick one element)");
    nd_clear_error();
    cr_assert_eq(nd_sync(), ND_OK, "%s", nd_last_error()); /* a has its value: only the sum fails */
    nd_fault_arm(ND_FAULT_DEVICE_ALLOC, 1, 1);
    nd_array *b = (nd_sum)(a, ND_ALL_AXES);
    cr_expect(isnan((nd_item)(b)));
    nd_fault_disarm();
    cr_expect(strncmp(nd_last_error(), "nd_item: array () float32 of 4 bytes computed by nd_sum could not be computed: ",
                      strlen("nd_item: array () float32 of 4 bytes computed by nd_sum could not be computed: ")) == 0,
              "got '%s'", nd_last_error());
    nd_clear_error();
    nd_free(b);
    nd_free(a);
}

/* ------------------------------------------------ ND_LOG in a subprocess */

/* Lines the child's calls were on (shared with the parent). */
static int *lines;

/* Runs fn in a child with ND_LOG=1 and stderr into a file; returns what it
 * wrote there. The runtime stops first: a child of fork() has none of
 * nd's threads (nd.h, "Threads"), and starts its own. */
static char *stderr_of(void (*fn)(void)) {
    char path[] = "/tmp/nd_test_callsites_XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    nd_shutdown();
    lines = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    cr_assert(lines != MAP_FAILED);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        dup2(fd, 2);
        setenv("ND_LOG", "1", 1);
        /* CUDA cannot start again in a child of a process that used it:
         * the messages under test are the same on every backend. */
        setenv("ND_BACKEND", "cpu", 1);
        fn();
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child failed");
    static char buf[8192];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    buf[n > 0 ? n : 0] = '\0';
    close(fd);
    unlink(path);
    return buf;
}

static void fail_once(void) {
    nd_array *a = nd_zeros(ND_FLOAT32, ND_SHAPE(3, 4));
    nd_array *b = nd_zeros(ND_FLOAT32, ND_SHAPE(5));
    lines[0] = __LINE__; nd_array *c = nd_add(a, b);
    (void)c;
    nd_free(a);
    nd_free(b);
    nd_shutdown();
}

NDT_TEST(callsites, nd_log_prints_each_failure) {
    const char *err = stderr_of(fail_once);
    EXPECT("nd error: ND_ERR_SHAPE: nd_add (test_callsites.c:%d): shapes (3,4) and (5,) cannot be broadcast "
           "together " BROADCAST_FIX "\n", lines[0]);
    cr_expect_str_eq(err, expect);
}

static void leak_three(void) {
    lines[0] = __LINE__; nd_array *a = nd_zeros(ND_FLOAT32, ND_SHAPE(3));
    lines[1] = __LINE__; nd_array *b = nd_exp(a);
    nd_array *c = nd_exp(a);
    nd_array *kept = nd_ones(ND_INT8, ND_SHAPE(2));
    nd_free(kept); /* freed: not reported */
    (void)b, (void)c;
    nd_shutdown();
}

NDT_TEST(callsites, shutdown_reports_live_handles) {
    const char *err = stderr_of(leak_three);
    EXPECT("nd warning: nd_shutdown: 3 array handles were still alive (never freed with nd_free or a scope): made "
           "1 by nd_exp (test_callsites.c:%d), 1 by nd_exp (test_callsites.c:%d), 1 by nd_zeros "
           "(test_callsites.c:%d)\n",
           lines[1], lines[1] + 1, lines[0]);
    cr_expect_str_eq(err, expect);
}

static void leak_without_sites(void) {
    nd_array *a = (nd_zeros)(ND_FLOAT32, ND_SHAPE(3));
    for (int i = 0; i < 4; i++) (void)(nd_exp)(a);
    nd_scope_begin();
    (void)nd_exp(a); /* released by its scope: not reported */
    nd_scope_end();
    nd_shutdown();
}

NDT_TEST(callsites, shutdown_report_without_sites) {
    const char *err = stderr_of(leak_without_sites);
    cr_expect_str_eq(err, "nd warning: nd_shutdown: 5 array handles were still alive (never freed with nd_free or "
                          "a scope): made 4 by nd_exp, 1 by nd_zeros (build with -DND_DEBUG_CALLSITES to see the "
                          "lines)\n");
}

static void no_leak(void) {
    nd_array *a = nd_zeros(ND_FLOAT32, ND_SHAPE(3));
    nd_free(a);
    nd_shutdown();
}

NDT_TEST(callsites, shutdown_without_live_handles_is_quiet) {
    cr_expect_str_eq(stderr_of(no_leak), "");
}
