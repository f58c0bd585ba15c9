// SPDX-License-Identifier: MIT
/* Footprint probes (record_footprint.h). */
#include "record_footprint.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include "chip/chip.h"
#include "chip/chip_probes.h"
#include "clock.h"
#include "profile/profile.h"
#include "record_bpf.h"
#include "record_watch.h"

_Static_assert(SB_CHIP_FP_GRANULE == SB_WATCH_GRANULE, "a probe watches one granule");
#define MAX_RANGES 4096
/* The mappings are read again this often: an array malloc maps (glibc:
 * from 128 KB) is in no probe's universe until then, and a phase shorter
 * than this saw none of its own (0 bytes at every window, once in CI).
 * A read costs ~160 us here (8 writable mappings): 20 a second are 0.3%
 * of the recorder's CPU. */
#define MAPS_EVERY_NS 50000000ull
#define RUNNING_FRESH_NS 100000000ull  /* a sample older than this: idle */

struct range {
	uint64_t lo, hi;
};

/* Probes by window.  The windows as they were: a long one ends at the
 * recorder's next look, later than asked; its probes' mean length is its
 * t. */
struct fp_sum {
	uint64_t probes[SB_CHIP_FP_WINDOWS], touched[SB_CHIP_FP_WINDOWS];
	uint64_t watched_ns[SB_CHIP_FP_WINDOWS], watched[SB_CHIP_FP_WINDOWS];
	double universe_sum;
};

/* A probe's outcome in the log (chip_probes.h): tag = window | touched
 * << 8, value = its length on a CPU (0: answered by an untouched page,
 * not watched), weight = the universe it was drawn from. */
#define TAG_TOUCHED 0x100u

struct sb_fprobe {
	uint64_t interval_ns, next_arm;
	/* the thread last seen running */
	int pid;
	uint32_t tid;
	uint64_t seen_ts;
	/* the process's writable memory */
	int maps_pid, pagemap_fd;
	uint64_t maps_at, total;
	struct range ranges[MAX_RANGES];
	size_t nranges;
	/* the open probe */
	int fds[SB_WATCH_WORDS], nfds;
	unsigned window;
	uint64_t start, deadline, armed_total;
	uint64_t arms, rng;
	/* the results: the whole run's, and each probe's for its section's */
	struct fp_sum all;
	struct sb_chip_plog *log;
	uint64_t enospc, gone, failed, no_thread, no_memory, untouched_pages, idle;
	uint64_t unlogged;   /* outcomes the log could not keep: no memory */
	/* the probed thread's on-CPU time at the window's start (BPF's) */
	uint64_t cpu0;
	bool have_cpu0;
	struct sb_bpf *bpf;
	uint32_t tids[256];
	unsigned ntids;
};

struct sb_fprobe *sb_fprobe_alloc(unsigned rate)
{
	struct sb_fprobe *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->interval_ns = 1000000000ull / (rate ? rate : 1);
	f->rng = 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
	if (!(f->log = sb_chip_plog_alloc(0, f->rng))) {
		free(f);
		return NULL;
	}
	/* a 0.1 ms window must not sleep the default 50 us of slack more */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	f->maps_pid = -1;
	f->pagemap_fd = -1;
	return f;
}

void sb_fprobe_free(struct sb_fprobe *f)
{
	if (f) {
		sb_fprobe_stop(f);
		if (f->pagemap_fd >= 0)
			close(f->pagemap_fd);
		sb_chip_plog_free(f->log);
	}
	free(f);
}

void sb_fprobe_running(struct sb_fprobe *f, int pid, uint32_t tid, uint64_t ts)
{
	f->pid = pid;
	f->tid = tid;
	f->seen_ts = ts;
}

static uint64_t next_rand(struct sb_fprobe *f)
{
	f->rng ^= f->rng << 13;
	f->rng ^= f->rng >> 7;
	f->rng ^= f->rng << 17;
	return f->rng;
}

/* The writable private mappings of pid: its heap, data, stacks, anonymous
 * memory; not the vDSO's. */
