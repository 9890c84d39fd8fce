/* Handle lifetime: reference counts and scopes.
 *
 * A scope owns the creation reference of each handle made inside it. Scopes
 * are per thread: each thread that opens one gets a scope stack, its handles
 * on one array (items) with marks[d] where depth d starts (d = 1..depth). A
 * handle remembers its stack and position (scope_owner, scope_slot), so that
 * an nd_free that kills it, from any thread, clears its entry and the scope
 * end does not free it again, and so nd_keep is O(1).
 *
 * nd_shutdown (nd_scope_shutdown) closes the calling thread's scopes and
 * frees its stack. Other threads' scopes stay open: those threads may be
 * using their handles at this moment, so the handles stay valid as handles
 * that outlived the runtime (the shutdown releases their memory,
 * nd_buffer_release_all, and ops reject them with ND_ERR_STATE) until their
 * thread closes the scope or exits; freed at the shutdown, a later use
 * would read freed memory. A thread that exits with a stack has its scopes
 * closed and the stack freed by a thread-exit
 * destructor (a pthread key's). All of this runs under the API lock. */
#include <pthread.h>
#include <stdlib.h>

#include "common/api_guard.h"
#include "frontend/frontend.h"
#include "frontend/naming.h"
#include "frontend/scope_replay.h"
#include "common/alloc.h"

/* (nd_scope_stack and the thread's stack, nd_fe_my_scopes: runtime.h.) */
_Thread_local nd_scope_stack *nd_fe_my_scopes __attribute__((tls_model("initial-exec")));
static pthread_key_t exit_key;
static int exit_key_made;

/* The overflow list: a doubly linked list through the handles, newest
 * first, so that registering never needs memory and a handle freed early
 * leaves in O(1). */
static void overflow_unlink(nd_scope_stack *s, nd_array *a) {
    if (a->scope_prev) a->scope_prev->scope_next = a->scope_next;
    else s->overflow = a->scope_next;
    if (a->scope_next) a->scope_next->scope_prev = a->scope_prev;
    a->scope_prev = a->scope_next = NULL;
}

nd_array *nd_runtime_track_grow(nd_array *a) {
    nd_scope_stack *s = nd_fe_my_scopes;
    int64_t cap = s->cap_items ? s->cap_items * 2 : 256;
    nd_array **items = nd_realloc(s->items, (size_t)cap * sizeof *items);
    if (!items) {
        /* No memory to grow the stack: the handle joins the overflow list
         * (no allocation), and its scope's end still frees it. Left
         * untracked it would live, unseen, until nd_shutdown. */
        a->scope_slot = ND_SCOPE_OVERFLOW;
        a->scope_owner = s;
        a->scope_depth = s->depth;
        a->scope_prev = NULL;
        a->scope_next = s->overflow;
        if (s->overflow) s->overflow->scope_prev = a;
        s->overflow = a;
        return a;
    }
    s->items = items;
    s->cap_items = cap;
    return nd_runtime_track(a);
}

void nd_runtime_untrack(nd_array *a) {
    nd_scope_stack *s = a->scope_owner;
    if (a->scope_slot == ND_SCOPE_OVERFLOW && s) overflow_unlink(s, a);
    else if (a->scope_slot >= 0 && s && a->scope_slot < s->n_items && s->items[a->scope_slot] == a)
        s->items[a->scope_slot] = NULL;
    a->scope_slot = -1;
    a->scope_owner = NULL;
}

/* Closes the innermost scope of s. nd_fe_release cannot add entries, so the
 * bound is stable. */
static void close_scope(nd_scope_stack *s) {
    const int64_t start = s->marks[s->depth];
    nd_array **const items = s->items;
    /* Newest first, like unwinding; entries may be NULL (freed by the user
     * or kept). */
    for (int64_t i = s->n_items - 1; i >= start; i--) {
        nd_array *a = items[i];
        if (!a) continue;
        items[i] = NULL;
        a->scope_slot = -1;
        a->scope_owner = NULL;
        if (a->pooled && a->refs == 1) {
            /* a placeholder its call site keeps (scope_replay.c): released
             * to the site, not to the free list */
            a->refs = 0;
            a->state = ND_ARRAY_FREED;
            continue;
        }
        nd_fe_release(a);
    }
    s->n_items = start;
    /* The overflow list's handles of this scope (depth >= its own: none is
     * deeper, the inner scopes closed first). A release cannot free
     * another handle, but the walk starts again after each to be safe. */
    for (nd_array *a = s->overflow; a;) {
        if (a->scope_depth < s->depth) {
            a = a->scope_next;
            continue;
        }
        nd_runtime_untrack(a);
        nd_fe_release(a);
        a = s->overflow;
    }
    s->depth--;
}

/* Closes every scope of this thread and frees its stack. */
static void free_my_stack(void) {
    nd_scope_stack *s = nd_fe_my_scopes;
    if (!s) return;
    while (s->depth > 0) close_scope(s);
    nd_fe_scope_names_closed(0);
    nd_replay_free(s);
    free(s->items);
    free(s->marks);
    free(s);
    nd_fe_my_scopes = NULL;
}

/* A thread exits: its scopes close as if it had called nd_scope_end. The
 * argument may be stale (a stack freed by nd_shutdown): nd_fe_my_scopes says. */
