// SPDX-License-Identifier: MIT
/*
 * The views of `scalebpf report`, in order, and the walks over them.
 *
 * The JSON report is a stable contract for scripts.  Top level:
 *   meta: {key: value}                   all profile metadata, as strings
 *   addresses: {samples, memory_samples, decoded, undecodable,
 *             undecodable_pct, no_memory_access, no_code, skid_corrected,
 *             kept, capacity}   sampled data addresses; absent in
 *             profiles recorded without them
 *   sections: [{location, function, address, kind, instances, threads,
 *               imbalance_pct, lost_ns, per_thread: [{tid, busy_ns, wait_ns}]}]
 *             sorted by lost_ns descending
 *   causes: [{rank, section, score, kind, location, function, address}]
 *             LIME's causes of imbalance, sorted by score descending;
 *             section is the section's location, rank is within it, kind
 *             is branch, loop, call, hardware or undetermined
 *   waits: [{primitive, wait_ns, count}]  sorted by wait_ns descending
 *   locks: [{location, function, primitive, contentions, wait_ns}]
 *             sorted by wait_ns descending
 *   sharing, sharing_races: cache-line sharing, report_sharing.c
 *   chip: cache hit profiles and bandwidth by thread count, report_cache.c
 *   stacks: speedup stacks per phase and thread count, report_stack.c
 * Fields are only ever added.
 */
#include <stdlib.h>

#include "report.h"

const struct sb_report_view *const sb_report_views[] = {
	&sb_view_counts,        /* a listing only; --counts wins over --addresses */
	&sb_view_meta,
	&sb_view_sections,
	&sb_view_causes,
	&sb_view_waits,
	&sb_view_locks,
	&sb_view_addresses,     /* (a head line and an HTML panel: after the waits) */
	&sb_view_sharing,
	&sb_view_cache,
	&sb_view_stack,
};
const size_t sb_report_nviews = sizeof(sb_report_views) / sizeof(sb_report_views[0]);

int sb_report_text(const struct sb_profile *p, const struct sb_causes *c,
		   const struct sb_report_opts *o, FILE *f)
{
	struct sb_report_ctx r = { .p = p, .causes = c, .o = o };
	size_t *order;
	int ret = 0;

	for (size_t i = 0; i < sb_report_nviews; i++)
		if (sb_report_views[i]->head)
			sb_report_views[i]->head(&r, f);
	fputc('\n', f);
	r.order = order = sb_report_sections_sorted(p, o->sort);
	for (size_t i = 0; i < sb_report_nviews && !ret; i++)
		if (sb_report_views[i]->text)
			ret = sb_report_views[i]->text(&r, f);
	free(order);
	return ret || ferror(f) ? -1 : 0;
}

int sb_report_json(const struct sb_profile *p, const struct sb_causes *c,
		   const struct sb_report_opts *o, FILE *f)
{
	struct sb_report_ctx r = { .p = p, .causes = c, .o = o };
	struct sb_json j = { .f = f };

	fputs("{\n", f);
	for (size_t i = 0; i < sb_report_nviews; i++)
		if (sb_report_views[i]->json && sb_report_views[i]->json(&r, &j))
			return -1;
	fputs("\n}\n", f);
	return ferror(f) ? -1 : 0;
}

int sb_report_list(const struct sb_report_view *v, const struct sb_profile *p,
		   const struct sb_report_opts *o, int json, FILE *f)
{
	struct sb_report_ctx r = { .p = p, .o = o };
	struct sb_json j = { .f = f };

	if (!json || !v->list_json)
		return v->list_text(&r, f);
	fputs("{\n", f);
	if (v->list_json(&r, &j))
		return -1;
	fputs("\n}\n", f);
	return ferror(f) ? -1 : 0;
}
