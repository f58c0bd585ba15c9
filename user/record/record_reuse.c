// SPDX-License-Identifier: MIT
/* Reuse probes (record_reuse.h). */
#include "record_reuse.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "chip/chip.h"
#include "chip/chip_probes.h"
#include "chip/chip_reuse.h"
#include "clock.h"
#include "hw/lbr_pebs.h"
#include "profile/profile.h"
#include "record_bpf.h"
#include "record_watch.h"

#define FRESH_NS 100000000ull     /* a candidate older than this: stale */
/* A window whose thread ran fewer counts than this (it slept, or was
 * descheduled) is dropped, not censored: one short censoring window
 * would cap what every other probe resolves (chip_reuse.h's window is
 * the shortest).  2^20 memory operations: about a millisecond of work. */
#define MIN_WINDOW (1ull << 20)
#define MAX_TIDS 256

/* A probe's outcome in the log (chip_probes.h): its kind, value its
 * length (a reuse's, a censoring window's).  A sampled access's: weight
 * its period. */
enum { OUT_REUSE, OUT_SHORT, OUT_CENSORED };

struct counter {
	uint32_t tid;
	int fd;                  /* -1: a free slot */
};

struct sb_rprobe {
	struct sb_rprobe_opts o;
	uint64_t interval_ns, next_arm;
	/* the candidate: the latest sampled load */
	uint32_t cand_tid;
	uint64_t cand_ts, cand_addr;
	bool cand_near;
	/* the threads' counters, slot = index */
	struct counter counters[SB_MEMOPS_SLOTS];
	uint32_t next_slot;
	/* the open probe */
	bool open;
	int fds[SB_WATCH_WORDS]; /* its watchpoints, on the granule's words */
	uint32_t tid, slot;
	uint64_t granule, deadline;
	uint64_t drops;          /* watch records lost to a full ring, armed */
	bool bad;                /* a trap without an exact count */
	struct sb_chip_rdx_probe probe;
	/* the results: the probes' reuses; sampled loads by data source */
	struct sb_chip_rdx_sum sum;
	uint64_t near, far, unknown;
	uint64_t probes, done, censored, idle, unread, scaled, late, lost;
	uint64_t enospc, gone, failed, counter_failed, stale;
	uint64_t loads, stores, traps;
	/* for the sections' rows: each probe's outcome and window, and a
	 * uniform sample of the sampled accesses (their share of a section) */
	struct sb_chip_plog *log, *accesses;
	uint64_t armed_ns, unlogged;
	uint32_t tids[MAX_TIDS];
	unsigned ntids;
};

struct sb_rprobe *sb_rprobe_alloc(const struct sb_rprobe_opts *o)
{
	struct sb_rprobe *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->o = *o;
	p->log = sb_chip_plog_alloc(0, 0x5851f42d4c957f2dull);
	p->accesses = sb_chip_plog_alloc(0, 0x14057b7ef767814full);
	if (!p->log || !p->accesses) {
		sb_rprobe_free(p);
		return NULL;
	}
	p->interval_ns = 1000000000ull / (o->rate ? o->rate : 1);
	for (int i = 0; i < SB_WATCH_WORDS; i++)
		p->fds[i] = -1;
	for (size_t i = 0; i < SB_MEMOPS_SLOTS; i++)
		p->counters[i].fd = -1;
	return p;
}

void sb_rprobe_free(struct sb_rprobe *p)
{
	if (p) {
		sb_rprobe_stop(p, NULL);
		sb_chip_plog_free(p->log);
		sb_chip_plog_free(p->accesses);
	}
	free(p);
}

bool sb_rprobe_test_counter(struct sb_rprobe_opts *o)
{
	const char *v = getenv("SCALEBPF_REUSE_COUNTER");

	if (!v || strcmp(v, "task-clock"))
		return false;
	memset(&o->counter, 0, sizeof(o->counter));
	o->counter.type = PERF_TYPE_SOFTWARE;
	o->counter.size = sizeof(o->counter);
	o->counter.config = PERF_COUNT_SW_TASK_CLOCK;
	snprintf(o->counter_name, sizeof(o->counter_name), "%s",
		 "task-clock (test counter: lengths in CPU nanoseconds, not accesses)");
	o->software = true;
	return true;
}

static void seen(struct sb_rprobe *p, uint32_t tid)
{
	for (unsigned i = 0; i < p->ntids; i++)
		if (p->tids[i] == tid)
			return;
	if (p->ntids < MAX_TIDS)
		p->tids[p->ntids++] = tid;
}

