// SPDX-License-Identifier: MIT
/*
 * The Speedup stacks view (`scalebpf stack` profiles, analysis/stack/
 * stack.h): per phase and thread count the measured and perfect speedup
 * and what the difference is made of (cache, memory, synchronization
 * split into lock, barrier and imbalance, residual), as a text bar and
 * a one-line reading.
 *
 * JSON: stacks[{phase (its label), location, function, address (as its
 * section's in sections[]), threads, speedup_measured, speedup_perfect,
 * speedup_sync_free, speedup_pirate (null without a pirate),
 * components{cache, memory, sync, residual} (cache null without a pirate:
 * memory then holds both), sync_detail{lock, barrier, imbalance},
 * times_ns{base, time, nolock, free, imbalance}, pirate{kind:
 * "real"|"virtual"|"none", bytes, held, slowdown}}], phases in profile
 * order, thread counts ascending; stack_program{serial_fraction, runs[
 * {threads, time_ns, speedup_measured, speedup_amdahl}]}: the whole
 * program's speedup beside Amdahl's limit from its serial part (the time
 * outside every phase at one thread).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "stack/stack.h"

static const char *const pirate_names[SB_STACK_PIRATE_MAX] = { "none", "virtual", "real" };

#define PROGRAM_RUNS 16

/* The program's runs (stack_threads, stack_program_T_ns): their counts
 * and times, the one-thread run's first; *serial the fraction of it
 * outside every phase.  0 when the profile does not say (an older
 * stack's, or no one-thread time). */
static size_t program_runs(const struct sb_profile *p, unsigned *t, uint64_t *ns, double *serial)
{
	const char *list = sb_profile_meta_get(p, "stack_threads"), *c = list;
	char key[64];
	uint64_t par;
	size_t n = 0;

	while (c && *c && n < PROGRAM_RUNS) {
		char *end;
		unsigned long v = strtoul(c, &end, 10);

		if (end == c || v == 0 || v > 4096)
			break;
		snprintf(key, sizeof(key), "stack_program_%lu_ns", v);
		if ((ns[n] = sb_profile_meta_get_u64(p, key)))
			t[n++] = (unsigned)v;
		c = *end == ',' ? end + 1 : end;
	}
	if (!n || t[0] != 1)
		return 0;
	par = sb_profile_meta_get_u64(p, "stack_parallel_1_ns");
	*serial = par < ns[0] ? 1 - (double)par / (double)ns[0] : 0;
	return n;
}

static void program_text(const struct sb_profile *p, FILE *f)
{
	unsigned t[PROGRAM_RUNS];
	uint64_t ns[PROGRAM_RUNS];
	double serial;
	size_t n = program_runs(p, t, ns, &serial);
	char a[32];

	if (!n)
		return;
	sb_fmt_ns(ns[0], a, sizeof(a));
	fprintf(f, "program: %s at one thread, %.1f%% of it outside every phase (serial)\n", a,
		100 * serial);
	for (size_t k = 1; k < n; k++)
		fprintf(f, "  %3u: %.2f measured; Amdahl's limit %.2f of %u\n", t[k],
			(double)ns[0] / (double)ns[k], sb_stack_amdahl(serial, t[k]), t[k]);
}

static void program_json(const struct sb_profile *p, struct sb_json *j)
{
	unsigned t[PROGRAM_RUNS];
	uint64_t ns[PROGRAM_RUNS];
	double serial;
	size_t n = program_runs(p, t, ns, &serial);

	if (!n)
		return;
	sb_json_member(j, "stack_program");
	fprintf(j->f, "{\"serial_fraction\": %.6f, \"runs\": [", serial);
	for (size_t k = 0; k < n; k++)
		fprintf(j->f, "%s{\"threads\": %u, \"time_ns\": %llu, \"speedup_measured\": %.4f, "
			"\"speedup_amdahl\": %.4f}", k ? ", " : "", t[k], (unsigned long long)ns[k],
			(double)ns[0] / (double)ns[k], sb_stack_amdahl(serial, t[k]));
	fputs("]}", j->f);
}

