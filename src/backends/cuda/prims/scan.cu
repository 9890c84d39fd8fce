// Inclusive scans over contiguous rows (prims.h), run-to-run deterministic:
// the same input gives the same bits on every run, which CUB's DeviceScan
// does not promise for floats (its decoupled look-back adds whichever
// predecessor prefixes happen to be ready). Every combination below has an
// association fixed by element positions alone. The kernels:
//
// - long rows, one pass (NDP_SCAN_ONE_PASS): tiles of TILE
//   elements (tiles never span rows) taken in order from a counter, so every
//   tile a tile waits for is running or done. A tile scans its elements
//   (cub::BlockScan, a fixed tree) and publishes its total; the last tile of
//   each group of 32 tiles publishes the group's total, the last of each
//   group of 32 groups that one's. A tile's prefix is (totals of the earlier
//   super-groups) + (earlier groups of its super-group) + (earlier tiles of
//   its group), each a fixed-order reduction by its own warp, the three
//   waited for at once. A group's total needs only its tiles and a
//   super-group's only its groups, so each is published before its tile
//   waits for anything else: no tile waits on a chain longer than three
//   tiles. (Publishing a group's total after the tile's whole prefix made
//   every group wait for the one before: a serial chain through the row,
//   13.9x the copy's time on 2^28 float32.) One read and one write.
// - one long row, windowed reduce-then-scan (NDP_SCAN_WINDOWS_*): windows of
//   W tiles (8 or 16 MiB); launch j reduces the tiles of window j (a fixed
//   BlockReduce each) and scans window j - 1, whose tiles the previous
//   launch read and which L2 (50 MiB on the H100) still holds: the tile's
//   prefix is the window's carry plus a fixed-order fold of the window's
//   earlier tile totals, and the first tile also folds the whole window into
//   the next carry. Two reads (one mostly from L2) and one write, no waits,
//   one launch per window.
// - the aggregate tree (NDP_SCAN_AGG*, common/scan_plan.h): one pass where
//   a tile publishes only its own total, at once, and the last tile of
//   each range of 32^(j+1) tiles the range's total as soon as its own fold
//   of level j is known; a tile's prefix is four fixed-order warp folds of
//   published totals (one warp a level, waiting at once). Entries are the
//   value's bits and a ready mark in 64-bit words polled relaxed (no
//   flag-then-value round trips, no acquire loads flushing L1 under the
//   streaming tiles); tiles of 128 threads x 24 float32 (CUB's sm_90
//   tuning), registers for 8 blocks an SM. Variants: no back-off, 32 items,
//   256 threads, tiles in blockIdx order instead of a counter's.
// - exact carries (NDP_SCAN_EXACT*, float32 sums; common/exact_sum.h):
//   CUB's decoupled look-back (a tile adds the totals of its predecessors
//   until it meets one's inclusive prefix, never waiting on a chain), with
//   the sums between tiles exact: 320-bit fixed point over 2^-149 in ten
//   32-bit limbs, summed lazily in int64 and rounded to float32 once, with
//   NaN / +-inf / "all -0.0" as order-free flags. An exact sum does not
//   depend on where the look-back stopped, so the bits are fixed by the
//   input. A prefix is published as one word (a float64) when it has at
//   most 53 significant bits, else as its limbs; the look-back sums in
//   float64 registers while every add is provably exact, else in limbs.
//   Tiles as agg's. Float products, float64, integers and complex take
//   agg (or the one pass).
// - exact carries, warp-specialised (NDP_SCAN_EXACT_WS*, scan_ws.cuh; the
//   default for float32 sums on rows of four of its tiles or more): the
//   same exact sums, on one persistent block an SM streaming tiles through
//   shared-memory stages by bulk copies, with separate load, reduce,
//   look-back and scan-store warps; a block's look-back adds the totals
//   of the tiles between its own two tiles to its running prefix, so it
//   waits only for totals, never for another tile's prefix.
// - NDP_SCAN_ONE_PASS_512, _8, _PACKED: the one pass with tiles of 512
//   threads, with registers for 8 blocks an SM, and (float32) with each
//   published total and its flag in one 64-bit word.
// - short rows: one warp per row, 32 elements at a time with the carry.
// - complex64 / complex128 (cumprod; the frontend scans a complex sum's
//   parts apart): the same kernels over a two-part value type.
// - float16 and bfloat16: NumPy rounds the sum to the format after every
//   step (the sum stalls where the increment falls below half its spacing),
//   which is not associative: one thread per row, in order.
#include <cub/block/block_load.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/block/block_store.cuh>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>
#include <type_traits>
#include <stdlib.h>
#include <string.h>

#include "prims.h"
#include "common/exact_sum.h"
#include "common/lib_calls.h"

