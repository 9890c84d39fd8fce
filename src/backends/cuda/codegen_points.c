/* Where a kernel's threads meet their points: index unravelling, address
 * math, the loads, index values, body call and stores of one point or of a
 * group of points (kernels with random draws, see codegen_rng.c), and the
 * elementwise kernels built from them (grid-stride scalar loop, its grouped
 * form, the 16-byte vector variant). Reductions (codegen_reduce.c) use the
 * same points. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "backends/cuda/cuda_internal.h"

void nd_cuda_emit_unravel(nd_strbuf *sb, const nd_kernel *k, uint32_t mask, const char *lin,
                          const char *at, const char *indent) {
    int first = -1, any_div = 0;
    for (int d = 0; d < k->ndim; d++)
        if (mask >> d & 1u) {
            if (first < 0) first = d;
            nd_strbuf_printf(sb, "%s%s i%d;\n", indent, at, d);
        }
    if (first < 0) return;
    for (int d = k->ndim - 1; d > first; d--)
        if ((mask >> d & 1u) && k->shape[d] != 1) any_div = 1;
    /* Unsigned division by literals folds to multiply-shift. */
    const char *ut = strcmp(at, "int") == 0 ? "unsigned int" : "unsigned long long";
    nd_strbuf_printf(sb, "%s{ %s t_ = (%s)(%s);", indent, ut, ut, lin);
    (void)any_div;
    for (int d = k->ndim - 1; d >= first; d--) {
        if (!(mask >> d & 1u)) continue;
        if (d == first) nd_strbuf_printf(sb, " i%d = (%s)t_;", d, at);
        else if (k->shape[d] == 1) nd_strbuf_printf(sb, " i%d = 0;", d);
        else
            nd_strbuf_printf(sb, " i%d = (%s)(t_ %% %" PRId64 "u); t_ /= %" PRId64 "u;", d, at, k->shape[d],
                              k->shape[d]);
    }
    nd_strbuf_printf(sb, " }\n");
}

void nd_cuda_emit_addr(nd_strbuf *sb, const nd_ir_access *a, int ndim, int wide) {
    const char *sfx = wide ? "LL" : "";
    nd_strbuf_printf(sb, "(%" PRId64 "%s", a->offset, sfx);
    for (int d = 0; d < ndim; d++)
        if (a->strides[d]) nd_strbuf_printf(sb, " + (%" PRId64 "%s) * i%d", a->strides[d], sfx, d);
    nd_strbuf_printf(sb, ")");
}

/* Index values of the points: x<j> (G = 1), else x<j>_<e> = x<j>_0 plus e
 * steps along gax. */
static void emit_index_values(nd_strbuf *sb, const nd_kernel *k, const char *indent, int G, int gax) {
    char x[32];
    for (int j = 0; j < k->n_indices; j++) {
        const nd_ir_access *m = &k->indices[j];
        nd_cuda_point_name(x, sizeof x, "x", j, 0, G);
        nd_strbuf_printf(sb, "%sconst long long %s = %" PRId64 "LL", indent, x, m->offset);
        for (int d = 0; d < k->ndim; d++)
            if (m->strides[d]) nd_strbuf_printf(sb, " + (%" PRId64 "LL) * (long long)i%d", m->strides[d], d);
        nd_strbuf_printf(sb, ";\n");
        for (int e = 1; e < G; e++)
            nd_strbuf_printf(sb, "%sconst long long x%d_%d = x%d_0 + %" PRId64 "LL;\n", indent, j, e, j,
                              m->strides[gax] * e);
    }
}

/* The value load j passes to point e: a vector lane, the one broadcast
 * element, or its own load. */
static void load_arg(char *out, size_t cap, const nd_kernel *k, int j, int e, int G, int gax, int vec) {
    if (vec) { /* G = 1: the lane is the unrolled loop's e */
        if (k->loads[j].strides[0] != 1) snprintf(out, cap, "l%d", j);
        else if (G == 1) snprintf(out, cap, "u%d.e[e]", j);
        else snprintf(out, cap, "u%d.e[%d]", j, e);
    } else if (G > 1 && k->loads[j].strides[gax] == 0) {
        snprintf(out, cap, "l%d_0", j);
    } else {
        nd_cuda_point_name(out, cap, "l", j, e, G);
    }
}