static void stack_of(const struct sb_stack_row *r, struct sb_stack *s)
{
	struct sb_stack_times t = {
		.threads = r->threads, .base_ns = r->base_ns, .time_ns = r->time_ns,
		.nolock_ns = r->nolock_ns, .free_ns = r->free_ns,
		.imbalance_ns = r->imbalance_ns, .pirate = r->pirate,
		.slowdown = (double)r->slowdown_ppm / 1e6,
	};

	if (sb_stack_compute(&t, s))
		memset(s, 0, sizeof(*s));
}

/* A bar of BAR_CELLS for the perfect speedup: measured '#', cache 'c',
 * memory 'm', sync 's', residual '?' (a profile may say anything: each
 * part is clamped into the bar, NaN as 0). */
#define BAR_CELLS 48

static void bar(FILE *f, const struct sb_stack *s)
{
	const double parts[5] = { s->measured, s->cache, s->memory, s->sync,
				  fabs(s->residual) };
	const char marks[5] = { '#', 'c', 'm', 's', '?' };
	int cells = 0;

	fputs("    |", f);
	for (int k = 0; k < 5 && s->perfect > 0; k++) {
		double v = parts[k] / s->perfect * BAR_CELLS;
		int n = v > 0 ? (v < BAR_CELLS ? (int)lround(v) : BAR_CELLS) : 0;

		for (; n > 0 && cells < BAR_CELLS; n--, cells++)
			fputc(marks[k], f);
	}
	for (; cells < BAR_CELLS; cells++)
		fputc(' ', f);
	fputs("|\n", f);
}

/* "2 threads: 1.17 of the lost 1.22 is synchronization, mostly lock
 * waits": the largest component and, for synchronization, its largest
 * part. */
static void reading(FILE *f, const struct sb_profile *p, const struct sb_stack_row *r,
		    const struct sb_stack *s)
{
	double lost = s->perfect - s->measured;
	const char *what = "synchronization";
	double big = s->sync;
	char loc[256];

	if (s->cache > big) {
		big = s->cache;
		what = "shared-cache capacity";
	}
	if (s->memory > big) {
		big = s->memory;
		what = s->cache_known ? "memory bandwidth" : "cache and memory (no pirate to "
							    "tell them apart)";
	}
	if (lost < 0.05 * s->perfect) {
		fprintf(f, "    %u threads: scales (%.2f of %.0f)\n", r->threads, s->measured,
			s->perfect);
		return;
	}
	fprintf(f, "    %u threads: %.2f of the lost %.2f is %s", r->threads, big, lost, what);
	if (big == s->sync && s->sync > 0) {
		sb_loc_format_section(p, r->section, loc, sizeof(loc));
		if (s->lock >= s->barrier && s->lock >= s->imbalance)
			fputs(", mostly waiting for locks inside the phase", f);
		else if (s->imbalance >= s->barrier)
			fputs(", mostly imbalance: threads wait for each instance's slowest at ", f);
		else
			fputs(", mostly the closing synchronization itself at ", f);
		if (!(s->lock >= s->barrier && s->lock >= s->imbalance))
			sb_text_str(f, loc);
	}
	fputc('\n', f);
}

/* Which pirate a row's cache component came from, and what it left. */
static void pirate_line(FILE *f, const struct sb_stack_row *row)
{
	char b[32];

	sb_fmt_bytes(row->pirate_bytes, b, sizeof(b));
	if (row->pirate == SB_STACK_PIRATE_REAL && !row->held)
		fprintf(f, "       pirate: real, did not hold its set: discarded (the thread had "
			"more than %s of cache)\n", b);
	else if (row->pirate == SB_STACK_PIRATE_REAL)
		fprintf(f, "       pirate: real, %s of cache left to the profiled thread, held\n", b);
	else if (row->pirate == SB_STACK_PIRATE_VIRTUAL)
		fprintf(f, "       pirate: virtual, a thread's share of the cache %s (predicted "
			"from the cache profile)\n", b);
	else
		fputs("       pirate: none (no cache profile of the phase)\n", f);
}

