// SPDX-License-Identifier: MIT
/* The section builder's output side: sections, stored instances with
 * their vectors, waits, and moving them into a profile in two phases
 * (sections.h): the keys the caller names, then the write. */
#include <stdlib.h>
#include <string.h>

#include "evqueue.h"
#include "util/idmap.h"
#include "sections_priv.h"

static uint16_t kind_of_prim(uint16_t prim)
{
	switch (prim) {
	case SB_PRIM_BARRIER: return SB_SECT_BARRIER;
	case SB_PRIM_USER_BARRIER: return SB_SECT_USER_BARRIER;
	case SB_PRIM_OMP_BARRIER: return SB_SECT_OMP_BARRIER;
	case SB_PRIM_OMP_REGION_END: return SB_SECT_OMP_REGION;
	case SB_PRIM_JOIN: return SB_SECT_JOIN;
	default: return 0;
	}
}

bool sb_sect_grow(void **arr, size_t elem, size_t need, size_t *cap)
{
	size_t ncap;
	void *p;

	if (need <= *cap)
		return true;
	ncap = *cap ? *cap * 2 : 8;
	while (ncap < need)
		ncap *= 2;
	p = realloc(*arr, ncap * elem);
	if (!p)
		return false;
	*arr = p;
	*cap = ncap;
	return true;
}

void sb_sect_wait_add(struct sb_builder *b, uint16_t prim, uint64_t site,
		      uint64_t obj, uint64_t dur)
{
	void **slot = sb_idmap_slot(b->waits, (site << 5) | prim, obj, true);
	struct sb_sect_wait *w;

	if (!slot) {
		b->err = SB_ERR_NOMEM;
		return;
	}
	if (!*slot) {
		*slot = calloc(1, sizeof(struct sb_sect_wait));
		if (!*slot) {
			b->err = SB_ERR_NOMEM;
			return;
		}
	}
	w = *slot;
	w->prim = prim;
	w->site = site;
	w->obj = obj;
	w->count++;
	w->wait += dur;
}

static struct sb_sect_section *section_get(struct sb_builder *b, uint16_t kind, uint64_t site)
{
	void **slot = sb_idmap_slot(b->sections, (site << 5) | kind, 0, true);
	struct sb_sect_section *s;

	if (!slot || (!*slot && !sb_sect_grow((void **)&b->secorder, sizeof(*b->secorder),
				      b->nsec + 1, &b->capsec))) {
		b->err = SB_ERR_NOMEM;
		return NULL;
	}
	if (*slot)
		return *slot;
	s = calloc(1, sizeof(*s));
	if (!s) {
		b->err = SB_ERR_NOMEM;
		return NULL;
	}
	s->index = b->nsec;
	s->kind = kind;
	s->site = site;
	*slot = s;
	b->secorder[b->nsec++] = s;
	return s;
}

/* The site most arrivals used: threads may reach one barrier from several. */
static uint64_t majority_site(const struct sb_sect_inst *in)
{
	uint64_t best = 0;
	uint32_t best_n = 0;

	for (uint32_t i = 0; i < in->n; i++) {
		uint32_t c = 0;

		for (uint32_t j = 0; j < in->n; j++)
			c += in->a[j].site == in->a[i].site;
		if (c > best_n || (c == best_n && in->a[i].site < best)) {
			best = in->a[i].site;
			best_n = c;
		}
	}
	return best;
}

static int cmp_tid(const void *x, const void *y)
{
	const struct sb_thread_time *a = x, *b = y;

	return (a->tid > b->tid) - (a->tid < b->tid);
}

/* An instance's arrivals in per-thread order: by tid, and a reused
 * tid's threads in the order they lived. */
static int cmp_arrival(const void *x, const void *y)
{
	const struct sb_sect_arrival *a = *(const struct sb_sect_arrival *const *)x;
	const struct sb_sect_arrival *b = *(const struct sb_sect_arrival *const *)y;

	if (a->tid != b->tid)
		return (a->tid > b->tid) - (a->tid < b->tid);
	return (a->life > b->life) - (a->life < b->life);
}

/* The section's per-thread row of the thread (tid, life): one row per
 * thread, so two threads that had the same tid are two rows. */
static struct sb_thread_time *section_row(struct sb_builder *b, struct sb_sect_section *s,
					  uint32_t tid, uint32_t life)
{
	void **slot;
	size_t cap = s->cappt;

	if (!s->ptidx && !(s->ptidx = sb_idmap_alloc()))
		goto nomem;
	slot = sb_idmap_slot(s->ptidx, tid, life, true);
	if (!slot)
		goto nomem;
	if (*slot)
		return &s->pt[(uintptr_t)*slot - 1];
	if (!sb_sect_grow((void **)&s->pt, sizeof(*s->pt), s->npt + 1, &cap))
		goto nomem;
	s->cappt = cap;
	memset(&s->pt[s->npt], 0, sizeof(*s->pt));
	s->pt[s->npt].tid = tid;
	*slot = (void *)(uintptr_t)++s->npt;
	return &s->pt[s->npt - 1];
nomem:
	b->err = SB_ERR_NOMEM;
	return NULL;
}

