/*
 * nd/indexing.h — Indexing with integer arrays and boolean masks: gather, scatter, select.
 * Part of nd.h: include <nd.h>, not this file.
 */
#ifndef ND_INDEXING_H
#define ND_INDEXING_H

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif


#ifdef __cplusplus
}
#endif

#endif
