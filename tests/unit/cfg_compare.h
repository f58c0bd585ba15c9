/* SPDX-License-Identifier: MIT */
/* Test helper: two CFGs are the same graph, field by field (struct
 * padding may differ).  Shared by test_cfg_build_cache.c and test_cfg_io.c. */
#ifndef SB_TEST_CFG_COMPARE_H
#define SB_TEST_CFG_COMPARE_H

#include <stdbool.h>
#include <string.h>

#include "cfg/cfg.h"

static inline bool same_graph(const struct sb_cfg *a, const struct sb_cfg *b)
{
	if (a->nfuncs != b->nfuncs || a->nblocks != b->nblocks || a->nedges != b->nedges ||
	    a->has_flags != b->has_flags || !a->build_id != !b->build_id || (a->build_id && strcmp(a->build_id, b->build_id)))
		return false;
	for (size_t i = 0; i < a->nfuncs; i++)
		if (strcmp(a->funcs[i].name, b->funcs[i].name) ||
		    a->funcs[i].start != b->funcs[i].start || a->funcs[i].end != b->funcs[i].end ||
		    a->funcs[i].first_block != b->funcs[i].first_block ||
		    a->funcs[i].nblocks != b->funcs[i].nblocks)
			return false;
	for (size_t i = 0; i < a->nblocks; i++)
		if (a->blocks[i].start != b->blocks[i].start || a->blocks[i].end != b->blocks[i].end ||
		    a->blocks[i].last_insn != b->blocks[i].last_insn ||
		    a->blocks[i].func != b->blocks[i].func || a->blocks[i].flags != b->blocks[i].flags)
			return false;
	for (size_t i = 0; i < a->nedges; i++)
		if (a->edges[i].src != b->edges[i].src || a->edges[i].dst != b->edges[i].dst ||
		    a->edges[i].kind != b->edges[i].kind || a->edges[i].back != b->edges[i].back ||
		    a->in_edges[i] != b->in_edges[i])
			return false;
	return !memcmp(a->out_start, b->out_start, (a->nblocks + 1) * sizeof(uint32_t)) &&
	       !memcmp(a->in_start, b->in_start, (a->nblocks + 1) * sizeof(uint32_t));
}

#endif
