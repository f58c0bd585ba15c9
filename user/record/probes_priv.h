/* SPDX-License-Identifier: MIT */
/* What probes.c, probe_barriers.c (user barriers) and probe_regions.c
 * (--region) share. */
#ifndef SB_PROBES_PRIV_H
#define SB_PROBES_PRIV_H

#include <stddef.h>
#include "probes.h"

struct sb_elf;

/* A --barrier name (index idx of the list) in e: probes added, 0 where
 * it is not there and the plan is lenient (following), or -errno. */
int sb_plan_add_named_barrier(struct sb_plan *pl, struct sb_elf *e, const char *want,
			      size_t idx, sb_plan_msg_fn msg, void *ctx);
/* Functions named *barrier* of e, when e waits on condition variables
 * and uses no pthread barrier: probes added or -errno. */
int sb_plan_add_auto_barriers(struct sb_plan *pl, struct sb_elf *e, sb_plan_msg_fn msg,
			      void *ctx);

/* FUNC at vaddr as --region idx: 1 added, 0 already or not file-backed,
 * -EEXIST probed for another role, -ENOMEM (probes.c). */
int sb_plan_add_region_func(struct sb_plan *pl, struct sb_elf *e, const char *sym,
			    uint64_t vaddr, uint64_t size, size_t idx);

#endif
