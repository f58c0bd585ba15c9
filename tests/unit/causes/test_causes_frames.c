// SPDX-License-Identifier: MIT
/*
 * Sampled mode (causes_frames.c): which blocks are no LIME events.  A
 * worker loop calls a library sort (through its PLT: no CALL edge) once
 * per iteration; the main thread (tid = pid) sorts 8x more than the
 * others every instance.  Its samples fall in the library's blocks and
 * count at the program's call too (a call site holds its callees'
 * samples); the main thread's _start holds every sample of it and none of
 * the other threads'.  Known answer: the top cause is a line of the
 * program, at the loop that repeats the call (w.c:21 or its latch,
 * w.c:22); no cause inside the library (msort.c), none at _start
 * (w.c:5), whose samples follow "is the main thread", not a decision.
 * The sort calls back the program's comparator (no call edge enters it),
 * whose samples are a third of the call's: no cause at it (w.c:38)
 * either, the call's loop is the decision that runs it.  Three times:
 * with the profile's executable named, without, and named as none of its
 * binaries (a library then known by its name, lib*.so*).
 *
 *   binary 0 /bin/w:  _start: S0 (call __libc_start_main) -> S1.
 *                     worker: W0 (call qsort@plt; loop header) -> W1
 *                     (latch) -(taken, back)-> W0; W1 -> W2 return.
 *                     cmp: C0 return.
 *   binary 1 libc:    msort: L0 -> L1 -(taken, back)-> L0; L1 -> L2.
 */
#include <stdlib.h>
#include <string.h>

#include "causes/causes_fixture.h"
#include "causes/causes_priv.h"
#include "check.h"

#define NT 6
#define NI 16

static void add_graph(struct sb_profile *p, int32_t bin, struct sb_cfg *g)
{
	unsigned char *blob;
	size_t len;

	sb_cfg_finalize(g);
	sb_cfg_serialize(g, &blob, &len);
	sb_profile_add_cfg(p, bin, blob, len);
	free(blob);
	sb_cfg_free(g);
}

static void graphs(struct sb_profile *p)
{
	static const struct sbt_edge edges[] = {
		{ 0, 1, SB_EDGE_CALL_RETURN }, { 2, 3, SB_EDGE_CALL_RETURN },
		{ 3, 2, SB_EDGE_TAKEN }, { 3, 4, SB_EDGE_FALLTHROUGH },
	};
	static const struct sbt_edge edges1[] = {
		{ 0, 1, SB_EDGE_SEQUENTIAL }, { 1, 0, SB_EDGE_TAKEN },
		{ 1, 2, SB_EDGE_FALLTHROUGH },
	};
	struct sb_cfg *g = sb_cfg_alloc(), *l = sb_cfg_alloc();

	sb_cfg_add_func(g, "_start", 0x1000, 0x1020);
	sb_cfg_add_func(g, "worker", 0x1100, 0x1130);
	sb_cfg_add_func(g, "cmp", 0x1200, 0x1210);
	sb_cfg_add_block(g, 0, 0x1000, 0x1010, 0x100c);
	sb_cfg_add_block(g, 0, 0x1010, 0x1020, 0x101c);
	sbt_add_blocks(g, 1, 0x1100, 3);
	sb_cfg_add_block(g, 2, 0x1200, 0x1210, 0x120c);
	sbt_add_edges(g, edges, sizeof(edges) / sizeof(edges[0]));
	add_graph(p, 0, g);
	sb_cfg_add_func(l, "msort", 0x5000, 0x5030);
	sbt_add_blocks(l, 0, 0x5000, 3);
	sbt_add_edges(l, edges1, sizeof(edges1) / sizeof(edges1[0]));
	add_graph(p, 1, l);
}

static int32_t loc(struct sb_profile *p, int32_t bin, uint64_t addr, unsigned line)
{
	struct sb_loc l = { .addr = addr, .offset = addr, .binary = bin, .line = line,
			    .function = bin ? "msort" : addr < 0x1100 ? "_start" :
					addr < 0x1200 ? "worker" : "cmp",
			    .file = bin ? "msort.c" : "w.c" };

	return (int32_t)sb_profile_add_loc(p, &l);
}

/* the sampled blocks: binary, start, line */
static const struct { int32_t bin; uint64_t at; unsigned line; } blk[] = {
	{ 0, 0x1000, 5 },  { 0, 0x1100, 21 }, { 0, 0x1110, 22 },
	{ 1, 0x5000, 47 }, { 1, 0x5010, 64 }, { 0, 0x1200, 38 },
};
#define NB (sizeof(blk) / sizeof(blk[0]))

/* The samples of instance i, thread t, in the library (the main thread,
 * t = 0, sorts 8x as much) and in the loop's latch. */
static uint64_t lib_samples(int i, uint32_t t)
{
	return (t == 0 ? 40 : 5) + (uint64_t)((t * 5 + (uint32_t)i * 3) % 4);
}

static uint64_t latch_samples(int i, uint32_t t)
{
	return 2 + (uint64_t)((t + (uint32_t)i) % 2);
}

/* fptr: the worker calls the comparator through a pointer instead, which
 * does all of the call's work (no library samples) */
