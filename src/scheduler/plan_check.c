/* ND_CHECK_PLANS: a cached plan against a fresh one (plan_check.h). */
#include "scheduler/plan_check.h"

#include <stdio.h>
#include <string.h>

#include "backends/step_kinds.h"

#define DIFFER(...)                                                                                                    \
    do {                                                                                                               \
        snprintf(why, cap, __VA_ARGS__);                                                                               \
        return 0;                                                                                                      \
    } while (0)

static int same_slot(const nd_plan_slot *a, const nd_plan_slot *b) {
    return a->role == b->role && a->walk_index == b->walk_index && a->bytes == b->bytes && a->memory == b->memory &&
           a->written == b->written && a->copied_to == b->copied_to && a->used == b->used &&
           a->last_writer == b->last_writer && a->device == b->device && a->split_temp == b->split_temp &&
           a->piece_of_twin == b->piece_of_twin && a->natural_row == b->natural_row &&
           a->storage == b->storage;
}

/* What a step does, apart from where its views start: its description
 * (kind, kernel name, slots and accesses, copy sizes), stream, device,
 * waits, the kernel's structure and which parameters it takes. */
static int same_step(const nd_step *a, const nd_step *b, int exact, char *why, size_t cap, int32_t s) {
    char ta[320], tb[320];
    nd_step_describe(a, ta, sizeof ta);
    nd_step_describe(b, tb, sizeof tb);
    if (strcmp(ta, tb)) DIFFER("step %d: '%s' cached, '%s' fresh", s, ta, tb);
    if (a->stream != b->stream || a->device != b->device || a->part != b->part)
        DIFFER("step %d ('%s'): stream %d device %d part %d cached, stream %d device %d part %d fresh", s, ta,
               a->stream, a->device, a->part, b->stream, b->device, b->part);
    if (a->n_waits != b->n_waits || (a->n_waits && memcmp(a->waits, b->waits, sizeof *a->waits * (size_t)a->n_waits)))
        DIFFER("step %d ('%s'): waits for other steps", s, ta);
    if (a->kind == ND_STEP_KERNEL) {
        if (a->kernel->hash != b->kernel->hash) DIFFER("step %d ('%s'): another kernel", s, ta);
        const nd_kernel *k = a->kernel;
        if (k->n_params && memcmp(a->params, b->params, sizeof *a->params * (size_t)k->n_params))
            DIFFER("step %d ('%s'): other parameters", s, ta);
        if (exact && (!a->slot_byte_offset != !b->slot_byte_offset ||
                      (a->slot_byte_offset && memcmp(a->slot_byte_offset, b->slot_byte_offset,
                                                     sizeof *a->slot_byte_offset * (size_t)k->n_slots))))
            DIFFER("step %d ('%s'): views start elsewhere", s, ta);
    }
    return 1;
}

int nd_plan_check_same(const nd_plan *cached, const nd_plan *fresh, int exact, char *why, size_t cap) {
    const nd_plan *a = cached, *b = fresh;
    if (a->n_nodes != b->n_nodes) DIFFER("%d nodes cached, %d fresh", a->n_nodes, b->n_nodes);
    for (int32_t i = 0; i < a->n_nodes; i++)
        if (a->node_materialised[i] != b->node_materialised[i])
            DIFFER("node %d's value %s memory in the cached plan, %s in the fresh one", i,
                   a->node_materialised[i] ? "goes to" : "stays out of", b->node_materialised[i] ? "does" : "does not");
    if (a->n_steps != b->n_steps) DIFFER("%d steps cached, %d fresh", a->n_steps, b->n_steps);
    if (a->n_slots != b->n_slots) DIFFER("%d slots cached, %d fresh", a->n_slots, b->n_slots);
    for (int32_t i = 0; i < a->n_slots; i++)
        if (!same_slot(&a->slots[i], &b->slots[i])) DIFFER("slot %d: role, size, memory or use differ", i);
    for (int32_t s = 0; s < a->n_steps; s++)
        if (!same_step(&a->steps[s], &b->steps[s], exact, why, cap, s)) return 0;
    if (a->n_storages != b->n_storages ||
        (a->n_storages && memcmp(a->storage_bytes, b->storage_bytes, sizeof *a->storage_bytes * (size_t)a->n_storages)))
        DIFFER("temporary storages differ");
    if (a->n_twins != b->n_twins ||
        (a->n_twins && (memcmp(a->twin_walk_index, b->twin_walk_index, sizeof(int32_t) * (size_t)a->n_twins) ||
                        memcmp(a->twin_last_store, b->twin_last_store, sizeof(int32_t) * (size_t)a->n_twins))))
        DIFFER("twins differ");
    if (a->n_pieces != b->n_pieces) DIFFER("%d piece records cached, %d fresh", a->n_pieces, b->n_pieces);
    for (int32_t i = 0; i < a->n_pieces; i++) {
        const nd_plan_pieces *p = &a->pieces[i], *q = &b->pieces[i];
        if (p->walk_index != q->walk_index || p->twin != q->twin || p->keep != q->keep ||
            p->whole_stale != q->whole_stale || p->ghosts_fresh != q->ghosts_fresh || p->n_dev != q->n_dev ||
            p->row_bytes != q->row_bytes || p->rows != q->rows || memcmp(p->p0, q->p0, sizeof p->p0) ||
            memcmp(p->pn, q->pn, sizeof p->pn))
            DIFFER("piece record %d differs", i);
    }
    return 1;
}
