// SPDX-License-Identifier: MIT
#include "hwagg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/idmap.h"
#include "binary/procmaps.h"
#include "profile/profile.h"

struct sb_hwagg {
	struct sb_idmap *edge_ids;    /* (from, to) -> edge index + 1 */
	struct sb_hw_edge *edges;
	size_t nedges, capedges;
	struct sb_idmap *loads;       /* ip -> struct sb_hw_loadip */
	struct sb_idmap *events;      /* key -> profile event index + 1 */
	struct sb_hwagg_stats st;
};

struct sb_hwagg *sb_hwagg_alloc(void)
{
	struct sb_hwagg *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->edge_ids = sb_idmap_alloc();
	a->loads = sb_idmap_alloc();
	a->events = sb_idmap_alloc();
	if (!a->edge_ids || !a->loads || !a->events) {
		sb_hwagg_free(a);
		return NULL;
	}
	return a;
}

void sb_hwagg_free(struct sb_hwagg *a)
{
	if (!a)
		return;
	sb_idmap_free_with(a->loads, free);
	sb_idmap_free(a->edge_ids);
	sb_idmap_free(a->events);
	free(a->edges);
	free(a);
}

static struct sb_hw_edge *edge_get(struct sb_hwagg *a, uint64_t from, uint64_t to,
				   uint64_t *key)
{
	void **slot = sb_idmap_slot(a->edge_ids, from, to, true);

	if (!slot)
		return NULL;
	if (!*slot) {
		if (a->nedges == a->capedges) {
			size_t ncap = a->capedges ? a->capedges * 2 : 256;
			struct sb_hw_edge *n = realloc(a->edges, ncap * sizeof(*n));

			if (!n) {
				sb_idmap_remove(a->edge_ids, from, to);
				return NULL;
			}
			a->edges = n;
			a->capedges = ncap;
		}
		memset(&a->edges[a->nedges], 0, sizeof(a->edges[0]));
		a->edges[a->nedges].from = from;
		a->edges[a->nedges].to = to;
		*slot = (void *)(uintptr_t)(++a->nedges);
		a->st.edges = a->nedges;
	}
	*key = SB_KEY_EDGE | ((uint64_t)(uintptr_t)*slot - 1);
	return &a->edges[(uintptr_t)*slot - 1];
}

uint64_t sb_hwagg_edge_key(struct sb_hwagg *a, uint64_t from, uint64_t to)
{
	uint64_t key = 0;

	return edge_get(a, from, to, &key) ? key : 0;
}

const struct sb_hw_edge *sb_hwagg_edge(const struct sb_hwagg *a, uint64_t key)
{
	uint64_t idx = key & ~SB_KEY_EDGE;

	if (!(key & SB_KEY_EDGE) || (key >> 63) || idx >= a->nedges)
		return NULL;
	return &a->edges[idx];
}

const struct sb_hw_loadip *sb_hwagg_load(const struct sb_hwagg *a, uint64_t ip)
{
	void **slot = sb_idmap_slot(a->loads, ip, 0, false);

	return slot ? *slot : NULL;
}

static void count_event(struct sb_builder *b, const struct sb_rec_hdr *h, uint64_t key,
			uint64_t n)
{
	struct sb_event ev = { .ts = h->ts, .tid = h->tid, .kind = SB_EV_COUNT,
			       .obj = key, .dur = n };

	if (b)
		sb_builder_add(b, &ev);
}

/* Every user-space taken branch of the stack is one sampled execution of
 * its edge; ranges between consecutive branches are counted for the
 * record's consistency (a basis for block counts later). */
static int add_lbr(struct sb_hwagg *a, struct sb_builder *b, const struct sb_rec_lbr *r)
{
	a->st.lbr_records++;
	for (uint32_t i = 0; i < r->nr; i++) {
		struct sb_hw_branch br;
		struct sb_hw_edge *e;
		uint64_t key, s, t;

		sb_hw_branch_unpack(&r->br[i], &br);
		a->st.branches++;
		if (i + 1 < r->nr) {   /* every pair, kernel entries included */
			if (sb_hw_lbr_range(r, i, &s, &t))
				a->st.ranges_bad++;
			else
				a->st.ranges++;
		}
		if (!br.from || !br.to || br.from >= (1ull << 47) || br.to >= (1ull << 47)) {
			a->st.branches_kernel++;
			continue;
		}
		if (!(e = edge_get(a, br.from, br.to, &key))) {
			a->st.nomem++;
			continue;
		}
		e->count++;
		e->mispred += br.mispred;
		if (br.cycles) {
			e->cycles_sum += br.cycles;
			e->cycles_n++;
		}
		count_event(b, &r->hdr, key, 1);
	}
	return 0;
}

