/* The runtime: start (nd_config merged with ND_* variables), stop, flushes,
 * statistics. Everything mutable lives in nd_rt. */
#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "backends/registry.h"
#include "common/device_list.h"
#include "common/env.h"
#include "common/compile_count.h"
#include "common/fault.h"
#include "common/hash.h"
#include "common/mem_count.h"
#include "common/memory.h"
#include "common/copy_bandwidth.h"
#include "common/profile.h"
#include "dist/dist.h"
#include "dist/rank_transport.h"
#include "frontend/flush_worker.h"
#include "frontend/frontend.h"
#include "frontend/interop.h"
#include "frontend/scope_replay.h"
#include "scheduler/executor_ranks.h"

nd_runtime nd_rt;

/* ------------------------------------------------------------ settings */

/* 0/1 switches stored as the nd_config convention: 1 on, -1 off. */
static int env_switch(const char *name, int *field) {
    int64_t v;
    int set;
    if (nd_env_int64(name, 0, 1, 0, &v, &set)) return -1;
    if (set && *field == 0) *field = v ? 1 : -1;
    return 0;
}

static int check_switch(const char *name, int v) {
    if (v >= -1 && v <= 1) return 0;
    nd_error_set(ND_ERR_ARG, "nd_init: nd_config.%s = %d is invalid (use 1 on, -1 off, 0 default)",
                 name, v);
    return -1;
}

/* "cpu:N": N logical CPU memories (1..ND_MAX_SPLIT); 0 when s names GPUs,
 * -1 when it is malformed (common/device_list.h parses both forms). */
_Static_assert(ND_DEVICE_LIST_MAX == ND_MAX_SPLIT, "one bound on logical devices");

static int cpu_devices(const char *s) {
    nd_device_list l;
    if (nd_device_list_parse(s, &l)) return strncmp(s, "cpu:", 4) ? 0 : -1;
    return l.cpu ? l.n : 0;
}

/* GPU entries of a device list ("0,0": 2); 0 for cpu:N or a malformed one. */
static int gpu_devices(const char *s) {
    nd_device_list l;
    return nd_device_list_parse(s, &l) || l.cpu ? 0 : l.n;
}

static int valid_devices(const char *s) {
    /* "0", "0,1,3": non-negative ordinals separated by commas; or cpu:N. */
    nd_device_list l;
    return nd_device_list_parse(s, &l) == 0;
}

/* The size of nd_config in the version that added struct_size: what a
 * config with struct_size 0 has (its last field is `trace`). Fixed when
 * fields are added. */
#define CONFIG_SIZE_V1 (offsetof(nd_config, trace) + sizeof(const char *))

/* The caller's config (of struct_size bytes) into this library's layout;
 * fields it does not have are zero (their defaults). */
static nd_status copy_config(const nd_config *in, nd_config *c) {
    memset(c, 0, sizeof *c);
    if (!in) return ND_OK;
    size_t n = in->struct_size ? in->struct_size : CONFIG_SIZE_V1;
    if (n < offsetof(nd_config, backend))
        return nd_error_set(ND_ERR_ARG, "nd_init: nd_config.struct_size = %zu is too small (use "
                            "sizeof(nd_config), ND_CONFIG_INIT, or 0)", in->struct_size);
    for (size_t i = sizeof *c; i < n; i++)
        if (((const unsigned char *)in)[i])
            return nd_error_set(ND_ERR_ARG, "nd_init: nd_config.struct_size = %zu is larger than this "
                                "library's nd_config (%zu bytes) and sets a field it does not know (byte "
                                "%zu): the program was built against a newer nd.h; run it with that nd",
                                in->struct_size, sizeof *c, i);
    memcpy(c, in, n < sizeof *c ? n : sizeof *c);
    c->struct_size = sizeof *c;
    return ND_OK;
}

