/*
 * nd/einsum.h — Einstein summation.
 * Part of nd.h: include <nd.h>, not this file.
 */
#ifndef ND_EINSUM_H
#define ND_EINSUM_H

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How nd_einsum orders the pairwise contractions (numpy.einsum_path's
 * `optimize`). Every order gives the same values up to rounding. */
typedef enum {
    ND_EINSUM_AUTO = 0,   /* OPTIMAL for up to 8 operands, GREEDY beyond */
    ND_EINSUM_OPTIMAL,    /* the cheapest order by numpy.einsum_path's FLOP count, every contraction tree
                             searched (up to 12 operands; GREEDY beyond) */
    ND_EINSUM_GREEDY,     /* numpy's 'greedy': repeatedly the pair whose result is smallest */
    ND_EINSUM_LEFT        /* left to right: ((op0 op1) op2) ... (numpy's optimize=False order) */
} nd_einsum_optimize;

/* numpy.einsum's keyword arguments; zero-initialised (or NULL) is NumPy's
 * defaults but with the contraction order chosen by cost. */
typedef struct {
    nd_einsum_optimize optimize;
} nd_einsum_options;

/* numpy.einsum(subscripts, *operands) for n >= 1 operands (at most 32).
 * subscripts: one term of index letters (a-z, A-Z) per operand, separated
 * by ',', optionally '->' and the output's letters; spaces are ignored.
 *   - implicit output (no '->'): the dimensions under '...' first, then
 *     every letter that appears exactly once, in ASCII order (upper case
 *     before lower case), as NumPy;
 *   - a letter repeated within one operand takes that operand's diagonal
 *     ('ii->i', 'ii' the trace, 'iij->ij');
 *   - a letter absent from the output is summed over; '->' alone gives a
 *     0-d result;
 *   - '...' stands for the operand's remaining dimensions, which broadcast
 *     against the other operands' (right-aligned); with '->' the output
 *     must hold them with its own '...';
 *   - a length-1 axis broadcasts against the same letter's longer axes in
 *     other operands (NumPy's einsum does too).
 * Result dtype: NumPy's promotion of every operand's dtype (a weak scalar
 * counts as its float64/int64, as np.einsum converts operands to arrays);
 * integers wrap, bool sums are OR of ANDs. A single operand that needs no
 * sum ('ij->ji', 'ii->i') gives a view of it, as NumPy's einsum does.
 * Lazy. Lowering: diagonals and transposes are views; each pairwise
 * contraction in the chosen order (nd_einsum_path) is a batched matmul
 * when it is a real matrix product, else one fused broadcast multiply and
 * sum (no intermediate product is stored); indices only one operand has
 * are summed out first. Errors, with the character position in subscripts
 * (ND_ERR_ARG: bad character, '.' outside '...', a second '...' in one
 * term, the number of terms not n, an output letter absent from the inputs
 * or repeated, operands with dimensions under '...' and an explicit output
 * without '...'; ND_ERR_SHAPE: an operand whose ndim does not match its
 * term, a letter's lengths that differ (both named) and are not 1, a
 * repeated letter over axes of different lengths, '...' dimensions that
 * do not broadcast, more than 8 output dimensions); ND_ERR_ARG for n < 1
 * or above 32, a NULL subscripts or operand; ND_ERR_UNSUPPORTED where a
 * contraction needs a matmul of a dtype nd's matmul lacks. */
ND_API nd_array *nd_einsum(const char *subscripts, int n, nd_array *const *operands);
/* nd_einsum with options (NULL: the defaults). */
ND_API nd_array *nd_einsum_ex(const char *subscripts, int n, nd_array *const *operands,
                              const nd_einsum_options *opt);

/* numpy.einsum_path: the order nd_einsum_ex(subscripts, n, operands, opt)
 * contracts in, without recording anything. path (NULL, or room for n - 1
 * pairs) receives the steps as numpy lists them: step k contracts the
 * operands at positions path[k][0] < path[k][1] of the current list
 * (inputs first), which are removed and their result appended; *nsteps
 * (NULL allowed) their count (0 for one operand). *flops (NULL allowed)
 * receives numpy.einsum_path's FLOP estimate of that order. report (NULL
 * allowed) receives NumPy's printed table: the naive and optimised
 * scaling and FLOP counts, the largest intermediate and one line per step
 * with its lowering ("matmul" or "fused" multiply-sum); it is truncated
 * to report_size bytes (always terminated). Errors: nd_einsum's. */
ND_API nd_status nd_einsum_path(const char *subscripts, int n, nd_array *const *operands,
                                const nd_einsum_options *opt, int (*path)[2], int *nsteps, double *flops,
                                char *report, size_t report_size);

#ifdef __cplusplus
}
#endif
#endif /* ND_EINSUM_H */
