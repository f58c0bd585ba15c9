// SPDX-License-Identifier: MIT
/*
 * The Cache view: per profiled region, CHiP's hit ratio at 16 cache sizes
 * (analysis/chip/chip.h), the DRAM bandwidth it needs serially and at 2,
 * 4 and N threads beside the linear (serial × N) need and the machine's
 * measured bandwidth, and a verdict: scales / cache-bound / bandwidth-
 * bound from T threads.
 *
 * Regions: sections, --region functions, the whole run (profile.h).
 * JSON: chip[{region, kind, mode, threads_profiled, cache_sizes[], hit_ratio[],
 * accesses, rate, bandwidth_serial, bandwidth{"2": .., "4": .., "N": ..},
 * bandwidth_linear{..}, slowdown{..} (per reference, latency-bound;
 * 0 without the machine's latencies), machine{llc_bytes, llc_effective_bytes, bandwidth,
 * from}, verdict, verdict_from_threads, confidence, time_from}], regions
 * ranked by DRAM traffic at the machine's cache size.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chip/chip.h"
#include "report.h"

/* The N of "2, 4 and N threads": the most threads a profiled section ran
 * with, at least the machine's CPUs. */
static unsigned n_threads(const struct sb_profile *p)
{
	unsigned n = (unsigned)sb_profile_meta_get_u64(p, "cpus");

	for (size_t i = 0; i < p->nchip; i++)
		if (p->chip[i].kind == SB_CHIP_KIND_SECTION && p->chip[i].section < p->nsections &&
		    p->sections[p->chip[i].section].nthreads > n)
			n = p->sections[p->chip[i].section].nthreads;
	return n;
}

/* (a sampled row's: its demand at the machine's cache, per second) */
static double miss_traffic(const struct sb_chip_summary *s)
{
	if (s->sampled)
		return s->bw_serial / (s->line ? s->line : 64);
	return sb_chip_total(s->est) - sb_chip_hits(s->est, s->depth_llc);
}

/* Rows by DRAM traffic at the machine's cache size, most first. */
static int by_traffic(const void *a, const void *b)
{
	const struct sb_chip_summary *x = a, *y = b;
	double u = miss_traffic(x), v = miss_traffic(y);

	return (u < v) - (u > v);
}

static struct sb_chip_summary *summaries(const struct sb_profile *p,
					 const struct sb_report_opts *o, size_t *n)
{
	struct sb_chip_summary *s = calloc(p->nchip ? p->nchip : 1, sizeof(*s));
	unsigned nt = n_threads(p);

	*n = 0;
	if (!s)
		return NULL;
	for (size_t i = 0; i < p->nchip; i++)
		if (!sb_chip_summarize(p, i, nt, o ? o->times : NULL, &s[*n]))
			(*n)++;
	qsort(s, *n, sizeof(*s), by_traffic);
	return s;
}

static double max_stderr(const struct sb_chip_summary *s)
{
	double m = 0;

	for (int d = 0; d < SB_CHIP_DEPTH; d++)
		m = s->hit_stderr[d] > m ? s->hit_stderr[d] : m;
	return m;
}

static const char *confidence(const struct sb_chip_summary *s, char *buf, size_t len)
{
	if (s->sampled)
		snprintf(buf, len, "sampled, experimental: %llu footprint probes (32-byte "
			 "granules: a line touched in one word shows half, so the demand of "
			 "word-random access is half its DRAM traffic; windows in the probed "
			 "thread's time on a CPU)", (unsigned long long)s->fp.probes);
	else if (s->mode == SB_CHIP_MODE_SAMPLED_PMU)
		snprintf(buf, len, "sampled: %llu sampled loads' reuses between two "
			 "watchpoint traps on 32 bytes of their line, counted by %s (StatStack), "
			 "hit ratios +-%.2f at most; %d of 16 sizes measured, the others lower "
			 "bounds (>=), whose bandwidths are then upper bounds; accesses from %s",
			 (unsigned long long)s->reuse_samples,
			 s->reuse_counter ? s->reuse_counter : "?", max_stderr(s),
			 __builtin_popcount(s->resolved),
			 s->reuse_accesses ? s->reuse_accesses : "?");
	else if (s->rate >= 1)
		snprintf(buf, len, "exact: every load and store");
	else
		snprintf(buf, len, "SHARDS at R = %.3g: lines sampled spatially (within 0.03 "
			 "of exact on the analytic tests)", s->rate);
	return buf;
}

