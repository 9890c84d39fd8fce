/* Helpers shared by the frontend's entry points: argument checks,
 * broadcasting, NEP 50 dtype resolution and node recording.
 *
 * Convention: internal helpers (nd_fe_*) return arrays that are in no scope;
 * a public entry point passes its result through nd_runtime_track once, so
 * temporaries of composed ops (mean, var, clip, ...) never enter a scope.
 *
 * Decisions where NumPy 2 leaves room or C differs:
 *  - Weak scalars are 0-d float64/int64 arrays flagged weak, with their value
 *    in the handle and in a host buffer; as op inputs they become constant
 *    refs in the op's compute dtype (kernel parameters, never hashed).
 *  - A Python-int scalar that does not fit the array's integer dtype is
 *    ND_ERR_DTYPE, except in comparisons and true division, which widen (as
 *    NumPy 2 compares out-of-range ints correctly and divides in float64),
 *    and as a clip bound that cannot bind (NumPy 2 drops it). nd_where
 *    refuses one too, where NumPy 2 wraps it.
 *  - Storing a number (nd_assign of a weak scalar, nd_fill, nd_full) into an
 *    integer dtype follows NumPy 2's setitem/fill: int(v) must fit, else
 *    ND_ERR_DTYPE (nd_full refuses too, though np.full wraps a Python float:
 *    a C double stands for ints as often).
 *  - floor/ceil of integers keep the dtype (NumPy >= 2.3); abs of
 *    bool/unsigned and floor/ceil of ints record a CAST; square of bool is
 *    int8 (NumPy).
 *  - bool +, *, maximum, minimum record LOGICAL_OR/AND (NumPy's bool loops);
 *    bool ** bool is int8.
 *  - Reading an nd_empty array that was never written gives zeros.
 *  - mean of float16/bfloat16 sums in float32 and rounds the result; mean
 *    of bool/ints sums float64 values (NumPy's dtype='f8' accumulator). */
#ifndef ND_FRONTEND_FRONTEND_H
#define ND_FRONTEND_FRONTEND_H

#include "common/api_guard.h"
#include "common/error.h"
#include "common/lib_calls.h"
#include "frontend/runtime.h"

/* Releases one reference (clearing the handle's scope slot when it dies).
 * Inline: a scope's end releases each of its handles, most of them not
 * the last reference to anything but the handle. */
void nd_fe_release_last(nd_array *a);
static inline void nd_fe_release(nd_array *a) {
    if (a && --a->refs <= 0) nd_fe_release_last(a);
}
/* " ('grid')" for an array whose data nd_set_name named, else "" (for
 * messages; naming.c). */
const char *nd_fe_name_note(const nd_array *a, char *buf, size_t cap);
/* How many scopes this thread has open (scope.c). */
int32_t nd_fe_scope_depth(void);

/* Checks an array argument of a public function: 0 when usable, else -1
 * with the error set naming fn and the argument: NULL (keeps an earlier
 * error, see nd_error_null_input), a freed handle (ND_ERR_ARG), a handle
 * that outlived nd_shutdown (ND_ERR_STATE). */
int nd_fe_arg_slow(const char *fn, const char *name, const nd_array *a);
static inline int nd_fe_arg(const char *fn, const char *name, const nd_array *a) {
    if (__builtin_expect(a && a->state == ND_ARRAY_LIVE && !a->buf->dead, 1)) return 0;
    return nd_fe_arg_slow(fn, name, a);
}
/* Only that a is a live handle, not freed (nd_retain, nd_free, nd_keep:
 * a handle that outlived nd_shutdown may still be counted and freed). a is
 * not NULL. */
int nd_fe_arg_handle(const char *fn, const char *name, const nd_array *a);

/* A new contiguous array (in no scope) over fresh host memory of the
 * backend, marked valid there, as nd_from_host makes: *data points at its
 * bytes for the caller to fill before anything reads it (NULL when the
 * array is empty or on failure, which sets the error naming fn). */
nd_array *nd_fe_host_array(const char *fn, nd_dtype dtype, int ndim, const int64_t *shape,
                           void **data);

/* Argument checks: 0 when fine, else -1 with the error set naming `fn`. */
int nd_fe_check_dtype(const char *fn, nd_dtype t);
/* ndim range, NULL shape, negative dims, element and byte count overflow. */
int nd_fe_check_shape(const char *fn, int ndim, const int64_t *shape, nd_dtype dtype,
                      size_t *nbytes);
