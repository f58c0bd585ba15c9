// SPDX-License-Identifier: MIT
/*
 * Sampled sharing's verdicts (the footprint classification and the
 * evidence rule of coherence.h), and the profile's SHARING rows of mode
 * SB_SHARING_SAMPLED: a LINE row per reported line and a REF row per
 * reference of one.
 *
 * Cost.  A sample is one sampling period of a thread's time, so the
 * samples whose own access was by the line's references (the instructions
 * seen touching it) estimate the time spent on it; over its section's busy
 * time (all threads, all instances: what the section's samples cover) that
 * is the share of the section, and times the fraction of its watchpoint
 * windows that confirmed sharing, the share the sharing is estimated to
 * cost.  The section is the one most of the
 * line's kept sample times fall in (by the stored instances); a line none
 * falls in is costed against the busy time of all sections.
 */
#include "coherence_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"

/* The footprint verdict: bytes one thread wrote that another touched. */
static uint64_t true_bytes(const struct cos_line *l)
{
	uint64_t b = 0;

	for (uint32_t i = 0; i < l->nthr; i++)
		for (uint32_t j = 0; j < l->nthr; j++)
			if (i != j)
				b |= l->thr[i].written & l->thr[j].touched;
	return b;
}

/* The evidence rule (coherence.h). */
static bool reported(const struct sb_cosample *s, const struct cos_line *l)
{
	return l->touches >= s->o.min_samples && l->nthr >= 2 && l->windows_confirmed &&
	       l->confirmations >= s->o.min_confirms && l->user_stores;
}

static void classify(const struct sb_cosample *s, const struct cos_line *l,
		     struct sb_cosample_line *o)
{
	uint64_t touched = 0, span;

	memset(o, 0, sizeof(*o));
	o->addr = l->addr - 1;
	o->nthreads = l->nthr;
	o->samples = l->samples;
	o->touches = l->touches;
	o->stores = l->stores;
	o->hitm = l->hitm;
	o->hits = l->hits;
	o->confirmations = l->confirmations;
	o->windows = l->windows;
	o->windows_confirmed = l->windows_confirmed;
	o->windows_in_region = l->windows_in_region;
	o->decided = l->state == ST_DECIDED;
	o->runtime_only = !l->user_stores;
	o->reported = reported(s, l);
	o->stack_tid = l->stack_tid;
	o->bytes_true = true_bytes(l);
	o->true_sharing = o->bytes_true != 0;
	o->verdict_ns = l->verdict_ns;
	for (uint32_t i = 0; i < l->nthr; i++)
		touched |= l->thr[i].touched;
	span = o->bytes_true ? o->bytes_true : touched;
	if (span) {
		o->name_off = (uint32_t)__builtin_ctzll(span);
		o->name_len = 64 - (uint32_t)__builtin_clzll(span) - o->name_off;
	}
	o->npcs = l->npcs;
	for (uint32_t k = 0; k < l->npcs; k++) {
		const struct cos_pc *c = sb_cosample_pc((struct sb_cosample *)s, l->pcs[k], false);

		o->ref_samples += c ? c->samples : 0;
	}
	memcpy(o->pcs, l->pcs, sizeof(o->pcs));
	memcpy(o->pc_loads, l->pc_loads, sizeof(o->pc_loads));
	memcpy(o->pc_stores, l->pc_stores, sizeof(o->pc_stores));
	o->nstamps = l->nstamps;
	memcpy(o->stamp_tid, l->stamp_tid, sizeof(o->stamp_tid));
	memcpy(o->stamp_ts, l->stamp_ts, sizeof(o->stamp_ts));
	o->nhit_stamps = l->nhit_stamps;
	memcpy(o->hit_tid, l->hit_tid, sizeof(o->hit_tid));
	memcpy(o->hit_ts, l->hit_ts, sizeof(o->hit_ts));
}

