/* The runner behind tests/tsan_runner/criterion/criterion.h: runs every
 * registered test (or those matching --filter SUITE/NAME, a glob) in a
 * forked child, one at a time, and exits non-zero if one failed, crashed,
 * timed out or ThreadSanitizer reported (TSan makes the child exit 66).
 * Other Criterion options (--jobs, --short-filename, --verbose) are
 * accepted and ignored. */
#include "criterion/criterion.h"

#include <fnmatch.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define SKIP_EXIT 77

static struct ndtr_test *tests;
static const char *filter;
static int failures_here; /* in the child: failed expectations */

void ndtr_register(struct ndtr_test *t) {
    t->next = tests;
    tests = t;
}

void ndtr_fail(int fatal, const char *file, int line, const char *cond, const char *fmt, ...) {
    fprintf(stderr, "[FAIL] %s:%d: %s", file, line, cond);
    if (*fmt == ' ') fmt++; /* criterion.h's " " in front */
    if (*fmt) {
        va_list ap;
        va_start(ap, fmt);
        fputs(": ", stderr);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
    }
    fputc('\n', stderr);
    failures_here++;
    if (fatal) _exit(1);
}

void ndtr_skip(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    if (*fmt == ' ') fmt++;
    fputs("[SKIP] ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    _exit(SKIP_EXIT);
}

struct criterion_test_set *criterion_initialize(void) { return NULL; }
void criterion_finalize(struct criterion_test_set *set) { (void)set; }

int criterion_handle_args(int argc, char *argv[], bool handle_unknown_arg) {
    (void)handle_unknown_arg;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--filter") && i + 1 < argc) filter = argv[++i];
        else if (!strncmp(argv[i], "--filter=", 9)) filter = argv[i] + 9;
        else if (!strcmp(argv[i], "--jobs") || !strcmp(argv[i], "-j")) i++;
    }
    return 1;
}

static int run_one(struct ndtr_test *t) {
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        /* Sanitizers slow everything down: three times Criterion's limit. */
        alarm((unsigned)(t->timeout > 0 ? 3 * t->timeout : 3 * 60));
        if (t->init) t->init();
        t->fn();
        if (t->fini) t->fini();
        fflush(NULL);
        _exit(failures_here ? 1 : 0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    fprintf(stderr, "[CRASH] %s::%s: signal %d\n", t->suite, t->name, WTERMSIG(status));
    return 128 + WTERMSIG(status);
}

int criterion_run_all_tests(struct criterion_test_set *set) {
    (void)set;
    int n = 0, failed = 0, skipped = 0;
    for (struct ndtr_test *t = tests; t; t = t->next) {
        char full[256];
        snprintf(full, sizeof full, "%s/%s", t->suite, t->name);
        if (filter && fnmatch(filter, full, 0) != 0) continue;
        n++;
        int rc = run_one(t);
        const char *what = rc == 0 ? "PASS" : rc == SKIP_EXIT ? "SKIP" : "FAIL";
        fprintf(stderr, "[%s] %s::%s%s\n", what, t->suite, t->name,
                rc == 66 ? " (ThreadSanitizer report above)" : "");
        failed += rc != 0 && rc != SKIP_EXIT;
        skipped += rc == SKIP_EXIT;
    }
    fprintf(stderr, "[====] Synthesis: Tested: %d | Passing: %d | Failing: %d | Skipped: %d\n", n,
            n - failed - skipped, failed, skipped);
    /* Criterion's convention: true when every test passed. */
    return failed == 0;
}
