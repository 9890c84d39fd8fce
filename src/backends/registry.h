/* The backends this build knows, by name: what ND_BACKEND and
 * nd_config.backend choose from. A new backend adds one row to the table
 * in registry.c (name, nd_backend_kind, probe, constructor); the runtime's
 * parsing of ND_BACKEND, its error message and `auto` follow from it. */
#ifndef ND_BACKENDS_REGISTRY_H
#define ND_BACKENDS_REGISTRY_H

#include "backends/backend.h"

typedef struct {
    const char *name;  /* ND_BACKEND's value, nd_backend_name()'s answer: "cuda" */
    const char *alias; /* another accepted ND_BACKEND value, or NULL ("gpu") */
    const char *label; /* for messages: "CUDA" */
    nd_backend_kind kind;
    /* Whether this machine can run the backend (a device is present, the
     * backend is built): ND_OK, or the reason as the thread's error. Cheap;
     * creates nothing. */
    nd_status (*supports)(const nd_backend_config *cfg);
    nd_status (*create)(const nd_backend_config *cfg, nd_backend **out);
} nd_backend_entry;

/* Every registered backend, in the order `auto` tries them (the first
 * whose probe succeeds and that starts). */
const nd_backend_entry *nd_backend_registry(int *count);

/* The entry for an ND_BACKEND value (case-insensitive name or alias), or
 * NULL. */
const nd_backend_entry *nd_backend_by_name(const char *name);

/* The entry for nd_config.backend (not ND_BACKEND_AUTO), or NULL. */
const nd_backend_entry *nd_backend_by_kind(nd_backend_kind kind);

/* Creates the backend `kind` names. ND_BACKEND_AUTO: each registered
 * backend in order whose probe succeeds, until one starts; an unavailable
 * one is logged at ND_LOG=2 and its error forgotten (an earlier error of
 * the program stays), but a bad setting (ND_ERR_ARG, e.g. ND_DEVICES) is
 * returned at once. A named backend: its constructor's error. */
nd_status nd_backend_open(nd_backend_kind kind, const nd_backend_config *cfg, nd_backend **out);

#endif
