/* nd_einsum's three stages, each in its own file: the subscripts parsed
 * and checked against the operands (einsum_parse.c), a contraction order
 * chosen by cost (einsum_path.c), and the order lowered to views,
 * multiplies, sums and batched matmuls (einsum.c).
 *
 * A label is an index letter or one dimension under '...'. Letters are
 * numbered in ASCII order ('A'..'Z' are 0..25, 'a'..'z' 26..51), so NumPy's
 * implicit output (the letters seen once, alphabetically) is increasing
 * label order; the dimensions under '...' follow (52.., right-aligned as
 * broadcasting aligns them). A set of labels is a 64-bit mask. */
#ifndef ND_FRONTEND_EINSUM_INTERNAL_H
#define ND_FRONTEND_EINSUM_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "frontend/frontend.h"

#define ND_EIN_MAX_OPERANDS 32
#define ND_EIN_LETTERS 52
#define ND_EIN_MAX_LABELS (ND_EIN_LETTERS + ND_MAX_DIMS)
_Static_assert(ND_EIN_MAX_LABELS <= 64, "a label set is a 64-bit mask");

typedef uint64_t nd_ein_set;

/* The parsed subscripts, checked against the operands. */
typedef struct {
    int n;                                             /* operands */
    int ndim[ND_EIN_MAX_OPERANDS];                     /* each operand's ndim */
    int8_t label[ND_EIN_MAX_OPERANDS][ND_MAX_DIMS];    /* label of each axis */
    /* The labels each operand contributes after its diagonals are taken
     * and its length-1 axes that broadcast against longer ones dropped. */
    nd_ein_set set[ND_EIN_MAX_OPERANDS];
    int64_t size[ND_EIN_MAX_LABELS];                   /* each label's length */
    int nout;
    int8_t out[ND_EIN_MAX_LABELS];                     /* output labels, in order */
    nd_ein_set out_set;
    nd_ein_set summed;                                 /* labels absent from the output */
} nd_ein_spec;

/* Parses `subs` for n operands: every error is ND_ERR_ARG (syntax, operand
 * count, output labels) or ND_ERR_SHAPE (lengths), naming fn and the
 * character position in subs. The operands are live handles. */
int nd_ein_parse(const char *fn, const char *subs, int n, nd_array *const *ops, nd_ein_spec *spec);

/* A contraction order: step k contracts the operands at positions
 * pair[k][0] < pair[k][1] of the current list (inputs first, in order),
 * removes them and appends the result, as numpy.einsum_path lists it. */
typedef struct {
    int nsteps;
    int pair[ND_EIN_MAX_OPERANDS][2];
    nd_ein_set result[ND_EIN_MAX_OPERANDS]; /* labels of each step's result */
    double flops;                           /* numpy.einsum_path's count for this order */
    double naive_flops;                     /* the same for one loop over every label */
    double largest;                         /* elements of the largest intermediate */
} nd_ein_path;

/* The labels an operand set keeps: those also in the output or in an
 * operand outside it. */
nd_ein_set nd_ein_kept(const nd_ein_spec *s, const nd_ein_set *sets, int nsets, uint64_t members);
/* Elements of a label set. */
double nd_ein_volume(const nd_ein_spec *s, nd_ein_set set);
/* Chooses the order (optimize: nd_einsum_optimize). ND_ERR_SHAPE when
 * every order needs an intermediate of more than ND_MAX_DIMS dimensions. */
int nd_ein_plan(const char *fn, const nd_ein_spec *s, int optimize, nd_ein_path *p);
/* Whether a pairwise contraction becomes a batched matmul (else one fused
 * multiply and sum): shared by the lowering and the path report. */
int nd_ein_uses_matmul(const nd_ein_spec *s, nd_dtype dt, nd_ein_set a, nd_ein_set b, nd_ein_set keep);

#endif
