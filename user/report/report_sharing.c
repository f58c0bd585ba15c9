// SPDX-License-Identifier: MIT
/*
 * The "sharing" view: which data ping-pongs between caches (issue 13),
 * from the profile's SHARING rows (analysis/coherence/).  Exact mode
 * (ccSIM over `scalebpf cc --trace-mem` traces) ranks variables by
 * coherence misses, piped first, the interleaved counts beside them when
 * they differ: the two are the bounds of §II-C.  Each variable gets a
 * class (true/false sharing, in/across region), its references, a fix
 * hint and its invalidators (which stores on which threads took its lines
 * away).  Possible data races (unlocked stores of the same bytes in one
 * region) are listed with both references.
 *
 * JSON: sharing: [{variable, parts, kind, scope, lines, references: [{location,
 * function, address, access}], threads, cost_pct, invalidations,
 * coherence_misses, in_region_true_locked, in_region_true_unlocked,
 * possible_races, invalidators: [{location, function, address, thread,
 * pct}],
 * evidence: {samples, confirmations, windows, windows_confirmed}, section,
 * mode}] and sharing_races: [{a: {location..}, b: {location..}, count,
 * mode}].  cost_pct is, in exact mode, the variable's coherence misses over
 * all simulated misses; in sampled mode (report_sharing_sampled.c) the
 * estimated share of its section's busy time; in percent.  section: the
 * section number of the text report (1-based), 0 none.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "coherence/coherence.h"
#include "report.h"

#define TOP_VARS 10
#define TOP_INVALIDATORS 4

static uint64_t all_misses(const struct sb_profile *p, uint32_t mode)
{
	uint64_t n = 0;

	for (size_t i = 0; i < p->nsharing; i++)
		if (p->sharing[i].kind == SB_SHARING_THREAD && p->sharing[i].mode == mode)
			n += p->sharing[i].v[SB_SHV_MISSES];
	return n;
}

static bool has_mode(const struct sb_profile *p, uint32_t mode)
{
	for (size_t i = 0; i < p->nsharing; i++)
		if (p->sharing[i].mode == mode)
			return true;
	return false;
}

const char *sb_report_sharing_access(const struct sb_profile *p, uint32_t mode, int32_t loc)
{
	uint64_t ld = 0, st = 0;

	for (size_t i = 0; i < p->nsharing; i++) {
		const struct sb_sharing *s = &p->sharing[i];

		if (s->kind == SB_SHARING_REF && s->mode == mode && s->loc == loc) {
			ld += s->v[SB_SHV_LOADS];
			st += s->v[SB_SHV_STORES];
		}
	}
	return ld && st ? "load+store" : st ? "store" : "load";
}

static bool victim_of(const struct sb_coherence_var *v, int32_t loc)
{
	for (size_t k = 0; k < v->nrefs; k++)
		if (v->refs[k] == loc)
			return true;
	return false;
}

const char *sb_report_sharing_hint(const struct sb_coherence_var *v)
{
	/* sampled mode has no invalidation counts, only its scope */
	bool in_region = v->mode == SB_SHARING_SAMPLED ? v->in_region :
			 v->in_true > v->in_false && v->in_true >= v->across_true;

	if (!v->true_sharing)
		return "false sharing: pad or align each thread's part to its own cache line";
	if (v->in_region && v->in_true_race)
		return "unlocked stores of the same bytes in one region: a possible data race";
	if (in_region)
		return "true sharing in a region: privatize per thread and reduce once";
	return "true sharing across regions: data handed between threads at barriers "
	       "(a layout that keeps it on its producer and consumer helps)";
}

/* A variable that is true sharing (bytes two threads use) may still lose
 * many lines to false pairs: each thread's part does not start a line
 * (a row of a matrix malloc left off a line, per-thread slots packed). */
static void hint_false_pairs(const struct sb_coherence_var *v, FILE *f)
{
	uint64_t fa = v->in_false + v->across_false;

	if (v->true_sharing && v->invalidations && 4 * fa >= v->invalidations)
		fprintf(f, "      also: %.0f%% of its invalidations are of bytes the other thread "
			"did not touch: align each thread's part (a row, a block, a slot) to the "
			"line, e.g. aligned_alloc(64, ...)\n",
			100.0 * (double)fa / (double)v->invalidations);
}

/* The invalidators of v's lines (stores whose victim is one of its
 * references), merged by (store line, thread), most first; caller frees. */
struct inv_row {
	int32_t loc;
	uint32_t tid;
	uint64_t count;
};

static int by_count(const void *a, const void *b)
{
	const struct inv_row *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->loc != y->loc ? (x->loc < y->loc ? -1 : 1) : (x->tid > y->tid) - (x->tid < y->tid);
}

