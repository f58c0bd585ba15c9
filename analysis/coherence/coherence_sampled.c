// SPDX-License-Identifier: MIT
/*
 * Sampled sharing estimates (the model is in coherence.h): lines by the
 * threads sampled touching them, candidates, watchpoint windows and the
 * footprint classification.
 *
 * Memory is bounded: an open-addressed table of max_lines lines (three
 * quarters of its slots) and one of NPCS instructions.  Most sampled
 * lines are one thread's (its stack, its slice of an array) or only read:
 * when the table is full those are forgotten (purges), as they can be no
 * candidates; when it is still full, accesses to new lines are counted in
 * lines_dropped (and new instructions in pcs_untracked), never silently
 * lost, and a purge that freed little is not retried until as many
 * accesses were dropped.
 */
#include "coherence_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sb_cosample_opts_default(struct sb_cosample_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->line = 64;
	o->max_lines = 8192;
	o->min_samples = 1;
	o->min_confirms = 2;
	o->max_windows = 6;
	o->cooldown_ns = 20000000ull;
}

struct sb_cosample *sb_cosample_alloc(const struct sb_cosample_opts *o, char *err, size_t len)
{
	struct sb_cosample *s;
	uint32_t shift = 0;

	if (o->line != 64) {
		/* the footprints are 64-bit masks, one bit a byte */
		snprintf(err, len, "sampled sharing needs 64-byte lines, not %u", o->line);
		return NULL;
	}
	if (o->max_lines < 16 || o->max_lines > (1u << 24) || !o->max_windows ||
	    !o->min_samples) {
		snprintf(err, len, "sampled sharing: bad limits (max_lines %u, max_windows %u, "
			 "min_samples %u)", o->max_lines, o->max_windows, o->min_samples);
		return NULL;
	}
	while ((1u << shift) < o->line)
		shift++;
	s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, len, "out of memory");
		return NULL;
	}
	s->o = *o;
	s->shift = shift;
	for (s->cap = 16; s->cap < (size_t)o->max_lines * 4 / 3 + 1; s->cap *= 2)
		;
	s->lines = calloc(s->cap, sizeof(*s->lines));
	s->pcs = calloc(NPCS, sizeof(*s->pcs));
	if (!s->lines || !s->pcs) {
		free(s->lines);
		free(s->pcs);
		snprintf(err, len, "out of memory for %zu sampled lines", s->cap);
		free(s);
		return NULL;
	}
	return s;
}

void sb_cosample_free(struct sb_cosample *s)
{
	if (!s)
		return;
	free(s->lines);
	free(s->pcs);
	free(s);
}

static size_t slot_of(const struct sb_cosample *s, uint64_t line)
{
	uint64_t h = (line >> s->shift) * 0x9e3779b97f4a7c15ull;

	return (size_t)(h >> 20) & (s->cap - 1);
}

static struct cos_line *find(struct sb_cosample *s, uint64_t line)
{
	for (size_t i = slot_of(s, line), n = 0; n < s->cap; i = (i + 1) & (s->cap - 1), n++) {
		if (!s->lines[i].addr)
			return NULL;
		if (s->lines[i].addr == line + 1)
			return &s->lines[i];
	}
	return NULL;
}

static struct cos_line *insert(struct sb_cosample *s, uint64_t line)
{
	size_t i = slot_of(s, line);

	while (s->lines[i].addr)
		i = (i + 1) & (s->cap - 1);
	memset(&s->lines[i], 0, sizeof(s->lines[i]));
	s->lines[i].addr = line + 1;
	s->lines[i].stack_tid = -1;
	s->used++;
	return &s->lines[i];
}

/* Forgets the lines only one thread was seen on and never probed, and
 * rehashes the rest (a table of at most max_lines lines). */
static void purge(struct sb_cosample *s)
{
	struct cos_line *old = s->lines;
	size_t n = s->cap;

	s->lines = calloc(s->cap, sizeof(*s->lines));
	if (!s->lines) {
		s->lines = old;   /* keep what there is: new lines are dropped */
		return;
	}
	s->used = 0;
	s->st.purges++;
	for (size_t i = 0; i < n; i++) {
		struct cos_line *l;

		if (!old[i].addr || (old[i].state == ST_TRACK && !old[i].windows &&
				     (old[i].nthr < 2 || (!old[i].stores && !old[i].hitm))))
			continue;   /* one thread's, or only read: never a candidate */
		l = insert(s, old[i].addr - 1);
		*l = old[i];
	}
	free(old);
}

