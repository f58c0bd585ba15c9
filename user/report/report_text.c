// SPDX-License-Identifier: MIT
/* The text report: where thread-time is lost, and on what. */
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
	return DESC(sb_section_imbalance_pct(a), sb_section_imbalance_pct(b));
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
	snprintf(b, n, "%.1f%%", sb_section_imbalance_pct(s));
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
	sb_loc_format(p, (int32_t)s->loc, b, n);
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

static const struct column *sort_column;
static const struct sb_profile *sort_profile;

static int by_column(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	int c = sort_column->compare(&sort_profile->sections[x], &sort_profile->sections[y]);

	return c ? c : cmp_lost(&sort_profile->sections[x], &sort_profile->sections[y]);
}

static void header(const struct sb_profile *p, const struct sb_report_opts *o, FILE *f)
{
	const char *cmd = sb_profile_meta_get(p, "command");
	const char *dur = sb_profile_meta_get(p, "duration_ns");
	const char *notes = sb_profile_meta_get(p, "notes");
	char d[32];
	unsigned long long drops = 0;
	const char *keys[] = { "drops_probe", "drops_wait", "drops_thread", "drops_sample",
			       "drops_lbr", "drops_load" };
	const char *sampling = sb_profile_meta_get(p, "sampling");
	size_t nolines;

	sb_fmt_ns(dur ? strtoull(dur, NULL, 10) : 0, d, sizeof(d));
	fprintf(f, "scalebpf report: %s\n", o->input);
	fprintf(f, "  target:   %s (pid %s), recorded %s, %zu threads, stopped: %s\n",
		cmd && *cmd ? cmd : sb_profile_meta_get(p, "executable"),
		sb_profile_meta_get(p, "pid"), d, p->nthreads,
		sb_profile_meta_get(p, "stop_reason"));
	fprintf(f, "  machine:  %s, %s CPUs, %s; PMU: %s\n", sb_profile_meta_get(p, "kernel"),
		sb_profile_meta_get(p, "ncpus"), sb_profile_meta_get(p, "cpu"),
		sb_profile_meta_get(p, "pmu"));
	fprintf(f, "  events:   %s\n", sb_profile_meta_get(p, "event_sources"));
	fprintf(f, "  sampling: %s\n", sampling ? sampling : "software (cpu-clock)");
	if (sb_profile_meta_get(p, "hw_loads_top") && *sb_profile_meta_get(p, "hw_loads_top"))
		fprintf(f, "  loads:    %s\n", sb_profile_meta_get(p, "hw_loads_top"));
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const char *v = sb_profile_meta_get(p, keys[i]);

		drops += v ? strtoull(v, NULL, 10) : 0;
	}
	if (drops)
		fprintf(f, "  WARNING:  %llu records were dropped (ring buffer full): totals are "
			"low; record again with a larger --ringbuf-mb\n", drops);
	if (notes && *notes)
		fprintf(f, "  notes:    %s\n", notes);
	nolines = 0;
	for (size_t i = 0; i < p->nsections; i++)
		nolines += !p->locs[p->sections[i].loc].line;
	if (nolines)
		fprintf(f, "  WARNING:  %zu of %zu sections have no source line (no debug info): "
			"they show as addresses; rebuild the program with -g\n",
			nolines, p->nsections);
	sb_report_addrs_text(p, f);
	fputc('\n', f);
}