static void verdict_text(const struct sb_chip_summary *s, FILE *f)
{
	char share[32];

	fprintf(f, "    verdict: %s", sb_chip_verdict_name(s->verdict));
	if (s->verdict == SB_CHIP_CACHE_BOUND) {
		sb_fmt_bytes(s->machine.llc_bytes / sb_chip_sharers(&s->machine, s->verdict_from), share,
			  sizeof(share));
		fprintf(f, " from %u threads: each thread's %s share of the cache no longer "
			"holds its working set, so DRAM traffic grows faster than the threads",
			s->verdict_from, share);
	} else if (s->verdict == SB_CHIP_BANDWIDTH_BOUND) {
		fprintf(f, " from %u threads: it would need more than the machine's %.1f GB/s",
			s->verdict_from, s->machine.bandwidth / 1e9);
	} else if (s->verdict == SB_CHIP_SCALES) {
		fprintf(f, " up to %u threads", s->max_threads);
	}
	fputc('\n', f);
}

/* ns of seconds, saturated: a crafted profile's times may not fit */
/* A double from a profile as a count: a crafted chunk can make it NaN,
 * negative or beyond 2^64, where a plain cast is undefined. */
static uint64_t u64_of(double x)
{
	return x >= 0 && x < 1.8e19 ? (uint64_t)x : x >= 1.8e19 ? UINT64_MAX : 0;
}

static uint64_t ns_of(double sec)
{
	return u64_of(sec * 1e9);
}

static const char *const kind_names[SB_CHIP_KIND_MAX] = { "section", "function", "run" };

/* What the row profiles, as the text and the JSON name it. */
static void region_label(const struct sb_profile *p, const struct sb_chip_summary *s,
			 char *buf, size_t len)
{
	if (s->kind == SB_CHIP_KIND_FUNCTION)
		snprintf(buf, len, "%s", s->region_name ? s->region_name : "?");
	else if (s->kind == SB_CHIP_KIND_RUN)
		snprintf(buf, len, "whole run");
	else
		sb_loc_format_section(p, s->section, buf, len);
}

/* Serially, at 2, 4 and N threads, linear, the machine's. */
static void bandwidth_text(const struct sb_chip_summary *s, FILE *f)
{
	fprintf(f, "    DRAM bandwidth: serial %.2f GB/s", s->bw_serial / 1e9);
	for (unsigned i = 0; i < s->npredict; i++)
		fprintf(f, "; %u threads %.2f GB/s (linear %.2f)", s->threads[i], s->bw_par[i] / 1e9,
			s->bw_linear[i] / 1e9);
	if (s->machine.bandwidth > 0)
		fprintf(f, "; machine %.1f GB/s", s->machine.bandwidth / 1e9);
	fputc('\n', f);
}

/* A sampled row: no hit ratio (no access count), the footprint curve
 * and the DRAM demand it implies by cache size, then as for exact. */
