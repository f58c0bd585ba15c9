// SPDX-License-Identifier: MIT
/* The "causes" view: LIME's ranked causes per section, with the source
 * lines around each one when the source may be read (report_source.c:
 * never a file a crafted profile chooses), for the first --top sections in
 * the table's order; JSON "causes" by rank, then score.  Each section says what its
 * verdict rests on (causes.h: sb_causes_evidence): samples per thread,
 * and when they are too few for the imbalance seen, how much longer to
 * record instead of "no significant cause"; JSON "evidence".  A cause
 * another one's cluster holds (same_cluster) is listed under it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "summary/summary.h"

/* The sampling rate, from the recorder's "... cpu-clock sampling: 999
 * Hz ..." (event_sources); 0 unknown. */
static unsigned sample_hz(const struct sb_profile *p)
{
	const char *s = sb_profile_meta_get(p, "event_sources"), *at;
	unsigned hz;

	if (!s || !(at = strstr(s, "sampling: ")) || sscanf(at, "sampling: %u Hz", &hz) != 1)
		return 0;
	return hz;
}

static const struct sb_causes_evidence *evidence_of(const struct sb_causes *c, uint32_t s)
{
	for (size_t i = 0; i < c->nev; i++)
		if (c->ev[i].section == s)
			return &c->ev[i];
	return NULL;
}

/* "N samples per thread over M instances": what the verdict rests on. */
static void evidence_line(const struct sb_profile *p, const struct sb_causes *c, uint32_t s,
			  FILE *f)
{
	const struct sb_causes_evidence *e = evidence_of(c, s);

	(void)p;
	if (!e)
		return;
	if (c->block_samples && e->counted_per_thread + 0.5 < e->samples_per_thread)
		/* ranked instances say where samples fell, not how many: the
		 * power rests on the others (causes_evidence.c) */
		fprintf(f, "  %.0f samples per thread over %u instance%s (%u threads); "
			"the verdict's power rests on %.0f of them\n",
			e->samples_per_thread, e->ninstances, e->ninstances == 1 ? "" : "s",
			e->nthreads, e->counted_per_thread);
	else if (c->block_samples)
		fprintf(f, "  %.0f samples per thread over %u instance%s (%u threads)\n",
			e->samples_per_thread, e->ninstances, e->ninstances == 1 ? "" : "s",
			e->nthreads);
	else if (c->exact_counts && e->verdict != SB_VERDICT_CAUSES)
		/* no control-flow cause: the hardware test's samples decide */
		fprintf(f, "  exact block counts over %u instance%s (%u threads); the hardware "
			"test rests on %.*f cpu-clock samples per thread\n", e->ninstances,
			e->ninstances == 1 ? "" : "s", e->nthreads,
			e->samples_per_thread < 10 ? 1 : 0, e->samples_per_thread);
	else
		fprintf(f, "  %s over %u instance%s (%u threads)\n",
			c->exact_counts ? "exact block counts" : "sampled edges", e->ninstances,
			e->ninstances == 1 ? "" : "s", e->nthreads);
}

static uint64_t busy_per_thread(const struct sb_section *sec)
{
	uint64_t busy = 0;

	for (uint32_t t = 0; t < sec->nthreads; t++)
		busy += sec->per_thread[t].busy_ns;
	return sec->nthreads ? busy / sec->nthreads : 0;
}

/* More time than this is no advice a user can take. */
#define TOO_LONG_S 86400.0
/* Nor this many times the run, for a section whose busy time in the whole
 * run is less than TOO_FEW_PERIODS sampling periods a thread: its few
 * samples come by chance (Poisson, mean below 4: the need extrapolated
 * from them is noise).  One period was too few: libgomp's fork section
 * includes the team's thread start-up in its first region, a millisecond
 * or two on a loaded machine, and CI then read 'record N s longer'. */
#define TOO_LONG_RUNS 100.0
#define TOO_FEW_PERIODS 4.0

