// SPDX-License-Identifier: MIT
/*
 * The hardware path's LBR/PEBS parsing (user/hw/lbr_pebs.c) and aggregation
 * (user/hw/hwagg.c), fed with fixture bytes from tests/unit/hw/fixtures/.
 * No PMU exists on the machines this runs on, so the fixtures are
 * constructed to the record layouts and the kernel's PERF_RECORD_SAMPLE
 * ABI (fixtures/mkhw.py), not captured on hardware; the expected values
 * below are written out by hand from the scenario each fixture describes.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "loc_test.h"
#include "sbpf_keys.h"
#include "hw/hwagg.h"
#include "hw/lbr_pebs.h"
#include "coherence/coherence.h"
#include "binary/procmaps.h"
#include "profile/profile.h"

#define LOOP_BR 0x40112eull
#define LOOP_TOP 0x401110ull

/* Reads a .hex fixture (bytes in hex, '#' comments) next to this file. */
static unsigned char *fixture(const char *name, size_t *len)
{
	const char *dir = getenv("SB_FIXTURES");
	char path[512], line[512];
	unsigned char *buf = NULL;
	size_t n = 0, cap = 0;
	FILE *f;

	if (!dir) {
		const char *slash = strrchr(__FILE__, '/');

		snprintf(path, sizeof(path), "%.*s/fixtures/%s",
			 slash ? (int)(slash - __FILE__) : 1, slash ? __FILE__ : ".", name);
	} else {
		snprintf(path, sizeof(path), "%s/%s", dir, name);
	}
	if (!(f = fopen(path, "r"))) {
		fprintf(stderr, "cannot open fixture %s\n", path);
		exit(2);
	}
	while (fgets(line, sizeof(line), f)) {
		char *p = line, *end;

		if (*p == '#')
			continue;
		for (;;) {
			unsigned long v = strtoul(p, &end, 16);

			if (end == p)
				break;
			if (n == cap) {
				cap = cap ? cap * 2 : 1024;
				buf = realloc(buf, cap);
				if (!buf)
					exit(2);
			}
			buf[n++] = (unsigned char)v;
			p = end;
		}
	}
	fclose(f);
	*len = n;
	return buf;
}

static void test_layouts(void)
{
	/* The BPF program writes perf_branch_entry records straight into
	 * sb_branch: the two must have one layout. */
	CHECK(sizeof(struct sb_branch) == sizeof(struct perf_branch_entry), "%zu",
	      sizeof(struct sb_branch));
	CHECK(sizeof(struct sb_rec_lbr) == 16 + 16 + 24 * SB_LBR_MAX, "%zu",
	      sizeof(struct sb_rec_lbr));
	CHECK(sizeof(struct sb_rec_load) == 56, "%zu", sizeof(struct sb_rec_load));
}

