// SPDX-License-Identifier: MIT
/*
 * LIME input from cpu-clock block samples (causes_priv.h): the sampled
 * path, the one every machine has.
 */
#include "causes_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/*
 * All stored instances of section s pooled into one LIME instance: per
 * thread (by tid), busy times and event counts summed.  LIME (§3.6)
 * analyses instances one by one with exact counts; a sampled instance of
 * a millisecond holds about one sample per thread, too few for any
 * correlation, so sampled vectors are pooled first.  Longer instances
 * then weigh more, rather than more imbalanced ones.
 */

int sb_causes_pool_samples(const struct sb_profile *p, const struct sb_causes_graph *g,
			   uint32_t s, size_t **by_inst, const size_t *ninst_vec,
			   struct sb_causes_pooled *li)
{
	uint32_t tids[SB_CAUSES_MAX_THREADS], nt;
	long *row = calloc(p->nevents ? p->nevents : 1, sizeof(*row));
	size_t nrows = 0, total = 0;
	int ret = -ENOMEM;

	memset(li, 0, sizeof(*li));
	if (!row)
		return -ENOMEM;
	nt = sb_causes_threads(p, s, ninst_vec, tids, &li->time);
	for (size_t e = 0; e < p->nevents; e++)
		row[e] = -1;
	/* the events with a CFG block */
	for (uint32_t i = 0; i < p->ninstances; i++) {
		if (p->instances[i].section != s || !ninst_vec[i])
			continue;
		for (size_t v = 0; v < ninst_vec[i]; v++) {
			uint32_t ev = p->vectors[by_inst[i][v]].event;
			const struct sb_event_def *d = &p->events[ev];

			if (row[ev] < 0 && d->kind == SB_EVK_BLOCK_SAMPLES &&
			    sb_causes_event_block(p, g, d) >= 0)
				row[ev] = (long)nrows++;
		}
		total++;
	}
	li->ev = calloc(nrows ? nrows : 1, sizeof(*li->ev));
	li->counts = calloc((nrows ? nrows : 1) * (nt ? nt : 1), sizeof(double));
	if (!li->ev || !li->counts || !li->time)
		goto out;
	for (uint32_t i = 0; i < p->ninstances; i++) {
		uint32_t col[SB_CAUSES_MAX_THREADS];

		if (p->instances[i].section != s || !ninst_vec[i])
			continue;
		sb_causes_columns(&p->instances[i], tids, nt, col);
		for (size_t v = 0; v < ninst_vec[i]; v++) {
			const struct sb_vector *vec = &p->vectors[by_inst[i][v]];
			long r = row[vec->event];

			for (uint32_t t = 0; r >= 0 && t < vec->nthreads && t < SB_CAUSES_MAX_THREADS; t++)
				if (col[t] < nt)
					li->counts[(size_t)r * nt + col[t]] += (double)vec->counts[t];
		}
	}
	for (size_t e = 0; e < p->nevents; e++) {
		const struct sb_event_def *d = &p->events[e];
		long r = row[e];

		if (r < 0)
			continue;
		li->ev[r].kind = SB_LIME_BLOCK;
		li->ev[r].id = (uint32_t)sb_causes_event_block(p, g, d);
		li->ev[r].superior = -1;
		li->ev[r].addr = SB_CFG_TAG(d->binary, d->vaddr);
		li->ev[r].counts = &li->counts[(size_t)r * nt];
	}
	sb_causes_pooled_set(li, nt, nrows);
	ret = total ? 0 : -ENOENT;
out:
	free(row);
	return ret;
}
