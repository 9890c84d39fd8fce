/* Gather and scatter through index arrays, shared by the indexing
 * functions (indexing.c, index_arrays.c, masks.c). Results are untracked
 * (nd_fe_* convention); the caller releases them. */
#ifndef ND_FRONTEND_INDEXING_INTERNAL_H
#define ND_FRONTEND_INDEXING_INTERNAL_H

#include "frontend/frontend.h"

/* An advanced index of an array: K integer arrays indexing its axes
 * axes[0..K), broadcast together; their broadcast axes take the place of
 * the indexed ones at position `pos` among the array's other axes (NumPy:
 * where the first indexed axis was if the indexed axes are adjacent, else
 * first). */
typedef struct {
    int K, pos;
    int axes[ND_MAX_DIMS];
    nd_array *idx[ND_MAX_DIMS];
} nd_fe_adv_index;

/* What a routine walks: the indexed array as a view of n + K axes, the
 * int64 indices as a view of n + 1 (common/lib_calls.h), and the iteration
 * space (n, shape). held[] are what the views keep alive. With several
 * index arrays, idx is made on demand (nd_fe_geom_stack: one copy of the
 * arrays stacked over their broadcast shape); ix[k] are the arrays each as
 * a view of the n axes (stride 0 where it does not vary: no copy), what a
 * fused gather reads. */
typedef struct {
    nd_array *ind, *idx;
    int n, K;
    int64_t shape[ND_MAX_DIMS];
    int64_t axes; /* packed, for messages */
    nd_array *ix[ND_MAX_DIMS];
    /* for nd_fe_geom_stack: the int64 arrays, their broadcast shape and
     * where its axes start in the iteration space */
    nd_array *idx64[ND_MAX_DIMS];
    int bnd, pos;
    int64_t bshape[ND_MAX_DIMS];
    nd_array *held[3 * ND_MAX_DIMS + 4];
    int n_held;
} nd_fe_gather_geom;

void nd_fe_geom_release(nd_fe_gather_geom *g);

/* indices as int64 (a view when they are already), or NULL with an error
 * naming fn when they are not integers. */
nd_array *nd_fe_index_array(const char *fn, nd_array *indices);

/* The geometry of a[adv] (a may be a view). */
int nd_fe_adv_geom(const char *fn, nd_array *a, const nd_fe_adv_index *adv, nd_fe_gather_geom *g);

/* Makes g->idx when several index arrays left it to be made (nonzero and
 * an error on failure). */
int nd_fe_geom_stack(const char *fn, nd_fe_gather_geom *g);

/* Runs the geometry's gather (fn_flags: nd_lib_index_fn | ND_INDEX_*). */
nd_array *nd_fe_gather(const char *fn, int fn_flags, nd_fe_gather_geom *g);

/* Writes values (broadcast to the iteration space, cast to the target's
 * dtype) through the geometry into its target (mode: nd_lib_scatter_mode). */
nd_status nd_fe_scatter(const char *fn, int fn_flags, int mode, nd_fe_gather_geom *g, nd_array *values);

/* a.take(indices, axis), untracked (ND_ALL_AXES: a flattened). */
nd_array *nd_fe_take(const char *fn, int fn_id, nd_array *a, nd_array *indices, int axis);

/* The flat positions of the nonzero elements of a (int64, 1-d):
 * synchronises. */
nd_array *nd_fe_flatnonzero(const char *fn, nd_array *a);

#endif
