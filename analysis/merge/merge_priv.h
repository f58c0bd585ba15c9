/* SPDX-License-Identifier: MIT */
/* Private to the merge (merge.c, merge_meta.c, merge_rows.c). */
#ifndef SB_MERGE_PRIV_H
#define SB_MERGE_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include "merge.h"

struct sb_idmap;

struct sb_merge {
	struct sb_merge_opts o;
	struct sb_profile *p;        /* the merge so far */
	struct sb_merge_stats st;
	/* what is in p already, by content hash (merge.c: find_or_add) */
	struct sb_idmap *binaries, *locs, *events, *threads, *waits, *cfgs;
	struct sb_idmap *chip, *sharing;
	uint64_t *kept;              /* per section of p: instances stored */
	size_t capkept;
	size_t stack_from;           /* input whose speedup stacks p holds + 1 */
	/* the input being added: its indices -> p's (-1: not kept) */
	long *bin, *loc, *sec, *inst, *ev;
	char *first, *last;          /* names of the first and newest input */
	char *differing;             /* settings that differ, comma-separated */
	int err;
};

/* src's index i mapped through map (n entries): -1 stays -1, one out of
 * range marks the input corrupt (m->err). */
long sb_merge_mapped(struct sb_merge *m, const long *map, size_t n, int64_t i);
/* The parts that point into the others (merge_refs.c), after the
 * sections and instances: 0, SB_ERR_NOMEM or SB_ERR_CORRUPT. */
int sb_merge_waits(struct sb_merge *m, const struct sb_profile *src);
int sb_merge_events(struct sb_merge *m, const struct sb_profile *src);
int sb_merge_vectors(struct sb_merge *m, const struct sb_profile *src);
int sb_merge_cfgs(struct sb_merge *m, const struct sb_profile *src);
int sb_merge_addrs(struct sb_merge *m, const struct sb_profile *src);
/* The metadata of src into m->p (merge_meta.c): 0 or SB_ERR_NOMEM. */
int sb_merge_meta(struct sb_merge *m, const struct sb_profile *src);
/* CHiP, sharing and speedup-stack rows (merge_rows.c), after the
 * sections and locations of src are mapped: 0 or SB_ERR_NOMEM. */
int sb_merge_rows(struct sb_merge *m, const struct sb_profile *src);

/* A 64-bit FNV-1a over bytes, chained through h (start: SB_MERGE_HASH0). */
#define SB_MERGE_HASH0 0xcbf29ce484222325ull
uint64_t sb_merge_hash(uint64_t h, const void *data, size_t len);
uint64_t sb_merge_hash_str(uint64_t h, const char *s);

/*
 * The entry of map whose content hashes to h and which same(ctx, index)
 * says is the one; a collision takes the next probe.  Returns its index
 * in p's array, or -1 when absent, with *slot where to record one (index
 * + 1); NULL slot without memory.
 */
long sb_merge_find(struct sb_idmap *map, uint64_t h, bool (*same)(const void *ctx, long i),
		   const void *ctx, void ***slot);

#endif