/* The section totals (SB_KEY_TOTAL keys) of one instance's threads. */
static void totals_add(struct sb_sect_section *s, struct sb_counts *const *counts, uint32_t n)
{
	uint32_t threads = 0;

	for (uint32_t i = 0; i < n; i++) {
		uint64_t any = 0;

		for (uint32_t k = 0; k < SB_KEY_TOTALS; k++) {
			uint64_t v = sb_counts_get(counts[i], SB_KEY_TOTAL | k);

			s->totals[k] += v;
			any |= v;
		}
		threads += any != 0;
	}
	if (threads > s->totals_threads)
		s->totals_threads = threads;
}

static void section_account(struct sb_builder *b, struct sb_sect_section *s,
			    const struct sb_thread_time *pt, const uint32_t *life, uint32_t n,
			    uint64_t start, uint64_t end, struct sb_counts *const *counts)
{
	uint64_t maxbusy = 0;

	for (uint32_t i = 0; i < n; i++)
		if (pt[i].busy_ns > maxbusy)
			maxbusy = pt[i].busy_ns;
	for (uint32_t i = 0; i < n; i++) {
		struct sb_thread_time *agg = section_row(b, s, pt[i].tid, life[i]);

		if (!agg)
			return;
		s->lost += maxbusy - pt[i].busy_ns;
		agg->busy_ns += pt[i].busy_ns;
		agg->wait_ns += pt[i].wait_ns;
		agg->wall_ns += pt[i].wall_ns;
	}
	s->capacity += (uint64_t)n * maxbusy;
	totals_add(s, counts, n);
	if (s->stored < b->max_instances) {
		struct sb_sect_stored *st;

		if (!sb_sect_grow((void **)&b->stored, sizeof(*b->stored), b->nstored + 1,
			  &b->capstored)) {
			b->err = SB_ERR_NOMEM;
			return;
		}
		st = &b->stored[b->nstored];
		st->pt = malloc(n * sizeof(*pt));
		if (!st->pt) {
			b->err = SB_ERR_NOMEM;
			return;
		}
		memcpy(st->pt, pt, n * sizeof(*pt));
		st->sec = s;
		if (sb_vecset_build(counts, n, &st->vec)) {
			free(st->pt);
			b->err = SB_ERR_NOMEM;
			return;
		}
		st->seq = s->ninst;
		st->start = start;
		st->end = end;
		st->n = n;
		b->nstored++;
		s->stored++;
		b->st.stored_instances++;
	}
	s->ninst++;
}

static void inst_unlink(struct sb_builder *b, struct sb_sect_inst *in)
{
	if (in->prev)
		in->prev->next = in->next;
	else
		b->live = in->next;
	if (in->next)
		in->next->prev = in->prev;
}

void sb_sect_finalize(struct sb_builder *b, struct sb_sect_inst *in, uint64_t site_hint)
{
	struct sb_thread_time *pt;
	struct sb_counts **counts;
	const struct sb_sect_arrival **ord;
	uint64_t start = UINT64_MAX, end = 0, site;
	struct sb_sect_section *s;
	uint32_t *life;

	/* One thread joined is no parallel section, unless it carries a
	 * cache hit profile (a serial run is CHiP's own setting, §IV) or the
	 * recording asked (a speedup stack's one-thread run). */
	if (in->partial || in->n == 0 ||
	    (in->prim == SB_PRIM_JOIN && in->n < 2 && !b->single_joins &&
	     !sb_counts_get(in->a[0].counts, SB_KEY_TOTAL | SB_KEY_CHIP_ACCESSES))) {
		if (in->partial)
			b->st.partial_instances++;
		goto out;
	}
	pt = calloc(in->n, sizeof(*pt));
	counts = calloc(in->n, sizeof(*counts));
	life = calloc(in->n, sizeof(*life));
	ord = calloc(in->n, sizeof(*ord));
	if (!pt || !counts || !life || !ord) {
		b->err = SB_ERR_NOMEM;
		goto fail;
	}
	/* Per-thread rows and vector columns in one order (by tid). */
	for (uint32_t i = 0; i < in->n; i++)
		ord[i] = &in->a[i];
	qsort(ord, in->n, sizeof(*ord), cmp_arrival);
	for (uint32_t i = 0; i < in->n; i++) {
		const struct sb_sect_arrival *a = ord[i];

		pt[i].tid = a->tid;
		life[i] = a->life;
		counts[i] = a->counts;
		pt[i].busy_ns = a->busy;
		pt[i].wait_ns = a->depart - a->arrive;
		pt[i].wall_ns = a->depart - a->seg_start;
		if (a->seg_start < start)
			start = a->seg_start;
		if (a->depart > end)
			end = a->depart;
	}
	site = majority_site(in);
	if (!site)
		site = site_hint;
	s = section_get(b, kind_of_prim(in->prim), site);
	if (s)
		section_account(b, s, pt, life, in->n, start, end, counts);
	b->st.instances++;
fail:
	free(ord);
	free(life);
	free(counts);
	free(pt);
out:
	inst_unlink(b, in);
	for (uint32_t i = 0; i < in->n; i++)
		sb_counts_free(in->a[i].counts);
	free(in->a);
	free(in);
}

