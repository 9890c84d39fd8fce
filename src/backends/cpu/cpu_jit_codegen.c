/* Prepared kernel -> C source for the JIT (cpu_jit.h).
 *
 * The source is common/element_fns.h and cpu_scalar.h followed by one function that walks a work
 * item row by row (the prepared axes, after coalescing) and each row in
 * strips of ND_CPU_TILE elements. Per strip, one loop evaluates the body
 * per element in registers: loads, parameters and index maps are
 * recomputed where used, every op is the interpreter's element function in
 * the interpreter's compute dtype with its casts, so the bits agree. The
 * vectorised transcendentals of cpu_sleef.c work on arrays, so an op that
 * needs one ends the loop: its operand is written to a strip, the function
 * is called on the strip (through the helper table), and the next loop
 * reads its result; other values that live across such a call go through
 * strips too. Strips live in the worker's scratch. Large contiguous outputs
 * are gathered in a strip and written with the interpreter's non-temporal
 * store, as the interpreter does.
 *
 * Strides and offsets are constants of the source, so the compiler sees
 * unit strides and broadcasts; the extents are an argument, read once per
 * work item and row, so that the source (and the compiled object) is the
 * same for every length (cpu_jit.c keys it without them). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cpu/cpu_jit.h"
#include "common/alloc.h"
#include "common/error.h"
#include "common/strbuf.h"



static const char *const sfx[ND_NUM_DTYPES] = {"BOOL", "I8",  "I16", "I32",  "I64", "U8", "U16",
                                               "U32",  "U64", "F16", "BF16", "F32", "F64",
                                               "C64",  "C128"};

/* Room per strip: a strip of the widest dtype plus 320 bytes, as the
 * interpreter's registers, so strips do not sit 4 KiB apart. */
#define STRIP_BYTES ND_CPU_REG_BYTES

/* Ops computed by a vectorised array function of cpu_sleef.c. */
static int is_vmath(int op, int t) { return nd_cpu_op_is_array_fn(op, t); }

typedef struct {
    const nd_kernel *k;
    const cpu_prep *p;
    nd_strbuf *b;
    int n;          /* instructions */
    char *need;     /* value reaches a store */
    char *call;     /* computed by a helper call */
    char *strip;    /* defined in one loop, used in a later one: kept in x<j> */
    int *seg;       /* loop that defines the value (calls: the loop after the call) */
    int *last;      /* last loop that uses the value */
    char *emitted;  /* value is a local of the loop being printed */
    int *param_no;  /* PARAM instructions: cell in the params array */
    int n_param_cells; /* the cell after them: the bad-index record (gathers) */
    int gathers;    /* the kernel gathers */
    int *helper;    /* call instructions: helper index */
    int n_helpers;
    nd_cpu_jit_helper *helpers;
    int n_strips;
    int streamed;   /* contiguous outputs go through strips y<s> */
} gen;

static int is_remat(const cpu_inst *pi) {
    return pi->kind == PI_LOAD || pi->kind == PI_PARAM || pi->kind == PI_INDEX;
}

/* " + e * st" for the inner stride. */
static void put_inner(nd_strbuf *b, int64_t st) {
    if (st == 1) nd_strbuf_printf(b, " + e");
    else if (st != 0) nd_strbuf_printf(b, " + e * (%lld)", (long long)st);
}

static int store_streamed(const gen *g, int s) {
    return g->streamed && g->p->stores[s].at.st[g->p->ndim - 1] == 1;
}

/* The operand expression: value o converted to dtype `want`. */
static void put_operand(gen *g, int o, int want) {
    int have = g->p->insts[o].dtype;
    if (have == want) nd_strbuf_printf(g->b, "v%d", o);
    else nd_strbuf_printf(g->b, "NDS_CAST(%s, %s, v%d)", sfx[have], sfx[want], o);
}