static void emit_call(nd_strbuf *sb, const nd_kernel *k, const char *indent, int G, int gax, int vec) {
    char nm[32], x[32];
    nd_cuda_body_name(nm, sizeof nm, G);
    nd_strbuf_printf(sb, "%s%s(A", indent, nm);
    for (int p = 0; p < G; p++) {
        for (int j = 0; j < k->n_loads; j++) {
            load_arg(x, sizeof x, k, j, p, G, gax, vec);
            nd_strbuf_printf(sb, ", %s", x);
        }
        for (int j = 0; j < k->n_indices; j++) {
            nd_cuda_point_name(x, sizeof x, "x", j, p, G);
            nd_strbuf_printf(sb, ", %s", x);
        }
        for (int j = 0; j < k->n_stores; j++) {
            if (vec && G == 1) snprintf(x, sizeof x, "w%d.e[e]", j);
            else if (vec) snprintf(x, sizeof x, "w%d.e[%d]", j, p);
            else nd_cuda_point_name(x, sizeof x, "s", j, p, G);
            nd_strbuf_printf(sb, ", %s", x);
        }
        if (k->has_reduce) {
            nd_cuda_rv_name(x, sizeof x, p, G);
            nd_strbuf_printf(sb, ", %s", x);
        }
    }
    nd_strbuf_printf(sb, ");\n");
}

/* Address of an access at point e of a group: (offset + strides*i) plus e
 * steps along gax. */
static void emit_addr_at(nd_strbuf *sb, const nd_ir_access *a, int ndim, int wide, int gax, int e) {
    nd_cuda_emit_addr(sb, a, ndim, wide);
    if (e && a->strides[gax]) nd_strbuf_printf(sb, " + (%" PRId64 "%s)", a->strides[gax] * e, wide ? "LL" : "");
}

static void emit_loads(nd_strbuf *sb, const nd_kernel *k, int wide, const char *indent, int G, int gax) {
    char x[32];
    for (int j = 0; j < k->n_loads; j++) {
        const nd_ir_access *l = &k->loads[j];
        const char *mt = nd_cuda_mem_type((nd_dtype)l->dtype);
        if (nd_ir_load_gathered(k, j)) {
            /* a gather's base: its element offset, read by the gather */
            for (int e = 0; e < (G > 1 && l->strides[gax] == 0 ? 1 : G); e++) {
                nd_cuda_point_name(x, sizeof x, "l", j, e, G);
                nd_strbuf_printf(sb, "%sconst long long %s = (long long)", indent, x);
                emit_addr_at(sb, l, k->ndim, wide, gax, e);
                nd_strbuf_printf(sb, ";\n");
            }
            continue;
        }
        for (int e = 0; e < (G > 1 && l->strides[gax] == 0 ? 1 : G); e++) {
            nd_cuda_point_name(x, sizeof x, "l", j, e, G);
            nd_strbuf_printf(sb, "%sconst %s %s = ((const %s *)A.w[%d])[", indent, mt, x, mt, (int)l->slot);
            emit_addr_at(sb, l, k->ndim, wide, gax, e);
            nd_strbuf_printf(sb, "];\n");
        }
    }
}

/* A point's (or group's) work once its loads l<j> are in registers: index
 * values, the body call, the stores. */
static void emit_compute_store(nd_strbuf *sb, const nd_kernel *k, int wide, const char *indent, int G, int gax) {
    char x[32];
    emit_index_values(sb, k, indent, G, gax);
    for (int e = 0; e < G; e++) {
        for (int j = 0; j < k->n_stores; j++) {
            nd_cuda_point_name(x, sizeof x, "s", j, e, G);
            nd_strbuf_printf(sb, "%s%s %s;\n", indent, nd_cuda_mem_type((nd_dtype)k->stores[j].at.dtype), x);
        }
        if (k->has_reduce) {
            nd_cuda_rv_name(x, sizeof x, e, G);
            nd_strbuf_printf(sb, "%s%s %s;\n", indent, nd_cuda_reg_type((nd_dtype)k->insts[nd_cuda_reduce_rv(k)].dtype), x);
        }
    }
    emit_call(sb, k, indent, G, gax, 0);
    for (int e = 0; e < G; e++)
        for (int j = 0; j < k->n_stores; j++) {
            const nd_ir_access *s = &k->stores[j].at;
            nd_strbuf_printf(sb, "%s((%s *)A.w[%d])[", indent, nd_cuda_mem_type((nd_dtype)s->dtype), (int)s->slot);
            emit_addr_at(sb, s, k->ndim, wide, gax, e);
            nd_cuda_point_name(x, sizeof x, "s", j, e, G);
            nd_strbuf_printf(sb, "] = %s;\n", x);
        }
}

void nd_cuda_emit_point(nd_strbuf *sb, const nd_kernel *k, int wide, const char *indent, int G, int gax) {
    emit_loads(sb, k, wide, indent, G, gax);
    emit_compute_store(sb, k, wide, indent, G, gax);
}

