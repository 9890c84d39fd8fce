/*
 * nd/runtime.h — Starting and stopping the runtime, running pending work, errors, and
 * the lifetime of handles (references and scopes).
 * Part of nd.h: include <nd.h>, not this file.
 */
#ifndef ND_RUNTIME_H
#define ND_RUNTIME_H

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Starts the runtime. Optional: the first call of any other function starts it
 * with defaults. NULL = defaults + ND_* environment variables. Calling it
 * again after nd_shutdown restarts. Threads racing to start it (nd_init or
 * any first call) start it once; a losing nd_init gets ND_ERR_STATE.
 * Every ND_* variable follows one rule:
 * unset or empty means the default; any other value must be valid, or
 * nd_init fails with ND_ERR_ARG naming the variable, its value and the
 * accepted values, whichever backend starts and even where nd_config sets
 * the field (a variable of the other backend, such as ND_PINNED_CACHE on
 * the CPU, is checked too). A successful nd_init leaves no error behind.
 * Errors: ND_ERR_ARG for bad settings (an nd_config field or an ND_*
 * variable; with ND_BACKEND=auto a bad ND_DEVICES fails rather than fall
 * back to the CPU), ND_ERR_BACKEND/ND_ERR_UNSUPPORTED when the requested
 * backend is missing, ND_ERR_STATE if already running. Under mpirun every
 * rank calls it (the ranks agree there on how bytes travel between them,
 * ND_RANK_TRANSPORT, ND_RANK_LINK): ND_ERR_UNSUPPORTED on every rank where
 * ND_RANK_TRANSPORT=nccl cannot be, or ND_RANK_LINK differs between CPU
 * ranks, saying why. */
ND_API nd_status nd_init(const nd_config *cfg);
/* Waits for pending work and frees every resource: the calling thread's
 * scopes are closed (their handles released), and the memory of every array
 * still alive, in any thread, is released. A handle that outlives the
 * shutdown (also one in another thread's open scope) keeps only its
 * small descriptor: nd_free (and nd_retain) still work on it and nd_free
 * releases it, its shape and dtype can still be read, and every other
 * function rejects it with ND_ERR_STATE ("... was created before
 * nd_shutdown ..."), also after nd_init restarts the runtime. So a program
 * that frees its handles after nd_shutdown does not leak. Under mpirun with
 * GPU ranks over NCCL every rank must call it (it destroys the NCCL
 * communicator, which waits for the other ranks); the exit handler nd
 * installs calls it on every rank. */
ND_API void nd_shutdown(void);
/* Runs everything pending and waits for it. Returns the first error of the
 * flushes since the last nd_sync (out of memory, a failed compile or backend
 * call); the arrays it kept from being computed carry it and report it when
 * read, every other array has its value (see "Faults" above). */
ND_API nd_status nd_sync(void);
/* Submits everything pending without waiting (the CPU backend runs it). */
ND_API nd_status nd_flush(void);
/* The code and message of the last failure on this thread (sticky). */
ND_API nd_status nd_last_status(void);
ND_API const char *nd_last_error(void);
ND_API void nd_clear_error(void);

/* Called with every failure as it happens: the status, the message (what
 * nd_last_error() returns then) and, for a program built with
 * ND_DEBUG_CALLSITES, the call site of the failing call (file as the
 * compiler spelled __FILE__, and line; NULL and 0 otherwise).
 * Once per failing public call: the handler runs as that call ends, just
 * before it returns its error, on the thread that made the call, while
 * nd's lock is held (other threads' calls wait for it). It may call nd
 * functions (they run as part of the failing call; their failures are not
 * reported again). A failure nd notices on its own threads (a flush on the
 * executor thread) is reported by the user call that collects it (nd_sync,
 * nd_flush, a read, or the call whose flush had to wait for it), and an
 * error that an early flush inside a call such as nd_add left is reported
 * by that call and again by the nd_sync that returns it. A NULL input that
 * only passes an earlier error on reports nothing. One handler per
 * process; NULL removes it. ND_LOG >= 1 prints each of the same failures
 * to stderr ("nd error: ND_ERR_SHAPE: nd_add (heat.c:42): ..."). */
