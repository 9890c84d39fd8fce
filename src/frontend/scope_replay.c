/* Scope replay: learning a call site's scope, replaying it as one body
 * call, undoing a replay that turns out to differ (scope_replay.h). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/body.h"
#include "common/alloc.h"
#include "frontend/scope_replay.h"

/* What one scope may hold to be replayed: longer bodies gain less from it
 * and cost more to check. */
#define REPLAY_MAX_STEPS 32
#define REPLAY_MAX_INPUTS 8
/* Call sites remembered per thread: a hash of the address picks where a
 * site's search of REPLAY_PROBE entries starts; a new site takes an unused
 * one there, else the one used longest ago. */
#define REPLAY_SITES 16
#define REPLAY_PROBE 4
/* Placeholders a call site keeps: this many sets of one per step, used in
 * turn, so that a placeholder is handed out again only after as many
 * scopes (each releasing about five) as the handles' free list keeps a
 * freed handle from reuse (ND_FREELIST_DELAY, 256): a program that uses a
 * scope's temporary after the scope ended is told it was freed as long as
 * it would be without the pool. */
#define REPLAY_POOL_SETS 52
/* Undone replays or failed learnings in a row that turn a site off. */
#define REPLAY_MAX_FAILS 3
/* An argument the call does not take (arg[1] of a unary op, ...). */
#define ARG_NONE INT8_MAX

enum { STEP_SCALAR, STEP_OP, STEP_WHERE, STEP_CAST, STEP_FILL };
enum { SITE_LEARN, SITE_READY, SITE_OFF };
/* MODE_DEFER: a replayed scope has ended and its body call is not
 * recorded yet: when the program's next call frees the call's carried
 * input (x = f(x) in a loop), the call joins the loop call that made that
 * input (try_join); any other call records it first (materialise). */
enum { MODE_OFF, MODE_LEARN, MODE_REPLAY, MODE_DEFER };

/* One public call of the scope (fn names it): a weak scalar (dtype
 * ND_FLOAT64 or ND_INT64, value), an elementwise op (op, args), nd_where
 * (three args), nd_astype (an arg, dtype) or a fill (nd_full, nd_zeros,
 * nd_ones: dtype, ndim, shape, value). An argument is a step's result
 * (>= 0) or input -1 - arg: an array from outside the scope, in order of
 * first use. dtype, ndim, shape, weak, readonly (and an op's weak result's
 * value) are also the result's: a call's dtype and shape are its result's. */
typedef struct {
    uint8_t kind, op, dtype, ndim;
    uint8_t weak, readonly; /* the result's (an op of weak scalars is one) */
    int8_t arg[3];
    uint8_t slot[3]; /* where arg's array is in a replay's `slots` (slot_of) */
    const char *fn;
    nd_scalar_bits value;
    int64_t shape[ND_MAX_DIMS];
    int64_t strides[ND_MAX_DIMS]; /* the result's, contiguous (a placeholder's) */
} replay_step;

typedef struct {
    uintptr_t site; /* 0: unused */
    uint64_t used;  /* the thread's count of scopes begun, at its last */
    uint8_t state, fails;
    int16_t n_steps, kept, n_in;
    nd_body *body; /* SITE_READY: the steps traced, inputs in order */
    /* The placeholders it keeps (REPLAY_POOL_SETS x REPLAY_MAX_STEPS,
     * NULL until its first replay), and the set of the replay going on. */
    nd_array **pool;
    int32_t pool_set;
    replay_step steps[REPLAY_MAX_STEPS];
} replay_site;

struct nd_scope_replay {
    replay_site sites[REPLAY_SITES];
    /* The scope being learnt or replayed (mode != MODE_OFF). */
    replay_site *cur;
    int mode;
    int32_t depth;
    int16_t k, n_in; /* steps seen, inputs seen */
    uint64_t begun;  /* scopes begun with replay on */
    /* Learning: the kept step or -1; replaying: whether its nd_keep came. */
    int kept;
    /* The arrays a step's arguments can be, in one table so that the
     * replay finds each with one load (replay_step.slot): none (always
     * NULL), the inputs, each step's result (replay: placeholders). */
    union {
        nd_array *slots[1 + REPLAY_MAX_INPUTS + REPLAY_MAX_STEPS];
        struct {
            nd_array *none;
            nd_array *inputs[REPLAY_MAX_INPUTS];
            nd_array *handles[REPLAY_MAX_STEPS];
        };
    };
    /* Learning: the calls so far (the site keeps its last body's steps
     * until this list replaces them). */
    replay_step learnt[REPLAY_MAX_STEPS];
    /* MODE_DEFER: the named scope the call would be recorded in. */
    uint32_t defer_scope;
    /* Every thread's state: nd_shutdown and another thread's call stop them all. */
    struct nd_scope_replay *prev, *next;
};

static struct nd_scope_replay *all_states;

/* common/api_guard.h's hooks. */
static void interrupt(const char *fn);
static void interrupt_all(void);

/* The buffer every placeholder views: dead, so that nd_fe_arg's fast path
 * refuses a placeholder and its slow path finds it (nothing records a node
 * of it). One per runtime; nd_rt holds a reference. */
static nd_buffer *sentinel(void) {
    if (nd_rt.replay_sentinel) return nd_rt.replay_sentinel;
    nd_buffer *b = nd_buffer_new(ND_FLOAT64, 0);
    if (!b) return NULL;
    /* Off the list of live buffers (it is the newest, at its head): a
     * dead buffer is on none. */
    nd_buffer_live_head = b->live_next;
    if (b->live_next) b->live_next->live_prev = NULL;
    b->live_next = NULL;
    b->dead = 1;
    return nd_rt.replay_sentinel = b;
}

