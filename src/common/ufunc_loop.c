/* The registry of user loops and their source form (ufunc_loop.h). */
#include "common/ufunc_loop.h"

#include <ctype.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "common/alloc.h"
#include "common/error.h"
#include "common/hash.h"

static const char *const type_names[ND_NUM_DTYPES] = {
    [ND_BOOL] = "bool",       [ND_INT8] = "int8_t",     [ND_INT16] = "int16_t",
    [ND_INT32] = "int32_t",   [ND_INT64] = "int64_t",   [ND_UINT8] = "uint8_t",
    [ND_UINT16] = "uint16_t", [ND_UINT32] = "uint32_t", [ND_UINT64] = "uint64_t",
    [ND_FLOAT32] = "float",   [ND_FLOAT64] = "double",
};

const char *nd_ufunc_type_name(nd_dtype t) { return nd_dtype_valid((int)t) ? type_names[t] : NULL; }

/* ------------------------------------------------------------- signature */

static const char *skip_ws(const char *p) {
    while (*p && isspace((unsigned char)*p)) p++;
    return p;
}

/* An identifier at p into out (cap bytes); the end, or NULL if none. */
static const char *ident(const char *p, char *out, size_t cap) {
    size_t n = 0;
    if (!(isalpha((unsigned char)*p) || *p == '_')) return NULL;
    while (isalnum((unsigned char)*p) || *p == '_') {
        if (n + 1 >= cap) return NULL;
        out[n++] = *p++;
    }
    out[n] = 0;
    return p;
}

static int type_of(const char *name) {
    for (int t = 0; t < ND_NUM_DTYPES; t++)
        if (type_names[t] && strcmp(type_names[t], name) == 0) return t;
    return -1;
}

static nd_status sig_error(const char *fn, const char *sig, const char *what) {
    return nd_error_set(ND_ERR_ARG,
                        "%s: signature \"%s\" does not parse: %s (write \"float(float x, float x0, "
                        "float s)\" or \"float x, float x0, float s\"; types: bool, int8_t .. "
                        "int64_t, uint8_t .. uint64_t, float, double)",
                        fn, sig, what);
}

nd_status nd_ufunc_parse_signature(const char *fn, const char *sig, nd_ufunc_loop *l) {
    char word[64], msg[200];
    const char *p = skip_ws(sig);
    int ret = -1;
    /* "RET(" first? */
    const char *q = ident(p, word, sizeof word);
    if (q && *skip_ws(q) == '(') {
        ret = type_of(word);
        if (ret < 0) {
            snprintf(msg, sizeof msg, "'%s' is not a type nd knows", word);
            return sig_error(fn, sig, msg);
        }
        p = skip_ws(q) + 1;
    }
    l->nargs = 0;
    for (;;) {
        p = skip_ws(p);
        if (ret >= 0 && *p == ')' && l->nargs == 0) return sig_error(fn, sig, "no parameters");
        q = ident(p, word, sizeof word);
        if (!q) return sig_error(fn, sig, l->nargs ? "a parameter type is missing after ','"
                                                    : "it does not start with a type");
        int t = type_of(word);
        if (t < 0) {
            snprintf(msg, sizeof msg, "'%s' is not a type nd knows", word);
            return sig_error(fn, sig, msg);
        }
        if (l->nargs == ND_UFUNC_MAX_ARGS) {
            snprintf(msg, sizeof msg, "more than %d parameters", ND_UFUNC_MAX_ARGS);
            return sig_error(fn, sig, msg);
        }
        p = skip_ws(q);
        q = ident(p, l->argnames[l->nargs], sizeof l->argnames[0]);
        if (!q) {
            snprintf(msg, sizeof msg, "parameter %d (%s) has no name", l->nargs + 1, word);
            return sig_error(fn, sig, msg);
        }
        if (type_of(l->argnames[l->nargs]) >= 0) {
            snprintf(msg, sizeof msg, "parameter name '%s' is a type", l->argnames[l->nargs]);
            return sig_error(fn, sig, msg);
        }
        for (int k = 0; k < l->nargs; k++)
            if (strcmp(l->argnames[k], l->argnames[l->nargs]) == 0) {
                snprintf(msg, sizeof msg, "parameter name '%s' is used twice", l->argnames[k]);
                return sig_error(fn, sig, msg);
            }
        l->args[l->nargs++] = (uint8_t)t;
        p = skip_ws(q);
        if (*p == ',') {
            p++;
            continue;
        }
        break;
    }
    if (ret >= 0) {
        if (*p != ')') return sig_error(fn, sig, "expected ')' after the parameters");
        p = skip_ws(p + 1);
    }
    if (*p) {
        snprintf(msg, sizeof msg, "unexpected '%.20s'", p);
        return sig_error(fn, sig, msg);
    }
    if (ret < 0) {
        nd_dtype r = (nd_dtype)l->args[0];
        for (int k = 1; k < l->nargs; k++) r = nd_promote(r, (nd_dtype)l->args[k]);
        ret = (int)r;
    }
    l->ret = (uint8_t)ret;
    return ND_OK;
}

/* -------------------------------------------------------------- registry */

