/* nd_version and the struct_size fields of nd_config and nd_stats: a
 * program built against an older (smaller) struct keeps working when
 * fields are added, and one built against a newer struct is told. */
#include <stddef.h>

#include "common.h"

NDT_TEST(versioning, version_matches_the_header) {
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", ND_VERSION_MAJOR, ND_VERSION_MINOR, ND_VERSION_PATCH);
    cr_expect_str_eq(nd_version(), want);
    cr_expect_str_eq(nd_version(), ND_VERSION_STRING);
    cr_expect_eq(nd_version_number(), ND_VERSION_MAJOR * 10000 + ND_VERSION_MINOR * 100 + ND_VERSION_PATCH);
    cr_expect_eq(nd_version_number(), ND_VERSION_NUMBER);
    cr_expect_eq(nd_last_status(), ND_OK, "%s", nd_last_error());
}

Test(versioning, version_needs_no_runtime) {
    cr_expect_str_eq(nd_version(), ND_VERSION_STRING);
    cr_expect_eq(nd_version_number(), ND_VERSION_NUMBER);
}

/* Some work, so that the counters are not all zero. */
static void run_some_work(void) {
    nd_scope_begin();
    nd_array *a = nd_arange(ND_FLOAT32, 0, 64, 1);
    nd_array *b = nd_add(nd_mul(a, a), nd_scalar(1));
    float host[64];
    cr_assert_eq(nd_to_host(b, host, sizeof host), ND_OK, "%s", nd_last_error());
    cr_assert_eq(host[3], 10.0f);
    nd_scope_end();
}

NDT_TEST(versioning, stats_fill_the_whole_struct) {
    run_some_work();
    nd_stats s;
    memset(&s, 0xA5, sizeof s);
    nd_get_stats(&s);
    cr_expect_eq(s.struct_size, sizeof(nd_stats));
    cr_expect_gt(s.flushes, 0);
    cr_expect_gt(s.nodes_recorded, 0);
    cr_expect_gt(s.kernels_run, 0);
    cr_expect_lt(s.temp_allocations, 0xA5A5A5A5A5A5A5A5ull, "the last field was not written");
    /* The function (not the macro) fills this version's struct too. */
    nd_stats t;
    memset(&t, 0xA5, sizeof t);
    (nd_get_stats)(&t);
    cr_expect_eq(t.struct_size, sizeof(nd_stats));
    cr_expect_eq(t.flushes, s.flushes);
    cr_expect_eq(t.temp_allocations, s.temp_allocations);
}

/* A program built when nd_stats ended at kernels_run: its fields are
 * filled, the bytes after them (its next variable) are left alone. */
NDT_TEST(versioning, stats_into_an_older_smaller_struct) {
    run_some_work();
    nd_stats full;
    nd_get_stats(&full);
    const size_t old_size = offsetof(nd_stats, kernels_run) + sizeof(uint64_t);
    unsigned char buf[sizeof(nd_stats) + 16];
    memset(buf, 0x5C, sizeof buf);
    nd_get_stats_sized((nd_stats *)buf, old_size);
    cr_assert_eq(nd_last_status(), ND_OK, "%s", nd_last_error());
    nd_stats got;
    memcpy(&got, buf, sizeof got);
    cr_expect_eq(got.struct_size, old_size);
    cr_expect_eq(got.flushes, full.flushes);
    cr_expect_eq(got.plan_cache_hits, full.plan_cache_hits);
    cr_expect_eq(got.nodes_recorded, full.nodes_recorded);
    cr_expect_eq(got.kernels_run, full.kernels_run);
    for (size_t i = old_size; i < sizeof buf; i++)
        cr_assert_eq(buf[i], 0x5C, "byte %zu after the caller's %zu-byte struct was written", i, old_size);
}

/* A program built against a newer, bigger nd_stats: the fields this
 * library does not have read as zero, and struct_size tells how much is
 * real. */
NDT_TEST(versioning, stats_into_a_newer_bigger_struct) {
    run_some_work();
    struct {
        nd_stats known;
        uint64_t added_later[3];
    } big;
    unsigned char after[8];
    memset(&big, 0x5C, sizeof big);
    memset(after, 0x5C, sizeof after);
    nd_get_stats_sized(&big.known, sizeof big);
    cr_assert_eq(nd_last_status(), ND_OK, "%s", nd_last_error());
    cr_expect_eq(big.known.struct_size, sizeof(nd_stats));
    cr_expect_gt(big.known.flushes, 0);
    for (int i = 0; i < 3; i++) cr_expect_eq(big.added_later[i], 0, "unknown field %d not zeroed", i);
    for (size_t i = 0; i < sizeof after; i++) cr_expect_eq(after[i], 0x5C);
}

