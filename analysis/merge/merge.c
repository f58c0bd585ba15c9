// SPDX-License-Identifier: MIT
/* Merging profiles (merge.h): binaries, locations, threads, sections,
 * instances, waits, events, vectors, CFGs and addresses.  Each input's
 * indices are mapped to the merge's (m->bin, loc, sec, inst, ev) as its
 * parts go in, so the parts after them refer to the right entries. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/idmap.h"
#include "merge_priv.h"

uint64_t sb_merge_hash(uint64_t h, const void *data, size_t len)
{
	const unsigned char *b = data;

	for (size_t i = 0; i < len; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

uint64_t sb_merge_hash_str(uint64_t h, const char *s)
{
	/* NULL and "" differ from each other and from any text */
	return s ? sb_merge_hash(h, s, strlen(s) + 1) : sb_merge_hash(h, "\xff", 1);
}

long sb_merge_find(struct sb_idmap *map, uint64_t h, bool (*same)(const void *ctx, long i),
		   const void *ctx, void ***slot)
{
	for (uint64_t probe = 0;; probe++) {
		void **s = sb_idmap_slot(map, h, probe, true);

		if (!s || !*s) {
			*slot = s;
			return -1;
		}
		if (same(ctx, (long)(uintptr_t)*s - 1))
			return (long)(uintptr_t)*s - 1;
	}
}

static bool str_eq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

struct sb_merge *sb_merge_alloc(const struct sb_merge_opts *opts)
{
	struct sb_merge *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	if (opts)
		m->o = *opts;
	if (!m->o.max_instances)
		m->o.max_instances = SB_MERGE_MAX_INSTANCES;
	if (!m->o.max_addrs)
		m->o.max_addrs = SB_MERGE_MAX_ADDRS;
	if (!(m->p = sb_profile_alloc()) || !(m->binaries = sb_idmap_alloc()) ||
	    !(m->locs = sb_idmap_alloc()) || !(m->events = sb_idmap_alloc()) ||
	    !(m->threads = sb_idmap_alloc()) || !(m->waits = sb_idmap_alloc()) ||
	    !(m->cfgs = sb_idmap_alloc()) || !(m->chip = sb_idmap_alloc()) ||
	    !(m->sharing = sb_idmap_alloc())) {
		sb_merge_free(m);
		return NULL;
	}
	return m;
}

static void maps_free(struct sb_merge *m)
{
	free(m->bin);
	free(m->loc);
	free(m->sec);
	free(m->inst);
	free(m->ev);
	m->bin = m->loc = m->sec = m->inst = m->ev = NULL;
}

void sb_merge_free(struct sb_merge *m)
{
	if (!m)
		return;
	sb_profile_free(m->p);
	sb_idmap_free(m->binaries);
	sb_idmap_free(m->locs);
	sb_idmap_free(m->events);
	sb_idmap_free(m->threads);
	sb_idmap_free(m->waits);
	sb_idmap_free(m->cfgs);
	sb_idmap_free(m->chip);
	sb_idmap_free(m->sharing);
	free(m->kept);
	maps_free(m);
	free(m->first);
	free(m->last);
	free(m->differing);
	free(m);
}

void sb_merge_get_stats(const struct sb_merge *m, struct sb_merge_stats *st)
{
	*st = m->st;
}

/* ---- binaries and locations ---- */

struct bin_ctx {
	const struct sb_profile *p;
	const struct sb_binary *b;
};

static bool bin_same(const void *ctx, long i)
{
	const struct bin_ctx *c = ctx;

	return str_eq(c->p->binaries[i].path, c->b->path) &&
	       str_eq(c->p->binaries[i].build_id, c->b->build_id);
}

static int add_binaries(struct sb_merge *m, const struct sb_profile *src)
{
	for (size_t i = 0; i < src->nbinaries; i++) {
		struct bin_ctx c = { m->p, &src->binaries[i] };
		uint64_t h = sb_merge_hash_str(sb_merge_hash_str(SB_MERGE_HASH0, c.b->path),
					       c.b->build_id);
		void **slot = NULL;
		long k = sb_merge_find(m->binaries, h, bin_same, &c, &slot);

		if (k < 0) {
			if (!slot || (k = sb_profile_add_binary(m->p, c.b->path, c.b->build_id)) < 0)
				return SB_ERR_NOMEM;
			*slot = (void *)(uintptr_t)(k + 1);
		}
		m->bin[i] = k;
	}
	return 0;
}

