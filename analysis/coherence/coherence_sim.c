// SPDX-License-Identifier: MIT
/*
 * The MESI simulator of coherence.h: caches, directory, classification.
 * The state it keeps is described in coherence_priv.h.
 */
#include "coherence_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sb_coherence_opts_default(struct sb_coherence_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->line = 64;
	o->l1 = (struct sb_coherence_level){ 32 << 10, 8 };
	o->l2 = (struct sb_coherence_level){ 1 << 20, 16 };
	o->mode = SB_COHERENCE_PIPED;
}

static bool pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

static int level_check(const char *name, const struct sb_coherence_level *l, uint32_t line,
		       char *err, size_t len)
{
	uint64_t per_set = (uint64_t)l->ways * line;

	if (!l->ways || !l->size || l->size % per_set || !pow2(l->size / per_set)) {
		snprintf(err, len, "%s: %u bytes in %u ways of %u-byte lines is not a power-of-two "
			 "number of sets", name, l->size, l->ways, line);
		return -EINVAL;
	}
	return 0;
}

int sb_coherence_opts_check(const struct sb_coherence_opts *o, char *err, size_t len)
{
	if (!pow2(o->line) || o->line < 8 || o->line > SB_COHERENCE_MAX_LINE) {
		snprintf(err, len, "line size %u: a power of two from 8 to %u bytes is needed",
			 o->line, SB_COHERENCE_MAX_LINE);
		return -EINVAL;
	}
	if (o->mode != SB_COHERENCE_PIPED && o->mode != SB_COHERENCE_INTERLEAVED) {
		snprintf(err, len, "unknown interleaving mode %d", (int)o->mode);
		return -EINVAL;
	}
	if (level_check("L1", &o->l1, o->line, err, len) ||
	    level_check("L2", &o->l2, o->line, err, len))
		return -EINVAL;
	if (o->l1.size > o->l2.size) {
		snprintf(err, len, "the L1 (%u bytes) is larger than the L2 (%u bytes): the L2 "
			 "must hold it (inclusive caches)", o->l1.size, o->l2.size);
		return -EINVAL;
	}
	return 0;
}

