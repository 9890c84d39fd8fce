/* Call sites that programs built with ND_DEBUG_CALLSITES pass (nd/callsites.h,
 * generated from the headers), and labels carrying them. */
#ifndef ND_COMMON_CALLSITE_H
#define ND_COMMON_CALLSITE_H

#include "common/api_guard.h"
#include "nd.h"

/* "nd_add (heat.c:42)" for the current public call's site: interned, so it
 * lives as long as the process. Only with a site (nd_site_label decides). */
const char *nd_site_label_interned(const char *label);
/* `label` ("nd_add"), or while the current public call has a call site,
 * "nd_add (heat.c:42)": a string that lives as long as the process, so it
 * can stand wherever a static label does. Without the site (the program did
 * not pass one) this is `label` itself and costs one thread-local load:
 * inline, since every recorded op asks. */
static inline const char *nd_site_label(const char *label) {
    return nd_api_site_file() && label ? nd_site_label_interned(label) : label;
}
/* "heat.c" of "../examples/heat.c": messages name the file, not the
 * path the build happened to compile it by. */
const char *nd_site_basename(const char *file);

#endif
