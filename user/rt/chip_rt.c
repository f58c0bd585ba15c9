// SPDX-License-Identifier: MIT
/*
 * `scalebpf cc --chip`: each thread's loads and stores go through its own
 * cache hit profile (analysis/chip/chip.h, compiled into this runtime),
 * and at every segment end the segment's counters go to
 * scalebpf_chip_batch(), which `scalebpf record` probes; the recorder adds
 * them to the section instance the segment belongs to, as it does exact
 * block counts.  The CacheSets carry over from segment to segment, as a
 * cache's content does.  The counters run from the thread's start (a
 * batch is their growth since the last), and their address goes to
 * scalebpf_chip_thread(), where `record --region FUNC` learns it to read
 * them at FUNC's entry and return.
 *
 * The profile's shape, read once:
 *   SCALEBPF_CHIP_BYTES  the largest cache mapped (default: twice the
 *                        effective last-level cache of `scalebpf
 *                        calibrate`, else twice the last level sysfs
 *                        names, else 64 MB)
 *   SCALEBPF_CHIP_RATE   SHARDS' sampling rate in (0, 1] (default 1)
 * A value that does not parse is ignored, with one line on stderr.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chip/chip.h"
#include "exact_rt.h"
#include "sbpf_events.h"

struct chip_thread {
	struct sb_chip *c;
	uint64_t syncs;
	struct sb_chip_counts sent;   /* sb_chip_k at the last batch */
};

_Static_assert(SB_CHIP_NDEPTH == SB_CHIP_COUNTS, "a batch holds every counter");

static __thread struct chip_thread *ct __attribute__((tls_model("initial-exec")));
static __thread int ct_failed, ct_opening;
static struct sb_chip_opts opts;
static pthread_once_t opts_once = PTHREAD_ONCE_INIT;

/* The uprobe of `scalebpf record` sits here and copies *b. */
__attribute__((noinline, used, visibility("default")))
void scalebpf_chip_batch(const struct sb_chip_batch *b)
{
	__asm__ volatile("" : : "r"(b) : "memory");
}

/* Where the calling thread's counters are (NULL: no longer): `scalebpf
 * record --region FUNC` keeps it, to read them when FUNC is entered and
 * returns, so a function's share needs no hook in it. */
__attribute__((noinline, used, visibility("default")))
void scalebpf_chip_thread(const struct sb_chip_counts *k)
{
	__asm__ volatile("" : : "r"(k) : "memory");
}

static unsigned long long read_size(const char *path)
{
	char buf[64], *end;
	unsigned long long v;
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return 0;
	}
	fclose(f);
	v = strtoull(buf, &end, 10);
	if (*end == 'K')
		v <<= 10;
	else if (*end == 'M')
		v <<= 20;
	return v;
}

/* The effective LLC of the calibration file, 0 if none. */
static unsigned long long calibrated(void)
{
	const char *v = getenv("SCALEBPF_CALIBRATION"), *home = getenv("HOME");
	const char *xdg = getenv("XDG_CACHE_HOME");
	char path[4096], line[256];
	unsigned long long eff = 0;
	FILE *f;

	if (v && *v)
		snprintf(path, sizeof(path), "%s", v);
	else if (xdg && *xdg)
		snprintf(path, sizeof(path), "%s/scalebpf/calibration", xdg);
	else if (home && *home)
		snprintf(path, sizeof(path), "%s/.cache/scalebpf/calibration", home);
	else
		return 0;
	if (!(f = fopen(path, "r")))
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "llc_effective ", 14) && line[14] != '-' &&
		    sscanf(line, "llc_effective %llu", &eff) == 1)
			break;
	fclose(f);
	/* (a file of another machine sizes the profile too: the recorder,
	 * which checks the identity, then says the machine is uncalibrated) */
	return eff < (1ull << 38) ? eff : 0;
}

static void read_opts(void)
{
	const char *b = getenv("SCALEBPF_CHIP_BYTES"), *r = getenv("SCALEBPF_CHIP_RATE");
	unsigned long long llc = 0, line;
	char path[128], *end;

	opts.line = 64;
	opts.rate = 1;
	line = read_size("/sys/devices/system/cpu/cpu0/cache/index0/coherency_line_size");
	if (line >= 16 && line <= 4096 && !(line & (line - 1)))
		opts.line = (uint32_t)line;
	if ((llc = calibrated()) == 0)
		for (int i = 0; i < 8; i++) {   /* the last level: the largest */
			unsigned long long s;

			snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/size",
				 i);
			if ((s = read_size(path)) > llc)
				llc = s;
		}
	opts.max_bytes = llc && llc < (1ull << 37) ? 2 * llc : 64ull << 20;
	if (b && *b) {
		unsigned long long v = strtoull(b, &end, 10);

		if (!*end && *b != '-' && v >= 16ull * opts.line && v <= (1ull << 38))
			opts.max_bytes = v;
		else
			fprintf(stderr, "scalebpf chip: SCALEBPF_CHIP_BYTES=%s ignored (bytes, %u "
				"to 2^38)\n", b, 16 * opts.line);
	}
	if (r && *r) {
		double v = strtod(r, &end);

		if (!*end && v > 0 && v <= 1)
			opts.rate = v;
		else
			fprintf(stderr, "scalebpf chip: SCALEBPF_CHIP_RATE=%s ignored (in (0, 1])\n",
				r);
	}
}

