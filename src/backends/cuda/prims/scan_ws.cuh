// The warp-specialised exact-carry scan (NDP_SCAN_EXACT_WS*, float32 sums):
// included by scan.cu inside its anonymous namespace, after ScanOp,
// load_word / store_word, kMark, exact_add_bits and exact_word.
//
// Why: `exact` keeps a tile's values in registers while its warp 0 looks
// back, so every block spends part of its life waiting on the L2 instead of
// loading; on one long row that cost 1.44x the copy against 1.18x on short
// rows (docs/internals.md). Here one persistent block an SM streams tiles
// through a ring of STAGES shared-memory buffers and splits the work among
// warps that never wait on each other's latency:
//
// - a load thread takes tiles in order from a counter (tickets: every tile
//   a tile waits for was taken by a running block) and copies each into a
//   free stage with the bulk copy engine (cp.async.bulk, completing on the
//   stage's mbarrier);
// - RW reduce warps sum the stage (each thread ITEMS consecutive values, a
//   Kogge-Stone scan of the thread sums a warp, the warps' totals in order)
//   and publish the tile's total at once (a 64-bit word under a ready mark,
//   as `exact`);
// - one look-back warp keeps its block's running exclusive prefix: tile g
//   after the block's previous tile p of the same row adds the published
//   totals of tiles [p, g) (everything between its two tickets) to it.
//   Nothing waits on another tile's prefix, only on totals, which are
//   published as soon as a tile is read: no chain through the row at all.
//   The sums are exact (common/exact_sum.h): in float64 registers while
//   every add is provably exact (the span check of exact_lookback_f64),
//   else in limbs for the rest of the row; so the prefix, rounded once, is
//   the same value `exact` computes, whichever tiles a block took;
// - RW scan-store warps rescan the stage with the thread sums, add the
//   tile's prefix (fl(prefix + in-tile scan), as `exact`), write the
//   results in place and hand the stage to the bulk copy engine's store.
//
// ITEMS is odd, so a warp's 32 threads reading their ITEMS consecutive
// values from shared memory hit 32 different banks. Partial tiles and
// tiles whose addresses are not 16-byte aligned (bulk copies need that)
// are copied in by the load warp and out by the scan-store warps with
// plain loads and stores instead. sm_90 or later.

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define ND_WS_ARCH 1
#endif

__device__ __forceinline__ uint32_t ws_smem(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

__device__ __forceinline__ void ws_bar_init(unsigned long long *bar, unsigned count) {
#ifdef ND_WS_ARCH
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(ws_smem(bar)), "r"(count) : "memory");
#endif
}
__device__ __forceinline__ void ws_arrive(unsigned long long *bar) {
#ifdef ND_WS_ARCH
    asm volatile("{\n\t.reg .b64 st;\n\tmbarrier.arrive.shared::cta.b64 st, [%0];\n\t}" ::"r"(ws_smem(bar))
                 : "memory");
#endif
}
// Arrives and expects `bytes` more from the bulk copy engine.
__device__ __forceinline__ void ws_arrive_tx(unsigned long long *bar, unsigned bytes) {
#ifdef ND_WS_ARCH
    asm volatile("{\n\t.reg .b64 st;\n\tmbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1;\n\t}" ::"r"(
                     ws_smem(bar)),
                 "r"(bytes)
                 : "memory");
#endif
}
// Waits until the barrier's phase of this parity has completed (a fresh
// barrier counts its phase before the first, parity 1, as completed).
__device__ __forceinline__ void ws_wait(unsigned long long *bar, unsigned parity) {
#ifdef ND_WS_ARCH
    uint32_t done = 0;
    while (!done)
        asm volatile("{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
                     "selp.u32 %0, 1, 0, p;\n\t}"
                     : "=r"(done)
                     : "r"(ws_smem(bar)), "r"(parity)
                     : "memory");
#endif
}
__device__ __forceinline__ void ws_load_bulk(void *dst, const void *src, unsigned bytes, unsigned long long *bar) {
#ifdef ND_WS_ARCH
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                     ws_smem(dst)),
                 "l"(src), "r"(bytes), "r"(ws_smem(bar))
                 : "memory");
