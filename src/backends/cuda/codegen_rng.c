/* The Philox calls of a kernel's random draws (src/common/philox.h: the
 * draw at index i of a k-word draw reads words (i % W)*k .. of call i / W,
 * W = 4/k). A thread that evaluates a group of G points along one axis
 * (axis `gax`, the group's first point at a multiple of G on it) computes
 * each call its points share once and hands every point its words:
 *
 *   FIXED    the index moves by s per point along gax and every group's
 *            first index has the same residue r mod W (the index map's
 *            other strides are multiples of W): which call and word each
 *            point reads is known here, e.g. a fresh float32 draw reads
 *            words x, y, z, w of one call for its four points;
 *   RUNTIME  unit stride but a residue that varies between groups (rows
 *            whose length W does not divide): the calls c = x0 / W and the
 *            next ones, the spill-over call only when the residue needs it,
 *            words picked by the residue;
 *   EACH     anything else (an index that is not an affine map, strides of
 *            W and more): one call per point, word picked by its index.
 *
 * All three give the same bits: they differ only in how many calls the
 * thread computes.
 *
 * The pair form of integers (uint16 draws) is the k = 1 mapping at the
 * pair index i / 2: W = 8 points a call, point i reading word (i % 8) / 2
 * and taking the first (i even) or second (i odd) of its pair's values;
 * a point's second "word" expression is that parity. */
#include <inttypes.h>

#include "backends/cuda/cuda_internal.h"
#include "common/philox.h"

typedef enum { RNG_EACH, RNG_FIXED, RNG_RUNTIME } rng_mode;

static int is_draw(const nd_ir_inst *in) {
    return in->op == ND_IR_RAND_UNIFORM || in->op == ND_IR_RAND_NORMAL || in->op == ND_IR_RAND_INTEGER;
}

/* Words per draw (k) of instruction j: float64 (and non-float) results draw
 * in float64; integers take one word (uint32) or two (uint64), or one per
 * pair of points (uint16). */
static int draw_words(const nd_kernel *k, int j) {
    nd_dtype t = (nd_dtype)k->insts[j].dtype;
    if (k->insts[j].op == ND_IR_RAND_INTEGER) return nd_philox_int_words(t == ND_UINT64);
    int wide = t == ND_FLOAT64 || !nd_dtype_is_float(t);
    return nd_philox_words(wide, k->insts[j].op == ND_IR_RAND_NORMAL);
}

static int is_pair_draw(const nd_kernel *k, int j) {
    return k->insts[j].op == ND_IR_RAND_INTEGER && k->insts[j].dtype == ND_UINT16;
}

/* Points one call serves (W): 4 / k, or 8 for the pair form. */
static int draw_share(const nd_kernel *k, int j) { return is_pair_draw(k, j) ? 8 : 4 / draw_words(k, j); }

static int64_t pmod(int64_t a, int64_t m) {
    int64_t r = a % m;
    return r < 0 ? r + m : r;
}

/* How draw j's points find their calls in a group of G along gax; FIXED
 * sets the residue r of the group's first index and the stride s. */
static rng_mode draw_mode(const nd_kernel *k, int j, int G, int gax, int64_t *r, int64_t *s) {
    const nd_ir_inst *x = &k->insts[k->insts[j].a];
    if (G <= 1 || x->op != ND_IR_INDEX) return RNG_EACH;
    const nd_ir_access *m = &k->indices[x->a];
    int64_t W = draw_share(k, j);
    *s = m->strides[gax];
    int fixed = pmod(*s * G, W) == 0;
    for (int d = 0; fixed && d < k->ndim; d++)
        if (d != gax && k->shape[d] > 1 && pmod(m->strides[d], W) != 0) fixed = 0;
    if (fixed) {
        *r = pmod(m->offset, W);
        return RNG_FIXED;
    }
    return *s == 1 ? RNG_RUNTIME : RNG_EACH;
}

/* floor((r + s*e) / W) for e = 0 and e = G-1: the calls a FIXED group spans
 * (the position is monotonic in e). */
static void fixed_span(int64_t r, int64_t s, int G, int64_t W, int64_t *lo, int64_t *hi) {
    int64_t a = r, b = r + s * (G - 1);
    if (a > b) {
        int64_t t = a;
        a = b;
        b = t;
    }
    *lo = (a - pmod(a, W)) / W;
    *hi = (b - pmod(b, W)) / W;
}

