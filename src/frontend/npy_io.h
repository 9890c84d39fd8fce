/* Reading and writing .npy data, shared by the .npy functions (npy.c) and
 * the .npz archives (npz.c), whose members are .npy files. */
#ifndef ND_FRONTEND_NPY_IO_H
#define ND_FRONTEND_NPY_IO_H

#include <stdint.h>
#include <stdio.h>

#include "nd.h"

/* Where a .npy is read from: len bytes of f from its current position,
 * or of mem when f is NULL. With crc_on, crc accumulates the CRC-32 of
 * the bytes read (a ZIP member's check). */
typedef struct {
    FILE *f;
    const unsigned char *mem;
    uint64_t len, pos;
    int crc_on;
    uint32_t crc;
} nd_npy_src;

/* Reads one .npy from src into a new C-contiguous host array in no scope
 * (byte-swapped and reordered from Fortran order as needed). Errors are
 * ND_ERR_IO "fn: what: reason" (what names the file, or the member and
 * its archive), or ND_ERR_OOM. */
nd_array *nd_npy_read(const char *fn, const char *what, nd_npy_src *src);

/* The bytes of a .npy file holding a's values (np.save's layout), in a new
 * nd_malloc'd buffer of *len bytes; NULL with the error set naming fn. */
unsigned char *nd_npy_encode(const char *fn, nd_array *a, size_t *len);

/* Opens path to read a .npy or .npz (a regular file) and gives its size;
 * NULL with the error naming fn and the path. Starts the runtime. */
FILE *nd_npy_open_read(const char *fn, const char *path, uint64_t *size);

/* Sizes and offsets from this value on are written as ZIP64 records
 * (0xFFFFFFFF, the ZIP limit); tests lower it to put the ZIP64 paths of
 * the writer and the readers (nd's and NumPy's) to work on small files. */
extern uint64_t nd_npz_zip64_from;

#endif