static void read_ranges(struct sb_fprobe *f, int pid, uint64_t now)
{
	char path[64], line[512], perm[8];
	unsigned long long lo, hi;
	FILE *m;

	if (f->maps_pid != pid && f->pagemap_fd >= 0) {
		close(f->pagemap_fd);
		f->pagemap_fd = -1;
	}
	if (f->pagemap_fd < 0) {
		snprintf(path, sizeof(path), "/proc/%d/pagemap", pid);
		f->pagemap_fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	f->maps_pid = pid;
	f->maps_at = now;
	f->nranges = 0;
	f->total = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	if (!(m = fopen(path, "re")))
		return;
	while (fgets(line, sizeof(line), m) && f->nranges < MAX_RANGES) {
		if (sscanf(line, "%llx-%llx %7s", &lo, &hi, perm) != 3 || strcmp(perm, "rw-p") ||
		    hi <= lo || strstr(line, "[vvar") || strstr(line, "[vsyscall]"))
			continue;
		f->ranges[f->nranges].lo = lo;
		f->ranges[f->nranges].hi = hi;
		f->total += hi - lo;
		f->nranges++;
	}
	fclose(m);
}

/* A granule drawn uniformly from the ranges' bytes. */
static uint64_t draw(struct sb_fprobe *f)
{
	uint64_t off = (next_rand(f) % f->total) & ~(uint64_t)(SB_CHIP_FP_GRANULE - 1);

	for (size_t i = 0; i < f->nranges; i++) {
		uint64_t len = f->ranges[i].hi - f->ranges[i].lo;

		if (off < len)
			return f->ranges[i].lo + off;
		off -= len;
	}
	return 0;
}

static void close_all(struct sb_fprobe *f)
{
	for (int i = 0; i < f->nfds; i++)
		close(f->fds[i]);
	f->nfds = 0;
}

static void seen_thread(struct sb_fprobe *f, uint32_t tid)
{
	for (unsigned i = 0; i < f->ntids; i++)
		if (f->tids[i] == tid)
			return;
	if (f->ntids < sizeof(f->tids) / sizeof(f->tids[0]))
		f->tids[f->ntids++] = tid;
}

/*
 * Whether the page of addr was never touched (not present, not swapped):
 * its granule is not touched in the window either, which the probe
 * records without arming (most of a thread stack's 8 MB, say).  A page
 * touched for the first time inside the window is missed: rare, and a
 * slight undercount.  Unknown (no pagemap): false.
 */
static bool never_touched(struct sb_fprobe *f, uint64_t addr)
{
	uint64_t e;
	long page = sysconf(_SC_PAGESIZE);

	if (f->pagemap_fd < 0 || page <= 0 ||
	    pread(f->pagemap_fd, &e, sizeof(e), (off_t)(addr / (uint64_t)page * 8)) != sizeof(e))
		return false;
	return !(e >> 62 & 3);   /* bit 63 present, 62 swapped */
}

static void sum_add(struct fp_sum *s, const struct sb_chip_pout *o)
{
	unsigned w = (o->tag & 0xff) % SB_CHIP_FP_WINDOWS;

	s->probes[w]++;
	s->touched[w] += !!(o->tag & TAG_TOUCHED);
	s->universe_sum += o->weight;
	if (o->value) {
		s->watched_ns[w] += o->value;
		s->watched[w]++;
	}
}

/* A probe's outcome: into the whole run's sums and the log. */
static void taken(struct sb_fprobe *f, const struct sb_chip_pout *o)
{
	sum_add(&f->all, o);
	if (sb_chip_plog_add(f->log, o))
		f->unlogged++;
}

static void arm(struct sb_fprobe *f, uint64_t now)
{
	uint64_t addr;
	unsigned w;
	int ret;

	if (!f->tid || now - f->seen_ts > RUNNING_FRESH_NS) {
		f->no_thread++;   /* nothing ran lately */
		return;
	}
	if (f->pid != f->maps_pid || now - f->maps_at > MAPS_EVERY_NS)
		read_ranges(f, f->pid, now);
	/* a granule on a page never touched is a probe's answer at no cost:
	 * drawn again, a few times */
	for (int tries = 0;; tries++) {
		if (!f->total || !(addr = draw(f))) {
			f->no_memory++;
			return;
		}
		if (tries == 16 || !never_touched(f, addr))
			break;
		w = (unsigned)(f->arms++ % SB_CHIP_FP_WINDOWS);
		/* its window as asked, for its section's */
		taken(f, &(struct sb_chip_pout){ .start = now, .tid = f->tid, .tag = w,
						 .end = now + sb_chip_fp_window_ns[w],
						 .weight = (double)f->total });
		f->untouched_pages++;
	}
	if ((ret = sb_watch_open_granule(f->tid, addr, f->fds))) {
		f->enospc += ret == -ENOSPC;
		f->gone += ret == -ESRCH;
		f->failed += ret != -ENOSPC && ret != -ESRCH;
		return;
	}
	f->nfds = SB_WATCH_WORDS;
	/* all four opened (~25 us each), then enabled together, each for one
	 * trap: the window starts once they all watch */
	for (int i = 0; i < SB_WATCH_WORDS; i++)
		if (ioctl(f->fds[i], PERF_EVENT_IOC_REFRESH, 1)) {
			f->failed++;
			close_all(f);
			return;
		}
	f->start = sb_now_ns();
	f->have_cpu0 = f->bpf && !sb_bpf_thread_oncpu(f->bpf, f->tid, f->start, &f->cpu0);
	f->window = (unsigned)(f->arms++ % SB_CHIP_FP_WINDOWS);
	f->deadline = f->start + sb_chip_fp_window_ns[f->window];
	f->armed_total = f->total;
	seen_thread(f, f->tid);
}

static void finish(struct sb_fprobe *f, uint64_t now)
{
	uint64_t len = now - f->start, cpu;
	bool touched = false;

	/* the window as it was, taken before the counts (a trap after it is
	 * not in it): the probed thread's own time on a CPU in it, which
	 * BPF follows at every switch (the kernel's per-thread CPU clocks
	 * are closed to other processes, and schedstat is tick-coarse),
	 * else wall time */
	if (f->have_cpu0 && !sb_bpf_thread_oncpu(f->bpf, f->tid, now, &cpu) && cpu >= f->cpu0) {
		if ((cpu - f->cpu0) * 2 < len) {
			/* off a CPU most of the window (preempted, blocked): its
			 * class would mix lengths; dropped, counted */
			close_all(f);
			f->idle++;
			return;
		}
		len = cpu - f->cpu0;
	}
	for (int i = 0; i < f->nfds; i++) {
		uint64_t count = 0;

		if (read(f->fds[i], &count, sizeof(count)) == sizeof(count) && count)
			touched = true;
	}
	close_all(f);
	taken(f, &(struct sb_chip_pout){ .start = f->start, .end = now, .tid = f->tid,
					 .tag = f->window | (touched ? TAG_TOUCHED : 0),
					 .value = len ? len : 1,
					 .weight = (double)f->armed_total });
}

/* Short windows end here: the recorder's loop looks every millisecond
 * or more, so a window of 0.1 ms would be ten times longer; it sleeps
 * instead (at most 2 ms, within the probe budget).  Not spinning: on
 * this VM's two vCPUs a spinning recorder took the target's host CPU,
 * which then touched nothing in 0.5 ms windows. */
#define WAIT_HERE_NS 2000000ull

int sb_fprobe_tick(struct sb_fprobe *f, struct sb_bpf *bpf, uint64_t now)
{
	if (!f)
		return -1;
	f->bpf = bpf;
	if (f->nfds && now >= f->deadline)
		finish(f, sb_now_ns());
	if (!f->nfds && now >= f->next_arm) {
		f->next_arm = now + f->interval_ns;
		arm(f, now);
		if (f->nfds && sb_chip_fp_window_ns[f->window] <= WAIT_HERE_NS) {
			struct timespec ts = { (time_t)(f->deadline / 1000000000ull),
					       (long)(f->deadline % 1000000000ull) };

			while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
				;
			finish(f, sb_now_ns());
		}
		now = sb_now_ns();
	}
	if (f->nfds)
		return (int)((f->deadline - now) / 1000000 + 1);
	return (int)((f->next_arm - now) / 1000000 + 1);
}

/* Window w as it was: its probes' mean length, or as asked when none
 * was watched (probes answered by untouched pages alone). */
static uint64_t window_ns(const struct fp_sum *s, unsigned w)
{
	return s->watched[w] ? s->watched_ns[w] / s->watched[w] : sb_chip_fp_window_ns[w];
}

/* The row's windows, each at its mean length, ascending
 * (sb_chip_fp_ascend). */
static void row_windows(const struct fp_sum *s, struct sb_chip_row *row)
{
	struct sb_chip_fp f;

	_Static_assert(SB_CHIP_FP_WINDOWS == SB_CHIP_ROW_WINDOWS, "a row has every window");
	sb_chip_fp_ascend(s->probes, s->touched, s->watched_ns, s->watched, &f);
	memcpy(row->fp_window_ns, f.window_ns, sizeof(row->fp_window_ns));
	memcpy(row->fp_probes, f.probes, sizeof(row->fp_probes));
	memcpy(row->fp_touched, f.touched, sizeof(row->fp_touched));
}

static uint64_t sum_probes(const struct fp_sum *s)
{
	uint64_t n = 0;

	for (unsigned w = 0; w < SB_CHIP_FP_WINDOWS; w++)
		n += s->probes[w];
	return n;
}

/* A row of the sums (kind and section the caller's); false without
 * probes. */
static bool sum_row(const struct fp_sum *s, uint32_t threads, uint32_t line,
		    uint64_t max_bytes, struct sb_chip_row *row)
{
	uint64_t probes = sum_probes(s);

	if (!probes || !(s->universe_sum > 0))
		return false;
	sb_chip_row_run(row, SB_CHIP_MODE_SAMPLED, threads, line, max_bytes);
	row_windows(s, row);
	row->fp_universe = (uint64_t)(s->universe_sum / (double)probes);
	return true;
}

void sb_fprobe_stop(struct sb_fprobe *f)
{
	if (f)
		close_all(f);
}

int sb_fprobe_store(const struct sb_fprobe *f, struct sb_profile *p, uint64_t max_bytes,
		    uint32_t line)
{
	const struct fp_sum *s = &f->all;
	uint64_t probes = sum_probes(s);
	struct sb_chip_row row;

	sb_profile_meta_set_u64(p, "chip_fp_probes", probes);
	sb_profile_meta_set_u64(p, "chip_fp_enospc", f->enospc);
	sb_profile_meta_set_u64(p, "chip_fp_thread_gone", f->gone);
	sb_profile_meta_set_u64(p, "chip_fp_arm_failed", f->failed);
	sb_profile_meta_set_u64(p, "chip_fp_no_running_thread", f->no_thread);
	sb_profile_meta_set_u64(p, "chip_fp_thread_off_cpu", f->idle);
	sb_profile_meta_set_u64(p, "chip_fp_rate", 1000000000ull / f->interval_ns);
	sb_profile_meta_set_u64(p, "chip_fp_untouched_pages", f->untouched_pages);
	if (!sum_row(s, f->ntids, line, max_bytes, &row))
		return 0;
	sb_profile_meta_set_u64(p, "chip_fp_universe_bytes", row.fp_universe);
	for (unsigned w = 0; w < SB_CHIP_FP_WINDOWS; w++) {
		char key[48], v[48];

		snprintf(key, sizeof(key), "chip_fp_%u_touched_of", w);
		snprintf(v, sizeof(v), "%llu/%llu in %llu ns", (unsigned long long)s->touched[w],
			 (unsigned long long)s->probes[w],
			 (unsigned long long)(s->watched[w] ? window_ns(s, w) : 0));
		sb_profile_meta_set(p, key, v);
	}
	return sb_profile_chip_append(p, &row);
}

int sb_fprobe_store_regions(const struct sb_fprobe *f, struct sb_profile *p, uint64_t max_bytes,
			    uint32_t line, const struct sb_chip_span *spans, size_t nspans)
{
	const struct sb_chip_pout *v;
	struct sb_chip_groups g;
	size_t n;
	int ret;

	v = sb_chip_plog_kept(f->log, &n);
	if ((ret = sb_chip_groups_build(&g, f->log, p, spans, nspans)))
		return ret;
	for (size_t k = 0; k < g.n && !ret; k++) {
		struct fp_sum s;
		struct sb_chip_row row;

		memset(&s, 0, sizeof(s));
		for (size_t i = g.first[k]; i < g.first[k + 1]; i++)
			sum_add(&s, &v[g.order[i]]);
		if (sum_probes(&s) < SB_CHIP_REGION_MIN_PROBES ||
		    !sum_row(&s, g.threads[k], line, max_bytes, &row))
			continue;
		sb_chip_groups_row(&g, k, &row);
		ret = sb_profile_chip_append(p, &row);
	}
	sb_chip_groups_meta(&g, f->log, "chip_fp", p);
	if (f->unlogged)
		sb_profile_meta_set_u64(p, "chip_fp_unlogged", f->unlogged);
	sb_chip_groups_free(&g);
	return ret;
}