static nd_status resolve_config(const nd_config *in, nd_config *c) {
    if (copy_config(in, c) != ND_OK) return ND_ERR_ARG;
    int64_t v;
    int set;
    const char *s;

    if (c->backend != ND_BACKEND_AUTO && !nd_backend_by_kind(c->backend))
        return nd_error_set(ND_ERR_ARG, "nd_init: nd_config.backend = %d is invalid (use "
                            "ND_BACKEND_AUTO, ND_BACKEND_CPU or ND_BACKEND_CUDA)", (int)c->backend);
    /* Every variable is checked even where nd_config overrides it (env.h:
     * one rule for all). */
    if ((s = getenv("ND_BACKEND")) && *s) {
        const nd_backend_entry *e = nd_backend_by_name(s);
        if (!e && strcasecmp(s, "auto")) {
            char names[128] = "auto";
            for (int k = ND_BACKEND_AUTO + 1; (e = nd_backend_by_kind((nd_backend_kind)k)); k++)
                snprintf(names + strlen(names), sizeof names - strlen(names), ", %s", e->name);
            return nd_error_set(ND_ERR_ARG, "nd_init: environment variable ND_BACKEND='%s' is not "
                                "one of %s (fix or unset it)", s, names);
        }
        if (c->backend == ND_BACKEND_AUTO) c->backend = e ? e->kind : ND_BACKEND_AUTO;
    }
    if (c->num_threads < 0)
        return nd_error_set(ND_ERR_ARG, "nd_init: nd_config.num_threads = %d is negative (use 0 "
                            "for one thread per core)", c->num_threads);
    if (nd_env_int64("ND_NUM_THREADS", 0, 4096, 0, &v, &set)) return ND_ERR_ARG;
    if (set && c->num_threads == 0) c->num_threads = (int)v;

    if ((s = getenv("ND_DEVICES")) && *s && !valid_devices(s))
        return nd_error_set(ND_ERR_ARG, "nd_init: environment variable ND_DEVICES='%s' is not a "
                            "comma list of at most %d GPU ordinals like \"0,1\" nor cpu:N with N in 1..%d (fix or unset "
                            "it)", s, ND_DEVICE_LIST_MAX, ND_MAX_SPLIT);
    if (!c->devices && s && *s) c->devices = s;
    if (c->devices && !valid_devices(c->devices))
        return nd_error_set(ND_ERR_ARG, "nd_init: devices '%s' (nd_config.devices or ND_DEVICES) "
                            "is not a comma list of GPU ordinals like \"0,1\" nor cpu:N with N in 1..%d",
                            c->devices, ND_MAX_SPLIT);
    /* cpu:N names the CPU backend's logical memories. */
    if (c->devices && cpu_devices(c->devices) > 0) {
        if (c->backend == ND_BACKEND_CUDA)
            return nd_error_set(ND_ERR_ARG, "nd_init: devices '%s' names CPU memories but the backend is cuda "
                                "(use ND_BACKEND=cpu or auto, or GPU ordinals like \"0,1\")", c->devices);
        c->backend = ND_BACKEND_CPU;
    }
    if (nd_env_int64(ND_ENV_SPLIT_MIN_BYTES, &v, &set)) return ND_ERR_ARG;
    if (nd_env_int64(ND_ENV_EDGE_MIN_BYTES, &v, &set)) return ND_ERR_ARG;

    if (c->log < 0 || c->log > 3)
        return nd_error_set(ND_ERR_ARG, "nd_init: nd_config.log = %d is out of range (use 0..3)",
                            c->log);
    if (nd_env_int64("ND_LOG", 0, 3, 0, &v, &set)) return ND_ERR_ARG;
    if (set && c->log == 0) c->log = (int)v;

    if (!c->dump_dot && (s = getenv("ND_DUMP_DOT")) && *s) c->dump_dot = s;
    /* Checked now: a folder that cannot be written would otherwise fail
     * every flush's dump later, each leaving an error behind. */
    if (c->dump_dot && access(c->dump_dot, W_OK) != 0)
        return nd_error_set(ND_ERR_ARG, "nd_init: the dump_dot folder '%s' (nd_config.dump_dot or "
                            "ND_DUMP_DOT) cannot be written (%s); create it, or unset it",
                            c->dump_dot, strerror(errno));
    if (!c->trace && (s = getenv("ND_TRACE")) && *s) c->trace = s;
    if (c->dump_dot_plan < 0 || c->dump_dot_plan > 1)
        return nd_error_set(ND_ERR_ARG, "nd_init: nd_config.dump_dot_plan = %d is invalid (use 0 or 1)",
                            c->dump_dot_plan);
    if (nd_env_int64("ND_DUMP_DOT_PLAN", 0, 1, 0, &v, &set)) return ND_ERR_ARG;
    if (set && c->dump_dot_plan == 0) c->dump_dot_plan = (int)v;

    if (c->profile < 0 || c->profile > 1)
        return nd_error_set(ND_ERR_ARG, "nd_init: nd_config.profile = %d is invalid (use 0 or 1)",
                            c->profile);
    if (nd_env_int64("ND_PROFILE", 0, 1, 0, &v, &set)) return ND_ERR_ARG;
    if (set && c->profile == 0) c->profile = (int)v;

    if (!c->cache_dir && (s = getenv("ND_CACHE_DIR")) && *s) c->cache_dir = s;

    if (check_switch("fusion", c->fusion) || check_switch("cuda_graphs", c->cuda_graphs) ||
        check_switch("matmul_tf32", c->matmul_tf32) || check_switch("early_flush", c->early_flush) ||
        check_switch("scope_replay", c->scope_replay) || check_switch("body_loops", c->body_loops))
        return ND_ERR_ARG;
    if (env_switch("ND_FUSION", &c->fusion) || env_switch("ND_CUDA_GRAPHS", &c->cuda_graphs) ||
        env_switch("ND_MATMUL_TF32", &c->matmul_tf32) || env_switch("ND_EARLY_FLUSH", &c->early_flush) ||
        env_switch("ND_SCOPE_REPLAY", &c->scope_replay) || env_switch("ND_BODY_LOOPS", &c->body_loops))
        return ND_ERR_ARG;
    if (c->fusion == 0) c->fusion = 1;
    if (c->cuda_graphs == 0) c->cuda_graphs = 1;
    if (c->early_flush == 0) c->early_flush = 1;
    if (c->scope_replay == 0) c->scope_replay = 1;
    if (c->body_loops == 0) c->body_loops = 1;
    if (c->matmul_tf32 == 0) c->matmul_tf32 = -1;

    if (c->max_pending < 0)
        return nd_error_set(ND_ERR_ARG, "nd_init: nd_config.max_pending = %lld is negative (use "
                            "0 for the default 10000)", (long long)c->max_pending);
    if (nd_env_int64("ND_MAX_PENDING", 1, INT64_MAX, 0, &v, &set)) return ND_ERR_ARG;
    if (set && c->max_pending == 0) c->max_pending = v;
    if (c->max_pending == 0) c->max_pending = 10000;

    if (c->device_memory_limit < 0)
        return nd_error_set(ND_ERR_ARG, "nd_init: nd_config.device_memory_limit = %lld is "
                            "negative (use 0 for the whole device)",
                            (long long)c->device_memory_limit);
    if (nd_env_int64("ND_DEVICE_MEMORY_LIMIT", 0, INT64_MAX, 1, &v, &set)) return ND_ERR_ARG;
    if (set && c->device_memory_limit == 0) c->device_memory_limit = v;
    /* The variables read later or by one backend: a bad one fails here,
     * whichever backend starts, instead of being ignored (or, read after
     * the start, leaving a sticky error behind an nd_init that succeeded). */
    if (nd_env_check()) return ND_ERR_ARG;
    return ND_OK;
}

/* ------------------------------------------------------------ lifecycle */

/* Early flushes. Between two nd_syncs, the first ND_EARLY_FLUSH_FIRST
 * nodes are flushed once they are recorded (between two statements:
 * nd_runtime_after_record says when), then twice as many, and so on: the
 * device starts on the first sweeps of a loop while the caller records the
 * rest, instead of idling until nd_sync (50 sweeps of a
 * 1000x1000 stencil: ~60 us of recording and ~200 us of device time that
 * did not overlap), and the doubling keeps the number of flushes, each a
 * fusion boundary and a plan, logarithmic. Only while every value recorded
 * is small: a flush boundary can cost a value written to memory, which is
 * nothing next to a launch on small arrays but a full pass on large ones,
 * whose kernels run long enough to hide the recording anyway.
 *
 * The first flush is the latency before the device starts (recording its
 * sweeps, then binding and launching them), so it comes early: at 12 nodes
 * (2 sweeps of the 1000x1000 stencil; flushes of 2, 4, 8, 16 and 20
 * sweeps) the suite's 50 sweeps took 248-250 us on the H100 against
 * 251-257 us at 32 (6, 12, 24, 8) in interleaved runs; at 24 (4, 8, 16,
 * 22) some processes took 290-300 us. The chains' twins (store_chains.c)
 * spare every flush but the first its fills, and recording 2 sweeps ahead
 * of the device is enough: a sweep takes ~1.7 us to record and plan and
 * ~4.4 us on the device. */
