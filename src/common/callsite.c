/* Call sites (ND_DEBUG_CALLSITES): the setter nd/callsites.h calls before
 * each public call, and labels that carry a site ("nd_add (heat.c:42)")
 * for the nodes and handles a call makes, so a failure found later (at a
 * flush, at a read, at nd_shutdown) still says where the value was made.
 *
 * Labels are interned: a node's label is a pointer that must outlive the
 * node (a failed buffer keeps it), so each distinct (function, file, line)
 * is formatted once and kept for the life of the process. A program has
 * as many as it has call sites, a few KiB. Everything here runs under the
 * API lock (recording), so the table needs no lock of its own. */
#include "common/callsite.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/alloc.h"
#include "common/api_guard.h"
#include "common/hash.h"

void nd_callsite_(const char *file, int line) {
    ND_API_UNLOCKED(); /* per thread: the site of the call that follows */
    nd_api_tls.site_file = file;
    nd_api_tls.site_line = line;
}

const char *nd_site_basename(const char *file) {
    const char *slash = strrchr(file, '/');
    return slash ? slash + 1 : file;
}

typedef struct {
    const char *label, *file;
    int line;
    char *text; /* NULL: empty slot */
} site_label;

static site_label *table;
static size_t table_cap, table_n;

static size_t slot_of(const site_label *t, size_t cap, const char *label, const char *file, int line) {
    uint64_t h = nd_hash_u64(nd_hash_u64(nd_hash_u64(ND_HASH_SEED, (uintptr_t)label), (uintptr_t)file),
                             (uint64_t)line);
    size_t i = (size_t)h & (cap - 1);
    while (t[i].text && !(t[i].label == label && t[i].file == file && t[i].line == line)) i = (i + 1) & (cap - 1);
    return i;
}

static int grow(void) {
    size_t cap = table_cap ? table_cap * 2 : 64;
    site_label *t = nd_calloc(cap, sizeof *t);
    if (!t) return -1;
    for (size_t i = 0; i < table_cap; i++)
        if (table[i].text) t[slot_of(t, cap, table[i].label, table[i].file, table[i].line)] = table[i];
    free(table);
    table = t;
    table_cap = cap;
    return 0;
}

const char *nd_site_label_interned(const char *label) {
    const char *file = nd_api_site_file();
    const int line = nd_api_site_line();
    if (table_cap) {
        size_t i = slot_of(table, table_cap, label, file, line);
        if (table[i].text) return table[i].text;
    }
    /* Without memory for it the label goes without its site. */
    if ((table_n + 1) * 2 > table_cap && grow()) return label;
    const char *base = nd_site_basename(file);
    size_t n = strlen(label) + strlen(base) + 32;
    char *text = nd_malloc(n);
    if (!text) return label;
    snprintf(text, n, "%s (%s:%d)", label, base, line);
    table[slot_of(table, table_cap, label, file, line)] = (site_label){label, file, line, text};
    table_n++;
    return text;
}
