// SPDX-License-Identifier: MIT
/*
 * test_cfg_io: CFG serialization round trips (hand-made and random
 * graphs, extreme addresses, no build-id), the serializer's refusals,
 * and the parser against every truncation, every single-byte flip, and
 * random damage with a recomputed CRC (what a crafted file could do).
 * Run under ASan/UBSan: nothing may crash or leak.
 */
#include "cfg/cfg_io.h"
#include "cfg_compare.h"
#include "check.h"
#include "util/bytes.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)       /* xorshift64*: deterministic */
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dull;
}


/* An edge as the builder makes it (cfg_io.h): only a call leaves its
 * function, for an entry; fall-through kinds go to the next block. */
static bool edge_as_built(const struct sb_cfg *g, const struct sb_cfg_edge *e)
{
	uint32_t fs = g->blocks[e->src].func, fd = g->blocks[e->dst].func;

	if (e->kind == SB_EDGE_CALL)
		return g->funcs[fd].first_block == e->dst;
	if (e->kind == SB_EDGE_TAKEN || e->kind == SB_EDGE_JUMP)
		return fs == fd;
	return fs == fd && e->dst == e->src + 1 &&
	       (e->kind == SB_EDGE_FALLTHROUGH || e->kind == SB_EDGE_SEQUENTIAL ||
		e->kind == SB_EDGE_CALL_RETURN);
}

/* The invariants a consumer may rely on, for graphs that parsed: those
 * of cfg_io.h, ranges included (a CRC proves nothing against a crafted
 * file). */
static bool consistent(const struct sb_cfg *g)
{
	size_t nb = 0;

	for (size_t f = 0; f < g->nfuncs; f++) {
		const struct sb_cfg_func *fn = &g->funcs[f];

		if (fn->end < fn->start || (fn->nblocks && fn->first_block != nb) ||
		    (f && fn->start < g->funcs[f - 1].end))
			return false;
		for (uint32_t k = 0; k < fn->nblocks; k++) {
			const struct sb_cfg_block *b = &g->blocks[nb + k];

			if (b->func != f || b->end <= b->start || b->last_insn < b->start ||
			    b->start < fn->start || b->end > fn->end ||
			    b->last_insn >= b->end || (nb + k && g->blocks[nb + k - 1].end > b->start) ||
			    sb_cfg_block_at(g, b->start) != (long)(nb + k))
				return false;
		}
		nb += fn->nblocks;
	}
	if (nb != g->nblocks || g->out_start[g->nblocks] != g->nedges ||
	    g->in_start[g->nblocks] != g->nedges)
		return false;
	for (size_t i = 0; i < g->nedges; i++)
		if (g->edges[i].src >= g->nblocks || g->edges[i].dst >= g->nblocks ||
		    g->in_edges[i] >= g->nedges || !edge_as_built(g, &g->edges[i]))
			return false;
	return true;
}

/* cfg.c sorts g->edges with qsort(), which UBSan faults when the
 * array is NULL even for zero edges: give edge-less graphs an array. */
static void finalize(struct sb_cfg *g)
{
	if (!g->edges && (g->edges = malloc(sizeof(*g->edges))))
		g->cap_edges = 1;
	sb_cfg_finalize(g);
}

/* f: a loop; g: a diamond; h: no blocks; k: at the top of the address space */
static struct sb_cfg *handmade(const char *build_id)
{
	struct sb_cfg *g = sb_cfg_alloc();
	static const uint32_t ed[][3] = {
		{ 0, 1, SB_EDGE_SEQUENTIAL }, { 1, 2, SB_EDGE_FALLTHROUGH }, { 2, 1, SB_EDGE_TAKEN },
		{ 1, 3, SB_EDGE_TAKEN }, { 4, 6, SB_EDGE_TAKEN }, { 4, 5, SB_EDGE_FALLTHROUGH },
		{ 5, 7, SB_EDGE_JUMP }, { 6, 7, SB_EDGE_CALL_RETURN }, { 8, 8, SB_EDGE_JUMP },
		{ 7, 0, SB_EDGE_CALL }, { 8, 8, SB_EDGE_TAKEN },
	};