struct loc_ctx {
	const struct sb_profile *p;
	const struct sb_loc *l;   /* binary already mapped */
};

/* One place in the code: by binary and offset where the binary is known
 * (addresses differ between processes), else by address. */
static bool loc_same(const void *ctx, long i)
{
	const struct loc_ctx *c = ctx;
	const struct sb_loc *a = &c->p->locs[i], *b = c->l;

	return a->binary == b->binary && (b->binary >= 0 ? a->offset == b->offset
							 : a->addr == b->addr) &&
	       a->line == b->line && str_eq(a->function, b->function) && str_eq(a->file, b->file);
}

static int add_locs(struct sb_merge *m, const struct sb_profile *src)
{
	for (size_t i = 0; i < src->nlocs; i++) {
		struct sb_loc l = src->locs[i];
		struct loc_ctx c = { m->p, &l };
		uint64_t where, h;
		void **slot = NULL;
		long k;

		l.binary = (int32_t)sb_merge_mapped(m, m->bin, src->nbinaries, l.binary);
		where = l.binary >= 0 ? l.offset : l.addr;
		h = sb_merge_hash(SB_MERGE_HASH0, &l.binary, sizeof(l.binary));
		h = sb_merge_hash(h, &where, sizeof(where));
		h = sb_merge_hash(h, &l.line, sizeof(l.line));
		h = sb_merge_hash_str(sb_merge_hash_str(h, l.function), l.file);
		if ((k = sb_merge_find(m->locs, h, loc_same, &c, &slot)) < 0) {
			if (!slot || (k = sb_profile_add_loc(m->p, &l)) < 0)
				return SB_ERR_NOMEM;
			*slot = (void *)(uintptr_t)(k + 1);
		}
		m->loc[i] = k;
	}
	return m->err;
}

/* ---- threads ---- */

static int add_threads(struct sb_merge *m, const struct sb_profile *src)
{
	for (size_t i = 0; i < src->nthreads; i++) {
		const struct sb_thread *t = &src->threads[i];
		void **slot = sb_idmap_slot(m->threads, t->tid, 0, true);
		struct sb_thread *d;
		long k;

		if (!slot)
			return SB_ERR_NOMEM;
		if (!*slot) {
			if ((k = sb_profile_add_thread(m->p, t)) < 0)
				return SB_ERR_NOMEM;
			*slot = (void *)(uintptr_t)(k + 1);
			continue;
		}
		d = &m->p->threads[(uintptr_t)*slot - 1];
		d->start_ns = t->start_ns < d->start_ns ? t->start_ns : d->start_ns;
		d->end_ns = t->end_ns > d->end_ns ? t->end_ns : d->end_ns;
		d->oncpu_ns += t->oncpu_ns;
		d->parent_tid = d->parent_tid ? d->parent_tid : t->parent_tid;
	}
	return 0;
}

/* ---- sections and instances ---- */

/* Section x of p and section y of the merge are one place: kind,
 * function, file name and line; unsymbolized, one location. */
static bool place_same(const struct sb_merge *m, const struct sb_profile *p,
		       const struct sb_section *x, const struct sb_section *y)
{
	const struct sb_loc *a, *b;

	if (x->kind != y->kind || x->loc >= p->nlocs || y->loc >= m->p->nlocs)
		return false;
	a = &p->locs[x->loc];
	b = &m->p->locs[y->loc];
	if (a->line && a->function)
		return a->line == b->line && str_eq(a->function, b->function) &&
		       !strcmp(sb_base_name(a->file), sb_base_name(b->file));
	return m->loc[x->loc] == (long)y->loc;
}

/* The merge's section for src's section s: the k-th alike in the merge
 * for the k-th alike in src; -1 if there is none yet. */
static long section_find(const struct sb_merge *m, const struct sb_profile *src, size_t s)
{
	size_t k = 0;

	for (size_t i = 0; i < s; i++) {
		const struct sb_section *x = &src->sections[i], *y = &src->sections[s];
		const struct sb_loc *a = x->loc < src->nlocs ? &src->locs[x->loc] : NULL;
		const struct sb_loc *b = y->loc < src->nlocs ? &src->locs[y->loc] : NULL;

		if (!a || !b || x->kind != y->kind)
			continue;
		if (b->line && b->function)
			k += a->line == b->line && str_eq(a->function, b->function) &&
			     !strcmp(sb_base_name(a->file), sb_base_name(b->file));
		else
			k += x->loc == y->loc;
	}
	for (size_t j = 0; j < m->p->nsections; j++)
		if (place_same(m, src, &src->sections[s], &m->p->sections[j]) && !k--)
			return (long)j;
	return -1;
}

