// SPDX-License-Identifier: MIT
/*
 * Speedup stacks (analysis/stack/stack.c) against hand-computed answers:
 *   - a phase of 4 ms alone, 2.5 ms at two threads whose slowest thread
 *     was busy 2.2 ms and blocked 0.1 ms more, 0.1 ms of it waiting for
 *     each instance's slowest, and a pirate slowdown of 1.04: speedups
 *     1.6 measured, 4/2.2 synchronization-free, 2/1.04 pirate; the
 *     components cache 2 − 2/1.04, memory 2/1.04 − 4/2.2, sync 4/2.2 −
 *     1.6 (a third each lock, imbalance, barrier), no residual;
 *   - a pirate estimate below the synchronization-free one: memory 0,
 *     the difference shown as a negative residual; no pirate: cache and
 *     memory together;
 *   - a section's times from its per-thread sums and stored instances
 *     (scaled to all of them);
 *   - the virtual pirate on an exact CHiP row: with a cache two threads
 *     share, the misses between the whole cache's depth and half of it
 *     times the miss penalty over the serial time; with private caches,
 *     1;
 *   - the same phase found in another run's profile;
 *   - on-CPU lock time: a thread with a quarter of its samples in libc's
 *     lock code (by function name) works three quarters of its busy time;
 *     samples in the program or in a libc function that is no lock count
 *     as work;
 *   - the rows of runs at 1 and 2 threads: one per run where the phase
 *     is in both, the base the one-thread run's time, no row without a
 *     one-thread run.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "check.h"
#include "chip/chip.h"
#include "stack/stack.h"

static void check_compute(void)
{
	struct sb_stack_times t = { .threads = 2, .base_ns = 4000000, .time_ns = 2500000,
				    .nolock_ns = 2300000, .free_ns = 2200000,
				    .imbalance_ns = 100000, .pirate = SB_STACK_PIRATE_VIRTUAL,
				    .slowdown = 1.04 };
	struct sb_stack s;
	double sync = 4.0 / 2.2 - 1.6;

	CHECK(sb_stack_compute(&t, &s) == 0, "compute");
	CHECK_NEAR(s.measured, 1.6, 1e-12);
	CHECK_NEAR(s.free_est, 4.0 / 2.2, 1e-12);
	CHECK_NEAR(s.pirate_est, 2 / 1.04, 1e-12);
	CHECK_NEAR(s.cache, 2 - 2 / 1.04, 1e-12);
	CHECK_NEAR(s.memory, 2 / 1.04 - 4.0 / 2.2, 1e-12);
	CHECK_NEAR(s.sync, sync, 1e-12);
	CHECK_NEAR(s.residual, 0, 1e-12);
	CHECK_NEAR(s.lock, sync / 3, 1e-9);
	CHECK_NEAR(s.imbalance, sync / 3, 1e-9);
	CHECK_NEAR(s.barrier, sync / 3, 1e-9);
	CHECK_NEAR(s.cache + s.memory + s.sync + s.residual, s.perfect - s.measured, 1e-12);

	t.slowdown = 1.2;   /* pirate 1.667 below free 1.818: memory 0 */
	CHECK(sb_stack_compute(&t, &s) == 0 && s.memory == 0, "memory clamped");
	CHECK_NEAR(s.residual, (2 / 1.2) - 4.0 / 2.2, 1e-12);
	t.pirate = SB_STACK_PIRATE_NONE;
	CHECK(sb_stack_compute(&t, &s) == 0 && !s.cache_known && s.cache == 0, "no pirate");
	CHECK_NEAR(s.memory, 2 - 4.0 / 2.2, 1e-12);
	t.free_ns = 0;
	CHECK(sb_stack_compute(&t, &s) == -EINVAL, "no times refused");
}