static void sampled_text(const struct sb_chip_summary *s, FILE *f)
{
	char a[32];

	fprintf(f, "    footprint (distinct bytes a thread touches in a window; %llu probes):",
		(unsigned long long)s->fp.probes);
	for (unsigned i = 0; i < s->fp.n; i++) {
		sb_fmt_bytes(u64_of(s->fp.bytes[i]), a, sizeof(a));
		fprintf(f, "%s %.3g ms %s", i % 4 ? "," : i ? "\n     " : "\n     ",
			s->fp.t[i] * 1e3, a);
		sb_fmt_bytes(u64_of(s->fp.err[i]), a, sizeof(a));
		fprintf(f, " (+-%s)", a);
	}
	fputs("\n    DRAM demand by cache size (bytes/s it lets through; <: at most, the cache "
	      "outgrows what the windows show):", f);
	for (int d = 0; d < SB_CHIP_DEPTH; d++) {
		sb_fmt_bytes(s->cache_bytes[d], a, sizeof(a));
		fprintf(f, "%s%s %s%.2f GB/s", d % 4 ? ", " : "\n      ", a,
			s->demand_resolved[d] ? "" : "<", s->demand[d] / 1e9);
	}
	fputs("\n    hit ratio: not measured (no PMU: accesses cannot be counted, and a hit "
	      "ratio would rest on a guess)\n", f);
	bandwidth_text(s, f);
	verdict_text(s, f);
	fputs("    (experimental: the footprint path is not yet validated against exact "
	      "footprints; use scalebpf cc --chip for numbers to act on)\n", f);
}

static void row_text(const struct sb_profile *p, const struct sb_chip_summary *s, size_t rank,
		     FILE *f)
{
	static const char ramp[] = " .:-=+*#%@";
	char loc[256], a[32], t[32];

	region_label(p, s, loc, sizeof(loc));
	sb_fmt_ns(ns_of(s->t_ser), t, sizeof(t));
	fprintf(f, "#%zu %s", rank, s->kind == SB_CHIP_KIND_FUNCTION ? "function " : "");
	sb_text_str(f, loc);
	if (s->kind == SB_CHIP_KIND_FUNCTION)
		fputs(" (--region: its outermost calls)", f);
	else if (s->kind == SB_CHIP_KIND_RUN)
		fputs(" (every access of every thread, in and out of sections)", f);
	if (s->sampled)
		fprintf(f, ": sampled while running, %u thread%s seen\n", s->threads_profiled,
			s->threads_profiled == 1 ? "" : "s");
	else
		fprintf(f, ": %llu accesses, %s busy, %u thread%s profiled\n",
			(unsigned long long)s->accesses, t, s->threads_profiled,
			s->threads_profiled == 1 ? "" : "s");
	if (s->sampled) {
		sampled_text(s, f);
		return;
	}
	sb_fmt_bytes(s->cache_bytes[0], a, sizeof(a));
	fprintf(f, "    hit ratio by cache size (%s steps): |", a);
	for (int d = 0; d < SB_CHIP_DEPTH; d++) {
		double h = s->hit_ratio[d];

		fputc(ramp[h > 0 ? (h < 1 ? (int)(h * 9 + 0.5) : 9) : 0], f);
	}
	fputs("|\n     ", f);
	for (int d = 0; d < SB_CHIP_DEPTH; d++) {
		sb_fmt_bytes(s->cache_bytes[d], a, sizeof(a));
		fprintf(f, "%s%s %s%.2f", d % 4 ? ", " : d ? "\n      " : " ", a,
			(s->resolved >> d) & 1 ? "" : ">=", s->hit_ratio[d]);
	}
	fputc('\n', f);
	bandwidth_text(s, f);
	if (s->npredict && s->slowdown[0] > 0) {
		fprintf(f, "    per reference, if each waits for its load (%.0f ns a cache hit, "
			"%.0f ns DRAM):", s->machine.lat_hit, s->machine.lat_miss);
		for (unsigned i = 0; i < s->npredict; i++)
			fprintf(f, "%s %u threads %.2fx", i ? "," : "", s->threads[i],
				s->slowdown[i]);
		fputc('\n', f);
	}
	verdict_text(s, f);
}

/* The --region functions' calls and times (cache hit profile or not),
 * and what a function without a call most likely is. */