static void stop(struct nd_scope_replay *st) {
    if (st->mode != MODE_OFF) nd_api_replays_live--;
    st->mode = MODE_OFF;
    st->cur = NULL;
    if (nd_api_tls.replay == st) nd_api_tls.replay = NULL;
}

/* The site's placeholders go (all released: between replays; a replay
 * that turned one into an array took it out of the pool first). */
static void pool_free(replay_site *e) {
    if (!e->pool) return;
    for (int i = 0; i < REPLAY_POOL_SETS * REPLAY_MAX_STEPS; i++) {
        nd_array *a = e->pool[i];
        if (!a) continue;
        a->pooled = 0;
        if (a->refs > 0) continue; /* (cannot be) its scope releases it as any other */
        a->buf->handles--;
        nd_buffer_unref(a->buf);
        a->buf = NULL;
        nd_freelist_give_delayed(nd_buffer_hooks_arrays(), a);
    }
    free(e->pool);
    e->pool = NULL;
}

static void site_forget_body(replay_site *e) {
    if (e->body) nd_body_unref(e->body);
    e->body = NULL;
    pool_free(e);
}

/* A learning that could not finish, or a replay undone. The site learns
 * again the next time; its body stays, for that learning to take again if
 * the calls are the same (a loop whose scope differs now and then). */
static void site_failed(replay_site *e, const char *why) {
    if (++e->fails >= REPLAY_MAX_FAILS) {
        site_forget_body(e);
        e->state = SITE_OFF;
        nd_logf(2, "scope replay: call site %#" PRIxPTR " off after %d tries in a row (%s)", e->site,
                (int)e->fails, why);
    } else {
        e->state = SITE_LEARN;
        nd_logf(3, "scope replay: call site %#" PRIxPTR ": %s", e->site, why);
    }
}

/* Where a call site's search of the table starts. */
static inline unsigned site_hash(uintptr_t site) {
    _Static_assert(REPLAY_SITES == 16, "the hash is 4 bits");
    return (unsigned)(((uint64_t)site * 0x9E3779B97F4A7C15ull) >> 60);
}

/* Site's entry in st's table, or NULL; then *victim (if asked) is the
 * entry a new site takes: an unused one, else the one used longest ago. */
static inline __attribute__((always_inline)) replay_site *find_site(struct nd_scope_replay *st, uintptr_t site,
                                                                   replay_site **victim) {
    replay_site *v = NULL;
    for (unsigned p = 0; p < REPLAY_PROBE; p++) {
        replay_site *c = &st->sites[(site_hash(site) + p) % REPLAY_SITES];
        if (c->site == site) return c;
        if (!v || (v->site && (!c->site || c->used < v->used))) v = c;
    }
    if (victim) *victim = v;
    return NULL;
}

/* The scope stack s's innermost scope, just opened, starts site e's
 * learning or replay. */
static inline __attribute__((always_inline)) void start(struct nd_scope_replay *st, const nd_scope_stack *s,
                                                        replay_site *e) {
    e->used = ++st->begun;
    st->cur = e;
    st->mode = e->state == SITE_READY ? MODE_REPLAY : MODE_LEARN;
    if (++e->pool_set == REPLAY_POOL_SETS) e->pool_set = 0;
    nd_api_replays_live++;
    st->depth = s->depth;
    st->k = st->n_in = 0;
    st->kept = st->mode == MODE_LEARN ? -1 : 0;
    memset(st->inputs, 0, sizeof st->inputs);
    nd_api_tls.replay = st;
}

void nd_replay_scope_begun(nd_scope_stack *s, uintptr_t site) {
    /* Only on the thread that owns the lock's bias: the one thread that has
     * called nd so far (common/api_guard.h). Another thread's call could
     * write an input of a deferred op between the op and the scope's end;
     * the first such call takes the bias away and undoes this replay
     * (the API guard's interrupt_all hook), and none starts after. */
    if (!nd_rt.scope_replay || nd_api_tls.depth != 1 || !nd_api_tls.bias) return;
    struct nd_scope_replay *st = s->replay;
    if (!st) {
        nd_api_replay.interrupt = interrupt;
        nd_api_replay.interrupt_all = interrupt_all;
        st = nd_calloc(1, sizeof *st);
        if (!st) return; /* no replay: the scope records as usual */
        st->next = all_states;
        if (all_states) all_states->prev = st;
        all_states = st;
        s->replay = st;
    }
    replay_site *victim;
    replay_site *e = find_site(st, site, &victim);
    if (!e) {
        e = victim;
        site_forget_body(e);
        e->site = site;
        e->state = SITE_LEARN;
        e->fails = 0;
    }
    if (e->state == SITE_OFF) {
        e->used = ++st->begun;
        return;
    }
    start(st, s, e);
}

int nd_replay_scope_begin_fast(uintptr_t site) {
    if (!nd_api_try_enter_biased()) return 0;
    int done = 0;
    nd_scope_stack *s = nd_fe_my_scopes;
    struct nd_scope_replay *st = s ? s->replay : NULL;
    if (!st || !nd_rt.initialised || !nd_rt.scope_replay || nd_api_tls.replay || s->depth + 1 >= s->cap_depth)
        goto out;
    replay_site *e = find_site(st, site, NULL);
    if (!e || e->state != SITE_READY || !e->pool) goto out;
    s->marks[++s->depth] = s->n_items;
    start(st, s, e);
    done = 1;
out:
    nd_api_leave_biased(done);
    return done;
}

/* Placeholder p views what r views (buffer, dtype, view, weakness): its
 * sentinel reference goes, r's buffer reference and handle count are the
 * caller's to give it. It keeps its own references, scope slot and (once
 * listed here) place in the list of live handles. */
