/* The harness that runs NVRTC-generated CUDA on the host, shared by the
 * checks that need no GPU (emulate_check.c, small_solve_check.c,
 * chol_check.c and tests/test_ops.c's cuda_emulated cases): the source is
 * compiled by NVRTC for sm_90 (the toolkit, no device) to prove it is
 * valid CUDA, then by g++ as C++ after emulate_shim.h (the CUDA-on-host
 * stand-ins) into a shared object, opened and called.
 *
 * Built with ND_EMU_SHIM defined as emulate_shim.h's absolute path (a
 * string literal). NVRTC is called through nd's loader (cuda_loader.h). */
#ifndef ND_CUDA_TESTS_EMULATE_HARNESS_H
#define ND_CUDA_TESTS_EMULATE_HARNESS_H

#include <stdint.h>

/* emulate_shim.h's path, or NULL where it is not readable (a binary staged
 * to another machine, scripts/gpu/stage.sh, has no source tree). */
const char *emu_shim(void);

/* Whether src compiles with NVRTC for sm_90 (C++17, un-annotated
 * functions on the device; inc: an -I option, or NULL or "" for none).
 * Loads NVRTC first. On failure the log goes to stdout, named `name`.
 * With ND_EMU_CACHE (below), a pass is remembered there: the same source
 * and options are not compiled twice in one run. */
int emu_nvrtc_compiles(const char *src, const char *name, const char *inc);

/* Compiles `text` with g++ as C++17, emulate_shim.h included first (inc:
 * an -I option as above), into WORKDIR/STEM.so, and opens it: a dlopen
 * handle, or NULL with the reason on stdout. With ND_EMU_CACHE naming a
 * folder (scripts/test.sh makes one for its run, removed after it), the
 * object is kept there under a hash of everything that goes into it (the
 * text, the shim, the flags), and a later build of the same text (the
 * sanitised suites after the release ones, a kernel emulated twice) opens
 * that one instead of compiling again. */
void *emu_build(const char *text, const char *workdir, const char *stem, const char *inc);

/* backend.c's grid for `work` items on a device of 4 SMs: grid-stride
 * loops make the result independent of the block count, and fewer blocks
 * emulate faster. */
unsigned emu_grid_for(int64_t work);

#endif