#define ND_EARLY_FLUSH_FIRST 12
/* Code that stores nothing is cut a quarter further on, but never before
 * this many nodes: a cut in the middle of an expression writes every value
 * it still holds to memory (42 of Black-Scholes' over 1000 elements, one
 * kernel when recorded whole). */
#define ND_EARLY_FLUSH_UNSTORED_MIN 80
/* (ND_EARLY_FLUSH_MAX_BYTES, the size of "large": runtime.h.) */

static void early_flush_rearm(void) {
    nd_rt.early_flush_at = nd_rt.cfg.early_flush == 1 ? ND_EARLY_FLUSH_FIRST : 0;
    nd_rt.early_flush_due = 0;
}

/* How many buffer descriptors and array handles are kept for reuse: more
 * than a flush of ND_MAX_PENDING's default 10000 nodes frees, a few MB at
 * most. Under AddressSanitizer none, so a use after free is still caught. */
#if defined(__SANITIZE_ADDRESS__)
#define ND_RECYCLE_MAX 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ND_RECYCLE_MAX 0
#endif
#endif
#ifndef ND_RECYCLE_MAX
#define ND_RECYCLE_MAX 16384
#endif

static void release_memory(void *ctx, int memory, void *ptr, size_t nbytes) {
    (void)ctx;
    /* After nd_shutdown the backend is gone; handles are invalid by then. */
    if (!nd_rt.backend || !ptr) return;
    nd_rt.backend->release(nd_rt.backend, memory, ptr, nbytes);
}

/* A twin's memory goes back to the executor's pool of temporaries: the
 * next grid's first chain takes it from there instead of allocating
 * (6 us of the 1000x1000 stencil's first flush on the H100). */
static void release_twin_memory(void *ctx, int memory, void *ptr, size_t nbytes) {
    (void)ctx;
    if (!nd_rt.backend || !ptr) return;
    nd_temp_pool_return(&nd_rt.sched, memory, ptr, nbytes);
}

/* A piece of a split array goes back to the backend for its device. */
static void release_piece_memory(void *ctx, int memory, int device, void *ptr, size_t nbytes) {
    (void)ctx;
    if (!nd_rt.backend || !ptr) return;
    if (nd_rt.backend->release_piece) nd_rt.backend->release_piece(nd_rt.backend, memory, device, ptr, nbytes);
    else nd_rt.backend->release(nd_rt.backend, memory, ptr, nbytes);
}

static void at_exit(void) { nd_shutdown(); /* nothing if not running */ }

static int copy_path(char *dst, size_t cap, const char *src, const char *what) {
    if (strlen(src) >= cap) {
        nd_error_set(ND_ERR_ARG, "nd_init: %s path '%.64s...' is longer than %zu bytes (use a "
                     "shorter path)", what, src, cap - 1);
        return -1;
    }
    strcpy(dst, src);
    return 0;
}

/* Host arrays of at least two chunks stream through a device in chunks:
 * 64 MiB (ND_CHUNK_BYTES overrides), at most an eighth of a device memory
 * limit, so the staging buffers (two per streamed array) fit beside it. */
static size_t chunk_bytes_for(const nd_backend *be, const nd_config *c) {
    if (be->memory == ND_MEMORY_HOST) return 0;
    size_t chunk = (size_t)64 << 20;
    int64_t v;
    int set;
    if (nd_env_int64(ND_ENV_CHUNK_BYTES, &v, &set) == 0 && set) chunk = (size_t)v; /* checked */
    if (c->device_memory_limit > 0 && (size_t)(c->device_memory_limit / 8) < chunk)
        chunk = (size_t)(c->device_memory_limit / 8);
    return chunk < 4096 ? 4096 : chunk;
}

/* ND_DEVICES=cpu:N: arrays of at least ND_SPLIT_MIN_BYTES (default
 * 1 MiB: below it a kernel per device costs more than it saves) are split
 * in row blocks over N logical memories. Both were checked. */
static nd_split_config split_config_for(const nd_config *c, const nd_backend *be) {
    nd_split_config sc = {1, (size_t)1 << 20, 0};
    int n = c->devices ? cpu_devices(c->devices) : 0;
    /* GPU ordinals ("0,1", "0,0"): split when the backend drives them all
     * (the CUDA backend; the CPU one, when auto fell back, runs whole). */
    if (n <= 0 && c->devices && be->device_memories > 1 && gpu_devices(c->devices) == be->device_memories)
        n = be->device_memories;
    if (n > 1) sc.n_devices = n;
    /* Under mpirun, rank r is device r (checked in nd_init), on the CPU
     * and on a GPU alike (one GPU per rank: device_memories is 0). */
    if (nd_dist_size() > 1 && be->device_memories <= 1) sc.n_devices = nd_dist_size();
    int64_t v;
    int set;
    if (nd_env_int64(ND_ENV_SPLIT_MIN_BYTES, &v, &set) == 0 && set) sc.min_bytes = (size_t)v;
    /* Edge strips pay two more launches per device and sweep: worth it
     * when the interior they overlap takes longer than a halo copy. */
    sc.edge_min_bytes = sc.min_bytes > ((size_t)1 << 60) / 4 ? sc.min_bytes : 4 * sc.min_bytes;
    if (nd_env_int64(ND_ENV_EDGE_MIN_BYTES, &v, &set) == 0 && set) sc.edge_min_bytes = (size_t)v;
    return sc;
}

/* Under mpirun with several ranks: each is one device of the split, so
 * ND_DEVICES=cpu:N cannot also ask for N. */
static nd_status check_ranks(const nd_config *c) {
    int n = nd_dist_size();
    if (c->devices && cpu_devices(c->devices) > 1)
        return nd_error_set(ND_ERR_ARG, "nd_init: devices '%s' splits arrays over logical CPU devices, but this "
                            "process is one of %d MPI ranks, which split them already (unset ND_DEVICES under "
                            "mpirun)", c->devices, n);
    if (c->devices && gpu_devices(c->devices) > 1)
        return nd_error_set(ND_ERR_ARG, "nd_init: devices '%s' names several GPUs, but this process is one of "
                            "%d MPI ranks, which drive one GPU each (picked by the rank's place on its machine; "
                            "name one ordinal, or unset ND_DEVICES under mpirun)", c->devices, n);
    if (n > ND_MAX_SPLIT)
        return nd_error_set(ND_ERR_UNSUPPORTED, "nd_init: launched over %d MPI ranks; nd splits arrays over at most "
                            "%d (use mpirun -n %d or fewer)", n, ND_MAX_SPLIT, ND_MAX_SPLIT);
    return ND_OK;
}