/* Section s is too short for samples: see TOO_LONG_S, TOO_LONG_RUNS. */
static bool too_short(const struct sb_profile *p, uint32_t s, double more)
{
	const char *d = sb_profile_meta_get(p, "duration_ns");
	double run = d ? strtod(d, NULL) / 1e9 : 0;
	unsigned hz = sample_hz(p);

	if (!isfinite(more))
		return false;
	return more > TOO_LONG_S ||
	       (hz && run > 0 &&
		(double)busy_per_thread(&p->sections[s]) * hz < TOO_FEW_PERIODS * 1e9 &&
		more > TOO_LONG_RUNS * run);
}

/* "record ≈ N s longer or raise -F (now H Hz)" and a newline.  Exact
 * mode's analysis pools a bounded number of instances: no time known,
 * a longer run would not add enough (causes_evidence.c). */
static void more_time(const struct sb_profile *p, const struct sb_causes *c,
		      const struct sb_causes_evidence *e, FILE *f)
{
	unsigned hz = sample_hz(p);

	if (!isfinite(e->more_seconds) && c->exact_counts) {
		fputs("raise -F", f);
		if (hz)
			fprintf(f, " (now %u Hz)", hz);
		fputs(": a longer run adds too few samples to the instances analysed\n", f);
		return;
	}
	if (isfinite(e->more_seconds))
		fprintf(f, "record %s %.*f s longer or raise -F", e->more_at_least ? "at least" : "\u2248",
			e->more_seconds < 10 ? 1 : 0, e->more_seconds);
	else
		fputs("record longer or raise -F", f);
	if (hz)
		fprintf(f, " (now %u Hz)", hz);
	fputc('\n', f);
}

/* The line of a section without causes: why there are none. */
static void no_cause(const struct sb_profile *p, const struct sb_causes *c, uint32_t s, FILE *f)
{
	const struct sb_causes_evidence *e = evidence_of(c, s);

	if (e && e->verdict == SB_VERDICT_FEW_SAMPLES && too_short(p, s, e->more_seconds)) {
		/* a section of microseconds a run (an OpenMP region's fork):
		 * "record 1523005 s longer" is no advice */
		char b[32];

		sb_fmt_ns(busy_per_thread(&p->sections[s]), b, sizeof(b));
		fprintf(f, "  not enough samples: %s of busy time per thread in this run is too "
			"short to sample; %s\n", b, c->exact_counts ?
			"raise -F for the hardware test" : "exact counts (scalebpf cc) see it");
	} else if (e && e->verdict == SB_VERDICT_FEW_SAMPLES) {
		fputs("  not enough samples: ", f);
		more_time(p, c, e, f);
	} else if (e && e->verdict == SB_VERDICT_FEW_THREADS) {
		fputs("  no cause: fewer than 3 threads leave the tests no degrees of freedom\n", f);
	} else if (e && c->block_samples) {
		fputs("  no significant cause: samples enough for the imbalance seen, but no event "
		      "explains it (F-test)\n", f);
	} else if (e) {
		fputs("  no significant cause: no event explains the imbalance (F-test)\n", f);
	} else {
		fputs("  no significant cause: no event explains the imbalance (F-test), or too "
		      "few threads (< 3)\n", f);
	}
}