static void take_view(nd_array *p, const nd_array *r) {
    nd_buffer *old = p->buf;
    old->handles--;
    nd_buffer_unref(old);
    p->buf = r->buf;
    p->dtype = r->dtype;
    p->ndim = r->ndim;
    p->weak = r->weak;
    p->readonly = r->readonly;
    p->offset = r->offset;
    memcpy(p->shape, r->shape, sizeof p->shape);
    memcpy(p->strides, r->strides, sizeof p->strides);
    p->weak_value = r->weak_value;
    if (!p->listed) nd_array_list(p); /* a placeholder no more */
}

/* Placeholder handle p becomes the array r is (r's reference released). */
static void transplant(nd_array *p, nd_array *r) {
    nd_buffer_ref(r->buf);
    r->buf->handles++;
    take_view(p, r);
    if (r->scope_slot != -1) nd_runtime_untrack(r);
    nd_fe_release(r);
}

/* The kept step's placeholder p becomes the array x is, taking x's buffer
 * reference and handle count, and x's handle goes as nd_free(x) of its
 * last reference would release it (join_round: nothing else reads x's
 * buffer). p's own fields are the body's result's, which x views whole
 * (joins): contiguous from offset 0, strong, writable; so only the
 * buffer changes hands (take_view's copies of the rest would change
 * nothing but the strides of length-1 axes, which p has as a new result
 * has them). */
static void hand_over(nd_array *p, nd_array *x) {
    nd_buffer *old = p->buf;
    old->handles--;
    nd_buffer_unref(old);
    p->buf = x->buf;
    if (!p->listed) nd_array_list(p); /* a placeholder no more */
    if (x->scope_slot != -1) nd_runtime_untrack(x);
    x->refs = 0;
    nd_array_retire(x);
}

/* The index in `slots` of the array of role r (ARG_NONE, a step's result
 * r >= 0, input -1 - r). */
static uint8_t slot_of(int8_t r) {
    return (uint8_t)(r == ARG_NONE ? 0 : r >= 0 ? 1 + REPLAY_MAX_INPUTS + r : -r);
}
_Static_assert(1 + REPLAY_MAX_INPUTS + REPLAY_MAX_STEPS <= UINT8_MAX, "slot indices are bytes");

/* Argument r of a step: NULL, step r's result, or input -1 - r. */
static nd_array *arg_of(int8_t r, nd_array *const *steps, nd_array *const *inputs) {
    return r == ARG_NONE ? NULL : r >= 0 ? steps[r] : inputs[-1 - r];
}

/* Makes call p for real on arguments x (recorded, tracked in the
 * innermost scope). */
static nd_array *real_call(const replay_step *p, nd_array *const *x) {
    switch (p->kind) {
    case STEP_SCALAR: return nd_fe_weak_scalar_call(p->fn, (nd_dtype)p->dtype, p->value);
    case STEP_OP: return nd_fe_elementwise_call(p->fn, (nd_op)p->op, x[0], x[1]);
    case STEP_WHERE: return nd_fe_where_call(x[0], x[1], x[2]);
    case STEP_CAST: return nd_fe_astype_call(x[0], (nd_dtype)p->dtype);
    default: return nd_fe_fill_call(p->fn, (nd_dtype)p->dtype, p->ndim, p->shape, p->value.f);
    }
}

/* Records the first st->k steps for real, each placeholder becoming its
 * array, and stops the replay. A step that fails leaves its placeholder
 * (nd_fe_arg then reports it) and the error of the op that failed. */
static void undo(struct nd_scope_replay *st, const char *why) {
    replay_site *e = st->cur;
    const int k = st->k;
    stop(st);
    for (int j = 0; j < k; j++) {
        const replay_step *p = &e->steps[j];
        nd_array *x[3];
        for (int t = 0; t < 3; t++) x[t] = arg_of(p->arg[t], st->handles, st->inputs);
        nd_array *r = real_call(p, x);
        nd_array *h = st->handles[j];
        if (r && h->pooled) { /* an array now: the pool makes another */
            h->pooled = 0;
            e->pool[e->pool_set * REPLAY_MAX_STEPS + j] = NULL;
        }
        if (r) transplant(h, r);
    }
    nd_rt.stats.scope_replays_undone++;
    site_failed(e, why);
}

/* A learning that cannot become a body. */
static void give_up(struct nd_scope_replay *st, const char *why) {
    replay_site *e = st->cur;
    stop(st);
    site_failed(e, why);
}

/* The replay or learning of st ends before its scope does, for `why`. */
static void materialise(struct nd_scope_replay *st);

static void end_early(struct nd_scope_replay *st, const char *why) {
    if (st->mode == MODE_REPLAY) undo(st, why);
    else if (st->mode == MODE_LEARN) give_up(st, why);
    else if (st->mode == MODE_DEFER) materialise(st);
    else stop(st);
}

static void interrupt_all(void) {
    for (struct nd_scope_replay *st = all_states; st; st = st->next) end_early(st, "another thread called nd");
}

static void interrupt(const char *fn) { end_early(nd_api_tls.replay, fn); }

/* Step p's placeholder: a handle of its result's dtype, shape and strides
 * viewing the sentinel, tracked in the scope. Off the list of live
 * handles (whose links were a fifth of its cost) until it becomes an
 * array (transplant): as a placeholder it never outlives its scope. */
static nd_array *placeholder(const replay_step *p);

/* placeholder's handle, untracked, or NULL without an error (no memory,
 * or no sentinel yet): fast_placeholder's kept step. */
