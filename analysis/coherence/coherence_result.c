// SPDX-License-Identifier: MIT
/*
 * The simulator's bookkeeping (references, lines, invalidator and race
 * pairs) and the result built from it: lines ranked by invalidations and
 * coherence misses, invalidator lists by victim reference and count.
 * Counts in the maps are stored in the value pointer itself.
 */
#include "coherence_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

long sb_coh_ref_index(struct sb_coherence_sim *s, uint64_t pc)
{
	void **slot = sb_idmap_slot(s->refmap, pc, 0, true);

	if (!slot)
		return -1;
	if (!*slot) {
		if (s->nrefs == s->caprefs) {
			size_t cap = s->caprefs ? 2 * s->caprefs : 256;
			struct sb_coherence_ref *n = realloc(s->refs, cap * sizeof(*n));

			if (!n) {
				sb_idmap_remove(s->refmap, pc, 0);
				return -1;
			}
			s->refs = n;
			s->caprefs = cap;
		}
		memset(&s->refs[s->nrefs], 0, sizeof(s->refs[0]));
		s->refs[s->nrefs].pc = pc;
		*slot = (void *)(uintptr_t)++s->nrefs;
	}
	return (long)(uintptr_t)*slot - 1;
}

struct sb_coherence_line *sb_coh_line_stat(struct sb_coherence_sim *s, uint64_t line)
{
	void **slot = sb_idmap_slot(s->linemap, line, 0, true);
	struct sb_coherence_line *l;

	if (!slot)
		return NULL;
	if (*slot)
		return &s->lines[(uintptr_t)*slot - 1];
	if (s->nlines == s->caplines) {
		size_t cap = s->caplines ? 2 * s->caplines : 256;
		struct sb_coherence_line *n = realloc(s->lines, cap * sizeof(*n));
		struct sb_coh_footv *f;

		if (!n) {
			sb_idmap_remove(s->linemap, line, 0);
			return NULL;
		}
		s->lines = n;
		f = realloc(s->feet, cap * sizeof(*f));
		if (!f) {
			sb_idmap_remove(s->linemap, line, 0);
			return NULL;
		}
		s->feet = f;
		s->caplines = cap;
	}
	l = &s->lines[s->nlines];
	memset(l, 0, sizeof(*l));
	memset(&s->feet[s->nlines], 0, sizeof(s->feet[0]));
	l->addr = line << s->line_shift;
	for (size_t i = 0; i < 4; i++)
		l->refs[i] = SB_COH_NOREF;
	*slot = (void *)(uintptr_t)++s->nlines;
	return l;
}

int sb_coh_line_took_part(struct sb_coherence_sim *s, struct sb_coherence_line *l, uint32_t t,
			  uint32_t ref)
{
	for (size_t i = 0; i < 4; i++) {
		if (l->refs[i] == ref)
			break;
		if (l->refs[i] == SB_COH_NOREF) {
			l->refs[i] = ref;
			break;
		}
	}
	if (t < 64) {
		if (!(l->threads >> t & 1))
			l->nthreads++;
		l->threads |= 1ull << t;
	} else {
		void **slot = sb_idmap_slot(s->partmap, l->addr, t, true);

		if (!slot)
			return -ENOMEM;
		if (!*slot)
			l->nthreads++;
		*slot = (void *)1;
	}
	return 0;
}

int sb_coh_count_pair(struct sb_idmap *m, uint64_t k1, uint64_t k2)
{
	void **slot = sb_idmap_slot(m, k1, k2, true);

	if (!slot)
		return -ENOMEM;
	*slot = (void *)((uintptr_t)*slot + 1);
	return 0;
}

int sb_coh_line_foot(struct sb_coherence_sim *s, const struct sb_coherence_line *l, uint32_t t,
		     const struct sb_coh_mask *touched, const struct sb_coh_mask *written)
{
	struct sb_coh_footv *fv = &s->feet[l - s->lines];
	uint32_t i = 0;

	while (i < fv->n && fv->v[i].thread != t)
		i++;
	if (i == fv->n) {
		if (fv->n == fv->cap) {
			uint32_t cap = fv->cap ? 2 * fv->cap : 4;
			struct sb_coh_foot *v = realloc(fv->v, cap * sizeof(*v));

			if (!v)
				return -ENOMEM;
			fv->v = v;
			fv->cap = cap;
		}
		memset(&fv->v[i], 0, sizeof(fv->v[i]));
		fv->v[i].thread = t;
		fv->n++;
	}
	sb_coh_mask_or(&fv->v[i].touched, touched);
	sb_coh_mask_or(&fv->v[i].written, written);
	return 0;
}

/* Bytes two threads touched, one of them writing: threads in turn, a
 * byte counts when this thread wrote it and an earlier one touched it,
 * or this one touched it and an earlier one wrote it. */