typedef struct {
    nd_ufunc_loop loop;
    nd_ufunc_tile_fn tile;
} reg_entry;

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static reg_entry **reg;
static uint32_t reg_n, reg_cap;

static uint64_t content_hash(const nd_ufunc_loop *l) {
    uint64_t h = nd_hash_bytes(ND_HASH_SEED, l->name, strlen(l->name));
    h = nd_hash_u64(h, (uint64_t)l->nargs << 8 | l->ret);
    for (int k = 0; k < l->nargs; k++) {
        h = nd_hash_u64(h, l->args[k]);
        h = nd_hash_bytes(h, l->argnames[k], strlen(l->argnames[k]));
    }
    return nd_hash_bytes(h, l->body, strlen(l->body));
}

const nd_ufunc_loop *nd_ufunc_loop_register(const char *fn, const nd_ufunc_loop *l) {
    uint64_t h = content_hash(l);
    const nd_ufunc_loop *found = NULL;
    pthread_mutex_lock(&reg_lock);
    for (uint32_t i = 0; i < reg_n && !found; i++) {
        const nd_ufunc_loop *o = &reg[i]->loop;
        if (o->hash == h && strcmp(o->name, l->name) == 0 && strcmp(o->body, l->body) == 0 &&
            o->nargs == l->nargs && o->ret == l->ret &&
            memcmp(o->args, l->args, sizeof o->args) == 0 &&
            memcmp(o->argnames, l->argnames, sizeof o->argnames) == 0)
            found = o;
    }
    if (found) {
        pthread_mutex_unlock(&reg_lock);
        return found;
    }
    reg_entry *e = nd_calloc(1, sizeof *e);
    char *body = nd_strdup(l->body);
    reg_entry **grown = reg;
    if (e && body && reg_n == reg_cap) {
        uint32_t cap = reg_cap ? reg_cap * 2 : 16;
        grown = nd_realloc(reg, cap * sizeof *reg);
        if (grown) {
            reg = grown;
            reg_cap = cap;
        }
    }
    if (!e || !body || !grown) {
        pthread_mutex_unlock(&reg_lock);
        free(e);
        free(body);
        nd_error_set(ND_ERR_OOM, "%s: out of host memory registering '%s'", fn, l->name);
        return NULL;
    }
    e->loop = *l;
    e->loop.body = body;
    e->loop.hash = h;
    e->loop.id = reg_n + 1;
    reg[reg_n++] = e;
    pthread_mutex_unlock(&reg_lock);
    return &e->loop;
}

static reg_entry *entry_of(uint32_t id) { return id >= 1 && id <= reg_n ? reg[id - 1] : NULL; }

const nd_ufunc_loop *nd_ufunc_loop_get(uint32_t id) {
    pthread_mutex_lock(&reg_lock);
    reg_entry *e = entry_of(id);
    pthread_mutex_unlock(&reg_lock);
    return e ? &e->loop : NULL;
}

nd_ufunc_tile_fn nd_ufunc_loop_tile(uint32_t id) {
    pthread_mutex_lock(&reg_lock);
    reg_entry *e = entry_of(id);
    nd_ufunc_tile_fn f = e ? e->tile : NULL;
    pthread_mutex_unlock(&reg_lock);
    return f;
}

void nd_ufunc_loop_set_tile(uint32_t id, nd_ufunc_tile_fn fn) {
    pthread_mutex_lock(&reg_lock);
    reg_entry *e = entry_of(id);
    if (e) e->tile = fn;
    pthread_mutex_unlock(&reg_lock);
}

/* ---------------------------------------------------------------- source */

void nd_ufunc_fn_name(char *out, size_t cap, const nd_ufunc_loop *l) {
    snprintf(out, cap, "ndu_%s_%016" PRIx64, l->name, l->hash);
}

void nd_ufunc_emit_types(nd_strbuf *sb) {
    nd_strbuf_printf(sb,
                     "/* user functions (include/nd/ufunc.h): the C names of nd's dtypes */\n"
                     "#if defined(__CUDACC_RTC__)\n"
                     "typedef signed char int8_t; typedef short int16_t; typedef int int32_t;\n"
                     "typedef long long int64_t; typedef unsigned char uint8_t;\n"
                     "typedef unsigned short uint16_t; typedef unsigned int uint32_t;\n"
                     "typedef unsigned long long uint64_t;\n"
                     "#else\n#include <math.h>\n#include <stdint.h>\n#include <stdbool.h>\n#endif\n");
}

void nd_ufunc_emit_fn(nd_strbuf *sb, const nd_ufunc_loop *l, const char *qual) {
    char nm[ND_UFUNC_FN_NAME];
    nd_ufunc_fn_name(nm, sizeof nm, l);
    nd_strbuf_printf(sb, "%s %s %s(", qual, type_names[l->ret], nm);
    for (int k = 0; k < l->nargs; k++)
        nd_strbuf_printf(sb, "%s%s %s", k ? ", " : "", type_names[l->args[k]], l->argnames[k]);
    /* the body's first line is line 1 of a file named after the function */
    nd_strbuf_printf(sb, ") {\n#line 1 \"%s\"\n%s\n}\n", l->name, l->body);
}