#endif
}
__device__ __forceinline__ void ws_store_bulk(void *dst, const void *src, unsigned bytes) {
#ifdef ND_WS_ARCH
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst), "r"(ws_smem(src)),
                 "r"(bytes)
                 : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
#endif
}
// This thread's bulk stores: all but the newest `N` have read their
// shared memory (READ) or completed.
template <int N, bool READ> __device__ __forceinline__ void ws_store_wait() {
#ifdef ND_WS_ARCH
    if constexpr (READ) asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
    else asm volatile("cp.async.bulk.wait_group %0;" ::"n"(N) : "memory");
#endif
}
// Shared-memory writes of this thread, seen by the bulk copy engine.
__device__ __forceinline__ void ws_fence_async() {
#ifdef ND_WS_ARCH
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
}
__device__ __forceinline__ void ws_fence_bar_init() {
#ifdef ND_WS_ARCH
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#endif
}
// A barrier among `count` threads (a squad), not the whole block.
__device__ __forceinline__ void ws_squad_sync(int id, int count) {
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(count) : "memory");
}

template <int RW, int ITEMS, int STAGES> struct alignas(128) WsStorage {
    float data[STAGES][RW * 32 * ITEMS]; // the tiles; results written in place
    float sums[STAGES][RW * 32];         // the reduce threads' sums
    float wsum[STAGES][RW];              // the reduce warps' totals
    float pref[STAGES];                  // the tile's exclusive prefix, rounded
    long long tile[STAGES];              // the tile's ticket, -1: no more tiles
    // full: tile in (ticket + bulk copy); ticket: its ticket is known;
    // reduced: sums written; prefixed: pref written; empty: stage free.
    unsigned long long full[STAGES], ticket[STAGES], reduced[STAGES], prefixed[STAGES], empty[STAGES];
    int64_t acc[ND_XS_LIMBS]; // the look-back's limbs (exact_add_bits)
};

struct WsTile {
    int64_t t, base, valid;
    bool direct; // copied in and out by plain loads and stores, not bulk copies
};
template <int TILE>
__device__ __forceinline__ WsTile ws_tile(int64_t g, int64_t n, int64_t tpr, const float *in, const float *out) {
    WsTile w;
    const int64_t row = g / tpr;
    w.t = g - row * tpr;
    w.base = row * n + w.t * TILE;
    w.valid = n - w.t * TILE < TILE ? n - w.t * TILE : TILE;
    w.direct = w.valid < TILE || (((uintptr_t)(in + w.base) | (uintptr_t)(out + w.base)) & 15) != 0;
    return w;
}

// Inclusive warp scan (Kogge-Stone): the same bits in the reduce and the
// scan-store warps, so a warp's total is its scan's last value.
__device__ __forceinline__ float ws_warp_scan(float v, int lane) {
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
        const float y = __shfl_up_sync(0xffffffffu, v, off);
        if (lane >= off) v = y + v;
    }
    return v;
}

// The look-back state of a block (warp-uniform): the exclusive prefix of
// its last tile, exact, as a float64 (limbs = false) or in acc + flags.
struct WsCarry {
    double e;
    bool limbs;
    unsigned flags;
};

// The carry's float64 into the zeroed limbs, for good (this row).
__device__ __forceinline__ void ws_to_limbs(WsCarry &c, int64_t *acc, int lane) {
    c.flags = exact_f64_into_limbs(c.e, acc, lane);
    c.limbs = true;
    __syncwarp();
}

