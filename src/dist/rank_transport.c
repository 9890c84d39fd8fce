/* The ranks' transport choice (rank_transport.h). */
#include "dist/rank_transport.h"

#include <stdio.h>

static const char *const mode_names[] = {"auto", "nccl", "staging"};

static const char *mode_name(uint64_t m) { return m < 3 ? mode_names[m] : "?"; }

/* " (this rank)" after a rank that is `me`: its own error says more. */
static const char *mine(int32_t r, int32_t me) { return r == me ? " (this rank)" : ""; }

int nd_rank_transport_choose(int32_t n, const nd_rank_identity *ranks, int32_t me, char *why, size_t cap) {
    if (n <= 1) {
        snprintf(why, cap, "one rank: nothing travels between ranks");
        return 0;
    }
    for (int32_t r = 0; r < n; r++)
        if (ranks[r].mode == ND_RANK_TRANSPORT_FAILED) {
            snprintf(why, cap, "MPI rank %d%s failed to start (its own error says why), so no rank can run", (int)r,
                     mine(r, me));
            return -1;
        }
    const uint64_t mode = ranks[0].mode;
    for (int32_t r = 1; r < n; r++)
        if (ranks[r].mode != mode) {
            snprintf(why, cap, "ND_RANK_TRANSPORT differs between the ranks (rank 0: %s, rank %d: %s); every rank "
                     "must make the same choice (mpirun -x ND_RANK_TRANSPORT)", mode_name(mode), (int)r,
                     mode_name(ranks[r].mode));
            return -1;
        }
    if (mode == ND_RANK_TRANSPORT_STAGING) {
        snprintf(why, cap, "ND_RANK_TRANSPORT=staging");
        return 0;
    }
    const int forced = mode == ND_RANK_TRANSPORT_NCCL;
    /* CPU ranks with the test link (ND_RANK_LINK=1) take it as GPU ranks
     * take NCCL under auto; nccl still means NCCL. */
    int32_t cpus = 0, with = -1, without = -1;
    for (int32_t r = 0; r < n; r++) {
        cpus += !ranks[r].gpu;
        if (!ranks[r].gpu && ranks[r].link && with < 0) with = r;
        if (!ranks[r].gpu && !ranks[r].link && without < 0) without = r;
    }
    if (!forced && cpus == n && with >= 0) {
        if (without >= 0) {
            snprintf(why, cap, "ND_RANK_LINK differs between the ranks (rank %d%s has the CPU test link, rank "
                     "%d%s not); every rank must make the same choice (mpirun -x ND_RANK_LINK)", (int)with,
                     mine(with, me), (int)without, mine(without, me));
            return -1;
        }
        snprintf(why, cap, "ND_RANK_LINK=1: every rank is a CPU rank with the test link");
        return 1;
    }
    for (int32_t r = 0; r < n; r++)
        if (!ranks[r].gpu) {
            snprintf(why, cap, "rank %d%s does not compute on a GPU (NCCL carries only GPU memory)%s", (int)r,
                     mine(r, me), forced ? ": ND_RANK_TRANSPORT=nccl needs the CUDA backend on every rank" : "");
            return forced ? -1 : 0;
        }
    for (int32_t r = 0; r < n; r++)
        if (!ranks[r].link) {
            snprintf(why, cap, "NCCL is not available on rank %d%s (nd built without it, meson option nccl, or "
                     "libnccl.so.2 not found)", (int)r, mine(r, me));
            return forced ? -1 : 0;
        }
    int32_t shared_a = -1, shared_b = -1;
    for (int32_t a = 0; a < n; a++)
        for (int32_t b = a + 1; b < n; b++) {
            if (ranks[a].gpu != ranks[b].gpu) continue;
            /* NCCL tells ranks of one GPU apart only as ranks of different
             * hosts: each with an NCCL_HOSTID of its own. */
            int apart = ranks[a].host_id && ranks[b].host_id && ranks[a].host_id != ranks[b].host_id;
            if (!forced) {
                snprintf(why, cap, "ranks %d and %d share a GPU, which NCCL refuses (auto picks NCCL only where "
                         "every rank has a GPU of its own)", (int)a, (int)b);
                return 0;
            }
            if (!apart) {
                snprintf(why, cap, "ranks %d and %d share a GPU, which NCCL refuses: give each rank a GPU of its "
                         "own, or a distinct NCCL_HOSTID (NCCL then takes them for different hosts and uses its "
                         "socket transport), or set ND_RANK_TRANSPORT=auto or staging", (int)a, (int)b);
                return -1;
            }
            if (shared_a < 0) shared_a = a, shared_b = b;
        }
    if (!forced)
        snprintf(why, cap, "every rank has a GPU of its own");
    else if (shared_a >= 0)
        snprintf(why, cap, "ND_RANK_TRANSPORT=nccl (ranks %d and %d share a GPU, told apart by their "
                 "NCCL_HOSTIDs)", (int)shared_a, (int)shared_b);
    else
        snprintf(why, cap, "ND_RANK_TRANSPORT=nccl");
    return 1;
}
