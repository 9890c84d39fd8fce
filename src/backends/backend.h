/* The one interface every backend implements. A backend never sees the
 * graph: it allocates memory, moves bytes, and runs plan steps (kernel IR,
 * library calls). Selected by ND_BACKEND; the CPU backend is always built. */
#ifndef ND_BACKENDS_BACKEND_H
#define ND_BACKENDS_BACKEND_H

#include "backends/plan.h"
#include "common/memory.h"
#include "common/ufunc_loop.h"

typedef struct nd_backend nd_backend;

/* What a backend keeps for reuse after nd freed it (nd_stats). */
typedef struct {
    uint64_t per_memory[ND_MAX_MEMORIES];
    uint64_t block_cache;  /* blocks of arrays (CPU host cache, CUDA device pool) */
    uint64_t pinned_cache; /* pinned host blocks (CUDA) */
} nd_backend_cached;

typedef struct {
    int num_threads;     /* CPU workers (0 = cores) */
    const char *devices; /* GPU ordinals */
    const char *cache_dir;
    int matmul_tf32;
    int cuda_graphs;
    int64_t device_memory_limit;
    int profile;
    const char *trace; /* file for a per-step timeline, or NULL */
    /* Under mpirun, this rank's place among its machine's ranks (0
     * otherwise): with no devices list, a GPU backend drives GPU
     * local_rank modulo the GPUs it sees, one rank per GPU (two ranks
     * share a GPU where there are fewer GPUs than ranks). */
    int local_rank;
    /* The program's stream (nd_config.cuda_stream), or NULL: with no
     * devices list a GPU backend runs on that stream's device, which the
     * program chose (before local_rank's default). */
    void *app_stream;
    /* Under mpirun with ND_RANK_LINK=1 (NULL otherwise): MPI's transfers
     * (the runtime's, dist.h), over which the CPU backend's test link
     * carries its bytes (cpu/cpu_link.c), so that CPU ranks take the
     * executor's link path. Other backends ignore it. */
    const struct nd_rank_wire *rank_test_wire;
} nd_backend_config;

/* Bytes between MPI ranks as src/dist carries them (blocking; both ends
 * call with the same size): what the runtime hands the CPU test link,
 * since a backend does not include dist.h. */
typedef struct nd_rank_wire {
    nd_status (*send)(const void *buf, size_t bytes, int32_t to);
    nd_status (*recv)(void *buf, size_t bytes, int32_t from);
    nd_status (*bcast)(void *buf, size_t bytes, int32_t root);
} nd_rank_wire;

/* rank_xfer's op (below), with ND_RANK_LINK_SIDE or'ed in for a transfer
 * on the link's own queue. */
enum { ND_RANK_LINK_SEND, ND_RANK_LINK_RECV, ND_RANK_LINK_BCAST };
enum { ND_RANK_LINK_SIDE = 0x100 };
/* The two queues of a rank under mpirun with the link (rank_lane_*): the
 * one its steps run on, and the link's own, which carries the halo
 * transfers beside them. */
enum { ND_RANK_LANE_STEPS, ND_RANK_LANE_LINK };
/* The size of a link's id (rank_link_id, rank_link_open): NCCL's
 * NCCL_UNIQUE_ID_BYTES. */
#define ND_RANK_LINK_ID_BYTES 128

