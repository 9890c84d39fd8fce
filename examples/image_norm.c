/*
 * image_norm.c — normalising an image batch, as a data loader does before a
 * network sees it:
 *
 *     x = batch.astype(np.float32) / 255             # (N, C, H, W) uint8
 *     per_channel = x.transpose(1, 0, 2, 3).reshape(C, -1)
 *     mean = per_channel.mean(axis=1).reshape(1, C, 1, 1)
 *     std  = per_channel.std(axis=1).reshape(1, C, 1, 1)
 *     y = (x - mean) / std
 *
 * The batch (default 16 x 3 x 224 x 224) is random bytes made on the host and
 * uploaded with nd_from_host, like decoded images. The statistics over axes
 * 0, 2 and 3 use a transpose, a reshape and single-axis reductions; the
 * normalisation broadcasts them back. Afterwards every channel of y has mean
 * ~0 and std ~1, which the program prints and checks.
 *
 * Usage: image_norm [N]
 */
#if !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif
#include <nd.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { C = 3, H = 224, W = 224 };

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int fail(const char *what)
{
    fprintf(stderr, "image_norm: %s failed: %s\n", what, nd_last_error());
    nd_shutdown();
    return 1;
}

/* Per-channel statistic of an (N, C, H, W) array as a (1, C, 1, 1) array, so
 * it broadcasts against the batch. Call inside a scope. */
static nd_array *channel_stat(nd_array *x, nd_array *(*reduce)(nd_array *, int))
{
    static const int perm[4] = {1, 0, 2, 3};
    nd_array *per_channel = nd_reshape(nd_transpose(x, perm), ND_SHAPE(C, -1));
    return nd_reshape(reduce(per_channel, 1), ND_SHAPE(1, C, 1, 1));
}

int main(int argc, char **argv)
{
    int64_t n = argc > 1 ? atoll(argv[1]) : 16;
    if (n < 1) {
        fprintf(stderr, "usage: image_norm [N >= 1]\n");
        return 2;
    }

    /* Random "pixels", with a different brightness and contrast per channel
     * so the normalisation has something to undo. xorshift64: fast and
     * reproducible. */
    size_t count = (size_t)n * C * H * W;
    uint8_t *pixels = malloc(count);
    if (!pixels) {
        fprintf(stderr, "image_norm: out of host memory\n");
        return 1;
    }
    uint64_t state = 0x9E3779B97F4A7C15u;
    for (size_t i = 0; i < count; i++) {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        size_t channel = (i / ((size_t)H * W)) % C;
        unsigned range = 256u >> channel;        /* 256, 128, 64 */
        unsigned base = (unsigned)channel * 60u; /* 0, 60, 120 */
        pixels[i] = (uint8_t)(base + (unsigned)(state >> 40) % range);
    }

    double t0 = now_seconds();
    nd_array *batch = nd_from_host(pixels, ND_UINT8, ND_SHAPE(n, C, H, W));
    free(pixels);
    nd_scope_begin();
    nd_array *x = nd_div(nd_astype(batch, ND_FLOAT32), nd_scalar(255.0));
    nd_array *y = nd_keep(nd_div(nd_sub(x, channel_stat(x, nd_mean)), channel_stat(x, nd_std)));
    nd_scope_end();
    nd_status st = nd_sync();
    double t1 = now_seconds();
    if (st != ND_OK || !y)
        return fail("normalising");

    /* Read back the statistics of the result, per channel. */
    nd_scope_begin();
    nd_array *after_mean = nd_keep(nd_reshape(channel_stat(y, nd_mean), ND_SHAPE(C)));
    nd_array *after_std = nd_keep(nd_reshape(channel_stat(y, nd_std), ND_SHAPE(C)));
    nd_scope_end();
    float m[C], s[C];
    if (nd_to_host(after_mean, m, sizeof m) != ND_OK || nd_to_host(after_std, s, sizeof s) != ND_OK)
        return fail("reading the statistics");

    printf("image_norm: batch %lld x %d x %d x %d uint8 on %s\n", (long long)n, C, H, W,
           nd_backend_name());
    int ok = 1;
    for (int c = 0; c < C; c++) {
        printf("  channel %d: mean %+.2e  std %.6f\n", c, m[c], s[c]);
        ok = ok && fabsf(m[c]) < 1e-3f && fabsf(s[c] - 1.0f) < 1e-3f;
    }
    printf("  time %.4f s (upload + normalise)\n", t1 - t0);

    nd_free(after_mean);
    nd_free(after_std);
    nd_free(y);
    nd_free(batch);
    nd_shutdown();
    return ok ? 0 : 1;
}