/*
 * Adds per-thread rows by tid into d: the k-th row of a tid in pt to the
 * k-th of that tid in d (a profile lists a tid the kernel handed out
 * again as rows of their own; the merge keeps them apart, though it
 * cannot tell which thread of another input a tid was).
 */
static int rows_add(struct sb_section *d, const struct sb_thread_time *pt, uint32_t n)
{
	struct sb_idmap *have = sb_idmap_alloc(), *seen = sb_idmap_alloc();
	int ret = SB_ERR_NOMEM;

	if (!have || !seen)
		goto out;
	for (uint32_t j = 0; j < d->nthreads; j++) {
		void **c = sb_idmap_slot(seen, d->per_thread[j].tid, 0, true), **slot;

		if (!c || !(slot = sb_idmap_slot(have, d->per_thread[j].tid,
						 (uintptr_t)*c, true)))
			goto out;
		*slot = (void *)(uintptr_t)(j + 1);
		*c = (void *)((uintptr_t)*c + 1);
	}
	sb_idmap_free(seen);
	if (!(seen = sb_idmap_alloc()))
		goto out;
	for (uint32_t i = 0; i < n; i++) {
		void **c = sb_idmap_slot(seen, pt[i].tid, 0, true), **slot;
		uint32_t j;

		if (!c || !(slot = sb_idmap_slot(have, pt[i].tid, (uintptr_t)*c, true)))
			goto out;
		*c = (void *)((uintptr_t)*c + 1);
		if (*slot) {
			j = (uint32_t)((uintptr_t)*slot - 1);
		} else {
			struct sb_thread_time *a = realloc(d->per_thread,
							   (size_t)(d->nthreads + 1) * sizeof(*a));

			if (!a)
				goto out;
			d->per_thread = a;
			j = d->nthreads++;
			a[j] = (struct sb_thread_time){ .tid = pt[i].tid };
			*slot = (void *)(uintptr_t)(j + 1);
		}
		d->per_thread[j].busy_ns += pt[i].busy_ns;
		d->per_thread[j].wait_ns += pt[i].wait_ns;
		d->per_thread[j].wall_ns += pt[i].wall_ns;
	}
	ret = 0;
out:
	sb_idmap_free(have);
	sb_idmap_free(seen);
	return ret;
}

static int add_sections(struct sb_merge *m, const struct sb_profile *src, uint64_t *base)
{
	for (size_t s = 0; s < src->nsections; s++) {
		const struct sb_section *x = &src->sections[s];
		long k = section_find(m, src, s);
		int ret;

		if (x->loc >= src->nlocs)
			return SB_ERR_CORRUPT;
		if (k < 0) {
			struct sb_section y = *x;

			y.loc = (uint32_t)m->loc[x->loc];
			y.ninstances = y.lost_ns = y.capacity_ns = 0;
			y.nthreads = 0;
			y.per_thread = NULL;
			if ((k = sb_profile_add_section(m->p, &y)) < 0)
				return SB_ERR_NOMEM;
			if ((size_t)k >= m->capkept) {
				size_t cap = m->capkept ? m->capkept * 2 : 16;
				uint64_t *a = realloc(m->kept, cap * sizeof(*a));

				if (!a)
					return SB_ERR_NOMEM;
				memset(a + m->capkept, 0, (cap - m->capkept) * sizeof(*a));
				m->kept = a;
				m->capkept = cap;
			}
		}
		struct sb_section *d = &m->p->sections[k];

		base[s] = d->ninstances;
		d->ninstances += x->ninstances;
		d->lost_ns += x->lost_ns;
		d->capacity_ns += x->capacity_ns;
		if ((ret = rows_add(d, x->per_thread, x->nthreads)))
			return ret;
		m->sec[s] = k;
	}
	return 0;
}

