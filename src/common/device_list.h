/* ND_DEVICES (or nd_config.devices): the one parser of the device list,
 * used by the runtime (which checks it and sizes the partition pass) and
 * by the CUDA backend (which opens the GPUs it names). Two forms:
 *   "cpu:N"       N logical CPU memories (1..ND_DEVICE_LIST_MAX)
 *   "0", "0,1,3"  GPU ordinals, one logical device per entry; an ordinal
 *                 may repeat ("0,0": two logical devices on one GPU)
 * Header-only so that the CUDA backend's stand-alone checks
 * (backends/cuda/tests) need no other file. */
#ifndef ND_COMMON_DEVICE_LIST_H
#define ND_COMMON_DEVICE_LIST_H

#include <ctype.h>
#include <string.h>

/* The most logical devices a list may name (scheduler/partition.h's
 * ND_MAX_SPLIT is the same bound). */
#define ND_DEVICE_LIST_MAX 16

typedef struct {
    int cpu;   /* 1: "cpu:N" */
    int n;     /* logical devices: N, or the number of ordinals */
    int ordinals[ND_DEVICE_LIST_MAX]; /* GPU lists: entry d's ordinal */
} nd_device_list;

/* Parses s into *out; 0 when s is well formed, -1 when it is not (empty,
 * not digits, cpu:N with N outside 1..ND_DEVICE_LIST_MAX, more than
 * ND_DEVICE_LIST_MAX ordinals, an ordinal above 1<<20). Spaces around
 * ordinals are allowed. */
static inline int nd_device_list_parse(const char *s, nd_device_list *out) {
    memset(out, 0, sizeof *out);
    if (!s || !*s) return -1;
    if (!strncmp(s, "cpu:", 4)) {
        const char *p = s + 4;
        int n = 0;
        if (!isdigit((unsigned char)*p)) return -1;
        while (isdigit((unsigned char)*p) && n <= ND_DEVICE_LIST_MAX) n = n * 10 + (*p++ - '0');
        if (*p || n < 1 || n > ND_DEVICE_LIST_MAX) return -1;
        out->cpu = 1;
        out->n = n;
        return 0;
    }
    for (const char *p = s;;) {
        while (*p == ' ') p++;
        if (!isdigit((unsigned char)*p) || out->n == ND_DEVICE_LIST_MAX) return -1;
        int v = 0;
        while (isdigit((unsigned char)*p)) {
            v = v * 10 + (*p++ - '0');
            if (v > (1 << 20)) return -1;
        }
        out->ordinals[out->n++] = v;
        while (*p == ' ') p++;
        if (!*p) return 0;
        if (*p++ != ',') return -1;
    }
}

#endif
