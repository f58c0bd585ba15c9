/* SPDX-License-Identifier: MIT */
/*
 * Exact edge counts from exact block counts.  A `scalebpf cc` program
 * counts the blocks that hold a coverage callback (clang's trace-pc-guard
 * at edge level: every critical edge is split by a block of its own), and
 * the machine CFG cuts those at calls; flow conservation then determines
 * the other blocks and the edges:
 *   - an edge that is its source's only flow successor, or its
 *     destination's only flow predecessor (not a function entry, which
 *     calls also enter), carries that block's count;
 *   - a block's count is the sum of its flow in-edges (not at an entry)
 *     and of its flow out-edges (when it has any: a return has none), so
 *     the one unknown edge of a block whose others are known is the rest;
 *   - a direct call edge carries its call block's count.
 * Flow edges are all but CALL edges.  Everything is per thread, and the
 * rules depend on the graph only, so they are decided once for all.
 */
#ifndef SB_CFG_FLOW_H
#define SB_CFG_FLOW_H

#include <stddef.h>
#include <stdint.h>

#include "cfg.h"

struct sb_cfg_flow {
	uint32_t nt;
	double *block;      /* nblocks * nt, valid where block_known */
	double *edge;       /* nedges * nt, valid where edge_known */
	uint8_t *block_known, *edge_known;
	uint64_t inconsistent;  /* a rest that came out negative, set to 0 */
};

/*
 * g must be finalized.  known[b] marks the blocks whose per-thread counts
 * are in counts[b * nt .. b * nt + nt).  Only functions holding a known
 * block are solved.  0 or -ENOMEM; free with sb_cfg_flow_free().
 */
int sb_cfg_flow_solve(const struct sb_cfg *g, uint32_t nt, const uint8_t *known,
			const double *counts, struct sb_cfg_flow *out);
void sb_cfg_flow_free(struct sb_cfg_flow *f);

#endif
