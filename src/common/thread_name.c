/* Thread names and background priority (thread_name.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_setname_np */
#endif
#include "common/thread_name.h"

#include <pthread.h>
#include <string.h>
#include <sys/resource.h>

void nd_thread_set_name(const char *name) {
#if defined(__linux__) && defined(__GLIBC__)
    char b[16];
    strncpy(b, name, sizeof b - 1);
    b[sizeof b - 1] = '\0';
    (void)pthread_setname_np(pthread_self(), b);
#else
    (void)name;
#endif
}

int nd_thread_set_background(void) {
    /* On Linux the nice value is per thread (0 = the calling one) and a
     * spawned process inherits it. */
    return setpriority(PRIO_PROCESS, 0, 19);
}
