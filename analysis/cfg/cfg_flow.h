/* SPDX-License-Identifier: MIT */
/*
 * Exact edge counts from exact block counts.  A `scalebpf cc` program
 * counts the blocks that hold a coverage callback; the machine code has
 * more blocks (calls cut them, the backend splits and duplicates them),
 * so the other blocks and the edges come from flow conservation: at every
 * block, flow in = its count = flow out.  Those equations are solved
 * whole, not block by block: the unknowns (uncounted blocks, edges) form
 * a graph on the blocks' two sides plus one node "outside" (function
 * entries, returns, blocks with no way in, and the calls that close a
 * segment of work, see `cut` below), and an unknown is determined by the
 * counts exactly when it is a bridge of that graph (no cycle of unknowns
 * through it could shift flow around).  Bridges are solved leaf first on
 * the tree of the graph's 2-edge-connected components.
 *
 * What stays undetermined is a cycle of unknowns: typically one test the
 * compiler duplicated (clang's 32/64-bit division fast path copies the
 * compare after a `%` into both paths), whose edges into a block are not
 * known one by one, only their sum, the block's count minus its known
 * ways in.  That sum is what a branch decides, so it is kept (edge_sum):
 * as the value of one of those edges, from the first of the duplicated
 * tests, standing for all of them.
 *
 * Flow edges are all but CALL edges; a direct call edge carries its call
 * block's count afterwards.  Everything is per column (thread, or
 * (instance, thread) pair); the equations depend on the graph only.
 */
#ifndef SB_CFG_FLOW_H
#define SB_CFG_FLOW_H

#include <stddef.h>
#include <stdint.h>

#include "cfg.h"

#define SB_CFG_FLOW_NONE UINT32_MAX

struct sb_cfg_flow {
	uint32_t nt;
	/* Rows of nt values, only for the blocks and edges of solved
	 * functions: brow[b] / erow[e] is the row, or SB_CFG_FLOW_NONE. */
	uint32_t *brow, *erow;
	double *block, *edge;
	uint8_t *block_known, *edge_known;   /* per block / edge of g */
	uint8_t *edge_sum;   /* edge_known, and the value is the sum of the
			      * duplicated tests' edges into its block */
	uint64_t inconsistent;  /* values that came out negative (set to 0),
				 * and counts that contradict each other */
};

static inline const double *sb_cfg_flow_block(const struct sb_cfg_flow *f, uint32_t b)
{
	return f->block_known[b] ? f->block + (size_t)f->brow[b] * f->nt : NULL;
}

static inline const double *sb_cfg_flow_edge(const struct sb_cfg_flow *f, uint32_t e)
{
	return f->edge_known[e] ? f->edge + (size_t)f->erow[e] * f->nt : NULL;
}

/*
 * g must be finalized.  known[b] marks the blocks whose counts are given:
 * row[b] (NULL: row b) of counts, nt values a row.  Only functions
 * holding a known block are solved.  cut (NULL: none) marks the blocks
 * whose call closes a segment (a sync call of the exact runtime): the
 * counts stop there and resume at the call's return block, so neither
 * side of that call-return edge balances.  0 or -ENOMEM; free with
 * sb_cfg_flow_free().
 */
int sb_cfg_flow_solve_rows(const struct sb_cfg *g, uint32_t nt, const uint8_t *known,
			   const uint32_t *row, const double *counts, const uint8_t *cut,
			   struct sb_cfg_flow *out);

/* The same with counts[b * nt ..] for every block b. */
int sb_cfg_flow_solve(const struct sb_cfg *g, uint32_t nt, const uint8_t *known,
		      const double *counts, struct sb_cfg_flow *out);
void sb_cfg_flow_free(struct sb_cfg_flow *f);

#endif