	g->build_id = build_id ? strdup(build_id) : NULL;
	sb_cfg_add_func(g, "f", 0x1000, 0x1040);
	for (uint64_t a = 0x1000; a < 0x1040; a += 0x10)
		sb_cfg_add_block(g, 0, a, a + 0x10, a + 0xc);
	sb_cfg_add_func(g, "g_with_a_longer_name", 0x2000, 0x2100);
	for (uint64_t a = 0x2000; a < 0x2100; a += 0x40)
		sb_cfg_add_block(g, 1, a, a + 0x3f, a + 0x3e);
	sb_cfg_add_func(g, "", 0x3000, 0x3000);
	sb_cfg_add_func(g, "k", UINT64_MAX - 0x20, UINT64_MAX);
	sb_cfg_add_block(g, 3, UINT64_MAX - 0x20, UINT64_MAX, UINT64_MAX - 1);
	for (size_t i = 0; i < sizeof(ed) / sizeof(ed[0]); i++)
		sb_cfg_add_edge(g, ed[i][0], ed[i][1], (uint16_t)ed[i][2]);
	/* with a build-id, block flags and tail calls (version 5): the latch
	 * B2 has a constant bound, B7's only edge, a CALL, is a tail call,
	 * B3 ends in a jump through a pointer; without, none computed
	 * (version 2) */
	g->has_flags = g->has_tail_calls = g->has_indirect_tails = build_id != NULL;
	if (g->has_flags) {
		g->blocks[2].flags = SB_BLOCK_CONST_BOUND;
		g->blocks[7].flags = SB_BLOCK_TAIL_CALL;
		g->blocks[3].flags = SB_BLOCK_TAIL_INDIRECT;
	}
	finalize(g);
	return g;
}

/* Random functions with random blocks and random intra-function edges. */
static struct sb_cfg *random_graph(void)
{
	struct sb_cfg *g = sb_cfg_alloc();
	size_t nf = rnd() % 40;
	uint64_t a = rnd() % (1ull << 40);
	char name[32];

	g->build_id = rnd() % 2 ? strdup("0123456789abcdef0123456789abcdef01234567") : NULL;
	for (size_t f = 0; f < nf; f++) {
		size_t nb = rnd() % 30, first = g->nblocks;
		uint64_t start = a;

		snprintf(name, sizeof(name), "fn_%zu_%u", f, (unsigned)(rnd() % 100000));
		sb_cfg_add_func(g, name, start, start);
		for (size_t k = 0; k < nb; k++) {
			uint64_t len = 1 + rnd() % 300;

			sb_cfg_add_block(g, (uint32_t)f, a, a + len, a + rnd() % len);
			a += len + (rnd() % 4 ? 0 : rnd() % 5000);
		}
		g->funcs[f].end = a + rnd() % 16;
		a = g->funcs[f].end + rnd() % 64;
		/* edges as the builder makes them (cfg_io.h): branches and
		 * jumps anywhere in the function, the other kinds to the next
		 * block, calls to some function's first block */
		for (size_t k = 0; nb && k < 2 * nb; k++) {
			uint32_t src = (uint32_t)(first + rnd() % nb), dst = (uint32_t)(first + rnd() % nb);
			uint16_t kind = (uint16_t)(1 + rnd() % 6);

			if (kind == SB_EDGE_CALL) {
				uint32_t callee = (uint32_t)(rnd() % (f + 1));

				if (!g->funcs[callee].nblocks)
					continue;
				dst = g->funcs[callee].first_block;
			} else if (kind != SB_EDGE_TAKEN && kind != SB_EDGE_JUMP) {
				if (src + 1 >= first + nb)
					continue;
				dst = src + 1;
			}
			sb_cfg_add_edge(g, src, dst, kind);
		}
	}
	/* half with flags (version 3), some set; no rnd(): same graphs */
	g->has_flags = g->nblocks % 2;
	for (size_t k = 0; g->has_flags && k < g->nblocks; k++)
		g->blocks[k].flags = (g->blocks[k].start >> 4) & SB_BLOCK_CONST_BOUND;
	finalize(g);
	return g;
}

