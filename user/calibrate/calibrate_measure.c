// SPDX-License-Identifier: MIT
/* The measurements of `scalebpf calibrate` (calibrate.h). */
#include "calibrate.h"

#include <errno.h>
#include <sched.h>
#include <hwloc.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "chip/chip.h"

#define LINE_DEFAULT 64
#define BW_BYTES (256ull << 20)

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* The last cache level hwloc knows: its size, line and CPUs. */
static void nominal(struct sb_calibration *c)
{
	static const hwloc_obj_type_t levels[] = { HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L2CACHE,
						   HWLOC_OBJ_L1CACHE };
	hwloc_topology_t topo;

	c->line = LINE_DEFAULT;
	if (hwloc_topology_init(&topo))
		return;
	if (!hwloc_topology_load(topo))
		for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]) && !c->llc_nominal; i++) {
			hwloc_obj_t o = hwloc_get_next_obj_by_type(topo, levels[i], NULL);

			if (!o || !o->attr->cache.size)
				continue;
			c->llc_nominal = o->attr->cache.size;
			c->llc_shared_by = (unsigned)hwloc_bitmap_weight(o->cpuset);
			if (o->attr->cache.linesize)
				c->line = o->attr->cache.linesize;
		}
	hwloc_topology_destroy(topo);
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* A random cycle through the first `lines` lines of buf (Sattolo). */
static void build_chase(char *buf, size_t lines, size_t line, uint32_t *perm, uint64_t *seed)
{
	for (size_t i = 0; i < lines; i++)
		perm[i] = (uint32_t)i;
	for (size_t i = lines - 1; i > 0; i--) {
		size_t j = (size_t)(rnd(seed) % i);
		uint32_t t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
	for (size_t i = 0; i < lines; i++)
		*(void **)(buf + (size_t)perm[i] * line) = buf + (size_t)perm[(i + 1) % lines] * line;
}

/* ns per dependent load: warm up, then the best of three runs. */
static double chase(char *buf, size_t lines, uint64_t loads)
{
	void *volatile sink;
	void **p = (void **)buf;
	double best = 0;
	uint64_t warm = lines < 1000000 ? lines : 1000000;

	for (uint64_t i = 0; i < warm; i++)
		p = *p;
	for (int rep = 0; rep < 3; rep++) {
		double t0 = now_ns(), t;

		for (uint64_t i = 0; i < loads; i += 4) {
			p = *p;
			p = *p;
			p = *p;
			p = *p;
		}
		t = (now_ns() - t0) / (double)loads;
		best = !rep || t < best ? t : best;
	}
	sink = p;
	(void)sink;
	return best;
}

struct bw_arg {
	const uint64_t *a;
	size_t n;
	const int *go;             /* all start together: 1 once all exist */
	double ns;
	uint64_t sum;
};

static void *bw_thread(void *v)
{
	struct bw_arg *b = v;
	uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
	double t0;

	while (!__atomic_load_n(b->go, __ATOMIC_ACQUIRE))
		;
	t0 = now_ns();
	for (int rep = 0; rep < 2; rep++)
		for (size_t i = 0; i + 4 <= b->n; i += 4) {
			s0 += b->a[i];
			s1 += b->a[i + 1];
			s2 += b->a[i + 2];
			s3 += b->a[i + 3];
		}
	b->ns = now_ns() - t0;
	b->sum = s0 + s1 + s2 + s3;
	return NULL;
}

/* Read bytes/s of `threads` threads, each summing its own part of buf
 * twice, timed by the slowest; best of three. */
static double bandwidth(const uint64_t *buf, size_t bytes, unsigned threads)
{
	struct bw_arg arg[256];
	pthread_t tid[256];
	double best = 0;
	int go;

	if (threads > 256)
		threads = 256;
	for (int rep = 0; rep < 3; rep++) {
		double slow = 0;
		unsigned started = 0;

		go = 0;
		for (unsigned t = 0; t < threads; t++) {
			arg[t] = (struct bw_arg){ .a = buf + bytes / 8 / threads * t,
						  .n = bytes / 8 / threads, .go = &go };
			if (pthread_create(&tid[t], NULL, bw_thread, &arg[t]))
				break;
			started++;
		}
		__atomic_store_n(&go, 1, __ATOMIC_RELEASE);   /* (also when one failed) */
		for (unsigned t = 0; t < started; t++) {
			pthread_join(tid[t], NULL);
			slow = arg[t].ns > slow ? arg[t].ns : slow;
		}
		if (started == threads && slow > 0) {
			double bw = 2.0 * (double)(bytes / 8 / threads * threads * 8) / slow * 1e9;

			best = bw > best ? bw : best;
		}
	}
	return best;
}

/* ---- do two CPUs share the effective cache? ---- */

struct pin_arg {
	char *buf;
	size_t lines;
	uint64_t loads;
	int cpu;
	int *stop;             /* the companion runs until it is set */
	double ns;             /* the measurer's ns per load */
};

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *companion(void *v)
{
	struct pin_arg *a = v;
	void **p = (void **)a->buf;
	void *volatile sink;

	pin(a->cpu);
	while (!__atomic_load_n(a->stop, __ATOMIC_RELAXED))
		for (int i = 0; i < 4096; i++)
			p = *p;
	sink = p;
	(void)sink;
	return NULL;
}

static void *measurer(void *v)
{
	struct pin_arg *a = v;

	pin(a->cpu);
	a->ns = chase(a->buf, a->lines, a->loads);
	return NULL;
}

/* ns per load on CPU c0 chasing a of `lines`, alone (with = NULL) or while
 * CPU c1 chases `with`; 0 when threads cannot be started. */
static double chase_on(char *a, char *with, size_t lines, uint64_t loads, int c0, int c1)
{
	struct pin_arg m = { .buf = a, .lines = lines, .loads = loads, .cpu = c0 };
	int stop = 0;
	struct pin_arg o = { .buf = with, .lines = lines, .cpu = c1, .stop = &stop };
	pthread_t tm, to;

	m.stop = &stop;
	if (with && pthread_create(&to, NULL, companion, &o))
		return 0;
	if (pthread_create(&tm, NULL, measurer, &m)) {
		m.ns = 0;
	} else {
		pthread_join(tm, NULL);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	if (with)
		pthread_join(to, NULL);
	return m.ns;
}

/* Two CPUs' slowdown of each other chasing `bytes` each (both over one),
 * best of the repetitions chase() takes; 0 if not measured. */
static double pair_slowdown(struct sb_calibration *c, char *buf, uint64_t bytes, uint32_t *perm,
			    uint64_t *seed, uint64_t loads, int c0, int c1)
{
	size_t lines = (size_t)(bytes / c->line);
	char *other = buf + bytes;
	double alone, both;

	build_chase(buf, lines, c->line, perm, seed);
	build_chase(other, lines, c->line, perm, seed);
	alone = chase_on(buf, NULL, lines, loads, c0, c1);
	both = chase_on(buf, other, lines, loads, c0, c1);
	return alone > 0 && both > 0 ? both / alone : 0;
}

/* The first two CPUs this process may run on, -1 if fewer. */
static int two_cpus(int *c0, int *c1)
{
	cpu_set_t set;
	int n = 0;

	if (sched_getaffinity(0, sizeof(set), &set))
		return -1;
	for (int i = 0; i < CPU_SETSIZE && n < 2; i++)
		if (CPU_ISSET(i, &set))
			*(n++ ? c1 : c0) = i;
	return n == 2 ? 0 : -1;
}

static void shared_test(struct sb_calibration *c, char *buf, uint64_t max, uint32_t *perm,
			uint64_t *seed, uint64_t loads)
{
	uint64_t small = 64 << 10;
	int c0, c1;

	if (!c->llc_effective || 2 * c->llc_effective > max || two_cpus(&c0, &c1))
		return;
	c->private_slowdown = pair_slowdown(c, buf, small, perm, seed, loads, c0, c1);
	c->shared_slowdown = pair_slowdown(c, buf, c->llc_effective, perm, seed, loads, c0, c1);
	if (!(c->private_slowdown > 0) || !(c->shared_slowdown > 0))
		return;
	/* Two working sets of the effective size in one cache overflow it:
	 * its hits become DRAM loads, dram / hit times slower.  Shared when
	 * the pair gets at least halfway there beyond what private sizes
	 * show; a little more (this VM: 1.8x where a thrash would be 13x) is
	 * contention for something else (a host's busy cores), not capacity. */
	{
		double hit = sb_calibrate_llc_latency(c);
		double full = hit > 0 ? c->dram_latency_ns / hit : 0;

		c->llc_effective_shared_by =
			full > 1 && c->shared_slowdown / c->private_slowdown >= 1 + (full - 1) / 2 ?
			2 : 1;
	}
}

int sb_calibrate_run(struct sb_calibration *c, const struct sb_calibrate_opts *o,
		     sb_calibrate_progress_fn progress, void *ctx, char *err, size_t len)
{
	uint64_t max, seed = 0x9e3779b97f4a7c15ull, loads = o->quick ? 200000 : 1000000;
	size_t maxlines;
	uint32_t *perm = NULL;
	char *buf = NULL, what[96];
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	memset(c, 0, sizeof(*c));
	sb_calibrate_identity(c->identity, sizeof(c->identity));
	c->when = time(NULL);
	nominal(c);
	max = o->max_bytes ? o->max_bytes : 256ull << 20;
	if (!o->max_bytes && c->llc_nominal * 8 > max)
		max = c->llc_nominal * 8;
	if (max < (1ull << 20)) {
		snprintf(err, len, "the largest working set must be 1 MB at least");
		return -EINVAL;
	}
	maxlines = max / c->line;
	if (maxlines > UINT32_MAX) {
		snprintf(err, len, "the largest working set is too large to chase");
		return -EINVAL;
	}
	buf = mmap(NULL, max, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	perm = malloc(maxlines * sizeof(*perm));
	if (buf == MAP_FAILED || !perm) {
		if (buf != MAP_FAILED)
			munmap(buf, max);
		free(perm);
		snprintf(err, len, "cannot allocate %llu MB to measure with",
			 (unsigned long long)(max >> 20));
		return -ENOMEM;
	}
	/* huge pages keep TLB misses out of the large sizes' latency */
	madvise(buf, max, MADV_HUGEPAGE);
	memset(buf, 1, max);
	/* 16 KB up: steps of sqrt(2) to 32 MB (capacities fall between
	 * powers of two), then doubling; whole 4 KB pages */
	for (unsigned k = 0; c->n < SB_CAL_MAX_SIZES; k++) {
		uint64_t b = k < 22 ? (uint64_t)(16384.0 * pow(2, k / 2.0)) & ~4095ull
				    : (32ull << 20) << (k - 22);
		size_t lines = (size_t)(b / c->line);

		if (b > max)
			break;
		if (progress) {
			snprintf(what, sizeof(what), "latency, working set %llu KB",
				 (unsigned long long)(b >> 10));
			progress(what, ctx);
		}
		build_chase(buf, lines, c->line, perm, &seed);
		c->ws[c->n] = b;
		c->latency_ns[c->n++] = chase(buf, lines, loads);
	}
	c->dram_latency_ns = c->latency_ns[c->n - 1];
	c->llc_effective = sb_chip_effective_capacity(c->ws, c->latency_ns, c->n);
	if (progress)
		progress("does a second CPU share it", ctx);
	shared_test(c, buf, max, perm, &seed, loads);
	c->threads_all = cpus > 256 ? 256 : cpus > 0 ? (unsigned)cpus : 1;
	if (progress)
		progress("read bandwidth, one thread", ctx);
	c->bw_one = bandwidth((const uint64_t *)buf, max < BW_BYTES ? max : BW_BYTES, 1);
	if (progress) {
		snprintf(what, sizeof(what), "read bandwidth, %u threads", c->threads_all);
		progress(what, ctx);
	}
	c->bw_all = bandwidth((const uint64_t *)buf, max < BW_BYTES ? max : BW_BYTES,
			      c->threads_all);
	munmap(buf, max);
	free(perm);
	if (!(c->bw_one > 0) || !(c->bw_all > 0)) {
		snprintf(err, len, "the bandwidth measurement could not start its threads");
		return -EAGAIN;
	}
	return 0;
}
