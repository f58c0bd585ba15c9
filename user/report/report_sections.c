// SPDX-License-Identifier: MIT
/*
 * The "sections" view: parallel sections ranked by lost thread-time, as a
 * table sorted by the --sort key with the first --top ones in detail
 * (per-thread busy/wait bars), and as JSON "sections" by lost_ns.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "report.h"
#include "summary/summary.h"

struct column {
	const char *name;
	int width;
	int (*compare)(const struct sb_section *a, const struct sb_section *b);
	void (*print)(const struct sb_profile *p, const struct sb_section *s, char *buf, size_t len);
};

static uint64_t section_wait(const struct sb_section *s)
{
	uint64_t w = 0;

	for (uint32_t t = 0; t < s->nthreads; t++)
		w += s->per_thread[t].wait_ns;
	return w;
}

#define DESC(a, b) ((a) < (b) ? 1 : (a) > (b) ? -1 : 0)
static int cmp_lost(const struct sb_section *a, const struct sb_section *b)
{
	return DESC(a->lost_ns, b->lost_ns);
}
static int cmp_imb(const struct sb_section *a, const struct sb_section *b)
{
	return DESC(sb_summary_imbalance_pct(a), sb_summary_imbalance_pct(b));
}
static int cmp_inst(const struct sb_section *a, const struct sb_section *b)
{
	return DESC(a->ninstances, b->ninstances);
}
static int cmp_wait(const struct sb_section *a, const struct sb_section *b)
{
	return DESC(section_wait(a), section_wait(b));
}

static void pr_lost(const struct sb_profile *p, const struct sb_section *s, char *b, size_t n)
{
	(void)p;
	sb_fmt_ns(s->lost_ns, b, n);
}
static void pr_imb(const struct sb_profile *p, const struct sb_section *s, char *b, size_t n)
{
	(void)p;
	snprintf(b, n, "%.1f%%", sb_summary_imbalance_pct(s));
}
static void pr_inst(const struct sb_profile *p, const struct sb_section *s, char *b, size_t n)
{
	(void)p;
	snprintf(b, n, "%llu", (unsigned long long)s->ninstances);
}
static void pr_thr(const struct sb_profile *p, const struct sb_section *s, char *b, size_t n)
{
	(void)p;
	snprintf(b, n, "%u", s->nthreads);
}
static void pr_wait(const struct sb_profile *p, const struct sb_section *s, char *b, size_t n)
{
	(void)p;
	sb_fmt_ns(section_wait(s), b, n);
}
static void pr_kind(const struct sb_profile *p, const struct sb_section *s, char *b, size_t n)
{
	(void)p;
	snprintf(b, n, "%s", sb_section_kind_name(s->kind));
}
static void pr_loc(const struct sb_profile *p, const struct sb_section *s, char *b, size_t n)
{
	sb_loc_format_section(p, (size_t)(s - p->sections), b, n);
}

static const struct column columns[] = {
	{ "lost", 10, cmp_lost, pr_lost },
	{ "imbalance", 10, cmp_imb, pr_imb },
	{ "instances", 10, cmp_inst, pr_inst },
	{ "threads", 8, NULL, pr_thr },
	{ "wait", 10, cmp_wait, pr_wait },
	{ "kind", 13, NULL, pr_kind },
	{ "location", 0, NULL, pr_loc },
};
#define NCOLUMNS (sizeof(columns) / sizeof(columns[0]))

/* The --sort key's column; the first (lost) for none or an unknown key. */
static const struct column *sort_column_of(const char *sort)
{
	for (size_t c = 0; sort && c < NCOLUMNS; c++)
		if (columns[c].compare && !strcasecmp(columns[c].name, sort))
			return &columns[c];
	return &columns[0];
}

static const struct column *sort_column;
static const struct sb_profile *sort_profile;