static struct sb_cfg *roundtrip(const struct sb_cfg *g, unsigned char **buf, size_t *len)
{
	struct sb_cfg *out = NULL;
	char err[128];

	if (sb_cfg_serialize(g, buf, len))
		return NULL;
	if (sb_cfg_deserialize(*buf, *len, &out, err, sizeof(err)))
		fprintf(stderr, "deserialize: %s\n", err);
	return out;
}

static void test_roundtrip(void)
{
	unsigned char *buf = NULL;
	size_t len = 0;
	struct sb_cfg *g = handmade("abc123"), *h = roundtrip(g, &buf, &len);
	char err[128] = "";
	bool ok = true;

	CHECK(h && same_graph(g, h) && consistent(h), "hand-made graph round-trips");
	CHECK(h && h->edges[0].back == 0 && sb_cfg_nout(h, 2) == 1 &&
	      h->edges[h->out_start[2]].back == 1, "back edges derived again");
	CHECK(buf && buf[8] == SB_CFG_IO_VERSION && h && h->has_flags && h->has_tail_calls &&
	      h->has_indirect_tails && h->blocks[2].flags == SB_BLOCK_CONST_BOUND &&
	      !h->blocks[1].flags && h->blocks[7].flags == SB_BLOCK_TAIL_CALL &&
	      h->blocks[3].flags == SB_BLOCK_TAIL_INDIRECT,
	      "block flags and tail calls written as version %d and read back", SB_CFG_IO_VERSION);
	printf("hand-made graph: %zu bytes\n", len);
	sb_cfg_free(h);
	/* the same bytes called version 4 (before jumps through pointers
	 * were flagged), CRC made good: the flag is refused */
	if (buf) {
		uint32_t crc;

		buf[8] = SB_CFG_IO_VERSION_NOINDIRECT;
		crc = sb_bytes_crc32(0, buf, len - 4);
		for (int k = 0; k < 4; k++)
			buf[len - 4 + (size_t)k] = (unsigned char)(crc >> (8 * k));
		h = NULL;
		CHECK(sb_cfg_deserialize(buf, len, &h, err, sizeof(err)) < 0 && !h,
		      "a pointer tail-call flag in a version 4 graph is refused: %s", err);
	}
	free(buf);
	/* tail calls but none through pointers looked for: version 4, what
	 * profiles recorded before carry; the flag there is an error */
	g->has_indirect_tails = false;
	g->blocks[3].flags = 0;
	h = roundtrip(g, &buf, &len);
	CHECK(buf && buf[8] == SB_CFG_IO_VERSION_NOINDIRECT && h && h->has_tail_calls &&
	      !h->has_indirect_tails && h->blocks[7].flags == SB_BLOCK_TAIL_CALL,
	      "tail calls without pointer ones: version 4, read with those unknown");
	sb_cfg_free(h);
	free(buf);
	buf = NULL;
	g->blocks[3].flags = SB_BLOCK_TAIL_INDIRECT;
	CHECK(sb_cfg_serialize(g, &buf, &len) != 0,
	      "a pointer tail-call flag in a graph that did not look for them is refused");
	free(buf);
	g->blocks[3].flags = 0;
	/* flags but no tail calls looked for: version 3, what profiles
	 * recorded before tail calls carry; a tail flag there is an error */
	g->has_tail_calls = false;
	g->blocks[7].flags = 0;
	h = roundtrip(g, &buf, &len);
	CHECK(buf && buf[8] == SB_CFG_IO_VERSION_NOTAIL && h && h->has_flags &&
	      !h->has_tail_calls && h->blocks[2].flags == SB_BLOCK_CONST_BOUND,
	      "flags without tail calls: version 3, read with tail calls unknown");
	sb_cfg_free(h);
	free(buf);
	buf = NULL;
	g->blocks[7].flags = SB_BLOCK_TAIL_CALL;
	CHECK(sb_cfg_serialize(g, &buf, &len) != 0,
	      "a tail-call flag in a graph that did not look for tail calls is refused");
	free(buf);
	sb_cfg_free(g);
	g = handmade(NULL);
	h = roundtrip(g, &buf, &len);
	CHECK(h && !h->build_id && same_graph(g, h), "no build-id");
	/* a graph without flags is version 2, what profiles recorded
	 * before flags carry: it reads, flags unknown (has_flags false) */
	CHECK(buf && buf[8] == SB_CFG_IO_VERSION_NOFLAGS && h && !h->has_flags &&
	      !h->blocks[2].flags, "no flags: version 2, read with flags unknown");
	sb_cfg_free(h);
	sb_cfg_free(g);
	free(buf);
	g = sb_cfg_alloc();
	finalize(g);
	h = roundtrip(g, &buf, &len);
	CHECK(h && h->nfuncs == 0 && h->nblocks == 0 && h->nedges == 0 && same_graph(g, h),
	      "empty graph");
	sb_cfg_free(h);
	sb_cfg_free(g);
	free(buf);
	/* an unfinalized graph serializes too (edges in insertion order) */
	g = sb_cfg_alloc();
	sb_cfg_add_func(g, "u", 10, 20);
	sb_cfg_add_block(g, 0, 10, 15, 12);
	sb_cfg_add_block(g, 0, 15, 20, 18);
	sb_cfg_add_edge(g, 1, 0, SB_EDGE_JUMP);
	sb_cfg_add_edge(g, 0, 1, SB_EDGE_SEQUENTIAL);
	h = roundtrip(g, &buf, &len);
	finalize(g);
	CHECK(h && same_graph(g, h), "unfinalized graph");
	sb_cfg_free(h);
	sb_cfg_free(g);
	free(buf);
	for (int i = 0; i < 300; i++) {
		g = random_graph();
		h = roundtrip(g, &buf, &len);
		ok &= h && same_graph(g, h) && consistent(h);
		sb_cfg_free(h);
		sb_cfg_free(g);
		free(buf);
	}
	CHECK(ok, "300 random graphs round-trip");
}

