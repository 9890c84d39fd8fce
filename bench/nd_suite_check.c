/*
 * nd_suite_check.c — what the suite's workloads share: filling and syncing
 * their slots, reading results back, and the error measures of their checks.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nd_suite.h"

void suite_replace(nd_array **slot, nd_array *value)
{
    nd_free(*slot);
    *slot = value;
}

/* Syncs after a prepare or run that filled `count` slots of `arr`; a NULL
 * slot means an op failed and the error is already set. */
nd_status suite_settle(nd_array **arr, int count)
{
    for (int i = 0; i < count; i++)
        if (!arr[i])
            return nd_last_status() != ND_OK ? nd_last_status() : ND_ERR_STATE;
    return nd_sync();
}

void *suite_host_copy(nd_array *a, size_t item)
{
    size_t bytes = (size_t)nd_size(a) * item;
    void *p = malloc(bytes ? bytes : 1);
    if (!p || nd_to_host(a, p, bytes) != ND_OK) {
        fprintf(stderr, "nd_suite: reading %zu bytes back failed: %s\n", bytes,
                p ? nd_last_error() : "out of host memory");
        free(p);
        return NULL;
    }
    return p;
}

bool suite_dtype_is(nd_array *a, nd_dtype want, const char *what)
{
    if (nd_dtype_of(a) == want)
        return true;
    fprintf(stderr, "nd_suite: %s has dtype %s, expected %s\n", what,
            nd_dtype_name(nd_dtype_of(a)), nd_dtype_name(want));
    return false;
}

/* Positions spread pseudo-randomly over [0, n): the same every check. */
int64_t suite_next_index(uint64_t *state, int64_t n)
{
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return (int64_t)((*state >> 17) % (uint64_t)n);
}

/* ||got - ref|| / ||ref|| accumulated term by term. */
void suite_norm_add(suite_norm_err *e, double got, double ref)
{
    e->num += (got - ref) * (got - ref);
    e->den += ref * ref;
}

double suite_norm_value(const suite_norm_err *e)
{
    return sqrt(e->num / e->den); /* NaN for a NaN output: fails the check */
}
