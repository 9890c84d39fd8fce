/* ND_PROFILE=1: a table of what ran, printed at exit. Backends (and the
 * executor, for backends that run steps one by one) add one entry per
 * kernel, library call or copy; entries with the same name are summed.
 * What a plan step counts as, is named and moves is backends/step_kinds.c's.
 *
 * The bytes of an entry are what it must move at least, counted as the
 * benchmarks count their floors: each element of each buffer it reads once
 * and each element it writes once (a stencil's five shifted loads of one
 * grid are one read of the grid), not the sum of its operands. Divided by
 * the time, that is the achieved bandwidth, which the table also gives as
 * a share of the machine's copy bandwidth measured in the same process
 * (nd_profile_set_copy_bandwidth): 100% is as fast as a copy. */
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
/* bytes: unique bytes moved (above); flops: arithmetic (library calls);
 * either may be 0. `local`: the bytes move within one memory, so the copy
 * bandwidth of that memory bounds them (not so for a host<->device copy,
 * which the bus bounds). Silently drops the entry on out-of-memory. */
void nd_profile_add(nd_profile *p, nd_profile_kind kind, const char *name, double seconds, double bytes,
                    double flops, int local);
/* The copy bandwidth (read + write bytes per second) of the memory kernels
 * run in, and how it was measured ("memcpy of 128 MiB, 4 threads"). */
void nd_profile_set_copy_bandwidth(nd_profile *p, double bytes_per_second, const char *how);
/* The table, sorted by total time: each row's count, time, share, bytes
 * per call, achieved GB/s and share of the copy bandwidth (or TFLOP/s).
 * Nothing when empty. */
void nd_profile_print(const nd_profile *p, FILE *f, const char *title);

/* "12.50 MB", "3.1 kB", "16 B" (decimal units, as the table's). */
void nd_profile_bytes_text(char *buf, size_t cap, double bytes);

/* Plan steps are added with nd_profile_add_step (backends/step_kinds.h). */

#endif
