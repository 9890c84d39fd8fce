/* User functions' typed loops (include/nd/ufunc.h): one registry of every
 * loop the process defined, shared by the frontend (which records calls),
 * the scheduler (kernel hashes) and the backends (which paste the source
 * into kernels or call the CPU tile function).
 *
 * A loop is immutable once registered and lives until the process ends,
 * so a kernel or plan cached with its id never names freed code. Loops are
 * deduplicated by content (name, types, parameter names, body): defining
 * the same function again reuses the loop and its compiled code, so a
 * program that defines and frees in a loop does not grow the registry.
 * Lookups take a lock (the executor thread and CPU workers ask at kernel
 * preparation, once per instruction per launch). */
#ifndef ND_COMMON_UFUNC_LOOP_H
#define ND_COMMON_UFUNC_LOOP_H

#include <stdint.h>

#include "common/dtype.h"
#include "common/strbuf.h"

/* A MAP node whose op is this calls the user loop u.ufunc.loop (graph/node.h);
 * nd_op values stay below it. */
#define ND_UFUNC_MAP_OP 255

/* The CPU interpreter's compiled loop: out[i] = f(in[0][i], in[1][i], ...)
 * for i < n, every array contiguous in the parameter's (return) dtype. */
typedef void (*nd_ufunc_tile_fn)(int64_t n, void *out, const void *const *in);

typedef struct nd_ufunc_loop {
    uint32_t id;   /* registry id, >= 1, never reused */
    uint64_t hash; /* content: name, types, parameter names, body */
    char name[64];
    int nargs;
    uint8_t ret;                     /* nd_dtype */
    uint8_t args[ND_UFUNC_MAX_ARGS]; /* nd_dtype of each parameter */
    char argnames[ND_UFUNC_MAX_ARGS][64];
    char *body;
} nd_ufunc_loop;

/* C name of a dtype a loop may use ("float", "int32_t", "bool"), NULL for
 * float16/bfloat16. */
const char *nd_ufunc_type_name(nd_dtype t);

/* Parses "RET(T a, ...)" or "T a, ..." into l's ret/args/argnames/nargs.
 * ND_ERR_ARG naming fn and what is wrong otherwise. */
nd_status nd_ufunc_parse_signature(const char *fn, const char *sig, nd_ufunc_loop *l);

/* Registers a loop like `l` (its body is copied) or finds the equal one;
 * NULL when out of memory (an error is set naming fn). */
const nd_ufunc_loop *nd_ufunc_loop_register(const char *fn, const nd_ufunc_loop *l);
/* The loop with this id, or NULL. */
const nd_ufunc_loop *nd_ufunc_loop_get(uint32_t id);
/* The CPU tile function of loop id (set once by the CPU backend), or NULL. */
nd_ufunc_tile_fn nd_ufunc_loop_tile(uint32_t id);
void nd_ufunc_loop_set_tile(uint32_t id, nd_ufunc_tile_fn fn);

/* The loop as a function "qual RET ndu_<name>_<hash>(T a, ...) { body }" with
 * #line directives, so that compilers report lines of the body under the
 * loop's name. cuda: for NVRTC (which has no <stdint.h>: the types are
 * typedefs, see nd_ufunc_emit_types). */
void nd_ufunc_emit_fn(nd_strbuf *sb, const nd_ufunc_loop *l, const char *qual);
/* The type names loops use, once per generated source before the first
 * function: typedefs under NVRTC, <stdint.h>/<stdbool.h> elsewhere. */
void nd_ufunc_emit_types(nd_strbuf *sb);
/* "ndu_<name>_<hash>": the emitted function's name (compilers name it in
 * their messages), at most ND_UFUNC_FN_NAME bytes with the NUL. */
#define ND_UFUNC_FN_NAME 96
void nd_ufunc_fn_name(char *out, size_t cap, const nd_ufunc_loop *l);

#endif