static int by_column(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int c = sort_column->compare(&sort_profile->sections[x], &sort_profile->sections[y]);

	return c ? c : cmp_lost(&sort_profile->sections[x], &sort_profile->sections[y]);
}

size_t *sb_report_sections_sorted(const struct sb_profile *p, const char *sort)
{
	size_t *order = sb_summary_sections_ranked(p);

	if (!order)
		return NULL;
	sort_column = sort_column_of(sort);
	sort_profile = p;
	qsort(order, p->nsections, sizeof(*order), by_column);
	return order;
}

/* Characters for part of a bar of `width` for all of scale, in [0, width]. */
static int bar_len(uint64_t part, double scale, int width)
{
	double n = scale > 0 ? (double)part * width / scale + 0.5 : 0;

	return n < width ? (int)n : width;
}

/* scale is the largest busy + wait of the section, summed in double: the
 * times of a damaged profile can overflow a u64 sum, and a bar must stay
 * inside its width whatever the numbers (fuzz_profile found a bar of
 * 1.4e13 characters). */
static void bar(FILE *f, uint64_t busy, uint64_t wait, double scale, int width)
{
	int nb = bar_len(busy, scale, width);
	int nw = bar_len(wait, scale, width);

	if (nb + nw > width)
		nw = width - nb;
	fputc('|', f);
	for (int i = 0; i < nb; i++)
		fputs("#", f);
	for (int i = 0; i < nw; i++)
		fputs(".", f);
	fprintf(f, "%*s|", width - nb - nw, "");
}

static void section_detail(const struct sb_profile *p, const struct sb_section *s,
			   size_t rank, FILE *f)
{
	double scale = 0;
	uint32_t busiest = 0, idlest = 0;
	char loc[512], b1[32], b2[32];

	sb_loc_format_section(p, (size_t)(s - p->sections), loc, sizeof(loc));
	fprintf(f, "#%zu %s, closed at %s: %llu instances, %u threads, imbalance %.1f%%\n",
		rank, sb_section_kind_name(s->kind), loc, (unsigned long long)s->ninstances,
		s->nthreads, sb_summary_imbalance_pct(s));
	for (uint32_t t = 0; t < s->nthreads; t++) {
		const struct sb_thread_time *x = &s->per_thread[t];

		if ((double)x->busy_ns + (double)x->wait_ns > scale)
			scale = (double)x->busy_ns + (double)x->wait_ns;
		if (x->busy_ns > s->per_thread[busiest].busy_ns)
			busiest = t;
		if (x->wait_ns > s->per_thread[idlest].wait_ns)
			idlest = t;
	}
	fprintf(f, "     %8s  %-40s %10s %10s\n", "tid", "busy (#) / wait (.)", "busy", "wait");
	for (uint32_t t = 0; t < s->nthreads; t++) {
		const struct sb_thread_time *x = &s->per_thread[t];

		sb_fmt_ns(x->busy_ns, b1, sizeof(b1));
		sb_fmt_ns(x->wait_ns, b2, sizeof(b2));
		fprintf(f, "     %8u  ", x->tid);
		bar(f, x->busy_ns, x->wait_ns, scale, 38);
		fprintf(f, " %10s %10s\n", b1, b2);
	}
	if (s->nthreads) {
		sb_fmt_ns(s->per_thread[busiest].busy_ns, b1, sizeof(b1));
		sb_fmt_ns(s->per_thread[idlest].wait_ns, b2, sizeof(b2));
		fprintf(f, "     busiest: tid %u (%s busy); idlest: tid %u (%s waiting)\n",
			s->per_thread[busiest].tid, b1, s->per_thread[idlest].tid, b2);
	}
	fputc('\n', f);
}

