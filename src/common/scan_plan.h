/* The CUDA plugin's scan kernels (backends/cuda/prims/scan.cu): their
 * table, and the combine order of the aggregate-tree one pass, shared by
 * the kernel, bench/gpu_speed.cu, nd_init's check of ND_SCAN_VARIANT and
 * tests/test_scan_plan.c, which replays the order on the host.
 *
 * The aggregate tree (NDP_SCAN_AGG*): a row is cut into tiles, taken in
 * order from a counter. Level 0 holds each tile's own total (its aggregate:
 * it needs no prefix, so it is published as soon as the tile is read);
 * entry e of level j + 1 holds the total of entries [32e, 32e + 32) of
 * level j, published by the tile that ends that range (the last of its
 * 32^(j+1) tiles), as soon as its own fold of level j is known. Tile t's
 * exclusive prefix is, with t's ancestor a_j = t >> 5j at level j:
 *
 *   fold(level 3, [0, a_3)) + fold(level 2, [a_2 & ~31, a_2))
 *     + fold(level 1, [a_1 & ~31, a_1)) + fold(level 0, [a_0 & ~31, a_0))
 *
 * joined in that order, where fold is ND_SCAN_FOLD's fixed order of a
 * warp (lane l folds entries l, l + 32, ... in turn, then the lanes join by
 * a fixed tree). Every published value is a fixed function of the input:
 * a tile waits only for aggregates of earlier tiles, never for a prefix,
 * so there is no chain through the row, and the bits never depend on which
 * tile finishes first. An entry a tile waits for is published by a tile
 * with a smaller ticket (the last tile of a range before it), which is
 * resident or done: waiting cannot deadlock.
 *
 * ND_SP_FN is `static inline` in C and `__host__ __device__ inline` in
 * CUDA. */
#ifndef ND_COMMON_SCAN_PLAN_H
#define ND_COMMON_SCAN_PLAN_H

#include <stdint.h>

#ifdef __CUDACC__
#define ND_SP_FN static __host__ __device__ inline
#else
#define ND_SP_FN static inline
#endif

/* ndp_scan_variant's kernels: enum name, the name ND_SCAN_VARIANT and
 * bench/gpu_speed.cu use, what it is. Row 0 is NDP_SCAN_DEFAULT (what
 * ndp_scan runs); new rows go at the end (the enum's values are their
 * positions). */
#define ND_SCAN_VARIANTS(X)                                                                                   \
    X(DEFAULT, "default", "what ndp_scan runs: ND_SCAN_VARIANT, or else kDefaultScan (scan.cu)")             \
    X(ONE_PASS, "one_pass", "one pass, tiles of 256 threads, group totals published by a tile's prefix warps") \
    X(ONE_PASS_512, "one_pass_512", "one pass, tiles of 512 threads")                                         \
    X(WINDOWS_8M, "windows_8M", "reduce-then-scan in windows of 8 MiB (one row)")                           \
    X(WINDOWS_16M, "windows_16M", "the same, 16 MiB")                                                         \
    X(ONE_PASS_8, "one_pass_8", "one_pass with registers for 8 blocks an SM")                                 \
    X(ONE_PASS_PACKED, "one_pass_packed", "float32: each published total and its flag in one word")          \
    X(AGG, "agg", "aggregate tree, 4 levels, 128 threads x 24 items (12 for 8-byte), polls back off")         \
    X(AGG_SPIN, "agg_spin", "agg polling without backing off")                                                \
    X(AGG_4K, "agg_4k", "agg with 32 items a thread (16 for 8-byte): tiles of 16 KiB")                        \
    X(AGG_256, "agg_256", "agg with 256 threads x 16 items (8 for 8-byte)")                                  \
    X(AGG_NO_TICKET, "agg_no_ticket", "agg with tiles in blockIdx order (as CUB), not a counter's")          \
    X(EXACT, "exact", "float32 sums: decoupled look-back carrying exact sums (common/exact_sum.h); else agg") \
    X(EXACT_LIMBS, "exact_limbs", "exact with limbs always: every prefix as 10 limb words, sums by atomics")  \
    X(EXACT_SPIN, "exact_spin", "exact polling at once and without backing off")                             \
    X(EXACT_ATOMICS, "exact_atomics", "exact summing by limb atomics, not float64 registers, when exact")     \
    X(EXACT_4K, "exact_4k", "exact with 32 items a thread (tiles of 16 KiB), registers for 6 blocks an SM")  \
    X(EXACT_NODELAY, "exact_nodelay", "exact polling at once (not after CUB's 1140 ns), backing off 128 ns") \
    X(EXACT_WS, "exact_ws", "exact carries, warp-specialised (scan_ws.cuh): 4+4 warps x 63 items, 6 stages") \
    X(EXACT_WS_8W, "exact_ws_8w", "exact_ws with 8+8 warps x 31 items")

