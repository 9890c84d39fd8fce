/* Host stand-ins for the CUDA that nd's device sources use (the code
 * generator's kernels, the small solve and Cholesky passes), so that the
 * checks of emulate_harness.h can run them on a machine without a GPU
 * (compiled as C++17 with -ffp-contract=off, so that __f*_rn stay unfused
 * as on the device). A block's threads are fibers on the launching thread
 * when the kernel synchronises (__syncthreads and shuffles are barriers a
 * fiber waits at until its block or warp has arrived), else they run one
 * after another; blocks run in turn, so __shared__ arrays can be static.
 * Fibers, not threads: 256 threads a block meeting at futex barriers on a
 * 2-core machine spent most of the checks' time in the kernel (CI ran
 * them beside the builds: emulate_check took 148 s user and 244 s system
 * time, chol_check 47 and 108). A fiber starts through ucontext and
 * switches with _setjmp/_longjmp: glibc's swapcontext makes a signal-mask
 * system call and saves the floating-point environment at every switch
 * (emulate_check: 322 s of user and system time with it, 289 without, on
 * a 2-core VM). Only what those sources use is
 * here: no textures; shuffles within full warps of a 1-d block; two
 * atomics. */
#ifndef ND_CUDA_TESTS_EMULATE_SHIM_H
#define ND_CUDA_TESTS_EMULATE_SHIM_H
/* _FORTIFY_SOURCE's longjmp refuses a jump to another stack, which is what
 * a switch between fibers is (this header comes before any other). */
#undef _FORTIFY_SOURCE
#include <setjmp.h>
#include <math.h>
#include <string.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <ucontext.h>
struct uint4 { unsigned x, y, z, w; };
struct uint2 { unsigned x, y; };
static inline uint4 make_uint4(unsigned a, unsigned b, unsigned c, unsigned d) { uint4 r = {a, b, c, d}; return r; }
static inline uint2 make_uint2(unsigned a, unsigned b) { uint2 r = {a, b}; return r; }
struct emu_dim3 { unsigned x, y, z; };
inline thread_local emu_dim3 threadIdx, blockIdx;
inline emu_dim3 gridDim, blockDim;
/* A barrier: `need` arrivals release everyone waiting at this generation. */
struct emu_barrier {
    unsigned need, arrived, gen;
};
struct emu_fiber {
    ucontext_t ctx; /* its start */
    jmp_buf resume; /* where it waits, once started */
    int started;
    const emu_barrier *wait_on; /* NULL: runnable */
    unsigned wait_gen;
    int done;
};
inline emu_barrier emu_block_bar, emu_warp_bar[8];
inline emu_fiber *emu_fibers; /* the running block's threads; NULL outside a synchronising launch */
inline unsigned emu_cur;
inline jmp_buf emu_sched; /* the scheduler, while a fiber runs */
inline void (*emu_body_call)(void *);
inline void *emu_body;
/* Arrive at b; the last arrival releases the others and runs on, the
 * others go back to the scheduler until b's generation moves. */
inline void emu_wait(emu_barrier &b) {
    if (!emu_fibers) {
        fprintf(stderr, "emulate_shim: a barrier in a launch without sync\n");
        abort();
    }
    unsigned gen = b.gen;
    if (++b.arrived == b.need) {
        b.arrived = 0;
        b.gen++;
        return;
    }
    emu_fiber &f = emu_fibers[emu_cur];
    f.wait_on = &b;
    f.wait_gen = gen;
    if (!_setjmp(f.resume)) _longjmp(emu_sched, 1);
}
inline void __syncthreads() { emu_wait(emu_block_bar); }
/* Shuffles (only in synchronising launches): each lane posts its value,
 * its warp meets, each reads its partner's, the warp meets again before
 * the slots are reused. The generator shuffles only with full warps. */
inline unsigned long long emu_lane_value[256];
template <class T> static T __shfl_down_sync(unsigned, T v, unsigned d) {
    static_assert(sizeof(T) <= 8, "shuffled value too wide");
    unsigned t = threadIdx.x, src = t % 32 + d < 32 ? t + d : t;
    memcpy(&emu_lane_value[t], &v, sizeof v);
    emu_wait(emu_warp_bar[t / 32]);
    T r;
    memcpy(&r, &emu_lane_value[src], sizeof r);
    emu_wait(emu_warp_bar[t / 32]);
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
/* A fiber's life: the kernel's body, once. */
static inline void emu_fiber_main() {
    emu_body_call(emu_body);
    emu_fibers[emu_cur].done = 1;
    _longjmp(emu_sched, 1); /* never returns: its stack is dropped */
}
/* Runs f, the kernel's body, over grid blocks of block threads (x
 * fastest, as the device numbers them). sync: a block's threads are
 * fibers (at most 256), meeting at __syncthreads and, per 32, at
 * shuffles; each round resumes every fiber whose barrier has released,
 * in thread order, until all have returned. Else they run one after
 * another. */
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
    if (nt > 256) {
        fprintf(stderr, "emulate_shim: %u threads a block (at most 256)\n", nt);
        abort();
    }
    const size_t stack_bytes = (size_t)512 << 10; /* touched lazily */
    char *stacks = (char *)mmap(NULL, stack_bytes * nt, PROT_READ | PROT_WRITE,
                                MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (stacks == MAP_FAILED) {
        perror("emulate_shim: fiber stacks");
        abort();
    }
    static emu_fiber fibers[256];
    emu_body = &f;
    emu_body_call = [](void *p) { (*(F *)p)(); };
    for (unsigned b = 0; b < nb; b++) {
        emu_block_bar = {nt, 0, 0};
        for (auto &w : emu_warp_bar) w = {32, 0, 0};
        for (unsigned t = 0; t < nt; t++) {
            emu_fiber &fb = fibers[t];
            getcontext(&fb.ctx);
            fb.ctx.uc_stack.ss_sp = stacks + stack_bytes * t;
            fb.ctx.uc_stack.ss_size = stack_bytes;
            fb.ctx.uc_link = NULL;
            makecontext(&fb.ctx, emu_fiber_main, 0);
            fb.started = 0;
            fb.wait_on = NULL;
            fb.done = 0;
        }
        emu_fibers = fibers;
        for (unsigned live = nt; live;) {
            int ran = 0;
            for (unsigned t = 0; t < nt; t++) {
                emu_fiber &fb = fibers[t];
                if (fb.done || (fb.wait_on && fb.wait_on->gen == fb.wait_gen)) continue;
                fb.wait_on = NULL;
                emu_cur = t;
                place(b, t);
                if (!_setjmp(emu_sched)) {
                    if (fb.started) _longjmp(fb.resume, 1);
                    fb.started = 1;
                    setcontext(&fb.ctx);
                }
                ran = 1;
                if (fb.done) live--;
            }
            if (!ran) {
                fprintf(stderr, "emulate_shim: block %u's threads wait at barriers none can release\n", b);
                abort();
            }
        }
        emu_fibers = NULL;
    }
    munmap(stacks, stack_bytes * nt);
}
/* The code generator's launch: 1-d blocks of 256 threads. */
template <class F> static void emu_grid(unsigned grid, int sync, F f) { emu_launch({grid, 1, 1}, {256, 1, 1}, sync, f); }

#endif
