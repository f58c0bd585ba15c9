// SPDX-License-Identifier: MIT
/*
 * test_addrs: the reservoir of sampled addresses.  Its bound, exact
 * counts, uniformity of the kept set (chi-square over stream position),
 * the ADDRS chunk round trip, reference checks and instance assignment.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "addrs/addrs.h"
#include "check.h"
#include "profile/profile.h"

static char dir[] = "/tmp/sb_test_addrs.XXXXXX";

static struct sb_addr rec(uint64_t i)
{
	return (struct sb_addr){ .ts = 1000 + i, .ip = 0x401000 + (i % 7),
				 .addr = i, .tid = (uint32_t)(100 + i % 3), .loc = -1,
				 .instance = -1, .size = 8,
				 .flags = (uint8_t)(i % 5 == 0 ? SB_ADDR_SKID : 0) };
}

static void check_bound_and_counts(void)
{
	struct sb_addrs *r = sb_addrs_alloc(100, 1);
	struct sb_addrs_counts c;
	const struct sb_addr *k;
	uint64_t skid = 0;
	size_t n;
	bool distinct = true;
	char *seen = calloc(10000, 1);

	CHECK(r && seen, "alloc");
	if (!r || !seen)
		return;
	for (uint64_t i = 0; i < 10000; i++) {
		struct sb_addr a = rec(i);

		skid += (a.flags & SB_ADDR_SKID) != 0;
		sb_addrs_offer(r, &a);
		if (i % 4 == 0)
			sb_addrs_count(r, SB_ADDRS_UNDECODABLE);
		if (i % 10 == 0)
			sb_addrs_count(r, SB_ADDRS_NO_ACCESS);
		if (i % 100 == 0)
			sb_addrs_count(r, SB_ADDRS_NO_CODE);
		if (i == 99) {
			sb_addrs_kept(r, &n);
			CHECK(n == 100, "kept %zu of the first 100", n);
		}
	}
	sb_addrs_get_counts(r, &c);
	k = sb_addrs_kept(r, &n);
	CHECK(n == 100 && c.kept == 100 && c.capacity == 100, "bound: kept %zu (%" PRIu64
	      ") cap %" PRIu64, n, c.kept, c.capacity);
	CHECK(c.decoded == 10000 && c.undecodable == 2500 && c.no_access == 1000 &&
	      c.no_code == 100 && c.skid == skid, "counts: %" PRIu64 " %" PRIu64 " %"
	      PRIu64 " %" PRIu64 " skid %" PRIu64, c.decoded, c.undecodable, c.no_access,
	      c.no_code, c.skid);
	CHECK(c.samples == 13600 && c.samples == c.decoded + c.undecodable + c.no_access +
	      c.no_code, "samples %" PRIu64, c.samples);
	/* Kept records are offered ones, whole, each at most once. */
	for (size_t i = 0; i < n; i++) {
		struct sb_addr want = rec(k[i].addr);

		distinct &= k[i].addr < 10000 && !seen[k[i].addr] &&
			    !memcmp(&want, &k[i], sizeof(want));
		if (k[i].addr < 10000)
			seen[k[i].addr] = 1;
	}
	CHECK(distinct, "kept records are distinct offered records");
	free(seen);
	sb_addrs_free(r);
	r = sb_addrs_alloc(0, 1);
	if (r)
		sb_addrs_get_counts(r, &c);
	CHECK(r && c.capacity == SB_ADDRS_DEFAULT_CAP, "default capacity");
	sb_addrs_free(r);
}

/* Chi-square of the kept set's stream positions over 10 equal buckets.
 * Keeping the first or the last records, or favouring low slots, puts
 * all of them in one or two buckets: chi2 in the thousands. */
static double chi2_positions(uint64_t seed, size_t cap, uint64_t stream, size_t nb)
{
	struct sb_addrs *r = sb_addrs_alloc(cap, seed);
	double obs[16] = { 0 }, want = (double)cap / (double)nb, x2 = 0;
	const struct sb_addr *k;
	size_t n;

	for (uint64_t i = 0; i < stream; i++) {
		struct sb_addr a = rec(i);

		sb_addrs_offer(r, &a);
	}
	k = sb_addrs_kept(r, &n);
	for (size_t i = 0; i < n; i++)
		obs[k[i].addr * nb / stream] += 1;
	for (size_t b = 0; b < nb; b++)
		x2 += (obs[b] - want) * (obs[b] - want) / want;
	sb_addrs_free(r);
	return x2;
}

static void check_uniform(void)
{
	/* 9 degrees of freedom: P(chi2 > 27.88) = 0.001 for a uniform sample. */
	double x2 = chi2_positions(42, 2000, 200000, 10);
	int pass = 0;
	unsigned first = 0, last = 0;

	CHECK(x2 < 27.88, "chi2 %.2f over 10 position buckets", x2);
	/* Across seeds: most runs pass at the 1% level (21.67), as they must
	 * for a uniform sample (expect ~99 of 100). */
	for (uint64_t s = 1; s <= 100; s++)
		pass += chi2_positions(s * 7919, 500, 20000, 10) < 21.67;
	CHECK(pass >= 95, "%d of 100 seeds pass chi2 at 1%%", pass);
	/* Inclusion probability of the very first and last records: cap /
	 * stream = 0.1 each; over 1000 seeds expect 100 +- 30 (3 sigma). */
	for (uint64_t s = 1; s <= 1000; s++) {
		struct sb_addrs *r = sb_addrs_alloc(10, s);
		const struct sb_addr *k;
		size_t n;

		for (uint64_t i = 0; i < 100; i++) {
			struct sb_addr a = rec(i);

			sb_addrs_offer(r, &a);
		}
		k = sb_addrs_kept(r, &n);
		for (size_t i = 0; i < n; i++) {
			first += k[i].addr == 0;
			last += k[i].addr == 99;
		}
		sb_addrs_free(r);
	}
	CHECK(first >= 70 && first <= 130 && last >= 70 && last <= 130,
	      "first kept %u times, last %u times of 1000 (want ~100)", first, last);
}