static __attribute__((noinline)) nd_array *placeholder_quiet(const replay_step *p) {
    nd_buffer *b = nd_rt.replay_sentinel;
    if (!b) return NULL;
    nd_array *a = nd_freelist_take(nd_buffer_hooks_arrays(), sizeof *a);
    if (!a) return NULL;
    a->refs = 1;
    a->buf = b;
    a->dtype = (nd_dtype)p->dtype;
    a->ndim = p->ndim;
    a->weak = p->weak;
    a->readonly = p->readonly;
    a->state = ND_ARRAY_LIVE;
    a->scope_slot = -1;
    a->scope_owner = NULL;
    a->origin = p->fn;
    a->listed = 0;
    a->pooled = 0;
    a->live_prev = a->live_next = NULL;
    a->offset = 0;
    a->weak_value.u = p->weak ? p->value.u : 0;
    memcpy(a->shape, p->shape, sizeof a->shape);
    memcpy(a->strides, p->strides, sizeof a->strides);
    nd_buffer_ref(b);
    b->handles++;
    return a;
}

static nd_array *placeholder(const replay_step *p) {
    if (!sentinel()) return NULL;
    nd_array *a = placeholder_quiet(p);
    return a ? nd_runtime_track(a) : nd_array_oom();
}

/* The placeholder of the replay's next step: the one the site kept from
 * REPLAY_POOL_SETS scopes ago (its fields are the step's), or a new one
 * it keeps. Not the kept step's, which becomes the scope's result. */
static inline __attribute__((always_inline)) nd_array *site_placeholder(struct nd_scope_replay *st) {
    replay_site *e = st->cur;
    const replay_step *p = &e->steps[st->k];
    if (st->k == e->kept) return placeholder(p);
    if (!e->pool) e->pool = nd_calloc(REPLAY_POOL_SETS * REPLAY_MAX_STEPS, sizeof *e->pool);
    if (!e->pool) return placeholder(p);
    nd_array **slot = &e->pool[e->pool_set * REPLAY_MAX_STEPS + st->k];
    nd_array *a = *slot;
    if (a && a->refs == 0) {
        a->refs = 1;
        a->state = ND_ARRAY_LIVE;
        return nd_runtime_track(a);
    }
    if (a) return placeholder(p); /* (cannot be) still in use */
    a = placeholder(p);
    if (a) {
        a->pooled = 1;
        *slot = a;
    }
    return a;
}

/* The replay's state when this call continues it, else NULL (a replay
 * another thread's placeholder ended: this thread's pointer is stale). */
static struct nd_scope_replay *active(void) {
    struct nd_scope_replay *st = nd_api_tls.replay;
    if (st->mode == MODE_OFF || st->mode == MODE_DEFER) {
        end_early(st, NULL); /* a deferred call is recorded first */
        return NULL;
    }
    return st;
}

/* Learning: the step a call's result is (its handle logged). */
static void learn_step(struct nd_scope_replay *st, nd_array *r, const replay_step *p) {
    if (!r || st->k >= REPLAY_MAX_STEPS) {
        give_up(st, r ? "more calls than a replay takes" : "a call failed");
        return;
    }
    replay_step *q = &st->learnt[st->k];
    *q = *p;
    q->dtype = (uint8_t)r->dtype;
    q->ndim = r->ndim;
    q->weak = r->weak;
    q->readonly = r->readonly;
    if (r->weak) q->value = r->weak_value;
    for (int t = 0; t < 3; t++) q->slot[t] = slot_of(q->arg[t]);
    memcpy(q->shape, r->shape, sizeof q->shape);
    memset(q->strides, 0, sizeof q->strides);
    nd_contiguous_strides(q->ndim, q->shape, q->strides);
    st->handles[st->k++] = r;
}

/* Learning: argument x's role, logging a new input; -128 when x cannot
 * be one (a weak scalar from outside the scope, too many inputs). */
static int learn_arg(struct nd_scope_replay *st, const nd_array *x) {
    if (!x) return ARG_NONE;
    for (int j = 0; j < st->k; j++)
        if (st->handles[j] == x) return j;
    for (int i = 0; i < st->n_in; i++)
        if (st->inputs[i] == x) return -1 - i;
    if (x->weak || st->n_in >= REPLAY_MAX_INPUTS) return -128;
    st->inputs[st->n_in++] = (nd_array *)x;
    return -st->n_in;
}

/* Replaying: whether x plays role r, binding an input on its first use. */
static inline __attribute__((always_inline)) int replay_arg(struct nd_scope_replay *st, nd_array *x, int8_t r) {
    if (r == ARG_NONE) return x == NULL;
    if (r >= 0) return r < st->k && x == st->handles[r];
    const int i = -1 - r;
    if (st->inputs[i]) return x == st->inputs[i];
    if (!x || x->state != ND_ARRAY_LIVE || x->buf->dead || !nd_fe_body_input_fits(st->cur->body, i, x)) return 0;
    st->inputs[i] = x;
    return 1;
}

/* Replaying: the first use of input role r (< 0) by x, bound when x may
 * be that input (as replay_arg binds it); 0 for anything else. */
static inline __attribute__((always_inline)) int bind_input(struct nd_scope_replay *st, nd_array *x, int8_t r) {
    if (r >= 0 || r == ARG_NONE || st->inputs[-1 - r]) return 0;
    return replay_arg(st, x, r);
}

/* Whether step p, learnt, is the call c about to be made (its arguments
 * apart). */
static int same_call(const replay_step *p, const replay_step *c) {
    if (p->kind != c->kind || p->fn != c->fn) return 0;
    switch (c->kind) {
    case STEP_SCALAR: return p->dtype == c->dtype && p->value.u == c->value.u;
    case STEP_OP: return p->op == c->op;
    case STEP_WHERE: return 1;
    case STEP_CAST: return p->dtype == c->dtype;
    default:
        if (p->dtype != c->dtype || p->ndim != c->ndim || p->value.u != c->value.u) return 0;
        for (int i = 0; i < c->ndim; i++)
            if (p->shape[i] != c->shape[i]) return 0;
        return 1;
    }
}

