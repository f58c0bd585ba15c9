// SPDX-License-Identifier: MIT
/* The merge (analysis/merge/merge.h) against hand-computed totals: two
 * crafted intervals of one program whose locations, events and sections
 * come in different orders, a profile merged with itself (everything
 * doubles), the instance limit, and the merge read back from a file (the
 * reader's checks hold). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "merge/merge.h"
#include "summary/summary.h"

static long loc(struct sb_profile *p, int32_t bin, uint64_t off, const char *fn, uint32_t line)
{
	struct sb_loc l = { .addr = 0x400000 + off + (uint64_t)p->nlocs * 0x10000, .offset = off,
			    .binary = bin, .line = line, .function = (char *)fn,
			    .file = (char *)"/src/app.c" };

	return sb_profile_add_loc(p, &l);
}

static void section(struct sb_profile *p, uint32_t kind, long at, uint64_t ninst,
		    const struct sb_thread_time *pt, uint32_t n, uint64_t lost, uint64_t cap)
{
	struct sb_section s = { .kind = kind, .loc = (uint32_t)at, .ninstances = ninst,
				.nthreads = n, .per_thread = (struct sb_thread_time *)pt,
				.lost_ns = lost, .capacity_ns = cap };

	sb_profile_add_section(p, &s);
}

static long instance(struct sb_profile *p, uint32_t sec, uint64_t seq, uint64_t start,
		     const struct sb_thread_time *pt, uint32_t n)
{
	struct sb_instance in = { .section = sec, .seq = seq, .start_ns = start,
				  .end_ns = start + 100, .nthreads = n,
				  .per_thread = (struct sb_thread_time *)pt };

	return sb_profile_add_instance(p, &in);
}

static long event(struct sb_profile *p, int32_t bin, uint64_t vaddr, int32_t at)
{
	struct sb_event_def e = { .kind = SB_EVK_BLOCK_SAMPLES, .binary = bin, .vaddr = vaddr,
				  .loc = at, .loc2 = -1, .loc_hot = -1 };

	return sb_profile_add_event(p, &e);
}

static void vector(struct sb_profile *p, long in, long ev, uint64_t c0, uint64_t c1)
{
	uint64_t c[2] = { c0, c1 };
	struct sb_vector v = { .instance = (uint32_t)in, .event = (uint32_t)ev, .nthreads = 2,
			       .counts = c };

	sb_profile_add_vector(p, &v);
}

static void thread(struct sb_profile *p, uint32_t tid, uint64_t start, uint64_t end,
		   uint64_t oncpu)
{
	struct sb_thread t = { .tid = tid, .comm = (char *)"app", .start_ns = start,
			       .end_ns = end, .oncpu_ns = oncpu };

	sb_profile_add_thread(p, &t);
}

/* The first interval: section 0 a barrier at solve app.c:10 (3 instances,
 * 2 stored), waits at the barrier and a mutex. */
static struct sb_profile *interval_a(void)
{
	struct sb_profile *p = sb_profile_alloc();
	struct sb_thread_time sec[2] = { { 1, 300, 30, 330 }, { 2, 150, 180, 330 } };
	struct sb_thread_time i0[2] = { { 1, 100, 10, 110 }, { 2, 50, 60, 110 } };
	struct sb_thread_time i1[2] = { { 1, 100, 10, 110 }, { 2, 50, 60, 110 } };
	struct sb_wait w1 = { .prim = SB_PRIM_BARRIER, .loc = 0, .object = 0xb0, .count = 3,
			      .wait_ns = 210 };
	struct sb_wait w2 = { .prim = SB_PRIM_MUTEX, .loc = 1, .object = 0x10, .count = 5,
			      .wait_ns = 50 };
	long bin = sb_profile_add_binary(p, "/bin/app", "abcd"), in;

	loc(p, (int32_t)bin, 0x1000, "solve", 10);     /* 0 */
	loc(p, (int32_t)bin, 0x2000, "update", 20);    /* 1 */
	thread(p, 1, 100, 900, 500);
	thread(p, 2, 110, 900, 300);
	section(p, SB_SECT_BARRIER, 0, 3, sec, 2, 150, 600);
	in = instance(p, 0, 0, 200, i0, 2);
	event(p, (int32_t)bin, 0x1000, 0);
	event(p, (int32_t)bin, 0x2000, 1);
	vector(p, in, 0, 7, 3);
	in = instance(p, 0, 1, 400, i1, 2);
	vector(p, in, 1, 4, 1);
	sb_profile_add_wait(p, &w1);
	sb_profile_add_wait(p, &w2);
	sb_profile_meta_set_u64(p, "duration_ns", 1000);
	sb_profile_meta_set_u64(p, "start_ns", 100);
	sb_profile_meta_set_u64(p, "drops_probe", 1);
	sb_profile_meta_set_u64(p, "instances", 3);
	sb_profile_meta_set_u64(p, "pid", 10);
	sb_profile_meta_set_u64(p, "follow_stop_ns_max", 70);
	sb_profile_meta_set(p, "unwind_depth_mean", "4.00");
	sb_profile_meta_set(p, "sampling", "software");
	sb_profile_meta_set(p, "notes", "note one");
	return p;
}

