#include "common/body.h"

#include <stdlib.h>

#include "common/freelist.h"
#include "common/hash.h"

static nd_freelist *body_ring;

void nd_body_set_ring(nd_freelist *ring) { body_ring = ring; }

void nd_body_ref_take(nd_body *b) { __atomic_add_fetch(&b->refs, 1, __ATOMIC_RELAXED); }

void nd_body_unref(nd_body *b) {
    if (!b || __atomic_sub_fetch(&b->refs, 1, __ATOMIC_ACQ_REL) != 0) return;
    b->magic = 0;
    free(b->in_shape);
    free(b->entries);
    free(b->consts);
    b->in_shape = NULL;
    b->entries = NULL;
    b->consts = NULL;
    /* The struct waits (magic 0, freed 1) while ND_FREELIST_DELAY more
     * bodies go, then goes back to free() (the ring keeps none for reuse). */
    nd_freelist_give_delayed(body_ring, b);
}

static uint64_t hash_ref(uint64_t h, const nd_body_ref *r) {
    return nd_hash_pair(h ^ ((uint64_t)r->kind << 8 | r->dtype), r->index);
}

void nd_body_seal(nd_body *b) {
    uint64_t h = nd_hash_pair(ND_HASH_SEED ^ 0xB0D7u, (uint64_t)b->n_in << 32 | (uint64_t)b->n_entries);
    for (int i = 0; i < b->n_in; i++) {
        h = nd_hash_pair(h ^ b->in_dtype[i], b->in_ndim[i]);
        for (int k = 0; k < b->in_ndim[i]; k++) h = nd_hash_pair(h, (uint64_t)b->in_shape[i][k]);
    }
    h = nd_hash_pair(h ^ b->out_dtype, b->out_ndim);
    for (int k = 0; k < b->out_ndim; k++) h = nd_hash_pair(h, (uint64_t)b->out_shape[k]);
    h = hash_ref(h, &b->out);
    for (int32_t e = 0; e < b->n_entries; e++) {
        const nd_body_entry *en = &b->entries[e];
        h = nd_hash_pair(h, (uint64_t)en->op | (uint64_t)en->dtype << 8 | (uint64_t)en->cdtype << 16 |
                                (uint64_t)en->n_in << 24);
        for (int k = 0; k < en->n_in; k++) h = hash_ref(h, &en->in[k]);
    }
    b->hash = nd_hash_pair(h, (uint64_t)b->n_consts);
    b->weight = b->n_entries > 0 ? b->n_entries : 1;
    b->calls = 0;
    for (int32_t e = 0; e < b->n_entries; e++) b->calls += nd_op_ulps((nd_op)b->entries[e].op) > 0 ? 8 : 1;
    if (b->calls == 0) b->calls = 1;
}