typedef void (*nd_error_handler)(nd_status status, const char *message, const char *file, int line,
                                 void *ctx);
ND_API void nd_set_error_handler(nd_error_handler fn, void *ctx);
/* Records the call site of the public call that follows on this thread:
 * nd/callsites.h calls it (see ND_DEBUG_CALLSITES in nd.h); programs do
 * not call it themselves. */
ND_API void nd_callsite_(const char *file, int line);
/* Name of the backend in use: "cpu" or "cuda". */
ND_API const char *nd_backend_name(void);
/* Copies the counters into *out (see nd_stats). A macro that passes the
 * caller's sizeof *out to nd_get_stats_sized; the function nd_get_stats
 * (for programs that call it through a pointer, or were compiled before the
 * macro) fills an nd_stats of this version's size. Errors: NULL out
 * (ND_ERR_ARG); a runtime that cannot start leaves *out zeroed. */
ND_API void nd_get_stats(nd_stats *out);
/* Fills the first out_size bytes of *out (at most sizeof(nd_stats); fields
 * past what this library knows are zeroed), writes nothing after them, and
 * sets out->struct_size to the bytes filled with counters. out_size must
 * hold struct_size itself, else ND_ERR_ARG and nothing is written. */
ND_API void nd_get_stats_sized(nd_stats *out, size_t out_size);
#define nd_get_stats(out) nd_get_stats_sized((out), sizeof *(out))
/* Gives the memory nd keeps for reuse back to the system, like CuPy's
 * free_all_blocks: the pooled temporaries, the CPU backend's block cache,
 * the CUDA backend's device memory pool and pinned host blocks (nd_stats'
 * bytes_cached and bytes_temporaries go to 0). Waits for the flush in
 * flight; arrays and their values are untouched. A later allocation is
 * slower (fresh pages, cudaMallocHost). Errors: none (a runtime that cannot
 * start has nothing cached). */
ND_API void nd_trim(void);
/* Starts nd_stats' bytes_peak over: each memory's peak becomes its bytes
 * in use now (for the peak of one phase of a program). */
ND_API void nd_reset_peak(void);
/* The library's version, "0.1.0" (ND_VERSION_STRING of the nd.h it was
 * built with), and as ND_VERSION_NUMBER computes it (0.1.0 is 100). A
 * program compares them with the header's macros to detect running with
 * another build of the shared library. Never fails; need no nd_init. */
ND_API const char *nd_version(void);
ND_API int nd_version_number(void);
ND_API const char *nd_dtype_name(nd_dtype t);   /* "float32"; "?" if invalid */
ND_API size_t nd_dtype_size(nd_dtype t);        /* bytes; 0 if invalid */
ND_API const char *nd_status_name(nd_status s); /* "ND_ERR_SHAPE" */

/* +1 reference; returns a (NULL for NULL). A freed handle: NULL and
 * ND_ERR_ARG. */
ND_API nd_array *nd_retain(nd_array *a);
/* -1 reference; the last one frees the handle (its array's memory goes when
 * no pending work needs it). NULL is a no-op. Freeing a handle whose last
 * reference is already gone (a second nd_free, or one after the nd_scope_end
 * that released it) is ND_ERR_ARG naming nd_free, and so is passing it to
 * any function: a freed handle is marked, and its memory is not reused
 * before 256 more handles were freed. After that it may belong to a new
 * array, and a stale pointer to it can no longer be told apart from that
 * array's handle: the check catches the common mistakes, not every one. */
ND_API void nd_free(nd_array *a);
/* Handles made after nd_scope_begin are released at the matching
 * nd_scope_end, unless nd_keep moved them to the enclosing scope (or, at the
 * outermost scope, to the caller). Scopes nest and are per thread: each
 * thread has its own (see "Threads"). nd_scope_end without an open scope on
 * this thread is ND_ERR_STATE. nd_keep of a handle not in this thread's
 * innermost scope returns it unchanged. */
ND_API void nd_scope_begin(void);
ND_API void nd_scope_end(void);
ND_API nd_array *nd_keep(nd_array *a);

#ifdef __cplusplus
}
#endif
#endif /* ND_RUNTIME_H */