static void logged(struct sb_rprobe *p, struct sb_chip_plog *l, const struct sb_chip_pout *o)
{
	if (sb_chip_plog_add(l, o))
		p->unlogged++;
}

/* The open probe's outcome, ended at `end`, for its section's row. */
static void outcome(struct sb_rprobe *p, unsigned kind, uint64_t len, uint64_t end)
{
	logged(p, p->log, &(struct sb_chip_pout){ .start = p->armed_ns, .end = end, .tid = p->tid,
						  .tag = kind, .value = len });
}

static void candidate(struct sb_rprobe *p, uint32_t tid, uint64_t ts, uint64_t addr, bool near)
{
	seen(p, tid);
	if (addr < 4096)
		return;
	p->cand_tid = tid;
	p->cand_ts = ts;
	p->cand_addr = addr;
	p->cand_near = near;
}

void sb_rprobe_load(struct sb_rprobe *p, const struct sb_hw_load *l)
{
	int private;

	if (!p)
		return;
	logged(p, p->accesses, &(struct sb_chip_pout){ .start = l->ts, .end = l->ts, .tid = l->tid,
			.weight = (double)(l->store ? p->o.store_period : p->o.load_period) });
	if (l->store) {   /* stores' data source has no level: counted only */
		p->stores++;
		return;
	}
	p->loads++;
	if (!(l->flags & SB_LOAD_HAVE_ADDR))
		return;
	/* near: it came back within the L2's capacity (chip_reuse.h: what
	 * that tells of a line not touched after arming) */
	private = sb_hw_load_private(l);
	p->unknown += private < 0;
	p->near += private > 0;
	p->far += !private;
	candidate(p, l->tid, l->ts, l->addr, private > 0);
}

void sb_rprobe_sample(struct sb_rprobe *p, uint32_t tid, uint64_t ts, uint64_t addr)
{
	if (!p || !p->o.software)
		return;
	p->unknown++;
	candidate(p, tid, ts, addr, false);
}

/* Closes slot i's counter and takes it out of BPF's map (bpf: NULL once
 * the session is gone). */
static void release_counter(struct sb_rprobe *p, struct sb_bpf *bpf, uint32_t i)
{
	struct counter *c = &p->counters[i];

	if (c->fd < 0)
		return;
	if (bpf)
		sb_bpf_memops_set(bpf, c->tid, i, -1);
	close(c->fd);
	c->fd = -1;
}