int nd_cuda_rng_shares(const nd_kernel *k, int G, int gax) {
    if (G <= 1 || gax < 0 || gax >= k->ndim) return 0;
    for (int j = 0; j < k->n_insts; j++) {
        if (!is_draw(&k->insts[j])) continue;
        int64_t r = 0, s = 0, W = draw_share(k, j), lo, hi;
        rng_mode m = draw_mode(k, j, G, gax, &r, &s);
        if (m == RNG_RUNTIME && W > 1) return 1;
        if (m == RNG_FIXED) {
            fixed_span(r, s, G, W, &lo, &hi);
            if (hi - lo + 1 < G) return 1;
        }
    }
    return 0;
}

/* Round keys. Philox round r xors the key plus r times a constant into the
 * counter; computed in the kernel that is two adds per round for every
 * call, a third of a call's instructions besides its multiplies and xors,
 * and Monte Carlo kernels are bound by instruction issue. The host computes
 * the ten (k0, k1) pairs of each seed a kernel draws with once per launch
 * (nd_cuda_fill_round_keys) into argument words after the others, where
 * the xors read them straight from the constant bank. */
int nd_cuda_seed_params(const nd_kernel *k, int32_t *params) {
    int n = 0;
    for (int j = 0; j < k->n_insts; j++) {
        if (!is_draw(&k->insts[j])) continue;
        int32_t b = k->insts[j].b, seen = 0;
        for (int i = 0; i < n && !seen; i++) seen = params[i] == b;
        if (seen) continue;
        if (n == ND_CUDA_MAX_SEEDS) return 0; /* more seeds than words set aside: keys computed in the kernel */
        params[n++] = b;
    }
    return n;
}

int nd_cuda_round_key_word(const nd_kernel *k) { return k->n_slots + k->n_params + (k->has_reduce ? 1 : 0); }

/* The first round's stream half. A call's counter is (index, stream), and
 * round 0 multiplies the stream's low word (M1 * c2, high and low) and
 * xors it, the stream's high word and the round-0 key into the result:
 * work that is the same for every call of a draw in a launch. The host
 * does it once per (seed, stream) pair, two words: (umulhi(M1, c2) ^ k0)
 * | (M1 * c2) << 32, and c3 ^ k1; the kernel's round 0 is then its index's
 * product and three xors (ndk_philox_r). The generate + dot's kernel on an
 * H200: 319 -> 306 us, the hand-written kernel (bench/dot_variants.cu, the
 * stream a literal 0 and 1) 302 us (bench/results/2026-12-01-session22-dot.md). */
static int seed_index(const nd_kernel *k, int j) {
    int32_t seeds[ND_CUDA_MAX_SEEDS];
    int n = nd_cuda_seed_params(k, seeds);
    for (int i = 0; i < n; i++)
        if (seeds[i] == k->insts[j].b) return i;
    return -1;
}

int nd_cuda_stream_params(const nd_kernel *k, int32_t *seed_of, int32_t *stream_of) {
    int n = 0;
    for (int j = 0; j < k->n_insts; j++) {
        if (!is_draw(&k->insts[j])) continue;
        int32_t s = seed_index(k, j), c = k->insts[j].c, seen = 0;
        if (s < 0) return 0; /* keys computed in the kernel: so is round 0 */
        for (int i = 0; i < n && !seen; i++) seen = seed_of[i] == s && stream_of[i] == c;
        if (seen) continue;
        if (n == ND_CUDA_MAX_STREAMS) return 0;
        seed_of[n] = s;
        stream_of[n++] = c;
    }
    return n;
}

int nd_cuda_round0_word(const nd_kernel *k) {
    int32_t seeds[ND_CUDA_MAX_SEEDS];
    return nd_cuda_round_key_word(k) + ND_PHILOX_ROUNDS * nd_cuda_seed_params(k, seeds);
}

int nd_cuda_rng_words_end(const nd_kernel *k) {
    int32_t seed_of[ND_CUDA_MAX_STREAMS], stream_of[ND_CUDA_MAX_STREAMS];
    return nd_cuda_round0_word(k) + 2 * nd_cuda_stream_params(k, seed_of, stream_of);
}

void nd_cuda_fill_round_keys(const nd_cuda_kinfo *info, uint64_t *words) {
    for (int i = 0; i < info->n_seeds; i++) {
        uint64_t seed = words[info->seed_word[i]];
        uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
        for (int r = 0; r < ND_PHILOX_ROUNDS; r++) {
            words[info->key_word + ND_PHILOX_ROUNDS * i + r] = (uint64_t)k1 << 32 | k0;
            k0 += ND_PHILOX_W0;
            k1 += ND_PHILOX_W1;
        }
    }
    for (int i = 0; i < info->n_streams; i++) {
        const uint64_t stream = words[info->stream_word[i]];
        const uint64_t key = words[info->key_word + ND_PHILOX_ROUNDS * info->stream_seed[i]]; /* round 0's */
        const uint64_t p = (uint64_t)ND_PHILOX_M1 * (uint32_t)stream;
        const uint32_t x = (uint32_t)(p >> 32) ^ (uint32_t)key, y = (uint32_t)p;
        words[info->round0_word + 2 * i] = (uint64_t)y << 32 | x;
        words[info->round0_word + 2 * i + 1] = (uint32_t)(stream >> 32) ^ (uint32_t)(key >> 32);
    }
}

