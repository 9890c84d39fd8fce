/* The .npy format's header: parsing what NumPy writes (any version, any
 * key order, either byte order) and building what np.save writes. Pure
 * functions over bytes, so the parser can be fuzzed on its own. */
#ifndef ND_FRONTEND_NPY_FORMAT_H
#define ND_FRONTEND_NPY_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "nd.h"

/* Bytes of the fixed start (magic, version, header length) of versions 2
 * and 3; version 1's is 10. */
#define ND_NPY_PREAMBLE 12
/* Largest prefix nd_npy_build writes (ND_MAX_DIMS axes of 20 digits). */
#define ND_NPY_BUILD_MAX 512

typedef struct {
    nd_dtype dtype;
    int swap;      /* elements are stored in the other byte order */
    int fortran;   /* column-major data */
    int ndim;
    int64_t shape[ND_MAX_DIMS];
    size_t data_offset; /* bytes before the data: preamble + header */
    size_t data_bytes;  /* bytes of data the shape says */
} nd_npy_info;

/* Parses the prefix of a .npy file in buf[0..len). 0: info is filled.
 * 1: more bytes are needed; *need is the prefix's full length (known
 * once the preamble is there; ND_NPY_PREAMBLE before). -1: not a valid
 * header, with the reason in why (cap bytes), e.g. "wrong magic". */
int nd_npy_parse(const unsigned char *buf, size_t len, nd_npy_info *info, size_t *need,
                 char *why, size_t cap);

/* Writes the prefix np.save writes for a C-order little-endian array of
 * this dtype and shape (version 1.0, data 64-byte aligned) into out, which
 * holds ND_NPY_BUILD_MAX bytes; returns its length. */
size_t nd_npy_build(nd_dtype dtype, int ndim, const int64_t *shape, unsigned char *out);

/* True on a big-endian host (files are written little-endian). */
int nd_npy_host_big_endian(void);
/* Reverses the bytes of each of n elements of size item in place. */
void nd_npy_swap(unsigned char *p, size_t n, size_t item);

#endif
