/* The step-kind table and the per-kind answers every pass asks (see
 * step_kinds.h). Each switch here names every kind and has no default, so
 * a kind added to nd_step_kind without its answers does not build. */
#include "backends/step_kinds.h"

#include "common/user_kernel.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>

const nd_step_kind_info nd_step_kinds[ND_STEP_KIND_COUNT] = {
    [ND_STEP_KERNEL] = {"kernel", ND_PROFILE_KERNEL},
    [ND_STEP_MATMUL] = {"matmul", ND_PROFILE_LIBRARY},
    [ND_STEP_COPY] = {"copy", ND_PROFILE_COPY},
    /* A kernel for nd_stats and profiles, and placed on the compute
     * streams like one; never chunked or fused (it is no nd_kernel). */
    [ND_STEP_USER] = {"user", ND_PROFILE_KERNEL},
};
static_assert(ND_STEP_KIND_COUNT == 4, "a new step kind needs its row in nd_step_kinds and its cases below");

int32_t nd_step_n_accesses(const nd_step *st) {
    switch (st->kind) {
    case ND_STEP_KERNEL: return st->kernel->n_slots;
    case ND_STEP_MATMUL: return 3;
    case ND_STEP_COPY: return 2;
    case ND_STEP_USER: return st->user.n_in + st->user.n_out;
    }
    return 0;
}

nd_step_access nd_step_access_at(const nd_step *st, int32_t j, int32_t plan_memory) {
    switch (st->kind) {
    case ND_STEP_KERNEL: return (nd_step_access){st->slots[j], st->slot_access[j], plan_memory};
    case ND_STEP_MATMUL: {
        const nd_matmul_desc *m = &st->matmul;
        return j == 0   ? (nd_step_access){m->a_slot, ND_ACCESS_READ, plan_memory}
               : j == 1 ? (nd_step_access){m->b_slot, ND_ACCESS_READ, plan_memory}
                        : (nd_step_access){m->c_slot, m->accumulate ? ND_ACCESS_READ | ND_ACCESS_WRITE
                                                                    : ND_ACCESS_WRITE, plan_memory};
    }
    case ND_STEP_COPY:
        /* Between a buffer's memories (src_slot == dst_slot) or from a
         * buffer into a staging temporary. */
        return j == 0 ? (nd_step_access){st->copy.src_slot, ND_ACCESS_READ, st->copy.src_memory}
                      : (nd_step_access){st->copy.dst_slot, ND_ACCESS_WRITE, st->copy.dst_memory};
    case ND_STEP_USER: return (nd_step_access){st->user.args[j].slot, st->user.args[j].access, plan_memory};
    }
    return (nd_step_access){-1, 0, -1};
}

void nd_step_free(nd_step *st) {
    free(st->waits);
    st->waits = NULL;
    switch (st->kind) {
    case ND_STEP_KERNEL:
        free(st->kernel);
        free(st->slots);
        free(st->params);
        free(st->slot_access);
        free(st->slot_byte_offset);
        return;
    case ND_STEP_USER:
        free(st->user.args);
        st->user.args = NULL;
        nd_user_kernel_unref(st->user.kernel);
        st->user.kernel = NULL;
        return;
    case ND_STEP_MATMUL:
    case ND_STEP_COPY: return;
    }
}

/* "user kernel scale", or a library routine with its first input's dtype
 * and size: "cumulate float32[1048576]". */
static void call_label(const nd_user_desc *u, char *buf, size_t cap) {
    if (u->lib == ND_LIB_NONE) {
        snprintf(buf, cap, "user kernel %s", u->kernel->name);
        return;
    }
    const nd_user_arg_desc *a = &u->args[0];
    double elems = 1;
    for (int d = 0; d < a->ndim; d++) elems *= (double)a->shape[d];
    snprintf(buf, cap, "%s %s[%.0f]", nd_lib_calls[u->lib].name, nd_dtype_name((nd_dtype)a->dtype), elems);
}

static const char *copy_direction(const nd_copy_desc *c) {
    return c->src_memory == 0 && c->dst_memory != 0   ? "copy host->device"
           : c->dst_memory == 0 && c->src_memory != 0 ? "copy device->host"
                                                      : "copy";
}

