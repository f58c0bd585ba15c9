// SPDX-License-Identifier: MIT
/*
 * The "counts" view, a listing shown instead of the report by `scalebpf
 * report --counts`: the per-thread event vectors LIME works on, summed
 * over each section's stored instances.  With an exact-mode profile these
 * are exact per-thread block counts, the numbers to check a cause against
 * (LIME Figs. 6-8 show them beside the code).
 *
 * JSON: {"counts": [{section, kind, location, function, address,
 *        instances, per_thread: [{tid, comm, count}]}]}, per section by
 *        total descending; kind is block_count or block_samples.
 */
#include <stdlib.h>
#include <string.h>

#include "report.h"

#define MAX_THREADS 256

struct row {
	uint32_t event;
	uint64_t instances, total;
	uint64_t *count;        /* MAX_THREADS */
};

static const char *kind_name(uint32_t kind)
{
	switch (kind) {
	case SB_EVK_BLOCK_SAMPLES: return "block_samples";
	case SB_EVK_BLOCK_COUNT: return "block_count";
	case SB_EVK_EDGE: return "edge";
	case SB_EVK_HW: return "hardware";
	default: return "unknown";
	}
}

static int by_total(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return (x->event > y->event) - (x->event < y->event);
}

static const char *comm_of(const struct sb_profile *p, uint32_t tid)
{
	for (size_t i = 0; i < p->nthreads; i++)
		if (p->threads[i].tid == tid)
			return p->threads[i].comm ? p->threads[i].comm : "";
	return "";
}

static void rows_free(struct row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(rows[i].count);
	free(rows);
}

/* Section s's threads (by tid, first seen first) and its events with
 * vectors, as rows; row_of (per profile event) must be all -1 and is left
 * so.  Returns the number of rows, or -1 on ENOMEM. */
static long section_rows(const struct sb_profile *p, uint32_t s, uint32_t *tids,
			 uint32_t *nt, struct row **rowsp, long *row_of)
{
	struct row *rows = NULL;
	size_t nrows = 0, cap = 0;

	*nt = 0;
	for (size_t v = 0; v < p->nvectors; v++) {
		const struct sb_vector *vec = &p->vectors[v];
		const struct sb_instance *in = &p->instances[vec->instance];
		struct row *r;

		if (in->section != s)
			continue;
		if (row_of[vec->event] < 0) {
			if (nrows == cap) {
				struct row *nr = realloc(rows, (cap = cap ? 2 * cap : 64) * sizeof(*nr));

				if (!nr)
					goto nomem;
				rows = nr;
			}
			memset(&rows[nrows], 0, sizeof(rows[nrows]));
			rows[nrows].event = vec->event;
			if (!(rows[nrows].count = calloc(MAX_THREADS, sizeof(uint64_t))))
				goto nomem;
			row_of[vec->event] = (long)nrows++;
		}
		r = &rows[row_of[vec->event]];
		r->instances++;
		for (uint32_t t = 0; t < vec->nthreads && t < in->nthreads; t++) {
			uint32_t k = 0;

			while (k < *nt && tids[k] != in->per_thread[t].tid)
				k++;
			if (k == *nt) {
				if (*nt == MAX_THREADS)
					continue;
				tids[(*nt)++] = in->per_thread[t].tid;
			}
			r->count[k] += vec->counts[t];
			r->total += vec->counts[t];
		}
	}
	for (size_t i = 0; i < nrows; i++)
		row_of[rows[i].event] = -1;
	if (nrows)   /* a section without vectors has no rows at all */
		qsort(rows, nrows, sizeof(*rows), by_total);
	*rowsp = rows;
	return (long)nrows;
nomem:
	for (size_t i = 0; i < nrows; i++)
		row_of[rows[i].event] = -1;
	rows_free(rows, nrows);
	return -1;
}

