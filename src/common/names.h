/* Names a program gives its arrays (nd_set_name) and scopes
 * (nd_scope_begin_named), for the places that show the program to a
 * person: Graphviz dumps, ND_PROFILE rows, ND_TRACE events, NVTX ranges,
 * ND_LOG lines and error messages.
 *
 * Every name is interned: one copy per distinct text, kept for the life of
 * the process, so a pointer to it can stand where a static label does (a
 * plan step's profile row, a failed buffer's message) without an owner. A
 * program has a few dozen names; one that makes a new name per iteration
 * ("tile 1234") keeps each one.
 *
 * Scopes are numbered (uint32, 0 = no name) so that a node carries its
 * scope in four bytes of padding and recording reads one thread-local
 * number. Arrays' names are kept beside the buffers they name, in a table
 * keyed by the buffer's address, which the buffer leaves when it is freed
 * (it carries a flag saying it is in the table): a program that names
 * nothing pays one byte store per buffer.
 *
 * Everything here runs under the API lock (recording and planning), so the
 * tables need no lock of their own, except interning, which the executor
 * thread does too (the label of a value that could not be computed) and
 * which has a lock. */
#ifndef ND_COMMON_NAMES_H
#define ND_COMMON_NAMES_H

#include <stddef.h>
#include <stdint.h>

/* The interned copy of s (NULL for NULL, and without memory for it). */
const char *nd_name_intern(const char *s);

/* The number of scope path `path` ("solver/jacobi sweep"), interning it;
 * 0 for NULL or without memory. */
uint32_t nd_scope_id(const char *path);
/* The path of scope number `id`; NULL for 0 or an unknown number. */
const char *nd_scope_path(uint32_t id);

/* Array names: the name bound to `key` (a buffer), or NULL. bind with NULL
 * forgets it; both return 0 on success, -1 without memory. */
int nd_name_bind(const void *key, const char *name);
const char *nd_name_bound(const void *key);
void nd_name_forget(const void *key);

/* Whether any name was ever given since the process started: the walk of
 * each flush copies names only then. */
int nd_names_in_use(void);

/* What a value is called: "jacobi sweep/grid" (its scope and its array's
 * name), "grid", "jacobi sweep", or NULL when it has neither. Interned. */
const char *nd_name_join(uint32_t scope, const char *name);

#endif