NDT_TEST(versioning, stats_bad_arguments) {
    nd_get_stats(NULL);
    cr_expect_eq(nd_last_status(), ND_ERR_ARG);
    cr_expect(strstr(nd_last_error(), "nd_get_stats"), "%s", nd_last_error());
    nd_clear_error();
    unsigned char buf[sizeof(nd_stats)];
    memset(buf, 0x5C, sizeof buf);
    nd_get_stats_sized((nd_stats *)buf, 4);
    cr_expect_eq(nd_last_status(), ND_ERR_ARG);
    cr_expect(strstr(nd_last_error(), "struct_size") && strstr(nd_last_error(), "sizeof(nd_stats)"), "%s",
              nd_last_error());
    for (size_t i = 0; i < sizeof buf; i++) cr_assert_eq(buf[i], 0x5C, "byte %zu written on error", i);
    nd_clear_error();
}

/* The config a program built against an older nd.h passes: struct_size
 * says it ends after `log`; the bytes after it (not its memory) hold
 * values that would be rejected if read. */
NDT_TEST(versioning, config_from_an_older_smaller_struct) {
    nd_shutdown();
    nd_config c;
    memset(&c, 0xFF, sizeof c);
    c.struct_size = offsetof(nd_config, log) + sizeof(int);
    c.backend = ND_BACKEND_AUTO; /* the environment's */
    c.num_threads = 2;
    c.devices = NULL;
    c.log = 0;
    /* Past it: pointers NULL (a full read must not crash), every number
     * -1 (profile = -1 is rejected). */
    c.dump_dot = c.cache_dir = c.trace = NULL;
    nd_status st = nd_init(&c);
    if (st != ND_OK && (st == ND_ERR_UNSUPPORTED || st == ND_ERR_BACKEND)) cr_skip_test("%s", nd_last_error());
    cr_assert_eq(st, ND_OK, "the bytes after struct_size were read: %s", nd_last_error());
    run_some_work();
    nd_shutdown();
    /* The same bytes read in full are an error: the test can tell. */
    c.struct_size = sizeof c;
    cr_expect_eq(nd_init(&c), ND_ERR_ARG);
    nd_clear_error();
    ndt_restart(NULL);
}

NDT_TEST(versioning, config_zero_size_and_init_macro_mean_defaults) {
    nd_config zero = {0};
    ndt_restart(&zero);
    run_some_work();
    nd_config init = ND_CONFIG_INIT;
    cr_expect_eq(init.struct_size, sizeof(nd_config));
    cr_expect_eq(init.backend, ND_BACKEND_AUTO);
    cr_expect_eq(init.trace, NULL);
    init.fusion = -1;
    ndt_restart(&init);
    nd_stats s0, s1;
    nd_get_stats(&s0);
    run_some_work();
    nd_get_stats(&s1);
    cr_expect_gt(s1.kernels_run - s0.kernels_run, 1, "fusion = -1 was not read: one kernel per node expected");
    ndt_restart(NULL);
}

/* A program built against a newer nd.h: unknown fields left zero are
 * fine; one it sets is an error naming struct_size. */
NDT_TEST(versioning, config_from_a_newer_bigger_struct) {
    struct {
        nd_config known;
        int added_later;
        int64_t added_later_too;
    } big;
    memset(&big, 0, sizeof big);
    big.known.struct_size = sizeof big;
    nd_shutdown();
    nd_status st = nd_init(&big.known);
    if (st == ND_ERR_UNSUPPORTED || st == ND_ERR_BACKEND) cr_skip_test("%s", nd_last_error());
    cr_assert_eq(st, ND_OK, "%s", nd_last_error());
    nd_shutdown();
    big.added_later_too = 7;
    cr_expect_eq(nd_init(&big.known), ND_ERR_ARG);
    cr_expect(strstr(nd_last_error(), "nd_init: nd_config.struct_size") && strstr(nd_last_error(), "newer nd.h"),
              "%s", nd_last_error());
    nd_clear_error();
    big.known.struct_size = 3;
    cr_expect_eq(nd_init(&big.known), ND_ERR_ARG);
    cr_expect(strstr(nd_last_error(), "too small"), "%s", nd_last_error());
    nd_clear_error();
    ndt_restart(NULL);
}
