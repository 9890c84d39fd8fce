/* The table of nd's library routines (common/lib_calls.h). */
#include "common/lib_calls.h"

const nd_lib_call_info nd_lib_calls[ND_LIB_COUNT] = {
    [ND_LIB_NONE] = {"user kernel", 0, 0},
#define ND_LIB_ROW(e, nm, ni, no) [ND_LIB_##e] = {nm, ni, no},
    ND_LIB_CALLS(ND_LIB_ROW)
#undef ND_LIB_ROW
};

int nd_lib_reads_back(int lib) {
    return lib >= ND_LIB_LA_CHOLESKY && lib <= ND_LIB_LA_EIG && lib != ND_LIB_LA_LU;
}

int nd_lib_files_fails(int lib) { return lib == ND_LIB_GATHER || lib == ND_LIB_SCATTER; }

int nd_lib_takes_complex(int lib) {
    return lib == ND_LIB_FFT || lib == ND_LIB_CUMULATE || (lib >= ND_LIB_LA_CHOLESKY && lib <= ND_LIB_LA_EIG);
}
