// SPDX-License-Identifier: MIT
/*
 * The ring buffer's consumer.  A record's type is looked at once, here:
 * one table routes it to one handler per type (retsnoop's style) after
 * checking the size that type must have.  Handlers turn records into
 * section-builder events (records.h) and keep the thread table; the
 * hardware path's records go to hw/hwsession.h, each sample's data
 * address to addr_sampler.h.
 */
#include "record_session.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "addr_sampler.h"
#include "hw/hwsession.h"
#include "hw/lbr_pebs.h"
#include "profile/profile.h"
#include "record_footprint.h"
#include "record_reuse.h"
#include "record_watch.h"
#include "stacks.h"
#include "util/idmap.h"

/*
 * The thread table holds a thread's entry at (tid, 0) while it lives.
 * The kernel gives a tid to a new thread once its thread has exited and
 * the pid counter came round (pid_max, 32768 by default, is reached in
 * seconds by a program that churns threads on a busy machine), so an
 * ended thread's entry moves to (tid, key != 0): the profile lists
 * threads, never two threads as one.
 */
static struct sb_thread *thread_entry(struct sb_rec *r, uint32_t tid)
{
	void **slot = sb_idmap_slot(r->threads, tid, 0, true);

	if (!slot)
		return NULL;
	if (!*slot) {
		struct sb_thread *t = calloc(1, sizeof(*t));

		if (!t)
			return NULL;
		t->tid = tid;
		*slot = t;
	}
	return *slot;
}

/* key: its end time, unique for a tid; the next free one on a tie. */
static void thread_retire(struct sb_rec *r, uint32_t tid, uint64_t key)
{
	struct sb_thread *t = sb_idmap_remove(r->threads, tid, 0);
	void **slot;

	if (!t)
		return;
	for (key = key ? key : 1; (slot = sb_idmap_slot(r->threads, tid, key, true)) && *slot;
	     key++)
		;
	if (slot) {
		*slot = t;
		return;
	}
	r->recs.threads_unlisted++;   /* out of memory: said in the profile */
	free(t->comm);
	free(t);
}

void sb_rec_thread_seen(struct sb_rec *r, uint32_t tid, uint32_t parent, uint64_t ts,
			const char *comm, uint16_t kind)
{
	void **slot = sb_idmap_slot(r->threads, tid, 0, false);
	struct sb_thread *t = slot ? *slot : NULL;
	struct sb_event ev = { .ts = ts, .tid = tid, .kind = kind, .obj = parent };
	bool live = t != NULL;

	/* A start after the live entry's own start record: that thread's
	 * exit record was lost (counted in drops_thread) and this is a new
	 * thread.  One started while attaching is found by both seeding (no
	 * parent) and its start record: the same thread. */
	if (t && kind == SB_EV_THREAD_START && t->parent_tid && t->start_ns < ts) {
		thread_retire(r, tid, t->start_ns | 1ull << 63);
		ev.prim = SB_START_TID_REUSED;   /* the builder renews the tid too */
	}
	if (!(t = thread_entry(r, tid)))
		return;
	if (kind == SB_EV_THREAD_START || !live) {
		t->parent_tid = parent;
		t->start_ns = ts;
	}
	if (comm && !t->comm)
		t->comm = strdup(comm);
	if (!live)
		r->nthreads_live++;
	/* The process's first thread, found at attach: its exit joins nothing. */
	if (kind == SB_EV_THREAD_SEEN && (int)tid == r->pid)
		ev.obj = 1;
	if (r->fw.tid_proc && (slot = sb_idmap_slot(r->fw.tid_proc, tid, 0, true)))
		*slot = r->fw.cur;   /* its records go to this image */
	sb_builder_add(r->builder, &ev);
}

static void probe(struct sb_rec *r, const void *data, bool enter)
{
	struct sb_event ev;

	if (sb_records_probe(&r->recs, data, enter, &ev) > 0)
		sb_builder_add(r->builder, &ev);
}

static void on_probe_enter(struct sb_rec *r, const void *data, size_t size)
{
	(void)size;
	probe(r, data, true);
}

static void on_probe_exit(struct sb_rec *r, const void *data, size_t size)
{
	(void)size;
	probe(r, data, false);
}

static void on_wait(struct sb_rec *r, const void *data, size_t size)
{
	struct sb_event ev;

	(void)size;
	sb_records_wait(&r->recs, data, &ev);
	sb_builder_add(r->builder, &ev);
}

static void on_thread_new(struct sb_rec *r, const void *data, size_t size)
{
	const struct sb_rec_thread *rt = data;
	char comm[17];

	(void)size;
	sb_records_thread_new(&r->recs, rt);
	memcpy(comm, rt->comm, 16);
	comm[16] = 0;
	sb_rec_thread_seen(r, rt->hdr.tid, rt->parent_tid, rt->hdr.ts, comm,
			   SB_EV_THREAD_START);
}

