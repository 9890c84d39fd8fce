/* nd_set_name, nd_get_name and nd_scope_begin_named: names a program gives
 * its arrays and the work of a scope, which dumps, profiles, traces, NVTX
 * ranges, logs and error messages show (common/names.h holds them).
 *
 * A named scope sets the thread's scope number (nd_api_tls.scope), which
 * every node recorded copies (graph.c): recording pays one thread-local
 * load whether or not names are used. Nested named scopes make a path,
 * "solver/jacobi sweep"; an unnamed scope inside a named one keeps its
 * name. The stack of names is per thread, like scopes, and short: deeper
 * named scopes than it holds still work as scopes and keep the name of the
 * deepest one it holds. */
#include "frontend/naming.h"

#include <stdio.h>
#include <string.h>

#include "common/api_guard.h"
#include "common/names.h"
#include "frontend/frontend.h"

#define NAMED_DEPTH 32
#define NAME_MAX_LEN 200

typedef struct {
    int32_t depth;  /* scope depth it opened */
    uint32_t outer; /* scope number before it */
} named_scope;

static _Thread_local named_scope named[NAMED_DEPTH];
/* Read at every nd_scope_end: initial-exec, as the API guard's state (a
 * __tls_get_addr call otherwise). */
_Thread_local int32_t nd_fe_n_named __attribute__((tls_model("initial-exec")));

void nd_fe_scope_names_closed_slow(int32_t depth) {
    while (nd_fe_n_named > 0 && named[nd_fe_n_named - 1].depth > depth)
        nd_api_tls.scope = named[--nd_fe_n_named].outer;
}

static int check_name(const char *fn, const char *name) {
    size_t len = strlen(name);
    if (len > NAME_MAX_LEN) {
        nd_error_set(ND_ERR_ARG, "%s: name of %zu characters is too long (at most %d)", fn, len, NAME_MAX_LEN);
        return -1;
    }
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)name[i] < 0x20 || name[i] == 0x7f || name[i] == '"' || name[i] == '\\') {
            nd_error_set(ND_ERR_ARG, "%s: name \"%.40s\" holds a control character, '\"' or '\\' at %zu (use "
                         "printable text without them: names appear in dumps, traces and messages)", fn, name, i);
            return -1;
        }
    return 0;
}

void nd_scope_begin_named(const char *name) {
    ND_API_GUARD();
    static const char fn[] = "nd_scope_begin_named";
    if (name && check_name(fn, name)) return;
    int32_t before = nd_fe_scope_depth();
    nd_scope_begin();
    int32_t depth = nd_fe_scope_depth();
    if (depth != before + 1 || !name || !name[0]) return;
    if (nd_fe_n_named == NAMED_DEPTH) return; /* open, under the outer name */
    const char *outer = nd_scope_path(nd_api_tls.scope);
    char path[4 * NAME_MAX_LEN];
    if (outer) snprintf(path, sizeof path, "%s/%s", outer, name);
    else snprintf(path, sizeof path, "%s", name);
    uint32_t id = nd_scope_id(path);
    if (!id) {
        nd_error_set(ND_ERR_OOM, "%s: out of host memory for the scope's name (the scope is open, unnamed)", fn);
        return;
    }
    named[nd_fe_n_named++] = (named_scope){depth, nd_api_tls.scope};
    nd_api_tls.scope = id;
}

nd_status nd_set_name(nd_array *a, const char *name) {
    ND_API_GUARD();
    static const char fn[] = "nd_set_name";
    if (nd_fe_arg(fn, "a", a)) return nd_last_status();
    if (name && check_name(fn, name)) return ND_ERR_ARG;
    nd_buffer *b = a->buf;
    if (!name || !name[0]) {
        if (b->named) nd_name_forget(b);
        b->named = 0;
        return ND_OK;
    }
    if (nd_name_bind(b, name))
        return nd_error_set(ND_ERR_OOM, "%s: out of host memory for the name \"%s\"", fn, name);
    b->named = 1;
    return ND_OK;
}

const char *nd_get_name(const nd_array *a) {
    ND_API_GUARD();
    if (nd_fe_arg("nd_get_name", "a", a)) return NULL;
    return a->buf->named ? nd_name_bound(a->buf) : NULL;
}

const char *nd_fe_name_note(const nd_array *a, char *buf, size_t cap) {
    const char *name = a && a->buf && a->buf->named ? nd_name_bound(a->buf) : NULL;
    if (!name) return "";
    snprintf(buf, cap, " ('%s')", name);
    return buf;
}
