/* Memory spaces, numbered the same way in buffers (which memories hold a
 * valid copy), plans (where a step runs, where a copy goes) and backends
 * (where they allocate): 0 is host memory, 1.. are devices. */
#ifndef ND_COMMON_MEMORY_H
#define ND_COMMON_MEMORY_H

#define ND_MAX_MEMORIES 4
#define ND_MEMORY_HOST 0

#endif