/* The next interval: the same program, its locations and events found in
 * the other order, a second section (a join at update app.c:20), thread 2
 * gone and thread 3 new. */
static struct sb_profile *interval_b(void)
{
	struct sb_profile *p = sb_profile_alloc();
	struct sb_thread_time sec[2] = { { 1, 200, 20, 220 }, { 3, 100, 120, 220 } };
	struct sb_thread_time join[1] = { { 3, 40, 0, 40 } };
	struct sb_thread_time i0[2] = { { 1, 100, 10, 110 }, { 3, 50, 60, 110 } };
	struct sb_wait w1 = { .prim = SB_PRIM_BARRIER, .loc = 1, .object = 0xb0, .count = 2,
			      .wait_ns = 140 };
	long bin = sb_profile_add_binary(p, "/bin/app", "abcd"), in;

	loc(p, (int32_t)bin, 0x2000, "update", 20);    /* 0 */
	loc(p, (int32_t)bin, 0x1000, "solve", 10);     /* 1 */
	thread(p, 1, 1000, 2000, 400);
	thread(p, 3, 1100, 1900, 200);
	section(p, SB_SECT_JOIN, 0, 1, join, 1, 0, 40);
	section(p, SB_SECT_BARRIER, 1, 2, sec, 2, 100, 400);
	event(p, (int32_t)bin, 0x2000, 0);
	event(p, (int32_t)bin, 0x1000, 1);
	in = instance(p, 1, 0, 1200, i0, 2);
	vector(p, in, 1, 5, 2);      /* solve's block: event 0 of the merge */
	sb_profile_add_wait(p, &w1);
	sb_profile_meta_set_u64(p, "duration_ns", 2000);
	sb_profile_meta_set_u64(p, "start_ns", 1000);
	sb_profile_meta_set_u64(p, "drops_probe", 2);
	sb_profile_meta_set_u64(p, "instances", 3);
	sb_profile_meta_set_u64(p, "pid", 10);
	sb_profile_meta_set_u64(p, "follow_stop_ns_max", 50);
	sb_profile_meta_set(p, "unwind_depth_mean", "3.50");
	sb_profile_meta_set(p, "sampling", "hardware");
	sb_profile_meta_set(p, "notes", "note two; note one");
	return p;
}

static const struct sb_thread_time *row(const struct sb_section *s, uint32_t tid)
{
	for (uint32_t i = 0; i < s->nthreads; i++)
		if (s->per_thread[i].tid == tid)
			return &s->per_thread[i];
	return NULL;
}