/* Section 0 with two threads over 3 instances, 2 of them stored. */
static struct sb_profile *phase_profile(uint32_t line)
{
	struct sb_profile *p = sb_profile_alloc();
	/* sums: thread 1 busy 9, wait 2, wall 12 (blocked 1); thread 2 busy
	 * 7, wait 4, wall 12 (blocked 1) */
	struct sb_thread_time sum[2] = { { 1, 9000, 2000, 12000 }, { 2, 7000, 4000, 12000 } };
	/* instance 0: 1 busy 5 + blocked 0, 2 busy 2 + blocked 1: slowest 5;
	 * instance 1: 1 busy 1, 2 busy 4: slowest 4 */
	struct sb_thread_time i0[2] = { { 1, 5000, 0, 5000 }, { 2, 2000, 2000, 5000 } };
	struct sb_thread_time i1[2] = { { 1, 1000, 3000, 4000 }, { 2, 4000, 0, 4000 } };
	struct sb_loc l = { .addr = 0x401000, .binary = -1, .line = line, .file = "/a/x.c",
			    .function = "main" };
	struct sb_section s = { .kind = SB_SECT_BARRIER, .loc = 0, .ninstances = 3,
				.nthreads = 2, .per_thread = sum };
	struct sb_instance a = { .section = 0, .seq = 0, .start_ns = 0, .end_ns = 5000,
				 .nthreads = 2, .per_thread = i0 };
	struct sb_instance b = { .section = 0, .seq = 1, .start_ns = 6000, .end_ns = 10000,
				 .nthreads = 2, .per_thread = i1 };

	sb_profile_meta_set(p, "tool", "test");
	sb_profile_add_loc(p, &l);
	sb_profile_add_section(p, &s);
	sb_profile_add_instance(p, &a);
	sb_profile_add_instance(p, &b);
	return p;
}

static void check_times(void)
{
	struct sb_profile *p = phase_profile(7);
	struct sb_stack_times t;

	memset(&t, 0, sizeof(t));
	CHECK(sb_stack_section_times(p, 0, &t) == 0, "times");
	/* spans 5 + 4 of 2 stored, 3 in all: 13.5 us; nolock max(9+1, 7+1);
	 * free max(9, 7); imbalance (5 + 4) x 1.5 − 10 = 3.5, within 13.5 − 10 */
	CHECK(t.time_ns == 13500 && t.nolock_ns == 10000 && t.free_ns == 9000 &&
	      t.imbalance_ns == 3500, "time %llu nolock %llu free %llu imbalance %llu",
	      (unsigned long long)t.time_ns, (unsigned long long)t.nolock_ns,
	      (unsigned long long)t.free_ns, (unsigned long long)t.imbalance_ns);
	CHECK(sb_stack_section_times(p, 1, &t) == -EINVAL, "no such section");
	sb_profile_free(p);
}

/* An exact row for section 0: depth k holds 1000 (k + 1) references (the
 * 17th: misses), 16 sizes up to 4 MB; the machine's cache 2 MB, 12 ns,
 * DRAM 150 ns; the section busy 0.1 s. */
static struct sb_profile *chip_profile(unsigned llc_cpus)
{
	struct sb_profile *p = phase_profile(7);
	struct sb_chip_row r;

	memset(&r, 0, sizeof(r));
	r.section = 0;
	r.kind = SB_CHIP_KIND_SECTION;
	r.mode = SB_CHIP_MODE_EXACT;
	r.threads = 1;
	r.line = 64;
	r.max_bytes = 4u << 20;
	r.rate_t = 1u << 24;
	for (int k = 0; k < SB_CHIP_ROW_DEPTHS; k++)
		r.accesses += r.depth[k] = 1000u * (uint64_t)(k + 1);
	sb_profile_chip_append(p, &r);
	p->sections[0].per_thread[0].busy_ns = 100000000;
	p->sections[0].per_thread[1].busy_ns = 0;
	sb_profile_meta_set_u64(p, "chip_machine_llc_effective", 2u << 20);
	sb_profile_meta_set_u64(p, "chip_machine_bandwidth", 10000000000ull);
	sb_profile_meta_set_u64(p, "chip_machine_llc_latency_ps", 12000);
	sb_profile_meta_set_u64(p, "chip_machine_dram_latency_ps", 150000);
	sb_profile_meta_set_u64(p, "chip_machine_llc_cpus", llc_cpus);
	sb_profile_meta_set_u64(p, "chip_machine_cpus", 2);
	return p;
}