static void test_lbr_record(void)
{
	size_t len;
	unsigned char *b = fixture("lbr_loop.hex", &len);
	const struct sb_rec_lbr *r = sb_hw_lbr_check(b, len);
	struct sb_hw_branch br;
	uint64_t s = 0, e = 0;
	int ok = 0;

	CHECK(len == sizeof(struct sb_rec_lbr), "fixture is %zu bytes", len);
	CHECK(r != NULL, "well-formed LBR record rejected");
	if (!r) {
		free(b);
		return;
	}
	CHECK(r->nr == 8 && r->hdr.tid == 1001 && r->ip == 0x401305, "nr %u tid %u", r->nr,
	      r->hdr.tid);
	sb_hw_branch_unpack(&r->br[0], &br);
	CHECK(br.from == 0x401210 && br.to == 0x401300 && br.cycles == 12 && br.type == 2 &&
	      !br.mispred, "call: %llx->%llx cycles %u type %u", (unsigned long long)br.from,
	      (unsigned long long)br.to, br.cycles, br.type);
	sb_hw_branch_unpack(&r->br[1], &br);
	CHECK(br.mispred && !br.predicted && br.cycles == 40, "jmp: mispred %d cycles %u",
	      br.mispred, br.cycles);
	sb_hw_branch_unpack(&r->br[4], &br);
	CHECK(br.from == LOOP_BR && br.to == LOOP_TOP && br.predicted && br.cycles == 7,
	      "loop branch");
	/* Straight-line code between consecutive branches. */
	CHECK(!sb_hw_lbr_range(r, 0, &s, &e) && s == 0x401200 && e == 0x401210,
	      "range 0: %llx..%llx", (unsigned long long)s, (unsigned long long)e);
	CHECK(!sb_hw_lbr_range(r, 1, &s, &e) && s == LOOP_TOP && e == 0x401140,
	      "range 1 (last iteration, then the fall-through): %llx..%llx",
	      (unsigned long long)s, (unsigned long long)e);
	for (uint32_t i = 0; i + 1 < r->nr; i++)
		ok += !sb_hw_lbr_range(r, i, &s, &e);
	CHECK(ok == 7, "%d consistent ranges of 7", ok);
	CHECK(sb_hw_lbr_range(r, 7, &s, &e) == -1, "no range after the oldest entry");

	/* Rejections: truncated, wrong size field, too many entries, wrong type. */
	CHECK(!sb_hw_lbr_check(b, len - 1), "truncated record accepted");
	((struct sb_rec_lbr *)b)->hdr.size -= 8;
	CHECK(!sb_hw_lbr_check(b, len), "wrong hdr.size accepted");
	((struct sb_rec_lbr *)b)->hdr.size += 8;
	((struct sb_rec_lbr *)b)->nr = SB_LBR_MAX + 1;
	CHECK(!sb_hw_lbr_check(b, len), "nr > SB_LBR_MAX accepted");
	((struct sb_rec_lbr *)b)->nr = 8;
	((struct sb_rec_lbr *)b)->hdr.type = SB_REC_LOAD;
	CHECK(!sb_hw_lbr_check(b, len), "load type accepted as LBR");
	free(b);
}

static void test_data_src(void)
{
	struct sb_mem_src m;

	/* 0 is "not filled in": nothing known. */
	sb_hw_data_src(0, &m);
	CHECK(m.level == SB_MEM_UNKNOWN && !m.load && !m.hit, "level %u", m.level);
	/* PERF_MEM_S(LVLNUM, L2) alone, as AMD and newer Intel report. */
	sb_hw_data_src((uint64_t)PERF_MEM_LVLNUM_L2 << PERF_MEM_LVLNUM_SHIFT |
		       (uint64_t)PERF_MEM_OP_LOAD << PERF_MEM_OP_SHIFT, &m);
	CHECK(m.level == SB_MEM_L2 && m.load, "level %u", m.level);
	CHECK(!strcmp(sb_mem_level_name(SB_MEM_REMOTE_DRAM), "remote DRAM") &&
	      !strcmp(sb_mem_level_name(99), "unknown"), "level names");
}