/* Makes value o a local of the current loop (v<o>). */
static void materialise(gen *g, int o) {
    if (g->emitted[o]) return;
    const cpu_inst *pi = &g->p->insts[o];
    nd_strbuf *b = g->b;
    const char *t = sfx[pi->dtype];
    if (pi->kind == PI_LOAD) {
        const cpu_access *a = &g->p->loads[pi->aux];
        nd_strbuf_printf(b, "            const %s_T v%d = a%d[oa%d", t, o, pi->aux, pi->aux);
        put_inner(b, a->st[g->p->ndim - 1]);
        nd_strbuf_printf(b, "];\n");
    } else if (pi->kind == PI_PARAM) {
        nd_strbuf_printf(b, "            const %s_T v%d = p%d;\n", t, o, o);
    } else if (pi->kind == PI_INDEX) {
        nd_strbuf_printf(b, "            const int64_t v%d = oi%d", o, pi->aux);
        put_inner(b, g->p->indices[pi->aux].st[g->p->ndim - 1]);
        nd_strbuf_printf(b, ";\n");
    } else if (g->call[o]) {
        if (pi->cdtype == pi->dtype) nd_strbuf_printf(b, "            const %s_T v%d = c%d[i];\n", t, o, o);
        else
            nd_strbuf_printf(b, "            const %s_T v%d = NDS_CAST(%s, %s, c%d[i]);\n", t, o,
                sfx[pi->cdtype], t, o);
    } else {
        nd_strbuf_printf(b, "            const %s_T v%d = x%d[i];\n", t, o, o); /* from an earlier loop */
    }
    g->emitted[o] = 1;
}

/* v<j> = a gather: never read through an index outside its axis (the
 * value is 0 and the point goes to the kernel's bad-index record, helper
 * 1, with the first bad axis, as the interpreter's gather_tile does). */
static void put_gather(gen *g, int j) {
    const cpu_inst *pi = &g->p->insts[j];
    nd_strbuf *b = g->b;
    const char *t = sfx[pi->dtype];
    int K = pi->n_ops;
    for (int q = 0; q < K; q++) {
        int x = pi->ops[q];
        materialise(g, x);
        nd_strbuf_printf(b, "            const int64_t w%d_%d = v%d", j, q, x);
        if (pi->gwrap) nd_strbuf_printf(b, " + (v%d < 0 ? (int64_t)%lld : 0)", x, (long long)pi->gsize[q]);
        nd_strbuf_printf(b, ";\n");
    }
    nd_strbuf_printf(b, "            %s_T v%d;\n            if (__builtin_expect(", t, j);
    for (int q = 0; q < K; q++)
        nd_strbuf_printf(b, "%s(uint64_t)w%d_%d < (uint64_t)%lld", q ? " && " : "", j, q, (long long)pi->gsize[q]);
    nd_strbuf_printf(b, ", 1)) {\n                v%d = a%d[oa%d", j, pi->aux, pi->aux);
    put_inner(b, g->p->loads[pi->aux].st[g->p->ndim - 1]);
    for (int q = 0; q < K; q++) nd_strbuf_printf(b, " + w%d_%d * (%lld)", j, q, (long long)pi->gstride[q]);
    nd_strbuf_printf(b, "];\n            } else {\n                memset(&v%d, 0, sizeof v%d);\n", j, j);
    /* the first bad axis q: its index as given, and gather | q << 16 */
    nd_strbuf_printf(b, "                int64_t bad_v = v%d;\n                int32_t bad_g = %d;\n", pi->ops[0],
                     pi->gather);
    for (int q = K - 1; q >= 1; q--) /* downwards: the first bad axis writes last */
        nd_strbuf_printf(b,
                         "                if ((uint64_t)w%d_0 < (uint64_t)%lld && (uint64_t)w%d_%d >= (uint64_t)%lld) "
                         "{ bad_v = v%d; bad_g = %d; }\n",
                         j, (long long)pi->gsize[0], j, q, (long long)pi->gsize[q], pi->ops[q], pi->gather | q << 16);
    nd_strbuf_printf(b, "                ((ndj_bad)helpers[1])(bad_rec, f + s + i, bad_v, bad_g);\n            }\n");
    g->emitted[j] = 1;
}