static void check_pirate(void)
{
	struct sb_profile *p = chip_profile(2);
	double slow = 0;
	uint64_t bytes = 0;
	/* depths 4..7 (1000 x 5..8) hit in 2 MB, not in 1 MB */
	double want = 1 + 26000 * 138e-9 / 0.1;

	CHECK(sb_stack_virtual_pirate(p, 0, 2, &slow, &bytes) == 0, "virtual pirate");
	CHECK(bytes == 1u << 20, "half the cache left: %llu", (unsigned long long)bytes);
	CHECK_NEAR(slow, want, 1e-9);
	sb_profile_free(p);
	p = chip_profile(1);
	CHECK(sb_stack_virtual_pirate(p, 0, 2, &slow, &bytes) == 0 && slow == 1 &&
	      bytes == 2u << 20, "private caches: nothing to steal (%g)", slow);
	CHECK(sb_stack_virtual_pirate(p, 5, 2, &slow, &bytes) == -EINVAL, "no such row");
	sb_profile_free(p);
}

static void check_match(void)
{
	struct sb_profile *p = phase_profile(7), *q = phase_profile(7), *r = phase_profile(8);

	CHECK(sb_section_match(p, 0, q) == 0 && sb_section_match(p, 0, r) == -1 &&
	      sb_section_match(p, 3, q) == -1, "the same phase in another run, not another line");
	sb_profile_free(p);
	sb_profile_free(q);
	sb_profile_free(r);
}

/* Thread 1 of instance 0 (busy 5 us): samples 30 in the program, 10 in
 * __lll_lock_wait of libc, 0 in libc's memcpy; thread 2: 8 in memcpy. */
static void check_lock_samples(void)
{
	struct sb_profile *p = phase_profile(7);
	struct sb_stack_times t;
	long bin = sb_profile_add_binary(p, "/lib/x86_64-linux-gnu/libc.so.6", NULL);
	struct sb_loc lw = { .addr = 0x7f0000001000, .binary = (int32_t)bin,
			     .function = "__lll_lock_wait" };
	struct sb_loc mc = { .addr = 0x7f0000002000, .binary = (int32_t)bin,
			     .function = "__memcpy_avx_unaligned" };
	long l1 = sb_profile_add_loc(p, &lw), l2 = sb_profile_add_loc(p, &mc);
	struct sb_event_def own = { .kind = SB_EVK_BLOCK_SAMPLES, .binary = -1, .loc = 0 };
	struct sb_event_def lock = { .kind = SB_EVK_BLOCK_SAMPLES, .binary = (int32_t)bin,
				     .loc = (int32_t)l1 };
	struct sb_event_def copy = { .kind = SB_EVK_BLOCK_SAMPLES, .binary = (int32_t)bin,
				     .loc = (int32_t)l2 };
	long e0 = sb_profile_add_event(p, &own), e1 = sb_profile_add_event(p, &lock);
	long e2 = sb_profile_add_event(p, &copy);
	uint64_t c0[2] = { 30, 0 }, c1[2] = { 10, 0 }, c2[2] = { 0, 8 };
	struct sb_vector v0 = { 0, (uint32_t)e0, 2, c0 }, v1 = { 0, (uint32_t)e1, 2, c1 };
	struct sb_vector v2 = { 0, (uint32_t)e2, 2, c2 };

	sb_profile_add_vector(p, &v0);
	sb_profile_add_vector(p, &v1);
	sb_profile_add_vector(p, &v2);
	memset(&t, 0, sizeof(t));
	/* thread 1: 9 us busy, a quarter in locks: 6.75; thread 2: 7, all work */
	CHECK(sb_stack_section_times(p, 0, &t) == 0 && t.free_ns == 7000,
	      "work: thread 2's 7 us over thread 1's 6.75: %llu",
	      (unsigned long long)t.free_ns);
	p->vectors[2].counts[1] = 0;
	p->vectors[0].counts[1] = 1;
	p->sections[0].per_thread[1].busy_ns = 5000;
	CHECK(sb_stack_section_times(p, 0, &t) == 0 && t.free_ns == 6750,
	      "thread 1's work 6.75 us of its 9: %llu", (unsigned long long)t.free_ns);
	sb_profile_free(p);
}

