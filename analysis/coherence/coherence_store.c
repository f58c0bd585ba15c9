// SPDX-License-Identifier: MIT
/*
 * A simulation's result into the profile's SHARING rows, and back out as
 * variables for the report.  A variable is the data a line's name_of
 * gave (a global, "heap 0x...", a thread's stack): its lines are summed,
 * its references are those its lines name.
 */
#include "coherence_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"

struct sb_sharing *sb_coherence_row(struct sb_profile *p, size_t *cap, uint32_t kind,
				    uint32_t mode)
{
	struct sb_sharing *s;

	if (p->nsharing == *cap) {
		size_t n = *cap ? 2 * *cap : 64;
		struct sb_sharing *a = realloc(p->sharing, n * sizeof(*a));

		if (!a)
			return NULL;
		p->sharing = a;
		*cap = n;
	}
	s = &p->sharing[p->nsharing++];
	memset(s, 0, sizeof(*s));
	s->kind = kind;
	s->mode = mode;
	s->loc = s->loc2 = -1;
	for (size_t k = 0; k < 4; k++)
		s->refs[k] = -1;
	return s;
}

static void put_inv(uint64_t *v, const struct sb_coherence_inv *i)
{
	v[SB_SHV_IN_TRUE] = i->in_true;
	v[SB_SHV_IN_TRUE_LOCKED] = i->in_true_locked;
	v[SB_SHV_IN_TRUE_RACE] = i->in_true_race;
	v[SB_SHV_IN_FALSE] = i->in_false;
	v[SB_SHV_ACROSS_TRUE] = i->across_true;
	v[SB_SHV_ACROSS_FALSE] = i->across_false;
}

static void put_counts(uint64_t *v, const struct sb_coherence_counts *c)
{
	v[SB_SHV_LOADS] = c->loads;
	v[SB_SHV_STORES] = c->stores;
	v[SB_SHV_L1_HITS] = c->l1_hits;
	v[SB_SHV_L2_HITS] = c->l2_hits;
	v[SB_SHV_MISSES] = c->misses;
	v[SB_SHV_COH_TRUE] = c->coh_true;
	v[SB_SHV_COH_FALSE] = c->coh_false;
	put_inv(v, &c->inv);
}

int32_t sb_coherence_loc(sb_coherence_loc_fn f, void *ctx, uint64_t pc)
{
	long l = f ? f(ctx, pc) : -1;

	return l >= 0 && l <= INT32_MAX ? (int32_t)l : -1;
}

static bool shares(const struct sb_coherence_ref *r)
{
	return sb_coherence_inv_total(&r->c.inv) || sb_coherence_inv_total(&r->caused) ||
	       r->c.coh_true || r->c.coh_false;
}

int sb_coherence_store(const struct sb_coherence_result *r, const uint32_t *tids,
		       sb_coherence_loc_fn loc_of, sb_coherence_name_fn name_of, void *ctx,
		       struct sb_profile *p)
{
	uint32_t mode = r->mode == SB_COHERENCE_INTERLEAVED ? SB_SHARING_INTERLEAVED :
							      SB_SHARING_PIPED;
	size_t cap = p->nsharing;
	struct sb_sharing *s;
	char name[256];

