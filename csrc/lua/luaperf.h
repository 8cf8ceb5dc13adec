/*
 * The binding (perf.core): one file per userdata type or area, each with an
 * opener that registers its metatables and adds its functions to the module
 * table on top of the stack.  lperf.c calls them all.
 */
#ifndef LUAPERF_BINDING_H
#define LUAPERF_BINDING_H

#include "compat.h"

#define LUAPERF_VERSION "0.1.0"


#endif