static struct inv_row *invalidators(const struct sb_profile *p, const struct sb_coherence_var *v,
				    size_t *n, uint64_t *total)
{
	struct inv_row *rows = malloc((p->nsharing + 1) * sizeof(*rows));

	*n = 0;
	*total = 0;
	if (!rows)
		return NULL;
	for (size_t i = 0; i < p->nsharing; i++) {
		const struct sb_sharing *s = &p->sharing[i];
		size_t k = 0;

		if (s->kind != SB_SHARING_INVALIDATOR || s->mode != v->mode || !victim_of(v, s->loc2))
			continue;
		/* one row per store line and thread: a compiler's copies of
		 * one store (unrolled, inlined) read alike */
		while (k < *n && (rows[k].tid != s->tid ||
				  (rows[k].loc != s->loc && !sb_loc_same_line(p, rows[k].loc, s->loc))))
			k++;
		if (k == *n)
			rows[(*n)++] = (struct inv_row){ s->loc, s->tid, 0 };
		rows[k].count += s->v[SB_SHV_COUNT];
		*total += s->v[SB_SHV_COUNT];
	}
	if (*n)
		qsort(rows, *n, sizeof(*rows), by_count);
	return rows;
}

static void invalidators_text(const struct sb_report_ctx *r, const struct sb_coherence_var *v,
			      FILE *f)
{
	uint64_t total;
	size_t n;
	struct inv_row *rows = invalidators(r->p, v, &n, &total);
	char loc[512];

	for (size_t i = 0; rows && i < n && i < TOP_INVALIDATORS && total; i++) {
		sb_loc_format(r->p, rows[i].loc, loc, sizeof(loc));
		fprintf(f, "      invalidated by %s on thread %" PRIu32 ": %.1f%%\n", loc,
			rows[i].tid, 100.0 * (double)rows[i].count / (double)total);
	}
	if (rows && n > TOP_INVALIDATORS)
		fprintf(f, "      (%zu more invalidators)\n", n - TOP_INVALIDATORS);
	free(rows);
}

static void var_text(const struct sb_report_ctx *r, const struct sb_coherence_var *v,
		     const struct sb_coherence_var *other, uint64_t misses, FILE *f)
{
	char name[256], loc[512];

	if (v->mode == SB_SHARING_INTERLEAVED && !other)
		fputs("  (interleaved order only:)\n", f);
	fprintf(f, "  %-24s %-5s %-13s %6" PRIu64 " %9" PRIu64 " %9" PRIu64 " %7.2f%% %4u\n",
		sb_text_escape(v->name, name, sizeof(name)), v->true_sharing ? "true" : "false",
		v->in_region ? "in region" : "across region", v->lines, v->coh_misses,
		v->invalidations, misses ? 100.0 * (double)v->coh_misses / (double)misses : 0.0,
		v->threads);
	if (other && (other->coh_misses != v->coh_misses ||
		      other->invalidations != v->invalidations))
		fprintf(f, "      interleaved: %" PRIu64 " coherence misses, %" PRIu64
			" invalidations (§II-C: the two orders bound the program's)\n",
			other->coh_misses, other->invalidations);
	if (v->parts[0]) {
		fputs("      part: ", f);
		sb_text_str(f, v->parts);
		fputc('\n', f);
	}
	if (v->in_true)
		fprintf(f, "      in-region true: %" PRIu64 " lock-protected, %" PRIu64
			" unlocked (%" PRIu64 " possibly racy)\n", v->in_true_locked,
			v->in_true - v->in_true_locked, v->in_true_race);
	for (size_t k = 0; k < v->nrefs; k++) {
		sb_loc_format(r->p, v->refs[k], loc, sizeof(loc));
		fprintf(f, "      %-10s %s\n", sb_report_sharing_access(r->p, v->mode, v->refs[k]), loc);
	}
	invalidators_text(r, v, f);
	fprintf(f, "      invalidations: %" PRIu64 " true (%" PRIu64 " in region), %" PRIu64
		" false (%" PRIu64 " in region)\n", v->in_true + v->across_true, v->in_true,
		v->in_false + v->across_false, v->in_false);
	fprintf(f, "      fix: %s\n", sb_report_sharing_hint(v));
	hint_false_pairs(v, f);
}

/* x's counterpart in the other mode's variables: the same name, or for
 * unnamed heap ranges (grouped per mode) an overlapping range. */
static const struct sb_coherence_var *find_var(const struct sb_coherence_var *v, size_t n,
					       const struct sb_coherence_var *x)
{
	size_t an = strlen(SB_COHERENCE_ANON);
	bool anon = !strncmp(x->name, SB_COHERENCE_ANON, an);

	for (size_t i = 0; i < n; i++) {
		if (anon && !strncmp(v[i].name, SB_COHERENCE_ANON, an) && v[i].lo <= x->hi &&
		    x->lo <= v[i].hi)
			return &v[i];
		if (!anon && !strcmp(v[i].name, x->name))
			return &v[i];
	}
	return NULL;
}