struct nd_backend {
    const char *name;
    int32_t memory; /* memory space it computes in (ND_MEMORY_HOST for cpu) */
    /* Its kernels run ND_IR_GATHER (kernel_ir.h): the frontend records a
     * gather of up to ND_IR_GATHER_MAX_AXES index arrays as a fusable map,
     * else as ND_LIB_GATHER. */
    int kernel_gathers;
    /* Its LA_CHOLESKY writes L^T (zeros below the diagonal) instead of L
     * (common/lib_linalg.h): the frontend returns the transposed view. */
    int cholesky_transposed;
    /* Logical devices it drives (ND_DEVICES=0,1 or 0,0 on CUDA), when more
     * than one: the partition pass splits arrays over them, and the piece
     * of logical device d (a plan temporary with device = 1 + d) lives in
     * memory `memory + d` (alloc/release take it; d = 0 is `memory`
     * itself). 0 or 1: pieces live in the plan's memory (the CPU backend's
     * cpu:N memories are all host memory). */
    int32_t device_memories;
    void *impl;
    nd_status (*alloc)(nd_backend *be, int memory, size_t bytes, void **out);
    void (*release)(nd_backend *be, int memory, void *ptr, size_t bytes);
    /* Optional (several devices, scheduler/partition.c): memory for a
     * piece of an array split in row blocks, on logical device `device`
     * (0-based: its position in ND_DEVICES), for a plan computing in
     * `memory`; release_piece gives it back with the same arguments. A
     * piece outlives the flush (graph/buffer.h nd_buffer_pieces). Copies
     * between pieces (halo, scatter, gather steps: plan.h ND_PART_*) and the
     * kernels over them name the device in nd_step.device and the pieces'
     * plan slots in nd_plan_slot.device. NULL: alloc/release in `memory`
     * (every logical device shares the backend's memory). */
    nd_status (*alloc_piece)(nd_backend *be, int memory, int device, size_t bytes, void **out);
    void (*release_piece)(nd_backend *be, int memory, int device, void *ptr, size_t bytes);
    nd_status (*copy)(nd_backend *be, void *dst, int dst_memory, const void *src, int src_memory,
                      size_t bytes);
    /* Copies `bytes` between `mem`, in memory `memory` (the plan's or a
     * piece's), and the host buffer `host`: to_host, mem -> host, else
     * host -> mem. Returns when the copy is done and ordered after every
     * step enqueued before it, on whichever stream the steps run: a copy
     * out sees what the steps before it wrote, a copy in is seen by every
     * step after it, and `host` may be reused at once. Under mpirun, the
     * bytes that travel between ranks whose memory is not host memory go
     * through it (scheduler/executor_ranks.c: copy out, send; receive,
     * copy in). The CPU backend's is a memcpy (ND_RANK_STAGING=1 tests the
     * path on it). */
    nd_status (*stage)(nd_backend *be, void *host, void *mem, int memory, size_t bytes, int to_host);
    /* Under mpirun, the link between GPU ranks (CUDA built with NCCL:
     * cuda/rank_link.c; the CPU backend's test link under ND_RANK_LINK=1:
     * cpu/cpu_link.c; NULL elsewhere): bytes device to device, with no
     * host copy and no host wait (docs/internals.md "Several processes").
     * gpu_identity: a hash of the UUID of the GPU it computes on (0:
     * none), which the ranks compare to tell whether each has a GPU of
     * its own. rank_link_host: the link carries host memory too (the CPU
     * test link), so every transfer between ranks goes over it; else only
     * those between device memories do. rank_link_probe: ND_OK when the
     * link can be opened here (libnccl loads), else why not. rank_link_id:
     * on rank 0 only, the id every rank's rank_link_open takes (NCCL's
     * ncclUniqueId), in `bytes` (ND_RANK_LINK_ID_BYTES); the runtime
     * broadcasts it over MPI, so that one library (the backend's) makes
     * and uses it. rank_link_open: every rank at once, with rank 0's `id`;
     * ND_OK on every rank, or the link is not used (rank_link_close drops
     * what opened).
     * rank_xfer: `bytes` at `mem`, in device memory `memory`: sent to rank
     * `peer` (ND_RANK_LINK_SEND), received from it (RECV), or broadcast
     * from rank `peer` (BCAST); enqueued on the stream the steps run on,
     * so ordered after the step that wrote the bytes and before the one
     * that reads them. mem NULL takes part without memory: zeros sent,
     * the bytes received dropped (a failed step: the peers wait in it).
     * A rank_xfer that fails still takes part that way. The transfers of
     * every rank must come in one order (the plan's). rank_link_wait:
     * after a plan's transfers, until they are done (on both lanes); a
     * failed one (also one reported by the link later, a peer's) is its
     * error.
     * Lanes (optional; NULL: every transfer on the steps' stream): a
     * transfer whose op has ND_RANK_LINK_SIDE goes on the link's own queue
     * (ND_RANK_LANE_LINK), which runs beside the steps' (LANE_STEPS), so
     * that a halo exchange overlaps the kernels that do not need it
     * (scheduler/executor_ranks.h's nd_rank_lanes says which wait for
     * which). rank_lane_mark: mark `mark` (>= 0, a step's index; a later
     * mark of the same number replaces it) at the end of what `lane` has
     * queued; rank_lane_wait: what `lane` queues from now on waits for
     * mark `mark` of the other lane; rank_lane_join: each lane waits for
     * everything the other has queued. */
    uint64_t gpu_identity;
    int rank_link_host;
    nd_status (*rank_link_probe)(nd_backend *be);
    nd_status (*rank_link_id)(nd_backend *be, void *id, size_t bytes);
    nd_status (*rank_link_open)(nd_backend *be, const void *id, size_t id_bytes, int32_t ranks, int32_t rank);
    void (*rank_link_close)(nd_backend *be);
    nd_status (*rank_xfer)(nd_backend *be, int op, void *mem, int memory, size_t bytes, int32_t peer);
    nd_status (*rank_link_wait)(nd_backend *be);
    nd_status (*rank_lane_mark)(nd_backend *be, int lane, int32_t mark);
    nd_status (*rank_lane_wait)(nd_backend *be, int lane, int32_t mark);
    nd_status (*rank_lane_join)(nd_backend *be);
    /* slots[i]: base pointer of kernel slot i; params: the kernel's values.
     * A kernel that gathers also reads slots[k->n_slots]: its fail record
     * (kernel_ir.h's nd_ir_fail) in host memory, which a bad index fills
     * (the kernel still returns ND_OK), or NULL (a bad index is then the
     * kernel's ND_ERR_INDEX). */
    nd_status (*run_kernel)(nd_backend *be, const nd_kernel *k, void *const *slots,
                            const nd_scalar_bits *params);
    nd_status (*run_matmul)(nd_backend *be, const nd_matmul_desc *mm, void *const *plan_slots);
    /* A user kernel (plan.h's nd_user_desc) over plan_slots, with the
     * implementation for this backend; ND_ERR_UNSUPPORTED if it has none. */
    nd_status (*run_user)(nd_backend *be, const nd_user_desc *u, void *const *plan_slots);
    /* Optional: run a whole plan bound to memory (several streams, CUDA
     * Graph replay). NULL = the executor calls the step functions in order.
     * Returns once the work is enqueued. */
    nd_status (*run_plan)(nd_backend *be, nd_plan *plan, const nd_bound_plan *bound);
    /* With run_plan: after a run of a plan with kernels that gather, waits
     * for it and copies their fail records (one per such kernel step, in
     * step order: nd_plan_fail_records) into out, then clears them. The
     * one read back of such a plan, which otherwise runs whole, merged and
     * captured like any other. */
    nd_status (*plan_fails)(nd_backend *be, nd_plan *plan, nd_ir_fail *out);
    nd_status (*synchronize)(nd_backend *be);
    /* Optional: a named range around a flush for profilers (NVTX). */
    void (*range_push)(nd_backend *be, const char *name);
    void (*range_pop)(nd_backend *be);
    /* Optional: compile user loop l now (nd_ufunc_define, on the caller's
     * thread), so that its mistakes are reported there: ND_ERR_COMPILE with
     * the compiler's message. fn names the public call. NULL = nothing to
     * prepare. */
    nd_status (*prepare_ufunc)(nd_backend *be, const char *fn, const nd_ufunc_loop *l);
    /* Optional (CUDA; NULL elsewhere): the program's stream
     * (backends/cuda/app_stream.c). set_app_stream: from now on every
     * enqueueing entry point first makes the backend's stream wait for
     * what the program queued on `stream` so far (NULL detaches). The
     * other way, app_stream_wait makes the program's stream wait for
     * everything enqueued so far; ND_OK when none is set. Neither blocks
     * the host. */
    nd_status (*set_app_stream)(nd_backend *be, void *stream);
    nd_status (*app_stream_wait)(nd_backend *be);
    /* Optional: its use of GPU `device`: how many of its logical devices
     * run there (0: none; ND_DEVICES=0,0 gives 2 on GPU 0) and the device
     * bytes it holds there: allocated (in_use) and kept by its memory pool
     * (reserved). */
    void (*device_usage)(nd_backend *be, int device, int *logical, uint64_t *in_use, uint64_t *reserved);
    void (*destroy)(nd_backend *be);
    /* Optional: the bytes it keeps cached, and giving them back to the
     * system (nd_trim). Memory it hands out counts in common/mem_count.h. */
    void (*cached)(nd_backend *be, nd_backend_cached *out);
    void (*trim)(nd_backend *be);
};

/* The constructors (backends/registry.c lists them with their probes). */
nd_status nd_cpu_backend_create(const nd_backend_config *cfg, nd_backend **out);
/* ND_ERR_UNSUPPORTED when built without CUDA or no device is present. */
nd_status nd_cuda_backend_create(const nd_backend_config *cfg, nd_backend **out);
/* ND_OK when a CUDA device is present (and the backend built); else
 * ND_ERR_UNSUPPORTED with the reason. Creates nothing. */
nd_status nd_cuda_backend_supports(const nd_backend_config *cfg);

#endif