/* A call the replay follows, c (x: its array arguments, NULL where it has
 * none): learnt, replayed as a placeholder, or made for real. */
static nd_array *follow(replay_step *c, nd_array *const *x) {
    struct nd_scope_replay *st = active();
    if (st && st->mode == MODE_LEARN) {
        int role[3], bad = 0;
        for (int t = 0; t < 3; t++) bad |= (role[t] = learn_arg(st, x[t])) == -128;
        nd_array *r = real_call(c, x);
        int returned_arg = 0;
        for (int t = 0; t < 3 && r; t++) returned_arg |= x[t] && (r == x[t] || r->buf == x[t]->buf);
        if (bad) {
            give_up(st, "an argument from outside the scope is a weak scalar, or too many inputs");
        } else if (returned_arg) {
            give_up(st, "a call returned its argument or a view of it");
        } else {
            for (int t = 0; t < 3; t++) c->arg[t] = (int8_t)role[t];
            learn_step(st, r, c);
        }
        return r;
    }
    if (st) {
        const replay_step *p = &st->cur->steps[st->k];
        if (st->k < st->cur->n_steps && same_call(p, c) && replay_arg(st, x[0], p->arg[0]) &&
            replay_arg(st, x[1], p->arg[1]) && replay_arg(st, x[2], p->arg[2])) {
            nd_array *a = site_placeholder(st);
            if (a) {
                st->handles[st->k++] = a;
                return a;
            }
        }
        undo(st, c->fn);
    }
    return real_call(c, x);
}

/* The steady state of a replay, under the biased lock alone (the general
 * path's guard and step checks were a third of a replayed op): on the
 * thread that owns the API lock's bias (which alone replays), the call is
 * the next step (what follow checks), its call site has the step's
 * placeholder free (or it is the kept step, whose handle is new), and the
 * innermost scope has room to track it.
 * Returns it, else NULL having changed nothing but an input bound, as the
 * general path binds it (nd_replay_op below). */
static inline __attribute__((always_inline)) nd_array *fast_placeholder(int kind, const char *fn, int op_or_dtype,
                                                                         uint64_t value, nd_array *a, nd_array *b) {
    if (!nd_api_try_enter_biased()) return NULL;
    nd_array *h = NULL;
    struct nd_scope_replay *st = nd_api_tls.replay;
    if (!st || st->mode != MODE_REPLAY) goto out;
    const replay_site *e = st->cur;
    const int k = st->k;
    if (k >= e->n_steps) goto out;
    const replay_step *p = &e->steps[k];
    if (p->kind != kind || p->fn != fn || p->arg[2] != ARG_NONE) goto out;
    if (kind == STEP_OP ? p->op != op_or_dtype : p->dtype != op_or_dtype || p->value.u != value) goto out;
    /* an argument is the array its slot holds (a step's result: learnt
     * steps read earlier ones; none: NULL), else an input's first use */
    if ((a != st->slots[p->slot[0]] && !bind_input(st, a, p->arg[0])) ||
        (b != st->slots[p->slot[1]] && !bind_input(st, b, p->arg[1])))
        goto out;
    nd_array **const handle = &st->handles[k];
    nd_scope_stack *s = nd_fe_my_scopes;
    if (!s || s->n_items == s->cap_items) goto out;
    if (__builtin_expect(k == e->kept, 0)) {
        /* the kept step: a new handle, the scope's result (a call, on
         * this one path) */
        if (!(h = placeholder_quiet(p))) goto out;
    } else {
        if (!e->pool) goto out;
        nd_array *pooled = e->pool[e->pool_set * REPLAY_MAX_STEPS + k];
        if (!pooled || pooled->refs != 0) goto out;
        h = pooled;
        h->refs = 1;
        h->state = ND_ARRAY_LIVE;
    }
    h->scope_slot = (int32_t)s->n_items;
    h->scope_owner = s;
    s->items[s->n_items++] = h;
    *handle = h;
    st->k = (int16_t)(k + 1);
out:
    nd_api_leave_biased(h != NULL);
    return h;
}

/* The general path of a replayed scalar or op (follow): the first use of
 * a pooled placeholder, a kept step's handle that fails (its error is set
 * here), a call that differs, learning. */
static __attribute__((noinline)) nd_array *replay_scalar_call(const char *fn, nd_dtype dtype, nd_scalar_bits value) {
    ND_API_GUARD_REPLAY(fn);
    replay_step c = {.kind = STEP_SCALAR, .fn = fn, .dtype = (uint8_t)dtype, .value = value};
    nd_array *x[3] = {NULL, NULL, NULL};
    return follow(&c, x);
}

static __attribute__((noinline)) nd_array *replay_op_call(const char *fn, nd_op op, nd_array *a, nd_array *b) {
    ND_API_GUARD_REPLAY(fn);
    replay_step c = {.kind = STEP_OP, .op = (uint8_t)op, .fn = fn};
    nd_array *x[3] = {a, b, NULL};
    return follow(&c, x);
}

nd_array *nd_replay_scalar(const char *fn, nd_dtype dtype, nd_scalar_bits value) {
    nd_array *h = fast_placeholder(STEP_SCALAR, fn, (int)dtype, value.u, NULL, NULL);
    if (__builtin_expect(h != NULL, 1)) return h;
    return replay_scalar_call(fn, dtype, value);
}

nd_array *nd_replay_op(const char *fn, nd_op op, nd_array *a, nd_array *b) {
    nd_array *h = fast_placeholder(STEP_OP, fn, (int)op, 0, a, b);
    if (__builtin_expect(h != NULL, 1)) return h;
    return replay_op_call(fn, op, a, b);
}