static const char *vec_type(int bytes) {
    switch (bytes) {
    case 2: return "unsigned short";
    case 4: return "unsigned int";
    case 8: return "uint2";
    default: return "uint4";
    }
}

/* The scalar kernel of a kernel with random draws whose calls a group of
 * G points along the innermost axis can share: a thread takes G
 * consecutive points of a row per step (a row's last, partial group point
 * by point). */
static void emit_elementwise_grouped(nd_strbuf *sb, const nd_kernel *k, const nd_cuda_kinfo *info) {
    const char *lt = info->wide ? "unsigned long long" : "unsigned int";
    const char *at = info->wide ? "long long" : "int";
    int G = info->group, L = info->group_axis;
    int64_t C = k->shape[L], CG = (C + G - 1) / G;
    uint32_t rows = (k->ndim >= 32 ? 0xffffffffu : (1u << k->ndim) - 1u) & ~(1u << L);
    nd_cuda_emit_kernel_open(sb, info->name);
    nd_strbuf_printf(sb,
                      "  for (%s g = (%s)blockIdx.x * %du + threadIdx.x; g < %" PRId64 "ull; g += (%s)gridDim.x * %du) {\n"
                      "    const %s row = g / %" PRId64 "u;\n"
                      "    const %s ib = (%s)(g %% %" PRId64 "u) * %d;\n",
                      lt, lt, ND_CUDA_BLOCK, info->items, lt, ND_CUDA_BLOCK, lt, CG,
                      at, at, CG, G);
    nd_cuda_emit_unravel(sb, k, rows, "row", at, "    ");
    if (C % G) nd_strbuf_printf(sb, "    if (ib + %d <= %" PRId64 ") {\n", G, C);
    else nd_strbuf_printf(sb, "    {\n");
    nd_strbuf_printf(sb, "      const %s i%d = ib;\n", at, L);
    nd_cuda_emit_point(sb, k, info->wide, "      ", G, L);
    nd_strbuf_printf(sb, "    }\n");
    if (C % G) {
        nd_strbuf_printf(sb, "    else for (%s i%d = ib; i%d < %" PRId64 "; i%d++) {\n", at, L, L, C, L);
        nd_cuda_emit_point(sb, k, info->wide, "      ", 1, L);
        nd_strbuf_printf(sb, "    }\n");
    }
    nd_strbuf_printf(sb, "  }\n}\n");
}

/* The scalar kernel when info->unroll > 1: a thread takes U points one
 * above the other along axis 0 (rows r0 .. r0+U-1 of the same column) and
 * issues all their loads before computing and storing any. One point at a
 * time keeps one load per thread in flight, too few to cover DRAM latency
 * where the loads are scalar (a 2-d stencil sweep ran at 61% of DRAM
 * bandwidth); and a stencil's points share rows, so the compiler loads
 * each (row, column) once for the U points. Consecutive threads still take
 * consecutive columns (coalesced). Points U linear steps or a grid stride
 * apart instead made DRAM read 1.5-2.2x what a sweep needs; 4 rows still
 * read 1.34x (each block's two halo rows), 8 rows ran 8% faster than 4. Loading point u+1
 * before storing point u is safe: a kernel's points never read what
 * another point writes (that would be a race between threads), and a
 * point's own loads come first. */
static void emit_elementwise_unrolled(nd_strbuf *sb, const nd_kernel *k, const nd_cuda_kinfo *info, const char *lt,
                                      const char *at, uint32_t all) {
    int U = info->unroll;
    int64_t R = k->shape[0], C = info->n / R;
    const char *guard = R % U ? "if (i0 < " : NULL;
    nd_cuda_emit_kernel_open(sb, info->name);
    nd_strbuf_printf(sb,
                      "  for (%s w = (%s)blockIdx.x * %du + threadIdx.x; w < %" PRId64 "ull; w += (%s)gridDim.x * %du) {\n"
                      "    const %s r0 = (%s)(w / %" PRId64 "u) * %d;\n",
                      lt, lt, ND_CUDA_BLOCK, info->items, lt, ND_CUDA_BLOCK, at, at, C, U);
    char rest[64];
    snprintf(rest, sizeof rest, "w %% %" PRId64 "u", C);
    nd_cuda_emit_unravel(sb, k, all & ~1u, rest, at, "    ");
    for (int j = 0; j < k->n_loads; j++)
        nd_strbuf_printf(sb, "    %s L%d[%d];\n", nd_cuda_mem_type((nd_dtype)k->loads[j].dtype), j, U);
    for (int pass = 0; pass < 2; pass++) {
        nd_strbuf_printf(sb, "#pragma unroll\n    for (int u = 0; u < %d; u++) {\n      const %s i0 = r0 + u;\n", U, at);
        if (guard) nd_strbuf_printf(sb, "      %s%" PRId64 ") {\n", guard, R);
        else nd_strbuf_printf(sb, "      {\n");
        if (pass == 0) {
            emit_loads(sb, k, info->wide, "        ", 1, 0);
            for (int j = 0; j < k->n_loads; j++) nd_strbuf_printf(sb, "        L%d[u] = l%d;\n", j, j);
        } else {
            for (int j = 0; j < k->n_loads; j++)
                nd_strbuf_printf(sb, "        const %s l%d = L%d[u];\n", nd_cuda_mem_type((nd_dtype)k->loads[j].dtype),
                                  j, j);
            emit_compute_store(sb, k, info->wide, "        ", 1, 0);
        }
        nd_strbuf_printf(sb, "      }\n    }\n");
    }
    nd_strbuf_printf(sb, "  }\n}\n");
}