// Adds the published totals of tiles [from, to) to the carry, 32 V at a
// time: V entries a lane polled at once (one round trip), summed in the
// lane and then by a butterfly. Terms that are multiples of 2^lo below
// 2^(hi+1) have partial sums, 256 of them in any order, below 2^(hi+9):
// exact in float64 while hi - lo <= 44 (exact_sum.h's bound, two bits
// tighter for four times the terms), checked once a window; the window
// joins the carry by a checked add. The first window that could round
// sends the carry to the limbs for good (this row).
template <int SLEEP_NS>
__device__ __forceinline__ void ws_lookback(const unsigned long long *agg, int64_t from, int64_t to, int lane,
                                            WsCarry &c, int64_t *acc) {
    constexpr int V = 8, SPAN = ND_XS_F64_SPAN - 2;
    for (int64_t w0 = from; w0 < to; w0 += 32 * V) {
        unsigned long long a[V];
#pragma unroll
        for (int v = 0; v < V; v++) {
            const int64_t k = w0 + v * 32 + lane;
            a[v] = k < to ? load_word(agg + k) : kMark;
        }
        for (;;) {
            bool mine = true;
#pragma unroll
            for (int v = 0; v < V; v++) mine = mine && (a[v] >> 32) != 0;
            if (__all_sync(0xffffffffu, mine)) break;
            if constexpr (SLEEP_NS > 0) __nanosleep(SLEEP_NS);
#pragma unroll
            for (int v = 0; v < V; v++)
                if (!(a[v] >> 32)) a[v] = load_word(agg + w0 + v * 32 + lane);
        }
        if (!c.limbs) {
            double x = -0.0; // nothing: the identity
            int lo = 1 << 20, hi = -(1 << 20);
#pragma unroll
            for (int v = 0; v < V; v++) {
                if (w0 + v * 32 + lane >= to) continue;
                const double d = (double)__uint_as_float((uint32_t)a[v]);
                int l, h;
                nd_xs_f64_span(d, &l, &h);
                lo = l < lo ? l : lo;
                hi = h > hi ? h : hi;
                x += d;
            }
            lo = __reduce_min_sync(0xffffffffu, lo);
            hi = __reduce_max_sync(0xffffffffu, hi);
#pragma unroll
            for (int off = 16; off > 0; off >>= 1) x += __shfl_xor_sync(0xffffffffu, x, off);
            int ok = hi - lo <= SPAN;
            const double e = nd_xs_add_f64(c.e, x, &ok);
            if (__all_sync(0xffffffffu, ok)) {
                c.e = e;
                continue;
            }
            ws_to_limbs(c, acc, lane);
        }
#pragma unroll
        for (int v = 0; v < V; v++)
            if (w0 + v * 32 + lane < to) c.flags |= exact_add_bits(acc, (uint32_t)a[v]);
    }
    if (c.limbs) {
        c.flags = __reduce_or_sync(0xffffffffu, c.flags);
        __syncwarp();
    }
}

// The carry rounded to float32 once (lane 0's value is used).
__device__ __forceinline__ float ws_round(const WsCarry &c, const int64_t *acc) {
    if (!c.limbs) return __double2float_rn(c.e);
    uint32_t lim[ND_XS_LIMBS];
    nd_xs_normalise(acc, 0, 0, lim);
    return __uint_as_float(nd_xs_round(lim, c.flags));
}

// A new row: nothing carried (-0.0, the identity), limbs zeroed.
__device__ __forceinline__ void ws_reset(WsCarry &c, int64_t *acc, int lane) {
    if (c.limbs && lane < ND_XS_LIMBS) acc[lane] = 0;
    c = WsCarry{-0.0, false, 0};
    __syncwarp();
}