void nd_step_label(const nd_step *st, char *buf, size_t cap) {
    switch (st->kind) {
    case ND_STEP_KERNEL: snprintf(buf, cap, "%s%s", st->kernel->name, nd_step_strip_suffix(st)); return;
    case ND_STEP_MATMUL: {
        const nd_matmul_desc *mm = &st->matmul;
        snprintf(buf, cap, "matmul %lldx%lldx%lld %s", (long long)mm->m, (long long)mm->n, (long long)mm->k,
                 nd_dtype_name(mm->dtype));
        return;
    }
    case ND_STEP_COPY: snprintf(buf, cap, "%s", copy_direction(&st->copy)); return;
    case ND_STEP_USER: call_label(&st->user, buf, cap); return;
    }
    snprintf(buf, cap, "?");
}

void nd_step_describe(const nd_step *st, char *text, size_t cap) {
    size_t len = 0;
#define APPEND(...)                                                                         \
    do {                                                                                    \
        if (len < cap) len += (size_t)snprintf(text + len, cap - len, __VA_ARGS__);         \
    } while (0)
    text[0] = '\0';
    switch (st->kind) {
    case ND_STEP_KERNEL: {
        long long points = 1;
        for (int d = 0; d < st->kernel->ndim; d++) points *= (long long)st->kernel->shape[d];
        APPEND("kernel %s%s, %lld points:", st->kernel->name, nd_step_strip_suffix(st), points);
        for (int32_t i = 0; i < st->kernel->n_slots; i++) {
            uint8_t a = st->slot_access[i];
            APPEND("%s %s slot %d%s", i ? "," : "", a & ND_ACCESS_WRITE ? (a & ND_ACCESS_READ ? "rw" : "w") : "r",
                   st->slots[i], a & ND_ACCESS_REGION ? " (region)" : "");
        }
        break;
    }
    case ND_STEP_MATMUL:
        APPEND("matmul %lldx%lldx%lld", (long long)st->matmul.m, (long long)st->matmul.n,
               (long long)st->matmul.k);
        break;
    case ND_STEP_COPY:
        APPEND("copy slot %d memory %d -> slot %d memory %d, %zu bytes", st->copy.src_slot, st->copy.src_memory,
               st->copy.dst_slot, st->copy.dst_memory, st->copy.bytes);
        break;
    case ND_STEP_USER:
        char callee[96];
        call_label(&st->user, callee, sizeof callee);
        APPEND("%s:", callee);
        for (int32_t i = 0; i < st->user.n_in + st->user.n_out; i++) {
            uint8_t a = st->user.args[i].access;
            APPEND("%s %s slot %d%s", i ? "," : "", a & ND_ACCESS_WRITE ? "w" : "r", st->user.args[i].slot,
                   a & ND_ACCESS_REGION ? " (in place)" : "");
        }
        break;
    }
#undef APPEND
}

/* The unique bytes a kernel must move, as the benchmarks' floors count
 * them: per slot, the elements it reads once and the elements it writes
 * once. The accesses of one slot and direction (a stencil's shifted loads
 * of one grid) count as the smaller of the union of their address spans
 * and the sum of their elements (broadcast axes once): the span for
 * overlapping shifted views, the sum for disjoint strided ones (a column
 * and its neighbour). */
typedef struct {
    int32_t slot;
    uint8_t write;
    int64_t lo, hi; /* element span [lo, hi] */
    double elems;
    double item;
} access_span;

static access_span span_of(const nd_kernel *k, const nd_ir_access *a, int write, const uint32_t *skip_axes) {
    access_span s = {a->slot, (uint8_t)write, a->offset, a->offset, 1, (double)nd_dtype_size((nd_dtype)a->dtype)};
    for (int32_t d = 0; d < k->ndim; d++) {
        if (a->strides[d] == 0 || k->shape[d] == 0 || (skip_axes && (*skip_axes & (1u << d)))) continue;
        int64_t reach = a->strides[d] * (k->shape[d] - 1);
        if (reach < 0) s.lo += reach;
        else s.hi += reach;
        s.elems *= (double)k->shape[d];
    }
    for (int32_t d = 0; d < k->ndim; d++)
        if (k->shape[d] == 0) s.elems = 0;
    return s;
}

static int by_slot_then_lo(const void *x, const void *y) {
    const access_span *a = x, *b = y;
    if (a->slot != b->slot) return a->slot < b->slot ? -1 : 1;
    if (a->write != b->write) return a->write < b->write ? -1 : 1;
    /* spans count elements of their own dtype (a part of a complex buffer
     * and the buffer itself differ): group by element size too */
    if (a->item != b->item) return a->item < b->item ? -1 : 1;
    return a->lo < b->lo ? -1 : a->lo > b->lo;
}

