/* The CPU JIT: elementwise kernels compiled to native code with the
 * system C compiler, in place of the tile interpreter.
 *
 * The interpreter runs an expression op by op over a tile; between ops every
 * value goes through L1, and loads, arithmetic and stores of one op never
 * overlap with the next's, so a memory-bound chain runs well below the
 * machine's bandwidth. A compiled kernel evaluates the whole expression per
 * element in registers. Code generation (cpu_jit_codegen.c) prints the
 * prepared kernel as C over the element functions of cpu_scalar.h, so it
 * computes the interpreter's bits; the cache (cpu_jit.c) compiles it with
 * $ND_CC (default cc) into a shared object under <cache dir>/cpu/, keyed by
 * the source, the compiler and the CPU, and loads it with dlopen.
 *
 * Only kernels of at least ND_CPU_JIT_MIN points (default 2^16) are
 * compiled, in the background: the interpreter runs them until the compiled
 * version is loaded. ND_CPU_JIT=0 turns the JIT off, ND_CPU_JIT=sync
 * compiles in the foreground (the first launch waits). Whatever goes wrong
 * (no compiler, a failed compile, an unwritable cache) leaves the kernel to
 * the interpreter: the JIT never fails an operation. */
#ifndef ND_BACKENDS_CPU_JIT_H
#define ND_BACKENDS_CPU_JIT_H

#include "backends/cpu/cpu_kernel.h"

/* Bump when generated code changes meaning without its text changing
 * (the compile flags or the calling convention below). */
#define ND_CPU_JIT_CODEGEN_VERSION 4

typedef void (*nd_cpu_jit_helper)(void);

/* A compiled kernel evaluates the flat range [f0, f1) of the prepared
 * iteration space, whose extents are shape[0 .. ndim), as the
 * interpreter's work items do. The extents are arguments, not constants
 * of the source: one compiled kernel serves every shape whose prepared
 * strides and offsets are its own (a length that depends on data never
 * recompiles). slots: the launch's slot base pointers; params: one 8-byte cell per PARAM instruction, in
 * instruction order, holding the value in the instruction's dtype
 * (nd_cpu_jit_params); helpers: the table codegen asked for; scratch: the
 * worker's scratch, at least scratch_bytes. */
typedef void (*nd_cpu_jit_fn)(void *const *slots, const uint64_t *params,
                              const nd_cpu_jit_helper *helpers, char *scratch, int64_t f0,
                              int64_t f1, const int64_t *shape);

typedef struct {
    nd_cpu_jit_fn fn;
    const nd_cpu_jit_helper *helpers;
    size_t scratch_bytes;
} nd_cpu_jit_kernel;

/* ---- code generation (cpu_jit_codegen.c) */
typedef struct {
    char *src; /* C source, NUL-terminated */
    size_t len;
    nd_cpu_jit_helper *helpers; /* functions the source calls, by index */
    int n_helpers;
    size_t scratch_bytes;
} nd_cpu_jit_source;

/* C source for prepared kernel p (of k). Returns 0, or -1 when the kernel
 * is not supported (reductions, random draws) or memory ran out; *out is
 * then empty. */
int nd_cpu_jit_codegen(const nd_kernel *k, const cpu_prep *p, nd_cpu_jit_source *out);
void nd_cpu_jit_source_free(nd_cpu_jit_source *s);

/* ---- the cache (cpu_jit.c) */
typedef struct nd_cpu_jit nd_cpu_jit;

/* Reads ND_CPU_JIT, ND_CPU_JIT_MIN and ND_CC. *out is NULL when the JIT is
 * off; an invalid setting is an error (ND_ERR_ARG). */
nd_status nd_cpu_jit_create(const char *cache_dir, nd_cpu_jit **out);
/* Stops a compile in progress, unloads every kernel. */
void nd_cpu_jit_destroy(nd_cpu_jit *j);

/* 1 and *out when a compiled version of k is loaded and may run on these
 * slots; 0 to interpret (a compile may have started). */
int nd_cpu_jit_find(nd_cpu_jit *j, const nd_kernel *k, const cpu_prep *p, void *const *slots,
                    nd_cpu_jit_kernel *out);

/* Fills params as nd_cpu_jit_fn expects (n_insts cells suffice). */
void nd_cpu_jit_params(const cpu_prep *p, uint64_t *params);

/* Pasted into every generated kernel, embedded at build time:
 * common/element_fns.h (nd_element_fns_source, common/ops.h) then
 * cpu_scalar.h (the conversions). */
extern const char nd_cpu_scalar_source[];

/* The compiler flags of every kernel (cpu_ufunc.c builds user loops with
 * them too). */
extern const char *const *const nd_cpu_jit_cc_flags;
extern const int nd_cpu_jit_n_cc_flags;

/* Process-wide counts, for tests and logs. */
typedef struct {
    int64_t compiled;  /* shared objects built */
    int64_t loaded;    /* kernels loaded (built or found on disk) */
    int64_t failed;    /* compiles or loads that failed */
    int64_t launches;  /* kernel launches run compiled */
} nd_cpu_jit_counts;
void nd_cpu_jit_get_counts(nd_cpu_jit_counts *out);

#endif