static int sections_text(const struct sb_report_ctx *r, FILE *f)
{
	const struct sb_profile *p = r->p;
	const struct column *sorted_by = sort_column_of(r->o->sort);
	char buf[512];

	if (!p->nsections) {
		const char *nf = sb_profile_meta_get(p, "not_followed");

		fputs("No parallel sections were recorded: no barrier, OpenMP region or joined "
		      "thread group completed while recording.\n", f);
		/* The work may have run in a process record did not follow:
		 * naming a barrier would not help then. */
		if (nf && *nf) {
			fputs("Processes the target started were not followed: ", f);
			sb_text_str(f, nf);
			fputs(".\nTheir work is not in this profile: record with --follow (the "
			      "default with -- CMD), or record the program itself.\n\n", f);
		}
		else
			fputs("If the program builds its own barriers, name them with --barrier "
			      "SYMBOL, or --barrier FILE:LINE for an inline\none (a BARRIER macro: "
			      "the line of its condition waits).\n\n", f);
		return 0;
	}
	if (!r->order)
		return -1;
	fprintf(f, "Parallel sections by %s (lost = thread-time idle at the closing sync; "
		"imbalance = mean idle fraction, LIME)\n", sorted_by->name);
	fprintf(f, "%3s ", "#");
	for (size_t c = 0; c < NCOLUMNS; c++)
		fprintf(f, "%-*s ", columns[c].width, columns[c].name);
	fputc('\n', f);
	for (size_t k = 0; k < p->nsections; k++) {
		fprintf(f, "%3zu ", k + 1);
		for (size_t c = 0; c < NCOLUMNS; c++) {
			columns[c].print(p, &p->sections[r->order[k]], buf, sizeof(buf));
			fprintf(f, "%-*s ", columns[c].width, buf);
		}
		fputc('\n', f);
	}
	fputc('\n', f);
	for (size_t k = 0; k < p->nsections && k < r->o->top; k++)
		section_detail(p, &p->sections[r->order[k]], k + 1, f);
	return 0;
}

static int sections_json(const struct sb_report_ctx *r, struct sb_json *j)
{
	const struct sb_profile *p = r->p;
	size_t *order = sb_summary_sections_ranked(p);
	FILE *f = j->f;

	sb_json_member(j, "sections");
	fputc('[', f);
	for (size_t k = 0; order && k < p->nsections; k++) {
		const struct sb_section *s = &p->sections[order[k]];

		fprintf(f, "%s\n    {", k ? "," : "");
		sb_json_loc_fields(f, p, (int32_t)s->loc);
		/* section_index: the key of the causes' "section_index"
		 * (two sections may close at one line) */
		fprintf(f, ", \"section_index\": %zu, \"kind\": \"%s\", \"instances\": %llu, "
			"\"threads\": %u, \"imbalance_pct\": %.3f, \"lost_ns\": %llu, "
			"\"per_thread\": [", order[k], sb_section_kind_name(s->kind), (unsigned long long)s->ninstances,
			s->nthreads, sb_summary_imbalance_pct(s), (unsigned long long)s->lost_ns);
		for (uint32_t t = 0; t < s->nthreads; t++)
			fprintf(f, "%s{\"tid\": %u, \"busy_ns\": %llu, \"wait_ns\": %llu}",
				t ? ", " : "", s->per_thread[t].tid,
				(unsigned long long)s->per_thread[t].busy_ns,
				(unsigned long long)s->per_thread[t].wait_ns);
		fputs("]}", f);
	}
	fputs(p->nsections ? "\n  ]" : "]", f);
	free(order);
	return 0;
}

static const char *const bar_vars[] = { "busy", "wait", "blocked" };
static const char *const bar_names[] = { "busy (on CPU)", "waiting at the closing sync",
					 "blocked inside (locks, I/O, no CPU)" };

/* Per-thread busy / wait / blocked bars, all on the busiest thread's
 * scale. */
