/* Named scopes' bookkeeping, which scope.c tells when scopes close. */
#ifndef ND_FRONTEND_NAMING_H
#define ND_FRONTEND_NAMING_H

#include <stdint.h>

/* The thread's scopes now reach only `depth` (nd_scope_end, or 0 when
 * they all closed): the names of deeper scopes end. */
void nd_fe_scope_names_closed(int32_t depth);

#endif
