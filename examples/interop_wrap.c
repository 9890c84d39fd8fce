/*
 * interop_wrap.c — nd inside a program that owns its memory: the program's
 * samples are wrapped without a copy (nd_wrap), normalised in place by one
 * fused nd expression, summarised by a reduction the program reads through
 * nd_data (no nd_to_host copy), and handed to a DLPack consumer and back
 * (nd_to_dlpack / nd_from_dlpack), each step checked against a plain C
 * loop. On the CUDA backend the same program also wraps device memory.
 *
 * Usage: interop_wrap [N]   (N samples per channel, default 1000000)
 */
#include <nd.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { CHANNELS = 3 };

static int fail(const char *what)
{
    fprintf(stderr, "interop_wrap: %s failed: %s\n", what, nd_last_error());
    nd_shutdown();
    return 1;
}

/* Called by nd when it no longer needs the program's memory. */
static void on_release(void *ctx)
{
    int *released = ctx;
    (*released)++;
}

int main(int argc, char **argv)
{
    int64_t n = argc > 1 ? atoll(argv[1]) : 1000000;
    if (n < 2) {
        fprintf(stderr, "usage: interop_wrap [N >= 2]\n");
        return 2;
    }
    /* The program's own buffer: CHANNELS x n samples, row-major. */
    float *samples = malloc((size_t)(CHANNELS * n) * sizeof *samples);
    double *want = malloc((size_t)(CHANNELS * n) * sizeof *want);
    if (!samples || !want) {
        fprintf(stderr, "interop_wrap: out of host memory\n");
        return 1;
    }
    for (int64_t i = 0; i < CHANNELS * n; i++)
        samples[i] = (float)(100.0 * sin(0.001 * (double)i) + (double)(i % 7));

    /* 1. Wrap it: nd reads and writes `samples` in place. */
    int released = 0;
    nd_array *x = nd_wrap(samples, ND_HOST_MEMORY, ND_FLOAT32, ND_SHAPE(CHANNELS, n), NULL, on_release, &released);
    if (!x) return fail("nd_wrap");

    /* Scale every channel into [0, 1] in place: x = (x - min) / (max - min),
     * per channel (one fused kernel for the update). */
    const int axis1[] = {1};
    nd_array *lo = nd_min_axes(x, 1, axis1, true), *hi = nd_max_axes(x, 1, axis1, true);
    nd_array *range = nd_sub(hi, lo), *shifted = nd_sub(x, lo);
    nd_array *scaled = nd_div(shifted, range);
    if (nd_assign(x, scaled) != ND_OK) return fail("nd_assign");
    nd_free(lo), nd_free(hi), nd_free(range), nd_free(shifted), nd_free(scaled);
    if (nd_sync() != ND_OK) return fail("nd_sync"); /* samples now hold the result */

    for (int c = 0; c < CHANNELS; c++) {
        double mn = INFINITY, mx = -INFINITY;
        float *row = samples + c * n;
        for (int64_t i = 0; i < n; i++) {
            /* recompute the original values to check against */
            double v = (float)(100.0 * sin(0.001 * (double)(c * n + i)) + (double)((c * n + i) % 7));
            want[c * n + i] = v;
            mn = v < mn ? v : mn;
            mx = v > mx ? v : mx;
        }
        for (int64_t i = 0; i < n; i++) {
            double expect = ((float)want[c * n + i] - (float)mn) / ((float)mx - (float)mn);
            if (fabs(row[i] - expect) > 1e-6) {
                fprintf(stderr, "interop_wrap: channel %d sample %lld is %g, expected %g\n", c, (long long)i,
                        row[i], expect);
                return 1;
            }
        }
    }

    /* 2. nd_data: a per-channel mean, read in place (no copy on the CPU). */
    nd_array *mean = nd_mean(x, 1);
    const float *m = nd_data(mean, ND_HOST_MEMORY, ND_DATA_READ);
    if (!m) return fail("nd_data");
    double sum_of_means = 0;
    for (int c = 0; c < CHANNELS; c++) {
        sum_of_means += m[c];
        double s = 0;
        for (int64_t i = 0; i < n; i++) s += samples[c * n + i];
        if (fabs(m[c] - s / (double)n) > 1e-4) {
            fprintf(stderr, "interop_wrap: mean of channel %d is %g, expected %g\n", c, m[c], s / (double)n);
            return 1;
        }
        printf("channel %d: mean of the scaled samples %.6f\n", c, m[c]);
    }
    if (nd_data_done(mean) != ND_OK) return fail("nd_data_done");

    /* 3. DLPack: the channel means go to a consumer (here nd itself, as a
     * Python library or another C library would take them) and come back
     * as an nd array over the same memory. */
    DLManagedTensorVersioned *t = nd_to_dlpack(mean, ND_HOST_MEMORY, ND_DATA_READ);
    if (!t) return fail("nd_to_dlpack");
    printf("DLPack %u.%u tensor: %d-d, %u-bit floats, read-only %s\n", t->version.major, t->version.minor,
           t->dl_tensor.ndim, t->dl_tensor.dtype.bits, t->flags & DLPACK_FLAG_BITMASK_READ_ONLY ? "yes" : "no");
    nd_array *back = nd_from_dlpack(t); /* nd owns t now: its deleter runs when back goes */
    if (!back) return fail("nd_from_dlpack");
    nd_array *total = nd_sum(back, ND_ALL_AXES);
    double tot = nd_item(total);
    if (fabs(tot - sum_of_means) > 1e-5) {
        fprintf(stderr, "interop_wrap: the DLPack round trip sums to %g, expected %g\n", tot, sum_of_means);
        return 1;
    }
    nd_free(total);
    nd_free(back);
    nd_free(mean);

    nd_stats st;
    nd_get_stats(&st);
    printf("bytes copied between memories: %llu (backend %s)\n", (unsigned long long)st.bytes_copied,
           nd_backend_name());

    /* 4. CUDA: device memory the program owns is used where it is. Here the
     * device pointer comes from nd_data; a program would pass its own
     * cudaMalloc'd pointer (bench/interop_wrap.c does). */
    if (strcmp(nd_backend_name(), "cuda") == 0) {
        nd_array *d = nd_ones(ND_FLOAT32, ND_SHAPE(n));
        void *dev = nd_data(d, ND_CUDA_MEMORY(0), ND_DATA_READ_WRITE);
        if (!dev) return fail("nd_data (device)");
        nd_array *w = nd_wrap(dev, ND_CUDA_MEMORY(0), ND_FLOAT32, ND_SHAPE(n), NULL, NULL, NULL);
        if (!w) return fail("nd_wrap (device)");
        nd_stats before, after;
        nd_get_stats(&before);
        nd_array *three = nd_scalar(3.0), *tripled = nd_mul(w, three);
        if (nd_assign(w, tripled) != ND_OK || nd_sync() != ND_OK) return fail("the update of device memory");
        nd_get_stats(&after);
        nd_free(three), nd_free(tripled), nd_free(w);
        if (nd_data_done(d) != ND_OK) return fail("nd_data_done (device)");
        nd_array *dsum = nd_sum(d, ND_ALL_AXES);
        double got = nd_item(dsum);
        nd_free(dsum), nd_free(d);
        printf("device memory updated in place: sum %.0f (expected %.0f), %llu bytes copied\n", got, 3.0 * (double)n,
               (unsigned long long)(after.bytes_copied - before.bytes_copied));
        /* Under mpirun the ranks' rows travel between them (counted as
         * copies, and in rank_bytes_staged or, over NCCL, rank_bytes_nccl);
         * one process copies nothing. */
        int between_ranks = after.rank_bytes_staged > before.rank_bytes_staged ||
                            after.rank_bytes_nccl > before.rank_bytes_nccl;
        if (got != 3.0 * (double)n || (after.bytes_copied != before.bytes_copied && !between_ranks)) {
            fprintf(stderr, "interop_wrap: the device part is wrong\n");
            return 1;
        }
    } else {
        printf("skipped the device part: the backend is %s (run with ND_BACKEND=cuda on a GPU)\n", nd_backend_name());
    }

    /* The program's memory is its own again once nd lets it go. */
    nd_free(x);
    if (released != 1) {
        fprintf(stderr, "interop_wrap: release ran %d times, expected once\n", released);
        return 1;
    }
    nd_shutdown();
    free(samples);
    free(want);
    printf("interop_wrap: ok (%lld samples per channel)\n", (long long)n);
    return 0;
}