/* Whether a draw flagged ND_IR_ONE_HIGH_WORD calls (seed, stream) pair q
 * (nd_cuda_stream_params' lists). */
static int pair_one_high(const nd_kernel *k, const int32_t *seed_of, const int32_t *stream_of, int q) {
    for (int j = 0; j < k->n_insts; j++)
        if (is_draw(&k->insts[j]) && (k->insts[j].flags & ND_IR_ONE_HIGH_WORD) && k->insts[j].c == stream_of[q] &&
            seed_index(k, j) == seed_of[q])
            return 1;
    return 0;
}

/* The call of draw j up to its index and stream arguments: its round keys
 * and first round's words (ndk_philox_r, then the stream argument is the
 * position of the pair's first word and of the c3 ^ k1 word it takes),
 * its round keys (ndk_philox_k), or the seed when the kernel has too many
 * seeds for them. A draw flagged ND_IR_ONE_HIGH_WORD takes the c3 ^ k1
 * word of its seed's first such pair: one value for all of them, so the
 * compiler computes its second round's product once for every call of
 * the seed at an index. The generate + dot's two calls on an H200: 308.6
 * -> 300.6 us, the hand-written kernel with literal streams 301.7 us
 * (bench/dot_variants.cu, "one c3 ^ k1 word"). */
static void seed_args(const nd_kernel *k, int j, char *out, size_t cap, char *stream, size_t stream_cap) {
    int32_t seed_of[ND_CUDA_MAX_STREAMS], stream_of[ND_CUDA_MAX_STREAMS];
    const int np = nd_cuda_stream_params(k, seed_of, stream_of);
    const int s = seed_index(k, j), key = nd_cuda_round_key_word(k) + ND_PHILOX_ROUNDS * s;
    snprintf(stream, stream_cap, "A.w[%d]", k->n_slots + k->insts[j].c);
    for (int i = 0; i < np; i++)
        if (seed_of[i] == s && stream_of[i] == k->insts[j].c) {
            int z = i;
            if (k->insts[j].flags & ND_IR_ONE_HIGH_WORD)
                for (z = 0; z < i; z++)
                    if (seed_of[z] == s && pair_one_high(k, seed_of, stream_of, z)) break;
            snprintf(out, cap, "ndk_philox_r(A, %d", key);
            snprintf(stream, stream_cap, "%d, %d", nd_cuda_round0_word(k) + 2 * i, nd_cuda_round0_word(k) + 2 * z + 1);
            return;
        }
    if (s >= 0) snprintf(out, cap, "ndk_philox_k(A, %d", key);
    else snprintf(out, cap, "ndk_philox(A.w[%d]", k->n_slots + k->insts[j].b);
}

int nd_cuda_rng_call_share(const nd_kernel *k) {
    int share = 1;
    for (int j = 0; j < k->n_insts; j++) {
        if (!is_draw(&k->insts[j])) continue;
        int w = draw_share(k, j);
        if (w > share) share = w;
    }
    return share;
}

static const char *const lane_name[4] = {"x", "y", "z", "w"};