static void regions_text(const struct sb_profile *p, FILE *f)
{
	const char *name;
	char t[32];

	for (uint32_t k = 0; k < SB_CHIP_MAX_REGIONS && (name = sb_chip_region_name(p, k)); k++) {
		static const enum sb_chip_region_field fields[6] = {
			SB_CHIP_REGION_CALLS, SB_CHIP_REGION_BUSY_NS, SB_CHIP_REGION_THREADS,
			SB_CHIP_REGION_OPEN, SB_CHIP_REGION_LOST, SB_CHIP_REGION_UNCOUNTED,
		};
		uint64_t v[6];

		for (int i = 0; i < 6; i++)
			v[i] = sb_chip_region_get(p, k, fields[i]);
		if (!k)
			fputs("\nRegions (--region): every outermost call of each function\n", f);
		fputs("  ", f);
		sb_text_str(f, name);
		if (!v[0]) {
			fprintf(f, ": no call recorded%s: the compiler may have inlined it into its "
				"callers (its symbol stays); name a caller, or check that it runs\n",
				v[3] ? " that returned" : "");
			continue;
		}
		sb_fmt_ns(v[1], t, sizeof(t));
		fprintf(f, ": %llu call%s, %s inside them, %llu thread%s", (unsigned long long)v[0],
			v[0] == 1 ? "" : "s", t, (unsigned long long)v[2], v[2] == 1 ? "" : "s");
		if (v[3])
			fprintf(f, "; %llu still open at the end (not counted)",
				(unsigned long long)v[3]);
		if (v[4])
			fprintf(f, "; %llu left without a return (longjmp, or records lost): not "
				"counted", (unsigned long long)v[4]);
		/* a --chip recording: calls of a thread whose counters were not
		 * known (it started before -p attached) have none */
		if (v[5] && sb_profile_meta_get(p, "chip_batches"))
			fprintf(f, "; %llu without cache counters (threads started before the "
				"recording)", (unsigned long long)v[5]);
		fputc('\n', f);
	}
}

static int cache_text(const struct sb_report_ctx *r, FILE *f)
{
	const struct sb_profile *p = r->p;
	struct sb_chip_summary *s;
	char a[32], b[32], c[320];
	size_t n;

	regions_text(p, f);
	if (!p->nchip)
		return 0;
	if (!(s = summaries(p, r->o, &n)))
		return -1;
	fputs("\nCache: hit ratio by cache size and the DRAM bandwidth each region needs as "
	      "threads are added (CHiP)\n", f);
	if (n) {
		sb_fmt_bytes(s[0].machine.llc_bytes, a, sizeof(a));
		sb_fmt_bytes(s[0].llc_nominal, b, sizeof(b));
		fprintf(f, "  machine: last-level cache %s%s%s%s, %s, from %s\n", a,
			s[0].llc_nominal ? " effective (" : "", s[0].llc_nominal ? b : "",
			s[0].llc_nominal ? " nominal)" : "",
			s[0].machine.cache_cpus == 1 ? "one per CPU (measured): threads do not "
			"divide it" : s[0].machine.cache_cpus ? "shared (measured): threads divide it" :
			"assumed shared by all threads", s[0].machine_from);
		fprintf(f, "  profile: %s; %s\n", sb_chip_mode_name(s[0].mode),
			confidence(&s[0], c, sizeof(c)));
		if (r->o && r->o->times) {
			size_t matched = 0;

			for (size_t i = 0; i < n; i++)
				matched += s[i].t_native;
			fprintf(f, "  times: %zu of %zu regions' from ", matched, n);
			sb_text_str(f, r->o->times_input);
			fputs(" (the plain build); the others' from this run\n", f);
		} else if (s[0].mode == SB_CHIP_MODE_EXACT) {
			fputs("  times: the instrumented run's busy time (its hooks slow it), so "
			      "bandwidths are lower bounds and verdicts conservative; give a "
			      "recording of the plain build with --times\n", f);
		}
	}
	for (size_t i = 0; i < n; i++)
		row_text(p, &s[i], i + 1, f);
	free(s);
	return 0;
}

/* {"2": v, "4": v, "N": v}: prec decimals */
static void json_bw(FILE *f, const struct sb_chip_summary *s, const double *v, int prec)
{
	fputc('{', f);
	for (unsigned i = 0; i < s->npredict; i++)
		fprintf(f, "%s\"%u\": %.*f", i ? ", " : "", s->threads[i], prec, v[i]);
	fputc('}', f);
}