/* Walks a stream of records as the ring-buffer consumer would. */
static void test_loads(struct sb_hwagg *a)
{
	static const struct {
		uint64_t ip, addr, weight;
		unsigned level;
		uint32_t flags;
	} want[] = {
		{ 0x401234, 0x7f0000001000, 250, SB_MEM_DRAM, 7 },
		{ 0x401234, 0x7f0000001040, 30, SB_MEM_L3, 7 },
		{ 0x401260, 0x7f0000002000, 4, SB_MEM_L1, 7 },
		{ 0x401280, 0x7f0000003000, 600, SB_MEM_REMOTE_DRAM, 7 },
		{ 0x401290, 0x7f0000004000, 0, SB_MEM_UNKNOWN, SB_LOAD_HAVE_ADDR },
	};
	size_t len, off = 0, k = 0;
	unsigned char *b = fixture("loads.hex", &len);
	const struct sb_hw_loadip *x;
	struct sb_hw_load l;
	char sum[512];

	while (off + sizeof(struct sb_rec_hdr) <= len && k < 5) {
		const struct sb_rec_hdr *h = (const void *)(b + off);
		int ret = sb_hw_load_decode(b + off, len - off, &l);

		CHECK(ret == 0, "load %zu rejected", k);
		CHECK(l.ip == want[k].ip && l.addr == want[k].addr && l.weight == want[k].weight &&
		      l.src.level == want[k].level && l.flags == want[k].flags,
		      "load %zu: ip %llx addr %llx weight %llu level %s flags %u", k,
		      (unsigned long long)l.ip, (unsigned long long)l.addr,
		      (unsigned long long)l.weight, sb_mem_level_name(l.src.level), l.flags);
		if (k == 0)
			CHECK(l.src.load && l.src.hit && l.src.tlb_hit && !l.src.remote,
			      "DRAM load flags");
		if (k == 3)
			CHECK(l.src.remote && l.src.snoop_hitm && l.src.locked && l.src.tlb_miss &&
			      l.src.miss, "remote load flags");
		CHECK(sb_hwagg_record(a, NULL, b + off, len - off) == 0, "aggregate load %zu", k);
		off += h->size;
		k++;
	}
	CHECK(k == 5 && off == len, "%zu records, %zu of %zu bytes", k, off, len);

	x = sb_hwagg_load(a, 0x401234);
	CHECK(x && x->samples == 2 && x->weighted == 2 && x->weight_sum == 280 &&
	      x->weight_max == 250 && x->levels[SB_MEM_DRAM] == 1 && x->levels[SB_MEM_L3] == 1,
	      "loads at 0x401234");
	x = sb_hwagg_load(a, 0x401290);
	CHECK(x && x->samples == 1 && x->weighted == 0 && x->levels[SB_MEM_UNKNOWN] == 1,
	      "address-only load");
	CHECK(!sb_hwagg_load(a, 0x401235), "no loads at 0x401235");
	sb_hwagg_loads_summary(a, 2, sum, sizeof(sum));
	CHECK(!strncmp(sum, "0x401234: 2 samples, mean 140 cycles, L3 50%; 0x401260: 1 samples, "
		       "mean 4 cycles, L1 100%", 200), "summary: %s", sum);

	/* Rejections: truncated, unknown flag bits. */
	CHECK(sb_hw_load_decode(b, sizeof(struct sb_rec_load) - 1, &l) == -1, "truncated load");
	((struct sb_rec_load *)b)->flags |= 0x100;
	CHECK(sb_hw_load_decode(b, len, &l) == -1, "unknown load flag bits accepted");
	free(b);
}

