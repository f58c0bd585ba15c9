// SPDX-License-Identifier: MIT
/*
 * `report --sharing`: the simulation's counts at every level of ccSIM's
 * §II-D, both interleavings: per processor (a thread), per reference
 * (file:line), per function and per variable.  Text as tables; JSON as
 * {sharing_threads, sharing_references, sharing_functions} arrays of
 * {mode, ..., counts} plus the report's own "sharing" array.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "coherence/coherence.h"
#include "report.h"

/* Counts shown, in order: name, profile value, or -1 for invalidations
 * in total. */
static const struct col {
	const char *name;
	int v;
} cols[] = {
	{ "loads", SB_SHV_LOADS }, { "stores", SB_SHV_STORES }, { "l1_hits", SB_SHV_L1_HITS },
	{ "l2_hits", SB_SHV_L2_HITS }, { "misses", SB_SHV_MISSES },
	{ "coherence_true", SB_SHV_COH_TRUE }, { "coherence_false", SB_SHV_COH_FALSE },
	{ "invalidations", -1 }, { "in_true", SB_SHV_IN_TRUE },
	{ "in_true_locked", SB_SHV_IN_TRUE_LOCKED }, { "in_false", SB_SHV_IN_FALSE },
	{ "across_true", SB_SHV_ACROSS_TRUE }, { "across_false", SB_SHV_ACROSS_FALSE },
};
#define NCOLS (sizeof(cols) / sizeof(cols[0]))

static uint64_t value(const uint64_t *v, int k)
{
	if (k >= 0)
		return v[k];
	return v[SB_SHV_IN_TRUE] + v[SB_SHV_IN_FALSE] + v[SB_SHV_ACROSS_TRUE] +
	       v[SB_SHV_ACROSS_FALSE];
}

/* Per function: the references' counts summed by their function. */
struct fn {
	const char *name;
	uint32_t mode;
	uint64_t v[SB_SHV_MAX];
};

static struct fn *functions(const struct sb_profile *p, size_t *n)
{
	struct fn *f = NULL;

	*n = 0;
	for (size_t i = 0; i < p->nsharing; i++) {
		const struct sb_sharing *s = &p->sharing[i];
		const char *name = s->loc >= 0 && p->locs[s->loc].function ?
				   p->locs[s->loc].function : "?";
		size_t k = 0;

		if (s->kind != SB_SHARING_REF)
			continue;
		while (k < *n && (f[k].mode != s->mode || strcmp(f[k].name, name)))
			k++;
		if (k == *n) {
			struct fn *a = realloc(f, (*n + 1) * sizeof(*a));

			if (!a) {
				free(f);
				return NULL;
			}
			f = a;
			memset(&f[k], 0, sizeof(f[k]));
			f[k].name = name;
			f[k].mode = s->mode;
			(*n)++;
		}
		for (size_t c = 0; c < SB_SHV_MAX; c++)
			f[k].v[c] += s->v[c];
	}
	return f ? f : calloc(1, sizeof(*f));
}

static void header(FILE *f, const char *first)
{
	fprintf(f, "# mode\t%s", first);
	for (size_t c = 0; c < NCOLS; c++)
		fprintf(f, "\t%s", cols[c].name);
	fputc('\n', f);
}

static void counts(FILE *f, const uint64_t *v)
{
	for (size_t c = 0; c < NCOLS; c++)
		fprintf(f, "\t%" PRIu64, value(v, cols[c].v));
	fputc('\n', f);
}