/* The thread's profile after its end (sb_chip_thread_done, or the key's
 * destructor): accesses then (TLS destructors, cleanup handlers) are not
 * profiled, and no profile is made again. */
#define CLOSED ((struct chip_thread *)1)

static pthread_key_t thread_key;
static int key_ok;

/* A thread `scalebpf cc`'s wrappers did not see end (made by a library's
 * pthread_create, e.g. std::thread): its last segment flushed, its
 * profile freed, when it exits. */
static void thread_gone(void *v)
{
	struct chip_thread *t = v;

	if (ct == t) {
		sb_chip_sync(0);
		ct = CLOSED;
		sb_chip_tl.state = SB_CHIP_TL_CLOSED;
	}
	scalebpf_chip_thread(NULL);
	sb_chip_free(t->c);
	free(t);
}

/* A forked child's thread has the parent's counters (copied) and a tid
 * of its own: it says where they are. */
static void forked_child(void)
{
	if (ct && ct != CLOSED)
		scalebpf_chip_thread(&sb_chip_k);
}

static void init_once(void)
{
	read_opts();
	key_ok = !pthread_key_create(&thread_key, thread_gone);
	pthread_atfork(NULL, NULL, forked_child);
}

static struct chip_thread *thread_open(void)
{
	struct chip_thread *t;
	char err[160];

	/* accesses while the profile is made (an instrumented allocator, a
	 * signal handler) are dropped, not recursed into */
	if (ct_opening || ct_failed)
		return NULL;
	ct_opening = 1;
	pthread_once(&opts_once, init_once);
	if (!(t = calloc(1, sizeof(*t)))) {
		ct_opening = 0;
		return NULL;
	}
	if (sb_chip_alloc(&t->c, &opts, err, sizeof(err))) {
		free(t);
		ct_failed = 1;   /* said once per thread */
		ct_opening = 0;
		fprintf(stderr, "scalebpf chip: %s\n", err);
		return NULL;
	}
	if (key_ok)
		pthread_setspecific(thread_key, t);
	ct = t;
	/* the callbacks' gate, in the TLS line a stopped access reads alone */
	sb_chip_gate_of(t->c, &sb_chip_tl.gate);
	sb_chip_tl.stopped = UINT64_MAX;
	sb_chip_tl.state = sb_chip_tl.gate.shards ? SB_CHIP_TL_GATED : SB_CHIP_TL_OPEN;
	ct_opening = 0;
	scalebpf_chip_thread(&sb_chip_k);
	return t;
}

/* the first access of a thread: off the per-access path */
static __attribute__((noinline)) void first_access(uintptr_t addr)
{
	struct chip_thread *t = thread_open();

	if (t)
		sb_chip_access(t->c, addr, &sb_chip_k);
}

void sb_chip_access_rt(uintptr_t addr)
{
	struct chip_thread *t = ct;

	if (__builtin_expect(!t || t == CLOSED, 0)) {
		if (!t)
			first_access(addr);
		return;
	}
	/* (the callbacks' gate stopped the lines SHARDS drops already, and
	 * sb_chip_access tests its own) */
	sb_chip_access(t->c, addr, &sb_chip_k);
}

void sb_chip_sync(uint16_t flags)
{
	struct chip_thread *t = ct;
	struct sb_chip_batch b;

	if (!t || t == CLOSED || sb_chip_k.accesses == t->sent.accesses)
		return;
	memset(&b, 0, sizeof(b));
	b.magic = SB_CHIP_MAGIC;
	b.flags = flags;
	b.line = (uint16_t)opts.line;
	b.max_bytes = sb_chip_opts_of(t->c)->max_bytes;   /* as mapped: rounded up */
	/* as the sampler does: at least 1 of 2^24 */
	b.rate_t = opts.rate >= 1 ? SB_CHIP_RATE_SCALE
				  : (uint32_t)(opts.rate * SB_CHIP_RATE_SCALE + 0.5);
	if (!b.rate_t)
		b.rate_t = 1;
	b.accesses = sb_chip_k.accesses - t->sent.accesses;
	for (int i = 0; i < SB_CHIP_NDEPTH; i++)
		b.depth[i] = sb_chip_k.depth[i] - t->sent.depth[i];
	scalebpf_chip_batch(&b);
	t->sent = sb_chip_k;
	/* said again now and then: a recorder that attached (-p) after the
	 * thread began learns where its counters are (a uprobe per 256
	 * segments costs nothing measurable) */
	if (!(++t->syncs & 255))
		scalebpf_chip_thread(&sb_chip_k);
}

void sb_chip_thread_done(void)
{
	struct chip_thread *t = ct;

	ct = CLOSED;
	sb_chip_tl.state = SB_CHIP_TL_CLOSED;
	if (t && t != CLOSED) {
		scalebpf_chip_thread(NULL);
		if (key_ok)
			pthread_setspecific(thread_key, NULL);
		sb_chip_free(t->c);
		free(t);
	}
}
