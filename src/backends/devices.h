/* What the machine's CUDA devices are, asked without a backend (so
 * without nd_init): backends/cuda/devices.c in a CUDA build, the stub
 * (cuda_stub.c) otherwise. */
#ifndef ND_BACKENDS_DEVICES_H
#define ND_BACKENDS_DEVICES_H

#include <stddef.h>

#include "nd/devices.h"

/* CUDA devices the driver reports (CUDA_VISIBLE_DEVICES applies); 0 when
 * there is none, no driver, or no CUDA backend in this build, with the
 * reason written into why (cap bytes). Creates no CUDA context. */
int nd_cuda_device_count(char *why, size_t cap);
/* Fills name, compute capability, multiprocessors and memory of `device`
 * (0 <= device < count: the caller checked) into out; the nd_* usage
 * fields are left alone. Free memory is asked in the device's primary
 * context, which this creates if nobody has. Errors: ND_ERR_BACKEND with
 * the driver's reason, named by the public caller. */
nd_status nd_cuda_device_props(int device, nd_device_info *out);

#endif
