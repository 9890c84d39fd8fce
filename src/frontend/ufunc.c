/* User-defined elementwise functions (include/nd/ufunc.h): parsing and
 * checking a definition, NumPy's ufunc type resolution over its loops, and
 * recording a call as a MAP node that names the loop, which the kernel
 * builder turns into one ND_IR_UFUNC instruction fused with its neighbours. */
#include <stdio.h>
#include <string.h>

#include "common/ufunc_loop.h"
#include "frontend/frontend.h"

#define ND_UFUNC_MAX_LOOPS 32
#define UFUNC_MAGIC 0x75666e63u /* "ufnc" */

struct nd_ufunc {
    uint32_t magic; /* 0 once freed */
    int nargs;
    int n_loops;
    /* In resolution order. Registry entries never move or go away
     * (common/ufunc_loop.h), so a call reads them without the registry's lock. */
    const nd_ufunc_loop *loops[ND_UFUNC_MAX_LOOPS];
    char name[64];
};

static int check_ufunc(const char *fn, const nd_ufunc *u) {
    if (!u) {
        nd_error_set(ND_ERR_ARG, "%s: the ufunc is NULL (nd_ufunc_define returned NULL: see its error)",
                     fn);
        return -1;
    }
    if (u->magic != UFUNC_MAGIC) {
        nd_error_set(ND_ERR_ARG, "%s: the ufunc was freed (nd_ufunc_free) or is not one", fn);
        return -1;
    }
    return 0;
}

/* Registers the loop and has the backend compile it (define time, so that
 * a mistake is reported by the call that made it). */
static const nd_ufunc_loop *make_loop(const char *fn, const nd_ufunc_loop *l) {
    const nd_ufunc_loop *r = nd_ufunc_loop_register(fn, l);
    if (!r) return NULL;
    return nd_runtime_prepare_ufunc(fn, r) == ND_OK ? r : NULL;
}

/* "float(float, float)" */
static void describe_loop(char *out, size_t cap, const nd_ufunc_loop *l) {
    size_t n = (size_t)snprintf(out, cap, "%s(", nd_ufunc_type_name((nd_dtype)l->ret));
    for (int k = 0; k < l->nargs && n < cap; k++)
        n += (size_t)snprintf(out + n, cap - n, "%s%s", k ? ", " : "",
                              nd_ufunc_type_name((nd_dtype)l->args[k]));
    if (n < cap) snprintf(out + n, cap - n, ")");
}

static int parse(const char *fn, const char *signature, const char *body, nd_ufunc_loop *l) {
    if (!signature) {
        nd_error_null_input(fn, "signature");
        return -1;
    }
    if (!body) {
        nd_error_null_input(fn, "body");
        return -1;
    }
    if (nd_ufunc_parse_signature(fn, signature, l) != ND_OK) return -1;
    l->body = (char *)body;
    return 0;
}

nd_ufunc *nd_ufunc_define(const char *name, const char *signature, const char *body) {
    ND_API_GUARD();
    const char *fn = "nd_ufunc_define";
    if (!name) {
        nd_error_null_input(fn, "name");
        return NULL;
    }
    size_t len = strlen(name);
    int ok = len > 0 && len < 64 && !(name[0] >= '0' && name[0] <= '9');
    for (size_t i = 0; ok && i < len; i++) {
        char c = name[i];
        ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    }
    if (!ok) {
        nd_error_set(ND_ERR_ARG, "%s: name \"%.80s\" is not a C identifier of 1 to 63 characters "
                     "(letters, digits, '_'; it names the function in compiler messages)", fn, name);
        return NULL;
    }
    nd_ufunc_loop l = {0};
    snprintf(l.name, sizeof l.name, "%s", name);
    if (parse(fn, signature, body, &l)) return NULL;
    if (nd_runtime_ensure() != ND_OK) return NULL;
    const nd_ufunc_loop *r = make_loop(fn, &l);
    if (!r) return NULL;
    nd_ufunc *u = nd_calloc(1, sizeof *u);
    if (!u) {
        nd_error_set(ND_ERR_OOM, "%s: out of host memory for '%s'", fn, name);
        return NULL;
    }
    u->magic = UFUNC_MAGIC;
    u->nargs = r->nargs;
    u->n_loops = 1;
    u->loops[0] = r;
    snprintf(u->name, sizeof u->name, "%s", name);
    return u;
}

nd_status nd_ufunc_add_loop(nd_ufunc *u, const char *signature, const char *body) {
    ND_API_GUARD();
    const char *fn = "nd_ufunc_add_loop";
    if (check_ufunc(fn, u)) return nd_last_status();
    const nd_ufunc_loop *first = u->loops[0];
    nd_ufunc_loop l = {0};
    snprintf(l.name, sizeof l.name, "%s", u->name);
    if (parse(fn, signature, body ? body : first->body, &l)) return nd_last_status();
    if (l.nargs != u->nargs)
        return nd_error_set(ND_ERR_ARG, "%s: '%s' takes %d parameters, the signature \"%s\" has %d "
                            "(every loop of a ufunc takes the same number)",
                            fn, u->name, u->nargs, signature, l.nargs);
    for (int i = 0; i < u->n_loops; i++) {
        const nd_ufunc_loop *o = u->loops[i];
        if (memcmp(o->args, l.args, sizeof l.args) == 0) {
            char d[200];
            describe_loop(d, sizeof d, o);
            return nd_error_set(ND_ERR_ARG, "%s: '%s' already has a loop for these parameter types "
                                "(%s); loops must differ in their parameter types", fn, u->name, d);
        }
    }
    if (u->n_loops == ND_UFUNC_MAX_LOOPS)
        return nd_error_set(ND_ERR_ARG, "%s: '%s' has %d loops, the most a ufunc has", fn, u->name,
                            ND_UFUNC_MAX_LOOPS);
    if (nd_runtime_ensure() != ND_OK) return nd_last_status();
    const nd_ufunc_loop *r = make_loop(fn, &l);
    if (!r) return nd_last_status();
    u->loops[u->n_loops++] = r;
    return ND_OK;
}