static void test_lbr_aggregate(struct sb_hwagg *a)
{
	size_t len1, len2;
	unsigned char *b1 = fixture("lbr_loop.hex", &len1);
	unsigned char *b2 = fixture("lbr_kernel.hex", &len2);
	struct sb_hwagg_stats st;
	const struct sb_hw_edge *e;
	uint64_t key;

	CHECK(sb_hwagg_record(a, NULL, b1, len1) == 0, "loop record");
	CHECK(sb_hwagg_record(a, NULL, b2, len2) == 0, "kernel record");
	key = sb_hwagg_edge_key(a, LOOP_BR, LOOP_TOP);
	e = sb_hwagg_edge(a, key);
	CHECK(e && e->count == 5 && e->cycles_sum == 35 && e->cycles_n == 5 && !e->mispred,
	      "loop back edge: count %llu", e ? (unsigned long long)e->count : 0ull);
	e = sb_hwagg_edge(a, sb_hwagg_edge_key(a, 0x401140, 0x401200));
	CHECK(e && e->count == 1 && e->mispred == 1, "jump out of the loop");
	e = sb_hwagg_edge(a, sb_hwagg_edge_key(a, 0x401500, 0x401600));
	CHECK(e && e->count == 1, "user edge after a kernel entry");
	sb_hwagg_get_stats(a, &st);
	/* 4 distinct user edges in the loop record, 2 in the other, and the
	 * two lookups above of edges that exist add none. */
	CHECK(st.edges == 6 && st.branches == 11 && st.branches_kernel == 1, "edges %llu "
	      "branches %llu kernel %llu", (unsigned long long)st.edges,
	      (unsigned long long)st.branches, (unsigned long long)st.branches_kernel);
	CHECK(st.ranges == 7 && st.ranges_bad == 2, "ranges %llu bad %llu",
	      (unsigned long long)st.ranges, (unsigned long long)st.ranges_bad);
	CHECK(st.lbr_records == 2 && st.bad_records == 0, "records");

	/* Unknown type, truncated, and a record too short for a header:
	 * rejected and counted. */
	((struct sb_rec_hdr *)b2)->type = 99;
	CHECK(sb_hwagg_record(a, NULL, b2, len2) == -1, "unknown type accepted");
	CHECK(sb_hwagg_record(a, NULL, b1, len1 - 8) == -1, "truncated accepted");
	CHECK(sb_hwagg_record(a, NULL, b1, 4) == -1, "4-byte record accepted");
	sb_hwagg_get_stats(a, &st);
	CHECK(st.bad_records == 3 && st.lbr_records == 2, "bad %llu",
	      (unsigned long long)st.bad_records);
	free(b1);
	free(b2);
}

static void test_keys(struct sb_hwagg *a)
{
	uint64_t k1 = sb_hwagg_edge_key(a, 0x1000, 0x2000);
	uint64_t k2 = sb_hwagg_edge_key(a, 0x1000, 0x2000);
	uint64_t k3 = sb_hwagg_edge_key(a, 0x2000, 0x1000);

	CHECK(k1 && k1 == k2 && k1 != k3, "edge keys: one per (from, to)");
	CHECK(sb_hwagg_is_key(k1) && sb_hwagg_is_key(SB_KEY_LOAD | 0x401234), "hw keys");
	/* Sampled IPs and call-site keys are not ours. */
	CHECK(!sb_hwagg_is_key(0x401234) && !sb_hwagg_is_key(SB_KEY_CALLSITE | 0x401234) &&
	      !sb_hwagg_is_key(0x7fffffffffffull), "foreign keys");
	CHECK(!sb_hwagg_edge(a, SB_KEY_EDGE | 100000) && !sb_hwagg_edge(a, 0x401234),
	      "edge of a key that names none");
}

