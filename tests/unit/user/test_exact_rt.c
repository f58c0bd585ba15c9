// SPDX-License-Identifier: MIT
/*
 * The exact-mode runtime's per-thread counters (user/rt/exact_rt.c,
 * included here for its statics).  Known answers:
 *   - growth keeps the counts: 5 calls of guard 1, then a guard registered
 *     later (id 103) grows the array; guard 1 still reads 5, the new one
 *     1, and the entries between 0;
 *   - every thread's record and counter arrays are whole cache lines of
 *     their own: line-aligned, and no line shared between two threads'
 *     (threads sharing a malloc arena got adjacent blocks, and a hot
 *     counter beside another thread's made both 3x slower per block: a
 *     "hardware" cause of the tool's own making, accuracy seed W p023).
 */
#include <pthread.h>
#include <stdint.h>

#include "check.h"
#include "rt/exact_rt.c"

#define NT 6

static uint32_t g1[3], g2[100];

struct seen {
	uintptr_t rec, counts, touched;
	uint32_t cap;
	uint64_t count;
};

static struct seen seen[NT];

static void *run(void *arg)
{
	struct seen *s = arg;

	for (int i = 0; i < 1000; i++)
		__sanitizer_cov_trace_pc_guard(&g1[0]);
	s->rec = (uintptr_t)self;
	s->counts = self ? (uintptr_t)self->counts : 0;
	s->touched = self ? (uintptr_t)self->touched : 0;
	s->cap = self ? self->cap : 0;
	s->count = self ? self->counts[g1[0]] : 0;
	return NULL;
}

/* the lines [a, a + bytes) covers */
static int overlap(uintptr_t a, size_t an, uintptr_t b, size_t bn)
{
	uintptr_t a0 = a / 64, a1 = (a + an - 1) / 64, b0 = b / 64, b1 = (b + bn - 1) / 64;

	return a && b && a0 <= b1 && b0 <= a1;
}

int main(void)
{
	pthread_t th[NT];

	__sanitizer_cov_trace_pc_guard_init(g1, g1 + 3);
	CHECK(g1[0] == 1 && g1[2] == 3, "ids 1..3: %u..%u", g1[0], g1[2]);
	for (int i = 0; i < 5; i++)
		__sanitizer_cov_trace_pc_guard(&g1[0]);
	__sanitizer_cov_trace_pc_guard_init(g2, g2 + 100);
	__sanitizer_cov_trace_pc_guard(&g2[99]);
	CHECK(self && self->cap == 104, "grown to 104 entries: %u", self ? self->cap : 0);
	CHECK(self && self->counts[1] == 5 && self->counts[103] == 1 && self->counts[50] == 0 &&
	      self->ntouched == 2, "counts kept through growth: %llu, %llu, %llu, %u touched",
	      self ? (unsigned long long)self->counts[1] : 0,
	      self ? (unsigned long long)self->counts[103] : 0,
	      self ? (unsigned long long)self->counts[50] : 0, self ? self->ntouched : 0);
	for (int t = 0; t < NT; t++)
		pthread_create(&th[t], NULL, run, &seen[t]);
	for (int t = 0; t < NT; t++)
		pthread_join(th[t], NULL);
	for (int t = 0; t < NT; t++) {
		const struct seen *s = &seen[t];

		CHECK(s->count == 1000, "thread %d counted 1000: %llu", t, (unsigned long long)s->count);
		CHECK(s->rec && s->rec % 64 == 0 && s->counts % 64 == 0 && s->touched % 64 == 0,
		      "thread %d: record and arrays line-aligned (%#lx %#lx %#lx)", t,
		      (unsigned long)s->rec, (unsigned long)s->counts, (unsigned long)s->touched);
		for (int u = 0; u < t; u++) {
			const struct seen *o = &seen[u];
			size_t cb = (size_t)s->cap * 8, ob = (size_t)o->cap * 8;
			size_t tb = (size_t)s->cap * 4, otb = (size_t)o->cap * 4;

			CHECK(!overlap(s->counts, cb, o->counts, ob) &&
			      !overlap(s->counts, cb, o->rec, sizeof(struct sbx_thread)) &&
			      !overlap(s->rec, sizeof(struct sbx_thread), o->counts, ob) &&
			      !overlap(s->rec, sizeof(struct sbx_thread), o->rec,
				       sizeof(struct sbx_thread)) &&
			      !overlap(s->touched, tb, o->counts, ob) &&
			      !overlap(s->counts, cb, o->touched, otb) &&
			      !overlap(s->touched, tb, o->touched, otb) &&
			      !overlap(s->touched, tb, o->rec, sizeof(struct sbx_thread)) &&
			      !overlap(s->rec, sizeof(struct sbx_thread), o->touched, otb),
			      "threads %d and %d share no line", t, u);
		}
	}
	return CHECK_DONE("test_exact_rt");
}