int nd_ufunc_nargs(const nd_ufunc *u) {
    ND_API_GUARD();
    return u && u->magic == UFUNC_MAGIC ? u->nargs : -1;
}

void nd_ufunc_free(nd_ufunc *u) {
    ND_API_GUARD();
    if (!u || u->magic != UFUNC_MAGIC) return;
    u->magic = 0;
    free(u);
}

/* ------------------------------------------------------- type resolution */

/* np.can_cast(a, t, "safe"), NEP 50 for weak scalars: a Python int fits any
 * integer or float parameter (its value is checked after), a Python float
 * a float one. */
static int fits(const nd_array *a, nd_dtype t) {
    nd_dtype_kind k = nd_dtype_kind_of(t);
    if (a->weak == ND_WEAK_INT) return k != ND_KIND_BOOL;
    if (a->weak == ND_WEAK_FLOAT) return k == ND_KIND_FLOAT;
    return nd_promote(a->dtype, t) == t;
}

static const nd_ufunc_loop *resolve(const char *fn, const nd_ufunc *u, nd_array *const *args) {
    for (int i = 0; i < u->n_loops; i++) {
        const nd_ufunc_loop *l = u->loops[i];
        int ok = 1;
        for (int k = 0; k < u->nargs && ok; k++) ok = fits(args[k], (nd_dtype)l->args[k]);
        if (ok) return l;
    }
    char have[200], loops[600];
    size_t n = 0;
    for (int k = 0; k < u->nargs && n < sizeof have; k++)
        n += (size_t)snprintf(have + n, sizeof have - n, "%s%s%s", k ? ", " : "",
                              args[k]->weak == ND_WEAK_INT     ? "Python int "
                              : args[k]->weak == ND_WEAK_FLOAT ? "Python float "
                                                               : "",
                              args[k]->weak ? "" : nd_dtype_name(args[k]->dtype));
    n = 0;
    for (int i = 0; i < u->n_loops && n < sizeof loops; i++) {
        char d[200];
        describe_loop(d, sizeof d, u->loops[i]);
        n += (size_t)snprintf(loops + n, sizeof loops - n, "%s%s", i ? ", " : "", d);
    }
    nd_error_set(ND_ERR_DTYPE, "%s: '%s' has no loop for inputs (%s): its loops are %s, and an input "
                 "must cast safely to a loop's parameter (add a loop with nd_ufunc_add_loop, or "
                 "convert the inputs with nd_astype)", fn, u->name, have, loops);
    return NULL;
}

nd_array *nd_ufunc_call(nd_ufunc *u, int n, nd_array *const *args) {
    ND_API_GUARD();
    const char *fn = "nd_ufunc_call";
    static const char *const names[ND_UFUNC_MAX_ARGS] = {"args[0]", "args[1]", "args[2]", "args[3]"};
    if (check_ufunc(fn, u)) return NULL;
    if (n != u->nargs) {
        nd_error_set(ND_ERR_ARG, "%s: '%s' takes %d inputs, got n = %d", fn, u->name, u->nargs, n);
        return NULL;
    }
    if (!args) {
        nd_error_null_input(fn, "args");
        return NULL;
    }
    for (int k = 0; k < n; k++)
        if (nd_fe_arg(fn, names[k], args[k])) return NULL;
    if (nd_runtime_ensure() != ND_OK) return NULL;
    const nd_ufunc_loop *l = resolve(fn, u, args);
    if (!l) return NULL;
    for (int k = 0; k < n; k++)
        if (args[k]->weak && nd_fe_weak_fits(fn, args[k], (nd_dtype)l->args[k])) return NULL;
    int ndim;
    int64_t shape[ND_MAX_DIMS];
    size_t nbytes;
    nd_dtype rt = (nd_dtype)l->ret;
    if (nd_fe_broadcast(fn, n, args, &ndim, shape)) return NULL;
    if (nd_fe_nbytes(fn, ndim, shape, rt, &nbytes)) return NULL;
    nd_fe_rec r;
    if (nd_fe_begin(&r, fn, ND_NODE_MAP, ND_UFUNC_MAP_OP, n, rt, rt, ndim, shape, nbytes)) return NULL;
    r.node->u.ufunc.loop = l->id;
    for (int k = 0; k < n; k++) nd_fe_set_input(r.node, k, args[k], (nd_dtype)l->args[k], ndim, shape);
    return nd_runtime_track(nd_fe_end(&r, ndim, shape));
}
