/* Memory spaces, numbered the same way in buffers (which memories hold a
 * valid copy), plans (where a step runs, where a copy goes) and backends
 * (where they allocate): 0 is host memory, 1.. are devices. */
#ifndef ND_COMMON_MEMORY_H
#define ND_COMMON_MEMORY_H

#define ND_MAX_MEMORIES 4
#define ND_MEMORY_HOST 0
/* The most logical devices an array is split over (ND_DEVICES=cpu:N):
 * a split buffer has one piece per device (graph/buffer.h). */
#define ND_MAX_PIECES 16

#endif