static int sharing_text(const struct sb_report_ctx *r, FILE *f)
{
	const struct sb_profile *p = r->p;
	struct sb_coherence_var *pv = NULL, *iv = NULL;
	size_t np = 0, ni = 0, shown = 0, distinct;
	const char *err = sb_profile_meta_get(p, "coherence_error");
	char loc[512], loc2[512];
	int ret = 0;

	if (sb_report_sharing_sampled_text(r, f))   /* record mode (report_sharing_sampled.c) */
		return -1;
	if (!has_mode(p, SB_SHARING_PIPED) && !has_mode(p, SB_SHARING_INTERLEAVED) && !err)
		return 0;
	fputs("\nSharing: cache lines that move between threads' caches (exact: ccSIM)\n", f);
	if (err) {
		fputs("  not simulated: ", f);
		sb_text_str(f, err);
		fputc('\n', f);
	}
	if (sb_coherence_vars(p, SB_SHARING_PIPED, &pv, &np) ||
	    sb_coherence_vars(p, SB_SHARING_INTERLEAVED, &iv, &ni)) {
		ret = -1;
		goto out;
	}
	if (!np && !ni) {
		if (!err)
			fputs("  no line was invalidated: no sharing between the threads' caches\n", f);
		goto out;
	}
	distinct = np;
	fprintf(f, "  %-24s %-5s %-13s %6s %9s %9s %8s %4s\n", "variable", "kind", "scope",
		"lines", "coh.miss", "invalid.", "cost", "thr");
	for (size_t i = 0; i < np && shown < TOP_VARS; i++, shown++)
		var_text(r, &pv[i], find_var(iv, ni, &pv[i]),
			 all_misses(p, SB_SHARING_PIPED), f);
	for (size_t i = 0; i < ni && shown < TOP_VARS; i++)
		if (!find_var(pv, np, &iv[i])) {
			var_text(r, &iv[i], NULL, all_misses(p, SB_SHARING_INTERLEAVED), f);
			shown++;
		}
	for (size_t i = 0; i < ni; i++)
		distinct += !find_var(pv, np, &iv[i]);
	if (distinct > shown)
		fprintf(f, "  (%zu more: `report --sharing` lists every line)\n", distinct - shown);
	for (size_t i = 0; i < p->nsharing; i++) {
		const struct sb_sharing *s = &p->sharing[i];

		if (s->kind != SB_SHARING_RACE)
			continue;
		sb_loc_format(p, s->loc, loc, sizeof(loc));
		sb_loc_format(p, s->loc2, loc2, sizeof(loc2));
		fprintf(f, "  possible data race (%s, %" PRIu64 "x): %s and %s store the same "
			"bytes in one region, unlocked\n", sb_sharing_mode_name(s->mode),
			s->v[SB_SHV_COUNT], loc, loc2);
	}
out:
	free(pv);
	free(iv);
	return ret;
}

static void var_json(const struct sb_report_ctx *r, const struct sb_coherence_var *v,
		     bool first, FILE *f)
{
	const struct sb_profile *p = r->p;
	uint64_t misses = all_misses(p, v->mode), total = 0;
	struct inv_row *rows;
	double cost;
	size_t n;

	fputs(first ? "\n    {\"variable\": " : ",\n    {\"variable\": ", f);
	sb_json_str(f, v->name);
	fputs(", \"parts\": ", f);
	sb_json_str(f, v->parts);
	/* sampled: the share of its section's busy time; exact: of all
	 * simulated misses */
	cost = v->mode == SB_SHARING_SAMPLED ? (double)v->cost_ppm / 1e4 :
	       misses ? 100.0 * (double)v->coh_misses / (double)misses : 0.0;
	fprintf(f, ", \"kind\": \"%s\", \"scope\": \"%s\", \"lines\": %" PRIu64
		", \"threads\": %u, \"cost_pct\": %.3f, \"invalidations\": %" PRIu64
		", \"coherence_misses\": %" PRIu64 ", \"in_region_true_locked\": %" PRIu64
		", \"in_region_true_unlocked\": %" PRIu64 ", \"possible_races\": %" PRIu64
		", \"mode\": \"%s\", \"evidence\": {\"samples\": %" PRIu64
		", \"confirmations\": %" PRIu64 ", \"windows\": %" PRIu64
		", \"windows_confirmed\": %" PRIu64 "}, \"section\": %d, \"references\": [",
		v->true_sharing ? "true" : "false", v->in_region ? "in_region" : "across_region",
		v->lines, v->threads, cost, v->invalidations,
		v->coh_misses, v->in_true_locked, v->in_true - v->in_true_locked,
		v->in_true_race, sb_sharing_mode_name(v->mode), v->samples, v->confirmations,
		v->windows, v->windows_confirmed, v->section >= 0 ? v->section + 1 : 0);
	for (size_t k = 0; k < v->nrefs; k++) {
		fputs(k ? ", {" : "{", f);
		sb_json_loc_fields(f, p, v->refs[k]);
		fprintf(f, ", \"access\": \"%s\"}", sb_report_sharing_access(p, v->mode, v->refs[k]));
	}
	fputs("], \"invalidators\": [", f);
	rows = invalidators(p, v, &n, &total);
	for (size_t i = 0; rows && i < n && total; i++) {
		fputs(i ? ", {" : "{", f);
		sb_json_loc_fields(f, p, rows[i].loc);
		fprintf(f, ", \"thread\": %" PRIu32 ", \"pct\": %.3f}", rows[i].tid,
			100.0 * (double)rows[i].count / (double)total);
	}
	free(rows);
	fputs("]}", f);
}

