// SPDX-License-Identifier: MIT
/*
 * The "waits" and "locks" views: wait time by primitive (barriers, joins,
 * mutexes, condition variables, ...), and the most contended locks and
 * condition variables by call site.
 */
#include <stdlib.h>

#include "report.h"
#include "summary/summary.h"

static int waits_text(const struct sb_report_ctx *r, FILE *f)
{
	struct sb_summary_prim_total prims[SB_PRIM_MAX];
	size_t np = sb_summary_waits_by_prim(r->p, prims);
	char b[32];

	fputs("Wait time by primitive\n", f);
	fprintf(f, "  %-16s %12s %12s\n", "primitive", "count", "wait");
	for (size_t i = 0; i < np; i++) {
		sb_fmt_ns(prims[i].wait_ns, b, sizeof(b));
		fprintf(f, "  %-16s %12llu %12s\n", sb_prim_name(prims[i].prim),
			(unsigned long long)prims[i].count, b);
	}
	if (!np)
		fputs("  (no waits recorded)\n", f);
	return 0;
}

static int waits_json(const struct sb_report_ctx *r, struct sb_json *j)
{
	struct sb_summary_prim_total prims[SB_PRIM_MAX];
	size_t np = sb_summary_waits_by_prim(r->p, prims);

	sb_json_member(j, "waits");
	fputc('[', j->f);
	for (size_t i = 0; i < np; i++)
		fprintf(j->f, "%s\n    {\"primitive\": \"%s\", \"wait_ns\": %llu, \"count\": %llu}",
			i ? "," : "", sb_prim_name(prims[i].prim),
			(unsigned long long)prims[i].wait_ns, (unsigned long long)prims[i].count);
	fputs(np ? "\n  ]" : "]", j->f);
	return 0;
}

static const char *const wait_var[] = { "wait" };

static int waits_html(const struct sb_report_ctx *r, FILE *f)
{
	struct sb_summary_prim_total prims[SB_PRIM_MAX];
	size_t np = sb_summary_waits_by_prim(r->p, prims);
	double most = 0;
	char b[32];

	if (!np)
		return 1;
	for (size_t i = 0; i < np; i++)
		most = (double)prims[i].wait_ns > most ? (double)prims[i].wait_ns : most;
	fputs("<div class=\"scroll\"><table><tr><th>primitive</th><th class=\"n\">count</th>"
	      "<th class=\"n\">wait</th><th style=\"width:45%\"></th></tr>\n", f);
	for (size_t i = 0; i < np; i++) {
		double v = (double)prims[i].wait_ns;
		const char *name = sb_prim_name(prims[i].prim);

		sb_fmt_ns(prims[i].wait_ns, b, sizeof(b));
		fprintf(f, "<tr><td>%s</td><td class=\"n\">%llu</td><td class=\"n\">%s</td><td>",
			name, (unsigned long long)prims[i].count, b);
		sb_html_bar(f, &v, wait_var, &name, 1, most);
		fputs("</td></tr>\n", f);
	}
	fputs("</table></div>\n", f);
	return 0;
}

const struct sb_report_view sb_view_waits = {
	.name = "waits",
	.text = waits_text,
	.json = waits_json,
	.title = "Waits by primitive",
	.html = waits_html,
};

static int locks_text(const struct sb_report_ctx *r, FILE *f)
{
	struct sb_summary_lock_total *locks;
	long nl = sb_summary_locks_ranked(r->p, &locks);
	char b[32], loc[512];

	if (nl < 0)
		return -1;
	fputs("\nContended locks and condition variables (by wait time)\n", f);
	fprintf(f, "  %-13s %12s %12s  %s\n", "primitive", "contentions", "wait", "call site");
	for (long i = 0; i < nl && i < 10; i++) {
		sb_fmt_ns(locks[i].wait_ns, b, sizeof(b));
		long k = 0;

		while (k < nl && !sb_loc_same_line(r->p, locks[i].loc, locks[k].loc))
			k++;
		if (k < nl)
			sb_loc_format_addr(r->p, locks[i].loc, loc, sizeof(loc));
		else
			sb_loc_format(r->p, locks[i].loc, loc, sizeof(loc));
		fprintf(f, "  %-13s %12llu %12s  %s\n", sb_prim_name(locks[i].prim),
			(unsigned long long)locks[i].contentions, b, loc);
	}
	if (!nl)
		fputs("  (no contention recorded)\n", f);
	free(locks);
	return 0;
}

static int locks_json(const struct sb_report_ctx *r, struct sb_json *j)
{
	struct sb_summary_lock_total *locks;
	long nl = sb_summary_locks_ranked(r->p, &locks);

	if (nl < 0)
		return -1;
	sb_json_member(j, "locks");
	fputc('[', j->f);
	for (long i = 0; i < nl; i++) {
		fprintf(j->f, "%s\n    {", i ? "," : "");
		sb_json_loc_fields(j->f, r->p, locks[i].loc);
		fprintf(j->f, ", \"primitive\": \"%s\", \"contentions\": %llu, \"wait_ns\": %llu}",
			sb_prim_name(locks[i].prim), (unsigned long long)locks[i].contentions,
			(unsigned long long)locks[i].wait_ns);
	}
	fputs(nl ? "\n  ]" : "]", j->f);
	free(locks);
	return 0;
}

static int locks_html(const struct sb_report_ctx *r, FILE *f)
{
	struct sb_summary_lock_total *locks;
	long nl = sb_summary_locks_ranked(r->p, &locks);
	char b[32], loc[512];

	if (nl < 0)
		return -1;
	if (!nl) {
		free(locks);
		return 1;
	}
	fputs("<div class=\"scroll\"><table><tr><th>primitive</th><th class=\"n\">contentions"
	      "</th><th class=\"n\">wait</th><th>call site</th></tr>\n", f);
	for (long i = 0; i < nl && i < 50; i++) {
		sb_fmt_ns(locks[i].wait_ns, b, sizeof(b));
		sb_loc_format_addr(r->p, locks[i].loc, loc, sizeof(loc));
		fprintf(f, "<tr><td>%s</td><td class=\"n\">%llu</td><td class=\"n\">%s</td><td>",
			sb_prim_name(locks[i].prim), (unsigned long long)locks[i].contentions, b);
		sb_html_str(f, loc);
		fputs("</td></tr>\n", f);
	}
	fputs("</table></div>\n", f);
	if (nl > 50)
		fprintf(f, "<p class=\"none\">and %ld more (the JSON report lists all)</p>\n", nl - 50);
	free(locks);
	return 0;
}

const struct sb_report_view sb_view_locks = {
	.name = "locks",
	.text = locks_text,
	.json = locks_json,
	.title = "Contended locks and condition variables",
	.html = locks_html,
};
