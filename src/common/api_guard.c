/* State of the API lock (common/api_guard.h). */
#include "common/api_guard.h"

_Thread_local nd_api_thread_state nd_api_tls;

/* Adaptive (glibc): under contention a waiter spins briefly before it
 * sleeps; most public calls hold the lock for well under a microsecond. */
#ifdef PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP
pthread_mutex_t nd_api_mutex = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP;
#else
pthread_mutex_t nd_api_mutex = PTHREAD_MUTEX_INITIALIZER;
#endif