/* A profile with a thread in two nested instances and one alone. */
static struct sb_profile *base_profile(void)
{
	struct sb_profile *p = sb_profile_alloc();
	struct sb_thread_time two[2] = { { 7, 1, 1, 1 }, { 8, 1, 1, 1 } }, one[1] = { { 9, 1, 1, 1 } };
	struct sb_loc l = { .addr = 0x401000, .binary = -1, .line = 3, .file = "x.c" };
	struct sb_section s = { .kind = SB_SECT_BARRIER, .loc = 0, .ninstances = 3,
				.nthreads = 2, .per_thread = two };
	struct sb_instance outer = { .section = 0, .seq = 0, .start_ns = 100, .end_ns = 1000,
				     .nthreads = 2, .per_thread = two };
	struct sb_instance inner = { .section = 0, .seq = 1, .start_ns = 400, .end_ns = 500,
				     .nthreads = 1, .per_thread = two };
	struct sb_instance other = { .section = 0, .seq = 2, .start_ns = 2000, .end_ns = 3000,
				     .nthreads = 1, .per_thread = one };

	sb_profile_meta_set(p, "tool", "test");
	sb_profile_add_loc(p, &l);
	sb_profile_add_section(p, &s);
	sb_profile_add_instance(p, &outer);
	sb_profile_add_instance(p, &inner);
	sb_profile_add_instance(p, &other);
	return p;
}

static void check_profile(void)
{
	static const struct { uint64_t ts; uint32_t tid; int32_t want; } cases[] = {
		{ 150, 7, 0 }, { 450, 7, 1 }, { 450, 8, 0 }, { 600, 7, 0 }, { 1000, 8, 0 },
		{ 1001, 7, -1 }, { 50, 7, -1 }, { 2500, 9, 2 }, { 2500, 7, -1 }, { 450, 9, -1 },
	};
	const size_t nc = sizeof(cases) / sizeof(cases[0]);
	struct sb_addrs *r = sb_addrs_alloc(64, 3);
	struct sb_profile *p = base_profile(), *q = NULL;
	struct sb_addrs_counts c, c2;
	char path[256], err[256];
	bool sorted = true, same = true;

	for (size_t i = nc; i-- > 0;) {   /* offered in reverse time order */
		struct sb_addr a = { .ts = cases[i].ts, .tid = cases[i].tid,
				     .ip = 0x401000 + i, .addr = 0x7f0000000000ull + i,
				     .loc = (int32_t)(i % 2) - 1, .size = (uint8_t)(1u << (i % 5)),
				     .flags = SB_ADDR_STORE, .instance = -1 };

		sb_addrs_offer(r, &a);
	}
	sb_addrs_count(r, SB_ADDRS_UNDECODABLE);
	CHECK(sb_addrs_counts_read(p, &c) == -1, "no counts before store");
	CHECK(sb_addrs_store(r, p) == 0 && p->naddrs == nc, "store: %zu", p->naddrs);
	CHECK(sb_addrs_store(r, p) == -1, "second store refused");
	CHECK(sb_addrs_assign_instances(p) == 0, "assign");
	for (size_t i = 0; i < p->naddrs; i++) {
		const struct sb_addr *a = &p->addrs[i];

		sorted &= !i || p->addrs[i - 1].ts <= a->ts;
		for (size_t k = 0; k < nc; k++)
			if (cases[k].ts == a->ts && cases[k].tid == a->tid)
				CHECK(a->instance == cases[k].want, "ts %" PRIu64 " tid %u: "
				      "instance %d want %d", a->ts, a->tid, a->instance,
				      cases[k].want);
	}
	CHECK(sorted, "stored records sorted by time");
	snprintf(path, sizeof(path), "%s/a.sbp", dir);
	CHECK(sb_profile_write(p, path, err, sizeof(err)) == 0, "write: %s", err);
	CHECK(sb_profile_read(path, &q, err, sizeof(err)) == 0, "read: %s", err);
	sb_addrs_get_counts(r, &c);
	if (q) {
		CHECK(q->naddrs == p->naddrs, "round trip: %zu records", q->naddrs);
		for (size_t i = 0; i < q->naddrs && q->naddrs == p->naddrs; i++)
			same &= !memcmp(&q->addrs[i], &p->addrs[i], sizeof(q->addrs[i]));
		CHECK(same, "round trip: records equal");
		CHECK(sb_addrs_counts_read(q, &c2) == 0 && !memcmp(&c, &c2, sizeof(c)) &&
		      c2.undecodable == 1 && c2.decoded == nc && c2.samples == nc + 1,
		      "round trip: counts");
		sb_profile_free(q);
	}
	/* A bad reference is refused by the writer, before anything is written. */
	p->addrs[0].loc = 5;
	CHECK(sb_profile_write(p, path, err, sizeof(err)) != 0 && strstr(err, "loc 5"),
	      "bad loc refused: %s", err);
	p->addrs[0].loc = -1;
	p->addrs[1].instance = 3;
	CHECK(sb_profile_write(p, path, err, sizeof(err)) != 0 && strstr(err, "instance 3"),
	      "bad instance refused: %s", err);
	unlink(path);
	sb_profile_free(p);
	sb_addrs_free(r);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	check_bound_and_counts();
	check_uniform();
	check_profile();
	rmdir(dir);
	return CHECK_DONE("test_addrs");
}