static void thread_exit(void *unused) {
    (void)unused;
    nd_api_enter("nd_scope_end");
    free_my_stack();
    int token = 0;
    nd_api_leave(&token);
}

void nd_scope_shutdown(void) { free_my_stack(); }

static nd_scope_stack *stack_of_this_thread(void) {
    if (nd_fe_my_scopes) return nd_fe_my_scopes;
    if (!exit_key_made) {
        if (pthread_key_create(&exit_key, thread_exit) != 0) {
            nd_error_set(ND_ERR_BACKEND, "nd_scope_begin: could not register a thread-exit "
                         "handler (pthread_key_create failed; too many thread keys in use)");
            return NULL;
        }
        exit_key_made = 1;
    }
    nd_scope_stack *s = nd_calloc(1, sizeof *s);
    if (!s || pthread_setspecific(exit_key, s) != 0) {
        free(s);
        nd_error_set(ND_ERR_OOM, "nd_scope_begin: out of host memory for this thread's scope "
                     "stack");
        return NULL;
    }
    nd_fe_my_scopes = s;
    return s;
}

nd_array *nd_retain(nd_array *a) {
    ND_API_GUARD();
    if (!a) return NULL;
    if (nd_fe_arg_handle("nd_retain", "a", a)) return NULL;
    a->refs++;
    return a;
}

void nd_free(nd_array *a) {
    ND_API_REPLAYABLE_AS("nd_free", nd_replay_free_handle(a); return);
    nd_fe_free_call(a);
}

void nd_fe_free_call(nd_array *a) {
    if (!a) return;
    if (nd_fe_arg_handle("nd_free", "a", a)) return;
    nd_fe_release(a);
}

/* Not inlined anywhere: its return address is the program's call site,
 * which keys the scope's replay (scope_replay.h). */
void nd_scope_begin(void) __attribute__((noinline));
void nd_scope_begin(void) {
    ND_API_GUARD_UNLESS(nd_replay_scope_begin_fast((uintptr_t)__builtin_return_address(0)));
    if (nd_runtime_ensure() != ND_OK) return;
    nd_scope_stack *s = stack_of_this_thread();
    if (!s) return;
    if (s->depth + 1 >= s->cap_depth) {
        int32_t cap = s->cap_depth ? s->cap_depth * 2 : 16;
        int64_t *marks = nd_realloc(s->marks, (size_t)cap * sizeof *marks);
        if (!marks) {
            nd_error_set(ND_ERR_OOM, "nd_scope_begin: out of host memory for the scope stack");
            return;
        }
        s->marks = marks;
        s->cap_depth = cap;
    }
    s->marks[++s->depth] = s->n_items;
    nd_replay_scope_begun(s, (uintptr_t)__builtin_return_address(0));
}

void nd_scope_end(void) {
    ND_API_REPLAYABLE_AS("nd_scope_end", nd_replay_scope_end(); return);
    nd_scope_end_close();
}

void nd_scope_end_close(void) {
    nd_scope_stack *s = nd_fe_my_scopes;
    if (!s || s->depth == 0) {
        nd_error_set(ND_ERR_STATE, "nd_scope_end: no scope is open on this thread (each "
                     "nd_scope_end needs a matching nd_scope_begin on the same thread; "
                     "nd_shutdown closes the scopes of the thread that calls it)");
        return;
    }
    close_scope(s);
    nd_fe_scope_names_closed(s->depth);
}

int32_t nd_fe_scope_depth(void) { return nd_fe_my_scopes ? nd_fe_my_scopes->depth : 0; }

nd_array *nd_keep(nd_array *a) {
    ND_API_REPLAYABLE_AS("nd_keep", return nd_replay_keep(a));
    return nd_scope_keep_handle(a);
}

nd_array *nd_scope_keep_handle(nd_array *a) {
    if (!a) return NULL;
    if (nd_fe_arg_handle("nd_keep", "a", a)) return NULL;
    nd_scope_stack *s = nd_fe_my_scopes;
    int32_t slot = a->scope_slot;
    if (slot == ND_SCOPE_OVERFLOW) {
        /* On the overflow list: another thread's, or already in an outer
         * scope; else out of the outermost scope (the caller owns it) or
         * into the next one out. */
        if (!s || a->scope_owner != s || s->depth == 0 || a->scope_depth < s->depth) return a;
        if (s->depth == 1) nd_runtime_untrack(a);
        else a->scope_depth = s->depth - 1;
        return a;
    }
    /* Untracked, another thread's, or already in an outer scope. */
    if (slot < 0 || !s || a->scope_owner != s || s->depth == 0 || slot < s->marks[s->depth])
        return a;
    if (s->depth == 1) {
        /* Out of the outermost scope: the caller owns it now. */
        s->items[slot] = NULL;
        a->scope_slot = -1;
        a->scope_owner = NULL;
        return a;
    }
    /* Swap it to the start of this depth's range and move the boundary past
     * it: it now belongs to depth d - 1. */
    int64_t m = s->marks[s->depth];
    nd_array *other = s->items[m];
    s->items[m] = a;
    a->scope_slot = (int32_t)m;
    s->items[slot] = other;
    if (other) other->scope_slot = slot;
    s->marks[s->depth] = m + 1;
    return a;
}