static struct sb_profile *profile(int named, int fptr)
{
	struct sb_profile *p = sb_profile_alloc();
	struct sb_thread_time pt[NT];
	uint32_t sec_loc;

	sb_profile_add_binary(p, "/bin/w", "ab");
	sb_profile_add_binary(p, "/lib/x86_64-linux-gnu/libc.so.6", "cd");
	/* 2: an executable none of the binaries is (a path the maps spell
	 * otherwise): the names decide */
	if (named)
		sb_profile_meta_set(p, "executable", named == 2 ? "/usr/bin/w" : "/bin/w");
	sb_profile_meta_set(p, "pid", "100");
	sec_loc = (uint32_t)loc(p, 0, 0x1128, 23);
	graphs(p);
	for (size_t b = 0; b < NB; b++) {
		struct sb_event_def d = {
			.kind = SB_EVK_BLOCK_SAMPLES, .binary = blk[b].bin, .vaddr = blk[b].at,
			.vaddr2 = blk[b].at + 0xc, .loc_hot = -1,
		};

		d.loc = loc(p, blk[b].bin, d.vaddr, blk[b].line);
		d.loc2 = loc(p, blk[b].bin, d.vaddr2, blk[b].line);
		sb_profile_add_event(p, &d);
	}
	sbt_add_section(p, sec_loc, NT, pt);
	for (int i = 0; i < NI; i++) {
		/* 1 ms a sample (1 kHz), a little jitter */
		for (uint32_t t = 0; t < NT; t++)
			pt[t].busy_ns = 1000000 * (lib_samples(i, t) * 3 / 2 + 1 + latch_samples(i, t)) +
					3000 * ((t * 7 + (uint32_t)i) % 5);
		sbt_add_instance(p, i, NT, pt);
		for (uint32_t e = 0; e < NB; e++) {
			uint64_t c[NT];

			for (uint32_t t = 0; t < NT; t++) {
				/* the call holds the library's and the
				 * comparator's samples, and its own one */
				uint64_t l = lib_samples(i, t), call = l + l / 2 + 1;

				c[t] = e == 0 ? (t == 0 ? call + latch_samples(i, t) : 0)
				     : e == 1 ? call : e == 2 ? latch_samples(i, t)
				     : fptr ? (e == 5 ? call - 1 : 0)
				     : e == 3 ? l - l / 3 : e == 4 ? l / 3 : l / 2;
			}
			sbt_add_vector(p, i, e, NT, c);
		}
	}
	return p;
}

static void check(int named)
{
	struct sb_profile *p = profile(named, 0);
	struct sb_causes c;
	char err[256] = "";
	int ret;

	ret = sbt_compute(p, &c, err, sizeof(err));
	CHECK(ret == 0, "compute: %d %s", ret, err);
	CHECK(c.block_samples && c.nsections_analyzed == 1, "block samples, one section");
	CHECK(c.n >= 1, "a cause found (executable %s)",
	      named == 1 ? "named" : named ? "not among the binaries" : "unnamed");
	if (c.n >= 1) {
		const struct sb_loc *l = c.c[0].loc >= 0 ? &p->locs[c.c[0].loc] : NULL;

		CHECK(c.c[0].binary == 0 && l && !strcmp(l->file, "w.c") &&
		      (l->line == 21 || l->line == 22),
		      "the program's loop around the call first (binary %d, line %u)",
		      c.c[0].binary, l ? l->line : 0);
	}
	for (size_t i = 0; i < c.n; i++) {
		const struct sb_loc *l = c.c[i].loc >= 0 ? &p->locs[c.c[i].loc] : NULL;

		CHECK(c.c[i].binary == 0, "cause %zu not inside the library (binary %d)", i,
		      c.c[i].binary);
		CHECK(!l || l->line != 5, "cause %zu not at the main thread's _start", i);
		CHECK(!l || l->line != 38, "cause %zu not at the comparator", i);
	}
	sb_causes_free(&c);
	sb_profile_free(p);
}

/* Which events are skipped: the library's, _start, the comparator under
 * the library's call; not the worker's loop; and a function called
 * through a pointer that is all of its call's work is no callback. */
static void skips(int fptr)
{
	struct sb_profile *p = profile(1, fptr);
	struct sb_causes_graph g;
	uint8_t skip[NB] = { 0 };
	char err[256] = "";
	int ret = sb_causes_graph_load(p, &g, err, sizeof(err));

	CHECK(ret == 0, "graph: %d %s", ret, err);
	ret = ret ? ret : sb_causes_sample_skips(p, &g, 0, skip);
	CHECK(ret == 0, "skips: %d", ret);
	CHECK(skip[0], "_start skipped");
	CHECK(!skip[1] && !skip[2], "the worker's call and latch kept (%d %d)", skip[1], skip[2]);
	CHECK(skip[3] && skip[4], "the library's blocks skipped");
	CHECK(skip[5] == !fptr, "the comparator %s (%d)", fptr ? "kept: all of its call's work"
							       : "skipped: under the library's call",
	      skip[5]);
	sb_causes_graph_free(&g, p->nbinaries);
	sb_profile_free(p);
}

int main(void)
{
	check(1);
	check(0);
	check(2);
	skips(0);
	skips(1);
	return CHECK_DONE("test_causes_frames");
}