void sb_cosample_get_stats(const struct sb_cosample *s, struct sb_cosample_stats *st)
{
	*st = s->st;
	st->reported = st->sync_lines = 0;
	for (size_t i = 0; i < s->cap; i++) {
		const struct cos_line *l = &s->lines[i];

		if (!l->addr || !l->windows)
			continue;
		st->reported += reported(s, l);
		st->sync_lines += l->windows_confirmed && !l->user_stores;
	}
}

int sb_cosample_lines(const struct sb_cosample *s, struct sb_cosample_line **out, size_t *n)
{
	size_t k = 0;

	*out = NULL;
	*n = 0;
	for (size_t i = 0; i < s->cap; i++)
		k += s->lines[i].addr && s->lines[i].windows;
	if (!k)
		return 0;
	if (!(*out = calloc(k, sizeof(**out))))
		return -ENOMEM;
	for (size_t i = 0; i < s->cap; i++)
		if (s->lines[i].addr && s->lines[i].windows)
			classify(s, &s->lines[i], &(*out)[(*n)++]);
	return 0;
}

/* The stored instances the line's kept sample and hit times fall in. */
struct placed {
	int32_t sample[SB_COSAMPLE_STAMPS], hit[SB_COSAMPLE_STAMPS];   /* -1: none */
};

static void place(const struct sb_instance_index *x, const struct sb_cosample_line *l,
		  struct placed *at)
{
	for (uint32_t i = 0; i < l->nstamps; i++)
		at->sample[i] = x ? sb_instance_index_find(x, l->stamp_tid[i], l->stamp_ts[i]) : -1;
	for (uint32_t i = 0; i < l->nhit_stamps; i++)
		at->hit[i] = x ? sb_instance_index_find(x, l->hit_tid[i], l->hit_ts[i]) : -1;
}

/* Pairs of a store (hit) and another thread's touch (hit or sample), by
 * whether they fall in one section instance: one barrier region. */
static void scope_pairs(const struct sb_cosample_line *l, const struct placed *at,
			uint64_t *in, uint64_t *across)
{
	*in = *across = 0;
	for (uint32_t i = 0; i < l->nhit_stamps; i++) {
		if (at->hit[i] < 0)
			continue;
		for (uint32_t j = i + 1; j < l->nhit_stamps; j++)
			if (at->hit[j] >= 0 && l->hit_tid[j] != l->hit_tid[i]) {
				*in += at->hit[j] == at->hit[i];
				*across += at->hit[j] != at->hit[i];
			}
		for (uint32_t j = 0; j < l->nstamps; j++)
			if (at->sample[j] >= 0 && l->stamp_tid[j] != l->hit_tid[i]) {
				*in += at->sample[j] == at->hit[i];
				*across += at->sample[j] != at->hit[i];
			}
	}
}

/* The section most of the line's kept sample times fall in, -1 none. */
static int64_t section_of(const struct sb_profile *p, const struct sb_cosample_line *l,
			  const struct placed *at)
{
	int64_t sec[SB_COSAMPLE_STAMPS], best = -1;
	uint32_t votes[SB_COSAMPLE_STAMPS] = { 0 }, n = 0, top = 0;

	for (uint32_t i = 0; i < l->nstamps; i++) {
		int64_t s = at->sample[i] >= 0 ? (int64_t)p->instances[at->sample[i]].section : -1;
		uint32_t k = 0;

		if (s < 0)
			continue;
		while (k < n && sec[k] != s)
			k++;
		if (k == n)
			sec[n++] = s;
		if (++votes[k] > top) {
			top = votes[k];
			best = s;
		}
	}
	return best;
}

static uint64_t busy_ns(const struct sb_profile *p, int64_t section)
{
	uint64_t b = 0;

	for (size_t i = 0; i < p->nsections; i++)
		if (section < 0 || (size_t)section == i)
			for (uint32_t t = 0; t < p->sections[i].nthreads; t++)
				b += p->sections[i].per_thread[t].busy_ns;
	return b;
}

