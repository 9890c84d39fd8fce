/* Handle lifetime: reference counts and scopes.
 *
 * A scope owns the creation reference of each handle made inside it. The
 * handles live on one stack (nd_rt.scope_items); scope_marks[d] is where
 * depth d starts (d = 1..scope_depth). A handle remembers its position
 * (scope_slot) so that a user nd_free that kills it clears its entry and the
 * scope end does not free it again, and so nd_keep is O(1). */
#include <stdlib.h>

#include "frontend/frontend.h"
#include "common/alloc.h"

nd_array *nd_runtime_track(nd_array *a) {
    if (!a || nd_rt.scope_depth == 0) return a;
    if (nd_rt.n_scope_items == nd_rt.cap_scope_items) {
        int64_t cap = nd_rt.cap_scope_items ? nd_rt.cap_scope_items * 2 : 256;
        nd_array **items = nd_realloc(nd_rt.scope_items, (size_t)cap * sizeof *items);
        if (!items) return a; /* stays alive, untracked: a leak, not a crash */
        nd_rt.scope_items = items;
        nd_rt.cap_scope_items = cap;
    }
    a->scope_slot = (int32_t)nd_rt.n_scope_items;
    nd_rt.scope_items[nd_rt.n_scope_items++] = a;
    return a;
}

nd_array *nd_retain(nd_array *a) {
    if (a) a->refs++;
    return a;
}

void nd_free(nd_array *a) { nd_fe_release(a); }

void nd_scope_begin(void) {
    if (nd_runtime_ensure() != ND_OK) return;
    if (nd_rt.scope_depth + 1 >= nd_rt.cap_scope_depth) {
        int32_t cap = nd_rt.cap_scope_depth ? nd_rt.cap_scope_depth * 2 : 16;
        int64_t *marks = nd_realloc(nd_rt.scope_marks, (size_t)cap * sizeof *marks);
        if (!marks) {
            nd_error_set(ND_ERR_OOM, "nd_scope_begin: out of host memory for the scope stack");
            return;
        }
        nd_rt.scope_marks = marks;
        nd_rt.cap_scope_depth = cap;
    }
    nd_rt.scope_marks[++nd_rt.scope_depth] = nd_rt.n_scope_items;
}

void nd_scope_end(void) {
    if (nd_rt.scope_depth == 0) {
        nd_error_set(ND_ERR_STATE, "nd_scope_end: no scope is open (each nd_scope_end needs a "
                     "matching nd_scope_begin)");
        return;
    }
    int64_t start = nd_rt.scope_marks[nd_rt.scope_depth];
    /* Newest first, like unwinding; entries may be NULL (freed by the user
     * or kept). nd_fe_release cannot add entries, so the bound is stable. */
    for (int64_t i = nd_rt.n_scope_items - 1; i >= start; i--) {
        nd_array *a = nd_rt.scope_items[i];
        if (!a) continue;
        nd_rt.scope_items[i] = NULL;
        a->scope_slot = -1;
        nd_fe_release(a);
    }
    nd_rt.n_scope_items = start;
    nd_rt.scope_depth--;
}

nd_array *nd_keep(nd_array *a) {
    if (!a) return NULL;
    int32_t s = a->scope_slot;
    int32_t d = nd_rt.scope_depth;
    if (s < 0 || d == 0 || s < nd_rt.scope_marks[d]) return a; /* untracked or already outer */
    if (d == 1) {
        /* Out of the outermost scope: the caller owns it now. */
        nd_rt.scope_items[s] = NULL;
        a->scope_slot = -1;
        return a;
    }
    /* Swap it to the start of this depth's range and move the boundary past
     * it: it now belongs to depth d - 1. */
    int64_t m = nd_rt.scope_marks[d];
    nd_array *other = nd_rt.scope_items[m];
    nd_rt.scope_items[m] = a;
    a->scope_slot = (int32_t)m;
    nd_rt.scope_items[s] = other;
    if (other) other->scope_slot = s;
    nd_rt.scope_marks[d] = m + 1;
    return a;
}