namespace {

constexpr int THREADS = 256;
constexpr int ROW_WARPS = 8;  // short-row kernel: rows per block
// What ndp_scan runs (prims.h's NDP_SCAN_*; docs/internals.md says why):
// float32 sums carry exact sums between tiles, everything else is agg.
// Rows of kWsMinTiles warp-specialised tiles or more stream through
// exact_ws; shorter ones, whose tiles would be mostly partial (copied by
// one warp, not the bulk copy engine), take exact_4k, and so do rows that
// do not start 16-byte aligned (scan_ws_launch's fallback).
constexpr int kDefaultScan = NDP_SCAN_EXACT_WS, kShortRowScan = NDP_SCAN_EXACT_4K;
constexpr int64_t kWsMinTiles = 4;

// A tile is 16 KiB of values at 256 threads (complex128: 4 items a thread).
template <typename T> __host__ __device__ constexpr int items_per_thread() {
    return sizeof(T) >= 16 ? 4 : sizeof(T) >= 8 ? 8 : 16;
}
template <typename T, int BT = THREADS> __host__ __device__ constexpr int64_t tile_of() {
    return (int64_t)BT * items_per_thread<T>();
}

template <typename T> __device__ __forceinline__ bool is_nan(T v) { return v != v; }

// complex64 / complex128 as NumPy stores them (real, imaginary), with
// NumPy's textbook product; a NaN in either part is a NaN (np.isnan).
// Trivially copyable and default-constructible, as CUB's block primitives
// and __shared__ variables need.
template <typename F> struct Cx {
    F re, im;
    Cx() = default;
    __host__ __device__ constexpr Cx(int v) : re(F(v)), im(F(0)) {}
    __host__ __device__ constexpr Cx(F r, F i) : re(r), im(i) {}
};
template <typename F> __device__ __forceinline__ Cx<F> operator+(Cx<F> a, Cx<F> b) {
    return Cx<F>(a.re + b.re, a.im + b.im);
}
template <typename F> __device__ __forceinline__ Cx<F> operator*(Cx<F> a, Cx<F> b) {
    return Cx<F>(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
}
template <typename F> __device__ __forceinline__ bool is_nan(Cx<F> v) { return v.re != v.re || v.im != v.im; }

// Warp shuffles of a value: the intrinsics for built-in types, part by
// part for complex.
template <typename T> __device__ __forceinline__ T shfl_down(T v, int off) {
    return __shfl_down_sync(0xffffffffu, v, off);
}
template <typename T> __device__ __forceinline__ T shfl_up(T v, int off) { return __shfl_up_sync(0xffffffffu, v, off); }
template <typename T> __device__ __forceinline__ T shfl_from(T v, int lane) {
    return __shfl_sync(0xffffffffu, v, lane);
}
template <typename F> __device__ __forceinline__ Cx<F> shfl_down(Cx<F> v, int off) {
    return Cx<F>(shfl_down(v.re, off), shfl_down(v.im, off));
}
template <typename F> __device__ __forceinline__ Cx<F> shfl_up(Cx<F> v, int off) {
    return Cx<F>(shfl_up(v.re, off), shfl_up(v.im, off));
}
template <typename F> __device__ __forceinline__ Cx<F> shfl_from(Cx<F> v, int lane) {
    return Cx<F>(shfl_from(v.re, lane), shfl_from(v.im, lane));
}

// A value and whether it holds anything: combining with "nothing" returns the
// other side untouched (adding an identity 0 would turn -0.0 into +0.0).
template <typename T> struct Part {
    T v;
    int ok;
};

template <typename T> struct ScanOp {
    int prod, skip_nan;
    __device__ __forceinline__ T load(T v) const {
        if (skip_nan && is_nan(v)) return prod ? T(1) : T(0);
        return v;
    }
    __device__ __forceinline__ T operator()(T a, T b) const { return prod ? T(a * b) : T(a + b); }
    __device__ __forceinline__ Part<T> join(Part<T> a, Part<T> b) const {
        if (!a.ok) return b;
        if (!b.ok) return a;
        return Part<T>{(*this)(a.v, b.v), 1};
    }
};

template <typename T> struct JoinOp {
    ScanOp<T> op;
    __device__ __forceinline__ Part<T> operator()(Part<T> a, Part<T> b) const { return op.join(a, b); }
};

// Published totals: per tile, per group of GROUP tiles and per super-group
// of GROUP groups, each with a ready flag (zeroed before the launch); or,
// PACKED (4-byte T), the value's bits and the flag in one 64-bit word, so a
// reader waits for one load instead of a flag and then the value.
constexpr int GROUP = 32;
template <typename T, bool PACKED = false> struct Level {
    int *ready;
    T *value;
    unsigned long long *word; // PACKED: 1 << 32 | the value's bits
};
template <typename T, bool PACKED = false> struct TileState {
    unsigned long long *counter;
    Level<T, PACKED> tile, group, super;
};
template <typename T> __device__ __forceinline__ T read_published(const T *p) {
    return *(const volatile T *)p;
}
template <typename F> __device__ __forceinline__ Cx<F> read_published(const Cx<F> *p) {
    return Cx<F>(read_published(&p->re), read_published(&p->im));
}

// GPU-scope acquire and release: the value written before a flag's release
// is seen by whoever acquired the flag.
__device__ __forceinline__ int load_acquire(const int *p) {
    int v;
    asm volatile("ld.acquire.gpu.global.b32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void store_release(int *p, int v) {
    asm volatile("st.release.gpu.global.b32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

__device__ __forceinline__ void wait_flag(const int *flag) {
    while (load_acquire(flag) == 0) {
    }
}

__device__ __forceinline__ unsigned long long load_word(const unsigned long long *p) {
    unsigned long long v;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void store_word(unsigned long long *p, unsigned long long v) {
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

// Entry `at` of a level once it is published.
template <typename T, bool PACKED> __device__ __forceinline__ T wait_read(Level<T, PACKED> lv, int64_t at) {
    if constexpr (PACKED) {
        static_assert(sizeof(T) == 4, "packed levels hold 4-byte values");
        unsigned long long w;
        while (((w = load_word(&lv.word[at])) >> 32) == 0) {
        }
        const unsigned bits = (unsigned)w;
        T v;
        memcpy(&v, &bits, 4);
        return v;
    } else {
        wait_flag(&lv.ready[at]);
        return read_published(&lv.value[at]);
    }
}

// The lanes' parts joined by a fixed tree (lane l with lane l + off, off =
// 1, 2, 4, ...); the result in lane 0.
template <typename T> __device__ __forceinline__ Part<T> warp_tree(const ScanOp<T> &op, Part<T> p, int lane) {
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
        Part<T> q;
        q.v = shfl_down(p.v, off);
        q.ok = __shfl_down_sync(0xffffffffu, p.ok, off);
        if ((lane & (2 * off - 1)) == 0) p = op.join(p, q);
    }
    return p;
}

// The fixed-order combination of entries [first, first + count) of a level,
// waiting for each: lane l joins entries l, l + 32, ... in turn, then the
// lanes join by a fixed tree. The result is in lane 0.
template <typename T, bool PACKED>
__device__ Part<T> warp_combine(const ScanOp<T> &op, Level<T, PACKED> lv, int64_t first, int64_t count, int lane) {
    Part<T> p{T(0), 0};
    for (int64_t k = lane; k < count; k += 32) p = op.join(p, Part<T>{wait_read(lv, first + k), 1});
    return warp_tree(op, p, lane);
}

template <typename T, bool PACKED> __device__ __forceinline__ void publish(Level<T, PACKED> lv, int64_t at, T v) {
    if constexpr (PACKED) {
        unsigned bits;
        memcpy(&bits, &v, 4);
        store_word(&lv.word[at], 1ull << 32 | bits);
    } else {
        lv.value[at] = v;
        store_release(&lv.ready[at], 1);
    }
}

// A tile of BT threads x ITEMS in CUB's blocked arrangement, loaded and
// stored through shared memory (warp transposes), and its block scan: the
// one pass, the aggregate tree and the windows share it.
template <typename T, int BT, int ITEMS> struct BlockTile {
    using Load = cub::BlockLoad<T, BT, ITEMS, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
    using Store = cub::BlockStore<T, BT, ITEMS, cub::BLOCK_STORE_WARP_TRANSPOSE>;
    using Scan = cub::BlockScan<T, BT>;
    using Reduce = cub::BlockReduce<Part<T>, BT>;
    static constexpr int64_t TILE = (int64_t)BT * ITEMS;
    union Temp {
        typename Load::TempStorage load;
        typename Store::TempStorage store;
        typename Scan::TempStorage scan;
        typename Reduce::TempStorage reduce;
    };
    // The tile's first `valid` elements at p (the rest 0), as loaded.
    static __device__ __forceinline__ void load(Temp &tmp, const T *p, int64_t valid, T (&items)[ITEMS]) {
        if (valid == TILE) Load(tmp.load).Load(p, items);
        else Load(tmp.load).Load(p, items, (int)valid, T(0));
    }
    // The same after op.load (NaNs of the nan scans replaced), with the
    // block synchronised so that tmp can be reused.
    static __device__ __forceinline__ void load(Temp &tmp, const T *p, int64_t valid, const ScanOp<T> &op,
                                                T (&items)[ITEMS]) {
        load(tmp, p, valid, items);
#pragma unroll
        for (int k = 0; k < ITEMS; k++) items[k] = op.load(items[k]);
        __syncthreads();
    }
    static __device__ __forceinline__ void store(Temp &tmp, T *p, int64_t valid, T (&items)[ITEMS]) {
        if (valid == TILE) Store(tmp.store).Store(p, items);
        else Store(tmp.store).Store(p, items, (int)valid);
    }
};

// The inclusive scan of the tile's items after op.load; the total (the scan
// at the last valid element, which stays the same bits whatever the tile's
// length) into *total_s, seen by every thread on return.
template <typename T, int BT, int ITEMS, typename Scan>
__device__ __forceinline__ T scan_items(typename Scan::TempStorage &tmp, T (&items)[ITEMS], int64_t valid,
                                        const ScanOp<T> &op, T *total_s) {
    Scan(tmp).InclusiveScan(items, items, op);
    const int64_t last = valid - 1;
    if (threadIdx.x == last / ITEMS) {
#pragma unroll
        for (int k = 0; k < ITEMS; k++)
            if (k == last % ITEMS) *total_s = items[k];
    }
    __syncthreads();
    return *total_s;
}

template <typename T, int BT, int MIN_BLOCKS, bool PACKED>
__global__ void __launch_bounds__(BT, MIN_BLOCKS) scan_tiles(const T *in, T *out, int64_t n, int64_t tiles_per_row,
                                                 ScanOp<T> op, TileState<T, PACKED> st) {
    constexpr int ITEMS = items_per_thread<T>();
    constexpr int64_t TILE = tile_of<T, BT>();
    using Tile = BlockTile<T, BT, ITEMS>;
    using Scan = typename Tile::Scan;
    __shared__ typename Tile::Temp tmp;
    __shared__ unsigned long long tile_s;
    __shared__ Part<T> level_s[3]; // supers, groups, tiles before this one
    __shared__ T total_s;
    if (threadIdx.x == 0) tile_s = atomicAdd(st.counter, 1ULL);
    __syncthreads();
    const unsigned long long tile = tile_s;
    const int64_t row = (int64_t)(tile / tiles_per_row), t = (int64_t)(tile % tiles_per_row);
    const int64_t base = row * n + t * TILE, valid = n - t * TILE < TILE ? n - t * TILE : TILE;

    T items[ITEMS];
    Tile::load(tmp, in + base, valid, op, items);
    const T total = scan_items<T, BT, ITEMS, Scan>(tmp.scan, items, valid, op, &total_s);
    const bool more = t + 1 < tiles_per_row; // later tiles of this row read what we publish
    if (threadIdx.x == 0 && more) publish(st.tile, tile, total);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (warp < 3) {
        const int64_t groups_per_row = (tiles_per_row + GROUP - 1) / GROUP;
        const int64_t supers_per_row = (groups_per_row + GROUP - 1) / GROUP;
        const int64_t g = t / GROUP, sg = g / GROUP;
        const int64_t row_g0 = row * groups_per_row, row_s0 = row * supers_per_row;
        const int64_t tiles0 = row * tiles_per_row + g * GROUP, tiles_n = t - g * GROUP;
        const bool last_of_group = more && t % GROUP == GROUP - 1;
        Part<T> p;
        if (warp == 0) {
            p = warp_combine(op, st.tile, tiles0, tiles_n, lane);
            if (lane == 0 && last_of_group) publish(st.group, row_g0 + g, op.join(p, Part<T>{total, 1}).v);
        } else if (warp == 1) {
            p = warp_combine(op, st.group, row_g0 + sg * GROUP, g - sg * GROUP, lane);
            if (last_of_group && g % GROUP == GROUP - 1) {
                // The group's total again, as warp 0 forms it (the same bits).
                Part<T> c = warp_combine(op, st.tile, tiles0, tiles_n, lane);
                if (lane == 0)
                    publish(st.super, row_s0 + sg, op.join(p, op.join(c, Part<T>{total, 1})).v);
            }
        } else {
            p = warp_combine(op, st.super, row_s0, sg, lane);
        }
        if (lane == 0) level_s[2 - warp] = p;
    }
    __syncthreads();
    const Part<T> prefix = op.join(op.join(level_s[0], level_s[1]), level_s[2]);
    if (prefix.ok) {
#pragma unroll
        for (int k = 0; k < ITEMS; k++) items[k] = op(prefix.v, items[k]);
    }
    Tile::store(tmp, out + base, valid, items);
}

// ----------------------------------------------------------- aggregate tree
// NDP_SCAN_AGG*: common/scan_plan.h's combine order. Each published entry
// is one 64-bit word per 4 bytes of the value: the 4 bytes below a ready
// mark (1 << 32), stored and polled relaxed at GPU scope. A reader waits
// for whole words, so no fence orders a flag against its value, and no
// acquire load invalidates the SM's L1 while other tiles stream through it
// (the one pass's flag-then-value reads cost an L2 round trip each).
struct AggState {
    unsigned long long *counter;
    unsigned long long *level[ND_SCAN_LEVELS]; // row r's entry e of level j: level[j] + (r * size[j] + e) * words
    int64_t size[ND_SCAN_LEVELS];
};

// Level j's entries and their number a row (j chosen by unrolled selects:
// indexing the kernel's parameter with a register copies it to the stack).
__device__ __forceinline__ void agg_level(const AggState &st, int j, unsigned long long **lv, int64_t *size) {
    *lv = st.level[0];
    *size = st.size[0];
#pragma unroll
    for (int k = 1; k < ND_SCAN_LEVELS; k++)
        if (j == k) {
            *lv = st.level[k];
            *size = st.size[k];
        }
}

template <typename T> __host__ __device__ constexpr int agg_words() {
    static_assert(sizeof(T) == 4 || sizeof(T) == 8, "4- or 8-byte values");
    return (int)sizeof(T) / 4;
}

// A value's bits and back, in registers (4-byte values in the low half).
__device__ __forceinline__ unsigned long long bits_of(float v) { return __float_as_uint(v); }
__device__ __forceinline__ unsigned long long bits_of(double v) { return (unsigned long long)__double_as_longlong(v); }
__device__ __forceinline__ unsigned long long bits_of(unsigned long long v) { return v; }
template <typename T> __device__ __forceinline__ T from_bits(unsigned long long b) {
    if constexpr (sizeof(T) == 4) return __uint_as_float((unsigned)b);
    else if constexpr (std::is_same<T, double>::value) return __longlong_as_double((long long)b);
    else return b;
}

template <typename T> __device__ __forceinline__ void agg_publish(unsigned long long *p, T v) {
    const unsigned long long b = bits_of(v);
    store_word(p, 1ull << 32 | (b & 0xffffffffull));
    if constexpr (agg_words<T>() == 2) store_word(p + 1, 1ull << 32 | b >> 32);
}

// The entry at p once published; SLEEP_NS > 0 backs off between polls of
// one not yet there (the first poll is at once: most entries a tile reads
// were published while it read its own input).
template <typename T, int SLEEP_NS> __device__ __forceinline__ T agg_wait(const unsigned long long *p) {
    unsigned long long lo = load_word(p), hi = agg_words<T>() == 2 ? load_word(p + 1) : 1ull << 32;
    while ((lo >> 32) == 0 || (hi >> 32) == 0) {
        if constexpr (SLEEP_NS > 0) __nanosleep(SLEEP_NS);
        if ((lo >> 32) == 0) lo = load_word(p);
        if (agg_words<T>() == 2 && (hi >> 32) == 0) hi = load_word(p + 1);
    }
    return from_bits<T>((lo & 0xffffffffull) | (hi & 0xffffffffull) << 32);
}

// The fold of entries [first, first + count) of a row's level (lv), in
// scan_plan.h's order: lane l joins entries l, l + 32, ... in turn, then
// warp_tree. The result in lane 0.
template <typename T, int SLEEP_NS>
__device__ __forceinline__ Part<T> agg_fold(const ScanOp<T> &op, const unsigned long long *lv, int64_t first,
                                            int64_t count, int lane) {
    Part<T> p{T(0), 0};
    for (int64_t k = lane; k < count; k += 32)
        p = op.join(p, Part<T>{agg_wait<T, SLEEP_NS>(lv + (first + k) * agg_words<T>()), 1});
    return warp_tree(op, p, lane);
}

// Named barriers between two warps (ids 1 and 2; CUB's block algorithms
// use barrier 0 only): warp j - 1 hands the level-j entry it published to
// warp j, which publishes level j + 1 from it.
// (Immediate ids: a barrier id in a register makes ptxas reserve all 16.)
__device__ __forceinline__ void pair_arrive(int id) {
    if (id == 1) asm volatile("bar.arrive 1, 64;" ::: "memory");
    else asm volatile("bar.arrive 2, 64;" ::: "memory");
}
__device__ __forceinline__ void pair_sync(int id) {
    if (id == 1) asm volatile("bar.sync 1, 64;" ::: "memory");
    else asm volatile("bar.sync 2, 64;" ::: "memory");
}

// Tile (or unit) t of a row of tiles_per_row: publishes its total (level
// 0) unless it is the row's last, folds every level it reads (warp j level
// j, at once) and publishes the upper-level entries nd_scan_publishes
// names; returns its exclusive prefix (nothing for the row's first), seen
// by every thread. Every thread of the block calls it, once a tile; it
// ends with a block barrier, after which level_s and chain_s (the
// caller's __shared__ arrays of ND_SCAN_LEVELS) may be written again by
// the next tile's call.
template <typename T, int SLEEP_NS>
__device__ __forceinline__ Part<T> agg_prefix(const ScanOp<T> &op, const AggState &st, int64_t row, int64_t t,
                                              int64_t tiles_per_row, T total, Part<T> *level_s, T *chain_s) {
    static_assert(ND_SCAN_LEVELS == 4, "pair_sync's barrier ids 1 and 2 link levels 0 -> 1 -> 2");
    constexpr int W = agg_words<T>();
    const bool more = t + 1 < tiles_per_row; // later tiles of this row read what we publish
    if (threadIdx.x == 0 && more) agg_publish(st.level[0] + (row * st.size[0] + t) * W, total);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (warp < ND_SCAN_LEVELS) {
        const int j = warp;
        int64_t first, count;
        nd_scan_level_range(t, j, &first, &count);
        unsigned long long *lv, *up_lv;
        int64_t size, up_size;
        agg_level(st, j, &lv, &size);
        agg_level(st, j + 1, &up_lv, &up_size);
        const Part<T> p = agg_fold<T, SLEEP_NS>(op, lv + row * size * W, first, count, lane);
        if (more && nd_scan_publishes(t, j)) { // the same for the whole block
            T below = total;                    // level j's entry t >> 5j
            if (j > 0) {
                pair_sync(j);
                below = chain_s[j];
            }
            if (lane == 0) {
                const T up = op.join(p, Part<T>{below, 1}).v;
                agg_publish(up_lv + (row * up_size + (t >> (ND_SCAN_FAN_LOG2 * (j + 1)))) * W, up);
                chain_s[j + 1] = up;
            }
            if (nd_scan_publishes(t, j + 1)) {
                __syncwarp();
                pair_arrive(j + 1);
            }
        }
        if (lane == 0) level_s[j] = p;
    }
    __syncthreads();
    Part<T> prefix = level_s[ND_SCAN_LEVELS - 1];
#pragma unroll
    for (int j = ND_SCAN_LEVELS - 2; j >= 0; j--) prefix = op.join(prefix, level_s[j]);
    return prefix;
}

// TICKET: tiles in the order of a counter (every tile a tile waits for has
// started, whatever order the hardware starts blocks in); else in
// blockIdx order, as CUB's scans do (relying on the hardware starting a
// grid's blocks in that order), which saves the atomic's round trip.
template <typename T, int BT, int ITEMS, int MIN_BLOCKS, int SLEEP_NS, bool TICKET = true>
__global__ void __launch_bounds__(BT, MIN_BLOCKS) scan_agg(const T *in, T *out, int64_t n, int64_t tiles_per_row,
                                                           ScanOp<T> op, AggState st) {
    static_assert(BT >= 32 * ND_SCAN_LEVELS, "a warp for every level");
    constexpr int64_t TILE = (int64_t)BT * ITEMS;
    using Tile = BlockTile<T, BT, ITEMS>;
    using Scan = typename Tile::Scan;
    __shared__ typename Tile::Temp tmp;
    __shared__ unsigned long long tile_s;
    __shared__ Part<T> level_s[ND_SCAN_LEVELS]; // each level's fold
    __shared__ T chain_s[ND_SCAN_LEVELS];       // entry j this tile published, for warp j
    unsigned long long tile = blockIdx.x;
    if constexpr (TICKET) {
        if (threadIdx.x == 0) tile_s = atomicAdd(st.counter, 1ULL);
        __syncthreads();
        tile = tile_s;
    }
    const int64_t row = (int64_t)(tile / tiles_per_row), t = (int64_t)(tile % tiles_per_row);
    const int64_t base = row * n + t * TILE, valid = n - t * TILE < TILE ? n - t * TILE : TILE;

    T items[ITEMS];
    Tile::load(tmp, in + base, valid, op, items);
    // The tile's total (the block's fixed tree): a partial tile's includes
    // its padding, but it is the row's last and nobody reads it.
    T total;
    Scan(tmp.scan).InclusiveScan(items, items, op, total);
    const Part<T> prefix = agg_prefix<T, SLEEP_NS>(op, st, row, t, tiles_per_row, total, level_s, chain_s);
    if (prefix.ok) {
#pragma unroll
        for (int k = 0; k < ITEMS; k++) items[k] = op(prefix.v, items[k]);
    }
    Tile::store(tmp, out + base, valid, items);
}

// ------------------------------------------------------------ exact carries
// NDP_SCAN_EXACT* (float32 sums): CUB's decoupled look-back, with the
// carries between tiles summed exactly (common/exact_sum.h), so that the
// bits do not depend on where a look-back stopped. Tile i publishes, in
// 64-bit words stored and polled relaxed at GPU scope as agg's entries:
//   agg[i]   its total's float32 bits under a ready mark (1 << 32): its
//            aggregate, at once;
//   head[i]  its inclusive prefix (the exact sum of every total of its
//            row up to and including its own) as nd_xs_pack's word: the
//            float64 it is when it has at most 53 significant bits (0:
//            not yet), else a tag, with limb l under a ready mark at
//            rest[10 i + l];
//   (exact_limbs: head[i] limb 0 and the flags in bits 33-36 under the
//   ready mark, limb l at rest[9 i + l - 1], always.)
// A tile's warp 0 reads 32 predecessors at a time (lane k tile i - 1 - k),
// waits until each has published its aggregate or its prefix, and adds
// the aggregates of those before the nearest prefix, then that prefix: in
// float64 registers while every add is provably exact (exact_lookback_f64),
// else as limbs into int64 accumulators in shared memory (integer adds:
// any order, the same sum). Its exclusive prefix is that exact sum
// rounded once to float32, so its value is fixed by the input, whichever
// tiles had published. A tile waits only for aggregates of tiles with
// smaller tickets (published before they wait for anything) or for limbs
// whose head word it has seen: no deadlock, and no chain through the row.
struct ExactState {
    unsigned long long *counter;
    unsigned long long *agg, *head, *rest;
};
constexpr unsigned long long kMark = 1ull << 32;

// Between two polls of entries not yet published: SLEEP_NS, on grids of
// 500 tiles or more (CUB's rule: on small grids every tile is running and
// a spin costs nothing).
template <int SLEEP_NS> __device__ __forceinline__ void exact_backoff() {
    if constexpr (SLEEP_NS > 0)
        if (gridDim.x >= 500) __nanosleep(SLEEP_NS);
}

template <int SLEEP_NS> __device__ __forceinline__ unsigned long long exact_poll(const unsigned long long *p) {
    unsigned long long w = load_word(p);
    while (!(w >> 32)) {
        exact_backoff<SLEEP_NS>();
        w = load_word(p);
    }
    return w;
}

__device__ __forceinline__ void exact_add(int64_t *acc, int limb, int64_t v) {
    atomicAdd(reinterpret_cast<unsigned long long *>(acc + limb), (unsigned long long)v);
}

// The float32 whose bits are `bits` into acc (shared, several lanes at
// once); returns its flags.
__device__ __forceinline__ unsigned exact_add_bits(int64_t *acc, uint32_t bits) {
    int limb;
    int64_t v, lo, hi;
    const unsigned f = nd_xs_place(bits, &limb, &v);
    if (v) {
        nd_xs_split(v, &lo, &hi);
        exact_add(acc, limb, lo);
        if (hi) exact_add(acc, limb + 1, hi);
    }
    return f;
}

// Where tile i's prefix limbs live: ONE_WORD, all ten at rest[10 i + l]
// (when its head word says so); else limbs 1-9 at rest[9 i + l - 1].
template <bool ONE_WORD> constexpr int kRestLimbs = ONE_WORD ? ND_XS_LIMBS : ND_XS_LIMBS - 1;

// Whether a head word is published: ONE_WORD, any nonzero word (nd_xs_pack
// never gives 0); else its ready mark.
template <bool ONE_WORD> __device__ __forceinline__ bool head_ready(unsigned long long h) {
    return ONE_WORD ? h != 0 : (h >> 32) != 0;
}

// Warp 0 of tile `tile` (the t-th of its row, t >= 1): the exact sum of
// the totals of tiles [tile - t, tile) added into acc; returns its flags,
// the same in every lane.
template <int SLEEP_NS, bool ONE_WORD>
__device__ __forceinline__ unsigned exact_lookback(const ExactState &st, int64_t tile, int64_t t, int lane,
                                                   int64_t *acc) {
    unsigned flags = 0;
    for (int64_t w0 = 1;; w0 += 32) {
        const int64_t k = w0 + lane; // this lane's tile is k tiles back
        const bool in_row = k <= t;
        unsigned long long a = 0, h = 0;
        if (in_row) {
            a = load_word(st.agg + tile - k);
            h = load_word(st.head + tile - k);
        }
        while (!__all_sync(0xffffffffu, !in_row || (a >> 32) || head_ready<ONE_WORD>(h))) {
            exact_backoff<SLEEP_NS>();
            if (in_row && !(a >> 32) && !head_ready<ONE_WORD>(h)) {
                a = load_word(st.agg + tile - k);
                h = load_word(st.head + tile - k);
            }
        }
        // The nearest tile with its prefix (or the row's start) stops it.
        const unsigned stop = __ballot_sync(0xffffffffu, !in_row || head_ready<ONE_WORD>(h));
        const int s = stop ? __ffs(stop) - 1 : 32;
        if (lane < s) flags |= exact_add_bits(acc, (uint32_t)a);
        if (s < 32) {
            const unsigned long long hs = __shfl_sync(0xffffffffu, h, s);
            const int64_t ks = w0 + s;
            if (ks <= t) { // a prefix, not the row's start
                const unsigned long long *rest = st.rest + (tile - ks) * kRestLimbs<ONE_WORD>;
                bool limbs = true; // lanes 0-9 add limb `lane` from rest
                if constexpr (ONE_WORD) {
                    int follow, limb, neg;
                    uint32_t part[3];
                    const unsigned f = nd_xs_unpack(hs, &follow, &limb, part, &neg); // the same in every lane
                    if (lane == 0) flags |= f;
                    limbs = follow;
                    if (!follow && lane < 3 && limb + lane < ND_XS_LIMBS) {
                        const uint32_t mine = lane == 0 ? part[0] : lane == 1 ? part[1] : part[2];
                        if (mine) exact_add(acc, limb + lane, neg ? -(int64_t)mine : (int64_t)mine);
                    }
                } else {
                    if (lane == 0) {
                        flags |= (unsigned)(hs >> 33) & ND_XS_FLAGS;
                        exact_add(acc, 0, (int64_t)(uint32_t)hs);
                    }
                    rest -= 1; // limb l at rest[l - 1]
                }
                if (limbs && lane < ND_XS_LIMBS && (ONE_WORD || lane > 0)) {
                    const uint32_t limb = (uint32_t)exact_poll<SLEEP_NS>(rest + lane);
                    exact_add(acc, lane, lane == ND_XS_LIMBS - 1 ? (int64_t)(int32_t)limb : (int64_t)limb);
                }
            }
            break;
        }
    }
    return __reduce_or_sync(0xffffffffu, flags);
}

// A float64 that holds an exact sum as nd_xs_pack's word (a float64 is
// its own encoding; NaNs as the one NaN it uses).
__device__ __forceinline__ unsigned long long exact_word(double d) {
    return d != d ? ~ND_XS_ENC_NAN : ~(unsigned long long)__double_as_longlong(d);
}

// An exact sum held as a float64 (exact_word's value) added by lane 0
// into the limbs acc (zeroed, or holding nothing that lane 0's plain adds
// could race with); returns its flags, the same in every lane.
__device__ __forceinline__ unsigned exact_f64_into_limbs(double e, int64_t *acc, int lane) {
    unsigned flags = 0;
    if (lane == 0) {
        int follow, limb, neg;
        uint32_t part[3];
        flags = nd_xs_unpack(exact_word(e), &follow, &limb, part, &neg);
        for (int j = 0; j < 3 && limb + j < ND_XS_LIMBS; j++) acc[limb + j] += neg ? -(int64_t)part[j] : (int64_t)part[j];
    }
    return __shfl_sync(0xffffffffu, flags, 0);
}

// exact_lookback (ONE_WORD) in float64 registers: the window's terms
// (aggregates as float64, the prefix word as the float64 it is) summed by a
// warp butterfly into *sum. Every term is a multiple of 2^lo and below
// 2^(hi+1) (lo the lowest set bit of any, hi the highest), so every
// partial sum of the <= 33 terms, in any order, is a multiple of 2^lo
// below 2^(hi+7): exact in float64 when hi - lo <= 46 (ND_XS_F64_SPAN), checked once a
// window (two warp min/max reductions beside the adds); the window's sum
// joins the running one by a checked add (nd_xs_add_f64). Exact adds give
// the exact sum, the same value as the limbs'. Returns false, at once, when
// the bound fails or the prefix met is published as limbs: the caller then
// runs exact_lookback.
template <int SLEEP_NS>
__device__ __forceinline__ bool exact_lookback_f64(const ExactState &st, int64_t tile, int64_t t, int lane,
                                                   double *sum) {
    double acc = -0.0; // nothing: the identity
    int ok = 1;
    for (int64_t w0 = 1;; w0 += 32) {
        const int64_t k = w0 + lane;
        const bool in_row = k <= t;
        unsigned long long a = 0, h = 0;
        if (in_row) {
            a = load_word(st.agg + tile - k);
            h = load_word(st.head + tile - k);
        }
        while (!__all_sync(0xffffffffu, !in_row || (a >> 32) || h)) {
            exact_backoff<SLEEP_NS>();
            if (in_row && !(a >> 32) && !h) {
                a = load_word(st.agg + tile - k);
                h = load_word(st.head + tile - k);
            }
        }
        const unsigned stop = __ballot_sync(0xffffffffu, !in_row || h);
        const int s = stop ? __ffs(stop) - 1 : 32;
        double v = lane < s ? (double)__uint_as_float((uint32_t)a) : -0.0;
        if (lane == s && in_row && ~h == ND_XS_TAG_LIMBS) ok = 0;
        if (lane == s && in_row) v = __longlong_as_double((long long)~h);
        int lo, hi;
        nd_xs_f64_span(v, &lo, &hi);
        lo = __reduce_min_sync(0xffffffffu, lo);
        hi = __reduce_max_sync(0xffffffffu, hi);
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
        if (hi - lo > ND_XS_F64_SPAN) ok = 0;
        acc = nd_xs_add_f64(acc, v, &ok);
        if (!__all_sync(0xffffffffu, ok)) return false;
        if (s < 32) break;
    }
    *sum = acc;
    return true;
}

// Warp 0 of a tile that publishes (more: not its row's last) or needs a
// prefix (t > 0): publishes its aggregate and its inclusive prefix, and
// puts its exclusive prefix, rounded, into *prefix_s (t > 0).
template <int SLEEP_NS, bool ONE_WORD, bool F64, int PRE_NS>
__device__ __forceinline__ void exact_prefix(const ExactState &st, int64_t tile, int64_t t, bool more, float total,
                                             int64_t *acc_s, uint32_t *lim_s, float *prefix_s) {
    const int lane = threadIdx.x;
    const uint32_t total_bits = __float_as_uint(total);
    if (lane == 0 && more) store_word(st.agg + tile, kMark | total_bits);
    if (lane < ND_XS_LIMBS) acc_s[lane] = 0;
    // CUB's look-back sleeps PRE_NS before its first poll (its sm_90
    // float tuning: 1140 ns), so that the tiles just before have published
    // their prefixes and the look-back stops at once, in its first window,
    // instead of walking back over tiles still looking back themselves.
    if constexpr (PRE_NS > 0)
        if (t > 0 && gridDim.x >= 500) __nanosleep(PRE_NS);
    __syncwarp();
    unsigned flags = 0;
    bool in_limbs = true; // whether the exclusive prefix is in acc_s and flags
    if constexpr (F64) {
        double e = -0.0; // nothing: the identity
        if (t == 0 || exact_lookback_f64<SLEEP_NS>(st, tile, t, lane, &e)) {
            in_limbs = false;
            int ok = 1;
            const double inc = nd_xs_add_f64(e, (double)total, &ok); // the same in every lane
            if (lane == 0) {
                if (more && ok) store_word(st.head + tile, exact_word(inc));
                if (t > 0) *prefix_s = __double2float_rn(e); // e is exact: rounded once
            }
            if (!more || ok) return;
            // The inclusive prefix has more than 53 bits: e into the limbs,
            // then as below.
            flags = exact_f64_into_limbs(e, acc_s, lane);
        }
    }
    if (in_limbs && t > 0) flags = exact_lookback<SLEEP_NS, ONE_WORD>(st, tile, t, lane, acc_s);
    __syncwarp();
    if (more) {
        int limb;
        int64_t v;
        const unsigned ft = nd_xs_place(total_bits, &limb, &v);
        unsigned long long word = 0;
        if (lane == 0) {
            nd_xs_normalise(acc_s, limb, v, lim_s);
            if constexpr (ONE_WORD) word = nd_xs_pack(lim_s, flags | ft);
        }
        __syncwarp();
        if constexpr (ONE_WORD) {
            // The limbs beside the head word only when it says so.
            word = __shfl_sync(0xffffffffu, word, 0);
            if (word == ~ND_XS_TAG_LIMBS && lane < ND_XS_LIMBS)
                store_word(st.rest + tile * ND_XS_LIMBS + lane, kMark | lim_s[lane]);
            if (lane == 0) store_word(st.head + tile, word);
        } else if (lane < ND_XS_LIMBS) {
            const unsigned long long w = kMark | lim_s[lane];
            if (lane == 0) store_word(st.head + tile, w | (unsigned long long)(flags | ft) << 33);
            else store_word(st.rest + tile * (ND_XS_LIMBS - 1) + lane - 1, w);
        }
        __syncwarp();
    }
    if (in_limbs && t > 0 && lane == 0) {
        nd_xs_normalise(acc_s, 0, 0, lim_s);
        *prefix_s = __uint_as_float(nd_xs_round(lim_s, flags));
    }
}

template <int BT, int ITEMS, int MIN_BLOCKS, int SLEEP_NS, bool ONE_WORD, bool F64, int PRE_NS>
__global__ void __launch_bounds__(BT, MIN_BLOCKS) scan_exact(const float *in, float *out, int64_t n,
                                                             int64_t tiles_per_row, ScanOp<float> op, ExactState st) {
    constexpr int64_t TILE = (int64_t)BT * ITEMS;
    using Tile = BlockTile<float, BT, ITEMS>;
    using Scan = typename Tile::Scan;
    __shared__ typename Tile::Temp tmp;
    __shared__ unsigned long long tile_s;
    __shared__ int64_t acc_s[ND_XS_LIMBS];
    __shared__ uint32_t lim_s[ND_XS_LIMBS];
    __shared__ float prefix_s;
    if (threadIdx.x == 0) tile_s = atomicAdd(st.counter, 1ULL);
    __syncthreads();
    const int64_t tile = (int64_t)tile_s;
    const int64_t row = tile / tiles_per_row, t = tile % tiles_per_row;
    const int64_t base = row * n + t * TILE, valid = n - t * TILE < TILE ? n - t * TILE : TILE;

    float items[ITEMS];
    Tile::load(tmp, in + base, valid, op, items);
    // The tile's total (a partial tile's includes its padding, but it is
    // the row's last and nobody reads it).
    float total;
    Scan(tmp.scan).InclusiveScan(items, items, op, total);
    const bool more = t + 1 < tiles_per_row;
    if (threadIdx.x < 32 && (more || t > 0)) exact_prefix<SLEEP_NS, ONE_WORD, F64, PRE_NS>(st, tile, t, more, total, acc_s, lim_s, &prefix_s);
    __syncthreads();
    if (t > 0) { // -0.0 (every earlier element -0.0) keeps each item's bits
        const float p = prefix_s;
#pragma unroll
        for (int k = 0; k < ITEMS; k++) items[k] = op(p, items[k]);
    }
    Tile::store(tmp, out + base, valid, items);
}

// Tried and removed (docs/internals.md has their figures and why they lost,
// so that nobody tries them again blind): fixed-order decoupled look-back
// kernels (lookback*: 5.4-6.1x the copy floor for 2^28 float32 on the
// H200, up to 8.1x for float64, and lookback wrong on an int64 row of
// 131077) and agg's order over 96 KiB units copied into shared memory by
// cp.async on a resident grid (staged: 2.87x against agg's 1.74x).

// Windowed reduce-then-scan of one row of n: launch j scans the tiles of
// window j - 1 (blocks [0, scan_blocks)) and reduces those of window j (the
// rest). agg: two windows of tile totals (window w at (w & 1) * win_tiles);
// carry[w]: the fold of the windows before w (carry[0] holds nothing).
template <typename T, int BT>
__global__ void __launch_bounds__(BT) scan_window(const T *in, T *out, int64_t n, int64_t win_tiles, int64_t j,
                                                  int64_t scan_blocks, ScanOp<T> op, T *agg, Part<T> *carry) {
    constexpr int ITEMS = items_per_thread<T>();
    constexpr int64_t TILE = tile_of<T, BT>();
    using Tile = BlockTile<T, BT, ITEMS>;
    using Scan = typename Tile::Scan;
    using Reduce = typename Tile::Reduce;
    __shared__ typename Tile::Temp tmp;
    __shared__ Part<T> prefix_s;
    __shared__ T total_s;
    const JoinOp<T> join{op};
    const bool scanning = (int64_t)blockIdx.x < scan_blocks;
    const int64_t w = scanning ? j - 1 : j, k = scanning ? blockIdx.x : blockIdx.x - scan_blocks;
    const int64_t base = (w * win_tiles + k) * TILE, valid = n - base < TILE ? n - base : TILE;
    T *win_agg = agg + (w & 1) * win_tiles;

    T items[ITEMS];
    Tile::load(tmp, in + base, valid, items);
    if (!scanning) {
        // The tile's total: each thread folds its items in order, then a
        // fixed block tree.
        Part<T> p{T(0), 0};
#pragma unroll
        for (int q = 0; q < ITEMS; q++)
            if ((int64_t)threadIdx.x * ITEMS + q < valid) p = op.join(p, Part<T>{op.load(items[q]), 1});
        __syncthreads();
        Part<T> r = Reduce(tmp.reduce).Reduce(p, join);
        if (threadIdx.x == 0) win_agg[k] = r.v;
        return;
    }
    // The fold of the window's tile totals [0, upto): thread i folds its
    // slice of win_tiles / BT entries in order, then a fixed block tree.
    const int64_t per = (win_tiles + BT - 1) / BT;
    auto fold = [&](int64_t upto) {
        Part<T> p{T(0), 0};
        for (int64_t q = threadIdx.x * per; q < (threadIdx.x + 1) * per && q < upto; q++)
            p = op.join(p, Part<T>{win_agg[q], 1});
        Part<T> r = Reduce(tmp.reduce).Reduce(p, join);
        __syncthreads();
        return r;
    };
    __syncthreads();
    const Part<T> before = fold(k);
    if (threadIdx.x == 0) prefix_s = op.join(carry[w], before);
    if (k == 0) {
        const int64_t tiles_left = (n - w * win_tiles * TILE + TILE - 1) / TILE;
        const Part<T> all = fold(tiles_left < win_tiles ? tiles_left : win_tiles);
        if (threadIdx.x == 0) carry[w + 1] = op.join(carry[w], all);
    }
#pragma unroll
    for (int q = 0; q < ITEMS; q++) items[q] = op.load(items[q]);
    __syncthreads();
    scan_items<T, BT, ITEMS, Scan>(tmp.scan, items, valid, op, &total_s);
    const Part<T> prefix = prefix_s;
    if (prefix.ok) {
#pragma unroll
        for (int q = 0; q < ITEMS; q++) items[q] = op(prefix.v, items[q]);
    }
    __syncthreads();
    Tile::store(tmp, out + base, valid, items);
}

// One warp per row: 32 elements at a time, a fixed shuffle scan, the carry
// from the chunk before.
template <typename T>
__global__ void __launch_bounds__(32 * ROW_WARPS) scan_short_rows(const T *in, T *out, int64_t rows, int64_t n,
                                                                  ScanOp<T> op) {
    const int lane = threadIdx.x & 31;
    const int64_t row = (int64_t)blockIdx.x * ROW_WARPS + threadIdx.x / 32;
    if (row >= rows) return;
    const T *x = in + row * n;
    T *y = out + row * n;
    Part<T> carry{T(0), 0};
    for (int64_t c = 0; c < n; c += 32) {
        const int64_t i = c + lane;
        Part<T> p{i < n ? op.load(x[i]) : T(0), i < n};
#pragma unroll
        for (int off = 1; off < 32; off <<= 1) {
            Part<T> q;
            q.v = shfl_up(p.v, off);
            q.ok = __shfl_up_sync(0xffffffffu, p.ok, off);
            if (lane >= off) p = op.join(q, p);
        }
        Part<T> r = op.join(carry, p);
        if (i < n) y[i] = r.v;
        carry.v = shfl_from(r.v, 31);
        carry.ok = 1;
        if (c + 32 > n) break;
    }
}

// float16 / bfloat16: one thread per row, rounding every step.
template <typename H, bool BF>
__global__ void scan_half_rows(const H *in, H *out, int64_t rows, int64_t n, int prod, int skip_nan) {
    const int64_t row = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows) return;
    const H *x = in + row * n;
    H *y = out + row * n;
    auto to_f = [](H h) -> float {
        if constexpr (BF) return __bfloat162float(h);
        else return __half2float(h);
    };
    auto to_h = [](float f) -> H {
        if constexpr (BF) return __float2bfloat16_rn(f);
        else return __float2half_rn(f);
    };
    float acc = 0.0f;
    for (int64_t i = 0; i < n; i++) {
        float v = to_f(x[i]);
        if (skip_nan && v != v) v = prod ? 1.0f : 0.0f;
        acc = i == 0 ? v : to_f(to_h(prod ? acc * v : acc + v));
        y[i] = i == 0 ? to_h(v) : to_h(acc);
    }
}

size_t align_up(size_t v) { return (v + 255) & ~(size_t)255; }

// The launchers' workspace protocol (prims.h): tmp NULL asks for the size
// (*bytes = need, nothing launched); otherwise tmp must hold need bytes,
// of which the first `zero` are zeroed on s. True when the caller returns
// *e at once (the size given, too small a workspace, a failed memset).
bool workspace_query_or_zero(void *tmp, size_t *bytes, size_t need, size_t zero, cudaStream_t s, cudaError_t *e) {
    if (!tmp) {
        *bytes = need;
        *e = cudaSuccess;
        return true;
    }
    if (*bytes < need) {
        *e = cudaErrorInvalidValue;
        return true;
    }
    *e = cudaMemsetAsync(tmp, 0, zero, s);
    return *e != cudaSuccess;
}

template <typename T, int BT, int MIN_BLOCKS = 1, bool PACKED = false>
cudaError_t scan_one_pass(const T *in, T *out, int64_t rows, int64_t n, ScanOp<T> op, void *tmp, size_t *bytes,
                          cudaStream_t s) {
    constexpr int64_t TILE = tile_of<T, BT>();
    const int64_t tiles_per_row = (n + TILE - 1) / TILE, tiles = rows * tiles_per_row;
    const int64_t groups = rows * ((tiles_per_row + GROUP - 1) / GROUP);
    const int64_t supers = rows * ((tiles_per_row + (int64_t)GROUP * GROUP - 1) / ((int64_t)GROUP * GROUP));
    if (tiles > 0x7fffffffLL) return cudaErrorInvalidValue;
    // [counter][tile, group, super flags][tile, group, super values], or
    // [counter][tile, group, super words] (PACKED; all zeroed)
    const size_t levels = (size_t)(tiles + groups + supers);
    const size_t flags_off = align_up(sizeof(unsigned long long));
    const size_t values_off = align_up(flags_off + (PACKED ? levels * sizeof(unsigned long long) : levels * sizeof(int)));
    const size_t need = align_up(values_off + (PACKED ? 0 : levels * sizeof(T)));
    cudaError_t e;
    if (workspace_query_or_zero(tmp, bytes, need, values_off, s, &e)) return e;
    char *w = static_cast<char *>(tmp);
    int *flags = reinterpret_cast<int *>(w + flags_off);
    unsigned long long *words = reinterpret_cast<unsigned long long *>(w + flags_off);
    T *values = reinterpret_cast<T *>(w + values_off);
    TileState<T, PACKED> st{reinterpret_cast<unsigned long long *>(w),
                            {flags, values, words},
                            {flags + tiles, values + tiles, words + tiles},
                            {flags + tiles + groups, values + tiles + groups, words + tiles + groups}};
    scan_tiles<T, BT, MIN_BLOCKS, PACKED><<<(unsigned)tiles, BT, 0, s>>>(in, out, n, tiles_per_row, op, st);
    return cudaGetLastError();
}

// The aggregate tree's published entries for rows of tiles_per_row tiles
// (or units): [counter][level 0][level 1]... in tmp, all zeroed (nothing
// published); with tmp NULL only their size into *bytes.
cudaError_t agg_state(int64_t rows, int64_t tiles_per_row, int words, void *tmp, size_t *bytes, cudaStream_t s,
                      AggState *st) {
    *st = AggState{};
    size_t off = align_up(sizeof(unsigned long long)), at[ND_SCAN_LEVELS];
    for (int j = 0; j < ND_SCAN_LEVELS; j++) {
        st->size[j] = nd_scan_level_size(tiles_per_row, j);
        at[j] = off;
        off = align_up(off + (size_t)(rows * st->size[j]) * words * sizeof(unsigned long long));
    }
    cudaError_t e;
    if (workspace_query_or_zero(tmp, bytes, off, off, s, &e)) return e;
    char *w = static_cast<char *>(tmp);
    st->counter = reinterpret_cast<unsigned long long *>(w);
    for (int j = 0; j < ND_SCAN_LEVELS; j++) st->level[j] = reinterpret_cast<unsigned long long *>(w + at[j]);
    return cudaSuccess;
}

// The aggregate tree (scan_agg): tiles of BT x ITEMS.
template <typename T, int BT, int ITEMS, int MIN_BLOCKS, int SLEEP_NS, bool TICKET = true>
cudaError_t scan_agg_launch(const T *in, T *out, int64_t rows, int64_t n, ScanOp<T> op, void *tmp, size_t *bytes,
                            cudaStream_t s) {
    constexpr int64_t TILE = (int64_t)BT * ITEMS;
    const int64_t tiles_per_row = (n + TILE - 1) / TILE, tiles = rows * tiles_per_row;
    if (tiles > 0x7fffffffLL) return cudaErrorInvalidValue;
    AggState st;
    cudaError_t e = agg_state(rows, tiles_per_row, agg_words<T>(), tmp, bytes, s, &st);
    if (e != cudaSuccess || !tmp) return e;
    scan_agg<T, BT, ITEMS, MIN_BLOCKS, SLEEP_NS, TICKET><<<(unsigned)tiles, BT, 0, s>>>(in, out, n, tiles_per_row, op, st);
    return cudaGetLastError();
}

// The exact-carry look-back (scan_exact): tiles of BT x ITEMS float32, sums
// only. Workspace: [counter][agg: tiles][head: tiles][rest: 10 or 9
// tiles], all zeroed (nothing published).
template <int BT, int ITEMS, int MIN_BLOCKS, int SLEEP_NS, bool ONE_WORD, bool F64, int PRE_NS>
cudaError_t scan_exact_launch(const float *in, float *out, int64_t rows, int64_t n, ScanOp<float> op, void *tmp,
                              size_t *bytes, cudaStream_t s) {
    constexpr int64_t TILE = (int64_t)BT * ITEMS;
    const int64_t tiles_per_row = (n + TILE - 1) / TILE, tiles = rows * tiles_per_row;
    if (tiles > 0x7fffffffLL) return cudaErrorInvalidValue;
    const size_t agg_off = align_up(sizeof(unsigned long long)), head_off = align_up(agg_off + (size_t)tiles * 8),
                 rest_off = align_up(head_off + (size_t)tiles * 8),
                 need = align_up(rest_off + (size_t)tiles * kRestLimbs<ONE_WORD> * 8);
    cudaError_t e;
    if (workspace_query_or_zero(tmp, bytes, need, need, s, &e)) return e;
    char *w = static_cast<char *>(tmp);
    ExactState st{reinterpret_cast<unsigned long long *>(w), reinterpret_cast<unsigned long long *>(w + agg_off),
                  reinterpret_cast<unsigned long long *>(w + head_off),
                  reinterpret_cast<unsigned long long *>(w + rest_off)};
    static_assert(ONE_WORD || !F64, "the float64 look-back reads one-word prefixes");
    scan_exact<BT, ITEMS, MIN_BLOCKS, SLEEP_NS, ONE_WORD, F64, PRE_NS>
        <<<(unsigned)tiles, BT, 0, s>>>(in, out, n, tiles_per_row, op, st);
    return cudaGetLastError();
}

#include "scan_ws.cuh"

// One row in windows of win_tiles tiles: nwin + 1 launches (see scan_window).
template <typename T>
cudaError_t scan_windows(const T *in, T *out, int64_t n, int64_t win_tiles, ScanOp<T> op, void *tmp, size_t *bytes,
                         cudaStream_t s) {
    constexpr int64_t TILE = tile_of<T>();
    const int64_t tiles = (n + TILE - 1) / TILE, nwin = (tiles + win_tiles - 1) / win_tiles;
    // [carry: nwin + 1 parts][tile totals of two windows]
    const size_t agg_off = align_up((size_t)(nwin + 1) * sizeof(Part<T>));
    const size_t need = align_up(agg_off + (size_t)(2 * win_tiles) * sizeof(T));
    cudaError_t e; // carry[0] holds nothing: the carries zeroed
    if (workspace_query_or_zero(tmp, bytes, need, agg_off, s, &e)) return e;
    char *w = static_cast<char *>(tmp);
    Part<T> *carry = reinterpret_cast<Part<T> *>(w);
    T *agg = reinterpret_cast<T *>(w + agg_off);
    for (int64_t j = 0; j <= nwin; j++) {
        auto in_window = [&](int64_t v) {
            const int64_t left = tiles - v * win_tiles;
            return left < win_tiles ? left : win_tiles;
        };
        const int64_t scan_blocks = j > 0 ? in_window(j - 1) : 0, reduce_blocks = j < nwin ? in_window(j) : 0;
        scan_window<T, THREADS><<<(unsigned)(scan_blocks + reduce_blocks), THREADS, 0, s>>>(
            in, out, n, win_tiles, j, scan_blocks, op, agg, carry);
        if ((e = cudaGetLastError()) != cudaSuccess) return e;
    }
    return cudaSuccess;
}

// The aggregate tree publishes a value
// with its ready mark in 64-bit words, so it takes the 4- and 8-byte real
// values; complex values scan with the one pass whatever variant is asked
// for.
template <typename T>
constexpr bool kAggTree = std::is_same<T, float>::value || std::is_same<T, double>::value ||
                          std::is_same<T, unsigned long long>::value;

template <typename T>
cudaError_t scan_agg_variant(int variant, const T *in, T *out, int64_t rows, int64_t n, ScanOp<T> op, void *tmp,
                             size_t *bytes, cudaStream_t s) {
    if constexpr (kAggTree<T>) {
        switch (variant) {
        // 128 threads x 24 items (12 for 8-byte values) are CUB's sm_90 tuning
        // of its float scan; registers for 8 blocks an SM keep 32 warps of
        // loads in flight.
        case NDP_SCAN_AGG: return scan_agg_launch<T, 128, (sizeof(T) == 4 ? 24 : 12), 8, 128>(in, out, rows, n, op, tmp, bytes, s);
        case NDP_SCAN_AGG_SPIN: return scan_agg_launch<T, 128, (sizeof(T) == 4 ? 24 : 12), 8, 0>(in, out, rows, n, op, tmp, bytes, s);
        case NDP_SCAN_AGG_4K: return scan_agg_launch<T, 128, (sizeof(T) == 4 ? 32 : 16), 6, 128>(in, out, rows, n, op, tmp, bytes, s);
        case NDP_SCAN_AGG_NO_TICKET:
            return scan_agg_launch<T, 128, (sizeof(T) == 4 ? 24 : 12), 8, 128, false>(in, out, rows, n, op, tmp, bytes, s);
        case NDP_SCAN_AGG_256: return scan_agg_launch<T, 256, (sizeof(T) == 4 ? 16 : 8), 4, 128>(in, out, rows, n, op, tmp, bytes, s);
        }
    }
    return scan_one_pass<T, THREADS>(in, out, rows, n, op, tmp, bytes, s);
}

template <typename T>
cudaError_t scan_typed(int variant, int op_kind, const void *in_, void *out_, int64_t rows, int64_t n, void *tmp,
                       size_t *bytes, cudaStream_t s, bool by_default = false) {
    const T *in = static_cast<const T *>(in_);
    T *out = static_cast<T *>(out_);
    ScanOp<T> op{op_kind == ND_SCAN_PROD || op_kind == ND_SCAN_NANPROD,
                 op_kind == ND_SCAN_NANSUM || op_kind == ND_SCAN_NANPROD};
    constexpr int64_t TILE = tile_of<T>();
    if (n <= TILE / 2) {
        if (!tmp) {
            *bytes = 0;
            return cudaSuccess;
        }
        scan_short_rows<T><<<(unsigned)((rows + ROW_WARPS - 1) / ROW_WARPS), 32 * ROW_WARPS, 0, s>>>(in, out, rows, n,
                                                                                                        op);
        return cudaGetLastError();
    }
    // Windows of 8 or 16 MiB of tiles (every tile is TILE * sizeof(T) = 16 KiB).
    const int64_t mib_tiles = ((int64_t)1 << 20) / (TILE * (int64_t)sizeof(T));
    const bool one_row_only = variant == NDP_SCAN_WINDOWS_8M || variant == NDP_SCAN_WINDOWS_16M;
    switch (rows == 1 || !one_row_only ? variant : NDP_SCAN_ONE_PASS) {
    case NDP_SCAN_ONE_PASS_512: return scan_one_pass<T, 2 * THREADS>(in, out, rows, n, op, tmp, bytes, s);
    case NDP_SCAN_ONE_PASS_8: return scan_one_pass<T, THREADS, 8>(in, out, rows, n, op, tmp, bytes, s);
    case NDP_SCAN_ONE_PASS_PACKED:
        if constexpr (sizeof(T) == 4) return scan_one_pass<T, THREADS, 1, true>(in, out, rows, n, op, tmp, bytes, s);
        else return scan_one_pass<T, THREADS>(in, out, rows, n, op, tmp, bytes, s);
    case NDP_SCAN_WINDOWS_8M: return scan_windows<T>(in, out, n, 8 * mib_tiles, op, tmp, bytes, s);
    case NDP_SCAN_WINDOWS_16M: return scan_windows<T>(in, out, n, 16 * mib_tiles, op, tmp, bytes, s);
    case NDP_SCAN_AGG:
    case NDP_SCAN_AGG_SPIN:
    case NDP_SCAN_AGG_4K:
    case NDP_SCAN_AGG_NO_TICKET:
    case NDP_SCAN_AGG_256: return scan_agg_variant<T>(variant, in, out, rows, n, op, tmp, bytes, s);
    case NDP_SCAN_EXACT:
    case NDP_SCAN_EXACT_LIMBS:
    case NDP_SCAN_EXACT_SPIN:
    case NDP_SCAN_EXACT_ATOMICS:
    case NDP_SCAN_EXACT_4K:
    case NDP_SCAN_EXACT_NODELAY:
    case NDP_SCAN_EXACT_WS:
    case NDP_SCAN_EXACT_WS_8W:
        // float32 sums (and nan sums) carry exact sums between tiles;
        // everything else is agg.
        if constexpr (std::is_same<T, float>::value) {
            constexpr int BT = ND_SCAN_EXACT_THREADS, ITEMS = ND_SCAN_EXACT_ITEMS;
            if (!op.prod) switch (variant) {
                // CUB's sm_90 float tuning: 128 x 24, 1140 ns before the
                // first poll, 688 ns between polls.
                case NDP_SCAN_EXACT: return scan_exact_launch<BT, ITEMS, 8, 688, true, true, 1140>(in, out, rows, n, op, tmp, bytes, s);
                case NDP_SCAN_EXACT_NODELAY:
                    return scan_exact_launch<BT, ITEMS, 8, 128, true, true, 0>(in, out, rows, n, op, tmp, bytes, s);
                case NDP_SCAN_EXACT_SPIN: return scan_exact_launch<BT, ITEMS, 8, 0, true, true, 0>(in, out, rows, n, op, tmp, bytes, s);
                case NDP_SCAN_EXACT_ATOMICS:
                    return scan_exact_launch<BT, ITEMS, 8, 688, true, false, 1140>(in, out, rows, n, op, tmp, bytes, s);
                case NDP_SCAN_EXACT_4K:
                    return scan_exact_launch<BT, ND_SCAN_EXACT_4K_ITEMS, 6, 688, true, true, 1140>(in, out, rows, n, op, tmp, bytes, s);
                case NDP_SCAN_EXACT_WS:
                    return scan_ws_launch<ND_SCAN_WS_WARPS, ND_SCAN_WS_ITEMS, 6, 64>(in, out, rows, n, op, tmp, bytes, s,
                                                                                      by_default);
                case NDP_SCAN_EXACT_WS_8W:
                    return scan_ws_launch<ND_SCAN_WS_8W_WARPS, ND_SCAN_WS_8W_ITEMS, 6, 64>(in, out, rows, n, op, tmp, bytes, s);
                default: return scan_exact_launch<BT, ITEMS, 8, 688, false, false, 1140>(in, out, rows, n, op, tmp, bytes, s);
                }
        }
        return scan_agg_variant<T>(NDP_SCAN_AGG, in, out, rows, n, op, tmp, bytes, s);
    default: return scan_one_pass<T, THREADS>(in, out, rows, n, op, tmp, bytes, s);
    }
}

template <typename H, bool BF>
cudaError_t scan_half(int op_kind, const void *in, void *out, int64_t rows, int64_t n, void *tmp, size_t *bytes,
                      cudaStream_t s) {
    if (!tmp) {
        *bytes = 0;
        return cudaSuccess;
    }
    scan_half_rows<H, BF><<<(unsigned)((rows + 127) / 128), 128, 0, s>>>(
        static_cast<const H *>(in), static_cast<H *>(out), rows, n,
        op_kind == ND_SCAN_PROD || op_kind == ND_SCAN_NANPROD, op_kind == ND_SCAN_NANSUM || op_kind == ND_SCAN_NANPROD);
    return cudaGetLastError();
}

} // namespace

// ND_SCAN_VARIANT names ndp_scan's kernel (a row of ND_SCAN_VARIANTS; nd_init
// refuses other values), so that a kernel can be tried through all of nd
// without rebuilding the plugin; unset, empty or "default": kDefaultScan,
// or kShortRowScan for rows of fewer than kWsMinTiles of its tiles.
static int default_scan(int64_t n) {
    static const int chosen = [] {
        static const char *const names[] = ND_SCAN_VARIANT_NAMES;
        const char *v = getenv("ND_SCAN_VARIANT");
        for (int i = 1; v && i < NDP_SCAN_N_VARIANTS; i++)
            if (strcmp(v, names[i]) == 0) return i;
        return (int)NDP_SCAN_DEFAULT;
    }();
    if (chosen != NDP_SCAN_DEFAULT) return chosen;
    return n >= kWsMinTiles * nd_scan_exact_tile(kDefaultScan) ? kDefaultScan : kShortRowScan;
}

NDP_API int ndp_abi(void) { return NDP_ABI; }

NDP_API int ndp_scan_variant(int variant, int dtype, int op, const void *in, void *out, int64_t rows, int64_t n,
                             void *tmp, size_t *tmp_bytes, cudaStream_t stream) {
    if (rows * n == 0) {
        *tmp_bytes = tmp ? *tmp_bytes : 0;
        return cudaSuccess;
    }
    const bool by_default = variant == NDP_SCAN_DEFAULT;
    if (by_default) variant = default_scan(n);
    switch (dtype) {
    case ND_FLOAT32: return scan_typed<float>(variant, op, in, out, rows, n, tmp, tmp_bytes, stream, by_default);
    case ND_FLOAT64: return scan_typed<double>(variant, op, in, out, rows, n, tmp, tmp_bytes, stream);
    // Integers as unsigned bits: two's complement wrapping.
    case ND_INT64:
    case ND_UINT64: return scan_typed<unsigned long long>(variant, op, in, out, rows, n, tmp, tmp_bytes, stream);
    case ND_COMPLEX64: return scan_typed<Cx<float>>(variant, op, in, out, rows, n, tmp, tmp_bytes, stream);
    case ND_COMPLEX128: return scan_typed<Cx<double>>(variant, op, in, out, rows, n, tmp, tmp_bytes, stream);
    case ND_FLOAT16: return scan_half<__half, false>(op, in, out, rows, n, tmp, tmp_bytes, stream);
    case ND_BFLOAT16: return scan_half<__nv_bfloat16, true>(op, in, out, rows, n, tmp, tmp_bytes, stream);
    }
    return cudaErrorInvalidValue;
}

NDP_API int ndp_scan(int dtype, int op, const void *in, void *out, int64_t rows, int64_t n, void *tmp,
                     size_t *tmp_bytes, cudaStream_t stream) {
    return ndp_scan_variant(NDP_SCAN_DEFAULT, dtype, op, in, out, rows, n, tmp, tmp_bytes, stream);
}
