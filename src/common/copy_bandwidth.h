/* The host's measured copy bandwidth (ND_PROFILE's reference). */
#ifndef ND_COMMON_COPY_BANDWIDTH_H
#define ND_COMMON_COPY_BANDWIDTH_H

#include <stddef.h>

/* (read + write) bytes per second of a large memcpy, the best of one
 * thread and one per core; 0 without memory for the blocks. `how` gets
 * "memcpy of 128 MiB, 4 threads". */
double nd_host_copy_bandwidth(char *how, size_t cap);

#endif
