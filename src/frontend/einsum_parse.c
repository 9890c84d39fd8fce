/* nd_einsum's subscripts: NumPy 2's grammar (letters, at most one '...'
 * per term, ',' between operands, an optional '->' and output; spaces are
 * skipped) checked against the operands, every mistake reported with its
 * character position so that a long string is easy to fix. */
#include <string.h>

#include "frontend/einsum_internal.h"

#define ELLIPSIS (-1)

/* One term of the string: its items (a letter's label or ELLIPSIS) and
 * where each stands. */
typedef struct {
    int start, n, ell_at; /* ell_at: position of its '...', -1 when none */
    int8_t item[ND_EIN_LETTERS + 1];
    int pos[ND_EIN_LETTERS + 1];
} term;

static int letter_label(char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return 26 + (c - 'a');
    return -1;
}

static char label_char(int l) { return (char)(l < 26 ? 'A' + l : 'a' + (l - 26)); }

static int arg_error(const char *fn, const char *subs, int pos, const char *what) {
    nd_error_set(ND_ERR_ARG, "%s: subscripts \"%s\" at position %d: %s", fn, subs, pos, what);
    return -1;
}

/* Reads one term starting at *i (stops at ',', '-' or the end). */
static int read_term(const char *fn, const char *subs, int *i, int output, term *t) {
    char msg[160];
    t->start = *i, t->n = 0, t->ell_at = -1;
    for (;;) {
        const int p = *i;
        const char c = subs[p];
        if (c == '\0' || c == ',' || c == '-') return 0;
        if (c == ' ') {
            (*i)++;
            continue;
        }
        if (t->n == ND_EIN_LETTERS + 1) {
            snprintf(msg, sizeof msg, "more than %d subscripts in one term", ND_EIN_LETTERS);
            return arg_error(fn, subs, p, msg);
        }
        if (c == '.') {
            if (subs[p + 1] != '.' || subs[p + 2] != '.')
                return arg_error(fn, subs, p, "'.' that is not part of an ellipsis '...'");
            if (t->ell_at >= 0) {
                snprintf(msg, sizeof msg, "a second '...' in one %s (the first is at position %d)",
                         output ? "output" : "operand's subscripts", t->ell_at);
                return arg_error(fn, subs, p, msg);
            }
            t->ell_at = p;
            t->item[t->n] = ELLIPSIS, t->pos[t->n++] = p;
            *i += 3;
            continue;
        }
        int l = letter_label(c);
        if (l < 0) {
            if (c == '>')
                return arg_error(fn, subs, p, "'>' without '-' before it (the output follows '->')");
            snprintf(msg, sizeof msg, "invalid character '%c' (subscripts are letters a-z and A-Z, '...', "
                     "',' between operands and '->' before the output)", c);
            return arg_error(fn, subs, p, msg);
        }
        t->item[t->n] = (int8_t)l, t->pos[t->n++] = p;
        (*i)++;
    }
}

/* Each letter's length: taken where first seen with length above 1, a
 * length-1 axis broadcasting against it as in NumPy's einsum; a repeated
 * letter within one operand (a diagonal) needs equal lengths. */
