/* Interned names, scope numbers and array names (see names.h). */
#include "common/names.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "common/alloc.h"
#include "common/grow.h"
#include "common/hash.h"

/* ------------------------------------------------------------ strings */

static char **strings; /* open addressing, cap a power of two */
static size_t strings_cap, strings_n;
static int in_use;

static size_t string_slot(char **t, size_t cap, const char *s, uint64_t h) {
    size_t i = (size_t)h & (cap - 1);
    while (t[i] && strcmp(t[i], s) != 0) i = (i + 1) & (cap - 1);
    return i;
}

static uint64_t string_hash(const char *s) { return nd_hash_bytes(ND_HASH_SEED, s, strlen(s)); }

static const char *intern_locked(const char *s) {
    uint64_t h = string_hash(s);
    if (strings_cap) {
        size_t i = string_slot(strings, strings_cap, s, h);
        if (strings[i]) return strings[i];
    }
    if ((strings_n + 1) * 2 > strings_cap) {
        size_t cap = strings_cap ? strings_cap * 2 : 64;
        char **t = nd_calloc(cap, sizeof *t);
        if (!t) return NULL;
        for (size_t i = 0; i < strings_cap; i++)
            if (strings[i]) t[string_slot(t, cap, strings[i], string_hash(strings[i]))] = strings[i];
        free(strings);
        strings = t;
        strings_cap = cap;
    }
    char *copy = nd_strdup(s);
    if (!copy) return NULL;
    strings[string_slot(strings, strings_cap, s, h)] = copy;
    strings_n++;
    __atomic_store_n(&in_use, 1, __ATOMIC_RELAXED);
    return copy;
}

/* The executor thread interns too (the label of a value that failed),
 * without the API lock: the string table has a lock of its own. */
static pthread_mutex_t strings_lock = PTHREAD_MUTEX_INITIALIZER;

const char *nd_name_intern(const char *s) {
    if (!s) return NULL;
    pthread_mutex_lock(&strings_lock);
    const char *r = intern_locked(s);
    pthread_mutex_unlock(&strings_lock);
    return r;
}

int nd_names_in_use(void) { return __atomic_load_n(&in_use, __ATOMIC_RELAXED); }

/* ------------------------------------------------------------ scopes */

/* Scope number k + 1 is paths[k]. A program opens a handful of distinct
 * scope names, so finding one's number is a short scan. */
static const char **paths;
static uint32_t paths_n, paths_cap;

uint32_t nd_scope_id(const char *path) {
    const char *p = nd_name_intern(path);
    if (!p) return 0;
    for (uint32_t k = paths_n; k-- > 0;)
        if (paths[k] == p) return k + 1;
    if (paths_n == UINT32_MAX - 1 || !nd_grow((void **)&paths, &paths_cap, paths_n + 1, sizeof *paths)) return 0;
    paths[paths_n++] = p;
    return paths_n;
}

const char *nd_scope_path(uint32_t id) { return id && id <= paths_n ? paths[id - 1] : NULL; }

/* ------------------------------------------------------------ arrays */

/* (key, name) pairs: named buffers are few, and only buffers flagged as
 * named are looked up. */
typedef struct {
    const void *key;
    const char *name;
} binding;

static binding *bindings;
static uint32_t bindings_n, bindings_cap;

static binding *find(const void *key) {
    for (uint32_t i = 0; i < bindings_n; i++)
        if (bindings[i].key == key) return &bindings[i];
    return NULL;
}

int nd_name_bind(const void *key, const char *name) {
    if (!name) {
        nd_name_forget(key);
        return 0;
    }
    const char *n = nd_name_intern(name);
    if (!n) return -1;
    binding *b = find(key);
    if (b) {
        b->name = n;
        return 0;
    }
    if (!nd_grow((void **)&bindings, &bindings_cap, bindings_n + 1, sizeof *bindings)) return -1;
    bindings[bindings_n++] = (binding){key, n};
    return 0;
}

const char *nd_name_bound(const void *key) {
    const binding *b = find(key);
    return b ? b->name : NULL;
}

void nd_name_forget(const void *key) {
    binding *b = find(key);
    if (b) *b = bindings[--bindings_n];
}

/* ------------------------------------------------------------ joined */

const char *nd_name_join(uint32_t scope, const char *name) {
    const char *path = nd_scope_path(scope);
    if (!path || !name) return path ? path : name;
    char buf[512];
    snprintf(buf, sizeof buf, "%s/%s", path, name);
    const char *j = nd_name_intern(buf);
    return j ? j : name;
}