/* The causes shown under x: leaders of its cluster (same_cluster). */
static void same_cluster(const struct sb_profile *p, const struct sb_causes *c,
			 const struct sb_cause *x, FILE *f)
{
	char loc[512];

	for (size_t i = 0; i < c->n; i++) {
		const struct sb_cause *y = &c->c[i];

		if (y->section != x->section || y->same_cluster != x->rank)
			continue;
		sb_loc_format(p, y->loc, loc, sizeof(loc));
		fprintf(f, "        same cluster: %s  [0x%llx]\n", loc, (unsigned long long)y->addr);
	}
}

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
		const struct sb_causes_evidence *e;
		size_t shown = 0;
		bool low;

		sb_loc_format_section(p, s, loc, sizeof(loc));
		fprintf(f, "section #%zu (%s at %s):\n", k + 1,
			sb_section_kind_name(p->sections[s].kind), loc);
		evidence_line(p, c, s, f);
		low = (e = evidence_of(c, s)) && e->verdict == SB_VERDICT_CAUSES_LOW;
		if (low) {
			/* shown, never as a confident answer */
			fputs("  low evidence: fewer samples than the imbalance seen needs, the "
			      "causes below may be wrong;\n  to confirm, ", f);
			more_time(p, c, e, f);
		}
		for (size_t i = 0; i < c->n; i++) {
			const struct sb_cause *x = &c->c[i];

			if (x->section != s || x->same_cluster)
				continue;
			sb_loc_format(p, x->loc, loc, sizeof(loc));
			fprintf(f, "  %2u. score %.3f  %-13s %s  [0x%llx]%s", x->rank, x->score,
				sb_cause_kind_name(x->kind), loc, (unsigned long long)x->addr,
				low ? "  (low evidence)" : "");
			if (x->alternative_of)
				fprintf(f, "  (alternative to #%u: may decide instead)",
					x->alternative_of);
			fputc('\n', f);
			same_cluster(p, c, x, f);
			sb_source_lines(src, x->loc, f);
			if (x->nalternatives)
				fprintf(f, "        not settled by samples: more time here is more "
					"trips or slower work here, or more\n        entries "
					"decided at the line%s below (#%u%s); exact counts tell "
					"(scalebpf cc)\n",
					x->nalternatives > 1 ? "s" : "", x->rank + 1,
					x->nalternatives > 1 ? "..." : "");
			undetermined |= x->kind == SB_CAUSE_UNDETERMINED;
			shown++;
		}
		if (!shown)
			no_cause(p, c, s, f);
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

static const char *verdict_name(uint16_t v)
{
	switch (v) {
	case SB_VERDICT_CAUSES: return "causes";
	case SB_VERDICT_NONE: return "none";
	case SB_VERDICT_FEW_SAMPLES: return "few_samples";
	case SB_VERDICT_FEW_THREADS: return "few_threads";
	case SB_VERDICT_CAUSES_LOW: return "causes_low_evidence";
	default: return "unknown";
	}
}

/* "evidence": one entry per section analysed, in the "sections" list's
 * order; a number JSON cannot hold (no rate known: infinite) is null.
 * Two sections may close at one line (a barrier function reached from a
 * setup call and from the step loop): "section" alone is ambiguous, so
 * each entry, like each cause and each "sections" entry, carries
 * "section_index" (the profile's section number). */
static void evidence_json(const struct sb_profile *p, const struct sb_causes *c,
			  struct sb_json *j)
{
	size_t *order = sb_summary_sections_ranked(p), n = 0;
	FILE *f = j->f;
	char sec[512];

	sb_json_member(j, "evidence");
	fputc('[', f);
	for (size_t k = 0; k < p->nsections; k++) {
		const struct sb_causes_evidence *e = evidence_of(c, order ? (uint32_t)order[k]
								      : (uint32_t)k);

		if (!e)
			continue;
		sb_loc_short(p, (int32_t)p->sections[e->section].loc, sec, sizeof(sec));
		fprintf(f, "%s\n    {\"section\": ", n++ ? "," : "");
		sb_json_str(f, sec);
		fprintf(f, ", \"section_index\": %u, \"verdict\": \"%s\", \"threads\": %u, "
			"\"instances\": %u, \"samples_per_thread\": %.2f, "
			"\"counted_per_thread\": %.2f, \"more_seconds\": ",
			e->section, verdict_name(e->verdict), e->nthreads, e->ninstances,
			e->samples_per_thread, e->counted_per_thread);
		if (isfinite(e->more_seconds))
			fprintf(f, "%.2f", e->more_seconds);
		else
			fputs("null", f);
		fprintf(f, ", \"more_at_least\": %s}", e->more_at_least ? "true" : "false");
	}
	fputs(n ? "\n  ]" : "]", f);
	free(order);
}

static const struct sb_causes *sort_causes;

/* By rank, then score: a section's causes in its ranked order (the rank
 * is the analysis's verdict: a cause of nearly equal score may rank
 * first for what the code's shape says, causes_locate.c), every
 * section's first cause before any second one. */