/* The thread's counter slot, opened at its first probe; -errno. */
static int counter_of(struct sb_rprobe *p, struct sb_bpf *bpf, uint32_t tid)
{
	struct counter *c;
	int fd, ret;

	for (uint32_t i = 0; i < SB_MEMOPS_SLOTS; i++)
		if (p->counters[i].fd >= 0 && p->counters[i].tid == tid)
			return (int)i;
	fd = (int)syscall(__NR_perf_event_open, &p->o.counter, (pid_t)tid, -1, -1,
			  PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* a free slot (exited threads give theirs back), else the slots go
	 * round: the oldest thread's gives way, to open again if it comes
	 * back */
	for (uint32_t i = 0; i < SB_MEMOPS_SLOTS; i++) {
		uint32_t k = (p->next_slot + i) % SB_MEMOPS_SLOTS;

		if (p->counters[k].fd < 0) {
			p->next_slot = k;
			break;
		}
	}
	release_counter(p, bpf, p->next_slot);
	c = &p->counters[p->next_slot];
	if ((ret = sb_bpf_memops_set(bpf, tid, p->next_slot, fd))) {
		close(fd);
		return ret < 0 ? ret : -EINVAL;
	}
	c->tid = tid;
	c->fd = fd;
	ret = (int)p->next_slot;
	p->next_slot = (p->next_slot + 1) % SB_MEMOPS_SLOTS;
	return ret;
}

static bool read_count(const struct sb_rprobe *p, uint32_t slot, uint64_t *v)
{
	int fd = p->counters[slot].fd;

	return fd >= 0 && read(fd, v, sizeof(*v)) == (ssize_t)sizeof(*v);
}

static void close_watches(struct sb_rprobe *p)
{
	for (int i = 0; i < SB_WATCH_WORDS; i++)
		if (p->fds[i] >= 0) {
			close(p->fds[i]);
			p->fds[i] = -1;
		}
}

/* The watch records the ring buffer lost so far: a probe that lost one
 * would take its second trap for its first. */
static uint64_t watch_drops(struct sb_bpf *bpf)
{
	uint64_t c[SB_CNT_MAX];

	return bpf && !sb_bpf_read_counters(bpf, c) ? c[SB_CNT_DROP_WATCH] : 0;
}

static void arm(struct sb_rprobe *p, struct sb_bpf *bpf, uint64_t now)
{
	int prog = sb_bpf_watch_prog_fd(bpf), slot, ret;
	uint64_t count;
	bool near;

	/* (signed: a candidate may come in after now was read) */
	if (!p->cand_addr || (int64_t)(now - p->cand_ts) > (int64_t)FRESH_NS) {
		p->stale++;
		return;
	}
	p->granule = p->cand_addr & ~(uint64_t)(SB_WATCH_GRANULE - 1);
	p->tid = p->cand_tid;
	near = p->cand_near;
	p->cand_addr = 0;            /* each sample is probed once */
	if ((slot = counter_of(p, bpf, p->tid)) < 0) {
		p->counter_failed++;
		return;
	}
	/* the granule's four words, or no probe: fewer would watch less */
	if ((ret = sb_watch_open_granule(p->tid, p->granule, p->fds))) {
		p->enospc += ret == -ENOSPC;
		p->gone += ret == -ESRCH;
		p->failed += ret != -ENOSPC && ret != -ESRCH;
		return;
	}
	/* the count before the watches are on: the untouched window's start */
	p->drops = watch_drops(bpf);
	if (!read_count(p, (uint32_t)slot, &count)) {
		close_watches(p);
		p->counter_failed++;
		return;
	}
	/* two traps each at most (two in all end the probe) */
	for (int i = 0; i < SB_WATCH_WORDS; i++)
		if (sb_watch_enable(p->fds[i], prog, 2)) {
			p->failed++;
			close_watches(p);
			return;
		}
	sb_chip_rdx_arm(&p->probe, count, near);
	p->armed_ns = sb_now_ns();
	p->slot = (uint32_t)slot;
	p->open = true;
	p->bad = false;
	p->deadline = now + SB_RPROBE_WINDOW_NS;
	p->probes++;
}

bool sb_rprobe_hit(struct sb_rprobe *p, const struct sb_rec_watch *h)
{
	unsigned before;

	if (!p || !p->open || h->hdr.tid != p->tid ||
	    (h->addr & ~(uint64_t)(SB_WATCH_GRANULE - 1)) != p->granule)
		return false;
	p->traps++;
	if (p->probe.traps >= 2)
		return true;
	if (!(h->flags & SB_WATCH_HAVE_MEMOPS) || (h->flags & SB_WATCH_MEMOPS_SCALED)) {
		/* multiplexed or unread: not an exact count of the accesses */
		p->scaled += !!(h->flags & SB_WATCH_MEMOPS_SCALED);
		p->unread += !(h->flags & SB_WATCH_HAVE_MEMOPS);
		p->bad = true;
		return true;
	}
	before = p->probe.traps;
	if (sb_chip_rdx_trap(&p->probe, &p->sum, h->memops)) {
		p->done++;
		outcome(p, OUT_REUSE, h->memops - p->probe.first, h->hdr.ts);
	}
	else if (!before && p->probe.traps)
		/* the reuse after the first trap gets a window of its own */
		p->deadline = h->hdr.ts + SB_RPROBE_WINDOW_NS;
	return true;
}

/* Closes the open probe: its watch first, so that every trap's count is
 * at most the one read next; then its traps still in the ring. */
static void finish(struct sb_rprobe *p, struct sb_bpf *bpf, bool judge)
{
	uint64_t count = 0, from;
	bool have;

	close_watches(p);
	have = read_count(p, p->slot, &count);
	if (bpf)
		sb_bpf_poll(bpf, 0);
	p->open = false;
	if (bpf && watch_drops(bpf) != p->drops) {
		/* a trap of its may be lost: its reuse is not known (one taken
		 * already stays: two traps were seen) */
		p->lost += p->probe.traps < 2;
		return;
	}
	if (!judge || p->bad || p->probe.traps >= 2)
		return;
	if (!have) {
		p->unread++;
		return;
	}
	from = p->probe.traps ? p->probe.first : p->probe.armed;
	if (count < from + MIN_WINDOW) {
		/* a first trap in the last moments shows here too */
		if (p->probe.traps)
			p->late++;
		else
			p->idle++;
		return;
	}
	p->censored += p->probe.traps || !p->probe.near;
	outcome(p, p->probe.traps || !p->probe.near ? OUT_CENSORED : OUT_SHORT,
		count > from ? count - from : 1, sb_now_ns());
	sb_chip_rdx_close(&p->probe, &p->sum, count);
}

int sb_rprobe_tick(struct sb_rprobe *p, struct sb_bpf *bpf, uint64_t now)
{
	if (!p)
		return -1;
	if (p->open && (p->probe.traps >= 2 || p->bad)) {
		finish(p, bpf, false);
	} else if (p->open && now >= p->deadline) {
		/* a first trap still in the ring moves the deadline */
		if (bpf)
			sb_bpf_poll(bpf, 0);
		if (p->open && (now >= p->deadline || p->probe.traps >= 2 || p->bad))
			finish(p, bpf, true);
	}
	if (!p->open && now >= p->next_arm) {
		p->next_arm = now + p->interval_ns;
		arm(p, bpf, now);
	}
	now = sb_now_ns();
	if (p->open)
		return p->deadline > now ? (int)((p->deadline - now) / 1000000 + 1) : 0;
	return p->next_arm > now ? (int)((p->next_arm - now) / 1000000 + 1) : 0;
}

void sb_rprobe_thread_gone(struct sb_rprobe *p, struct sb_bpf *bpf, uint32_t tid)
{
	if (!p)
		return;
	if (p->open && p->tid == tid) {
		finish(p, NULL, false);   /* (inside a record's handler: no drain) */
		p->gone++;
	}
	for (uint32_t i = 0; i < SB_MEMOPS_SLOTS; i++)
		if (p->counters[i].fd >= 0 && p->counters[i].tid == tid)
			release_counter(p, bpf, i);
}

void sb_rprobe_stop(struct sb_rprobe *p, struct sb_bpf *bpf)
{
	if (!p)
		return;
	if (p->open)
		finish(p, bpf, false);
	for (uint32_t i = 0; i < SB_MEMOPS_SLOTS; i++)
		release_counter(p, bpf, i);
}

/* Every memory operation of the run, from the PEBS samplers' periods;
 * the test counter has none: the probes' own count stands in. */
static uint64_t accesses_of(const struct sb_rprobe *p)
{
	if (p->o.software)
		return sb_chip_reuse_samples(&p->sum.reuse);
	return p->loads * p->o.load_period + p->stores * p->o.store_period;
}

/* The median length of the probes' reuses, censored ones the longest
 * (their bucket's lowest length; 0 with most censored). */
static uint64_t median_of(const struct sb_chip_reuse *r)
{
	uint64_t n = sb_chip_reuse_samples(r), seen = 0;

	for (unsigned b = 0; b < SB_CHIP_REUSE_BUCKETS; b++)
		if ((seen += r->n[b]) * 2 >= n && n)
			return sb_chip_reuse_bucket_lo(b);
	return 0;
}

int sb_rprobe_store(const struct sb_rprobe *p, struct sb_profile *pr, uint64_t max_bytes,
		    uint32_t line, uint64_t near_bytes)
{
	struct sb_chip_rdx_sum sum = p->sum;
	struct sb_chip_row row;
	uint64_t samples = sb_chip_reuse_samples(&p->sum.reuse);
	const struct {
		const char *key;
		uint64_t v;
	} counts[] = {
		{ "chip_rdx_rate", 1000000000ull / p->interval_ns },
		{ "chip_rdx_window_ns", SB_RPROBE_WINDOW_NS },
		{ "chip_rdx_probes", p->probes },
		{ "chip_rdx_reuses", p->done },
		{ "chip_rdx_short", p->sum.dead_near },
		{ "chip_rdx_censored", p->censored },
		{ "chip_rdx_traps", p->traps },
		{ "chip_rdx_idle", p->idle },
		{ "chip_rdx_late", p->late },
		{ "chip_rdx_unread", p->unread },
		{ "chip_rdx_lost", p->lost },
		{ "chip_rdx_multiplexed", p->scaled },
		{ "chip_rdx_enospc", p->enospc },
		{ "chip_rdx_thread_gone", p->gone },
		{ "chip_rdx_arm_failed", p->failed },
		{ "chip_rdx_counter_failed", p->counter_failed },
		{ "chip_rdx_no_candidate", p->stale },
		{ "chip_rdx_window", p->sum.reuse.window },
		{ "chip_rdx_reuse_median", median_of(&p->sum.reuse) },
		{ "chip_rdx_loads_near", p->near },
		{ "chip_rdx_loads_far", p->far },
		{ "chip_rdx_loads_unknown", p->unknown },
		{ "chip_rdx_near_bytes", near_bytes },
		{ "chip_rdx_loads", p->loads },
		{ "chip_rdx_stores", p->stores },
	};

	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++)
		sb_profile_meta_set_u64(pr, counts[i].key, counts[i].v);
	sb_profile_meta_set(pr, "chip_rdx_counter", p->o.counter_name);
	sb_profile_meta_set(pr, "chip_rdx_accesses_from", p->o.software ?
			    "the probes themselves (test counter: no access count)" :
			    p->stores ? "PEBS loads and stores, samples x period" :
			    "PEBS loads only, samples x period: no store was sampled, so the "
			    "accesses (and bandwidths) are under-counted");
	if (!samples)
		return 0;
	sum.near_bytes = near_bytes;
	sb_chip_row_run(&row, SB_CHIP_MODE_SAMPLED_PMU, p->ntids, line, max_bytes);
	row.accesses = accesses_of(p);
	row.reuse_samples = samples;
	if (!row.accesses ||
	    sb_chip_rdx_depths(&sum, row.accesses, max_bytes, line, row.depth, &row.resolved))
		return 0;
	return sb_profile_chip_append(pr, &row);
}