double nd_kernel_unique_bytes(const nd_kernel *k) {
    int32_t n = k->n_loads + k->n_stores + (k->has_reduce ? 1 : 0);
    if (n == 0) return 0;
    access_span stack[32];
    access_span *sp = n <= 32 ? stack : malloc(sizeof *sp * (size_t)n);
    if (!sp) return 0;
    int32_t m = 0;
    for (int32_t j = 0; j < k->n_loads; j++) sp[m++] = span_of(k, &k->loads[j], 0, NULL);
    for (int32_t g = 0; g < k->n_gathers; g++) {
        /* a gather's source spans its indexed axis too (one element per
         * point is read, which the element count already says) */
        access_span *s = &sp[k->gathers[g].load];
        for (int32_t a = 0; a < k->gathers[g].n_axes; a++) {
            int64_t reach = k->gathers[g].stride[a] * (k->gathers[g].size[a] - 1);
            if (reach < 0) s->lo += reach;
            else s->hi += reach;
        }
    }
    for (int32_t j = 0; j < k->n_stores; j++) sp[m++] = span_of(k, &k->stores[j].at, 1, NULL);
    if (k->has_reduce) sp[m++] = span_of(k, &k->reduce.out, 1, &k->reduce.axes);
    qsort(sp, (size_t)m, sizeof *sp, by_slot_then_lo);
    double bytes = 0;
    for (int32_t i = 0; i < m;) {
        /* One group: a slot, a direction and an element size. */
        int32_t j = i;
        double sum = 0, merged = 0;
        int64_t lo = sp[i].lo, hi = sp[i].hi;
        for (; j < m && sp[j].slot == sp[i].slot && sp[j].write == sp[i].write && sp[j].item == sp[i].item; j++) {
            sum += sp[j].elems;
            if (sp[j].lo > hi + 1) { /* a gap: close the merged interval */
                merged += (double)(hi - lo + 1);
                lo = sp[j].lo;
                hi = sp[j].hi;
            } else if (sp[j].hi > hi) {
                hi = sp[j].hi;
            }
        }
        merged += (double)(hi - lo + 1);
        bytes += (sum < merged ? sum : merged) * sp[i].item;
        i = j;
    }
    if (sp != stack) free(sp);
    return bytes;
}

void nd_profile_add_step(nd_profile *p, const nd_step *st, const char *kernel_name, const char *value_name,
                         double seconds) {
    char label[112], name[256];
    if (kernel_name)
        snprintf(label, sizeof label, "%s", kernel_name);
    else
        nd_step_label(st, label, sizeof label);
    if (value_name)
        snprintf(name, sizeof name, "%s: %s", value_name, label);
    else
        snprintf(name, sizeof name, "%s", label);
    double bytes = 0, flops = 0;
    int local = 1;
    switch (st->kind) {
    case ND_STEP_KERNEL: bytes = nd_kernel_unique_bytes(st->kernel); break;
    case ND_STEP_MATMUL: {
        const nd_matmul_desc *m = &st->matmul;
        double batch = 1;
        for (int d = 0; d < m->batch_ndim; d++) batch *= (double)m->batch_shape[d];
        flops = 2.0 * batch * (double)m->m * (double)m->n * (double)m->k;
        break;
    }
    case ND_STEP_COPY:
        /* Within one memory a copy reads and writes its bytes, as the
         * copy bandwidth counts them; between memories the bus carries
         * them once. */
        local = st->copy.src_memory == st->copy.dst_memory;
        bytes = (double)st->copy.bytes * (local ? 2.0 : 1.0);
        break;
    case ND_STEP_USER:
        /* What its arguments span, once each (the kernel may read less). */
        for (int32_t i = 0; i < st->user.n_in + st->user.n_out; i++) {
            const nd_user_arg_desc *a = &st->user.args[i];
            double elems = 1;
            for (int d = 0; d < a->ndim; d++) elems *= (double)a->shape[d];
            bytes += elems * (double)nd_dtype_size((nd_dtype)a->dtype);
        }
        break;
    }
    nd_profile_add(p, nd_step_category(st), name, seconds, bytes, flops, local);
}