void sb_rec_thread_exit(struct sb_rec *r, const struct sb_rec_thread *rt)
{
	/* Only a thread counted live leaves the live count: one that started
	 * before the tracepoints and ended before seeding found it was never
	 * counted, and taking it off would end the process early (its
	 * records then dropped as of no known process). */
	bool live = sb_idmap_slot(r->threads, rt->hdr.tid, 0, false) != NULL;
	struct sb_thread *t = thread_entry(r, rt->hdr.tid);
	struct sb_event ev;

	if (t) {
		/* The name it ends with: programs name their workers after
		 * creating them (pthread_setname_np). */
		char comm[17], *dup;

		t->end_ns = rt->hdr.ts;
		t->oncpu_ns = rt->oncpu_ns;
		memcpy(comm, rt->comm, 16);
		comm[16] = 0;
		if (comm[0] && (dup = strdup(comm))) {
			free(t->comm);
			t->comm = dup;
		}
	}
	if (live && r->nthreads_live)
		r->nthreads_live--;
	sb_records_thread_exit(&r->recs, rt, &ev);
	sb_builder_add(r->builder, &ev);
	if (t)
		thread_retire(r, rt->hdr.tid, rt->hdr.ts);
	sb_follow_thread_gone(r, rt->hdr.tid);
	sb_rprobe_thread_gone(r->rprobe, r->bpf, rt->hdr.tid);
}

static void on_thread_exit(struct sb_rec *r, const void *data, size_t size)
{
	(void)size;
	sb_rec_thread_exit(r, data);
}

static void on_sample(struct sb_rec *r, const void *data, size_t size)
{
	const struct sb_rec_sample *s = data;
	uint64_t keys[SB_SAMPLE_FRAMES], frames[SB_SAMPLE_FRAMES];
	struct sb_event ev;
	struct sb_addr a;
	int bin = -1;
	bool decoded;
	size_t n;

	sb_records_sample(s, &ev);
	sb_builder_add(r->builder, &ev);
	/* The sample's time also counts for every call site it runs under,
	 * so a branch that calls shared work more often shows: frame
	 * pointers, or the CFI unwind of its stack copy (stacks.h). */
	n = sb_stacks_chain(r->stacks, s, size, frames, SB_SAMPLE_FRAMES);
	n = sb_records_callsites(frames, n, keys, SB_SAMPLE_FRAMES);
	for (size_t i = 0; i < n; i++) {
		ev.obj = keys[i];
		sb_builder_add(r->builder, &ev);
	}
	/* Its data address, from its own registers (issue 3), and the
	 * cache line it touched for sampled sharing (record_watch.h). */
	decoded = sb_addr_sampler_add(r->addrs, s, &a, &bin);
	if (r->fprobe)
		sb_fprobe_running(r->fprobe, r->fw.cur ? r->fw.cur->pid : r->pid, s->hdr.tid,
				  s->hdr.ts);
	if (r->rprobe && decoded)   /* the test counter's candidates only */
		sb_rprobe_sample(r->rprobe, a.tid, a.ts, a.addr);
	if (r->watch)
		sb_watch_sample(r->watch, r->maps, r->fw.cur ? r->fw.cur->pid : r->pid, s,
				size >= sizeof(struct sb_rec_sample_stack) ?
				((const struct sb_rec_sample_stack *)data)->stack_len : 0,
				decoded ? &a : NULL, bin);
}

/* A `scalebpf cc` program's exact counts of one segment: one event each. */
static void on_exact(struct sb_rec *r, const void *data, size_t size)
{
	struct sb_event evs[SB_EXACT_BATCH];
	int n = sb_records_exact(&r->recs, data, evs);

	(void)size;
	for (int i = 0; i < n; i++) {
		r->exact_counts += evs[i].dur;
		sb_builder_add(r->builder, &evs[i]);
	}
	r->exact_batches += n >= 0;
}

/* The region sums, made at the first record that needs them; false
 * (counted) when they cannot be. */
static bool regions_ready(struct sb_rec *r)
{
	if (r->regions.open)
		return true;
	if (sb_regions_init(&r->regions)) {
		r->regions.nomem++;
		return false;
	}
	/* sampled probes are grouped by the calls they fell in */
	r->regions.keep_spans = r->fprobe || r->rprobe;
	return true;
}

/* A `scalebpf cc --chip` program's cache hit profile of one segment: its
 * counters are section totals.  Every batch of a recording has one shape
 * (the runtime reads it once); one of another is counted, not mixed in. */
static void on_chip(struct sb_rec *r, const void *data, size_t size)
{
	const struct sb_rec_chip *c = data;
	struct sb_event evs[SB_KEY_TOTALS];
	int n;

	(void)size;
	/* the shape the profile's reader accepts, or the batch is not ours */
	if (!c->b.line || (c->b.line & (c->b.line - 1)) || c->b.max_bytes < 16ull * c->b.line ||
	    !c->b.rate_t || c->b.rate_t > (1u << 24)) {
		r->chip.reshaped++;
		return;
	}
	if (!r->chip.batches) {
		r->chip.max_bytes = c->b.max_bytes;
		r->chip.line = c->b.line;
		r->chip.rate_t = c->b.rate_t;
	} else if (c->b.max_bytes != r->chip.max_bytes || c->b.line != r->chip.line ||
		   c->b.rate_t != r->chip.rate_t) {
		r->chip.reshaped++;
		return;
	}
	n = sb_records_chip(&r->recs, c, evs);
	for (int i = 0; i < n; i++)
		sb_builder_add(r->builder, &evs[i]);
	r->chip.batches += n >= 0;
	if (n >= 0 && regions_ready(r) && sb_regions_batch(&r->regions, c->hdr.tid, &c->b))
		r->regions.nomem++;
}