/* Every rank's status after a step of the link's start: the first rank
 * that failed, or -1. */
static int32_t ranks_failed(nd_status mine) {
    uint64_t all[ND_MAX_SPLIT], m = (uint64_t)mine;
    if (nd_dist_allgather_u64(&m, 1, all) != ND_OK) return nd_dist_rank();
    for (int32_t r = 0; r < nd_dist_size(); r++)
        if (all[r] != ND_OK) return r;
    return -1;
}

/* MPI's transfers, for the CPU backend's test link (backend.h's
 * nd_rank_wire: a backend does not include dist.h). */
static const nd_rank_wire dist_wire = {nd_dist_send, nd_dist_recv, nd_dist_bcast};

/* A 0/1 setting (an ND_ENV_* name and bounds), validated already by nd_env_check. */
static int env_flag(const char *name, int64_t lo, int64_t hi, int suffixes) {
    int64_t v = 0;
    int set = 0;
    (void)nd_env_int64(name, lo, hi, suffixes, &v, &set);
    return set && v;
}

/* Under mpirun with GPU ranks: how the bytes between ranks travel
 * (ND_RANK_TRANSPORT; dist/rank_transport.h decides, alike on every rank,
 * from every rank's GPU, NCCL and NCCL_HOSTID; on CPU ranks, whether each
 * has ND_RANK_LINK=1's test link). Where it is the link (NCCL), opens the
 * backend's link (every rank together: rank 0's backend makes the id, MPI
 * carries its bytes to the others) and sets *link. Every rank
 * calls it (it allgathers), one whose backend did not start too (be NULL:
 * it only tells the others, which then fail rather than wait for it);
 * `how` says what was chosen and why. */
static nd_status choose_rank_transport(nd_backend *be, int *link, char *how, size_t cap) {
    *link = 0;
    int mode = ND_RANK_TRANSPORT_AUTO, set = 0;
    (void)nd_env_choice(ND_ENV_RANK_TRANSPORT, &mode, &set); /* validated by nd_env_check */
    if (!set) mode = ND_RANK_TRANSPORT_AUTO;
    if (!be) mode = ND_RANK_TRANSPORT_FAILED;
    nd_rank_identity me = {be ? be->gpu_identity : 0, 0, 0, (uint64_t)mode};
    char here[400] = ""; /* why this rank has no NCCL */
    nd_error_saved before; /* a probe's or a fallback's error is not the program's */
    nd_error_save(&before);
    if (mode != ND_RANK_TRANSPORT_STAGING && be && (me.gpu || be->rank_link_probe)) {
        if (!be->rank_link_probe)
            snprintf(here, sizeof here, "this nd was built without NCCL (meson option nccl; nccl.h and "
                     "libnccl.so.2 in the CUDA toolkit)");
        else if (be->rank_link_probe(be) != ND_OK)
            snprintf(here, sizeof here, "%s", nd_last_error());
        else
            me.link = 1;
        nd_error_restore(&before);
    }
    const char *host_id = getenv("NCCL_HOSTID");
    if (host_id && *host_id) {
        uint64_t h = nd_hash_bytes(ND_HASH_SEED, host_id, strlen(host_id));
        me.host_id = h ? h : 1;
    }
    nd_rank_identity all[ND_MAX_SPLIT];
    _Static_assert(sizeof me == ND_RANK_ID_WORDS * sizeof(uint64_t), "an identity is its words");
    nd_status st = nd_dist_allgather_u64(&me.gpu, ND_RANK_ID_WORDS, &all[0].gpu);
    if (st != ND_OK) return st;
    const int32_t n = nd_dist_size(), rank = nd_dist_rank();
    char why[600];
    int pick = nd_rank_transport_choose(n, all, rank, why, sizeof why);
    int some_failed = 0;
    for (int32_t r = 0; r < n; r++) some_failed |= all[r].mode == ND_RANK_TRANSPORT_FAILED;
    /* A rank that failed keeps its own error; the others say which failed. */
    if (pick < 0 && some_failed) return be ? nd_error_set(ND_ERR_BACKEND, "nd_init: %s", why) : ND_ERR_BACKEND;
    if (pick < 0)
        return nd_error_set(ND_ERR_UNSUPPORTED, "nd_init: ND_RANK_TRANSPORT=%s cannot be: %s%s%s%s",
                            nd_env_rank_transports[mode], why, here[0] && !me.link ? " (here: " : "",
                            here[0] && !me.link ? here : "", here[0] && !me.link ? ")" : "");
    if (pick == 1) {
        unsigned char id[ND_RANK_LINK_ID_BYTES];
        memset(id, 0, sizeof id);
        st = rank == 0 ? be->rank_link_id(be, id, sizeof id) : ND_OK;
        /* Every rank takes part, rank 0's failure included (an all-zero id). */
        nd_status sent = nd_dist_bcast(id, sizeof id, 0);
        if (st == ND_OK) st = sent;
        int32_t failed = ranks_failed(st);
        if (failed < 0) {
            st = be->rank_link_open(be, id, sizeof id, n, rank);
            failed = ranks_failed(st);
        }
        if (failed >= 0) {
            /* Where it opened, it closes: every rank makes the same choice. */
            char cause[600];
            snprintf(cause, sizeof cause, "%s", st != ND_OK ? nd_last_error() : "");
            if (be->rank_link_close) be->rank_link_close(be);
            /* The test link falls back to nothing: a test of it must not
             * pass over plain MPI. */
            if (mode == ND_RANK_TRANSPORT_NCCL || be->rank_link_host)
                return st != ND_OK ? nd_error_set(st, "%s", cause)
                                   : nd_error_set(ND_ERR_BACKEND, "nd_init: %s did not start on MPI rank %d (its "
                                                  "own error says why)", be->rank_link_host ? "ND_RANK_LINK=1: the "
                                                  "test link" : "ND_RANK_TRANSPORT=nccl: NCCL", (int)failed);
            nd_logf(1, "nd_init: NCCL did not start on MPI rank %d (%s): bytes between ranks go through pinned "
                    "host buffers", (int)failed, st != ND_OK ? cause : "its own error says why");
            nd_error_restore(&before);
            snprintf(how, cap, "through pinned host buffers (NCCL did not start on rank %d)", (int)failed);
            return ND_OK;
        }
        *link = 1;
        if (be->rank_link_host)
            snprintf(how, cap, "over the CPU backend's test link, MPI under the link's hooks (%s)", why);
        else
            snprintf(how, cap, "over NCCL, device to device (%s)", why);
        return ND_OK;
    }
    if (me.gpu)
        snprintf(how, cap, "through pinned host buffers (%s)", why);
    else
        snprintf(how, cap, "over MPI from host memory in place (a CPU rank)");
    return ND_OK;
}