void sb_sect_section_free(void *p)
{
	struct sb_sect_section *s = p;

	if (s) {
		free(s->pt);
		sb_idmap_free(s->ptidx);
	}
	free(s);
}

void sb_builder_get_stats(const struct sb_builder *b, struct sb_builder_stats *st)
{
	*st = b->st;
	st->sections = b->nsec;
	/* a cut (sb_builder_cut) has no queue: its count came with it */
	if (b->queue)
		st->late_events = sb_evqueue_late(b->queue) - b->late_cut;
}

/* ---- the keys phase: what the caller names ---- */

enum { NS_SITE, NS_KEY };   /* the table index's second key */

static long table_find(const struct sb_sect_table *t, uint64_t v, uint64_t ns)
{
	void **slot = sb_idmap_slot(t->index, v, ns, false);

	return slot && *slot ? (long)(uintptr_t)*slot - 1 : -1;
}

static int table_site(struct sb_sect_table *t, size_t *cap, uint64_t site)
{
	void **slot = sb_idmap_slot(t->index, site, NS_SITE, true);

	if (!slot)
		return SB_ERR_NOMEM;
	if (*slot)
		return 0;
	if (!sb_sect_grow((void **)&t->sites, sizeof(*t->sites), t->nsites + 1, cap))
		return SB_ERR_NOMEM;
	t->sites[t->nsites++] = site;
	*slot = (void *)(uintptr_t)t->nsites;
	return 0;
}

/* Once per stored instance that counted key, with its counts there. */
static int table_key(struct sb_sect_table *t, size_t *cap, uint64_t key, uint64_t weight)
{
	void **slot = sb_idmap_slot(t->index, key, NS_KEY, true);
	struct sb_sect_key *k;

	if (!slot)
		return SB_ERR_NOMEM;
	if (!*slot) {
		if (!sb_sect_grow((void **)&t->keys, sizeof(*t->keys), t->nkeys + 1, cap))
			return SB_ERR_NOMEM;
		k = &t->keys[t->nkeys++];
		memset(k, 0, sizeof(*k));
		k->key = key;
		k->event = -1;
		*slot = (void *)(uintptr_t)t->nkeys;
	}
	k = &t->keys[(uintptr_t)*slot - 1];
	k->weight += weight;
	k->instances++;
	return 0;
}

/* Key k's counts in an instance, all threads together. */
static uint64_t row_weight(const struct sb_vecset *v, uint32_t k)
{
	uint64_t w = 0;

	for (uint32_t t = 0; t < v->nthreads; t++)
		w += v->counts[(size_t)k * v->nthreads + t];
	return w;
}

int sb_builder_keys(const struct sb_builder *b, struct sb_sect_table *t)
{
	size_t capsites = 0, capkeys = 0, it = 0;
	void *v;

	memset(t, 0, sizeof(*t));
	if (!(t->index = sb_idmap_alloc()))
		return SB_ERR_NOMEM;
	/* The order sb_builder_emit walks them in. */
	for (size_t i = 0; i < b->nsec; i++)
		if (table_site(t, &capsites, b->secorder[i]->site))
			return SB_ERR_NOMEM;
	t->nsection_sites = t->nsites;
	for (size_t i = 0; i < b->nstored; i++) {
		const struct sb_vecset *vs = &b->stored[i].vec;

		for (uint32_t k = 0; k < vs->nkeys; k++)
			if (table_key(t, &capkeys, vs->keys[k], row_weight(vs, k)))
				return SB_ERR_NOMEM;
	}
	while (sb_idmap_next(b->waits, &it, NULL, NULL, &v)) {
		const struct sb_sect_wait *w = v;

		if (w->site && table_site(t, &capsites, w->site))
			return SB_ERR_NOMEM;
	}
	t->locs = malloc((t->nsites ? t->nsites : 1) * sizeof(*t->locs));
	if (!t->locs)
		return SB_ERR_NOMEM;
	for (size_t i = 0; i < t->nsites; i++)
		t->locs[i] = -1;
	return 0;
}

