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

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "sbpf_events.h"

/* Guard ids are global, 1-based: a guard left 0 is not counted. */
#define MAX_GUARDS (1u << 24)

struct sbx_thread {
	uint32_t cap;          /* counts[] and touched[] entries */
	uint32_t ntouched;
	uint64_t *counts;      /* by guard id, this segment */
	uint32_t *touched;     /* ids with a non-zero count */
};

static uint32_t nguards;   /* ids handed out so far */
/* The return address of each guard's callback: its block in the binary.
 * Reserved once (untouched pages cost nothing), so it never moves under
 * threads reading it. */
static uintptr_t *guard_pc;
static __thread struct sbx_thread *self;

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

static struct sbx_thread *thread_grow(uint32_t id)
{
	struct sbx_thread *t = self;
	uint32_t cap = (nguards > id ? nguards : id) + 1;
	uint64_t *c;
	uint32_t *tc;

	if (!t) {
		t = calloc(1, sizeof(*t));
		if (!t)
			return NULL;
		self = t;
	}
	c = realloc(t->counts, cap * sizeof(*c));
	if (!c)
		return NULL;
	memset(c + t->cap, 0, (cap - t->cap) * sizeof(*c));
	t->counts = c;
	tc = realloc(t->touched, cap * sizeof(*tc));
	if (!tc)
		return NULL;
	t->touched = tc;
	t->cap = cap;
	return t;
}

void __sanitizer_cov_trace_pc_guard(uint32_t *guard)
{
	struct sbx_thread *t = self;
	uint32_t id = *guard;

	if (__builtin_expect(!t || id >= t->cap, 0)) {
		if (!id || !(t = thread_grow(id)))
			return;
	}
	if (__builtin_expect(t->counts[id]++ == 0, 0)) {
		t->touched[t->ntouched++] = id;
		if (!__atomic_load_n(&guard_pc[id], __ATOMIC_RELAXED))
			__atomic_store_n(&guard_pc[id], (uintptr_t)__builtin_return_address(0),
					 __ATOMIC_RELAXED);
	}
}

void sb_exact_flush(uint16_t flags)
{
	struct sbx_thread *t = self;
	struct sb_exact_batch b;
	uint32_t i;

	if (sb_trace_sync)
		sb_trace_sync(flags);
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

void sb_exact_thread_done(void)
{
	struct sbx_thread *t = self;

	sb_exact_flush(0);
	if (sb_trace_thread_done)
		sb_trace_thread_done();
	self = NULL;
	if (t) {
		free(t->counts);
		free(t->touched);
		free(t);
	}
}

/* The main thread's last segment ends at exit(). */
__attribute__((destructor)) static void flush_at_exit(void)
{
	sb_exact_flush(0);
	if (sb_trace_thread_done)
		sb_trace_thread_done();
}
