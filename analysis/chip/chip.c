// SPDX-License-Identifier: MIT
/* The CacheSets (chip.h, §IV-A, Listing 1) and SHARDS' line filter. */
#include "chip_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

struct sb_chip {
	struct sb_chip_opts o;
	uint32_t w;              /* sets */
	uint32_t line_shift;
	uint64_t threshold;      /* SHARDS T of SB_CHIP_RATE_SCALE */
	uint64_t last;           /* tag of the last tracked line: at its set's
				  * front, so found there without a scan */
	uint32_t *sets;          /* rate 1: w × SB_CHIP_DEPTH tags, most recent
				  * first, a set per 64-byte line (set_tag) */
	uint32_t w_shift;        /* log2 w */
	uint64_t skew;           /* odd, ~0.618 w: see set_of() */
	struct chip_seglru lru;  /* rate < 1: SHARDS' sampled lines */
};

static uint64_t threshold_of(double rate)
{
	uint64_t t = (uint64_t)(rate * SB_CHIP_RATE_SCALE + 0.5);

	return t ? t : 1;
}

bool sb_chip_sampled(uint64_t line_number, double rate)
{
	return rate >= 1 || (chip_mix(line_number) >> 40) < threshold_of(rate);
}

void sb_chip_gate_of(const struct sb_chip *c, struct sb_chip_gate *g)
{
	g->line_shift = c->line_shift;
	g->shards = !c->sets;
	g->threshold = c->threshold;
}

int sb_chip_alloc(struct sb_chip **out, const struct sb_chip_opts *o, char *err, size_t len)
{
	struct sb_chip *c;
	uint64_t w;

	*out = NULL;
	if (!o->line || (o->line & (o->line - 1)) || o->line > 4096) {
		snprintf(err, len, "cache line size %u is not a power of two up to 4096", o->line);
		return -EINVAL;
	}
	if (!(o->rate > 0 && o->rate <= 1)) {
		snprintf(err, len, "sampling rate %g is outside (0, 1]", o->rate);
		return -EINVAL;
	}
	if (o->max_bytes < (uint64_t)SB_CHIP_DEPTH * o->line || o->max_bytes > (1ull << 40)) {
		snprintf(err, len, "largest cache size %llu bytes is outside %u bytes .. 1 TiB "
			 "(16 lines at least)", (unsigned long long)o->max_bytes,
			 SB_CHIP_DEPTH * o->line);
		return -EINVAL;
	}
	/* w a power of two, rounded up: a set is then a shift and a mask
	 * away (a division costs more than the whole scan), and max_bytes
	 * says what was mapped */
	for (w = 1; w * SB_CHIP_DEPTH * o->line < o->max_bytes; w *= 2)
		;
	/* sets and stack entries are counted in 32 bits */
	if (w > (1ull << 31) || (double)(w * SB_CHIP_DEPTH) * o->rate > (double)(1ull << 31)) {
		snprintf(err, len, "a cache hit profile of %llu bytes in %u-byte lines has too "
			 "many entries (2^31 at most): map less, or sample (a lower rate)",
			 (unsigned long long)o->max_bytes, o->line);
		return -EINVAL;
	}
	c = calloc(1, sizeof(*c));
	if (c && o->rate >= 1)
		c->sets = aligned_alloc(64, w * SB_CHIP_DEPTH * sizeof(*c->sets));
	if (c && c->sets)
		memset(c->sets, 0, w * SB_CHIP_DEPTH * sizeof(*c->sets));
	if (!c || (o->rate >= 1 ? !c->sets :
		   /* a cache of C bytes holds R × C / line sampled lines */
		   chip_seglru_init(&c->lru, (uint64_t)((double)(w * SB_CHIP_DEPTH * o->line) *
							 o->rate / o->line + 0.5)) != 0)) {
		sb_chip_free(c);
		snprintf(err, len, "out of memory for a cache hit profile of %llu bytes",
			 (unsigned long long)o->max_bytes);
		return -ENOMEM;
	}
	c->o = *o;
	c->o.max_bytes = w * SB_CHIP_DEPTH * o->line;
	c->w = (uint32_t)w;
	c->line_shift = (uint32_t)__builtin_ctz(o->line);
	c->threshold = o->rate >= 1 ? SB_CHIP_RATE_SCALE : threshold_of(o->rate);
	c->w_shift = (uint32_t)__builtin_ctzll(w);
	c->skew = ((uint64_t)((double)w * 0.6180339887) | 1) & (w - 1);
	*out = c;
	return 0;
}

void sb_chip_free(struct sb_chip *c)
{
	if (!c)
		return;
	free(c->sets);
	chip_seglru_fini(&c->lru);
	free(c);
}

