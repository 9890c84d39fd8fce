/* ND_PROFILE=1: a table of what ran, printed at exit. Backends (and the
 * executor, for backends that run steps one by one) add one entry per
 * kernel, library call or copy; entries with the same name are summed.
 * What a plan step counts as and is named is backends/step_kinds.c's. */
#ifndef ND_COMMON_PROFILE_H
#define ND_COMMON_PROFILE_H

#include <stdio.h>

typedef enum { ND_PROFILE_KERNEL, ND_PROFILE_LIBRARY, ND_PROFILE_COPY } nd_profile_kind;
enum { ND_PROFILE_KIND_COUNT = ND_PROFILE_COPY + 1 };

/* "kernel", "library", "copy": the profile table's and traces' category. */
const char *nd_profile_kind_name(nd_profile_kind kind);

typedef struct nd_profile nd_profile;

nd_profile *nd_profile_new(void);
void nd_profile_free(nd_profile *p);
/* bytes: memory traffic (kernels, copies); flops: arithmetic (library
 * calls); either may be 0. Silently drops the entry on out-of-memory. */
void nd_profile_add(nd_profile *p, nd_profile_kind kind, const char *name, double seconds, double bytes,
                    double flops);
/* The table, sorted by total time, with each row's share and its achieved
 * GB/s or TFLOP/s. Nothing when empty. */
void nd_profile_print(const nd_profile *p, FILE *f, const char *title);

/* Plan steps are added with nd_profile_add_step (backends/step_kinds.h). */

#endif
