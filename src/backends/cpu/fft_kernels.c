/* The FFT passes in float32 and float64: one source, fft_passes.h,
 * compiled for each precision. */
#include <string.h>

#include "backends/cpu/fft_plan.h"

#define T float
#define SUF f
#include "backends/cpu/fft_passes.h"
#undef T
#undef SUF

#define T double
#define SUF d
#include "backends/cpu/fft_passes.h"
#undef T
#undef SUF
