/* A device timeline without Nsight Systems (the GPU machine has none):
 * loaded with LD_PRELOAD into any program using CUDA, it records every
 * kernel, copy and memset the device ran (CUPTI's activity API: start and
 * end in ns, stream, the CUDA graph it ran in) and, with
 * ND_TIMELINE_API=1, every runtime API call (which adds host overhead), and
 * writes them as CSV to $ND_TIMELINE_OUT (default timeline.csv) at exit:
 *   kind,start_ns,end_ns,stream_or_thread,graph,correlation,size,name
 * kind: K kernel (size = blocks), C copy (size = bytes), S memset, A API call,
 * and with ND_TIMELINE_NVTX=1 (and NVTX_INJECTION64_PATH naming libcupti, so
 * that CUPTI sees the program's NVTX calls) M for an NVTX range's start or
 * end (start = end = the time, stream_or_thread = the thread, graph = 1 at
 * the start and 2 at the end, correlation = the range's id, name at its
 * start): what an Nsight Systems user sees as the NVTX row.
 * scripts/gpu/timeline_gaps.py summarises it; on-device.sh timeline runs
 * both. Built by stage.sh where CUPTI's header is found. */
#include <cupti.h>
#include <stdio.h>
#include <stdlib.h>

#define BUFFER_BYTES (8u << 20)

static FILE *out;

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records) {
    *buffer = aligned_alloc(8, BUFFER_BYTES);
    *size = *buffer ? BUFFER_BYTES : 0;
    *max_records = 0;
}

static void write_record(const CUpti_Activity *r) {
    if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
        const CUpti_ActivityKernel10 *k = (const void *)r;
        fprintf(out, "K,%llu,%llu,%u,%u,%u,%lld,%s\n", (unsigned long long)k->start, (unsigned long long)k->end,
                k->streamId, k->graphId, k->correlationId, (long long)k->gridX * k->gridY * k->gridZ, k->name);
    } else if (r->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
        const CUpti_ActivityMemcpy6 *m = (const void *)r;
        fprintf(out, "C,%llu,%llu,%u,%u,%u,%llu,copy kind %d\n", (unsigned long long)m->start,
                (unsigned long long)m->end, m->streamId, m->graphId, m->correlationId,
                (unsigned long long)m->bytes, m->copyKind);
    } else if (r->kind == CUPTI_ACTIVITY_KIND_MEMSET) {
        const CUpti_ActivityMemset4 *m = (const void *)r;
        fprintf(out, "S,%llu,%llu,%u,%u,%u,%llu,memset\n", (unsigned long long)m->start,
                (unsigned long long)m->end, m->streamId, m->graphId, m->correlationId,
                (unsigned long long)m->bytes);
    } else if (r->kind == CUPTI_ACTIVITY_KIND_MARKER) {
        const CUpti_ActivityMarker2 *m = (const void *)r;
        int start = (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_START) != 0;
        int end = (m->flags & CUPTI_ACTIVITY_FLAG_MARKER_END) != 0;
        if (!start && !end) return; /* an instant marker */
        fprintf(out, "M,%llu,%llu,%u,%d,%u,0,%s\n", (unsigned long long)m->timestamp,
                (unsigned long long)m->timestamp, m->objectId.pt.threadId, start ? 1 : 2, m->id,
                start && m->name ? m->name : "");
    } else if (r->kind == CUPTI_ACTIVITY_KIND_RUNTIME) {
        const CUpti_ActivityAPI *a = (const void *)r;
        const char *name = "?";
        cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, a->cbid, &name);
        fprintf(out, "A,%llu,%llu,%u,0,%u,0,%s\n", (unsigned long long)a->start, (unsigned long long)a->end,
                a->threadId, a->correlationId, name);
    }
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid) {
    (void)ctx, (void)stream, (void)size;
    CUpti_Activity *r = NULL;
    while (out && cuptiActivityGetNextRecord(buffer, valid, &r) == CUPTI_SUCCESS) write_record(r);
    free(buffer);
}

__attribute__((constructor)) static void timeline_start(void) {
    const char *path = getenv("ND_TIMELINE_OUT");
    out = fopen(path ? path : "timeline.csv", "w");
    if (!out) {
        perror("kernel_timeline: ND_TIMELINE_OUT");
        return;
    }
    if (cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS) {
        fprintf(stderr, "kernel_timeline: CUPTI refused the activity callbacks: no timeline\n");
        return;
    }
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY);
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET);
    if (getenv("ND_TIMELINE_API")) cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME);
    if (getenv("ND_TIMELINE_NVTX")) cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MARKER);
}

__attribute__((destructor)) static void timeline_end(void) {
    if (!out) return;
    cuptiActivityFlushAll(1);
    fclose(out);
    out = NULL;
}