void sb_sect_table_free(struct sb_sect_table *t)
{
	free(t->sites);
	free(t->locs);
	free(t->keys);
	sb_idmap_free(t->index);
	memset(t, 0, sizeof(*t));
}

/* ---- the write phase ---- */

static long site_loc(const struct sb_sect_table *t, uint64_t site)
{
	long i = table_find(t, site, NS_SITE);

	return i < 0 ? -1 : t->locs[i];
}

/*
 * An instance's vectors: keys become events, keys of one event (several
 * sampled IPs in one block) are summed, one sb_vector per event.
 */
static int emit_vectors(const struct sb_sect_stored *st, uint32_t instance,
			struct sb_profile *p, const struct sb_sect_table *tab)
{
	const struct sb_vecset *v = &st->vec;
	long *ev;
	uint64_t *sum;
	int ret = SB_ERR_NOMEM;

	/* Most instances of a short section hold no sample: nothing to
	 * allocate (100,000 of them took ~10 ms of malloc/free). */
	if (!v->nkeys)
		return 0;
	ev = malloc(v->nkeys * sizeof(*ev));
	sum = calloc(v->nthreads ? v->nthreads : 1, sizeof(*sum));
	if (!ev || !sum)
		goto out;
	for (uint32_t k = 0; k < v->nkeys; k++) {
		long i = table_find(tab, v->keys[k], NS_KEY);

		ev[k] = i < 0 ? -1 : tab->keys[i].event;
	}
	for (uint32_t k = 0; k < v->nkeys; k++) {
		struct sb_vector out = { .instance = instance, .nthreads = v->nthreads,
					 .counts = sum };

		if (ev[k] < 0)
			continue;
		memset(sum, 0, v->nthreads * sizeof(*sum));
		for (uint32_t j = k; j < v->nkeys; j++) {
			if (ev[j] != ev[k])
				continue;
			for (uint32_t t = 0; t < v->nthreads; t++)
				sum[t] += v->counts[(size_t)j * v->nthreads + t];
			if (j > k)
				ev[j] = -1;   /* merged into this one */
		}
		out.event = (uint32_t)ev[k];
		if (sb_profile_add_vector(p, &out) < 0)
			goto out;
	}
	ret = 0;
out:
	free(ev);
	free(sum);
	return ret;
}

int sb_builder_emit(struct sb_builder *b, struct sb_profile *p, const struct sb_sect_table *t)
{
	size_t base = p->nsections;
	size_t it = 0;
	void *v;

	for (size_t i = 0; i < b->nsec; i++) {
		struct sb_sect_section *s = b->secorder[i];
		struct sb_section out = {
			.kind = s->kind, .ninstances = s->ninst, .nthreads = s->npt,
			.per_thread = s->pt, .lost_ns = s->lost, .capacity_ns = s->capacity,
		};
		long loc = site_loc(t, s->site);

		if (loc < 0)
			return SB_ERR_NOMEM;
		out.loc = (uint32_t)loc;
		qsort(s->pt, s->npt, sizeof(*s->pt), cmp_tid);
		sb_idmap_free(s->ptidx);   /* its indices are stale now */
		s->ptidx = NULL;
		if (sb_profile_add_section(p, &out) < 0)
			return SB_ERR_NOMEM;
	}
	for (size_t i = 0; i < b->nstored; i++) {
		const struct sb_sect_stored *st = &b->stored[i];
		struct sb_instance out = {
			.seq = st->seq, .start_ns = st->start, .end_ns = st->end,
			.nthreads = st->n, .per_thread = st->pt,
		};
		long idx;

		out.section = (uint32_t)(base + st->sec->index);
		idx = sb_profile_add_instance(p, &out);
		if (idx < 0 || emit_vectors(st, (uint32_t)idx, p, t))
			return SB_ERR_NOMEM;
	}
	while (sb_idmap_next(b->waits, &it, NULL, NULL, &v)) {
		const struct sb_sect_wait *w = v;
		struct sb_wait out = {
			.prim = w->prim, .object = w->obj, .count = w->count,
			.wait_ns = w->wait,
		};

		out.loc = w->site ? (int32_t)site_loc(t, w->site) : -1;
		if (sb_profile_add_wait(p, &out) < 0)
			return SB_ERR_NOMEM;
	}
	return 0;
}

int sb_builder_totals(const struct sb_builder *b, size_t section, uint64_t *out,
		      uint32_t *threads)
{
	const struct sb_sect_section *s;

	if (section >= b->nsec)
		return -1;
	s = b->secorder[section];
	memcpy(out, s->totals, sizeof(s->totals));
	*threads = s->totals_threads;
	return 0;
}
