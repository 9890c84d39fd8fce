/* ND_* environment settings: one parser for the runtime's and the
 * backends' integer variables, so every one takes the same syntax and
 * reports a bad value the same way. */
#ifndef ND_COMMON_ENV_H
#define ND_COMMON_ENV_H

#include <stdint.h>

/* Reads integer variable `name` in lo..hi (with `suffixes`, a k/m/g suffix
 * multiplies by 2^10/2^20/2^30). Unset or empty: returns 0 with *set = 0.
 * Valid: *out, *set = 1, returns 0. Otherwise ND_ERR_ARG naming the
 * variable, its value and the range, and returns -1. */
int nd_env_int64(const char *name, int64_t lo, int64_t hi, int suffixes, int64_t *out, int *set);

#endif