nd_array *nd_replay_where(nd_array *cond, nd_array *a, nd_array *b) {
    ND_API_GUARD_REPLAY("nd_where");
    replay_step c = {.kind = STEP_WHERE, .fn = "nd_where"};
    nd_array *x[3] = {cond, a, b};
    return follow(&c, x);
}

nd_array *nd_replay_astype(nd_array *a, nd_dtype dtype) {
    ND_API_GUARD_REPLAY("nd_astype");
    if (!nd_dtype_valid((int)dtype)) { /* its error, after the replay is undone */
        interrupt("nd_astype");
        return nd_fe_astype_call(a, dtype);
    }
    replay_step c = {.kind = STEP_CAST, .fn = "nd_astype", .dtype = (uint8_t)dtype};
    nd_array *x[3] = {a, NULL, NULL};
    return follow(&c, x);
}

nd_array *nd_replay_fill(const char *fn, nd_dtype dtype, int ndim, const int64_t *shape, double value) {
    ND_API_GUARD_REPLAY(fn);
    if (!nd_dtype_valid((int)dtype) || ndim < 0 || ndim > ND_MAX_DIMS || (ndim > 0 && !shape)) {
        interrupt(fn); /* its error, after the replay is undone */
        return nd_fe_fill_call(fn, dtype, ndim, shape, value);
    }
    replay_step c = {.kind = STEP_FILL, .fn = fn, .dtype = (uint8_t)dtype, .ndim = (uint8_t)ndim};
    c.value.f = value;
    for (int i = 0; i < ND_MAX_DIMS; i++) c.shape[i] = i < ndim ? shape[i] : 1;
    nd_array *x[3] = {NULL, NULL, NULL};
    return follow(&c, x);
}

/* nd_keep of the kept step's placeholder in a replay, its steady state:
 * out of the outermost scope (the program's now), under the biased lock
 * alone (fast_placeholder says why). 1 when done, else 0 having done
 * nothing. */
static inline __attribute__((always_inline)) int fast_keep(nd_array *a) {
    if (!nd_api_try_enter_biased()) return 0;
    int done = 0;
    struct nd_scope_replay *st = nd_api_tls.replay;
    nd_scope_stack *s = nd_fe_my_scopes;
    if (!st || st->mode != MODE_REPLAY || st->kept || !s || s->depth != 1 || !a) goto out;
    const int j = st->cur->kept;
    /* the placeholder the scope tracks (fast_placeholder, site_placeholder) */
    if (j >= st->k || a != st->handles[j] || a->state != ND_ARRAY_LIVE || a->scope_owner != s) goto out;
    st->kept = 1;
    nd_runtime_untrack(a); /* as nd_scope_keep_handle out of the outermost scope */
    done = 1;
out:
    nd_api_leave_biased(done);
    return done;
}

static __attribute__((noinline)) nd_array *replay_keep_call(nd_array *a);

nd_array *nd_replay_keep(nd_array *a) {
    if (__builtin_expect(fast_keep(a), 1)) return a;
    return replay_keep_call(a);
}

static nd_array *replay_keep_call(nd_array *a) {
    ND_API_GUARD_REPLAY("nd_keep");
    struct nd_scope_replay *st = active();
    if (st && st->mode == MODE_LEARN) {
        int j = st->k - 1;
        while (j >= 0 && st->handles[j] != a) j--;
        if (j < 0 || st->kept >= 0) give_up(st, j < 0 ? "nd_keep of an array not made in the scope" : "two nd_keep");
        else st->kept = j;
    } else if (st) {
        const int j = st->cur->kept;
        if (!st->kept && j < st->k && a == st->handles[j]) st->kept = 1;
        else undo(st, "nd_keep of another array");
    }
    return nd_scope_keep_handle(a);
}

/* The body's function: the learnt steps, on the body's placeholders. */
static nd_array *replay_steps_fn(nd_array *const *in, void *ctx) {
    const replay_site *e = ctx;
    nd_array *h[REPLAY_MAX_STEPS];
    for (int j = 0; j < e->n_steps; j++) {
        const replay_step *p = &e->steps[j];
        nd_array *x[3];
        for (int t = 0; t < 3; t++) x[t] = arg_of(p->arg[t], h, in);
        h[j] = real_call(p, x);
        if (!h[j]) return NULL;
    }
    return h[e->kept];
}

/* Whether the site's body was traced from the calls just learnt, with
 * inputs of these dtypes and shapes. */
static int body_fits(const replay_site *e, const struct nd_scope_replay *st) {
    if (!e->body || e->n_steps != st->k || e->kept != st->kept || e->n_in != st->n_in) return 0;
    /* The same calls on the same arguments, from inputs of the traced
     * dtypes and shapes, have the same results (promotion and broadcasting
     * see nothing else). */
    for (int j = 0; j < st->k; j++) {
        const replay_step *p = &e->steps[j], *q = &st->learnt[j];
        if (!same_call(p, q) || memcmp(p->arg, q->arg, sizeof p->arg) != 0) return 0;
    }
    for (int i = 0; i < st->n_in; i++)
        if (!nd_fe_body_input_fits(e->body, i, st->inputs[i])) return 0;
    return 1;
}

/* End of a learnt scope: its calls traced into the site's body (or the
 * site's body kept, traced from the same calls before). */