static int cache_json(const struct sb_report_ctx *r, struct sb_json *j)
{
	const struct sb_profile *p = r->p;
	struct sb_chip_summary *s;
	char c[320];
	size_t n;

	if (!p->nchip)
		return 0;
	if (!(s = summaries(p, r->o, &n)))
		return -1;
	sb_json_member(j, "chip");
	fputs("[", j->f);
	for (size_t i = 0; i < n; i++) {
		char loc[256];

		region_label(p, &s[i], loc, sizeof(loc));
		fprintf(j->f, "%s\n    {\"region\": ", i ? "," : "");
		sb_json_str(j->f, loc);
		fprintf(j->f, ", \"kind\": \"%s\", \"mode\": \"%s\", \"threads_profiled\": %u, "
			"\"cache_sizes\": [", s[i].kind < SB_CHIP_KIND_MAX ? kind_names[s[i].kind] : "?",
			sb_chip_mode_name(s[i].mode), s[i].threads_profiled);
		for (int d = 0; d < SB_CHIP_DEPTH; d++)
			fprintf(j->f, "%s%llu", d ? ", " : "", (unsigned long long)s[i].cache_bytes[d]);
		fputs("], \"hit_ratio\": ", j->f);
		if (s[i].sampled) {   /* not measured: no access count */
			fputs("null, \"footprint\": [", j->f);
			for (unsigned k = 0; k < s[i].fp.n; k++)
				fprintf(j->f, "%s{\"window_ns\": %.0f, \"bytes\": %.0f, \"stderr\": %.0f}",
					k ? ", " : "", s[i].fp.t[k] * 1e9, s[i].fp.bytes[k], s[i].fp.err[k]);
			fputs("], \"demand\": [", j->f);
			for (int d = 0; d < SB_CHIP_DEPTH; d++)
				fprintf(j->f, "%s%.0f", d ? ", " : "", s[i].demand[d]);
			fputs("], \"demand_resolved\": [", j->f);
			for (int d = 0; d < SB_CHIP_DEPTH; d++)
				fprintf(j->f, "%s%s", d ? ", " : "", s[i].demand_resolved[d] ? "true" : "false");
			fputc(']', j->f);
		} else {
			fputc('[', j->f);
			for (int d = 0; d < SB_CHIP_DEPTH; d++)
				fprintf(j->f, "%s%.6f", d ? ", " : "", s[i].hit_ratio[d]);
			/* which are measured; the others are lower bounds */
			fputs("], \"hit_ratio_resolved\": [", j->f);
			for (int d = 0; d < SB_CHIP_DEPTH; d++)
				fprintf(j->f, "%s%s", d ? ", " : "",
					(s[i].resolved >> d) & 1 ? "true" : "false");
			fputc(']', j->f);
			if (s[i].mode == SB_CHIP_MODE_SAMPLED_PMU) {
				fprintf(j->f, ", \"reuse_samples\": %llu, \"hit_ratio_stderr\": [",
					(unsigned long long)s[i].reuse_samples);
				for (int d = 0; d < SB_CHIP_DEPTH; d++)
					fprintf(j->f, "%s%.6f", d ? ", " : "", s[i].hit_stderr[d]);
				fputc(']', j->f);
			}
		}
		fprintf(j->f, ", \"accesses\": %llu, \"rate\": %g, \"busy_ns\": %.0f, "
			"\"bandwidth_serial\": %.0f, \"bandwidth\": ",
			(unsigned long long)s[i].accesses, s[i].rate, s[i].t_ser * 1e9,
			s[i].bw_serial);
		json_bw(j->f, &s[i], s[i].bw_par, 0);
		fputs(", \"bandwidth_linear\": ", j->f);
		json_bw(j->f, &s[i], s[i].bw_linear, 0);
		fputs(", \"slowdown\": ", j->f);
		json_bw(j->f, &s[i], s[i].slowdown, 4);
		fprintf(j->f, ", \"machine\": {\"llc_bytes\": %llu, \"llc_effective_bytes\": %llu, "
			"\"bandwidth\": %.0f, \"from\": ", (unsigned long long)s[i].llc_nominal,
			(unsigned long long)s[i].machine.llc_bytes, s[i].machine.bandwidth);
		sb_json_str(j->f, s[i].machine_from);
		fprintf(j->f, "}, \"verdict\": \"%s\", \"verdict_from_threads\": %u, "
			"\"confidence\": ", sb_chip_verdict_name(s[i].verdict), s[i].verdict_from);
		sb_json_str(j->f, confidence(&s[i], c, sizeof(c)));
		fprintf(j->f, ", \"time_from\": \"%s\"}", s[i].t_native ? "plain recording" :
			s[i].mode == SB_CHIP_MODE_EXACT ? "instrumented run" : "recording");
	}
	fputs("\n  ]", j->f);
	free(s);
	return 0;
}