int sb_report_sharing_list_text(const struct sb_report_ctx *r, FILE *f)
{
	const struct sb_profile *p = r->p;
	struct fn *fns;
	size_t nf;
	char loc[512], name[256];

	if (!p->nsharing) {
		const char *err = sb_profile_meta_get(p, "coherence_error");

		fputs("# no sharing simulated: ", f);
		sb_text_str(f, err ? err : "the profile is not of a `scalebpf cc --trace-mem` "
			    "program");
		fputc('\n', f);
		return 0;
	}
	fputs("# per thread (processor)\n", f);
	header(f, "tid");
	for (size_t i = 0; i < p->nsharing; i++)
		if (p->sharing[i].kind == SB_SHARING_THREAD) {
			fprintf(f, "%s\t%" PRIu32, sb_sharing_mode_name(p->sharing[i].mode),
				p->sharing[i].tid);
			counts(f, p->sharing[i].v);
		}
	fputs("\n# per reference that took part in sharing\n", f);
	header(f, "reference");
	for (size_t i = 0; i < p->nsharing; i++)
		if (p->sharing[i].kind == SB_SHARING_REF) {
			sb_loc_format_addr(p, p->sharing[i].loc, loc, sizeof(loc));
			fprintf(f, "%s\t%s", sb_sharing_mode_name(p->sharing[i].mode), loc);
			counts(f, p->sharing[i].v);
		}
	fputs("\n# per function (its references above)\n", f);
	header(f, "function");
	fns = functions(p, &nf);
	if (!fns)
		return -1;
	for (size_t i = 0; i < nf; i++) {
		fprintf(f, "%s\t%s", sb_sharing_mode_name(fns[i].mode),
			sb_text_escape(fns[i].name, name, sizeof(name)));
		counts(f, fns[i].v);
	}
	free(fns);
	fputs("\n# per line (its data)\n", f);
	header(f, "line\tvariable");
	for (size_t i = 0; i < p->nsharing; i++)
		if (p->sharing[i].kind == SB_SHARING_LINE) {
			fprintf(f, "%s\t0x%" PRIx64 "\t%s", sb_sharing_mode_name(p->sharing[i].mode),
				p->sharing[i].addr,
				sb_text_escape(p->sharing[i].name, name, sizeof(name)));
			counts(f, p->sharing[i].v);
		}
	return 0;
}

static void json_counts(FILE *f, const uint64_t *v)
{
	for (size_t c = 0; c < NCOLS; c++)
		fprintf(f, ", \"%s\": %" PRIu64, cols[c].name, value(v, cols[c].v));
	fputc('}', f);
}

int sb_report_sharing_list_json(const struct sb_report_ctx *r, struct sb_json *j)
{
	const struct sb_profile *p = r->p;
	struct fn *fns;
	size_t nf;
	bool any = false;

	sb_json_member(j, "sharing_threads");
	fputc('[', j->f);
	for (size_t i = 0; i < p->nsharing; i++)
		if (p->sharing[i].kind == SB_SHARING_THREAD) {
			fprintf(j->f, "%s\n    {\"mode\": \"%s\", \"tid\": %" PRIu32, any ? "," : "",
				sb_sharing_mode_name(p->sharing[i].mode), p->sharing[i].tid);
			json_counts(j->f, p->sharing[i].v);
			any = true;
		}
	fputs(any ? "\n  ]" : "]", j->f);
	sb_json_member(j, "sharing_references");
	fputc('[', j->f);
	any = false;
	for (size_t i = 0; i < p->nsharing; i++)
		if (p->sharing[i].kind == SB_SHARING_REF) {
			fprintf(j->f, "%s\n    {\"mode\": \"%s\", ", any ? "," : "",
				sb_sharing_mode_name(p->sharing[i].mode));
			sb_json_loc_fields(j->f, p, p->sharing[i].loc);
			fprintf(j->f, ", \"caused\": %" PRIu64, p->sharing[i].v[SB_SHV_CAUSED]);
			json_counts(j->f, p->sharing[i].v);
			any = true;
		}
	fputs(any ? "\n  ]" : "]", j->f);
	sb_json_member(j, "sharing_functions");
	fputc('[', j->f);
	fns = functions(p, &nf);
	if (!fns)
		return -1;
	for (size_t i = 0; i < nf; i++) {
		fprintf(j->f, "%s\n    {\"mode\": \"%s\", \"function\": ", i ? "," : "",
			sb_sharing_mode_name(fns[i].mode));
		sb_json_str(j->f, fns[i].name);
		json_counts(j->f, fns[i].v);
	}
	free(fns);
	fputs(nf ? "\n  ]" : "]", j->f);
	return sb_view_sharing.json(r, j);
}
