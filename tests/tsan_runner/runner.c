/* The runner behind tests/tsan_runner/criterion/criterion.h: runs every
 * registered test (or those matching --filter SUITE/NAME, a glob) in a
 * forked child, --jobs N of them at once (as Criterion; 1 by default), and
 * exits non-zero if one failed, crashed, timed out or ThreadSanitizer
 * reported (TSan makes the child exit 66). Other Criterion options
 * (--short-filename, --verbose) are accepted and ignored. */
#include "criterion/criterion.h"

#include <errno.h>
#include <fnmatch.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SKIP_EXIT 77

static struct ndtr_test *tests;
static const char *filter;
static int jobs_wanted = 1; /* --jobs N: tests run at once */
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
        else if ((!strcmp(argv[i], "--jobs") || !strcmp(argv[i], "-j")) && i + 1 < argc) jobs_wanted = atoi(argv[++i]);
    }
    return 1;
}

/* One test's child: its output goes to a file of its own so that, with
 * several running at once, each test's lines (and a ThreadSanitizer
 * report) print whole when it ends. */
struct running {
    struct ndtr_test *t;
    pid_t pid;
    FILE *out;
    struct timespec start;
};

static int start_one(struct ndtr_test *t, struct running *r) {
    fflush(NULL);
    r->t = t;
    r->out = tmpfile();
    if (!r->out) return -1;
    clock_gettime(CLOCK_MONOTONIC, &r->start);
    pid_t pid = fork();
    if (pid < 0) {
        fclose(r->out);
        return -1;
    }
    if (pid == 0) {
        dup2(fileno(r->out), STDOUT_FILENO);
        dup2(fileno(r->out), STDERR_FILENO);
        /* Sanitizers slow everything down: three times Criterion's limit. */
        alarm((unsigned)(t->timeout > 0 ? 3 * t->timeout : 3 * 60));
        if (t->init) t->init();
        t->fn();
        if (t->fini) t->fini();
        fflush(NULL);
        _exit(failures_here ? 1 : 0);
    }
    r->pid = pid;
    return 0;
}

/* Prints what the child wrote and its verdict; returns its exit code. */
static int finish_one(struct running *r, int status) {
    struct timespec end;
    clock_gettime(CLOCK_MONOTONIC, &end);
    char buf[4096];
    size_t got;
    rewind(r->out);
    while ((got = fread(buf, 1, sizeof buf, r->out)) > 0) fwrite(buf, 1, got, stderr);
    fclose(r->out);
    int rc;
    if (WIFEXITED(status)) {
        rc = WEXITSTATUS(status);
    } else {
        fprintf(stderr, "[CRASH] %s::%s: signal %d\n", r->t->suite, r->t->name, WTERMSIG(status));
        rc = 128 + WTERMSIG(status);
    }
    const char *what = rc == 0 ? "PASS" : rc == SKIP_EXIT ? "SKIP" : "FAIL";
    /* The time shows which tests set a sanitised suite's length. */
    fprintf(stderr, "[%s] %s::%s (%.1f s)%s\n", what, r->t->suite, r->t->name,
            (double)(end.tv_sec - r->start.tv_sec) + 1e-9 * (double)(end.tv_nsec - r->start.tv_nsec),
            rc == 66 ? " (ThreadSanitizer report above)" : "");
    return rc;
}

int criterion_run_all_tests(struct criterion_test_set *set) {
    (void)set;
    enum { MAX_JOBS = 16 };
    struct running run[MAX_JOBS];
    int jobs = jobs_wanted < 1 ? 1 : jobs_wanted > MAX_JOBS ? MAX_JOBS : jobs_wanted;
    int n = 0, failed = 0, skipped = 0, active = 0;
    struct ndtr_test *next = tests;
    for (;;) {
        /* Start tests while a slot is free. */
        while (active < jobs && next) {
            struct ndtr_test *t = next;
            next = next->next;
            char full[256];
            snprintf(full, sizeof full, "%s/%s", t->suite, t->name);
            if (filter && fnmatch(filter, full, 0) != 0) continue;
            n++;
            if (start_one(t, &run[active]) != 0) {
                fprintf(stderr, "[FAIL] %s::%s: could not start its process\n", t->suite, t->name);
                failed++;
                continue;
            }
            active++;
        }
        if (active == 0) break;
        int status = 0;
        pid_t pid = wait(&status);
        if (pid < 0) {
            if (errno == EINTR) continue;
            /* The running tests cannot be waited for: none of them passed. */
            fprintf(stderr, "[FAIL] %d running tests: wait failed\n", active);
            failed += active;
            break;
        }
        for (int i = 0; i < active; i++) {
            if (run[i].pid != pid) continue;
            int rc = finish_one(&run[i], status);
            failed += rc != 0 && rc != SKIP_EXIT;
            skipped += rc == SKIP_EXIT;
            run[i] = run[--active];
            break;
        }
    }
    fprintf(stderr, "[====] Synthesis: Tested: %d | Passing: %d | Failing: %d | Skipped: %d\n", n,
            n - failed - skipped, failed, skipped);
    /* Criterion's convention: true when every test passed. */
    return failed == 0;
}
