// SPDX-License-Identifier: MIT
/*
 * The probes' outcomes by section (analysis/chip/chip_probes.c):
 *   - the reservoir keeps every outcome up to its cap, then a uniform
 *     sample: over 2000 logs of 100 outcomes into 10 places, each outcome
 *     is kept ~200 times (binomial: within 4 standard deviations of 13.4),
 *     and the first and last alike;
 *   - attribution against hand-made instances: a window inside one
 *     instance is its section's, the inner one where instances nest; a
 *     window that ends in another instance, outside every instance, in
 *     another thread's instance only, or running backwards is none's;
 *   - grouping: sections ascending, then --region functions (a window
 *     inside one of the function's calls in its thread, whatever the
 *     sections), each with its outcomes' indices and distinct threads,
 *     the in/out counts and their metadata; another log's weights
 *     (sampled accesses) as shares of those groups.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "chip/chip_probes.h"
#include "profile/profile.h"

static void check_reservoir(void)
{
	unsigned kept[100] = { 0 };
	unsigned lo = ~0u, hi = 0;
	bool all = true;

	{
		struct sb_chip_plog *l = sb_chip_plog_alloc(1000, 1);
		const struct sb_chip_pout *v;
		size_t n;

		for (uint32_t i = 0; i < 600; i++) {
			struct sb_chip_pout o = { .start = i, .end = i + 1, .tid = i, .value = i };

			CHECK(sb_chip_plog_add(l, &o) == 0, "add %u", i);
		}
		v = sb_chip_plog_kept(l, &n);
		for (size_t i = 0; i < n; i++)
			all &= v[i].value == i;
		CHECK(n == 600 && all && sb_chip_plog_seen(l) == 600,
		      "below its cap every outcome is kept in order: %zu", n);
		sb_chip_plog_free(l);
	}
	for (uint64_t run = 0; run < 2000; run++) {
		struct sb_chip_plog *l = sb_chip_plog_alloc(10, run * 7919 + 1);
		const struct sb_chip_pout *v;
		size_t n;

		for (uint32_t i = 0; i < 100; i++) {
			struct sb_chip_pout o = { .value = i };

			sb_chip_plog_add(l, &o);
		}
		v = sb_chip_plog_kept(l, &n);
		if (n != 10 || sb_chip_plog_seen(l) != 100)
			all = false;
		for (size_t i = 0; i < n; i++)
			kept[v[i].value]++;
		sb_chip_plog_free(l);
	}
	for (int i = 0; i < 100; i++) {
		lo = kept[i] < lo ? kept[i] : lo;
		hi = kept[i] > hi ? kept[i] : hi;
	}
	CHECK(all, "past the cap 10 kept of 100 seen");
	CHECK(lo >= 146 && hi <= 254, "each outcome kept 200 +- 54 times of 2000: %u..%u "
	      "(first %u, last %u)", lo, hi, kept[0], kept[99]);
	CHECK(sb_chip_plog_kept(NULL, &(size_t){ 1 }) == NULL && sb_chip_plog_seen(NULL) == 0,
	      "no log: nothing kept");
}

/* Sections 0 and 1; thread 7 in an outer instance of 0 with an inner
 * one of 1, thread 9 alone in a later instance of 0. */
static struct sb_profile *profile_of_instances(void)
{
	struct sb_profile *p = sb_profile_alloc();
	struct sb_thread_time seven[1] = { { 7, 1, 1, 1 } }, nine[1] = { { 9, 1, 1, 1 } };
	struct sb_loc l = { .addr = 0x401000, .binary = -1, .line = 3, .file = "x.c" };
	struct sb_section s = { .kind = SB_SECT_BARRIER, .loc = 0, .ninstances = 2,
				.nthreads = 1, .per_thread = seven };
	struct sb_instance outer = { .section = 0, .seq = 0, .start_ns = 100, .end_ns = 1000,
				     .nthreads = 1, .per_thread = seven };
	struct sb_instance inner = { .section = 1, .seq = 0, .start_ns = 400, .end_ns = 500,
				     .nthreads = 1, .per_thread = seven };
	struct sb_instance later = { .section = 0, .seq = 1, .start_ns = 2000, .end_ns = 3000,
				     .nthreads = 1, .per_thread = nine };

