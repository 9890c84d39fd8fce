/* Directories for on-disk caches (the CUDA kernel cache, the CPU JIT). */
#ifndef ND_COMMON_DIRS_H
#define ND_COMMON_DIRS_H

/* mkdir -p with mode 0755; 0 on success (also when it exists). */
int nd_make_dirs(const char *path);

#endif
