/* The executor thread that runs planned flushes (see flush_worker.c). */
#ifndef ND_FRONTEND_FLUSH_WORKER_H
#define ND_FRONTEND_FLUSH_WORKER_H

#include "scheduler/scheduler.h"

typedef struct nd_flush_worker nd_flush_worker;

/* NULL when the thread cannot be started (the caller then runs jobs itself). */
nd_flush_worker *nd_flush_worker_start(nd_scheduler_ctx *ctx);
/* Waits for the job in flight; returns (and sets as this thread's error)
 * the first error of the jobs run since the last drain. */
nd_status nd_flush_worker_drain(nd_flush_worker *w);
/* Waits for the job in flight, keeping its error for the next drain. */
void nd_flush_worker_wait(nd_flush_worker *w);
/* Hands a submitted job to the thread (after draining). */
nd_status nd_flush_worker_post(nd_flush_worker *w, const nd_flush_job *job);
/* Keeps the thread polling for the next job a while (waking it if it
 * sleeps), if jobs were handed off since the last call: called where the
 * caller is about to record the next flush. */
void nd_flush_worker_keep_polling(nd_flush_worker *w);
/* Drains and joins the thread. */
void nd_flush_worker_stop(nd_flush_worker *w);

#endif
