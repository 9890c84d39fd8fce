/* Cholesky's pack pass (chol_source.c) where there is no GPU (see
 * chol_check.sh): their source is written to WORKDIR/chol.cu, compiled
 * with NVRTC for sm_90 (the toolkit, no device), then built for the host
 * with chol_emulate.cpp (emulate_harness.h) and run there.
 * Usage: chol_check WORKDIR */
#include <dlfcn.h>
#include <stdio.h>

#include "emulate_harness.h"

#ifndef CHOL_EMULATE
#error "build with -DCHOL_EMULATE='\"/path/to/chol_emulate.cpp\"'"
#endif

/* chol_source.c's (lib_linalg.h declares it beside the routine). */
const char *nd_cuda_chol_source(void);

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    const char *src = nd_cuda_chol_source();
    char path[4096], text[8400];
    snprintf(path, sizeof path, "%s/chol.cu", argv[1]);
    FILE *f = fopen(path, "w");
    if (!f || fputs(src, f) < 0 || fclose(f)) return 1;
    if (!emu_nvrtc_compiles(src, "nd_chol_triangles", NULL)) {
        printf("FAIL: NVRTC did not compile the Cholesky pack pass\n");
        return 1;
    }
    printf("NVRTC sm_90: the Cholesky pack pass compiles\n");
    /* nd's tile groups (the source's NDK_GROUP), then blocks walking single
     * tile rows (NDK_GROUP 1, the order bench_linalg_bench compares with) */
    static const char *const groups[] = {"", "#define NDK_GROUP 1\n"};
    static const char *const stems[] = {"chol_emulate", "chol_emulate1"};
    int failed = 0;
    for (int g = 0; g < 2; g++) {
        snprintf(text, sizeof text, "%s#define CHOL_SOURCE \"%s\"\n#include \"%s\"\n", groups[g], path, CHOL_EMULATE);
        void *h = emu_build(text, argv[1], stems[g], NULL);
        int (*run)(void) = h ? (int (*)(void))dlsym(h, "emu_main") : NULL;
        if (!run) return 1;
        failed |= run();
    }
    return failed;
}