	for (uint32_t t = 0; t < r->nthreads; t++) {
		if (!(s = sb_coherence_row(p, &cap, SB_SHARING_THREAD, mode)))
			return -ENOMEM;
		s->tid = tids ? tids[t] : t;
		put_counts(s->v, &r->threads[t]);
	}
	for (size_t i = 0; i < r->nrefs; i++) {
		if (!shares(&r->refs[i]))
			continue;
		if (!(s = sb_coherence_row(p, &cap, SB_SHARING_REF, mode)))
			return -ENOMEM;
		s->addr = r->refs[i].pc;
		s->loc = sb_coherence_loc(loc_of, ctx, r->refs[i].pc);
		put_counts(s->v, &r->refs[i].c);
		s->v[SB_SHV_CAUSED] = sb_coherence_inv_total(&r->refs[i].caused);
	}
	for (size_t i = 0; i < r->nlines; i++) {
		const struct sb_coherence_line *l = &r->lines[i];

		name[0] = 0;
		if (name_of)
			name_of(ctx, l->addr + l->name_off, l->name_len, name, sizeof(name));
		if (!(s = sb_coherence_row(p, &cap, SB_SHARING_LINE, mode)))
			return -ENOMEM;
		s->addr = l->addr;
		s->name = strdup(name[0] ? name : "?");
		if (!s->name)
			return -ENOMEM;
		for (size_t k = 0; k < 4; k++)
			if (l->refs[k] != SB_COH_NOREF)
				s->refs[k] = sb_coherence_loc(loc_of, ctx, r->refs[l->refs[k]].pc);
		put_inv(s->v, &l->inv);
		s->v[SB_SHV_COH_TRUE] = l->coh_true;
		s->v[SB_SHV_COH_FALSE] = l->coh_false;
		s->v[SB_SHV_THREADS] = l->nthreads;
		s->v[SB_SHV_BYTES_TRUE] = l->bytes_true;
		s->v[SB_SHV_FOOTPRINT_TRUE] = l->footprint_true;
	}
	for (size_t i = 0; i < r->ninvalidators; i++) {
		const struct sb_coherence_invalidator *v = &r->invalidators[i];

		if (!(s = sb_coherence_row(p, &cap, SB_SHARING_INVALIDATOR, mode)))
			return -ENOMEM;
		s->loc = sb_coherence_loc(loc_of, ctx, r->refs[v->store].pc);
		s->loc2 = sb_coherence_loc(loc_of, ctx, r->refs[v->victim].pc);
		s->tid = tids && v->thread < r->nthreads ? tids[v->thread] : v->thread;
		s->v[SB_SHV_COUNT] = v->count;
	}
	for (size_t i = 0; i < r->nraces; i++) {
		if (!(s = sb_coherence_row(p, &cap, SB_SHARING_RACE, mode)))
			return -ENOMEM;
		s->loc = sb_coherence_loc(loc_of, ctx, r->refs[r->races[i].a].pc);
		s->loc2 = sb_coherence_loc(loc_of, ctx, r->refs[r->races[i].b].pc);
		s->v[SB_SHV_COUNT] = r->races[i].count;
	}
	return 0;
}

/* ---- variables ---- */

static void add_ref(struct sb_coherence_var *v, int32_t l)
{
	if (l < 0)
		return;
	for (size_t k = 0; k < v->nrefs; k++)
		if (v->refs[k] == l)
			return;
	if (v->nrefs < sizeof(v->refs) / sizeof(v->refs[0]))
		v->refs[v->nrefs++] = l;
}