static void learn(struct nd_scope_replay *st) {
    replay_site *e = st->cur;
    if (st->kept < 0 || st->n_in == 0) {
        give_up(st, st->kept < 0 ? "no nd_keep" : "no input from outside the scope");
        return;
    }
    if (body_fits(e, st)) {
        stop(st);
        e->state = SITE_READY;
        return;
    }
    site_forget_body(e);
    e->n_steps = st->k;
    e->kept = (int16_t)st->kept;
    e->n_in = st->n_in;
    memcpy(e->steps, st->learnt, sizeof(replay_step) * (size_t)st->k);
    nd_array *like[REPLAY_MAX_INPUTS];
    memcpy(like, st->inputs, sizeof like);
    stop(st);
    nd_error_saved saved;
    nd_error_save(&saved);
    nd_body *b = nd_body_trace("replayed_scope", e->n_in, like, replay_steps_fn, e);
    if (!b) {
        nd_logf(2, "scope replay: call site %#" PRIxPTR " is not replayed: %s", e->site, nd_last_error());
        nd_error_restore(&saved);
        site_forget_body(e);
        e->state = SITE_OFF;
        return;
    }
    e->body = b; /* the trace's reference, the site's now */
    e->state = SITE_READY;
    nd_logf(3, "scope replay: call site %#" PRIxPTR " learnt: %d calls, %d inputs", e->site,
            (int)e->n_steps, (int)e->n_in);
}

/* nd_body_call's node for the replayed scope, its checks done as each
 * input was bound. It fails only without memory (its error stands). */
static nd_array *body_call_node(struct nd_scope_replay *st) {
    const replay_site *e = st->cur;
    int same = 1;
    for (int i = 0; i < e->n_in; i++) same &= e->body->in_whole[i];
    return nd_fe_body_node(e->steps[e->kept].fn, e->body, st->inputs, same);
}

/* The newest pending node when it is a call of the site's body that wrote
 * an input the body's result can be: the replayed call may join it, when
 * the program frees that input next (try_join). */
static const nd_node *joinable_writer(const struct nd_scope_replay *st) {
    const nd_graph *g = &nd_rt.graph;
    if (!nd_rt.body_loops || g->n_nodes == 0) return NULL;
    const nd_node *p = g->nodes[g->n_nodes - 1];
    return nd_node_is_body(p) && p->u.body.body == st->cur->body ? p : NULL;
}

static int may_join(const struct nd_scope_replay *st) {
    const nd_node *p = joinable_writer(st);
    if (!p) return 0;
    for (int i = 0; i < st->cur->n_in; i++)
        if (nd_body_carries(st->cur->body, i) && st->inputs[i]->buf == p->out) return 1;
    return 0;
}

/* The deferred call is recorded now, its result the kept placeholder. */
static void materialise(struct nd_scope_replay *st) {
    nd_array *y = st->handles[st->cur->kept];
    nd_array *r = body_call_node(st);
    stop(st);
    if (r) transplant(y, r);
}

/* Whether input x, read by the deferred call as input c, is the whole of
 * what the newest node p wrote, and the call's other inputs are p's own:
 * then the call is p's next round. */
static int joins(const struct nd_scope_replay *st, const nd_node *p, const nd_array *x, int c) {
    const nd_body *b = st->cur->body;
    nd_buffer *bx = x->buf;
    if (x->refs != 1 || bx->handles != 1 || bx->refs != 2 || bx->borrow || bx->n_writers != 1 || p->out != bx ||
        p->out_version != bx->version || p->flags || p->scope != st->defer_scope ||
        (p->n_params && (int)p->u.body.carry != c) || x->offset != 0 || x->dtype != b->out_dtype || x->readonly)
        return 0;
    /* the kept step's result is the body's: its strides are the
     * contiguous ones of the body's result (learn_step) */
    const int64_t *whole = st->cur->steps[st->cur->kept].strides;
    for (int d = 0; d < b->out_ndim; d++)
        if (b->out_shape[d] != 1 && x->strides[d] != whole[d]) return 0;
    int64_t strides[ND_MAX_DIMS];
    for (int i = 0; i < st->cur->n_in; i++) {
        if (i == c) continue;
        const nd_array *a = st->inputs[i];
        const nd_ref *r = &p->inputs[i];
        if (a->buf == bx || a->weak || r->buf != a->buf || r->version != a->buf->version || r->offset != a->offset ||
            r->dtype != a->dtype)
            return 0;
        nd_fe_broadcast_strides(a, b->out_ndim, b->out_shape, strides);
        for (int d = 0; d < b->out_ndim; d++)
            if (r->strides[d] != strides[d]) return 0;
    }
    return 1;
}

/* nd_free(x) while a call is deferred: when x is its carried input, the
 * call joins the loop call that wrote x (graph/node.h: one more round,
 * writing x's buffer, which the kept placeholder then views) and x goes.
 * Returns 1 when done. */
static int join_round(struct nd_scope_replay *st, nd_array *x) {
    const replay_site *e = st->cur;
    nd_node *p = (nd_node *)joinable_writer(st);
    if (!p || !x || x->state != ND_ARRAY_LIVE) return 0;
    int c = -1;
    for (int i = 0; i < e->n_in; i++)
        if (st->inputs[i] == x) {
            if (c >= 0 || !nd_body_carries(e->body, i)) return 0; /* read twice, or no carry */
            c = i;
        }
    if (c < 0 || !joins(st, p, x, c)) return 0;
    nd_graph_loop_round(&nd_rt.graph, p, c);
    nd_array *y = st->handles[e->kept];
    stop(st);
    /* y views x's buffer, which p now writes one round further; x goes
     * (its scope entry too, if an outer scope held it) as nd_free would */
    hand_over(y, x);
    nd_rt.stats.body_calls_merged++;
    return 1;
}

/* join_round, then the early flush it may make due. */
static int try_join(struct nd_scope_replay *st, nd_array *x) {
    if (!join_round(st, x)) return 0;
    nd_runtime_after_join();
    return 1;
}

