/*
 * user_kernel.c — the program's own kernel as a step of nd's lazy graph.
 *
 * nd has no cumulative sum; the program brings one. For a matrix x of
 * ROWS x COLS values it computes, per row, the running share of the row's
 * energy (NumPy: s = np.cumsum(x*x, axis=1); s / s[:, -1:]):
 *
 *     y = x * x                      nd (lazy)
 *     s = cumsum_rows(y)             the program's kernel (lazy, one step)
 *     share = s / s[:, -1:]          nd (lazy, reads the kernel's output)
 *
 * The kernel has a C function for the CPU backend and CUDA source (one
 * thread per row) that nd compiles with NVRTC for the CUDA backend, so the
 * same program runs on either. nd orders the kernel after x*x and before
 * the division and never fuses across it; nothing runs until nd_to_host.
 * The program then runs again on the CUDA backend, or says why it cannot
 * (no GPU: "GPU part skipped").
 *
 * Usage: user_kernel [ROWS [COLS]]
 */
#include <nd.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* s[r, c] = y[r, 0] + .. + y[r, c], float64, for any strides of y and s. */
static int cumsum_rows_cpu(void *ctx, int n_in, const nd_kernel_arg *in, int n_out, const nd_kernel_arg *out)
{
    (void)ctx;
    const nd_kernel_arg *y = &in[0], *s = &out[0];
    if (n_in != 1 || n_out != 1 || y->dtype != ND_FLOAT64 || y->ndim != 2)
        return 1; /* a failure: s and everything computed from it carry it */
    for (int64_t r = 0; r < y->shape[0]; r++) {
        double acc = 0;
        for (int64_t c = 0; c < y->shape[1]; c++) {
            acc += ((const double *)y->data)[r * y->strides[0] + c * y->strides[1]];
            ((double *)s->data)[r * s->strides[0] + c * s->strides[1]] = acc;
        }
    }
    return 0;
}

/* The same for CUDA; nd defines nd_kernel_arg for the source. */
static const char cumsum_rows_cuda[] =
    "extern \"C\" __global__ void cumsum_rows(nd_kernel_arg y, nd_kernel_arg s) {\n"
    "    long long r = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
    "    if (r >= y.shape[0]) return;\n"
    "    double acc = 0;\n"
    "    for (long long c = 0; c < y.shape[1]; c++) {\n"
    "        acc += ((const double *)y.data)[r * y.strides[0] + c * y.strides[1]];\n"
    "        ((double *)s.data)[r * s.strides[0] + c * s.strides[1]] = acc;\n"
    "    }\n"
    "}\n";

/* One thread per row, 128 to a block. */
static int rows_launch(void *ctx, int n_in, const nd_kernel_arg *in, int n_out, const nd_kernel_arg *out,
                       nd_kernel_launch *launch)
{
    (void)ctx, (void)n_in, (void)n_out, (void)out;
    launch->block[0] = 128;
    launch->grid[0] = (unsigned)((in[0].shape[0] + 127) / 128);
    return 0;
}

/* Runs the computation on the backend in use and checks it against a
 * plain C loop. Returns 0 when right. */
static int run(nd_user_kernel *cumsum, int64_t rows, int64_t cols)
{
    double *xv = malloc(sizeof(double) * (size_t)(rows * cols));
    double *got = malloc(sizeof(double) * (size_t)(rows * cols));
    if (!xv || !got) return 1;
    for (int64_t i = 0; i < rows * cols; i++) xv[i] = sin(0.37 * (double)i) + 1.5;

    nd_scope_begin();
    nd_array *x = nd_from_host(xv, ND_FLOAT64, ND_SHAPE(rows, cols));
    nd_array *y = nd_mul(x, x);
    nd_array *s = NULL;
    nd_kernel_output spec = {NULL, ND_FLOAT64, 2, nd_shape(x)}; /* a new rows x cols array */
    nd_status st = nd_user_kernel_call(cumsum, 1, (nd_array *[]){y}, 1, &spec, &s);
    nd_array *share = st == ND_OK ? nd_div(s, nd_view(s, ":, -1:")) : NULL;
    if (share) st = nd_to_host(share, got, sizeof(double) * (size_t)(rows * cols));
    else if (st == ND_OK) st = nd_last_status();
    nd_scope_end();
    if (st != ND_OK) {
        fprintf(stderr, "user_kernel: %s\n", nd_last_error());
        free(xv), free(got);
        return 1;
    }

    double worst = 0;
    for (int64_t r = 0; r < rows; r++) {
        double total = 0, acc = 0;
        for (int64_t c = 0; c < cols; c++) total += xv[r * cols + c] * xv[r * cols + c];
        for (int64_t c = 0; c < cols; c++) {
            acc += xv[r * cols + c] * xv[r * cols + c];
            double err = fabs(got[r * cols + c] - acc / total);
            if (err > worst) worst = err;
        }
    }
    printf("  %s: %lld x %lld, last share of row 0 = %.6f, max error %.2e\n", nd_backend_name(),
           (long long)rows, (long long)cols, got[cols - 1], worst);
    free(xv), free(got);
    return worst <= 1e-12 ? 0 : 1;
}

int main(int argc, char **argv)
{
    int64_t rows = argc > 1 ? atoll(argv[1]) : 4096, cols = argc > 2 ? atoll(argv[2]) : 512;
    if (rows < 1 || cols < 1) {
        fprintf(stderr, "usage: user_kernel [ROWS >= 1 [COLS >= 1]]\n");
        return 2;
    }
    if (nd_init(NULL) != ND_OK) {
        fprintf(stderr, "user_kernel: %s\n", nd_last_error());
        return 1;
    }
    nd_user_kernel *cumsum = nd_user_kernel_new("cumsum_rows", 1, 1);
    if (!cumsum || nd_user_kernel_set_cpu(cumsum, cumsum_rows_cpu, NULL) != ND_OK ||
        nd_user_kernel_set_cuda_source(cumsum, cumsum_rows_cuda, "cumsum_rows", NULL, rows_launch, NULL) != ND_OK) {
        fprintf(stderr, "user_kernel: %s\n", nd_last_error());
        return 1;
    }
    printf("running share of each row's energy, cumsum by the program's kernel:\n");
    int failed = run(cumsum, rows, cols);

    /* The GPU part: the same kernel object on the CUDA backend. */
    if (!failed && strcmp(nd_backend_name(), "cuda") != 0) {
        nd_shutdown();
        nd_config cfg = {0};
        cfg.backend = ND_BACKEND_CUDA;
        if (nd_init(&cfg) == ND_OK) {
            failed = run(cumsum, rows, cols);
        } else {
            printf("  GPU part skipped: %s\n", nd_last_error());
            nd_clear_error();
        }
    }
    nd_user_kernel_free(cumsum);
    nd_shutdown();
    if (failed) {
        fprintf(stderr, "user_kernel: FAILED\n");
        return 1;
    }
    printf("ok\n");
    return 0;
}
