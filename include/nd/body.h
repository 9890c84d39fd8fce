/*
 * nd/body.h — Loop bodies: an elementwise function of nd arrays traced once
 * and then recorded as one graph node per call (like jax.jit of an
 * elementwise function, or numexpr's compiled expression, but lazy).
 * Part of nd.h: include <nd.h>, not this file.
 *
 * A loop that repeats a short elementwise statement thousands of times
 * (x = x*0.99 + 0.01*sin(x)) pays nd's recording cost once per op: a
 * handle, a buffer, a graph node and its share of the flush for each of
 * the statement's ops. Traced as a body, the statement is one node per
 * iteration: its ops are a template the kernel builder expands where it
 * would have inlined the ops one by one, so the same kernels (the same
 * instructions, the same fusion, the same bits) come out, for a fraction
 * of the host work.
 *
 *     static nd_array *step(nd_array *const *in, void *ctx) {
 *         nd_array *x = in[0];
 *         return nd_add(nd_mul(x, nd_scalar(0.99)),
 *                       nd_mul(nd_scalar(0.01), nd_sin(x)));
 *     }
 *     nd_body *b = nd_body_trace("step", 1, &x, step, NULL);
 *     for (int i = 0; i < 1000; i++) {
 *         nd_array *y = nd_body_call(b, &x);
 *         nd_free(x);
 *         x = y;
 *     }
 *     nd_body_free(b);
 *     nd_sync();
 *
 * In this loop each call's input is the call before it's result, freed at
 * once: the calls join into one node that applies the body 1000 times,
 * one kernel loop (a loop call: README, "Loops: loop calls";
 * ND_BODY_LOOPS=0 keeps a node per call).
 *
 * The same fn, called on ordinary arrays, records the ops one by one: the
 * body computes exactly what that recording computes.
 */
#ifndef ND_BODY_H
#define ND_BODY_H

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A traced body: immutable, shared by the program's handle and the calls
 * still pending (any thread may call it). */
typedef struct nd_body nd_body;

/* The most inputs a body takes. */
#define ND_BODY_MAX_INPUTS 64

/* The function a body is traced from: builds its result from in[0..n_in)
 * with nd's elementwise functions and returns it. nd releases every handle
 * made during the trace, the result included (to return an input as it
 * is, return nd_retain(in[k])). The same function called on ordinary
 * arrays records the ops one by one. */
typedef nd_array *(*nd_body_fn)(nd_array *const *in, void *ctx);

/* Traces fn once on placeholder inputs with like[i]'s shape and dtype
 * (like[i]'s values are not read) and returns the body.
 *
 * A body may use: arithmetic, comparisons, unary math, nd_where, nd_astype
 * and the other elementwise functions of elementwise.h, weak scalars
 * (nd_scalar, nd_scalar_int) and constant fills (nd_full, nd_zeros of a
 * shape that broadcasts), broadcasting among its inputs, NumPy 2 type
 * promotion. Its result's shape is what fn's result has; every input's
 * shape must broadcast to it.
 *
 * fn runs while this thread holds nd's lock: it must not wait for another
 * thread that calls nd. It runs once, now; what it records is taken back.
 *
 * name: 1-63 characters of [A-Za-z0-9_]; it names the body in errors,
 * graph dumps and logs.
 *
 * Errors (NULL result; nothing recorded, no array changed): ND_ERR_ARG
 * (NULL or bad name, like or fn; n_in outside 1..ND_BODY_MAX_INPUTS; a
 * weak scalar as like[i]; fn returned a weak scalar or an input that does
 * not broadcast to its result), ND_ERR_UNSUPPORTED naming the offending
 * function when fn does anything but elementwise maps: a reduction
 * (nd_sum), matmul, a random draw, a library routine, a user kernel or
 * user function, a write (nd_assign, nd_fill), a view that is not the
 * whole array (nd_view, nd_reshape, nd_transpose, nd_broadcast_to), a
 * read or a sync (nd_item, nd_to_host, nd_sync), or an array not made
 * from the inputs (pass it as an input); ND_ERR_STATE (a trace inside
 * fn); errors of fn's own calls (shapes that do not broadcast, ...) as
 * they were raised. */
ND_API nd_body *nd_body_trace(const char *name, int n_in, nd_array *const *like, nd_body_fn fn,
                              void *ctx);

/* Records one call: one node whose value is fn applied to in[0..n_in),
 * a new array of the traced result's shape and dtype. Lazy, like every
 * elementwise op; it fuses with the calls and ops around it.
 * in[i] may be any view (strided, broadcast, transposed) but must have
 * like[i]'s shape and dtype at the trace, and must not be a weak scalar.
 * Errors (NULL result, nothing recorded): ND_ERR_ARG (NULL b or in, a
 * freed in, a weak scalar input, a freed b: nd_body_free says for how
 * long that is caught), ND_ERR_SHAPE / ND_ERR_DTYPE (an input whose
 * shape or dtype is not the traced one: trace another body for it); a
 * NULL in[i] keeps the error that made it. */
ND_API nd_array *nd_body_call(const nd_body *b, nd_array *const *in);

/* The body's name and number of inputs (NULL b: NULL, -1; a freed b:
 * NULL, -1 and ND_ERR_ARG). */
ND_API const char *nd_body_name(const nd_body *b);
ND_API int nd_body_n_inputs(const nd_body *b);

/* Releases the program's reference; calls already recorded keep the body
 * until they have run. NULL: no-op. Once those calls have run its
 * template's memory goes, but the struct b points to waits, marked freed,
 * in a ring of the last 256 bodies let go (as a freed array handle does),
 * so passing b to nd_body_call, nd_body_name or nd_body_n_inputs still
 * gives ND_ERR_ARG (NULL, -1) and a second nd_body_free does nothing, until
 * 256 more bodies have gone after it or nd_shutdown, which frees the ring;
 * after that, passing b is undefined. */
ND_API void nd_body_free(nd_body *b);

#ifdef __cplusplus
}
#endif

#endif