/* How the march kernel (emit_elementwise_march) gets each load's value.
 * Row groups: load j reads what its lead, lead[j], reads shift[j] rows
 * further down (same slot, dtype and strides, offsets a whole number of
 * axis-0 strides apart); a group spans rows lo..hi of its lead's, at most
 * ND_CUDA_MARCH_MAX_SPAN, and one load per row feeds all of it. Column
 * sources: load j reads what lead col_src[j] reads col_dr[j] rows down
 * (within that lead's lo..hi) and col_dc[j] columns along the innermost
 * axis (|col_dc| <= ND_CUDA_MARCH_MAX_COLS): a neighbouring thread's value,
 * passed through shared memory. A lead's window of rows is loaded when it
 * or a member of its group has no column source. */
typedef struct {
    int lead[ND_CUDA_MARCH_MAX_LOADS], shift[ND_CUDA_MARCH_MAX_LOADS];
    int lo[ND_CUDA_MARCH_MAX_LOADS], hi[ND_CUDA_MARCH_MAX_LOADS];
    int col_src[ND_CUDA_MARCH_MAX_LOADS], col_dr[ND_CUDA_MARCH_MAX_LOADS], col_dc[ND_CUDA_MARCH_MAX_LOADS];
    int windowed[ND_CUDA_MARCH_MAX_LOADS];
    int n_col; /* loads with a column source */
} march_plan;

static int same_layout(const nd_kernel *k, const nd_ir_access *a, const nd_ir_access *b) {
    return a->slot == b->slot && a->dtype == b->dtype &&
           memcmp(a->strides, b->strides, sizeof(int64_t) * (size_t)k->ndim) == 0;
}

static void row_groups(const nd_kernel *k, march_plan *p) {
    for (int j = 0; j < k->n_loads; j++) {
        const nd_ir_access *a = &k->loads[j];
        p->lead[j] = j;
        p->shift[j] = p->lo[j] = p->hi[j] = 0;
        for (int i = 0; i < j && p->lead[j] == j; i++) {
            const nd_ir_access *b = &k->loads[i];
            int64_t s0 = b->strides[0], diff = a->offset - b->offset;
            if (p->lead[i] != i || s0 == 0 || diff % s0 != 0 || !same_layout(k, a, b)) continue;
            int64_t dr = diff / s0;
            int64_t nlo = dr < p->lo[i] ? dr : p->lo[i], nhi = dr > p->hi[i] ? dr : p->hi[i];
            if (nhi - nlo + 1 > ND_CUDA_MARCH_MAX_SPAN) continue;
            p->lead[j] = i;
            p->shift[j] = (int)dr;
            p->lo[i] = (int)nlo;
            p->hi[i] = (int)nhi;
        }
    }
}

/* Whether lead g's window holds load j's value a few columns away; if so,
 * g becomes j's column source. */
static int col_source_from(const nd_kernel *k, march_plan *p, int j, int g) {
    const nd_ir_access *a = &k->loads[j], *b = &k->loads[g];
    int64_t s0 = b->strides[0], sl = b->strides[k->ndim - 1];
    if (s0 == 0 || sl == 0 || !same_layout(k, a, b)) return 0;
    for (int dc = -ND_CUDA_MARCH_MAX_COLS; dc <= ND_CUDA_MARCH_MAX_COLS; dc++) {
        int64_t rem = a->offset - b->offset - dc * sl;
        if (dc == 0 || rem % s0 != 0 || rem / s0 < p->lo[g] || rem / s0 > p->hi[g]) continue;
        p->col_src[j] = g;
        p->col_dr[j] = (int)(rem / s0);
        p->col_dc[j] = dc;
        return 1;
    }
    return 0;
}