static void test_refusals(void)
{
	struct sb_cfg *g = handmade(NULL);
	unsigned char *buf = NULL;
	size_t len = 0;

	g->blocks[1].last_insn = g->blocks[1].end;
	CHECK(sb_cfg_serialize(g, &buf, &len) < 0 && errno == EINVAL, "last_insn outside");
	g->blocks[1].last_insn = g->blocks[1].start;
	g->edges[0].kind = 9;
	CHECK(sb_cfg_serialize(g, &buf, &len) < 0 && errno == EINVAL, "bad edge kind");
	g->edges[0].kind = SB_EDGE_JUMP;
	g->funcs[1].first_block = 0;
	CHECK(sb_cfg_serialize(g, &buf, &len) < 0 && errno == EINVAL, "blocks out of order");
	g->funcs[1].first_block = 4;
	CHECK(sb_cfg_serialize(g, &buf, &len) == 0, "repaired graph serializes");
	free(buf);
	sb_cfg_free(g);
}

/* Rewrites the trailing CRC so damage reaches the parser's checks. */
static void fix_crc(unsigned char *p, size_t len)
{
	uint32_t c = sb_bytes_crc32(0, p, len - 4);

	for (int i = 0; i < 4; i++)
		p[len - 4 + i] = (unsigned char)(c >> (8 * i));
}

