/* Host stand-ins for the CUDA that nd's device sources use (the code
 * generator's kernels, the small solve and Cholesky passes), so that the
 * checks of emulate_harness.h can run them on a machine without a GPU
 * (compiled as C++17 with -ffp-contract=off, so that __f*_rn stay unfused
 * as on the device). A block's threads are real threads when the kernel
 * synchronises (__syncthreads is a barrier), else they run one after
 * another; blocks run in turn, so __shared__ arrays can be static. Only
 * what those sources use is here: no textures; shuffles within full warps
 * of a 1-d block; two atomics. */
#ifndef ND_CUDA_TESTS_EMULATE_SHIM_H
#define ND_CUDA_TESTS_EMULATE_SHIM_H
#include <math.h>
#include <string.h>
#include <stdint.h>
#include <pthread.h>
#include <thread>
#include <vector>
struct uint4 { unsigned x, y, z, w; };
struct uint2 { unsigned x, y; };
static inline uint4 make_uint4(unsigned a, unsigned b, unsigned c, unsigned d) { uint4 r = {a, b, c, d}; return r; }
static inline uint2 make_uint2(unsigned a, unsigned b) { uint2 r = {a, b}; return r; }
struct emu_dim3 { unsigned x, y, z; };
inline thread_local emu_dim3 threadIdx, blockIdx;
inline emu_dim3 gridDim, blockDim;
inline pthread_barrier_t emu_bar;
inline void __syncthreads() { pthread_barrier_wait(&emu_bar); }
/* Shuffles (only with real threads): each lane posts its value, its warp
 * meets, each reads its partner's, the warp meets again before the slots
 * are reused. The generator shuffles only with full warps. */
inline pthread_barrier_t emu_warp_bar[8];
inline unsigned long long emu_lane_value[256];
template <class T> static T __shfl_down_sync(unsigned, T v, unsigned d) {
    static_assert(sizeof(T) <= 8, "shuffled value too wide");
    unsigned t = threadIdx.x, src = t % 32 + d < 32 ? t + d : t;
    memcpy(&emu_lane_value[t], &v, sizeof v);
    pthread_barrier_wait(&emu_warp_bar[t / 32]);
    T r;
    memcpy(&r, &emu_lane_value[src], sizeof r);
    pthread_barrier_wait(&emu_warp_bar[t / 32]);
    return r;
}
#define __global__
#define __device__
#define __forceinline__ inline
#define __noinline__
#define __launch_bounds__(x)
#define __shared__ static
#define __align__(n) alignas(n)
static inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a * b) >> 32); }
static inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
    return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
static inline float __fmul_rn(float a, float b) { return a * b; }
static inline float __fadd_rn(float a, float b) { return a + b; }
static inline float __fsub_rn(float a, float b) { return a - b; }
static inline float __fdiv_rn(float a, float b) { return a / b; }
static inline double __dmul_rn(double a, double b) { return a * b; }
static inline double __dadd_rn(double a, double b) { return a + b; }
static inline double __dsub_rn(double a, double b) { return a - b; }
static inline double __ddiv_rn(double a, double b) { return a / b; }
static inline float __int_as_float(int x) { float f; memcpy(&f, &x, 4); return f; }
static inline float __uint_as_float(unsigned x) { float f; memcpy(&f, &x, 4); return f; }
static inline unsigned __float_as_uint(float f) { unsigned x; memcpy(&x, &f, 4); return x; }
static inline int __float_as_int(float f) { int x; memcpy(&x, &f, 4); return x; }
static inline double __longlong_as_double(long long x) { double f; memcpy(&f, &x, 8); return f; }
static inline long long __double_as_longlong(double f) { long long x; memcpy(&x, &f, 8); return x; }
static inline double __hiloint2double(int hi, int lo) {
    return __longlong_as_double((long long)((unsigned long long)(unsigned)hi << 32 | (unsigned)lo));
}
/* Gathers file a bad index with one compare-and-swap, the small solve its
 * lowest singular member with a minimum (blocks run in turn, threads of
 * one block too when it does not synchronise). */
static inline int atomicCAS(int *p, int cmp, int val) {
    __atomic_compare_exchange_n(p, &cmp, val, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    return cmp; /* the old value, whether or not it was swapped */
}
static inline unsigned long long atomicMin(unsigned long long *p, unsigned long long v) {
    unsigned long long o = __atomic_load_n(p, __ATOMIC_SEQ_CST);
    while (v < o && !__atomic_compare_exchange_n(p, &o, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
    }
    return o;
}
/* Runs f, the kernel's body, over grid blocks of block threads (x
 * fastest, as the device numbers them). sync: a block's threads are real
 * threads (at most 256), meeting at __syncthreads and, per 32, at
 * shuffles; else they run one after another. */
template <class F> static void emu_launch(emu_dim3 grid, emu_dim3 block, int sync, F f) {
    gridDim = grid;
    blockDim = block;
    const unsigned nb = grid.x * grid.y * grid.z, nt = block.x * block.y * block.z;
    auto place = [&](unsigned b, unsigned t) {
        blockIdx = {b % grid.x, b / grid.x % grid.y, b / (grid.x * grid.y)};
        threadIdx = {t % block.x, t / block.x % block.y, t / (block.x * block.y)};
    };
    if (!sync) {
        for (unsigned b = 0; b < nb; b++)
            for (unsigned t = 0; t < nt; t++) { place(b, t); f(); }
        return;
    }
    pthread_barrier_init(&emu_bar, NULL, nt);
    for (auto &b : emu_warp_bar) pthread_barrier_init(&b, NULL, 32);
    std::vector<std::thread> th;
    for (unsigned t = 0; t < nt; t++)
        th.emplace_back([&, t] {
            for (unsigned b = 0; b < nb; b++) {
                place(b, t);
                f();
                pthread_barrier_wait(&emu_bar);
            }
        });
    for (auto &x : th) x.join();
    pthread_barrier_destroy(&emu_bar);
    for (auto &b : emu_warp_bar) pthread_barrier_destroy(&b);
}
/* The code generator's launch: 1-d blocks of 256 threads. */
template <class F> static void emu_grid(unsigned grid, int sync, F f) { emu_launch({grid, 1, 1}, {256, 1, 1}, sync, f); }

#endif