/* A --region function entered or returned (record_region.h): the probe
 * the cookie names is one of the plan's region probes, or the record is
 * not ours. */
static void on_region(struct sb_rec *r, const void *data, size_t size)
{
	const struct sb_rec_region *g = data;
	const struct sb_probe *pr = g->region < r->plan.n ? &r->plan.probes[g->region] : NULL;

	(void)size;
	if (!pr || pr->role != SB_ROLE_USER_REGION) {
		r->recs.bad_records++;
		return;
	}
	if (regions_ready(r) && sb_regions_mark(&r->regions, pr->region, g))
		r->regions.nomem++;
}

/* LBR and PEBS records: hwagg.c checks them (malformed ones count in
 * hw_bad_records); with no hardware sampler running they are not ours. */
static void on_hw(struct sb_rec *r, const void *data, size_t size)
{
	const struct sb_rec_hdr *h = data;
	struct sb_hw_load l;

	if (sb_hwsession_record(r->hw, r->builder, data, size) == -ENODEV) {
		r->recs.bad_records++;
		return;
	}
	if (h->type != SB_REC_LOAD || sb_hw_load_decode(data, size, &l))
		return;
	/* PEBS loads also pick sharing candidates by their data source, and
	 * reuse probes' lines */
	if (r->watch)
		sb_watch_load(r->watch, r->maps, r->fw.cur ? r->fw.cur->pid : r->pid, &l);
	sb_rprobe_load(r->rprobe, &l);
}

/* A watchpoint of a reuse probe (record_reuse.h) or of sampled sharing
 * (record_watch.h) fired. */
static void on_watch(struct sb_rec *r, const void *data, size_t size)
{
	(void)size;
	if (sb_rprobe_hit(r->rprobe, data))
		return;
	if (r->watch)
		sb_watch_hit(r->watch, r->maps, r->fw.cur ? r->fw.cur->pid : r->pid, data);
}

/* A followed process exec'd, forked or mapped libraries (follow.h). */
static void on_proc(struct sb_rec *r, const void *data, size_t size)
{
	(void)size;
	sb_follow_on_proc(r, data);
}

/* size: what a record of the type measures (0: its handler checks). */
static const struct route {
	uint16_t size;
	void (*handle)(struct sb_rec *r, const void *data, size_t size);
} routes[SB_REC_TYPE_MAX] = {
	[SB_REC_PROBE_ENTER] = { sizeof(struct sb_rec_probe), on_probe_enter },
	[SB_REC_PROBE_EXIT] = { sizeof(struct sb_rec_probe), on_probe_exit },
	[SB_REC_WAIT] = { sizeof(struct sb_rec_wait), on_wait },
	[SB_REC_THREAD_NEW] = { sizeof(struct sb_rec_thread), on_thread_new },
	[SB_REC_THREAD_EXIT] = { sizeof(struct sb_rec_thread), on_thread_exit },
	[SB_REC_SAMPLE] = { sizeof(struct sb_rec_sample), on_sample },
	[SB_REC_LBR] = { 0, on_hw },
	[SB_REC_LOAD] = { 0, on_hw },
	[SB_REC_EXACT] = { sizeof(struct sb_rec_exact), on_exact },
	[SB_REC_SAMPLE_STACK] = { sizeof(struct sb_rec_sample_stack), on_sample },
	[SB_REC_PROC] = { sizeof(struct sb_rec_proc), on_proc },
	[SB_REC_WATCH] = { sizeof(struct sb_rec_watch), on_watch },
	[SB_REC_CHIP] = { sizeof(struct sb_rec_chip), on_chip },
	[SB_REC_REGION] = { sizeof(struct sb_rec_region), on_region },
};

int sb_rec_route_record(void *ctx, const void *data, size_t size)
{
	struct sb_rec *r = ctx;
	const struct sb_rec_hdr *h = data;
	const struct route *rt;

	r->records++;
	if (size < sizeof(*h) || h->type >= SB_REC_TYPE_MAX || !routes[h->type].handle) {
		r->recs.bad_records++;   /* unknown type */
		return 0;
	}
	rt = &routes[h->type];
	if (rt->size && (h->size != rt->size || size < h->size)) {
		r->recs.bad_records++;
		return 0;
	}
	/* Which process image it belongs to (follow.h); a new process's
	 * first thread is handled there. */
	if (h->type != SB_REC_PROC && sb_follow_route(r, data, size))
		return 0;
	rt->handle(r, data, size);
	return 0;
}
