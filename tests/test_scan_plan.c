/* The CUDA aggregate-tree scan's combine order (common/scan_plan.h, the
 * kernel scan_agg in backends/cuda/prims/scan.cu),
 * replayed on the host: no GPU needed. A machine of R resident blocks takes
 * tiles in ticket order, as the kernels' counter does, and advances a
 * random tile's random warp one step at a time: warp j folds level j's
 * range (nd_scan_level_range) only once every entry of it is published,
 * and the tiles that nd_scan_publishes names publish the next level. A
 * block works on one tile. The tests check that
 *   - it never deadlocks, for 1 resident block and more, and every entry a
 *     tile reads is published exactly once, by a tile with a smaller
 *     ticket;
 *   - the outputs are the same bits for every schedule and residency, and
 *     the same as a reference that computes the tree's formula directly
 *     from the digits of the tile index (no plan functions);
 *   - they are exact for integer-valued floats (the in-order sums), keep
 *     -0.0 (no identity is ever added), and propagate NaN;
 *   - several rows keep apart, and partial last tiles are right.
 * The in-tile scan here is in order: scan_agg's is CUB's BlockScan, a tree
 * of its own, which this does not replay (bench/gpu_speed.cu checks it on
 * the GPU). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/scan_plan.h"

typedef struct {
    float v;
    int ok; /* 0: nothing (joining it returns the other side untouched) */
} part;

static part join(part a, part b) {
    if (!a.ok) return b;
    if (!b.ok) return a;
    return (part){a.v + b.v, 1};
}

/* A warp's fold of count entries (scan.cu agg_fold, warp_tree): lane l
 * joins entries l, l + 32, ... in turn; then lane l joins lane l + off for
 * off = 1, 2, ..., 16 where l is a multiple of 2 off. */
static part fold(const float *e, int64_t count) {
    part lane[32];
    for (int l = 0; l < 32; l++) {
        lane[l] = (part){0, 0};
        for (int64_t k = l; k < count; k += 32) lane[l] = join(lane[l], (part){e[k], 1});
    }
    for (int off = 1; off < 32; off <<= 1)
        for (int l = 0; l + off < 32; l += 2 * off) lane[l] = join(lane[l], lane[l + off]);
    return lane[0];
}

