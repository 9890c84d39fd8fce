/* Stand-in for <criterion/hooks.h> (see criterion.h beside it): the
 * runner reports its totals itself, so a report hook is compiled but not
 * called. */
#ifndef ND_TSAN_RUNNER_HOOKS_H
#define ND_TSAN_RUNNER_HOOKS_H
#include "criterion/criterion.h"
#define ReportHook(kind) __attribute__((unused)) static void ndtr_hook_##kind
#endif