static struct cos_line *get(struct sb_cosample *s, uint64_t line)
{
	struct cos_line *l = find(s, line);

	if (l)
		return l;
	/* a purge that freed little is not tried again before as many
	 * accesses have been dropped: each copies the whole table */
	if (s->used >= s->o.max_lines && !s->purge_backoff) {
		purge(s);
		if (s->used > s->o.max_lines - s->o.max_lines / 8)
			s->purge_backoff = s->o.max_lines;
	}
	if (s->used >= s->o.max_lines) {
		if (s->purge_backoff)
			s->purge_backoff--;
		return NULL;
	}
	return insert(s, line);
}

static struct cos_thread *thread_of(struct cos_line *l, uint32_t tid)
{
	for (uint32_t i = 0; i < l->nthr; i++)
		if (l->thr[i].tid == tid)
			return &l->thr[i];
	if (l->nthr == SB_COSAMPLE_THREADS)
		return NULL;   /* the line's first threads are kept */
	memset(&l->thr[l->nthr], 0, sizeof(l->thr[0]));
	l->thr[l->nthr].tid = tid;
	return &l->thr[l->nthr++];
}

/* Bytes [off, off + size) of a line as a mask; size 0 is 8 bytes. */
static uint64_t bytes_mask(uint64_t off, uint32_t size)
{
	uint64_t n = size ? size : 8;

	if (off >= 64)
		return 0;
	if (off + n > 64)
		n = 64 - off;
	return n >= 64 ? ~0ull : ((1ull << n) - 1) << off;
}

static void add_ref(struct cos_line *l, uint64_t pc, bool store)
{
	uint32_t k = 0;

	while (k < l->npcs && l->pcs[k] != pc)
		k++;
	if (k == l->npcs) {
		if (l->npcs == SB_COSAMPLE_REFS)
			return;
		l->pcs[l->npcs++] = pc;
	}
	if (store)
		l->pc_stores[k]++;
	else
		l->pc_loads[k]++;
}

struct cos_pc *sb_cosample_pc(struct sb_cosample *s, uint64_t pc, bool add)
{
	size_t i = (size_t)((pc * 0x9e3779b97f4a7c15ull) >> 52) & (NPCS - 1);

	for (size_t n = 0; n < NPCS; n++, i = (i + 1) & (NPCS - 1)) {
		if (s->pcs[i].pc == pc)
			return &s->pcs[i];
		if (!s->pcs[i].pc) {
			if (!add)
				return NULL;
			s->pcs[i].pc = pc;
			return &s->pcs[i];
		}
	}
	return NULL;
}

static void pc_note(struct sb_cosample *s, const struct sb_cosample_access *a)
{
	struct cos_pc *c = sb_cosample_pc(s, a->pc, true);

	if (!c) {
		s->st.pcs_untracked++;
		return;
	}
	c->samples += !a->ahead;
	if (!a->store || a->own_stack || a->runtime)
		return;
	if (!c->tids[0]) {
		c->tids[0] = a->tid;
		c->lo = c->hi = a->addr;
		return;
	}
	if (c->tids[0] != a->tid && !c->tids[1] && a->addr + SITE_SPAN > c->lo &&
	    a->addr < c->hi + SITE_SPAN)
		c->tids[1] = a->tid;
	c->lo = a->addr < c->lo ? a->addr : c->lo;
	c->hi = a->addr > c->hi ? a->addr : c->hi;
}

/* Sampled on the line by two threads, one storing (or a PMU saw another
 * core's modified copy). */
static bool candidate(const struct cos_line *l)
{
	return l->nthr >= 2 && (l->stores || l->hitm);
}

/* Stored to from an instruction two threads ran storing into one region,
 * or by the program into its static data. */