/* Byte count of a computed shape (only overflow can fail). */
int nd_fe_nbytes(const char *fn, int ndim, const int64_t *shape, nd_dtype dtype, size_t *nbytes);
/* Normalises axis for an array of ndim (negative counts from the end). */
int nd_fe_axis(const char *fn, int axis, int ndim, int *out);

/* Broadcast shape of n arrays (NumPy rules). */
int nd_fe_broadcast(const char *fn, int n, nd_array *const *in, int *ndim, int64_t *shape);
/* a's strides seen through a broadcast to (ndim, shape): 0 on new and
 * stretched axes. The caller has checked that a broadcasts. */
void nd_fe_broadcast_strides(const nd_array *a, int ndim, const int64_t *shape, int64_t *strides);

/* A recording in progress: the output buffer exists before the node so that
 * no failure can leave a node without an output. */
typedef struct {
    nd_buffer *buf;
    nd_node *node;
} nd_fe_rec;

/* Creates the output buffer (nbytes) and appends a node with the given
 * fields. The caller sets inputs/params, then calls nd_fe_end. */
int nd_fe_begin(nd_fe_rec *r, const char *label, nd_node_kind kind, int op, int n_inputs,
                nd_dtype dtype, nd_dtype cdtype, int ndim, const int64_t *shape, size_t nbytes);
/* Sets the node's output and returns a contiguous array over the buffer. */
nd_array *nd_fe_end(nd_fe_rec *r, int ndim, const int64_t *shape);

/* Sets input i of a MAP/STORE node: a broadcast view of a, or a constant in
 * `const_dtype` when a is a weak scalar. */
void nd_fe_set_input(nd_node *n, int i, const nd_array *a, nd_dtype const_dtype, int ndim,
                     const int64_t *shape);
/* A weak scalar's value converted to `dtype`'s kind (unsafe cast). */
nd_scalar_bits nd_fe_weak_bits(const nd_array *a, nd_dtype dtype);
/* A double in `dtype`'s kind under NumPy's unsafe cast (FULL, fill). */
nd_scalar_bits nd_fe_double_bits(double v, nd_dtype dtype);

/* Whether a Python number stored into an array of dtype t (setitem, fill,
 * full) is allowed as NumPy 2: into an integer dtype it must be finite and
 * its value truncated toward zero must fit, else ND_ERR_DTYPE naming fn,
 * `what` and the range (NumPy raises OverflowError rather than wrap). Bool
 * and float dtypes take any value (unsafe cast). */
nd_status nd_fe_value_fits(const char *fn, const char *what, double v, nd_dtype t);
/* The same for a weak scalar stored into dtype t (a Python int must fit). */
nd_status nd_fe_weak_fits(const char *fn, const nd_array *w, nd_dtype t);
/* The dtype a weak scalar takes next to an array of `other` (NEP 50), or
 * ND_NUM_DTYPES with ND_ERR_DTYPE if a Python-int value does not fit. For
 * comparisons an int that does not fit widens instead (NumPy 2 compares
 * out-of-range Python ints correctly). */
nd_dtype nd_fe_weak_dtype(const char *fn, const nd_array *weak, nd_dtype other, int comparison);
/* Promoted dtype of two operands under NEP 50; ND_NUM_DTYPES on error. */
nd_dtype nd_fe_result_type(const char *fn, const nd_array *a, const nd_array *b, int comparison);

/* Elementwise MAP over n inputs broadcast together. const_dtypes[i] is the
 * dtype a weak-scalar input i becomes (NULL: cdtype for all). */
nd_array *nd_fe_map(const char *fn, nd_op op, int n, nd_array *const *in,
                    const nd_dtype *const_dtypes, nd_dtype cdtype, nd_dtype dtype);
nd_array *nd_fe_astype(const char *fn, nd_array *a, nd_dtype dtype);
/* One call of body b (frontend/body.c checked in[]): its MAP node, inputs
 * broadcast to the result (same: each has the result's shape, so its own
 * strides are the ref's). Here for fe_begin/fe_end inline. */
struct nd_body;
nd_array *nd_fe_body_node(const char *fn, struct nd_body *b, nd_array *const *in, int same);
/* Whether a may be body b's input k: no weak scalar, the traced dtype and
 * shape (any view of them). a is a live handle. */