static int by_cost(const void *a, const void *b)
{
	const struct sb_coherence_var *x = a, *y = b;

	if (x->cost_ppm != y->cost_ppm)   /* sampled mode; 0 in exact mode */
		return x->cost_ppm > y->cost_ppm ? -1 : 1;
	if (x->coh_misses != y->coh_misses)
		return x->coh_misses > y->coh_misses ? -1 : 1;
	if (x->invalidations != y->invalidations)
		return x->invalidations > y->invalidations ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Sampled lines of one array are far apart (samples are sparse), but the
 * same instructions touch them: one variable. */
static bool shares_ref(const struct sb_coherence_var *v, const struct sb_sharing *s)
{
	for (size_t k = 0; k < 4; k++)
		for (size_t r = 0; s->refs[k] >= 0 && r < v->nrefs; r++)
			if (v->refs[r] == s->refs[k])
				return true;
	return false;
}

/* The variable a line row joins: its name, or for unnamed lines the
 * group of unnamed lines near it (or, sampled, touched by its
 * instructions). */
static struct sb_coherence_var *var_of(struct sb_coherence_var *v, size_t nv,
				       const struct sb_sharing *s, const char *name, size_t nlen)
{
	bool anon = !strncmp(name, SB_COHERENCE_ANON, strlen(SB_COHERENCE_ANON));

	/* names are kept to the buffer's size: compare what was kept */
	if (nlen > sizeof(v->name) - 1)
		nlen = sizeof(v->name) - 1;
	for (size_t k = 0; k < nv; k++) {
		if (anon && !strncmp(v[k].name, SB_COHERENCE_ANON, strlen(SB_COHERENCE_ANON)) &&
		    ((s->addr >= v[k].lo && s->addr <= v[k].hi + (64u << 10)) ||
		     (s->mode == SB_SHARING_SAMPLED && shares_ref(&v[k], s))))
			return &v[k];
		if (!anon && strlen(v[k].name) == nlen && !strncmp(v[k].name, name, nlen))
			return &v[k];
	}
	return NULL;
}

/* Adds "\t[0..3]" (a line's part of the variable) to x's parts, once. */
static void add_part(struct sb_coherence_var *x, const char *part)
{
	size_t used = strlen(x->parts), n;
	const char *p;

	if (*part != '\t' || !part[1])
		return;
	part++;
	n = strlen(part);
	for (p = x->parts; (p = strstr(p, part)); p += n)
		if ((p == x->parts || p[-1] == ' ') && (p[n] == ',' || !p[n]))
			return;
	if (used + n + 3 >= sizeof(x->parts))
		return;
	snprintf(x->parts + used, sizeof(x->parts) - used, "%s%s", used ? ", " : "", part);
}

/* The length of name without its part (after a tab: "\t[0..3]") and a
 * compiler's ".N" suffix. */
static size_t base_len(const char *name)
{
	size_t n = strcspn(name, "\t"), i = n;

	while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9')
		i--;
	return i < n && i > 1 && name[i - 1] == '.' ? i - 1 : n;
}

static int by_addr(const void *a, const void *b)
{
	const struct sb_sharing *x = *(const struct sb_sharing *const *)a,
				*y = *(const struct sb_sharing *const *)b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int sb_coherence_vars(const struct sb_profile *p, uint32_t mode, struct sb_coherence_var **vars,
		      size_t *n)
{
	struct sb_coherence_var *v = NULL;
	const struct sb_sharing **rows = malloc((p->nsharing + 1) * sizeof(*rows));
	size_t nv = 0, nr = 0;

	*vars = NULL;
	*n = 0;
	if (!rows)
		return -ENOMEM;
	/* in address order: unnamed lines gather into contiguous ranges */
	for (size_t i = 0; i < p->nsharing; i++)
		if (p->sharing[i].kind == SB_SHARING_LINE && p->sharing[i].mode == mode)
			rows[nr++] = &p->sharing[i];
	qsort(rows, nr, sizeof(*rows), by_addr);
	for (size_t i = 0; i < nr; i++) {
		const struct sb_sharing *s = rows[i];
		const char *name = s->name ? s->name : "?";
		size_t nlen = base_len(name);
		struct sb_coherence_var *x;

		x = var_of(v, nv, s, name, nlen);
		if (!x) {
			struct sb_coherence_var *a = realloc(v, (nv + 1) * sizeof(*a));

			if (!a) {
				free(v);
				free(rows);
				return -ENOMEM;
			}
			v = a;
			x = &v[nv++];
			memset(x, 0, sizeof(*x));
			snprintf(x->name, sizeof(x->name), "%.*s", (int)nlen, name);
			x->mode = mode;
			x->lo = x->hi = s->addr;
			x->section = -1;
		}
		add_part(x, name + strcspn(name, "\t"));
		x->lo = s->addr < x->lo ? s->addr : x->lo;
		x->hi = s->addr > x->hi ? s->addr : x->hi;
		x->lines++;
		x->true_sharing = x->true_sharing || s->v[SB_SHV_FOOTPRINT_TRUE];
		x->in_true += s->v[SB_SHV_IN_TRUE];
		x->in_true_locked += s->v[SB_SHV_IN_TRUE_LOCKED];
		x->in_true_race += s->v[SB_SHV_IN_TRUE_RACE];
		x->in_false += s->v[SB_SHV_IN_FALSE];
		x->across_true += s->v[SB_SHV_ACROSS_TRUE];
		x->across_false += s->v[SB_SHV_ACROSS_FALSE];
		x->coh_misses += s->v[SB_SHV_COH_TRUE] + s->v[SB_SHV_COH_FALSE];
		x->samples += s->v[SB_SHV_SAMPLES];
		x->confirmations += s->v[SB_SHV_CONFIRMS];
		x->windows += s->v[SB_SHV_WINDOWS];
		x->windows_confirmed += s->v[SB_SHV_WINDOWS_CONFIRMED];
		x->windows_in_region += s->v[SB_SHV_WINDOWS_IN_REGION];
		x->pairs_in_region += s->v[SB_SHV_PAIRS_IN_REGION];
		x->pairs_across += s->v[SB_SHV_PAIRS_ACROSS];
		/* a line's cost is that of the instructions touching it,
		 * which its variable's other lines share (a loop over an
		 * array): the variable's is its costliest line's */
		if (x->section < 0 && s->v[SB_SHV_SECTION])
			x->section = (int32_t)s->v[SB_SHV_SECTION] - 1;
		if (s->v[SB_SHV_COST_PPM] > x->cost_ppm) {
			x->cost_ppm = s->v[SB_SHV_COST_PPM];
			if (s->v[SB_SHV_SECTION])
				x->section = (int32_t)s->v[SB_SHV_SECTION] - 1;
		}
		if (s->v[SB_SHV_THREADS] > x->threads)
			x->threads = (uint32_t)s->v[SB_SHV_THREADS];
		for (size_t k = 0; k < 4; k++)
			add_ref(x, s->refs[k]);
	}
	free(rows);
	for (size_t k = 0; k < nv; k++) {
		struct sb_coherence_var *x = &v[k];

		x->invalidations = x->in_true + x->in_false + x->across_true + x->across_false;
		/* sampled: by section instances where the stamps fall in
		 * stored ones, else by windows (coherence.h) */
		if (mode != SB_SHARING_SAMPLED)
			x->in_region = x->in_true + x->in_false >= x->across_true + x->across_false;
		else if (x->pairs_in_region + x->pairs_across)
			/* stamps are few and spread over the run: most pairs are
			 * far apart, and one in a single region says it all */
			x->in_region = x->pairs_in_region > 0;
		else
			x->in_region = 2 * x->windows_in_region >= x->windows_confirmed;
		if (x->cost_ppm > 1000000)
			x->cost_ppm = 1000000;
		if (!strncmp(x->name, SB_COHERENCE_ANON, strlen(SB_COHERENCE_ANON)))
			snprintf(x->name, sizeof(x->name), SB_COHERENCE_ANON "lines 0x%llx..0x%llx",
				 (unsigned long long)x->lo, (unsigned long long)x->hi);
		for (size_t i = 0; i < p->nsharing; i++) {
			const struct sb_sharing *s = &p->sharing[i];

			if (s->kind != SB_SHARING_REF || s->mode != mode || s->loc < 0)
				continue;
			for (size_t r = 0; r < x->nrefs; r++)
				if (x->refs[r] == s->loc) {
					x->loads += s->v[SB_SHV_LOADS];
					x->stores += s->v[SB_SHV_STORES];
				}
		}
	}
	if (nv)
		qsort(v, nv, sizeof(*v), by_cost);
	*vars = v;
	*n = nv;
	return 0;
}
