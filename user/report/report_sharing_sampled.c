// SPDX-License-Identifier: MIT
/*
 * The sharing view's sampled part (issue 13, record mode): lines two
 * threads were sampled touching, confirmed by hardware watchpoints
 * (analysis/coherence/coherence.h, "Sampled estimates").  Variables are
 * ranked by estimated cost, the share of their section's busy time spent
 * in accesses to them times the fraction of watchpoint windows that
 * confirmed sharing, and each says what its verdict rests on.  When
 * nothing was confirmed the view still says what was looked at, so "no
 * sharing" is never confused with "not looked for".
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "coherence/coherence.h"
#include "report.h"

#define TOP_VARS 10

/* A coherence_sampled_WHAT count of the recording. */
static uint64_t count(const struct sb_profile *p, const char *what)
{
	char key[64];

	snprintf(key, sizeof(key), "coherence_sampled_%s", what);
	return sb_profile_meta_get_u64(p, key);
}

static void var_text(const struct sb_report_ctx *r, const struct sb_coherence_var *v, FILE *f)
{
	char name[256], loc[512];

	fprintf(f, "  %-24s %-5s %-13s %5" PRIu64 " %8" PRIu64 " %8" PRIu64 " %7.2f%% %4u\n",
		sb_text_escape(v->name, name, sizeof(name)), v->true_sharing ? "true" : "false",
		v->in_region ? "in region" : "across region", v->lines, v->samples,
		v->confirmations, (double)v->cost_ppm / 1e4, v->threads);
	if (v->parts[0]) {
		fputs("      part: ", f);
		sb_text_str(f, v->parts);
		fputc('\n', f);
	}
	for (size_t k = 0; k < v->nrefs; k++) {
		sb_loc_format(r->p, v->refs[k], loc, sizeof(loc));
		fprintf(f, "      %-10s %s\n",
			sb_report_sharing_access(r->p, SB_SHARING_SAMPLED, v->refs[k]), loc);
	}
	if (v->section >= 0 && (size_t)v->section < r->p->nsections) {
		sb_loc_format_section(r->p, (size_t)v->section, loc, sizeof(loc));
		fprintf(f, "      in section #%d (%s)\n", v->section + 1, loc);
	}
	fprintf(f, "      evidence: %" PRIu64 " samples touched it, %" PRIu64 " watchpoint hits "
		"confirmed sharing in %" PRIu64 " of %" PRIu64 " windows (%" PRIu64
		" with two threads at once)\n", v->samples, v->confirmations, v->windows_confirmed,
		v->windows, v->windows_in_region);
	fprintf(f, "      fix: %s\n", sb_report_sharing_hint(v));
}

int sb_report_sharing_sampled_text(const struct sb_report_ctx *r, FILE *f)
{
	const struct sb_profile *p = r->p;
	const char *path = sb_profile_meta_get(p, "coherence_sampled_path");
	const char *why = sb_profile_meta_get(p, "coherence_sampled_unconfirmed");
	const char *slots = sb_profile_meta_get(p, "coherence_sampled_slots");
	struct sb_coherence_var *v;
	size_t n;

	if (!path)
		return 0;
	if (sb_coherence_vars(p, SB_SHARING_SAMPLED, &v, &n))
		return -1;
	fputs("\nSharing: cache lines that move between threads' caches (sampled, confirmed "
	      "by watchpoints)\n", f);
	fprintf(f, "  %" PRIu64 " sampled accesses, %" PRIu64 " candidate lines, %" PRIu64
		" watchpoint windows (%" PRIu64 " arms, %" PRIu64 " hits)", count(p, "accesses"),
		count(p, "candidates"), count(p, "windows"), count(p, "arms"), count(p, "hits"));
	if (sb_profile_meta_get(p, "coherence_sampled_first_verdict_ms"))
		fprintf(f, "; first verdict after %" PRIu64 " ms", count(p, "first_verdict_ms"));
	fputc('\n', f);
	if (why) {
		fputs("  not confirmed: ", f);
		sb_text_str(f, why);
		fputc('\n', f);
	}
	if (slots) {
		fputs("  note: ", f);
		sb_text_str(f, slots);
		fputc('\n', f);
	}
	if (sb_profile_meta_get(p, "coherence_sampled_arm_error")) {
		fprintf(f, "  note: %" PRIu64 " watchpoints could not be armed, the first: ",
			count(p, "arm_failed"));
		sb_text_str(f, sb_profile_meta_get(p, "coherence_sampled_arm_error"));
		fputc('\n', f);
	}
	if (count(p, "sync_lines"))
		fprintf(f, "  %" PRIu64 " confirmed line%s written only by the threading runtime (lock "
			"words, barriers): sync cost, in the waits above, not listed\n",
			count(p, "sync_lines"), count(p, "sync_lines") > 1 ? "s are" : " is");
	if (!n) {
		fputs("  no line met the evidence rule (a sample on it, >= 2 threads seen on it, "
		      ">= 2 watchpoint hits confirming sharing, a store from the program's code): "
		      "none is reported\n", f);
		free(v);
		return 0;
	}
	fprintf(f, "  %-24s %-5s %-13s %5s %8s %8s %8s %4s\n", "variable", "kind", "scope",
		"lines", "samples", "confirm.", "cost", "thr");
	for (size_t i = 0; i < n && i < TOP_VARS; i++)
		var_text(r, &v[i], f);
	if (n > TOP_VARS)
		fprintf(f, "  (%zu more)\n", n - TOP_VARS);
	free(v);
	return 0;
}