static int stack_text(const struct sb_report_ctx *r, FILE *f)
{
	const struct sb_profile *p = r->p;
	uint32_t last = UINT32_MAX;

	if (!p->nstack)
		return 0;
	fputs("Speedup stacks: each phase's speedup at T threads against the perfect T, "
	      "and what the difference is (runs at ", f);
	/* (the profile's string: escaped, as every string a profile carries) */
	sb_text_str(f, sb_profile_meta_get(p, "stack_threads"));
	fputs(" threads)\n", f);
	fputs("  columns: speedup measured, synchronization-free, with the pirate; lost to "
	      "cache, memory, sync (lock/barrier/imbalance), residual\n"
	      "  bar: # measured, c cache, m memory, s synchronization, ? residual\n", f);
	program_text(p, f);
	for (size_t i = 0; i < p->nstack; i++) {
		const struct sb_stack_row *row = &p->stack[i];
		struct sb_stack s;
		char loc[256], t[32];

		if (row->section != last) {
			sb_loc_format_section(p, row->section, loc, sizeof(loc));
			sb_fmt_ns(row->base_ns, t, sizeof(t));
			fputs("phase ", f);
			sb_text_str(f, loc);
			fprintf(f, ": %s at one thread\n", t);
			last = row->section;
		}
		stack_of(row, &s);
		fprintf(f, "  %3u: %.2f (free %.2f", row->threads, s.measured, s.free_est);
		if (s.cache_known)
			fprintf(f, ", pirate %.2f", s.pirate_est);
		fprintf(f, ") of %.0f; cache %s%.2f, memory %.2f, sync %.2f (%.2f/%.2f/%.2f), "
			"residual %+.2f\n", s.perfect, s.cache_known ? "" : "?", s.cache, s.memory,
			s.sync, s.lock, s.barrier, s.imbalance, s.residual);
		if (row->threads > 1) {
			pirate_line(f, row);
			bar(f, &s);
			reading(f, p, row, &s);
		}
	}
	fputc('\n', f);
	return 0;
}

static int stack_json(const struct sb_report_ctx *r, struct sb_json *j)
{
	const struct sb_profile *p = r->p;

	if (!p->nstack)
		return 0;
	sb_json_member(j, "stacks");
	fputc('[', j->f);
	for (size_t i = 0; i < p->nstack; i++) {
		const struct sb_stack_row *row = &p->stack[i];
		struct sb_stack s;
		char loc[256];

		stack_of(row, &s);
		sb_loc_format_section(p, row->section, loc, sizeof(loc));
		fprintf(j->f, "%s\n    {\"phase\": ", i ? "," : "");
		sb_json_str(j->f, loc);
		/* the section's own fields: its location and function as the
		 * sections array has them */
		fputs(", ", j->f);
		sb_json_loc_fields(j->f, p, (int32_t)p->sections[row->section].loc);
		fprintf(j->f, ", \"threads\": %u, \"speedup_measured\": %.4f, "
			"\"speedup_perfect\": %.4f, \"speedup_sync_free\": %.4f, "
			"\"speedup_pirate\": ", row->threads, s.measured, s.perfect, s.free_est);
		if (s.cache_known)
			fprintf(j->f, "%.4f", s.pirate_est);
		else
			fputs("null", j->f);
		fputs(", \"components\": {\"cache\": ", j->f);
		if (s.cache_known)
			fprintf(j->f, "%.4f", s.cache);
		else
			fputs("null", j->f);
		fprintf(j->f, ", \"memory\": %.4f, \"sync\": %.4f, \"residual\": %.4f}, "
			"\"sync_detail\": {\"lock\": %.4f, \"barrier\": %.4f, \"imbalance\": %.4f}, "
			"\"times_ns\": {\"base\": %llu, \"time\": %llu, \"nolock\": %llu, "
			"\"free\": %llu, \"imbalance\": %llu}, \"pirate\": {\"kind\": \"%s\", "
			"\"bytes\": %llu, \"held\": %s, \"slowdown\": %.6f}}",
			s.memory, s.sync, s.residual, s.lock, s.barrier, s.imbalance,
			(unsigned long long)row->base_ns, (unsigned long long)row->time_ns,
			(unsigned long long)row->nolock_ns, (unsigned long long)row->free_ns,
			(unsigned long long)row->imbalance_ns,
			row->pirate < SB_STACK_PIRATE_MAX ? pirate_names[row->pirate] : "?",
			(unsigned long long)row->pirate_bytes, row->held ? "true" : "false",
			(double)row->slowdown_ppm / 1e6);
	}
	fputs("\n  ]", j->f);
	program_json(p, j);
	return 0;
}