static int add_instances(struct sb_merge *m, const struct sb_profile *src, const uint64_t *base)
{
	for (size_t i = 0; i < src->ninstances; i++) {
		struct sb_instance in = src->instances[i];
		uint32_t from = in.section;
		long s = sb_merge_mapped(m, m->sec, src->nsections, from), k;

		m->inst[i] = -1;
		if (s < 0)
			return SB_ERR_CORRUPT;
		if (m->kept[s] >= m->o.max_instances) {
			m->st.instances_dropped++;
			continue;
		}
		in.section = (uint32_t)s;
		in.seq += base[from];    /* numbered on after the earlier inputs' */
		if ((k = sb_profile_add_instance(m->p, &in)) < 0)
			return SB_ERR_NOMEM;
		m->kept[s]++;
		m->inst[i] = k;
	}
	return 0;
}

static long *map_alloc(size_t n)
{
	long *a = malloc((n ? n : 1) * sizeof(*a));

	for (size_t i = 0; a && i < n; i++)
		a[i] = -1;
	return a;
}

int sb_merge_add(struct sb_merge *m, const struct sb_profile *src, const char *name,
		 char *err, size_t errlen)
{
	uint64_t *base = NULL;
	const char *what = "out of memory";
	int ret;

	if (m->err) {
		snprintf(err, errlen, "merging %s: an earlier input failed", name);
		return m->err;
	}
	maps_free(m);
	if (!(m->bin = map_alloc(src->nbinaries)) || !(m->loc = map_alloc(src->nlocs)) ||
	    !(m->sec = map_alloc(src->nsections)) || !(m->inst = map_alloc(src->ninstances)) ||
	    !(m->ev = map_alloc(src->nevents)) ||
	    !(base = calloc(src->nsections ? src->nsections : 1, sizeof(*base)))) {
		ret = SB_ERR_NOMEM;
		goto out;
	}
	ret = sb_merge_meta(m, src);
	ret = ret ? ret : add_binaries(m, src);
	ret = ret ? ret : add_locs(m, src);
	ret = ret ? ret : add_threads(m, src);
	ret = ret ? ret : add_sections(m, src, base);
	ret = ret ? ret : add_instances(m, src, base);
	ret = ret ? ret : sb_merge_waits(m, src);
	ret = ret ? ret : sb_merge_events(m, src);
	ret = ret ? ret : sb_merge_vectors(m, src);
	ret = ret ? ret : sb_merge_cfgs(m, src);
	ret = ret ? ret : sb_merge_addrs(m, src);
	ret = ret ? ret : sb_merge_rows(m, src);
	if (ret == SB_ERR_CORRUPT)
		what = "an index out of range";
	if (!ret) {
		char *dup = strdup(name ? name : "?");

		if (!dup) {
			ret = SB_ERR_NOMEM;
			goto out;
		}
		free(m->last);
		m->last = dup;
		if (!m->first && !(m->first = strdup(dup)))
			ret = SB_ERR_NOMEM;
		m->st.profiles++;
	}
out:
	free(base);
	if (ret) {
		m->err = ret;
		snprintf(err, errlen, "merging %s: %s", name ? name : "?", what);
	}
	return ret;
}

struct sb_profile *sb_merge_finish(struct sb_merge *m)
{
	struct sb_profile *p = m->p;

	if (m->err || !m->st.profiles)
		return NULL;
	if (sb_profile_meta_set_u64(p, "merged_profiles", m->st.profiles) < 0 ||
	    sb_profile_meta_set(p, "merged_first", m->first) < 0 ||
	    sb_profile_meta_set(p, "merged_last", m->last) < 0 ||
	    sb_profile_meta_set(p, "merge_differing", m->differing ? m->differing : "") < 0 ||
	    sb_profile_meta_set_u64(p, "merged_instances_dropped", m->st.instances_dropped) < 0 ||
	    sb_profile_meta_set_u64(p, "merged_vectors_dropped", m->st.vectors_dropped) < 0 ||
	    sb_profile_meta_set_u64(p, "merged_addrs_dropped", m->st.addrs_dropped) < 0 ||
	    sb_profile_meta_set_u64(p, "merged_stack_rows_dropped", m->st.stack_rows_dropped) < 0 ||
	    sb_profile_meta_set_u64(p, "merged_chip_rows_apart", m->st.chip_rows_apart) < 0)
		return NULL;
	m->p = NULL;
	m->err = SB_ERR_NOMEM;  /* nothing more goes in */
	return p;
}
