/* Writes Cholesky's triangle-pass source (chol_source.c) to WORKDIR/chol.cu
 * and compiles it with NVRTC for sm_90 (the toolkit, no device): see
 * chol_check.sh, which then runs it on the host (chol_emulate.cpp).
 * Usage: chol_check WORKDIR */
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>

/* chol_source.c (its header, lib_linalg.h, routes NVRTC through nd's
 * loader: the toolkit's NVRTC is linked here instead). */
const char *nd_cuda_chol_source(void);

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    const char *src = nd_cuda_chol_source();
    char path[4096];
    snprintf(path, sizeof path, "%s/chol.cu", argv[1]);
    FILE *f = fopen(path, "w");
    if (!f || fputs(src, f) < 0 || fclose(f)) return 1;
    nvrtcProgram prog;
    if (nvrtcCreateProgram(&prog, src, "nd_chol_triangles", 0, NULL, NULL) != NVRTC_SUCCESS) return 1;
    const char *opts[] = {"--gpu-architecture=sm_90", "--std=c++17"};
    nvrtcResult r = nvrtcCompileProgram(prog, 2, opts);
    if (r != NVRTC_SUCCESS) {
        size_t n = 0;
        nvrtcGetProgramLogSize(prog, &n);
        char *log = malloc(n + 1);
        if (log && nvrtcGetProgramLog(prog, log) == NVRTC_SUCCESS) fprintf(stderr, "%s\n", log);
        free(log);
        printf("FAIL: NVRTC did not compile the Cholesky passes\n");
        return 1;
    }
    nvrtcDestroyProgram(&prog);
    printf("NVRTC sm_90: the Cholesky passes compile\n");
    return 0;
}
