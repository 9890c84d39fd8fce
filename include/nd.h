/*
 * nd.h — NumPy-style arrays for C, lazily recorded into a task graph and run
 * fused on the CPU or an NVIDIA GPU.
 *
 * Model
 *   Every operation records a node and returns at once; nothing is computed
 *   until nd_sync()/nd_flush() or a read (nd_to_host, nd_item). Then the
 *   scheduler fuses elementwise chains, views, casts, random draws and a
 *   trailing reduction or region store into generated kernels and runs them.
 *
 * Semantics follow NumPy 2: row-major arrays, broadcasting, NEP 50 type
 * promotion (a weak scalar from nd_scalar/nd_scalar_int does not widen an
 * array's dtype), views share memory, writes into a view are visible through
 * its base.
 *
 * Errors
 *   Functions returning nd_array* return NULL on failure; functions returning
 *   nd_status return the code. Either way nd_last_status()/nd_last_error()
 *   hold the code and a message naming the function, the values and the fix.
 *   A NULL input makes an op return NULL without overwriting the first error,
 *   so a chain of calls is checked once at its end. The error stays until
 *   nd_clear_error(). Device errors surface from nd_sync; arrays whose values
 *   could not be produced report the error when read.
 *
 * Faults (out of memory, a failed compile, a failed backend call)
 *   never give a wrong value. A flush that fails marks exactly the arrays it
 *   could not compute, and those computed from them: reading one (nd_to_host,
 *   nd_item) fails with a message naming the reading function, the array
 *   (shape, dtype, size, the function that computed it), the cause and what
 *   to do. Steps of the flush the failure does not reach still run, so an
 *   unrelated array updated in place (x += 1) gets its new value; an array
 *   the flush does not write keeps its value. A failed array stays failed,
 *   and so does anything computed from it, until a write of the whole array
 *   (nd_fill, nd_assign into all of it) gives it a value again; a write into
 *   part of it leaves it failed. The next flush works as usual. A flush nd
 *   starts on its own (an early flush, or ND_MAX_PENDING reached) runs
 *   inside whichever call recorded the node that triggered it; that call
 *   succeeds, and the flush's error is returned by the next nd_sync or
 *   nd_flush (and set as the thread's last error at once).
 *
 * Threads
 *   Any number of threads may call any function at any time. Calls run as if
 *   one after another in some order: one process-wide lock is held for the
 *   whole of each call, so a long call (nd_sync waiting for the device, a
 *   large nd_to_host) makes the other threads' calls wait. (While only one
 *   thread has called nd, the lock costs it no atomic instruction; the
 *   first call from a second thread makes one membarrier system call, on
 *   Linux, and from then on every call takes the lock atomically.) Threads may share
 *   arrays: reading one array from several threads is fine; writes to one
 *   array from several threads (nd_assign, nd_fill) apply in the order the
 *   calls took the lock, and the random draws in the order their calls did
 *   (nd_random_*: a value depends on that order). Per thread: the last error
 *   (nd_last_status/nd_last_error; one thread's error is never seen by
 *   another) and scopes (nd_scope_begin/end/nd_keep act on the calling
 *   thread's scopes only; a handle made in another thread's scope belongs to
 *   that scope). A thread that exits with scopes open has them closed as by
 *   nd_scope_end. nd_shutdown from one thread ends the runtime for all: it
 *   releases the memory of every array, and every handle made before it,
 *   in any thread, is then rejected with ND_ERR_STATE (see nd_shutdown);
 *   it closes the calling thread's scopes, while another thread's scopes
 *   stay open (that thread may be using their handles at that moment) and
 *   release those dead handles at that thread's nd_scope_end or exit. nd's
 *   own threads (the executor, CPU workers) never call back into user code.
 *   Do not call nd from a child after fork() while another thread of the
 *   parent was inside nd.
 *
 * Messages name the function the user called: a failure raised deep inside
 * (a backend's "out of host memory allocating N bytes", a missing CUDA
 * device) is reported as "nd_sync: cpu backend: ...", under the outermost nd
 * function the thread was in.
 *
 * Call sites
 *   Built with -DND_DEBUG_CALLSITES (defined before nd.h is included), a
 *   program passes __FILE__ and __LINE__ with every call (nd/callsites.h
 *   makes each public function a macro that does), and messages say which
 *   call failed: "nd_add (heat.c:42): shapes (3,4) and (5,) ...". Values
 *   remember the call that recorded them, so a failure found later names
 *   it too: "nd_to_host (heat.c:60): array (3,4) float32 of 48 bytes
 *   computed by nd_add (heat.c:42) could not be computed: ...", and so does
 *   nd_shutdown's report of handles still alive (ND_LOG >= 1). Off (the
 *   default), nothing changes and nothing is paid. Files compiled without
 *   the macro call the same library; their calls simply carry no site.
 *   The macros take the functions' names: take the address of a function
 *   as &nd_add or (nd_add), not through a call-like use.
 *   nd_set_error_handler (nd/runtime.h) hears of each failure as it happens.
 */
#ifndef ND_H
#define ND_H

/* The API by topic; each header's functions are documented where declared. */
#include "nd/types.h"
#include "nd/runtime.h"
#include "nd/creation.h"
#include "nd/random.h"
#include "nd/elementwise.h"
#include "nd/reductions.h"
#include "nd/scans.h"
#include "nd/sorting.h"
#include "nd/indexing.h"
#include "nd/statistics.h"
#include "nd/linalg.h"
#include "nd/linalg_decomp.h"
#include "nd/einsum.h"
#include "nd/convolution.h"
#include "nd/fft.h"
#include "nd/shaping.h"
#include "nd/writes.h"
#include "nd/inspection.h"
#include "nd/kernels.h"
#include "nd/ufunc.h"
#include "nd/body.h"
#include "nd/interop.h"
#include "nd/devices.h"
#include "nd/io.h"

/* Generated with the headers (scripts/gen_callsites.py). Not for nd's own
 * sources: their definitions carry these names. */
#ifdef ND_DEBUG_CALLSITES
#include "nd/callsites.h"
#endif

#endif /* ND_H */
