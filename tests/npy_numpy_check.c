/* The C half of tests/npy_numpy.py: loads the files NumPy wrote (listed in
 * a manifest: kind, name, file, raw bytes, dtype, ndim, shape), checks each
 * against its raw C-order little-endian bytes, and saves what it loaded to
 * OUTDIR as NAME.npy, all.npz, all_compressed.npz and all_zip64.npz (ZIP64
 * records throughout) for NumPy to check.
 * Usage: npy_numpy_check MANIFEST OUTDIR. Exit 0 when everything matched. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nd.h"
#include "frontend/npy_io.h"

#define MAX_CASES 256

static unsigned char *slurp(const char *path, size_t *n) {
    *n = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    rewind(f);
    unsigned char *p = malloc((size_t)len + 1);
    if (p && fread(p, 1, (size_t)len, f) != (size_t)len) {
        free(p);
        p = NULL;
    }
    fclose(f);
    *n = (size_t)len;
    return p;
}

/* a matches dtype, shape and the raw bytes; 0 when it does. */
static int check(nd_array *a, const char *what, const char *raw, const char *dt, int ndim,
                 const int64_t *shape) {
    if (!a) {
        fprintf(stderr, "%s: load failed: %s\n", what, nd_last_error());
        return 1;
    }
    if (strcmp(nd_dtype_name(nd_dtype_of(a)), dt) != 0 || nd_ndim(a) != ndim) {
        fprintf(stderr, "%s: got %s %d-d, want %s %d-d\n", what, nd_dtype_name(nd_dtype_of(a)),
                nd_ndim(a), dt, ndim);
        return 1;
    }
    for (int k = 0; k < ndim; k++)
        if (nd_shape(a)[k] != shape[k]) {
            fprintf(stderr, "%s: axis %d is %lld, want %lld\n", what, k, (long long)nd_shape(a)[k],
                    (long long)shape[k]);
            return 1;
        }
    size_t n = 0;
    unsigned char *want = slurp(raw, &n);
    unsigned char *got = malloc(n + 1);
    int bad = !want || !got || nd_to_host(a, got, n) != ND_OK || memcmp(got, want, n) != 0;
    if (bad) fprintf(stderr, "%s: values differ from %s (%s)\n", what, raw, nd_last_error());
    free(want);
    free(got);
    return bad;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: npy_numpy_check MANIFEST OUTDIR\n");
        return 2;
    }
    FILE *m = fopen(argv[1], "r");
    if (!m) return 2;
    static char names[MAX_CASES][64];
    static nd_array *arrays[MAX_CASES];
    int n = 0, bad = 0, cases = 0;
    char line[1024];
    while (fgets(line, sizeof line, m)) {
        char kind[8], name[64], file[512], raw[512], dt[16];
        int ndim, used;
        if (sscanf(line, "%7s %63s %511s %511s %15s %d%n", kind, name, file, raw, dt, &ndim, &used) != 6)
            continue;
        int64_t shape[ND_MAX_DIMS] = {0};
        const char *p = line + used;
        for (int k = 0; k < ndim && k < ND_MAX_DIMS; k++) {
            char *end;
            shape[k] = strtoll(p, &end, 10);
            p = end;
        }
        char what[600];
        snprintf(what, sizeof what, "%s %s", file, name);
        cases++;
        if (!strcmp(kind, "npy")) {
            nd_array *a = nd_load_npy(file);
            bad += check(a, what, raw, dt, ndim, shape);
            if (a && n < MAX_CASES) {
                char out[600];
                snprintf(out, sizeof out, "%s/%s.npy", argv[2], name);
                if (nd_save_npy(out, a) != ND_OK) {
                    fprintf(stderr, "%s\n", nd_last_error());
                    bad++;
                }
                snprintf(names[n], sizeof names[n], "%s", name);
                arrays[n++] = a;
            } else {
                nd_free(a);
            }
        } else {
            nd_npz *z = nd_load_npz(file);
            if (!z) {
                fprintf(stderr, "%s: %s\n", what, nd_last_error());
                bad++;
                continue;
            }
            bad += check(nd_npz_get(z, name), what, raw, dt, ndim, shape);
            nd_npz_close(z);
        }
        nd_clear_error();
    }
    fclose(m);
    const char *ptrs[MAX_CASES];
    for (int i = 0; i < n; i++) ptrs[i] = names[i];
    char out[600];
    snprintf(out, sizeof out, "%s/all.npz", argv[2]);
    if (nd_savez(out, n, ptrs, arrays) != ND_OK) fprintf(stderr, "%s\n", nd_last_error()), bad++;
    snprintf(out, sizeof out, "%s/all_compressed.npz", argv[2]);
    if (nd_savez_compressed(out, n, ptrs, arrays) != ND_OK) fprintf(stderr, "%s\n", nd_last_error()), bad++;
    /* every size and offset as a ZIP64 record, as past 4 GiB */
    nd_npz_zip64_from = 0;
    snprintf(out, sizeof out, "%s/all_zip64.npz", argv[2]);
    if (nd_savez_compressed(out, n, ptrs, arrays) != ND_OK) fprintf(stderr, "%s\n", nd_last_error()), bad++;
    for (int i = 0; i < n; i++) nd_free(arrays[i]);
    nd_shutdown();
    printf("npy_numpy_check: %d files checked, %d failed\n", cases, bad);
    return bad ? 1 : 0;
}