static int add_load(struct sb_hwagg *a, struct sb_builder *b, const struct sb_hw_load *l,
		    const struct sb_rec_hdr *h)
{
	struct sb_hw_loadip *x;
	void **slot;

	if (l->store) {
		a->st.stores++;
		return 0;
	}
	slot = sb_idmap_slot(a->loads, l->ip, 0, true);
	a->st.loads++;
	if (!slot || (!*slot && !(*slot = calloc(1, sizeof(*x))))) {
		a->st.nomem++;
		return 0;
	}
	x = *slot;
	if (!x->samples)
		a->st.load_ips++;
	x->ip = l->ip;
	x->samples++;
	if (l->flags & SB_LOAD_HAVE_WEIGHT) {
		a->st.loads_weighted++;
		x->weighted++;
		x->weight_sum += l->weight;
		if (l->weight > x->weight_max)
			x->weight_max = l->weight;
	}
	x->levels[l->src.level < SB_MEM_LVL_MAX ? l->src.level : SB_MEM_UNKNOWN]++;
	/* Weighted by latency: the vector is the sampled cost at the load,
	 * LIME's hardware event (causes_hw.c); 1 where no latency came. */
	if (l->ip && l->ip < (1ull << 47))
		count_event(b, h, SB_KEY_LOAD | l->ip,
			    (l->flags & SB_LOAD_HAVE_WEIGHT) && l->weight ? l->weight : 1);
	return 0;
}

int sb_hwagg_record(struct sb_hwagg *a, struct sb_builder *b, const void *data, size_t size)
{
	const struct sb_rec_hdr *h = data;
	const struct sb_rec_lbr *r;
	struct sb_hw_load l;

	if (size >= sizeof(*h) && h->type == SB_REC_LBR && (r = sb_hw_lbr_check(data, size)))
		return add_lbr(a, b, r);
	if (size >= sizeof(*h) && h->type == SB_REC_LOAD && !sb_hw_load_decode(data, size, &l))
		return add_load(a, b, &l, h);
	a->st.bad_records++;
	return -1;
}

void sb_hwagg_get_stats(const struct sb_hwagg *a, struct sb_hwagg_stats *st)
{
	*st = a->st;
}

static int by_samples(const void *x, const void *y)
{
	const struct sb_hw_loadip *a = *(const struct sb_hw_loadip *const *)x;
	const struct sb_hw_loadip *b = *(const struct sb_hw_loadip *const *)y;

	if (a->samples != b->samples)
		return a->samples < b->samples ? 1 : -1;
	return a->ip < b->ip ? -1 : a->ip > b->ip;
}

void sb_hwagg_loads_summary(const struct sb_hwagg *a, size_t n, char *buf, size_t len)
{
	size_t cnt = sb_idmap_count(a->loads), k = 0, it = 0, off = 0;
	const struct sb_hw_loadip **v = calloc(cnt ? cnt : 1, sizeof(*v));
	void *p;

	buf[0] = 0;
	if (!v)
		return;
	while (sb_idmap_next(a->loads, &it, NULL, NULL, &p))
		v[k++] = p;
	qsort(v, k, sizeof(*v), by_samples);
	for (size_t i = 0; i < k && i < n && off < len; i++) {
		unsigned best = SB_MEM_UNKNOWN;

		for (unsigned l = 0; l < SB_MEM_LVL_MAX; l++)
			if (v[i]->levels[l] > v[i]->levels[best])
				best = l;
		off += (size_t)snprintf(buf + off, len - off, "%s0x%llx: %llu samples",
					i ? "; " : "", (unsigned long long)v[i]->ip,
					(unsigned long long)v[i]->samples);
		if (off < len && v[i]->weighted)
			off += (size_t)snprintf(buf + off, len - off, ", mean %llu cycles",
						(unsigned long long)(v[i]->weight_sum /
								     v[i]->weighted));
		if (off < len)
			off += (size_t)snprintf(buf + off, len - off, ", %s %llu%%",
						sb_mem_level_name(best),
						(unsigned long long)(100 * v[i]->levels[best] /
								     v[i]->samples));
	}
	free(v);
}

/* A runtime address -> (profile loc, binary vaddr); -1 if unmapped. */
static long locate(struct sb_maps *maps, sb_loc_fn loc_of,
		   void *loc_ctx, uint64_t addr, int *bin, uint64_t *vaddr)
{
	if (sb_maps_resolve(maps, addr, bin, vaddr))
		return -1;
	return loc_of(loc_ctx, addr);
}

long sb_hwagg_event(struct sb_hwagg *a, struct sb_maps *maps, struct sb_profile *p,
		    sb_loc_fn loc_of, void *loc_ctx, uint64_t key,
		    uint32_t instances)
{
	struct sb_event_def d = { .loc2 = -1, .loc_hot = -1 };
	void **slot = sb_idmap_slot(a->events, key, 0, true);
	long loc, idx;
	int bin, bin2;

	if (!slot)
		return -1;
	if (*slot)
		return (long)(uintptr_t)*slot - 1;
	if (key & SB_KEY_EDGE) {
		const struct sb_hw_edge *e = sb_hwagg_edge(a, key);
		long loc2;

		if (!e || (loc = locate(maps, loc_of, loc_ctx, e->from, &bin, &d.vaddr)) < 0 ||
		    (loc2 = locate(maps, loc_of, loc_ctx, e->to, &bin2, &d.vaddr2)) < 0)
			return -1;
		if (bin != bin2) {
			a->st.edges_cross_binary += instances;
			return -1;
		}
		d.kind = SB_EVK_EDGE;
		d.loc2 = (int32_t)loc2;
	} else {
		if ((loc = locate(maps, loc_of, loc_ctx, key & ~SB_KEY_LOAD, &bin, &d.vaddr)) < 0)
			return -1;
		d.kind = SB_EVK_HW;
	}
	d.loc = (int32_t)loc;
	d.binary = p->locs[loc].binary;
	idx = sb_profile_add_event(p, &d);
	if (idx < 0)
		return -1;
	*slot = (void *)(uintptr_t)(idx + 1);
	return idx;
}