template <int RW, int ITEMS, int STAGES, int SLEEP_NS>
__global__ void __launch_bounds__(RW * 64 + 64, 1)
    scan_ws(const float *in, float *out, int64_t n, int64_t tpr, int64_t tiles, ScanOp<float> op,
            unsigned long long *counter, unsigned long long *agg) {
#ifdef ND_WS_ARCH
    constexpr int RT = RW * 32, TILE = RT * ITEMS;
    static_assert(ITEMS % 2 == 1, "odd ITEMS: a warp's shared-memory reads hit 32 banks");
    static_assert(TILE % 4 == 0, "bulk copies move multiples of 16 bytes");
    using Storage = WsStorage<RW, ITEMS, STAGES>;
    extern __shared__ __align__(128) unsigned char ws_raw[];
    Storage &sm = *reinterpret_cast<Storage *>(ws_raw);
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; s++) {
            ws_bar_init(&sm.full[s], 1);
            ws_bar_init(&sm.ticket[s], 1);
            ws_bar_init(&sm.reduced[s], RT);
            ws_bar_init(&sm.prefixed[s], 1);
            ws_bar_init(&sm.empty[s], 1);
        }
        for (int l = 0; l < ND_XS_LIMBS; l++) sm.acc[l] = 0;
        ws_fence_bar_init();
        ws_fence_async();
    }
    __syncthreads();

    if (warp == 2 * RW + 1) { // the load warp: lane 0 takes tickets and starts bulk copies
        unsigned long long next = 0;
        if (lane == 0) next = atomicAdd(counter, 1ull);
        for (int64_t i = 0;; i++) {
            const int s = (int)(i % STAGES);
            if (lane == 0) ws_wait(&sm.empty[s], ((unsigned)(i / STAGES) & 1) ^ 1);
            __syncwarp(); // the other lanes may write the stage (a direct tile) only now
            const int64_t g = (int64_t)__shfl_sync(0xffffffffu, next, 0);
            if (g >= tiles) {
                if (lane == 0) {
                    sm.tile[s] = -1;
                    ws_arrive(&sm.ticket[s]);
                    ws_arrive(&sm.full[s]);
                }
                return;
            }
            if (lane == 0) {
                sm.tile[s] = g;
                ws_arrive(&sm.ticket[s]);
            }
            const WsTile w = ws_tile<TILE>(g, n, tpr, in, out);
            if (w.direct) { // the warp copies it (a partial or unaligned tile)
                for (int64_t k0 = 0; k0 < w.valid; k0 += 32 * 8) { // 8 loads a lane in flight
                    float t[8];
#pragma unroll
                    for (int j = 0; j < 8; j++) {
                        const int64_t k = k0 + j * 32 + lane;
                        t[j] = k < w.valid ? in[w.base + k] : 0.0f;
                    }
#pragma unroll
                    for (int j = 0; j < 8; j++)
                        if (k0 + j * 32 + lane < w.valid) sm.data[s][k0 + j * 32 + lane] = t[j];
                }
                __syncwarp();
                if (lane == 0) ws_arrive(&sm.full[s]);
            } else if (lane == 0) {
                ws_arrive_tx(&sm.full[s], TILE * 4);
                ws_load_bulk(sm.data[s], in + w.base, TILE * 4, &sm.full[s]);
            }
            if (lane == 0) next = atomicAdd(counter, 1ull); // used at the next stage: its latency overlaps
        }
    }

    if (warp == 2 * RW) { // the look-back warp
        WsCarry c{-0.0, false, 0};
        int64_t prev = -1;
        for (int64_t i = 0;; i++) {
            const int s = (int)(i % STAGES);
            ws_wait(&sm.ticket[s], (unsigned)(i / STAGES) & 1);
            const int64_t g = sm.tile[s];
            if (g < 0) return;
            const int64_t first = g - g % tpr; // the row's first tile
            float p = 0.0f;
            if (g > first) {
                if (prev < first) ws_reset(c, sm.acc, lane);
                ws_lookback<SLEEP_NS>(agg, prev < first ? first : prev, g, lane, c, sm.acc);
                if (lane == 0) p = ws_round(c, sm.acc);
            } else {
                ws_reset(c, sm.acc, lane);
            }
            prev = g;
            if (lane == 0) {
                sm.pref[s] = p;
                ws_arrive(&sm.prefixed[s]);
            }
            __syncwarp(); // lane 0 has read the limbs (ws_round) before a new row's ws_reset clears them
        }
    }

    if (warp < RW) { // reduce
        const int rt = threadIdx.x;
        for (int64_t i = 0;; i++) {
            const int s = (int)(i % STAGES);
            ws_wait(&sm.full[s], (unsigned)(i / STAGES) & 1);
            const int64_t g = sm.tile[s];
            if (g < 0) return;
            const WsTile w = ws_tile<TILE>(g, n, tpr, in, out);
            const float *x = sm.data[s] + rt * ITEMS;
            float a = -0.0f; // nothing (a thread past a partial tile's end)
            if (!w.direct) {
                a = op.load(x[0]);
#pragma unroll
                for (int k = 1; k < ITEMS; k++) a = a + op.load(x[k]);
            } else {
                for (int k = 0; k < ITEMS && rt * ITEMS + k < w.valid; k++) a = k ? a + op.load(x[k]) : op.load(x[k]);
            }
            const float incl = ws_warp_scan(a, lane);
            sm.sums[s][rt] = a;
            if (lane == 31) sm.wsum[s][warp] = incl;
            ws_squad_sync(1, RT);
            if (rt == 0) {
                float total = sm.wsum[s][0];
#pragma unroll
                for (int k = 1; k < RW; k++) total = total + sm.wsum[s][k];
                store_word(agg + g, kMark | __float_as_uint(total));
            }
            ws_arrive(&sm.reduced[s]);
        }
    }

    if (warp >= RW && warp < 2 * RW) { // scan and store
        const int st = threadIdx.x - RT, sw = warp - RW;
        int pending = -1; // thread 0: the stage whose bulk store may still read it
        for (int64_t i = 0;; i++) {
            const int s = (int)(i % STAGES);
            const unsigned ph = (unsigned)(i / STAGES) & 1;
            ws_wait(&sm.full[s], ph);
            const int64_t g = sm.tile[s];
            if (g < 0) break;
            const WsTile w = ws_tile<TILE>(g, n, tpr, in, out);
            ws_wait(&sm.reduced[s], ph);
            // This thread's exclusive prefix inside the tile (none for the
            // tile's first thread): the earlier warps' totals in order, then
            // the earlier lanes' sums.
            const float incl = ws_warp_scan(sm.sums[s][st], lane);
            const float ex = __shfl_up_sync(0xffffffffu, incl, 1);
            float tp = ex;
            if (sw > 0) {
                float wp = sm.wsum[s][0];
                for (int k = 1; k < sw; k++) wp = wp + sm.wsum[s][k];
                tp = lane == 0 ? wp : wp + ex;
            }
            const bool has = sw > 0 || lane > 0;
            ws_wait(&sm.prefixed[s], ph);
            const bool with_prefix = w.t > 0;
            const float p = sm.pref[s];
            float *x = sm.data[s] + st * ITEMS;
            if (!w.direct) {
                float v[ITEMS];
#pragma unroll
                for (int k = 0; k < ITEMS; k++) v[k] = op.load(x[k]);
                float run = has ? tp + v[0] : v[0];
                x[0] = with_prefix ? p + run : run;
#pragma unroll
                for (int k = 1; k < ITEMS; k++) {
                    run = run + v[k];
                    x[k] = with_prefix ? p + run : run;
                }
            } else {
                float run = tp;
                for (int k = 0; k < ITEMS && st * ITEMS + k < w.valid; k++) {
                    const float v = op.load(x[k]);
                    run = k == 0 && !has ? v : run + v;
                    x[k] = with_prefix ? p + run : run;
                }
            }
            ws_fence_async();
            ws_squad_sync(2, RT);
            if (!w.direct) {
                if (st == 0) {
                    ws_store_bulk(out + w.base, sm.data[s], TILE * 4);
                    ws_store_wait<1, true>();
                    if (pending >= 0) ws_arrive(&sm.empty[pending]);
                    pending = s;
                }
            } else { // the squad copies it out
                for (int64_t k = st; k < w.valid; k += RT) out[w.base + k] = sm.data[s][k];
                ws_squad_sync(2, RT);
                if (st == 0) {
                    ws_store_wait<0, true>();
                    if (pending >= 0) ws_arrive(&sm.empty[pending]);
                    pending = -1;
                    ws_arrive(&sm.empty[s]);
                }
            }
        }
        if (st == 0) ws_store_wait<0, false>();
    }