struct cache_capture {
	const struct sb_report_ctx *r;
	int ret;
};

static void cap_text(void *v, FILE *m)
{
	struct cache_capture *x = v;

	x->ret = cache_text(x->r, m);
}

#define HTML_REGIONS 12

/* A curve per region (the 12 with the most DRAM traffic): hit ratio by
 * cache size, or for a sampled profile without hit ratios the footprint
 * by window; the text view's numbers below. */
static int cache_html(const struct sb_report_ctx *r, FILE *f)
{
	const struct sb_profile *p = r->p;
	struct cache_capture x = { .r = r };
	struct sb_chip_summary *s;
	char label[320], lb[SB_CHIP_FP_WINDOWS > SB_CHIP_DEPTH ? SB_CHIP_FP_WINDOWS :
			    SB_CHIP_DEPTH][32];
	const char *labels[sizeof(lb) / sizeof(lb[0])];
	size_t n;

	if (!p->nchip)
		return 1;
	if (!(s = summaries(p, r->o, &n)))
		return -1;
	for (size_t i = 0; i < n && i < HTML_REGIONS; i++) {
		double y[sizeof(lb) / sizeof(lb[0])], top = 0;
		size_t m = 0;

		region_label(p, &s[i], label, sizeof(label));
		fputs("<h3>", f);
		sb_html_str(f, label);
		fprintf(f, ": %s</h3>\n", sb_chip_verdict_name(s[i].verdict));
		if (!s[i].sampled) {
			for (int d = 0; d < SB_CHIP_DEPTH; d++) {
				sb_fmt_bytes(s[i].cache_bytes[d], lb[m], sizeof(lb[m]));
				labels[m] = lb[m];
				y[m++] = s[i].hit_ratio[d];
			}
			sb_html_chart(f, y, labels, m, 1, "hit ratio", "hit ratio by cache size");
		} else {
			for (unsigned w = 0; w < s[i].fp.n && m < sizeof(lb) / sizeof(lb[0]); w++) {
				char t[32];

				sb_fmt_ns(ns_of(s[i].fp.t[w]), t, sizeof(t));
				snprintf(lb[m], sizeof(lb[m]), "%s", t);
				labels[m] = lb[m];
				y[m] = s[i].fp.bytes[w] / (1 << 20);
				top = y[m] > top ? y[m] : top;
				m++;
			}
			if (m)
				sb_html_chart(f, y, labels, m, top * 1.1, "MB touched",
					      "footprint by time window (sampled: no hit ratios)");
			else
				fputs("<p class=\"none\">no footprint windows</p>\n", f);
		}
	}
	free(s);
	if (sb_html_capture(f, cap_text, &x, "<details><summary>the numbers (as the text report "
			    "gives them)</summary><div class=\"scroll\"><pre>",
			    "</pre></div></details>\n"))
		return -1;
	return x.ret;
}

const struct sb_report_view sb_view_cache = {
	.name = "chip",
	.text = cache_text,
	.json = cache_json,
	.title = "Cache (CHiP)",
	.html = cache_html,
};
