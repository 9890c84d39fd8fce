/* nd_plan_dump_dot and nd_set_progress: pictures of what will run and
 * progress of what runs (the scheduler draws and counts; this is the
 * public door). */
#include <math.h>

#include "common/api_guard.h"
#include "common/error.h"
#include "frontend/frontend.h"

nd_status nd_plan_dump_dot(const char *path) {
    ND_API_GUARD();
    if (!path)
        return nd_error_set(ND_ERR_ARG, "nd_plan_dump_dot: path is NULL (pass a file name such as \"plan.dot\")");
    nd_status st = nd_runtime_ensure();
    if (st != ND_OK) return st;
    nd_runtime_wait(); /* planning reads where values live */
    return nd_scheduler_dump_plan_dot(&nd_rt.sched, &nd_rt.graph, path);
}

nd_status nd_set_progress(nd_progress_fn fn, void *ctx, double seconds) {
    ND_API_GUARD();
    if (!isfinite(seconds) || seconds < 0)
        return nd_error_set(ND_ERR_ARG, "nd_set_progress: seconds = %g is invalid (use a finite number >= 0; 0 "
                            "calls it after every flush)", seconds);
    nd_status st = nd_runtime_ensure();
    if (st != ND_OK) return st;
    /* The executor reads these after each flush: none may be in flight. */
    nd_runtime_wait();
    nd_scheduler_ctx *s = &nd_rt.sched;
    s->progress_fn = fn;
    s->progress_ctx = ctx;
    s->progress_every_us = seconds * 1e6;
    s->progress_start_us = nd_log_clock_us();
    s->progress_last_us = s->progress_start_us - s->progress_every_us; /* the first flush reports */
    return ND_OK;
}
