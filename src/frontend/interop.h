/* The frontend's side of interop (interop.c, dlpack.c): wrapped memory and
 * open nd_data accesses, as the rest of the frontend needs to know them. */
#ifndef ND_FRONTEND_INTEROP_H
#define ND_FRONTEND_INTEROP_H

#include "frontend/frontend.h"

/* Wraps the program's memory (nd_wrap's contract); `fn` names the public
 * function in errors; readonly (an nd_readonly reason) allows overlapping
 * strides and refuses writes. release may be NULL. */
nd_array *nd_fe_wrap(const char *fn, void *ptr, nd_memory where, nd_dtype dtype, int ndim, const int64_t *shape,
                     const int64_t *strides, void (*release)(void *ctx), void *ctx, int readonly);

/* Opens an access (nd_data's contract) for `owner` (NULL: nd_data's own;
 * an export's token otherwise, which only nd_fe_data_end with it ends). */
void *nd_fe_data_begin(const char *fn, nd_array *a, nd_memory where, nd_access mode, const void *owner);
/* Ends the latest access of a opened by owner; ND_ERR_STATE if none. */
nd_status nd_fe_data_end(const char *fn, nd_array *a, const void *owner);

/* ND_OK, or ND_ERR_STATE naming fn when an nd_data access is open on b
 * (a write recorded now would race with the program). */
nd_status nd_fe_data_check_write(const char *fn, const nd_buffer *b);

/* nd_sync, after the device is idle: copies the value of every wrapped
 * host buffer whose latest value is only in device memory back into the
 * program's memory. Returns the first copy's error. */
nd_status nd_fe_interop_after_sync(void);
/* nd_shutdown, before buffers lose their memory: ends every open access
 * (their array references are released). */
void nd_fe_interop_shutdown(void);

#endif