static void test_damage(void)
{
	struct sb_cfg *g = handmade("feedface"), *h;
	unsigned char *buf, *copy;
	size_t len;
	char err[128];
	int bad = 0, parsed = 0, rejected = 0;

	CHECK(sb_cfg_serialize(g, &buf, &len) == 0, "serialize");
	copy = malloc(len);
	/* every truncation, each in an exact-size heap copy for ASan */
	for (size_t n = 0; n < len; n++) {
		unsigned char *t = malloc(n ? n : 1);

		memcpy(t, buf, n);
		h = NULL;
		bad += sb_cfg_deserialize(t, n, &h, err, sizeof(err)) == 0 || h;
		free(t);
	}
	CHECK(bad == 0, "all %zu truncations rejected (%d accepted)", len, bad);
	/* every byte, several flips each: the CRC catches them all */
	for (size_t i = 0; i < len; i++)
		for (int m = 1; m < 256; m += 37) {
			memcpy(copy, buf, len);
			copy[i] ^= (unsigned char)m;
			h = NULL;
			bad += sb_cfg_deserialize(copy, len, &h, err, sizeof(err)) == 0 || h;
		}
	CHECK(bad == 0, "all byte flips rejected (%d accepted)", bad);
	/* random damage with a valid CRC: parse or refuse, never crash */
	for (int it = 0; it < 20000; it++) {
		struct sb_cfg *src = it % 2 ? g : NULL;
		unsigned char *b2 = buf;
		size_t l2 = len;

		if (!src && (src = random_graph()) && sb_cfg_serialize(src, &b2, &l2)) {
			sb_cfg_free(src);
			continue;
		}
		memcpy(copy = realloc(copy, l2), b2, l2);
		for (uint64_t k = 1 + rnd() % 4; k > 0; k--)
			copy[8 + rnd() % (l2 - 12)] = (unsigned char)rnd();
		fix_crc(copy, l2);
		h = NULL;
		if (sb_cfg_deserialize(copy, l2, &h, err, sizeof(err)) == 0) {
			parsed++;
			bad += !consistent(h);
			sb_cfg_free(h);
		} else {
			rejected++;
			bad += h != NULL;
		}
		if (src != g) {
			sb_cfg_free(src);
			free(b2);
		}
	}
	printf("crafted inputs with a valid CRC: %d parsed, %d rejected\n", parsed, rejected);
	CHECK(bad == 0 && parsed > 0 && rejected > 0, "crafted inputs: %d parsed, %d rejected, "
	      "%d bad", parsed, rejected, bad);
	/* counts larger than the data are refused before allocating */
	memcpy(copy, buf, len);
	copy[16] = copy[17] = copy[18] = 0xff;
	copy[19] = 0x7f;
	fix_crc(copy, len);
	CHECK(sb_cfg_deserialize(copy, len, &h, err, sizeof(err)) < 0 && strstr(err, "exceed"),
	      "huge block count: %s", err);
	/* trailing bytes after valid records */
	copy = realloc(copy, len + 1);
	memcpy(copy, buf, len - 4);
	copy[len - 4] = 0;
	fix_crc(copy, len + 1);
	CHECK(sb_cfg_deserialize(copy, len + 1, &h, err, sizeof(err)) < 0 && strstr(err, "trailing"),
	      "trailing bytes: %s", err);
	memcpy(copy, buf, len);
	copy[8] = SB_CFG_IO_VERSION + 1;
	fix_crc(copy, len);
	CHECK(sb_cfg_deserialize(copy, len, &h, err, sizeof(err)) < 0 && strstr(err, "version"),
	      "future version: %s", err);
	CHECK(sb_cfg_deserialize(NULL, 0, &h, err, sizeof(err)) < 0, "NULL input");
	free(copy);
	free(buf);
	sb_cfg_free(g);
}

int main(void)
{
	test_roundtrip();
	test_refusals();
	test_damage();
	return CHECK_DONE("test_cfg_io");
}
