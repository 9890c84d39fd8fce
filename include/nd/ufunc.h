/*
 * nd/ufunc.h — User-defined elementwise functions ("ufuncs") given as C
 * source of a scalar function, called like a built-in op and fused into
 * nd's generated kernels (CUDA, the CPU JIT) like nd_sin.
 * Part of nd.h: include <nd.h>, not this file.
 */
#ifndef ND_UFUNC_H
#define ND_UFUNC_H

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A user function with one or more typed loops (NumPy's ufunc.types). */
typedef struct nd_ufunc nd_ufunc;

/* The most inputs a user function takes. */
#define ND_UFUNC_MAX_ARGS 4

/* Defines a user function from the C source of a scalar function body.
 *
 * name       a C identifier (letters, digits, '_'), at most 63 characters;
 *            it names the function in compiler messages and kernel names
 * signature  "RET(T1 a, T2 b, ...)" or "T1 a, T2 b, ..." (the result is
 *            then the NumPy promotion of the parameter types). Types are the
 *            C names of nd's dtypes: bool, int8_t, int16_t, int32_t,
 *            int64_t, uint8_t, uint16_t, uint32_t, uint64_t, float, double;
 *            1 to ND_UFUNC_MAX_ARGS parameters, distinct C identifiers
 * body       the statements of the function, e.g.
 *            "return expf(-0.5f*(x-x0)*(x-x0)/(s*s)) / (2.5066283f*s);"
 *            Portable C that is also valid CUDA C++: <math.h>'s functions
 *            (expf, sin, fmaxf, ...), no headers, no globals, no I/O.
 *
 * The source is compiled at once on the active backend, so a mistake is
 * reported here, not at the first flush: NVRTC on CUDA; on the CPU
 * backend the system C compiler ($ND_CC, default cc) builds a tile
 * function for the interpreter (the CPU JIT pastes the same function into
 * its kernels). Compiler messages give lines of `body` (line 1 is its first
 * line) under the file name `name`.
 *
 * Returns NULL on error: ND_ERR_ARG (NULL or malformed name, signature or
 * body; an unknown type), ND_ERR_COMPILE (the body does not compile: the
 * message holds the compiler's, with the body's line numbers),
 * ND_ERR_UNSUPPORTED (the CPU backend and no C compiler: set ND_CC), and
 * ND_ERR_STATE (nd_init failed). Free with nd_ufunc_free. */
ND_API nd_ufunc *nd_ufunc_define(const char *name, const char *signature, const char *body);

/* Adds a loop for other dtypes (NumPy's ufunc.types list grows; loops are
 * tried in the order they were added). signature as for nd_ufunc_define,
 * with the same number of parameters; body NULL reuses the first loop's
 * body with the new types (parameter names must then be the same).
 * Errors as nd_ufunc_define; ND_ERR_ARG for a loop whose parameter types
 * an earlier loop already has. */
ND_API nd_status nd_ufunc_add_loop(nd_ufunc *u, const char *signature, const char *body);

/* Applies u elementwise to n inputs broadcast together (NumPy rules).
 * The loop is NumPy's ufunc type resolution: the first loop (in the order
 * added) to whose parameter types every input can be cast safely
 * (np.can_cast(x, T, "safe"); a weak scalar, nd_scalar/nd_scalar_int, fits
 * any loop of its kind or a wider kind: an int scalar an integer or float
 * parameter, a float scalar a float one). Inputs are converted to that
 * loop's parameter types; the result has its return type. The call is
 * lazy and fuses with the ops around it into one kernel.
 * Returns NULL on error: ND_ERR_ARG (u or an input NULL or freed, n not
 * u's number of parameters), ND_ERR_SHAPE (no broadcast), ND_ERR_DTYPE (no
 * loop takes these dtypes: the message lists the loops; or a Python int that
 * does not fit the chosen loop's integer parameter, NumPy's OverflowError). */
ND_API nd_array *nd_ufunc_call(nd_ufunc *u, int n, nd_array *const *args);

/* Number of parameters of u, or -1 for NULL. */
ND_API int nd_ufunc_nargs(const nd_ufunc *u);

/* Frees u (NULL is ignored). Arrays already computed or recorded from it
 * stay valid: its compiled code lives until the process ends. */
ND_API void nd_ufunc_free(nd_ufunc *u);

#ifdef __cplusplus
}
#endif

#endif