static void footprint(const struct sb_coh_footv *fv, struct sb_coherence_line *l)
{
	struct sb_coh_mask seen = { { 0 } }, wrote = { { 0 } }, both = { { 0 } };

	for (uint32_t i = 0; i < fv->n; i++) {
		const struct sb_coh_foot *f = &fv->v[i];

		for (size_t w = 0; w < SB_COHERENCE_MAX_LINE / 64; w++) {
			both.w[w] |= (wrote.w[w] & f->touched.w[w]) | (seen.w[w] & f->written.w[w]);
			seen.w[w] |= f->touched.w[w];
			wrote.w[w] |= f->written.w[w];
		}
	}
	for (size_t w = 0; w < SB_COHERENCE_MAX_LINE / 64; w++)
		l->footprint_true |= both.w[w] != 0;
	l->bytes_true = both.w[0];
	l->name_off = 0;
	l->name_len = 1;
	for (size_t w = 0, first = 1; w < SB_COHERENCE_MAX_LINE / 64; w++) {
		uint64_t pick = l->footprint_true ? both.w[w] : seen.w[w];
		uint32_t hi;

		if (!pick)
			continue;
		hi = (uint32_t)(64 * w + 63 - (size_t)__builtin_clzll(pick));
		if (first)
			l->name_off = (uint32_t)(64 * w + (size_t)__builtin_ctzll(pick));
		l->name_len = hi - l->name_off + 1;
		first = 0;
	}
}

static int by_line_cost(const void *a, const void *b)
{
	const struct sb_coherence_line *x = a, *y = b;
	uint64_t ix = sb_coherence_inv_total(&x->inv), iy = sb_coherence_inv_total(&y->inv);
	uint64_t mx = x->coh_true + x->coh_false, my = y->coh_true + y->coh_false;

	if (ix != iy)
		return ix > iy ? -1 : 1;
	if (mx != my)
		return mx > my ? -1 : 1;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int by_victim_count(const void *a, const void *b)
{
	const struct sb_coherence_invalidator *x = a, *y = b;

	if (x->victim != y->victim)
		return x->victim < y->victim ? -1 : 1;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	if (x->store != y->store)
		return x->store < y->store ? -1 : 1;
	return x->thread < y->thread ? -1 : x->thread > y->thread;
}

static int by_race_count(const void *a, const void *b)
{
	const struct sb_coherence_race *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	if (x->a != y->a)
		return x->a < y->a ? -1 : 1;
	return x->b < y->b ? -1 : x->b > y->b;
}

int sb_coherence_sim_result(const struct sb_coherence_sim *s, struct sb_coherence_result *r)
{
	size_t it = 0, n = 0;
	uint64_t k1, k2;
	void *v;

	memset(r, 0, sizeof(*r));
	r->mode = s->o.mode;
	r->nthreads = s->nthreads;
	r->regions = s->regions_seen;
	r->lost_tags_dropped = s->lost_dropped;
	r->threads = calloc(s->nthreads, sizeof(*r->threads));
	r->refs = malloc((s->nrefs ? s->nrefs : 1) * sizeof(*r->refs));
	r->lines = malloc((s->nlines ? s->nlines : 1) * sizeof(*r->lines));
	r->invalidators = malloc((sb_idmap_count(s->invmap) + 1) * sizeof(*r->invalidators));
	r->races = malloc((sb_idmap_count(s->racemap) + 1) * sizeof(*r->races));
	if (!r->threads || !r->refs || !r->lines || !r->invalidators || !r->races) {
		sb_coherence_result_free(r);
		return -ENOMEM;
	}
	for (uint32_t t = 0; t < s->nthreads; t++)
		r->threads[t] = s->th[t].c;
	if (s->nrefs)
		memcpy(r->refs, s->refs, s->nrefs * sizeof(*r->refs));
	r->nrefs = s->nrefs;
	if (s->nlines)
		memcpy(r->lines, s->lines, s->nlines * sizeof(*r->lines));
	r->nlines = s->nlines;
	for (size_t i = 0; i < r->nlines; i++)
		footprint(&s->feet[i], &r->lines[i]);
	qsort(r->lines, r->nlines, sizeof(*r->lines), by_line_cost);
	while (sb_idmap_next(s->invmap, &it, &k1, &k2, &v))
		r->invalidators[n++] = (struct sb_coherence_invalidator){
			.victim = (uint32_t)k1, .store = (uint32_t)(k1 >> 32),
			.thread = (uint32_t)k2, .count = (uintptr_t)v };
	r->ninvalidators = n;
	qsort(r->invalidators, n, sizeof(*r->invalidators), by_victim_count);
	it = n = 0;
	while (sb_idmap_next(s->racemap, &it, &k1, &k2, &v))
		r->races[n++] = (struct sb_coherence_race){ .a = (uint32_t)k1, .b = (uint32_t)k2,
							    .count = (uintptr_t)v };
	r->nraces = n;
	qsort(r->races, n, sizeof(*r->races), by_race_count);
	return 0;
}

void sb_coherence_result_free(struct sb_coherence_result *r)
{
	free(r->threads);
	free(r->refs);
	free(r->lines);
	free(r->invalidators);
	free(r->races);
	memset(r, 0, sizeof(*r));
}

static void inv_sum(struct sb_coherence_inv *a, const struct sb_coherence_inv *b)
{
	a->in_true += b->in_true;
	a->in_true_locked += b->in_true_locked;
	a->in_true_race += b->in_true_race;
	a->in_false += b->in_false;
	a->across_true += b->across_true;
	a->across_false += b->across_false;
}

void sb_coherence_result_total(const struct sb_coherence_result *r,
			       struct sb_coherence_counts *c)
{
	memset(c, 0, sizeof(*c));
	for (uint32_t t = 0; t < r->nthreads; t++) {
		const struct sb_coherence_counts *x = &r->threads[t];

		c->loads += x->loads;
		c->stores += x->stores;
		c->l1_hits += x->l1_hits;
		c->l2_hits += x->l2_hits;
		c->misses += x->misses;
		c->coh_true += x->coh_true;
		c->coh_false += x->coh_false;
		inv_sum(&c->inv, &x->inv);
	}
}
