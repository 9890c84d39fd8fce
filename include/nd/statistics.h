/*
 * nd/statistics.h — Statistics: histograms, order statistics, correlations.
 * Part of nd.h: include <nd.h>, not this file.
 */
#ifndef ND_STATISTICS_H
#define ND_STATISTICS_H

#include "types.h"

#ifdef __cplusplus
extern "C" {
#endif


#ifdef __cplusplus
}
#endif

#endif