static bool site_candidate(struct sb_cosample *s, const struct cos_line *l)
{
	if (!l->user_stores)
		return false;
	if (l->static_stores)
		return true;
	for (uint32_t k = 0; k < l->npcs; k++) {
		const struct cos_pc *c;

		if (l->pc_stores[k] && (c = sb_cosample_pc(s, l->pcs[k], false)) && c->tids[1])
			return true;
	}
	return false;
}

void sb_cosample_access(struct sb_cosample *s, const struct sb_cosample_access *a)
{
	uint64_t line = a->addr & ~(uint64_t)(s->o.line - 1), first = a->addr - line;
	struct cos_thread *t;
	struct cos_line *l;
	bool was;

	s->st.accesses++;
	s->st.hitm_loads += a->hitm;
	s->st.pmu_loads += a->pmu && !a->store;
	s->st.pmu_stores += a->pmu && a->store;
	if (a->pc)
		pc_note(s, a);
	if (!(l = get(s, line))) {
		s->st.lines_dropped++;
		return;
	}
	was = candidate(l);
	l->samples += !a->ahead;
	l->touches++;
	l->stores += a->store;
	l->hitm += a->hitm;
	l->user_stores += a->store && !a->runtime;
	l->static_stores += a->store && !a->runtime && a->static_data;
	if (a->own_stack && l->stack_tid < 0)
		l->stack_tid = a->tid;
	add_ref(l, a->pc, a->store);
	if (l->nstamps < SB_COSAMPLE_STAMPS) {
		l->stamp_tid[l->nstamps] = a->tid;
		l->stamp_ts[l->nstamps++] = a->ts;
	} else {   /* a spread of the line's times: replace by rotation */
		uint32_t k = (uint32_t)(l->touches % SB_COSAMPLE_STAMPS);

		l->stamp_tid[k] = a->tid;
		l->stamp_ts[k] = a->ts;
	}
	if ((t = thread_of(l, a->tid))) {
		/* a split access: the first line's part */
		uint64_t m = bytes_mask(first, a->size);

		t->samples++;
		t->touched |= m;
		if (a->store)
			t->written |= m;
		t->last_sample = a->ts;
	}
	if (!was && candidate(l))
		s->st.candidates++;
}

/* Up to four aligned words: those more threads stored to first, then
 * those more threads touched (a reader of a writer's word). */
static void pick_words(const struct cos_line *l, struct sb_cosample_probe *p)
{
	uint32_t score[8] = { 0 };

	for (uint32_t i = 0; i < l->nthr; i++)
		for (uint32_t w = 0; w < 8; w++) {
			uint64_t m = 0xffull << (8 * w);

			score[w] += (l->thr[i].written & m ? 16 : 0) + (l->thr[i].touched & m ? 1 : 0);
		}
	p->nwords = 0;
	while (p->nwords < SB_COSAMPLE_WORDS) {
		uint32_t best = 8;

		for (uint32_t w = 0; w < 8; w++)
			if (score[w] && (best == 8 || score[w] > score[best]))
				best = w;
		if (best == 8)
			break;
		p->words[p->nwords++] = l->addr - 1 + 8 * best;
		score[best] = 0;
	}
	/* Fewer words seen than slots (one thread's store, sampled once):
	 * the words next to them, where another thread's part would be. */
	for (uint32_t d = 1, w0 = p->nwords ? (uint32_t)(p->words[0] - (l->addr - 1)) / 8 : 0;
	     d < 8 && p->nwords < SB_COSAMPLE_WORDS; d++)
		for (int sign = 1; sign >= -1 && p->nwords < SB_COSAMPLE_WORDS; sign -= 2) {
			int w = (int)w0 + sign * (int)d;
			bool have = false;

			if (w < 0 || w > 7)
				continue;
			for (uint32_t k = 0; k < p->nwords; k++)
				have |= p->words[k] == l->addr - 1 + 8 * (uint64_t)w;
			if (!have)
				p->words[p->nwords++] = l->addr - 1 + 8 * (uint64_t)w;
		}
}

