/*
 * nd/io.h — Files and printing: NumPy .npy and .npz files, NumPy-style repr.
 * Part of nd.h: include <nd.h>, not this file.
 */
#ifndef ND_IO_H
#define ND_IO_H

#include <stdio.h>

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --- .npy files (NumPy's format, versions 1.0, 2.0 and 3.0) ---------------
 *
 * Dtypes map to NumPy's descr strings: bool '|b1', int8..int64 '|i1' '<i2'
 * '<i4' '<i8', uint8..uint64 '|u1' '<u2' '<u4' '<u8', float16 '<f2', float32
 * '<f4', float64 '<f8'. NumPy has no bfloat16: nd writes it as '<V2' (what
 * np.save writes for an ml_dtypes.bfloat16 array; NumPy reads it back as
 * 2-byte void records, which `.view(ml_dtypes.bfloat16)` turns back into
 * numbers) and reads a 2-byte void descr ('<V2', '|V2') as bfloat16.
 *
 * Errors of every file function: a NULL argument is ND_ERR_ARG; a file that
 * cannot be opened, read or written, or whose contents are not a valid
 * file of the format, is ND_ERR_IO with a message naming the function, the
 * path and what is wrong (truncated file, wrong magic, unsupported dtype
 * such as object, complex, strings or structured records, a shape that is
 * malformed or has more than ND_MAX_DIMS axes, data shorter than the
 * header's shape says). Out of memory is ND_ERR_OOM. Nothing is written
 * through a path when the array's values cannot be computed. */

/* Writes a (its values: nd_save_npy runs what a needs) to path as a .npy
 * file like np.save(path, a), byte for byte: C order, little-endian,
 * format version 1.0, the header padded so the data starts on a 64-byte
 * boundary. Views are written as their values
 * in row-major order. Unlike np.save, no ".npy" is appended to path. */
ND_API nd_status nd_save_npy(const char *path, nd_array *a);

/* Reads a .npy file written by NumPy (any format version, C or Fortran
 * order, little- or big-endian data, 0-d and empty arrays) into a new
 * array, at once: the result is a C-contiguous array on the host, as
 * nd_from_host makes (Fortran-order data is reordered and big-endian data
 * byte-swapped on load). Bytes after the data are ignored, as np.load
 * does. NULL on failure. */
ND_API nd_array *nd_load_npy(const char *path);

/* --- .npz archives (ZIP files of .npy members, as np.savez writes) --------- */

/* Writes n arrays to path as an .npz archive like np.savez(path, name0=a0,
 * ...): member names[i] + ".npy" holds arrays[i], stored uncompressed
 * (nd_savez_compressed: deflated, like np.savez_compressed). ZIP64 records
 * are written when a member or the archive passes 4 GiB. names must be
 * non-empty, distinct and without '/' or '\\' (ND_ERR_ARG otherwise);
 * n = 0 writes an empty archive. */
ND_API nd_status nd_savez(const char *path, int n, const char *const *names,
                          nd_array *const *arrays);
ND_API nd_status nd_savez_compressed(const char *path, int n, const char *const *names,
                                     nd_array *const *arrays);

/* An opened .npz archive: its arrays, read at once, by name. */
typedef struct nd_npz nd_npz;

/* Reads every member of an .npz archive (stored or deflated, ZIP64 or
 * not; np.savez and np.savez_compressed output) into arrays as
 * nd_load_npy does. A member's name is its file name without the ".npy"
 * suffix (np.load(path).files). NULL on failure (ND_ERR_IO naming the path
 * and the member). Release with nd_npz_close. */
ND_API nd_npz *nd_load_npz(const char *path);
ND_API int nd_npz_count(const nd_npz *z);                 /* -1 for NULL */
ND_API const char *nd_npz_name(const nd_npz *z, int i);   /* NULL when i is out of range */
/* The array named name, or NULL (ND_ERR_ARG naming the names there are).
 * The handle belongs to z and stays valid until nd_npz_close: nd_retain
 * it to keep it longer, never nd_free it. */
ND_API nd_array *nd_npz_get(const nd_npz *z, const char *name);
/* Releases z and its references to the arrays. NULL is a no-op. */
ND_API void nd_npz_close(nd_npz *z);

/* --- Printing -------------------------------------------------------------
 *
 * Text like NumPy 2's repr(a) with default print options: `array([1. ,
 * 2.5], dtype=float32)`. Floats get up to 8 significant decimals, the
 * shortest that round-trips (float16 and float32 values with their own
 * precision), trailing zeros dropped and every element of one width;
 * scientific notation when the largest magnitude is >= 1e8, the smallest
 * non-zero one < 1e-4 or their ratio > 1000; nan and inf as NumPy spells
 * them. Arrays of more than 1000 elements are
 * summarised with "..." after 3 leading and before 3 trailing items per
 * axis. Lines wrap at 75 columns, n-d arrays nest brackets with blank lines
 * between blocks. The dtype suffix appears where NumPy shows one (not for
 * float64, int64 or bool; always for an empty array, with its shape when it
 * is not 1-d, and for a summarised array); a 0-d array is `array(3.)`.
 * NumPy has no bfloat16: its values print under the same float rules with
 * the fewest digits that read back as the same bfloat16, and
 * dtype=bfloat16 (not checked against ml_dtypes' printing). */

/* Writes the text and a newline to f (as print(repr(a))). Runs what a
 * needs. ND_ERR_IO if f cannot be written. */
ND_API nd_status nd_print(FILE *f, nd_array *a);

/* Writes the text into buf (at most cap bytes, always NUL-terminated when
 * cap > 0; buf may be NULL when cap is 0) and returns its length without
 * the NUL, as snprintf does: a return >= cap means it was cut short, and
 * a buffer of return + 1 bytes holds it. -1 on failure (NULL or failed
 * array; the error says why). */
ND_API int64_t nd_to_string(nd_array *a, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif
#endif /* ND_IO_H */
