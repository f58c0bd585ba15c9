// SPDX-License-Identifier: MIT
/* The Cache Pirate's thread and its residency check (pirate.h). */
#include "pirate.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define CHUNK_STEPS 2048   /* steps per cursor in one measured interval */

enum { CMD_OFF, CMD_ON, CMD_STOP };

struct sb_pirate {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t thread;
	int cmd, walking;
	uint64_t gen, warm_gen;     /* turns asked for, turns warmed */
	char *buf;
	size_t map_bytes, lines, per_cursor;
	void *cursor[SB_PIRATE_CURSORS];
	struct sb_pirate_opts o;
	struct sb_pirate_stats s;
	double time_ns, fetch_weighted;
	uint64_t fetch_loads;       /* loads of intervals with a known ratio */
};

double sb_pirate_fetch_ratio_latency(double load_ns, double hit_ns, double miss_ns)
{
	double f;

	if (!(hit_ns > 0) || !(miss_ns > hit_ns) || !(load_ns >= 0))
		return -1;
	f = (load_ns - hit_ns) / (miss_ns - hit_ns);
	return f < 0 ? 0 : f > 1 ? 1 : f;
}

int sb_pirate_interval_held(double f, int counted)
{
	return f >= 0 && f <= (counted ? SB_PIRATE_MAX_FETCH_COUNTED : SB_PIRATE_MAX_FETCH_LATENCY);
}

int sb_pirate_held(const struct sb_pirate_stats *s)
{
	return s->intervals > 0 && s->fetch_mean >= 0 &&
	       sb_pirate_interval_held(s->fetch_mean, s->counted);
}

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* One random cycle through every line (Sattolo), the cursors spaced
 * evenly along it. */
static int build(struct sb_pirate *p)
{
	uint32_t *perm = malloc(p->lines * sizeof(*perm));
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	size_t line = p->o.line;

	if (!perm)
		return -ENOMEM;
	for (size_t i = 0; i < p->lines; i++)
		perm[i] = (uint32_t)i;
	for (size_t i = p->lines - 1; i > 0; i--) {
		size_t j = (size_t)(xorshift(&seed) % i);
		uint32_t t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
	for (size_t i = 0; i < p->lines; i++)
		*(void **)(p->buf + (size_t)perm[i] * line) =
			p->buf + (size_t)perm[(i + 1) % p->lines] * line;
	for (int c = 0; c < SB_PIRATE_CURSORS; c++)
		p->cursor[c] = p->buf + (size_t)perm[(size_t)c * p->per_cursor] * line;
	free(perm);
	return 0;
}

/* steps dependent loads per cursor, the four chains interleaved. */
static void walk(struct sb_pirate *p, size_t steps)
{
	void *a = p->cursor[0], *b = p->cursor[1], *c = p->cursor[2], *d = p->cursor[3];

	for (size_t i = 0; i < steps; i++) {
		a = *(void *volatile *)a;
		b = *(void *volatile *)b;
		c = *(void *volatile *)c;
		d = *(void *volatile *)d;
	}
	p->cursor[0] = a;
	p->cursor[1] = b;
	p->cursor[2] = c;
	p->cursor[3] = d;
}

/* The last-level read misses of this thread, user space: -1 without a
 * PMU (a VM's, most clouds'). */
static int llc_miss_counter(void)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_HW_CACHE;
	a.config = PERF_COUNT_HW_CACHE_LL | (PERF_COUNT_HW_CACHE_OP_READ << 8) |
		   (PERF_COUNT_HW_CACHE_RESULT_MISS << 16);
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
}

static uint64_t counter_read(int fd)
{
	uint64_t v = 0;

	if (fd < 0 || read(fd, &v, sizeof(v)) != sizeof(v))
		return 0;
	return v;
}

/* Accounts one interval of `loads` loads in dt ns, `misses` counted. */
static void account(struct sb_pirate *p, uint64_t loads, double dt, uint64_t misses)
{
	double f = p->s.counted ? (double)misses / (double)loads
				: sb_pirate_fetch_ratio_latency(dt / (double)(loads / SB_PIRATE_CURSORS),
								p->o.hit_ns, p->o.miss_ns);

	p->s.intervals++;
	p->s.loads += loads;
	p->time_ns += dt;
	if (f >= 0) {
		p->s.intervals_held += (uint64_t)sb_pirate_interval_held(f, p->s.counted);
		p->fetch_weighted += f * (double)loads;
		p->fetch_loads += loads;
		if (f > p->s.fetch_max)
			p->s.fetch_max = f;
	}
}