static void test_two_intervals(void)
{
	struct sb_profile *a = interval_a(), *b = interval_b(), *m;
	struct sb_merge *g = sb_merge_alloc(NULL);
	const struct sb_thread_time *t;
	char err[256];

	CHECK(!sb_merge_add(g, a, "a.sbp", err, sizeof(err)), "%s", err);
	CHECK(!sb_merge_add(g, b, "b.sbp", err, sizeof(err)), "%s", err);
	m = sb_merge_finish(g);
	sb_merge_free(g);
	CHECK(m != NULL, "merged");
	if (!m)
		goto out;
	CHECK(m->nbinaries == 1, "one binary, got %zu", m->nbinaries);
	CHECK(m->nlocs == 2, "two places, got %zu", m->nlocs);
	CHECK(m->nsections == 2, "the barrier once, the join new: %zu", m->nsections);
	CHECK(m->sections[0].kind == SB_SECT_BARRIER && m->sections[0].ninstances == 5 &&
	      m->sections[0].lost_ns == 250 && m->sections[0].capacity_ns == 1000,
	      "barrier: 3 + 2 instances, lost 150 + 100, capacity 600 + 400");
	t = row(&m->sections[0], 1);
	CHECK(t && t->busy_ns == 500 && t->wait_ns == 50 && t->wall_ns == 550,
	      "thread 1: busy 300 + 200, wait 30 + 20");
	t = row(&m->sections[0], 2);
	CHECK(t && t->busy_ns == 150 && t->wait_ns == 180, "thread 2: interval a only");
	t = row(&m->sections[0], 3);
	CHECK(t && t->busy_ns == 100 && t->wait_ns == 120, "thread 3: interval b only");
	CHECK(m->sections[0].nthreads == 3, "three threads in the barrier: %u",
	      m->sections[0].nthreads);
	CHECK(m->sections[1].kind == SB_SECT_JOIN && m->sections[1].ninstances == 1 &&
	      !strcmp(m->locs[m->sections[1].loc].function, "update"), "the join at update");
	CHECK_NEAR(sb_summary_imbalance_pct(&m->sections[0]), 25.0, 1e-9);
	CHECK(m->ninstances == 3, "stored 2 + 1: %zu", m->ninstances);
	CHECK(m->ninstances == 3 && m->instances[2].section == 0 && m->instances[2].seq == 3 &&
	      m->instances[1].seq == 1, "b's first instance numbered after a's three");
	CHECK(m->nevents == 2, "solve's and update's blocks once each: %zu", m->nevents);
	CHECK(m->nvectors == 3 && m->vectors[2].instance == 2 && m->vectors[2].event == 0 &&
	      m->vectors[2].counts[0] == 5, "b's vector counts solve's block, event 0");
	CHECK(m->nwaits == 2, "barrier waits at one site add up: %zu", m->nwaits);
	CHECK(m->nwaits == 2 && m->waits[0].count == 5 && m->waits[0].wait_ns == 350,
	      "barrier 3 + 2 waits, 210 + 140 ns");
	CHECK(m->nthreads == 3, "threads 1, 2, 3: %zu", m->nthreads);
	CHECK(m->threads[0].start_ns == 100 && m->threads[0].end_ns == 2000 &&
	      m->threads[0].oncpu_ns == 900, "thread 1 spans both, on-CPU 500 + 400");
	CHECK(sb_profile_meta_get_u64(m, "duration_ns") == 3000, "duration adds");
	CHECK(sb_profile_meta_get_u64(m, "start_ns") == 100, "first start");
	CHECK(sb_profile_meta_get_u64(m, "drops_probe") == 3, "drops add");
	CHECK(sb_profile_meta_get_u64(m, "instances") == 6, "instances add");
	CHECK(sb_profile_meta_get_u64(m, "follow_stop_ns_max") == 70, "a maximum stays one");
	CHECK(sb_profile_meta_get_u64(m, "pid") == 10, "the same pid");
	CHECK(!strcmp(sb_profile_meta_get(m, "unwind_depth_mean"), "3.50"), "a mean: the newest");
	CHECK(!strcmp(sb_profile_meta_get(m, "sampling"), "hardware"), "a setting: the newest");
	CHECK(!strcmp(sb_profile_meta_get(m, "merge_differing"), "sampling"),
	      "the setting named as differing, not the mean: %s",
	      sb_profile_meta_get(m, "merge_differing"));
	CHECK(!strcmp(sb_profile_meta_get(m, "notes"), "note one; note two"), "notes once: %s",
	      sb_profile_meta_get(m, "notes"));
	CHECK(sb_profile_meta_get_u64(m, "merged_profiles") == 2 &&
	      !strcmp(sb_profile_meta_get(m, "merged_first"), "a.sbp") &&
	      !strcmp(sb_profile_meta_get(m, "merged_last"), "b.sbp"), "what it is made of");
	{
		char path[] = "/tmp/test_merge.XXXXXX";
		int fd = mkstemp(path);
		struct sb_profile *r = NULL;

		if (fd >= 0)
			close(fd);
		CHECK(!sb_profile_write(m, path, err, sizeof(err)), "written: %s", err);
		CHECK(!sb_profile_read(path, &r, err, sizeof(err)), "read back: %s", err);
		CHECK(r && r->nsections == 2 && r->ninstances == 3 && r->nvectors == 3,
		      "the same after the round trip");
		sb_profile_free(r);
		unlink(path);
	}
out:
	sb_profile_free(m);
	sb_profile_free(a);
	sb_profile_free(b);
}