	sb_profile_meta_set(p, "tool", "test");
	sb_profile_add_loc(p, &l);
	sb_profile_add_section(p, &s);
	sb_profile_add_section(p, &s);
	sb_profile_add_instance(p, &outer);
	sb_profile_add_instance(p, &inner);
	sb_profile_add_instance(p, &later);
	return p;
}

static void check_sections(void)
{
	static const struct { uint64_t start, end; uint32_t tid, want; } cases[] = {
		{ 150, 350, 7, 0 },            /* inside the outer */
		{ 410, 490, 7, 1 },            /* inside the inner */
		{ 150, 450, 7, UINT32_MAX },   /* outer into inner */
		{ 450, 600, 7, UINT32_MAX },   /* inner out to the outer */
		{ 900, 1100, 7, UINT32_MAX },  /* past the outer's end */
		{ 50, 90, 7, UINT32_MAX },     /* before everything */
		{ 2100, 2900, 9, 0 },          /* the later one */
		{ 2100, 2900, 7, UINT32_MAX }, /* 9's, not 7's */
		{ 700, 600, 7, UINT32_MAX },   /* backwards */
		{ 1000, 1000, 7, 0 },          /* at the end, inclusive */
	};
	const size_t nc = sizeof(cases) / sizeof(cases[0]);
	struct sb_chip_plog *l = sb_chip_plog_alloc(0, 1);
	struct sb_profile *p = profile_of_instances(), *empty = sb_profile_alloc();
	uint32_t sec[16];
	bool right = true;

	for (size_t i = 0; i < nc; i++) {
		struct sb_chip_pout o = { .start = cases[i].start, .end = cases[i].end,
					  .tid = cases[i].tid, .value = i };

		sb_chip_plog_add(l, &o);
	}
	CHECK(sb_chip_plog_sections(l, p, sec) == 0, "sections");
	for (size_t i = 0; i < nc; i++)
		if (sec[i] != cases[i].want) {
			right = false;
			printf("    case %zu [%llu, %llu] tid %u: section %u, want %u\n", i,
			       (unsigned long long)cases[i].start, (unsigned long long)cases[i].end,
			       cases[i].tid, sec[i], cases[i].want);
		}
	CHECK(right, "each window in the section whose instance holds both its ends");
	memset(sec, 0, sizeof(sec));
	CHECK(sb_chip_plog_sections(l, empty, sec) == 0 && sec[0] == UINT32_MAX &&
	      sec[nc - 1] == UINT32_MAX, "no instances: no section");
	sb_profile_free(p);
	sb_profile_free(empty);
	sb_chip_plog_free(l);
}

/* Two threads' windows in profile_of_instances: thread 7 in section 0
 * (twice) and 1, thread 9 in 0, two in none; and in two functions'
 * calls: function 3's of thread 7 over [140, 480] and [590, 720],
 * function 1's of thread 9 over [2000, 3000] and of thread 7 over
 * [40, 100] (holding the window [50, 90] outside every section). */
