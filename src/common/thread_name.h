/* nd's own threads carry names (the pool's workers, the executor, the
 * JIT's compile thread), so `top -H`, `ps -L` and perf show which thread
 * holds a core; a BLAS library's threads keep the program's name. */
#ifndef ND_COMMON_THREAD_NAME_H
#define ND_COMMON_THREAD_NAME_H

/* Names the calling thread (at most 15 characters are kept); a no-op
 * where the platform has no thread names. */
void nd_thread_set_name(const char *name);

/* The calling thread, and the processes it starts from now on, get the
 * lowest priority (nice 19: about 1.5% of a core beside each busy thread
 * of normal priority): for background work such as the JIT's compiler,
 * which should not take a core from a running kernel or a BLAS call (a
 * BLAS call split statically over every core waits for its slowest part).
 * Not SCHED_IDLE: on a machine that other programs keep busy it would
 * never run. Returns 0 when it took effect. */
int nd_thread_set_background(void);

#endif
