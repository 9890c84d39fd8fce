/* A minimal stand-in for Criterion's <criterion/criterion.h>, for the
 * ThreadSanitizer build only: Criterion's runner does not start under TSan
 * (its sandbox's "inheritable arena" fails; Snaipe/Criterion#274), so the
 * TSan build compiles the same suites against this header and runner.c.
 * It covers what tests/ use: Test() with .init/.fini/.timeout, cr_assert*,
 * cr_expect*, cr_skip_test and the criterion_* calls of tests/common.c's
 * main. Each test runs in a forked child (with an alarm for its timeout),
 * as under Criterion. */
#ifndef ND_TSAN_RUNNER_CRITERION_H
#define ND_TSAN_RUNNER_CRITERION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

struct ndtr_test {
    const char *suite, *name;
    void (*fn)(void);
    void (*init)(void);
    void (*fini)(void);
    double timeout;
    struct ndtr_test *next;
};

void ndtr_register(struct ndtr_test *t);
/* A failed check: prints it; `fatal` ends the test. */
void ndtr_fail(int fatal, const char *file, int line, const char *cond, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
void ndtr_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* (Parameters s_ and n_: named suite and name they would replace the
 * designators below.) */
#define Test(s_, n_, ...)                                                                     \
    static void ndtr_fn_##s_##_##n_(void);                                                    \
    static struct ndtr_test ndtr_desc_##s_##_##n_ = {                                        \
        .suite = #s_, .name = #n_, .fn = ndtr_fn_##s_##_##n_, __VA_ARGS__};                   \
    __attribute__((constructor)) static void ndtr_reg_##s_##_##n_(void) {                     \
        ndtr_register(&ndtr_desc_##s_##_##n_);                                                \
    }                                                                                         \
    static void ndtr_fn_##s_##_##n_(void)

/* The message is optional: " " glues a format that is never empty (GCC
 * warns of an empty one) in front of it; ndtr_fail drops the space. */
#define NDTR_CHECK(fatal, cond, text, ...)                                                    \
    do {                                                                                      \
        if (!(cond)) ndtr_fail(fatal, __FILE__, __LINE__, text, " " __VA_ARGS__);              \
    } while (0)

/* Criterion's assertion family: cr_assert_* stops the test, cr_expect_*
 * records the failure and goes on. */
#define cr_assert(c, ...) NDTR_CHECK(1, c, #c, __VA_ARGS__)
#define cr_expect(c, ...) NDTR_CHECK(0, c, #c, __VA_ARGS__)
#define cr_assert_not(c, ...) NDTR_CHECK(1, !(c), "!(" #c ")", __VA_ARGS__)
#define cr_expect_not(c, ...) NDTR_CHECK(0, !(c), "!(" #c ")", __VA_ARGS__)
#define cr_assert_eq(a, b, ...) NDTR_CHECK(1, (a) == (b), #a " == " #b, __VA_ARGS__)
#define cr_expect_eq(a, b, ...) NDTR_CHECK(0, (a) == (b), #a " == " #b, __VA_ARGS__)
#define cr_assert_neq(a, b, ...) NDTR_CHECK(1, (a) != (b), #a " != " #b, __VA_ARGS__)
#define cr_expect_neq(a, b, ...) NDTR_CHECK(0, (a) != (b), #a " != " #b, __VA_ARGS__)
#define cr_assert_gt(a, b, ...) NDTR_CHECK(1, (a) > (b), #a " > " #b, __VA_ARGS__)
#define cr_expect_gt(a, b, ...) NDTR_CHECK(0, (a) > (b), #a " > " #b, __VA_ARGS__)
#define cr_assert_geq(a, b, ...) NDTR_CHECK(1, (a) >= (b), #a " >= " #b, __VA_ARGS__)
#define cr_expect_geq(a, b, ...) NDTR_CHECK(0, (a) >= (b), #a " >= " #b, __VA_ARGS__)
#define cr_assert_lt(a, b, ...) NDTR_CHECK(1, (a) < (b), #a " < " #b, __VA_ARGS__)
#define cr_expect_lt(a, b, ...) NDTR_CHECK(0, (a) < (b), #a " < " #b, __VA_ARGS__)
#define cr_assert_leq(a, b, ...) NDTR_CHECK(1, (a) <= (b), #a " <= " #b, __VA_ARGS__)
#define cr_expect_leq(a, b, ...) NDTR_CHECK(0, (a) <= (b), #a " <= " #b, __VA_ARGS__)
/* As Criterion: |a - b| <= eps (false for NaN). */
#define NDTR_FLOAT_EQ(a, b, eps) ((b) - (a) <= (eps) && (a) - (b) <= (eps))
#define cr_assert_float_eq(a, b, eps, ...) \
    NDTR_CHECK(1, NDTR_FLOAT_EQ(a, b, eps), #a " ~= " #b, __VA_ARGS__)
#define cr_expect_float_eq(a, b, eps, ...) \
    NDTR_CHECK(0, NDTR_FLOAT_EQ(a, b, eps), #a " ~= " #b, __VA_ARGS__)
#define cr_assert_float_neq(a, b, eps, ...) \
    NDTR_CHECK(1, !NDTR_FLOAT_EQ(a, b, eps), #a " !~= " #b, __VA_ARGS__)
#define cr_expect_float_neq(a, b, eps, ...) \
    NDTR_CHECK(0, !NDTR_FLOAT_EQ(a, b, eps), #a " !~= " #b, __VA_ARGS__)
#define cr_assert_null(p, ...) NDTR_CHECK(1, (p) == NULL, #p " == NULL", __VA_ARGS__)
#define cr_assert_not_null(p, ...) NDTR_CHECK(1, (p) != NULL, #p " != NULL", __VA_ARGS__)
#define cr_assert_str_eq(a, b, ...) NDTR_CHECK(1, strcmp((a), (b)) == 0, #a " == " #b, __VA_ARGS__)
#define cr_assert_str_neq(a, b, ...) NDTR_CHECK(1, strcmp((a), (b)) != 0, #a " != " #b, __VA_ARGS__)
#define cr_expect_null(p, ...) NDTR_CHECK(0, (p) == NULL, #p " == NULL", __VA_ARGS__)
#define cr_expect_not_null(p, ...) NDTR_CHECK(0, (p) != NULL, #p " != NULL", __VA_ARGS__)
#define cr_expect_str_eq(a, b, ...) NDTR_CHECK(0, strcmp((a), (b)) == 0, #a " == " #b, __VA_ARGS__)
#define cr_expect_str_neq(a, b, ...) NDTR_CHECK(0, strcmp((a), (b)) != 0, #a " != " #b, __VA_ARGS__)
#define cr_expect_fail(...) ndtr_fail(0, __FILE__, __LINE__, "cr_expect_fail", " " __VA_ARGS__)
#define cr_assert_fail(...) ndtr_fail(1, __FILE__, __LINE__, "cr_assert_fail", " " __VA_ARGS__)
#define cr_skip_test(...) ndtr_skip(" " __VA_ARGS__)
/* Criterion's log lines (stderr, as its runner prints them). */
#define cr_log_info(...) (fprintf(stderr, "[----] " __VA_ARGS__), fputc('\n', stderr))
#define cr_log_warn(...) (fprintf(stderr, "[WARN] " __VA_ARGS__), fputc('\n', stderr))
#define cr_log_error(...) (fprintf(stderr, "[ERR ] " __VA_ARGS__), fputc('\n', stderr))

struct criterion_test_set;
struct criterion_global_stats {
    size_t nb_tests, tests_skipped;
};
struct criterion_test_set *criterion_initialize(void);
int criterion_handle_args(int argc, char *argv[], bool handle_unknown_arg);
int criterion_run_all_tests(struct criterion_test_set *set);
void criterion_finalize(struct criterion_test_set *set);

#endif