nd_status nd_init(const nd_config *cfg) {
    ND_API_GUARD(); /* also makes the lazy start (nd_runtime_ensure) race-free */
    if (nd_rt.initialised)
        return nd_error_set(ND_ERR_STATE, "nd_init: the runtime is already running (call "
                            "nd_shutdown first to restart with other settings)");
    nd_config c;
    nd_status st = resolve_config(cfg, &c);
    if (st == ND_OK) st = nd_fault_from_env(); /* ND_FAULT: a testing aid (common/fault.h) */
    /* Under mpirun: MPI first (its exit handler then runs after nd's). */
    if (st == ND_OK) st = nd_dist_start();
    if (st == ND_OK && nd_dist_size() > 1) st = check_ranks(&c);
    if (st != ND_OK) return st;

    nd_rt.dump_dot_dir[0] = '\0';
    if (c.dump_dot && copy_path(nd_rt.dump_dot_dir, sizeof nd_rt.dump_dot_dir, c.dump_dot,
                                "dump_dot (nd_config.dump_dot or ND_DUMP_DOT)"))
        return ND_ERR_ARG;
    if (c.cache_dir) {
        if (copy_path(nd_rt.cache_dir, sizeof nd_rt.cache_dir, c.cache_dir,
                      "cache_dir (nd_config.cache_dir or ND_CACHE_DIR)"))
            return ND_ERR_ARG;
    } else {
        const char *home = getenv("HOME");
        snprintf(nd_rt.cache_dir, sizeof nd_rt.cache_dir, "%s/.cache/nd",
                 home && *home ? home : ".");
    }
    /* Keep the resolved config self-contained: strings point into nd_rt. */
    c.dump_dot = nd_rt.dump_dot_dir[0] ? nd_rt.dump_dot_dir : NULL;
    c.cache_dir = nd_rt.cache_dir;
    if (c.devices) {
        if (copy_path(nd_rt.devices, sizeof nd_rt.devices, c.devices,
                      "devices (nd_config.devices or ND_DEVICES)"))
            return ND_ERR_ARG;
        c.devices = nd_rt.devices;
    }
    nd_log_set_level(c.log);
    /* Under mpirun every rank writes its own ND_TRACE: path.rank<r>. */
    static char rank_trace[1100];
    if (c.trace && nd_dist_size() > 1) {
        snprintf(rank_trace, sizeof rank_trace, "%s.rank%d", c.trace, (int)nd_dist_rank());
        c.trace = rank_trace;
    }

    nd_backend_config bc = {
        .num_threads = c.num_threads,
        .devices = c.devices,
        .cache_dir = nd_rt.cache_dir,
        .matmul_tf32 = c.matmul_tf32 == 1,
        .cuda_graphs = c.cuda_graphs == 1,
        .device_memory_limit = c.device_memory_limit,
        .profile = c.profile == 1,
        .trace = c.trace,
        .local_rank = nd_dist_size() > 1 ? nd_dist_local_rank() : 0,
        .app_stream = c.cuda_stream,
        .rank_test_wire = nd_dist_size() > 1 && env_flag(ND_ENV_RANK_LINK) ? &dist_wire : NULL, /* the test link */
    };
    nd_mem_count_reset(); /* before the backend's first allocation */
    nd_compile_count_reset();
    nd_backend *be = NULL;
    st = nd_backend_open(c.backend, &bc, &be);
    if (st == ND_OK && c.cuda_stream) st = nd_runtime_attach_stream(be, c.cuda_stream);
    /* Under mpirun, ranks that split arrays (rank r is device r) pick how
     * their bytes travel, all together. */
    int rank_link = 0;
    char rank_how[700] = "";
    if (nd_dist_size() > 1 && (st != ND_OK || split_config_for(&c, be).n_devices == nd_dist_size())) {
        nd_error_saved failed;
        nd_error_save(&failed);
        nd_status st2 = choose_rank_transport(st == ND_OK ? be : NULL, &rank_link, rank_how, sizeof rank_how);
        if (st != ND_OK) nd_error_restore(&failed);
        else st = st2;
    }
    /* ND_TRACE: a backend that runs whole plans writes its own (device
     * times); for the others the executor writes each step's host times. */
    FILE *trace = NULL;
    if (st == ND_OK && c.trace && !be->run_plan && !(trace = nd_trace_open(c.trace)))
        st = nd_error_set(ND_ERR_IO, "nd_init: cannot open ND_TRACE file '%s' for writing (%s)", c.trace,
                          strerror(errno));
    if (st != ND_OK) {
        if (be) be->destroy(be);
        return st;
    }
    nd_plan_cache *cache = nd_plan_cache_new();
    if (!cache) {
        nd_trace_close(trace);
        be->destroy(be);
        return nd_error_set(ND_ERR_OOM, "nd_init: out of host memory for the plan cache");
    }

    nd_rt.cfg = c;
    nd_rt.backend = be;
    {
        int64_t v = 1;
        int set = 0;
        (void)nd_env_int64(ND_ENV_FUSED_GATHER, &v, &set); /* validated by nd_env_check */
        nd_rt.fused_gather = be->kernel_gathers && (!set || v != 0);
    }
    nd_graph_init(&nd_rt.graph);
    nd_graph_init(&nd_rt.graph_spare);
    memset(&nd_rt.stats, 0, sizeof nd_rt.stats);
    memset(&nd_rt.sched, 0, sizeof nd_rt.sched);
    nd_rt.sched.backend = be;
    nd_rt.sched.fusion = c.fusion == 1;
    nd_rt.sched.dump_dot_dir = c.dump_dot;
    nd_rt.sched.dump_dot_plan = c.dump_dot_plan == 1;
    nd_rt.sched.trace = trace;
    nd_rt.sched.cache = cache;
    nd_rt.sched.stats = &nd_rt.stats;
    nd_rt.sched.flush_index = 0;
    nd_rt.sched.chunk_bytes = chunk_bytes_for(be, &c);
    nd_rt.sched.split = split_config_for(&c, be);
    nd_rt.sched.ranks = nd_dist_size() > 1 && nd_rt.sched.split.n_devices == nd_dist_size() ? nd_dist_size() : 1;
    nd_rt.sched.rank = nd_rt.sched.ranks > 1 ? nd_dist_rank() : 0;
    if (nd_dist_size() > 1 && nd_rt.sched.ranks == 1)
        nd_logf(1, "nd_init: MPI rank %d of %d on the %s backend, which drives several devices: this rank "
                "computes the whole program", (int)nd_dist_rank(), (int)nd_dist_size(), be->name);
    nd_rt.sched.check_spmd = env_flag(ND_ENV_CHECK_SPMD);
    nd_rt.sched.check_plans = env_flag(ND_ENV_CHECK_PLANS);
    nd_rt.sched.rank_staging = env_flag(ND_ENV_RANK_STAGING);
    nd_rt.sched.rank_link = rank_link && nd_rt.sched.ranks > 1;
    /* GPU ranks send over NCCL, or from host buffers: each transfer then
     * costs a copy out of the GPU and one into the other
     * (docs/internals.md "Several processes"). */
    if (nd_rt.sched.ranks > 1)
        nd_logf(2, "nd_init: MPI rank %d of %d is device %d of the split on the %s backend; bytes between ranks "
                "go %s", (int)nd_dist_rank(), (int)nd_dist_size(), (int)nd_dist_rank(), be->name,
                be->memory == ND_MEMORY_HOST && nd_rt.sched.rank_staging && !nd_rt.sched.rank_link
                    ? "through host buffers (ND_RANK_STAGING=1)" : rank_how);
    /* A backend that runs whole plans times its own steps (device events). */
    nd_rt.sched.profile = c.profile == 1 && !be->run_plan ? nd_profile_new() : NULL;
    nd_rt.rng_seed = 0;
    nd_rt.rng_stream = 0;
    nd_rt.buffer_pool.max = nd_rt.array_pool.max = ND_RECYCLE_MAX;
    nd_rt.array_pool.delay_on = 1; /* freed handles wait: a second nd_free is caught */
    nd_rt.body_ring.delay_on = 1;  /* max 0: a body leaving the ring goes to free() */
    nd_body_set_ring(&nd_rt.body_ring);
    nd_buffer_memory_hooks hooks = {release_memory, release_twin_memory, release_piece_memory, NULL,
                                    &nd_rt.buffer_pool, &nd_rt.array_pool};
    nd_buffer_set_memory_hooks(&hooks);
    nd_rt.initialised = 1;
    early_flush_rearm();
    if (!nd_rt.atexit_registered) {
        nd_rt.atexit_registered = 1;
        atexit(at_exit);
    }
    /* ND_EXECUTOR_THREAD=0 keeps every flush on the caller's thread. */
    int64_t v;
    int set;
    if (nd_env_int64(ND_ENV_EXECUTOR_THREAD, &v, &set) != 0) v = 1, set = 1; /* checked */
    /* Under mpirun the worker thread makes the MPI calls: only where MPI
     * grants calls from any thread. */
    nd_rt.worker = (!set || v) && nd_dist_any_thread() ? nd_flush_worker_start(&nd_rt.sched) : NULL;
    nd_rt.scope_replay = c.scope_replay == 1; /* frontend/scope_replay.h */
    nd_rt.body_loops = c.body_loops == 1;     /* graph/graph.h, nd_graph_merge_loop */
    nd_logf(2, "started: backend %s, fusion %s, max_pending %lld", be->name,
            c.fusion == 1 ? "on" : "off", (long long)c.max_pending);
    return ND_OK;
}