/* Whether load j is the first column-sourced load reading its (source,
 * row): each such pair is one shared-memory array, written once a row. */
static int first_of_pair(const march_plan *p, int j) {
    if (p->col_src[j] < 0) return 0;
    for (int i = 0; i < j; i++)
        if (p->col_src[i] == p->col_src[j] && p->col_dr[i] == p->col_dr[j]) return 0;
    return 1;
}

/* Column sources: the largest groups first become anchors (they load
 * their windows); the loads of groups not yet anchored that an anchor's
 * window holds a few columns away take their values from it. An anchor is
 * never itself column-sourced, so sources never chain. */
static int march_plan_of(const nd_kernel *k, march_plan *p) {
    memset(p, 0, sizeof *p);
    if (k->ndim < 2 || k->n_loads > ND_CUDA_MARCH_MAX_LOADS) return 0;
    row_groups(k, p);
    int members[ND_CUDA_MARCH_MAX_LOADS] = {0}, anchor[ND_CUDA_MARCH_MAX_LOADS] = {0};
    for (int j = 0; j < k->n_loads; j++) {
        p->col_src[j] = -1;
        members[p->lead[j]]++;
    }
    for (;;) {
        int g = -1;
        for (int i = 0; i < k->n_loads; i++)
            if (p->lead[i] == i && !anchor[i] && p->col_src[i] < 0 && (g < 0 || members[i] > members[g])) g = i;
        if (g < 0) break;
        anchor[g] = 1;
        for (int j = 0; j < k->n_loads; j++)
            if (p->col_src[j] < 0 && !anchor[p->lead[j]]) p->n_col += col_source_from(k, p, j, g);
    }
    for (int j = 0; j < k->n_loads; j++)
        if (p->col_src[j] < 0) p->windowed[p->lead[j]] = 1;
    /* Shared memory: a step's rows of every (source, row) passed on. */
    int64_t smem = 0;
    for (int j = 0; j < k->n_loads; j++)
        if (first_of_pair(p, j))
            smem += (int64_t)ND_CUDA_MARCH_STEP * ND_CUDA_BLOCK * nd_cuda_mem_size((nd_dtype)k->loads[j].dtype);
    return smem <= ND_CUDA_MARCH_MAX_SMEM ? p->n_col : 0;
}

int nd_cuda_march_shares(const nd_kernel *k) {
    march_plan p;
    return march_plan_of(k, &p) > 0;
}

/* One load of access a at row i0 + dr into `name` (declared there when
 * `declare`). */
static void emit_load_as(nd_strbuf *sb, const nd_ir_access *a, int ndim, int wide, const char *indent,
                         int declare, const char *name, int dr) {
    const char *mt = nd_cuda_mem_type((nd_dtype)a->dtype);
    nd_strbuf_printf(sb, "%s%s%s%s%s = ((const %s *)A.w[%d])[", indent, declare ? "const " : "", declare ? mt : "",
                     declare ? " " : "", name, mt, (int)a->slot);
    emit_addr_at(sb, a, ndim, wide, 0, dr);
    nd_strbuf_printf(sb, "];\n");
}

/* The scalar kernel when info->march > 0, for loads that share rows and
 * columns (a stencil): a block takes 256 consecutive columns (axes 1..,
 * flattened, padded to whole blocks) of a strip of `march` rows and walks
 * down it, each thread one column. Each lead keeps a window of its rows in
 * registers, so north, centre and south cost one load per row; west and
 * east are the neighbouring threads' values, passed through shared memory
 * (a thread at the block's edge or the row's end loads its own). A sweep
 * of the 16384^2 heat stencil so reads and writes the grid about once:
 * 0.83 ms on an H100 against 1.19 ms for the 8-row unrolled kernel, whose
 * west, centre and east loads of one row each went to L2, and 0.75 ms for
 * a plain copy (bench/stencil_variants.cu, 2026-11-22). The walk
 * goes ND_CUDA_MARCH_STEP rows at a time, their loads first: the compiler
 * cannot move a load above an earlier store (the slots may be one buffer),
 * and one row's loads in flight per thread leave DRAM idle. Loading rows
 * ahead of a store is safe for the reason given at
 * emit_elementwise_unrolled. Every window row loaded is a row some member
 * reads at a valid point (lo and hi bracket it, and R >= the span), so no
 * address leaves what the kernel may touch; padded threads load nothing
 * but take part in every __syncthreads. */
