// SPDX-License-Identifier: MIT
/* `report --diff A B`: two profiles side by side (analysis/diff/diff.h),
 * as text or JSON. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diff/diff.h"
#include "report.h"

struct diff_in {
	const char *name;
	const struct sb_profile *p;
	const struct sb_causes *c;
};

/* The profile holding the row's section: B's where it has one. */
static void row_place(const struct sb_diff_section *r, const struct diff_in *a,
		      const struct diff_in *b, const struct sb_profile **p, size_t *s)
{
	*p = r->b >= 0 ? b->p : a->p;
	*s = (size_t)(r->b >= 0 ? r->b : r->a);
}

static const char *kind_of(const struct sb_profile *p, size_t s)
{
	return sb_section_kind_name(p->sections[s].kind);
}

static void pct_change(FILE *f, double a, double b)
{
	if (a > 0)
		fprintf(f, " (%+.0f%%)", 100.0 * (b - a) / a);
	else if (b > 0)
		fputs(" (new)", f);
}

static void text_head(FILE *f, const struct diff_in *in, int side)
{
	const char *cmd = sb_profile_meta_get(in->p, "command");
	char t[32];

	sb_fmt_ns(sb_profile_meta_get_u64(in->p, "duration_ns"), t, sizeof(t));
	fprintf(f, "  %s: ", side ? "B" : "A");
	sb_text_str(f, in->name);
	fputs(" (", f);
	sb_text_str(f, cmd && *cmd ? cmd : sb_profile_meta_get(in->p, "executable"));
	fprintf(f, ", %s recorded, %zu sections", t, in->p->nsections);
	if (sb_profile_meta_get(in->p, "merged_profiles"))
		fprintf(f, ", %llu profiles merged",
			(unsigned long long)sb_profile_meta_get_u64(in->p, "merged_profiles"));
	fputs(")\n", f);
}

static int diff_text(const struct sb_diff *d, const struct diff_in *a, const struct diff_in *b,
		     FILE *f)
{
	fputs("scalebpf report --diff: A (baseline) -> B\n", f);
	text_head(f, a, 0);
	text_head(f, b, 1);
	fputs("\nSections, matched by place, by the change in lost thread-time per second "
	      "recorded\n(lost/s: threads idle at the closing sync, on average)\n", f);
	fprintf(f, "  %-34s %-9s %17s %23s %24s\n", "section", "kind", "instances A -> B",
		"imbalance A -> B", "lost/s A -> B");
	for (size_t i = 0; i < sb_diff_nsections(d); i++) {
		const struct sb_diff_section *r = sb_diff_section(d, i);
		const struct sb_profile *p;
		char loc[256], inst[48], imb[48], lost[48];
		size_t s;

		row_place(r, a, b, &p, &s);
		sb_loc_format_section(p, s, loc, sizeof(loc));
		if (r->a >= 0 && r->b >= 0) {
			snprintf(inst, sizeof(inst), "%llu -> %llu",
				 (unsigned long long)r->sa.instances,
				 (unsigned long long)r->sb.instances);
			snprintf(imb, sizeof(imb), "%.1f%% -> %.1f%% (%+.1f)", r->sa.imbalance_pct,
				 r->sb.imbalance_pct, r->sb.imbalance_pct - r->sa.imbalance_pct);
			snprintf(lost, sizeof(lost), "%.3f -> %.3f", r->sa.lost_per_s,
				 r->sb.lost_per_s);
		} else {
			const struct sb_diff_side *x = r->b >= 0 ? &r->sb : &r->sa;

			snprintf(inst, sizeof(inst), "%s %llu", r->b >= 0 ? "new," : "gone,",
				 (unsigned long long)x->instances);
			snprintf(imb, sizeof(imb), "%.1f%%", x->imbalance_pct);
			snprintf(lost, sizeof(lost), "%.3f", x->lost_per_s);
		}
		fprintf(f, "  %-34s %-9s %17s %23s %15s", loc, kind_of(p, s), inst, imb, lost);
		if (r->a >= 0 && r->b >= 0)
			pct_change(f, r->sa.lost_per_s, r->sb.lost_per_s);
		fputc('\n', f);
	}
	if (!sb_diff_nsections(d))
		fputs("  (no sections in either)\n", f);
	fprintf(f, "\nCauses that appeared in B or vanished from A (leading %d per section)\n",
		SB_DIFF_TOP);
	for (size_t i = 0; i < sb_diff_ncauses(d); i++) {
		const struct sb_diff_cause *c = sb_diff_cause(d, i);
		const struct sb_diff_section *r = sb_diff_section(d, c->section);
		const struct sb_profile *p = c->change == SB_DIFF_APPEARED ? b->p : a->p;
		char sec[256], loc[256];

		sb_loc_format_section(b->p, (size_t)r->b, sec, sizeof(sec));
		sb_loc_format(p, c->cause->loc, loc, sizeof(loc));
		fprintf(f, "  %-8s %s  (score %.2f, %s) in %s\n",
			c->change == SB_DIFF_APPEARED ? "appeared" : "vanished", loc,
			c->cause->score, sb_cause_kind_name(c->cause->kind), sec);
	}
	if (!sb_diff_ncauses(d))
		fputs("  (none: the matched sections' leading causes are the same)\n", f);
	fputs("\nWait time by primitive, per second recorded\n", f);
	fprintf(f, "  %-16s %21s %27s\n", "primitive", "count A -> B", "wait/s A -> B");
	for (size_t i = 0; i < sb_diff_nwaits(d); i++) {
		const struct sb_diff_wait *w = sb_diff_wait(d, i);
		double sa = sb_diff_seconds(d, 0), sb = sb_diff_seconds(d, 1);
		double ra = sa > 0 ? (double)w->wait_a / 1e9 / sa : 0;
		double rb = sb > 0 ? (double)w->wait_b / 1e9 / sb : 0;
		char cnt[48];

		snprintf(cnt, sizeof(cnt), "%llu -> %llu", (unsigned long long)w->count_a,
			 (unsigned long long)w->count_b);
		fprintf(f, "  %-16s %21s %13.3f -> %.3f", sb_prim_name(w->prim), cnt, ra, rb);
		pct_change(f, ra, rb);
		fputc('\n', f);
	}
	if (!sb_diff_nwaits(d))
		fputs("  (no waits in either)\n", f);
	return ferror(f) ? -1 : 0;
}