static void bar(FILE *f, uint64_t busy, uint64_t wait, uint64_t scale, int width)
{
	int nb = scale ? (int)((double)busy * width / (double)scale + 0.5) : 0;
	int nw = scale ? (int)((double)wait * width / (double)scale + 0.5) : 0;

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
	uint64_t scale = 0;
	uint32_t busiest = 0, idlest = 0;
	char loc[512], b1[32], b2[32];

	sb_loc_format(p, (int32_t)s->loc, loc, sizeof(loc));
	fprintf(f, "#%zu %s, closed at %s: %llu instances, %u threads, imbalance %.1f%%\n",
		rank, sb_section_kind_name(s->kind), loc, (unsigned long long)s->ninstances,
		s->nthreads, sb_section_imbalance_pct(s));
	for (uint32_t t = 0; t < s->nthreads; t++) {
		const struct sb_thread_time *x = &s->per_thread[t];

		if (x->busy_ns + x->wait_ns > scale)
			scale = x->busy_ns + x->wait_ns;
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

static int sections(const struct sb_profile *p, const struct sb_causes *c,
		    const struct sb_report_opts *o, FILE *f)
{
	size_t *order = sb_sections_ranked(p);
	char buf[512];

	if (!p->nsections) {
		fputs("No parallel sections were recorded: no barrier, OpenMP region or joined "
		      "thread group completed while recording.\nIf the program builds its own "
		      "barriers, name them with --barrier SYMBOL.\n\n", f);
		return 0;
	}
	if (!order)
		return -1;
	sort_column = &columns[0];
	for (size_t c = 0; o->sort && c < NCOLUMNS; c++)
		if (columns[c].compare && !strcasecmp(columns[c].name, o->sort))
			sort_column = &columns[c];
	sort_profile = p;
	qsort(order, p->nsections, sizeof(*order), by_column);
	fprintf(f, "Parallel sections by %s (lost = thread-time idle at the closing sync; "
		"imbalance = mean idle fraction, LIME)\n", sort_column->name);
	fprintf(f, "%3s ", "#");
	for (size_t c = 0; c < NCOLUMNS; c++)
		fprintf(f, "%-*s ", columns[c].width, columns[c].name);
	fputc('\n', f);
	for (size_t k = 0; k < p->nsections; k++) {
		fprintf(f, "%3zu ", k + 1);
		for (size_t c = 0; c < NCOLUMNS; c++) {
			columns[c].print(p, &p->sections[order[k]], buf, sizeof(buf));
			fprintf(f, "%-*s ", columns[c].width, buf);
		}
		fputc('\n', f);
	}
	fputc('\n', f);
	for (size_t k = 0; k < p->nsections && k < o->top; k++)
		section_detail(p, &p->sections[order[k]], k + 1, f);
	if (sb_report_causes_text(p, c, order, o->top, f)) {
		free(order);
		return -1;
	}
	free(order);
	return 0;
}

static int waits(const struct sb_profile *p, FILE *f)
{
	struct sb_prim_total prims[SB_PRIM_MAX];
	size_t np = sb_waits_by_prim(p, prims);
	struct sb_lock_total *locks;
	long nl = sb_locks_ranked(p, &locks);
	char b[32], loc[512];

	if (nl < 0)
		return -1;
	fputs("Wait time by primitive\n", f);
	fprintf(f, "  %-16s %12s %12s\n", "primitive", "count", "wait");
	for (size_t i = 0; i < np; i++) {
		sb_fmt_ns(prims[i].wait_ns, b, sizeof(b));
		fprintf(f, "  %-16s %12llu %12s\n", sb_prim_name(prims[i].prim),
			(unsigned long long)prims[i].count, b);
	}
	if (!np)
		fputs("  (no waits recorded)\n", f);
	fputs("\nContended locks and condition variables (by wait time)\n", f);
	fprintf(f, "  %-13s %12s %12s  %s\n", "primitive", "contentions", "wait", "call site");
	for (long i = 0; i < nl && i < 10; i++) {
		sb_fmt_ns(locks[i].wait_ns, b, sizeof(b));
		sb_loc_format(p, locks[i].loc, loc, sizeof(loc));
		fprintf(f, "  %-13s %12llu %12s  %s\n", sb_prim_name(locks[i].prim),
			(unsigned long long)locks[i].contentions, b, loc);
	}
	if (!nl)
		fputs("  (no contention recorded)\n", f);
	free(locks);
	return 0;
}

int sb_report_text(const struct sb_profile *p, const struct sb_causes *c,
		   const struct sb_report_opts *o, FILE *f)
{
	header(p, o, f);
	if (sections(p, c, o, f) || waits(p, f))
		return -1;
	return ferror(f) ? -1 : 0;
}