static void check_group(void)
{
	static const struct { uint64_t start, end; uint32_t tid; } w[] = {
		{ 150, 350, 7 }, { 2100, 2900, 9 }, { 410, 490, 7 },
		{ 50, 90, 7 }, { 600, 700, 7 }, { 150, 450, 7 },
	};
	static const struct sb_chip_span spans[] = {
		{ 7, 3, 590, 720 }, { 9, 1, 2000, 3000 }, { 7, 3, 140, 480 }, { 7, 1, 40, 100 },
	};
	struct sb_chip_plog *l = sb_chip_plog_alloc(0, 1);
	struct sb_profile *p = profile_of_instances();
	struct sb_chip_groups g;
	bool ok;

	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++)
		sb_chip_plog_add(l, &(struct sb_chip_pout){ .start = w[i].start, .end = w[i].end,
							    .tid = w[i].tid });
	CHECK(sb_chip_groups_build(&g, l, p, NULL, 0) == 0, "group");
	ok = g.n == 2 && g.id[0] == 0 && g.id[1] == 1 && g.in == 4 && g.out == 2 &&
	     g.kind[0] == SB_CHIP_KIND_SECTION && g.kind[1] == SB_CHIP_KIND_SECTION &&
	     g.first[0] == 0 && g.first[1] == 3 && g.first[2] == 4 &&
	     g.threads[0] == 2 && g.threads[1] == 1 && g.order[3] == 2;
	CHECK(ok, "section 0: outcomes 0, 1, 4 of threads 7 and 9; section 1: outcome 2");
	if (ok) {
		bool in0 = true;

		for (size_t i = 0; i < 3; i++)
			in0 &= g.order[i] == 0 || g.order[i] == 1 || g.order[i] == 4;
		CHECK(in0, "section 0's indices");
	}
	sb_chip_groups_free(&g);
	CHECK(g.n == 0 && !g.kind, "freed and emptied");

	/* with the functions: sections first, then function 1 (outcomes 1
	 * and 3, two threads), function 3 (0, 4, 5: [150, 450] lies in
	 * [140, 480] though it crosses two sections; [410, 490] ends after it) */
	CHECK(sb_chip_groups_build(&g, l, p, spans, 4) == 0, "group with functions");
	ok = g.n == 4 && g.kind[2] == SB_CHIP_KIND_FUNCTION && g.id[2] == 1 &&
	     g.kind[3] == SB_CHIP_KIND_FUNCTION && g.id[3] == 3 &&
	     g.first[2] == 4 && g.first[3] == 6 && g.first[4] == 9 &&
	     g.threads[2] == 2 && g.threads[3] == 1 && g.in == 4 && g.out == 2;
	CHECK(ok, "two function groups after the sections: n %zu", g.n);
	if (ok) {
		unsigned mask1 = 0, mask3 = 0;

		for (size_t i = g.first[2]; i < g.first[3]; i++)
			mask1 |= 1u << g.order[i];
		for (size_t i = g.first[3]; i < g.first[4]; i++)
			mask3 |= 1u << g.order[i];
		CHECK(mask1 == 0x0a && mask3 == 0x31, "function 1: outcomes 1, 3 (%#x); "
		      "function 3: 0, 4, 5 (%#x)", mask1, mask3);
	}
	{
		/* accesses of weight 1 in section 0 and function 3, 3 in 1 and
		 * 3, 4 in none (thread 9 at 450) */
		struct sb_chip_plog *a = sb_chip_plog_alloc(0, 2);
		double share[4];

		sb_chip_plog_add(a, &(struct sb_chip_pout){ .start = 200, .end = 200, .tid = 7,
							    .weight = 1 });
		sb_chip_plog_add(a, &(struct sb_chip_pout){ .start = 450, .end = 450, .tid = 7,
							    .weight = 3 });
		sb_chip_plog_add(a, &(struct sb_chip_pout){ .start = 450, .end = 450, .tid = 9,
							    .weight = 4 });
		CHECK(sb_chip_groups_weights(&g, a, p, spans, 4, share) == 0 &&
		      fabs(share[0] - 0.125) < 1e-12 && fabs(share[1] - 0.375) < 1e-12 &&
		      share[2] == 0 && fabs(share[3] - 0.5) < 1e-12,
		      "weights: %g, %g, %g, %g of all (want 1/8, 3/8, 0, 1/2)", share[0], share[1],
		      share[2], share[3]);
		sb_chip_plog_free(a);
	}
	{
		struct sb_chip_row row;

		sb_chip_groups_row(&g, 1, &row);
		ok = row.kind == SB_CHIP_KIND_SECTION && row.section == 1 && row.region == 0;
		sb_chip_groups_row(&g, 3, &row);
		CHECK(ok && row.kind == SB_CHIP_KIND_FUNCTION && row.region == 3 &&
		      row.section == UINT32_MAX, "rows: a section's, a function's");
	}
	sb_chip_groups_meta(&g, l, "chip_t", p);
	CHECK(sb_profile_meta_get_u64(p, "chip_t_section_probes") == 4 &&
	      sb_profile_meta_get_u64(p, "chip_t_section_probes_none") == 2 &&
	      !strcmp(sb_profile_meta_get(p, "chip_t_probes_kept"), "6/6"), "metadata");
	sb_chip_groups_free(&g);
	sb_profile_free(p);
	sb_chip_plog_free(l);
}

int main(void)
{
	check_reservoir();
	check_sections();
	check_group();
	return CHECK_DONE("test_chip_probes");
}
