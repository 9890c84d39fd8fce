/* The tables that let a new backend or plan step kind plug in at one place:
 * the backend registry (src/backends/registry.c) and the step kinds
 * (src/backends/step_kinds.c). Internal API; the suites that run programs
 * check the behaviour built on them. */
#include <strings.h>

#include "backends/registry.h"
#include "backends/step_kinds.h"
#include "common.h"

Test(structure, registry_rows_are_complete_and_found_by_name_and_kind) {
    int n = 0;
    const nd_backend_entry *all = nd_backend_registry(&n);
    cr_assert_geq(n, 2);
    for (int i = 0; i < n; i++) {
        const nd_backend_entry *e = &all[i];
        cr_assert(e->name && e->label && e->supports && e->create, "row %d incomplete", i);
        cr_expect_neq(e->kind, ND_BACKEND_AUTO, "%s", e->name);
        cr_expect_eq(nd_backend_by_name(e->name), e, "%s", e->name);
        cr_expect_eq(nd_backend_by_kind(e->kind), e, "%s", e->name);
        char upper[32];
        snprintf(upper, sizeof upper, "%s", e->name);
        for (char *c = upper; *c; c++) *c = (char)(*c - 'a' + 'A');
        cr_expect_eq(nd_backend_by_name(upper), e, "ND_BACKEND is case-insensitive: %s", upper);
        if (e->alias) cr_expect_eq(nd_backend_by_name(e->alias), e, "%s", e->alias);
        for (int j = 0; j < i; j++) {
            cr_expect(strcasecmp(all[j].name, e->name), "two rows named %s", e->name);
            cr_expect_neq(all[j].kind, e->kind, "two rows of kind %d", (int)e->kind);
        }
    }
    cr_expect_null(nd_backend_by_name("auto"), "auto is not a backend");
    cr_expect_null(nd_backend_by_name("tpu"));
    cr_expect_null(nd_backend_by_kind(ND_BACKEND_AUTO));
    cr_expect_null(nd_backend_by_kind((nd_backend_kind)99));
    /* auto's order: the CPU, which always works, comes last. */
    cr_expect_str_eq(all[n - 1].name, "cpu");
    cr_expect_eq(nd_backend_by_name("gpu"), nd_backend_by_kind(ND_BACKEND_CUDA));
}

Test(structure, auto_opens_a_supported_backend) {
    nd_clear_error();
    nd_backend *be = NULL;
    nd_backend_config cfg = {0};
    cfg.num_threads = 1;
    cr_assert_eq(nd_backend_open(ND_BACKEND_AUTO, &cfg, &be), ND_OK, "%s", nd_last_error());
    cr_assert_not_null(be);
    const nd_backend_entry *e = nd_backend_by_name(be->name);
    cr_assert_not_null(e, "opened backend '%s' is not in the registry", be->name);
    cr_expect_eq(e->supports(&cfg), ND_OK, "auto opened %s, whose probe fails", be->name);
    /* What auto skipped left no error behind. */
    cr_expect_eq(nd_last_status(), ND_OK, "%s", nd_last_error());
    be->destroy(be);
    be = NULL;
    cr_assert_eq(nd_backend_open(ND_BACKEND_CPU, &cfg, &be), ND_OK, "%s", nd_last_error());
    cr_expect_str_eq(be->name, "cpu");
    be->destroy(be);
}

Test(structure, every_step_kind_has_a_row) {
    for (int k = 0; k < ND_STEP_KIND_COUNT; k++) {
        cr_expect_not_null(nd_step_kinds[k].name, "kind %d", k);
        cr_expect_lt((int)nd_step_kinds[k].category, ND_PROFILE_KIND_COUNT, "kind %d", k);
        cr_expect_str_neq(nd_profile_kind_name(nd_step_kinds[k].category), "?", "kind %d", k);
    }
    cr_expect_eq(nd_step_kinds[ND_STEP_KERNEL].category, ND_PROFILE_KERNEL);
    cr_expect_eq(nd_step_kinds[ND_STEP_MATMUL].category, ND_PROFILE_LIBRARY);
    cr_expect_eq(nd_step_kinds[ND_STEP_COPY].category, ND_PROFILE_COPY);
}

/* What each kind reads and writes, in which memory (plan memory 1, a
 * device): the facts stream assignment, chunking and the executor use. */
Test(structure, step_accesses_name_slots_modes_and_memories) {
    nd_step mm = {.kind = ND_STEP_MATMUL};
    mm.matmul.a_slot = 4;
    mm.matmul.b_slot = 7;
    mm.matmul.c_slot = 2;
    mm.matmul.m = mm.matmul.n = mm.matmul.k = 8;
    mm.matmul.dtype = ND_FLOAT32;
    cr_assert_eq(nd_step_n_accesses(&mm), 3);
    const int32_t want_slot[3] = {4, 7, 2};
    const uint8_t want_mode[3] = {ND_ACCESS_READ, ND_ACCESS_READ, ND_ACCESS_WRITE};
    for (int j = 0; j < 3; j++) {
        nd_step_access a = nd_step_access_at(&mm, j, 1);
        cr_expect_eq(a.slot, want_slot[j], "matmul access %d", j);
        cr_expect_eq(a.mode, want_mode[j], "matmul access %d", j);
        cr_expect_eq(a.memory, 1, "matmul access %d", j);
    }
    char label[112];
    nd_step_label(&mm, label, sizeof label);
    cr_expect_str_eq(label, "matmul 8x8x8 float32");

    nd_step cp = {.kind = ND_STEP_COPY};
    cp.copy.src_slot = cp.copy.dst_slot = 3;
    cp.copy.src_memory = ND_MEMORY_HOST;
    cp.copy.dst_memory = 1;
    cp.copy.bytes = 64;
    cr_assert_eq(nd_step_n_accesses(&cp), 2);
    nd_step_access src = nd_step_access_at(&cp, 0, 1), dst = nd_step_access_at(&cp, 1, 1);
    cr_expect(src.slot == 3 && src.mode == ND_ACCESS_READ && src.memory == ND_MEMORY_HOST);
    cr_expect(dst.slot == 3 && dst.mode == ND_ACCESS_WRITE && dst.memory == 1);
    nd_step_label(&cp, label, sizeof label);
    cr_expect_str_eq(label, "copy host->device");
    cr_expect(nd_step_is_copy(&cp));
    cr_expect(!nd_step_is_copy(&mm));

    int32_t slots[2] = {5, 6};
    uint8_t acc[2] = {ND_ACCESS_READ, ND_ACCESS_WRITE | ND_ACCESS_REGION};
    nd_kernel k;
    memset(&k, 0, sizeof k);
    k.n_slots = 2;
    k.ndim = 2;
    k.shape[0] = 3;
    k.shape[1] = 4;
    snprintf(k.name, sizeof k.name, "add");
    nd_step ks = {.kind = ND_STEP_KERNEL, .kernel = &k, .slots = slots, .slot_access = acc};
    cr_assert_eq(nd_step_n_accesses(&ks), 2);
    nd_step_access k1 = nd_step_access_at(&ks, 1, 1);
    cr_expect(k1.slot == 6 && k1.mode == (ND_ACCESS_WRITE | ND_ACCESS_REGION) && k1.memory == 1);
    char line[320];
    nd_step_describe(&ks, line, sizeof line);
    cr_expect_str_eq(line, "kernel add, 12 points: r slot 5, w slot 6 (region)");
}