static void html_threads(const struct sb_section *s, FILE *f)
{
	double scale = 0;
	char b1[32], b2[32];

	for (uint32_t t = 0; t < s->nthreads; t++) {
		const struct sb_thread_time *x = &s->per_thread[t];
		double all = (double)(x->wall_ns > x->busy_ns + x->wait_ns ? x->wall_ns :
				      x->busy_ns + x->wait_ns);

		scale = all > scale ? all : scale;
	}
	fputs("<div class=\"scroll\"><table><tr><th class=\"n\">thread</th>"
	      "<th style=\"width:55%\">busy / wait / blocked</th><th class=\"n\">busy</th>"
	      "<th class=\"n\">wait</th></tr>\n", f);
	for (uint32_t t = 0; t < s->nthreads; t++) {
		const struct sb_thread_time *x = &s->per_thread[t];
		uint64_t used = x->busy_ns + x->wait_ns;
		double parts[3] = { (double)x->busy_ns, (double)x->wait_ns,
				    x->wall_ns > used ? (double)(x->wall_ns - used) : 0 };

		sb_fmt_ns(x->busy_ns, b1, sizeof(b1));
		sb_fmt_ns(x->wait_ns, b2, sizeof(b2));
		fprintf(f, "<tr><td class=\"n\">%u</td><td>", x->tid);
		sb_html_bar(f, parts, bar_vars, bar_names, 3, scale);
		fprintf(f, "</td><td class=\"n\">%s</td><td class=\"n\">%s</td></tr>\n", b1, b2);
	}
	fputs("</table></div>\n", f);
}

/* The section's waits by what they waited for: its closing primitive,
 * and blocked inside it (the waits table has them by call site). */
static void html_waits(const struct sb_section *s, FILE *f)
{
	uint64_t wait = 0, blocked = 0;
	char a[32], b[32];

	for (uint32_t t = 0; t < s->nthreads; t++) {
		const struct sb_thread_time *x = &s->per_thread[t];
		uint64_t used = x->busy_ns + x->wait_ns;

		wait += x->wait_ns;
		blocked += x->wall_ns > used ? x->wall_ns - used : 0;
	}
	sb_fmt_ns(wait, a, sizeof(a));
	sb_fmt_ns(blocked, b, sizeof(b));
	fprintf(f, "<p>Its waits, all threads: %s at its closing %s; %s blocked inside it "
		"(locks, condition variables, I/O, waiting for a CPU: by call site under "
		"<a href=\"#locks\">contended locks</a>).</p>\n", a, sb_section_kind_name(s->kind),
		b);
}

#define HEAT_COLUMNS 240   /* instances drawn (evenly picked beyond) */
#define HEAT_ROWS 64       /* threads drawn */

/* The stored instances over time: a row per thread, a column per
 * instance, darker where the thread was busy for more of it. */
static void html_heat(const struct sb_profile *p, size_t si, FILE *f)
{
	const struct sb_section *s = &p->sections[si];
	size_t n = 0, col = 0, step;
	uint32_t rows = s->nthreads < HEAT_ROWS ? s->nthreads : HEAT_ROWS;

	for (size_t i = 0; i < p->ninstances; i++)
		n += p->instances[i].section == si;
	fputs("<h3>Instances over time</h3>\n", f);
	if (!n || !rows) {
		fputs("<p class=\"none\">no stored instances</p>\n", f);
		return;
	}
	step = (n + HEAT_COLUMNS - 1) / HEAT_COLUMNS;
	fprintf(f, "<p>%zu stored instance%s of %llu%s; a row per thread (as in the table), "
		"darker: busy for more of the instance.</p>\n", n, n == 1 ? "" : "s",
		(unsigned long long)s->ninstances, step > 1 ? ", every few drawn" : "");
	fprintf(f, "<svg class=\"chart\" viewBox=\"0 0 %zu %u\" preserveAspectRatio=\"none\" "
		"style=\"height:%upx\" role=\"img\"><title>busy fraction per thread and "
		"instance</title>", (n + step - 1) / step, rows, rows * 8 < 40 ? 40 : rows * 8);
	for (size_t i = 0, k = 0; i < p->ninstances; i++) {
		const struct sb_instance *in = &p->instances[i];

		if (in->section != si || k++ % step)
			continue;
		for (uint32_t r = 0; r < rows; r++)
			for (uint32_t j = 0; j < in->nthreads; j++) {
				const struct sb_thread_time *x = &in->per_thread[j];
				double all = (double)(x->wall_ns > x->busy_ns + x->wait_ns ?
						      x->wall_ns : x->busy_ns + x->wait_ns);

				if (x->tid != s->per_thread[r].tid)
					continue;
				fprintf(f, "<rect x=\"%zu\" y=\"%u\" width=\"1\" height=\"1\" "
					"fill=\"var(--busy)\" fill-opacity=\"%.2f\"/>", col, r,
					all > 0 ? 0.1 + 0.9 * (double)x->busy_ns / all : 0);
				break;
			}
		col++;
	}
	fputs("</svg>\n", f);
}