/* v<j> = the op of instruction j on its (materialised) operands. */
static void put_op(gen *g, int j) {
    const cpu_inst *pi = &g->p->insts[j];
    const nd_ir_inst *in = &g->k->insts[j];
    nd_strbuf *b = g->b;
    if (pi->kind == PI_GATHER) {
        put_gather(g, j);
        return;
    }
    for (int q = 0; q < pi->n_ops; q++) materialise(g, pi->ops[q]);
    nd_strbuf_printf(b, "            const %s_T v%d = ", sfx[pi->dtype], j);
    if (pi->cdtype != pi->dtype) nd_strbuf_printf(b, "NDS_CAST(%s, %s, ", sfx[pi->cdtype], sfx[pi->dtype]);
    if (pi->kind == PI_UFUNC) {
        /* the user's function, pasted above the kernel (put_ufuncs) */
        char nm[ND_UFUNC_FN_NAME];
        nd_ufunc_fn_name(nm, sizeof nm, nd_ufunc_loop_get(in->ufunc));
        nd_strbuf_printf(b, "(%s_T)%s(", sfx[pi->dtype], nm);
        for (int q = 0; q < pi->n_ops; q++) {
            nd_strbuf_printf(b, q ? ", " : "");
            if (pi->in_dtype[q] == ND_BOOL) nd_strbuf_printf(b, "(v%d != 0)", pi->ops[q]);
            else put_operand(g, pi->ops[q], pi->in_dtype[q]);
        }
        nd_strbuf_printf(b, ")");
    } else if (in->op == ND_OP_CAST) {
        nd_strbuf_printf(b, "NDS_CAST(%s, %s, v%d)", sfx[g->p->insts[pi->ops[0]].dtype], sfx[pi->dtype],
            pi->ops[0]);
    } else if (in->op == ND_OP_WHERE) {
        nd_strbuf_printf(b, "(");
        put_operand(g, pi->ops[0], pi->in_dtype[0]);
        nd_strbuf_printf(b, " ? ");
        put_operand(g, pi->ops[1], pi->in_dtype[1]);
        nd_strbuf_printf(b, " : ");
        put_operand(g, pi->ops[2], pi->in_dtype[2]);
        nd_strbuf_printf(b, ")");
    } else {
        /* comparisons name their operands' dtype, the rest their result's */
        int fdt = nd_op_computes_in_operands((nd_op)in->op) ? pi->in_dtype[0] : pi->cdtype;
        nd_strbuf_printf(b, "nds_%s_%s(", nd_op_label((nd_op)in->op), sfx[fdt]);
        for (int q = 0; q < pi->n_ops; q++) {
            if (q) nd_strbuf_printf(b, ", ");
            put_operand(g, pi->ops[q], pi->in_dtype[q]);
        }
        nd_strbuf_printf(b, ")");
    }
    if (pi->cdtype != pi->dtype) nd_strbuf_printf(b, ")");
    nd_strbuf_printf(b, ";\n");
    g->emitted[j] = 1;
}

/* One loop over the strip: loop number `s`, ending with the operands of
 * call `callj` (or the stores when callj < 0). */
