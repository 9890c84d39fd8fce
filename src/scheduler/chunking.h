/* Streaming large host arrays through the device in chunks (chunking.c). */
#ifndef ND_SCHEDULER_CHUNKING_H
#define ND_SCHEDULER_CHUNKING_H

#include "backends/plan.h"
#include "scheduler/flush_walk.h"

/* Rewrites a device plan whose one kernel reads host buffers of at least
 * two chunks into a pipeline of chunk copies and chunk kernels (plus a
 * combining reduction). Leaves other plans alone. chunk_bytes 0: never.
 * Run before storages and streams are assigned. */
nd_status nd_plan_chunk(nd_plan *plan, const nd_flush_walk *walk, size_t chunk_bytes);

#endif