static int letter_sizes(const char *fn, const char *subs, int n, nd_array *const *ops, term *terms,
                        int (*axis_of)[ND_EIN_LETTERS + 1], nd_ein_spec *s, int *set_at) {
    for (int l = 0; l < ND_EIN_LETTERS; l++) s->size[l] = -1, set_at[l] = -1;
    int set_by[ND_EIN_LETTERS] = {0};
    for (int k = 0; k < n; k++) {
        int first_in_op[ND_EIN_LETTERS];
        for (int l = 0; l < ND_EIN_LETTERS; l++) first_in_op[l] = -1;
        for (int j = 0; j < terms[k].n; j++) {
            int l = terms[k].item[j];
            if (l == ELLIPSIS) continue;
            int64_t len = ops[k]->shape[axis_of[k][j]];
            if (first_in_op[l] >= 0) {
                int64_t prev = ops[k]->shape[axis_of[k][first_in_op[l]]];
                if (prev != len) {
                    nd_error_set(ND_ERR_SHAPE, "%s: subscripts \"%s\" at position %d: '%c' repeats in operand %d, "
                                 "whose axes %d and %d have lengths %lld and %lld (a repeated index takes a "
                                 "diagonal, which needs equal lengths)", fn, subs, terms[k].pos[j], label_char(l),
                                 k, axis_of[k][first_in_op[l]], axis_of[k][j], (long long)prev, (long long)len);
                    return -1;
                }
                continue;
            }
            first_in_op[l] = j;
            if (s->size[l] < 0 || (s->size[l] == 1 && len != 1)) {
                s->size[l] = len, set_at[l] = terms[k].pos[j], set_by[l] = k;
            } else if (len != 1 && len != s->size[l]) {
                nd_error_set(ND_ERR_SHAPE, "%s: subscripts \"%s\" at position %d: index '%c' has length %lld in "
                             "operand %d but length %lld at position %d (operand %d); lengths must match or be 1",
                             fn, subs, terms[k].pos[j], label_char(l), (long long)len, k,
                             (long long)s->size[l], set_at[l], set_by[l]);
                return -1;
            }
        }
    }
    return 0;
}

