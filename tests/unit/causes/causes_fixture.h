/* SPDX-License-Identifier: MIT */
/*
 * Shared builders for the causes unit tests (tests/unit/causes/): every
 * test plants a small program (a CFG, block events, one barrier section,
 * per-thread counts) in a profile and checks what sb_causes_compute
 * names.  The pieces that are the same in every test live here so that
 * each test file shows only its model: its graph, its counts, its checks.
 * Nothing here checks anything; the CHECKs stay in the tests.
 */
#ifndef SB_CAUSES_FIXTURE_H
#define SB_CAUSES_FIXTURE_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "causes/causes.h"
#include "cfg/cfg.h"
#include "cfg/cfg_io.h"

/* One edge of a test graph, so a graph's edges read as a table. */
struct sbt_edge {
	uint32_t from, to;
	uint16_t kind;    /* SB_EDGE_* */
};

static inline void sbt_add_edges(struct sb_cfg *g, const struct sbt_edge *e, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sb_cfg_add_edge(g, e[i].from, e[i].to, e[i].kind);
}

/* n blocks of function func laid out every 0x10 from base, each block's
 * last instruction at +0xc: the layout every test graph uses. */
static inline void sbt_add_blocks(struct sb_cfg *g, uint32_t func, uint64_t base, uint64_t n)
{
	for (uint64_t b = 0; b < n; b++)
		sb_cfg_add_block(g, func, base + 0x10 * b, base + 0x10 + 0x10 * b,
				 base + 0xc + 0x10 * b);
}

/* A graph whose function 0, worker, is n blocks at 0x1000 (the layout of
 * sbt_add_blocks); the caller adds the rest, its edges, and finalizes. */
static inline struct sb_cfg *sbt_worker_graph(uint64_t n)
{
	struct sb_cfg *g = sb_cfg_alloc();

	sb_cfg_add_func(g, "worker", 0x1000, 0x1000 + 0x10 * n);
	sbt_add_blocks(g, 0, 0x1000, n);
	return g;
}

/* The start of block b of a test graph whose worker has nworker blocks at
 * 0x1000 (sbt_worker_graph) and whose other functions' blocks follow from
 * 0x2000 (sbt_add_leaf, sbt_add_blocks), every 0x10. */
static inline uint64_t sbt_block_addr(uint64_t b, uint64_t nworker)
{
	return b < nworker ? 0x1000 + 0x10 * b : 0x2000 + 0x10 * (b - nworker);
}

/* Function func, name, of one block at a (16 bytes, its last instruction
 * at a + 0xc): a callee whose insides a test does not model. */
static inline void sbt_add_leaf(struct sb_cfg *g, uint32_t func, const char *name, uint64_t a)
{
	sb_cfg_add_func(g, name, a, a + 0x10);
	sb_cfg_add_block(g, func, a, a + 0x10, a + 0xc);
}

/*
 * The exact-mode loop that calls a library (test_causes_lib.c, _hwdf.c,
 * _exact_ev.c), sanitizer-coverage guards and all:
 *   worker: B0 (guard call) -> B1 (call copy, PLT) -> B2 (guard call) ->
 *   B3 -(taken, back)-> B1; B3 -> B4 return.
 *   __sanitizer_cov_trace_pc_guard: B5.  copy (library code): B6 -> B7.
 */
static inline struct sb_cfg *sbt_lib_loop_graph(void)
{
	static const struct sbt_edge edges[] = {
		{ 0, 5, SB_EDGE_CALL }, { 0, 1, SB_EDGE_CALL_RETURN },
		{ 1, 2, SB_EDGE_CALL_RETURN },     /* call copy@plt */
		{ 2, 5, SB_EDGE_CALL }, { 2, 3, SB_EDGE_CALL_RETURN },
		{ 3, 1, SB_EDGE_TAKEN }, { 3, 4, SB_EDGE_FALLTHROUGH },
		{ 6, 7, SB_EDGE_SEQUENTIAL },
	};
	struct sb_cfg *g = sb_cfg_alloc();

	sb_cfg_add_func(g, "worker", 0x1000, 0x1050);
	sb_cfg_add_func(g, "__sanitizer_cov_trace_pc_guard", 0x1050, 0x1060);
	sb_cfg_add_func(g, "copy", 0x1060, 0x1080);
	sbt_add_blocks(g, 0, 0x1000, 5);
	sbt_add_blocks(g, 1, 0x1050, 1);
	sbt_add_blocks(g, 2, 0x1060, 2);
	sbt_add_edges(g, edges, sizeof(edges) / sizeof(edges[0]));
	sb_cfg_finalize(g);
	return g;
}

