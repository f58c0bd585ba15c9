// SPDX-License-Identifier: MIT
/*
 * Exact-mode runtime: see exact_rt.h.  Built without coverage
 * instrumentation (it must not count itself) and with -fPIC, into
 * libscalebpf-rt.a; every wrapper is its own archive member, pulled in only
 * when the program calls what it wraps.
 *
 * Cost per instrumented block: one TLS load, one compare, one increment.
 * Everything else (first touch of a block in a segment, a thread's first
 * block, flushing) is off the hot path.
 */
#include "exact_rt.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "sbpf_events.h"
#include "sbpf_trace.h"

/* Guard ids are global, 1-based: a guard left 0 is not counted. */
#define MAX_GUARDS (1u << 24)

struct sbx_thread {
	uint32_t cap;          /* counts[] and touched[] entries */
	uint32_t ntouched;
	uint64_t *counts;      /* by guard id, this segment */
	uint32_t *touched;     /* ids with a non-zero count */
	uint32_t color;        /* lines into each allocation (see lines()) */
	void *mem[3];          /* what to free: this record, counts, touched */
};

static uint32_t nguards;   /* ids handed out so far */
/* The return address of each guard's callback: its block in the binary.
 * Reserved once (untouched pages cost nothing), so it never moves under
 * threads reading it. */
static uintptr_t *guard_pc;
/* initial-exec: this runtime goes into executables only; the general
 * model's __tls_get_addr call (relaxed away by the linker) made the
 * compiler save five registers around it on every block */
static __thread struct sbx_thread *self __attribute__((tls_model("initial-exec")));

/*
 * The uprobe of `scalebpf record` sits here and copies *b.  The empty asm
 * keeps the call and the argument: there is nothing else to do.
 */
__attribute__((noinline, used, visibility("default")))
void scalebpf_exact_batch(const struct sb_exact_batch *b)
{
	__asm__ volatile("" : : "r"(b) : "memory");
}