int nd_ein_parse(const char *fn, const char *subs, int n, nd_array *const *ops, nd_ein_spec *s) {
    memset(s, 0, sizeof *s);
    char msg[200];
    term terms[ND_EIN_MAX_OPERANDS + 1];
    int nterms = 0, i = 0, explicit_out = 0;
    term out;
    for (;;) {
        if (nterms == ND_EIN_MAX_OPERANDS) {
            snprintf(msg, sizeof msg, "more than %d operands", ND_EIN_MAX_OPERANDS);
            return arg_error(fn, subs, i, msg);
        }
        if (read_term(fn, subs, &i, 0, &terms[nterms])) return -1;
        nterms++;
        if (subs[i] == ',') {
            i++;
            continue;
        }
        if (subs[i] == '-') {
            if (subs[i + 1] != '>') return arg_error(fn, subs, i, "'-' not followed by '>'");
            i += 2;
            if (read_term(fn, subs, &i, 1, &out)) return -1;
            if (subs[i] == ',')
                return arg_error(fn, subs, i, "',' in the output (there is one output; its subscripts follow '->')");
            if (subs[i] == '-') return arg_error(fn, subs, i, "a second '->'");
            explicit_out = 1;
        }
        break;
    }
    if (nterms != n) {
        if (nterms > n)
            snprintf(msg, sizeof msg, "the subscripts of operand %d start here, but %d operand%s given", n, n,
                     n == 1 ? " was" : "s were");
        else
            snprintf(msg, sizeof msg, "the subscripts name %d operand%s but %d were given", nterms,
                     nterms == 1 ? "" : "s", n);
        return arg_error(fn, subs, nterms > n ? terms[n].start : terms[nterms - 1].start, msg);
    }
    s->n = n;
    /* Axes of each operand: letters and the dimensions under '...'. */
    int axis_of[ND_EIN_MAX_OPERANDS][ND_EIN_LETTERS + 1], nell[ND_EIN_MAX_OPERANDS], max_ell = 0;
    for (int k = 0; k < n; k++) {
        const term *t = &terms[k];
        const int nd = ops[k]->ndim, nletters = t->n - (t->ell_at >= 0);
        if (nletters > nd || (t->ell_at < 0 && nletters != nd)) {
            nd_error_set(ND_ERR_SHAPE, "%s: subscripts \"%s\" at position %d: operand %d has %d dimension%s but its "
                         "subscripts name %d%s", fn, subs, t->start, k, nd, nd == 1 ? "" : "s", nletters,
                         nletters < nd ? " (add '...' to broadcast the others)" : "");
            return -1;
        }
        nell[k] = nd - nletters;
        if (nell[k] > max_ell) max_ell = nell[k];
        s->ndim[k] = nd;
        for (int j = 0, ax = 0; j < t->n; j++) {
            axis_of[k][j] = ax;
            ax += t->item[j] == ELLIPSIS ? nell[k] : 1;
        }
    }
    int set_at[ND_EIN_LETTERS];
    if (letter_sizes(fn, subs, n, ops, terms, axis_of, s, set_at)) return -1;
    /* The dimensions under '...' broadcast against each other, right-aligned. */
    for (int e = 0; e < max_ell; e++) s->size[ND_EIN_LETTERS + e] = 1;
    int ell_set_by[ND_MAX_DIMS] = {0};
    for (int k = 0; k < n; k++) {
        const term *t = &terms[k];
        for (int j = 0; j < t->n; j++) {
            if (t->item[j] != ELLIPSIS) {
                s->label[k][axis_of[k][j]] = t->item[j];
                continue;
            }
            for (int e = 0; e < nell[k]; e++) {
                const int l = ND_EIN_LETTERS + max_ell - nell[k] + e;
                const int64_t len = ops[k]->shape[axis_of[k][j] + e];
                s->label[k][axis_of[k][j] + e] = (int8_t)l;
                if (len == 1 || len == s->size[l]) continue;
                if (s->size[l] != 1) {
                    nd_error_set(ND_ERR_SHAPE, "%s: subscripts \"%s\" at position %d: the dimensions under '...' "
                                 "of operand %d (%d from the right: length %lld) do not broadcast against operand "
                                 "%d's (length %lld)", fn, subs, t->pos[j], k, max_ell - (l - ND_EIN_LETTERS),
                                 (long long)len, ell_set_by[l - ND_EIN_LETTERS], (long long)s->size[l]);
                    return -1;
                }
                s->size[l] = len, ell_set_by[l - ND_EIN_LETTERS] = k;
            }
        }
    }
    /* Labels each operand contributes: a length-1 axis against a longer
     * label broadcasts, so the operand does not carry that label. */
    int count[ND_EIN_MAX_LABELS] = {0};
    nd_ein_set all = 0;
    for (int k = 0; k < n; k++)
        for (int d = 0; d < s->ndim[k]; d++) {
            const int l = s->label[k][d];
            count[l] += l < ND_EIN_LETTERS; /* implicit output: letters seen once */
            all |= (nd_ein_set)1 << l;
            if (ops[k]->shape[d] == s->size[l]) s->set[k] |= (nd_ein_set)1 << l;
        }
    if (!explicit_out) {
        for (int e = 0; e < max_ell; e++) s->out[s->nout++] = (int8_t)(ND_EIN_LETTERS + e);
        for (int l = 0; l < ND_EIN_LETTERS; l++)
            if (count[l] == 1) s->out[s->nout++] = (int8_t)l;
    } else {
        int seen_at[ND_EIN_LETTERS];
        for (int l = 0; l < ND_EIN_LETTERS; l++) seen_at[l] = -1;
        for (int j = 0; j < out.n; j++) {
            const int l = out.item[j];
            if (l == ELLIPSIS) {
                for (int e = 0; e < max_ell; e++) s->out[s->nout++] = (int8_t)(ND_EIN_LETTERS + e);
                continue;
            }
            if (!(all >> l & 1)) {
                snprintf(msg, sizeof msg, "output index '%c' appears in no operand's subscripts", label_char(l));
                return arg_error(fn, subs, out.pos[j], msg);
            }
            if (seen_at[l] >= 0) {
                snprintf(msg, sizeof msg, "output index '%c' repeats (first at position %d)", label_char(l),
                         seen_at[l]);
                return arg_error(fn, subs, out.pos[j], msg);
            }
            seen_at[l] = out.pos[j];
            s->out[s->nout++] = (int8_t)l;
        }
        if (out.ell_at < 0 && max_ell > 0) {
            snprintf(msg, sizeof msg, "the operands have %d dimension%s under '...' but the output has no '...' to "
                     "hold them (as NumPy's einsum)", max_ell, max_ell == 1 ? "" : "s");
            return arg_error(fn, subs, out.start, msg);
        }
    }
    if (s->nout > ND_MAX_DIMS) {
        nd_error_set(ND_ERR_SHAPE, "%s: subscripts \"%s\": the output would have %d dimensions (at most %d)", fn,
                     subs, s->nout, ND_MAX_DIMS);
        return -1;
    }
    for (int j = 0; j < s->nout; j++) s->out_set |= (nd_ein_set)1 << s->out[j];
    s->summed = all & ~s->out_set;
    return 0;
}