/* A location in binary 0 whose offset is its address (no relocation). */
static inline long sbt_loc(struct sb_profile *p, uint64_t addr, unsigned line,
			   const char *fn, const char *file)
{
	struct sb_loc l = { .addr = addr, .offset = addr, .binary = 0, .line = line,
			    .function = (char *)fn, .file = (char *)file };

	return sb_profile_add_loc(p, &l);
}

/* A location of worker in w.c, the tests' one source file. */
static inline long sbt_wloc(struct sb_profile *p, uint64_t addr, unsigned line)
{
	return sbt_loc(p, addr, line, "worker", "w.c");
}

/* Binary 0 ("/bin/w") with g as its recorded CFG; g is freed. */
static inline void sbt_add_binary_cfg(struct sb_profile *p, struct sb_cfg *g)
{
	unsigned char *blob;
	size_t len;

	sb_profile_add_binary(p, "/bin/w", "ab");
	sb_cfg_serialize(g, &blob, &len);
	sb_profile_add_cfg(p, 0, blob, len);
	free(blob);
	sb_cfg_free(g);
}

/* An event of the block at a (its last instruction at a + 0xc, as the
 * test graphs lay blocks out every 0x10), both ends located; no hot
 * address (the caller sets one before adding if it wants one). */
static inline struct sb_event_def sbt_block_event(int kind, uint64_t a, long loc, long loc2)
{
	struct sb_event_def d = {
		.kind = (uint32_t)kind, .binary = 0, .vaddr = a, .vaddr2 = a + 0xc, .loc_hot = -1,
		.loc = (int32_t)loc, .loc2 = (int32_t)loc2,
	};

	return d;
}

/* A block-sample event of the block at a in worker (w.c): its start on
 * line `line`, its branch on `line2`; when hot, its most sampled
 * instruction 4 bytes in, on `line`.  Locations are added in that order. */
static inline void sbt_add_sampled_block(struct sb_profile *p, uint64_t a, unsigned line,
					 unsigned line2, bool hot)
{
	long l1 = sbt_loc(p, a, line, "worker", "w.c");
	long l2 = sbt_loc(p, a + 0xc, line2, "worker", "w.c");
	struct sb_event_def d = sbt_block_event(SB_EVK_BLOCK_SAMPLES, a, l1, l2);

	if (hot) {
		d.hot = a + 4;
		d.loc_hot = (int32_t)sbt_loc(p, d.hot, line, "worker", "w.c");
	}
	sb_profile_add_event(p, &d);
}

/* Section 0 of nt threads, a barrier at location loc; pt[] is its
 * per-thread table (thread ids 100 + t), reused by every instance. */
static inline void sbt_add_section(struct sb_profile *p, uint32_t loc, uint32_t nt,
				   struct sb_thread_time *pt)
{
	struct sb_section sec = { .kind = SB_SECT_BARRIER, .nthreads = nt, .per_thread = pt,
				  .loc = loc };

	for (uint32_t t = 0; t < nt; t++)
		pt[t] = (struct sb_thread_time){ 100 + t, 0, 0, 0 };
	sb_profile_add_section(p, &sec);
}

/* Instance i of section 0 with the busy times now in pt[]. */
static inline void sbt_add_instance(struct sb_profile *p, int i, uint32_t nt,
				    struct sb_thread_time *pt)
{
	struct sb_instance in = { .section = 0, .seq = (uint64_t)i, .nthreads = nt,
				  .per_thread = pt };

	sb_profile_add_instance(p, &in);
}

/* Event e's per-thread counts c[] in instance i. */
static inline void sbt_add_vector(struct sb_profile *p, int i, uint32_t e, uint32_t nt,
				  uint64_t *c)
{
	struct sb_vector v = { .instance = (uint32_t)i, .event = e, .nthreads = nt,
			       .counts = c };

	sb_profile_add_vector(p, &v);
}

/* sb_causes_compute with the default LIME options. */
static inline int sbt_compute(const struct sb_profile *p, struct sb_causes *c, char *err,
			      size_t errlen)
{
	struct sb_lime_opts o;

	sb_lime_opts_default(&o);
	return sb_causes_compute(p, &o, c, err, errlen);
}

#endif