static void put_loop(gen *g, int s, int callj) {
    const cpu_prep *p = g->p;
    nd_strbuf *b = g->b;
    memset(g->emitted, 0, (size_t)g->n);
    nd_strbuf_printf(b, "        for (int64_t i = 0; i < n; i++) {\n");
    nd_strbuf_printf(b, "            const int64_t e = s + i;\n");
    nd_strbuf_printf(b, "            (void)e;\n");
    for (int j = 0; j < g->n; j++) {
        const cpu_inst *pi = &p->insts[j];
        if (!g->need[j] || g->call[j] || is_remat(pi) || g->seg[j] != s) continue;
        put_op(g, j);
        if (g->strip[j]) nd_strbuf_printf(b, "            x%d[i] = v%d;\n", j, j);
    }
    if (callj >= 0) {
        const cpu_inst *pi = &p->insts[callj];
        for (int q = 0; q < pi->n_ops; q++) {
            materialise(g, pi->ops[q]);
            nd_strbuf_printf(b, "            ci%d_%d[i] = ", callj, q);
            put_operand(g, pi->ops[q], pi->in_dtype[q]);
            nd_strbuf_printf(b, ";\n");
        }
    } else {
        for (int k = 0; k < p->n_stores; k++) {
            const cpu_store *st = &p->stores[k];
            materialise(g, st->value);
            if (store_streamed(g, k)) {
                nd_strbuf_printf(b, "            y%d[i] = ", k);
            } else {
                nd_strbuf_printf(b, "            s%d[os%d", k, k);
                put_inner(b, st->at.st[p->ndim - 1]);
                nd_strbuf_printf(b, "] = ");
            }
            put_operand(g, st->value, st->at.dtype);
            nd_strbuf_printf(b, ";\n");
        }
    }
    nd_strbuf_printf(b, "        }\n");
}

static int slot_written(const nd_kernel *k, int slot) {
    for (int s = 0; s < k->n_stores; s++)
        if (k->stores[s].at.slot == slot) return 1;
    return 0;
}

/* "OFF + st0 * ix[0] + ..." over the outer axes and the row's first inner
 * index: the access's element offset at the start of the row segment. */
static void put_row_offset(nd_strbuf *b, const cpu_access *a, int ndim) {
    nd_strbuf_printf(b, "%lld", (long long)a->off);
    for (int d = 0; d < ndim; d++)
        if (a->st[d]) nd_strbuf_printf(b, " + (%lld) * ix[%d]", (long long)a->st[d], d);
}

/* Declarations: slot pointers (restrict where no other access can see a
 * write through them), parameters, strips. */
static void put_decls(gen *g) {
    const nd_kernel *k = g->k;
    const cpu_prep *p = g->p;
    nd_strbuf *b = g->b;
    for (int i = 0; i < p->n_loads; i++) {
        const char *t = sfx[p->loads[i].dtype];
        int slot = k->loads[i].slot;
        nd_strbuf_printf(b, "    const %s_T *%sa%d = (const %s_T *)slots[%d];\n", t,
            slot_written(k, slot) ? "" : "restrict ", i, t, slot);
    }
    for (int s = 0; s < p->n_stores; s++) {
        const char *t = sfx[p->stores[s].at.dtype];
        int slot = k->stores[s].at.slot, shared = 0;
        for (int i = 0; i < k->n_loads; i++) shared |= k->loads[i].slot == slot;
        for (int o = 0; o < k->n_stores; o++) shared |= o != s && k->stores[o].at.slot == slot;
        nd_strbuf_printf(b, "    %s_T *%ss%d = (%s_T *)slots[%d];\n", t, shared ? "" : "restrict ", s, t, slot);
    }
    for (int j = 0; j < g->n; j++) {
        const cpu_inst *pi = &p->insts[j];
        if (pi->kind != PI_PARAM || !g->need[j]) continue;
        nd_strbuf_printf(b, "    %s_T p%d;\n    memcpy(&p%d, &params[%d], sizeof p%d);\n", sfx[pi->dtype], j, j,
            g->param_no[j], j);
    }
    if (g->gathers)
        nd_strbuf_printf(b, "    void *const bad_rec = (void *)(uintptr_t)params[%d];\n", g->n_param_cells);
    int strip = 0;
#define STRIP(fmt, ...)                                                                         \
    nd_strbuf_printf(b, "    %s_T *restrict " fmt " = (%s_T *)(scratch + %zu);\n", __VA_ARGS__,                \
        (size_t)strip++ * STRIP_BYTES)
    for (int j = 0; j < g->n; j++) {
        const cpu_inst *pi = &p->insts[j];
        if (g->strip[j]) STRIP("x%d", sfx[pi->dtype], j, sfx[pi->dtype]);
        if (!g->call[j]) continue;
        STRIP("c%d", sfx[pi->cdtype], j, sfx[pi->cdtype]);
        for (int q = 0; q < pi->n_ops; q++)
            STRIP("ci%d_%d", sfx[pi->in_dtype[q]], j, q, sfx[pi->in_dtype[q]]);
    }
    for (int s = 0; s < p->n_stores; s++)
        if (store_streamed(g, s)) STRIP("y%d", sfx[p->stores[s].at.dtype], s, sfx[p->stores[s].at.dtype]);
#undef STRIP
    g->n_strips = strip;
}

