// SPDX-License-Identifier: MIT
/*
 * The JSON report: a stable contract for scripts.  Top level:
 *   meta: {key: value}                   all profile metadata, as strings
 *   sections: [{location, function, address, kind, instances, threads,
 *               imbalance_pct, lost_ns, per_thread: [{tid, busy_ns, wait_ns}]}]
 *             sorted by lost_ns descending
 *   waits: [{primitive, wait_ns, count}]  sorted by wait_ns descending
 *   locks: [{location, function, primitive, contentions, wait_ns}]
 *             sorted by wait_ns descending
 *   causes: [{rank, section, score, kind, location, function, address}]
 *             LIME's causes of imbalance, sorted by score descending;
 *             section is the section's location, rank is within it, kind
 *             is branch, loop, call, hardware or undetermined
 *   addresses: {samples, memory_samples, decoded, undecodable,
 *             undecodable_pct, no_memory_access, no_code, skid_corrected,
 *             kept, capacity}   sampled data addresses; absent in
 *             profiles recorded without them
 * Fields are only ever added.
 */
#include <stdlib.h>

#include "report.h"
#include "summary/summary.h"

void sb_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

void sb_json_loc_fields(FILE *f, const struct sb_profile *p, int32_t loc)
{
	char buf[512];
	const struct sb_loc *l = loc >= 0 && (size_t)loc < p->nlocs ? &p->locs[loc] : NULL;

	sb_loc_short(p, loc, buf, sizeof(buf));
	fputs("\"location\": ", f);
	sb_json_str(f, buf);
	fputs(", \"function\": ", f);
	if (l && l->function)
		sb_json_str(f, l->function);
	else
		fputs("null", f);
	fprintf(f, ", \"address\": \"0x%llx\"", l ? (unsigned long long)l->addr : 0ull);
}

static void sections(FILE *f, const struct sb_profile *p)
{
	size_t *order = sb_sections_ranked(p);

	fputs("  \"sections\": [", f);
	for (size_t k = 0; order && k < p->nsections; k++) {
		const struct sb_section *s = &p->sections[order[k]];

		fprintf(f, "%s\n    {", k ? "," : "");
		sb_json_loc_fields(f, p, (int32_t)s->loc);
		fprintf(f, ", \"kind\": \"%s\", \"instances\": %llu, \"threads\": %u, "
			"\"imbalance_pct\": %.3f, \"lost_ns\": %llu, \"per_thread\": [",
			sb_section_kind_name(s->kind), (unsigned long long)s->ninstances,
			s->nthreads, sb_section_imbalance_pct(s), (unsigned long long)s->lost_ns);
		for (uint32_t t = 0; t < s->nthreads; t++)
			fprintf(f, "%s{\"tid\": %u, \"busy_ns\": %llu, \"wait_ns\": %llu}",
				t ? ", " : "", s->per_thread[t].tid,
				(unsigned long long)s->per_thread[t].busy_ns,
				(unsigned long long)s->per_thread[t].wait_ns);
		fputs("]}", f);
	}
	fputs(p->nsections ? "\n  ],\n" : "],\n", f);
	free(order);
}

static const struct sb_causes *sort_causes;

static int by_score(const void *a, const void *b)
{
	double x = sort_causes->c[*(const size_t *)a].score;
	double y = sort_causes->c[*(const size_t *)b].score;

	return x < y ? 1 : x > y ? -1 : 0;
}

static int causes(FILE *f, const struct sb_profile *p, const struct sb_causes *c)
{
	size_t *order = malloc((c->n ? c->n : 1) * sizeof(*order));
	char sec[512];

	if (!order)
		return -1;
	for (size_t i = 0; i < c->n; i++)
		order[i] = i;
	sort_causes = c;
	qsort(order, c->n, sizeof(*order), by_score);
	fputs("  \"causes\": [", f);
	for (size_t k = 0; k < c->n; k++) {
		const struct sb_cause *x = &c->c[order[k]];

		sb_loc_short(p, (int32_t)p->sections[x->section].loc, sec, sizeof(sec));
		fprintf(f, "%s\n    {\"rank\": %u, \"section\": ", k ? "," : "", x->rank);
		sb_json_str(f, sec);
		fprintf(f, ", \"score\": %.4f, \"kind\": \"%s\", ", x->score,
			sb_cause_kind_name(x->kind));
		sb_json_loc_fields(f, p, x->loc);
		fputc('}', f);
	}
	fputs(c->n ? "\n  ],\n" : "],\n", f);
	free(order);
	return 0;
}

int sb_report_json(const struct sb_profile *p, const struct sb_causes *c, FILE *f)
{
	struct sb_prim_total prims[SB_PRIM_MAX];
	struct sb_lock_total *locks;
	size_t np = sb_waits_by_prim(p, prims);
	long nl = sb_locks_ranked(p, &locks);

	if (nl < 0)
		return -1;
	fputs("{\n  \"meta\": {", f);
	for (size_t i = 0; i < p->nmeta; i++) {
		fputs(i ? ",\n    " : "\n    ", f);
		sb_json_str(f, p->meta[i].key);
		fputs(": ", f);
		sb_json_str(f, p->meta[i].value);
	}
	fputs("\n  },\n", f);
	sb_report_addrs_json(p, f);
	sections(f, p);
	if (causes(f, p, c)) {
		free(locks);
		return -1;
	}
	fputs("  \"waits\": [", f);
	for (size_t i = 0; i < np; i++)
		fprintf(f, "%s\n    {\"primitive\": \"%s\", \"wait_ns\": %llu, \"count\": %llu}",
			i ? "," : "", sb_prim_name(prims[i].prim),
			(unsigned long long)prims[i].wait_ns, (unsigned long long)prims[i].count);
	fputs(np ? "\n  ],\n" : "],\n", f);
	fputs("  \"locks\": [", f);
	for (long i = 0; i < nl; i++) {
		fprintf(f, "%s\n    {", i ? "," : "");
		sb_json_loc_fields(f, p, locks[i].loc);
		fprintf(f, ", \"primitive\": \"%s\", \"contentions\": %llu, \"wait_ns\": %llu}",
			sb_prim_name(locks[i].prim), (unsigned long long)locks[i].contentions,
			(unsigned long long)locks[i].wait_ns);
	}
	fputs(nl ? "\n  ]\n}\n" : "]\n}\n", f);
	free(locks);
	return ferror(f) ? -1 : 0;
}