int sb_cosample_store(const struct sb_cosample *s, uint64_t period_ns,
		      sb_coherence_loc_fn loc_of, sb_coherence_name_fn name_of, void *ctx,
		      struct sb_profile *p)
{
	struct sb_instance_index *x = NULL;
	struct sb_cosample_line *lines;
	size_t n, cap = p->nsharing;
	char name[256];
	int ret = 0;

	if (sb_cosample_lines(s, &lines, &n))
		return -ENOMEM;
	if (p->ninstances && !(x = sb_instance_index_alloc(p))) {
		free(lines);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n && !ret; i++) {
		const struct sb_cosample_line *l = &lines[i];
		struct placed at;
		int64_t sec;
		uint64_t busy;
		double frac, cost;
		struct sb_sharing *r;

		if (!l->reported)
			continue;
		place(x, l, &at);
		sec = section_of(p, l, &at);
		busy = busy_ns(p, sec);
		frac = l->windows ? (double)l->windows_confirmed / (double)l->windows : 0;
		cost = busy ? (double)l->ref_samples * (double)period_ns / (double)busy * frac : 0;
		name[0] = 0;
		/* the address alone cannot say whose stack it is */
		if (l->stack_tid >= 0)
			snprintf(name, sizeof(name), "the stack of thread %lld",
				 (long long)l->stack_tid);
		else if (name_of)
			name_of(ctx, l->addr + l->name_off, l->name_len, name, sizeof(name));
		if (!(r = sb_coherence_row(p, &cap, SB_SHARING_LINE, SB_SHARING_SAMPLED))) {
			ret = -ENOMEM;
			break;
		}
		r->addr = l->addr;
		r->tid = l->stack_tid >= 0 ? (uint32_t)l->stack_tid : 0;
		if (!(r->name = strdup(name[0] ? name : "?"))) {
			ret = -ENOMEM;
			break;
		}
		for (uint32_t k = 0; k < l->npcs && k < 4; k++)
			r->refs[k] = sb_coherence_loc(loc_of, ctx, l->pcs[k]);
		r->v[SB_SHV_LOADS] = l->touches - l->stores;
		r->v[SB_SHV_STORES] = l->stores;
		r->v[SB_SHV_THREADS] = l->nthreads;
		r->v[SB_SHV_BYTES_TRUE] = l->bytes_true;
		r->v[SB_SHV_FOOTPRINT_TRUE] = l->true_sharing;
		r->v[SB_SHV_SAMPLES] = l->touches;
		r->v[SB_SHV_SAMPLES_TIME] = l->samples;
		scope_pairs(l, &at, &r->v[SB_SHV_PAIRS_IN_REGION], &r->v[SB_SHV_PAIRS_ACROSS]);
		r->v[SB_SHV_HITS] = l->hits;
		r->v[SB_SHV_CONFIRMS] = l->confirmations;
		r->v[SB_SHV_WINDOWS] = l->windows;
		r->v[SB_SHV_WINDOWS_CONFIRMED] = l->windows_confirmed;
		r->v[SB_SHV_WINDOWS_IN_REGION] = l->windows_in_region;
		r->v[SB_SHV_HITM] = l->hitm;
		r->v[SB_SHV_COST_PPM] = cost >= 1 ? 1000000 : (uint64_t)(cost * 1e6 + 0.5);
		r->v[SB_SHV_SECTION] = sec >= 0 ? (uint64_t)sec + 1 : 0;
		for (uint32_t k = 0; k < l->npcs; k++) {
			struct sb_sharing *f = sb_coherence_row(p, &cap, SB_SHARING_REF,
								SB_SHARING_SAMPLED);

			if (!f) {
				ret = -ENOMEM;
				break;
			}
			f->addr = l->pcs[k];
			f->loc = sb_coherence_loc(loc_of, ctx, l->pcs[k]);
			f->v[SB_SHV_LOADS] = l->pc_loads[k];
			f->v[SB_SHV_STORES] = l->pc_stores[k];
		}
	}
	sb_instance_index_free(x);
	free(lines);
	return ret;
}