uint32_t sb_chip_width(const struct sb_chip *c)
{
	return c->w;
}

const struct sb_chip_opts *sb_chip_opts_of(const struct sb_chip *c)
{
	return &c->o;
}

size_t sb_chip_bytes(const struct sb_chip *c)
{
	return sizeof(*c) + (c->sets ? (size_t)c->w * SB_CHIP_DEPTH * sizeof(*c->sets) : 0) +
	       chip_seglru_bytes(&c->lru);
}

/*
 * A line's set: its number modulo w, as a cache indexes, so a contiguous
 * block of lines spreads evenly (a hash would give each set a Poisson
 * number of a working set's lines and blur the curve by 1/sqrt(lines per
 * set)); each block of w lines is rotated by skew (~0.618 w, odd), so
 * power-of-two strides do not all fall into one set, which the paper's
 * capacity model (§V-B: no conflict misses) wants.  (The rotation of
 * block b is b × skew mod w: b's high bits wrap, which only permutes.)
 */
static inline uint64_t set_of(const struct sb_chip *c, uint64_t ln)
{
	return ((ln & (c->w - 1)) + (ln >> c->w_shift) * c->skew) & (c->w - 1);
}

/*
 * A line's tag in its set: its block number (ln / w) + 1, 0 = empty.  The
 * set and the block give back the line (set_of is a rotation per block),
 * so the tag needs no more; 32 bits make a set one 64-byte cache line,
 * half of what 64-bit tags take (§IV-D counts 8 bytes), and the profile's
 * own misses per access fall with it.  Two lines of one set whose blocks
 * differ by a multiple of 2^32 (w × 256 GB apart) would share a tag.
 */
static inline uint32_t set_tag(const struct sb_chip *c, uint64_t ln)
{
	uint32_t t = (uint32_t)(ln >> c->w_shift) + 1;

	return t ? t : 1;   /* (block 2^32 - 1 aliases block 0: 0 is empty) */
}

/* The 0-based depth of tag in s, SB_CHIP_DEPTH when absent. */
static inline uint32_t find(const uint32_t *s, uint32_t tag)
{
#ifdef __SSE2__
	__m128i t = _mm_set1_epi32((int)tag);
	uint64_t m = (uint64_t)(uint16_t)_mm_movemask_epi8(
			_mm_cmpeq_epi32(_mm_load_si128((const __m128i *)s), t)) |
		     (uint64_t)(uint16_t)_mm_movemask_epi8(
			_mm_cmpeq_epi32(_mm_load_si128((const __m128i *)(s + 4)), t)) << 16 |
		     (uint64_t)(uint16_t)_mm_movemask_epi8(
			_mm_cmpeq_epi32(_mm_load_si128((const __m128i *)(s + 8)), t)) << 32 |
		     (uint64_t)(uint16_t)_mm_movemask_epi8(
			_mm_cmpeq_epi32(_mm_load_si128((const __m128i *)(s + 12)), t)) << 48;

	return m ? (uint32_t)__builtin_ctzll(m) / 4 : SB_CHIP_DEPTH;
#else
	uint32_t i;

	for (i = 0; i < SB_CHIP_DEPTH && s[i] != tag; i++)
		;
	return i;
#endif
}

void sb_chip_access(struct sb_chip *c, uint64_t addr, struct sb_chip_counts *k)
{
	uint64_t ln = addr >> c->line_shift, last = ln + 1, h;
	uint32_t i, tag, *s;

	k->accesses++;
	if (last == c->last) {        /* the same line again: the front */
		k->depth[0]++;
		return;
	}
	if (!c->sets) {           /* SHARDS */
		uint32_t seg;

		h = chip_mix(ln);
		if ((h >> 40) >= c->threshold)
			return;
		seg = chip_seglru_access(&c->lru, last, h);
		k->depth[seg]++;
		c->last = last;
		return;
	}
	s = c->sets + (size_t)set_of(c, ln) * SB_CHIP_DEPTH;
	tag = set_tag(c, ln);
	i = find(s, tag);
	k->depth[i]++;                 /* i == SB_CHIP_DEPTH: not found */
	if (i == SB_CHIP_DEPTH)
		i--;                   /* the least recent falls out */
	for (; i; i--)                 /* (no memmove call: this is per access) */
		s[i] = s[i - 1];
	s[0] = tag;
	c->last = last;
}

void sb_chip_counts_add(struct sb_chip_counts *a, const struct sb_chip_counts *b)
{
	for (int i = 0; i < SB_CHIP_COUNTS; i++)
		a->depth[i] += b->depth[i];
	a->accesses += b->accesses;
}