static int by_rank(const void *a, const void *b)
{
	const struct sb_cause *x = &sort_causes->c[*(const size_t *)a];
	const struct sb_cause *y = &sort_causes->c[*(const size_t *)b];

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->score < y->score ? 1 : x->score > y->score ? -1 : 0;
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
	qsort(order, c->n, sizeof(*order), by_rank);
	sb_json_member(j, "causes");
	fputc('[', f);
	for (size_t k = 0; k < c->n; k++) {
		const struct sb_cause *x = &c->c[order[k]];

		sb_loc_short(p, (int32_t)p->sections[x->section].loc, sec, sizeof(sec));
		fprintf(f, "%s\n    {\"rank\": %u, \"section\": ", k ? "," : "", x->rank);
		sb_json_str(f, sec);
		fprintf(f, ", \"section_index\": %u, \"score\": %.4f, \"kind\": \"%s\", "
			"\"same_cluster\": %u, \"alternative_of\": %u, \"settled\": %s, ",
			x->section, x->score, sb_cause_kind_name(x->kind), x->same_cluster,
			x->alternative_of,
			x->nalternatives || x->alternative_of ? "false" : "true");
		sb_json_loc_fields(f, p, x->loc);
		fputc('}', f);
	}
	fputs(c->n ? "\n  ]" : "]", f);
	free(order);
	evidence_json(p, c, j);
	return 0;
}

/* What the captures below need. */
struct cause_capture {
	const struct sb_report_ctx *r;
	uint32_t section;
	int32_t loc;
	struct sb_source *src;
};

static void cap_evidence(void *v, FILE *m)
{
	struct cause_capture *x = v;

	evidence_line(x->r->p, x->r->causes, x->section, m);
}

static void cap_none(void *v, FILE *m)
{
	struct cause_capture *x = v;

	no_cause(x->r->p, x->r->causes, x->section, m);
}

static void cap_source(void *v, FILE *m)
{
	struct cause_capture *x = v;

	sb_source_lines(x->src, x->loc, m);
}

void sb_report_causes_html(const struct sb_report_ctx *r, uint32_t s, struct sb_source *src,
			   FILE *f)
{
	const struct sb_profile *p = r->p;
	const struct sb_causes *c = r->causes;
	struct cause_capture x = { .r = r, .section = s, .src = src };
	size_t shown = 0;
	char loc[512];

	fputs("<h3>Causes of imbalance (LIME)</h3>\n", f);
	if (!c || !p->nvectors) {
		fputs("<p class=\"none\">no per-thread event vectors in this profile (record "
		      "with -F &gt; 0)</p>\n", f);
		return;
	}
	sb_html_capture(f, cap_evidence, &x, "<p>", "</p>\n");
	for (size_t i = 0; i < c->n; i++) {
		const struct sb_cause *y = &c->c[i];

		if (y->section != s || y->same_cluster)
			continue;
		if (!shown++)
			fputs("<div class=\"scroll\"><table><tr><th class=\"n\">#</th>"
			      "<th class=\"n\">score</th><th>kind</th><th>where</th></tr>\n", f);
		sb_loc_format(p, y->loc, loc, sizeof(loc));
		fprintf(f, "<tr><td class=\"n\">%u</td><td class=\"n\">%.3f</td><td>%s</td><td>",
			y->rank, y->score, sb_cause_kind_name(y->kind));
		sb_html_str(f, loc);
		if (y->alternative_of)
			fprintf(f, " (alternative to #%u: may decide instead)", y->alternative_of);
		fputs("</td></tr>\n", f);
		x.loc = y->loc;
		sb_html_capture(f, cap_source, &x, "<tr><td></td><td colspan=\"3\"><pre>",
				"</pre></td></tr>\n");
	}
	if (shown) {
		fputs("</table></div>\n", f);
	} else {
		sb_html_capture(f, cap_none, &x, "<p>", "</p>\n");
	}
}

const struct sb_report_view sb_view_causes = {
	.name = "causes",
	.text = causes_text,
	.json = causes_json,
};
