/* ND_CHECK_PLANS=1: every plan the cache serves is compared with a plan
 * built afresh for the flush (scheduler.c plan_for). The cache's key must
 * hold every fact a plan depends on (flush_walk.h); a fact left out lets a
 * plan built for other buffers run, which computes a wrong value or none
 * (the relative key once left out whether a handle held the result: the
 * value was never computed and read as zeros). A test aid: it doubles the
 * planning of every cache hit. */
#ifndef ND_SCHEDULER_PLAN_CHECK_H
#define ND_SCHEDULER_PLAN_CHECK_H

#include <stddef.h>

#include "backends/plan.h"

/* 1 when `cached` does what `fresh` does for this flush; else 0, with the
 * first difference in why. exact: the cache found it by its key (views
 * start where the plan's did), else by the relative key (where each step's
 * views start is not compared). */
int nd_plan_check_same(const nd_plan *cached, const nd_plan *fresh, int exact, char *why, size_t cap);

#endif
