/* The thread's last error: a code and a message that names the function, the
 * offending values and the fix. Sticky until nd_clear_error(). */
#ifndef ND_COMMON_ERROR_H
#define ND_COMMON_ERROR_H

#include "nd.h"

#if defined(__GNUC__)
#define ND_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define ND_PRINTF(f, a)
#endif

/* Records code + formatted message as this thread's last error; returns code.
 * A message that does not start with "nd_" gets the outermost public
 * call's name ("nd_sync: ..."), and with a call site (ND_DEBUG_CALLSITES)
 * that name carries it: "nd_add (heat.c:42): shapes ...". */
nd_status nd_error_set(nd_status code, const char *fmt, ...) ND_PRINTF(2, 3);
/* A thread's last error, kept aside while the library tries something whose
 * failure is expected (nd_init probing for a GPU under ND_BACKEND=auto) and
 * put back after, so an earlier error of the program survives. */
typedef struct {
    nd_status status;
    uint32_t gen;
    char message[1024];
} nd_error_saved;
void nd_error_save(nd_error_saved *out);
void nd_error_restore(const nd_error_saved *saved);
/* For a NULL input: keeps an earlier error if one is set (the first error
 * propagates through a chain), otherwise records ND_ERR_ARG naming func/arg. */
void nd_error_null_input(const char *func, const char *arg);
/* Writes "(3,4)" into buf (at least 8*21+3 bytes suffice). */
const char *nd_format_shape(char *buf, size_t cap, int ndim, const int64_t *shape);

/* Logging to stderr when ND_LOG >= level (1 warn, 2 info, 3 debug). */
/* (Not nd_log: that is the public natural logarithm in nd.h.) */
void nd_logf(int level, const char *fmt, ...) ND_PRINTF(2, 3);
void nd_log_set_level(int level);
int nd_log_enabled(int level); /* skip building a message nobody sees */
double nd_log_clock_us(void);   /* monotonic microseconds, the debug lines' clock */

#endif
