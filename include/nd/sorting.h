/*
 * nd/sorting.h — Sorting, searching and counting.
 * Part of nd.h: include <nd.h>, not this file.
 */
#ifndef ND_SORTING_H
#define ND_SORTING_H

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif


#ifdef __cplusplus
}
#endif

#endif