static void print_json(const struct sb_profile *p, uint32_t s, const uint32_t *tids,
		       uint32_t nt, const struct row *rows, size_t nrows, int *first, FILE *f)
{
	char sec[512];

	sb_loc_short(p, (int32_t)p->sections[s].loc, sec, sizeof(sec));
	for (size_t i = 0; i < nrows; i++) {
		const struct sb_event_def *d = &p->events[rows[i].event];

		fprintf(f, "%s\n    {\"section\": ", *first ? "" : ",");
		*first = 0;
		sb_json_str(f, sec);
		fprintf(f, ", \"kind\": \"%s\", ", kind_name(d->kind));
		sb_json_loc_fields(f, p, d->loc);
		fprintf(f, ", \"instances\": %llu, \"per_thread\": [",
			(unsigned long long)rows[i].instances);
		for (uint32_t t = 0; t < nt; t++) {
			fprintf(f, "%s{\"tid\": %u, \"comm\": ", t ? ", " : "", tids[t]);
			sb_json_str(f, comm_of(p, tids[t]));
			fprintf(f, ", \"count\": %llu}", (unsigned long long)rows[i].count[t]);
		}
		fputs("]}", f);
	}
}

static void print_text(const struct sb_profile *p, uint32_t s, const uint32_t *tids,
		       uint32_t nt, const struct row *rows, size_t nrows, FILE *f)
{
	char sec[512], loc[512];

	sb_loc_format_section(p, s, sec, sizeof(sec));
	fprintf(f, "\nsection %s: per-thread counts, %zu events\n  %-13s %-40s", sec, nrows,
		"kind", "location");
	/* Columns are threads: by tid (threads often share one name, the
	 * program's), with the name beneath. */
	for (uint32_t t = 0; t < nt; t++) {
		char col[24];

		snprintf(col, sizeof(col), "tid %u", tids[t]);
		fprintf(f, " %14s", col);
	}
	fprintf(f, "\n  %-13s %-40s", "", "");
	for (uint32_t t = 0; t < nt; t++) {
		char comm[64];

		fprintf(f, " %14.14s", sb_text_escape(comm_of(p, tids[t]), comm, sizeof(comm)));
	}
	fputc('\n', f);
	for (size_t i = 0; i < nrows && i < 40; i++) {
		const struct sb_event_def *d = &p->events[rows[i].event];

		sb_loc_format(p, d->loc, loc, sizeof(loc));
		fprintf(f, "  %-13s %-40.40s", kind_name(d->kind), loc);
		for (uint32_t t = 0; t < nt; t++)
			fprintf(f, " %14llu", (unsigned long long)rows[i].count[t]);
		fputc('\n', f);
	}
	if (nrows > 40)
		fprintf(f, "  ... %zu more (--format json lists all)\n", nrows - 40);
}

/* Every section's rows, as text (sections with events) or JSON entries. */
static int each_section(const struct sb_profile *p, int json, FILE *f)
{
	long *row_of = malloc((p->nevents ? p->nevents : 1) * sizeof(*row_of));
	uint32_t tids[MAX_THREADS], nt;
	int first = 1, ret = 0;

	if (!row_of)
		return -1;
	for (size_t e = 0; e < p->nevents; e++)
		row_of[e] = -1;
	for (uint32_t s = 0; s < p->nsections && !ret; s++) {
		struct row *rows = NULL;
		long n = section_rows(p, s, tids, &nt, &rows, row_of);

		if (n < 0) {
			ret = -1;
			break;
		}
		if (json)
			print_json(p, s, tids, nt, rows, (size_t)n, &first, f);
		else if (n)
			print_text(p, s, tids, nt, rows, (size_t)n, f);
		rows_free(rows, (size_t)n);
	}
	free(row_of);
	return ret;
}

static int counts_text(const struct sb_report_ctx *r, FILE *f)
{
	const char *bc = sb_profile_meta_get(r->p, "block_counts");
	char bct[256];
	int ret;

	fprintf(f, "Per-thread event counts (block counts: %s)\n",
		sb_text_escape(bc ? bc : "sampled", bct, sizeof(bct)));
	ret = each_section(r->p, 0, f);
	return ret || ferror(f) ? -1 : 0;
}

static int counts_json(const struct sb_report_ctx *r, struct sb_json *j)
{
	int ret;

	sb_json_member(j, "counts");
	fputc('[', j->f);
	ret = each_section(r->p, 1, j->f);
	fputs("\n  ]", j->f);
	return ret || ferror(j->f) ? -1 : 0;
}

const struct sb_report_view sb_view_counts = {
	.name = "counts",
	.list_text = counts_text,
	.list_json = counts_json,
	.list_help = "      --counts         instead of a report, each section's per-thread\n"
		     "                       event counts (exact block counts of a `scalebpf cc`\n"
		     "                       build, or samples per block), the vectors LIME uses\n",
};
