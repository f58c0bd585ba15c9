// SPDX-License-Identifier: MIT
/* The "causes" view: LIME's ranked causes per section, with the source
 * lines around each one when the source may be read (report_source.c:
 * never a file a crafted profile chooses), for the first --top sections in
 * the table's order; JSON "causes" by score. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "summary/summary.h"

static int causes_text(const struct sb_report_ctx *r, FILE *f)
{
	const struct sb_profile *p = r->p;
	const struct sb_causes *c = r->causes;
	char loc[512];
	bool undetermined = false;
	struct sb_source *src;

	if (!p->nsections)
		return 0;       /* the sections view said there are none */
	fputs("Causes of imbalance (LIME: clustering, leader nodes, regression; "
	      "per section, instances weighted by imbalance)\n", f);
	if (!p->nvectors) {
		fputs("  (no per-thread event vectors in this profile: record with -F > 0)\n\n", f);
		return 0;
	}
	if (!c->block_samples && c->exact_counts)
		fputs("  from exact per-thread block counts (scalebpf cc): edges by flow "
		      "conservation decide branch/loop/call;\n  sampled time a block's "
		      "executions do not explain is a hardware cause\n", f);
	else if (!c->block_samples)
		fputs("  from LBR-sampled edge executions (--events hw): they decide "
		      "branch/loop/call;\n  PEBS load latency their flow does not explain "
		      "is a hardware cause\n", f);
	if (!(src = sb_source_open(p, r->o)))
		return -1;
	for (size_t k = 0; k < p->nsections && k < r->o->top; k++) {
		uint32_t s = (uint32_t)r->order[k];
		size_t shown = 0;

		sb_loc_format_section(p, s, loc, sizeof(loc));
		fprintf(f, "section #%zu (%s at %s):\n", k + 1,
			sb_section_kind_name(p->sections[s].kind), loc);
		for (size_t i = 0; i < c->n; i++) {
			const struct sb_cause *x = &c->c[i];

			if (x->section != s)
				continue;
			sb_loc_format(p, x->loc, loc, sizeof(loc));
			fprintf(f, "  %2u. score %.3f  %-13s %s  [0x%llx]\n", x->rank, x->score,
				sb_cause_kind_name(x->kind), loc, (unsigned long long)x->addr);
			sb_source_lines(src, x->loc, f);
			undetermined |= x->kind == SB_CAUSE_UNDETERMINED;
			shown++;
		}
		if (!shown)
			fputs("  no significant cause: no event explains the imbalance "
			      "(F-test), or too few threads (< 3)\n", f);
	}
	sb_source_note(src, f);
	sb_source_close(src);
	if (undetermined)
		fputs("  note: from cpu-clock block samples, which measure time in a block, not "
		      "how often it ran:\n  an 'undetermined' cause is more iterations or slower "
		      "ones (e.g. cache misses);\n  confirm with exact counts: build with "
		      "'scalebpf cc' and record again.\n", f);
	fputc('\n', f);
	return ferror(f) ? -1 : 0;
}

static const struct sb_causes *sort_causes;

static int by_score(const void *a, const void *b)
{
	double x = sort_causes->c[*(const size_t *)a].score;
	double y = sort_causes->c[*(const size_t *)b].score;

	return x < y ? 1 : x > y ? -1 : 0;
}

static int causes_json(const struct sb_report_ctx *r, struct sb_json *j)
{
	const struct sb_profile *p = r->p;
	const struct sb_causes *c = r->causes;
	size_t *order = malloc((c->n ? c->n : 1) * sizeof(*order));
	FILE *f = j->f;
	char sec[512];

	if (!order)
		return -1;
	for (size_t i = 0; i < c->n; i++)
		order[i] = i;
	sort_causes = c;
	qsort(order, c->n, sizeof(*order), by_score);
	sb_json_member(j, "causes");
	fputc('[', f);
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
	fputs(c->n ? "\n  ]" : "]", f);
	free(order);
	return 0;
}

const struct sb_report_view sb_view_causes = {
	.name = "causes",
	.text = causes_text,
	.json = causes_json,
};
