#include "common/env.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"

int nd_env_int64(const char *name, int64_t lo, int64_t hi, int suffixes, int64_t *out, int *set) {
    const char *s = getenv(name);
    *set = 0;
    if (!s || !*s) return 0;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    int64_t mul = 1;
    if (suffixes && *end) {
        switch (tolower((unsigned char)*end)) {
        case 'k': mul = (int64_t)1 << 10; end++; break;
        case 'm': mul = (int64_t)1 << 20; end++; break;
        case 'g': mul = (int64_t)1 << 30; end++; break;
        default: break;
        }
    }
    while (*end && isspace((unsigned char)*end)) end++;
    if (end == s || *end || errno || v < lo || v > hi || (mul > 1 && v > hi / mul)) {
        nd_error_set(ND_ERR_ARG, "nd_init: environment variable %s='%s' is not an integer in "
                     "%lld..%lld%s (fix or unset it)",
                     name, s, (long long)lo, (long long)hi, suffixes ? " (k/m/g suffix allowed)" : "");
        return -1;
    }
    *out = (int64_t)v * mul;
    *set = 1;
    return 0;
}

const char *const nd_env_cpu_jit_modes[3] = {"0", "1", "sync"};
const char *const nd_env_rank_transports[3] = {"auto", "nccl", "staging"};
const char *const nd_env_scan_variants[NDP_SCAN_N_VARIANTS] = ND_SCAN_VARIANT_NAMES;

int nd_env_choice(const char *name, const char *const *choices, int n, int *index, int *set) {
    const char *s = getenv(name);
    *set = 0;
    if (!s || !*s) return 0;
    for (int i = 0; i < n; i++)
        if (strcmp(s, choices[i]) == 0) {
            *index = i;
            *set = 1;
            return 0;
        }
    char list[200];
    size_t len = 0;
    list[0] = '\0';
    for (int i = 0; i < n && len < sizeof list; i++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", i ? (i == n - 1 ? " or " : ", ") : "",
                                choices[i]);
    nd_error_set(ND_ERR_ARG, "nd_init: environment variable %s='%s' is not %s (fix or unset it)", name, s,
                 list);
    return -1;
}

int nd_env_check(void) {
    int64_t v;
    int set, index;
    if (nd_env_int64(ND_ENV_EXECUTOR_THREAD, &v, &set) || nd_env_int64(ND_ENV_LOCK_BIAS, &v, &set) ||
        nd_env_int64(ND_ENV_CHUNK_BYTES, &v, &set) ||
        nd_env_int64(ND_ENV_CPU_JIT_MIN, &v, &set) || nd_env_int64(ND_ENV_PINNED_CACHE, &v, &set) ||
        nd_env_int64(ND_ENV_CUDA_GENERIC, &v, &set) || nd_env_int64(ND_ENV_FUSED_GATHER, &v, &set) ||
        nd_env_int64(ND_ENV_CUDA_PERSIST, &v, &set) ||
        nd_env_int64(ND_ENV_CUDA_SHARE_STREAMS, &v, &set) || nd_env_int64(ND_ENV_CUDA_CHOL_SIDE_ZEROS, &v, &set) ||
        nd_env_int64(ND_ENV_CHECK_SPMD, &v, &set) || nd_env_int64(ND_ENV_RANK_STAGING, &v, &set) ||
        nd_env_int64(ND_ENV_RANK_LINK, &v, &set) || nd_env_int64(ND_ENV_RANK_COPY_ENGINES, &v, &set) ||
        nd_env_choice(ND_ENV_CPU_JIT, &index, &set) || nd_env_choice(ND_ENV_SCAN_VARIANT, &index, &set) ||
        nd_env_choice(ND_ENV_RANK_TRANSPORT, &index, &set))
        return -1;
    return 0;
}