static void json_side(FILE *f, const char *key, const struct sb_diff_side *x, bool present)
{
	fprintf(f, ", \"%s\": ", key);
	if (!present) {
		fputs("null", f);
		return;
	}
	fprintf(f, "{\"instances\": %llu, \"imbalance_pct\": %.3f, \"lost_ns\": %llu, "
		"\"lost_per_s\": %.6f}", (unsigned long long)x->instances, x->imbalance_pct,
		(unsigned long long)x->lost_ns, x->lost_per_s);
}

static void json_input(FILE *f, const char *key, const struct diff_in *in, double sec)
{
	fprintf(f, "    \"%s\": {\"input\": ", key);
	sb_json_str(f, in->name);
	fprintf(f, ", \"seconds\": %.6f, \"sections\": %zu, \"merged_profiles\": %llu},\n", sec,
		in->p->nsections,
		(unsigned long long)sb_profile_meta_get_u64(in->p, "merged_profiles"));
}

static int diff_json(const struct sb_diff *d, const struct diff_in *a, const struct diff_in *b,
		     FILE *f)
{
	fputs("{\n  \"diff\": {\n", f);
	json_input(f, "a", a, sb_diff_seconds(d, 0));
	json_input(f, "b", b, sb_diff_seconds(d, 1));
	fputs("    \"sections\": [", f);
	for (size_t i = 0; i < sb_diff_nsections(d); i++) {
		const struct sb_diff_section *r = sb_diff_section(d, i);
		const struct sb_profile *p;
		size_t s;

		row_place(r, a, b, &p, &s);
		fputs(i ? ",\n      {" : "\n      {", f);
		sb_json_loc_fields(f, p, (int32_t)p->sections[s].loc);
		fprintf(f, ", \"kind\": \"%s\", \"index_a\": %ld, \"index_b\": %ld", kind_of(p, s),
			r->a, r->b);
		json_side(f, "a", &r->sa, r->a >= 0);
		json_side(f, "b", &r->sb, r->b >= 0);
		if (r->a >= 0 && r->b >= 0)
			fprintf(f, ", \"delta\": {\"imbalance_pct\": %.3f, \"lost_per_s\": %.6f}",
				r->sb.imbalance_pct - r->sa.imbalance_pct,
				r->sb.lost_per_s - r->sa.lost_per_s);
		fputc('}', f);
	}
	fputs("\n    ],\n    \"causes\": [", f);
	for (size_t i = 0; i < sb_diff_ncauses(d); i++) {
		const struct sb_diff_cause *c = sb_diff_cause(d, i);
		const struct sb_profile *p = c->change == SB_DIFF_APPEARED ? b->p : a->p;

		fputs(i ? ",\n      {" : "\n      {", f);
		fprintf(f, "\"change\": \"%s\", \"section_b\": %ld, ",
			c->change == SB_DIFF_APPEARED ? "appeared" : "vanished",
			sb_diff_section(d, c->section)->b);
		sb_json_loc_fields(f, p, c->cause->loc);
		fprintf(f, ", \"score\": %.4f, \"kind\": \"%s\"}", c->cause->score,
			sb_cause_kind_name(c->cause->kind));
	}
	fputs("\n    ],\n    \"waits\": [", f);
	for (size_t i = 0; i < sb_diff_nwaits(d); i++) {
		const struct sb_diff_wait *w = sb_diff_wait(d, i);

		fprintf(f, "%s{\"primitive\": \"%s\", \"count_a\": %llu, \"count_b\": %llu, "
			"\"wait_ns_a\": %llu, \"wait_ns_b\": %llu}", i ? ",\n      " : "\n      ",
			sb_prim_name(w->prim), (unsigned long long)w->count_a,
			(unsigned long long)w->count_b, (unsigned long long)w->wait_a,
			(unsigned long long)w->wait_b);
	}
	fputs("\n    ]\n  }\n}\n", f);
	return ferror(f) ? -1 : 0;
}

int sb_report_diff(const char *name_a, const struct sb_profile *a, const struct sb_causes *ca,
		   const char *name_b, const struct sb_profile *b, const struct sb_causes *cb,
		   int json, FILE *f)
{
	struct diff_in ia = { name_a, a, ca }, ib = { name_b, b, cb };
	struct sb_diff *d = sb_diff_alloc(a, ca, b, cb);
	int ret;

	if (!d)
		return -1;
	ret = json ? diff_json(d, &ia, &ib, f) : diff_text(d, &ia, &ib, f);
	sb_diff_free(d);
	return ret;
}