static void test_perf_samples(struct sb_hwagg *a)
{
	const uint64_t bst = PERF_SAMPLE_BRANCH_USER | PERF_SAMPLE_BRANCH_ANY |
			     PERF_SAMPLE_BRANCH_HW_INDEX;
	const uint64_t st_lbr = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
				PERF_SAMPLE_BRANCH_STACK;
	const uint64_t st_load = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
				 PERF_SAMPLE_ADDR | PERF_SAMPLE_WEIGHT_STRUCT |
				 PERF_SAMPLE_DATA_SRC;
	size_t len1, len2;
	unsigned char *b1 = fixture("perf_lbr.hex", &len1);
	unsigned char *b2 = fixture("perf_load.hex", &len2);
	struct sb_rec_lbr lbr;
	struct sb_rec_load load;
	struct sb_hw_branch br;
	struct sb_hw_load l;
	uint64_t s = 0, e = 0;

	CHECK(sb_hw_perf_sample_to_rec(b1, len1, st_lbr, bst, &lbr, &load) == SB_REC_LBR,
	      "raw LBR sample");
	CHECK(lbr.nr == 3 && lbr.hdr.tid == 4243 && lbr.hdr.ts == 123456789 &&
	      lbr.ip == 0x401705 && sb_hw_lbr_check(&lbr, sizeof(lbr)), "raw LBR fields");
	sb_hw_branch_unpack(&lbr.br[0], &br);
	CHECK(br.from == 0x401700 && br.to == 0x401650 && br.cycles == 9, "raw branch 0");
	sb_hw_branch_unpack(&lbr.br[1], &br);
	CHECK(br.from == 0x401680 && br.to == 0x401690 && br.mispred, "raw branch 1");
	CHECK(!sb_hw_lbr_range(&lbr, 0, &s, &e) && s == 0x401690 && e == 0x401700,
	      "raw range 0");
	CHECK(sb_hwagg_record(a, NULL, &lbr, sizeof(lbr)) == 0 &&
	      sb_hwagg_edge(a, sb_hwagg_edge_key(a, 0x401640, 0x401600))->count == 1,
	      "raw LBR sample aggregated like a BPF record");
	/* Without HW_INDEX the layout differs: the sample must not parse. */
	CHECK(sb_hw_perf_sample_to_rec(b1, len1, st_lbr, bst & ~(uint64_t)
				       PERF_SAMPLE_BRANCH_HW_INDEX, &lbr, &load) == -1,
	      "HW_INDEX mismatch accepted");

	CHECK(sb_hw_perf_sample_to_rec(b2, len2, st_load, 0, &lbr, &load) == SB_REC_LOAD,
	      "raw load sample");
	CHECK(sb_hw_load_decode(&load, sizeof(load), &l) == 0, "converted load decodes");
	/* WEIGHT_STRUCT: latency is var1_dw only (45), not the whole u64. */
	CHECK(l.ip == 0x401800 && l.addr == 0x7f00000050c0ull && l.weight == 45 &&
	      l.src.level == SB_MEM_L3 && l.src.hit && l.tid == 4244 && l.flags == 7,
	      "raw load: ip %llx addr %llx weight %llu level %s", (unsigned long long)l.ip,
	      (unsigned long long)l.addr, (unsigned long long)l.weight,
	      sb_mem_level_name(l.src.level));
	/* Truncated, a header longer than the buffer, unsupported fields,
	 * and a sample_type that does not match the bytes. */
	CHECK(sb_hw_perf_sample_to_rec(b2, len2 - 8, st_load, 0, &lbr, &load) == -1,
	      "truncated raw sample");
	CHECK(sb_hw_perf_sample_to_rec(b2, 6, st_load, 0, &lbr, &load) == -1, "6 bytes");
	CHECK(sb_hw_perf_sample_to_rec(b2, len2, st_load | PERF_SAMPLE_CALLCHAIN, 0, &lbr,
				       &load) == -EINVAL, "callchain not supported");
	CHECK(sb_hw_perf_sample_to_rec(b2, len2, st_load & ~(uint64_t)PERF_SAMPLE_ADDR, 0,
				       &lbr, &load) == -1, "sample_type mismatch accepted");
	((struct perf_event_header *)b2)->type = PERF_RECORD_LOST;
	CHECK(sb_hw_perf_sample_to_rec(b2, len2, st_load, 0, &lbr, &load) == -1,
	      "PERF_RECORD_LOST taken for a sample");
	free(b1);
	free(b2);
}

/* Profile events of edge and load keys, with real addresses of this
 * test binary and of libc, resolved through this process's mappings. */
static struct sb_profile *loc_profile;
static long fake_loc(void *ctx, uint64_t addr)
{
	struct sb_loc l = { .addr = addr, .binary = 0 };

	(void)ctx;
	return sb_profile_add_loc(loc_profile, &l);
}

__attribute__((noinline)) static int edge_src(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline)) static int edge_dst(int x)
{
	return x * 5 + 2;
}

