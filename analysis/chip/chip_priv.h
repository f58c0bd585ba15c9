/* SPDX-License-Identifier: MIT */
/* CHiP internals shared by chip.c and chip_shards.c. */
#ifndef SB_CHIP_PRIV_H
#define SB_CHIP_PRIV_H

#include "chip.h"

/*
 * SHARDS' sampled lines go through one fully associative LRU stack cut
 * into SB_CHIP_DEPTH segments of equal size (a CHiP of one set, 16
 * counters deep), not through hashed sets: the sampled lines are a
 * random subset, so in sets each would hold a Poisson number of them
 * and the curve would blur by 1/sqrt(lines per set); one stack keeps the
 * distances exact (SHARDS as published) and only sampling's own error
 * remains.  A line found in segment s moves to the front; the last line
 * of each segment before s moves one down.
 */
struct chip_seg_node {
	uint64_t tag;             /* line number + 1; 0: free */
	uint32_t prev, next;      /* in its segment, NIL-terminated */
	uint32_t hnext;           /* hash chain */
	uint8_t seg;
};

struct chip_seglru {
	struct chip_seg_node *nodes;
	uint32_t *buckets;        /* hash: line -> first node of its chain */
	uint32_t nbuckets;        /* a power of two */
	uint32_t cap, segcap, used;
	uint32_t head[SB_CHIP_DEPTH], tail[SB_CHIP_DEPTH], count[SB_CHIP_DEPTH];
};

#define CHIP_NIL UINT32_MAX

/* (sb_chip_mix, chip.h: the top 24 bits pick SHARDS' sample, the low
 * ones the hash chain) */
#define chip_mix sb_chip_mix

/* The verdict's test at one thread count: the predicted bandwidth par
 * beside the linear one and the machine's (0: unknown).  BANDWIDTH_BOUND
 * beyond the machine's; CACHE_BOUND at 10% over linear that is also 1%
 * of the machine's; else SCALES (try the next count). */
int chip_verdict_at(double par, double linear, double machine_bandwidth);

int chip_seglru_init(struct chip_seglru *l, uint64_t lines);
void chip_seglru_fini(struct chip_seglru *l);
/* The 0-based segment the line was found in, or SB_CHIP_DEPTH; it is at
 * the front afterwards. */
uint32_t chip_seglru_access(struct chip_seglru *l, uint64_t tag, uint64_t hash);
size_t chip_seglru_bytes(const struct chip_seglru *l);

#endif