static uint64_t rng_next(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* A scan problem: rows x n floats in tiles of `tile` elements. */
typedef struct {
    int64_t rows, n, tile, tiles_per_row;
    const float *x;
} problem;

/* The tile's in-order scan from its first element; returns its total. */
static float tile_scan(const problem *pb, int64_t row, int64_t t, float *y) {
    const int64_t b = t * pb->tile, e = b + pb->tile < pb->n ? b + pb->tile : pb->n;
    float acc = 0;
    for (int64_t i = b; i < e; i++) {
        acc = i == b ? pb->x[row * pb->n + i] : acc + pb->x[row * pb->n + i];
        if (y) y[row * pb->n + i] = acc;
    }
    return acc;
}

/* ------------------------------------------------------------ the machine */

typedef struct {
    float *val;
    int64_t *by; /* the ticket that published the entry; -1: not yet */
} level;

typedef struct {
    int64_t ticket, row, t;
    float total;
    int warp_done[ND_SCAN_LEVELS];
    int chain_ready[ND_SCAN_LEVELS]; /* level j's entry handed to warp j */
    float chain[ND_SCAN_LEVELS];
    part p[ND_SCAN_LEVELS];
} tile_state;

/* Runs the problem on R resident blocks with a schedule drawn from seed;
 * writes y. Fails the test on a deadlock or a bad publication. A block
 * works on one tile at a time. */
static void run_machine(const problem *pb, int R, uint64_t seed, float *y) {
    const int64_t tiles = pb->rows * pb->tiles_per_row;
    level lv[ND_SCAN_LEVELS];
    int64_t size[ND_SCAN_LEVELS];
    for (int j = 0; j < ND_SCAN_LEVELS; j++) {
        size[j] = nd_scan_level_size(pb->tiles_per_row, j);
        lv[j].val = calloc((size_t)(pb->rows * size[j] + 1), sizeof(float));
        lv[j].by = malloc((size_t)(pb->rows * size[j] + 1) * sizeof(int64_t));
        for (int64_t e = 0; e < pb->rows * size[j]; e++) lv[j].by[e] = -1;
    }
    tile_state *res = calloc((size_t)R, sizeof(tile_state));
    int64_t next = 0, done = 0;
    int live = 0;
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    float *ebuf = malloc(sizeof(float) * (size_t)(tiles + 64));
    /* start a block's next tile (a new ticket), read and scan it, publish
     * the aggregate */
    #define START(ts)                                                                                         \
        do {                                                                                                  \
            memset((ts), 0, sizeof *(ts));                                                                    \
            (ts)->ticket = next++;                                                                            \
            (ts)->row = (ts)->ticket / pb->tiles_per_row;                                                     \
            (ts)->t = (ts)->ticket % pb->tiles_per_row;                                                       \
            (ts)->total = tile_scan(pb, (ts)->row, (ts)->t, NULL);                                            \
            if ((ts)->t + 1 < pb->tiles_per_row) {                                                            \
                int64_t at_ = (ts)->row * size[0] + (ts)->t;                                                  \
                cr_assert_eq(lv[0].by[at_], -1, "tile %lld published twice", (long long)(ts)->t);             \
                lv[0].val[at_] = (ts)->total;                                                                 \
                lv[0].by[at_] = (ts)->ticket;                                                                 \
            }                                                                                                 \
            live++;                                                                                           \
        } while (0)
    for (int r = 0; r < R; r++) {
        if (next < tiles) START(&res[r]);
        else res[r].ticket = -1;
    }
    int64_t stuck = 0;
    while (done < tiles) {
        const int r = (int)(rng_next(&s) % (uint64_t)R);
        tile_state *ts = &res[r];
        if (ts->ticket < 0) continue;
        const int j = (int)(rng_next(&s) % ND_SCAN_LEVELS);
        int progressed = 0;
        if (!ts->warp_done[j]) {
            int64_t first, count;
            nd_scan_level_range(ts->t, j, &first, &count);
            const int64_t base = ts->row * size[j];
            int ready = 1;
            for (int64_t k = 0; k < count && ready; k++) ready = lv[j].by[base + first + k] >= 0;
            const int more = ts->t + 1 < pb->tiles_per_row;
            const int pub = more && nd_scan_publishes(ts->t, j);
            if (ready && pub && j > 0) ready = ts->chain_ready[j];
            if (ready) {
                for (int64_t k = 0; k < count; k++) {
                    cr_assert_lt(lv[j].by[base + first + k], ts->ticket,
                                 "tile %lld read level %d entry %lld published by a later ticket", (long long)ts->t,
                                 j, (long long)(first + k));
                    ebuf[k] = lv[j].val[base + first + k];
                }
                ts->p[j] = fold(ebuf, count);
                if (pub) {
                    const float below = j == 0 ? ts->total : ts->chain[j];
                    const float up = join(ts->p[j], (part){below, 1}).v;
                    const int64_t at = ts->row * size[j + 1] + (ts->t >> (ND_SCAN_FAN_LOG2 * (j + 1)));
                    cr_assert_eq(lv[j + 1].by[at], -1, "level %d entry published twice", j + 1);
                    lv[j + 1].val[at] = up;
                    lv[j + 1].by[at] = ts->ticket;
                    ts->chain[j + 1] = up;
                    ts->chain_ready[j + 1] = 1;
                }
                ts->warp_done[j] = 1;
                progressed = 1;
            }
        }
        int all = 1;
        for (int k = 0; k < ND_SCAN_LEVELS; k++) all = all && ts->warp_done[k];
        if (all) {
            part prefix = ts->p[ND_SCAN_LEVELS - 1];
            for (int k = ND_SCAN_LEVELS - 2; k >= 0; k--) prefix = join(prefix, ts->p[k]);
            tile_scan(pb, ts->row, ts->t, y);
            const int64_t b = ts->t * pb->tile, e = b + pb->tile < pb->n ? b + pb->tile : pb->n;
            if (prefix.ok)
                for (int64_t i = b; i < e; i++) y[ts->row * pb->n + i] = prefix.v + y[ts->row * pb->n + i];
            done++;
            live--;
            if (next < tiles) START(ts);
            else ts->ticket = -1;
            progressed = 1;
        }
        stuck = progressed ? 0 : stuck + 1;
        cr_assert_lt(stuck, (int64_t)100000 * R, "deadlock: %lld of %lld tiles done, %d resident", (long long)done,
                     (long long)tiles, live);
    }
    #undef START
    free(ebuf);
    free(res);
    for (int j = 0; j < ND_SCAN_LEVELS; j++) {
        free(lv[j].val);
        free(lv[j].by);
    }
}

/* ---------------------------------------------------------- the reference */

/* The tree's formula from the digits of t, with no plan function: level
 * j + 1's entry e is the fold of level j's entries [32e, 32e + 31) joined
 * with entry 32e + 31; tile t's prefix joins, from the top, the folds of
 * the entries before its ancestor within its ancestor's group (all of
 * them at the top level). */
static void run_reference(const problem *pb, float *y) {
    const int64_t T = pb->tiles_per_row;
    float *agg[ND_SCAN_LEVELS];
    int64_t cnt[ND_SCAN_LEVELS];
    for (int64_t row = 0; row < pb->rows; row++) {
        cnt[0] = T;
        agg[0] = malloc(sizeof(float) * (size_t)T);
        for (int64_t t = 0; t < T; t++) agg[0][t] = tile_scan(pb, row, t, y);
        for (int j = 1; j < ND_SCAN_LEVELS; j++) {
            cnt[j] = cnt[j - 1] / 32; /* only complete groups are ever read */
            agg[j] = malloc(sizeof(float) * (size_t)(cnt[j] + 1));
            for (int64_t e = 0; e < cnt[j]; e++)
                agg[j][e] = join(fold(agg[j - 1] + 32 * e, 31), (part){agg[j - 1][32 * e + 31], 1}).v;
        }
        for (int64_t t = 0; t < T; t++) {
            part prefix = {0, 0};
            for (int j = ND_SCAN_LEVELS - 1; j >= 0; j--) {
                int64_t a = t;
                for (int k = 0; k < j; k++) a /= 32;
                const int64_t from = j == ND_SCAN_LEVELS - 1 ? 0 : a - a % 32;
                prefix = join(prefix, fold(agg[j] + from, a - from));
            }
            const int64_t b = t * pb->tile, e = b + pb->tile < pb->n ? b + pb->tile : pb->n;
            if (prefix.ok)
                for (int64_t i = b; i < e; i++) y[row * pb->n + i] = prefix.v + y[row * pb->n + i];
        }
        for (int j = 0; j < ND_SCAN_LEVELS; j++) free(agg[j]);
    }
}

/* ------------------------------------------------------------------ tests */

typedef enum { RANDOM, ZERO_ONE, NEG_ZERO } fill_kind;

static float *make_input(int64_t size, fill_kind how, uint64_t seed) {
    float *x = malloc(sizeof(float) * (size_t)(size + 1));
    uint64_t s = seed | 1;
    for (int64_t i = 0; i < size; i++) {
        const uint64_t h = rng_next(&s);
        x[i] = how == RANDOM ? (float)((h >> 40) * (1.0 / 16777216.0)) - 0.25f
             : how == ZERO_ONE ? (float)(h % 8 == 0)
                               : -0.0f;
    }
    return x;
}

static void check_case(int64_t rows, int64_t n, int64_t tile, fill_kind how, int64_t nan_at) {
    float *x = make_input(rows * n, how, (uint64_t)(n * 131 + rows));
    if (nan_at >= 0)
        for (int64_t r = 0; r < rows; r++) x[r * n + nan_at] = NAN;
    const problem pb = {rows, n, tile, (n + tile - 1) / tile, x};
    float *ref = malloc(sizeof(float) * (size_t)(rows * n + 1));
    float *got = malloc(sizeof(float) * (size_t)(rows * n + 1));
    run_reference(&pb, ref);
    /* 1, 7 and 200 blocks resident, two schedules each. */
    static const int residency[] = {1, 7, 200};
    for (int k = 0; k < 6; k++) {
        const int R = residency[k % 3];
        memset(got, 0xff, sizeof(float) * (size_t)(rows * n));
        run_machine(&pb, R, (uint64_t)(k + 1) * 977, got);
        for (int64_t i = 0; i < rows * n; i++)
            cr_assert(memcmp(&got[i], &ref[i], sizeof(float)) == 0 || (got[i] != got[i] && ref[i] != ref[i]),
                      "%lld x %lld (tile %lld, %d resident, schedule %d): element %lld is %.9g, the formula's %.9g",
                      (long long)rows, (long long)n, (long long)tile, R, k, (long long)i, got[i], ref[i]);
    }
    /* In order on the host: the same bits where every sum is exact. */
    for (int64_t r = 0; r < rows && how != RANDOM; r++) {
        float acc = 0;
        for (int64_t i = 0; i < n; i++) {
            acc = i == 0 ? x[r * n + i] : acc + x[r * n + i];
            const float g = ref[r * n + i];
            if (nan_at >= 0 && i >= nan_at) {
                cr_assert(g != g, "element %lld after the NaN is %.9g", (long long)i, g);
                continue;
            }
            cr_assert(memcmp(&acc, &g, sizeof(float)) == 0, "%lld x %lld: element %lld is %.9g, in order %.9g",
                      (long long)rows, (long long)n, (long long)i, g, acc);
        }
    }
    free(x);
    free(ref);
    free(got);
}

Test(scan_plan, level_ranges_cover_the_tiles_before) {
    /* The ranges of a tile's levels, scaled to tiles, are [0, t) exactly. */
    for (int64_t t = 0; t < 40000; t += 1 + t / 97) {
        int64_t covered = 0;
        for (int j = ND_SCAN_LEVELS - 1; j >= 0; j--) {
            int64_t first, count;
            nd_scan_level_range(t, j, &first, &count);
            const int64_t unit = (int64_t)1 << (ND_SCAN_FAN_LOG2 * j);
            cr_assert_eq(first * unit, covered, "tile %lld level %d starts at tile %lld, not %lld", (long long)t, j,
                         (long long)(first * unit), (long long)covered);
            covered += count * unit;
            cr_assert(j == ND_SCAN_LEVELS - 1 || count < ND_SCAN_FAN);
        }
        cr_assert_eq(covered, t, "tile %lld: levels cover %lld tiles", (long long)t, (long long)covered);
    }
    cr_assert_eq(nd_scan_level_size(1, 3), 1);
    cr_assert_eq(nd_scan_level_size(32769, 3), 2);
    cr_assert_eq(nd_scan_level_size(32768, 3), 1);
    cr_assert(nd_scan_publishes(31, 0) && nd_scan_publishes(1023, 1) && nd_scan_publishes(32767, 2));
    cr_assert(!nd_scan_publishes(30, 0) && !nd_scan_publishes(1022, 1) && !nd_scan_publishes(32767, 3));
}

Test(scan_plan, random_floats_same_bits_every_schedule) {
    static const int64_t tiles[] = {1, 2, 31, 32, 33, 64, 1023, 1024, 1025, 2049};
    for (size_t k = 0; k < sizeof tiles / sizeof tiles[0]; k++) {
        check_case(1, tiles[k] * 3, 3, RANDOM, -1);
        check_case(1, tiles[k] * 3 - 1, 3, RANDOM, -1); /* a partial last tile */
    }
    check_case(3, 1025 * 2 + 1, 2, RANDOM, -1);
}

Test(scan_plan, level_three_and_many_rows) {
    check_case(1, 32768 + 40, 1, RANDOM, -1); /* level 3 has 2 entries */
    check_case(2, 32 * 1024 + 3, 1, ZERO_ONE, -1);
    check_case(5, 100, 7, RANDOM, -1);
}

Test(scan_plan, exact_sums_negative_zero_and_nan) {
    check_case(1, 3000, 2, ZERO_ONE, -1);
    check_case(2, 2113, 2, NEG_ZERO, -1);
    check_case(1, 2113, 2, ZERO_ONE, 1500);
    check_case(1, 1, 4, NEG_ZERO, -1);
    check_case(1, 1, 4, ZERO_ONE, 0);
}
