// SPDX-License-Identifier: MIT
/* The section builder's life: allocation, the event queue it is fed
 * through, and freeing (the model: sections.h; processing: sections.c). */
#include "sections_priv.h"

#include <stdlib.h>
#include <string.h>

#include "evqueue.h"
#include "util/idmap.h"

struct sb_builder *sb_builder_alloc(uint64_t max_instances)
{
	struct sb_builder *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->max_instances = max_instances;
	b->queue = sb_evqueue_alloc();
	b->threads = sb_idmap_alloc();
	b->syncobjs = sb_idmap_alloc();
	b->sections = sb_idmap_alloc();
	b->waits = sb_idmap_alloc();
	if (!b->queue || !b->threads || !b->syncobjs || !b->sections || !b->waits) {
		sb_builder_free(b);
		return NULL;
	}
	return b;
}

void sb_builder_single_joins(struct sb_builder *b, bool on)
{
	b->single_joins = on;
}

static void free_map_values(struct sb_idmap *m, void (*fn)(void *))
{
	size_t it = 0;
	void *v;

	if (!m)
		return;
	while (sb_idmap_next(m, &it, NULL, NULL, &v))
		fn(v);
	sb_idmap_free(m);
}

static void thread_free(void *p)
{
	struct sb_sect_thread *t = p;

	if (t)
		sb_counts_free(t->seg_counts);
	free(t);
}

void sb_builder_free(struct sb_builder *b)
{
	if (!b)
		return;
	sb_evqueue_free(b->queue);
	while (b->live) {
		struct sb_sect_inst *in = b->live;

		b->live = in->next;
		for (uint32_t i = 0; i < in->n; i++)
			sb_counts_free(in->a[i].counts);
		free(in->a);
		free(in);
	}
	sb_idmap_free(b->syncobjs);
	free_map_values(b->threads, thread_free);
	free_map_values(b->sections, sb_sect_section_free);
	free_map_values(b->waits, free);
	while (b->regions) {
		struct sb_sect_region *r = b->regions;

		b->regions = r->next;
		free(r);
	}
	for (size_t i = 0; i < b->nstored; i++) {
		free(b->stored[i].pt);
		sb_vecset_free(&b->stored[i].vec);
	}
	free(b->stored);
	free(b->secorder);
	free(b->log);
	free(b);
}

int sb_builder_keep_log(struct sb_builder *b, size_t max, bool named_only)
{
	b->named_only = named_only;
	b->logging = max > 0;
	b->maxlog = max;
	return 0;
}

int sb_builder_add(struct sb_builder *b, const struct sb_event *ev)
{
	if (sb_evqueue_push(b->queue, ev))
		return SB_ERR_NOMEM;
	return 0;
}

int sb_builder_flush(struct sb_builder *b, uint64_t watermark)
{
	struct sb_event ev;

	while (sb_evqueue_pop_until(b->queue, watermark, &ev))
		sb_sect_process(b, &ev);
	return b->err;
}

/* At a cut: threads that exited and that nothing refers to any more (no
 * barrier they wait in, no children, no join instance of theirs open, no
 * first join undecided) leave the table, so that a service making and
 * ending threads all day keeps only its live ones.  A later thread on
 * the tid starts afresh, as a new thread does.  Returns how many. */
static uint64_t threads_evict(struct sb_builder *b)
{
	uint64_t *tids = NULL, n = 0, cap = 0;
	size_t it = 0;
	uint64_t tid;
	void *v;

	while (sb_idmap_next(b->threads, &it, &tid, NULL, &v)) {
		const struct sb_sect_thread *t = v;
		void **open;

		if (!t || !t->exited || t->pending || t->first_join || t->live_children)
			continue;
		open = sb_idmap_slot(b->syncobjs, SB_PRIM_JOIN, t->tid, false);
		if (open && *open)
			continue;
		if (n == cap) {
			uint64_t *a = realloc(tids, (cap = cap ? cap * 2 : 64) * sizeof(*a));

			if (!a)
				break;   /* kept: memory, not correctness */
			tids = a;
		}
		tids[n++] = tid;
	}
	for (uint64_t i = 0; i < n; i++)
		thread_free(sb_idmap_remove(b->threads, tids[i], 0));
	free(tids);
	return n;
}

int sb_builder_cut(struct sb_builder *b, uint64_t watermark, struct sb_builder **out)
{
	struct sb_builder *c;
	struct sb_idmap *sections, *waits;
	int ret;

	*out = NULL;
	if (b->logging)
		return -1;
	if ((ret = sb_builder_flush(b, watermark)))
		return ret;
	c = calloc(1, sizeof(*c));
	sections = sb_idmap_alloc();
	waits = sb_idmap_alloc();
	if (!c || !sections || !waits) {
		free(c);
		sb_idmap_free(sections);
		sb_idmap_free(waits);
		return SB_ERR_NOMEM;
	}
	/* the result moves; the state that makes the next one stays */
	c->max_instances = b->max_instances;
	c->single_joins = b->single_joins;
	c->sections = b->sections;
	c->waits = b->waits;
	c->secorder = b->secorder;
	c->nsec = b->nsec;
	c->capsec = b->capsec;
	c->stored = b->stored;
	c->nstored = b->nstored;
	c->capstored = b->capstored;
	c->st = b->st;
	c->st.late_events = sb_evqueue_late(b->queue) - b->late_cut;
	b->late_cut = sb_evqueue_late(b->queue);
	b->sections = sections;
	b->waits = waits;
	b->secorder = NULL;
	b->nsec = b->capsec = 0;
	b->stored = NULL;
	b->nstored = b->capstored = 0;
	memset(&b->st, 0, sizeof(b->st));
	c->st.threads_evicted = threads_evict(b);
	*out = c;
	return 0;
}