nd_status nd_runtime_start(void) { return nd_init(NULL); }

nd_status nd_runtime_drain(void) { return nd_flush_worker_drain(nd_rt.worker); }
void nd_runtime_wait(void) { nd_flush_worker_wait(nd_rt.worker); }

/* Plans the pending graph here and runs it on the executor thread, or here
 * when the caller is about to wait anyway (nd_sync: a hand-off would only
 * add two thread wake-ups, ~20 us, to its latency). The flush before must
 * have run: planning reads where buffers' values live. Returns planning
 * errors and the previous flush's; the error of a flush handed off
 * surfaces at the next drain. */
static nd_status run_here(const nd_buffer *read) {
    if (read) return nd_scheduler_run_read(&nd_rt.sched, &nd_rt.graph, &nd_rt.graph_spare, read);
    return nd_scheduler_run(&nd_rt.sched, &nd_rt.graph);
}

/* read: the flush of a read of that buffer (only what it needs), else of
 * everything pending. */
static nd_status run_pending_on(int hand_off, const nd_buffer *read) {
    if (__builtin_expect(nd_rt.tracing, 0)) return nd_fe_trace_refuse_flush();
    if (nd_rt.graph.n_nodes == 0) return ND_OK;
    if (!nd_rt.worker) return run_here(read);
    const int timed = nd_log_enabled(3);
    const double t0 = timed ? nd_log_clock_us() : 0;
    const uint32_t nodes = nd_rt.graph.n_nodes;
    nd_status before = nd_runtime_drain();
    const double t1 = timed ? nd_log_clock_us() : 0;
    if (!hand_off) {
        nd_status st = run_here(read);
        if (timed)
            nd_logf(3, "flush of %u nodes here: waited %.1f us for the last, planned and launched in %.1f us",
                    nodes, t1 - t0, nd_log_clock_us() - t1);
        return before != ND_OK ? before : st;
    }
    nd_flush_job job;
    nd_status st = nd_scheduler_submit(&nd_rt.sched, &nd_rt.graph, &job);
    if (timed)
        nd_logf(3, "flush of %u nodes handed off: waited %.1f us for the last, planned in %.1f us", nodes,
                t1 - t0, nd_log_clock_us() - t1);
    /* A flush with nothing to run (every value dead) only releases its
     * buffers: here, where they were allocated, is cheaper than a thread
     * hand-off (and frees into this thread's malloc arena). */
    if (st == ND_OK && job.plan && job.plan->n_steps == 0) {
        st = nd_scheduler_execute(&nd_rt.sched, &job);
        nd_scheduler_finish(&nd_rt.sched, &job);
    } else if (st == ND_OK && job.plan) {
        st = nd_flush_worker_post(nd_rt.worker, &job);
    }
    return before != ND_OK ? before : st;
}

static nd_status run_pending(void) { return run_pending_on(1, NULL); }

