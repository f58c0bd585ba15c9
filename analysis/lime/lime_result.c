// SPDX-License-Identifier: MIT
/*
 * The result of LIME (lime.h), shared by both entry points: one
 * instance's analysis (lime.c) and the combination of instances (§3.6,
 * lime_combine.c).  Calls nothing of either.
 */
#include "lime_priv.h"

#include <stdlib.h>

struct sb_lime_result *sb_lime_result_new(size_t nevents)
{
	struct sb_lime_result *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->cluster_of = malloc((nevents ? nevents : 1) * sizeof(*r->cluster_of));
	if (!r->cluster_of) {
		free(r);
		return NULL;
	}
	for (size_t e = 0; e < nevents; e++)
		r->cluster_of[e] = SB_LIME_NO_CLUSTER;
	return r;
}

void sb_lime_result_free(struct sb_lime_result *r)
{
	if (!r)
		return;
	free(r->causes);
	free(r->cluster_of);
	free(r);
}

int sb_lime_cause_cmp(const void *a, const void *b)
{
	const struct sb_lime_cause *x = a, *y = b;

	if (x->score != y->score)
		return x->score < y->score ? 1 : -1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return (x->event > y->event) - (x->event < y->event);
}