void __sanitizer_cov_trace_pc_guard_init(uint32_t *start, uint32_t *stop)
{
	if (start == stop || *start)
		return;   /* called once per module, and again by each ctor */
	if (!guard_pc) {
		void *m = mmap(NULL, (size_t)MAX_GUARDS * sizeof(*guard_pc), PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

		if (m == MAP_FAILED)
			return;   /* no ids: nothing is counted */
		guard_pc = m;
	}
	for (uint32_t *g = start; g < stop && nguards + 1 < MAX_GUARDS; g++)
		*g = ++nguards;
}

/*
 * Every thread's counters on cache lines of their own.  malloc packs
 * small blocks of threads that share an arena (glibc keeps 8 per core:
 * 20 threads on 2 cores share) side by side, and one thread's hot
 * counter beside another's made both pay a coherence miss per block:
 * 3x slower per execution, a "hardware" cause of the tool's own making
 * (accuracy seed W, p023: two of 20 threads).  So the arrays and the
 * thread's record are whole lines, line-aligned.
 *
 * And each thread's at its own offset in a page ("colour"): a thread
 * with an arena of its own gets its blocks at the same offset in its
 * 64 MB heap as every other such thread, so the hot counter of each
 * thread had the same address bits 0-25.  With 8 threads on this
 * machine's 2 vCPUs, one thread of a run then ran 2.5-3.5x slower for
 * its whole life in 5-7 runs of 16 (lime_owner_hdr, no recorder
 * attached; the uninstrumented build: none), which turned LIME's top
 * cause to noise.  Colours k * 7 lines mod 64 (k: the thread's rank)
 * differ for 64 threads in a row: a slow thread in 1 run of 40.
 */
#define LINE 64
#define COLORS 64                /* lines in a 4 KB page */

static uint32_t next_color;

/* bytes on whole lines, `color` lines into a line-aligned block whose
 * start, to be freed, goes to *mem. */
static void *lines(size_t bytes, uint32_t color, void **mem)
{
	void *m = NULL;

	bytes = (bytes + LINE - 1) / LINE * LINE + (size_t)color * LINE;
	if (posix_memalign(&m, LINE, bytes ? bytes : LINE))
		return NULL;
	*mem = m;
	return (char *)m + (size_t)color * LINE;
}

/* *p (old entries of size each, zero-filled beyond), allocated at *mem,
 * grown to cap. */
static void *grow(void *p, void **mem, uint32_t old, uint32_t cap, size_t size, uint32_t color)
{
	void *m, *n = lines((size_t)cap * size, color, &m);

	if (!n)
		return NULL;
	if (p)
		memcpy(n, p, (size_t)old * size);
	memset((char *)n + (size_t)old * size, 0, (size_t)(cap - old) * size);
	free(*mem);
	*mem = m;
	return n;
}

static struct sbx_thread *thread_grow(uint32_t id)
{
	struct sbx_thread *t = self;
	uint32_t cap = (nguards > id ? nguards : id) + 1;
	uint64_t *c;
	uint32_t *tc;

	if (!t) {
		uint32_t color = __atomic_fetch_add(&next_color, 1, __ATOMIC_RELAXED) * 7 % COLORS;
		void *m;

		t = lines(sizeof(*t), color, &m);
		if (!t)
			return NULL;
		memset(t, 0, sizeof(*t));
		t->color = color;
		t->mem[0] = m;
		self = t;
	}
	c = grow(t->counts, &t->mem[1], t->cap, cap, sizeof(*c), t->color);
	if (!c)
		return NULL;
	t->counts = c;
	tc = grow(t->touched, &t->mem[2], t->cap, cap, sizeof(*tc), t->color);
	if (!tc)
		return NULL;
	t->touched = tc;
	t->cap = cap;
	return t;
}

/* A block's first count in the segment: noted, and its place learnt. */
static __attribute__((noinline)) void first_touch(struct sbx_thread *t, uint32_t id,
						  uintptr_t pc)
{
	t->touched[t->ntouched++] = id;
	if (!__atomic_load_n(&guard_pc[id], __ATOMIC_RELAXED))
		__atomic_store_n(&guard_pc[id], pc, __ATOMIC_RELAXED);
}

/* A thread's first block, or a guard beyond its arrays (a module loaded
 * later) */
static __attribute__((noinline)) void count_grown(uint32_t id, uintptr_t pc)
{
	struct sbx_thread *t;

	if (!id || !(t = thread_grow(id)))
		return;
	if (t->counts[id]++ == 0)
		first_touch(t, id, pc);
}

/* Both the rare paths out of line: the common one (a load, a compare,
 * an increment) then saves no register. */
void __sanitizer_cov_trace_pc_guard(uint32_t *guard)
{
	struct sbx_thread *t = self;
	uint32_t id = *guard;

	if (__builtin_expect(!t || id >= t->cap, 0))
		count_grown(id, (uintptr_t)__builtin_return_address(0));
	else if (__builtin_expect(t->counts[id]++ == 0, 0))
		first_touch(t, id, (uintptr_t)__builtin_return_address(0));
}

void sb_exact_sync(uint16_t flags, uint32_t kind, uintptr_t obj)
{
	struct sbx_thread *t = self;
	struct sb_exact_batch b;
	uint32_t i;

	if (sb_trace_sync)
		sb_trace_sync(flags, kind, obj);
	if (sb_chip_sync)
		sb_chip_sync(flags);
	if (!t || !t->ntouched)
		return;
	b.magic = SB_EXACT_MAGIC;
	b.flags = flags;
	b.n = 0;
	for (i = 0; i < t->ntouched; i++) {
		uint32_t id = t->touched[i];

		b.pc[b.n] = __atomic_load_n(&guard_pc[id], __ATOMIC_RELAXED);
		b.count[b.n] = t->counts[id];
		t->counts[id] = 0;
		if (++b.n == SB_EXACT_BATCH) {
			scalebpf_exact_batch(&b);
			b.n = 0;
		}
	}
	t->ntouched = 0;
	if (b.n)
		scalebpf_exact_batch(&b);
}

void sb_exact_flush(uint16_t flags)
{
	sb_exact_sync(flags, SB_TSYNC_OTHER, 0);
}

void sb_exact_thread_done(void)
{
	struct sbx_thread *t = self;

	sb_exact_sync(0, SB_TSYNC_THREAD_END, (uintptr_t)pthread_self());
	if (sb_trace_thread_done)
		sb_trace_thread_done();
	if (sb_chip_thread_done)
		sb_chip_thread_done();
	self = NULL;
	if (t) {
		free(t->mem[1]);
		free(t->mem[2]);
		free(t->mem[0]);
	}
}

/* The main thread's last segment ends at exit(). */
__attribute__((destructor)) static void flush_at_exit(void)
{
	sb_exact_sync(0, SB_TSYNC_THREAD_END, (uintptr_t)pthread_self());
	if (sb_trace_thread_done)
		sb_trace_thread_done();
}