/* Which values reach a store, which are helper calls, which loop defines
 * each value and which loops use it. Returns the number of loops, or -1
 * when an instruction has no generator. */
static int analyse(gen *g) {
    const cpu_prep *p = g->p;
    int n = g->n;
    for (int s = 0; s < p->n_stores; s++) g->need[p->stores[s].value] = 1;
    for (int j = n - 1; j >= 0; j--) {
        const cpu_inst *pi = &p->insts[j];
        if (!g->need[j]) continue;
        /* draws and loop regions are the interpreter's */
        if (pi->kind == PI_RAND_U || pi->kind == PI_RAND_N || pi->kind == PI_RAND_I || pi->kind == PI_LOOP ||
            pi->kind == PI_LOOP_END)
            return -1;
        for (int q = 0; q < pi->n_ops; q++) g->need[pi->ops[q]] = 1;
    }
    int loop = 0, np = 0;
    for (int j = 0; j < n; j++) {
        const cpu_inst *pi = &p->insts[j];
        if (pi->kind == PI_PARAM) g->param_no[j] = np++;
        g->gathers |= pi->kind == PI_GATHER && g->need[j];
        g->last[j] = -1;
        if (!g->need[j]) continue;
        if (pi->kind == PI_FN && is_vmath(g->k->insts[j].op, pi->cdtype)) {
            g->call[j] = 1;
            g->seg[j] = loop; /* operands: in this loop; result: from the next */
            loop++;
            continue;
        }
        g->seg[j] = loop;
    }
    for (int j = 0; j < n; j++) {
        const cpu_inst *pi = &p->insts[j];
        if (!g->need[j] || is_remat(pi)) continue;
        for (int q = 0; q < pi->n_ops; q++) {
            int o = pi->ops[q];
            if (g->last[o] < g->seg[j]) g->last[o] = g->seg[j];
        }
    }
    g->n_param_cells = np;
    for (int s = 0; s < p->n_stores; s++) g->last[p->stores[s].value] = loop;
    for (int j = 0; j < n; j++) {
        const cpu_inst *pi = &p->insts[j];
        g->strip[j] = g->need[j] && !g->call[j] && !is_remat(pi) && g->last[j] > g->seg[j];
    }
    return loop + 1;
}

/* The work-item walk: ix = the prepared index of f0, then row segments,
 * each with its accesses' offsets, cut into strips. */
