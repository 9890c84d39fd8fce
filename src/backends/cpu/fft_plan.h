/* nd's own FFT (the CPU backend's numpy.fft): complex transforms of any
 * length n in float32 or float64 (MIT, like nd; FFTW is GPL and Debian's
 * kissfft is float only).
 *
 * A plan for (n, precision) factors n into radices 4, 2, 3, 5 and odd
 * primes; each factor is one Stockham pass (out of place, ping-pong
 * between the data and a scratch line, the output in natural order) with
 * its twiddles precomputed in long double from exact octant reductions
 * and rounded once to the plan's precision. A length with a prime factor
 * above ND_FFT_MAX_RADIX goes through Bluestein's chirp-z algorithm: a
 * convolution by FFTs of a 2*3*5-smooth length m >= 2n - 1 (a smooth m
 * pads up to half as much as a power of two and the passes above handle
 * it as fast), so every n costs O(n log n).
 *
 * Real transforms of even n (nd_fft_rplan_get) pack the n real values as
 * n / 2 complex ones, transform those with the plan of n / 2 and untangle
 * the two halves with n / 2 twiddles: half the work of a complex
 * transform of length n.
 *
 * Plans are immutable once built and cached per backend by (n, precision)
 * until the backend is destroyed; any number of threads may execute one
 * plan at once, each with its own scratch (nd_fft_scratch_elems). */
#ifndef ND_BACKENDS_CPU_FFT_PLAN_H
#define ND_BACKENDS_CPU_FFT_PLAN_H

#include <stddef.h>
#include <stdint.h>

/* Odd primes up to this run as a generic radix pass (O(p) per element);
 * a larger prime factor makes the plan a Bluestein one. */
#define ND_FFT_MAX_RADIX 61
#define ND_FFT_MAX_FACTORS 64

typedef struct nd_fft_plan nd_fft_plan;

typedef struct {
    int ip;              /* the radix */
    int64_t l1, ido;     /* product of the earlier radices; n / (l1 * ip) */
    size_t tw;           /* offset of its twiddles in the plan's table (complex elements) */
    size_t roots;        /* generic radix: offset of its ip roots of unity */
} nd_fft_pass;

struct nd_fft_plan {
    int64_t n;
    int f64;
    int real; /* a real plan of even n: sub is the plan of n / 2, tw holds exp(-2 pi i k / n), k < n / 2 */
    /* A split plan (nd_fft_split_plan_get): n = n1 * n2, sub the plan of
     * n1, sub2 the plan of n2, tw holds exp(-2 pi i r / n) for r < n. */
    int split;
    int64_t n1;
    const nd_fft_plan *sub2;
    int npass;
    nd_fft_pass pass[ND_FFT_MAX_FACTORS];
    void *tw; /* complex float or double: the passes' twiddles and roots */
    /* Bluestein: the chirp w[j] = exp(-i pi j^2 / n) (n values), the
     * transform of the conjugate chirp divided by m (m values), and the
     * plan of length m. */
    const nd_fft_plan *sub;
    int64_t m;
    void *chirp, *kernel;
    nd_fft_plan *next; /* the cache's list */
};

typedef struct nd_fft_cache nd_fft_cache;
nd_fft_cache *nd_fft_cache_new(void);
void nd_fft_cache_free(nd_fft_cache *c);

/* The plan of length n >= 1 in float64 (f64) or float32; NULL when out of
 * memory. Valid until the cache is freed. */
const nd_fft_plan *nd_fft_plan_get(nd_fft_cache *c, int64_t n, int f64);

/* The real plan of even length n >= 2; NULL when out of memory. */
const nd_fft_plan *nd_fft_rplan_get(nd_fft_cache *c, int64_t n, int f64);

/* The split plan of n = n1 * n2 (a divisor n1 > 1 of n): one long
 * transform as n2 transforms of length n1, a twiddle, n1 of length n2
 * (the "four-step" FFT), so that the pool can share it (cpu_fft.c). NULL
 * when out of memory. */
const nd_fft_plan *nd_fft_split_plan_get(nd_fft_cache *c, int64_t n, int64_t n1, int f64);

/* Complex elements of scratch nd_fft_exec_* (and the real transforms)
 * need beside the data. */
int64_t nd_fft_scratch_elems(const nd_fft_plan *p);

/* The unnormalised transform of data (n interleaved complex values, in
 * place): X[k] = sum_j x[j] exp(sign * 2 pi i j k / n), sign -1 (forward)
 * or +1 (backward). scratch holds nd_fft_scratch_elems(p) complex values. */
void nd_fft_exec_f(const nd_fft_plan *p, float *data, float *scratch, int sign);
void nd_fft_exec_d(const nd_fft_plan *p, double *data, double *scratch, int sign);

/* With a real plan of n = 2h: the forward transform of the n reals in
 * data (overwritten) into out[0..h] (h + 1 complex values, not aliasing
 * data); and the unnormalised backward transform of the Hermitian
 * sequence whose first h + 1 values are in (the imaginary parts of in[0]
 * and in[h] ignored; in is not changed) into the n reals of data. */
void nd_fft_r2c_f(const nd_fft_plan *p, float *data, float *out, float *scratch);
void nd_fft_r2c_d(const nd_fft_plan *p, double *data, double *out, double *scratch);
void nd_fft_c2r_f(const nd_fft_plan *p, const float *in, float *data, float *scratch);
void nd_fft_c2r_d(const nd_fft_plan *p, const double *in, double *data, double *scratch);

#endif
