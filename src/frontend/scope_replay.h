/* Scope replay (ND_SCOPE_REPLAY=1): a scope whose calls repeat those of
 * the last time its nd_scope_begin call site ran is recorded as one call
 * of a traced body (include/nd/body.h) instead of one node per op.
 *
 * The first time a call site's scope runs, its ops are recorded as usual
 * and their calls written down (learning). At its nd_scope_end, when every
 * call in it was an elementwise op, nd_where, nd_astype, a fill (nd_full,
 * nd_zeros, nd_ones) or a weak scalar and one result was kept (nd_keep),
 * nd_body_trace turns that list into a body. The next
 * time, each call is checked against the list: a matching call records
 * nothing and returns a placeholder handle of the right shape and dtype,
 * and nd_scope_end records one nd_body_call whose result the kept
 * placeholder becomes. The body computes exactly what the ops one by one
 * compute (body.h), so the values are the same bits.
 *
 * Anything else undoes the replay before it goes on: a call that differs
 * from the list (another op, another input, another scalar value), or any
 * other public call (a read, nd_free, nd_shape's siblings that take the
 * lock, a nested scope). Undoing records the deferred calls for real, in
 * order, and turns each placeholder into the array it stands for (the
 * same handle), so the program sees what it would have without the
 * replay. Three undone replays or failed learnings in a row turn the call
 * site's replay off. Per thread: a thread's scopes and call sites are its
 * own. */
#ifndef ND_FRONTEND_SCOPE_REPLAY_H
#define ND_FRONTEND_SCOPE_REPLAY_H

#include "frontend/frontend.h"

/* Whether this call is a public call that the active replay must see: its
 * entry points below (called before the public function's own guard). */
#define ND_REPLAY_SEES_CALL() __builtin_expect(nd_api_tls.replay != NULL && nd_api_tls.depth == 0, 0)

/* First statement of a public function the replay follows: while a replay
 * is active on this thread, runs the statements given (a return through
 * the replay's entry below, which takes the API guard itself); otherwise
 * takes the API guard as fn (scripts/check_api_guard.py knows it). */
#define ND_API_REPLAYABLE_AS(fn, ...)                                                      \
    if (ND_REPLAY_SEES_CALL()) {                                                           \
        __VA_ARGS__;                                                                       \
    }                                                                                      \
    ND_API_GUARD_AS(fn)

/* The same for a public function that forwards to callee, which takes
 * the guard (ND_API_GUARD_IN): the function is then two tail calls and no
 * frame, where a check in the callee came after its saved registers. */
#define ND_API_REPLAYABLE_IN(callee, ...)                                                  \
    if (ND_REPLAY_SEES_CALL()) {                                                           \
        __VA_ARGS__;                                                                       \
    }                                                                                      \
    ND_API_GUARD_IN(callee)

/* nd_scope_begin opened scope stack s's innermost scope from call site
 * `site` (the program's return address): starts learning or replaying it
 * when ND_SCOPE_REPLAY is on. */
void nd_replay_scope_begun(nd_scope_stack *s, uintptr_t site);
/* nd_scope_begin's steady state, before its guard: when the thread has a
 * replay ready for `site` and the stack room for a scope, opens the scope
 * and starts the replay under the biased lock alone (scope_replay.c,
 * fast_placeholder); 1 when done, else 0 having done nothing. */
int nd_replay_scope_begin_fast(uintptr_t site);

/* The public calls a replay follows (each takes the API guard itself). */
nd_array *nd_replay_scalar(const char *fn, nd_dtype dtype, nd_scalar_bits value);
nd_array *nd_replay_op(const char *fn, nd_op op, nd_array *a, nd_array *b);
nd_array *nd_replay_where(nd_array *cond, nd_array *a, nd_array *b);
nd_array *nd_replay_astype(nd_array *a, nd_dtype dtype);
nd_array *nd_replay_fill(const char *fn, nd_dtype dtype, int ndim, const int64_t *shape, double value);
nd_array *nd_replay_keep(nd_array *a);
void nd_replay_scope_end(void);
/* nd_free while a replay is active: a replayed scope's deferred body call
 * joins the loop call that wrote the handle freed, its carried input
 * (x = f(x) in a loop: no node for the round); otherwise the replay is
 * undone (or the deferred call recorded) and the handle freed. */
void nd_replay_free_handle(nd_array *a);

/* nd_keep's, nd_scope_end's and nd_free's work after their guard
 * (scope.c). */
nd_array *nd_scope_keep_handle(nd_array *a);
void nd_scope_end_close(void);
void nd_fe_free_call(nd_array *a);

/* nd_fe_arg found a placeholder (buf is the runtime's replay sentinel):
 * records its replay's deferred calls so that it is an ordinary array (0),
 * or sets the error naming fn and the argument (-1). */
int nd_replay_placeholder_arg(const char *fn, const char *name, const nd_array *a);

/* Stack s goes (its thread's scopes closed): frees its replay state. */
void nd_replay_free(nd_scope_stack *s);
/* nd_shutdown: every thread's replay stops and lets go of its bodies and
 * placeholders' sentinel (other threads' placeholders then read as
 * handles that outlived the runtime). */
void nd_replay_shutdown(void);

/* The internal entries the replay records through (elementwise.c,
 * creation.c), each what its public function does after the guard, its
 * result tracked in the innermost scope: an elementwise op by name and
 * nd_op (b NULL: unary), a weak scalar of dtype ND_FLOAT64 or ND_INT64,
 * nd_where, nd_astype, and nd_full, nd_zeros or nd_ones (fn says which). */
nd_array *nd_fe_elementwise_call(const char *fn, nd_op op, nd_array *a, nd_array *b);
nd_array *nd_fe_weak_scalar_call(const char *fn, nd_dtype dtype, nd_scalar_bits value);
nd_array *nd_fe_where_call(nd_array *cond, nd_array *a, nd_array *b);
nd_array *nd_fe_astype_call(nd_array *a, nd_dtype dtype);
nd_array *nd_fe_fill_call(const char *fn, nd_dtype dtype, int ndim, const int64_t *shape, double value);

#endif