static void put_walk_open(gen *g) {
    const cpu_prep *p = g->p;
    nd_strbuf *b = g->b;
    int nd = p->ndim;
    nd_strbuf_printf(b, "    int64_t ix[%d];\n", nd);
    nd_strbuf_printf(b, "    for (int64_t f = f0, d = %d; d >= 0; d--) {\n"
           "        ix[d] = f %% shape[d];\n"
           "        f /= shape[d];\n"
           "    }\n", nd - 1);
    nd_strbuf_printf(b, "    for (int64_t f = f0; f < f1;) {\n"
           "        int64_t len = shape[%d] - ix[%d];\n"
           "        if (len > f1 - f) len = f1 - f;\n", nd - 1, nd - 1);
    for (int i = 0; i < p->n_loads; i++) {
        nd_strbuf_printf(b, "        const int64_t oa%d = ", i);
        put_row_offset(b, &p->loads[i], nd);
        nd_strbuf_printf(b, ";\n");
    }
    for (int i = 0; i < p->n_indices; i++) {
        nd_strbuf_printf(b, "        const int64_t oi%d = ", i);
        put_row_offset(b, &p->indices[i], nd);
        nd_strbuf_printf(b, ";\n");
    }
    for (int s = 0; s < p->n_stores; s++) {
        nd_strbuf_printf(b, "        const int64_t os%d = ", s);
        put_row_offset(b, &p->stores[s].at, nd);
        nd_strbuf_printf(b, ";\n");
    }
    nd_strbuf_printf(b, "        for (int64_t s = 0; s < len; s += %d) {\n"
           "            const int64_t n = len - s < %d ? len - s : %d;\n",
        ND_CPU_TILE, ND_CPU_TILE, ND_CPU_TILE);
}

/* After the strips of a row segment: advance ix past it. */
static void put_walk_close(gen *g) {
    int nd = g->p->ndim;
    nd_strbuf_printf(g->b, "        }\n"
              "        f += len;\n"
              "        ix[%d] += len;\n"
              "        if (ix[%d] == shape[%d]) {\n"
              "            ix[%d] = 0;\n"
              "            for (int d = %d; d >= 0; d--) {\n"
              "                if (++ix[d] < shape[d]) break;\n"
              "                ix[d] = 0;\n"
              "            }\n"
              "        }\n"
              "    }\n"
              "}\n", nd - 1, nd - 1, nd - 1, nd - 1, nd - 2);
}

/* One strip: the loops and helper calls, then the streamed stores. */
static void put_strip(gen *g) {
    const cpu_prep *p = g->p;
    nd_strbuf *b = g->b;
    int loop = 0;
    for (int j = 0; j < g->n; j++) {
        if (!g->call[j]) continue;
        put_loop(g, loop++, j);
        const cpu_inst *pi = &p->insts[j];
        nd_strbuf_printf(b, "        ((ndj_op)helpers[%d])(c%d", g->helper[j], j);
        for (int q = 0; q < 3; q++) {
            if (q < pi->n_ops) nd_strbuf_printf(b, ", ci%d_%d", j, q);
            else nd_strbuf_printf(b, ", 0");
        }
        nd_strbuf_printf(b, ", n);\n");
    }
    put_loop(g, loop, -1);
    for (int s = 0; s < p->n_stores; s++)
        if (store_streamed(g, s))
            nd_strbuf_printf(b, "        ((ndj_store)helpers[0])((char *)(s%d + os%d + s), (const char *)y%d, "
                   "(size_t)n * sizeof *y%d, 1);\n", s, s, s, s);
}

/* Each user loop the kernel calls, once, as a static inline function. */
static void put_ufuncs(gen *g) {
    int any = 0;
    for (int j = 0; j < g->n; j++) {
        if (g->p->insts[j].kind != PI_UFUNC || !g->need[j]) continue;
        uint32_t id = g->k->insts[j].ufunc;
        int seen = 0;
        for (int i = 0; i < j && !seen; i++)
            seen = g->p->insts[i].kind == PI_UFUNC && g->need[i] && g->k->insts[i].ufunc == id;
        if (seen) continue;
        if (!any++) nd_ufunc_emit_types(g->b);
        nd_ufunc_emit_fn(g->b, nd_ufunc_loop_get(id), "static inline");
    }
    if (any) nd_strbuf_printf(g->b, "#line 1 \"nd_jit_kernel\"\n");
}