void nd_shutdown(void) {
    ND_API_GUARD();
    if (!nd_rt.initialised) return;
    run_pending_on(0, NULL);
    /* ND_CHECK_SPMD under mpirun: a rank still waiting to compare a plan
     * learns that this one has finished (executor_ranks.h). */
    if (nd_rt.sched.ranks > 1 && nd_rt.sched.check_spmd)
        nd_rank_check_finish(nd_rt.sched.plans_checked, &nd_rt.sched.rank_finished);
    nd_fe_interop_shutdown(); /* open nd_data accesses end */
    nd_flush_worker_stop(nd_rt.worker);
    nd_rt.worker = NULL;
    nd_rt.backend->synchronize(nd_rt.backend);
    /* This thread's scoped handles die with the runtime; other threads'
     * become handles that outlived it (below), until their scopes close. */
    nd_replay_shutdown();
    nd_scope_shutdown();
    nd_report_live_handles();
    nd_array_unlist_all();
    nd_graph_destroy(&nd_rt.graph);
    nd_graph_destroy(&nd_rt.graph_spare);
    nd_runtime_forget_weak_buffers();
    /* Handles that outlive the runtime (also in other threads' scopes) keep
     * their descriptors but not their memory: a loop of (make, shutdown,
     * free) must not grow. Before the scheduler's pool of temporaries goes
     * (twins return there) and the backend (which releases the memory). */
    int64_t survivors = nd_buffer_release_all();
    if (survivors > 0)
        nd_logf(2, "nd_shutdown: released the memory of %lld buffers that handles still reach "
                "(those handles only nd_free now)", (long long)survivors);
    nd_scheduler_release(&nd_rt.sched);
    nd_plan_cache_free(nd_rt.sched.cache);
    if (nd_rt.sched.profile) {
        char how[96] = "";
        double bw = nd_host_copy_bandwidth(how, sizeof how);
        nd_profile_set_copy_bandwidth(nd_rt.sched.profile, bw, how);
        nd_profile_print(nd_rt.sched.profile, stderr, nd_rt.backend->name);
        nd_profile_free(nd_rt.sched.profile);
    }
    nd_trace_close(nd_rt.sched.trace);
    nd_rt.backend->destroy(nd_rt.backend);
    /* Every array, temporary and backend buffer is gone now: bytes still
     * counted in use were lost on some path (a device allocation that no
     * buffer owns keeps its pool's memory from other processes). */
    for (int m = 0; m < ND_MAX_MEMORIES; m++)
        if (nd_mem_in_use(m) > 0)
            nd_logf(1, "nd_shutdown: %llu bytes of memory %d (%s) were never given back (a leak in nd)",
                    (unsigned long long)nd_mem_in_use(m), m, m == ND_MEMORY_HOST ? "host" : "a device");
    /* Handles that outlive the runtime are freed plainly (max is 0 now). */
    nd_freelist_drain(&nd_rt.buffer_pool);
    nd_freelist_drain(&nd_rt.array_pool);
    /* After the graphs (their pending calls' references went there); a
     * body the program frees from now on goes to free() at once. */
    nd_body_set_ring(NULL);
    nd_freelist_drain(&nd_rt.body_ring);
    nd_fault_report_at_shutdown();
    int registered = nd_rt.atexit_registered;
    memset(&nd_rt, 0, sizeof nd_rt);
    nd_rt.atexit_registered = registered;
}

/* Keeps the first error of a flush nd started on its own for the next
 * nd_sync/nd_flush (the call it ran inside, nd_add say, succeeds). */
static void defer_error(nd_status st) {
    if (st == ND_OK || nd_rt.deferred_status != ND_OK) return;
    nd_rt.deferred_status = st;
    snprintf(nd_rt.deferred_message, sizeof nd_rt.deferred_message, "%s", nd_last_error());
}

/* st, or else the deferred error (set again as this thread's error, named
 * by the public call that returns it); the deferred error is consumed. */
static nd_status with_deferred(nd_status st) {
    nd_status d = nd_rt.deferred_status;
    nd_rt.deferred_status = ND_OK;
    if (st != ND_OK || d == ND_OK) return st;
    return nd_error_set(d, "%s", nd_rt.deferred_message);
}

nd_status nd_flush(void) {
    ND_API_GUARD();
    nd_status st = nd_runtime_ensure();
    if (st != ND_OK) return st;
    return with_deferred(run_pending());
}

int nd_runtime_memory(void) { return nd_rt.backend ? nd_rt.backend->memory : -1; }

int nd_runtime_cholesky_transposed(void) { return nd_rt.backend && nd_rt.backend->cholesky_transposed; }

nd_status nd_sync(void) {
    ND_API_GUARD();
    nd_status st = nd_runtime_ensure();
    if (st != ND_OK) return st;
    st = nd_runtime_sync();
    nd_status home = nd_fe_interop_after_sync(); /* wrapped host memory gets its values */
    return with_deferred(st != ND_OK ? st : home);
}

/* Runs what is pending here; a job handed off before is enqueued after. */
static nd_status submit(void) {
    nd_status st = run_pending_on(0, NULL);
    nd_status st1 = nd_runtime_drain();
    return st != ND_OK ? st : st1;
}

nd_status nd_runtime_submit(void) { return with_deferred(submit()); }
void nd_runtime_submit_quietly(void) { defer_error(submit()); }

static nd_status sync_pending(const nd_buffer *read) {
    nd_status st = run_pending_on(0, read);
    early_flush_rearm();
    const double t0 = nd_log_enabled(3) ? nd_log_clock_us() : 0;
    nd_status st1 = nd_runtime_drain();
    nd_status st2 = nd_rt.backend->synchronize(nd_rt.backend);
    if (t0 > 0) nd_logf(3, "nd_sync: waited %.1f us for the device", nd_log_clock_us() - t0);
    nd_flush_worker_keep_polling(nd_rt.worker); /* the next loop's first flush comes soon */
    return st != ND_OK ? st : st1 != ND_OK ? st1 : st2;
}

nd_status nd_runtime_sync(void) { return sync_pending(NULL); }
nd_status nd_runtime_sync_read(nd_buffer *b) { return sync_pending(b); }

/* Whether the pending graph holds an odd number of stores to the buffer
 * `store` writes (its pending writers, not the whole graph: this runs on
 * the recording path). In-place sweeps over one array (a stencil) run as a
 * chain alternating between the array and one temporary
 * (scheduler/store_chains.c); a chain of odd length starts with a full copy
 * of the array, one of even length copies only what its region leaves
 * out. So an early flush waits for the next store to make it even (at most
 * until twice its count). */
static int odd_store_chain(const nd_node *store) {
    const nd_buffer *b = store->out;
    uint32_t count = 0;
    for (uint32_t k = 0; k < b->n_writers; k++) count += nd_rt.graph.nodes[b->writers[k]]->kind == ND_NODE_STORE;
    return count & 1u;
}

