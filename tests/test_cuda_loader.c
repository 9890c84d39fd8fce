/* The CUDA libraries are loaded at run time (src/backends/cuda/cuda_loader.c):
 * libnd runs where they are missing, ND_BACKEND=auto then quietly takes the
 * CPU, ND_BACKEND=cuda says which library it could not find, and a program
 * on the CPU backend never maps them. Each test is its own process
 * (Criterion forks), so each loads afresh. */
#include <stdlib.h>
#include <string.h>

#include "common.h"

/* Whether a file whose name contains `part` is mapped into this process. */
static int mapped(const char *part) {
    FILE *f = fopen("/proc/self/maps", "r");
    cr_assert(f, "cannot read /proc/self/maps");
    char line[4096];
    int found = 0;
    while (fgets(line, sizeof line, f))
        if (strstr(line, part)) found = 1;
    fclose(f);
    return found;
}

static void hide_cuda(void) { cr_assert_eq(setenv("ND_CUDA_LIB_DIR", "/nonexistent/nd-test", 1), 0); }

Test(cuda_loader, cpu_backend_maps_no_cuda_library) {
    nd_config cfg = ND_CONFIG_INIT;
    cfg.backend = ND_BACKEND_CPU;
    cr_assert_eq(nd_init(&cfg), ND_OK, "%s", nd_last_error());
    nd_array *r = nd_arange(ND_FLOAT32, 0, 100, 1), *one = nd_scalar(1), *a = nd_add(r, one);
    float v[100];
    cr_assert_eq(nd_to_host(a, v, sizeof v), ND_OK, "%s", nd_last_error());
    cr_expect_eq(v[99], 100.0f);
    cr_expect_not(mapped("libcudart"), "the CPU backend mapped libcudart");
    cr_expect_not(mapped("libnvrtc"), "the CPU backend mapped libnvrtc");
    cr_expect_not(mapped("libcublas"), "the CPU backend mapped libcublas");
    nd_free(a), nd_free(r), nd_free(one);
    nd_shutdown();
}

Test(cuda_loader, cuda_without_its_libraries_names_the_missing_one) {
    hide_cuda();
    nd_config cfg = ND_CONFIG_INIT;
    cfg.backend = ND_BACKEND_CUDA;
    nd_status s = nd_init(&cfg);
    cr_assert_eq(s, ND_ERR_UNSUPPORTED, "%s: %s", nd_status_name(s), nd_last_error());
#ifdef NDT_CUDA_BUILT
    /* Built with the toolkit: the loader's own message. */
    cr_expect(strstr(nd_last_error(), "cannot load libcudart.so."), "%s", nd_last_error());
    cr_expect(strstr(nd_last_error(), "ND_CUDA_LIB_DIR='/nonexistent/nd-test'"), "%s", nd_last_error());
#else
    cr_expect(strstr(nd_last_error(), "not built"), "%s", nd_last_error());
#endif
    cr_expect_not(mapped("libcudart"));
    nd_clear_error();
    /* The CPU backend still starts in the same process. */
    cfg.backend = ND_BACKEND_CPU;
    cr_assert_eq(nd_init(&cfg), ND_OK, "%s", nd_last_error());
    nd_shutdown();
}

Test(cuda_loader, auto_falls_back_to_the_cpu_quietly) {
    hide_cuda();
    cr_assert_eq(unsetenv("ND_BACKEND"), 0);
    nd_config cfg = ND_CONFIG_INIT; /* backend auto */
    cr_assert_eq(nd_init(&cfg), ND_OK, "%s", nd_last_error());
    cr_expect_str_eq(nd_backend_name(), "cpu");
    cr_expect_eq(nd_last_status(), ND_OK, "the fallback left an error behind: %s", nd_last_error());
    nd_array *r = nd_arange(ND_INT32, 0, 10, 1), *a = nd_sum(r, ND_ALL_AXES);
    int64_t v = 0;
    cr_assert_eq(nd_to_host(a, &v, sizeof v), ND_OK, "%s", nd_last_error());
    cr_expect_eq(v, 45);
    nd_free(a), nd_free(r);
    nd_shutdown();
}

#ifdef NDT_CUDA_BUILT
/* Where the toolkit's libraries are (this build machine has them): the
 * loader finds them by soname or in the build's toolkit folder and gets
 * as far as asking the driver for devices. */
Test(cuda_loader, toolkit_libraries_load) {
    unsetenv("ND_CUDA_LIB_DIR");
    nd_config cfg = ND_CONFIG_INIT;
    cfg.backend = ND_BACKEND_CUDA;
    nd_status s = nd_init(&cfg);
    if (s == ND_OK) {
        cr_expect(mapped("libcudart"));
        nd_shutdown();
        return;
    }
    cr_expect_eq(s, ND_ERR_UNSUPPORTED, "%s", nd_last_error());
    cr_expect_null(strstr(nd_last_error(), "cannot load"), "%s", nd_last_error());
    cr_expect(mapped("libcudart") && mapped("libnvrtc") && mapped("libcublas"),
              "the loader should have opened all three: %s", nd_last_error());
}
#endif