static inline __attribute__((always_inline)) int nd_fe_body_input_fits(const struct nd_body *b, int k, const nd_array *a) {
    if (a->weak || a->dtype != b->in_dtype[k] || a->ndim != b->in_ndim[k]) return 0;
    for (int j = 0; j < a->ndim; j++)
        if (a->shape[j] != b->in_shape[k][j]) return 0;
    return 1;
}
/* a as an ordinary array (a weak scalar becomes a strong 0-d array). */
nd_array *nd_fe_strong(const char *fn, nd_array *a);

/* Records a call (frontend/calls.c): user kernel k, or (k NULL) library
 * routine lib with its arguments, over inputs[0..n_in) writing
 * outputs[0..n_out) (include/nd/kernels.h's nd_kernel_output: a new array
 * of dtype and shape, or an existing one in place). New outputs go to
 * results, tracked as public handles when `track`. Inputs and outputs are
 * checked by the caller. All or nothing: on error nothing is recorded. */
nd_status nd_fe_record_call(const char *fn, struct nd_user_kernel *k, nd_lib_call lib, const nd_lib_args *args,
                            int n_in, nd_array *const *inputs, int n_out, const nd_kernel_output *outputs,
                            nd_array **results, int track);
/* A library routine's call with untracked results (results[j] NULL for an
 * in-place output). The routine sees each input as its view (strides, a
 * broadcast or a transpose included) and writes each output through its
 * view. */
nd_status nd_fe_lib_call(const char *fn, nd_lib_call lib, const nd_lib_args *args, int n_in, nd_array *const *inputs,
                         int n_out, const nd_kernel_output *outputs, nd_array **results);

/* Internal forms of public ops (untracked results, errors named by fn). */
nd_array *nd_fe_binary(const char *fn, nd_op op, nd_array *a, nd_array *b);
nd_array *nd_fe_unary(const char *fn, nd_op op, nd_array *a);
nd_array *nd_fe_reduce(const char *fn, nd_reduce_kind kind, nd_array *a, int axis, int keepdims);
nd_array *nd_fe_mean(const char *fn, nd_array *a, int axis, int keepdims);
nd_array *nd_fe_full(const char *fn, nd_dtype dtype, int ndim, const int64_t *shape,
                     nd_scalar_bits value);
/* An ARANGE node: element i is start + i * step computed in float64, then
 * cast to dtype (count checked like a shape). */
nd_array *nd_fe_arange(const char *fn, nd_dtype dtype, double start, double step, int64_t count);
nd_array *nd_fe_scalar(double v); /* weak float, untracked */
nd_array *nd_fe_empty(const char *fn, nd_dtype dtype, int ndim, const int64_t *shape);
/* a viewed by a NumPy index string (nd_view's parser); errors name fn. */
nd_array *nd_fe_view_index(const char *fn, nd_array *a, const char *index);
nd_array *nd_fe_view(nd_array *a, int ndim, const int64_t *shape, const int64_t *strides,
                     int64_t offset);
/* Part `part` (0 real, 1 imaginary) of complex a as a view of a's buffer
 * in the parts' dtype: strides doubled, offset 2 * a's offset + part. */
nd_array *nd_fe_part_view(nd_array *a, int part);
nd_array *nd_fe_reshape(const char *fn, nd_array *a, int ndim, const int64_t *shape);
nd_array *nd_fe_concatenate(const char *fn, int n, nd_array *const *arrays, int axis);
nd_status nd_fe_store(const char *fn, nd_array *dst, nd_array *src);
/* Whether dst may be written (not a weak scalar, a read-only view or import). */
nd_status nd_fe_check_dst(const char *fn, const nd_array *dst);
/* NumPy matmul (a fused sum for two float vectors), errors named by fn. */
nd_array *nd_fe_matmul(const char *fn, nd_array *a, nd_array *b);

/* The NumPy index-string grammar of nd_view applied to a view. */
int nd_index_apply(const char *fn, const char *index, int ndim, const int64_t *shape,
                   const int64_t *strides, int64_t offset, int *out_ndim, int64_t *out_shape,
                   int64_t *out_strides, int64_t *out_offset);

/* The error of reading array a whose buffer carries a failure: names fn,
 * the array (shape, dtype, the function that computed it) and the cause. */
nd_status nd_fe_report_failure(const char *fn, const nd_array *a);
/* After the flush a read of a made (pending: a's buffer had writers
 * pending before it): ND_OK, or the error of a value that could not be
 * computed (nd_fe_report_failure), or ND_ERR_STATE for a value the flush
 * was to compute and left nowhere without an error (a defect of nd's:
 * said, never read as the zeros of a never-written array). */
nd_status nd_fe_read_ready(const char *fn, const nd_array *a, int pending);

#endif