static void source_note(void *src, FILE *m)
{
	sb_source_note(src, m);
}

static int sections_html(const struct sb_report_ctx *r, FILE *f)
{
	const struct sb_profile *p = r->p;
	struct sb_source *src;
	char loc[512], b[32];

	if (!p->nsections)
		return 1;
	if (!r->order || !(src = sb_source_open(p, r->o)))
		return -1;
	fprintf(f, "<p>%zu section%s ranked by lost thread-time (idle at the closing sync); "
		"imbalance: the mean idle fraction (LIME). Open one for its threads, its "
		"instances over time and the causes of its imbalance.</p>\n", p->nsections,
		p->nsections == 1 ? "" : "s");
	sb_html_key(f, bar_vars, bar_names, 3);
	fputs("<div class=\"hdr\"><span>#</span><span>section</span><span class=\"opt\">kind"
	      "</span><span class=\"opt\">instances</span><span class=\"opt\">imbalance</span>"
	      "<span>lost</span><span>threads: busy / wait</span></div>\n", f);
	for (size_t k = 0; k < p->nsections; k++) {
		size_t si = r->order[k];
		const struct sb_section *s = &p->sections[si];
		double parts[3] = { 0, 0, 0 }, all;

		for (uint32_t t = 0; t < s->nthreads; t++) {
			parts[0] += (double)s->per_thread[t].busy_ns;
			parts[1] += (double)s->per_thread[t].wait_ns;
		}
		all = parts[0] + parts[1];
		sb_loc_format_section(p, si, loc, sizeof(loc));
		sb_fmt_ns(s->lost_ns, b, sizeof(b));
		/* the first open: the page's answer at a glance */
		fprintf(f, "<details class=\"sec\" id=\"section-%zu\"%s><summary><span>%zu</span>"
			"<span>", k + 1, k ? "" : " open", k + 1);
		sb_html_str(f, loc);
		fprintf(f, "</span><span class=\"opt\">%s</span><span class=\"opt\">%llu</span>"
			"<span class=\"opt\">%.1f%%</span><span>%s</span><span>",
			sb_section_kind_name(s->kind), (unsigned long long)s->ninstances,
			sb_summary_imbalance_pct(s), b);
		sb_html_bar(f, parts, bar_vars, bar_names, 2, all);
		fputs("</span></summary>\n<div class=\"body\">\n", f);
		fprintf(f, "<h3>Threads (%u)</h3>\n", s->nthreads);
		html_threads(s, f);
		html_waits(s, f);
		html_heat(p, si, f);
		sb_report_causes_html(r, (uint32_t)si, src, f);
		fputs("</div></details>\n", f);
	}
	sb_html_capture(f, source_note, src, "<p class=\"none\">", "</p>\n");
	sb_source_close(src);
	return ferror(f) ? -1 : 0;
}

const struct sb_report_view sb_view_sections = {
	.name = "sections",
	.text = sections_text,
	.json = sections_json,
	.title = "Parallel sections",
	.html = sections_html,
};