#define ND_SP_ENUM(name, str, what) NDP_SCAN_##name,
enum { ND_SCAN_VARIANTS(ND_SP_ENUM) NDP_SCAN_N_VARIANTS };
#undef ND_SP_ENUM

/* The names, for a table in a .c or .cu file: ND_SCAN_VARIANT_NAMES. */
#define ND_SP_NAME(name, str, what) str,
#define ND_SCAN_VARIANT_NAMES {ND_SCAN_VARIANTS(ND_SP_NAME)}

/* The exact variants' tiles (NDP_SCAN_EXACT*, float32): 128 threads x 24
 * items, agg's tuning (exact_4k: 32 items); bench/gpu_speed.cu builds
 * inputs per tile. */
enum { ND_SCAN_EXACT_THREADS = 128, ND_SCAN_EXACT_ITEMS = 24, ND_SCAN_EXACT_4K_ITEMS = 32 };
/* The warp-specialised ones (scan_ws.cuh): reduce warps x 32 x odd items. */
enum { ND_SCAN_WS_WARPS = 4, ND_SCAN_WS_ITEMS = 63, ND_SCAN_WS_8W_WARPS = 8, ND_SCAN_WS_8W_ITEMS = 31 };
ND_SP_FN int64_t nd_scan_exact_tile(int variant) {
    switch (variant) {
    case NDP_SCAN_EXACT_4K: return (int64_t)ND_SCAN_EXACT_THREADS * ND_SCAN_EXACT_4K_ITEMS;
    case NDP_SCAN_EXACT_WS: return (int64_t)ND_SCAN_WS_WARPS * 32 * ND_SCAN_WS_ITEMS;
    case NDP_SCAN_EXACT_WS_8W: return (int64_t)ND_SCAN_WS_8W_WARPS * 32 * ND_SCAN_WS_8W_ITEMS;
    }
    return (int64_t)ND_SCAN_EXACT_THREADS * ND_SCAN_EXACT_ITEMS;
}

/* Levels of the aggregate tree and the fan-out of each: 32^3 tiles of
 * 3072 float32 are 2^32 elements before the top level holds more than 32
 * entries (it then takes more than one read a lane, still in order). */
enum { ND_SCAN_LEVELS = 4, ND_SCAN_FAN_LOG2 = 5, ND_SCAN_FAN = 1 << ND_SCAN_FAN_LOG2 };

/* Entries of level j in a row of `tiles` tiles. */
ND_SP_FN int64_t nd_scan_level_size(int64_t tiles, int j) {
    const int sh = ND_SCAN_FAN_LOG2 * j;
    return (tiles + ((int64_t)1 << sh) - 1) >> sh;
}

/* What tile t (of a row) reads at level j: entries [first, first + count)
 * of the row's level j. */
ND_SP_FN void nd_scan_level_range(int64_t t, int j, int64_t *first, int64_t *count) {
    const int64_t a = t >> (ND_SCAN_FAN_LOG2 * j);
    const int64_t f = j == ND_SCAN_LEVELS - 1 ? 0 : a & ~(int64_t)(ND_SCAN_FAN - 1);
    *first = f;
    *count = a - f;
}

/* Whether tile t ends the range of level j + 1's entry t >> 5(j+1)
 * (j < ND_SCAN_LEVELS - 1), and so publishes it: the join of its fold of
 * level j (nd_scan_level_range) and level j's entry t >> 5j (for j = 0
 * the tile's own total). */
ND_SP_FN int nd_scan_publishes(int64_t t, int j) {
    const int64_t mask = ((int64_t)1 << (ND_SCAN_FAN_LOG2 * (j + 1))) - 1;
    return j < ND_SCAN_LEVELS - 1 && (t & mask) == mask;
}

#endif