/* A logged outcome into a sum, as sb_chip_rdx_trap/_close put it. */
static void replay(struct sb_chip_rdx_sum *s, const struct sb_chip_pout *o)
{
	switch (o->tag) {
	case OUT_REUSE:
		sb_chip_reuse_add(&s->reuse, o->value);
		break;
	case OUT_SHORT:
		sb_chip_reuse_add(&s->reuse, 1);
		s->dead_near++;
		break;
	default:
		sb_chip_reuse_censor(&s->reuse, o->value);
	}
}

int sb_rprobe_store_regions(const struct sb_rprobe *p, struct sb_profile *pr, uint64_t max_bytes,
			    uint32_t line, uint64_t near_bytes, const struct sb_chip_span *spans,
			    size_t nspans)
{
	const struct sb_chip_pout *v;
	struct sb_chip_groups g;
	double *share = NULL;
	size_t n;
	int ret;

	v = sb_chip_plog_kept(p->log, &n);
	if ((ret = sb_chip_groups_build(&g, p->log, pr, spans, nspans)))
		return ret;
	if (!(share = calloc(g.n + 1, sizeof(*share))) ||
	    (!p->o.software &&
	     sb_chip_groups_weights(&g, p->accesses, pr, spans, nspans, share)))
		ret = -ENOMEM;
	for (size_t k = 0; k < g.n && !ret; k++) {
		struct sb_chip_rdx_sum sum;
		struct sb_chip_row row;
		uint64_t samples;

		memset(&sum, 0, sizeof(sum));
		sum.near_bytes = near_bytes;
		for (size_t i = g.first[k]; i < g.first[k + 1]; i++)
			replay(&sum, &v[g.order[i]]);
		if ((samples = sb_chip_reuse_samples(&sum.reuse)) < SB_CHIP_REGION_MIN_PROBES)
			continue;
		sb_chip_row_run(&row, SB_CHIP_MODE_SAMPLED_PMU, g.threads[k], line, max_bytes);
		sb_chip_groups_row(&g, k, &row);
		row.reuse_samples = samples;
		/* its share of the sampled accesses (the test counter: its
		 * probes, as the whole run's) */
		row.accesses = p->o.software ? samples :
					       (uint64_t)((double)accesses_of(p) * share[k] + 0.5);
		if (!row.accesses ||
		    sb_chip_rdx_depths(&sum, row.accesses, max_bytes, line, row.depth, &row.resolved))
			continue;
		ret = sb_profile_chip_append(pr, &row);
	}
	sb_chip_groups_meta(&g, p->log, "chip_rdx", pr);
	if (p->unlogged)
		sb_profile_meta_set_u64(pr, "chip_rdx_unlogged", p->unlogged);
	free(share);
	sb_chip_groups_free(&g);
	return ret;
}
