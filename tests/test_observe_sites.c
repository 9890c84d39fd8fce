/* Names and call sites together: a program built with ND_DEBUG_CALLSITES
 * sees each call's file:line in Graphviz dumps beside the names it gave
 * (this file is compiled with -DND_DEBUG_CALLSITES, tests/meson.build). */
#include "common.h"

#include <unistd.h>

#ifndef ND_DEBUG_CALLSITES
#error "test_observe_sites.c must be compiled with -DND_DEBUG_CALLSITES (tests/meson.build)"
#endif

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    size_t got = fread(s, 1, (size_t)n, f);
    s[got] = 0;
    fclose(f);
    return s;
}

NDT_TEST(observe_sites, dumps_show_file_line_and_names) {
    nd_array *u = nd_ones(ND_FLOAT32, ND_SHAPE(16));
    cr_assert_eq(nd_set_name(u, "state"), ND_OK);
    nd_scope_begin_named("update");
    int line = __LINE__ + 1;
    nd_array *v = nd_keep(nd_mul(u, u));
    nd_scope_end();
    char path[128], want[160];
    snprintf(path, sizeof path, "/tmp/nd-observe-sites-%d.dot", (int)getpid());
    cr_assert_eq(nd_graph_dump_dot(path), ND_OK, "%s", nd_last_error());
    char *s = slurp(path);
    cr_assert(s);
    snprintf(want, sizeof want, "update\\nnd_mul (test_observe_sites.c:%d)\\n(16,) float32", line);
    cr_expect(strstr(s, want), "want %s in:\n%.1500s", want, s);
    cr_expect(strstr(s, "state\\nnd_ones (test_observe_sites.c:"), "the named array's maker: %.1500s", s);
    free(s);
    unlink(path);
    nd_free(v);
    nd_free(u);
}