static void emit_elementwise_march(nd_strbuf *sb, const nd_kernel *k, const nd_cuda_kinfo *info, const char *at,
                                   uint32_t all) {
    march_plan p;
    march_plan_of(k, &p);
    int H = info->march, B = ND_CUDA_MARCH_STEP, last = k->ndim - 1;
    int64_t R = k->shape[0], C = info->n / R, CB = (C + ND_CUDA_BLOCK - 1) / ND_CUDA_BLOCK;
    int64_t NB = (R + H - 1) / H * CB;
    char name[64];
    nd_cuda_emit_kernel_open(sb, info->name);
    for (int j = 0; j < k->n_loads; j++)
        if (first_of_pair(&p, j)) {
            int g = p.col_src[j];
            nd_strbuf_printf(sb, "  __shared__ %s P%d_%d[%d][%d];\n", nd_cuda_mem_type((nd_dtype)k->loads[g].dtype), g,
                              p.col_dr[j] - p.lo[g], B, ND_CUDA_BLOCK);
        }
    nd_strbuf_printf(sb,
                      "  for (unsigned int blk = blockIdx.x; blk < %" PRId64 "u; blk += gridDim.x) {\n"
                      "    const %s rs = (%s)(blk / %" PRId64 "u) * %d;\n"
                      "    const %s re = rs + %d < %" PRId64 " ? rs + %d : %" PRId64 ";\n"
                      "    const %s c = (%s)(blk %% %" PRId64 "u) * %d + (%s)threadIdx.x;\n"
                      "    const bool ok = c < %" PRId64 ";\n",
                      NB, at, at, CB, H, at, H, R, H, R, at, at, CB, ND_CUDA_BLOCK, at, C);
    nd_cuda_emit_unravel(sb, k, all & ~1u, "c", at, "    ");
    for (int j = 0; j < k->n_loads; j++)
        if (p.col_src[j] >= 0)
            nd_strbuf_printf(sb,
                              "    const bool ok%d = (unsigned)((int)threadIdx.x + %d) < %du && "
                              "(unsigned long long)(i%d + %d) < %" PRId64 "ull;\n",
                              j, p.col_dc[j], ND_CUDA_BLOCK, last, p.col_dc[j], k->shape[last]);
    /* Windows: X<g>[q] is lead g's value lo + q rows below row ib; the
     * first hi - lo come from the step before (or this prologue). */
    nd_strbuf_printf(sb, "    {\n      const %s i0 = rs;\n", at);
    for (int g = 0; g < k->n_loads; g++) {
        if (!p.windowed[g]) continue;
        int span = p.hi[g] - p.lo[g];
        nd_strbuf_printf(sb, "      %s X%d[%d];\n", nd_cuda_mem_type((nd_dtype)k->loads[g].dtype), g, B + span);
        if (span == 0) continue;
        nd_strbuf_printf(sb, "      if (ok) {\n");
        for (int q = 0; q < span; q++) {
            snprintf(name, sizeof name, "X%d[%d]", g, q);
            emit_load_as(sb, &k->loads[g], k->ndim, info->wide, "        ", 0, name, p.lo[g] + q);
        }
        nd_strbuf_printf(sb, "      }\n");
    }
    for (int j = 0; j < k->n_loads; j++)
        if (p.col_src[j] >= 0) nd_strbuf_printf(sb, "      %s F%d[%d];\n", nd_cuda_mem_type((nd_dtype)k->loads[j].dtype), j, B);
    nd_strbuf_printf(sb, "      for (%s ib = rs; ib < re; ib += %d) {\n", at, B);
    /* Pass 1: the step's loads: new window rows, and the own loads of
     * threads whose neighbour cannot pass a value. */
    nd_strbuf_printf(sb, "#pragma unroll\n        for (int t = 0; t < %d; t++) {\n          const %s i0 = ib + t;\n"
                         "          if (ok && i0 < re) {\n", B, at);
    for (int g = 0; g < k->n_loads; g++) {
        if (!p.windowed[g]) continue;
        snprintf(name, sizeof name, "X%d[%d + t]", g, p.hi[g] - p.lo[g]);
        emit_load_as(sb, &k->loads[g], k->ndim, info->wide, "            ", 0, name, p.hi[g]);
    }
    for (int j = 0; j < k->n_loads; j++) {
        if (p.col_src[j] < 0) continue;
        snprintf(name, sizeof name, "F%d[t]", j);
        nd_strbuf_printf(sb, "            if (!ok%d) ", j);
        emit_load_as(sb, &k->loads[j], k->ndim, info->wide, "", 0, name, 0);
    }
    nd_strbuf_printf(sb, "          }\n        }\n");
    /* Publish the rows neighbours read, then wait for everyone's. */
    nd_strbuf_printf(sb, "#pragma unroll\n        for (int t = 0; t < %d; t++) {\n", B);
    for (int j = 0; j < k->n_loads; j++) {
        if (!first_of_pair(&p, j)) continue;
        int g = p.col_src[j], q = p.col_dr[j] - p.lo[g];
        nd_strbuf_printf(sb, "          P%d_%d[t][threadIdx.x] = X%d[t + %d];\n", g, q, g, q);
    }
    nd_strbuf_printf(sb, "        }\n        __syncthreads();\n");
    /* Pass 2: the points, row by row. */
    nd_strbuf_printf(sb, "#pragma unroll\n        for (int t = 0; t < %d; t++) {\n          const %s i0 = ib + t;\n"
                         "          if (ok && i0 < re) {\n", B, at);
    for (int j = 0; j < k->n_loads; j++) {
        const char *mt = nd_cuda_mem_type((nd_dtype)k->loads[j].dtype);
        if (p.col_src[j] >= 0) {
            int g = p.col_src[j];
            /* The index stays in the array whichever way ok<j> goes. */
            nd_strbuf_printf(sb, "            const %s l%d = ok%d ? P%d_%d[t][ok%d ? threadIdx.x + %d : threadIdx.x] : F%d[t];\n",
                              mt, j, j, g, p.col_dr[j] - p.lo[g], j, p.col_dc[j], j);
        } else {
            int g = p.lead[j];
            nd_strbuf_printf(sb, "            const %s l%d = X%d[t + %d];\n", mt, j, g, p.shift[j] - p.lo[g]);
        }
    }
    emit_compute_store(sb, k, info->wide, "            ", 1, 0);
    nd_strbuf_printf(sb, "          }\n        }\n        __syncthreads();\n");
    /* Slide the windows by a step. */
    for (int g = 0; g < k->n_loads; g++)
        if (p.windowed[g])
            for (int q = 0; q < p.hi[g] - p.lo[g]; q++)
                nd_strbuf_printf(sb, "        X%d[%d] = X%d[%d];\n", g, q, g, q + B);
    nd_strbuf_printf(sb, "      }\n    }\n  }\n}\n");
}

