/* What a flush reports after it ran: the counts progress callbacks read,
 * ND_LOG=2's one line (nodes, steps, unique bytes, times, plan cache),
 * and the progress callback itself (nd_set_progress), at most every
 * `seconds`. Runs on the thread that ran the flush: the executor's, or the
 * caller's for a flush nd_sync runs itself. */
#include <stdio.h>

#include "backends/step_kinds.h"
#include "common/error.h"
#include "scheduler/flush_walk.h"
#include "scheduler/scheduler.h"

static void log_line(const nd_scheduler_ctx *ctx, const nd_flush_job *job, const nd_flush_walk *w, double run_us,
                     nd_status rc) {
    const nd_plan *plan = job->plan;
    int counts[ND_PROFILE_KIND_COUNT] = {0};
    double bytes = 0;
    for (int32_t i = 0; i < plan->n_steps; i++) {
        const nd_step *st = &plan->steps[i];
        counts[nd_step_category(st)]++;
        if (st->kind == ND_STEP_KERNEL) bytes += nd_kernel_unique_bytes(st->kernel);
        else if (st->kind == ND_STEP_COPY) bytes += (double)st->copy.bytes;
    }
    const char *named = NULL;
    for (int32_t i = 0; i < plan->n_steps && w && w->names && !named; i++)
        named = nd_flush_walk_step_name(w, &plan->steps[i]);
    char moved[32];
    nd_profile_bytes_text(moved, sizeof moved, bytes);
    nd_logf(2,
            "flush %llu: %u nodes -> %d kernel%s, %d library call%s, %d cop%s; %s moved; plan cache %s; "
            "planned in %.0f us, %s in %.3f ms%s%s%s%s",
            (unsigned long long)job->flush_index, job->n_nodes, counts[ND_PROFILE_KERNEL],
            counts[ND_PROFILE_KERNEL] == 1 ? "" : "s", counts[ND_PROFILE_LIBRARY],
            counts[ND_PROFILE_LIBRARY] == 1 ? "" : "s", counts[ND_PROFILE_COPY],
            counts[ND_PROFILE_COPY] == 1 ? "y" : "ies", moved, job->cache_hit ? "hit" : "miss", job->planned_us,
            ctx->backend->run_plan ? "launched" : "ran", run_us * 1e-3, named ? " (" : "", named ? named : "",
            named ? ")" : "", rc != ND_OK ? " (failed)" : "");
}

void nd_flush_report(nd_scheduler_ctx *ctx, const nd_flush_job *job, const void *walk, double run_us,
                     nd_status rc) {
    uint64_t run = __atomic_add_fetch(&ctx->flushes_run, 1, __ATOMIC_RELAXED);
    uint64_t nodes = __atomic_add_fetch(&ctx->nodes_run, job->n_nodes, __ATOMIC_RELAXED);
    if (nd_log_enabled(2)) log_line(ctx, job, walk, run_us, rc);
    if (!ctx->progress_fn) return;
    double now = nd_log_clock_us();
    if (now - ctx->progress_last_us < ctx->progress_every_us) return;
    ctx->progress_last_us = now;
    uint64_t submitted = __atomic_load_n(&ctx->flushes_submitted, __ATOMIC_RELAXED);
    nd_progress p = {
        .flushes_done = run,
        .flushes_pending = submitted > run ? submitted - run : 0,
        .nodes_done = nodes,
        .seconds = (now - ctx->progress_start_us) * 1e-6,
    };
    ctx->progress_fn(&p, ctx->progress_ctx);
}

/* ------------------------------------------------------------ ND_TRACE
 *
 * For backends that run steps one by one (the CPU): a Chrome/Perfetto
 * trace (chrome://tracing, ui.perfetto.dev) of every step, with the host
 * clock the executor timed it by, in the format the CUDA backend writes
 * (backends/cuda/plan_runner.c): one row per stream, the flush and the
 * step's index as arguments. */

FILE *nd_trace_open(const char *path) {
    FILE *f = fopen(path, "w");
    if (f) fprintf(f, "{\"traceEvents\":[\n");
    return f;
}

void nd_trace_close(FILE *f) {
    if (!f) return;
    fprintf(f, "{}]}\n");
    fclose(f);
}

void nd_trace_step(nd_scheduler_ctx *ctx, const nd_step *st, int32_t index, const char *value, double start_us,
                   double dur_us) {
    char label[112];
    nd_step_label(st, label, sizeof label);
    fprintf(ctx->trace,
            "{\"name\":\"%s%s%s\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,"
            "\"dur\":%.3f,\"args\":{\"flush\":%llu,\"step\":%d}},\n",
            value ? value : "", value ? ": " : "", label, nd_profile_kind_name(nd_step_category(st)),
            /* logical device d as process 1 + d, as the CUDA trace */
            1 + (st->device ? st->device - 1 : 0), st->stream,
            start_us, dur_us, (unsigned long long)ctx->trace_flushes, index);
}