void nd_cuda_emit_draw_words(nd_strbuf *sb, const nd_kernel *k, int j, int G, int gax,
                             char (*idx)[32], char (*words)[4][ND_CUDA_WORD_EXPR]) {
    const nd_ir_inst *in = &k->insts[j];
    /* pair: one word per two points (half a word a point), plus the parity */
    const int pair = is_pair_draw(k, j), kw = draw_words(k, j), W = draw_share(k, j);
    const int sh = W == 8 ? 3 : W == 4 ? 2 : W == 2 ? 1 : 0;
    char seed[48], stream[32];
    seed_args(k, j, seed, sizeof seed, stream, sizeof stream);
    /* Indices below 2^32 (the usual case) go through unsigned: then the
     * compiler knows each call's counter has a zero high word and drops
     * its 64-bit arithmetic and a xor of the first round. The generate +
     * dot's kernel: 346 -> 330 us on an H100. */
    const nd_ir_inst *x = &k->insts[in->a];
    int small = x->op == ND_IR_INDEX &&
                nd_cuda_access_extent(&k->indices[x->a], k->ndim, k->shape) <= (int64_t)UINT32_MAX;
    const char *to_u64 = small ? "(unsigned long long)(unsigned)" : "(unsigned long long)";
    int64_t r = 0, s = 0;
    rng_mode mode = draw_mode(k, j, G, gax, &r, &s);
    if (mode == RNG_FIXED) {
        int64_t lo, hi;
        fixed_span(r, s, G, W, &lo, &hi);
        nd_strbuf_printf(sb, "  const unsigned long long c%d = (%s%s - %" PRId64 "ull) >> %d;\n", j, to_u64,
                          idx[0], r, sh);
        for (int64_t t = lo; t <= hi; t++)
            nd_strbuf_printf(sb, "  const uint4 q%d_%d = %s, c%d %s %" PRId64 "ull, %s);\n", j,
                              (int)(t - lo), seed, j, t < 0 ? "-" : "+", t < 0 ? -t : t, stream);
        for (int e = 0; e < G; e++) {
            int64_t pos = r + s * e, w = pmod(pos, W), t = (pos - w) / W;
            if (pair) {
                snprintf(words[e][0], sizeof words[e][0], "q%d_%d.%s", j, (int)(t - lo), lane_name[w >> 1]);
                snprintf(words[e][1], sizeof words[e][1], "%du", (int)(w & 1));
                continue;
            }
            for (int i = 0; i < kw; i++)
                snprintf(words[e][i], sizeof words[e][i], "q%d_%d.%s", j, (int)(t - lo),
                         lane_name[w * kw + i]);
        }
        return;
    }
    if (mode == RNG_RUNTIME) {
        /* points x0 .. x0+G-1: calls c .. c + (r+G-1)/W, r = x0 % W */
        int T = (W - 1 + G - 1) / W + 1;
        nd_strbuf_printf(sb,
                          "  const unsigned long long y%d = %s%s;\n"
                          "  const unsigned r%d = (unsigned)y%d & %du;\n"
                          "  const unsigned long long c%d = y%d >> %d;\n",
                          j, to_u64, idx[0], j, j, W - 1, j, j, sh);
        for (int t = 0; t < T; t++) {
            if (t * W <= G - 1)
                nd_strbuf_printf(sb, "  const uint4 q%d_%d = %s, c%d + %dull, %s);\n", j, t, seed, j,
                                  t, stream);
            else /* needed only when the residue pushes the last points over */
                nd_strbuf_printf(sb,
                                  "  uint4 q%d_%d = q%d_0;\n"
                                  "  if (r%d >= %du) q%d_%d = %s, c%d + %dull, %s);\n",
                                  j, t, j, j, t * W - (G - 1), j, t, seed, j, t, stream);
        }
        for (int e = 0; e < G; e++) {
            int t0 = e / W;
            if (t0 + 1 < T)
                nd_strbuf_printf(sb, "  const uint4 p%d_%d = r%d + %du >= %du ? q%d_%d : q%d_%d;\n", j, e, j, e,
                                  (t0 + 1) * W, j, t0 + 1, j, t0);
            else
                nd_strbuf_printf(sb, "  const uint4 p%d_%d = q%d_%d;\n", j, e, j, t0);
            if (pair) {
                snprintf(words[e][0], sizeof words[e][0], "ndk_word(p%d_%d, ((r%d + %du) & 7u) >> 1)", j, e, j, e);
                snprintf(words[e][1], sizeof words[e][1], "((r%d + %du) & 1u)", j, e);
                continue;
            }
            for (int i = 0; i < kw; i++)
                snprintf(words[e][i], sizeof words[e][i], "ndk_word(p%d_%d, ((r%d + %du) & %du) * %du + %du)", j,
                         e, j, e, W - 1, kw, i);
        }
        return;
    }
    for (int e = 0; e < G; e++) {
        nd_strbuf_printf(sb,
                          "  const unsigned long long y%d_%d = %s%s;\n"
                          "  const uint4 q%d_%d = %s, y%d_%d >> %d, %s);\n",
                          j, e, to_u64, idx[e], j, e, seed, j, e, sh, stream);
        if (pair) {
            snprintf(words[e][0], sizeof words[e][0], "ndk_word(q%d_%d, ((unsigned)y%d_%d & 7u) >> 1)", j, e, j, e);
            snprintf(words[e][1], sizeof words[e][1], "((unsigned)y%d_%d & 1u)", j, e);
            continue;
        }
        for (int i = 0; i < kw; i++) {
            if (W == 1)
                snprintf(words[e][i], sizeof words[e][i], "q%d_%d.%s", j, e, lane_name[i]);
            else
                snprintf(words[e][i], sizeof words[e][i], "ndk_word(q%d_%d, ((unsigned)y%d_%d & %du) * %du + %du)",
                         j, e, j, e, W - 1, kw, i);
        }
    }
}