/* nd_free of the deferred call's carried input, the steady state of a
 * replayed loop: the call joins (join_round) under the biased lock alone
 * (fast_placeholder says why) when that makes no early flush due (which
 * runs under the whole guard). 1 when done, else 0 having done nothing. */
static int fast_join(nd_array *x) {
    if (!nd_api_try_enter_biased()) return 0;
    struct nd_scope_replay *st = nd_api_tls.replay;
    const int done = st && st->mode == MODE_DEFER && nd_runtime_join_is_quiet() && join_round(st, x);
    nd_api_leave_biased(done);
    return done;
}

static __attribute__((noinline)) void replay_free_call(nd_array *a);

void nd_replay_free_handle(nd_array *a) {
    if (!fast_join(a)) replay_free_call(a);
}

static void replay_free_call(nd_array *a) {
    ND_API_GUARD_REPLAY("nd_free");
    struct nd_scope_replay *st = nd_api_tls.replay;
    if (st && st->mode == MODE_DEFER && try_join(st, a)) return;
    if (st) end_early(st, "nd_free");
    nd_fe_free_call(a);
}

/* Whether the replay's scope, ending with every step seen and the kept
 * step kept, may leave its call deferred: it may join the newest node. */
static int may_defer(const struct nd_scope_replay *st) {
    return st->k == st->cur->n_steps && st->kept && may_join(st);
}

/* The replay's call is deferred (MODE_DEFER): recorded at the program's
 * next call, or never (try_join); its scope closes. */
static void defer(struct nd_scope_replay *st) {
    st->mode = MODE_DEFER;
    st->defer_scope = nd_api_tls.scope; /* before a named scope closes */
    st->cur->fails = 0;
    nd_rt.stats.scopes_replayed++;
    nd_scope_end_close();
}

/* nd_scope_end of a replay whose call may join the loop call before it,
 * its steady state: the general path's defer under the biased lock alone.
 * 1 when done, else 0 having done nothing. */
static int fast_scope_end(void) {
    if (!nd_api_try_enter_biased()) return 0;
    struct nd_scope_replay *st = nd_api_tls.replay;
    nd_scope_stack *s = nd_fe_my_scopes;
    /* the scope's handles are the replay's placeholders, whose release
     * records nothing and sets no error */
    const int done = st && st->mode == MODE_REPLAY && s && s->depth == st->depth && may_defer(st);
    if (done) defer(st);
    nd_api_leave_biased(done);
    return done;
}

static __attribute__((noinline)) void replay_scope_end_call(void);

void nd_replay_scope_end(void) {
    if (!fast_scope_end()) replay_scope_end_call();
}

static void replay_scope_end_call(void) {
    ND_API_GUARD_REPLAY("nd_scope_end");
    struct nd_scope_replay *st = active();
    nd_scope_stack *s = nd_fe_my_scopes;
    if (st && (!s || s->depth != st->depth)) {
        end_early(st, "nd_scope_end of another scope");
    } else if (st && st->mode == MODE_LEARN) {
        learn(st);
    } else if (st) {
        replay_site *e = st->cur;
        nd_array *r = NULL;
        if (may_defer(st)) {
            defer(st);
            return;
        }
        if (st->k == e->n_steps && st->kept) r = body_call_node(st);
        if (r) {
            transplant(st->handles[e->kept], r);
            e->fails = 0;
            nd_rt.stats.scopes_replayed++;
            stop(st);
        } else {
            undo(st, st->k == e->n_steps && st->kept ? "the body call failed" : "fewer calls than the last time");
        }
    }
    nd_scope_end_close();
}

int nd_replay_placeholder_arg(const char *fn, const char *name, const nd_array *a) {
    /* Its replay is the one of the stack whose scope holds it, if still
     * going (the program handed it to another thread, or a call of this
     * thread's own found it after its replay ended). */
    nd_scope_stack *s = a->scope_slot >= 0 ? a->scope_owner : NULL;
    struct nd_scope_replay *st = s ? s->replay : NULL;
    if (st && st->mode == MODE_REPLAY) {
        for (int j = 0; j < st->k; j++)
            if (st->handles[j] == a) {
                undo(st, fn);
                break;
            }
    }
    if (a->buf != nd_rt.replay_sentinel) return 0;
    /* Its call could not be recorded when the replay was undone (it had
     * worked when learnt, so memory ran out, or an injected fault): that
     * call's error stands if the program has not cleared it, as a NULL
     * argument keeps the error that made it. */
    if (nd_last_status() != ND_OK) return -1;
    nd_error_set(ND_ERR_OOM, "%s: argument '%s' is the result of a call in a replayed scope (ND_SCOPE_REPLAY) "
                 "that could not be recorded when the replay was undone (out of memory, or an injected fault)",
                 fn, name);
    return -1;
}

void nd_replay_free(nd_scope_stack *s) {
    struct nd_scope_replay *st = s->replay;
    if (!st) return;
    stop(st);
    for (int i = 0; i < REPLAY_SITES; i++) site_forget_body(&st->sites[i]);
    if (st->prev) st->prev->next = st->next;
    else all_states = st->next;
    if (st->next) st->next->prev = st->prev;
    free(st);
    s->replay = NULL;
}

void nd_replay_shutdown(void) {
    for (struct nd_scope_replay *st = all_states; st; st = st->next) {
        stop(st); /* another thread's pointer, if set, is cleared at its next call */
        for (int i = 0; i < REPLAY_SITES; i++) {
            site_forget_body(&st->sites[i]);
            st->sites[i].site = 0;
        }
    }
    if (nd_api_tls.replay) stop(nd_api_tls.replay);
    nd_buffer_unref(nd_rt.replay_sentinel);
    nd_rt.replay_sentinel = NULL;
}