static int sharing_json(const struct sb_report_ctx *r, struct sb_json *j)
{
	const struct sb_profile *p = r->p;
	bool first = true, any = false;

	sb_json_member(j, "sharing");
	fputc('[', j->f);
	for (uint32_t mode = SB_SHARING_PIPED; mode < SB_SHARING_MODE_MAX; mode++) {
		struct sb_coherence_var *v;
		size_t n;

		if (!has_mode(p, mode))
			continue;
		if (sb_coherence_vars(p, mode, &v, &n))
			return -1;
		for (size_t i = 0; i < n; i++, first = false)
			var_json(r, &v[i], first, j->f);
		free(v);
	}
	fputs(first ? "]" : "\n  ]", j->f);
	sb_json_member(j, "sharing_races");
	fputc('[', j->f);
	for (size_t i = 0; i < p->nsharing; i++) {
		const struct sb_sharing *s = &p->sharing[i];

		if (s->kind != SB_SHARING_RACE)
			continue;
		fputs(any ? ",\n    {\"a\": {" : "\n    {\"a\": {", j->f);
		sb_json_loc_fields(j->f, p, s->loc);
		fputs("}, \"b\": {", j->f);
		sb_json_loc_fields(j->f, p, s->loc2);
		fprintf(j->f, "}, \"count\": %" PRIu64 ", \"mode\": \"%s\"}", s->v[SB_SHV_COUNT],
			sb_sharing_mode_name(s->mode));
		any = true;
	}
	fputs(any ? "\n  ]" : "]", j->f);
	return 0;
}

static void sharing_head(const struct sb_report_ctx *r, FILE *f)
{
	const struct sb_profile *p = r->p;
	const char *refs = sb_profile_meta_get(p, "coherence_references");
	const char *caches = sb_profile_meta_get(p, "coherence_caches");
	const char *secs = sb_profile_meta_get(p, "coherence_piped_seconds");
	const char *regions = sb_profile_meta_get(p, "coherence_regions");

	if (!refs)
		return;
	fputs("  sharing: ccSIM over ", f);
	sb_text_str(f, refs);
	fputs(" traced references, ", f);
	sb_text_str(f, regions ? regions : "?");
	fputs(" regions; caches ", f);
	sb_text_str(f, caches ? caches : "?");
	fputs("; piped in ", f);
	sb_text_str(f, secs ? secs : "?");
	fputs(" s\n", f);
}

struct text_capture {
	const struct sb_report_ctx *r;
	int ret;
};

static void cap_text(void *v, FILE *m)
{
	struct text_capture *x = v;

	x->ret = sharing_text(x->r, m);
}

/* The text view's tables as they are, in a block (the same columns, the
 * same ranks; each string escaped by the view, then by HTML). */
static int sharing_html(const struct sb_report_ctx *r, FILE *f)
{
	struct text_capture x = { .r = r };

	if (!r->p->nsharing && !sb_profile_meta_get(r->p, "coherence_error"))
		return 1;
	if (sb_html_capture(f, cap_text, &x, "<div class=\"scroll\"><pre>", "</pre></div>\n"))
		return -1;
	return x.ret;
}

const struct sb_report_view sb_view_sharing = {
	.title = "Data shared between caches",
	.html = sharing_html,
	.name = "sharing",
	.head = sharing_head,
	.text = sharing_text,
	.json = sharing_json,
	.list_text = sb_report_sharing_list_text,    /* report_sharing_list.c */
	.list_json = sb_report_sharing_list_json,
	.list_help = "      --sharing        instead of a report, the cache-sharing simulation's\n"
		     "                       counts (`scalebpf cc --trace-mem` programs) per\n"
		     "                       thread, reference, function and line, both orders\n",
};
