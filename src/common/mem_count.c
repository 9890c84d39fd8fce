#include "common/mem_count.h"

static uint64_t in_use[ND_MAX_MEMORIES], peak[ND_MAX_MEMORIES];

/* 0 bytes are allocated as 1 (every backend does), so alloc and release of
 * an empty array agree whichever size the caller passes. */
static uint64_t counted(size_t bytes) { return bytes ? (uint64_t)bytes : 1; }

void nd_mem_count_alloc(int memory, size_t bytes) {
    if (memory < 0 || memory >= ND_MAX_MEMORIES) return;
    uint64_t now = __atomic_add_fetch(&in_use[memory], counted(bytes), __ATOMIC_RELAXED);
    uint64_t p = __atomic_load_n(&peak[memory], __ATOMIC_RELAXED);
    while (now > p && !__atomic_compare_exchange_n(&peak[memory], &p, now, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
}

void nd_mem_count_release(int memory, size_t bytes) {
    if (memory < 0 || memory >= ND_MAX_MEMORIES) return;
    uint64_t n = counted(bytes), have = __atomic_load_n(&in_use[memory], __ATOMIC_RELAXED), next;
    do {
        next = have - (n < have ? n : have); /* never below 0 (memory made before a reset) */
    } while (!__atomic_compare_exchange_n(&in_use[memory], &have, next, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
}

uint64_t nd_mem_in_use(int memory) { return __atomic_load_n(&in_use[memory], __ATOMIC_RELAXED); }
uint64_t nd_mem_peak(int memory) { return __atomic_load_n(&peak[memory], __ATOMIC_RELAXED); }

void nd_mem_reset_peak(void) {
    for (int m = 0; m < ND_MAX_MEMORIES; m++)
        __atomic_store_n(&peak[m], __atomic_load_n(&in_use[m], __ATOMIC_RELAXED), __ATOMIC_RELAXED);
}

void nd_mem_count_reset(void) {
    for (int m = 0; m < ND_MAX_MEMORIES; m++) {
        __atomic_store_n(&in_use[m], 0, __ATOMIC_RELAXED);
        __atomic_store_n(&peak[m], 0, __ATOMIC_RELAXED);
    }
}