static void *pirate_main(void *arg)
{
	struct sb_pirate *p = arg;
	size_t chunk = p->per_cursor < CHUNK_STEPS ? p->per_cursor : CHUNK_STEPS;
	int fd = -1;

	if (p->o.cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(p->o.cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			p->s.cpu = -1;
	}
	if (!p->o.no_pmu && (fd = llc_miss_counter()) >= 0)
		p->s.counted = 1;
	pthread_mutex_lock(&p->mu);
	for (;;) {
		uint64_t gen, m0, m1;
		double t0, t1;

		while (p->cmd == CMD_OFF) {
			p->walking = 0;
			pthread_cond_broadcast(&p->cv);
			pthread_cond_wait(&p->cv, &p->mu);
		}
		if (p->cmd == CMD_STOP)
			break;
		p->walking = 1;
		gen = p->gen;
		if (p->warm_gen != gen) {
			pthread_mutex_unlock(&p->mu);
			walk(p, p->per_cursor);   /* every line once */
			pthread_mutex_lock(&p->mu);
			p->warm_gen = gen;
			p->s.warmups++;
			pthread_cond_broadcast(&p->cv);
			continue;
		}
		pthread_mutex_unlock(&p->mu);
		m0 = counter_read(fd);
		t0 = now_ns();
		walk(p, chunk);
		t1 = now_ns();
		m1 = counter_read(fd);
		pthread_mutex_lock(&p->mu);
		/* an interval is the pirate's alone only if it stayed on */
		if (p->cmd == CMD_ON && p->gen == gen)
			account(p, chunk * SB_PIRATE_CURSORS, t1 - t0, m1 - m0);
	}
	p->walking = 0;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	if (fd >= 0)
		close(fd);
	return NULL;
}

int sb_pirate_alloc(struct sb_pirate **pp, const struct sb_pirate_opts *o, char *err,
		    size_t len)
{
	struct sb_pirate *p;
	sb_pirate_create_fn create = o->create ? o->create : pthread_create;
	int r;

	*pp = NULL;
	if (!(p = calloc(1, sizeof(*p)))) {
		snprintf(err, len, "out of memory");
		return -ENOMEM;
	}
	p->o = *o;
	if (!p->o.line)
		p->o.line = 64;
	p->lines = (size_t)(o->bytes / p->o.line);
	if (p->o.line < sizeof(void *) || p->lines < SB_PIRATE_CURSORS ||
	    p->lines > UINT32_MAX) {
		snprintf(err, len, "a pirate of %llu bytes: at least %d lines of %u bytes, "
			 "at most 2^32", (unsigned long long)o->bytes, SB_PIRATE_CURSORS,
			 p->o.line);
		free(p);
		return -EINVAL;
	}
	p->per_cursor = p->lines / SB_PIRATE_CURSORS;
	p->map_bytes = p->lines * p->o.line;
	p->buf = mmap(NULL, p->map_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		      -1, 0);
	if (p->buf == MAP_FAILED) {
		r = -errno;
		snprintf(err, len, "mmap %zu bytes: %s", p->map_bytes, strerror(errno));
		free(p);
		return r;
	}
	/* huge pages, as the calibration's chase: TLB misses would read as
	 * cache misses */
	madvise(p->buf, p->map_bytes, MADV_HUGEPAGE);
	if ((r = build(p))) {
		snprintf(err, len, "out of memory");
		goto fail;
	}
	p->s.bytes = p->map_bytes;
	p->s.cpu = o->cpu;
	p->s.fetch_mean = -1;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	p->cmd = CMD_OFF;
	if ((r = create(&p->thread, NULL, pirate_main, p))) {
		snprintf(err, len, "cannot start the pirate's thread: %s", strerror(r));
		r = -r;
		pthread_mutex_destroy(&p->mu);
		pthread_cond_destroy(&p->cv);
		goto fail;
	}
	*pp = p;
	return 0;
fail:
	munmap(p->buf, p->map_bytes);
	free(p);
	return r;
}

void sb_pirate_free(struct sb_pirate *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->cmd = CMD_STOP;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->thread, NULL);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->cv);
	munmap(p->buf, p->map_bytes);
	free(p);
}

void sb_pirate_resume(struct sb_pirate *p)
{
	uint64_t gen;

	pthread_mutex_lock(&p->mu);
	p->cmd = CMD_ON;
	gen = ++p->gen;
	pthread_cond_broadcast(&p->cv);
	while (p->warm_gen < gen && p->cmd == CMD_ON)
		pthread_cond_wait(&p->cv, &p->mu);
	pthread_mutex_unlock(&p->mu);
}

void sb_pirate_pause(struct sb_pirate *p)
{
	pthread_mutex_lock(&p->mu);
	p->cmd = CMD_OFF;
	pthread_cond_broadcast(&p->cv);
	while (p->walking)
		pthread_cond_wait(&p->cv, &p->mu);
	pthread_mutex_unlock(&p->mu);
}

void sb_pirate_stats(struct sb_pirate *p, struct sb_pirate_stats *s)
{
	pthread_mutex_lock(&p->mu);
	*s = p->s;
	s->load_ns = p->s.loads ? p->time_ns / (double)(p->s.loads / SB_PIRATE_CURSORS) : 0;
	s->fetch_mean = p->fetch_loads ? p->fetch_weighted / (double)p->fetch_loads : -1;
	pthread_mutex_unlock(&p->mu);
}