#endif
}

// Workspace: [counter][totals: tiles], zeroed. As many blocks as fit on
// the SMs (one each: the stages fill shared memory), never more than there
// are tiles. fallback (ndp_scan's default, not a variant asked for by
// name): rows that do not all start 16-byte aligned in both buffers, whose
// every tile the load warp would copy, run exact_4k; the size asked for
// then covers both kernels, since a query may not pass the buffers.
template <int RW, int ITEMS, int STAGES, int SLEEP_NS>
cudaError_t scan_ws_launch(const float *in, float *out, int64_t rows, int64_t n, ScanOp<float> op, void *tmp,
                           size_t *bytes, cudaStream_t s, bool fallback = false) {
    auto exact_4k = [&] {
        return scan_exact_launch<ND_SCAN_EXACT_THREADS, ND_SCAN_EXACT_4K_ITEMS, 6, 688, true, true, 1140>(
            in, out, rows, n, op, tmp, bytes, s);
    };
    constexpr int64_t TILE = (int64_t)RW * 32 * ITEMS;
    constexpr int THREADS = RW * 64 + 64;
    auto kernel = scan_ws<RW, ITEMS, STAGES, SLEEP_NS>;
    constexpr size_t SMEM = sizeof(WsStorage<RW, ITEMS, STAGES>);
    // Per device: its SMs x the blocks that fit, -1 before sm_90 (no bulk
    // copies: `exact_4k` instead); 0: not asked yet. Decided before the
    // workspace is sized, so that the size asked for is the size used.
    static int fit[64];
    int dev = 0;
    cudaError_t e = cudaGetDevice(&dev);
    if (e != cudaSuccess) return e;
    int blocks = dev < 64 ? __atomic_load_n(&fit[dev], __ATOMIC_RELAXED) : 0;
    if (blocks == 0) {
        int major = 0, sms = 0, per_sm = 0;
        if ((e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev)) != cudaSuccess) return e;
        if (major < 9) {
            blocks = -1;
        } else {
            if ((e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)SMEM)) !=
                    cudaSuccess ||
                (e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)) != cudaSuccess ||
                (e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, THREADS, SMEM)) != cudaSuccess)
                return e;
            blocks = per_sm < 1 ? -1 : sms * per_sm;
        }
        if (dev < 64) __atomic_store_n(&fit[dev], blocks, __ATOMIC_RELAXED);
    }
    const bool misaligned = ((((uintptr_t)in | (uintptr_t)out) & 15) != 0) || (rows > 1 && n % 4 != 0);
    if (blocks < 0 || (fallback && misaligned && tmp)) return exact_4k();
    const int64_t tpr = (n + TILE - 1) / TILE, tiles = rows * tpr;
    if (tiles > 0x7fffffffLL) return cudaErrorInvalidValue;
    const size_t agg_off = align_up(sizeof(unsigned long long)), need = align_up(agg_off + (size_t)tiles * 8);
    if (!tmp && fallback) {
        if ((e = exact_4k()) != cudaSuccess) return e; // *bytes: exact_4k's size
        *bytes = *bytes > need ? *bytes : need;
        return cudaSuccess;
    }
    if (workspace_query_or_zero(tmp, bytes, need, need, s, &e)) return e;
    char *w = static_cast<char *>(tmp);
    kernel<<<(unsigned)(tiles < blocks ? tiles : blocks), THREADS, SMEM, s>>>(
        in, out, n, tpr, tiles, op, reinterpret_cast<unsigned long long *>(w),
        reinterpret_cast<unsigned long long *>(w + agg_off));
    return cudaGetLastError();
}