static const char *const stack_vars[] = { "busy", "cache", "memory", "sync", "residual" };
static const char *const stack_names[] = { "measured", "cache", "memory bandwidth",
					   "synchronization", "residual" };

struct reading_capture {
	const struct sb_profile *p;
	const struct sb_stack_row *row;
	const struct sb_stack *s;
};

static void cap_reading(void *v, FILE *m)
{
	struct reading_capture *x = v;

	reading(m, x->p, x->row, x->s);
}

static void cap_program(void *p, FILE *m)
{
	program_text(p, m);
}

/* Per phase, a stacked bar per thread count above one: the perfect
 * speedup split into measured, cache, memory, synchronization and the
 * residual; the reading beside it. */
static int stack_html(const struct sb_report_ctx *r, FILE *f)
{
	const struct sb_profile *p = r->p;
	uint32_t last = UINT32_MAX;

	if (!p->nstack)
		return 1;
	sb_html_capture(f, cap_program, (void *)p, "<pre>", "</pre>\n");
	sb_html_key(f, stack_vars, stack_names, 5);
	for (size_t i = 0; i < p->nstack; i++) {
		const struct sb_stack_row *row = &p->stack[i];
		struct reading_capture x = { .p = p, .row = row };
		struct sb_stack s;
		double parts[5];
		char loc[256];

		if (row->section != last) {
			if (last != UINT32_MAX)
				fputs("</table></div>\n", f);
			sb_loc_format_section(p, row->section, loc, sizeof(loc));
			fputs("<h3>", f);
			sb_html_str(f, loc);
			fputs("</h3>\n<div class=\"scroll\"><table><tr><th class=\"n\">threads</th>"
			      "<th class=\"n\">measured</th><th style=\"width:40%\">of perfect</th>"
			      "<th>reading</th></tr>\n", f);
			last = row->section;
		}
		if (row->threads < 2)
			continue;
		stack_of(row, &s);
		x.s = &s;
		parts[0] = s.measured;
		parts[1] = s.cache;
		parts[2] = s.memory;
		parts[3] = s.sync;
		parts[4] = fabs(s.residual);
		fprintf(f, "<tr><td class=\"n\">%u</td><td class=\"n\">%.2f of %.0f</td><td>",
			row->threads, s.measured, s.perfect);
		sb_html_bar(f, parts, stack_vars, stack_names, 5, s.perfect);
		fputs("</td><td>", f);
		sb_html_capture(f, cap_reading, &x, "", "");
		fputs("</td></tr>\n", f);
	}
	if (last != UINT32_MAX)
		fputs("</table></div>\n", f);
	return 0;
}

const struct sb_report_view sb_view_stack = {
	.name = "stacks",
	.text = stack_text,
	.json = stack_json,
	.title = "Speedup stacks",
	.html = stack_html,
};