/* A section of 300 threads (more than the lock shares are kept for):
 * their times, no write past the shares (ASan). */
static void check_many_threads(void)
{
	static struct sb_thread_time many[300];
	struct sb_profile *p = sb_profile_alloc();
	struct sb_loc l = { .addr = 0x401000, .binary = -1, .line = 3, .file = "x.c",
			    .function = "main" };
	struct sb_section s = { .kind = SB_SECT_BARRIER, .loc = 0, .ninstances = 1,
				.nthreads = 300, .per_thread = many };
	struct sb_stack_times t;

	for (uint32_t k = 0; k < 300; k++)
		many[k] = (struct sb_thread_time){ k + 1, 1000 + k, 0, 2000 };
	sb_profile_add_loc(p, &l);
	sb_profile_add_section(p, &s);
	memset(&t, 0, sizeof(t));
	CHECK(sb_stack_section_times(p, 0, &t) == 0 && t.free_ns == 1299 && t.time_ns == 2000,
	      "300 threads: free %llu", (unsigned long long)t.free_ns);
	sb_profile_free(p);
}

static void check_rows(void)
{
	struct sb_profile *one = phase_profile(7), *two = phase_profile(7), *other = phase_profile(9);
	const struct sb_profile *runs[2] = { one, two };
	const unsigned th[2] = { 1, 2 };
	size_t phases = 9;

	one->sections[0].per_thread[1].busy_ns = 0;
	CHECK(sb_stack_rows(two, runs, th, 2, NULL, &phases) == 0 && phases == 1 && two->nstack == 2,
	      "a row per run: %zu rows, %zu phases", two->nstack, phases);
	if (two->nstack == 2)
		CHECK(two->stack[0].threads == 1 && two->stack[1].threads == 2 &&
		      two->stack[1].base_ns == 13500 && two->stack[1].time_ns == 13500 &&
		      two->stack[1].free_ns == 9000 && two->stack[0].pirate == SB_STACK_PIRATE_NONE,
		      "rows: base from the one-thread run, no pirate without a cache profile");
	runs[0] = other;
	CHECK(sb_stack_rows(one, runs, th, 2, NULL, &phases) == 0 && phases == 0 && !one->nstack,
	      "a phase not in the one-thread run: no row");
	CHECK(sb_stack_rows(two, runs + 1, th + 1, 1, NULL, &phases) == -EINVAL,
	      "no one-thread run refused");
	sb_profile_free(one);
	sb_profile_free(two);
	sb_profile_free(other);
}

/* p's times x f (the phases of phase_profile are microseconds; a real
 * pirate takes none under a millisecond per thread). */
static void scale(struct sb_profile *p, uint64_t f)
{
	for (size_t i = 0; i < p->nsections; i++)
		for (uint32_t k = 0; k < p->sections[i].nthreads; k++) {
			p->sections[i].per_thread[k].busy_ns *= f;
			p->sections[i].per_thread[k].wait_ns *= f;
			p->sections[i].per_thread[k].wall_ns *= f;
		}
	for (size_t i = 0; i < p->ninstances; i++) {
		struct sb_instance *in = &p->instances[i];

		in->start_ns *= f;
		in->end_ns *= f;
		for (uint32_t k = 0; k < in->nthreads; k++) {
			in->per_thread[k].busy_ns *= f;
			in->per_thread[k].wait_ns *= f;
			in->per_thread[k].wall_ns *= f;
		}
	}
}