struct sb_coherence_sim *sb_coherence_sim_alloc(uint32_t nthreads,
						const struct sb_coherence_opts *o,
						char *err, size_t len)
{
	struct sb_coherence_sim *s;

	if (sb_coherence_opts_check(o, err, len))
		return NULL;
	if (!nthreads || nthreads > SB_COHERENCE_MAX_THREADS) {
		snprintf(err, len, "%u threads: 1 to %u can be simulated", nthreads,
			 SB_COHERENCE_MAX_THREADS);
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		goto nomem;
	s->o = *o;
	s->nthreads = nthreads;
	s->nwords = (nthreads + 63) / 64;
	s->line_shift = (uint32_t)__builtin_ctz(o->line);
	s->l1_sets = o->l1.size / (o->l1.ways * o->line);
	s->l2_sets = o->l2.size / (o->l2.ways * o->line);
	s->th = calloc(nthreads, sizeof(*s->th));
	s->dir = sb_idmap_alloc();
	s->lost = sb_idmap_alloc();
	s->refmap = sb_idmap_alloc();
	s->linemap = sb_idmap_alloc();
	s->invmap = sb_idmap_alloc();
	s->racemap = sb_idmap_alloc();
	s->partmap = sb_idmap_alloc();
	if (!s->th || !s->dir || !s->lost || !s->refmap || !s->linemap || !s->invmap ||
	    !s->racemap || !s->partmap)
		goto nomem;
	for (uint32_t t = 0; t < nthreads; t++) {
		s->th[t].l1 = calloc((size_t)s->l1_sets * o->l1.ways, sizeof(*s->th[t].l1));
		s->th[t].l2 = calloc((size_t)s->l2_sets * o->l2.ways, sizeof(*s->th[t].l2));
		if (!s->th[t].l1 || !s->th[t].l2)
			goto nomem;
	}
	return s;
nomem:
	snprintf(err, len, "out of memory for %u threads' caches", nthreads);
	sb_coherence_sim_free(s);
	return NULL;
}

void sb_coherence_sim_free(struct sb_coherence_sim *s)
{
	if (!s)
		return;
	for (uint32_t t = 0; s->th && t < s->nthreads; t++) {
		free(s->th[t].l1);
		free(s->th[t].l2);
	}
	free(s->th);
	sb_idmap_free_with(s->dir, free);
	sb_idmap_free_with(s->lost, free);
	sb_idmap_free(s->refmap);
	sb_idmap_free(s->linemap);
	sb_idmap_free(s->invmap);
	sb_idmap_free(s->racemap);
	sb_idmap_free(s->partmap);
	free(s->refs);
	for (size_t i = 0; i < s->nlines; i++)
		free(s->feet[i].v);
	free(s->feet);
	free(s->lines);
	free(s);
}

void sb_coherence_sim_region(struct sb_coherence_sim *s, uint64_t region)
{
	if (!s->any_region || region != s->region)
		s->regions_seen++;
	s->any_region = true;
	s->region = region;
}

void sb_coherence_sim_lock(struct sb_coherence_sim *s, uint32_t t, int delta)
{
	if (t >= s->nthreads)
		return;
	s->th[t].locks += delta;
	if (s->th[t].locks < 0)
		s->th[t].locks = 0;   /* a release whose acquire was not traced */
}

/* ---- caches ---- */

static long l1_find(const struct sb_coherence_sim *s, const struct sb_coh_thread *th, uint64_t tag)
{
	uint32_t ways = s->o.l1.ways;
	size_t base = (size_t)((tag - 1) & (s->l1_sets - 1)) * ways;

	for (uint32_t w = 0; w < ways; w++)
		if (th->l1[base + w].tag == tag)
			return (long)(base + w);
	return -1;
}

static long l2_find(const struct sb_coherence_sim *s, const struct sb_coh_thread *th, uint64_t tag)
{
	uint32_t ways = s->o.l2.ways;
	size_t base = (size_t)((tag - 1) & (s->l2_sets - 1)) * ways;

	for (uint32_t w = 0; w < ways; w++)
		if (th->l2[base + w].tag == tag)
			return (long)(base + w);
	return -1;
}

/* The way to fill in a set: an empty one, else the least recently used. */
static size_t victim_way(const uint64_t *tag, const uint64_t *lru, size_t stride, size_t base,
			 uint32_t ways)
{
	size_t best = base;

	for (uint32_t w = 0; w < ways; w++) {
		size_t i = base + w;

		if (!*(const uint64_t *)((const char *)tag + i * stride))
			return i;
		if (*(const uint64_t *)((const char *)lru + i * stride) <
		    *(const uint64_t *)((const char *)lru + best * stride))
			best = i;
	}
	return best;
}

static void l1_fill(struct sb_coherence_sim *s, struct sb_coh_thread *th, uint64_t tag,
		    size_t l2way)
{
	uint32_t ways = s->o.l1.ways;
	size_t base = (size_t)((tag - 1) & (s->l1_sets - 1)) * ways;
	size_t v = victim_way(&th->l1[0].tag, &th->l1[0].lru, sizeof(th->l1[0]), base, ways);

	th->l1[v] = (struct sb_coh_l1way){ .tag = tag, .lru = th->clock, .l2way = (uint32_t)l2way };
}

static void l1_drop(struct sb_coherence_sim *s, struct sb_coh_thread *th, uint64_t tag)
{
	long i = l1_find(s, th, tag);

	if (i >= 0)
		th->l1[i].tag = 0;
}

static uint64_t *holders(const struct sb_coherence_sim *s, struct sb_coh_dir *d)
{
	(void)s;
	return d->bits;
}

static uint64_t *losers(const struct sb_coherence_sim *s, struct sb_coh_dir *d)
{
	return d->bits + s->nwords;
}

static struct sb_coh_dir *dir_get(struct sb_coherence_sim *s, uint64_t tag, bool create)
{
	void **slot = sb_idmap_slot(s->dir, tag, 0, create);

	if (!slot)
		return NULL;
	if (!*slot && create)
		*slot = calloc(1, sizeof(struct sb_coh_dir) + 2 * s->nwords * sizeof(uint64_t));
	return *slot;
}

static void dir_put_back(struct sb_coherence_sim *s, uint64_t tag, struct sb_coh_dir *d)
{
	if (!d->nholders && !d->nlost)
		free(sb_idmap_remove(s->dir, tag, 0));
}

static bool bit_test(const uint64_t *b, uint32_t t)
{
	return b[t >> 6] >> (t & 63) & 1;
}

static void bit_set(uint64_t *b, uint32_t t)
{
	b[t >> 6] |= 1ull << (t & 63);
}

static void bit_clear(uint64_t *b, uint32_t t)
{
	b[t >> 6] &= ~(1ull << (t & 63));
}

/* The set bits of b (nwords words) after t, or UINT32_MAX. */
static uint32_t bit_next(const uint64_t *b, uint32_t nwords, uint32_t from)
{
	for (uint32_t w = from >> 6; w < nwords; w++) {
		uint64_t v = b[w];

		if (w == from >> 6)
			v &= ~0ull << (from & 63);
		if (v)
			return w * 64 + (uint32_t)__builtin_ctzll(v);
	}
	return UINT32_MAX;
}

/* Thread t's L2 line leaves (capacity): its L1 copy and directory bit too. */
static void l2_evict(struct sb_coherence_sim *s, uint32_t t, struct sb_coh_l2way *w)
{
	struct sb_coh_dir *d = dir_get(s, w->tag, false);

	l1_drop(s, &s->th[t], w->tag);
	if (d && bit_test(holders(s, d), t)) {
		bit_clear(holders(s, d), t);
		d->nholders--;
		dir_put_back(s, w->tag, d);
	}
	w->tag = 0;
	w->state = SB_COH_I;
}

/* ---- coherence ---- */

static void inv_add(struct sb_coherence_inv *v, bool in, bool tr, bool locked, bool race)
{
	if (in && tr) {
		v->in_true++;
		v->in_true_locked += locked;
		v->in_true_race += race;
	} else if (in) {
		v->in_false++;
	} else if (tr) {
		v->across_true++;
	} else {
		v->across_false++;
	}
}

/* Keeps thread u's tag of a line it lost, with the bytes stored so far. */
static int lose(struct sb_coherence_sim *s, struct sb_coh_dir *d, uint64_t tag, uint32_t u,
		const struct sb_coh_mask *m)
{
	void **slot;

	if (s->nlost >= SB_COH_MAX_LOST) {
		s->lost_dropped++;
		return 0;
	}
	slot = sb_idmap_slot(s->lost, tag, u, true);
	if (!slot)
		return -ENOMEM;
	if (!*slot) {
		*slot = calloc(1, sizeof(struct sb_coh_mask));
		if (!*slot)
			return -ENOMEM;
		s->nlost++;
		bit_set(losers(s, d), u);
		d->nlost++;
	}
	sb_coh_mask_or(*slot, m);
	return 0;
}

/* Thread t stores bytes m of a line others hold: their copies go.  *lost
 * says whether other threads now keep a tag of the line. */
static int invalidate_others(struct sb_coherence_sim *s, uint32_t t, uint64_t tag,
			     const struct sb_coh_mask *m, uint32_t ref, const struct sb_coh_l2way *tw,
			     bool *lost)
{
	struct sb_coh_dir *d = dir_get(s, tag, false);
	struct sb_coherence_line *ls = NULL;
	int err = 0;

	*lost = false;
	if (!d)
		return 0;
	for (uint32_t u = bit_next(holders(s, d), s->nwords, 0); u != UINT32_MAX;
	     u = bit_next(holders(s, d), s->nwords, u + 1)) {
		struct sb_coh_thread *vt = &s->th[u];
		long wi;
		struct sb_coh_l2way *w;
		bool in, tr, locked, race;

		if (u == t || (wi = l2_find(s, vt, tag)) < 0)
			continue;
		w = &vt->l2[wi];
		tr = sb_coh_mask_meets(m, &w->touched);
		in = w->region == s->region;
		locked = in && tr && w->locked && s->th[t].locks > 0;
		race = in && tr && !locked && w->last_store_region == s->region &&
		       w->last_store != SB_COH_NOREF && sb_coh_mask_meets(m, &w->stored);
		inv_add(&vt->c.inv, in, tr, locked, race);
		inv_add(&s->refs[w->brought].c.inv, in, tr, locked, race);
		inv_add(&s->refs[ref].caused, in, tr, locked, race);
		if (!ls && !(ls = sb_coh_line_stat(s, tag - 1)))
			return -ENOMEM;
		inv_add(&ls->inv, in, tr, locked, race);
		if (sb_coh_line_foot(s, ls, u, &w->touched, &w->written) ||
		    sb_coh_line_took_part(s, ls, u, w->brought) ||
		    sb_coh_line_took_part(s, ls, t, ref) ||
		    sb_coh_count_pair(s->invmap, (uint64_t)w->brought | (uint64_t)ref << 32, t) ||
		    (race && sb_coh_count_pair(s->racemap, ref < w->last_store ? ref : w->last_store,
					       ref < w->last_store ? w->last_store : ref)))
			return -ENOMEM;
		l1_drop(s, vt, tag);
		w->tag = 0;
		w->state = SB_COH_I;
		bit_clear(holders(s, d), u);
		d->nholders--;
		err = lose(s, d, tag, u, m);
		if (err)
			return err;
	}
	if (ls) {
		/* the storer's stay so far, and this store */
		struct sb_coh_mask tt = *m, tws = *m;

		sb_coh_mask_or(&tt, &tw->touched);
		sb_coh_mask_or(&tws, &tw->written);
		if (sb_coh_line_foot(s, ls, t, &tt, &tws))
			return -ENOMEM;
	}
	/* Threads that lost the line earlier see these bytes change too. */
	for (uint32_t v = bit_next(losers(s, d), s->nwords, 0); v != UINT32_MAX;
	     v = bit_next(losers(s, d), s->nwords, v + 1)) {
		void **slot = sb_idmap_slot(s->lost, tag, v, false);

		if (v != t && slot && *slot) {
			sb_coh_mask_or(*slot, m);
			*lost = true;
		}
	}
	return 0;
}

/* A miss of thread t: a coherence miss if it had lost the line; then the
 * line comes into its L2 (and L1), shared with any other holders. */
static long miss(struct sb_coherence_sim *s, uint32_t t, uint64_t tag, const struct sb_coh_mask *m,
		 uint32_t ref)
{
	struct sb_coh_thread *th = &s->th[t];
	struct sb_coh_dir *d = dir_get(s, tag, true);
	uint32_t ways = s->o.l2.ways;
	size_t base, v;
	struct sb_coh_l2way *w;

	if (!d)
		return -ENOMEM;
	if (bit_test(losers(s, d), t)) {
		struct sb_coh_mask *lm = sb_idmap_remove(s->lost, tag, t);
		struct sb_coherence_line *ls = sb_coh_line_stat(s, tag - 1);
		bool tr = lm && sb_coh_mask_meets(m, lm);

		if (!ls) {
			free(lm);
			return -ENOMEM;
		}
		free(lm);
		s->nlost--;
		bit_clear(losers(s, d), t);
		d->nlost--;
		th->c.coh_true += tr;
		th->c.coh_false += !tr;
		s->refs[ref].c.coh_true += tr;
		s->refs[ref].c.coh_false += !tr;
		ls->coh_true += tr;
		ls->coh_false += !tr;
		if (sb_coh_line_took_part(s, ls, t, ref) ||
		    sb_coh_line_foot(s, ls, t, m, &(struct sb_coh_mask){ { 0 } }))
			return -ENOMEM;
	}
	base = (size_t)((tag - 1) & (s->l2_sets - 1)) * ways;
	v = victim_way(&th->l2[0].tag, &th->l2[0].lru, sizeof(th->l2[0]), base, ways);
	if (th->l2[v].tag) {
		l2_evict(s, t, &th->l2[v]);
		/* the eviction may have freed d: it held no thread then */
		d = dir_get(s, tag, true);
		if (!d)
			return -ENOMEM;
	}
	w = &th->l2[v];
	memset(w, 0, sizeof(*w));
	w->tag = tag;
	w->brought = ref;
	w->last_store = SB_COH_NOREF;
	w->state = d->nholders ? SB_COH_S : SB_COH_E;
	w->others_lost = d->nlost > 0;
	for (uint32_t u = bit_next(holders(s, d), s->nwords, 0); u != UINT32_MAX;
	     u = bit_next(holders(s, d), s->nwords, u + 1)) {
		long ui = l2_find(s, &s->th[u], tag);

		if (ui >= 0)
			s->th[u].l2[ui].state = SB_COH_S;   /* M and E downgrade */
	}
	bit_set(holders(s, d), t);
	d->nholders++;
	l1_fill(s, th, tag, v);
	return (long)v;
}

static int access_line(struct sb_coherence_sim *s, uint32_t t, uint64_t line, uint32_t off,
		       uint32_t n, bool store, uint32_t ref)
{
	struct sb_coh_thread *th = &s->th[t];
	struct sb_coherence_counts *rc = &s->refs[ref].c;
	uint64_t tag = line + 1;
	struct sb_coh_mask m = { { 0 } };
	struct sb_coh_l2way *w;
	long i;

	sb_coh_mask_range(&m, off, n);
	th->clock++;
	th->c.stores += store;
	th->c.loads += !store;
	rc->stores += store;
	rc->loads += !store;
	if ((i = l1_find(s, th, tag)) >= 0) {
		th->l1[i].lru = th->clock;
		th->c.l1_hits++;
		rc->l1_hits++;
		w = &th->l2[th->l1[i].l2way];
	} else if ((i = l2_find(s, th, tag)) >= 0) {
		th->c.l2_hits++;
		rc->l2_hits++;
		l1_fill(s, th, tag, (size_t)i);
		w = &th->l2[i];
	} else {
		th->c.misses++;
		rc->misses++;
		i = miss(s, t, tag, &m, ref);
		if (i < 0)
			return (int)i;
		w = &th->l2[i];
	}
	w->lru = th->clock;
	if (store && (w->state == SB_COH_S || w->others_lost)) {
		bool lost;
		int err = invalidate_others(s, t, tag, &m, ref, w, &lost);

		if (err)
			return err;
		w->others_lost = lost;
	}
	if (store) {
		w->state = SB_COH_M;
		if (w->last_store_region != s->region || w->last_store == SB_COH_NOREF)
			memset(&w->stored, 0, sizeof(w->stored));
		sb_coh_mask_or(&w->stored, &m);
		sb_coh_mask_or(&w->written, &m);
		w->last_store = ref;
		w->last_store_region = s->region;
	}
	sb_coh_mask_or(&w->touched, &m);
	w->region = s->region;
	w->locked = th->locks > 0;
	return 0;
}

int sb_coherence_sim_access(struct sb_coherence_sim *s, uint32_t t, uint64_t addr,
			    uint32_t size, bool store, uint64_t pc)
{
	uint64_t line_mask = ~(uint64_t)(s->o.line - 1);
	long ref;

	if (t >= s->nthreads || !size)
		return -EINVAL;
	ref = sb_coh_ref_index(s, pc);
	if (ref < 0)
		return -ENOMEM;
	while (size) {
		uint64_t line = addr & line_mask;
		uint32_t off = (uint32_t)(addr - line);
		uint32_t n = s->o.line - off < size ? s->o.line - off : size;
		int err = access_line(s, t, line >> s->line_shift, off, n, store, (uint32_t)ref);

		if (err)
			return err;
		addr += n;
		size -= n;
	}
	return 0;
}