static void test_events(void)
{
	struct sb_hwagg *a = sb_hwagg_alloc();
	struct sb_maps *m = sb_maps_alloc();
	struct sb_profile *p = sb_profile_alloc();
	uint64_t from = (uint64_t)(uintptr_t)&edge_src, to = (uint64_t)(uintptr_t)&edge_dst;
	uint64_t libc = (uint64_t)(uintptr_t)&fclose;
	struct sb_hwagg_stats st;
	long e1, e2, e3, e4;

	if (!a || !m || !p || sb_maps_refresh(m, getpid())) {
		CHECK(0, "setup");
		goto out;
	}
	loc_profile = p;
	sb_profile_add_binary(p, "self", NULL);
	e1 = sb_hwagg_event(a, m, p, fake_loc, NULL, sb_hwagg_edge_key(a, from, to), 1);
	CHECK(e1 >= 0 && p->events[e1].kind == SB_EVK_EDGE, "edge event %ld", e1);
	if (e1 >= 0) {
		const struct sb_event_def *d = &p->events[e1];

		/* Binary addresses keep the distance of the runtime ones. */
		CHECK(d->vaddr2 - d->vaddr == to - from && d->loc >= 0 && d->loc2 >= 0 &&
		      p->locs[d->loc].addr == from && p->locs[d->loc2].addr == to,
		      "edge vaddrs %llx -> %llx", (unsigned long long)d->vaddr,
		      (unsigned long long)d->vaddr2);
	}
	e2 = sb_hwagg_event(a, m, p, fake_loc, NULL, sb_hwagg_edge_key(a, from, to), 1);
	CHECK(e2 == e1 && p->nevents == 1, "one event per key");
	e3 = sb_hwagg_event(a, m, p, fake_loc, NULL, SB_KEY_LOAD | to, 1);
	CHECK(e3 >= 0 && e3 != e1 && p->events[e3].kind == SB_EVK_HW &&
	      p->events[e3].vaddr == p->events[e1].vaddr2, "load event");
	/* A call into libc crosses binaries; address 16 is in none. */
	e4 = sb_hwagg_event(a, m, p, fake_loc, NULL, sb_hwagg_edge_key(a, from, libc), 1);
	CHECK(e4 == -1, "cross-binary edge mapped");
	CHECK(sb_hwagg_event(a, m, p, fake_loc, NULL, sb_hwagg_edge_key(a, 16, to), 1) == -1,
	      "unmapped edge mapped");
	sb_hwagg_get_stats(a, &st);
	CHECK(st.edges_cross_binary == 1 && p->nevents == 2, "cross %llu events %zu",
	      (unsigned long long)st.edges_cross_binary, p->nevents);
	CHECK(edge_src(1) + edge_dst(1) == 11, "keep the functions");
	/* The profile keeps both kinds through its file format. */
	if (e1 >= 0 && e3 >= 0) {
		char path[] = "/tmp/sb_lbr_pebs.XXXXXX", err[256];
		struct sb_profile *q = NULL;
		int fd = mkstemp(path);

		if (fd >= 0)
			close(fd);
		CHECK(fd >= 0 && !sb_profile_write(p, path, err, sizeof(err)) &&
		      !sb_profile_read(path, &q, err, sizeof(err)), "round trip: %s", err);
		CHECK(q && q->nevents == 2 && q->events[e1].kind == SB_EVK_EDGE &&
		      q->events[e1].vaddr == p->events[e1].vaddr &&
		      q->events[e1].vaddr2 == p->events[e1].vaddr2 &&
		      q->events[e3].kind == SB_EVK_HW, "events after the round trip");
		sb_profile_free(q);
		unlink(path);
	}
out:
	sb_profile_free(p);
	sb_maps_free(m);
	sb_hwagg_free(a);
}

/* LBR records through the section builder: their edges must come out as
 * per-thread vectors of the instance they were sampled in. */
static struct sb_hwagg *vec_agg;
static long vec_event(uint64_t key)
{
	const struct sb_hw_edge *e = sb_hwagg_edge(vec_agg, key);

	/* event 0: the loop's back edge; event 1: the jump out of it */
	if (!sb_hwagg_is_key(key) || !e)
		return -1;
	return e->from == LOOP_BR ? 0 : e->from == 0x401140 ? 1 : -1;
}