bool sb_cosample_next(struct sb_cosample *s, uint64_t now, struct sb_cosample_probe *p)
{
	struct cos_line *best = NULL, *site = NULL;

	for (size_t i = 0; i < s->cap; i++) {
		struct cos_line *l = &s->lines[i];

		if (!l->addr || l->state != ST_TRACK ||
		    (l->last_probe && now - l->last_probe < s->o.cooldown_ns))
			continue;
		/* the line with the most samples per window had so far */
		if (candidate(l)) {
			if (!best ||
			    l->touches * (best->windows + 1) > best->touches * (l->windows + 1))
				best = l;
		} else if (!best && (!site || l->windows < site->windows) &&
			   site_candidate(s, l)) {
			site = l;   /* the least probed of them */
		}
	}
	if (!best && (best = site))
		s->st.site_windows++;
	if (!best)
		return false;
	memset(p, 0, sizeof(*p));
	p->line = best->addr - 1;
	pick_words(best, p);
	for (uint32_t i = 0; i < best->nthr; i++)
		p->tids[p->ntids++] = best->thr[i].tid;
	best->state = ST_PROBING;
	best->win_start = now;
	best->win_hit_threads = 0;
	best->win_hits = 0;
	return true;
}

void sb_cosample_hit(struct sb_cosample *s, uint64_t line, uint32_t tid, uint64_t ts,
		     uint64_t addr, uint32_t size, uint64_t pc, bool runtime)
{
	struct cos_line *l = find(s, line);
	struct cos_thread *t;
	uint64_t m;

	s->st.hits++;
	if (!l || l->state != ST_PROBING || addr < line || addr >= line + s->o.line) {
		s->st.hits_unmatched++;   /* a late hit of a window already closed */
		return;
	}
	l->hits++;
	l->win_hits++;
	l->user_stores += !runtime;
	/* kept for the scope: which barrier region the store was in */
	l->hit_tid[(l->hits - 1) % SB_COSAMPLE_STAMPS] = tid;
	l->hit_ts[(l->hits - 1) % SB_COSAMPLE_STAMPS] = ts;
	if (l->nhit_stamps < SB_COSAMPLE_STAMPS)
		l->nhit_stamps++;
	if (size)   /* an undecoded store's pc is the next instruction's */
		add_ref(l, pc, true);
	if (!(t = thread_of(l, tid)))
		return;
	t->hits++;
	l->win_hit_threads |= 1u << (t - l->thr);
	/* the bytes only when the store was decoded: a whole word would make
	 * two threads' ints in one word look like true sharing */
	if (size) {
		m = bytes_mask(addr - line, size);
		t->written |= m;
		t->touched |= m;
	}
}

void sb_cosample_window_end(struct sb_cosample *s, uint64_t line, uint32_t armed, uint64_t now)
{
	struct cos_line *l = find(s, line);
	unsigned writers;
	bool other_now = false, other_ever = false;

	if (!l || l->state != ST_PROBING)
		return;
	l->state = ST_TRACK;
	l->last_probe = now;
	if (!armed) {
		s->st.windows_unarmed++;
		/* its threads are gone (or their slots taken): not forever */
		if (++l->unarmed >= 3) {
			l->state = ST_DECIDED;
			s->st.decided++;
		}
		return;
	}
	s->st.windows++;
	l->windows++;
	writers = (unsigned)__builtin_popcount(l->win_hit_threads);
	for (uint32_t i = 0; writers == 1 && i < l->nthr; i++) {
		if (l->win_hit_threads & (1u << i) || !l->thr[i].samples)
			continue;
		other_ever = true;
		other_now = other_now || l->thr[i].last_sample >= l->win_start;
	}
	if (writers >= 2 || other_ever) {
		l->windows_confirmed++;
		l->confirmations += l->win_hits;
		if (writers >= 2 || other_now)
			l->windows_in_region++;
		if (!l->verdict_ns && l->confirmations >= s->o.min_confirms && l->user_stores) {
			l->verdict_ns = now;
			if (!s->st.first_verdict_ns)
				s->st.first_verdict_ns = now;
		}
	}
	/* decided: confirmed twice, or never in half the windows allowed */
	if (l->windows_confirmed >= 2 || l->windows >= s->o.max_windows ||
	    (!l->windows_confirmed && 2 * l->windows >= s->o.max_windows)) {
		l->state = ST_DECIDED;
		s->st.decided++;
	}
}