void nd_cuda_emit_elementwise_kernels(nd_strbuf *sb, const nd_kernel *k, const nd_cuda_kinfo *info) {
    const char *lt = info->wide ? "unsigned long long" : "unsigned int";
    const char *at = info->wide ? "long long" : "int";
    uint32_t all = k->ndim >= 32 ? 0xffffffffu : (1u << k->ndim) - 1u;
    if (info->group > 1) {
        emit_elementwise_grouped(sb, k, info);
    } else if (info->march > 0) {
        emit_elementwise_march(sb, k, info, at, all);
    } else if (info->unroll > 1) {
        emit_elementwise_unrolled(sb, k, info, lt, at, all);
    } else if (info->generic) {
        /* the extent from its argument word (nd_cuda_launch_info), in
         * the index type: the class says it fits */
        nd_cuda_emit_kernel_open(sb, info->name);
        nd_strbuf_printf(sb,
                          "  const %s n_ = (%s)A.w[%d];\n"
                          "  for (%s g = (%s)blockIdx.x * %du + threadIdx.x; g < n_; g += (%s)gridDim.x * %du) {\n",
                          lt, lt, info->extent_word, lt, lt, ND_CUDA_BLOCK, lt, ND_CUDA_BLOCK);
        nd_cuda_emit_unravel(sb, k, all, "g", at, "    ");
        nd_cuda_emit_point(sb, k, info->wide, "    ", 1, 0);
        nd_strbuf_printf(sb, "  }\n}\n");
    } else {
        nd_cuda_emit_kernel_open(sb, info->name);
        nd_strbuf_printf(sb,
                          "  for (%s g = (%s)blockIdx.x * %du + threadIdx.x; g < %" PRId64 "ull; g += (%s)gridDim.x * %du) {\n",
                          lt, lt, ND_CUDA_BLOCK, info->n, lt, ND_CUDA_BLOCK);
        nd_cuda_emit_unravel(sb, k, all, "g", at, "    ");
        nd_cuda_emit_point(sb, k, info->wide, "    ", 1, 0);
        nd_strbuf_printf(sb, "  }\n}\n");
    }
    if (!info->vec) return;

    /* The vector variant: launched only when every unit-stride pointer is
     * aligned to its vector width (checked on the host per launch). With
     * random draws its V points are one group (one body call), so they
     * share Philox calls. */
    int V = info->vec;
    int64_t nv = info->n / V;
    nd_cuda_emit_kernel_open(sb, info->name_vec);
    char nv_s[48];
    if (info->generic) {
        nd_strbuf_printf(sb, "  const %s n_ = (%s)A.w[%d], nv_ = n_ / %du;\n", lt, lt, info->extent_word, V);
        snprintf(nv_s, sizeof nv_s, "nv_");
    } else {
        snprintf(nv_s, sizeof nv_s, "%" PRId64 "ull", nv);
    }
    nd_strbuf_printf(sb,
                      "  for (%s g = (%s)blockIdx.x * %du + threadIdx.x; g < %s; g += (%s)gridDim.x * %du) {\n"
                      "    const %s b0 = (%s)g * %d;\n",
                      lt, lt, ND_CUDA_BLOCK, nv_s, lt, ND_CUDA_BLOCK, at, at, V);
    const char *sfx = info->wide ? "LL" : "";
    for (int j = 0; j < k->n_loads; j++) {
        const nd_ir_access *l = &k->loads[j];
        const char *mt = nd_cuda_mem_type((nd_dtype)l->dtype);
        if (l->strides[0] == 1) {
            const char *vt = vec_type(V * nd_cuda_mem_size((nd_dtype)l->dtype));
            nd_strbuf_printf(sb,
                              "    union { %s v; %s e[%d]; } u%d;\n"
                              "    u%d.v = *(const %s *)(((const %s *)A.w[%d]) + %" PRId64 "%s + b0);\n",
                              vt, mt, V, j, j, vt, mt, (int)l->slot, l->offset, sfx);
        } else {
            nd_strbuf_printf(sb, "    const %s l%d = ((const %s *)A.w[%d])[%" PRId64 "%s];\n", mt, j, mt,
                              (int)l->slot, l->offset, sfx);
        }
    }
    for (int j = 0; j < k->n_stores; j++) {
        const nd_ir_access *s = &k->stores[j].at;
        nd_strbuf_printf(sb, "    union { %s v; %s e[%d]; } w%d;\n", vec_type(V * nd_cuda_mem_size((nd_dtype)s->dtype)),
                          nd_cuda_mem_type((nd_dtype)s->dtype), V, j);
    }
    if (info->vec_group) {
        nd_strbuf_printf(sb, "    {\n      const %s i0 = b0;\n", at);
        emit_index_values(sb, k, "      ", V, 0);
        emit_call(sb, k, "      ", V, 0, 1);
    } else {
        nd_strbuf_printf(sb, "#pragma unroll\n    for (int e = 0; e < %d; e++) {\n      const %s i0 = b0 + e;\n", V, at);
        emit_index_values(sb, k, "      ", 1, 0);
        emit_call(sb, k, "      ", 1, 0, 1);
    }
    nd_strbuf_printf(sb, "    }\n");
    for (int j = 0; j < k->n_stores; j++) {
        const nd_ir_access *s = &k->stores[j].at;
        nd_strbuf_printf(sb, "    *(%s *)(((%s *)A.w[%d]) + %" PRId64 "%s + b0) = w%d.v;\n",
                          vec_type(V * nd_cuda_mem_size((nd_dtype)s->dtype)), nd_cuda_mem_type((nd_dtype)s->dtype), (int)s->slot, s->offset, sfx, j);
    }
    nd_strbuf_printf(sb, "  }\n");
    if (info->generic) {
        /* the tail, n_ % V points, if any: the first threads of block 0 */
        nd_strbuf_printf(sb,
                          "  const %s g = nv_ * %du + (%s)blockIdx.x * %du + threadIdx.x;\n"
                          "  if (g < n_) {\n    const %s i0 = (%s)g;\n",
                          lt, V, lt, ND_CUDA_BLOCK, at, at);
        nd_cuda_emit_point(sb, k, info->wide, "    ", 1, 0);
        nd_strbuf_printf(sb, "  }\n");
    } else if (info->n % V) {
        nd_strbuf_printf(sb,
                          "  const %s g = %" PRId64 "ull + (%s)blockIdx.x * %du + threadIdx.x;\n"
                          "  if (g < %" PRId64 "ull) {\n    const %s i0 = (%s)g;\n",
                          lt, nv * V, lt, ND_CUDA_BLOCK, info->n, at, at);
        nd_cuda_emit_point(sb, k, info->wide, "    ", 1, 0);
        nd_strbuf_printf(sb, "  }\n");
    }
    nd_strbuf_printf(sb, "}\n");
}