static void test_builder(void)
{
	struct sb_builder *b = sb_builder_alloc(10);
	struct sb_profile *p = sb_profile_alloc();
	struct sb_event_def d = { .kind = SB_EVK_EDGE, .binary = -1, .loc = -1, .loc2 = -1,
				  .loc_hot = -1 };
	struct sb_event ev[6] = {
		{ .ts = 1, .tid = 5, .kind = SB_EV_THREAD_START },
		{ .ts = 2, .tid = 6, .kind = SB_EV_THREAD_START },
		{ .ts = 20, .tid = 5, .kind = SB_EV_SYNC_ENTER, .prim = SB_PRIM_BARRIER, .site = 1,
		  .obj = 2, .oncpu = 5 },
		{ .ts = 30, .tid = 6, .kind = SB_EV_SYNC_ENTER, .prim = SB_PRIM_BARRIER, .site = 1,
		  .obj = 2, .oncpu = 7 },
		{ .ts = 31, .tid = 6, .kind = SB_EV_SYNC_EXIT, .prim = SB_PRIM_BARRIER, .oncpu = 7 },
		{ .ts = 32, .tid = 5, .kind = SB_EV_SYNC_EXIT, .prim = SB_PRIM_BARRIER, .oncpu = 5 },
	};
	size_t len;
	unsigned char *rec = fixture("lbr_loop.hex", &len);
	struct sb_rec_hdr *h = (struct sb_rec_hdr *)rec;
	uint64_t got[2][2] = { { 0 } };   /* [event][tid 5, tid 6] */

	vec_agg = sb_hwagg_alloc();
	if (!b || !p || !vec_agg) {
		CHECK(0, "setup");
		goto out;
	}
	sb_builder_add(b, &ev[0]);
	sb_builder_add(b, &ev[1]);
	/* Thread 5: one LBR sample; thread 6: two, all before the barrier. */
	h->tid = 5;
	h->ts = 10;
	sb_hwagg_record(vec_agg, b, rec, len);
	h->tid = 6;
	h->ts = 11;
	sb_hwagg_record(vec_agg, b, rec, len);
	h->ts = 12;
	sb_hwagg_record(vec_agg, b, rec, len);
	for (size_t i = 2; i < 6; i++)
		sb_builder_add(b, &ev[i]);
	CHECK(sb_builder_finish(b) == 0, "finish");
	sb_profile_add_event(p, &d);
	sb_profile_add_event(p, &d);
	CHECK(test_emit(b, p, vec_event) == 0, "emit");
	CHECK(p->ninstances == 1, "instances %zu", p->ninstances);
	for (size_t v = 0; v < p->nvectors; v++) {
		const struct sb_vector *x = &p->vectors[v];
		const struct sb_instance *in = &p->instances[x->instance];

		for (uint32_t t = 0; t < x->nthreads && x->event < 2; t++)
			got[x->event][in->per_thread[t].tid == 6] += x->counts[t];
	}
	/* 5 back edges and 1 jump per record. */
	CHECK(got[0][0] == 5 && got[0][1] == 10 && got[1][0] == 1 && got[1][1] == 2,
	      "edge vectors: loop {%llu, %llu}, jump {%llu, %llu}",
	      (unsigned long long)got[0][0], (unsigned long long)got[0][1],
	      (unsigned long long)got[1][0], (unsigned long long)got[1][1]);
out:
	free(rec);
	sb_hwagg_free(vec_agg);
	sb_profile_free(p);
	sb_builder_free(b);
}

int main(void)
{
	struct sb_hwagg *a = sb_hwagg_alloc();

	if (!a)
		return 2;
	test_layouts();
	test_lbr_record();
	test_data_src();
	test_loads(a);
	test_lbr_aggregate(a);
	test_keys(a);
	test_perf_samples(a);
	sb_hwagg_free(a);
	test_events();
	test_builder();
	return CHECK_DONE("test_lbr_pebs");
}