/* A framework run beside a real pirate: the profiled thread (tid 2,
 * busy 7 ms in the phase) over the one-thread run's 13.5 ms / 2: a
 * slowdown of 7 / 6.75; the framework's own time at the phase's site
 * first; discarded when the pirate did not hold; none for a phase under
 * a millisecond per thread. */
static void check_real_rows(void)
{
	struct sb_profile *one = phase_profile(7), *two = phase_profile(7), *fw = phase_profile(7);
	const struct sb_profile *runs[2] = { one, two };
	const unsigned th[2] = { 1, 2 };
	const int32_t tids[2] = { 2, 99 };
	struct sb_stack_site site = { .vaddr = 0x1234, .binary = "/other/dir/prog",
				      .busy_ns = 8100000 };
	struct sb_stack_real real[2] = { { 0 }, { .run = fw, .tids = tids, .ntids = 2,
						  .bytes = 1 << 20, .held = 1 } };
	struct sb_stack s;
	struct sb_stack_times t = { .threads = 2, .base_ns = 13500, .time_ns = 13500,
				    .nolock_ns = 10000, .free_ns = 9000,
				    .pirate = SB_STACK_PIRATE_REAL };
	size_t phases;
	double slow = 0;
	long bin;

	scale(one, 1000);
	scale(two, 1000);
	scale(fw, 1000);
	CHECK(sb_stack_real_pirate(fw, 0, tids, 2, 2, 13500000, &slow) == 0, "real pirate");
	CHECK_NEAR(slow, 7000.0 / 6750.0, 1e-9);
	CHECK(sb_stack_real_pirate(fw, 0, tids + 1, 1, 2, 13500000, &slow) == -EINVAL,
	      "a profiled thread not in the phase: none");
	CHECK(sb_stack_rows(two, runs, th, 2, real, &phases) == 0 && two->nstack == 2,
	      "rows with a real pirate: %zu", two->nstack);
	if (two->nstack == 2)
		CHECK(two->stack[0].pirate == SB_STACK_PIRATE_NONE &&
		      two->stack[1].pirate == SB_STACK_PIRATE_REAL && two->stack[1].held == 1 &&
		      two->stack[1].pirate_bytes == 1 << 20 &&
		      two->stack[1].slowdown_ppm == 1037037,
		      "at 2 threads: real, held, slowdown %llu ppm",
		      (unsigned long long)two->stack[1].slowdown_ppm);

	/* the framework's time at the phase's closing site (same binary by
	 * base name, same ELF address) over the section's */
	bin = sb_profile_add_binary(two, "/build/prog", NULL);
	two->locs[0].binary = (int32_t)bin;
	two->locs[0].offset = 0x1234;
	real[1].sites = &site;
	real[1].nsites = 1;
	two->nstack = 0;
	CHECK(sb_stack_rows(two, runs, th, 2, real, &phases) == 0 && two->nstack == 2 &&
	      two->stack[1].slowdown_ppm == 1200000, "by site: 8.1 / 6.75: %llu ppm",
	      (unsigned long long)two->stack[1].slowdown_ppm);
	two->locs[0].offset = 0x1235;
	two->nstack = 0;
	CHECK(sb_stack_rows(two, runs, th, 2, real, &phases) == 0 && two->nstack == 2 &&
	      two->stack[1].slowdown_ppm == 1037037, "another site: by section");

	/* a slowdown below 1 still splits the cache out: cache 0 */
	t.slowdown = 0.95;
	CHECK(sb_stack_compute(&t, &s) == 0 && s.cache_known && s.cache == 0 &&
	      fabs(s.residual - (2 - 1 - s.memory - s.sync)) < 1e-9,
	      "slowdown 0.95: cache 0, residual %.3f", s.residual);
	real[1].held = 0;
	two->nstack = 0;
	CHECK(sb_stack_rows(two, runs, th, 2, real, &phases) == 0 && two->nstack == 2 &&
	      two->stack[1].pirate == SB_STACK_PIRATE_REAL && !two->stack[1].held &&
	      !two->stack[1].slowdown_ppm, "not held: real, discarded");
	t.slowdown = 0;
	CHECK(sb_stack_compute(&t, &s) == 0 && !s.cache_known, "discarded: cache not split");

	/* microseconds: no real pirate (none here: no cache profile) */
	scale(one, 0);
	one->instances[0].end_ns = 1000000;   /* x 3/2 stored: 1.5 ms, 0.75 a thread */
	one->sections[0].per_thread[0].wall_ns = 1000000;
	real[1].held = 1;
	two->nstack = 0;
	CHECK(sb_stack_rows(two, runs, th, 2, real, &phases) == 0 && two->nstack == 2 &&
	      two->stack[1].pirate == SB_STACK_PIRATE_NONE, "under 1 ms a thread: %u",
	      two->nstack == 2 ? two->stack[1].pirate : 99);
	sb_profile_free(one);
	sb_profile_free(two);
	sb_profile_free(fw);
}

