// SPDX-License-Identifier: MIT
/* The CacheSets (chip.h, §IV-A, Listing 1) and SHARDS' line filter. */
#include "chip_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sb_chip {
	struct sb_chip_opts o;
	uint32_t w;              /* sets */
	uint32_t line_shift;
	uint64_t threshold;      /* SHARDS T of SB_CHIP_RATE_SCALE */
	uint64_t last;           /* tag of the last tracked line: at its set's
				  * front, so found there without a scan */
	uint64_t *sets;          /* rate 1: w × SB_CHIP_DEPTH tags (line number
				  * + 1; 0 = empty), most recent first */
	uint32_t w_shift;        /* log2 w when w is a power of two, else 0 */
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
	w = o->max_bytes / ((uint64_t)SB_CHIP_DEPTH * o->line);
	c = calloc(1, sizeof(*c));
	if (c && o->rate >= 1)
		c->sets = calloc(w * SB_CHIP_DEPTH, sizeof(*c->sets));
	if (!c || (o->rate >= 1 ? !c->sets :
		   /* a cache of C bytes holds R × C / line sampled lines */
		   chip_seglru_init(&c->lru, (uint64_t)((double)o->max_bytes * o->rate /
							 o->line + 0.5)) != 0)) {
		sb_chip_free(c);
		snprintf(err, len, "out of memory for a cache hit profile of %llu bytes",
			 (unsigned long long)o->max_bytes);
		return -ENOMEM;
	}
	c->o = *o;
	c->w = (uint32_t)w;
	c->line_shift = (uint32_t)__builtin_ctz(o->line);
	c->threshold = o->rate >= 1 ? SB_CHIP_RATE_SCALE : threshold_of(o->rate);
	c->w_shift = (w & (w - 1)) ? 0 : (uint32_t)__builtin_ctzll(w);
	c->skew = ((uint64_t)((double)w * 0.6180339887) | 1) % w;
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
 * capacity model (§V-B: no conflict misses) wants.
 */
static inline uint64_t set_of(const struct sb_chip *c, uint64_t ln)
{
	uint64_t blk, in;

	if (c->w_shift) {
		blk = ln >> c->w_shift;
		in = ln & (c->w - 1);
		return (in + blk * c->skew) & (c->w - 1);
	}
	blk = ln / c->w;
	in = ln - blk * c->w;
	return (in + (blk % c->w) * c->skew) % c->w;
}

const struct sb_chip_opts *sb_chip_opts_of(const struct sb_chip *c)
{
	return &c->o;
}

void sb_chip_access(struct sb_chip *c, uint64_t addr, struct sb_chip_counts *k)
{
	uint64_t ln = addr >> c->line_shift, tag = ln + 1, h, *s;
	uint32_t i;

	k->accesses++;
	if (tag == c->last) {        /* the same line again: the front */
		k->depth[0]++;
		return;
	}
	if (!c->sets) {           /* SHARDS */
		uint32_t seg;

		h = chip_mix(ln);
		if ((h >> 40) >= c->threshold)
			return;
		seg = chip_seglru_access(&c->lru, tag, h);
		k->depth[seg]++;
		c->last = tag;
		return;
	}
	s = c->sets + (size_t)set_of(c, ln) * SB_CHIP_DEPTH;
	for (i = 0; i < SB_CHIP_DEPTH && s[i] != tag; i++)
		;
	k->depth[i]++;                 /* i == SB_CHIP_DEPTH: not found */
	if (i == SB_CHIP_DEPTH)
		i--;                   /* the least recent falls out */
	memmove(s + 1, s, i * sizeof(*s));
	s[0] = tag;
	c->last = tag;
}

void sb_chip_counts_add(struct sb_chip_counts *a, const struct sb_chip_counts *b)
{
	for (int i = 0; i < SB_CHIP_COUNTS; i++)
		a->depth[i] += b->depth[i];
	a->accesses += b->accesses;
}