void nd_runtime_after_record_check(void) {
    if (nd_rt.tracing) return; /* the trace's nodes are taken back at its end */
    int64_t n = (int64_t)nd_rt.graph.n_nodes;
    if (n >= nd_rt.cfg.max_pending) {
        defer_error(run_pending());
        return;
    }
    if (!nd_rt.early_flush_at) return;
    /* a loop call's rounds are work for the device as nodes are: an early
     * flush starts them while the loop records on */
    n += nd_rt.graph.joined;
    const nd_buffer *out = nd_rt.graph.nodes[nd_rt.graph.n_nodes - 1]->out;
    if (out && out->nbytes > ND_EARLY_FLUSH_MAX_BYTES) {
        nd_rt.early_flush_at = 0; /* large arrays: none until the next nd_sync */
        return;
    }
    if (n >= nd_rt.early_flush_at && !nd_rt.early_flush_due) {
        /* Between two statements: a flush in the middle of one writes its
         * partial values to memory (a 1000x1000 stencil sweep cut after
         * its adds cost three extra kernels). So after a store, or, in code
         * that stores nothing, a quarter further on; and not at once but
         * before the next node is recorded (nd_runtime_before_record): by
         * then the statement's temporaries are freed (nd_scope_end, nd_free),
         * where a flush right at the store had to write every one still
         * held to memory (five 8 MB arrays per early flush of the
         * 1000x1000 stencil, each allocated on the executor thread). */
        const nd_node *last = nd_rt.graph.nodes[nd_rt.graph.n_nodes - 1];
        int64_t unstored_at = nd_rt.early_flush_at + nd_rt.early_flush_at / 4;
        if (unstored_at < ND_EARLY_FLUSH_UNSTORED_MIN) unstored_at = ND_EARLY_FLUSH_UNSTORED_MIN;
        if (last->kind != ND_NODE_STORE && n < unstored_at) return;
        if (last->kind == ND_NODE_STORE && odd_store_chain(last) && n < nd_rt.early_flush_at * 2) return;
        nd_rt.early_flush_due = 1;
    }
}

void nd_runtime_after_join(void) {
    if (!nd_rt.early_flush_at || nd_rt.graph.n_nodes == 0) return;
    nd_runtime_after_record_check();
    if (nd_rt.early_flush_due) nd_runtime_early_flush();
}

void nd_runtime_early_flush(void) {
    if (nd_rt.tracing) return; /* due still: after the trace */
    nd_rt.early_flush_due = 0;
    int64_t n = (int64_t)nd_rt.graph.n_nodes + nd_rt.graph.joined;
    defer_error(run_pending());
    nd_rt.early_flush_at = n * 2 < nd_rt.cfg.max_pending ? n * 2 : 0;
    /* Doubling without end left the last flush, the one nd_sync waits for,
     * with about half of a long loop's nodes (1970 of small_ops' 4000). */
    if (nd_rt.early_flush_at > ND_EARLY_FLUSH_MAX_NODES) nd_rt.early_flush_at = ND_EARLY_FLUSH_MAX_NODES;
}


nd_status nd_runtime_alloc(int memory, size_t bytes, void **out) {
    return nd_rt.backend->alloc(nd_rt.backend, memory, bytes, out);
}

nd_status nd_runtime_prepare_ufunc(const char *fn, const nd_ufunc_loop *l) {
    if (!nd_rt.backend->prepare_ufunc) return ND_OK;
    return nd_rt.backend->prepare_ufunc(nd_rt.backend, fn, l);
}

void nd_runtime_backend_cached(nd_backend_cached *out) {
    memset(out, 0, sizeof *out);
    if (nd_rt.backend->cached) nd_rt.backend->cached(nd_rt.backend, out);
}

void nd_runtime_backend_trim(void) {
    if (nd_rt.backend->trim) nd_rt.backend->trim(nd_rt.backend);
}

const char *nd_backend_name(void) {
    ND_API_GUARD();
    if (nd_runtime_ensure() != ND_OK) return "none";
    return nd_rt.backend->name;
}

/* What nd_get_stats fills: the counters, from the first after struct_size. */
#define STATS_FIRST offsetof(nd_stats, flushes)

static void get_stats(nd_stats *out, size_t out_size) {
    if (!out) {
        nd_error_null_input("nd_get_stats", "out");
        return;
    }
    if (out_size < STATS_FIRST) {
        nd_error_set(ND_ERR_ARG, "nd_get_stats: an nd_stats of %zu bytes cannot hold its struct_size (%zu bytes "
                     "at least; pass sizeof(nd_stats))", out_size, STATS_FIRST);
        return;
    }
    nd_stats s;
    if (nd_runtime_ensure() != ND_OK) {
        memset(&s, 0, sizeof s);
    } else {
        nd_runtime_wait();
        s = nd_rt.stats;
        s.kernels_compiled = nd_compile_count();
        nd_runtime_memory_stats(&s);
        s.handles_alive = (uint64_t)nd_array_live_count();
    }
    size_t known = out_size < sizeof s ? out_size : sizeof s;
    s.struct_size = known;
    memcpy(out, &s, known);
    /* A program built against a newer nd.h: its fields this library does
     * not have read as zero. */
    if (out_size > known) memset((char *)out + known, 0, out_size - known);
}

#undef nd_get_stats
void nd_get_stats(nd_stats *out) {
    ND_API_GUARD();
    get_stats(out, sizeof *out);
}

void nd_get_stats_sized(nd_stats *out, size_t out_size) {
    ND_API_GUARD();
    get_stats(out, out_size);
}

#if defined(ND_PROJECT_VERSION_MAJOR) &&                                                       \
    (ND_PROJECT_VERSION_MAJOR != ND_VERSION_MAJOR || ND_PROJECT_VERSION_MINOR != ND_VERSION_MINOR || \
     ND_PROJECT_VERSION_PATCH != ND_VERSION_PATCH)
#error "include/nd/types.h's ND_VERSION_* differ from meson.build's project version: update both"
#endif

const char *nd_version(void) {
    ND_API_UNLOCKED();
    return ND_VERSION_STRING;
}

int nd_version_number(void) {
    ND_API_UNLOCKED();
    return ND_VERSION_NUMBER;
}

nd_status nd_graph_dump_dot(const char *path) {
    ND_API_GUARD();
    if (!path)
        return nd_error_set(ND_ERR_ARG, "nd_graph_dump_dot: path is NULL (pass a file name such "
                            "as \"graph.dot\")");
    nd_status st = nd_runtime_ensure();
    if (st != ND_OK) return st;
    nd_runtime_wait(); /* planning reads where values live */
    return nd_scheduler_dump_dot(&nd_rt.sched, &nd_rt.graph, path);
}
