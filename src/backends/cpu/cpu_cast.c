/* Cast loops for every (source, destination) dtype pair: NDS_CAST of
 * cpu_scalar.h (NumPy unsafe casting: float -> int truncates toward zero
 * through int64 and wraps, narrowing int -> int wraps, wide sources ->
 * float16/bfloat16 round once) over a tile. */
#include "backends/cpu/cpu_vectorize.h"

#include "backends/cpu/cpu_internal.h"

#define MK_CAST(S, D)                                                            \
    static void cast_##S##_##D(void *restrict o_, const void *a_, const void *b_, \
                               const void *c_, int64_t n) {                      \
        D##_T *restrict o = (D##_T *)o_;                                         \
        const S##_T *a = (const S##_T *)a_;                                      \
        (void)b_, (void)c_;                                                      \
        for (int64_t i = 0; i < n; i++) o[i] = NDS_CAST(S, D, a[i]);              \
    }

#define FOR_DST(X, S)                                                            \
    X(S, BOOL) X(S, I8) X(S, I16) X(S, I32) X(S, I64) X(S, U8) X(S, U16) X(S, U32) \
    X(S, U64) X(S, F16) X(S, BF16) X(S, F32) X(S, F64) X(S, C64) X(S, C128)
#define FOR_SRC(Y)                                                               \
    Y(BOOL) Y(I8) Y(I16) Y(I32) Y(I64) Y(U8) Y(U16) Y(U32) Y(U64) Y(F16) Y(BF16) Y(F32) Y(F64) \
    Y(C64) Y(C128)

#define MK_SRC(S) FOR_DST(MK_CAST, S)
FOR_SRC(MK_SRC)

#define ENTRY(S, D) cast_##S##_##D,
#define ROW(S) {FOR_DST(ENTRY, S)},
/* Rows and columns in nd_dtype order. */
static nd_cpu_fn const cast_table[ND_NUM_DTYPES][ND_NUM_DTYPES] = {FOR_SRC(ROW)};

nd_cpu_fn nd_cpu_cast_fn(int src, int dst) {
    if (!nd_dtype_valid(src) || !nd_dtype_valid(dst)) return NULL;
    return cast_table[src][dst];
}
