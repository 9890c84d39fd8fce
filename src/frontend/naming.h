/* Named scopes' bookkeeping, which scope.c tells when scopes close. */
#ifndef ND_FRONTEND_NAMING_H
#define ND_FRONTEND_NAMING_H

#include <stdint.h>

/* Named scopes open on this thread (naming.c's stack). */
extern _Thread_local int32_t nd_fe_n_named __attribute__((visibility("hidden"), tls_model("initial-exec")));
void nd_fe_scope_names_closed_slow(int32_t depth);
/* The thread's scopes now reach only `depth` (nd_scope_end, or 0 when
 * they all closed): the names of deeper scopes end. Inline: one load at
 * every nd_scope_end of a program that names none. */
static inline void nd_fe_scope_names_closed(int32_t depth) {
    if (nd_fe_n_named) nd_fe_scope_names_closed_slow(depth);
}

#endif
