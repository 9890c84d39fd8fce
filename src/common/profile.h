/* ND_PROFILE=1: a table of what ran, printed at exit. Backends (and the
 * executor, for backends that run steps one by one) add one entry per
 * kernel, library call or copy; entries with the same name are summed. */
#ifndef ND_COMMON_PROFILE_H
#define ND_COMMON_PROFILE_H

#include <stdio.h>

#include "backends/plan.h"

typedef enum { ND_PROFILE_KERNEL, ND_PROFILE_LIBRARY, ND_PROFILE_COPY } nd_profile_kind;

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

/* One plan step that took `seconds`: named after its kernel (kernel_name,
 * or the IR's name when NULL), its matmul shape, or its copy direction. */
void nd_profile_add_step(nd_profile *p, const nd_step *st, const char *kernel_name, double seconds);
/* "matmul 8192x8192x8192 float32" */
void nd_matmul_label(const nd_matmul_desc *mm, char *buf, size_t cap);

/* Bytes a kernel moves at least: every element it loads (broadcast axes
 * counted once) and every element it stores. */
double nd_kernel_traffic_bytes(const nd_kernel *k);

#endif