static void put_kernel(gen *g) {
    nd_strbuf *b = g->b;
    char name[sizeof g->k->name];
    size_t m = 0;
    for (size_t i = 0; i < sizeof name - 1 && g->k->name[i]; i++) /* safe inside a comment */
        if (isalnum((unsigned char)g->k->name[i]) || g->k->name[i] == '_') name[m++] = g->k->name[i];
    name[m] = 0;
    nd_strbuf_printf(b, "/* nd cpu jit, codegen %d: kernel '%s' */\n", ND_CPU_JIT_CODEGEN_VERSION, name);
    nd_strbuf_printf(b, "%s\n%s\n", nd_element_fns_source, nd_cpu_scalar_source);
    put_ufuncs(g);
    nd_strbuf_printf(b, "typedef void (*ndj_helper)(void);\n"
           "typedef void (*ndj_op)(void *restrict, const void *, const void *, const void *, "
           "int64_t);\n"
           "typedef void (*ndj_store)(char *, const char *, size_t, int);\n"
           "typedef void (*ndj_bad)(void *, int64_t, int64_t, int32_t);\n"
           "void nd_jit_kernel(void *const *slots, const uint64_t *params, "
           "const ndj_helper *helpers, char *scratch, int64_t f0, int64_t f1, const int64_t *shape);\n"
           "void nd_jit_kernel(void *const *slots, const uint64_t *params, "
           "const ndj_helper *helpers, char *scratch, int64_t f0, int64_t f1, const int64_t *shape) {\n"
           "    (void)params, (void)helpers, (void)scratch;\n");
    put_decls(g);
    put_walk_open(g);
    put_strip(g);
    put_walk_close(g);
}

int nd_cpu_jit_codegen(const nd_kernel *k, const cpu_prep *p, nd_cpu_jit_source *out) {
    memset(out, 0, sizeof *out);
    if (p->has_reduce || p->ndim < 1) return -1;
    int n = p->n_insts;
    nd_strbuf b = {0};
    gen g;
    memset(&g, 0, sizeof g);
    g.k = k;
    g.p = p;
    g.b = &b;
    g.n = n;
    g.streamed = p->stream_stores;
    size_t cells = (size_t)n + 1;
    g.need = nd_calloc(cells, 4);
    g.seg = nd_calloc(cells, sizeof(int));
    g.last = nd_calloc(cells, sizeof(int));
    g.param_no = nd_calloc(cells, sizeof(int));
    g.helper = nd_calloc(cells, sizeof(int));
    g.helpers = nd_calloc(cells + 2, sizeof *g.helpers);
    int loops = -1;
    if (g.need && g.seg && g.last && g.param_no && g.helper && g.helpers) {
        g.call = g.need + cells;
        g.strip = g.call + cells;
        g.emitted = g.strip + cells;
        loops = analyse(&g);
    }
    if (loops > 0) {
        /* helper 0: the interpreter's contiguous (non-temporal) store;
         * helper 1: its record of a bad gather index */
        g.helpers[g.n_helpers++] = (nd_cpu_jit_helper)nd_cpu_store_contig;
        g.helpers[g.n_helpers++] = (nd_cpu_jit_helper)nd_cpu_gather_bad_note;
        for (int j = 0; j < n; j++)
            if (g.call[j]) {
                g.helper[j] = g.n_helpers;
                g.helpers[g.n_helpers++] = (nd_cpu_jit_helper)p->insts[j].fn;
            }
        put_kernel(&g);
    }
    int ok = loops > 0 && !b.failed;
    if (ok) {
        out->src = b.buf;
        out->len = b.len;
        out->helpers = g.helpers;
        out->n_helpers = g.n_helpers;
        out->scratch_bytes = (size_t)g.n_strips * STRIP_BYTES;
        g.helpers = NULL;
    } else {
        free(b.buf);
    }
    free(g.need);
    free(g.seg);
    free(g.last);
    free(g.param_no);
    free(g.helper);
    free(g.helpers);
    return ok ? 0 : -1;
}

void nd_cpu_jit_source_free(nd_cpu_jit_source *s) {
    free(s->src);
    free(s->helpers);
    memset(s, 0, sizeof *s);
}