/* Threads from 0 to 10 ms; instances [1, 3] and [2, 5] (nested:
 * overlapping, 4 ms together) and [7, 8]: 5 ms parallel, s = 0.5,
 * Amdahl 4/3 at 2 threads; a third instance of the first section not
 * stored: its section's mean span (1.5 ms) added. */
static void check_program(void)
{
	struct sb_profile *p = sb_profile_alloc();
	struct sb_thread th[2] = { { .tid = 1, .start_ns = 0, .end_ns = 9000000 },
				   { .tid = 2, .start_ns = 500000, .end_ns = 10000000 } };
	struct sb_loc l = { .addr = 0x401000, .binary = -1, .line = 3, .file = "x.c",
			    .function = "main" };
	struct sb_thread_time one = { 1, 1, 0, 1 };
	struct sb_section a = { .kind = SB_SECT_JOIN, .loc = 0, .ninstances = 2, .nthreads = 1,
				.per_thread = &one };
	struct sb_section b = a;
	struct sb_instance i0 = { .section = 0, .start_ns = 1000000, .end_ns = 3000000,
				  .nthreads = 1, .per_thread = &one };
	struct sb_instance i1 = { .section = 1, .start_ns = 2000000, .end_ns = 5000000,
				  .nthreads = 1, .per_thread = &one };
	struct sb_instance i2 = { .section = 0, .seq = 1, .start_ns = 7000000, .end_ns = 8000000,
				  .nthreads = 1, .per_thread = &one };
	uint64_t total = 0, par = 0;

	b.ninstances = 1;
	CHECK(sb_stack_program(p, &total, &par) == -EINVAL, "no threads: no program time");
	sb_profile_add_thread(p, &th[0]);
	sb_profile_add_thread(p, &th[1]);
	sb_profile_add_loc(p, &l);
	sb_profile_add_section(p, &a);
	sb_profile_add_section(p, &b);
	sb_profile_add_instance(p, &i0);
	sb_profile_add_instance(p, &i1);
	sb_profile_add_instance(p, &i2);
	CHECK(sb_stack_program(p, &total, &par) == 0 && total == 10000000 && par == 5000000,
	      "total %llu parallel %llu", (unsigned long long)total, (unsigned long long)par);
	CHECK_NEAR(sb_stack_amdahl(0.5, 2), 4.0 / 3, 1e-12);
	CHECK_NEAR(sb_stack_amdahl(0, 8), 8, 1e-12);
	CHECK_NEAR(sb_stack_amdahl(1, 8), 1, 1e-12);
	CHECK(sb_stack_amdahl(1.5, 2) == 0 && sb_stack_amdahl(0.5, 0) == 0, "out of range: 0");
	p->sections[0].ninstances = 3;
	CHECK(sb_stack_program(p, &total, &par) == 0 && par == 6500000,
	      "one unstored instance of a 1.5 ms mean: parallel %llu", (unsigned long long)par);
	sb_profile_free(p);
}

int main(void)
{
	check_program();
	check_real_rows();
	check_lock_samples();
	check_many_threads();
	check_rows();
	check_compute();
	check_times();
	check_pirate();
	check_match();
	return CHECK_DONE("test_stack");
}