/* A profile merged with itself: every count doubles, nothing else moves. */
static void test_self(void)
{
	struct sb_profile *a = interval_a(), *m;
	struct sb_merge *g = sb_merge_alloc(NULL);
	struct sb_summary_prim_total w[SB_PRIM_MAX];
	size_t n;
	char err[256];

	sb_merge_add(g, a, "a", err, sizeof(err));
	sb_merge_add(g, a, "a", err, sizeof(err));
	m = sb_merge_finish(g);
	sb_merge_free(g);
	CHECK(m && m->nsections == 1 && m->sections[0].ninstances == 6 &&
	      m->sections[0].lost_ns == 300 && row(&m->sections[0], 2)->wait_ns == 360,
	      "aggregates double");
	CHECK(m && m->ninstances == 4 && m->nvectors == 4 && m->nevents == 2 && m->nlocs == 2,
	      "instances and vectors twice, places and events once");
	CHECK(m && !strcmp(sb_profile_meta_get(m, "merge_differing"), ""), "nothing differs");
	CHECK_NEAR(m ? sb_summary_imbalance_pct(&m->sections[0]) : -1,
		   sb_summary_imbalance_pct(&a->sections[0]), 1e-9);
	n = m ? sb_summary_waits_by_prim(m, w) : 0;
	for (size_t i = 0; i < n; i++)
		if (w[i].prim == SB_PRIM_MUTEX)
			CHECK(w[i].wait_ns == 100 && w[i].count == 10, "mutex waits double");
	sb_profile_free(m);
	sb_profile_free(a);
}

/* A tid the kernel handed out twice in one profile is two rows; merged
 * with itself, each row doubles and they stay two. */
static void test_reused_tid(void)
{
	struct sb_profile *a = sb_profile_alloc(), *m;
	struct sb_thread_time rows[3] = { { 7, 100, 1, 101 }, { 8, 50, 2, 52 }, { 7, 30, 3, 33 } };
	struct sb_merge *g = sb_merge_alloc(NULL);
	char err[128];
	long bin = sb_profile_add_binary(a, "/bin/app", NULL);

	loc(a, (int32_t)bin, 0x1000, "solve", 10);
	section(a, SB_SECT_JOIN, 0, 2, rows, 3, 0, 0);
	sb_merge_add(g, a, "a", err, sizeof(err));
	sb_merge_add(g, a, "a", err, sizeof(err));
	m = sb_merge_finish(g);
	sb_merge_free(g);
	CHECK(m && m->sections[0].nthreads == 3, "three rows: %u", m ? m->sections[0].nthreads : 0);
	CHECK(m && m->sections[0].per_thread[0].tid == 7 && m->sections[0].per_thread[0].busy_ns == 200 &&
	      m->sections[0].per_thread[2].tid == 7 && m->sections[0].per_thread[2].busy_ns == 60 &&
	      m->sections[0].per_thread[1].busy_ns == 100, "each row doubled, apart");
	sb_profile_free(m);
	sb_profile_free(a);
}

/* Beyond max_instances a section's instances are counted, not kept, and
 * their vectors go with them. */
static void test_limit(void)
{
	struct sb_merge_opts o = { .max_instances = 3 };
	struct sb_profile *a = interval_a(), *m;
	struct sb_merge *g = sb_merge_alloc(&o);
	struct sb_merge_stats st;
	char err[256];

	sb_merge_add(g, a, "a", err, sizeof(err));
	sb_merge_add(g, a, "a", err, sizeof(err));
	sb_merge_get_stats(g, &st);
	m = sb_merge_finish(g);
	sb_merge_free(g);
	CHECK(st.instances_dropped == 1 && st.vectors_dropped == 1, "one over: %llu, %llu",
	      (unsigned long long)st.instances_dropped, (unsigned long long)st.vectors_dropped);
	CHECK(m && m->ninstances == 3 && m->nvectors == 3 && m->sections[0].ninstances == 6,
	      "3 kept, all 6 counted");
	CHECK(m && sb_profile_meta_get_u64(m, "merged_instances_dropped") == 1, "and said");
	sb_profile_free(m);
	sb_profile_free(a);
}

/* An input whose index points nowhere is refused, saying which. */
static void test_corrupt(void)
{
	struct sb_profile *a = interval_a();
	struct sb_merge *g = sb_merge_alloc(NULL);
	char err[256] = "";

	a->waits[0].loc = 99;
	CHECK(sb_merge_add(g, a, "bad.sbp", err, sizeof(err)) == SB_ERR_CORRUPT, "refused");
	CHECK(strstr(err, "bad.sbp") && strstr(err, "out of range"), "%s", err);
	CHECK(sb_merge_finish(g) == NULL, "no merge after a failure");
	sb_merge_free(g);
	sb_profile_free(a);
	g = sb_merge_alloc(NULL);
	CHECK(sb_merge_finish(g) == NULL, "none without input");
	sb_merge_free(g);
}

int main(void)
{
	test_two_intervals();
	test_self();
	test_limit();
	test_reused_tid();
	test_corrupt();
	return CHECK_DONE("test_merge");
}
